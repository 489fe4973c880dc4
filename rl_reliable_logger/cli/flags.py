"""The one translation of library messages into command-line words: Python keywords become flags.

Library messages are data (:class:`~rl_reliable_logger.wording.Message`): text and the keywords they name,
``Keyword("include_unfinished", "True")``, ``Keyword("reps")`` or with the value given, ``Keyword("ci", "1.5")``.
:func:`as_flags` puts each keyword the running command has a flag for into that flag (``--include-unfinished``,
``--reps``, ``--ci 1.5``) and leaves the others as the library writes them (```seeds_by_file=True```);
:func:`cli_message` does it for an exception, with the parts it was raised with. Plain text (a tracker client's own
error, a line the command wrote in its own words) names no keyword of ours and is printed as it is. An
analysis option's flag is part of its declaration
(:mod:`rl_reliable_logger.analysis.declared`); :data:`ANALYSIS_FLAGS` is read from there. The source table
below pairs the keywords of ScoreTable and the trackers with their flags; ``rl-reliable plan`` reads
:data:`PLAN_FLAGS` first.

Two tables because one word has two meanings: ``seed=`` is the seed *field* of a source or a
ScoreTable (``--seed-key``) but the random seed of an analysis (``--seed``). A message of an analysis
option (an exception with a ``keyword`` attribute) is read with :data:`ANALYSIS_FLAGS` first.

Example:
    >>> from rl_reliable_logger.wording import Keyword, said
    >>> as_flags(said("pass ", Keyword("include_unfinished", "True"), " to use them"))
    'pass --include-unfinished to use them'
    >>> as_flags(said(Keyword("ci", "1.5"), " reads as a 1.5% interval; the largest feasible ", Keyword("reps"), " is 10"), analysis=True)
    '--ci 1.5 reads as a 1.5% interval; the largest feasible --reps is 10'
    >>> as_flags("a client's `ci=1.5` stays")
    "a client's `ci=1.5` stays"
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import re
from collections.abc import Iterator, Mapping, Sequence

from ..errors import ReliabilityWarning, RLReliableError
from ..lines import one_line
from ..trackers import registry
from ..trackers.base.messages import DROP_INVALID
from ..trackers.base.reruns import RERUN_CHOICES, RERUNS_FLAG
from ..wording import Keyword, Message, Said, kw, message_of, said


class CliError(Exception):
    """A user-facing error: printed as ``error: <message>`` with exit status 2, no traceback."""


def _declared_flags() -> dict[str, str]:
    from ..analysis.declared import declared
    from ..analysis.options import AnalysisOptions

    return {f"{f.name}=": decl.flag for f, decl in declared(AnalysisOptions) if decl.flag}


#: Keywords of AnalysisOptions (``evaluate()``) -> the flag that sets each: from the options' declarations.
ANALYSIS_FLAGS: dict[str, str] = _declared_flags()

#: Keywords of ScoreTable, the tracker Sources and Sinks and the writer -> the flag that sets each.
SOURCE_FLAGS: dict[str, str] = {
    "algorithm=": "--algorithm-key",
    "task=": "--task-key",
    "seed=": "--seed-key",
    "score=": "--score-key",
    "run_key=": "--run-key",
    "run_id=": "--run-key",
    "step=": "--step-key",
    "include_unfinished=True": "--include-unfinished",
    DROP_INVALID: "--drop-invalid",
    "experiments=": "--experiment",
    "filter_string=": "--filter",
    "filters=": "--filter",
    "tracking_uri=": "--tracking-uri",
    "curve_key=": "--curve-key",
    "score_rule=": "--score-rule",
    "retry_for=": "--retry-for",
    "expect_runs=": "--expect-runs",
    "stale_after=": "--stale-after",
    "variant=": "--variant-key",
    "extra_fields=": "--hyperparameter-keys",
    "algorithms=": "--only-algorithms",
    "tasks=": "--only-tasks",
    "sweep=": "--sweep",
    "per_page=": "--per-page",
    "parent_run_id=": "--publish RUN_ID",
    "experiment=": "--experiment",
    "project=": "--project",
    "force=True": "--force",
    "out=": "--out",
    "timeout=": "--wait-timeout",
    "path=": "ENTITY/PROJECT",
    "offline_dir=": "--offline-dir",
    "bundle=": "--out",
    "figure_formats=": "--figure-formats",
    "figures=False": "--no-figures",
    # names (data/names.py) and run-name redaction (redaction.py)
    "names='normalize'": "--normalize-names",
    "run_names=": "--redact-run-names",
}

SOURCE_FLAGS.update(registry.keyword_flags())  # each tracker's own options, from its plugin
SOURCE_FLAGS.update({f"reruns={choice!r}": f"{RERUNS_FLAG} {choice}" for choice in RERUN_CHOICES})


def _plan_flags() -> dict[str, str]:
    from ..analysis.plan_options import plan_flags

    return plan_flags()


#: Keywords of ``analysis.planning.plan`` -> the flags of ``rl-reliable plan`` (read first by that command): from
#: the declarations of PlanOptions.
PLAN_FLAGS: dict[str, str] = _plan_flags()

_TOKEN = re.compile(r"`([^`]+)`")
_BUNDLED = re.compile(r"(\w+)\[(['\"])(.+)\2\]")
_FLAG = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]*")
#: The flags of the command being run (``main`` sets them): a keyword whose flag that command does not have is
#: left as the keyword, so no message names a flag the command would reject.
_COMMAND_FLAGS: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar("command_flags", default=None)


@contextlib.contextmanager
def command_flags(parser: argparse.ArgumentParser | None) -> Iterator[None]:
    """While the command of ``parser`` runs, :func:`as_flags` names only its flags (read from its ``--help``)."""
    flags = None if parser is None else frozenset(_FLAG.findall(parser.format_help()))
    token = _COMMAND_FLAGS.set(flags)
    try:
        yield
    finally:
        _COMMAND_FLAGS.reset(token)


def _available(word: str) -> bool:
    flags = _COMMAND_FLAGS.get()
    first = word.split(" ")[0]
    return flags is None or not first.startswith("--") or first in flags


def _word(token: str, tables: tuple[Mapping[str, str], ...]) -> str | None:
    for table in tables:
        if token in table:
            return table[token]
    name, eq, value = token.partition("=")
    if not eq:
        return None
    for table in tables:
        flag = table.get(f"{name}=")
        if flag is not None:
            return flag if value in ("", "True") else f"{flag} {value}"
    return None


def _tables(analysis: bool, table: Mapping[str, str] | None) -> tuple[Mapping[str, str], ...]:
    tables: tuple[Mapping[str, str], ...] = (
        (ANALYSIS_FLAGS, SOURCE_FLAGS) if analysis else (SOURCE_FLAGS, ANALYSIS_FLAGS)
    )
    return tables if table is None else (table, *tables)


def flag_of(keyword: Keyword, tables: Sequence[Mapping[str, str]]) -> str:
    """``keyword`` as the running command says it: its flag (with its value) when the command has that flag, else
    the keyword as the library writes it."""
    word = _word(keyword.token, tuple(tables))
    return str(keyword) if word is None or not _available(word) else word


def as_flags(text: Message | str, *, analysis: bool = False, table: Mapping[str, str] | None = None) -> str:
    """``text`` in the running command's words: every keyword it names that the command has a flag for as that
    flag (others as the library writes them). Plain text (a tracker client's own words, a line the command wrote in
    its own words) is printed as it is: it names no keyword of ours.

    ``analysis=True`` reads a keyword as an analysis option first (``seed=`` -> ``--seed``); ``table``
    (e.g. :data:`PLAN_FLAGS`) is read before both.
    """
    tables = _tables(analysis, table)
    return message_of(text).words(keyword=lambda k: flag_of(k, tables))


def cli_message(
    err: BaseException | Warning | str, *, table: Mapping[str, str] | None = None, analysis: bool = False
) -> str:
    """An exception's (or warning's) message in command-line words, from the parts it was raised with
    (:func:`~rl_reliable_logger.wording.message_of`; analysis options read as such; ``table`` first); one of ours
    that came as text is read by :func:`our_words`, anything else's text is printed as it is."""
    analysis = analysis or getattr(err, "keyword", None) is not None
    if isinstance(err, (RLReliableError, CliError, ReliabilityWarning)):
        return our_words(err, analysis=analysis, table=table)
    return as_flags(message_of(err), analysis=analysis, table=table)


