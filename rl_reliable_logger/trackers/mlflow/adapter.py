"""MLflow adapter: pull runs into a ScoreTable, publish a Report to a parent run, log final scores.

Three pieces, all on the real MLflow client (``mlflow`` is imported inside the functions, so
``import rl_reliable_logger`` works without it):

- **Source** -- :func:`load_mlflow_runs` pages through ``MlflowClient.search_runs`` over one or
  more experiments (names or ids) with an optional MLflow filter string and returns
  tracker-neutral :class:`~rl_reliable_logger.trackers.base.RunRecord` objects;
  :func:`mlflow_table` groups them into a ScoreTable with field references (``tags.X``,
  ``params.X``, ``metrics.X``, ``run.name`` ...). MLflow filters have no ``OR`` (and no ``IN`` for
  tags/params), so grouping over many tag values is done here, on the client.
- **Sink** -- :func:`publish_mlflow` writes a Report onto an existing run or a new
  ``rl-reliable-analysis`` run: report files under ``rl_reliable/``, every table as MLflow table
  JSON under ``rl_reliable/tables/`` (registered in the ``mlflow.loggedArtifacts`` tag so the UI
  shows them as tables), headline metrics ``<metric>/<algorithm>`` (+ ``/low``, ``/high``) and
  ``rl_reliable.*`` tags. Publishing is idempotent (a content hash tag), only ever adds, and
  never touches the source runs.
- **End of training** -- :func:`write_final_score` (called by
  :func:`rl_reliable_logger.log_final_score`) writes the convention: tags
  ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
  ``rl_reliable_final_score`` on the active run.

Network faults: HTTP(S) tracking servers are retried with MLflow's own backoff, bounded by
default to :data:`RETRY_DEFAULTS` (override with the ``MLFLOW_HTTP_REQUEST_*`` environment
variables); after that a :class:`TrackerError` names the URI and what to check.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...analysis.report import OPTIONAL_TABLES, TABLES
from ...data.names import escape_markdown
from ...errors import TrackerError
from ...redaction import redact
from ...render.writer import save_report
from ...version import __version__
from ..base.records import DEFAULT_KEYS, RunRecord, parse_field_ref, records_to_table, resolve

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report
    from ...data.scores import ScoreTable

#: Field references of the end-of-training convention (what ``log_final_score`` writes).
DEFAULT_REFS = {
    "algorithm": f"tags.{DEFAULT_KEYS['algorithm']}",
    "task": f"tags.{DEFAULT_KEYS['task']}",
    "seed": f"tags.{DEFAULT_KEYS['seed']}",
    "score": f"metrics.{DEFAULT_KEYS['score']}",
}

#: Bounded retry settings used unless the environment sets them (MLflow's own defaults retry a
#: dead server for minutes: 7 retries, backoff factor 2, 120 s timeout).
RETRY_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "3",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}

ROLE_TAG = "rl_reliable.role"
HASH_TAG = "rl_reliable.report_hash"
ANALYSIS_ROLE = "analysis"
ANALYSIS_RUN_NAME = "rl-reliable-analysis"
ARTIFACT_DIR = "rl_reliable"
LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"

_PAGE_SIZE = 1000
_MAX_TAG_VALUE = 5000
_HISTORY_WORKERS = 8


# --------------------------------------------------------------------------- plumbing
def _import_mlflow() -> Any:
    try:
        import mlflow
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise TrackerError(
            "MLflow is not installed: `pip install 'rl_reliable_logger[mlflow]'` (or `pip install mlflow`)."
        ) from None
    return mlflow


def _resolve_uri(tracking_uri: str | None) -> str:
    """``tracking_uri``, else MLflow's own default (``MLFLOW_TRACKING_URI``, else ``sqlite:///<cwd>/mlflow.db``)."""
    if tracking_uri:
        return str(tracking_uri)
    return str(_import_mlflow().get_tracking_uri())


def _is_remote(uri: str) -> bool:
    return uri.split(":", 1)[0].lower() in ("http", "https", "databricks")


def _sqlite_path(uri: str) -> Path | None:
    if not uri.lower().startswith("sqlite:///"):
        return None
    path = uri[len("sqlite:///") :].split("?", 1)[0]
    if path in ("", ":memory:"):
        return None
    return Path(path if path.startswith("/") else path)


