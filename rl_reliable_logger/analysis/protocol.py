"""Protocol checks: what is wrong with an experiment *before* any interval is computed.

:func:`check_protocol` inspects a :class:`~rl_reliable_logger.data.scores.ScoreTable` and returns a
list of :class:`Finding` — each with a check id, a severity, a message naming the algorithms, tasks
and runs concerned, a one-line explanation (``why``) and the paper section it comes from (``cite``;
both from :data:`CHECKS`, where the sources of the section numbers are noted). Callers show
them first (console, provenance, report); :func:`enforce` turns warnings into an error for CI
pipelines (``--strict``).

Checks (ids are stable; tests and users may filter on them):

``runs.unequal``        algorithms have different numbers of runs per task
``runs.few``            (algorithm, task) cells with fewer than 3 runs
``budget.unequal``      algorithms trained for different budgets on a task (last logged step, or a
                        budget column)
``budget.short_runs``   runs that stop before the budget of their own cell
``protocol.mismatch``   evaluation-protocol fields (environment version, sticky actions / repeat-
                        action probability, frame skip, evaluation episodes, ...) that differ
                        between algorithms on the same task
``score.maximum``       the score key looks like a maximum over training (max / best / peak)
``tuning.reused_seeds`` with hyperparameter keys: several configurations of one algorithm share
                        seeds, so the configuration chosen as best is reported on the seeds that
                        chose it
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..data.counts import agree, plural, span
from ..data.fields import check_distinct
from ..data.scores import FINAL_SCORE, LAST_STEP, ScoreTable, seed_key
from ..errors import InputError
from ..wording import kw, said

Severity = Literal["error", "warning", "info"]

AGARWAL = "Agarwal et al. (2021)"
MACHADO = "Machado et al. (2018)"
HENDERSON = "Henderson et al. (2018)"
JORDAN = "Jordan et al. (2020)"

#: The papers the checks cite, by the short name a citation starts with (methods.md lists the fired ones).
REFERENCES = {
    AGARWAL: "R. Agarwal, M. Schwarzer, P. S. Castro, A. Courville, M. G. Bellemare. Deep Reinforcement Learning "
    "at the Edge of the Statistical Precipice. NeurIPS 2021 (arXiv:2108.13264)",
    MACHADO: "M. C. Machado, M. G. Bellemare, E. Talvitie, J. Veness, M. Hausknecht, M. Bowling. Revisiting the "
    "Arcade Learning Environment: Evaluation Protocols and Open Problems for General Agents. JAIR 61, 2018 "
    "(arXiv:1709.06009)",
    HENDERSON: "P. Henderson, R. Islam, P. Bachman, J. Pineau, D. Precup, D. Meger. Deep Reinforcement Learning "
    "that Matters. AAAI 2018 (arXiv:1709.06560)",
    JORDAN: "S. M. Jordan, Y. Chandak, D. Cohen, M. Zhang, P. S. Thomas. Evaluating the Performance of "
    "Reinforcement Learning Algorithms. ICML 2020 (PMLR 119)",
}


@dataclass(frozen=True)
class CheckInfo:
    """What a check guards against (one line) and where that advice comes from (paper and section)."""

    why: str
    cite: str


# Sections were checked against the papers' text, not quoted from memory:
# * Agarwal et al.: the arXiv v4 full text (section numbers as printed). §3 "Case Study: The Atari 100k
#   benchmark" (Fig. 2: uncertainty against the number of runs; paragraph "Changes in evaluation protocols
#   invalidates comparisons to prior work": maximum over training, end-of-training scores as the standard);
#   §4.1 "Stratified Bootstrap Confidence Intervals" (Fig. 6: with 3 runs the intervals under-cover, good
#   from about 10); §6 "Discussion" ("evaluation protocols are not kept constant within comparisons");
#   App. A.4 "Non-standard Evaluation Protocols Involving Maximum" (maximum over training, and over
#   hyperparameter configurations per game, bias scores upwards).
# * Henderson et al.: the arXiv v3 full text; its sections are unnumbered, so they are cited by heading:
#   "Random Seeds and Trials" (top-N of several trials, averages of few trials mislead), "Reporting
#   Evaluation Metrics" (the maximum return is inadequate for a fair comparison).
# * Machado et al.: the number of "Sticky Actions" (§5.2, in §5 "Determinism and Stochasticity in the
#   ALE") is taken from two independent secondary sources that quote it (Gymnasium's StickyAction wrapper
#   docstring, "Section 5.2 on page 12", and an outline of the paper's ar5iv rendering), not from the
#   paper's own text.
CHECKS: dict[str, CheckInfo] = {
    "runs.unequal": CheckInfo(
        "interval width depends on the number of runs; compare algorithms with equal runs or report the counts",
        f"{AGARWAL}, §3 (Fig. 2)",
    ),
    "runs.few": CheckInfo(
        "with very few runs per task bootstrap intervals under-cover (too narrow): 3 are too few, about 10 enough",
        f"{AGARWAL}, §4.1 (Fig. 6)",
    ),
    "budget.unequal": CheckInfo(
        "scores after different training budgets are not comparable; compare at the same number of steps",
        f"{AGARWAL}, §3 and §6",
    ),
    "budget.short_runs": CheckInfo(
        "a run stopped early is scored before the end of training; finish it or exclude it explicitly",
        f"{AGARWAL}, §3",
    ),
    "protocol.mismatch": CheckInfo(
        "sticky actions, frame skip, episode limits and environment versions change scores; "
        "compare algorithms under one evaluation protocol",
        f"{MACHADO}, §5.2; {AGARWAL}, §3 and §6",
    ),
    "score.maximum": CheckInfo(
        "the maximum over evaluations during training is biased upwards; report the final score",
        f"{AGARWAL}, §3 and App. A.4; {HENDERSON}, “Reporting Evaluation Metrics”",
    ),
    "tuning.reused_seeds": CheckInfo(
        "a configuration chosen as best on the same runs it is reported on is biased upwards; "
        "re-run the chosen configuration on fresh seeds",
        f"{AGARWAL}, App. A.4; {HENDERSON}, “Random Seeds and Trials”",
    ),
}

#: Evaluation-protocol fields compared between algorithms; matched case-insensitively, with or
#: without a ``config.`` / ``params.`` / ``env.`` prefix. Pass ``protocol_fields=`` to change them.
DEFAULT_PROTOCOL_FIELDS = (
    "env_id",
    "env",
    "env_name",
    "gym_id",
    "environment",
    "repeat_action_probability",
    "sticky_actions",
    "frame_skip",
    "frameskip",
    "action_repeat",
    "eval_episodes",
    "num_eval_episodes",
    "n_eval_episodes",
    "evaluation_episodes",
    "max_episode_steps",
    "full_action_space",
    "noop_max",
    "terminal_on_life_loss",
)
_MAX_WORDS = {"max", "maximum", "best", "peak", "top", "highest"}
_VERSION = re.compile(r"-v(\d+)$", re.I)
_PREFIX = re.compile(r"^(config|params|param|hparams|args|env)[./]", re.I)
_LISTED = 6


@dataclass(frozen=True)
class Finding:
    """One problem found by a protocol check."""

    check: str
    severity: Severity
    message: str
    why: str
    algorithms: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    #: the paper and section the advice comes from (``CHECKS[check].cite``)
    cite: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for provenance.json."""
        out = asdict(self)
        for key in ("algorithms", "tasks", "runs"):
            out[key] = list(out[key])
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """The finding of :meth:`to_dict` (e.g. read back from ``provenance.json``)."""

        def names(key: str) -> tuple[str, ...]:
            return tuple(str(v) for v in data.get(key) or ())

        return cls(
            str(data["check"]),
            data.get("severity", "warning"),
            str(data.get("message", "")),
            str(data.get("why", "")),
            names("algorithms"),
            names("tasks"),
            names("runs"),
            dict(data.get("details") or {}),
            str(data.get("cite", "")),
        )

    def __str__(self) -> str:
        return f"[{self.severity}] {self.check}: {self.message} ({self.why}; {self.cite})"


