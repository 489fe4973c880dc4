"""A watch's design options, declared as the analysis options are (:mod:`.declared`), and which analysis options
it freezes: no numpy, so the command line can read them.

``rl-reliable watch`` adds the flags of :class:`WatchDesign`'s fields and of :data:`FROZEN_OPTIONS` (from their
declarations in :class:`~rl_reliable_logger.analysis.options.AnalysisOptions`), and :mod:`.watch` records both with
the design. Each design option is checked by its declaration (one sentence naming the keyword), like every option.

Example:
    >>> WatchDesign(looks=3, max_runs=12).alpha, WatchDesign(looks=3, max_runs=12, compare="A,B").compare
    (0.05, ('A', 'B'))
    >>> WatchDesign(looks=3, max_runs=12, spending="linear")
    Traceback (most recent call last):
    ...
    rl_reliable_logger.analysis.declared.OptionError: `spending='linear'` is not a spending function; choose one of obf, pocock
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..wording import kw, said
from . import declared as d
from .declared import OptionError, option

#: Analysis options that change a look's numbers: frozen with the design.
FROZEN_OPTIONS = ("normalize", "gamma", "reps", "seed", "task_bootstrap", "budget", "only_tasks")
#: Options a watch decides itself: passing them is refused with the keyword to use instead.
OWN_OPTIONS = {
    "metrics": "metric=",
    "only_algorithms": "compare=",
    "method": "nothing (the repeated intervals are normal intervals with the bootstrap standard deviation)",
}
#: A pair stops for futility when its conditional power under the current estimate is below this (0: never, the
#: default since issue 43: a threshold of 0.1 cost up to 7 points of power on real-data differences of moderate
#: power, ``benchmarks/results/watch_study.txt``) ...
FUTILITY = 0.0
#: ... at an information fraction of at least this (earlier estimates are too noisy to give up on).
FUTILITY_FROM = 0.5
#: The spending functions of :mod:`..stats.sequential` (``SPENDING`` there; a test keeps them equal).
SPENDING = ("obf", "pocock")
#: The argument group of the design flags.
DESIGN = "design (frozen at the first look)"


def at_least(low: int) -> d.Check:
    def check(name: str, value: Any) -> int:
        if not d.is_int(value) or value < low:
            raise OptionError(name, said(kw(f"{name}="), f" must be an integer of at least {low}, got {value!r}"))
        return int(value)

    return check


def check_alpha(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 0.5:
        raise OptionError(name, said(kw(f"{name}="), f" must be between 0 and 0.5 (e.g. 0.05), got {value!r}"))
    return float(value)


def _futility(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise OptionError(
            name,
            said(kw(f"{name}="), f" must be a conditional power in [0, 1) (0: never stop for futility), got {value!r}"),
        )
    return float(value)


def check_spending(name: str, value: Any) -> str:
    if value not in SPENDING:
        raise OptionError(
            name, said(kw(f"{name}={value!r}"), f" is not a spending function; choose one of {', '.join(SPENDING)}")
        )
    return str(value)


def check_metric_name(name: str, value: Any) -> str:
    """A registered metric by its name (the design is recorded by name)."""
    if not isinstance(value, str):
        raise OptionError(
            name, said(kw(f"{name}="), " must be the name of a registered metric (the design is recorded by name)")
        )
    return str(d.metric(name, value).name)


def _compared(name: str, value: Any) -> tuple[str, ...] | None:
    """At least two algorithm names (sorted, each once), or None: every algorithm."""
    if value is None:
        return None
    names = d.comma_names(value) if isinstance(value, str) else list(value)
    if len(set(names)) < 2 or any(not isinstance(n, str) for n in names):
        raise OptionError(name, said(kw(f"{name}="), f" must name at least two algorithms, got {value!r}"))
    return tuple(sorted(set(names)))


@dataclass(frozen=True)
class LooksDesign:
    """What every sequential design declares first (a watch's, a race's): K looks and at most N runs per cell,
    K no more than N (each look needs new runs)."""

    looks: int = option(
        help="number of looks of the design", check=at_least(1), flag="--looks", group=DESIGN, metavar="K", parse=int
    )
    max_runs: int = option(
        help="maximum runs per cell (an algorithm's, or a configuration's, runs on one task)",
        check=at_least(2),
        flag="--max-runs",
        group=DESIGN,
        metavar="N",
        parse=int,
    )

    def __post_init__(self) -> None:
        d.check_all(self)
        if self.looks > self.max_runs:
            raise OptionError(
                "looks",
                said(
                    kw(f"looks={self.looks}"),
                    " is more than ",
                    kw(f"max_runs={self.max_runs}"),
                    ": each look needs new runs",
                ),
            )

    def to_dict(self) -> dict[str, Any]:
        """The design options as JSON-friendly values."""
        return {f.name: (decl.record or d.record)(getattr(self, f.name)) for f, decl in d.declared(self)}


@dataclass(frozen=True)
class WatchDesign(LooksDesign):
    """The design of a watch, frozen at its first look (with the analysis options of :data:`FROZEN_OPTIONS` and
    the tasks): each field is one option's whole declaration, its flag that of ``rl-reliable watch``."""

    compare: tuple[str, ...] | None = option(
        None,
        help="algorithms to compare, every pair among them",
        check=_compared,
        flag="--compare",
        group=DESIGN,
        metavar="A,B",
        parse=d.comma_names,
        default_text="all",
    )
    alpha: float = option(
        0.05,
        help="family-wise error over all looks and pairs",
        check=check_alpha,
        flag="--alpha",
        group=DESIGN,
        metavar="A",
        parse=float,
    )
    metric: str = option(
        "iqm",
        help="aggregate metric compared",
        check=check_metric_name,
        flag="--metric",
        group=DESIGN,
        metavar="NAME",
        parse=str,
    )
    spending: str = option(
        "obf",
        help="error spending over the looks: obf (O'Brien-Fleming type) or pocock",
        check=check_spending,
        flag="--spending",
        group=DESIGN,
        metavar="NAME",
        parse=str,
    )
    futility: float = option(
        FUTILITY,
        help=f"from {FUTILITY_FROM * 100:g}% of the maximum runs on, a pair whose conditional power is below it stops "
        "as futile and its cells leave the launch list (non-binding: the error guarantee holds whether or not the "
        "runs stop; 0: never)",
        check=_futility,
        flag="--futility",
        group=DESIGN,
        metavar="P",
        parse=float,
    )


__all__ = [
    "DESIGN",
    "FROZEN_OPTIONS",
    "FUTILITY",
    "FUTILITY_FROM",
    "OWN_OPTIONS",
    "SPENDING",
    "LooksDesign",
    "WatchDesign",
]
