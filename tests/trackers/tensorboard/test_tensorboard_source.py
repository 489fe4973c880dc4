"""TensorBoard event files as a source (issue 34): real event files written by tensorboardX and by
TensorBoard's own ``tensorboard.summary.Writer``, read back through the layout pattern, the score rules and
curves; damaged files and layout mismatches are named; the same scores give the CSV's tables exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytest.importorskip(
    "tensorboard", reason="TensorBoard is not installed (pip install 'rl_reliable_logger[tensorboard]')"
)
tensorboardX = pytest.importorskip("tensorboardX", reason="tensorboardX is not installed (a dev dependency)")

from tensorboard.summary import Writer  # noqa: E402

from rl_reliable_logger import InputError, ScoreTable  # noqa: E402
from rl_reliable_logger.trackers.tensorboard import parse_layout, tensorboard_table  # noqa: E402
from tests.support.same_tables import assert_same_tables  # noqa: E402

TAG = "eval/return"
ALGORITHMS = ("PPO", "DQN")
TASKS = ("Pong", "Breakout")
SEEDS = {0.1: (0, 1, 2), 0.01: (3, 4, 5)}
STEPS = (0, 10, 20, 30)


def _final(algorithm: str, task: str, lr: float, seed: int) -> float:
    """Multiples of 0.25: exact in the 32-bit floats TensorBoard stores, so both sources hold the same numbers."""
    base = -18.0 if task == "Pong" else 4.0
    return base + 2.5 * seed + (6.0 if algorithm == "PPO" else 0.0) + (1.25 if lr == 0.1 else 0.0)


def _write(folder: Path, points: list[tuple[int, float]], *, writer: str) -> None:
    """One run's points with tensorboardX or TensorBoard's own writer, plus a tag that is not read."""
    if writer == "tensorboardX":
        w = tensorboardX.SummaryWriter(str(folder))
        for step, value in points:
            w.add_scalar(TAG, value, step)
            w.add_scalar("train/loss", 1.0 / (step + 1), step)
    else:
        w = Writer(str(folder))
        for step, value in points:
            w.add_scalar(TAG, value, step=step)
            w.add_scalar("train/loss", 1.0 / (step + 1), step=step)
    w.close()


def _record_starts(data: bytes) -> list[int]:
    """Where each record of an event file starts, from the lengths alone (the framing of docs/tensorboard.md)."""
    starts, pos = [], 0
    while pos + 12 <= len(data):
        starts.append(pos)
        pos += 16 + int.from_bytes(data[pos : pos + 8], "little")
    return starts


def _runs() -> list[dict[str, Any]]:
    runs = []
    for algorithm in ALGORITHMS:
        for task in TASKS:
            for lr, seeds in SEEDS.items():
                for seed in seeds:
                    final = _final(algorithm, task, lr, seed)
                    history = [(step, final - 0.5 * (STEPS[-1] - step)) for step in STEPS]
                    runs.append({"algorithm": algorithm, "task": task, "lr": lr, "seed": seed, "history": history})
    return runs


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same runs as event files (half by each writer) and as a CSV with learning curves."""
    root = tmp_path_factory.mktemp("tb")
    logdir = root / "runs"
    rows = []
    for i, r in enumerate(_runs()):
        folder = logdir / r["algorithm"] / r["task"] / f"lr_{r['lr']}" / f"seed_{r['seed']}"
        _write(folder, r["history"], writer="tensorboardX" if i % 2 else "tensorboard")
        rows += [
            {**{k: r[k] for k in ("algorithm", "task", "lr", "seed")}, "step": s, "score": v} for s, v in r["history"]
        ]
    # in the order the folders are read (sorted paths), so both give the algorithms in the same report order
    order = ["algorithm", "task", "folder", "step"]
    frame = pd.DataFrame(rows).assign(folder=lambda f: "lr_" + f["lr"].astype(str) + "/seed_" + f["seed"].astype(str))
    frame.sort_values(order).drop(columns="folder").to_csv(root / "scores.csv", index=False)
    return {"logdir": logdir, "csv": root / "scores.csv"}


LAYOUT = "{algorithm}/{task}/lr_{lr}/seed_{seed}"


def test_the_same_scores_give_the_csvs_tables_exactly(logs):
    """Final scores (last point), the sweep's tuning view over lr, and the learning curves: identical tables."""
    csv = ScoreTable.from_csv(logs["csv"])
    final = tensorboard_table(logs["logdir"], layout=LAYOUT, score_key=TAG, hyperparameter_keys=["lr"])
    assert len(final.frame) == 24 and set(final.frame["lr"]) == {0.1, 0.01}
    tables = assert_same_tables(final, csv.final(), hyperparameter_keys=["lr"])
    assert {"aggregates", "per_task", "improvement", "tuning"} <= set(tables)
    curves = tensorboard_table(logs["logdir"], layout=LAYOUT, score_key=TAG, hyperparameter_keys=["lr"], curves=True)
    tables = assert_same_tables(curves, csv, hyperparameter_keys=["lr"], curves=True)
    assert not tables["curves"].empty