def _finding(check: str, message: str, **fields: Any) -> Finding:
    """A warning of ``check`` with its explanation and citation from :data:`CHECKS`."""
    info = CHECKS[check]
    return Finding(check, "warning", message, info.why, cite=info.cite, **fields)


def _names(items: Sequence[Any], limit: int = _LISTED) -> str:
    shown = ", ".join(str(i) for i in items[:limit])
    return shown + (f", ... ({len(items)} in all)" if len(items) > limit else "")


def runs_by_algorithm(per_alg: dict[str, tuple[int, int]]) -> str:
    """Each algorithm's runs per task (fewest, most), the most common count said once for the others.

    Example:
        >>> runs_by_algorithm({"DER": (10, 10), "DrQ": (10, 10), "SimPLe": (5, 5), "SPR": (10, 10)})
        'SimPLe: 5 runs per task, the others 10'
        >>> runs_by_algorithm({"A": (3, 3), "B": (4, 5)})
        'A: 3 runs per task; B: 4–5'
        >>> runs_by_algorithm({"A": (3, 6), "B": (3, 6)})
        'every algorithm 3–6 runs per task'
    """
    spans = {a: span(lo, hi) for a, (lo, hi) in per_alg.items()}
    counts = list(spans.values())
    common = max(counts, key=counts.count)
    if counts.count(common) == len(counts):  # the same span for every algorithm: no algorithm is the odd one
        return f"every algorithm {common} {'run' if common == '1' else 'runs'} per task"
    shared = counts.count(common) > 1
    odd = [a for a, v in spans.items() if not shared or v != common]
    unit = "run" if spans[odd[0]] == "1" else "runs"
    text = f"{odd[0]}: {spans[odd[0]]} {unit} per task" + "".join(f"; {a}: {spans[a]}" for a in odd[1:])
    return text + (f", the others {common}" if shared else "")


