"""ScoreTable validation (each bad input has its own clear error) and conversions."""

import json

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger.cli.flags import cli_message
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import ScoreTableError
from rl_reliable_logger.render.writer import save_scores


def frame(**overrides):
    base = {
        "algorithm": ["A", "A", "A", "A", "B", "B", "B", "B"],
        "task": ["x", "x", "y", "y"] * 2,
        "seed": [0, 1, 0, 1] * 2,
        "score": [1.0, 2.0, 3.0, 4.0, 2.0, 3.0, 4.0, 5.0],
    }
    base.update(overrides)
    return pd.DataFrame(base)


def test_valid_table_keeps_order_and_cells():
    table = ScoreTable(frame())
    assert table.algorithms == ["A", "B"] and table.tasks == ["x", "y"]
    np.testing.assert_array_equal(table.cells()[("B", "y")], [4.0, 5.0])
    assert table.dropped.empty


@pytest.mark.parametrize(
    "bad, expected",
    [
        (np.nan, r"non-finite score nan \(empty or NaN\): A / y run .1."),
        (np.inf, r"non-finite score inf: A / y run '1'"),
        ("fast", r"non-numeric score 'fast' in column 'score': A / y run '1'"),
    ],
)
def test_bad_scores_name_algorithm_task_and_run(bad, expected):
    scores = [1.0, 2.0, 3.0, bad, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(ScoreTableError, match=expected) as err:
        ScoreTable(frame(score=scores))
    # the library names its keyword, the command line its flag (the one message, put into words at each edge)
    assert "`on_invalid='drop'`" in str(err.value) and "--drop-invalid" not in str(err.value)
    assert "--drop-invalid" in cli_message(err.value) and "on_invalid" not in cli_message(err.value)


def test_missing_score_is_its_own_error():
    df = frame()
    df["score"] = df["score"].astype(object)  # e.g. JSON records with "score": null
    df.loc[2, "score"] = None
    with pytest.raises(ScoreTableError, match="missing score in column 'score': A / y run '0'"):
        ScoreTable(df)


def test_duplicate_seed_names_both_rows_and_the_fix():
    df = frame(seed=[0, 0, 0, 1, 0, 1, 0, 1])
    with pytest.raises(ScoreTableError, match=r"duplicate seed '0' for A / x: row 0, row 1") as err:
        ScoreTable(df)
    assert "`run_id=`" in str(err.value) and "--run-key" in cli_message(err.value)
    # a run key makes them distinct runs
    table = ScoreTable(df.assign(run=[f"r{i}" for i in range(8)]), run_id="run")
    assert len(table.cells()[("A", "x")]) == 2


def _sweep_frame(steps: bool = False) -> pd.DataFrame:
    """Every configuration reuses seeds 0 and 1: the usual sweep layout."""
    rows = []
    for lr in (0.001, 0.01):
        for clip in (0.1, 0.2):
            for task in ("x", "y"):
                for seed in (0, 1):
                    for step in (10, 20) if steps else (None,):
                        score = 100 * lr + clip + seed + (step or 0)
                        rows.append(
                            {
                                "algorithm": "A",
                                "task": task,
                                "seed": seed,
                                "lr": lr,
                                "clip": clip,
                                "score": score,
                                **({"step": step} if steps else {}),
                            }
                        )
    return pd.DataFrame(rows)


def test_a_sweep_run_is_its_configuration_and_seed():
    with pytest.raises(ScoreTableError, match="duplicate seed.*`hyperparameter_keys=` lr,clip") as err:
        ScoreTable(_sweep_frame())
    assert "--hyperparameter-keys lr,clip to analyse each configuration apart" in cli_message(err.value)
    table = ScoreTable(_sweep_frame(), hyperparameter_keys=["lr", "clip"])
    assert len(table.frame) == 16 and table.frame["run_id"].nunique() == 8
    assert "lr=0.001, clip=0.1, seed=0" in set(table.frame["run_id"])
    assert table.cells()[("A", "x")].size == 8
    # curves: the final score of each configuration and seed, none merged with another configuration's
    curves = ScoreTable(_sweep_frame(steps=True), step="step", hyperparameter_keys=["lr", "clip"])
    np.testing.assert_allclose(np.sort(curves.cells()[("A", "y")]), np.sort(table.cells()[("A", "y")]) + 20)


def test_a_sweep_configuration_repeated_on_one_seed_is_still_a_duplicate():
    frame = _sweep_frame()
    frame.loc[1, "lr"] = 0.01  # now two rows of lr=0.01, clip=0.1, seed 1 on task x
    with pytest.raises(ScoreTableError, match="duplicate seed 'lr=0.01, clip=0.1, seed=1' for A / x"):
        ScoreTable(frame, hyperparameter_keys=["lr", "clip"])
    with pytest.raises(ScoreTableError, match="hyperparameter column.*'gamma'.*not in the input"):
        ScoreTable(_sweep_frame(), hyperparameter_keys=["gamma"])


def test_algorithm_missing_a_task_is_named():
    df = frame().drop(index=[6, 7])
    with pytest.raises(ScoreTableError, match="algorithm 'B' has no runs on task 'y'"):
        ScoreTable(df)


def test_drop_invalid_records_every_dropped_row_with_its_reason():
    df = frame(score=[1.0, 2.0, 3.0, np.nan, 2.0, 3.0, 4.0, 5.0]).drop(index=[6])
    table = ScoreTable(df, on_invalid="drop")
    reasons = table.dropped.set_index(["algorithm", "task", "run_id"])["reason"]
    assert reasons[("A", "y", "1")].startswith("non-finite score")
    assert len(table.cells()[("A", "y")]) == 1 and len(table.cells()[("B", "y")]) == 1
    # nothing silently vanished: kept + dropped = input
    assert len(table.frame) + len(table.dropped) == len(df)


def test_drop_invalid_drops_incomplete_task_for_every_algorithm():
    df = frame().drop(index=[6, 7])
    table = ScoreTable(df, on_invalid="drop")
    assert table.tasks == ["x"]
    assert set(table.dropped["task"]) == {"y"} and len(table.dropped) == 2


def test_single_run_cell_is_allowed_with_a_warning():
    table = ScoreTable(frame().drop(index=[1]))
    assert any("single run" in w and "A / x" in w for w in table.warnings)


def test_empty_input_and_unknown_columns():
    with pytest.raises(ScoreTableError, match="no rows"):
        ScoreTable(frame().iloc[:0])
    with pytest.raises(ScoreTableError, match=r"score column 'return'.*The input has: algorithm, task, seed, score"):
        ScoreTable(frame(), score="return")


def test_conversions_round_trip(tmp_path):
    table = ScoreTable(frame().assign(extra="k"))
    save_scores(table, tmp_path / "s.csv")
    save_scores(table, tmp_path / "s.json")
    save_scores(table, tmp_path / "s.parquet")
    for name in ("s.csv", "s.json", "s.parquet"):
        back = ScoreTable.from_file(tmp_path / name, run_id="run_id")
        assert back.cells().keys() == table.cells().keys()
        for key in table.cells():
            np.testing.assert_array_equal(back.cells()[key], table.cells()[key])
        assert "extra" in back.frame.columns
    nested = {"A": {"x": [1.0, 2.0]}, "B": {"x": [3.0, 4.0]}}
    (tmp_path / "n.json").write_text(json.dumps(nested))
    np.testing.assert_array_equal(ScoreTable.from_file(tmp_path / "n.json").cells()[("B", "x")], [3.0, 4.0])


def test_rliable_dict_round_trip_and_ragged_refusal():
    arrays = {"A": np.arange(6.0).reshape(3, 2), "B": np.arange(6.0, 12.0).reshape(3, 2)}
    table = ScoreTable.from_rliable(arrays, tasks=["x", "y"])
    back, tasks = table.to_rliable()
    assert tasks == ["x", "y"]
    np.testing.assert_array_equal(back["B"], arrays["B"])
    with pytest.raises(ScoreTableError, match="same number of runs"):
        ScoreTable(frame().drop(index=[1])).to_rliable()


def test_steps_final_takes_last_step_per_run():
    df = pd.DataFrame(
        {
            "algorithm": ["A"] * 4,
            "task": ["x"] * 4,
            "seed": [0, 0, 1, 1],
            "step": [10, 20, 20, 10],
            "score": [1.0, 5.0, 7.0, 3.0],
        }
    )
    table = ScoreTable(df, step="step")
    np.testing.assert_array_equal(np.sort(table.cells()[("A", "x")]), [5.0, 7.0])


def test_map_scores_transforms_a_tracker_tables_final_scores_with_its_curves():
    """A tracker table with curves keeps the final score apart (``final_score``): a per-task map must reach it,
    or ``final()`` hands back raw scores under a normalised label (issue 26)."""
    rows = [
        {"algorithm": "A", "task": t, "run_id": f"{t}{s}", "seed": s, "step": step, "score": v, "final_score": f}
        for t in ("x", "y")
        for s, f in ((0, 10.0), (1, 20.0))
        for step, v in ((0, 0.0), (5, f / 2))
    ]
    table = ScoreTable(pd.DataFrame(rows), run_id="run_id", step="step")
    scale = {"x": 10.0, "y": 20.0}
    mapped = table.map_scores(lambda tasks, values: values / tasks.map(scale).to_numpy(float))
    final = mapped.final().frame.set_index("run_id")["score"]
    assert final.to_dict() == {"x0": 1.0, "x1": 2.0, "y0": 0.5, "y1": 1.0}
    curve = mapped.frame.set_index(["run_id", "step"])["score"]
    assert curve[("x1", 5)] == 1.0 and curve[("y1", 5)] == 0.5
    with pytest.raises(ValueError, match="map_scores"):
        table.with_scores(table.frame["score"].to_numpy() * 2)


def test_one_column_in_two_roles_is_refused_naming_both_keywords():
    df = frame()
    with pytest.raises(ScoreTableError, match=r"`algorithm=` and `task=` both name the column 'task'"):
        ScoreTable(df, algorithm="task")


def test_hyperparameter_key_that_is_a_grouping_field_is_refused_naming_both():
    from rl_reliable_logger.analysis.evaluation import evaluate

    df = frame(agent=["A", "A", "A", "A", "B", "B", "B", "B"])
    table = ScoreTable(df.drop(columns=["algorithm"]), algorithm="agent")
    for key in ("agent", "algorithm"):
        with pytest.raises(ScoreTableError, match=r"`algorithm=` and `hyperparameter_keys=` both name the field"):
            evaluate(table, hyperparameter_keys=[key], reps=100, profile_reps=100, improvement_reps=100)


def test_a_repeated_index_is_read_by_position_not_a_traceback():
    """A frame glued with ``pd.concat`` (its index repeats) and a bad score: the one error names the row by its
    position, as for any frame (it was pandas' "truth value of a Series is ambiguous")."""
    frame = pd.DataFrame(
        {"algorithm": ["a", "a", "b", "b"], "task": ["t"] * 4, "seed": [0, 1, 0, 1], "score": [1.0, np.nan, 2.0, 3.0]},
        index=[0, 1, 0, 1],
    )
    with pytest.raises(ScoreTableError, match=r"non-finite score nan .*row 1\b"):
        ScoreTable(frame)
    kept = ScoreTable(frame, on_invalid="drop")
    assert kept.frame["score"].tolist() == [1.0, 2.0, 3.0]  # the bad row alone is dropped, and recorded
    assert kept.dropped[["algorithm", "reason"]].values.tolist() == [["a", "non-finite score nan (empty or NaN)"]]
