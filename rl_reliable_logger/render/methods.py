"""methods.md: a paragraph a paper can take as it is, the details behind it, and a reporting checklist.

The paragraph (:func:`methods_paragraph`, about 200 words at most) says the data, the normalisation, the metrics,
the headline intervals with their replicates, the seed and what to cite. The details (:func:`methods_details`) say
the rest, one topic each: runs per algorithm, metric definitions, each table's interval method, level and
replicates, the median's and P(X > Y)'s intervals and what the coverage study measured of them (a study result on
named data, never the interval's property), success rates, all-pairs comparisons (``provenance["comparisons"]``),
the seed, what the figures' error bars and shaded regions are, the protocol checks that fired
(``provenance["protocol"]``: finding dicts, see :mod:`~rl_reliable_logger.analysis.protocol`) and software versions.

Everything is read from a Report's view (:mod:`.view`: its tables, provenance, interval sentences and references;
so a results folder read back gives the same text).

The checklist follows the recommendations of Agarwal et al. (2021); each item is ticked (``[x]``),
not met (``[ ]``) or unknown from the results alone (``[?]``), with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..data.counts import plural, span
from ..data.names import escape_markdown_prose
from . import intervals as words
from .view import ReportView, Viewable, as_view

#: Check families of ``provenance["checks"]`` (``analysis.protocol.checks_run``), as the paragraph names them.
_CHECK_WORDS = {
    "runs": "runs per cell",
    "budget": "training budgets",
    "protocol": "evaluation protocol fields",
    "score_name": "the score's name",
    "final": "final scores at the last step",
    "tuning": "tuning seeds",
}


def _checks(prov: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = prov.get("checks")
    return {k: v for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}


_ROBUST = {"iqm", "optimality_gap", "median"}


def _metric_definition(name: str, gamma: float) -> str:
    key = str(name).lower()
    fixed = {
        "mean": "the mean over tasks of the per-task mean score",
        "median": "the median over tasks of the per-task mean score",
        "iqm": "the interquartile mean (IQM): the mean of the middle 50% of all runs pooled over tasks, "
        "each task weighted equally (25% trimmed from each end)",
        "optimality_gap": f"the optimality gap: the average shortfall of runs below a score of {gamma:g}, "
        f"i.e. {gamma:g} − mean(min(score, {gamma:g}))",
        "dp25": "DP-25: the mean of the worst 25% of runs",
    }
    if key in fixed:
        return fixed[key]
    if key.startswith("trimmed_mean_"):
        return f"the {float(key.split('_')[-1]):.0%} trimmed mean over all runs"
    if key.startswith("p_above_"):
        return f"the fraction of runs scoring above {key.split('_')[-1]}"
    if key.startswith("dp"):
        return f"the mean of the worst {key[2:]}% of runs"
    return f"{name} (a user-defined metric)"


def _runs_text(prov: dict[str, Any]) -> str:
    per = prov.get("runs_per_task") or {}
    if not per:
        return "an unrecorded number of runs per task"
    counts = {a: sorted(set(v.values())) for a, v in per.items()}
    every = sorted({n for c in counts.values() for n in c})
    if len(every) == 1:
        runs = "run (seed)" if every[0] == 1 else "runs (seeds)"
        return f"{every[0]} independent {runs} per task for every algorithm"
    parts = [f"{a}: {span(c[0], c[-1])}" for a, c in counts.items()]
    return "runs per task that differ between algorithms (" + "; ".join(parts) + ")"


def _findings(prov: dict[str, Any]) -> list[dict[str, Any]]:
    found = prov.get("protocol") or []
    return [f for f in found if isinstance(f, dict)]


def _cite(finding: dict[str, Any]) -> str:
    """``; <paper, section>`` of a finding dict (results written before findings carried citations: "")."""
    cite = finding.get("cite")
    return f"; {cite}" if cite else ""


def references(report: Viewable) -> list[str]:
    """Full references of the papers cited: the checklist's (Agarwal et al.) and those of the fired checks."""
    return list(as_view(report).references)