# ----------------------------------------------------------------------------- checks
def _runs_checks(final: ScoreTable, min_runs: int) -> list[Finding]:
    out = []
    sizes = final.runs_per_cell()
    per_alg = {a: (int(sizes.loc[a].min()), int(sizes.loc[a].max())) for a in sizes.index}
    totals = {a: int(sizes.loc[a].sum()) for a in sizes.index}
    if len(set(totals.values())) > 1:
        fewest = min(totals.values())
        short = [a for a, n in totals.items() if n == fewest]
        desc = runs_by_algorithm(per_alg)
        if len(set(per_alg.values())) == 1:  # the same span, different totals: the totals tell them apart
            desc += ", in all " + "; ".join(f"{a}: {n}" for a, n in totals.items())
        out.append(
            _finding(
                "runs.unequal",
                f"algorithms have different numbers of runs ({desc}); {_names(short)} "
                f"{'has' if len(short) == 1 else 'have'} the fewest, so {'its' if len(short) == 1 else 'their'} "
                "intervals are wider and comparisons lean on fewer seeds",
                algorithms=tuple(short),
                details={"runs_per_task": {a: list(v) for a, v in per_alg.items()}},
            )
        )
    few = [(a, t, int(sizes.loc[a, t])) for a in sizes.index for t in sizes.columns if sizes.loc[a, t] < min_runs]
    if few:
        out.append(
            _finding(
                "runs.few",
                f"{plural(len(few), 'cell', '(algorithm, task)')} {agree(len(few), 'have')} fewer than {min_runs} runs: "
                + _names([f"{a} / {t} ({n})" for a, t, n in few]),
                algorithms=tuple(dict.fromkeys(a for a, _, _ in few)),
                tasks=tuple(dict.fromkeys(t for _, t, _ in few)),
            )
        )
    return out


def _budgets(table: ScoreTable, budget_key: str | None) -> pd.DataFrame | None:
    """One row per run: algorithm, task, run_id, budget (the budget column, else the last logged step: of the curve
    rows, or the ``last_step`` a source that knows the steps records without them)."""
    keys = ["algorithm", "task", "run_id"]
    if budget_key is not None and budget_key not in table.frame.columns:
        raise InputError(
            said(kw("budget_key="), f" {budget_key!r} names no column of the table; it has: ")
            + ", ".join(table.frame.columns)
        )
    if budget_key is None and table.has_steps:
        return table.frame.groupby(keys, sort=False)["step"].max().rename("budget").reset_index()
    column = budget_key if budget_key is not None else LAST_STEP
    if column not in table.frame.columns:
        return None
    values = pd.to_numeric(table.frame[column], errors="coerce")
    frame = table.frame[keys].assign(budget=values).dropna(subset=["budget"])
    return frame.groupby(keys, sort=False)["budget"].max().reset_index()