@contextlib.contextmanager
def _bounded_retries() -> Iterator[None]:
    """Apply :data:`RETRY_DEFAULTS` for the duration of a call unless the user set them."""
    added = [key for key in RETRY_DEFAULTS if key not in os.environ]
    for key in added:
        os.environ[key] = RETRY_DEFAULTS[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _is_connection_error(err: BaseException) -> bool:
    text = str(err)
    markers = (
        "failed with exception",
        "Max retries exceeded",
        "Connection refused",
        "timed out",
        "Failed to establish a new connection",
        "NameResolutionError",
        "RemoteDisconnected",
        "too many 5",
        "failed with error code 5",
        "Read timed out",
    )
    return any(m in text for m in markers)


class _Tracker:
    """One MlflowClient on one URI; every call goes through :meth:`call` (retries + clear errors)."""

    def __init__(self, tracking_uri: str | None = None, *, must_exist: bool = True):
        mlflow = _import_mlflow()
        self.uri = _resolve_uri(tracking_uri)
        self.shown_uri = redact(self.uri)
        path = _sqlite_path(self.uri)
        if must_exist and path is not None and not path.exists():
            raise TrackerError(
                f"no MLflow database at {path} (tracking URI {self.shown_uri}). MLflow's default store is "
                "mlflow.db in the current folder: run from the folder you trained in, or pass "
                "--tracking-uri / set MLFLOW_TRACKING_URI (e.g. sqlite:////abs/path/mlflow.db or http://host:5000)."
            )
        self.client = mlflow.MlflowClient(tracking_uri=self.uri)

    def call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from mlflow.exceptions import MlflowException

        with _bounded_retries():
            try:
                return fn(*args, **kwargs)
            except MlflowException as err:
                if _is_remote(self.uri) and _is_connection_error(err):
                    raise TrackerError(self._unreachable(what, err)) from err
                raise
            except OSError as err:  # requests' ConnectionError is an OSError
                if _is_remote(self.uri):
                    raise TrackerError(self._unreachable(what, err)) from err
                raise

    def _unreachable(self, what: str, err: BaseException) -> str:
        retries = os.environ.get("MLFLOW_HTTP_REQUEST_MAX_RETRIES", RETRY_DEFAULTS["MLFLOW_HTTP_REQUEST_MAX_RETRIES"])
        detail = redact(str(err).splitlines()[0] if str(err) else "")[:400]
        return (
            f"could not reach the MLflow tracking server at {self.shown_uri} ({what}; gave up after "
            f"{retries} retries): {detail}\nCheck that the server is running (`mlflow server --host ... "
            "--port ...`), that the URI is right (--tracking-uri / MLFLOW_TRACKING_URI) and that no proxy or "
            "firewall blocks it. Retries and timeout are set by MLFLOW_HTTP_REQUEST_MAX_RETRIES, "
            "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR and MLFLOW_HTTP_REQUEST_TIMEOUT."
        )

    # ------------------------------------------------------------------ experiments
    def experiments(self, names_or_ids: Sequence[str]) -> list[Any]:
        """Resolve experiment names or ids; a missing one is an error listing the ones that exist."""
        from mlflow.exceptions import MlflowException

        found, missing = [], []
        for ref in names_or_ids:
            ref = str(ref)
            exp = self.call(f"looking up experiment {ref!r}", self.client.get_experiment_by_name, ref)
            if exp is None:
                try:
                    exp = self.call(f"looking up experiment {ref!r}", self.client.get_experiment, ref)
                except MlflowException:
                    exp = None
            if exp is None or getattr(exp, "lifecycle_stage", "active") != "active":
                missing.append(ref)
            elif all(e.experiment_id != exp.experiment_id for e in found):
                found.append(exp)
        if missing:
            existing = self.call("listing experiments", self.client.search_experiments, max_results=1000)
            listing = ", ".join(f"{e.name!r} (id {e.experiment_id})" for e in existing) or "none"
            raise TrackerError(
                f"MLflow experiment(s) not found at {self.shown_uri}: {', '.join(repr(m) for m in missing)}. "
                f"Existing experiments: {listing}. Pass --experiment with one of these names or ids "
                "(or point --tracking-uri at the store you trained with)."
            )
        return found

    def search(self, experiment_ids: list[str], filter_string: str, page_size: int = _PAGE_SIZE) -> list[Any]:
        """All active runs matching ``filter_string``, page by page (one request per page)."""
        from mlflow.entities import ViewType
        from mlflow.exceptions import MlflowException

        runs: list[Any] = []
        token = None
        while True:
            try:
                page = self.call(
                    "searching runs",
                    self.client.search_runs,
                    experiment_ids,
                    filter_string=filter_string or "",
                    run_view_type=ViewType.ACTIVE_ONLY,
                    max_results=page_size,
                    page_token=token,
                )
            except MlflowException as err:
                if getattr(err, "error_code", "") == "INVALID_PARAMETER_VALUE":
                    raise TrackerError(
                        f"MLflow rejected the filter {filter_string!r}: {err.message}\nMLflow filters join clauses "
                        "with AND only (no OR; no IN for tags/params) and need quoted values, e.g. "
                        "\"tags.sweep = 'a' and params.lr = '0.001'\". To compare many tag values, leave them out "
                        "of the filter: runs are grouped by value on the client."
                    ) from err
                raise
            runs.extend(page)
            token = page.token
            if not token:
                return runs

    def history(self, run_id: str, key: str) -> list[tuple[float, float]]:
        points = self.call(
            f"reading metric history {key!r} of run {run_id}", self.client.get_metric_history, run_id, key
        )
        ordered = sorted(points, key=lambda m: (m.step, m.timestamp))
        # several values at one step: keep the last one logged (what MLflow shows as latest)
        by_step: dict[float, float] = {}
        for m in ordered:
            by_step[float(m.step)] = float(m.value)
        return sorted(by_step.items())


def _run_url(uri: str, experiment_id: str, run_id: str) -> str | None:
    if uri.split(":", 1)[0].lower() in ("http", "https"):
        return f"{redact(uri).rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"
    return None


def _to_record(run: Any, experiment_names: Mapping[str, str], uri: str) -> RunRecord:
    info, data = run.info, run.data
    tags = dict(data.tags)
    attrs = {
        "id": info.run_id,
        "run_id": info.run_id,
        "name": info.run_name,
        "status": info.status,
        "experiment_id": info.experiment_id,
        "experiment_name": experiment_names.get(info.experiment_id),
        "start_time": info.start_time,
        "end_time": info.end_time,
        "user_id": info.user_id,
        "artifact_uri": info.artifact_uri,
        "lifecycle_stage": info.lifecycle_stage,
        "parent_run_id": tags.get("mlflow.parentRunId"),
        "entry_point": tags.get("mlflow.project.entryPoint"),
        "url": _run_url(uri, info.experiment_id, info.run_id),
    }
    return RunRecord(
        run_id=info.run_id,
        name=info.run_name,
        state=str(info.status).lower(),
        config={},
        summary=dict(data.metrics),
        params=dict(data.params),
        metrics=dict(data.metrics),
        tags=tags,
        attrs={k: v for k, v in attrs.items() if v is not None},
        source="mlflow",
    )


# --------------------------------------------------------------------------- source
class MlflowSource:
    """Runs of MLflow experiments as RunRecords / a ScoreTable.

    Example:
        >>> src = MlflowSource("sqlite:///mlflow.db")                      # doctest: +SKIP
        >>> table = src.table(["bandits"], filter_string="tags.sweep = 'a'")  # doctest: +SKIP
    """

    def __init__(self, tracking_uri: str | None = None):
        self.tracker = _Tracker(tracking_uri)
        self.tracking_uri = self.tracker.uri

    def runs(
        self,
        experiments: str | Sequence[str],
        *,
        filter_string: str = "",
        history_keys: Sequence[str] = (),
        history_for: set[str] | None = None,
        page_size: int = _PAGE_SIZE,
    ) -> tuple[list[RunRecord], list[Any]]:
        """(records, resolved experiments). Histories of ``history_keys`` are read for the runs in
        ``history_for`` (all runs when None): one ``get_metric_history`` call per run and key."""
        names = [experiments] if isinstance(experiments, str) else list(experiments)
        if not names:
            raise TrackerError("no MLflow experiment given: pass --experiment NAME (several allowed).")
        exps = self.tracker.experiments(names)
        exp_names = {e.experiment_id: e.name for e in exps}
        runs = self.tracker.search([e.experiment_id for e in exps], filter_string, page_size)
        records = [_to_record(r, exp_names, self.tracker.uri) for r in runs]
        records.sort(key=lambda r: (r.attrs.get("experiment_id", ""), r.attrs.get("start_time") or 0, r.run_id))
        if history_keys:
            wanted = [r for r in records if history_for is None or r.run_id in history_for]
            self._fill_histories(wanted, history_keys)
        return records, exps

    def _fill_histories(self, records: list[RunRecord], keys: Sequence[str]) -> None:
        jobs = [(r, k) for r in records for k in keys]
        if _is_remote(self.tracker.uri) and len(jobs) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=_HISTORY_WORKERS) as pool:
                results = list(pool.map(lambda job: self.tracker.history(job[0].run_id, job[1]), jobs))
        else:
            results = [self.tracker.history(r.run_id, k) for r, k in jobs]
        for (record, key), points in zip(jobs, results):
            if record.history is None:
                record.history = {}
            record.history[key] = points

    def table(
        self,
        experiments: str | Sequence[str],
        *,
        filter_string: str = "",
        algorithm: str = DEFAULT_REFS["algorithm"],
        task: str = DEFAULT_REFS["task"],
        seed: str = DEFAULT_REFS["seed"],
        score: str = DEFAULT_REFS["score"],
        include_unfinished: bool = False,
        on_invalid: str = "raise",
        curve_key: str | None = None,
        algorithms: Sequence[str] | None = None,
        tasks: Sequence[str] | None = None,
        exclude_run_ids: Sequence[str] = (),
        page_size: int = _PAGE_SIZE,
        extra_fields: Mapping[str, str] | None = None,
    ) -> ScoreTable:
        """See :func:`mlflow_table`."""
        refs = {"algorithm": algorithm, "task": task, "seed": seed, "score": score}
        parsed = {name: parse_field_ref(ref) for name, ref in refs.items()}
        history_key = None
        if curve_key:
            ref = curve_key if "." in curve_key and curve_key.split(".", 1)[0] == "metrics" else f"metrics.{curve_key}"
            history_key = parse_field_ref(ref).key
        records, exps = self.runs(experiments, filter_string=filter_string, page_size=page_size)
        location = f"MLflow experiment(s) {', '.join(repr(e.name) for e in exps)} at {self.tracker.shown_uri}" + (
            f" with filter {filter_string!r}" if filter_string else ""
        )
        kept, skipped = _select(records, parsed, set(map(str, exclude_run_ids)), algorithms, tasks)
        if history_key is not None:
            usable = {r.run_id for r in kept if include_unfinished or r.state == "finished"}
            self._fill_histories([r for r in kept if r.run_id in usable], [history_key])
        source = {
            "tracker": "mlflow",
            "tracking_uri": self.tracker.shown_uri,
            "experiments": [{"id": e.experiment_id, "name": e.name} for e in exps],
            "filter": filter_string or "",
            "location": location,
            "n_runs_found": len(records),
            "skipped": skipped,
        }
        if algorithms:
            source["algorithms_selected"] = list(algorithms)
        if tasks:
            source["tasks_selected"] = list(tasks)
        if not kept:
            reason = (
                f"; {len(skipped)} run(s) were skipped because they have none of the fields "
                f"{', '.join(refs.values())} or are analysis runs"
                if skipped
                else ""
            )
            from ...errors import ScoreTableError

            raise ScoreTableError(
                f"no runs to analyse in {location}{reason}. Runs need the fields named by --algorithm-key, "
                "--task-key, --seed-key and --score-key (default: what rl_reliable_logger.log_final_score writes)."
            )
        table = records_to_table(
            kept,
            algorithm=algorithm,
            task=task,
            seed=seed,
            score=score,
            include_unfinished=include_unfinished,
            on_invalid=on_invalid,
            history_key=history_key,
            source=source,
            extra_fields=extra_fields,
        )
        unrelated = [s for s in skipped if s["reason"].startswith("has none")]
        if unrelated:
            table.warnings.append(
                f"skipped {len(unrelated)} MLflow run(s) that have none of the fields {', '.join(refs.values())} "
                f"(e.g. parent or unrelated runs): {', '.join(s['run_id'] for s in unrelated[:10])}"
                + (" ..." if len(unrelated) > 10 else "")
            )
        excluded = table.source.get("excluded") or []
        if excluded:
            table.warnings.append(
                f"left out {len(excluded)} unfinished MLflow run(s) ("
                + ", ".join(f"{n} {s}" for s, n in table.source.get("excluded_summary", {}).items())
                + "); pass --include-unfinished to use them"
            )
        return table


