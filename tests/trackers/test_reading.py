"""The bundles of the narrow edges (issue 51): ``ReadOptions``, ``client_kwargs=``, ``PublishOptions`` and the
deprecated separate keywords, checked without a tracker (the tables they give: tests/contract/test_read_options.py)."""

from __future__ import annotations

import warnings

import pytest

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers import ReadOptions
from rl_reliable_logger.trackers.base.clients import ClientKey, client_options, moved_client_options, positive_whole
from rl_reliable_logger.trackers.base.publishing import PublishOptions
from rl_reliable_logger.trackers.base.reading import config_column, kind_column, read_options, request_of
from rl_reliable_logger.trackers.base.request import SourceRequest


@pytest.mark.parametrize(
    ("keywords", "words"),
    [
        ({"score_rule": "mean-last-0"}, "`score_rule=` 'mean-last-0' is not a score rule"),
        ({"on_invalid": "skip"}, "`on_invalid=` is 'raise' or 'drop', got 'skip'"),
        ({"names": "lax"}, "`names=` is 'strict' or 'normalize', got 'lax'"),
        ({"reruns": "last"}, "`reruns=` is one of 'refuse', 'latest', 'first', got 'last'"),
        ({"hyperparameter_keys": "lr"}, "`hyperparameter_keys=` is a list of names, got the string 'lr': write ['lr']"),
        ({"algorithms": "PPO"}, "`algorithms=` is a list of names, got the string 'PPO'"),
        ({"curve_key": "eval"}, "`curve_key=` names the learning curves' key: add `curves=True`"),
    ],
)
def test_a_bad_reading_option_is_one_sentence_naming_its_keyword(keywords, words):
    with pytest.raises(InputError) as err:
        ReadOptions(**keywords)
    assert str(err.value).startswith(words) and "\n" not in str(err.value)


def test_the_request_of_read_options_is_the_one_of_the_separate_fields():
    read = ReadOptions(score_rule="max", curves=True, hyperparameter_keys=["lr"], algorithms=["PPO"], reruns="first")
    assert read.request(score="summary.ret", algorithm="config.a") == SourceRequest(
        algorithm="config.a",
        score="summary.ret",
        curve_key="summary.ret",
        extra_fields={"lr": "config.lr"},
        score_rule="max",
        algorithms=("PPO",),
        reruns="first",
    )
    # a mapping names the columns; a reference is read as written, a bare key where the tracker keeps them
    mapped = ReadOptions(hyperparameter_keys={"rate": "tags.lr", "g": "gamma"})
    assert mapped.extra_fields(kind_column("params")) == {"rate": "tags.lr", "g": "params.gamma"}
    assert ReadOptions().extra_fields(config_column) is None


def test_a_tracker_with_fixed_curves_refuses_another_curve_key():
    with pytest.raises(InputError, match=r"^Stable-Baselines3 reads the learning curves from the score's own points"):
        ReadOptions(curves=True, curve_key="other").fixed_curves("Stable-Baselines3")


def test_old_keywords_warn_at_the_callers_line_and_give_the_same_options():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = read_options(
            None, {"score_rule": "max", "reruns": "latest"}, where="x_table()", accepted=["score_rule", "reruns"]
        )
    assert old == ReadOptions(score_rule="max", reruns="latest")
    assert [w.category for w in caught] == [DeprecationWarning] and caught[0].filename == __file__
    assert str(caught[0].message) == (
        "x_table(score_rule=..., reruns=...) is deprecated: pass read=ReadOptions(score_rule=..., reruns=...) "
        "(the old keywords go in the next release)"
    )
    with pytest.raises(TypeError, match="x_table\\(\\) got an unexpected keyword argument 'score'"):
        read_options(None, {"score": "s"}, where="x_table()", accepted=["score_rule"])