def test_both_writers_give_the_logged_values(logs):
    table = tensorboard_table(logs["logdir"], layout=LAYOUT, score_key=TAG, hyperparameter_keys=["lr"], curves=True)
    frame = table.frame
    for r in _runs():
        rows = frame[
            (frame["algorithm"] == r["algorithm"]) & (frame["task"] == r["task"]) & (frame["seed"] == r["seed"])
        ]
        assert list(zip(rows["step"], rows["score"])) == [(float(s), v) for s, v in r["history"]]


def test_unequal_lengths_and_score_rules(tmp_path):
    """Seeds stopped at different steps: last / max / mean-last-N / at-budget read each run's own points."""
    lengths = {0: 5, 1: 3, 2: 4}
    for seed, n in lengths.items():
        points = [(10 * k, float(k + seed)) for k in range(n)]
        points.insert(1, (5, 100.0))  # a spike: only max sees it
        _write(tmp_path / "A" / "x" / f"seed_{seed}", points, writer="tensorboardX" if seed else "tensorboard")

    def scores(**kw: Any) -> dict[int, float]:
        t = tensorboard_table(tmp_path, score_key=TAG, **kw)
        return dict(zip(t.frame["seed"], t.frame["score"]))

    assert scores() == {0: 4.0, 1: 3.0, 2: 5.0}
    assert scores(score_rule="max") == {0: 100.0, 1: 100.0, 2: 100.0}
    assert scores(score_rule="mean-last-2") == {0: 3.5, 1: 2.5, 2: 4.5}
    with pytest.raises(InputError, match="stopped short of the budget step 30"):
        tensorboard_table(tmp_path, score_key=TAG, score_rule="at-budget:30")
    short = tensorboard_table(tmp_path, score_key=TAG, score_rule="at-budget:30", on_invalid="drop")
    assert dict(zip(short.frame["seed"], short.frame["score"])) == {0: 3.0, 2: 5.0}
    assert "seed_1" in short.dropped["run_id"].iloc[0]


def test_a_truncated_event_file_is_named(tmp_path):
    for seed in range(3):
        _write(tmp_path / "A" / "x" / f"seed_{seed}", [(0, 1.0), (1, 2.0 + seed)], writer="tensorboardX")
    damaged = next((tmp_path / "A" / "x" / "seed_1").glob("*tfevents*"))
    damaged.write_bytes(damaged.read_bytes()[:-5])
    with pytest.raises(InputError) as err:
        tensorboard_table(tmp_path, score_key=TAG)
    message = str(err.value)
    start = _record_starts(damaged.read_bytes())[-1]  # the last record, cut 5 bytes short
    assert f"{str(damaged)!r} is truncated at byte {start}: the record there" in message
    assert "on_invalid='drop'" in message
    assert "\n" not in message
    table = tensorboard_table(tmp_path, score_key=TAG, on_invalid="drop")
    assert sorted(table.frame["seed"]) == [0, 2]
    assert table.dropped["run_id"].tolist() == ["A/x/seed_1"] and str(damaged) in table.dropped["reason"].iloc[0]
    assert any("damaged, truncated or unreadable file" in w for w in table.warnings)


def test_a_corrupted_record_is_named(tmp_path):
    for seed in range(2):
        _write(tmp_path / "A" / "x" / f"seed_{seed}", [(0, 1.0), (1, 2.0)], writer="tensorboard")
    path = next((tmp_path / "A" / "x" / "seed_0").glob("*tfevents*"))
    data = bytearray(path.read_bytes())
    data[-6] ^= 0xFF  # inside the last record's payload: its checksum no longer matches
    path.write_bytes(bytes(data))
    start = _record_starts(bytes(data))[-1]
    with pytest.raises(InputError, match=f"seed_0.* is damaged at byte {start}: the data of the record there fails"):
        tensorboard_table(tmp_path, score_key=TAG)


def test_layout_mismatch_is_named(tmp_path):
    for seed in range(2):
        _write(tmp_path / "A" / "x" / f"run-{seed}", [(0, 1.0)], writer="tensorboardX")
    with pytest.raises(InputError) as err:
        tensorboard_table(tmp_path, score_key=TAG)  # the default layout wants seed_N folders
    message = str(err.value)
    assert "fits the layout '{algorithm}/{task}/seed_{seed}'" in message and "'A/x/run-0'" in message
    table = tensorboard_table(tmp_path, layout="{algorithm}/{task}/run-{seed}", score_key=TAG)
    assert sorted(table.frame["seed"]) == [0, 1]
    # one folder that does not fit next to runs that do: skipped, said on the console and in provenance
    _write(tmp_path / "A" / "x" / "notes", [(0, 5.0)], writer="tensorboard")
    table = tensorboard_table(tmp_path, layout="{algorithm}/{task}/run-{seed}", score_key=TAG)
    assert [s["run_id"] for s in table.source["skipped"]] == ["A/x/notes"]
    assert any("'A/x/notes'" in w for w in table.warnings)


