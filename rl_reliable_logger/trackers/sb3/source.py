"""Stable-Baselines3 log folders as a Source: one run folder per run, its fields named by a layout pattern.

Every folder under the log folder that holds an ``evaluations.npz`` (``EvalCallback(log_path=...)``) or a
``*monitor.csv`` (``Monitor``) is a run folder; its path relative to the log folder is matched against the layout
(:mod:`..base.layout`), which gives algorithm, task, seed and any hyperparameters. The quantities of a run
(``--score-key``): ``return`` (mean episode return), ``success`` (share of successful episodes, where the
environment reports ``info["is_success"]``) and ``length`` (mean episode length).

* **With ``evaluations.npz``** each evaluation is one point at its timestep: the score is the last evaluation's
  mean over its episodes (``--score-rule`` reads the evaluations: ``mean-last-N``, ``at-budget:STEP``, ``max``).
* **Without it**, the training episodes of ``monitor.csv`` (all workers' files, merged by the time each episode
  ended; steps are the running sum of episode lengths): the score is the mean over the last
  :data:`MONITOR_WINDOW` episodes (SB3's own ``rollout/ep_rew_mean`` window); ``--score-rule`` reads the
  episodes. Training episodes are not evaluations (exploration noise, a policy still changing): the console
  names the runs scored this way.

The successes and episodes behind a run's score (``successes``, ``episodes`` columns, for ``--successes successes
--episodes episodes``) are the last evaluation's (or the last :data:`MONITOR_WINDOW` training episodes').
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...data.counts import agree, plural
from ...data.files import walk
from ...data.scores import ScoreTable
from ...errors import InputError
from ...wording import kw, said
from ..base.intake import SourceRuns, read_table
from ..base.layout import Layout, parse_layout
from ..base.messages import DROP_INVALID, Hints
from ..base.reading import SEPARATE_KEYWORDS, ReadOptions, read_options
from ..base.records import FINISHED, RunRecord, success_fields
from ..base.request import SourceRequest
from .files import (
    EVALUATIONS,
    MONITOR_SUFFIX,
    Evaluations,
    MonitorLog,
    monitor_start,
    read_evaluations,
    read_monitor,
    zoo_args,
    zoo_seed,
)
from .keys import DEFAULT_LAYOUT, QUANTITIES

#: Training episodes a monitor-only run's score averages (SB3's ``stats_window_size``).
MONITOR_WINDOW = 100

HINTS = Hints(
    fields=said("Check ", kw("layout="), " (the run folders' paths relative to the log folder)"),
    scores={
        "success": "SB3 logs success only where the environment reports info['is_success'] at the end of an "
        'episode: EvalCallback then saves it in evaluations.npz, and Monitor(env, info_keywords=("is_success",)) '
        "in monitor.csv"
    },
    keywords=frozenset({DROP_INVALID, "curve_key="}),
    configuration="hyperparameter_keys=",
)
REFS = {"algorithm": "config.algorithm", "task": "config.task", "seed": "config.seed"}


def run_folders(logdir: Path) -> Iterator[tuple[str, bool, list[str]]]:
    """(relative POSIX path, has evaluations.npz, monitor file names) of every folder holding either, sorted.

    Symbolic links to folders are not followed (a link loop or a link out of the log folder is not read).
    """
    for relative, files in walk(logdir):
        monitors = [name for name in files if name.endswith(MONITOR_SUFFIX)]
        if EVALUATIONS in files or monitors:
            yield relative, EVALUATIONS in files, monitors


def _evaluation_record(ev: Evaluations) -> tuple[dict[str, list[tuple[float, float]]], dict[str, Any]]:
    steps = ev.timesteps.tolist()
    history = {"return": list(zip(steps, ev.mean_returns().tolist()))}
    if ev.ep_lengths is not None:
        history["length"] = list(zip(steps, ev.ep_lengths.mean(axis=1).astype(float).tolist()))
    extra: dict[str, Any] = {}
    if ev.successes is not None:
        history["success"] = list(zip(steps, ev.successes.mean(axis=1).astype(float).tolist()))
        extra = {"successes": int(ev.successes[-1].sum()), "episodes": int(ev.successes.shape[1])}
    summary = {key: points[-1][1] for key, points in history.items()}
    return history, {**summary, **extra}


def _monitor_record(log: MonitorLog) -> tuple[dict[str, list[tuple[float, float]]], dict[str, Any]]:
    steps = log.timesteps().astype(float).tolist()
    window = slice(-MONITOR_WINDOW, None)
    history = {"return": list(zip(steps, log.returns.tolist())), "length": list(zip(steps, log.lengths.tolist()))}
    summary: dict[str, Any] = {
        "return": float(np.mean(log.returns[window])),
        "length": float(np.mean(log.lengths[window])),
    }
    success = log.extras.get("is_success")
    if success is not None:
        history["success"] = list(zip(steps, success.tolist()))
        last = success[window]
        summary.update(success=float(last.mean()), successes=int(last.sum()), episodes=int(last.size))
    return history, summary


def _seed_notes(records: Sequence[RunRecord]) -> list[str]:
    """Where the seeds came from, when rl-zoo's ``args.yml`` gave some (its ``seed``; the folder's ``_1`` is
    rl-zoo's run counter) or could not be read: one note each, never a silent mix."""
    by_source: dict[str, list[str]] = {}
    for record in records:
        by_source.setdefault(str(record.attrs.get("seed_from")), []).append(record.run_id)
    if set(by_source) <= {"path"}:
        return []
    notes = []
    if "args.yml" in by_source:
        notes.append(
            f"the seed of {plural(len(by_source['args.yml']), 'run')} is the `seed` of rl-zoo's args.yml (the folder "
            "suffix, e.g. the _1 of CartPole-v1_1, is rl-zoo's run counter, not a seed)"
        )
    why = {
        "path": "they have no args.yml with a seed",
        "no yaml": "their args.yml is not read: PyYAML is not installed (pip install pyyaml)",
    }
    for source, runs in by_source.items():
        if source in why:
            notes.append(
                f"the seed of {plural(len(runs), 'run')} is the folder's path as the layout reads it ({why[source]}), "
                "e.g. " + ", ".join(map(repr, runs[:3]))
            )
    return notes