def _select(
    records: list[RunRecord],
    parsed: Mapping[str, Any],
    exclude: set[str],
    algorithms: Sequence[str] | None,
    tasks: Sequence[str] | None,
) -> tuple[list[RunRecord], list[dict[str, Any]]]:
    """Client-side selection: drop analysis runs, runs with none of the fields, other groups."""
    kept: list[RunRecord] = []
    skipped: list[dict[str, Any]] = []
    data_refs = [ref for ref in parsed.values() if ref.kind != "run"]
    for r in records:
        tags = r.tags if isinstance(r.tags, Mapping) else {}
        reason = None
        if r.run_id in exclude:
            reason = "is the run the report is published to"
        elif tags.get(ROLE_TAG) == ANALYSIS_ROLE:
            reason = "is an rl-reliable analysis run"
        elif data_refs and not any(_has(r, ref) for ref in data_refs):
            reason = "has none of the fields " + ", ".join(str(ref) for ref in data_refs)
        else:
            for values, name in ((algorithms, "algorithm"), (tasks, "task")):
                if values and _has(r, parsed[name]) and str(resolve(r, parsed[name])) not in set(map(str, values)):
                    reason = f"{name} {resolve(r, parsed[name])!r} not selected"
                    break
        if reason is None:
            kept.append(r)
        else:
            skipped.append({"run_id": r.run_id, "name": r.name, "state": r.state, "reason": reason})
    return kept, skipped


