"""methods.md opens with a paragraph a paper can take as it is (at most 200 words), and loses no fact (issue 57).

The main job (``evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0``, small replicate counts: the
count is one word either way) and a few option combinations: its paragraph stays short, names the data, the
normalisation, the metrics, the headline intervals with their replicates and the seed; every fact the single long
paragraph used to hold (runs, definitions, each table's intervals, the median's and P(X > Y)'s sentences with the
coverage study's figures, success rates, comparisons, figures, protocol checks, versions) is in methods.md's Details,
and the coverage study is never quoted in the paragraph.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from rl_reliable_logger import evaluate, methods_text
from rl_reliable_logger.render.methods import methods_details, methods_paragraph
from rl_reliable_logger.render.view import as_view

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = {"reps": 300, "profile_reps": 100, "improvement_reps": 100, "seed": 0}
MAIN = {"normalize": "atari100k"}
OPTIONS = {
    "main job": MAIN,
    "percentile": {**MAIN, "method": "percentile"},
    "compare-all": {**MAIN, "comparisons": True},
    "jordan": {**MAIN, "jordan": True},
    "success rates": {**MAIN, "successes": "won", "episodes": "n"},
    "raw scores": {},
}


def _frame() -> pd.DataFrame:
    """The main job's scores; a success count per run (its score's rank in tenths) for the success tables."""
    frame = pd.read_csv(EXAMPLES / "atari100k_scores.csv")
    frame["n"] = 10
    frame["won"] = (frame.groupby("task")["score"].rank(pct=True) * 10).round().astype(int)
    return frame


@pytest.fixture(scope="module")
def reports():
    frame = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: evaluate(frame, **{**FAST, **options}) for name, options in OPTIONS.items()}


def _old_facts(report) -> list[str]:
    """Each fact the one long paragraph said before issue 57, from the same view it was built from."""
    view = as_view(report)
    prov = dict(view.provenance)
    facts = [view.counts.text(), *view.intervals.clauses, *view.intervals.resampling_free]
    facts += [view.intervals.median, view.intervals.improvement, view.success or "", str(prov.get("comparisons") or "")]
    facts += [f"{m} is " for m in prov["metrics"]]
    facts += [str(f["message"]) for f in prov["protocol"]]
    facts += [c["detail"][len("not checked (") : -1] for c in prov["checks"].values() if not c["ran"]]
    facts += [f"rl_reliable_logger {prov['versions']['rl_reliable_logger']}", f"numpy {prov['versions']['numpy']}"]
    facts += ["reference: atari100k" if prov.get("normalize") else "Scores are raw (not normalised)"]
    facts += [f"The random seed of the analysis is {prov['seed']}", "error bars and shaded regions are the pointwise"]
    return [f for f in facts if f]


@pytest.mark.parametrize("name", list(OPTIONS))
def test_the_paragraph_a_paper_takes_has_at_most_200_words(reports, name):
    report = reports[name]
    paragraph = methods_paragraph(report)
    assert len(paragraph.split()) <= 200, (len(paragraph.split()), paragraph)
    prov = report.provenance
    assert "6 algorithms (DER, DrQ, DrQ(eps), OTR, SPR, SimPLe) on 26 tasks" in paragraph
    assert "10 runs (seeds) per task (SimPLe: 5)" in paragraph  # the data, the run counts that differ named
    assert as_view(report).intervals.headline in paragraph  # the headline's method, level and replicates
    assert "seed 0;" in paragraph and "Agarwal et al. (2021)" in paragraph
    assert ("atari100k reference scores" in paragraph) == bool(prov.get("normalize"))
    assert ("Scores are raw" in paragraph) != bool(prov.get("normalize"))
    assert ("All pairs of algorithms are compared" in paragraph) == bool(prov.get("comparisons"))
    assert ("Jordan et al. (2020)" in paragraph) == bool(prov.get("jordan") or OPTIONS[name].get("jordan"))
    assert ("success rates" in paragraph) == ("successes" in OPTIONS[name])
    # study figures, DeLong and Welch–Satterthwaite belong to the details
    for detail in ("coverage study", "DeLong", "Welch", "Protocol checks", "numpy"):
        assert detail not in paragraph, detail


@pytest.mark.parametrize("name", list(OPTIONS))
def test_every_fact_of_the_old_paragraph_is_still_in_methods_md(reports, name):
    report = reports[name]
    text = methods_text(report)
    paragraph, rest = text.split("\n\n## Details\n\n", 1)
    assert paragraph.startswith("# Methods\n\n") and "\n" not in paragraph.removeprefix("# Methods\n\n")
    assert rest.index("## Reporting checklist") > 0  # the details come before the checklist
    details = " ".join(said for _, said in methods_details(report))
    for fact in _old_facts(report):
        assert fact in details, fact
        assert fact in rest, fact  # as written in methods.md (no name here needs a Markdown escape)
    assert "next to the middle tie" not in text  # the garbled sentence of issue 57
    assert "not a property of this interval on these scores" in details  # study figures, named as such


def test_report_html_shows_the_same_paragraph_and_details(reports):
    from html import escape

    from rl_reliable_logger.render.html import build_html

    report = reports["main job"]
    page = build_html(report)
    assert f"<p>{escape(methods_paragraph(report))}</p><h3>Details</h3>" in page
    for topic, text in methods_details(report):
        assert f"<li><strong>{escape(topic)}.</strong> {escape(text)}</li>" in page, topic
