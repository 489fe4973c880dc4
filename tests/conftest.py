"""Fixtures shared by every test folder. Helpers that are not fixtures live in ``tests/support``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.wandb_standin import start as start_wandb_standin


@pytest.fixture
def wandb_standin(monkeypatch: pytest.MonkeyPatch, tmp_path: Any):
    """A running stand-in with ``WANDB_BASE_URL``/``WANDB_API_KEY`` pointing at it."""
    st, server = start_wandb_standin()
    monkeypatch.setenv("WANDB_BASE_URL", st.base_url)
    monkeypatch.setenv("WANDB_API_KEY", st.api_key)
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("WANDB_X_DISABLE_STATS", "true")
    monkeypatch.setenv("WANDB_X_DISABLE_MACHINE_INFO", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("WANDB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.delenv("WANDB_ENTITY", raising=False)
    monkeypatch.delenv("WANDB_PROJECT", raising=False)
    try:
        yield st
    finally:
        server.shutdown()
        server.server_close()
    # a GraphQL operation the stand-in does not know means the real client changed: fail, never pass silently
    assert st.unknown == [], f"the stand-in was sent operations it does not answer: {st.unknown}"
