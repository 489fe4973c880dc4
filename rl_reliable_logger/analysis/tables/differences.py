"""The ``differences`` table: each compared pair's difference of each aggregate metric (the pairs ``pairs=`` chooses:
every pair, or each algorithm against the leader), on the aggregates' replicates."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats import checks as ck
from ...stats import intervals
from ...stats.intervals import ResamplingRequest
from ...stats.intervals.bounds import expanded_level
from .. import caveats
from ..report import SPECS
from .aggregates import Aggregates, fallen_back
from .base import ComparedPairs, Part, TableInputs, for_runs, record

#: The columns, as the Report declares them.
COLUMNS = list(SPECS["differences"].columns)


def build(inputs: TableInputs, request: ResamplingRequest, aggregates: Aggregates, chosen: ComparedPairs) -> Part:
    """The differences table, its record and its fallback notes. Each statistic gets the request's rule (under
    ``bootstrap-t``: studentized for the mean, the IQM and the optimality gap from both algorithms' standard errors,
    the normal interval for the median at the pair's expanded level, expanded for the others; where the median gets
    an interval of its own, ``median_interval``, the MOVER over it); the replicates are the aggregates'. The pairs are
    ``chosen`` (:func:`.base.compared_pairs`), recorded as ``provenance["pairs"]``."""
    request = for_runs(request, inputs.cells)
    table, notes, fallen = differences_table(inputs, request, aggregates, chosen.pairs)
    provenance = {"interval_fallbacks": notes, "pairs": chosen.record, "fallen_back": fallen}
    return Part({"differences": table}, record(request, inputs, "differences"), provenance, notes)


def differences_table(
    inputs: TableInputs, request: ResamplingRequest, aggregates: Aggregates, by_pair: list[tuple[str, str]]
) -> tuple[pd.DataFrame, list[str], list[dict[str, object]]]:
    """The table of ``by_pair``'s differences, one sentence per interval that fell back from its method and their
    records (:func:`.aggregates.fallen_back`)."""
    names = [m.name for m in inputs.metrics]
    kinds = list(inputs.kinds().values())
    if not by_pair or not names:
        return pd.DataFrame([], columns=COLUMNS), [], []
    found, points = aggregates.by_algorithm, aggregates.points()
    pair_points = [np.array([points[(x, m)] - points[(y, m)] for m in names]) for x, y in by_pair]
    dists = {alg: f.replicates for alg, f in found.items()}
    n = min(d.shape[0] for d in dists.values())  # the common replicates (always all of them in evaluate())

    def fill(p: int, out: np.ndarray) -> None:  # one subtraction per pair into the stack: no other copy
        x, y = by_pair[p]
        np.subtract(dists[x][:n], dists[y][:n], out=out)

    samples = [_sample(inputs, found, x, y) for x, y in by_pair]
    labels = [f"the {name} difference" for name in names]
    shape = (len(by_pair), n, len(names))
    results = intervals.estimate_stacked(
        request, "differences", shape, fill, pair_points, samples, kinds=kinds, labels=labels
    )
    point = np.concatenate(pair_points)
    features = {a: caveats.algorithm_features(c, caveats.gamma_of(inputs.metrics)) for a, c in inputs.cells.items()}
    low = np.concatenate([r.low for r in results])
    high = np.concatenate([r.high for r in results])
    frame = pd.DataFrame(
        {
            "algorithm_x": [x for x, _ in by_pair for _ in names],
            "algorithm_y": [y for _, y in by_pair for _ in names],
            "metric": list(names) * len(by_pair),
            "point": ck.clip_noise(point, low, high),
            "low": low,
            "high": high,
            "caveat": [
                caveats.difference_caveat(
                    k, features[x], features[y], request.statistic_method("differences", k).bootstrap
                )
                for x, y in by_pair
                for k in kinds
            ],
        },
        columns=COLUMNS,
    )
    fallen = [
        fallen_back(text, names[f.statistic], f.share, pair=pair)
        for pair, r in zip(by_pair, results)
        for text, f in zip(r.notes, r.fallbacks)
    ]
    # one pair after another, as each pair's notes came
    return frame, [note for r in results for note in r.notes], fallen


def _sample(inputs: TableInputs, found: dict, x: str, y: str) -> intervals.Sample:
    """What a pair's difference is drawn from: both algorithms' cells (the expanded level pools them) and, where
    statistics are studentized, both algorithms' standard errors of each (by kind)."""
    cells = [inputs.cells[x], inputs.cells[y]]
    se_x, se_y = found[x].standard_errors, found[y].standard_errors
    return intervals.Sample(
        level=lambda ci: np.asarray(expanded_level(cells, ci)),
        standard_errors=None
        if se_x is None or se_y is None
        else (lambda kind: intervals.studentized_difference(se_x[kind], se_y[kind])),
        runs=(cells[0], cells[1]),  # the median's MOVER over the order-statistic intervals reads them
        name=f"{x} - {y}",
    )


def sentence(record: dict) -> str | None:
    """What methods.md says about the compared pairs (``provenance["pairs"]``): nothing when every pair is compared,
    else which algorithm led and how many of all the pairs the tables hold.

    Example:
        >>> sentence({"used": "leader", "leader": "PPO", "metric": "iqm", "compared": 56, "all": 1596,
        ...           "tables": ["differences", "improvement"]})
        'The differences and improvement tables compare the leader, PPO (the best iqm estimate), with each other algorithm: 56 of the 1,596 pairs (every pair on request).'
    """
    if record.get("used") != "leader" or record.get("leader") is None:
        return None
    several = len(record["tables"]) > 1
    tables = " and ".join(record["tables"]) + (" tables" if several else " table")
    verb = "compare" if several else "compares"
    return (
        f"The {tables} {verb} the leader, {record['leader']} (the best {record['metric']} estimate), with each other "
        f"algorithm: {record['compared']:,} of the {record['all']:,} pairs (every pair on request)."
    )
