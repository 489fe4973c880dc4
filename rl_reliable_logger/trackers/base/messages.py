"""How library messages name options, and how any error becomes the one line a user reads.

Library code writes a message as data (:mod:`rl_reliable_logger.wording`): ``said("pass ",
kw("include_unfinished=True"), " to use them")``, which a Python user reads as ``pass `include_unfinished=True` to
use them`` and the command line as ``pass --include-unfinished to use them`` (``rl_reliable_logger.cli.flags``).

Tracker clients raise errors whose text spans many lines; :func:`describe_failure` folds an exception a tracker
client raised into the one redacted line that keeps its cause (:func:`rl_reliable_logger.lines.one_line`).

Example:
    >>> str(said("pass ", kw("include_unfinished=True")))
    'pass `include_unfinished=True`'
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from ...lines import one_line
from ...moved import moved
from ...wording import Field, Message, Said, kw, said

#: Moved to :mod:`rl_reliable_logger.lines` (the notes fold a line the same way): the old names warn for one release.
__getattr__ = moved(__name__, dict.fromkeys(("MAX_LINE", "printable", "shorten"), "rl_reliable_logger.lines"))

DROP_INVALID = "on_invalid='drop'"

#: Every source keyword a hint may name (a Source that lacks one leaves it out of its :class:`Hints`).
SOURCE_KEYWORDS = frozenset(
    {"filter_string=", "variant=", "extra_fields=", "run_key=", "include_unfinished=True", "curve_key=", DROP_INVALID}
)


@dataclass(frozen=True)
class Hints:
    """How one Source's messages name its options: only what its command has (a TensorBoard error never suggests
    ``--algorithm-key``, which ``rl-reliable tensorboard`` does not take).

    ``fields`` is the advice for runs that lack a field; ``keywords`` the source keywords it takes (of
    :data:`SOURCE_KEYWORDS`); ``configuration`` the keyword that names configuration keys (``extra_fields=``, or
    ``hyperparameter_keys=`` for a source whose command reads them from the analysis flags); ``scores`` the advice
    for runs that lack a score key, by key (:meth:`fix_for`); ``duplicates`` a
    source's own advice for one seed in two runs, said after the configuration fix (marl-eval: batches of seeds
    numbered from 0 in two files). ``refs`` says a field reference in the source's own words where they differ
    from the records' (``summary.eval/return`` of a TensorBoard run is the scalar tag ``eval/return``), in
    messages (:meth:`worded`: a message's :class:`~rl_reliable_logger.wording.Field` parts) and provenance
    (:meth:`ref_words`); text is never rewritten (a run name that contains a reference stays as it is).

    Example:
        >>> Hints(keywords=frozenset({"run_key="})).has("filter_string=")
        False
        >>> Hints(refs=(("summary.eval/return", "tag eval/return"),)).ref_words("summary.eval/return")
        'tag eval/return'
    """

    fields: Message | str = said(
        "Name the right fields with ",
        kw("algorithm="),
        ", ",
        kw("task="),
        ", ",
        kw("seed="),
        " and ",
        kw("score="),
        " (a comma-separated fallback list for mixed conventions)",
    )
    keywords: frozenset[str] = SOURCE_KEYWORDS
    configuration: str = "extra_fields="
    duplicates: Message | str = ""
    refs: tuple[tuple[str, str], ...] = ()
    #: what to do where runs lack a score key, by the key as shown (``success``: how to log it); a key not named
    #: here gets :attr:`fields`
    scores: Mapping[str, Message | str] = field(default_factory=dict)
    #: field references as the user wrote them, by the source's own reference (``summary.eval/return`` ->
    #: ``eval/return`` for a TensorBoard tag), so a message names what was given, not how the source reads it
    shown: Mapping[str, str] = field(default_factory=dict)

    def fix_for(self, scores: Collection[str]) -> Message | str:
        """The advice for runs that lack every one of the score keys ``scores`` (as shown): the source's own for
        the first it has one for (:attr:`scores`), else :attr:`fields`.

        Example:
            >>> Hints(fields="Name the fields", scores={"success": "Log it"}).fix_for(["success"])
            'Log it'
            >>> Hints(fields="Name the fields").fix_for(["return"])
            'Name the fields'
        """
        return next((self.scores[s] for s in scores if s in self.scores), self.fields)

    def has(self, keyword: str) -> bool:
        """Whether the source takes ``keyword`` (so a message may suggest it)."""
        return keyword in self.keywords

    def word(self, field: Field) -> str:
        """A field reference of a message in the source's words (:attr:`refs`; itself where the source reads it as
        given).

        Example:
            >>> Hints(refs=(("summary.eval/return", "tag eval/return"),)).word(Field("summary.eval/return"))
            'tag eval/return'
        """
        return self.ref_words(field.ref)

    def worded(self, message: Message | str) -> Message | str:
        """A message with its field references in the source's words (:meth:`word`); a line that keeps its
        message (:class:`~rl_reliable_logger.wording.Said`, a warning) stays one; plain text (which names no field
        as a part: run names, another library's words) is kept as it is."""
        if isinstance(message, Said):
            return message.message.with_fields(self.word).text()
        if isinstance(message, Message):
            return message.with_fields(self.word)
        return message

    def worded_line(self, line: str) -> str:
        """A warning line in the source's words (:meth:`worded`), still a line."""
        worded = self.worded(line)
        return worded if isinstance(worded, str) else str(worded)

    def ref_words(self, ref: str) -> str:
        """A field reference (as the records hold it) in the source's words (:attr:`refs`; itself where the source
        reads it as given): what provenance says of the fields read.

        Example:
            >>> hints = Hints(refs=(("summary.eval/return", "tag eval/return"),))
            >>> hints.ref_words("summary.eval/return"), hints.ref_words("config.env")
            ('tag eval/return', 'config.env')
        """
        return dict(self.refs).get(ref, ref)

    def ref(self, ref: str) -> str:
        """``ref`` as the user wrote it (itself when the source reads it as given)."""
        return self.shown.get(ref, ref)


#: Modules whose exceptions are failures of a tracker's store, its database or the network, not bugs of ours
#: (the trackers' own client modules come from their plugins: ``trackers.registry.client_modules``).
TRACKER_MODULES = ("sqlalchemy", "sqlite3", "requests", "urllib3", "http", "grpc", "google")


def is_tracker_failure(err: BaseException, clients: Collection[str] = ()) -> bool:
    """True for an exception raised by a tracker client (``clients``: their top-level modules), its database or
    the network (exit 2, not a bug)."""
    module = (type(err).__module__ or "").split(".")[0]
    return module in TRACKER_MODULES or module in clients


def describe_os_error(err: OSError) -> str:
    """``cannot write /x/y: No space left on device``: what failed and where, without the class name."""
    what = err.strerror or one_line(err) or "input/output error"
    where = " and ".join(str(f) for f in (err.filename, err.filename2) if f)
    return one_line(f"{what}: {where}" if where else what)


def describe_failure(err: BaseException) -> str:
    """One redacted line for an exception a tracker client raised: its kind and cause, nothing else."""
    text = str(err)
    message = getattr(err, "message", None)  # some clients' exceptions keep the server's message apart
    if isinstance(message, str) and message.strip():
        text = message
    name = type(err).__name__
    cause = one_line(text) if text.strip() else "no details given"
    return f"{name}: {cause}"
