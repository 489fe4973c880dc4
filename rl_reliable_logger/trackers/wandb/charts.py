"""Interval charts for the W&B UI: packaged Vega-Lite presets, with built-in fallbacks.

W&B draws a custom chart from a *preset* stored on the server. Two presets ship with the package
(``specs/intervals.vl.json``: points with error bars; ``specs/bands.vl.json``: lines with shaded
bands). Online they are created as ``<entity>/rl-reliable-intervals`` and
``<entity>/rl-reliable-bands`` (``Api().create_custom_chart``, best effort). Where that is not
possible (offline runs, an older server, no permission) the built-in ``wandb/lineseries/v0`` and
``wandb/line/v0`` presets show low, point and high as three lines, so the intervals are never
missing. The plain tables are always logged as well.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from functools import cache, partial
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report

#: kind -> (preset name on the server, display name)
PRESETS = {
    "intervals": ("rl-reliable-intervals", "rl-reliable intervals (point and CI)"),
    "bands": ("rl-reliable-bands", "rl-reliable curves with CI bands"),
}
LINESERIES = "wandb/lineseries/v0"
LINE = "wandb/line/v0"
#: How long to wait for the server to create a preset (wandb waits forever on its own).
CREATE_TIMEOUT = 60.0


@cache
def load_spec(kind: str) -> dict[str, Any]:
    """The packaged Vega-Lite spec of ``kind`` (``"intervals"`` or ``"bands"``)."""
    text = resources.files(__package__).joinpath(f"specs/{kind}.vl.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def _call_with_timeout(fn: Any, timeout: float) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # handed to the caller below
            box["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout:.0f} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def create_presets(
    api: Any, entity: str, *, timeout: float = CREATE_TIMEOUT
) -> tuple[dict[str, str | None], list[str]]:
    """Create the packaged presets under ``entity``; return ``{kind: "<entity>/<name>" or None}`` and notes.

    A preset that already exists counts as created. Any other failure gives None for that kind (the
    charts fall back to built-in presets) and a note saying why.
    """
    names: dict[str, str | None] = {}
    notes: list[str] = []
    for kind, (name, display) in PRESETS.items():
        try:
            create = partial(
                api.create_custom_chart,
                entity=entity,
                name=name,
                display_name=display,
                spec_type="vega2",
                access="private",
                spec=load_spec(kind),
            )
            _call_with_timeout(create, timeout)
            names[kind] = f"{entity}/{name}"
        except Exception as err:  # best effort: the built-in presets still show the intervals
            if "exist" in str(err).lower():
                names[kind] = f"{entity}/{name}"
                continue
            names[kind] = None
            notes.append(
                f"W&B chart preset {entity}/{name} could not be created ({type(err).__name__}: {str(err)[:200]}); "
                f"interval charts use the built-in {LINESERIES if kind == 'intervals' else LINE} (low, point, high as lines)"
            )
    return names, notes


def _intervals(wandb: Any, frame: Any, label: str, title: str, xname: str, preset: str | None) -> Any:
    """Point + error bar per row (``preset``), or three line series low/point/high over the row number."""
    sub = frame[[label, "point", "low", "high"]].reset_index(drop=True)
    sub = sub.rename(columns={label: "label"}).astype({"label": str})
    if preset:
        return wandb.plot_table(
            preset,
            wandb.Table(dataframe=sub),
            {"label": "label", "point": "point", "low": "low", "high": "high"},
            {"title": title, "xname": xname},
        )
    rows = [
        [i, part, float(getattr(r, part))] for i, r in enumerate(sub.itertuples()) for part in ("low", "point", "high")
    ]
    legend = ", ".join(f"{i} = {v}" for i, v in enumerate(sub["label"]))
    return wandb.plot_table(
        LINESERIES,
        wandb.Table(columns=["step", "lineKey", "lineVal"], data=rows),
        {"step": "step", "lineKey": "lineKey", "lineVal": "lineVal"},
        {"title": f"{title} — x: {legend}"[:500], "xname": "row"},
    )


def _bands(wandb: Any, frame: Any, x: str, y: str, title: str, xname: str, preset: str | None) -> Any:
    """One line per algorithm with a band (``preset``), or low/point/high lines per algorithm."""
    sub = frame[["algorithm", x, y, "low", "high"]].reset_index(drop=True)
    sub = sub.rename(columns={"algorithm": "series", x: "x", y: "y"}).astype({"series": str})
    if preset:
        return wandb.plot_table(
            preset,
            wandb.Table(dataframe=sub),
            {"x": "x", "y": "y", "low": "low", "high": "high", "series": "series"},
            {"title": title, "xname": xname, "yname": y},
        )
    rows = [
        [float(r.x), float(getattr(r, part)), f"{r.series} {'' if part == 'y' else part}".strip()]
        for r in sub.itertuples()
        for part in ("low", "y", "high")
    ]
    return wandb.plot_table(
        LINE,
        wandb.Table(columns=["x", "y", "series"], data=rows),
        {"x": "x", "y": "y", "stroke": "series"},
        {"title": title},
    )


def _key(metric: Any, i: int) -> str:
    text = str(metric)
    ok = text and len(text) <= 40 and all(c.isalnum() and c.isascii() or c == "_" for c in text)
    return text.lower() if ok else f"metric_{i}"


def interval_charts(wandb: Any, report: Report, presets: Mapping[str, str | None]) -> dict[str, Any]:
    """``charts/...`` for every interval result: aggregates, improvement, profiles, curves."""
    charts: dict[str, Any] = {}
    agg = report.aggregates
    for i, metric in enumerate(dict.fromkeys(agg["metric"])):
        sub = agg[agg["metric"] == metric]
        if not sub.empty:
            charts[f"charts/{_key(metric, i)}"] = _intervals(
                wandb, sub, "algorithm", f"{metric} (point estimate and 95% CI)", str(metric), presets.get("intervals")
            )
    imp = report.improvement
    if not imp.empty:
        pairs = imp.assign(pair=imp["algorithm_x"].astype(str) + " > " + imp["algorithm_y"].astype(str))
        charts["charts/probability_of_improvement"] = _intervals(
            wandb, pairs, "pair", "P(X > Y) with 95% CI", "probability of improvement", presets.get("intervals")
        )
    prof = report.profiles
    if not prof.empty:
        for kind in [k for k in dict.fromkeys(prof["kind"]) if k in ("runs", "tasks")]:
            charts[f"charts/profile_{kind}"] = _bands(
                wandb,
                prof[prof["kind"] == kind],
                "tau",
                "fraction",
                f"performance profile ({kind}) with 95% CI",
                "normalized score τ",
                presets.get("bands"),
            )
    curves = report.curves
    if not curves.empty:
        for i, metric in enumerate(dict.fromkeys(curves["metric"])):
            charts[f"charts/curve_{_key(metric, i)}"] = _bands(
                wandb,
                curves[curves["metric"] == metric],
                "step",
                "point",
                f"{metric} over steps with 95% CI",
                "step",
                presets.get("bands"),
            )
    return charts
