"""The shared option set: one definition, the library's defaults, errors that speak flags, fast --help."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from rl_reliable_logger.analysis.declared import declared
from rl_reliable_logger.analysis.options import AnalysisOptions
from rl_reliable_logger.cli.flags import ANALYSIS_FLAGS, SOURCE_FLAGS, as_flags
from rl_reliable_logger.cli.main import build_parser, main
from rl_reliable_logger.cli.options import analysis_options
from rl_reliable_logger.wording import kw, said
from tests.support.cli import run_cli
from tests.support.imports import modules_loaded

FAST = ["--reps", "300", "--profile-reps", "100", "--improvement-reps", "100", "--quiet"]


@pytest.fixture()
def scores_csv(tmp_path):
    rows = []
    for alg, shift in (("PPO", 0.0), ("SAC", 0.5)):
        for task in ("Hopper", "Walker"):
            for seed in range(4):
                rows.append(
                    {
                        "algorithm": alg,
                        "task": task,
                        "seed": seed,
                        "lr": [0.1, 0.01][seed % 2],
                        "score": shift + seed * 0.1 + (task == "Walker"),
                    }
                )
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_no_flag_given_is_every_library_default():
    args = build_parser().parse_args(["evaluate", "x.csv"])
    assert analysis_options(args) == AnalysisOptions()


@pytest.mark.parametrize("command", ["evaluate", "mlflow", "wandb"])
def test_analysing_subcommands_share_every_flag(command):
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    flags = set(sub._option_string_actions)
    missing = [decl.flag for _, decl in declared(AnalysisOptions) if decl.flag and decl.flag not in flags]
    assert not missing, (command, missing)
    assert {"--out", "--no-figures", "--quiet", "--drop-invalid", "--seed", "--reps", "--compare-all"} <= flags


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--ci", "1.5"], "--ci 1.5 reads as a 1.5% interval; levels below 50% are refused"),
        (["--ci", "100"], "percentage in (1, 100)"),
        (["--gamma", "nan"], "--gamma must be finite"),
        (["--gamma", "-1"], "--gamma must be finite and positive"),
        (["--reps", "0"], "--reps must be a positive integer"),
        (["--reps", "100000000000000"], "largest feasible --reps is"),
        (["--metrics", "iqm,iqmm"], "--metrics: unknown metric 'iqmm'"),
        (["--delta", "1.5"], "--delta must be between 0 and 1"),
        (["--method", "studentized"], "--method 'studentized' is not an interval method; choose one of percentile"),
        (["--jordan-ci", "exact"], "--jordan-ci 'exact' is not a Jordan interval method; choose one of pbp"),
        (["--rank-by", "task"], "--rank-by 'task' is not a rank definition; choose one of runs, task-means"),
        (
            ["--only-algorithms", "PPO,TD3"],
            "--only-algorithms names 'TD3', which the scores do not have; the algorithms are: 'PPO', 'SAC'",
        ),
        (["--only-tasks", "hopper"], "--only-tasks names 'hopper'"),
        (["--curves"], "--curves needs per-step scores"),
    ],
)
def test_bad_options_exit_2_with_one_line_naming_the_flag(scores_csv, capsys, flags, expected):
    code, out, err = run_cli(capsys, "evaluate", scores_csv, *FAST, *flags)
    assert code == 2, err
    assert expected in err and "Traceback" not in err and err.count("\n") == 1
    assert "=" not in err.split("error: ", 1)[1].split(" ", 1)[0]  # a flag, not keyword=value


def test_seed_defaults_to_0_recorded_and_printed(scores_csv, tmp_path, capsys):
    out1, out2 = tmp_path / "a", tmp_path / "b"
    assert main(["evaluate", str(scores_csv), *FAST, "--out", str(out1), "--no-figures"]) == 0
    assert main(["evaluate", str(scores_csv), *FAST, "--out", str(out2), "--no-figures", "--seed", "0"]) == 0
    assert (out1 / "aggregates.csv").read_bytes() == (out2 / "aggregates.csv").read_bytes()
    assert json.loads((out1 / "provenance.json").read_text())["seed"] == 0
    code, out, _ = run_cli(capsys, "evaluate", scores_csv, *FAST[:-1], "--ci", "99.5")
    assert code == 0 and "99.5% intervals (method bootstrap-t)" in out and "seed 0" in out


def test_selection_jordan_and_tuning_from_the_command_line(scores_csv, tmp_path, capsys):
    out = tmp_path / "res"
    code, _, err = run_cli(
        capsys,
        "evaluate",
        scores_csv,
        *FAST,
        "--only-algorithms",
        "SAC",
        "--only-algorithms",
        "PPO",
        "--jordan",
        "--jordan-ci",
        "pbp-t",
        "--hyperparameter-keys",
        "lr",
        "--out",
        out,
        "--no-figures",
    )
    assert code == 0, err
    assert set(pd.read_csv(out / "aggregates.csv")["algorithm"]) == {"SAC", "PPO"}
    assert list(pd.read_csv(out / "jordan.csv")["method"].unique()) == ["pbp-t"]
    assert (out / "tuning.csv").exists()
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["options"]["only_algorithms"] == ["SAC", "PPO"] and prov["options"]["hyperparameter_keys"] == ["lr"]


@pytest.mark.parametrize("command", ["evaluate", "mlflow", "wandb", "report"])
def test_help_teaches_with_examples(command):
    proc = subprocess.run(
        [sys.executable, "-m", "rl_reliable_logger", command, "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    examples = proc.stdout.split("examples:", 1)[1]
    assert sum(line.startswith(f"  rl-reliable {command} ") for line in examples.splitlines()) >= 2


def test_help_loads_no_heavy_library():
    code = (
        "import contextlib, io\n"
        "from rl_reliable_logger.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main(['evaluate', '--help'])\n"
        "    except SystemExit: pass\n"
    )
    assert modules_loaded(code, ("numpy", "pandas", "scipy", "matplotlib", "mlflow", "wandb"), timeout=60) == []


def test_tracker_fields_reads_references_of_every_kind():
    from rl_reliable_logger.cli import common

    assert common.tracker_fields(["params.lr", "lr", "config.clip"]) == {
        "params.lr": "params.lr",
        "config.clip": "config.clip",
    }


def test_library_messages_in_flag_words():
    assert as_flags(said(kw("jordan_delta=2"), " is bad"), analysis=True) == "--delta 2 is bad"
    # one word, two meanings: the seed field of a source vs the random seed of an analysis
    assert as_flags(said(kw("seed="), " names no field")) == "--seed-key names no field"
    assert as_flags(said(kw("seed=-1"), " is negative"), analysis=True) == "--seed -1 is negative"
    assert as_flags(said(kw("curves=True"), " need steps"), analysis=True) == "--curves need steps"
    assert as_flags(said(kw("unknown="), " stays")) == "`unknown=` stays"
    assert SOURCE_FLAGS["algorithms="] == ANALYSIS_FLAGS["only_algorithms="]  # same flag, source and analysis


def test_an_edited_bundle_is_replaced_only_with_force(scores_csv, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["evaluate", str(scores_csv), *FAST, "--out", str(out), "--no-figures"]) == 0
    (out / "aggregates.csv").write_text("edited by hand\n")
    code, _, err = run_cli(capsys, "evaluate", scores_csv, *FAST, "--out", out, "--no-figures")
    assert code == 2 and "--force" in err and "force=True" not in err
    assert (out / "aggregates.csv").read_text() == "edited by hand\n"
    code, _, err = run_cli(capsys, "evaluate", scores_csv, *FAST, "--out", out, "--no-figures", "--force")
    assert code == 0, err
    assert pd.read_csv(out / "aggregates.csv").columns[0] == "algorithm"


def test_file_field_defaults_are_scoretables_step_included():
    import inspect

    from rl_reliable_logger.cli.options import FILE_FIELDS
    from rl_reliable_logger.data.scores import ScoreTable

    params = inspect.signature(ScoreTable).parameters
    assert FILE_FIELDS == {name: params[name].default for name in FILE_FIELDS}
    from rl_reliable_logger.cli.plan import with_source

    assert with_source(["plan", "x.csv"]) == ["plan", "file", "x.csv"] == with_source(["plan", "file", "x.csv"])
    assert with_source(["plan", "mlflow", "--experiment", "e"])[1] == "mlflow"
    for command in (["evaluate", "x.csv"], ["plan", "file", "x.csv"]):
        args = build_parser().parse_args(command)
        assert {name: getattr(args, f"{name}_key") for name in FILE_FIELDS} == FILE_FIELDS, command


def test_a_step_column_named_step_needs_no_flag_on_the_command_line_or_in_python(tmp_path, capsys):
    rows = [
        {"algorithm": a, "task": t, "seed": s, "step": step, "score": s + step / 10 + (a == "B")}
        for a in ("A", "B")
        for t in ("x", "y")
        for s in range(3)
        for step in (0, 10, 20)
    ]
    path = tmp_path / "curves.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    from rl_reliable_logger.data.scores import ScoreTable

    assert ScoreTable.from_csv(path).has_steps
    argv = ["evaluate", path, *FAST, "--curves", "--curve-reps", "100", "--no-figures"]
    code, _, err = run_cli(capsys, *argv, "--out", tmp_path / "auto")
    assert code == 0, err
    code, _, err = run_cli(capsys, *argv, "--step-key", "step", "--out", tmp_path / "named")
    assert code == 0, err
    for name in ("aggregates", "curves"):
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / "auto" / f"{name}.csv"), pd.read_csv(tmp_path / "named" / f"{name}.csv")
        )
    flat = tmp_path / "flat.csv"
    pd.DataFrame(rows).drop(columns=["step"]).drop_duplicates(["algorithm", "task", "seed"]).to_csv(flat, index=False)
    code, _, err = run_cli(capsys, "evaluate", flat, *FAST, "--curves")
    assert code == 2 and "--curves needs per-step scores" in err and "--step-key" in err, err


def test_a_flag_that_acts_only_under_a_switch_is_refused_without_it(tmp_path, capsys):
    """``--curve-reps`` without ``--curves``, ``--delta`` without ``--jordan``: one sentence in flag words, exit 2,
    before any statistics (nothing is written)."""
    from rl_reliable_logger.cli.main import main
    from tests.support.paths import EXAMPLES

    scores = EXAMPLES / "atari100k_scores.csv"
    for flags, expected in (
        (["--curve-reps", "100"], "--curve-reps acts only with --curves: pass it too, or leave --curve-reps out"),
        (["--delta", "0.1"], "--delta acts only with --jordan: pass it too, or leave --delta out"),
        (["--score-range", "0,1"], "--score-range acts only with --jordan"),
    ):
        assert main(["evaluate", str(scores), *flags, "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert not (tmp_path / "out").exists()
        assert err.startswith(f"error: {expected}") and err.count("\n") == 1, err
