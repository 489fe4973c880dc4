"""A gate's design options, declared as the analysis options are (:mod:`.declared`): no numpy, so the command line
can read them.

``rl-reliable gate`` adds the flags of :class:`GateDesign`'s fields, and :mod:`.gate` records them with the stream's
design at its first candidate: a stream asked for with another value later is refused in one sentence naming the
option. Each is checked by its declaration (one sentence naming the keyword), like every option; the checks shared
with a watch's design are the watch's own.

Example:
    >>> GateDesign(min_effect=0.5).alpha, GateDesign(min_effect=0.5).max_seeds, GateDesign(min_effect=0.5).metric
    (0.05, 10, 'mean')
    >>> GateDesign(min_effect=-1)
    Traceback (most recent call last):
    ...
    rl_reliable_logger.analysis.declared.OptionError: `min_effect=` must be 0 or a positive number in the metric's units (the smallest improvement worth keeping), got -1
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..wording import kw, said
from . import declared as d
from .declared import OptionError, option
from .watch_options import at_least, check_alpha, check_metric_name

#: The argument group of the design flags.
DESIGN = "the stream's design (frozen at its first candidate)"


def _min_effect(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value >= 0):
        raise OptionError(
            name,
            said(
                kw(f"{name}="),
                " must be 0 or a positive number in the metric's units (the smallest improvement worth keeping), "
                f"got {value!r}",
            ),
        )
    return float(value)


@dataclass(frozen=True)
class GateDesign:
    """The design of a gate's stream, frozen at its first candidate: each field is one option's whole declaration,
    its flag that of ``rl-reliable gate``."""

    min_effect: float = option(
        help="the smallest improvement worth keeping, in the metric's units: a candidate better by less counts as "
        "a false keep",
        check=_min_effect,
        flag="--min-effect",
        group=DESIGN,
        metavar="E",
        parse=float,
    )
    alpha: float = option(
        0.05,
        help="false-discovery rate over every candidate of the stream: the expected share of keeps that are not "
        "better by min_effect",
        check=check_alpha,
        flag="--alpha",
        group=DESIGN,
        metavar="A",
        parse=float,
    )
    max_seeds: int = option(
        10,
        help="paired seeds per candidate at most (each seed: one run of the candidate and one of the incumbent)",
        check=at_least(3),
        flag="--max-seeds",
        group=DESIGN,
        metavar="N",
        parse=int,
    )
    metric: str = option(
        "mean",
        help="how one seed's runs on the tasks make its score (a registered metric: mean, median, iqm, ...)",
        check=check_metric_name,
        flag="--metric",
        group=DESIGN,
        metavar="NAME",
        parse=str,
    )

    def __post_init__(self) -> None:
        d.check_all(self)


__all__ = ["DESIGN", "GateDesign"]