def test_a_tag_no_run_has_names_the_runs(tmp_path):
    for seed in range(2):
        _write(tmp_path / "A" / "x" / f"seed_{seed}", [(0, 1.0)], writer="tensorboardX")
    with pytest.raises(InputError, match=r"lack eval/retrun: .*A/x/seed_0"):  # the tag as given
        tensorboard_table(tmp_path, score_key="eval/retrun")


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("", "is empty"),
        ("{algorithm}/{task}", "has no {seed}"),
        ("{algorithm}{task}/{seed}", "nothing between them"),
        ("{algorithm}/../{task}/{seed}", "'..'"),
        ("{algo rithm}/{task}/{seed}", "not a name"),
        ("{algorithm}/{task}/{seed}/{seed}", "names seed twice"),
        ("{algorithm/{task}/{seed}", "unbalanced"),
    ],
)
def test_bad_layouts_are_refused(pattern, why, tmp_path):
    with pytest.raises(InputError, match=__import__("re").escape(why)):
        tensorboard_table(tmp_path, layout=pattern, score_key=TAG)


def test_names_from_paths_stay_values_and_ambiguity_is_refused():
    layout = parse_layout("{algorithm}-{task}/{seed}")
    assert layout.match("PPO-Pong/7") == {"algorithm": "PPO", "task": "Pong", "seed": 7}
    with pytest.raises(InputError, match="fits layout .* in two ways"):
        layout.match("PP-O-Pong/7")
    assert parse_layout("{algorithm}/{task}/{seed}").match("1e3/x/0") == {"algorithm": "1e3", "task": "x", "seed": 0}


def test_a_record_that_is_no_event_is_named(tmp_path):
    """Framing and checksums intact, payload not an Event (a foreign file named like an event file)."""
    from tests.trackers.tensorboard.records import record

    _write(tmp_path / "A" / "x" / "seed_0", [(0, 1.0)], writer="tensorboard")
    (tmp_path / "A" / "x" / "seed_1").mkdir()
    # a tag's bytes in the payload, so the reader parses it
    (tmp_path / "A" / "x" / "seed_1" / "events.out.tfevents.1.host").write_bytes(record(b"\xff" + TAG.encode()))
    with pytest.raises(InputError, match=r"seed_1/events\.out\.tfevents\.1\.host' is damaged at byte 0: the record "):
        tensorboard_table(tmp_path, score_key=TAG)


# ---------------------------------------------------------------------------- rl-reliable tensorboard (the plugin)
FLAGS = ["--reps", "200", "--profile-reps", "100", "--improvement-reps", "100", "--seed", "0"]
TABLES = ("aggregates.csv", "per_task.csv", "differences.csv", "improvement.csv", "profiles.csv", "ranks.csv")


def test_the_command_writes_the_tables_of_evaluate_on_the_csv(logs, tmp_path):
    """``rl-reliable tensorboard`` on the event files and ``rl-reliable evaluate`` on the CSV of the same scores
    write byte-identical tables (sweep view and learning curves included)."""
    from rl_reliable_logger.cli.main import main

    both = [*FLAGS, "--hyperparameter-keys", "lr", "--curves", "--curve-reps", "100", "--quiet", "--no-figures"]
    tb = ["tensorboard", str(logs["logdir"]), "--layout", LAYOUT, "--score-key", TAG]
    assert main([*tb, *both, "--out", str(tmp_path / "tb")]) == 0
    assert main(["evaluate", str(logs["csv"]), *both, "--out", str(tmp_path / "csv")]) == 0
    for name in (*TABLES, "tuning.csv", "curves.csv"):
        assert (tmp_path / "tb" / name).read_bytes() == (tmp_path / "csv" / name).read_bytes(), name
    assert (tmp_path / "tb" / "curves.csv").stat().st_size > 100


def test_the_command_names_a_bad_layout_and_a_damaged_file(tmp_path, capsys):
    from rl_reliable_logger.cli.main import main

    for seed in range(2):
        _write(tmp_path / "A" / "x" / f"seed_{seed}", [(0, 1.0), (1, 2.0 + seed)], writer="tensorboardX")
    assert main(["tensorboard", str(tmp_path), "--layout", "{algorithm}/{task}", "--score-key", TAG]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--layout '{algorithm}/{task}' has no {seed}" in err

    damaged = next((tmp_path / "A" / "x" / "seed_1").glob("*tfevents*"))
    damaged.write_bytes(damaged.read_bytes()[:-5])
    assert main(["tensorboard", str(tmp_path), "--score-key", TAG, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(damaged) in err and "--drop-invalid" in err
