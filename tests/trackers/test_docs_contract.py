"""docs/mlflow.md and docs/wandb.md state the publishing contract in one shared, identical section."""

from __future__ import annotations

from tests.support.paths import REPO

HEADING = "### The publishing contract (the same for MLflow, W&B and the results folder)"


def _section(name: str) -> str:
    text = (REPO / "docs" / name).read_text(encoding="utf-8")
    assert HEADING in text, name
    body = text.split(HEADING, 1)[1]
    return body.split("\n### ", 1)[0].split("\n## ", 1)[0].strip()


def test_the_contract_section_is_the_same_in_both_tracker_docs():
    assert _section("mlflow.md") == _section("wandb.md")
    assert "already published to <sink> with the same content" in _section("mlflow.md")
