"""PlanOptions: the choices of one run-count plan (:func:`~rl_reliable_logger.analysis.planning.plan`), declared once.

Each field is one option's declaration (:mod:`.declared`), as for :class:`~.options.AnalysisOptions`; the options
a plan shares with an evaluation (``normalize``, ``ci``, ``seed``, ``gamma``, ``executor``, ...) reuse that
declaration (:func:`shared`), so ``rl-reliable plan --ci`` means what ``rl-reliable evaluate --ci`` means.
Light to import: ``rl-reliable plan --help`` builds its flags from here without numpy.

Example:
    >>> PlanOptions(power=80, runs=[20, 5, 5]).power, PlanOptions(runs=[20, 5, 5]).runs
    (0.8, (5, 20))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from ..executors import Executor
from ..wording import kw, said
from . import declared as d
from .declared import OptionError, declared, option
from .options import AnalysisOptions

#: The interval method whose widths a plan predicts: the percentile interval, whose width a few hundred
#: replicates estimate well. An evaluation's default (``bootstrap-t``) is wider at few runs per task (its expanded
#: and studentized intervals widen as runs get fewer), so it may need more runs than planned; the plan says so.
PLANNED_METHOD = "percentile"

PLANNING = "planning"


def shared(name: str, default: Any = dataclasses.MISSING) -> Any:
    """The field of the AnalysisOptions option ``name``: its very declaration, with its default or ``default``."""
    field = next(f for f in dataclasses.fields(AnalysisOptions) if f.name == name)
    if default is dataclasses.MISSING:
        default = d.default_of(field)
    decl = dataclasses.replace(field.metadata["option"], group=PLANNING)
    return dataclasses.field(default=default, metadata={"option": decl})


def _at_least(low: int, what: str) -> d.Check:
    def check(name: str, value: Any) -> int:
        if not d.is_int(value) or value < low:
            raise OptionError(
                name, said("plan needs ", kw(f"{name}="), f" of at least {low} {what} (an integer), got {value!r}")
            )
        return int(value)

    return check


def _probability(name: str, value: Any) -> float:
    """A probability as a fraction: 0.8 or 80 (a percentage), as the confidence level rule."""
    p = d.real(name, value)
    p = p / 100.0 if 1 < p < 100 else p
    if not 0 < p < 1:
        raise OptionError(
            name, said(kw(f"{name}="), f" must be between 0 and 1 (e.g. 0.8) or a percentage, got {value!r}")
        )
    return p


def _pair(name: str, value: Any) -> tuple[str, str] | None:
    if value is None:
        return None
    names = [str(v) for v in ([value] if isinstance(value, str) else value)]
    if len(names) != 2 or names[0] == names[1]:
        raise OptionError(name, said(kw(f"{name}="), f" needs two different algorithm names, got {names!r}"))
    return names[0], names[1]


#: why a plan refuses a run count of 1 (as it refuses a pilot of one run per task)
_ONE_RUN = "one run per task shows no run-to-run spread, so its predicted width would be 0"


def _grid(name: str, value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        grid = sorted({int(n) for n in value})
    except (TypeError, ValueError):
        raise OptionError(
            name, said(kw(f"{name}="), f" must be positive integers (e.g. 5,10,20), got {value!r}")
        ) from None
    if not grid or grid[0] < 2:
        raise OptionError(
            name, said(kw(f"{name}="), f" must be run counts of at least 2 ({_ONE_RUN}), got {list(value)!r}")
        )
    return tuple(grid)


def _runs_per_task(name: str, value: Any) -> int:
    if not d.is_int(value) or value < 2:
        raise OptionError(name, said(kw(f"{name}="), f" must be an integer of at least 2 ({_ONE_RUN}), got {value!r}"))
    return int(value)


def _ints(text: str) -> list[int]:
    try:
        return [int(n) for n in d.comma_names(text)]
    except ValueError:
        raise ValueError(f"needs comma-separated integers (e.g. 5,10,20), got {text!r}") from None


def _correction(name: str, value: Any) -> str:
    if value not in ("variance", "none"):
        raise OptionError(name, said(kw(f"{name}="), f" must be 'variance' or 'none', got {value!r}"))
    return str(value)


@dataclass(frozen=True)
class PlanOptions:
    """Everything ``plan()`` needs besides the pilot runs; each field's ``help`` says what it does."""

    metric: str = option(
        "iqm",
        help="aggregate metric to plan for",
        check=d.known_metric,
        flag="--metric",
        group=PLANNING,
        metavar="NAME",
        parse=str,
    )
    normalize: str | Any | None = shared("normalize")
    target_width: float | None = option(
        None,
        help="interval width wanted (in score units): the plan then says how many runs reach it",
        check=d.optional(d.within(0, float("inf"), "positive")),
        flag="--target-width",
        group=PLANNING,
        metavar="W",
        parse=float,
        default_text="none",
    )
    compare: tuple[str, str] | None = option(
        None,
        help="two algorithms: also predict the chance that the interval of their difference excludes 0",
        check=_pair,
        flag="--compare",
        group=PLANNING,
        metavar="A,B",
        parse=d.comma_names,
        default_text="none",
    )
    power: float = option(
        0.8,
        help=said("separation probability wanted with ", kw("compare="), ": 0.8 or 80"),
        check=_probability,
        flag="--power",
        group=PLANNING,
        metavar="P",
        parse=float,
    )
    max_runs: int | None = option(
        None,
        help="largest number of runs per task considered",
        check=d.optional(_runs_per_task),
        flag="--max-runs",
        group=PLANNING,
        metavar="N",
        parse=int,
        default_text="max(20, 2x the largest pilot cell)",
    )
    runs: tuple[int, ...] | None = option(
        None,
        help="exact list of runs per task to simulate (instead of a grid)",
        check=_grid,
        flag="--runs",
        group=PLANNING,
        metavar="N1,N2",
        parse=_ints,
        default_text=said("a grid up to ", kw("max_runs=")),
    )
    trials: int = option(
        200,
        help="synthetic experiments per number of runs",
        check=_at_least(2, "synthetic experiments"),
        flag="--trials",
        group=PLANNING,
        metavar="N",
        parse=int,
    )
    sim_reps: int = option(
        500,
        help="bootstrap replicates per synthetic experiment",
        check=_at_least(10, "bootstrap replicates"),
        flag="--sim-reps",
        group=PLANNING,
        metavar="N",
        parse=int,
    )
    ci: float = shared("ci")
    gamma: float = shared("gamma")
    correction: Literal["variance", "none"] = option(
        "variance",
        help="resample each pilot cell with its variance corrected to the unbiased one (variance) or as it is (none)",
        check=_correction,
    )
    seed: int = shared("seed")
    progress: bool = shared("progress")
    executor: str | Executor | None = shared("executor")

    def __post_init__(self) -> None:
        d.check_all(self)
        if not isinstance(self.seed, int):  # a plan is always reproducible: no Generator, no fresh entropy
            raise OptionError(
                "seed", said(kw("seed="), f" must be a non-negative integer (as for evaluate), got {self.seed!r}")
            )

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON-friendly values."""
        return {f.name: (decl.record or d.record)(getattr(self, f.name)) for f, decl in declared(self)}


#: Keywords of :func:`~rl_reliable_logger.analysis.planning.plan` with a flag -> the flag (``rl-reliable plan``).
def plan_flags() -> dict[str, str]:
    return {f"{f.name}=": decl.flag for f, decl in declared(PlanOptions) if decl.flag}


__all__ = ["PLANNING", "PlanOptions", "plan_flags", "shared"]
