"""The methods paragraph and checklist follow the options and findings of the report they describe."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import ScoreTable, evaluate
from rl_reliable_logger.analysis.protocol import check_protocol
from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.render.methods import checklist, methods_details, methods_markdown, methods_paragraph
from rl_reliable_logger.render.writer import save_tables, write_methods


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


def _details(report: Report) -> str:
    """The details of methods.md as plain text, one topic after another."""
    return " ".join(text for _, text in methods_details(report))


def test_paragraph_reflects_the_options():
    first = _report(_table())
    short = methods_paragraph(first)  # the paragraph says the headline intervals, the seed and the normalisation
    assert "with 4 runs (seeds) per task" in short and "seed 3;" in short and "Scores are raw" in short
    assert "95% studentized bootstrap (bootstrap-t) intervals for mean, iqm and optimality_gap (200 bootstrap" in short
    one = _details(first)
    assert "4 independent runs (seeds) per task" in one
    assert (  # the default method, bootstrap-t: each aggregate statistic by its rule
        "95% confidence intervals" in one
        and "the aggregate metrics: studentized bootstrap (bootstrap-t) intervals for mean, iqm and optimality_gap "
        "(200 bootstrap replicates) and order-statistic (median of each task's own Student-t bounds"
        in one
        # 4 runs per task: the median's order-statistic interval (median_interval=auto), no resampling
        and "The median's interval is the order-statistic one at 10 runs per task or fewer (`median_interval=auto`)"
        in one
    )
    assert "random seed of the analysis is 3" in one and "Scores are raw" in one
    assert "interquartile mean" in one and "optimality gap" in one
    assert "shaded regions" in one and "not standard deviations" in one
    second = _report(_table(runs_b=3), ci=0.9, method="bca", reps=300, seed=11, task_bootstrap=True, metrics=["mean"])
    short = methods_paragraph(second)
    assert "90% bias-corrected and accelerated (BCa) intervals (300 bootstrap replicates)" in short
    assert "resample tasks, then runs within each task" in short and "4 runs (seeds) per task (B_*x*: 3)" in short
    other = _details(second)
    assert "90% confidence intervals" in other
    assert "the aggregate metrics: bias-corrected and accelerated (BCa) intervals (300 bootstrap replicates)" in other
    assert "the per-task means: bias-corrected (BC) intervals" in other  # no jackknife outside the aggregates
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
    short = methods_paragraph(report)
    assert "normalised per task" in short and "atari100k reference scores" in short
    text = _details(report)
    assert "normalised per task" in text and "reference: atari100k" in text
    assert "No protocol check fired" in text  # evaluate() runs the checks and records them, none fired
    del report.provenance["protocol"]
    assert "Protocol checks were not recorded" in _details(report)
    report.provenance["protocol"] = [f.to_dict() for f in check_protocol(_table(runs_b=2))]
    text = _details(report)
    assert "runs.unequal" in text and "runs.few" in text
    items = {item: met for item, met, _ in checklist(report)}
    assert items["Same number of runs and training budget for every algorithm"] is False
    assert items["Normalisation and its reference scores stated"] is True
    report.provenance["protocol"] = []
    assert "No protocol check fired" in _details(report)


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
    save_tables(report, saved)
    assert methods_markdown(Report.load(saved)) == text  # a results folder read back says the same


def test_methods_md_is_prose_a_paper_can_take():
    """No Markdown escape in our own words (``optimality_gap``, ``P(X > Y)``, ``[Agarwal et al. ...]``): only a
    name that would format is escaped (issue 45)."""
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(s + (a == "B") + (t == "y"))}
        for a in ("A", "B")
        for t in ("x", "y")
        for s in range(2 if a == "B" else 4)
    ]
    text = methods_markdown(_report(ScoreTable(pd.DataFrame(rows))))
    assert "\\" not in text, [line for line in text.splitlines() if "\\" in line]
    assert "optimality_gap is the optimality gap" in text and "P(X > Y)" in text
    assert "[runs.unequal; Agarwal et al. (2021), §3 (Fig. 2)]" in text  # the protocol warning's id and citation


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("PPO_v2", "PPO_v2"),  # intraword: Markdown never emphasises it
        ("_PPO_", r"\_PPO\_"),
        ("*PPO*", r"\*PPO\*"),
        ("[PPO](http://e)", r"[PPO\](http://e)"),
        ("<b>PPO", r"\<b>PPO"),
        ("`PPO", r"\`PPO"),  # an odd backtick; pairs are code spans, which show their text literally
        ("A&amp;B", r"A\&amp;B"),
    ],
)
def test_methods_md_escapes_only_what_a_name_needs(name, shown):
    rows = [
        {"algorithm": a, "task": t, "seed": s, "score": float(s)} for a in (name, "B") for t in "xy" for s in range(3)
    ]
    text = methods_markdown(_report(ScoreTable(pd.DataFrame(rows)), metrics=["iqm"]))
    listed = [shown if raw == name else raw for raw in sorted([name, "B"])]  # the tables' order: sorted names
    assert f"We evaluate 2 algorithms ({listed[0]}, {listed[1]})" in text


# ---------------------------------------------------------------------------- every sentence from provenance (issue 26)
from rl_reliable_logger.render.intervals import TABLE_WORDS, interval_phrase  # noqa: E402
from rl_reliable_logger.stats import intervals  # noqa: E402

_CHECK_OF_ITEM = {
    "Final (not maximum-over-training) scores": "final",
    "Same number of runs and training budget for every algorithm": "budget",
    "Same evaluation protocol (environment version, sticky actions, frame skip, episodes)": "protocol",
}


def _rows(*, steps: bool, env: dict[str, str] | None = None, score: str = "score") -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for alg in ("A", "B"):
        for task in ("Pong", "Breakout"):
            for seed in range(4):
                final = float(rng.normal(5, 1)) + (alg == "B")
                base = {"algorithm": alg, "task": task, "seed": seed, "lr": [0.1, 0.01][seed % 2]}
                if env is not None:
                    base["env_id"] = env[alg].format(task=task)
                if steps:
                    rows += [{**base, "step": s, score: final - (30 - s) / 10} for s in (0, 10, 20, 30)]
                else:
                    rows.append({**base, score: final})
    return pd.DataFrame(rows)


def _assert_every_sentence_follows_provenance(report: Report) -> None:
    prov = report.provenance
    text = _details(report)
    records = prov["intervals"]
    ci = f"{float(prov['ci']):.0%} confidence intervals"
    assert ci in text
    present = {name for name, frame in report.tables() if not frame.empty}
    for table, what in TABLE_WORDS.items():
        clause = f"{what}: "
        if table not in records or table not in present:
            assert clause not in text, table
            continue
        record = records[table]
        spec = intervals.get(record["method"])
        said = text.split(clause, 1)[1].split("; ", 1)[0].split(". The bootstrap", 1)[0]
        assert said == interval_phrase(record, fallbacks=bool(prov["interval_fallbacks"])), (table, said)
        assert spec.phrase in said or record.get("statistics"), (table, said)
        count = re.search(r"\(([\d,]+) bootstrap replicates\)", said)
        assert (count is not None) == spec.replicates, (table, said)
        if count is not None:
            assert count.group(1) == f"{record['replicates']:,}", table
    # P(X > Y)'s own expansion is said exactly when its table was computed with the expanded interval
    widened = "Its expanded percentile interval is widened by the square root of the ratio" in text
    assert widened == ("improvement" in present and intervals.get(records["improvement"]["method"]).needs_tail)
    for family, check in prov["checks"].items():
        if not check["ran"]:
            assert check["detail"].startswith("not checked (")
            assert check["detail"][len("not checked (") : -1] in text, family
    for item, met, reason in checklist(report):
        family = _CHECK_OF_ITEM.get(item)
        if family is None:
            continue
        check = prov["checks"][family]
        fired = {f["check"] for f in prov["protocol"]}
        if met:
            assert check["ran"] and check["detail"] in reason, (item, reason)
        if not check["ran"] and met is not False:
            assert met is None and "not checked (" in reason, (item, reason)
        if met is False:
            assert fired & {"score.maximum", "runs.unequal", "budget.unequal", "budget.short_runs", "protocol.mismatch"}


OPTION_SETS = {
    "csv-no-steps-expanded": (dict(steps=False), dict(method="expanded")),
    "steps-env-bca-curves": (
        dict(steps=True, env={"A": "ALE/{task}-v5", "B": "ALE/{task}-v5"}),
        dict(method="bca", curves=True, curve_reps=50, curve_points=4),
    ),
    "max-name-bootstrap-t-sweep": (
        dict(steps=False, score="max_return"),
        dict(method="bootstrap-t", hyperparameter_keys=["lr"]),
    ),
    "env-mismatch-basic": (dict(steps=False, env={"A": "ALE/{task}-v5", "B": "ALE/{task}-v4"}), dict(method="basic")),
}


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_every_sentence_and_tick_follows_the_provenance(name):
    data, options = OPTION_SETS[name]
    frame = _rows(**data)
    score = data.get("score", "score")
    table = ScoreTable(frame, score=score, source={"score_column": score})
    report = _report(table, **options)
    _assert_every_sentence_follows_provenance(report)
    items = {item: (met, reason) for item, met, reason in checklist(report)}
    final, budget, protocol = (items[k] for k in _CHECK_OF_ITEM)
    if data["steps"]:
        assert final[0] is True and budget[0] is True and "final scores are each run's score" in final[1]
    else:
        assert "not checked (no steps in the input)" in final[1] + budget[1]
        assert budget[0] is not True
    if score == "max_return":
        assert final[0] is False
    elif not data["steps"]:
        assert final[0] is None
    if data.get("env") is None:
        assert protocol[0] is None and "not checked (no protocol columns" in protocol[1]
    elif name == "env-mismatch-basic":
        assert protocol[0] is False
    else:
        assert protocol[0] is True and "env_id" in protocol[1]
    if options["method"] in ("expanded", "bootstrap-t"):  # the false sentence of issue 26: one method for all
        text = methods_markdown(report)
        assert "replicates for aggregate metrics and their differences" not in text


def _one_run_table(runs_b: int) -> ScoreTable:
    rng = np.random.default_rng(1)
    rows = [{"algorithm": "A", "task": t, "seed": 0, "score": rng.normal(10, 3)} for t in ("Pong", "Breakout")]
    rows += [
        {"algorithm": "B", "task": t, "seed": s, "score": rng.normal(12, 3)}
        for t in ("Pong", "Breakout")
        for s in range(runs_b)
    ]
    return ScoreTable(pd.DataFrame(rows))


@pytest.mark.filterwarnings("ignore")
def test_one_run_per_task_is_said_where_the_intervals_are():
    every = methods_markdown(_report(_one_run_table(1)))
    assert "with 1 run (seed) per task," in every and "1 independent run (seed) per task" in every
    said = "With one run per task for every algorithm, these intervals cannot show run-to-run spread"
    assert every.count(said) == 2  # the paragraph and the details' intervals
    assert "The per-task means of 4 (algorithm, task) cells of one run have no interval" in every
    one = methods_markdown(_report(_one_run_table(3)))
    assert "With one run per task for A, those of A (and of the pairs they are in) cannot show" in one
    assert "The per-task means of 2 (algorithm, task) cells of one run have no interval" in one
    assert "one run per task" not in methods_markdown(_report(_table())).lower()


@pytest.mark.filterwarnings("ignore")
def test_bands_without_a_caveat_column_are_said_to_show_no_spread():
    """The profile and gap-curve bands of an algorithm of one run per task are zero wide and have no caveat column:
    the details say so, naming whose; it is true of the tables (low == high for that algorithm only)."""
    report = _report(_one_run_table(3))
    profile = report.profiles
    assert (profile[profile.algorithm == "A"].low == profile[profile.algorithm == "A"].high).all()
    assert (profile[profile.algorithm == "B"].high - profile[profile.algorithm == "B"].low).max() > 0
    said = "The bands of the performance profiles and the optimality-gap curve have no caveat column: "
    assert said + "A's bands show no run-to-run spread either." in methods_markdown(report)
    assert said + "their bands show" in methods_markdown(_report(_one_run_table(1)))
    assert "bands" not in methods_markdown(_report(_table()))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("runs_b", "named"), [(1, "A and B"), (3, "A")])
def test_the_checklist_does_not_tick_intervals_that_cannot_show_spread(runs_b, named):
    """An interval of an algorithm with one run per task shows no run-to-run spread: the checklist item is not
    met, and says whose intervals they are; with two runs or more it is met."""
    items = {item: (met, why) for item, met, why in checklist(_report(_one_run_table(runs_b)))}
    met, why = items["Interval estimates (not only point estimates) for aggregate metrics"]
    assert met is False and why.endswith(f"one run per task for {named}: no run-to-run spread shown"), why
    items = {item: met for item, met, _ in checklist(_report(_table()))}
    assert items["Interval estimates (not only point estimates) for aggregate metrics"] is True
