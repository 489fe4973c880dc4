"""The methods paragraph and checklist follow the options and findings of the report they describe."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.protocol import check_protocol
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.render.methods import checklist, methods_markdown, methods_paragraph, write_methods


def _table(runs_b: int = 4) -> ScoreTable:
    rng = np.random.default_rng(0)
    rows = []
    for alg, n in (("A", 4), ("B_*x*", runs_b)):
        for t in ("Pong", "Breakout"):
            rows += [{"algorithm": alg, "task": t, "seed": s, "score": rng.normal(10, 3)} for s in range(n)]
    return ScoreTable(pd.DataFrame(rows))


def _report(table: ScoreTable, **options) -> Report:
    base = dict(reps=200, profile_reps=50, improvement_reps=50, seed=3)
    return evaluate(table, **{**base, **options})


def test_paragraph_reflects_the_options():
    one = methods_paragraph(_report(_table()))
    assert "4 independent runs (seeds) per task" in one
    assert "95% percentile confidence intervals" in one and "200 replicates" in one
    assert "random seed of the analysis is 3" in one and "Scores are raw" in one
    assert "interquartile mean" in one and "optimality gap" in one
    assert "shaded regions" in one and "not standard deviations" in one
    other = methods_paragraph(
        _report(_table(runs_b=3), ci=0.9, method="bca", reps=300, seed=11, task_bootstrap=True, metrics=["mean"])
    )
    assert "90% bias-corrected and accelerated (BCa)" in other and "300 replicates" in other
    assert "random seed of the analysis is 11" in other
    assert "after resampling the tasks themselves" in other
    assert "A: 4; B_*x*: 3" in other and "interquartile" not in other
    assert one != other


def test_normalisation_and_findings_appear():
    rows = [
        {"algorithm": a, "task": g, "seed": s, "score": 100.0 + s}
        for a in ("A", "B")
        for g in ("Pong", "Breakout")
        for s in range(3)
    ]
    table = ScoreTable(pd.DataFrame(rows))
    report = _report(table, normalize="atari100k")
    text = methods_paragraph(report)
    assert "normalised per task" in text and "reference: atari100k" in text
    assert "No protocol check fired" in text  # evaluate() runs the checks and records them, none fired
    del report.provenance["protocol"]
    assert "Protocol checks were not recorded" in methods_paragraph(report)
    report.provenance["protocol"] = [f.to_dict() for f in check_protocol(_table(runs_b=2))]
    text = methods_paragraph(report)
    assert "runs.unequal" in text and "runs.few" in text
    items = {item: met for item, met, _ in checklist(report)}
    assert items["Same number of runs and training budget for every algorithm"] is False
    assert items["Normalisation and its reference scores stated"] is True
    report.provenance["protocol"] = []
    assert "No protocol check fired" in methods_paragraph(report)


def test_methods_md_escapes_names_and_ticks_items(tmp_path):
    report = _report(_table())
    path = write_methods(report, tmp_path)
    text = path.read_text()
    assert text == methods_markdown(report)
    assert r"B\_\*x\*" in text and "B_*x*" not in text
    assert "- [x] Interval estimates" in text
    assert "- [?] Hyperparameters tuned on other seeds" in text
    assert "- [x] Analysis seed fixed — seed 3" in text
    saved = tmp_path / "saved"
    report.save_tables(saved)
    assert methods_markdown(Report.load(saved)) == text  # a results folder read back says the same
