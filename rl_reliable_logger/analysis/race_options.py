"""A race's design options, declared as the analysis options are (:mod:`.declared`): no numpy, so the command line
can read them.

``rl-reliable race`` adds the flags of :class:`RaceOptions`' fields and of the analysis options a watch freezes
(:data:`~.watch_options.FROZEN_OPTIONS`: a race freezes the same ones), and :mod:`.race` records both with the
design. Each is checked by its declaration (one sentence naming the keyword); the checks shared with a watch's
design are the watch's own.

Example:
    >>> RaceOptions(looks=5, max_runs=10, delta=0.1).spending, RaceOptions(looks=5, max_runs=10, delta=0.1).alpha
    ('pocock', 0.05)
    >>> RaceOptions(looks=5, max_runs=10, delta=-1)
    Traceback (most recent call last):
    ...
    rl_reliable_logger.analysis.declared.OptionError: `delta=` must be 0 or a positive number in the metric's units (the indifference zone), got -1
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..wording import kw, said
from .declared import OptionError, check_all, option
from .watch_options import DESIGN, LooksDesign, at_least, check_alpha, check_metric_name, check_spending


def _delta(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value >= 0):
        raise OptionError(
            name,
            said(
                kw(f"{name}="),
                f" must be 0 or a positive number in the metric's units (the indifference zone), got {value!r}",
            ),
        )
    return float(value)


#: Runs per cell at the first look below which a note warns (issue 54's study: on bimodal RL scores a first look of 2
#: runs per cell dropped the true best configuration in 7% of small races, the selection staying within delta).
FEW_FIRST_RUNS = 2


@dataclass(frozen=True)
class RaceOptions(LooksDesign):
    """The design of a race, frozen at its first look (with the analysis options it freezes, the hyperparameter
    columns, every algorithm's configurations and the tasks): each field is one option's whole declaration, its
    flag that of ``rl-reliable race``; ``looks`` and ``max_runs`` (a configuration's runs per task) are declared
    once for both sequential designs (:class:`~.watch_options.LooksDesign`)."""

    delta: float = option(
        0.0,
        help="the indifference zone, in the metric's units: the race stops as soon as it can say that the selected "
        "configuration is within it of the best one (with probability at least 1 - alpha), or when no more runs "
        "could change its selection, or at the last look, and then says how far below the best the selection may "
        "be (0: no zone, the race stops when one configuration is left, when no runs could change its selection, "
        "or at the last look)",
        check=_delta,
        flag="--delta",
        group=DESIGN,
        metavar="D",
        parse=float,
    )
    alpha: float = option(
        0.05,
        help="probability, over all looks, that the selection is not within delta of the best",
        check=check_alpha,
        flag="--alpha",
        group=DESIGN,
        metavar="A",
        parse=float,
    )
    metric: str = option(
        "iqm",
        help="aggregate metric the configurations race on",
        check=check_metric_name,
        flag="--metric",
        group=DESIGN,
        metavar="NAME",
        parse=str,
    )
    spending: str = option(
        "pocock",
        help="error spending over the looks: pocock (early eliminations; the race's default) or obf",
        check=check_spending,
        flag="--spending",
        group=DESIGN,
        metavar="NAME",
        parse=str,
    )
    first_runs: int = option(
        FEW_FIRST_RUNS,
        help="the fewest runs each (configuration, task) cell must have at the first look: a first look with fewer "
        f"is refused (at most max_runs; at {FEW_FIRST_RUNS}, the least a look takes, a note warns: on bimodal "
        "scores a first look of 2 runs per cell dropped the true best configuration in 7% of small races)",
        check=at_least(2),
        flag="--first-runs",
        group=DESIGN,
        metavar="N",
        parse=int,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.first_runs > self.max_runs:
            raise OptionError(
                "first_runs",
                said(
                    kw(f"first_runs={self.first_runs}"),
                    " is more than ",
                    kw(f"max_runs={self.max_runs}"),
                    ": no cell may have more runs",
                ),
            )


#: The argument group of the options of one look (not frozen: each look says them anew).
LOOK = "this look"


def _yes_no(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionError(name, said(kw(f"{name}="), f" must be True or False, got {value!r}"))
    return value


@dataclass(frozen=True)
class RaceLookOptions:
    """What one look of a race may do, said at each look (not frozen with the design): each field is one option's
    whole declaration, its flag that of ``rl-reliable race``."""

    stop_on_missing: bool = option(
        False,
        help="stop a race at a look that lacks runs the look before listed (killed, failed or never launched); "
        "without it such a look is refused when it would stop a race (a look that does not stop goes on, with a "
        "note of the missing runs)",
        check=_yes_no,
        flag="--stop-on-missing",
        group=LOOK,
        parse=bool,
    )

    def __post_init__(self) -> None:
        check_all(self)


__all__ = ["FEW_FIRST_RUNS", "LOOK", "RaceLookOptions", "RaceOptions"]
