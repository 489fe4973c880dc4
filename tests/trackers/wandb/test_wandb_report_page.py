"""The optional W&B Report (wandb_report=True): built with wandb-workspaces and saved to the stand-in."""

from __future__ import annotations

import json

import pandas as pd
import pytest

wandb = pytest.importorskip("wandb")
pytest.importorskip("wandb_workspaces")

from rl_reliable_logger.trackers.wandb.charts import interval_charts  # noqa: E402
from rl_reliable_logger.trackers.wandb.report_page import build_report, methods_text, save_report_page  # noqa: E402
from tests.support.reports import small_report  # noqa: E402


def _report():
    report = small_report()
    report.scores = pd.DataFrame(
        {
            "algorithm": ["ucb", "gradient"],
            "task": ["t1", "t1"],
            "run_id": ["0", "0"],
            "seed": [0, 0],
            "score": [1.0, 0.5],
            "tracker_run_id": ["r1", "r2"],
            "run_link": ["https://w.example/ent/proj/runs/r1", None],
        }
    )
    return report


def test_report_holds_headline_methods_charts_html_and_links(wandb_standin):
    report = _report()
    charts = interval_charts(
        wandb, report, {"intervals": "ent/rl-reliable-intervals", "bands": "ent/rl-reliable-bands"}
    )
    page = build_report(
        report,
        entity="ent",
        project="proj",
        run_name="rl-reliable · 2 algorithms × 1 task · abcd1234",
        charts=charts,
        title="rl-reliable: test",
        sweep_url="https://w.example/ent/proj/sweeps/sw1",
    )
    url = save_report_page(page)
    assert "/ent/proj/reports/" in url
    (view,) = wandb_standin.views
    assert view["entityName"] == "ent" and view["projectName"] == "proj"
    spec = view["spec"]
    text = json.dumps(spec) if not isinstance(spec, str) else spec
    # every interval chart as a Vega2 panel on the packaged preset, reading the run's summary table
    for key in charts:
        assert f"{key}_table" in text, key
    assert "ent/rl-reliable-intervals" in text and "ent/rl-reliable-bands" in text
    assert "Media Browser" in text and '"report"' in text  # the wandb.Html report
    assert "IQM" in text or "iqm" in text  # headline table
    assert methods_text(report).split(";")[0] in text
    assert "https://w.example/ent/proj/runs/r1" in text and "`r2`" in text  # a link, or the id when no link
    assert "https://w.example/ent/proj/sweeps/sw1" in text
