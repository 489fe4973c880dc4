"""Every dropped run said on the console: one line per kind of drop, and the cells that fell below 2 runs.

``--drop-invalid`` must never make runs disappear silently: each kind of problem (missing field,
non-finite final score, duplicate, short of the budget, task missing for an algorithm) gets one
line saying how many runs it cost and which algorithms and tasks lost them; cells that had two or
more runs before the drops and fewer after are named. The full list, with run ids, stays in
provenance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...data.counts import plural

_DETAIL = re.compile(r"\s+(\(.*\)|'.*'|\".*\"|-?inf\b|nan\b|-?\d+(\.\d+)?(e[+-]?\d+)?\b)|:.*")


def drop_kind(reason: str) -> str:
    """The kind of a drop reason, without the run-specific details (values, names, steps)."""
    text = str(reason).split(" in column")[0].split(" (also")[0]
    text = _DETAIL.sub("", text).strip()
    return re.sub(r"\s+", " ", text) or str(reason)


def _counts(values: Iterable[Any]) -> str:
    seen: dict[str, int] = {}
    for v in values:
        seen[str(v)] = seen.get(str(v), 0) + 1
    items = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k} ({n})" for k, n in items[:6])
    return text + (", ..." if len(items) > 6 else "")


def drop_summary(
    dropped: Iterable[Mapping[str, Any]],
    *,
    n_runs: int,
    cells_before: Mapping[tuple[str, str], int],
    cells_after: Mapping[tuple[str, str], int],
) -> list[str]:
    """One line per kind of drop, plus one for cells that fell below 2 runs (empty when nothing was dropped).

    Example:
        >>> drop_summary([{"run_id": "r1", "algorithm": "A", "task": "x", "reason": "non-finite score nan"}],
        ...              n_runs=4, cells_before={("A", "x"): 2}, cells_after={("A", "x"): 1})[0]
        'dropped 1 of 4 runs: non-finite score — algorithms A (1); tasks x (1)'
    """
    by_kind: dict[str, dict[str, Mapping[str, Any]]] = {}
    for d in dropped:
        runs = by_kind.setdefault(drop_kind(str(d.get("reason", ""))), {})
        runs.setdefault(str(d.get("run_id")), d)
    lines = []
    for kind, runs in by_kind.items():
        rows = list(runs.values())
        lines.append(
            f"dropped {len(rows)} of {plural(n_runs, 'run')}: {kind} — algorithms {_counts(r.get('algorithm') for r in rows)}; "
            f"tasks {_counts(r.get('task') for r in rows)}"
        )
    shrunk = [
        f"{a} / {t} ({before} → {cells_after.get((a, t), 0)})"
        for (a, t), before in cells_before.items()
        if before >= 2 and cells_after.get((a, t), 0) < 2
    ]
    if shrunk:
        lines.append(
            f"{plural(len(shrunk), 'cell')} fell below 2 runs after the drops: {', '.join(shrunk[:8])}"
            + (", ..." if len(shrunk) > 8 else "")
        )
    return lines