def _has(record: RunRecord, ref: Any) -> bool:
    try:
        resolve(record, ref)
        return True
    except KeyError:
        return False


def load_mlflow_runs(
    experiments: str | Sequence[str],
    *,
    tracking_uri: str | None = None,
    filter_string: str = "",
    history_keys: Sequence[str] = (),
    page_size: int = _PAGE_SIZE,
) -> list[RunRecord]:
    """Every active run of the experiments (names or ids) matching ``filter_string``, as RunRecords.

    Paged ``search_runs`` (one request per ``page_size`` runs, never one per run); metric
    histories only for ``history_keys`` (one ``get_metric_history`` call per run and key).

    Example:
        >>> records = load_mlflow_runs("bandits", filter_string="tags.sweep = 'a'")   # doctest: +SKIP
        >>> records[0].tags["rl_reliable_algorithm"], records[0].metrics["rl_reliable_final_score"]  # doctest: +SKIP
        ('ucb1', 0.81)
    """
    records, _ = MlflowSource(tracking_uri).runs(
        experiments, filter_string=filter_string, history_keys=history_keys, page_size=page_size
    )
    return records


def mlflow_table(
    experiments: str | Sequence[str],
    *,
    tracking_uri: str | None = None,
    filter_string: str = "",
    algorithm: str = DEFAULT_REFS["algorithm"],
    task: str = DEFAULT_REFS["task"],
    seed: str = DEFAULT_REFS["seed"],
    score: str = DEFAULT_REFS["score"],
    include_unfinished: bool = False,
    on_invalid: str = "raise",
    curve_key: str | None = None,
    algorithms: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    exclude_run_ids: Sequence[str] = (),
    page_size: int = _PAGE_SIZE,
    extra_fields: Mapping[str, str] | None = None,
) -> ScoreTable:
    """A ScoreTable from MLflow runs, grouped by field references.

    Defaults follow the :func:`rl_reliable_logger.log_final_score` convention, so an experiment
    trained with it needs no field arguments. Only FINISHED runs are used unless
    ``include_unfinished``; the others are listed in ``table.source["excluded"]``. Runs that have
    none of the four fields (parent runs, unrelated runs) and earlier analysis runs are skipped
    and listed in ``table.source["skipped"]``; a run that has some fields but not all is an error
    naming it. ``algorithms`` / ``tasks`` keep only those values (client-side OR). ``curve_key``
    (a metric) reads its full history for sample-efficiency curves. ``extra_fields`` adds columns
    (``{"lr": "params.lr"}``), e.g. hyperparameters; a run without one gets an empty cell.

    Example:
        >>> table = mlflow_table("bandits", algorithm="params.algorithm", task="params.task",
        ...                      seed="params.seed", score="metrics.final_return")   # doctest: +SKIP
        >>> evaluate(table, reps=2000, seed=0).headline("iqm")                        # doctest: +SKIP
    """
    return MlflowSource(tracking_uri).table(
        experiments,
        filter_string=filter_string,
        algorithm=algorithm,
        task=task,
        seed=seed,
        score=score,
        include_unfinished=include_unfinished,
        on_invalid=on_invalid,
        curve_key=curve_key,
        algorithms=algorithms,
        tasks=tasks,
        exclude_run_ids=exclude_run_ids,
        page_size=page_size,
        extra_fields=extra_fields,
    )


