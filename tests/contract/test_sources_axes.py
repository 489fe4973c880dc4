"""The Source half of the contract battery, along the axes issue 54 found it never varied: numbers no float holds and
their digit counts, keys written twice, CSV field sizes and ragged rows, array types and zip features, tensors,
folder depth, configuration values a CSV reader treats as missing, configurations whose labels print alike, a run
killed before its budget and a seed trained twice. Every registered Source plugin (and ``file``, the CSV path of
``rl-reliable evaluate``) is attacked by its own writer (``source_corpus.py``); a kind of damage its format cannot
carry is skipped with the reason its entry in ``CANNOT`` gives, so a plugin added later is covered by construction.
"""

from __future__ import annotations

import pytest

from rl_reliable_logger.trackers import registry
from tests.contract.source_corpus import CANNOT, SPOILERS, SPOILS, Run, write
from tests.contract.test_sources import FAST, SOURCES, _grid, _history_flags, _main, _one_sentence, _subprocess, _table
from tests.support.deep import nested

pytest.importorskip("mlflow")
pytest.importorskip("wandb")
pytest.importorskip("tensorboardX")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_every_source_says_which_damage_its_format_carries():
    missing = [name for name in [*registry.names(), "file"] if name not in SPOILERS or name not in CANNOT]
    assert not missing, f"add a spoiler and a reason to tests/contract/source_corpus.py for {missing}"
    for name, spoilers in SPOILERS.items():
        assert set(spoilers) <= set(SPOILS), name


# ---------------------------------------------------------------------------- damaged data files
@pytest.mark.parametrize("kind", SPOILS)
@pytest.mark.parametrize("source", SOURCES)
def test_damage_a_format_can_carry_is_one_sentence_naming_the_file(source, kind, tmp_path):
    spoiler = SPOILERS[source].get(kind)
    if spoiler is None:
        pytest.skip(f"{source}: {CANNOT[source]}")
    corpus = write(source, tmp_path / "corpus", _grid())
    victim = spoiler(corpus, kind)
    code, err = _subprocess(corpus.argv(*FAST, *_history_flags(source)))
    assert code == 2 and "Traceback" not in err, err
    line = _one_sentence(err)
    named = victim.name if source != "wandb" else victim.stem.removeprefix("run-")  # W&B names the run
    assert named in line, line


@pytest.mark.parametrize("source", SOURCES)
def test_1100_nested_folders_beside_the_runs_neither_recurse_nor_change_the_scores(source, tmp_path):
    corpus = write(source, tmp_path / "corpus", _grid())
    before = sorted(_table(source, corpus)["score"])
    with nested(corpus.folder, 1100) as deep:
        if source != "file":  # a copy of a data file at the bottom: read or skipped, never a RecursionError
            (deep / corpus.files[0].name).write_bytes(corpus.files[0].read_bytes())
        code, err = _subprocess(corpus.argv(*FAST, *_history_flags(source)))
        assert "RecursionError" not in err and "Traceback" not in err, err
        if code == 0:
            assert sorted(_table(source, corpus)["score"]) == before
        else:  # e.g. marl-eval reads every *.json: the copy is the same seeds again, refused as such
            assert code == 2 and "a/a/a" in _one_sentence(err) or "duplicate seed" in _one_sentence(err), err


# ---------------------------------------------------------------------------- configuration values
@pytest.mark.parametrize("source", SOURCES)
def test_configuration_values_a_csv_reader_treats_as_missing_stay_values(source, tmp_path):
    """``None``, ``null`` and ``NA`` are three configurations (pandas read all three as one NaN), beside ``0.1``."""
    runs = [r for lr in ("0.1", "None", "null", "NA") for r in _grid(lr=lr)]
    corpus = write(source, tmp_path / "corpus", runs)
    frame = _table(source, corpus, "--hyperparameter-keys", "lr")
    assert len(frame) == 24
    assert sorted(map(str, frame["lr"].unique())) == ["0.1", "NA", "None", "null"], frame["lr"].unique()


