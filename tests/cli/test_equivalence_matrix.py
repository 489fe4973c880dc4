"""Every way in gives the same numbers (issue 26): one matrix over sources x curves x normalisation x grouping.

The same runs (two algorithms, two Atari-100k tasks, two learning rates with three seeds each, a four-step
learning curve whose last point is the final score) are written to a CSV, a Parquet and a JSON file, a real
MLflow SQLite store, real offline W&B runs (the real ``wandb`` package, ``WANDB_MODE=offline``) and the online
W&B stand-in. Every cell runs the ``rl-reliable`` command of its source with ``--curves`` on or off, no
normalisation, a packaged table (``atari100k``) or a CSV of reference scores, and plain, variant
(configurations as algorithm labels) or sweep (``--hyperparameter-keys lr``) grouping. Each cell must give the
CSV cell's aggregates, per-task table, tuning table and curves, and the same labels (algorithms, tasks,
normalisation); curves on must not change the aggregates. Refused combinations must say why, naming the flags.

The expected numbers are never written here: every cell is compared with the others (the CSV file being the
plainest path), and the per-task table with the scores the writer logged, so a path that publishes raw scores
under a normalised label fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.support.cli import run_cli
from tests.support.wandb_env import wandb_env

pytest.importorskip("mlflow")
pytest.importorskip("wandb")

from tests.support.mlflow_store import convention, log_run, make_store

ALGORITHMS = ("PPO", "DQN")
TASKS = ("Pong", "Breakout")  # both in the packaged atari100k table
SEEDS = {0.1: (0, 1, 2), 0.01: (3, 4, 5)}  # seeds not reused across configurations: plain grouping is valid
STEPS = (0, 10, 20, 30)
CURVE_KEY = "eval/return"
#: The reference scores of the CSV normaliser (different from atari100k's, so the two cells differ).
REFS = {"Pong": (-21.0, 21.0), "Breakout": (0.0, 40.0)}
PACKAGED = {"Pong": (-20.7, 14.6), "Breakout": (1.7, 30.5)}  # atari100k's random and human scores

SOURCES = ("csv", "parquet", "json", "mlflow", "wandb-offline", "wandb-online", "mlflow-seeds", "wandb-offline-seeds")
NORMALIZE = ("none", "atari100k", "csv")
GROUPING = ("plain", "variant", "sweep")
STATS = ["--seed", "0", "--reps", "200", "--profile-reps", "100", "--improvement-reps", "100"]
STATS += ["--no-figures", "--quiet"]
CURVES = ["--curves", "--curve-reps", "100", "--curve-points", "4"]  # the curve flags act only with --curves


def _final(algorithm: str, task: str, lr: float, seed: int) -> float:
    """A final raw score (exact in binary, so every format stores it exactly)."""
    base = -18.0 if task == "Pong" else 4.0
    return base + 2.5 * seed + (6.0 if algorithm == "PPO" else 0.0) + (1.25 if lr == 0.1 else 0.0)


def _runs() -> list[dict[str, Any]]:
    runs = []
    for algorithm in ALGORITHMS:
        for task in TASKS:
            for lr, seeds in SEEDS.items():
                for seed in seeds:
                    final = _final(algorithm, task, lr, seed)
                    history = [(step, final - 0.5 * (STEPS[-1] - step)) for step in STEPS]
                    runs.append(
                        {
                            "algorithm": algorithm,
                            "task": task,
                            "lr": lr,
                            "seed": seed,
                            "final": final,
                            "history": history,
                        }
                    )
    return runs


RUNS = _runs()

WANDB_WRITER = r"""
import json, os, sys
sys.path.insert(0, os.environ["RL_REPO"])
import wandb
from rl_reliable_logger import log_final_score

root = sys.argv[1]
for run_spec in json.load(open(os.path.join(root, "runs.json"))):
    run = wandb.init(project="equiv", dir=root, config={"lr": run_spec["lr"]})
    for step, value in run_spec["history"]:
        run.log({"eval/return": value}, step=step)
    log_final_score(run_spec["final"], algorithm=run_spec["algorithm"], task=run_spec["task"], seed=run_spec["seed"])
    run.finish()
"""


#: Several seeds in one run (JAX vmap over seeds): one run per (algorithm, task, lr) logs every seed's keys.
SEEDS_WRITER = r"""
import json, os, sys
import wandb

