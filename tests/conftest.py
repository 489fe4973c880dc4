"""Fixtures shared by every test folder. Helpers that are not fixtures live in ``tests/support``.

The suite runs in parallel (``python -m pytest -q -n auto``: pytest-xdist, one process per worker, the tests of a
file spread over the workers, so a module-scoped fixture may run once per worker) and must give the same result as
serially (``-n 0``) in any order. So a new test:

- writes only under ``tmp_path`` / ``tmp_path_factory`` (never into the checkout, the current folder or a fixed
  path in the temp folder), and changes the current folder, ``os.environ`` or a global only through ``monkeypatch``;
- starts a server on a port from the ``free_port`` fixture (``tests.support.shared.free_port``), or on port 0,
  never on a fixed one; ``tests.support.mlflow_server.mlflow_server`` and the ``wandb_standin`` fixture do this;
- starts a local Ray only through the ``ray_cluster`` fixture (one Ray at a time on the machine);
- runs a tool of the environment as ``[sys.executable, "-m", tool, ...]`` (or finds it beside ``sys.executable``),
  never by name through ``PATH``: a user's venv need not be activated;
- finishes within the default per-test timeout (``timeout`` in pyproject.toml), or is marked
  ``@pytest.mark.slow`` (it then gets ``SLOW_TIMEOUT``) or ``@pytest.mark.timeout(seconds)`` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.shared import free_port as pick_free_port
from tests.support.shared import one_at_a_time
from tests.support.wandb_standin import start as start_wandb_standin

#: The per-test timeout of a ``slow`` test (servers, subprocesses, Ray, kills) without a ``timeout`` mark of its
#: own: the slowest measured 170 s (an auth ``mlflow server`` and two CLI runs, serially, on a loaded 2-core
#: machine); 900 s leaves five times that and still ends a hang long before CI's 90 minutes. Other tests get the
#: default of pyproject.toml (300 s; the slowest unmarked one measured 53 s).
SLOW_TIMEOUT = 900


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A ``slow`` test, or one that waits for the machine's one Ray, gets ``SLOW_TIMEOUT`` unless it has a
    ``timeout`` mark of its own."""
    for item in items:
        waits_for_ray = "ray_cluster" in getattr(item, "fixturenames", ())
        if (item.get_closest_marker("slow") or waits_for_ray) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))


@pytest.fixture
def free_port() -> int:
    """A loopback port that was free a moment ago (see ``tests.support.shared.free_port``)."""
    return pick_free_port()


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A real local Ray with two CPUs for the tests of one module (the ``ray`` module is yielded), skipped when Ray
    is not installed. Ray keeps machine-wide state (``/tmp/ray``, its ports), so one module at a time, across
    xdist workers and test runs, has it: another waits here. One that is running already is used as it is."""
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed (optional extra: pip install 'rl_reliable_logger[ray]')"
    )
    if ray.is_initialized():
        yield ray
        return
    with one_at_a_time("ray"):
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            yield ray
        finally:
            ray.shutdown()


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
