"""What the W&B UI gets from a publish: interval charts (packaged presets or built-in fallbacks),
every table on the run, the HTML report, source-run links; read back from real offline runs and the stand-in."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("wandb")

from rl_reliable_logger.analysis.report import TABLES
from rl_reliable_logger.trackers.wandb import offline as off
from rl_reliable_logger.trackers.wandb.charts import PRESETS, create_presets, load_spec
from rl_reliable_logger.trackers.wandb.client import public_api
from rl_reliable_logger.trackers.wandb.sink import with_run_links
from tests.support.reports import small_report
from tests.support.wandb_env import wandb_env

PRESET_FIELDS = {"intervals": {"label", "point", "low", "high"}, "bands": {"x", "y", "low", "high", "series"}}


def _placeholders(spec: dict, kind: str) -> set[str]:
    return set(re.findall(r"\$\{" + kind + r":([A-Za-z_]+)\}", json.dumps(spec)))


@pytest.mark.parametrize("kind", sorted(PRESETS))
def test_packaged_specs_are_vega_lite_with_the_fields_the_sink_fills(kind):
    spec = load_spec(kind)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v5")
    assert spec["data"] == {"name": "wandb"}  # W&B binds the chart's table to this name
    assert _placeholders(spec, "field") == PRESET_FIELDS[kind]
    marks = {layer["mark"]["type"] for layer in spec["layer"]}
    assert marks == ({"rule", "point"} if kind == "intervals" else {"area", "line"})  # error bars / bands


def test_presets_are_created_on_the_server(wandb_standin):
    names, notes = create_presets(public_api(), "ent", timeout=60)
    assert names == {k: f"ent/{name}" for k, (name, _) in PRESETS.items()} and notes == []
    sent = wandb_standin.custom_charts["ent/rl-reliable-intervals"]
    assert sent["chartType"] == "vega2" and sent["access"] == "PRIVATE"
    assert json.loads(sent["spec"]) == load_spec("intervals")


def test_a_preset_the_server_refuses_falls_back_with_a_note(wandb_standin):
    wandb_standin.fail("CreateCustomChart", 403, times=1)
    names, notes = create_presets(public_api(), "ent", timeout=60)
    assert names["intervals"] is None and names["bands"] == "ent/rl-reliable-bands"
    assert len(notes) == 1 and "wandb/lineseries/v0" in notes[0]


_SCRIPT = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
import pandas as pd
import wandb
from tests.support.reports import small_report
from rl_reliable_logger.trackers.wandb.charts import interval_charts
from rl_reliable_logger.trackers.wandb.sink import publish_wandb
root = sys.argv[1]
report = small_report()
report.curves = pd.DataFrame({"algorithm": ["ucb", "ucb", "gradient", "gradient"], "metric": ["iqm"] * 4,
    "step": [0, 100, 0, 100], "point": [0.1, 0.8, 0.1, 0.5], "low": [0.0, 0.7, 0.0, 0.4], "high": [0.2, 0.9, 0.2, 0.6]})
published = publish_wandb(report, project="bandits", group="g", mode="offline", dir=root)
run = wandb.init(project="bandits", mode="offline", dir=root)
run.log(interval_charts(wandb, report, {"intervals": "ent/rl-reliable-intervals", "bands": "ent/rl-reliable-bands"}))
run.finish()
print(json.dumps([str(published), str(run.settings.sync_dir)]))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("wandb-charts")
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(root)], env=wandb_env(root), capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    published, preset_run = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "published": Path(published),
        "rec": off.read_offline_run(next(Path(published).glob("run-*.wandb"))),
        "preset": Path(preset_run),
    }


def _visualize(run_dir: Path) -> dict[str, dict]:
    """``_wandb.visualize`` of an offline run: the chart panels (the offline reader leaves ``_wandb`` out)."""
    from wandb.proto import wandb_internal_pb2 as pb

    panels: dict[str, dict] = {}
    for payload in off._iter_chunks_payloads(next(run_dir.glob("run-*.wandb")).read_bytes()):
        rec = pb.Record()
        rec.ParseFromString(payload)
        kind = rec.WhichOneof("record_type")
        items = rec.run.config.update if kind == "run" else rec.config.update if kind == "config" else []
        for item in items:
            key = list(item.nested_key) or [item.key]
            value = json.loads(item.value_json)
            if key[0] == "_wandb":
                if len(key) == 1:
                    value = value.get("visualize", {})
                elif key[1] == "visualize":
                    value = {".".join(key[2:]): value} if len(key) > 2 else value
                else:
                    continue
                panels.update(value)
    return panels


def _panel(run_dir: Path, key: str) -> dict:
    panels = _visualize(run_dir)
    assert key in panels, f"no chart {key}: {sorted(panels)}"
    return panels[key]["panel_config"]


def test_every_table_and_the_html_report_are_on_the_run(runs):
    summary = runs["rec"].summary
    for name in [*TABLES]:
        assert summary.get(f"tables/{name}._type") == "table-file", name
    assert summary["report._type"] == "html-file"
    html = runs["published"] / "files" / summary["report.path"]
    text = html.read_text(encoding="utf-8")
    assert "normalize.css" not in text and "<html" in text.lower()  # inject=False: the report as written


def test_offline_charts_fall_back_to_built_in_presets_with_low_point_high(runs):
    rec, run_dir = runs["rec"], runs["published"]
    assert _panel(run_dir, "charts/iqm")["panelDefId"] == "wandb/lineseries/v0"
    table = json.loads((runs["published"] / "files" / rec.summary["charts/iqm_table.path"]).read_text(encoding="utf-8"))
    assert table["columns"] == ["step", "lineKey", "lineVal"]
    assert [r for r in table["data"] if r[0] == 0] == [[0, "low", 0.8], [0, "point", 0.9], [0, "high", 1.0]]
    assert _panel(run_dir, "charts/curve_iqm")["panelDefId"] == "wandb/line/v0"
    assert _panel(run_dir, "charts/probability_of_improvement")["panelDefId"] == "wandb/lineseries/v0"


def test_with_presets_the_charts_use_the_packaged_specs_and_their_fields(runs):
    run_dir = runs["preset"]
    iqm = _panel(run_dir, "charts/iqm")
    assert iqm["panelDefId"] == "ent/rl-reliable-intervals"
    assert set(iqm["fieldSettings"]) == PRESET_FIELDS["intervals"] == _placeholders(load_spec("intervals"), "field")
    assert set(iqm["stringSettings"]) == _placeholders(load_spec("intervals"), "string")
    prof = _panel(run_dir, "charts/profile_runs")
    assert prof["panelDefId"] == "ent/rl-reliable-bands"
    assert set(prof["fieldSettings"]) == PRESET_FIELDS["bands"]
    assert set(prof["stringSettings"]) == _placeholders(load_spec("bands"), "string")
    assert _panel(run_dir, "charts/curve_iqm")["panelDefId"] == "ent/rl-reliable-bands"


def test_scores_link_to_each_source_run():
    report = small_report()
    report.scores = pd.DataFrame(
        {
            "algorithm": ["a", "b"],
            "task": ["t", "t"],
            "run_id": ["0", "0"],
            "seed": [0, 0],
            "score": [1.0, 2.0],
            "tracker_run_id": ["r1", "r2"],
        }
    )
    report.provenance["source"] = {"tracker": "wandb", "kind": "wandb", "location": "team/proj"}
    linked = with_run_links(report.scores, report, "https://wandb.example/team/other/runs/abc")
    assert linked["run_link"].tolist() == [
        "https://wandb.example/team/proj/runs/r1",
        "https://wandb.example/team/proj/runs/r2",
    ]
    assert "run_link" not in with_run_links(report.scores, report, None)  # offline: no URL to build


def test_wandb_report_without_the_extra_is_an_error_before_anything_is_written(tmp_path, monkeypatch):
    from rl_reliable_logger.errors import TrackerError
    from rl_reliable_logger.trackers.wandb.sink import publish_wandb

    for key, value in wandb_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setitem(sys.modules, "wandb_workspaces.reports.v2", None)  # as if not installed
    with pytest.raises(TrackerError, match=r"rl_reliable_logger\[wandb-report\]"):
        publish_wandb(small_report(), project="p", mode="offline", dir=tmp_path, wandb_report=True)
    assert not (tmp_path / "wandb").exists()
