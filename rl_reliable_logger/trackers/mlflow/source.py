"""MLflow as a Source: runs of one or more experiments as RunRecords and as a ScoreTable.

:class:`MlflowSource` pages through ``MlflowClient.search_runs`` over the experiments (names or
ids) with an optional MLflow filter string. MLflow filters have no ``OR`` (and no ``IN`` for
tags/params), so grouping over many tag values is done on the client, by the selection every
tracker shares (:mod:`rl_reliable_logger.trackers.base.selection`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import TrackerError
from ...redaction import redact
from ...wording import kw, said
from ..base.clients import ClientKey, client_options, moved_client_options, positive_whole, text
from ..base.intake import SourceRuns, read_table
from ..base.publishing import uri_identity
from ..base.reading import ReadOptions, kind_column, read_options, request_of
from ..base.records import RunRecord
from ..base.request import SourceRequest
from ..base.retry import RetryPolicy
from .client import PAGE_SIZE, Tracker, is_remote, run_page_url
from .names import DEFAULT_REFS

if TYPE_CHECKING:  # pragma: no cover
    from ...data.scores import ScoreTable

#: The tag that marks a run written by the MLflow sink (never analysed as a source).
ROLE_TAG = "rl_reliable.role"
ANALYSIS_ROLE = "analysis"
_HISTORY_WORKERS = 8
#: The reading options :func:`mlflow_table` took as separate keywords (now ``read=``; for one release).
OLD_KEYWORDS = ("include_unfinished", "on_invalid", "curve_key", "algorithms", "tasks", "extra_fields")
#: The MLflow client options of ``client_kwargs=``.
CLIENT_KEYS = {
    "tracking_uri": ClientKey("a tracking URI (text)", text),
    "page_size": ClientKey("a whole number of runs per request, at least 1", positive_whole),
}


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
        "url": run_page_url(uri, info.experiment_id, info.run_id),
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
        started=info.start_time / 1000 if isinstance(info.start_time, (int, float)) else None,
    )


def is_analysis_run(record: RunRecord) -> bool:
    """True for a run the MLflow sink wrote (tag ``rl_reliable.role = analysis``)."""
    tags = record.tags if isinstance(record.tags, Mapping) else {}
    return tags.get(ROLE_TAG) == ANALYSIS_ROLE


class MlflowSource:
    """Runs of MLflow experiments (names or ids), optionally narrowed by an MLflow filter string.

    Example:
        >>> src = MlflowSource(["bandits"], client_kwargs={"tracking_uri": "sqlite:///mlflow.db"},
        ...                    filter_string="tags.sweep = 'a'")             # doctest: +SKIP
        >>> table = src.table(**DEFAULT_REFS)                                 # doctest: +SKIP
    """

    tracker = "mlflow"

    def __init__(
        self,
        experiments: str | Sequence[str],
        *,
        filter_string: str = "",
        retry: RetryPolicy | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
        **legacy: Any,
    ):
        client = client_options(
            moved_client_options(client_kwargs, legacy, where="MlflowSource()"), CLIENT_KEYS, tracker="MLflow"
        )
        tracking_uri, page_size = client.get("tracking_uri"), client.get("page_size") or PAGE_SIZE
        self.experiments = [experiments] if isinstance(experiments, str) else [str(e) for e in experiments]
        if not self.experiments:
            raise TrackerError(
                said("no MLflow experiment given: pass ", kw("experiments="), " (a name or id; several allowed).")
            )
        self.filter_string = filter_string or ""
        self.page_size = page_size
        self.client = Tracker(tracking_uri, retry=retry)
        self.tracking_uri = self.client.uri
        #: the store, one spelling however the URI was written (absolute path, no credentials): what provenance and
        #: the series of analysis runs name (:func:`~..base.publishing.uri_identity`)
        self.store = redact(uri_identity(self.client.uri))
        self._cache: tuple[list[RunRecord], list[Any]] | None = None

    def _listing(self) -> tuple[list[RunRecord], list[Any]]:
        if self._cache is None:
            exps = self.client.experiments(self.experiments)
            names = {e.experiment_id: e.name for e in exps}
            runs = self.client.search([e.experiment_id for e in exps], self.filter_string, self.page_size)
            records = [_to_record(r, names, self.client.uri) for r in runs]
            records.sort(key=lambda r: (r.attrs.get("experiment_id", ""), r.attrs.get("start_time") or 0, r.run_id))
            self._cache = (records, exps)
        return self._cache

    def records(self, *, history_keys: Sequence[str] = ()) -> list[RunRecord]:
        """Every active run matching the filter; ``history_keys`` adds full metric histories."""
        records = self._listing()[0]
        if history_keys:
            self.fill_histories(records, history_keys)
        return records

    def fill_histories(self, records: Sequence[RunRecord], keys: Sequence[str]) -> None:
        """One ``get_metric_history`` call per run and key (in parallel for a remote server)."""
        jobs = [(r, k) for r in records for k in keys]
        if is_remote(self.client.uri) and len(jobs) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=_HISTORY_WORKERS) as pool:
                results = list(pool.map(lambda job: self.client.history(job[0].run_id, job[1]), jobs))
        else:
            results = [self.client.history(r.run_id, k) for r, k in jobs]
        for (record, key), points in zip(jobs, results):
            if record.history is None:
                record.history = {}
            record.history[key] = points

    def location(self) -> str:
        exps = self._listing()[1]
        return f"MLflow experiment(s) {', '.join(repr(e.name) for e in exps)} at {self.store}" + (
            f" with filter {self.filter_string!r}" if self.filter_string else ""
        )

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        """Every active run matching the filter (histories are read for the used runs only, by the intake)."""
        records, exps = self._listing()
        source = {
            "tracker": "mlflow",
            "tracking_uri": self.store,
            "experiments": [{"id": e.experiment_id, "name": e.name} for e in exps],
            "filter": self.filter_string,
            "location": self.location(),
        }
        return SourceRuns(
            records,
            "MLflow",
            source,
            request=request.with_defaults(DEFAULT_REFS),
            is_analysis=is_analysis_run,
            fill_history=lambda kept, key: self.fill_histories(kept, [key]),
        )

    def table(
        self, request: SourceRequest | None = None, /, *, read: ReadOptions | None = None, **keywords: Any
    ) -> ScoreTable:
        """The selected runs as a ScoreTable: a :class:`SourceRequest`, or its field keywords and ``read`` (see
        :func:`mlflow_table`), through the one intake (:func:`~rl_reliable_logger.trackers.base.intake.read_table`)."""
        request = request_of(
            request, read, keywords, where="MlflowSource.table()", column=kind_column("params"), defaults=DEFAULT_REFS
        )
        return read_table(self, request)


def load_mlflow_runs(
    experiments: str | Sequence[str],
    *,
    filter_string: str = "",
    history_keys: Sequence[str] = (),
    client_kwargs: Mapping[str, Any] | None = None,
    **legacy: Any,
) -> list[RunRecord]:
    """Every active run of the experiments (names or ids) matching ``filter_string``, as RunRecords.

    Paged ``search_runs`` (one request per ``client_kwargs["page_size"]`` runs, never one per run); metric
    histories only for ``history_keys`` (one ``get_metric_history`` call per run and key). ``client_kwargs``:
    ``tracking_uri`` (default: ``MLFLOW_TRACKING_URI``, else MLflow's default store) and ``page_size``.

    Example:
        >>> records = load_mlflow_runs("bandits", filter_string="tags.sweep = 'a'")   # doctest: +SKIP
        >>> records[0].tags["rl_reliable_algorithm"], records[0].metrics["rl_reliable_final_score"]  # doctest: +SKIP
        ('ucb1', 0.81)
    """
    client = moved_client_options(client_kwargs, legacy, where="load_mlflow_runs()")
    source = MlflowSource(experiments, filter_string=filter_string, client_kwargs=client)
    return source.records(history_keys=history_keys)


def mlflow_table(
    experiments: str | Sequence[str],
    *,
    algorithm: str = DEFAULT_REFS["algorithm"],
    task: str = DEFAULT_REFS["task"],
    seed: str = DEFAULT_REFS["seed"],
    score: str = DEFAULT_REFS["score"],
    filter_string: str = "",
    read: ReadOptions | None = None,
    client_kwargs: Mapping[str, Any] | None = None,
    **legacy: Any,
) -> ScoreTable:
    """A ScoreTable from MLflow runs, grouped by field references.

    Defaults follow the :func:`rl_reliable_logger.log_final_score` convention, so an experiment
    trained with it needs no field arguments. ``read`` (:class:`ReadOptions`) says how the runs are read:
    only FINISHED runs are used unless its ``include_unfinished``; the others are listed in
    ``table.source["excluded"]``. Runs that have none of the four fields (parent runs, unrelated runs) and
    earlier analysis runs are skipped and listed in ``table.source["skipped"]``; a run that has some fields
    but not all is an error naming it. Its ``algorithms`` / ``tasks`` keep only those values (client-side OR;
    a value no run has is an error listing the known ones); ``curves=True`` reads the full history of its
    ``curve_key`` (default: the score metric) for sample-efficiency curves; ``hyperparameter_keys`` adds
    columns (``["lr"]`` reads ``params.lr``; ``{"lr": "tags.lr"}`` names the reference), e.g. for the tuning
    view; a run without one gets an empty cell. ``client_kwargs`` holds the MLflow client's options:
    ``tracking_uri`` and ``page_size`` (runs per ``search_runs`` request).

    Example:
        >>> table = mlflow_table("bandits", algorithm="params.algorithm", task="params.task",
        ...                      seed="params.seed", score="metrics.final_return",
        ...                      client_kwargs={"tracking_uri": "sqlite:///mlflow.db"})   # doctest: +SKIP
        >>> evaluate(table, reps=2000, seed=0).headline("iqm")                        # doctest: +SKIP
    """
    client = {key: legacy.pop(key) for key in CLIENT_KEYS if key in legacy}
    client_kwargs = moved_client_options(client_kwargs, client, where="mlflow_table()")
    options = read_options(read, legacy, where="mlflow_table()", accepted=OLD_KEYWORDS, curve_key_is_curves=True)
    source = MlflowSource(experiments, filter_string=filter_string, client_kwargs=client_kwargs)
    return read_table(
        source, options.request(score=score, column=kind_column("params"), algorithm=algorithm, task=task, seed=seed)
    )