@pytest.mark.parametrize("source", SOURCES)
def test_configurations_whose_labels_print_alike_are_two(source, tmp_path, capsys):
    """``lr="1, b=2", b=3`` and ``lr=1, b="2, b=3"`` print as one label ``lr=1, b=2, b=3``: they are two
    configurations of 6 runs each, never a duplicate seed advising the flag already given."""
    runs = _grid(lr="1, b=2", b="3") + _grid(lr="1", b="2, b=3")
    corpus = write(source, tmp_path / "corpus", runs)
    frame = _table(source, corpus, "--hyperparameter-keys", "lr,b")
    assert len(frame) == 12
    pairs = {(str(lr), str(b)) for lr, b in zip(frame["lr"], frame["b"])}
    assert len(pairs) == 2 and {lr for lr, _ in pairs} >= {"1, b=2"}, pairs
    code, err = _main([*corpus.argv(*FAST), "--hyperparameter-keys", "lr,b"], capsys)
    assert code == 0, err


# ---------------------------------------------------------------------------- budgets and reruns
@pytest.mark.parametrize("source", SOURCES)
def test_a_run_killed_before_its_budget_is_found_without_curves(source, tmp_path, capsys):
    """Seed 0 of A reported 2 of the others' 3 times: ``budget.short_runs`` (``--strict`` refuses) wherever the
    source knows the steps (with a score rule that reads the history where histories are read only for it)."""
    if source == "file":
        pytest.skip("a score file of final scores has no steps")
    runs = [
        Run(r.algorithm, r.task, r.seed, r.score, reports=2 if (r.algorithm, r.seed) == ("A", 0) else 3)
        for r in _grid()
    ]
    corpus = write(source, tmp_path / "corpus", runs)
    code, err = _main(corpus.argv(*FAST, *_history_flags(source)), capsys)
    assert (
        code == 0
        and "protocol warning: 1 run stops before the budget of their cell" in err
        and "[budget.short_runs;" in err
    ), err
    code, err = _main(corpus.argv(*FAST, *_history_flags(source), "--strict"), capsys)
    assert code == 2 and "budget.short_runs" in _one_sentence(err), err


@pytest.mark.parametrize("source", SOURCES)
def test_a_rerun_is_refused_unless_told_which_run_to_keep(source, tmp_path, capsys):
    """Seed 0 of A trained again (``run`` 2 beside 1), after the others: refused by default and with
    ``--drop-invalid``; ``--reruns latest`` keeps the rerun and ``first`` the first run, each said."""
    runs = _grid(run="1") + [Run("A", "x", 0, 0.9, config=(("run", "2"),))]
    corpus = write(source, tmp_path / "corpus", runs)
    code, err = _main(corpus.argv(*FAST), capsys)
    line = _one_sentence(err)
    assert code == 2 and "duplicate seed" in line, line
    if source == "file":  # a score file's rows carry no start time: --drop-invalid drops both (which one is right
        # cannot be told from the file, and keeping the first would depend on the order of the rows), and says so
        code, err = _main(corpus.argv(*FAST, "--drop-invalid"), capsys)
        assert code == 0 and len(_table(source, corpus, "--drop-invalid")) == 5, err
        return
    assert "--reruns latest" in line, line
    code, err = _main(corpus.argv(*FAST, "--drop-invalid"), capsys)
    assert code == 2 and "duplicate seed" in _one_sentence(err), err  # dropping never picks one of a seed's runs
    for rule, kept in (("latest", 0.9), ("first", 0.0)):
        code, err = _main(corpus.argv(*FAST, "--reruns", rule), capsys)
        assert code == 0 and f"(--reruns {rule})" in err and "left out" in err, err
        frame = _table(source, corpus, "--reruns", rule)
        mine = frame[(frame["algorithm"] == "A") & (frame["seed"].astype(str) == "0")]
        assert mine["score"].tolist() == pytest.approx([kept], abs=1e-6), mine  # TensorBoard: float32