def _budget_checks(table: ScoreTable, budget_key: str | None, tolerance: float) -> list[Finding]:
    runs = _budgets(table, budget_key)
    if runs is None or runs.empty:
        return []
    source = f"column {budget_key!r}" if budget_key else "the last logged step"
    out = []
    cell = runs.groupby(["algorithm", "task"], sort=False)["budget"].max()
    unequal = []
    for task, per_alg in cell.groupby(level="task", sort=False):
        per_alg = per_alg.droplevel("task")
        top = float(per_alg.max())
        if top > 0 and float(per_alg.min()) < (1 - tolerance) * top:
            unequal.append((task, {a: float(v) for a, v in per_alg.items()}))
    if unequal:
        algs = sorted({a for _, b in unequal for a, v in b.items() if v < (1 - tolerance) * max(b.values())})
        example_task, example = unequal[0]
        shown = ", ".join(f"{a} {v:g}" for a, v in example.items())
        out.append(
            _finding(
                "budget.unequal",
                f"training budgets ({source}) differ between algorithms on {plural(len(unequal), 'task')} "
                f"({_names([t for t, _ in unequal])}); e.g. {example_task}: {shown}. {_names(algs)} trained for less",
                algorithms=tuple(algs),
                tasks=tuple(str(t) for t, _ in unequal),
                details={"budgets": {t: b for t, b in unequal}},
            )
        )
    merged = runs.merge(cell.rename("cell_budget").reset_index(), on=["algorithm", "task"])
    short = merged[merged["budget"] < (1 - tolerance) * merged["cell_budget"]]
    if len(short):
        labels = [
            f"{r.algorithm} / {r.task} run {r.run_id} ({r.budget:g} of {r.cell_budget:g})" for r in short.itertuples()
        ]
        out.append(
            _finding(
                "budget.short_runs",
                f"{plural(len(short), 'run')} {agree(len(short), 'stop')} before the budget of their cell ({source}): {_names(labels)}",
                algorithms=tuple(dict.fromkeys(short["algorithm"])),
                tasks=tuple(dict.fromkeys(short["task"])),
                runs=tuple(str(r) for r in short["run_id"]),
            )
        )
    return out


def _field_key(column: str) -> str:
    return _PREFIX.sub("", str(column)).strip().lower().replace("-", "_").replace(" ", "_")


def _protocol_checks(final: ScoreTable, fields: Iterable[str]) -> list[Finding]:
    wanted = {_field_key(f) for f in fields}
    frame = final.frame
    columns = [c for c in frame.columns if c not in ("algorithm", "task", "run_id", "seed", "score", "raw_score")]
    out = []
    for column in columns:
        if _field_key(column) not in wanted:
            continue
        values = frame[["algorithm", "task", column]].dropna()
        if values.empty:
            continue
        text = values[column].astype(str)
        versions = text.map(lambda v: (_VERSION.search(v.strip()) or [None, None])[1])
        clashes = []
        for task, grp in values.assign(_text=text, _version=versions).groupby("task", sort=False):
            if grp["_version"].notna().any():  # environment ids: compare the game and the version
                seen = grp.groupby("algorithm", sort=False)["_version"].agg(lambda s: tuple(sorted(set(s.dropna()))))
                kind = "version"
            else:
                seen = grp.groupby("algorithm", sort=False)["_text"].agg(lambda s: tuple(sorted(set(s))))
                kind = "value"
            if seen.nunique() > 1:
                clashes.append((task, kind, {a: list(v) for a, v in seen.items()}))
        if not clashes:
            continue
        task, kind, example = clashes[0]
        shown = "; ".join(
            f"{a}: {', '.join(('v' + x) if kind == 'version' else x for x in v)}" for a, v in example.items()
        )
        algs = tuple(dict.fromkeys(a for _, _, ex in clashes for a in ex))
        what = "environment version" if kind == "version" else "value"
        out.append(
            _finding(
                "protocol.mismatch",
                f"{column!r}: the {what} differs between algorithms on {plural(len(clashes), 'task')} "
                f"({_names([t for t, _, _ in clashes])}); e.g. {task}: {shown}",
                algorithms=algs,
                tasks=tuple(t for t, _, _ in clashes),
                details={"field": str(column), "values": {t: ex for t, _, ex in clashes}},
            )
        )
    return out


def _words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def looks_like_maximum(key: str) -> bool:
    """True for score keys such as ``max_return``, ``eval/best_score``, ``peakReward``.

    Example:
        >>> looks_like_maximum("eval/maxReturn"), looks_like_maximum("episode_return")
        (True, False)
    """
    return any(w in _MAX_WORDS or w.startswith("max") for w in _words(str(key)))


def _score_checks(table: ScoreTable, score_key: str | None) -> list[Finding]:
    key = score_key or table.source.get("score_column") or table.source.get("fields", {}).get("score")
    if not key or not looks_like_maximum(str(key)):
        return []
    return [
        _finding(
            "score.maximum",
            f"the score comes from {str(key)!r}, which looks like a maximum over training",
            details={"score_key": str(key)},
        )
    ]


