"""Every sentence that describes an interval, for the main job under every interval method, against provenance.

The main job (``evaluate examples/atari100k_scores.csv --normalize atari100k``, small replicate counts) runs once
per requestable method of the registry. Each table's provenance record must follow the registry's rule, and every
place that describes intervals (console summary, report.html, methods.md, table.md, table.tex) must say, for the
tables it describes, the method(s), level and replicate count that were computed, and nothing else; so must the
descriptions published with the analysis (the W&B report page, the MLflow run's description).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.render.html import build_html
from rl_reliable_logger.render.intervals import TABLE_WORDS
from rl_reliable_logger.render.tables import to_latex, to_markdown
from rl_reliable_logger.stats import intervals
from rl_reliable_logger.trackers.mlflow.sink import _note as mlflow_note
from rl_reliable_logger.trackers.wandb.report_page import methods_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REPS = {"reps": 300, "profile_reps": 120, "improvement_reps": 110}
FAST = ["--reps", "300", "--profile-reps", "120", "--improvement-reps", "110", "--seed", "0", "--no-figures"]


def _phrases(record: dict) -> set[str]:
    """The registry phrases of every method a table's record says it used."""
    names = {record["method"], *dict(record.get("statistics") or {}).values()}
    if record.get("statistics"):
        names = set(record["statistics"].values())
    return {intervals.get(n).phrase for n in names}


def _check_said(said: str, record: dict, table: str) -> None:
    """``said`` describes exactly the methods of ``record``, with its replicate count where they use replicates."""
    used = _phrases(record)
    for spec in intervals.REGISTRY.values():
        mentioned = re.search(rf"(?:^|, | and ){re.escape(spec.phrase)} intervals", said) is not None
        assert mentioned == (spec.phrase in used), (table, spec.name, said)
    for stat, name in dict(record.get("statistics") or {}).items():
        assert re.search(rf"{re.escape(intervals.get(name).phrase)} intervals for [^;]*\b{stat}\b", said), (stat, said)
    count = re.findall(r"\(([\d,]+) bootstrap replicates\)", said)
    uses = intervals.get(record["method"]).replicates
    assert count == ([f"{record['replicates']:,}"] if uses else []), (table, said)
    assert record["replicates"] == (REPS[_REPS_OPTION[table]] if uses else None), table


_REPS_OPTION = {
    "aggregates": "reps",
    "differences": "reps",
    "improvement": "improvement_reps",
    "profiles": "profile_reps",
    "gap_curve": "profile_reps",
    "per_task": "profile_reps",
}