def test_both_spellings_are_one_error_even_when_they_agree():
    with pytest.raises(InputError) as err:
        read_options(ReadOptions(reruns="latest"), {"reruns": "latest"}, where="x_table()", accepted=["reruns"])
    assert str(err.value) == (
        "x_table() got both `read=` and reruns=: give these options once, in `read=ReadOptions(...)`"
    )


def test_a_source_request_keyword_of_the_old_spelling_still_means_curves():
    """``MlflowSource.table(curve_key=...)`` read the curves; ``extra_fields=`` becomes ``hyperparameter_keys``."""
    with pytest.warns(
        DeprecationWarning,
        match=r"pass read=ReadOptions\(curve_key=\.\.\., hyperparameter_keys=\.\.\., curves=\.\.\.\)",
    ):
        old = request_of(
            None,
            None,
            {"curve_key": "metrics.ret", "extra_fields": {"lr": "params.lr"}, "algorithm": "tags.a"},
            where="MlflowSource.table()",
            column=kind_column("params"),
            defaults={"score": "metrics.s"},
        )
    new = request_of(
        None,
        ReadOptions(curves=True, curve_key="metrics.ret", hyperparameter_keys=["lr"]),
        {"algorithm": "tags.a"},
        where="MlflowSource.table()",
        column=kind_column("params"),
        defaults={"score": "metrics.s"},
    )
    assert old == new and new.curve_key == "metrics.ret" and new.extra_fields == {"lr": "params.lr"}
    with pytest.raises(InputError, match=r"unknown keyword\(s\) scor of MlflowSource.table\(\)"):
        request_of(None, None, {"scor": "x"}, where="MlflowSource.table()", column=config_column, defaults={})


def test_client_options_name_the_key_and_never_show_its_value():
    keys = {"page_size": ClientKey("a whole number of runs per request, at least 1", positive_whole)}
    assert client_options({"page_size": 50}, keys, tracker="MLflow") == {"page_size": 50}
    with pytest.raises(InputError) as err:
        client_options({"page_size": "tok_s3cr3t"}, keys, tracker="MLflow")
    assert "tok_s3cr3t" not in str(err.value)
    assert str(err.value) == (
        "`client_kwargs=` key 'page_size' of MLflow must be a whole number of runs per request, at least 1; the value "
        "given (a str) is not"
    )
    with pytest.raises(InputError, match=r"^`client_kwargs=` of MLflow takes page_size, not 'pagesize'$"):
        client_options({"pagesize": 1}, keys, tracker="MLflow")
    with pytest.raises(InputError, match=r"^`client_kwargs=` is a mapping of MLflow client options, got a list$"):
        client_options(["page_size"], keys, tracker="MLflow")  # type: ignore[arg-type]


def test_a_client_option_given_both_ways_is_an_error_and_one_way_warns():
    with pytest.raises(InputError, match=r"got tracking_uri= and `client_kwargs=` with the key 'tracking_uri'"):
        moved_client_options({"tracking_uri": "a"}, {"tracking_uri": "b"}, where="mlflow_table()")
    with pytest.warns(
        DeprecationWarning, match=r"mlflow_table\(tracking_uri=\.\.\.\) is deprecated: pass client_kwargs"
    ):
        merged = moved_client_options({"page_size": 5}, {"tracking_uri": "b"}, where="mlflow_table()")
    assert merged == {"page_size": 5, "tracking_uri": "b"}


def test_the_mlflow_table_refuses_a_secret_it_does_not_take(tmp_path):
    from rl_reliable_logger.trackers.mlflow.source import MlflowSource

    with pytest.raises(InputError) as err:
        MlflowSource("e", client_kwargs={"token": "s3cr3t"})
    assert str(err.value) == "`client_kwargs=` of MLflow takes tracking_uri, page_size, not 'token'"