def _why_not(check: dict[str, Any]) -> str:
    """``no steps in the input`` of a check detail ``not checked (no steps in the input)``."""
    detail = str(check.get("detail") or "")
    return detail[len("not checked (") : -1] if detail.startswith("not checked (") and detail.endswith(")") else detail


def _one_run_algorithms(prov: Mapping[str, Any]) -> list[str]:
    """The algorithms with one run on every task (``provenance["runs_per_task"]``): no interval of theirs can show
    run-to-run spread (their rows carry the caveat, :mod:`..analysis.caveats`)."""
    per = prov.get("runs_per_task") or {}
    return [str(a) for a, v in per.items() if isinstance(v, Mapping) and v and max(v.values()) <= 1]


def _one_run_sentence(prov: Mapping[str, Any], what: str) -> str:
    """What one run per task leaves of ``what`` (the intervals said before it): "" where every algorithm has two runs
    or more on some task."""
    alone = _one_run_algorithms(prov)
    if not alone:
        return ""
    every = len(alone) == len(prov.get("runs_per_task") or {})
    who = "every algorithm" if every else _join(alone)
    whose = what if every else f"those of {_join(alone)} (and of the pairs they are in)"
    return (
        f" With one run per task for {who}, {whose} cannot show run-to-run spread (a task's one run shows none): "
        "the rows of the aggregates, the differences and P(X > Y) carry that caveat."
    )


#: The tables of bands (no caveat column), as a sentence names them.
_BANDS = {"profiles": "the performance profiles", "gap_curve": "the optimality-gap curve", "curves": "the curves"}


def _one_run_bands_sentence(view: ReportView, prov: Mapping[str, Any]) -> str:
    """The bands that show no spread for an algorithm of one run per task either, and have no caveat column to
    say so: "" when no algorithm has one run per task or no such table was computed."""
    alone = _one_run_algorithms(prov)
    bands = [said for name, said in _BANDS.items() if name in view.frames and not view.frames[name].empty]
    if not alone or not bands:
        return ""
    whose = "their" if len(alone) == len(prov.get("runs_per_task") or {}) else f"{_join(alone)}'s"
    return f" The bands of {_join(bands)} have no caveat column: {whose} bands show no run-to-run spread either."


def _single_cells_sentence(view: ReportView, prov: Mapping[str, Any]) -> str:
    """That tasks of one run get no per-task interval ("" where none has one run or no per-task table)."""
    per = prov.get("runs_per_task") or {}
    single = sum(1 for v in per.values() if isinstance(v, Mapping) for n in v.values() if n <= 1)
    if not single or view.per_task.empty:
        return ""
    return (
        f" The per-task means of {single:,} (algorithm, task) {'cell' if single == 1 else 'cells'} of one run have "
        "no interval (a Student-t interval needs two runs, a bootstrap of one run repeats it)."
    )


def _interval_sentence(view: ReportView, prov: Mapping[str, Any]) -> str:
    """What the intervals are, per table computed (its method, level and replicates), and how the bootstrap ones
    resample."""
    ci = float(prov.get("ci", 0.95))
    resample = "runs within each task" + (
        ", after resampling the tasks themselves," if prov.get("task_bootstrap") else ""
    )
    text = (
        f"Uncertainty is quantified with {ci:.0%} confidence intervals: "
        + "; ".join(view.intervals.clauses)
        + f". The bootstrap intervals come from a stratified bootstrap that resamples {resample} (each task keeps "
        "its number of runs; Agarwal et al., 2021)"
    )
    others = view.intervals.resampling_free
    if others:
        text += "; " + " and ".join(others) + " use no resampling"
    return (
        text
        + "."
        + _one_run_sentence(prov, "these intervals")
        + _one_run_bands_sentence(view, prov)
        + _single_cells_sentence(view, prov)
    )


