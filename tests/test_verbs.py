"""The verbs at the top level (issue 57): ``to_latex``, ``to_markdown`` and ``methods_text`` give a Report's
paper table and methods section as text, exactly what a results bundle's ``table.tex``, ``table.md`` and
``methods.md`` hold, without writing a folder."""

from __future__ import annotations

import pandas as pd

import rl_reliable_logger as rl
from tests.support.reports import REAL


def _report() -> rl.Report:
    rows = [
        {"algorithm": alg, "task": task, "seed": seed, "score": score}
        for alg in ("DER", "SPR")
        for task, runs in REAL[alg].items()
        for seed, score in enumerate(runs)
    ]
    return rl.evaluate(pd.DataFrame(rows), reps=500, profile_reps=100, improvement_reps=100, seed=0)


def test_the_verbs_give_what_the_bundle_holds(tmp_path):
    report = _report()
    folder = rl.save_report(report, tmp_path / "bundle")
    assert rl.to_latex(report) == (folder / "table.tex").read_text(encoding="utf-8")
    assert rl.to_markdown(report) == (folder / "table.md").read_text(encoding="utf-8")
    assert rl.methods_text(report) == (folder / "methods.md").read_text(encoding="utf-8")


def test_the_verbs_name_the_algorithms_and_the_interval_method():
    report = _report()
    latex, markdown, methods = rl.to_latex(report), rl.to_markdown(report), rl.methods_text(report)
    assert "\\begin{table}" in latex and "\\toprule" in latex and "booktabs" in latex
    assert all(name in text for name in ("DER", "SPR") for text in (latex, markdown))
    assert markdown.splitlines()[0].startswith("| Algorithm |")
    assert methods.startswith("# Methods") and "bootstrap-t" in methods
    assert {"to_latex", "to_markdown", "methods_text"} <= set(rl.__all__)