def _started(folder: Path, has_evaluations: bool, monitors: Sequence[str]) -> float | None:
    """When a run started: the earliest ``t_start`` its monitor files record, else (no monitor file) the modification
    time of its ``evaluations.npz``, which SB3 rewrites after every evaluation (orders a seed's reruns)."""
    starts = [start for name in monitors if (start := monitor_start(folder / name)) is not None]
    if starts:
        return min(starts)
    try:
        return os.stat(folder / EVALUATIONS).st_mtime if has_evaluations else None
    except OSError:
        return None


class SB3Source:
    """The run folders of a Stable-Baselines3 log folder, read with a layout pattern (a :class:`Source`).

    Example:
        >>> src = SB3Source("logs", layout="{algorithm}/{task}_{seed}")   # doctest: +SKIP
        >>> table = src.table(score_key="return")                         # doctest: +SKIP
    """

    tracker = "sb3"

    def __init__(self, logdir: str | os.PathLike, *, layout: str = DEFAULT_LAYOUT) -> None:
        self.logdir = Path(logdir)
        self.layout: Layout = parse_layout(layout)
        if not self.logdir.is_dir():
            raise InputError(f"Stable-Baselines3 log folder {str(self.logdir)!r} does not exist or is not a folder.")

    def location(self) -> str:
        return f"Stable-Baselines3 logs in {str(self.logdir)!r} (layout {self.layout.pattern!r})"

    def _matched(self) -> tuple[list[tuple[str, dict[str, Any], bool, list[str]]], list[dict[str, str]]]:
        """(runs, skipped): run folders that fit the layout, and the others with the reason."""
        runs: list[tuple[str, dict[str, Any], bool, list[str]]] = []
        skipped: list[dict[str, str]] = []
        for relative, has_evaluations, monitors in run_folders(self.logdir):
            inside = next((r for r, _, _, _ in runs if relative.startswith(r + "/")), None)
            if inside is not None:
                skipped.append({"run_id": relative, "reason": f"inside run folder {inside!r}"})
                continue
            fields = self.layout.match(relative)
            if fields is None:
                skipped.append({"run_id": relative, "reason": f"does not fit the layout {self.layout.pattern!r}"})
                continue
            runs.append((relative, fields, has_evaluations, monitors))
        if not runs:
            raise self.layout.none_fits(self.logdir, [s["run_id"] for s in skipped], "evaluations.npz or monitor.csv")
        return runs, skipped

    def _read(self, relative: str, has_evaluations: bool, monitors: Sequence[str]) -> tuple[Any, Any, bool] | str:
        """(history, summary, from monitor) of a run folder, or why it cannot be read."""
        folder = self.logdir / relative
        try:
            if has_evaluations:
                return (*_evaluation_record(read_evaluations(folder / EVALUATIONS)), False)
            return (*_monitor_record(read_monitor([folder / name for name in monitors])), True)
        except InputError as err:
            return str(err)

    def _record(
        self, relative: str, fields: dict[str, Any], has_evaluations: bool, monitors: Sequence[str]
    ) -> RunRecord | str:
        """The record of one run folder (its seed from rl-zoo's ``args.yml`` where it has one: ``seed_from`` in its
        attributes), or why it cannot be read."""
        got = self._read(relative, has_evaluations, monitors)
        if isinstance(got, str):
            return got
        history, summary, monitor = got
        config, seed_from = dict(fields), "path"
        for args in zoo_args(self.logdir / relative):
            try:
                seed = zoo_seed(args)
            except InputError as err:
                return str(err)
            except ImportError:
                seed_from = "no yaml"
                break
            if seed is not None:
                config["seed"], seed_from = seed, "args.yml"
                break
        return RunRecord(
            run_id=relative,
            name=relative,
            state=FINISHED,  # SB3 files record no run state
            config=config,
            summary=summary,
            history=history,
            attrs={"from_monitor": monitor, "seed_from": seed_from},
            source="sb3",
            started=_started(self.logdir / relative, has_evaluations, monitors),
        )

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        """One record per run folder that fits the layout (its fields in ``config``, its quantities' points as
        history and its score as summary); a folder whose files cannot be read is an ``unreadable`` entry."""
        quantity = _quantity(request.score)
        given = [name for name in REFS if getattr(request, name) is not None]
        if given:
            raise InputError(said(f"the {given[0]} comes from ", kw("layout="), ", not from a field reference."))
        matched, skipped = self._matched()
        records: list[RunRecord] = []
        unreadable: list[dict[str, Any]] = []
        for relative, fields, has_evaluations, monitors in matched:
            got = self._record(relative, fields, has_evaluations, monitors)
            if isinstance(got, str):
                unreadable.append({"run_id": relative, **fields, "reason": got})
            else:
                records.append(got)
        from_monitor = [r.run_id for r in records if r.attrs["from_monitor"]]
        info = {
            "tracker": "sb3",
            "logdir": str(self.logdir),
            "layout": self.layout.pattern,
            "location": self.location(),
            "score": quantity,
            "scored_from_monitor": from_monitor,
        }
        notes = []
        if from_monitor:
            notes.append(
                f"{plural(len(from_monitor), 'folder', 'run')} {agree(len(from_monitor), 'have')} no evaluations.npz: "
                f"their {quantity} is the mean of their "
                f"last {MONITOR_WINDOW} training episodes in monitor.csv (not an evaluation), e.g. "
                + ", ".join(map(repr, from_monitor[:3]))
            )
        notes += _seed_notes(records)
        read = replace(
            request,
            algorithm=REFS["algorithm"],
            task=REFS["task"],
            seed=REFS["seed"],
            score=f"summary.{quantity}",
            curve_key=quantity if request.curve_key else None,
            value_fields=success_fields(records),
        )
        return SourceRuns(
            records,
            "Stable-Baselines3",
            info,
            request=read,
            skipped=skipped,
            unreadable=unreadable,
            notes=notes,
            hints=HINTS,
        )

    def table(self, *, score_key: str = "return", read: ReadOptions | None = None, **legacy: Any) -> ScoreTable:
        """See :func:`sb3_table` (``legacy``: the reading options as separate keywords, deprecated)."""
        options = read_options(read, legacy, where="SB3Source.table()", accepted=SEPARATE_KEYWORDS)
        return read_table(self, options.fixed_curves("Stable-Baselines3").request(score=score_key))


