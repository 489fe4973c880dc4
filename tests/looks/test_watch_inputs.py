"""``watch()`` takes what ``race()`` and ``evaluate()`` take: a ScoreTable, a long DataFrame or a score file."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rl_reliable_logger as rl
from rl_reliable_logger.analysis.watch_options import FUTILITY
from rl_reliable_logger.errors import InputError

DESIGN = {"looks": 3, "max_runs": 9, "reps": 200, "seed": 0}


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [
        (a, f"t{t}", s, float(rng.normal(t + shift, 1.0)))
        for a, shift in (("A", 0.0), ("B", 0.1))
        for t in range(3)
        for s in range(3)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def test_a_dataframe_and_a_score_file_give_the_look_of_their_score_table(tmp_path: Path) -> None:
    data = frame()
    path = tmp_path / "scores.csv"
    data.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rl.ReliabilityWarning)
        expected = rl.watch(rl.ScoreTable(data), state=tmp_path / "a", **DESIGN)
        from_frame = rl.watch(data, state=tmp_path / "b", **DESIGN)
        from_file = rl.watch(str(path), state=tmp_path / "c", **DESIGN)
    for got in (from_frame, from_file):
        pd.testing.assert_frame_equal(got.decisions, expected.decisions)
        pd.testing.assert_frame_equal(got.launch, expected.launch)
        assert got.record["hash"] == expected.record["hash"]


def test_field_keywords_read_a_dataframe_and_are_refused_with_a_score_table(tmp_path: Path) -> None:
    data = frame().rename(columns={"algorithm": "agent"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rl.ReliabilityWarning)
        result = rl.watch(data, state=tmp_path / "a", algorithm_key="agent", **DESIGN)
    assert set(result.decisions["algorithm_x"]) | set(result.decisions["algorithm_y"]) == {"A", "B"}
    with pytest.raises(InputError, match="algorithm_key"):
        rl.watch(rl.ScoreTable(frame()), state=tmp_path / "b", algorithm_key="agent", **DESIGN)


def test_anything_else_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="DataFrame"):
        rl.watch([1, 2, 3], state=tmp_path / "a", **DESIGN)  # type: ignore[arg-type]


def test_one_algorithm_is_refused_not_a_decided_watch(tmp_path: Path) -> None:
    """With one algorithm there is no pair to compare: the first look said "stop: every comparison is decided",
    exit 0, and a loop would stop as if it had finished. It is refused, and no state is written."""
    from rl_reliable_logger.cli.main import main

    data = frame()
    path = tmp_path / "one.csv"
    data[data["algorithm"] == "A"].to_csv(path, index=False)
    with pytest.raises(InputError, match=r"the scores have one algorithm \('A'\) and a watch compares pairs"):
        rl.watch(str(path), state=tmp_path / "lib", **DESIGN)
    args = ["watch", str(path), "--state", str(tmp_path / "cli"), "--looks", "3", "--max-runs", "9", "--reps", "200"]
    assert main(args) == 2
    assert not (tmp_path / "lib").exists() and not (tmp_path / "cli").exists()


def test_the_docstring_states_the_futility_default() -> None:
    doc = " ".join((rl.watch.__doc__ or "").split())
    assert f"default {FUTILITY:g}" in doc and "default 0.1" not in doc