def _tuning_checks(final: ScoreTable, keys: Sequence[str]) -> list[Finding]:
    frame = final.frame
    # a configuration key is no grouping field: each key as the source field it was read from (a tracker's
    # ``lr`` column is ``params.lr``), against the fields that made algorithm labels, tasks and seeds
    given = final.source.get("fields") or {}
    roles: dict[str, Any] = {f"{r}=": [r, given.get(r)] for r in ("algorithm", "task", "seed", "run_id")}
    roles["run_key="] = given.get("run_key")
    roles["variant="] = given.get("variant")
    sources = [str(given.get(k, k)) for k in keys]
    check_distinct({**roles, "hyperparameter_keys=": sources}, what="field")
    absent = [k for k in keys if k not in frame.columns]
    if absent:
        raise InputError(
            said(
                kw("hyperparameter_keys="), f" names unknown column(s) {', '.join(map(repr, absent))}; the table has: "
            )
            + ", ".join(frame.columns)
        )
    out = []
    # one code per configuration (missing values count as a value), and each row's seed as a run key
    configs = frame.groupby(list(keys), dropna=False, sort=False).ngroup().to_numpy()
    # configurations are compared by seed: two runs with one seed share the randomness that chose the winner
    seed_col = "seed" if frame["seed"].notna().all() else "run_id"
    codes, distinct = pd.factorize(frame[seed_col])
    seeds = np.array([seed_key(v) for v in distinct], dtype=object)[codes]
    pairs = pd.DataFrame({"algorithm": frame["algorithm"].to_numpy(), "config": configs, "seed": seeds})
    reused = {}
    for alg, grp in pairs.groupby("algorithm", sort=False):
        n_configs = int(grp["config"].nunique())
        if n_configs < 2:
            continue
        used_by = grp.drop_duplicates(["config", "seed"])["seed"].value_counts()  # configurations per seed
        shared = set(used_by.index[used_by.to_numpy() > 1])
        if shared:
            reused[alg] = (n_configs, sorted(shared, key=str))
    if reused:
        desc = "; ".join(
            f"{a}: {n} configurations share seed(s) {_names([str(s) for s in seeds], 4)}"
            for a, (n, seeds) in reused.items()
        )
        out.append(
            _finding(
                "tuning.reused_seeds",
                f"hyperparameter configurations ({', '.join(keys)}) were run on the same seeds ({desc}): a "
                "configuration chosen as best on these runs and reported on the same runs is biased upwards",
                algorithms=tuple(reused),
                details={"configurations": {a: n for a, (n, _) in reused.items()}},
            )
        )
    return out


# ----------------------------------------------------------------------------- API
def check_protocol(
    table: ScoreTable,
    *,
    min_runs: int = 3,
    protocol_fields: Iterable[str] = DEFAULT_PROTOCOL_FIELDS,
    hyperparameter_keys: Sequence[str] | None = None,
    budget_key: str | None = None,
    budget_tolerance: float = 0.01,
    score_key: str | None = None,
) -> list[Finding]:
    """Run every protocol check on ``table``; findings in a fixed order (runs, budgets, protocol,
    score key, tuning).

    Args:
        table: the scores, with steps (learning curves) if budgets should be read from them.
        min_runs: cells with fewer runs are reported (``runs.few``).
        protocol_fields: columns compared between algorithms task by task (``protocol.mismatch``).
        hyperparameter_keys: columns naming a sweep's configuration (``tuning.reused_seeds``).
        budget_key: a column with each run's training budget (default: the last logged step).
        budget_tolerance: relative shortfall tolerated before budgets count as different.
        score_key: the name the score came from (default: what the table's source records).

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A", "A", "B"], "task": "x", "seed": [0, 1, 0], "score": 1.0})
        >>> [f.check for f in check_protocol(ScoreTable(df))]
        ['runs.unequal', 'runs.few']
    """
    if budget_tolerance < 0 or budget_tolerance >= 1:
        raise InputError(said(kw("budget_tolerance="), f" must be in [0, 1), got {budget_tolerance}"))
    final = table.final()
    findings = _runs_checks(final, min_runs)
    findings += _budget_checks(table, budget_key, budget_tolerance)
    findings += _protocol_checks(final, protocol_fields)
    findings += _score_checks(table, score_key)
    if hyperparameter_keys:
        findings += _tuning_checks(final, list(hyperparameter_keys))
    return findings


