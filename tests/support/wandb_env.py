"""The environment of a subprocess that writes real offline W&B runs under ``root`` (no key, no network)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.paths import REPO


def wandb_env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("WANDB_"):
            del env[k]
    env.update(
        WANDB_MODE="offline",
        WANDB_DIR=str(root),
        WANDB_DATA_DIR=str(root / "data"),
        WANDB_CONFIG_DIR=str(root / "config"),
        WANDB_CACHE_DIR=str(root / "cache"),
        WANDB_SILENT="true",
        WANDB_ERROR_REPORTING="false",
        WANDB_X_DISABLE_STATS="true",
        WANDB_X_DISABLE_MACHINE_INFO="true",
        RL_REPO=str(REPO),
    )
    return env
