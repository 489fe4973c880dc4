"""FinalScoreCallback (issue 57): SB3 training that ends with the run's final score recorded in its tracker run.

The real-training tests need Stable-Baselines3 (and PyTorch), which are not dependencies: they skip, saying so,
where SB3 is not installed. The import and option tests run everywhere.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from rl_reliable_logger import FinalScoreCallback
from rl_reliable_logger.trackers.sb3 import callback as callback_module

HAS_SB3 = importlib.util.find_spec("stable_baselines3") is not None
needs_sb3 = pytest.mark.skipif(
    not HAS_SB3, reason="Stable-Baselines3 is not installed (pip install stable-baselines3 runs this test)"
)


def test_importing_needs_no_sb3_and_creating_one_says_how_to_install_it(monkeypatch):
    callback_module.sb3_callback_class.cache_clear()
    for name in [n for n in sys.modules if n == "stable_baselines3" or n.startswith("stable_baselines3.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)  # as if not installed
    try:
        with pytest.raises(ImportError, match=r"pip install stable-baselines3"):
            FinalScoreCallback()
    finally:
        callback_module.sb3_callback_class.cache_clear()


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"n_eval_episodes": 0}, ValueError, "n_eval_episodes must be a positive integer"),
        ({"n_eval_episodes": True}, ValueError, "n_eval_episodes must be a positive integer"),
        ({"retry_fro": 5}, TypeError, "unknown option.*'retry_fro'.*retry_for"),
    ],
)
def test_bad_options_are_refused_when_the_callback_is_made(options, error, words):
    with pytest.raises(error, match=words):
        FinalScoreCallback(**options)


@needs_sb3
def test_real_ppo_training_ends_with_its_final_score_in_the_mlflow_run(tmp_path, monkeypatch):
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    from rl_reliable_logger import mlflow_table
    from tests.support.mlflow_store import make_store, mlflow, use_store

    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("sb3-callback")
        with mlflow.start_run():
            model = PPO("MlpPolicy", "CartPole-v1", seed=3, n_steps=64, batch_size=32, n_epochs=1, device="cpu")
            callback = FinalScoreCallback(n_eval_episodes=3)
            assert isinstance(callback, BaseCallback)
            model.learn(128, callback=callback)
        assert callback.tracker == "mlflow" and model.num_timesteps >= 128
        assert callback.score is not None and 1.0 <= callback.score <= 500.0  # CartPole-v1's returns
        frame = mlflow_table("sb3-callback", tracking_uri=uri).frame
    assert frame[["algorithm", "task", "seed"]].astype(str).values.tolist() == [["PPO", "CartPole-v1", "3"]]
    assert frame.score.tolist() == [callback.score]


@needs_sb3
def test_a_model_without_a_seed_stops_before_any_training(tmp_path, monkeypatch):
    from stable_baselines3 import A2C

    from tests.support.mlflow_store import make_store, mlflow, use_store

    with use_store(make_store(tmp_path), monkeypatch):
        mlflow.set_experiment("sb3-no-seed")
        with mlflow.start_run() as run:
            model = A2C("MlpPolicy", "CartPole-v1", n_steps=8, device="cpu")
            with pytest.raises(ValueError, match=r"without a seed.*seed=<n>"):
                model.learn(64, callback=FinalScoreCallback())
            assert model.num_timesteps == 0
        got = mlflow.MlflowClient().get_run(run.info.run_id)
    assert not any(key.startswith("rl_reliable") for key in got.data.tags) and not got.data.metrics


@needs_sb3
def test_the_seed_and_task_given_win_over_what_the_model_says(tmp_path, monkeypatch):
    from stable_baselines3 import A2C

    from rl_reliable_logger import mlflow_table
    from tests.support.mlflow_store import make_store, mlflow, use_store

    uri = make_store(tmp_path)
    with use_store(uri, monkeypatch):
        mlflow.set_experiment("sb3-given")
        with mlflow.start_run():
            model = A2C("MlpPolicy", "CartPole-v1", n_steps=8, device="cpu")
            callback = FinalScoreCallback(n_eval_episodes=2, algorithm="A2C-small", task="cartpole", seed=11)
            model.learn(32, callback=callback)
        frame = mlflow_table("sb3-given", tracking_uri=uri).frame
    assert frame[["algorithm", "task", "seed"]].astype(str).values.tolist() == [["A2C-small", "cartpole", "11"]]