@pytest.mark.parametrize("method", intervals.METHODS)
def test_every_interval_sentence_of_the_main_job_follows_provenance(method, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["evaluate", str(EXAMPLES / "atari100k_scores.csv"), "--normalize", "atari100k", "--method", method]
    assert main([*argv, *FAST, "--out", str(out)]) == 0
    console = capsys.readouterr().out
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    records = prov["intervals"]
    # provenance follows the registry's rule, table by table and statistic by statistic
    rule = intervals.table_rule(method)
    assert {t: r["method"] for t, r in records.items()} == {t: rule[t] for t in records}
    assert all(r["level"] == 0.95 for r in records.values())
    fewest = min(n for per in prov["runs_per_task"].values() for n in per.values())
    request = intervals.ResamplingRequest(method).for_runs(fewest)  # median_interval=auto, the default
    for table in intervals.STATISTIC_TABLES:
        for metric, name in dict(records[table].get("statistics") or {}).items():
            kind = {k: k for k in ("mean", "median", "iqm", "optimality_gap")}.get(metric, "*")
            assert name == request.statistic_method(table, kind).name

    # the headline table's intervals: console, report.html, table.md and table.tex say the aggregates' record
    headline = records["aggregates"]
    # the console's first line is short (issue 45): the level, the method asked for and the replicate count; each
    # statistic's interval is said in full everywhere below
    first = console.splitlines()[0]
    assert len(first) <= 200, first
    reps = f", {headline['replicates']:,} replicates" if intervals.get(headline["method"]).replicates else ""
    assert f"; 95% intervals (method {method}){reps}, seed 0" in first, first
    # report.html, table.md and table.tex as the full job writes them (--no-figures writes none of them)
    saved = Report.load(out)
    html = build_html(saved)
    said_html = re.search(r"Headline metrics: 95% (.*?); every table", html)
    assert said_html is not None
    _check_said(said_html.group(1).replace("&#x27;", "'"), headline, "aggregates")
    assert f"{method} bootstrap" not in html
    table_md = to_markdown(saved)
    said_md = re.search(r"CI\]: 95% (.*)\. Bold", table_md)
    assert said_md is not None
    _check_said(said_md.group(1).replace("\\_", "_"), headline, "aggregates")
    said_tex = re.search(r"\\caption\{.*?: 95\\% (.*)\. Bold", to_latex(saved))
    assert said_tex is not None
    _check_said(said_tex.group(1).replace("\\_", "_"), headline, "aggregates")

    # the tracker descriptions: the W&B report page and the MLflow run's description
    said_wandb = re.match(r"95% (.*) \(seed 0\)", methods_text(saved).replace("\\_", "_"))
    assert said_wandb is not None
    _check_said(said_wandb.group(1), headline, "aggregates")
    said_mlflow = re.search(r"Point estimate \[interval\]: 95% (.*)\.\n", mlflow_note(saved, str(out)))
    assert said_mlflow is not None
    _check_said(said_mlflow.group(1), headline, "aggregates")

    # methods.md: one clause per table, each its record
    methods = (out / "methods.md").read_text(encoding="utf-8").replace("\\_", "_")
    for table, record in records.items():
        clause = f"{TABLE_WORDS[table]}: "
        assert clause in methods, table
        said = methods.split(clause, 1)[1].split("; ", 1)[0].split(". The bootstrap", 1)[0]
        _check_said(said, record, table)
    no_resampling = [t for t, r in records.items() if not intervals.get(r["method"]).bootstrap]
    assert ("use no resampling" in methods) == bool(no_resampling)
    assert "(if computed)" not in methods


@pytest.mark.parametrize("method", ["percentile", "bootstrap-t"])
def test_the_order_statistic_median_is_said_where_the_headline_intervals_are(method, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["evaluate", str(EXAMPLES / "atari100k_scores.csv"), "--normalize", "atari100k", "--method", method]
    assert main([*argv, *FAST, "--median-interval", "order-statistic", "--out", str(out)]) == 0
    assert "(method " + method + ")" in capsys.readouterr().out.splitlines()[0]  # in full in the files below
    headline = json.loads((out / "provenance.json").read_text(encoding="utf-8"))["intervals"]["aggregates"]
    assert headline["statistics"]["median"] == "order-statistic"
    saved = Report.load(out)
    said = {
        "html": re.search(r"Headline metrics: 95% (.*?); every table", build_html(saved)),
        "table.md": re.search(r"CI\]: 95% (.*)\. Bold", to_markdown(saved)),
        "table.tex": re.search(r"\\caption\{.*?: 95\\% (.*)\. Bold", to_latex(saved)),
    }
    for where, found in said.items():
        assert found is not None, where
        text = found.group(1).replace("&#x27;", "'").replace("\\_", "_")
        _check_said(text, headline, "aggregates")
        # the replicate count goes with the bootstrap intervals, not with the order-statistic one
        assert text.endswith(" intervals for median"), (where, text)
    methods = (out / "methods.md").read_text(encoding="utf-8").replace("\\_", "_")
    clause = methods.split(f"{TABLE_WORDS['aggregates']}: ", 1)[1].split("; ", 1)[0]
    _check_said(clause, headline, "aggregates")


def test_a_median_alone_under_the_order_statistic_rule_is_said_without_replicates(tmp_path, capsys):
    # the default method at <= 10 runs per task gives the median (the only metric here) the order-statistic interval
    # and its differences the MOVER one: neither resamples, so no sentence may give them a replicate count
    out = tmp_path / "out"
    argv = ["evaluate", str(EXAMPLES / "atari100k_scores.csv"), "--normalize", "atari100k", "--metrics", "median"]
    assert main([*argv, *FAST, "--out", str(out)]) == 0
    capsys.readouterr()
    records = json.loads((out / "provenance.json").read_text(encoding="utf-8"))["intervals"]
    assert records["aggregates"]["statistics"] == {"median": "order-statistic"}
    assert records["differences"]["statistics"] == {"median": "order-statistic-mover"}
    methods = (out / "methods.md").read_text(encoding="utf-8").replace("\\_", "_")
    for table in ("aggregates", "differences"):
        clause = methods.split(f"{TABLE_WORDS[table]}: ", 1)[1].split("; ", 1)[0].split(". The bootstrap", 1)[0]
        name = records[table]["statistics"]["median"]
        assert clause == f"{intervals.get(name).phrase} intervals", (table, clause)
    saved = Report.load(out)
    said = re.search(r"CI\]: 95% (.*)\. Bold", to_markdown(saved))
    assert said is not None and "bootstrap replicates" not in said.group(1), said