# --------------------------------------------------------------------------- sink
_REPORT_FILES = {"provenance.json", "report.html", "table.tex", "table.md", "figures"}


def _known_tables(report: Report) -> set[str]:
    return set(TABLES) | set(OPTIONAL_TABLES) | set(report.extra)


def report_hash(report: Report) -> str:
    """Content hash of a report's tables and warnings (what makes two publishes "the same")."""
    digest = hashlib.sha256()
    report.update_digest(digest)
    digest.update(json.dumps(list(report.warnings)).encode())
    return digest.hexdigest()[:32]


_METRIC_KEY_BAD = re.compile(r"[^A-Za-z0-9_\-. /]")


def _metric_key(*parts: str) -> str:
    """``iqm/PPO``; characters MLflow refuses in metric names become ``_``."""
    return "/".join(_METRIC_KEY_BAD.sub("_", str(p)) for p in parts)


def headline_metrics(report: Report) -> dict[str, float]:
    """``<metric>/<algorithm>`` and ``.../low``, ``.../high`` for every aggregate row (finite only)."""
    out: dict[str, float] = {}
    for row in report.aggregates.itertuples(index=False):
        for suffix, value in (("", row.point), ("low", row.low), ("high", row.high)):
            try:
                value = float(value)
            except (TypeError, ValueError):
                continue
            if math.isfinite(value):
                out[_metric_key(row.metric, row.algorithm, *([suffix] if suffix else []))] = value
    return out


def _source_info(report: Report) -> dict[str, Any]:
    prov = report.provenance or {}
    for candidate in (prov.get("source"), prov.get("table_source"), prov):
        if isinstance(candidate, Mapping) and candidate.get("tracker") == "mlflow":
            return dict(candidate)
    return dict(prov.get("source") or {}) if isinstance(prov.get("source"), Mapping) else {}