#: The most algorithms the paragraph names one by one (more: their number, the names under "Details").
NAMED_ALGORITHMS = 8


def _runs_short(prov: dict[str, Any]) -> str:
    """``10 runs (seeds) per task (SimPLe: 5)``: the count most algorithms share, the others named (at most three;
    more: the range, each algorithm's count under "Details").

    Example:
        >>> per = {a: {"Pong": 10, "Qbert": 10} for a in ("DER", "SPR")}
        >>> _runs_short({"runs_per_task": {**per, "SimPLe": {"Pong": 5, "Qbert": 5}}})
        '10 runs (seeds) per task (SimPLe: 5)'
    """
    per = prov.get("runs_per_task") or {}
    if not per:
        return "an unrecorded number of runs per task"
    said = {a: span(min(v.values()), max(v.values())) for a, v in per.items()}
    shared = max(dict.fromkeys(said.values()), key=list(said.values()).count)  # a tie: the first algorithm's
    others = [f"{a}: {n}" for a, n in said.items() if n != shared]
    if not others:
        return f"{shared} {'run (seed)' if shared == '1' else 'runs (seeds)'} per task"
    if len(others) > 3:
        every = [n for v in per.values() for n in v.values()]
        return f"{span(min(every), max(every))} runs (seeds) per task, depending on the algorithm"
    return f"{shared} runs (seeds) per task ({'; '.join(others)})"


def _what_is_reported(view: ReportView, metrics: list[str]) -> str:
    """``the mean, median, IQM and optimality gap over tasks, performance profiles and ...``."""
    parts = []
    if metrics:
        titles = [view.title(m) for m in metrics]  # IQM stays upper case, "Optimality gap" does not mid-sentence
        parts.append("the " + _join([t if t[:2].isupper() else t[:1].lower() + t[1:] for t in titles]) + " over tasks")
    if not view.profiles.empty:
        parts.append("performance profiles")
    if not view.improvement.empty:
        between = "the leader and each other algorithm" if view.pairs else "algorithms"  # the pairs compared
        parts.append(f"the probability of improvement P(X > Y) between {between}")
    return _join(parts) if parts else "per-task means"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _interval_summary(view: ReportView, prov: Mapping[str, Any]) -> str:
    """The headline table's intervals, and how its bootstrap resamples (when it is a bootstrap table)."""
    if not view.intervals.headline:
        return f"Intervals are {float(prov.get('ci', 0.95)):.0%} confidence intervals."
    text = f"The aggregate metrics carry {view.intervals.headline}"
    if "aggregates" not in words.non_bootstrap_tables(prov, {"aggregates"}):
        tasks = "tasks, then " if prov.get("task_bootstrap") else ""
        text += f"; the bootstrap intervals resample {tasks}runs within each task (stratified bootstrap)"
    return text + "." + _one_run_sentence(prov, "these intervals")


