"""Writes ``tests/trackers/sb3/real_logs/``: Stable-Baselines3's own files from real (tiny) training runs.

Not a test and not run by the tests: Stable-Baselines3 needs PyTorch, which is no dependency of this package. The
files it wrote are checked in, so the tests read what SB3 itself writes without installing it. To write them again
(a minute on a CPU; PyTorch's CPU build, Stable-Baselines3 and Gymnasium in a virtual environment of their own):

    python -m venv /tmp/sb3 && /tmp/sb3/bin/pip install torch==2.13.0 stable-baselines3 gymnasium
    /tmp/sb3/bin/python tests/trackers/sb3/make_real_logs.py

Layout (rl-baselines3-zoo's ``{algorithm}/{task}_{seed}``): PPO and A2C on CartPole-v1, 3 seeds each, 3,000 steps,
``EvalCallback(eval_freq=1000, n_eval_episodes=5)`` into each run folder and ``Monitor(info_keywords=
("is_success",))`` files beside; ``info["is_success"]`` is set when an episode lasts at least 30 steps, so the
evaluations hold ``successes``. ``a2c/CartPole-v1_9`` has only its monitor file (no evaluation callback).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent / "real_logs"
TASK = "CartPole-v1"
STEPS = 3_000


def main() -> None:
    # imported here: the tests import this module (doctests) where none of these is installed
    import gymnasium as gym
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.callbacks import EvalCallback
    from stable_baselines3.common.monitor import Monitor

    class Success(gym.Wrapper):
        """``info["is_success"]`` at the end of every episode: it lasted at least 30 steps."""

        def reset(self, **kwargs: Any) -> Any:
            self.steps = 0
            return self.env.reset(**kwargs)

        def step(self, action: Any) -> Any:
            obs, reward, terminated, truncated, info = self.env.step(action)
            self.steps += 1
            if terminated or truncated:
                info["is_success"] = self.steps >= 30
            return obs, reward, terminated, truncated, info

    def env(folder: Path | None, seed: int) -> Any:
        made = Monitor(Success(gym.make(TASK)), str(folder / "0") if folder else None, info_keywords=("is_success",))
        made.reset(seed=seed)
        return made

    shutil.rmtree(ROOT, ignore_errors=True)
    for name, algorithm in (("ppo", PPO), ("a2c", A2C)):
        for seed in (1, 2, 3):
            folder = ROOT / name / f"{TASK}_{seed}"
            folder.mkdir(parents=True)
            model = algorithm("MlpPolicy", env(folder, seed), seed=seed, verbose=0)
            callback = EvalCallback(env(None, 1000 + seed), log_path=str(folder), eval_freq=1_000, n_eval_episodes=5)
            model.learn(STEPS, callback=callback)
    folder = ROOT / "a2c" / f"{TASK}_9"
    folder.mkdir(parents=True)
    A2C("MlpPolicy", env(folder, 9), seed=9, verbose=0).learn(STEPS)


if __name__ == "__main__":
    main()
