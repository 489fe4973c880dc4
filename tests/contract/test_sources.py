"""The Source half of the contract battery (issue 41): the same hostile corpus against every registered Source.

Each case is parametrised over ``trackers.registry.names()`` (read when the tests are collected, so a plugin
registered later is attacked by construction) plus ``file`` (the CSV path of ``rl-reliable evaluate``), and
its corpus is written by that tracker's own writer (``tests/contract/source_corpus.py``): FIFOs and symlink loops
in place of data files, truncated and corrupt files, relative paths, formula / numeric / Arabic-Indic / control
character names, padded seed labels, duplicates across configurations, a run trained twice, unfinished runs,
hyperparameter-key typos and planted pickles. Every case must end in correct output, or one sentence naming the
file, run or flag with exit status 2: never a traceback, a hang, or code run from the folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger.trackers import registry
from tests.contract.source_corpus import WRITERS, Corpus, Run, payload, tune_folder, write
from tests.support.paths import REPO

pytest.importorskip("mlflow")
pytest.importorskip("wandb")
pytest.importorskip("tensorboardX")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SOURCES = [*registry.names(), "file"]
FAST = ["--reps", "100", "--profile-reps", "20", "--improvement-reps", "20", "--seed", "0", "--no-figures", "--quiet"]
#: Arabic-Indic digits zero, zero, seven: a name, never the number 7.
ARABIC_007 = "\u0660\u0660\u0667"


def _grid(
    algorithms: Sequence[str] = ("A", "B"), tasks: Sequence[str] = ("x",), seeds: Sequence = (0, 1, 2), **config
) -> list[Run]:
    items = tuple(sorted(config.items()))
    return [
        Run(a, t, s, round(0.1 * i + 0.5 * j + 0.01 * k, 6), config=items)
        for i, a in enumerate(algorithms)
        for j, t in enumerate(tasks)
        for k, s in enumerate(seeds)
    ]


def _main(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from rl_reliable_logger.cli.main import main

    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().err


def _subprocess(argv: Sequence[str], cwd: Path | None = None, timeout: float = 240) -> tuple[int, str]:
    """The command in its own process: a hang is a failure of the test, not of the test run."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "rl_reliable_logger.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stderr


def _one_sentence(err: str) -> str:
    """The error line of exit status 2: exactly one line, ``error: ...``, no traceback."""
    lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "\x1b" not in err, err
    return lines[0]


def _table(source: str, corpus: Corpus, *extra: str) -> pd.DataFrame:
    """The table the command reads (its own parser and intake: ``cli.trackers.read_table`` / ``read_scores``)."""
    from rl_reliable_logger.cli.common import read_scores
    from rl_reliable_logger.cli.main import build_parser
    from rl_reliable_logger.cli.options import analysis_options
    from rl_reliable_logger.cli.trackers import read_table

    args = build_parser().parse_args(corpus.argv(*extra))
    if source == "file":
        return read_scores(Path(corpus.command[1]), args).frame
    plugin = registry.get(source)
    table = read_table(plugin, args, plugin.source.table_options(analysis_options(args)))
    frame = table.frame.copy()
    frame.attrs["warnings"] = list(table.warnings)
    return frame


def _history_flags(source: str) -> list[str]:
    """A score rule that reads every run's history (so each run's own data file is opened)."""
    return [] if source == "file" else ["--score-rule", "mean-last-2"]


# ---------------------------------------------------------------------------- the registry
def test_every_registered_source_has_a_corpus_writer():
    missing = [name for name in registry.names() if name not in WRITERS]
    assert not missing, (
        f"Source plugin(s) {missing} joined the registry without a corpus writer: add one to "
        "tests/contract/source_corpus.py WRITERS (see docs/architecture.md, 'The contract battery')"
    )


