"""Tuning-aware views of a hyperparameter sweep (Jordan et al. 2020, section 3 "complete algorithm").

Pure pandas/numpy: turns a long table of runs that carry hyperparameter columns into pseudo-algorithm
labels, so the ordinary evaluation can compare three views of each algorithm side by side:

``complete``
    Every run of the sweep pooled as samples of *one* algorithm whose hyperparameters are drawn from the
    sweep's distribution (random search: the search distribution; grid search: uniform over the grid).
    This is what Jordan et al. call the complete algorithm: it charges the algorithm for its sensitivity
    to hyperparameters and needs no tuning.
``tuned``
    "Tune and report": the configuration with the best selection score, chosen *on the same runs that
    are then reported*. Optimistically biased (a maximum over noisy estimates; with one seed per
    configuration it is the best single run); always reported with a warning.
``split``
    The honest version of ``tuned``: each configuration's seeds are split at random into two halves;
    the best configuration is chosen on the first half and evaluated on the second, so the reported
    runs played no part in the choice.

Configurations are the distinct value tuples of the hyperparameter columns (missing values count as a
value). A configuration is eligible for ``tuned`` if it has a run on every task, and for ``split`` if
both halves of its seeds have a run on every task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.names import value_text

__all__ = ["VIEWS", "config_labels", "split_halves", "tuning_views", "metric_criterion"]

#: View name -> suffix added to the algorithm name.
VIEWS = {
    "complete": "complete",
    "tuned": "tuned, same data",
    "split": "tuned, split-half",
}

Criterion = Callable[[list[np.ndarray]], float]


def _fmt(value: object) -> str:
    """A value in a configuration label: floats to 6 significant digits, text as a label reads it back (quoted where
    it holds a separator or reads as no value: ``'NA'`` is text, ``NA`` no value; :func:`~...data.names.value_text`)."""
    if isinstance(value, (float, np.floating)) and not np.isnan(value):
        return f"{float(value):.6g}"
    return value_text(value)


def _formatted(column: pd.Series, prefix: str = "") -> pd.Series:
    """``prefix + _fmt(value)`` for every row, formatting each distinct value once (missing values included)."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    texts = np.array([prefix + _fmt(v) for v in uniques], dtype=object)
    return pd.Series(texts[codes], index=column.index)


def config_labels(frame: pd.DataFrame, keys: Sequence[str]) -> pd.Series:
    """One readable label per row, e.g. ``"lr=0.001, gamma=0.99"`` (keys in the order given)."""
    keys = list(keys)
    missing = [k for k in keys if k not in frame.columns]
    if missing:
        cols = ", ".join(map(str, frame.columns))
        raise ValueError(f"hyperparameter column(s) {missing} not in the table (it has: {cols})")
    if not keys:
        raise ValueError("give at least one hyperparameter column")
    parts = [_formatted(frame[k], f"{k}=") for k in keys]
    out = parts[0]
    for p in parts[1:]:
        out = out + ", " + p
    return out.rename("config")


def metric_criterion(metric: str = "iqm") -> Criterion:
    """Selection score of a configuration: the point estimate of a core metric over its runs.

    Tasks carry equal weight (as in the core evaluation). For ``optimality_gap`` lower is better, so
    the criterion returns its negative.
    """
    from . import bootstrap as bs
    from . import registry

    m = registry.get_metric(metric)
    sign = -1.0 if m.name == "optimality_gap" else 1.0

    def crit(per_task: list[np.ndarray]) -> float:
        return sign * float(m(bs.original(bs.Cells.from_list(per_task)))[0])

    crit.__name__ = f"{m.name}_criterion"
    return crit


def _run_key(frame: pd.DataFrame) -> pd.Series:
    """The seed when every row has one, else the run id (identifies a run across tasks)."""
    if "seed" in frame.columns and frame["seed"].notna().all():
        return _formatted(frame["seed"])
    return frame["run_id"].astype(str)


