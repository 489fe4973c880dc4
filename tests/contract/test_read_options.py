"""``read=ReadOptions(...)`` and ``client_kwargs=`` against the old separate keywords, on every tracker's own storage.

Each tracker's corpus is written by its own writer (``tests/contract/source_corpus.py``): two learning rates, a
run killed early where the tracker has states. The table of the new spelling must equal the table of the old
keywords (which still work, with a DeprecationWarning naming ``read=``) and the table the command reads with the
same flags; both spellings at once are one InputError.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers import ReadOptions
from tests.contract.source_corpus import Corpus, Run, write

pytest.importorskip("mlflow")
pytest.importorskip("wandb")
pytest.importorskip("tensorboardX")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

RULE = "mean-last-2"


def _runs() -> list[Run]:
    runs = [
        Run(a, "x", s, round(0.1 * i + 0.01 * s + (0.3 if lr == "0.1" else 0.0), 6), config=(("lr", lr),))
        for i, a in enumerate(("A", "B"))
        for s in (0, 1, 2)
        for lr in ("0.1", "0.01")
    ]
    return runs


def _mlflow(corpus: Corpus) -> tuple[Callable[..., Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    from rl_reliable_logger.trackers.mlflow import mlflow_table

    fields = {"algorithm": "params.algorithm", "task": "params.task", "seed": "params.seed", "score": "metrics.score"}
    uri = corpus.command[corpus.command.index("--tracking-uri") + 1]
    old = {"tracking_uri": uri, "curve_key": "metrics.score", "extra_fields": {"lr": "params.lr"}, "on_invalid": "drop"}
    new = {"read": ReadOptions(curves=True, hyperparameter_keys=["lr"], on_invalid="drop")}

    def table(**kw: Any) -> Any:
        client = {} if "tracking_uri" in kw else {"client_kwargs": {"tracking_uri": uri}}
        return mlflow_table("contract", **fields, **client, **kw)

    return table, old, new, {}


def _wandb(corpus: Corpus) -> tuple[Callable[..., Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    from rl_reliable_logger.trackers.wandb import wandb_table

    fields = {"algorithm": "config.algorithm", "task": "config.task", "seed": "config.seed", "score": "summary.score"}
    root = corpus.command[corpus.command.index("--offline-dir") + 1]
    old = {"score_rule": RULE, "curve_key": "score", "extra_fields": {"lr": "config.lr"}, "names": "normalize"}
    new = {
        "read": ReadOptions(
            score_rule=RULE, curves=True, curve_key="score", hyperparameter_keys=["lr"], names="normalize"
        )
    }
    return lambda **kw: wandb_table(offline_dir=root, **fields, **kw), old, new, {}


def _logs(table: Callable[..., Any], **fixed: Any) -> Callable[[Corpus], Any]:
    """A log-folder tracker: the shared options spelled the old way and in ``read=``."""

    def case(corpus: Corpus) -> tuple[Callable[..., Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
        args = corpus.command[1:]
        layout = {"layout": args[args.index("--layout") + 1]} if "--layout" in args else {}
        old = {"score_rule": RULE, "curves": True, "hyperparameter_keys": ["lr"], "reruns": "latest"}
        new = {"read": ReadOptions(score_rule=RULE, curves=True, hyperparameter_keys=["lr"], reruns="latest")}
        return lambda **kw: table(args[0], **layout, **fixed, **kw), old, new, {}

    return case


def _tensorboard(corpus: Corpus) -> Any:
    from rl_reliable_logger.trackers.tensorboard import tensorboard_table

    return _logs(tensorboard_table, score_key="score")(corpus)


def _sb3(corpus: Corpus) -> Any:
    from rl_reliable_logger.trackers.sb3 import sb3_table

    return _logs(sb3_table)(corpus)


def _marl_eval(corpus: Corpus) -> Any:
    from rl_reliable_logger.trackers.marl_eval import marl_eval_table

    return _logs(marl_eval_table, metric="score")(corpus)


def _raytune(corpus: Corpus) -> Any:
    from rl_reliable_logger.trackers.raytune import raytune_table

    table, _, _, _ = _logs(raytune_table, score_key="score")(corpus)
    old = {"score_rule": RULE, "curves": True, "hyperparameter_keys": ["config/lr"], "include_unfinished": True}
    new = {
        "read": ReadOptions(score_rule=RULE, curves=True, hyperparameter_keys=["config/lr"], include_unfinished=True)
    }
    return table, old, new, {}


CASES = {
    "mlflow": _mlflow,
    "wandb": _wandb,
    "tensorboard": _tensorboard,
    "raytune": _raytune,
    "sb3": _sb3,
    "marl-eval": _marl_eval,
}


def _frame(table: Any) -> pd.DataFrame:
    return table.frame.sort_values(list(table.frame.columns)).reset_index(drop=True)


@pytest.fixture(scope="module", params=sorted(CASES))
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Corpus]:
    runs = _runs()
    if request.param in ("mlflow", "raytune", "wandb"):
        runs.append(Run("A", "x", 9, 5.0, state="running", config=(("lr", "0.1"),)))
    return request.param, write(request.param, tmp_path_factory.mktemp(request.param) / "corpus", runs)


def test_read_options_and_the_old_keywords_give_the_same_table(corpus):
    name, stored = corpus
    table, old, new, _ = CASES[name](stored)
    with pytest.warns(DeprecationWarning, match=r"is deprecated: pass (read=ReadOptions|client_kwargs=)"):
        before = table(**old)
    with warnings.catch_warnings():
        # the new spelling warns of nothing (of ours: pandas 2.0 on numpy 1.26 warns of its own)
        warnings.filterwarnings("error", message=".*is deprecated: pass", category=DeprecationWarning)
        after = table(**new)
    pd.testing.assert_frame_equal(_frame(before), _frame(after))
    assert list(before.warnings) == list(after.warnings)
    assert "lr" in after.frame.columns and not after.frame.empty


def test_both_spellings_at_once_are_one_sentence(corpus):
    name, stored = corpus
    table, old, new, _ = CASES[name](stored)
    keyword = next(k for k in old if k not in ("tracking_uri",))
    with pytest.raises(InputError, match=rf"got both `read=` and {keyword}=: give these options once") as err:
        table(**{keyword: old[keyword]}, read=new["read"])
    assert "\n" not in str(err.value)


def test_the_command_reads_the_table_of_read_options(corpus):
    """``rl-reliable <tracker> --score-rule mean-last-2 --hyperparameter-keys lr`` reads what ``read=`` reads."""
    from rl_reliable_logger.cli.main import build_parser
    from rl_reliable_logger.cli.options import analysis_options
    from rl_reliable_logger.cli.trackers import read_table
    from rl_reliable_logger.trackers import registry

    name, stored = corpus
    table, _, _, _ = CASES[name](stored)
    key = "config/lr" if name == "raytune" else "lr"
    args = build_parser().parse_args(stored.argv("--score-rule", RULE, "--hyperparameter-keys", key))
    plugin = registry.get(name)
    command = read_table(plugin, args, plugin.source.table_options(analysis_options(args)))
    library = table(read=ReadOptions(score_rule=RULE, hyperparameter_keys=[key]))
    pd.testing.assert_frame_equal(_frame(command), _frame(library))


def test_a_client_option_of_the_wrong_kind_is_named_never_shown(tmp_path):
    from rl_reliable_logger.trackers.wandb import WandbSource

    with pytest.raises(InputError) as err:
        WandbSource(path="ent/proj", client_kwargs={"api_key": 12345678901234})
    assert str(err.value) == (
        "`client_kwargs=` key 'api_key' of W&B must be a W&B API key (text); the value given (a int) is not"
    )
    with pytest.raises(InputError, match=r"takes per_page, order, timeout, api_key, base_url, api, not 'apikey'"):
        WandbSource(path="ent/proj", client_kwargs={"apikey": "s3cr3t-value"})
