"""report.html's header says where the scores came from in a phrase (not a dump of the source's fields), and a
protocol check's id never wraps mid-word."""

from __future__ import annotations

import pandas as pd

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.render.html import build_html


def _report(source: dict) -> Report:
    agg = pd.DataFrame({"algorithm": ["A"], "metric": ["iqm"], "point": [1.0], "low": [0.5], "high": [1.5]})
    return Report(aggregates=agg, provenance={"algorithms": ["A"], "source": source})


def _header(page: str) -> str:
    return page[page.index('<p class="sub">') : page.index("</p>", page.index('<p class="sub">'))]


def test_tracker_source_is_a_phrase_with_the_runs_found():
    source = {
        "tracker": "mlflow",
        "tracking_uri": "http://127.0.0.1:5000",
        "experiments": [{"id": "1", "name": "atari"}],
        "filter": "",
        "location": "MLflow experiment(s) 'atari' at http://127.0.0.1:5000",
        "n_runs_found": 65,
        "skipped": [{"run_id": "p1", "reason": "has none of the fields"}],
    }
    header = _header(build_html(_report(source)))
    assert (
        "Source: MLflow experiment(s) &#x27;atari&#x27; at http://127.0.0.1:5000 (65 runs found, 1 skipped)" in header
    )
    assert "filter:" not in header and "n_runs_found" not in header and "tracking_uri" not in header


def test_file_source_names_the_file_and_its_score_column():
    header = _header(build_html(_report({"kind": "file", "path": "runs <1>.csv", "score_column": "return"})))
    assert "Source: runs &lt;1&gt;.csv, score column &#x27;return&#x27;" in header
    assert "kind:" not in header


def test_check_ids_do_not_wrap_mid_word():
    from rl_reliable_logger.render import html

    assert "td.check code{white-space:nowrap" in html._CSS
    finding = {"check": "runs.unequal", "severity": "warning", "message": "m", "why": "w", "cite": "c"}
    report = _report({"kind": "file", "path": "x.csv"})
    report.provenance["protocol"] = [finding]
    assert '<td class="check"><code>runs.unequal</code></td>' in build_html(report)