# ---------------------------------------------------------------------------- names and seed labels
@pytest.mark.parametrize("source", SOURCES)
def test_names_stay_text_and_seed_labels_stay_as_written(source, tmp_path, capsys):
    runs = _grid(algorithms=("=cmd", "007"), tasks=(ARABIC_007, "t"), seeds=("007", 7))
    corpus = write(source, tmp_path / "corpus", runs)
    frame = _table(source, corpus)
    assert sorted(map(str, frame["algorithm"].unique())) == ["007", "=cmd"]
    assert all(isinstance(a, str) for a in frame["algorithm"]) and all(isinstance(t, str) for t in frame["task"])
    assert sorted(map(str, frame["task"].unique())) == sorted([ARABIC_007, "t"])
    counts = frame.groupby(["algorithm", "task"])["seed"].agg(lambda s: sorted(map(str, s)))
    assert all(seeds == ["007", "7"] for seeds in counts), counts  # padded and plain labels: two seeds
    code, err = _main([*corpus.argv(*FAST), "--out", str(tmp_path / "out")], capsys)
    assert code == 0, err


@pytest.mark.parametrize("source", SOURCES)
def test_control_characters_in_a_name_never_reach_the_console_raw(source, tmp_path, capsys):
    runs = _grid(algorithms=("ok", "bell\x07red\x1b[31m"))
    corpus = write(source, tmp_path / "corpus", runs)
    code, err = _main(corpus.argv(*FAST), capsys)
    assert code in (0, 2) and "\x1b" not in err and "\x07" not in err, err
    if code == 2:
        _one_sentence(err)


# ---------------------------------------------------------------------------- duplicates and configurations
@pytest.mark.parametrize("source", SOURCES)
def test_configurations_are_never_pooled_as_seeds(source, tmp_path, capsys):
    """The docs' ``{algorithm}/lr_{lr}/{task}/{seed}`` case: two learning rates, seeds 0..2 each."""
    runs = _grid(lr="0.1") + [Run(r.algorithm, r.task, r.seed, r.score + 1, config=(("lr", "0.01"),)) for r in _grid()]
    corpus = write(source, tmp_path / "corpus", runs)
    code, err = _main(corpus.argv(*FAST), capsys)
    assert code == 2
    line = _one_sentence(err)
    assert "duplicate seed" in line and "--hyperparameter-keys lr" in line, line
    frame = _table(source, corpus, "--hyperparameter-keys", "lr")
    assert len(frame) == 12 and sorted(map(str, frame["lr"].unique())) == ["0.01", "0.1"]


@pytest.mark.parametrize("source", SOURCES)
def test_a_seed_trained_again_is_not_a_second_seed(source, tmp_path, capsys):
    """Stable-Baselines3's ``PPO_1`` / ``PPO_2``: the same seed trained twice into one place."""
    runs = _grid(run="1") + [Run("A", "x", 0, 0.9, config=(("run", "2"),))]
    corpus = write(source, tmp_path / "corpus", runs)
    code, err = _main(corpus.argv(*FAST), capsys)
    assert code == 2
    line = _one_sentence(err)
    assert "duplicate seed" in line and "0" in line and "run" in line, line


@pytest.mark.parametrize("source", SOURCES)
def test_a_typo_in_the_hyperparameter_keys_is_named(source, tmp_path, capsys):
    corpus = write(source, tmp_path / "corpus", _grid(lr="0.1"))
    code, err = _main(corpus.argv(*FAST, "--hyperparameter-keys", "lrr"), capsys)
    assert code == 2 and "lrr" in _one_sentence(err), err


@pytest.mark.parametrize("source", SOURCES)
def test_a_score_key_no_run_has_is_named_as_given(source, tmp_path, capsys):
    """A TensorBoard tag or a Ray metric is read as ``summary.<tag>``: the error names what was typed."""
    corpus = write(source, tmp_path / "corpus", _grid())
    argv = corpus.argv(*FAST)
    if "--score-key" in argv:
        at = argv.index("--score-key") + 1
        argv[at] += "x"
        given = argv[at]
    else:
        given = "scorex"
        argv += ["--score-key", given]
    try:
        code, err = _main(argv, capsys)
    except SystemExit as stop:  # a source whose scores are a fixed choice (sb3): the parser names the flag
        err = capsys.readouterr().err
        assert stop.code == 2 and f"argument --score-key: invalid choice: '{given}'" in err, err
        return
    line = _one_sentence(err)
    assert code == 2 and given in line, line
    if "." not in given:  # a bare tag or metric, never named in the source's own reference
        assert f"summary.{given}" not in line, line