def _clip(text: str, limit: int = _MAX_TAG_VALUE) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _analysis_tags(report: Report, digest: str) -> dict[str, str]:
    src = _source_info(report)
    prov = report.provenance or {}
    tags = {
        ROLE_TAG: ANALYSIS_ROLE,
        "rl_reliable.version": _package_version(),
        "rl_reliable.n_runs": str(int(report.scores["run_id"].shape[0])) if not report.scores.empty else "0",
        "rl_reliable.algorithms": ", ".join(map(str, report.algorithms)),
    }
    if not report.scores.empty and "task" in report.scores:
        tags["rl_reliable.tasks"] = ", ".join(map(str, dict.fromkeys(report.scores["task"].astype(str))))
    if src:
        tags["rl_reliable.source.tracker"] = str(src.get("tracker", ""))
        tags["rl_reliable.source.filter"] = str(src.get("filter", "")) or "(none)"
        exps = src.get("experiments") or []
        tags["rl_reliable.source.experiments"] = ", ".join(
            f"{e.get('name')} ({e.get('id')})" if isinstance(e, Mapping) else str(e) for e in exps
        )
        if src.get("tracking_uri"):
            tags["rl_reliable.source.tracking_uri"] = str(src["tracking_uri"])
        fields = src.get("fields") or {}
        for name in ("algorithm", "task", "seed", "score"):
            if name in fields:
                tags[f"rl_reliable.source.{name}_key"] = str(fields[name])
    for key in ("reps", "seed", "method", "ci", "normalize"):
        if key in prov and prov[key] is not None:
            tags[f"rl_reliable.{key}"] = str(prov[key])
    return {k: _clip(v) for k, v in tags.items() if v != ""}


def _package_version() -> str:
    return str(__version__)


def _note(report: Report) -> str:
    """Markdown shown as the run's description in the MLflow UI: the headline table."""
    lines = ["**rl-reliable analysis** (95% stratified-bootstrap CIs unless stated in provenance).", ""]
    agg = report.aggregates
    if not agg.empty:
        metrics = list(dict.fromkeys(agg["metric"]))
        lines.append("| algorithm | " + " | ".join(escape_markdown(m) for m in metrics) + " |")
        lines.append("|---" * (len(metrics) + 1) + "|")
        for alg in dict.fromkeys(agg["algorithm"]):
            cells = []
            for metric in metrics:
                row = agg[(agg["algorithm"] == alg) & (agg["metric"] == metric)]
                cells.append(
                    f"{row['point'].iloc[0]:.3f} [{row['low'].iloc[0]:.3f}, {row['high'].iloc[0]:.3f}]"
                    if len(row)
                    else ""
                )
            lines.append(f"| {escape_markdown(alg)} | " + " | ".join(cells) + " |")
    lines += ["", f"Tables: artifacts `{ARTIFACT_DIR}/tables/*.json`; report: `{ARTIFACT_DIR}/report.html`."]
    if report.warnings:
        lines += ["", "Warnings:"] + [f"- {escape_markdown(w)}" for w in report.warnings[:20]]
    return _clip("\n".join(lines), 8000)


def _write_table_json(frame: Any, path: Path) -> None:
    """MLflow's table JSON (``{"columns": [...], "data": [[...]]}``), written by us so it overwrites.

    Floats are written exactly (``json`` round-trips them; pandas' ``to_json`` keeps 10 digits);
    NaN / missing become ``null``.
    """
    payload = {
        "columns": [str(c) for c in frame.columns],
        "data": [[_json_value(v) for v in row] for row in frame.itertuples(index=False, name=None)],
    }
    path.write_text(json.dumps(payload, allow_nan=False))


def _json_value(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar -> Python
    if value is None:
        return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bool, int, str)):
        return value
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def _write_report(
    tracker: _Tracker,
    run_id: str,
    report: Report,
    *,
    figures: bool = True,
    report_dir: str | os.PathLike | None = None,
) -> list[str]:
    """Upload files, table JSONs, metrics and the table registry tag; returns the table paths."""
    import shutil

    from mlflow.entities import Metric

    client = tracker.client
    with tempfile.TemporaryDirectory(prefix="rl-reliable-mlflow-") as tmp:
        files = Path(tmp) / "report"
        if report_dir is not None:  # already written by `--out DIR`: upload it, do not draw twice
            files.mkdir()
            for item in Path(report_dir).iterdir():  # only the report's own files, never a user's others
                if item.name in _REPORT_FILES or (item.suffix == ".csv" and item.stem in _known_tables(report)):
                    copy = shutil.copytree if item.is_dir() else shutil.copy2
                    copy(item, files / item.name)
        else:
            save_report(report, files, figures=figures)
        tables_dir = files / "tables"
        tables_dir.mkdir(exist_ok=True)
        table_paths = []
        named = [(n, getattr(report, n)) for n in TABLES] + sorted(report.extra.items())
        for name, frame in named:
            if frame is None or frame.empty:
                continue
            _write_table_json(frame, tables_dir / f"{name}.json")
            table_paths.append(f"{ARTIFACT_DIR}/tables/{name}.json")
        tracker.call("uploading report artifacts", client.log_artifacts, run_id, str(files), ARTIFACT_DIR)

    run = tracker.call("reading the analysis run", client.get_run, run_id)
    registered = json.loads(run.data.tags.get(LOGGED_ARTIFACTS_TAG, "[]") or "[]")
    wanted = [{"path": p, "type": "table"} for p in table_paths]
    merged = registered + [w for w in wanted if w not in registered]
    if merged != registered:
        tracker.call("registering tables", client.set_tag, run_id, LOGGED_ARTIFACTS_TAG, json.dumps(merged))

    metrics = headline_metrics(report)
    now = int(time.time() * 1000)
    batch = [Metric(key, value, now, 0) for key, value in metrics.items()]
    for start in range(0, len(batch), 1000):
        tracker.call("logging headline metrics", client.log_batch, run_id, metrics=batch[start : start + 1000])
    return table_paths


