"""Configuration values as written and compared by value (issue 54): ``None``, ``null`` and ``NA`` in a sweep's CSV
are three configurations, not pandas' one NaN; two configurations whose printed labels coincide
(``lr="1, b=2", b=3`` and ``lr=1, b="2, b=3"``) are two, never a duplicate seed; a file of success counts is
scored by its rate; counts a float cannot count exactly are one sentence; seed labels' numbers are found."""

from __future__ import annotations

import pytest

from rl_reliable_logger import InputError, ScoreTable, evaluate
from rl_reliable_logger.data.names import seed_label_collisions
from rl_reliable_logger.trackers.base.records import RunRecord, records_to_table

FAST = {"reps": 100, "profile_reps": 20, "improvement_reps": 20, "seed": 0}


def _csv(path, header: str, rows: list[str]):
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def test_missing_markers_in_a_configuration_column_are_values(tmp_path):
    lrs = ["0.1", "0.2", "None", "null", "NA"]
    rows = [f"PPO,x,{s},{lr},{0.1 * s + i}" for i, lr in enumerate(lrs) for s in range(3)]
    table = ScoreTable.from_csv(
        _csv(tmp_path / "s.csv", "algorithm,task,seed,lr,score", rows), hyperparameter_keys=["lr"]
    )
    assert sorted(map(str, table.frame["lr"].unique())) == ["0.1", "0.2", "NA", "None", "null"]
    assert table.frame["run_id"].nunique() == 15
    report = evaluate(table, hyperparameter_keys=["lr"], **FAST)
    assert report.table("tuning")["n_configs"].iloc[0] == 5


def test_a_numeric_configuration_column_stays_numeric(tmp_path):
    rows = [f"PPO,x,{s},{lr},{s}" for lr in ("0.1", "0.01") for s in range(3)] + ["PPO,x,9,,1"]
    table = ScoreTable.from_csv(
        _csv(tmp_path / "s.csv", "algorithm,task,seed,lr,score", rows), hyperparameter_keys=["lr"]
    )
    assert table.frame["lr"].dtype == float and table.frame["lr"].isna().sum() == 1


def test_labels_that_print_alike_are_two_configurations(tmp_path):
    rows = [f'PPO,x,{s},"1, b=2",3,{s}' for s in range(3)] + [f'PPO,x,{s},1,"2, b=3",{s + 5}' for s in range(3)]
    path = _csv(tmp_path / "s.csv", "algorithm,task,seed,lr,b,score", rows)
    table = ScoreTable.from_csv(path, hyperparameter_keys=["lr", "b"])  # was: duplicate seed, pass the keys given
    assert table.frame["run_id"].nunique() == 6
    report = evaluate(table, hyperparameter_keys=["lr", "b"], **FAST)
    assert report.table("tuning")["n_configs"].iloc[0] == 2


def test_tracker_configurations_are_compared_by_value_not_by_text():
    runs = [
        RunRecord(f"r{i}", None, "finished", config={"a": "A", "t": "x", "s": 0, "lr": lr}, summary={"v": 1.0 + i})
        for i, lr in enumerate([None, "None", "NA", 1, "1"])
    ]
    table = records_to_table(runs, algorithm="config.a", task="config.t", seed="config.s", score="summary.v",
                             extra_fields={"lr": "config.lr"})  # fmt: skip
    assert len(table.frame) == 5


def test_variant_labels_that_print_alike_are_two_algorithms():
    runs = [
        RunRecord(
            f"r{i}{s}", None, "finished", config={"a": "A", "t": "x", "s": s, "lr": lr, "b": b}, summary={"v": 1.0}
        )
        for i, (lr, b) in enumerate([("1, b=2", 3), (1, "2, b=3")])
        for s in range(2)
    ]
    table = records_to_table(runs, algorithm="config.a", task="config.t", seed="config.s", score="summary.v",
                             variant=["config.lr", "config.b"])  # fmt: skip
    assert sorted(table.algorithms) == ["A lr='1, b=2', b=3", "A lr=1, b='2, b=3'"]


def test_a_file_of_success_counts_is_scored_by_its_rate(tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    rows = [f"{a},x,{s},{s + 3 + (a == 'B')},10" for a in "AB" for s in range(3)]
    path = _csv(tmp_path / "c.csv", "algorithm,task,seed,successes,episodes", rows)
    report = evaluate(path, successes="successes", episodes="episodes", **FAST)
    assert sorted(report.scores["score"]) == pytest.approx(
        sorted((s + 3 + (a == "B")) / 10 for a in "AB" for s in range(3))
    )
    assert any("each run's score is its success rate, successes / episodes" in w for w in report.warnings)
    capsys.readouterr()
    code = main(
        ["evaluate", str(path), "--successes", "successes", "--episodes", "episodes", "--reps", "100", "--no-figures"]
    )
    assert code == 0, capsys.readouterr().err
    with pytest.raises(InputError, match="score column 'score'"):  # without the counts' options: no score
        ScoreTable.from_csv(path)


@pytest.mark.parametrize("value", ["1e19", "1e16"])
def test_success_counts_no_float_counts_exactly_are_one_sentence(tmp_path, value):
    rows = [
        f"{a},x,{s},0.5,{value if (a, s) == ('A', 0) else 5},{value if (a, s) == ('A', 0) else 10}"
        for a in "AB"
        for s in range(3)
    ]
    path = _csv(tmp_path / "c.csv", "algorithm,task,seed,score,successes,episodes", rows)
    with pytest.raises(InputError, match=r"not a whole number of episodes from 0 to 9,007,199,254,740,992"):
        evaluate(path, successes="successes", episodes="episodes", **FAST)


def test_seed_labels_carrying_the_proposed_numbers_are_noted():
    note = seed_label_collisions(["s0", "s1", "s2"], [0, 1, 2, 3])
    assert note is not None and note.startswith("the proposed seeds 0, 1, 2 are the numbers of the seed labels 's0'")
    assert seed_label_collisions(["s0", "s1"], [2, 3]) is None
    assert seed_label_collisions([0, 1, "007"], [0, 1]) is None  # numbers are seeds already, never labels


def test_a_whole_number_beside_text_stays_whole():
    """A configuration column of numbers and text (``b`` = ``3``, ``2, b=3``): ``3`` is the whole number 3, launched
    as ``b=3`` (``b=3.0`` fails a training script's ``type=int``), and a decimal stays a float."""
    import pandas as pd

    from rl_reliable_logger.data.csvcells import as_written

    values = as_written(pd.Series(["3", "2, b=3", "0.5", "", "-7", "1e3", "10000000000000000000001"])).tolist()
    assert values[:5] == [3, "2, b=3", 0.5, None, -7] and values[5] == 1000.0
    assert [type(v) for v in values[:6]] == [int, str, float, type(None), int, float]
    assert values[6] == 10000000000000000000001 and type(values[6]) is int
