"""The one console (``cli/common.console``, ``cli/flags.as_flags``): warnings and library log lines reach the terminal
as our one-line ``warning:``, once, without file paths; messages name only flags of the command that was run."""

from __future__ import annotations

import logging
import warnings

import pytest

from rl_reliable_logger.cli import common
from rl_reliable_logger.cli.flags import as_flags, command_flags
from rl_reliable_logger.cli.main import build_parser
from rl_reliable_logger.wording import kw, said
from tests.support.cli import run_cli


def _parser(*argv: str):
    """The parser of the command ``argv`` runs (the one ``main`` records)."""
    return build_parser().parse_args(list(argv)).command_parser


def test_a_keyword_becomes_a_flag_only_when_the_command_has_it():
    text = said(
        "Name the right fields with ",
        kw("algorithm="),
        " and ",
        kw("score="),
        "; or ",
        kw("algorithm="),
        "/",
        kw("task="),
    )
    with command_flags(_parser("evaluate", "x.csv")):
        assert (
            as_flags(text)
            == "Name the right fields with --algorithm-key and --score-key; or --algorithm-key/--task-key"
        )
    with command_flags(_parser("tensorboard", "logs", "--score-key", "r")):
        words = as_flags(text)
    assert "--algorithm-key" not in words and "--task-key" not in words
    assert words == "Name the right fields with `algorithm=` and --score-key; or `algorithm=`/`task=`"
    assert as_flags(text).startswith("Name the right fields with --algorithm-key")  # outside a command: every flag


def test_warnings_and_library_log_lines_are_one_line_each_once(capsys):
    own = list(logging.getLogger("urllib3").handlers), logging.getLogger("urllib3").propagate
    with common.console():
        for _ in range(2):
            warnings.warn("scores look odd\n  at line 3", RuntimeWarning, stacklevel=1)
            logging.getLogger("urllib3.connectionpool").warning("Retrying (%s) after %s", "Retry(total=2)", "reset")
        warnings.warn("an old keyword", DeprecationWarning, stacklevel=1)  # for developers: not shown
        logging.getLogger("alembic").info("Running upgrade")  # below WARNING: not shown
    err = capsys.readouterr().err
    assert err == ("warning: scores look odd; at line 3\nwarning: urllib3: Retrying (Retry(total=2)) after reset\n")
    assert (list(logging.getLogger("urllib3").handlers), logging.getLogger("urllib3").propagate) == own  # given back


def test_a_client_loaded_by_the_command_has_its_log_lines_adopted(capsys):
    mlflow = pytest.importorskip("mlflow")
    from rl_reliable_logger.trackers.base.plugin import Redaction, TrackerPlugin

    plugin = TrackerPlugin("client", "Client", redaction=Redaction(client_modules=("mlflow",)))
    own = list(logging.getLogger("mlflow").handlers)
    with common.console():
        common.load_clients(plugin)
        logging.getLogger("mlflow.store.db.utils").warning("the database is old")
        logging.getLogger("mlflow.store.db.utils").info("Creating initial MLflow database tables...")
    assert capsys.readouterr().err == "warning: mlflow: the database is old\n"
    assert logging.getLogger("mlflow").handlers == own and mlflow  # restored when the command ends


def test_the_tensorboard_command_suggests_none_of_the_file_flags(tmp_path, capsys):
    tensorboardx = pytest.importorskip("tensorboardX")
    for algorithm in "AB":
        writer = tensorboardx.SummaryWriter(str(tmp_path / "logs" / f"{algorithm}_x_0"))
        writer.add_scalar("score", 1.0, 1)
        writer.close()
    code, _, err = run_cli(capsys, "tensorboard", tmp_path / "logs", "--layout", "{algorithm}_{task}_{seed}",
                           "--score-key", "missing")  # fmt: skip
    assert code == 2 and err.startswith("error: ") and "--score-key" in err, err
    assert not any(flag in err for flag in ("--algorithm-key", "--task-key", "--seed-key", "--run-key")), err