def our_words(
    text: BaseException | Message | str, *, analysis: bool = False, table: Mapping[str, str] | None = None
) -> str:
    """A message of ours (an error or warning of this package, a warning line of a source or an analysis) in
    command-line words: its parts when it keeps them, else its text read by :func:`_keywords_named`."""
    tables = _tables(analysis, table)
    if isinstance(text, (Message, Said)) or getattr(text, "message_parts", None) is not None:
        message = message_of(text)
    else:
        message = _keywords_named(str(text), tables)
    return message.words(keyword=lambda k: flag_of(k, tables))


def _keywords_named(text: str, tables: tuple[Mapping[str, str], ...]) -> Message:
    """A message of ours that reaches the edge as text, as a message: each backticked keyword a flag table knows read
    as a :class:`~rl_reliable_logger.wording.Keyword` part. Only for errors and warning lines of this package's
    classes (:func:`our_words`) that arrive as text: every message this package builds keeps its parts (``said()``,
    or ``+`` on a :class:`~rl_reliable_logger.wording.Said`), but a tracker plugin from outside the package (the
    registry takes third-party plugins) may raise an ``InputError`` in the earlier style, backticked keywords in
    text, and its user should still see flags. A tracker client's text, another library's warning or log line and a line the command wrote are never read this
    way: :func:`as_flags` prints plain text as it is.

    Example:
        >>> _keywords_named("`variant=` and `client_kwargs['tracking_uri']`, not `x`", (SOURCE_FLAGS,)).keywords
        (Keyword(name='variant', value=None, bundle=None), Keyword(name='tracking_uri', value=None, bundle='client_kwargs'))
    """
    parts: list[str | Keyword] = []
    at = 0
    for m in _TOKEN.finditer(text):
        token = m.group(1)
        if _word(token, tables) is None:
            continue
        key = _BUNDLED.fullmatch(token)  # client_kwargs['tracking_uri']
        parts += [text[at : m.start()], Keyword(key[3], bundle=key[1]) if key else kw(token)]
        at = m.end()
    return said(*parts, text[at:])


def user_message(err: BaseException | Message | str) -> str:
    """What ``error: ...`` prints: in command-line words, redacted, on one line (``lines.one_line``)."""
    return one_line(cli_message(err) if isinstance(err, BaseException) else as_flags(err))
