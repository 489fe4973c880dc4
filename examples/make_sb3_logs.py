"""Writes ``examples/sb3_logs/``: a small real Stable-Baselines3 study, 12 runs, as SB3 itself writes them.

PPO and A2C on CartPole-v1 and Acrobot-v1, seeds 0, 1 and 2, 2,048 steps each, with
``EvalCallback(eval_freq=1024, n_eval_episodes=3)`` into rl-baselines3-zoo's ``{algorithm}/{task}_{seed}``
folders and a ``Monitor`` file beside. The files are checked in, so the docs' SB3 example runs without PyTorch;
to write them again (a few minutes on a CPU), in a virtual environment of their own:

    python -m venv /tmp/sb3 && /tmp/sb3/bin/pip install torch stable-baselines3 gymnasium
    /tmp/sb3/bin/python examples/make_sb3_logs.py
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent / "sb3_logs"
TASKS = ("CartPole-v1", "Acrobot-v1")
SEEDS = (0, 1, 2)
STEPS = 2_048


def main() -> None:
    # imported here: the tests import this module (doctests) where none of these is installed
    import gymnasium as gym
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.callbacks import EvalCallback
    from stable_baselines3.common.monitor import Monitor

    def env(task: str, folder: Path | None, seed: int) -> Any:
        made = Monitor(gym.make(task), str(folder / "0") if folder else None)
        made.reset(seed=seed)
        return made

    shutil.rmtree(ROOT, ignore_errors=True)
    for name, algorithm in (("ppo", PPO), ("a2c", A2C)):
        for task in TASKS:
            for seed in SEEDS:
                folder = ROOT / name / f"{task}_{seed}"
                folder.mkdir(parents=True)
                model = algorithm("MlpPolicy", env(task, folder, seed), seed=seed, verbose=0, device="cpu")
                evaluation = EvalCallback(
                    env(task, None, 1000 + seed), log_path=str(folder), eval_freq=1_024, n_eval_episodes=3
                )
                model.learn(STEPS, callback=evaluation)
                print("wrote", folder.relative_to(ROOT.parent))


if __name__ == "__main__":
    main()
