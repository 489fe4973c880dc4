"""Fixtures for the package's docstring examples (``--doctest-modules``); the tests' own live in tests/conftest.py.

Every example of the package sees ``table``: a small ScoreTable (2 algorithms x 3 tasks x 4 seeds, scores already
in [0, 1]), and runs in a fresh temporary folder, so an example that saves a report writes nowhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parent / "rl_reliable_logger"


def _example_table() -> Any:
    import numpy as np
    import pandas as pd

    from rl_reliable_logger import ScoreTable

    rng = np.random.default_rng(0)
    rows = [
        {"algorithm": algorithm, "task": task, "seed": seed, "score": float(np.clip(base + rng.normal(0, 0.1), 0, 1))}
        for algorithm, base in (("DQN", 0.4), ("PPO", 0.6))
        for task in ("Breakout", "Pong", "Seaquest")
        for seed in range(4)
    ]
    return ScoreTable(pd.DataFrame(rows))


@pytest.fixture(autouse=True)
def _docstring_example_namespace(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not Path(str(request.node.path)).resolve().is_relative_to(PACKAGE):
        return  # a test under tests/: nothing to provide
    monkeypatch.chdir(tmp_path)
    namespace = request.getfixturevalue("doctest_namespace")
    namespace["table"] = _example_table()
