"""A table normalised before ``evaluate()`` (``data.normalize``) is normalised scores: every sentence and table is
that of ``evaluate(table, normalize=...)``; it was said to be raw scores of different scales."""

from __future__ import annotations

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.data.normalize import normalize
from tests.support.paths import EXAMPLES

FAST = dict(reps=200, profile_reps=50, improvement_reps=50, only_algorithms=["DER", "SPR"], seed=0)


def test_a_table_normalised_before_is_said_to_be_normalised():
    raw = ScoreTable.from_csv(EXAMPLES / "atari100k_scores.csv")
    before = evaluate(normalize(raw, "atari100k"), **FAST)
    here = evaluate(raw, normalize="atari100k", **FAST)
    assert not [w for w in before.warnings if "not normalised" in w], before.warnings
    assert before.warnings == here.warnings
    assert (
        before.provenance["normalization"]
        == here.provenance["normalization"]
        == ("human-normalised score (random = 0, human = 1)")
    )
    for name in ("aggregates", "per_task", "differences", "improvement"):
        assert before.table(name).equals(here.table(name)), name
    raw_report = evaluate(raw, **FAST)  # raw scores are still said to be raw
    assert raw_report.provenance["normalization"] == "raw score"
    assert [w for w in raw_report.warnings if "not normalised" in w]
