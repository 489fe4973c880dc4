"""Messages as data (``rl_reliable_logger.wording``): an error or warning keeps the keywords it names and is put
into words once, by the edge that prints it: the library's keywords in ``str(err)``, the running command's flags on
the command line, and a keyword the command has no flag for left as the keyword. No sentence is rewritten."""

from __future__ import annotations

import ast
import pickle
import warnings
from pathlib import Path

import pytest

from rl_reliable_logger.cli.flags import as_flags, cli_message, command_flags
from rl_reliable_logger.cli.main import build_parser
from rl_reliable_logger.errors import InputError, ReliabilityWarning, TrackerError
from rl_reliable_logger.trackers.base.clients import client_key
from rl_reliable_logger.wording import Field, Keyword, Said, kw, message_of, said
from tests.support.cli import run_cli

PACKAGE = Path(__file__).resolve().parents[2] / "rl_reliable_logger"


def _parser(*argv: str):
    return build_parser().parse_args(list(argv)).command_parser


def test_the_library_reads_keywords_and_the_command_line_its_flags():
    err = InputError(said("pass ", kw("include_unfinished=True"), " or ", Keyword("ci", "1.5"), " again"))
    assert str(err) == "pass `include_unfinished=True` or `ci=1.5` again"  # the library's words, as before
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert cli_message(err) == "pass --include-unfinished or --ci 1.5 again"


def test_a_keyword_the_command_has_no_flag_for_stays_the_keyword():
    """``rl-reliable tensorboard`` takes no ``--algorithm-key``: its message names the keyword, not a flag it
    would reject; the same message under ``evaluate`` names the flag."""
    message = said("name it with ", kw("algorithm="), " and ", kw("score="))
    with command_flags(_parser("tensorboard", "logs", "--score-key", "r")):
        assert as_flags(message) == "name it with `algorithm=` and --score-key"
    with command_flags(_parser("evaluate", "x.csv")):
        assert as_flags(message) == "name it with --algorithm-key and --score-key"


def test_text_that_only_looks_like_a_keyword_is_never_rewritten():
    """Backticks in a message's text (a shell command, a name a user gave) are text: only the message's Keyword
    parts become flags (the earlier regex turned any backticked ``reps=`` in a sentence into ``--reps``)."""
    err = InputError(said("run named `reps=3` failed; raise ", kw("reps=")))
    assert cli_message(err) == "run named `reps=3` failed; raise --reps"


def test_a_client_option_is_a_client_kwargs_key_in_the_library_and_a_flag_on_the_command_line():
    uri = client_key("tracking_uri")
    message = said("point ", uri, " at the store")
    assert str(message) == "point `client_kwargs['tracking_uri']` at the store"
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert as_flags(message) == "point --tracking-uri at the store"
    with command_flags(_parser("tensorboard", "logs", "--score-key", "r")):  # no such flag there: the key
        assert as_flags(message) == "point `client_kwargs['tracking_uri']` at the store"


def test_mlflow_names_its_tracking_uri_as_each_edge_takes_it(tmp_path, capsys):
    """A missing MLflow database: the Source's error names its ``client_kwargs`` key, the command line's error
    ``--tracking-uri`` (the same message, put into words twice)."""
    pytest.importorskip("mlflow")
    from rl_reliable_logger.trackers.mlflow.source import MlflowSource

    uri = f"sqlite:///{tmp_path / 'absent' / 'mlflow.db'}"
    with pytest.raises(TrackerError) as caught:
        MlflowSource(["bandits"], client_kwargs={"tracking_uri": uri})
    assert "`client_kwargs['tracking_uri']`" in str(caught.value) and "`tracking_uri=`" not in str(caught.value)
    code, out, err = run_cli(capsys, "mlflow", "--experiment", "bandits", "--tracking-uri", uri)
    assert code == 2 and "--tracking-uri" in err and "client_kwargs" not in err, err


def test_a_field_is_said_in_the_words_the_edge_gives():
    message = said("3 runs lack ", Field("summary.eval/return"), "; pass ", kw("score="))
    assert str(message) == "3 runs lack summary.eval/return; pass `score=`"
    worded = message.with_fields(lambda f: f"tag {f.ref.removeprefix('summary.')}")
    assert str(worded) == "3 runs lack tag eval/return; pass `score=`" and worded.keywords == (Keyword("score"),)