def _quantity(score: Any) -> str:
    scores = [score] if isinstance(score, str) else list(score or ())
    if len(scores) != 1 or str(scores[0]).strip() not in QUANTITIES:
        raise InputError(
            said(
                kw("score_key="),
                f" is one of {', '.join(QUANTITIES)} (what SB3 logs per episode), got "
                f"{', '.join(map(repr, scores)) or 'none'}.",
            )
        )
    return str(scores[0]).strip()


def sb3_table(
    logdir: str | os.PathLike,
    *,
    layout: str = DEFAULT_LAYOUT,
    score_key: str = "return",
    read: ReadOptions | None = None,
    **legacy: Any,
) -> ScoreTable:
    """A ScoreTable from Stable-Baselines3 logs: one run folder per run, named by ``layout``.

    ``layout`` names the fields in each run folder's path relative to ``logdir`` (rl-baselines3-zoo's
    ``{algorithm}/{task}_{seed}`` by default; ``{algorithm}_{task}_{seed}`` for ``PPO_CartPole-v1_3``; other
    ``{name}`` fields become hyperparameter columns). A run's score is its last evaluation's mean ``score_key``
    (``return``, ``success`` or ``length``) in ``evaluations.npz``; ``read``
    (:class:`ReadOptions`) says how runs are read: its ``score_rule`` (``mean-last-N``, ``at-budget:STEP``,
    ``max``) reads all evaluations. A run folder without ``evaluations.npz`` is scored from
    its ``monitor.csv`` training episodes (the mean of the last 100; said in ``table.warnings``). ``curves=True``
    adds every evaluation (or episode) as learning-curve rows at its timestep. Where runs log successes, the
    columns ``successes`` and ``episodes`` hold the counts behind each score.

    Example:
        >>> table = sb3_table("logs", layout="{algorithm}/{task}_{seed}")       # doctest: +SKIP
        >>> evaluate(table, seed=0).headline("iqm")                             # doctest: +SKIP
    """
    options = read_options(read, legacy, where="sb3_table()", accepted=SEPARATE_KEYWORDS)
    return SB3Source(logdir, layout=layout).table(score_key=score_key, read=options)
