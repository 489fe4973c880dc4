"""Training budgets of logged runs: where each run stops, and which final scores come from a shorter budget.

Shared by the final scores (``prepare``) and the sample-efficiency curves (``evaluate``); the rule itself
(end, tolerance = the cell's largest logging interval) is ``stats.curves.run_ends``.
"""

from __future__ import annotations

from ..data.counts import agree, plural
from ..data.scores import ScoreTable
from ..stats import curves as cv
from ..wording import kw, said
from .options import OptionError


def histories(table: ScoreTable) -> list[cv.RunHistory]:
    """One history per run in sorted key order, steps ascending (duplicate steps are rejected by ScoreTable)."""
    frame = table.frame.sort_values("step", kind="stable")
    return [
        cv.RunHistory(key, g["step"].to_numpy(float), g["score"].to_numpy(float))
        for key, g in frame.groupby(["algorithm", "task", "run_id"], sort=True)
    ]


def run_list(runs: dict[cv.RunKey, float], limit: int = 8, of: dict[cv.Cell, float] | None = None) -> str:
    """``A / x run 3 (last step 2e+06 of 2e+08), ...`` for a warning (at most ``limit`` runs)."""
    items = [
        f"{a} / {t} run {r} (last step {s:g}" + (f" of {of[(a, t)]:g})" if of is not None else ")")
        for (a, t, r), s in list(runs.items())[:limit]
    ]
    return ", ".join(items) + (f", ... ({len(runs) - limit} more)" if len(runs) > limit else "")


def budget_warnings(runs: list[cv.RunHistory], budget: float | None) -> list[str]:
    """Runs whose final score comes from an earlier step than the others' (more than the cell's largest
    logging interval before its longest run, or before ``budget``); an error when a cell has no score by
    ``budget``."""
    if not runs:
        return []
    ends = cv.run_ends(runs, budget)
    short = ends.short()
    out = []
    if budget is not None:
        late = {h.key: float(h.steps[0]) for h in runs if float(h.steps[0]) > budget}
        cells_left = {h.key[:2] for h in runs if float(h.steps[0]) <= budget}
        missing = sorted({k[:2] for k in late} - cells_left)
        if missing:
            raise OptionError(
                "budget",
                said(kw("budget="), f" {budget:g} is before every logged step of ")
                + ", ".join(f"{a} / {t}" for a, t in missing[:8])
                + ": no final score there; give a later budget.",
            )
        if late:
            out.append(
                f"{plural(len(late), 'run')} {agree(len(late), 'have')} no score at or before the budget {budget:g} and are left out of the final "
                "scores: " + ", ".join(f"{a} / {t} run {r}" for a, t, r in sorted(late)[:8])
            )
        short = {k: s for k, s in short.items() if k not in late}
        if short:
            out.append(
                f"final scores are taken at the budget {budget:g}, but {plural(len(short), 'run')} {agree(len(short), 'stop')} more than one logging "
                f"interval before it and contribute their last score: {run_list(short)}"
            )
    elif short:
        out.append(
            said(
                f"{plural(len(short), 'run')} {agree(len(short), 'stop')} more than one logging interval before "
                "the longest run of their cell, so the final scores mix training budgets: "
                f"{run_list(short, of=ends.ends)}; pass ",
                kw("budget="),
                " to take every final score at a common step, or check that these runs did not crash.",
            ).text()
        )
    return out
