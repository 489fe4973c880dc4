"""The small drift of issue 26, each held by a message test: one word list, one default per option on both
trackers, flags (not Python keywords) in everything a command writes."""

from __future__ import annotations

import pandas as pd
import pytest

from rl_reliable_logger.cli.main import build_parser
from rl_reliable_logger.data.counts import fixed
from tests.support.cli import run_cli

FAST = ["--seed", "0", "--reps", "200", "--profile-reps", "100", "--improvement-reps", "100"]


def _help(command: str) -> str:
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    return sub.format_help()


def test_each_tracker_help_quotes_its_own_field_kinds():
    assert "--variant-key params.lr" in _help("mlflow") and "config." not in _help("mlflow")
    assert "--variant-key config.lr" in _help("wandb") and "params." not in _help("wandb")


def test_force_publish_is_the_same_flag_on_both_trackers():
    for command in ("mlflow", "wandb"):
        actions = {
            a.dest: a
            for a in build_parser()._subparsers._group_actions[0].choices[command]._actions
            if a.option_strings
        }
        assert (
            actions["force_publish"].option_strings == ["--force-publish"] and actions["force_publish"].default is False
        )


def test_no_negative_zero_in_printed_numbers():
    assert [fixed(-0.0001), fixed(-0.0), fixed(-0.0006), fixed(0.25, 1)] == ["0.000", "0.000", "-0.001", "0.2"]


@pytest.fixture()
def unequal_csv(tmp_path):
    """B has fewer runs per task than A (a protocol warning) and near-zero differences."""
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": 1.0 + s * 1e-5}
        for a, n in (("A", 5), ("B", 3))
        for t in ("x", "y")
        for s in range(n)
    ]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_quiet_prints_each_warning_once_prefixed_once(unequal_csv, capsys):
    code, _, err = run_cli(capsys, "evaluate", unequal_csv, *FAST, "--quiet")
    assert code == 0, err
    assert "protocol warning: algorithms have different numbers of runs" in err and "[runs.unequal;" in err
    assert "warning: protocol warning" not in err
    code, out, err = run_cli(capsys, "evaluate", unequal_csv, *FAST)
    assert "warning: protocol warning" not in out + err and "-0.000" not in out


def test_already_normalized_scores_are_kept_and_not_warned_about(unequal_csv):
    from rl_reliable_logger.analysis.evaluation import evaluate
    from rl_reliable_logger.data.scores import ScoreTable

    table = ScoreTable.from_csv(unequal_csv)
    raw = evaluate(table, reps=200, profile_reps=100, improvement_reps=100)
    kept = evaluate(table, normalize="already-normalized", reps=200, profile_reps=100, improvement_reps=100)
    pd.testing.assert_frame_equal(raw.aggregates, kept.aggregates)
    assert any("not normalised" in w for w in raw.warnings)
    assert not any("not normalised" in w for w in kept.warnings)
    assert kept.provenance["normalization"] == "score normalised by the training code (kept as logged)"


def test_the_mlflow_example_marks_its_scores_as_normalised():
    import importlib.util

    from tests.support.paths import REPO

    spec = importlib.util.spec_from_file_location("aggregate", REPO / "integrations" / "mlflow" / "aggregate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = module.build_cli_args("e", "", "", 100, 0, "", None)
    assert argv[argv.index("--normalize") + 1] == "already-normalized"
    build_parser().parse_args(argv)  # a valid command line


def test_mlflow_description_is_the_librarys_and_force_publish_makes_a_new_run(tmp_path, capsys):
    mlflow = pytest.importorskip("mlflow")
    from tests.support.mlflow_store import convention, log_run, make_store

    uri = make_store(tmp_path)
    client = mlflow.MlflowClient(uri)
    exp = client.create_experiment("drift")
    for alg in ("A", "B"):
        for seed in range(3):
            log_run(client, exp, f"{alg}-{seed}", tags=convention(alg, "x", seed),
                    metrics={"rl_reliable_final_score": seed + (alg == "B")})  # fmt: skip
    log_run(client, exp, "A-9", tags=convention("A", "x", 9), metrics={"rl_reliable_final_score": 1.0}, status=None)
    argv = ["mlflow", "--tracking-uri", uri, "--experiment", "drift", *FAST, "--no-figures", "--quiet"]
    for extra in ([], [], ["--force-publish"]):
        code, _, err = run_cli(capsys, *argv, *extra)
        assert code == 0, err
    runs = client.search_runs([exp], "tags.rl_reliable.role = 'analysis'")
    assert len(runs) == 2  # the second publish reused the first run; --force-publish made a new one
    for run in runs:
        note = run.data.tags["mlflow.note.content"]
        # the library's text, the same whoever publishes (issue 31): the console alone speaks flags
        assert "pass `include_unfinished=True` to use them" in note, note  # a code span, not a flag
    assert "--include-unfinished" in err


def test_counted_words_come_from_the_one_word_list():
    """No message writes ``run(s)`` or ``4-5`` after a count: ``data.counts.plural``/``agree``/``span`` say it."""
    import re

    from tests.support.paths import REPO

    counted = re.compile(r"\}\s(?:\w+\s)?(?:run|task|algorithm|cell|seed|row|step|configuration)\(s\)")
    dashed = re.compile(r"\{\w+\}-\{\w+\} runs")
    offenders = [
        f"{path.relative_to(REPO)}:{n}"
        for path in (REPO / "rl_reliable_logger").rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if counted.search(line) or dashed.search(line)
    ]
    assert offenders == []


def test_every_option_both_trackers_have_has_one_default():
    """An option of ``rl-reliable mlflow`` and ``rl-reliable wandb`` means the same and defaults the same on both
    (field references excepted: each tracker's own convention); ``--publish`` unset publishes a new analysis run
    on both (W&B attaches it to the sweep when the runs share one)."""

    def defaults(command: str) -> dict[str, object]:
        parser = build_parser()._subparsers._group_actions[0].choices[command]
        return {a.option_strings[0]: a.default for a in parser._actions if a.option_strings}

    mlflow, wandb = defaults("mlflow"), defaults("wandb")
    fields = {"--algorithm-key", "--task-key", "--seed-key", "--score-key", "--filter"}
    shared = (set(mlflow) & set(wandb)) - fields
    assert {"--force-publish", "--publish", "--include-unfinished", "--score-rule", "--retry-for"} <= shared
    assert {flag: mlflow[flag] for flag in shared} == {flag: wandb[flag] for flag in shared}

    from rl_reliable_logger.trackers.mlflow.plugin import publish_target as _publish_target

    args = build_parser().parse_args(["mlflow", "--experiment", "e"])
    assert _publish_target(args) == ("new", None)  # W&B's default: tests/trackers/wandb/test_wandb_online.py