def methods_paragraph(report: Viewable) -> str:
    """The paragraph a paper can take as it is (plain text, at most about 200 words): the data, normalisation,
    metrics, the headline intervals and their replicates, the seed and what to cite. Every detail behind it
    (each table's intervals, the median's and P(X > Y)'s, the checks) is in :func:`methods_details`."""
    view = as_view(report)
    prov = dict(view.provenance)
    algorithms = [str(a) for a in prov.get("algorithms") or view.algorithms]
    tasks = list(prov.get("tasks") or [])
    metrics = [str(m) for m in prov.get("metrics") or []]
    named = f" ({', '.join(algorithms)})" if len(algorithms) <= NAMED_ALGORITHMS else ""
    sentences = [
        f"We evaluate {plural(len(algorithms), 'algorithm')}{named} on {plural(len(tasks), 'task')} with "
        f"{_runs_short(prov)}, using the final score of each run ({plural(view.counts.runs, 'run')} in all).",
        f"Scores are normalised per task as {prov.get('normalization') or 'raw score'}, with the "
        f"{prov['normalize']} reference scores."
        if prov.get("normalize")
        else "Scores are raw (not normalised), so tasks with larger score ranges weigh more.",
        f"We report {_what_is_reported(view, metrics)}, following Agarwal et al. (2021).",
        _interval_summary(view, prov),
    ]
    if view.success:
        sentences.append(
            "We also report success rates (each run's successes out of its episodes), with intervals that account "
            "for the episodes being nested in seeds."
        )
    if prov.get("comparisons"):
        sentences.append("All pairs of algorithms are compared with family-wise error control.")
    if "jordan" in view.extra and not view.extra["jordan"].empty:
        sentences.append("Jordan et al. (2020)'s equilibrium aggregate is reported with simultaneous intervals.")
    seed = prov.get("seed")
    version = (prov.get("versions") or {}).get("rl_reliable_logger")
    tool = f"rl_reliable_logger {version}" if version else "rl_reliable_logger"
    sentences.append(
        f"The analysis ran with {tool} and seed {seed}; the same scores and seed reproduce every number."
        if seed is not None
        else f"The analysis ran with {tool} without a fixed seed, so intervals vary slightly between re-runs."
    )
    return " ".join(sentences)


def _protocol_details(prov: dict[str, Any]) -> list[tuple[str, str]]:
    """The protocol checks that fired (or that none did) and which checks ran."""
    fired = _findings(prov)
    if fired:
        text = "Protocol checks raised: " + "; ".join(f"{f.get('check')} ({f.get('message')}{_cite(f)})" for f in fired)
        text += "."
    elif "protocol" in prov:
        text = "No protocol check fired."
    else:
        text = "Protocol checks were not recorded with these results."
    checks = _checks(prov)
    if checks:
        ran = [_CHECK_WORDS.get(k, k) for k, v in checks.items() if v.get("ran")]
        skipped = [f"{_CHECK_WORDS.get(k, k)} ({_why_not(v)})" for k, v in checks.items() if not v.get("ran")]
        text += " Checked: " + (", ".join(ran) or "nothing") + "."
        text += (" Not checked: " + "; ".join(skipped) + ".") if skipped else ""
    return [("Protocol checks", text)]


def methods_details(report: Viewable) -> list[tuple[str, str]]:
    """``(topic, plain text)``: everything behind the paragraph, per topic: the runs per algorithm, the metrics'
    definitions, each table's interval method, level and replicates, the median's and P(X > Y)'s intervals and
    what the coverage study measured of them (a study result on named data), success rates, comparisons, the
    seed, the figures' error bars, the protocol checks and the software versions."""
    view = as_view(report)
    prov = dict(view.provenance)
    algorithms = list(prov.get("algorithms") or view.algorithms)
    ci = float(prov.get("ci", 0.95))
    gamma = float(prov.get("gamma", 1.0))
    metrics = list(prov.get("metrics") or [])
    details = [
        (
            "Data",
            f"{plural(len(algorithms), 'algorithm')} ({', '.join(map(str, algorithms))}) on "
            f"{plural(len(list(prov.get('tasks') or [])), 'task')} with {_runs_text(prov)}, using the final score "
            f"of each run: {view.counts.text()}.",
        )
    ]
    if prov.get("normalize"):
        norm = prov.get("normalization") or "raw score"
        details.append(("Normalisation", f"Scores are normalised per task as {norm} (reference: {prov['normalize']})."))
    else:
        details.append(
            ("Normalisation", "Scores are raw (not normalised), so tasks with larger score ranges weigh more.")
        )
    if metrics:
        text = "; ".join(f"{m} is {_metric_definition(m, gamma)}" for m in metrics)
        details.append(("Metrics", f"Aggregate metrics: {text}."))
    details.append(("Intervals", _interval_sentence(view, prov)))
    if "median" in metrics and not view.aggregates.empty:
        details.append(("Median", view.intervals.median))
    if not view.improvement.empty:
        details.append(("Probability of improvement", view.intervals.improvement))
    if view.pairs:
        details.append(("Pairs", view.pairs))
    if view.success:
        details.append(("Success rates", view.success))
    comparisons = prov.get("comparisons")
    if comparisons:
        details.append(
            ("Comparisons", f"All pairs of algorithms are compared with family-wise error control: {comparisons}.")
        )
    seed = prov.get("seed")
    details.append(
        (
            "Seed",
            f"The random seed of the analysis is {seed}; the same scores and seed reproduce every number exactly."
            if seed is not None
            else "No analysis seed was fixed, so intervals vary slightly between re-runs.",
        )
    )
    details.append(
        (
            "Figures",
            f"In the figures, error bars and shaded regions are the pointwise {ci:.0%} confidence intervals above (not "
            "standard deviations or standard errors across runs); they are not simultaneous across algorithms or "
            "along a curve.",
        )
    )
    details += _protocol_details(prov)
    versions = prov.get("versions") or {}
    if versions:
        details.append(
            (
                "Software",
                f"Computed with rl_reliable_logger {versions.get('rl_reliable_logger', '?')} "
                f"(numpy {versions.get('numpy', '?')}, scipy {versions.get('scipy', '?')}, "
                f"Python {versions.get('python', '?')}).",
            )
        )
    return details


