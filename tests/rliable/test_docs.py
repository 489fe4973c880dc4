"""docs/rliable.md's code blocks run, in order, in one namespace (the migration page stays true)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from tests.support.paths import REPO

PAGE = REPO / "docs" / "rliable.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_the_page_has_the_import_line_and_the_publishing_line() -> None:
    code = blocks()
    assert "from rl_reliable_logger.rliable import library as rly, metrics, plot_utils" in code[0]
    assert any("publish_mlflow(report" in c for c in code)


def test_every_block_runs(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for code in blocks():
        exec(compile(code, str(PAGE), "exec"), namespace)
    plt.close("all")
    assert (tmp_path / "rliable-results").is_dir()
    assert (tmp_path / "mlflow.db").exists()
    import mlflow

    client = mlflow.MlflowClient(tracking_uri="sqlite:///mlflow.db")
    experiment = client.get_experiment_by_name("rliable-migration")
    assert experiment is not None and client.search_runs([experiment.experiment_id])