def _final_detail(table: ScoreTable, rule: str) -> str:
    """Where the final scores of a table with steps (or read from a history) come from, in words."""
    if rule and rule != "last":
        return f"final scores read from each run's history by the score rule {rule}"
    if FINAL_SCORE in table.frame.columns:  # a tracker's score key, kept apart from its learning curve
        return "final scores are the last value of the score key of each run (its learning curve kept apart)"
    return "final scores are each run's score at its last logged step"


def checks_run(
    table: ScoreTable,
    *,
    protocol_fields: Iterable[str] = DEFAULT_PROTOCOL_FIELDS,
    hyperparameter_keys: Sequence[str] | None = None,
    budget_key: str | None = None,
    score_key: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Which checks of :func:`check_protocol` had data that could fail them (provenance ``checks``).

    One entry per check family: ``{"ran": bool, "detail": str}``, ``detail`` saying what was compared or, when
    it did not run, ``not checked (<why>)``. ``final`` is whether the final scores are known to be the last
    point of each run (the input has steps), which a check of the score's name alone cannot tell.
    """
    final = table.final()
    budgets = _budgets(table, budget_key)
    steps_known = table.has_steps or LAST_STEP in table.frame.columns
    wanted = {_field_key(f) for f in protocol_fields}
    compared = [str(c) for c in final.frame.columns if _field_key(c) in wanted and final.frame[c].notna().any()]
    key = score_key or table.source.get("score_column") or table.source.get("fields", {}).get("score")
    rule = str((table.source.get("score") or {}).get("rule") or "")
    out: dict[str, dict[str, Any]] = {
        "runs": {"ran": True, "detail": "runs per (algorithm, task) cell compared"},
        "budget": (
            {
                "ran": True,
                "detail": f"training budgets compared ({'column ' + repr(budget_key) if budget_key else 'the last logged step of each run'})",
            }
            if budgets is not None and not budgets.empty
            else {"ran": False, "detail": "not checked (no steps in the input)"}
        ),
        "protocol": (
            {"ran": True, "detail": "protocol fields compared: " + ", ".join(compared)}
            if compared
            else {
                "ran": False,
                "detail": "not checked (no protocol columns in the input, such as env_id or frame_skip)",
            }
        ),
        "score_name": (
            {"ran": True, "detail": f"the score's name {str(key)!r} checked for words of a maximum"}
            if key
            else {"ran": False, "detail": "not checked (the score's name is not recorded)"}
        ),
        "final": (
            {"ran": True, "detail": _final_detail(table, rule)}
            if steps_known or (rule and rule != "last")
            else {"ran": False, "detail": "not checked (no steps in the input)"}
        ),
    }
    out["tuning"] = (
        {
            "ran": True,
            "detail": "seeds of the configurations of " + ", ".join(map(str, hyperparameter_keys)) + " compared",
        }
        if hyperparameter_keys
        else {"ran": False, "detail": "not checked (no hyperparameter keys given)"}
    )
    return out


def enforce(findings: Sequence[Finding], *, strict: bool = False) -> None:
    """Raise :class:`~rl_reliable_logger.errors.InputError` on errors (and, with ``strict``, on warnings)."""
    blocking = [f for f in findings if f.severity == "error" or (strict and f.severity == "warning")]
    if blocking:
        raise InputError(
            f"{len(blocking)} protocol problem(s)"
            + (" (strict mode: warnings count)" if strict else "")
            + ":\n"
            + "\n".join(f"  - {f}" for f in blocking),
            [str(f) for f in blocking],
        )


_ORDER = {"error": 0, "warning": 1, "info": 2}


def by_severity(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` most severe first (stable: the checks' order within one severity)."""
    return sorted(findings, key=lambda f: _ORDER.get(f.severity, len(_ORDER)))


def format_finding(finding: Finding) -> str:
    """One finding as one line of text (the line :func:`format_findings` prints, and a Report warning): what was
    found first, then the check's id and the paper section the check comes from."""
    cite = f"; {finding.cite}" if finding.cite else ""
    return f"protocol {finding.severity}: {finding.message} [{finding.check}{cite}]"


def format_findings(findings: Sequence[Finding]) -> str:
    """Console text, one line per finding, most severe first (shown before any statistics)."""
    return "\n".join(format_finding(f) for f in by_severity(findings))
