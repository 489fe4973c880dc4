"""The worked example of docs/architecture.md ("Adding a tracker") runs: its plugin, registered, drives the
command the CLI builds from the registry, and gives the tables of the same scores read from a CSV."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


@pytest.fixture
def example_plugin():
    text = DOC.read_text(encoding="utf-8")
    code = re.search(r"<!-- tracker-example -->\n```python\n(.*?)```", text, re.S)
    assert code, "docs/architecture.md lost its tracker example"
    namespace: dict[str, object] = {"__name__": "tracker_example"}
    exec(compile(code.group(1), str(DOC), "exec"), namespace)
    yield registry.get("jsondir")
    registry.unregister("jsondir")


def _scores() -> pd.DataFrame:
    rows = []
    for a, shift in (("PPO", 0.0), ("SAC", 0.3)):
        for t, scale in (("Hopper", 1.0), ("Walker", 2.0)):
            for seed in range(4):
                rows.append({"algorithm": a, "task": t, "seed": seed, "score": scale * (shift + 0.1 * seed)})
    return pd.DataFrame(rows)


def test_a_registered_plugin_gets_a_command_with_the_csv_tables(example_plugin, tmp_path, capsys):
    assert "jsondir" in registry.names()
    scores = _scores()
    runs = tmp_path / "runs"
    runs.mkdir()
    for i, row in scores.iterrows():
        run = {"config": {k: row[k] for k in ("algorithm", "task")} | {"seed": int(row["seed"])}}
        (runs / f"run{i:02d}.json").write_text(json.dumps(run | {"summary": {"score": float(row["score"])}}))
    csv = tmp_path / "scores.csv"
    scores.to_csv(csv, index=False)
    flags = ["--reps", "300", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "1", "--quiet"]

    assert main(["jsondir", str(runs), *flags, "--out", str(tmp_path / "a"), "--no-figures"]) == 0
    assert main(["evaluate", str(csv), *flags, "--out", str(tmp_path / "b"), "--no-figures"]) == 0
    for name in ("aggregates.csv", "per_task.csv", "differences.csv", "improvement.csv", "profiles.csv", "ranks.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a" / name), pd.read_csv(tmp_path / "b" / name))

    assert main(["jsondir", str(runs), "--algorithm-key", "config.nope", *flags]) == 2
    err = capsys.readouterr().err
    assert "--algorithm-key" in err and "config.nope" in err  # the shared field flags, worded as flags


def test_the_registry_names_each_tracker_once():
    names = registry.names()
    assert len(names) == len(set(names))
    with pytest.raises(KeyError, match="known"):
        registry.get("no-such-tracker")


def test_a_plugin_of_the_earlier_shape_still_works_through_its_roles(tmp_path):
    """A plugin written before the roles (hooks and words on the plugin itself) is wrapped into roles and wiring:
    its command reads its runs, its secrets are redacted, and a DeprecationWarning names the new shape."""
    from rl_reliable_logger.redaction import redact
    from rl_reliable_logger.trackers.base.plugin import TrackerPlugin

    class FolderSource:
        tracker = "oldshape"

        def __init__(self, folder):
            self.folder = folder

    class OldShape(TrackerPlugin):
        name = "oldshape"
        label = "Old shape"
        publishes = False
        summary = "an old plugin"
        secret_variables = ("OLDSHAPE_TOKEN",)

        def add_source_flags(self, group, *, curves=True):
            group.add_argument("folder")

        def open_source(self, args, retry):
            return FolderSource(args.folder)

        def describe_source(self, source):
            return f"old folder {source.get('location')}"

    with pytest.warns(DeprecationWarning, match="earlier shape"):
        plugin = OldShape()
    assert plugin.cli.summary == "an old plugin" and not plugin.cli.shared_fields and not plugin.publishes
    assert plugin.sink is None and plugin.final_score is None and plugin.pending is None
    assert plugin.source.open(argparse.Namespace(folder="runs/"), None).folder == "runs/"
    assert plugin.describe({"location": "x"}) == "old folder x"
    registry.register(plugin)
    try:
        import os

        os.environ["OLDSHAPE_TOKEN"] = "s3cret-old-token"
        assert "s3cret-old-token" not in redact("token s3cret-old-token")
        with pytest.raises(SystemExit):
            main(["oldshape", "--help"])
    finally:
        os.environ.pop("OLDSHAPE_TOKEN", None)
        registry.unregister("oldshape")


def test_a_plugin_takes_its_roles_by_keyword_and_refuses_a_misspelt_one():
    """``TrackerPlugin(name, label, **roles)``: a role given is the plugin's, one left out is the class's, and a
    keyword that is no role is a TypeError (as a misspelt parameter was), not a role silently dropped."""
    from rl_reliable_logger.trackers.base.plugin import PluginRoles, Redaction, SourceRole, TrackerPlugin

    source = SourceRole()
    plugin = TrackerPlugin("kw", "Keywords", source=source, redaction=None)
    assert plugin.source is source and plugin.redaction is TrackerPlugin.redaction and plugin.sink is None
    assert set(PluginRoles.__annotations__) == {
        "source",
        "cli",
        "sink",
        "final_score",
        "pending",
        "launch",
        "redaction",
    }
    assert isinstance(plugin.redaction, Redaction)
    with pytest.raises(TypeError, match="'sorce'"):
        TrackerPlugin("kw", "Keywords", sorce=source)  # type: ignore[call-arg]
