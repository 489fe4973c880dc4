"""How a tracker's runs are read, declared once: ``read=ReadOptions(...)`` of every ``x_table()`` and ``.table()``.

Every tracker table takes the same reading options: how the final score is read (``score_rule``), the learning
curves (``curves``, ``curve_key``), the configuration columns (``hyperparameter_keys``), which algorithms and tasks
are kept, whether unfinished runs count, what a bad run does (``on_invalid``), how names are checked (``names``)
and what a seed trained twice does (``reruns``). They are one frozen value, checked when it is made, so that a
new reading option is added here and not in a dozen signatures. A Source turns it into its
:class:`~.request.SourceRequest` with :meth:`ReadOptions.request`, saying only what is its own (the score key,
where a hyperparameter lives).

The same options passed as separate keywords (the spelling before ``read=``) still work for one release, with a
``DeprecationWarning`` naming the new spelling (:func:`read_options`); both spellings at once are an error.

Example:
    >>> ReadOptions(score_rule="mean-last-5", curves=True).request(score="summary.ret").curve_key
    'summary.ret'
    >>> ReadOptions(on_invalid="skip")
    Traceback (most recent call last):
    ...
    rl_reliable_logger.errors.InputError: `on_invalid=` is 'raise' or 'drop', got 'skip'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ...errors import InputError
from ...wording import kw, said
from .deprecation import moved_keywords
from .request import KINDS, SourceRequest
from .reruns import DEFAULT_RERUNS, check_reruns
from .scoring import ScoreRule, parse_score_rule

#: What ``on_invalid=`` takes: fail on a bad run (default) or drop it and list it.
ON_INVALID = ("raise", "drop")
#: What ``names=`` takes (ScoreTable's): refuse names that print alike (default) or normalise them, listed.
NAME_MODES = ("strict", "normalize")
#: The keywords before ``read=`` that are now spelled differently in it.
RENAMED = {"extra_fields": "hyperparameter_keys"}
#: The reading options the log-folder tables (TensorBoard, SB3, marl-eval, Ray Tune) took as separate keywords.
SEPARATE_KEYWORDS = ("score_rule", "curves", "hyperparameter_keys", "on_invalid", "names", "reruns")
#: The ``Source.table()`` keywords of a :class:`SourceRequest` that are reading options now (MLflow, W&B).
REQUEST_KEYWORDS = (
    "score_rule",
    "curve_key",
    "extra_fields",
    "algorithms",
    "tasks",
    "include_unfinished",
    "on_invalid",
    "names",
    "reruns",
)

#: A source's rule for one hyperparameter key: its column and its field reference (``lr`` -> ``lr``, ``config.lr``).
ColumnRule = Callable[[str], "tuple[str, str]"]


def config_column(key: str) -> tuple[str, str]:
    """A key of a run's layout fields or configuration: the column ``key``, the reference ``config.key``."""
    return key, f"config.{key}"


def kind_column(kind: str) -> ColumnRule:
    """The rule of a tracker that keeps hyperparameters in ``kind`` (``params``, ``config``): a key is read there
    (``lr`` -> ``params.lr``), a field reference as written (``tags.lr``); the column is the key as given.

    Example:
        >>> rule = kind_column("params")
        >>> rule("lr"), rule("tags.lr")
        (('lr', 'params.lr'), ('tags.lr', 'tags.lr'))
    """

    def column(key: str) -> tuple[str, str]:
        return key, key if "." in key and key.split(".", 1)[0] in KINDS else f"{kind}.{key}"

    return column


def _keys(value: Any, keyword: str) -> tuple[str, ...] | None:
    """A list of names as a tuple (None stays None); a bare string is refused (it would be read letter by letter)."""
    if value is None:
        return None
    if isinstance(value, str):
        raise InputError(said(kw(keyword + "="), f" is a list of names, got the string {value!r}: write [{value!r}]"))
    return tuple(str(v) for v in value)