def _final_item(prov: dict[str, Any], fired: set[Any], known: bool) -> tuple[str, bool | None, str]:
    """Ticked only when the final scores are known to be each run's last point (the input has steps)."""
    item = "Final (not maximum-over-training) scores"
    checks = _checks(prov)
    source = prov.get("source")
    score = source.get("score") if isinstance(source, dict) else None
    rule = str(score.get("rule") or "") if isinstance(score, dict) else ""
    if "score.maximum" in fired:
        return item, False, "the score's name looks like a maximum over training"
    if rule == "max":
        return item, False, "the score rule is max: the best logged value, biased upwards"
    if "final" in checks:
        final, name = checks["final"], checks.get("score_name", {})
        if final.get("ran"):
            return item, True, str(final.get("detail"))
        reason = str(final.get("detail"))
        if name.get("ran"):
            reason += f"; {name.get('detail')}: none found"
        return item, None, reason
    return item, None, "not checked" if not known else "not recorded with these results"


def _budget_item(
    prov: dict[str, Any], fired: set[Any], known: bool, per: dict[str, Any], counts: set[Any]
) -> tuple[str, bool | None, str]:
    """Runs per cell are always compared; budgets only when the input has steps."""
    item = "Same number of runs and training budget for every algorithm"
    if not known:
        return item, (len(counts) <= 1 if per else None), "from the run counts only"
    if {"runs.unequal", "budget.unequal", "budget.short_runs"} & fired:
        return item, False, "the protocol checks found a difference (see above)"
    budget = _checks(prov).get("budget")
    if budget is None:
        return item, True, "checked by the protocol checks"
    if budget.get("ran"):
        return item, True, f"runs per cell and {budget.get('detail')}"
    return item, None, f"runs per cell compared; training budgets {budget.get('detail')}"


def _protocol_item(fired: set[Any], known: bool, checks: dict[str, dict[str, Any]]) -> tuple[str, bool | None, str]:
    """Ticked only when protocol fields were in the input and compared."""
    item = "Same evaluation protocol (environment version, sticky actions, frame skip, episodes)"
    if not known:
        return item, None, "not checked"
    if "protocol.mismatch" in fired:
        return item, False, "protocol fields differ between algorithms (see above)"
    protocol = checks.get("protocol")
    if protocol is None:
        return item, True, "protocol fields compared"
    return item, (True if protocol.get("ran") else None), str(protocol.get("detail"))


