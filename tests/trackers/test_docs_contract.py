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


def test_every_headline_key_quoted_in_the_docs_has_the_published_form():
    """Keys such as ``iqm/ucb_low`` (issue 26) do not exist: the statistic comes first (``iqm_low/ucb``),
    as :func:`~rl_reliable_logger.trackers.base.publishing.headline_metrics` writes them."""
    import re

    import pandas as pd

    from rl_reliable_logger.analysis.report import Report
    from rl_reliable_logger.trackers.base.publishing import headline_metrics

    docs = [REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "integrations").glob("*/README.md")]
    quoted = re.compile(r"`((?:mean|median|iqm|optimality_gap)(?:_low|_high)?)/([A-Za-z0-9_.-]+)`")
    seen = 0
    for path in docs:
        for stat, alg in quoted.findall(path.read_text(encoding="utf-8")):
            base = re.sub(r"_(low|high)$", "", stat)
            report = Report(
                aggregates=pd.DataFrame({"algorithm": [alg], "metric": [base], "point": [1.0], "low": [0], "high": [2]})
            )
            assert f"{stat}/{alg}" in headline_metrics(report), (path.name, f"{stat}/{alg}")
            assert not alg.endswith(("_low", "_high")), (path.name, f"{stat}/{alg}")
            seen += 1
    assert seen >= 5
