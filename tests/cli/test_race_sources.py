"""``rl-reliable race <source>`` reads every registered source (and a file) with that source's own flags: the same
runs stored by each tracker give the same race, and the hyperparameter is a launch field named without its kind."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rl_reliable_logger.trackers import registry
from tests.contract.source_corpus import Run, write

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SOURCES = [*registry.names(), "file"]
RACE = ["--looks", "3", "--max-runs", "6", "--hyperparameter-keys", "lr", "--delta", "0.3", "--reps", "300"]


def _runs() -> list[Run]:
    """Two learning rates of one algorithm on two tasks, two seeds each: 0.01 is clearly better than 0.1."""
    return [
        Run("A", t, s, round(1.0 + 0.5 * j + 0.05 * s + (1.0 if lr == "0.01" else 0.0), 6), config=(("lr", lr),))
        for lr in ("0.1", "0.01")
        for j, t in enumerate(("x", "y"))
        for s in (0, 1)
    ]


@pytest.mark.parametrize("source", SOURCES)
def test_every_source_races_the_same_runs_alike(source, tmp_path, capsys) -> None:
    from rl_reliable_logger.cli.main import main

    corpus = write(source, tmp_path / "corpus", _runs())
    command = ["file", *corpus.command[1:]] if corpus.command[0] == "evaluate" else corpus.command
    # a sequential command's --metric is its design's: marl-eval's score metric is --score-key there, as for watch
    command = ["--score-key" if (source == "marl-eval" and w == "--metric") else w for w in command]
    state = tmp_path / "race"
    code = main(["race", *command, "--state", str(state), *RACE, "--seed", "0"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "selected lr=0.01" in out.out and "eliminated at look 1: lr=0.1" in out.out
    looks = json.loads((state / "looks.json").read_text())
    assert len(looks) == 1 and looks[0]["races"]["A"]["reason"] == "one left"
    assert pd.read_csv(state / "selected.csv")["lr"].astype(str).tolist() == ["0.01"]