def _set_tags(tracker: _Tracker, run_id: str, tags: Mapping[str, str]) -> None:
    from mlflow.entities import RunTag

    items = [RunTag(k, v) for k, v in tags.items()]
    for start in range(0, len(items), 100):
        tracker.call("setting tags", tracker.client.log_batch, run_id, tags=items[start : start + 100])


def publish_mlflow(
    report: Report,
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    parent_run_id: str | None = None,
    run_name: str = ANALYSIS_RUN_NAME,
    figures: bool = True,
    report_dir: str | os.PathLike | None = None,
) -> str:
    """Publish ``report`` to MLflow; return the id of the run that holds it.

    With ``parent_run_id`` the report goes onto that existing run (its status is left as it
    is); otherwise onto a new FINISHED run ``run_name`` in ``experiment`` (name or id; default: the
    first experiment the scores came from). Idempotent: the tag ``rl_reliable.report_hash`` is set
    last, and a report whose hash is already there (on the parent run, or on an analysis run in
    the experiment) is not written again. Publishing never writes to the runs the scores came from.
    ``figures=False`` uploads tables and provenance only; ``report_dir`` uploads a folder already
    written by ``save_report(report, report_dir)`` instead of drawing the figures again.

    Example:
        >>> run_id = publish_mlflow(report, experiment="bandits")      # doctest: +SKIP
        >>> publish_mlflow(report, experiment="bandits") == run_id     # doctest: +SKIP
        True
    """
    tracker = _Tracker(tracking_uri, must_exist=False)
    client = tracker.client
    digest = report_hash(report)
    tags = _analysis_tags(report, digest)
    source_runs = _source_run_ids(report)

    if parent_run_id:
        from mlflow.exceptions import MlflowException

        if parent_run_id in source_runs:
            raise TrackerError(
                f"refusing to publish onto run {parent_run_id}: it is one of the runs the scores came from, and "
                "publishing never changes source runs. Use --publish new or the id of a parent run."
            )
        try:
            run = tracker.call("reading the parent run", client.get_run, parent_run_id)
        except MlflowException as err:
            raise TrackerError(
                f"parent run {parent_run_id!r} not found at {tracker.shown_uri}: {err.message}. "
                "Pass an existing run id to --publish / parent_run_id, or `new`."
            ) from err
        if run.data.tags.get(HASH_TAG) == digest:
            return parent_run_id
        tags.pop(ROLE_TAG)  # the parent is the user's run: do not mark it as an analysis run
        _write_report(tracker, parent_run_id, report, figures=figures, report_dir=report_dir)
        _set_tags(tracker, parent_run_id, tags)
        _set_tags(tracker, parent_run_id, {HASH_TAG: digest})
        return parent_run_id

    exp_id = _publish_experiment(tracker, report, experiment)
    existing = tracker.call(
        "looking for an earlier publish",
        client.search_runs,
        [exp_id],
        filter_string=f"tags.`{HASH_TAG}` = '{digest}' and tags.`{ROLE_TAG}` = '{ANALYSIS_ROLE}'",
        max_results=1,
    )
    if existing:
        return existing[0].info.run_id
    run = tracker.call(
        "creating the analysis run",
        client.create_run,
        exp_id,
        run_name=run_name,
        tags={ROLE_TAG: ANALYSIS_ROLE, "mlflow.note.content": _note(report)},
    )
    run_id = run.info.run_id
    try:
        _write_report(tracker, run_id, report, figures=figures, report_dir=report_dir)
        _set_tags(tracker, run_id, tags)
        _set_tags(tracker, run_id, {HASH_TAG: digest})
    except BaseException:
        with contextlib.suppress(Exception):
            client.set_terminated(run_id, "FAILED")
        raise
    tracker.call("finishing the analysis run", client.set_terminated, run_id, "FINISHED")
    return run_id


