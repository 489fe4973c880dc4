"""Which analysis options a watch freezes, and which it decides itself: no numpy, so the command line can read them.

``rl-reliable watch`` adds exactly the flags of :data:`FROZEN_OPTIONS` (from their declarations in
:class:`~rl_reliable_logger.analysis.options.AnalysisOptions`), and :mod:`.watch` records them with the design.
"""

from __future__ import annotations

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