def split_halves(seeds: Sequence[str], rng: np.random.Generator) -> tuple[set[str], set[str]]:
    """Random split of a configuration's seeds: (selection half, evaluation half), sizes floor/ceil."""
    uniq = sorted(set(seeds))
    perm = rng.permutation(len(uniq))
    half = len(uniq) // 2
    select = {uniq[i] for i in perm[:half]}
    return select, set(uniq) - select


@dataclass
class _Choice:
    config: str | None
    score: float
    n_eligible: int


class _Layout:
    """One algorithm's runs grouped once by (configuration, task): per-configuration work is then linear.

    Configurations are coded in sorted label order (the order the views visit them, so the random split
    and the tie rule do not depend on the input's row order); inside each (configuration, task) the runs
    keep the table's row order.
    """

    def __init__(self, runs: pd.DataFrame, tasks: list[str]) -> None:
        codes, labels = pd.factorize(runs["config"], sort=True)
        self.labels = [str(x) for x in labels]
        self.config = codes.astype(np.int64)
        self.n_tasks = len(tasks)
        self.task = pd.Categorical(runs["task"], categories=tasks).codes.astype(np.int64)
        self.cell = self.config * self.n_tasks + self.task
        self.scores = runs["score"].to_numpy(float)

    def counts(self, rows: np.ndarray) -> np.ndarray:
        """Runs per (configuration, task) among ``rows`` (a boolean mask): (configurations, tasks)."""
        size = len(self.labels) * self.n_tasks
        return np.bincount(self.cell[rows], minlength=size).reshape(len(self.labels), self.n_tasks)

    def choose(self, rows: np.ndarray, criterion: Criterion) -> _Choice:
        """The best configuration among ``rows`` with runs on every task (ties: the first in sorted order)."""
        counts = self.counts(rows)
        eligible = np.flatnonzero((counts > 0).all(axis=1))
        picked = np.flatnonzero(rows)
        order = picked[np.argsort(self.cell[picked], kind="stable")]
        scores = self.scores[order]
        ends = np.cumsum(counts.ravel()).reshape(counts.shape)
        best, best_score = None, -np.inf
        for c in eligible:
            per_task = [scores[e - n : e] for e, n in zip(ends[c], counts[c])]
            score = criterion(per_task)
            if score > best_score:  # strict: ties keep the first configuration in sorted order
                best, best_score = self.labels[c], score
        return _Choice(best, float(best_score) if best is not None else float("nan"), int(eligible.size))

    def split(self, run_keys: pd.Series, rng: np.random.Generator) -> np.ndarray:
        """Rows in the selection half of their configuration's seeds (:func:`split_halves`, one permutation
        per configuration in sorted order); the other rows are the evaluation half."""
        run_codes, _ = pd.factorize(run_keys, sort=True)  # sorted run keys, as split_halves sorts them
        n_keys = int(run_codes.max()) + 1 if run_codes.size else 1
        key = self.config * n_keys + run_codes
        distinct = np.unique(key)  # per configuration, its runs in sorted order
        per_config = np.bincount(distinct // n_keys, minlength=len(self.labels))
        starts = np.concatenate([[0], np.cumsum(per_config)[:-1]])
        selected = np.zeros(distinct.size, dtype=bool)
        for start, n in zip(starts, per_config):
            selected[start + rng.permutation(n)[: n // 2]] = True
        return selected[np.searchsorted(distinct, key)]


def tuning_views(
    frame: pd.DataFrame,
    keys: Sequence[str],
    *,
    criterion: Criterion | None = None,
    seed: int | np.random.Generator | None = None,
    views: Sequence[str] = ("complete", "tuned", "split"),
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Relabel the runs of a sweep into the three views.

    Args:
        frame: long table with ``algorithm, task, run_id, seed, score`` and the hyperparameter columns
            (one row per run and task; final scores). Scores should already be normalised if tasks
            have different scales, since the selection pools tasks.
        keys: the hyperparameter columns.
        criterion: selection score of a configuration from its per-task score arrays (higher is
            better); default :func:`metric_criterion` ``("iqm")``.
        seed: for the random split of seeds (int or Generator).
        views: which views to build.

    Returns:
        ``(runs, choices, warnings)``: ``runs`` is ``frame``'s rows relabelled (a row may appear in several
        views), with columns ``algorithm`` (``"<alg> [<view>]"``), ``base_algorithm``, ``view``, ``config``;
        ``choices`` has one row per (algorithm, view): ``algorithm, view, label, config, n_configs,
        n_eligible, n_runs, selection_score``.
    """
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        raise ValueError(f"unknown view(s) {unknown}; use {list(VIEWS)}")
    criterion = criterion or metric_criterion("iqm")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    base = frame.copy()
    base["config"] = config_labels(base, keys)
    base["_run"] = _run_key(base)
    tasks = list(pd.unique(base["task"]))
    out, choices, warnings = [], [], []
    single_seed, no_split, tuned_labels = [], [], []
    for alg in pd.unique(base["algorithm"]):
        runs = base[base["algorithm"] == alg]
        n_configs = int(runs["config"].nunique())
        layout = _Layout(runs, tasks)

        def emit(
            view: str,
            rows: pd.DataFrame,
            config: str,
            n_eligible: int,
            score: float,
            alg: str = alg,
            n_configs: int = n_configs,
        ) -> None:
            label = f"{alg} [{VIEWS[view]}]"
            rel = rows.drop(columns=["_run"]).copy()
            rel["base_algorithm"] = alg
            rel["view"] = view
            rel["algorithm"] = label
            out.append(rel)
            choices.append(
                {
                    "algorithm": alg,
                    "view": view,
                    "label": label,
                    "config": config,
                    "n_configs": n_configs,
                    "n_eligible": n_eligible,
                    "n_runs": int(len(rows)),
                    "selection_score": score,
                }
            )

        if "complete" in views:
            emit(
                "complete",
                runs,
                "all configurations" if n_configs > 1 else str(runs["config"].iloc[0]),
                n_configs,
                float("nan"),
            )
        if "tuned" in views:
            ch = layout.choose(np.ones(len(runs), dtype=bool), criterion)
            if ch.config is None:
                warnings.append(f"{alg}: no configuration has runs on every task; the tuned view is left out.")
            else:
                emit("tuned", runs[runs["config"] == ch.config], ch.config, ch.n_eligible, ch.score)
                tuned_labels.append(alg)
                if runs[runs["config"] == ch.config].groupby("task")["_run"].nunique().max() < 2:
                    single_seed.append(alg)
        if "split" in views:
            # Split each configuration's seeds (configs in sorted order, so the stream is reproducible).
            select = layout.split(runs["_run"], rng)
            # Eligible: a run on every task in both halves.
            both = np.logical_and((layout.counts(select) > 0).all(axis=1), (layout.counts(~select) > 0).all(axis=1))
            ch = layout.choose(select & both[layout.config], criterion)
            if ch.config is None:
                no_split.append(alg)
            else:
                emit(
                    "split",
                    runs[~select & (runs["config"] == ch.config).to_numpy()],
                    ch.config,
                    ch.n_eligible,
                    ch.score,
                )
    if tuned_labels:
        warnings.append(
            "tuned view ("
            + ", ".join(map(str, tuned_labels))
            + "): the best configuration was chosen on the same runs "
            "that are reported, so its score is optimistically biased (a maximum over noisy estimates); compare it "
            "with the split-half view, whose reported runs played no part in the choice."
        )
    if single_seed:
        warnings.append(
            "tuned view of " + ", ".join(map(str, single_seed)) + ": the chosen configuration has a single run per "
            "task, so 'tune and report' is the best single run of the sweep: strongly biased and without a "
            "run-to-run interval."
        )
    if no_split:
        warnings.append(
            "split-half view left out for " + ", ".join(map(str, no_split)) + ": it needs at least 2 seeds per "
            "configuration (one per half) with runs on every task."
        )
    runs_out = pd.concat(out, ignore_index=True) if out else base.iloc[:0].drop(columns=["_run"])
    return runs_out, pd.DataFrame(choices), warnings