def _source_run_ids(report: Report) -> set[str]:
    scores = report.scores
    ids: set[str] = set()
    for col in ("tracker_run_id", "run_id"):
        if col in scores.columns:
            ids.update(str(v) for v in scores[col].dropna().unique())
    return ids


def _publish_experiment(tracker: _Tracker, report: Report, experiment: str | None) -> str:
    if experiment is None:
        exps = _source_info(report).get("experiments") or []
        if not exps:
            raise TrackerError(
                "publish_mlflow needs experiment=NAME_OR_ID (the report does not say which MLflow "
                "experiment its scores came from)."
            )
        first = exps[0]
        experiment = str(first.get("id") if isinstance(first, Mapping) else first)
    exp = tracker.call("looking up the experiment", tracker.client.get_experiment_by_name, str(experiment))
    if exp is None:
        from mlflow.exceptions import MlflowException

        try:
            exp = tracker.call("looking up the experiment", tracker.client.get_experiment, str(experiment))
        except MlflowException:
            exp = None
    if exp is None:
        return tracker.call("creating the experiment", tracker.client.create_experiment, str(experiment))
    if exp.lifecycle_stage != "active":
        raise TrackerError(f"experiment {exp.name!r} (id {exp.experiment_id}) is deleted; restore it or pick another.")
    return exp.experiment_id


# --------------------------------------------------------------------------- end of training
def write_final_score(score: Any, algorithm: Any, task: Any, seed: Any, run: Any = None) -> str:
    """Write the end-of-training convention on an MLflow run; return its id.

    Tags ``rl_reliable_algorithm``, ``rl_reliable_task``, ``rl_reliable_seed`` and the metric
    ``rl_reliable_final_score`` (one ``log_batch`` call), on ``run`` (an id, a Run or ActiveRun)
    or the active run. A non-finite score, a missing run, or tags that already name a different
    algorithm/task/seed raise before anything is written.

    Example:
        >>> with mlflow.start_run():                                              # doctest: +SKIP
        ...     write_final_score(812.5, algorithm="PPO", task="Hopper-v4", seed=3)
    """
    try:
        value = float(score)
    except (TypeError, ValueError):
        raise ValueError(f"log_final_score: score must be a number, got {score!r}; nothing was logged.") from None
    if isinstance(score, bool) or not math.isfinite(value):
        raise ValueError(
            f"log_final_score: refusing non-finite score {score!r} for {algorithm} / {task} seed {seed}; nothing "
            "was logged and the run is unchanged. Log a finite final score (e.g. the mean evaluation return)."
        )
    for name, v in (("algorithm", algorithm), ("task", task), ("seed", seed)):
        if v is None or str(v).strip() == "":
            raise ValueError(f"log_final_score: {name} is empty; nothing was logged.")
    mlflow = _import_mlflow()
    from mlflow.entities import Metric, RunTag

    run_id = _run_id_of(run, mlflow)
    tracker = _Tracker(None, must_exist=False)
    client = tracker.client
    current = tracker.call("reading the run", client.get_run, run_id).data.tags
    wanted = {
        DEFAULT_KEYS["algorithm"]: str(algorithm),
        DEFAULT_KEYS["task"]: str(task),
        DEFAULT_KEYS["seed"]: _seed_text(seed),
    }
    clash = {k: (current[k], v) for k, v in wanted.items() if k in current and current[k] != v}
    if clash:
        detail = ", ".join(f"{k} is {old!r}, new {new!r}" for k, (old, new) in clash.items())
        raise ValueError(
            f"log_final_score: run {run_id} already has {detail}; one run is one (algorithm, task, "
            "seed). Nothing was logged. Start a new run for a new configuration."
        )
    tracker.call(
        "logging the final score",
        client.log_batch,
        run_id,
        metrics=[Metric(DEFAULT_KEYS["score"], value, int(time.time() * 1000), 0)],
        tags=[RunTag(k, v) for k, v in wanted.items()],
    )
    return run_id


def _seed_text(seed: Any) -> str:
    if isinstance(seed, float) and seed.is_integer():
        return str(int(seed))
    if hasattr(seed, "item"):  # numpy scalar
        return _seed_text(seed.item())
    return str(seed)


def _run_id_of(run: Any, mlflow: Any) -> str:
    if run is None:
        active = mlflow.active_run()
        if active is None:
            raise ValueError(
                "log_final_score: no active MLflow run; call it inside `with mlflow.start_run():` or pass run=<run id>."
            )
        return active.info.run_id
    if isinstance(run, str):
        return run
    info = getattr(run, "info", None)
    if info is not None and getattr(info, "run_id", None):
        return str(info.run_id)
    raise ValueError(f"log_final_score: run must be an MLflow run id, Run or ActiveRun, got {type(run).__name__}.")