root = sys.argv[1]
for group in json.load(open(os.path.join(root, "groups.json"))):
    run = wandb.init(project="equiv-seeds", dir=root, config={"lr": group["lr"], "algo": group["algorithm"],
                                                              "task": group["task"]})
    for i, step in enumerate(group["steps"]):
        run.log({f"eval/return_seed{s}": h[i][1] for s, h in group["histories"].items()}, step=step)
    for s, final in group["finals"].items():
        run.summary[f"final_seed{s}"] = final
    run.finish()
"""


def _seed_groups() -> list[dict[str, Any]]:
    """RUNS grouped into one run per (algorithm, task, lr), each holding its seeds' finals and histories."""
    groups: dict[tuple[str, str, float], dict[str, Any]] = {}
    for r in RUNS:
        group = groups.setdefault(
            (r["algorithm"], r["task"], r["lr"]),
            {
                "algorithm": r["algorithm"],
                "task": r["task"],
                "lr": r["lr"],
                "steps": list(STEPS),
                "finals": {},
                "histories": {},
            },
        )
        group["finals"][str(r["seed"])] = r["final"]
        group["histories"][str(r["seed"])] = r["history"]
    return list(groups.values())


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every source but the online stand-in (made per test), written once."""
    root = tmp_path_factory.mktemp("equiv")
    rows = [
        {
            "algorithm": r["algorithm"],
            "label": f"{r['algorithm']} lr={r['lr']}",
            "task": r["task"],
            "seed": r["seed"],
            "lr": r["lr"],
            "step": step,
            "score": value,
        }
        for r in RUNS
        for step, value in r["history"]
    ]
    frame = pd.DataFrame(rows)
    frame.to_csv(root / "scores.csv", index=False)
    frame.to_parquet(root / "scores.parquet", index=False)
    (root / "scores.json").write_text(json.dumps(rows))
    refs = root / "refs.csv"
    pd.DataFrame([{"task": t, "low": lo, "high": hi} for t, (lo, hi) in REFS.items()]).to_csv(refs, index=False)

    uri = _mlflow_store(root)
    _mlflow_seeds(uri)
    seeds = root / "wandb-seeds"
    seeds.mkdir()
    (seeds / "groups.json").write_text(json.dumps(_seed_groups()))
    subprocess.run([sys.executable, "-c", SEEDS_WRITER, str(seeds)], env=wandb_env(seeds), check=True, timeout=600)

    offline = root / "wandb"
    offline.mkdir()
    (offline / "runs.json").write_text(json.dumps(RUNS))
    subprocess.run([sys.executable, "-c", WANDB_WRITER, str(offline)], env=wandb_env(offline), check=True, timeout=600)
    return {"root": root, "refs": refs, "mlflow": uri, "offline": offline, "offline-seeds": seeds}


def _mlflow_store(root: Path) -> str:
    """A real MLflow SQLite store under ``root`` holding the runs (experiment ``equiv``); its URI."""
    import mlflow

    uri = make_store(root)
    client = mlflow.MlflowClient(uri)
    experiment = client.create_experiment("equiv")
    for r in RUNS:
        log_run(
            client,
            experiment,
            f"{r['algorithm']}-{r['task']}-{r['seed']}",
            tags=convention(r["algorithm"], r["task"], r["seed"]),
            params={"lr": str(r["lr"])},
            metrics={"rl_reliable_final_score": r["final"]},
            history={CURVE_KEY: r["history"]},
        )
    return uri


def _mlflow_seeds(uri: str) -> None:
    """Experiment ``equiv-seeds`` in the store at ``uri``: one run per (algorithm, task, lr) holding its seeds."""
    import mlflow

    client = mlflow.MlflowClient(uri)
    experiment = client.create_experiment("equiv-seeds")
    for g in _seed_groups():
        log_run(
            client,
            experiment,
            f"{g['algorithm']}-{g['task']}-{g['lr']}",
            params={"lr": str(g["lr"]), "algo": g["algorithm"], "task": g["task"]},
            metrics={f"final_seed{s}": v for s, v in g["finals"].items()},
            history={f"eval/return_seed{s}": h for s, h in g["histories"].items()},
        )


def _fill_standin(standin: Any) -> None:
    for i, r in enumerate(RUNS):
        standin.add_run(
            "ent",
            "equiv",
            id=f"run{i:02d}",
            config={
                "lr": r["lr"],
                "rl_reliable_algorithm": r["algorithm"],
                "rl_reliable_task": r["task"],
                "rl_reliable_seed": r["seed"],
            },
            summary={"rl_reliable_final_score": r["final"]},
            history=[{"_step": step, CURVE_KEY: value} for step, value in r["history"]],
        )


def _command(source: str, grouping: str, stores: dict[str, Any]) -> list[str]:
    """The source's command and field flags for a grouping (a file's variant label is a column of its own)."""
    root = stores["root"]
    if source in ("csv", "parquet", "json"):
        argv = ["evaluate", str(root / f"scores.{source}"), "--step-key", "step"]
        if grouping == "variant":
            argv += ["--algorithm-key", "label"]
        return argv
    if source.endswith("-seeds"):
        return _seeds_command(source, grouping, stores)
    if source == "mlflow":
        argv = ["mlflow", "--tracking-uri", stores["mlflow"], "--experiment", "equiv", "--publish", "none"]
        variant = "params.lr"
    else:
        where = ["--offline-dir", str(stores["offline"])] if source == "wandb-offline" else ["ent/equiv"]
        argv = ["wandb", *where, "--publish", "none"]
        variant = "config.lr"
    argv += ["--curve-key", CURVE_KEY]
    if grouping == "variant":
        argv += ["--variant-key", variant]
    return argv


def _seeds_command(source: str, grouping: str, stores: dict[str, Any]) -> list[str]:
    """A source of several seeds per run: the ``{seed}`` placeholder in the score and curve keys."""
    kind = "params" if source == "mlflow-seeds" else "config"
    if source == "mlflow-seeds":
        argv = ["mlflow", "--tracking-uri", stores["mlflow"], "--experiment", "equiv-seeds", "--publish", "none"]
        argv += ["--score-key", "metrics.final_seed{seed}"]
    else:
        argv = ["wandb", "--offline-dir", str(stores["offline-seeds"]), "--publish", "none"]
        argv += ["--score-key", "summary.final_seed{seed}"]
    argv += ["--algorithm-key", f"{kind}.algo", "--task-key", f"{kind}.task", "--curve-key", "eval/return_seed{seed}"]
    if grouping == "variant":
        argv += ["--variant-key", f"{kind}.lr"]
    return argv


def _options(curves: bool, normalize: str, grouping: str, stores: dict[str, Any]) -> list[str]:
    argv = list(STATS)
    if curves:
        argv += CURVES
    if normalize == "atari100k":
        argv += ["--normalize", "atari100k"]
    elif normalize == "csv":
        argv += ["--normalize", str(stores["refs"])]
    if grouping == "sweep":
        argv += ["--hyperparameter-keys", "lr"]
    return argv


_TABLES = ("aggregates", "per_task", "tuning", "curves")
_LABELS = ("normalization", "algorithms", "tasks", "counts", "n_runs", "runs_per_task", "ci_label", "intervals")


def _outcome(out: Path) -> dict[str, Any]:
    """What a user reads of a results folder: the tables (sorted rows) and the labels of provenance."""
    tables = {}
    for name in _TABLES:
        path = out / f"{name}.csv"
        if path.exists():
            frame = pd.read_csv(path)
            tables[name] = frame.sort_values(list(frame.columns[:3])).reset_index(drop=True)
    prov = json.loads((out / "provenance.json").read_text())
    return {"tables": tables, "labels": {k: prov.get(k) for k in _LABELS}}


def _run(capsys: Any, tmp_path: Path, argv: list[str]) -> dict[str, Any]:
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    code, _, err = run_cli(capsys, *argv, "--out", out)
    assert code == 0, err
    return _outcome(out)


_REFERENCE: dict[tuple[bool, str, str], dict[str, Any]] = {}


def _reference(capsys: Any, tmp_path: Path, curves: bool, normalize: str, grouping: str, stores: dict[str, Any]):
    """The CSV cell (computed once per module): what every other source must give."""
    key = (curves, normalize, grouping)
    if key not in _REFERENCE:
        argv = _command("csv", grouping, stores) + _options(curves, normalize, grouping, stores)
        _REFERENCE[key] = _run(capsys, tmp_path, argv)
    return _REFERENCE[key]


def _expected_per_task_means(normalize: str, grouping: str) -> dict[tuple[str, str], float]:
    """Per-task means of the final scores the writer logged, normalised here by hand."""
    bounds = {"atari100k": PACKAGED, "csv": REFS}.get(normalize)
    cells: dict[tuple[str, str], list[float]] = {}
    for r in RUNS:
        label = f"{r['algorithm']} lr={r['lr']}" if grouping == "variant" else r["algorithm"]
        value = r["final"]
        if bounds is not None:
            low, high = bounds[r["task"]]
            value = (value - low) / (high - low)
        cells.setdefault((label, r["task"]), []).append(value)
    return {key: sum(v) / len(v) for key, v in cells.items()}


def _assert_same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["labels"] == want["labels"]
    assert sorted(got["tables"]) == sorted(want["tables"])
    for name, frame in want["tables"].items():
        pd.testing.assert_frame_equal(got["tables"][name], frame, check_exact=False, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("grouping", GROUPING)
@pytest.mark.parametrize("normalize", NORMALIZE)
@pytest.mark.parametrize("curves", (False, True), ids=("final", "curves"))
@pytest.mark.parametrize("source", SOURCES)
def test_every_source_gives_the_same_numbers_and_labels(
    source, curves, normalize, grouping, stores, capsys, tmp_path, request
):
    if source == "wandb-online":
        _fill_standin(request.getfixturevalue("wandb_standin"))
    argv = _command(source, grouping, stores) + _options(curves, normalize, grouping, stores)
    got = _run(capsys, tmp_path, argv)
    want = _reference(capsys, tmp_path, curves, normalize, grouping, stores)
    _assert_same(got, want)

    # the numbers are the logged scores, normalised as labelled (not raw scores under a normalised label)
    per_task = got["tables"]["per_task"]
    means = _expected_per_task_means(normalize, grouping)
    point = per_task.set_index(["algorithm", "task"])["mean"]
    for key, value in means.items():
        assert point[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    # learning curves never change the final scores' aggregates
    if curves:
        off = _reference(capsys, tmp_path, False, normalize, grouping, stores)
        pd.testing.assert_frame_equal(got["tables"]["aggregates"], off["tables"]["aggregates"])


def test_mlflow_publishes_the_normalised_numbers_it_shows_with_curves(stores, capsys, tmp_path):
    """What lands on the MLflow analysis run with --curves --normalize: the normalised aggregates, the same
    as without --curves (the published ``iqm/PPO`` was a raw score before issue 26)."""
    import mlflow

    own = {**stores, "mlflow": _mlflow_store(tmp_path)}  # the shared store stays free of analysis runs
    client = mlflow.MlflowClient(own["mlflow"])
    experiment = client.get_experiment_by_name("equiv").experiment_id
    published = {}
    for curves in (False, True):
        argv = _command("mlflow", "plain", own) + _options(curves, "atari100k", "plain", own)
        argv[argv.index("--publish") + 1] = "new"
        got = _run(capsys, tmp_path, argv)
        runs = client.search_runs([experiment], order_by=["attributes.start_time DESC"], max_results=1)
        metrics = runs[0].data.metrics
        counts = "24 runs (2 algorithms × 2 tasks, 6 runs per cell, 6 seeds)"  # one wording (data.counts)
        assert counts in runs[0].data.tags["mlflow.note.content"] and runs[0].data.params["rl_reliable.n_runs"] == "24"
        agg = got["tables"]["aggregates"].set_index(["algorithm", "metric"])["point"]
        for algorithm in ALGORITHMS:
            assert metrics[f"iqm/{algorithm}"] == pytest.approx(agg[(algorithm, "iqm")], rel=1e-12)
        published[curves] = {k: v for k, v in metrics.items() if not k.startswith("curve_")}
    assert published[True] == pytest.approx(published[False], rel=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_one_field_in_two_grouping_roles_is_refused_naming_both_flags(source, stores, capsys, tmp_path, request):
    """A configuration key that is also part of the algorithm label would tune over one configuration each
    (issue 26): refused on every source, naming both flags, before anything is written."""
    if source == "wandb-online":
        _fill_standin(request.getfixturevalue("wandb_standin"))
    argv = _command(source, "variant", stores)
    if source in ("csv", "parquet", "json"):
        keys, second = ["label"], "--algorithm-key"
    else:
        kind = "params" if source.startswith("mlflow") else "config"
        keys, second = ["lr", f"{kind}.lr"], "--variant-key"
    for key in keys:
        out = tmp_path / key
        code, _, err = run_cli(capsys, *argv, *STATS, "--hyperparameter-keys", key, "--out", out)
        assert code == 2, err
        line = err.strip().splitlines()[-1]
        assert line.startswith("error: ") and second in line and "--hyperparameter-keys" in line, line
        assert not out.exists()


@pytest.mark.parametrize("source", ["mlflow", "wandb-offline"])
def test_curves_without_the_curve_key_are_refused_before_any_read(source, stores, capsys, tmp_path):
    argv = _command(source, "plain", stores)
    at = argv.index("--curve-key")
    del argv[at : at + 2]
    code, _, err = run_cli(capsys, *argv, *STATS, "--curves", "--normalize", "atari100k", "--out", tmp_path / "o")
    assert code == 2 and "--curves needs --curve-key" in err, err
    assert not (tmp_path / "o").exists()