# ---------------------------------------------------------------------------- run states
@pytest.mark.parametrize("source", SOURCES)
def test_unfinished_runs_are_left_out_and_listed(source, tmp_path, capsys):
    if not getattr(WRITERS[source], "states", False):
        pytest.skip(f"{source} stores no run state")
    runs = [*_grid(), Run("A", "x", 3, 5.0, state="running")]
    corpus = write(source, tmp_path / "corpus", runs)
    frame = _table(source, corpus)
    assert len(frame) == 6 and 5.0 not in set(frame["score"])
    assert any("left out 1 unfinished" in w for w in frame.attrs["warnings"]), frame.attrs["warnings"]
    code, err = _main(corpus.argv(*FAST), capsys)
    assert code == 0 and "left out 1 unfinished" in err, err
    if "--include-unfinished" in err:  # the opt-in the message names is one the command has
        assert len(_table(source, corpus, "--include-unfinished")) == 7


@pytest.mark.parametrize("command", ["watch", "race"])
@pytest.mark.parametrize("source", SOURCES)
def test_a_launch_never_repeats_the_seed_of_an_unfinished_run(source, command, tmp_path, capsys):
    """A run still running (or pending) keeps its seed: launched again by a watch or a race, it would be a
    duplicate seed (an error at the next look) once both finish. A race's cells are configurations (lr A, lr B)."""
    if not getattr(WRITERS[source], "states", False):
        pytest.skip(f"{source} stores no run state")
    noise = [0.3, -0.2, 0.1, -0.4, 0.2, 0.0]  # A and B alike: undecided at look 1, so runs are launched

    def run(unit: str, task: str, seed: int, score: float, state: str = "finished") -> Run:
        return (
            Run(unit, task, seed, score, state)
            if command == "watch"
            else Run("P", task, seed, score, state, (("lr", unit),))
        )

    runs = [
        run(a, t, s, noise[(i + s + j) % 6]) for i, a in enumerate("AB") for j, t in enumerate("xy") for s in range(3)
    ]
    runs += [run("A", "x", 3, 5.0, state="running"), run("B", "y", 4, 5.0, state="running")]
    corpus = write(source, tmp_path / "corpus", runs)
    state = tmp_path / "state"
    design = ["--state", str(state), "--looks", "3", "--max-runs", "9", "--reps", "200"]
    design += ["--futility", "0"] if command == "watch" else ["--hyperparameter-keys", "lr", "--delta", "0"]
    publish = ["--publish", "none"] if source in ("mlflow", "wandb") else []  # nothing written to the tracker
    code, err = _main([command, *corpus.command, *design, *publish], capsys)
    assert code == 3, err
    launched = pd.read_csv(state / "runs.csv", dtype=str)
    unit = "algorithm" if command == "watch" else "lr"
    seeds = {cell: set(group["seed"]) for cell, group in launched.groupby([unit, "task"])}
    assert seeds[("A", "x")] and "3" not in seeds[("A", "x")] and "4" in seeds[("A", "x")], seeds
    assert seeds[("B", "y")] and "4" not in seeds[("B", "y")] and "3" in seeds[("B", "y")], seeds


# ---------------------------------------------------------------------------- files that are no files
def _named(code: int, err: str, path: Path) -> None:
    """Refused in one sentence naming the file (exit 2), or read without it with a warning naming it (exit 0)."""
    assert "Traceback" not in err, err
    assert code in (0, 2), err
    if code == 2:
        assert path.name in _one_sentence(err), err
    else:
        assert path.name in err, err


@pytest.mark.parametrize("source", SOURCES)
def test_a_fifo_in_place_of_a_data_file_is_refused_without_blocking(source, tmp_path):
    corpus = write(source, tmp_path / "corpus", _grid())
    victim = corpus.files[0]
    victim.unlink()
    os.mkfifo(victim)
    code, err = _subprocess(corpus.argv(*FAST, *_history_flags(source)))
    _named(code, err, victim)


@pytest.mark.parametrize("source", SOURCES)
def test_a_symlink_loop_in_place_of_a_data_file_is_named(source, tmp_path):
    corpus = write(source, tmp_path / "corpus", _grid())
    victim = corpus.files[0]
    victim.unlink()
    os.symlink(victim.name, victim)  # a link to itself
    code, err = _subprocess(corpus.argv(*FAST, *_history_flags(source)))
    _named(code, err, victim)