def test_a_warning_keeps_its_message_as_a_line_of_text_and_on_the_console():
    line = said("left out 2 runs; pass ", kw("include_unfinished=True"), " to use them").text()
    assert isinstance(line, Said) and line == "left out 2 runs; pass `include_unfinished=True` to use them"
    assert {line} == {"left out 2 runs; pass `include_unfinished=True` to use them"}  # a line among lines
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.warn(line, ReliabilityWarning, stacklevel=1)
    assert str(seen[0].message) == line
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert cli_message(seen[0].message) == "left out 2 runs; pass --include-unfinished to use them"
    copy = pickle.loads(pickle.dumps(line))  # a line crosses processes (executors) with its message
    assert copy == line and copy.message == line.message


def test_an_error_keeps_its_parts_through_pickling():
    err = InputError(said("raise ", kw("reps=")), ["row 1"])
    copy = pickle.loads(pickle.dumps(err))
    assert str(copy) == "raise `reps=`" and copy.problems == ["row 1"] and copy.message_parts == err.message_parts


def test_an_error_raised_with_a_keyword_prints_its_flag_end_to_end(tmp_path, capsys):
    """A converted message from the intake (a duplicate run) reaches ``error:`` with the command's flags."""
    scores = tmp_path / "s.csv"
    scores.write_text("algorithm,task,seed,score\nA,t,0,1\nA,t,0,2\nB,t,0,1\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "evaluate", scores)
    assert code == 2 and "--drop-invalid" in err and "on_invalid" not in err, err


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
    ]


def test_no_module_outside_the_command_line_edge_renders_flags():
    """Only ``cli/flags.py`` puts a message's keywords into words of its own (``Message.words(keyword=...)``), and
    only ``cli/`` reads the flag tables: the library never writes a flag into a message."""
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        renders = [c for c in _calls(tree, "words") if any(k.arg == "keyword" for k in c.keywords)]
        if rel not in ("cli/flags.py", "wording.py"):
            assert not renders, f"{rel} renders keywords itself"
        if not rel.startswith("cli/"):
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("cli.flags"):
                    pytest.fail(f"{rel} imports the command line's flag tables")


#: Calls that make a message part or a message.
MAKERS = {"kw", "said", "client_key", "rerun_keyword", "choice_hint", "Keyword", "Field"}


def _makes(expr: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in MAKERS for n in ast.walk(expr))


def _formatted_messages(tree: ast.AST) -> list[int]:
    """Lines where an f-string formats a message part or message: made there, or a name of the same function
    assigned one (a message formatted into text loses its parts)."""
    lines = []
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        names = set()
        for n in ast.walk(scope):
            if isinstance(n, ast.Assign) and _makes(n.value):
                names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
            elif isinstance(n, ast.AnnAssign) and n.value is not None and _makes(n.value):
                names |= {n.target.id} if isinstance(n.target, ast.Name) else set()
        for n in ast.walk(scope):
            if isinstance(n, ast.FormattedValue) and n.conversion == -1:  # ``!s`` says: the library's words, on purpose
                if (isinstance(n.value, ast.Name) and n.value.id in names) or _makes(n.value):
                    lines.append(n.lineno)
    return sorted(set(lines))


def test_a_keyword_in_an_f_string_is_a_bug_the_source_shows():
    """A Keyword or Message formatted into an f-string would lose its parts (the command line would show the
    library's keyword): no module of the package (outside ``stats/``, whose messages are still text) does it."""
    suspects = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith("stats/"):
            suspects += [f"{rel}:{line}" for line in _formatted_messages(ast.parse(path.read_text(encoding="utf-8")))]
    assert not suspects, suspects
    planted = ast.parse("def f():\n    hint = said('pass ', kw('reps='))\n    return f'no: {hint}'\n")
    assert _formatted_messages(planted) == [3]  # the check finds what it looks for


