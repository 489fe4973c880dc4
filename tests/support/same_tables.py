"""Two evaluations of the same scores read through different sources must give the same tables."""

from __future__ import annotations

from typing import Any

import pandas as pd

from rl_reliable_logger import ScoreTable, evaluate

#: Small replicate counts: the comparison is exact at any count (both evaluations draw the same seeded streams).
OPTIONS: dict[str, Any] = {"reps": 200, "profile_reps": 100, "improvement_reps": 100, "seed": 0}
#: The per-run table names its runs by each source's own ids, so it is the one table not compared.
_SKIPPED = ("scores",)


def tables(table: ScoreTable, **options: Any) -> dict[str, pd.DataFrame]:
    """Every table of ``evaluate(table)`` (rows sorted), without the per-run one."""
    curves = {"curve_reps": 100} if options.get("curves") else {}  # the curve options act only with curves=True
    report = evaluate(table, **{**OPTIONS, **curves, **options})
    out = {}
    for name, frame in report.tables():
        if name in _SKIPPED:
            continue
        keys = [c for c in frame.columns if frame[c].dtype == object][:3] or list(frame.columns[:1])
        out[name] = frame.sort_values(keys).reset_index(drop=True) if len(frame) else frame
    return out


def assert_same_tables(got: ScoreTable, want: ScoreTable, **options: Any) -> dict[str, pd.DataFrame]:
    """``evaluate`` gives the same tables for both (the equivalence matrix's tolerance, 1e-12: sums over rows in
    another order may differ in the last bit); returns them."""
    a, b = tables(got, **options), tables(want, **options)
    assert sorted(a) == sorted(b)
    for name in b:
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=False, rtol=1e-12, atol=1e-12, obj=name)
    return b
