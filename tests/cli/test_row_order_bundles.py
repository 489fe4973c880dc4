"""Issue 43: the tables follow a documented order (``--only-algorithms``' order, else sorted names), not the order
the rows come in: the main job on its CSV and on the same rows shuffled writes the same bundle, byte for byte."""

from __future__ import annotations

import datetime as _dt
import types
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger.analysis import evaluation
from tests.support.cli import run_cli

MAIN_CSV = Path(__file__).resolve().parents[2] / "examples" / "atari100k_scores.csv"
FAST = ("--reps", "200", "--profile-reps", "30", "--improvement-reps", "30", "--figure-formats", "svg")


class _FixedClock(_dt.datetime):
    @classmethod
    def now(cls, tz=None):  # the run-time field ``created``: the same instant for both runs
        return _dt.datetime(2026, 1, 1, tzinfo=tz)


def _bundle(tmp_path: Path, name: str, frame: pd.DataFrame, capsys, monkeypatch, *extra: str) -> dict[str, bytes]:
    folder = tmp_path / name
    folder.mkdir()
    frame.to_csv(folder / "scores.csv", index=False)
    monkeypatch.chdir(folder)  # the same source path ``scores.csv`` in provenance for both
    code, _, err = run_cli(capsys, "evaluate", "scores.csv", "--normalize", "atari100k", "--seed", "0", *FAST,
                           *extra, "--out", "out")  # fmt: skip
    assert code == 0, err
    return {
        str(p.relative_to(folder / "out")): p.read_bytes() for p in sorted((folder / "out").rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("extra", [(), ("--only-algorithms", "SPR,DER,DrQ")])
def test_a_shuffled_main_job_writes_the_same_bundle(tmp_path, capsys, monkeypatch, extra):
    monkeypatch.setattr(evaluation, "_dt", types.SimpleNamespace(datetime=_FixedClock, timezone=_dt.timezone))
    rows = pd.read_csv(MAIN_CSV)
    original = _bundle(tmp_path, "original", rows, capsys, monkeypatch, *extra)
    shuffled = _bundle(tmp_path, "shuffled", rows.sample(frac=1.0, random_state=5), capsys, monkeypatch, *extra)
    assert sorted(original) == sorted(shuffled) and "differences.csv" in original
    assert [name for name in original if original[name] != shuffled[name]] == []
    differences = pd.read_csv(tmp_path / "original" / "out" / "differences.csv")
    aggregates = pd.read_csv(tmp_path / "original" / "out" / "aggregates.csv")
    order = extra[1].split(",") if extra else sorted(rows["algorithm"].unique())
    assert list(dict.fromkeys(aggregates["algorithm"])) == order  # the documented rule
    assert list(dict.fromkeys(differences["algorithm_x"])) == order[:-1]
