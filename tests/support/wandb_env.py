"""The environment of a subprocess that writes real offline W&B runs under ``root`` (no key, no network)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


def isolate_wandb(monkeypatch: Any, tmp_path: Path, **extra: str) -> Path:
    """This process's W&B environment, for one test, under ``tmp_path``: no inherited ``WANDB_*`` variable, runs in
    ``wb/wandb``, staging in ``wbdata``, no telemetry; ``extra`` adds variables (mode, base URL, key, ...)."""
    for key in list(os.environ):
        if key.startswith("WANDB_"):
            monkeypatch.delenv(key)
    for key, value in {
        "WANDB_DIR": str(tmp_path / "wb"),
        "WANDB_DATA_DIR": str(tmp_path / "wbdata"),
        "WANDB_CONFIG_DIR": str(tmp_path / "wbconfig"),
        "WANDB_CACHE_DIR": str(tmp_path / "wbcache"),
        "WANDB_SILENT": "true",
        "WANDB_ERROR_REPORTING": "false",
        "WANDB_X_DISABLE_STATS": "true",
        "WANDB_X_DISABLE_MACHINE_INFO": "true",
        **extra,
    }.items():
        monkeypatch.setenv(key, value)
    (tmp_path / "wb").mkdir(exist_ok=True)
    return tmp_path
