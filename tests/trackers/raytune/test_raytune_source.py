"""Ray Tune experiments as a source (issue 34): a real local Tune run of the documented example
(``examples/ray_tune_seeds.py``), read from its ResultGrid and from its folder, gives the tables of the same
scores in a CSV, the tuning view over its configurations included."""

from __future__ import annotations

import importlib.util
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rl_reliable_logger[raytune]')")

from rl_reliable_logger import InputError, ScoreTable
from rl_reliable_logger.trackers.raytune import raytune_table
from tests.support.paths import EXAMPLES
from tests.support.same_tables import assert_same_tables

SEEDS, EXPLORE = (0, 1), (0.1, 0.5)
KEYS: dict[str, Any] = {"score_key": "eval/return", "algorithm_key": "config/algo"}


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("ray_tune_seeds", EXAMPLES / "ray_tune_seeds.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def experiment(ray_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The example's experiment, 16 trials (2 algorithms x 2 tasks x 2 explore values x 2 seeds), run once."""
    example = _example()
    storage = tmp_path_factory.mktemp("tune")
    grid = example.run(str(storage), seeds=SEEDS, explore=EXPLORE)
    rows = []
    for algo in ("eps-greedy", "ucb"):
        for task in example.TASKS:
            for explore in EXPLORE:
                for seed in SEEDS:
                    config = {"algo": algo, "task": task, "explore": explore, "seed": seed}
                    curve = example.learning_curve(config)
                    rows += [{**config, "step": i + 1, "score": v} for i, v in enumerate(curve)]
    csv = ScoreTable(pd.DataFrame(rows).rename(columns={"algo": "algorithm"}), hyperparameter_keys=["explore"])
    return {"grid": grid, "folder": storage / "bandits", "csv": csv}


def test_the_tune_experiment_gives_the_csvs_tables_exactly(experiment):
    grid_table = raytune_table(experiment["grid"], **KEYS, hyperparameter_keys=["config/explore"])
    assert len(grid_table.frame) == 16 and set(grid_table.frame["explore"]) == set(EXPLORE)
    tables = assert_same_tables(grid_table, experiment["csv"].final(), hyperparameter_keys=["explore"])
    tuning = tables["tuning"]
    assert not tuning.empty and {"complete", "tuned", "split"} <= set(tuning["view"])
    # the experiment's folder, opened with Ray's ExperimentAnalysis, is the same experiment
    folder_table = raytune_table(experiment["folder"], **KEYS, hyperparameter_keys=["config/explore"])
    assert_same_tables(folder_table, grid_table, hyperparameter_keys=["explore"])


def test_curves_and_score_rules_read_the_reported_history(experiment):
    csv = experiment["csv"]
    curves = raytune_table(experiment["grid"], **KEYS, hyperparameter_keys=["config/explore"], curves=True)
    assert_same_tables(curves, csv, hyperparameter_keys=["explore"], curves=True)
    mean2 = raytune_table(experiment["grid"], **KEYS, hyperparameter_keys=["config/explore"], score_rule="mean-last-2")
    keys = ["algorithm", "task", "explore", "seed"]
    want = csv.frame[csv.frame["step"] >= 4].groupby(keys)["score"].mean().to_dict()  # the last 2 of 5 reports
    got = mean2.frame.set_index(keys)["score"].to_dict()
    assert got == pytest.approx(want, rel=1e-15) and len(got) == 16


def test_a_config_key_no_trial_has_names_the_trials(experiment):
    with pytest.raises(InputError, match=r"16 runs lack config/algorithm: "):  # the key as Ray names it
        raytune_table(experiment["grid"], score_key="eval/return")  # the example's key is algo


def test_a_folder_that_is_no_experiment_is_named(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        raytune_table(tmp_path / "absent", **KEYS)
    with pytest.raises(InputError, match="is not a Ray Tune experiment folder"):
        raytune_table(tmp_path, **KEYS)
    with pytest.raises(InputError, match="no Ray Tune experiment"):
        raytune_table(3, **KEYS)


def test_the_command_on_the_folder_writes_the_tables_of_evaluate_on_the_csv(experiment, tmp_path, capsys):
    """``rl-reliable raytune`` on the experiment's folder and ``rl-reliable evaluate`` on the CSV of the same
    scores write byte-identical tables (the tuning view over explore and the learning curves included)."""
    from rl_reliable_logger.cli.main import main

    csv = tmp_path / "scores.csv"
    experiment["csv"].frame.to_csv(csv, index=False)
    flags = ["--reps", "200", "--profile-reps", "100", "--improvement-reps", "100", "--curve-reps", "100"]
    flags += ["--seed", "0", "--curves", "--quiet", "--no-figures"]
    tune = ["raytune", str(experiment["folder"]), "--score-key", "eval/return", "--algorithm-key", "config/algo"]
    assert main([*tune, "--hyperparameter-keys", "config/explore", *flags, "--out", str(tmp_path / "tune")]) == 0
    assert main(["evaluate", str(csv), "--hyperparameter-keys", "explore", *flags, "--out", str(tmp_path / "csv")]) == 0
    for name in ("aggregates", "per_task", "differences", "improvement", "profiles", "ranks", "tuning", "curves"):
        assert (tmp_path / "tune" / f"{name}.csv").read_bytes() == (tmp_path / "csv" / f"{name}.csv").read_bytes(), name
    assert not pd.read_csv(tmp_path / "tune" / "tuning.csv").empty

    capsys.readouterr()
    assert main([*tune[:4], "--quiet"]) == 2  # the example's algorithm key is config/algo
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "lack config/algorithm: " in err


def test_planted_pickles_in_a_real_experiment_never_run(experiment, tmp_path, capsys):
    """Issue 41: a payload in Tune's own pickles (tuner.pkl, params.pkl, an ERROR trial's error.pkl, the trial state's
    pickled fields) never runs; RUNNING and ERROR trials are left out and listed; Ray prints nothing."""
    import json
    import shutil

    from rl_reliable_logger.cli.main import main
    from tests.contract.source_corpus import payload

    folder = tmp_path / "bandits"
    shutil.copytree(experiment["folder"], folder)
    marker = tmp_path / "EXECUTED"
    bad = payload(marker)
    for pkl in [folder / "tuner.pkl", *folder.glob("*/params.pkl")]:
        pkl.write_bytes(bad)
    state_file = next(folder.glob("experiment_state-*.json"))
    state = json.loads(state_file.read_text())
    for i, status in ((0, "ERROR"), (1, "RUNNING")):
        trial, runtime = (json.loads(part) for part in state["trial_data"][i])
        trial["status"] = status
        trial["storage"] = {"_type": "CLOUDPICKLE_FALLBACK", "value": bad.hex()}
        runtime["pickled_error_filename"] = "error.pkl"
        (folder / trial["relative_logdir"] / "error.pkl").write_bytes(bad)
        state["trial_data"][i] = [json.dumps(trial), json.dumps(runtime)]
    state_file.write_text(json.dumps(state))
    table = raytune_table(folder, **KEYS, hyperparameter_keys=["config/explore"], score_rule="mean-last-2")
    assert len(table.frame) == 14 and not marker.exists()
    assert "left out 2 unfinished Ray Tune runs (1 error, 1 running)" in table.warnings[-1]
    argv = ["raytune", str(folder), "--score-key", "eval/return", "--algorithm-key", "config/algo", "--quiet"]
    assert main([*argv, "--include-unfinished", "--no-figures", "--reps", "100"]) == 2  # two explore values
    err = capsys.readouterr().err
    assert "these runs differ in explore" in err and "--hyperparameter-keys explore" in err, err
    argv += ["--hyperparameter-keys", "config/explore", "--score-rule", "mean-last-2"]
    assert main([*argv, "--include-unfinished", "--no-figures", "--reps", "100"]) == 0
    err = capsys.readouterr().err
    assert not marker.exists() and "WARNING" not in err and "URI" not in err, err


@pytest.mark.parametrize("keep", [0.0, 0.5])
def test_a_real_state_file_cut_short_reads_the_same_trials_from_their_folders(experiment, tmp_path, keep):
    """Ray writes its experiment state in place: a driver killed while writing it leaves it empty or cut short. The
    trials are then read from their folders (params.json, result.json): the same ids, folders, configs and last
    results (but ``done`` and ``experiment_tag``, which Tune records only in the state file), of unknown state."""
    import shutil

    from rl_reliable_logger.trackers import ReadOptions
    from rl_reliable_logger.trackers.raytune.experiment import read_experiment

    folder = tmp_path / "bandits"
    shutil.copytree(experiment["folder"], folder)
    intact = read_experiment(folder)
    state = next(folder.glob("experiment_state-*.json"))
    text = state.read_text()
    state.write_text(text[: int(len(text) * keep)])
    cut = read_experiment(folder)

    def seen(trial: Any) -> tuple[Any, ...]:
        last = {k: v for k, v in trial.last_result.items() if k not in ("done", "experiment_tag")}
        return trial.trial_id, trial.name, trial.folder, trial.config, last

    assert len(intact.trials) == 16 and {t.status for t in intact.trials} == {"TERMINATED"}
    assert [seen(t) for t in cut.trials] == [seen(t) for t in intact.trials]
    assert {t.status for t in cut.trials} == {"UNKNOWN"} and "16 trials were read from their folders" in cut.notes[0]
    read = ReadOptions(hyperparameter_keys=["config/explore"], include_unfinished=True)
    folder_table = raytune_table(folder, **KEYS, read=read)
    assert folder_table.warnings[0] == cut.notes[0]
    assert_same_tables(folder_table, experiment["csv"].final(), hyperparameter_keys=["explore"])