@pytest.mark.parametrize("source", SOURCES)
def test_a_folder_symlink_loop_is_not_followed(source, tmp_path, capsys):
    corpus = write(source, tmp_path / "corpus", _grid())
    before = _table(source, corpus)
    os.symlink(".", corpus.folder / "loop")
    os.symlink("..", corpus.files[0].parent / "up")
    code, err = _subprocess(corpus.argv(*FAST, *_history_flags(source)))
    assert code == 0, err
    after = _table(source, corpus)
    assert sorted(after["score"]) == sorted(before["score"])


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_damaged_data_file_is_named(source, damage, tmp_path, capsys):
    runs = _grid()
    corpus = write(source, tmp_path / "corpus", runs)
    victim = corpus.files[0]
    data = victim.read_bytes()
    if damage == "truncated":
        victim.write_bytes(data[: len(data) // 2])
    else:
        middle = len(data) // 2
        victim.write_bytes(data[:middle] + bytes(range(256))[:64] + data[middle + 64 :])
    code, err = _main(corpus.argv(*FAST, *_history_flags(source)), capsys)
    if source == "file" and damage == "truncated" and code == 0:
        return  # a CSV cut between rows is a smaller CSV: nothing tells it apart
    if code == 0 and victim.name not in err:  # the damage missed the data (a free page of a database)
        assert sorted(_table(source, corpus)["score"]) == sorted(r.score for r in runs), err
        return
    _named(code, err, victim)


# ---------------------------------------------------------------------------- paths
@pytest.mark.parametrize("source", SOURCES)
def test_a_relative_path_reads_what_the_absolute_one_reads(source, tmp_path, monkeypatch, capsys):
    corpus = write(source, tmp_path / "corpus", _grid())
    absolute = _table(source, corpus)
    monkeypatch.chdir(tmp_path)
    relative = Corpus([arg.replace(f"{tmp_path}/", "") for arg in corpus.command], corpus.files, corpus.folder)
    assert relative.command != corpus.command
    frame = _table(source, relative)
    assert sorted(frame["score"]) == sorted(absolute["score"])
    code, err = _main(relative.argv(*FAST, *_history_flags(source)), capsys)
    assert code == 0, err


# ---------------------------------------------------------------------------- pickles
def _plant(folder: Path, marker: Path) -> None:
    """Payload pickles under every name a tracker keeps pickles (and a few more), in every folder."""
    for sub in [folder, *[p for p in folder.rglob("*") if p.is_dir() and not p.is_symlink()]]:
        for name in ("tuner.pkl", "params.pkl", "error.pkl", "state.pkl", "trainer_state.pkl"):
            (sub / name).write_bytes(payload(marker))


@pytest.mark.parametrize("source", SOURCES)
def test_planted_pickles_are_never_loaded(source, tmp_path, capsys):
    marker = tmp_path / "EXECUTED"
    runs = [*_grid(), Run("B", "x", 3, 0.3, state="error")]
    if source == "raytune":  # where Tune keeps pickles: tuner, params, an ERROR trial's error, config, storage
        keys = ("tuner", "params", "error", "config", "storage")
        files = tune_folder(tmp_path / "corpus", runs, pickled={key: payload(marker) for key in keys})
        corpus = Corpus(["raytune", str(tmp_path / "corpus"), "--score-key", "score"], files, tmp_path / "corpus")
    else:
        corpus = write(source, tmp_path / "corpus", runs if WRITERS[source].states else runs[:-1])
    _plant(corpus.folder, marker)
    for extra in (
        [],
        _history_flags(source),
        ["--include-unfinished"] if source in ("mlflow", "wandb", "raytune") else [],
    ):
        code, err = _main(corpus.argv(*FAST, *extra), capsys)
        assert not marker.exists(), f"a pickle was loaded ({' '.join(extra)}): {err}"
        assert code in (0, 2) and "Traceback" not in err, err
    if source == "raytune":
        assert "stored only as a pickle" in err and "pickled_config" in err, err
