"""A Stable-Baselines3 callback that records the run's final score when training ends.

SB3 users hand callbacks to ``model.learn``; this one evaluates the trained policy once training ends and calls
:func:`~rl_reliable_logger.log_final_score` with the algorithm, task and seed it reads from the model and its
environment, so a training script needs no extra line. Importing it needs no SB3: SB3's ``BaseCallback`` is
looked up when a callback is created, and a missing SB3 is one sentence saying how to install it.
"""

from __future__ import annotations

import functools
from typing import Any

LOG_OPTIONS = frozenset({"run", "retry_for", "pending_dir", "on_failure"})


class FinalScoreCallback:
    """Evaluate the policy when ``model.learn`` ends and record the score with ``log_final_score``.

    Args:
        eval_env: the environment the final evaluation runs on (a Gymnasium env or an SB3 VecEnv); default the
            model's own training environment.
        n_eval_episodes: episodes of the final evaluation; the score is their mean return (SB3's
            ``evaluate_policy``).
        deterministic: evaluate the deterministic policy (default) or sample actions.
        algorithm: default the model's class name (``PPO``, ``SAC``, ...).
        task: default the environment's registered id (``CartPole-v1``); an unregistered environment needs it.
        seed: default the ``seed=`` the model was created with; a model created without one needs it.
        **log_options: passed to ``log_final_score``: ``run``, ``retry_for``, ``pending_dir``, ``on_failure``.

    The algorithm, task and seed are read when training starts, so a missing one stops ``learn`` before any
    training is spent. After training, ``callback.score`` is the recorded score and ``callback.tracker`` the
    tracker it was written to.

    Example (with SB3 installed, inside an MLflow or W&B run):
        >>> from stable_baselines3 import PPO  # doctest: +SKIP
        >>> from rl_reliable_logger import FinalScoreCallback
        >>> model = PPO("MlpPolicy", "CartPole-v1", seed=3)  # doctest: +SKIP
        >>> model.learn(50_000, callback=FinalScoreCallback(n_eval_episodes=20))  # doctest: +SKIP
    """

    def __new__(
        cls,
        *,
        eval_env: Any = None,
        n_eval_episodes: int = 10,
        deterministic: bool = True,
        algorithm: str | None = None,
        task: str | None = None,
        seed: int | str | None = None,
        **log_options: Any,
    ) -> Any:
        if isinstance(n_eval_episodes, bool) or not isinstance(n_eval_episodes, int) or n_eval_episodes < 1:
            raise ValueError(f"FinalScoreCallback: n_eval_episodes must be a positive integer, got {n_eval_episodes!r}")
        unknown = sorted(set(log_options) - LOG_OPTIONS)
        if unknown:
            raise TypeError(
                f"FinalScoreCallback: unknown option(s) {', '.join(map(repr, unknown))}; "
                f"log_final_score takes {', '.join(sorted(LOG_OPTIONS))}"
            )
        settings = {
            "eval_env": eval_env,
            "n_eval_episodes": n_eval_episodes,
            "deterministic": deterministic,
            "algorithm": algorithm,
            "task": task,
            "seed": seed,
            "log_options": log_options,
        }
        return sb3_callback_class()(settings)


@functools.lru_cache(maxsize=1)
def sb3_callback_class() -> type:
    """The ``BaseCallback`` subclass, built on first use so that importing this module needs no SB3."""
    try:
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.evaluation import evaluate_policy
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError as exc:
        raise ImportError(
            "FinalScoreCallback needs Stable-Baselines3: pip install stable-baselines3 (it is not a dependency "
            "of rl_reliable_logger)"
        ) from exc

    def task_of(env: Any) -> str | None:
        spec = env.get_attr("spec")[0] if isinstance(env, VecEnv) else getattr(env, "spec", None)
        return getattr(spec, "id", None) or None

    class SB3FinalScoreCallback(BaseCallback):
        """See :class:`FinalScoreCallback`."""

        def __init__(self, settings: dict[str, Any]) -> None:
            super().__init__(verbose=0)
            self.settings = settings
            self.score: float | None = None
            self.tracker: str | None = None
            self.fields: dict[str, Any] = {}

        def _on_training_start(self) -> None:
            s = self.settings
            env = s["eval_env"] if s["eval_env"] is not None else self.model.get_env()
            fields = {
                "algorithm": s["algorithm"] or type(self.model).__name__,
                "task": s["task"] or task_of(env),
                "seed": s["seed"] if s["seed"] is not None else self.model.seed,
            }
            if fields["task"] is None:
                raise ValueError(
                    "FinalScoreCallback: the environment has no registered id (env.spec.id); pass task='...'"
                )
            if fields["seed"] is None:
                raise ValueError(
                    "FinalScoreCallback: the model was created without a seed; create it with seed=<n> "
                    "(so the run can be repeated) or pass seed=<n> to the callback"
                )
            self.fields = fields

        def _on_step(self) -> bool:
            return True

        def _on_training_end(self) -> None:
            from ..callback import log_final_score

            s = self.settings
            env = s["eval_env"] if s["eval_env"] is not None else self.model.get_env()
            mean_return, _ = evaluate_policy(
                self.model, env, n_eval_episodes=s["n_eval_episodes"], deterministic=s["deterministic"]
            )
            self.score = float(mean_return)
            self.tracker = log_final_score(self.score, **self.fields, **s["log_options"])

    return SB3FinalScoreCallback