def test_publish_options_and_the_wandb_sink_keywords():
    pytest.importorskip("wandb")
    from rl_reliable_logger.trackers.wandb.sink import WandbSink, publish_wandb

    with pytest.raises(InputError, match=r"^`force=` is True or False, got a str$"):
        PublishOptions(force="yes")  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning, match=r"WandbSink\(force=\.\.\., figures=\.\.\.\) is deprecated"):
        old = WandbSink(project="p", force=True, figures=False)
    new = WandbSink(project="p", publishing=PublishOptions(force=True, figures=False))
    assert (old.force, old.figures, old.retry.total) == (new.force, new.figures, new.retry.total) == (True, False, 300)
    with pytest.raises(InputError, match=r"^WandbSink\(\) got both `publishing=` and force=: give these options once"):
        WandbSink(project="p", force=True, publishing=PublishOptions())
    with pytest.raises(InputError, match=r"^`mode=` must be 'online', 'offline', 'disabled' or None, not 'later'$"):
        WandbSink(project="p", client_kwargs={"mode": "later"})
    with pytest.raises(InputError, match=r"^publish_wandb\(\) got both a sink and project=: give the sink's options"):
        publish_wandb(object(), new, project="p")  # type: ignore[arg-type]


def test_the_mlflow_sink_takes_publish_options_as_the_wandb_sink_does(tmp_path):
    """``MlflowSink`` / ``publish_mlflow`` take ``publishing=PublishOptions(...)``; the separate ``force=``,
    ``figures=``, ``retry=`` still work for this release with a DeprecationWarning, and both spellings are an error."""
    pytest.importorskip("mlflow")
    from rl_reliable_logger.trackers.base.retry import RetryPolicy
    from rl_reliable_logger.trackers.mlflow.sink import MlflowSink, publish_mlflow

    policy = RetryPolicy(total=5)
    with pytest.warns(
        DeprecationWarning, match=r"MlflowSink\(force=\.\.\., figures=\.\.\., retry=\.\.\.\) is deprecated"
    ):
        old = MlflowSink(experiment="e", force=True, figures=False, retry=policy)
    new = MlflowSink(experiment="e", publishing=PublishOptions(force=True, figures=False, retry=policy))
    assert (old.force, old.figures, old.retry) == (new.force, new.figures, new.retry) == (True, False, policy)
    assert (MlflowSink().force, MlflowSink().figures, MlflowSink().retry) == (False, True, None)
    with pytest.raises(InputError, match=r"^MlflowSink\(\) got both `publishing=` and figures=: give these options"):
        MlflowSink(figures=False, publishing=PublishOptions())
    with pytest.raises(TypeError, match="'figure'"):
        MlflowSink(figure=False)
    with pytest.raises(InputError, match=r"^publish_mlflow\(\) got both `publishing=` and force="):
        publish_mlflow(object(), force=True, publishing=PublishOptions())  # type: ignore[arg-type]


def test_race_tune_takes_its_design_once():
    from rl_reliable_logger.analysis.race_options import RaceOptions
    from rl_reliable_logger.trackers.raytune import race_tune

    def call(**keywords):
        return race_tune(lambda c: None, [{"lr": 0.1}, {"lr": 0.2}], ["t"], state="unused", score_key="s", **keywords)

    with pytest.raises(InputError, match=r"^race_tune\(\) got both `design=` and looks=: give these options once"):
        call(design=RaceOptions(looks=2, max_runs=4), looks=2, run_config={"storage_path": "x"})
    with pytest.raises(InputError, match=r"^race_tune\(\) needs its design: design=RaceOptions\(looks=K"):
        call(run_config={"storage_path": "x"})
    with pytest.raises(InputError, match=r"^race_tune\(\) needs `run_config=\{'storage_path': \.\.\.\}`"):
        call(design=RaceOptions(looks=2, max_runs=4))
    with pytest.raises(InputError, match=r"race_tune\(\) names each trial's config keys itself"):
        call(design=RaceOptions(looks=2, max_runs=4), read=ReadOptions(hyperparameter_keys=["lr"]))
