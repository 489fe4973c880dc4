"""marl-eval JSON files as a Source: one run per (environment, task, algorithm, seed) of each file.

``PATH`` is one JSON file or a folder: every ``*.json`` under it is read (symbolic links to folders are not
followed). A run's score is the mean of its ``absolute_metrics.<metric>`` values (marl-eval's absolute metric);
``last_step=True`` takes the last ``step_<k>``'s mean instead; ``--score-rule`` (``mean-last-N``,
``at-budget:STEP``, ``max``) reads the ``step_<k>`` means at their ``step_count``, which are also the curves.

A run's configuration is the file it came from (``file``: its path relative to ``PATH``), or with ``layout`` the
fields a pattern over that path names (``lr_{lr}/metrics.json``). Two files holding the same (algorithm, task,
seed) are reported as a duplicate seed by the shared intake: either the files are two configurations
(``--hyperparameter-keys file``, or a layout field) or two batches of seeds numbered from 0 each
(``seeds_by_file=True`` makes each file's seed labels its own: ``seed_0`` of ``b/metrics.json`` becomes
``b/metrics.json:seed_0``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...data.files import walk
from ...data.scores import ScoreTable
from ...errors import InputError
from ...wording import Message, kw, said
from ..base.intake import SourceRuns, read_table
from ..base.layout import Layout, parse_layout
from ..base.messages import DROP_INVALID, Hints
from ..base.reading import SEPARATE_KEYWORDS, ReadOptions, read_options
from ..base.records import FINISHED, RunRecord, success_fields
from ..base.request import SourceRequest
from .files import MarlRun, read_marl_eval

HINTS = Hints(
    fields=said("Check ", kw("metric="), " (a metric of absolute_metrics or of the step_<k> entries)"),
    keywords=frozenset({DROP_INVALID, "curve_key="}),
    configuration="hyperparameter_keys=",
    duplicates=said(
        "if the files are batches of seeds numbered from 0 each, pass ",
        kw("seeds_by_file=True"),
        " so each file's seeds are its own",
    ),
)
REFS = {"algorithm": "config.algorithm", "task": "config.task", "seed": "config.seed"}
_SHOWN = 10


def json_files(path: Path) -> Iterator[Path]:
    """``path`` itself, or every ``*.json`` file under the folder ``path`` in sorted order (links to folders not
    followed)."""
    if not path.is_dir():
        yield path
        return
    for relative, files in walk(path):
        for name in files:
            if name.lower().endswith(".json"):
                yield path / relative / name


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values))


def _binary(values: Sequence[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


class MarlEvalSource:
    """The runs of marl-eval JSON files (a :class:`Source`).

    Example:
        >>> table = MarlEvalSource("metrics.json").table(metric="mean_episode_return")   # doctest: +SKIP
    """

    tracker = "marl-eval"

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        layout: str | None = None,
        last_step: bool = False,
        seeds_by_file: bool = False,
    ) -> None:
        self.path = Path(path)
        self.layout: Layout | None = None if layout is None else parse_layout(layout, required=())
        self.last_step = last_step
        self.seeds_by_file = seeds_by_file
        if not self.path.exists():
            raise InputError(f"marl-eval file or folder {str(self.path)!r} does not exist.")

    def location(self) -> str:
        return f"marl-eval JSON in {str(self.path)!r}" + (f" (layout {self.layout.pattern!r})" if self.layout else "")

    def _files(self) -> tuple[list[tuple[Path, str, dict[str, Any]]], list[dict[str, str]]]:
        """(files, skipped): each JSON file with its relative name and configuration fields."""
        files: list[tuple[Path, str, dict[str, Any]]] = []
        skipped: list[dict[str, str]] = []
        for file in json_files(self.path):
            relative = file.relative_to(self.path).as_posix() if self.path.is_dir() else file.name
            if self.layout is None:
                files.append((file, relative, {"file": relative}))
                continue
            fields = self.layout.match(relative)
            if fields is None:
                skipped.append({"run_id": relative, "reason": f"does not fit the layout {self.layout.pattern!r}"})
            else:
                files.append((file, relative, dict(fields)))
        if not files:
            raise InputError(
                f"no marl-eval JSON file in {str(self.path)!r}"
                + (f" fits the layout {self.layout.pattern!r}" if self.layout else "")
                + (f" (found: {', '.join(repr(s['run_id']) for s in skipped[:_SHOWN])})" if skipped else "")
                + "."
            )
        return files, skipped

    def _record(self, run: MarlRun, relative: str, fields: dict[str, Any], metric: str) -> RunRecord:
        history = [(count, _mean(m[metric])) for count, m in run.steps if metric in m]
        summary: dict[str, Any] = {}
        final = run.steps[-1][1].get(metric) if self.last_step and run.steps else run.absolute.get(metric)
        if final is not None:
            summary[metric] = _mean(final)
            if _binary(final):  # one 0/1 value per episode: the counts behind a success rate
                summary.update(successes=int(sum(final)), episodes=len(final))
        seed = f"{relative}:{run.seed}" if self.seeds_by_file else run.seed
        return RunRecord(
            run_id=f"{relative}:{run.where}",
            name=f"{run.algorithm} / {run.task} / {seed}",
            state=FINISHED,  # marl-eval files record no run state
            config={**fields, "env": run.env, "algorithm": run.algorithm, "task": run.task, "seed": seed},
            summary=summary,
            history={metric: history} if history else {},
            source="marl-eval",
        )

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        """One record per run of every file; a file that cannot be read is an ``unreadable`` entry naming it."""
        scores = [request.score] if isinstance(request.score, str) else list(request.score or ())
        if len(scores) != 1 or not str(scores[0]).strip():
            raise InputError(said(kw("metric="), f" names one metric, got {', '.join(map(repr, scores)) or 'none'}."))
        metric = str(scores[0]).strip()
        given = [name for name in REFS if getattr(request, name) is not None]
        if given:
            raise InputError(f"the {given[0]} comes from the file's nesting, not from a field reference.")
        files, skipped = self._files()
        records: list[RunRecord] = []
        unreadable: list[dict[str, Any]] = []
        for file, relative, fields in files:
            try:
                runs = read_marl_eval(file)
            except InputError as err:
                unreadable.append({"run_id": relative, "reason": str(err)})
                continue
            started = _modified(file)
            for run in runs:
                if self.last_step and not run.steps:  # never the absolute metric in its place without a word
                    unreadable.append(
                        {"run_id": f"{relative}:{run.where}", **_cell(run), "reason": _no_steps(run).text()}
                    )
                    continue
                records.append(replace(self._record(run, relative, fields, metric), started=started))
        _check_task_environments(records)
        info = {
            "tracker": "marl-eval",
            "path": str(self.path),
            "location": self.location(),
            "metric": metric,
            "score": "last step" if self.last_step else "absolute_metrics",
            "seeds_by_file": self.seeds_by_file,
        }
        read = replace(
            request,
            algorithm=REFS["algorithm"],
            task=REFS["task"],
            seed=REFS["seed"],
            score=f"summary.{metric}",
            curve_key=metric if request.curve_key else None,
            value_fields=success_fields(records),
        )
        return SourceRuns(records, "marl-eval", info, request=read, skipped=skipped, unreadable=unreadable, hints=HINTS)

    def table(self, *, metric: str, read: ReadOptions | None = None, **legacy: Any) -> ScoreTable:
        """See :func:`marl_eval_table` (``legacy``: the reading options as separate keywords, deprecated)."""
        options = read_options(read, legacy, where="MarlEvalSource.table()", accepted=SEPARATE_KEYWORDS)
        return read_table(self, options.fixed_curves("marl-eval").request(score=metric))


def _modified(file: Path) -> float | None:
    """When a JSON file was last written (marl-eval records no start time): orders a seed written in two files."""
    try:
        return os.stat(file).st_mtime
    except OSError:
        return None


def _cell(run: MarlRun) -> dict[str, str]:
    return {"algorithm": run.algorithm, "task": run.task}


def _no_steps(run: MarlRun) -> Message:
    return said(
        f"{run.file}: run {run.where} has no step_<k> entry, so ",
        kw("last_step=True"),
        " has no last step to score it by; score every run by its absolute_metrics (without it) or leave this run out",
    )


def _check_task_environments(records: Sequence[RunRecord]) -> None:
    """A task name under two environments would pool two tasks into one: refused, naming both."""
    envs: dict[str, set[str]] = {}
    for r in records:
        envs.setdefault(str(r.config["task"]), set()).add(str(r.config["env"]))
    shared = {task: sorted(e) for task, e in envs.items() if len(e) > 1}
    if shared:
        task, names = next(iter(shared.items()))
        raise InputError(
            f"task {task!r} is in environments {', '.join(map(repr, names))}: tasks are named without their "
            "environment, so these would be pooled; analyse one environment's file at a time."
        )


def marl_eval_table(
    path: str | os.PathLike,
    *,
    metric: str = "mean_episode_return",
    last_step: bool = False,
    seeds_by_file: bool = False,
    layout: str | None = None,
    read: ReadOptions | None = None,
    **legacy: Any,
) -> ScoreTable:
    """A ScoreTable from marl-eval JSON (a file, or a folder of them): one run per environment / task /
    algorithm / seed.

    A run's score is the mean of ``absolute_metrics.<metric>`` (``last_step=True``: of its last ``step_<k>``);
    ``read`` (:class:`ReadOptions`) says how runs are read: its ``score_rule`` reads the ``step_<k>`` means instead,
    and its ``curves=True`` adds them as learning-curve rows at their ``step_count``. Each run's ``file`` (path relative to ``path``) is a column, or with ``layout`` the fields
    a pattern over it names (``lr_{lr}/metrics.json``), for the ``hyperparameter_keys`` of ``read``. ``seeds_by_file=True`` makes
    every file's seed labels its own (two batches of seeds numbered from 0 are then 2 x N seeds). Where the
    metric's values are one 0/1 per episode, the columns ``successes`` and ``episodes`` count them.

    Example:
        >>> table = marl_eval_table("metrics.json", metric="mean_episode_return")   # doctest: +SKIP
        >>> evaluate(table, seed=0).headline("iqm")                                 # doctest: +SKIP
    """
    options = read_options(read, legacy, where="marl_eval_table()", accepted=SEPARATE_KEYWORDS)
    source = MarlEvalSource(path, layout=layout, last_step=last_step, seeds_by_file=seeds_by_file)
    return source.table(metric=metric, read=options)