def test_the_stats_warnings_name_keywords_as_parts():
    """The scale and score-range warnings of ``stats/`` keep their keywords as parts: the library says
    ``normalize=`` / ``score_range=``, the command line ``--normalize`` / ``--score-range``, with no rewriting."""
    import numpy as np

    from rl_reliable_logger.stats.checks import gap_warning, raw_scale_warning
    from rl_reliable_logger.stats.jordan.ecdf import resolve_support

    scale = raw_scale_warning({"a": np.array([-500.0, -145]), "b": np.array([338.0, 15])})
    assert isinstance(scale, Said) and [k.name for k in scale.message.keywords] == ["normalize"]
    assert "(`normalize=` a CSV" in scale and "(--normalize a CSV" in as_flags(scale, analysis=True)
    gap = gap_warning(1.0, np.array([1.0, 2.0]), normalized=False)
    assert isinstance(gap, Said) and [k.name for k in gap.message.keywords] == ["normalize", "gamma"]
    assert "or set --gamma on the raw scale" in as_flags(gap, analysis=True)
    _, (support,) = resolve_support([[np.array([0.0, 1.0])], [np.array([0.5, 2.0])]])
    assert isinstance(support, Said) and "(`score_range=` LOW,HIGH)" in support
    assert "(--score-range LOW,HIGH)" in as_flags(support, analysis=True)


def test_plain_text_is_printed_as_it_is():
    """A tracker client's own error is text: a backticked ``seed=`` or an ``--experiment`` in it is its own, never turned
    into a flag or back into a keyword (the earlier fallback rewrote both)."""
    text = "MlflowException: the server says `seed=` is unknown; retry with --experiment"
    with command_flags(_parser("evaluate", "x.csv")):
        assert as_flags(text) == text
        assert cli_message(RuntimeError(text)) == text


def test_a_field_in_two_roles_names_both_keywords_as_flags():
    """``check_distinct`` raises its two keywords as parts: the library writes them as keywords, the command line
    as its flags."""
    from rl_reliable_logger.data.fields import check_distinct

    with pytest.raises(InputError) as caught:
        check_distinct({"variant=": ["params.lr"], "extra_fields=": ["params.lr"]}, what="field")
    assert caught.value.message_parts is not None and str(caught.value).startswith("`variant=` and `extra_fields=`")
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert cli_message(caught.value).startswith("--variant-key and --hyperparameter-keys both name the field")


def test_an_error_of_ours_raised_as_text_still_names_flags():
    """An error of ours that reaches the edge as text (a few library messages still flatten a keyword) is read for
    its backticked keywords (``cli.flags._keywords_named``); a client's text is not (above)."""
    err = InputError("`variant=` and `extra_fields=` both name the field 'params.lr'")
    assert err.message_parts is None
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert cli_message(err).startswith("--variant-key and --hyperparameter-keys both name the field")


def test_a_folded_warning_line_keeps_its_message():
    """A warning line with the pairs it also flags added (``analysis.notices``) still names flags on the console."""
    line = said("left out 2 runs; pass ", kw("include_unfinished=True"), " to use them").text()
    folded = line + " (also flagged: its mean differences with B)"
    assert isinstance(folded, Said) and folded == str(line) + " (also flagged: its mean differences with B)"
    assert folded.message.keywords == (kw("include_unfinished=True"),)
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert as_flags(folded) == "left out 2 runs; pass --include-unfinished to use them (also flagged: its mean " + (
            "differences with B)"
        )
    assert isinstance("A: " + line, Said) and ("A: " + line).message.keywords == (kw("include_unfinished=True"),)


def test_a_redacted_warning_keeps_its_flags():
    """``redact_report`` hides run names part by part: the warning stays a message (flags on the console) and no
    match is left in, in its text, its field references or a keyword's value."""
    from rl_reliable_logger.analysis.redacted import redact_report
    from rl_reliable_logger.analysis.report import Report
    from rl_reliable_logger.redaction import redacting_run_names

    line = said("run ppo-tok_abc of ", Field("config.tok_def"), " stopped; pass ", kw("include_unfinished=True")).text()
    keyed = said("use ", Keyword("run_key", "tok_ghi")).text()
    with redacting_run_names("tok_[a-z]+"):
        out, key_out = redact_report(Report(warnings=[line, keyed])).warnings
    assert isinstance(out, Said) and "tok_" not in out and out.startswith("run ppo-redacted-")
    assert out.message.keywords == (kw("include_unfinished=True"),)
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert as_flags(out).endswith("stopped; pass --include-unfinished")
    assert isinstance(key_out, Said) and "tok_" not in key_out
    across = said("run ppo-tok_", kw("reps=")).text()  # a match across two parts: the whole text, redacted
    with redacting_run_names(r"tok_\S+"):
        (flat,) = redact_report(Report(warnings=[across])).warnings
    assert "tok_" not in flat and "reps" not in flat