@dataclass(frozen=True)
class ReadOptions:
    """The reading options every tracker table shares (``read=`` of every ``x_table()`` and ``Source.table()``).

    ``score_rule`` says how the final score is read from the score key (``last``, ``mean-last-N``,
    ``at-budget:STEP``, ``max``; see :mod:`.scoring`); ``curves=True`` adds the learning curves, read from
    ``curve_key`` (default: the score key; a tracker whose curves are fixed refuses another key);
    ``hyperparameter_keys`` adds configuration columns (a list of keys, each read where the tracker keeps
    hyperparameters, or a mapping ``{column: key}``); ``algorithms`` / ``tasks`` keep only those values;
    ``include_unfinished`` keeps runs that did not finish; ``on_invalid="drop"`` leaves bad runs out (listed)
    instead of failing; ``names="normalize"`` rewrites names that print alike (listed) instead of refusing them;
    ``reruns`` says what to do with one seed trained twice (``refuse``, ``latest``, ``first``). Every value is
    checked when the options are made: a bad one is an InputError naming its keyword.

    Example:
        >>> ReadOptions(hyperparameter_keys=["lr"], reruns="latest").extra_fields(config_column)
        {'lr': 'config.lr'}
    """

    score_rule: str | ScoreRule | None = None
    curves: bool = False
    curve_key: str | None = None
    hyperparameter_keys: Sequence[str] | Mapping[str, str] = ()
    algorithms: Sequence[str] | None = None
    tasks: Sequence[str] | None = None
    include_unfinished: bool = False
    on_invalid: str = "raise"
    names: str = "strict"
    reruns: str = DEFAULT_RERUNS

    def __post_init__(self) -> None:
        try:
            parse_score_rule(self.score_rule)
        except ValueError as err:
            raise InputError(str(err)) from None
        if self.on_invalid not in ON_INVALID:
            raise InputError(said(kw("on_invalid="), f" is 'raise' or 'drop', got {self.on_invalid!r}"))
        if self.names not in NAME_MODES:
            raise InputError(said(kw("names="), f" is 'strict' or 'normalize', got {self.names!r}"))
        check_reruns(self.reruns)
        if self.curve_key is not None and not self.curves:
            raise InputError(said(kw("curve_key="), " names the learning curves' key: add ", kw("curves=True")))
        keys = self.hyperparameter_keys
        if isinstance(keys, Mapping):
            object.__setattr__(self, "hyperparameter_keys", {str(k): str(v) for k, v in keys.items()})
        else:
            object.__setattr__(self, "hyperparameter_keys", _keys(keys, "hyperparameter_keys"))
        object.__setattr__(self, "algorithms", _keys(self.algorithms, "algorithms"))
        object.__setattr__(self, "tasks", _keys(self.tasks, "tasks"))

    def extra_fields(self, column: ColumnRule) -> dict[str, str] | None:
        """The configuration columns of ``hyperparameter_keys`` by the source's ``column`` rule (None: none)."""
        keys = self.hyperparameter_keys
        if isinstance(keys, Mapping):
            return {name: column(key)[1] for name, key in keys.items()} or None
        return dict(map(column, keys)) or None

    def fixed_curves(self, where: str) -> ReadOptions:
        """These options for a tracker whose curves are its score's points: another ``curve_key`` is refused."""
        if self.curve_key is not None:
            raise InputError(
                said(f"{where} reads the learning curves from the score's own points: drop ", kw("curve_key="))
            )
        return self

    def request(
        self, *, score: str | Sequence[str] | None, column: ColumnRule = config_column, **refs: Any
    ) -> SourceRequest:
        """The :class:`SourceRequest` of these options, the source's ``score`` key (the curves' default key: its
        first reference) and field ``refs`` (``column``: where the source keeps a hyperparameter)."""
        curve = None
        if self.curves:
            curve = self.curve_key or (score if isinstance(score, str) or score is None else next(iter(score), None))
        same = {f.name for f in fields(SourceRequest)} & {f.name for f in fields(self)} - {"curve_key"}
        shared = {name: getattr(self, name) for name in sorted(same)}  # score_rule, on_invalid, names, reruns, ...
        return SourceRequest(score=score, curve_key=curve, extra_fields=self.extra_fields(column), **shared, **refs)


def read_options(
    read: ReadOptions | None,
    legacy: Mapping[str, Any],
    *,
    where: str,
    accepted: Collection[str],
    curve_key_is_curves: bool = False,
) -> ReadOptions:
    """``read``, or the options of the old separate keywords (``legacy``, those of ``accepted`` the caller gave)
    with a DeprecationWarning naming ``read=`` (:func:`.deprecation.moved_keywords`); both at once are an InputError,
    any other keyword a TypeError.
    ``curve_key_is_curves``: an old ``curve_key=`` alone asked for the curves (a :class:`SourceRequest`'s did).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     read_options(None, {"names": "normalize"}, where="sb3_table()", accepted=["names"]).names
        'normalize'
        >>> str(caught[0].message)
        'sb3_table(names=...) is deprecated: pass read=ReadOptions(names=...) (the old keywords go in the next release)'
    """
    unknown = [name for name in legacy if name not in accepted]
    if unknown:
        raise TypeError(f"{where} got an unexpected keyword argument {unknown[0]!r}")
    if not legacy:
        return read if read is not None else ReadOptions()
    # an old curve key alone asked for the curves (a SourceRequest's did); elsewhere only with curves=True
    implied = {"curves": True} if curve_key_is_curves and legacy.get("curve_key") else {}
    new = moved_keywords(
        read, legacy, where=where, keyword="read", bundle="ReadOptions", renamed=RENAMED, implied=implied
    )
    assert new is not None
    if not new.get("curves"):
        new.pop("curve_key", None)
    return ReadOptions(**new)


def request_of(
    request: SourceRequest | None,
    read: ReadOptions | None,
    keywords: Mapping[str, Any],
    *,
    where: str,
    column: ColumnRule,
    defaults: Mapping[str, str],
) -> SourceRequest:
    """The request of a ``Source.table()`` that takes a :class:`SourceRequest` or its field keywords (MLflow, W&B):
    ``request`` itself, or one built from the keywords and ``read`` (reading options given as keywords are the old
    spelling: accepted with a DeprecationWarning, see :func:`read_options`); ``defaults`` are the tracker's field
    references (its default score key)."""
    if request is not None:
        return SourceRequest.of(request, **({"read": read} if read is not None else {}), **keywords)
    legacy = {name: value for name, value in keywords.items() if name in REQUEST_KEYWORDS}
    options = read_options(read, legacy, where=where, accepted=REQUEST_KEYWORDS, curve_key_is_curves=True)
    refs = {name: value for name, value in keywords.items() if name not in REQUEST_KEYWORDS}
    known = {f.name for f in fields(SourceRequest)} - set(REQUEST_KEYWORDS)
    unknown = [name for name in refs if name not in known]
    if unknown:
        raise InputError(
            f"unknown keyword(s) {', '.join(unknown)} of {where}; known: {', '.join(sorted(known | {'read'}))}"
        )
    score = refs.pop("score", None)
    return options.request(score=defaults.get("score") if score is None else score, column=column, **refs)