def _interval_item(view: ReportView, prov: Mapping[str, Any]) -> tuple[str, bool | None, str]:
    """Intervals are there, but an algorithm with one run per task has intervals that cannot show run-to-run
    spread: the item is not met for it, and the reason names it."""
    item = "Interval estimates (not only point estimates) for aggregate metrics"
    if view.aggregates.empty:
        return item, False, view.intervals.headline
    alone = _one_run_algorithms(prov)
    if not alone:
        return item, True, view.intervals.headline
    return item, False, f"{view.intervals.headline}; one run per task for {_join(alone)}: no run-to-run spread shown"


def checklist(report: Viewable) -> list[tuple[str, bool | None, str]]:
    """(item, met: True / False / None for unknown, reason) for each recommendation."""
    view = as_view(report)
    prov = dict(view.provenance)
    fired = {f.get("check") for f in _findings(prov)}
    known = "protocol" in prov
    checks = _checks(prov)
    metrics = {str(m).lower() for m in prov.get("metrics") or []}
    per = prov.get("runs_per_task") or {}
    counts = {n for v in per.values() for n in v.values()}
    items: list[tuple[str, bool | None, str]] = [
        ("Number of runs per task reported", bool(per), _runs_text(prov) if per else "not recorded"),
        _interval_item(view, prov),
        (
            "Robust aggregate metric (IQM, median or optimality gap) instead of the mean alone",
            bool(metrics & _ROBUST),
            ", ".join(sorted(metrics)) or "no metrics recorded",
        ),
        (
            "Performance profiles (score distributions) instead of per-task tables alone",
            not view.profiles.empty,
            "profiles.csv" if not view.profiles.empty else "no profiles computed",
        ),
        (
            "Probability of improvement for pairwise claims",
            not view.improvement.empty,
            "improvement.csv" if not view.improvement.empty else "fewer than two algorithms",
        ),
        (
            "Normalisation and its reference scores stated",
            True if prov.get("normalize") else None,
            str(prov.get("normalization") or "raw scores: nothing to state"),
        ),
        _final_item(prov, fired, known),
        _budget_item(prov, fired, known, per, counts),
        _protocol_item(fired, known, checks),
        (
            "Hyperparameters tuned on other seeds than those reported",
            False if "tuning.reused_seeds" in fired else None,
            "tuning seeds reused for reporting" if "tuning.reused_seeds" in fired else "unknown from the scores alone",
        ),
        (
            "Per-run scores released with the results",
            not view.scores.empty,
            "scores.csv" if not view.scores.empty else "no per-run scores",
        ),
        ("Analysis seed fixed", prov.get("seed") is not None, f"seed {prov.get('seed')}"),
    ]
    return items


def methods_markdown(report: Viewable) -> str:
    """``methods.md``: the paragraph, its details (one topic a line), the checklist, every warning in full (the
    console and a notebook show them grouped), then the references: prose a paper can take, so only what would
    format in Markdown (a name's ``*``, a leading ``_``, a link) is escaped (:func:`~rl_reliable_logger.data.names.escape_markdown_prose`)."""
    view = as_view(report)
    lines = [
        "# Methods",
        "",
        escape_markdown_prose(methods_paragraph(view)),
        "",
        "## Details",
        "",
        *(f"- **{topic}.** {escape_markdown_prose(text)}" for topic, text in methods_details(view)),
        "",
        "## Reporting checklist (after Agarwal et al., 2021)",
        "",
    ]
    marks = {True: "[x]", False: "[ ]", None: "[?]"}
    for item, met, reason in checklist(view):
        lines.append(f"- {marks[met]} {item} — {escape_markdown_prose(reason)}")
    if view.caveat_lines:  # each reason once, naming the cells it applies to
        lines += ["", "## Caveats", ""]
        lines += [f"- {escape_markdown_prose(note.line)}" for note in view.caveat_lines]
    warnings = list(dict.fromkeys(view.warnings))
    if warnings:
        lines += ["", "## Warnings", ""]
        lines += [f"- {escape_markdown_prose(w)}" for w in warnings]
    lines += ["", "## References", ""]
    lines += [f"- {escape_markdown_prose(ref)}" for ref in view.references]
    return "\n".join(lines) + "\n"
