"""A Ray Tune Searcher that suggests exactly the runs it is given, once each, in order (the ``[raytune]`` extra).

A race's look lists the runs the next look needs (configuration, task, seed); Ray Tune runs them as trials when
its search algorithm suggests exactly those configurations and then says it is finished:

>>> searcher = ListedRuns([{"lr": 0.1, "task": "a", "seed": 2}, {"lr": 0.3, "task": "a", "seed": 2}])  # doctest: +SKIP
>>> tune.Tuner(trainable, tune_config=tune.TuneConfig(search_alg=searcher, num_samples=2)).fit()  # doctest: +SKIP

``num_samples`` must be at least the number of runs (:func:`tune_config` sets it); the searcher returns
``Searcher.FINISHED`` once every run was suggested, so Tune starts no other trial. It keeps no checkpoint (Tune says
it skips saving it): a look interrupted midway is read as far as it ran, and the race's next look lists the runs
its cells still need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ray.tune.search import Searcher


class ListedRuns(Searcher):
    """Suggest each of ``runs`` (one config dict per trial) exactly once, then finish."""

    def __init__(self, runs: Sequence[Mapping[str, Any]], metric: str | None = None, mode: str | None = None):
        super().__init__(metric=metric, mode=mode)
        self._left = [dict(r) for r in runs]
        self.suggested: dict[str, dict[str, Any]] = {}

    def set_search_properties(self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any) -> bool:
        """The configs are fixed: Tune's metric, mode and param space change nothing (the param space's fixed
        values are merged by Tune under the suggested ones)."""
        return True

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        if not self._left:
            return Searcher.FINISHED  # type: ignore[return-value]  # Tune's documented end-of-search value
        config = self._left.pop(0)
        self.suggested[trial_id] = config
        return dict(config)

    def on_trial_complete(self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False) -> None:
        """Nothing to learn: the next runs come from the next look of the race."""


def tune_config(runs: Sequence[Mapping[str, Any]], **keywords: Any) -> Any:
    """A ``TuneConfig`` that runs exactly ``runs``: a :class:`ListedRuns` searcher and that many samples."""
    from ray import tune

    return tune.TuneConfig(search_alg=ListedRuns(runs), num_samples=max(1, len(runs)), **keywords)
