"""How one analysis option is declared: :func:`option`, the checks it can name, and :class:`OptionError`.

An option of :class:`~rl_reliable_logger.analysis.options.AnalysisOptions` is one dataclass field whose
metadata is a :class:`Declared`: its help, its check (validate and normalise one value), whether it is an
execution setting (executor, progress, chunk size: recorded in provenance, never in the report hash or on a
tracker), and how the command line spells it (flag, argument group, metavar, the parser of the flag's text).
Everything else (the flags of every analysing command, ``provenance["options"]``, the report hash, MLflow
params, W&B config) is derived from these fields, so adding or exposing an option is one declaration.

Nothing heavy is imported here (numpy only inside the checks that need it): the command line builds its
parser from these declarations and ``rl-reliable --help`` loads no numpy.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..wording import Message, kw, said

#: Argument groups of the command line, in help order (a declaration names one).
STATISTICS = "statistics"
SELECTION = "selection"
JORDAN = "Jordan et al. (2020) and hyperparameter sweeps"
CHECKS = "protocol checks and many-way comparisons"

Check = Callable[[str, Any], Any]


class OptionError(InputError):
    """A bad analysis option. ``keyword`` is the offending keyword argument of ``AnalysisOptions``.

    The message names keywords backticked, as every library message does (```reps=```, ```ci=1.5```),
    so that the command line can put its flags in their place (``--reps``, ``--ci 1.5``).
    """

    def __init__(self, keyword: str, message: Message | str) -> None:
        self.keyword = keyword
        super().__init__(message, [keyword])


@dataclass(frozen=True)
class Declared:
    """The declaration of one option (the metadata of its dataclass field; its name is the field's name).

    ``check(name, value)`` returns the normalised value or raises :class:`OptionError`. ``flag`` is None for
    an option the command line does not expose; ``parse`` turns the flag's text into the value (``bool``: a
    switch); ``repeatable``: the flag may be given again, its values joined. ``default_text`` is the default as
    the help says it when the value alone would not explain it (or a function returning it, called when the help
    is built). ``record`` turns the value into what provenance records (default: :func:`record`). ``only_with``
    names the switch (a ``bool`` option) this option acts under: given while that switch is off, it would be
    ignored, so it is refused (:func:`check_given`).
    """

    help: Message | str
    check: Check | None = None
    execution: bool = False
    flag: str | None = None
    group: str = STATISTICS
    metavar: str | None = None
    parse: Callable[[str], Any] | type | None = None
    repeatable: bool = False
    default_text: Message | str | Callable[[], str] | None = None
    record: Callable[[Any], Any] | None = None
    only_with: str | None = None


def option(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING, **declared: Any) -> Any:
    """A dataclass field declaring one option (``help=``, ``check=``, ``flag=``, ... of :class:`Declared`)."""
    meta = {"option": Declared(**declared)}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def declared(cls: Any) -> list[tuple[dataclasses.Field[Any], Declared]]:
    """The declared options of a dataclass (type or instance), in field order."""
    return [(f, f.metadata["option"]) for f in dataclasses.fields(cls) if "option" in f.metadata]


def check_all(options: Any) -> None:
    """Run every declared check of a frozen options dataclass, storing the normalised values (its __post_init__)."""
    for field, decl in declared(options):
        if decl.check is not None:
            object.__setattr__(options, field.name, decl.check(field.name, getattr(options, field.name)))


def check_given(options: Any, given: Collection[str]) -> None:
    """Refuse an option the caller gave (``given``: the keywords, or the flags' options) that cannot act: one
    declared ``only_with`` a switch that is off (``curve_reps=`` without ``curves=True``), an :class:`OptionError`
    naming both. An option left at its default is never refused, whatever its switch.

    Example:
        >>> from rl_reliable_logger.analysis.options import AnalysisOptions
        >>> check_given(AnalysisOptions(curve_reps=100, curves=True), ["curve_reps", "curves"])
        >>> check_given(AnalysisOptions(curve_reps=100), ["curve_reps"])
        Traceback (most recent call last):
        ...
        rl_reliable_logger.analysis.declared.OptionError: `curve_reps=` acts only with `curves=True`: pass it too, or leave `curve_reps=` out
    """
    for field, decl in declared(options):
        if decl.only_with and field.name in given and not getattr(options, decl.only_with):
            keyword = kw(f"{field.name}=")
            raise OptionError(
                field.name,
                said(
                    keyword,
                    " acts only with ",
                    kw(f"{decl.only_with}=True"),
                    ": pass it too, or leave ",
                    keyword,
                    " out",
                ),
            )


def default_of(field: dataclasses.Field[Any]) -> Any:
    """A field's default value (built by its factory when it has one)."""
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def recorded_names(cls: Any) -> tuple[str, ...]:
    """The options of ``cls`` that shape the results (all but execution settings): what the report hash covers
    and what a tracker records on the analysis run."""
    return tuple(f.name for f, decl in declared(cls) if not decl.execution)


# ---------------------------------------------------------------------------- records (provenance values)
def record(value: Any) -> Any:
    """A checked value as JSON-friendly data: tuples become lists, a mapping of pairs a dict of lists."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return {k: list(v) for k, v in value.items()}
    return value


def name_of(value: Any) -> Any:
    """A metric, normaliser or executor object by its name (strings and None as they are)."""
    if value is None or isinstance(value, str):
        return value
    return str(getattr(value, "name", getattr(value, "__name__", value)))


def text_of(value: Any) -> Any:
    """A non-string value as its text (None stays None)."""
    return value if value is None or isinstance(value, str) else str(value)


def normalize_record(value: Any) -> Any:
    """``normalize=`` as its text; reference scores given in code as what they are (not a DataFrame's repr)."""
    from ..data.normalize import spec_text

    return spec_text(value)


def seed_record(value: Any) -> Any:
    """An integer seed as it is; a numpy Generator as its repr."""
    return value if value is None or isinstance(value, int) else repr(value)


# ---------------------------------------------------------------------------- checks
def is_int(value: Any) -> bool:
    """An integer (numpy's too), not a bool."""
    import numpy as np

    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def real(name: str, value: Any) -> float:
    """A finite number (numpy's too, not a bool) as a float."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise OptionError(name, said(kw(f"{name}="), f" must be a number, got {value!r}"))
    out = float(value)
    if not math.isfinite(out):
        raise OptionError(name, said(kw(f"{name}="), f" must be finite, got {value!r}"))
    return out


def positive_int(name: str, value: Any, what: str = "integer") -> int:
    if not is_int(value) or value < 1:
        raise OptionError(name, said(kw(f"{name}="), f" must be a positive {what}, got {value!r}"))
    return int(value)


def optional(check: Check) -> Check:
    """``check`` for a value that may also be None (None passes unchanged)."""
    return lambda name, value: None if value is None else check(name, value)


def switch(name: str, value: Any) -> bool:
    return bool(value)


def one_of(choices: Callable[[], Sequence[str]], what: str) -> Check:
    """A name among ``choices()``; the message lists them."""

    def check(name: str, value: Any) -> Any:
        if value not in choices():
            raise OptionError(
                name, said(kw(f"{name}={value!r}"), f" is not {what}; choose one of {', '.join(choices())}")
            )
        return value

    return check


def within(low: float, high: float, hint: str) -> Check:
    """A number strictly between ``low`` and ``high`` (``inf``: no upper end)."""

    def check(name: str, value: Any) -> float:
        out = real(name, value)
        if not low < out < high:
            raise OptionError(name, said(kw(f"{name}="), f" must be {hint}, got {value!r}"))
        return out

    return check


def metric(name: str, value: Any) -> Any:
    """A metric the registry knows (by name or as a function); returns the registry's metric."""
    from ..stats import registry

    try:
        return registry.get_metric(value)
    except (ValueError, KeyError) as err:
        raise OptionError(name, said(kw(f"{name}="), f": {err}")) from None


def known_metric(name: str, value: Any) -> Any:
    metric(name, value)
    return value


def metrics(name: str, value: Any) -> tuple[Any, ...]:
    """One metric or several (names or functions), unique, as a tuple."""
    items = tuple((value,) if isinstance(value, (str, bytes)) or callable(value) else value)
    if not items:
        raise OptionError(name, said(kw(f"{name}="), " is empty: give at least one metric (e.g. iqm)"))
    names = [metric(name, m).name for m in items]
    if len(set(names)) != len(names):
        raise OptionError(name, said(kw(f"{name}="), f" must be unique, got {names}"))
    return items


def names(name: str, value: Any) -> tuple[str, ...] | None:
    """A list of names (algorithms, tasks, columns) as a tuple of strings; a bare string is one name."""
    if value is None:
        return None
    items = (value,) if isinstance(value, str) else tuple(value)
    if not items or any(not isinstance(v, str) or not v for v in items):
        raise OptionError(name, said(kw(f"{name}="), f" must be a non-empty list of non-empty names, got {value!r}"))
    return items


def names_or_none(name: str, value: Any) -> tuple[str, ...]:
    """Like :func:`names`, but empty (or None) is the empty tuple."""
    return names(name, value or None) or ()


def numbers(name: str, value: Any) -> tuple[float, ...]:
    """A non-empty list of finite numbers as a tuple of floats."""
    import numpy as np

    out = tuple(float(t) for t in np.asarray(value, dtype=float).ravel())
    if not out or not all(math.isfinite(t) for t in out):
        raise OptionError(name, said(kw(f"{name}="), " must be a non-empty list of finite numbers"))
    return out


def score_range(name: str, value: Any) -> Any:
    """``(low, high)`` with low < high, or a mapping of task to such a pair."""

    def pair(v: Any) -> tuple[float, float]:
        try:
            low, high = (real(name, x) for x in v)
        except (TypeError, ValueError):
            raise OptionError(name, said(kw(f"{name}="), f" must be (low, high), got {v!r}")) from None
        if not low < high:
            raise OptionError(name, said(kw(f"{name}="), f" needs low < high, got {v!r}"))
        return low, high

    if isinstance(value, Mapping):
        return {str(k): pair(v) for k, v in value.items()}
    return pair(value)


def seed(name: str, value: Any) -> Any:
    """A non-negative integer, a numpy Generator or None."""
    import numpy as np

    if value is None or isinstance(value, np.random.Generator):
        return value
    if not is_int(value):
        raise OptionError(name, said(kw(f"{name}="), f" must be an integer, a numpy Generator or None, got {value!r}"))
    if value < 0:
        raise OptionError(name, said(kw(f"{name}="), f" must be a non-negative integer, got {value!r}"))
    return int(value)


def executor(name: str, value: Any) -> Any:
    from .. import executors

    try:
        return executors.check(value)
    except InputError as err:
        raise OptionError(name, str(err)) from None


# ---------------------------------------------------------------------------- parsers of a flag's text
def comma_names(text: str) -> list[str]:
    """``A,B`` → ``["A", "B"]`` (surrounding spaces dropped)."""
    return [part.strip() for part in str(text).split(",") if part.strip()]


def low_high(text: str) -> tuple[float, float]:
    """``0,500`` → ``(0.0, 500.0)``."""
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"needs LOW,HIGH (e.g. 0,500), got {text!r}") from None
    return low, high