def test_an_unknown_task_names_the_normalize_keyword_in_the_library_and_the_flag_on_the_command_line(tmp_path, capsys):
    from rl_reliable_logger.data.normalize import get_normalizer

    with pytest.raises(InputError) as caught:
        get_normalizer("atari100k").bounds(["NoSuchGame"])
    assert "(`normalize=path/to/refs.csv`)." in str(caught.value) and "--normalize" not in str(caught.value)
    scores = tmp_path / "s.csv"
    scores.write_text("algorithm,task,seed,score\nA,NoSuchGame,0,1\nB,NoSuchGame,0,2\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "evaluate", scores, "--normalize", "atari100k")
    assert code == 2 and "(--normalize path/to/refs.csv)." in err and "normalize=" not in err, err


def test_the_mlflow_curves_hint_names_keywords():
    from types import SimpleNamespace

    from rl_reliable_logger.trackers.mlflow.plugin import MlflowCli

    args = SimpleNamespace(publish=None, experiment=["x"], curve_key=None)
    with pytest.raises(InputError) as caught:
        MlflowCli().check_command(args, SimpleNamespace(curves=True))  # type: ignore[arg-type]
    assert caught.value.message_parts is not None
    assert str(caught.value).startswith("`curves=True` needs `curve_key=METRIC`")
    with command_flags(_parser("mlflow", "--experiment", "x")):
        assert cli_message(caught.value) == (
            "--curves needs --curve-key METRIC: the metric logged during training whose history gives the learning "
            "curves (e.g. --curve-key normalized_reward)."
        )


def test_a_line_of_ours_given_as_text_names_flags_and_a_client_log_line_is_printed_as_it_is(capsys):
    """A warning line of ours still flattened into text (``analysis/jordan.py`` prefixes PBP's warning in an
    f-string) names the flag; another library's log line or warning is its own text, never rewritten."""
    import logging

    from rl_reliable_logger.cli import common

    with common.console(), command_flags(_parser("evaluate", "x.csv")):
        common.say_warning("Jordan aggregate: give the known range (`score_range=` LOW,HIGH)")
        logging.getLogger("urllib3.connectionpool").warning("pass `seed=` to the pool; --reps is not ours")
        warnings.warn("a client says `seed=`", RuntimeWarning, stacklevel=1)
    assert capsys.readouterr().err == (
        "warning: Jordan aggregate: give the known range (--score-range LOW,HIGH)\n"
        "warning: urllib3: pass `seed=` to the pool; --reps is not ours\n"
        "warning: a client says `seed=`\n"
    )


def test_the_reasons_of_unreadable_runs_keep_their_keywords():
    """``check_unreadable`` lists its runs' reasons in one error: a reason that names a keyword (marl-eval's
    ``last_step=True``) keeps it as a part, so the command line names its flag, and a plain reason stays text."""
    from rl_reliable_logger.trackers.base.request import SourceRequest
    from rl_reliable_logger.trackers.base.selection import check_unreadable
    from rl_reliable_logger.trackers.marl_eval.source import HINTS

    reason = said("run 1 has no step_<k> entry, so ", kw("last_step=True"), " has no last step").text()
    request = SourceRequest(algorithm="a", task="t", seed="s", score="v")
    with pytest.raises(InputError) as caught:
        check_unreadable([{"reason": reason}, {"reason": "b.json: not JSON"}], request, HINTS)
    assert str(caught.value).startswith("2 runs cannot be read: run 1 has no step_<k> entry, so `last_step=True`")
    assert kw("last_step=True") in message_of(caught.value).keywords and "; b.json: not JSON. Pass `" in str(
        caught.value
    )


@pytest.mark.parametrize("argv", [("plan", "file", "x"), ("evaluate",), ("mlflow",), ("race", "file", "x")])
def test_a_help_text_names_flags_not_keywords(capsys, argv):
    """Every part of ``--help`` (an option's help and its default) is in the command's words: a declared
    default such as ``--runs``'s "a grid up to --max-runs" names the flag, never a backticked keyword."""
    import re

    with pytest.raises(SystemExit):
        run_cli(capsys, *argv, "--help")
    out = capsys.readouterr().out
    assert "--" in out and not re.search(r"`\w+=", out), re.findall(r".*`\w+=.*", out)
