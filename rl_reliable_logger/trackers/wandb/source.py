"""W&B as a Source: runs of a project (online, optionally one sweep and filters) or offline runs.

Online listing is non-lazy (config and summary arrive with each page: ``per_page`` runs per
request) and histories are exact (``scan_history``, never the down-sampled history). Offline runs
are read from their transaction logs (:mod:`.offline`). Either way the runs go through the
selection every tracker shares (:mod:`rl_reliable_logger.trackers.base.selection`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...wording import kw, said
from ..base.clients import ClientKey, client_options, moved_client_options, positive_number, positive_whole, text
from ..base.heartbeat import DEFAULT_STALE_AFTER, mark_stale, stale_warning
from ..base.intake import SourceRuns, read_table
from ..base.reading import ReadOptions, kind_column, request_of
from ..base.records import RunRecord
from ..base.request import SourceRequest
from ..base.reruns import start_seconds
from ..base.retry import RetryPolicy
from ..base.scoring import expand_keys, history_name, parse_score_rule, score_refs
from .client import check_reachable, public_api, request_timeout, split_path, wandb_errors
from .names import DEFAULT_PER_PAGE, DEFAULT_REFS
from .offline import flatten, read_offline_runs

if TYPE_CHECKING:  # pragma: no cover
    from ...data.scores import ScoreTable

#: Job type of the runs the W&B sink writes (never analysed as a source).
ANALYSIS_JOB_TYPE = "rl-reliable-analysis"
_INTERNAL_CONFIG = {"_wandb", "wandb_version"}
#: The order runs are listed in (oldest first), unless ``client_kwargs["order"]`` says another.
DEFAULT_ORDER = "+created_at"
#: The W&B client options of ``client_kwargs=``.
CLIENT_KEYS = {
    "per_page": ClientKey("a whole number of runs per request, at least 1", positive_whole),
    "order": ClientKey("a W&B order (text such as '+created_at')", text),
    "timeout": ClientKey("a number of seconds above 0", positive_number),
    "api_key": ClientKey("a W&B API key (text)", text),
    "base_url": ClientKey("a W&B server URL (text)", text),
    "api": ClientKey("a wandb.Api", lambda value: hasattr(value, "runs")),
}


def _flat_config(config: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in config.items():
        if k in _INTERNAL_CONFIG:
            continue
        if isinstance(v, Mapping) and set(v) <= {"value", "desc"} and "value" in v:
            v = v["value"]  # server form {"k": {"value": v}}
        flatten(str(k), v, out, keep_whole=("_wandb",))
    return out


def _summary_dict(run: Any) -> dict[str, Any]:
    raw = getattr(run, "summary_metrics", None)  # the public API's plain dict (no extra request)
    if not isinstance(raw, dict):
        raw = dict(run.summary)
    out: dict[str, Any] = {}
    for k, v in dict(raw).items():
        flatten(str(k), v, out, keep_whole=("_wandb",))
    return out


def _record_from_run(run: Any, entity: str, project: str) -> RunRecord:
    summary = _summary_dict(run)
    attrs = {
        "id": run.id,
        "name": run.name,
        "display_name": run.name,
        "group": getattr(run, "group", None),
        "job_type": getattr(run, "job_type", None),
        "sweep": getattr(run, "sweep_name", None),
        "project": project,
        "entity": entity,
        "url": getattr(run, "url", None),
        "path": f"{entity}/{project}/{run.id}",
        "created_at": getattr(run, "created_at", None),
        "heartbeat_at": getattr(run, "heartbeat_at", None),
        "state": run.state,
    }
    return RunRecord(
        run_id=run.id,
        name=run.name,
        state=str(run.state or "").lower(),
        config=_flat_config(dict(run.config)),
        summary=summary,
        params={},
        metrics=dict(summary),
        tags=list(run.tags or []),
        attrs=attrs,
        source="wandb",
        history=None,
        started=start_seconds(attrs["created_at"]),
    )


def _exact_history(run: Any, keys: list[str], page_size: int) -> dict[str, list[tuple[float, float]]]:
    """Every logged (step, value) of ``keys`` via ``scan_history`` (exact, parquet-backed in 0.31)."""
    out: dict[str, list[tuple[float, float]]] = {k: [] for k in keys}
    for key in keys:
        # one key per scan: scan_history returns only rows that contain *all* requested keys
        for row in run.scan_history(keys=["_step", key], page_size=page_size):
            value, step = row.get(key), row.get("_step")
            if value is None or step is None or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            out[key].append((float(step), float(value)))
        out[key].sort()
    return {k: v for k, v in out.items() if v}


def combine_filters(
    sweep: str | None, filters: Mapping[str, Any] | None, states: Iterable[str] | None = None
) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    if sweep:
        parts.append({"sweep": sweep})
    if states:
        parts.append({"state": {"$in": list(states)}})
    if filters:
        parts.append(dict(filters))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}


def load_wandb_runs(
    path: str,
    *,
    sweep: str | None = None,
    filters: Mapping[str, Any] | None = None,
    history_keys: Iterable[str] | None = None,
    history_states: Iterable[str] | None = ("finished",),
    retry: RetryPolicy | None = None,
    client_kwargs: Mapping[str, Any] | None = None,
    **legacy: Any,
) -> list[RunRecord]:
    """All runs of ``ENTITY/PROJECT`` (optionally one ``sweep`` and W&B ``filters``) as RunRecords.

    Every state is returned (``records_to_table`` keeps only finished runs by default and lists
    the others in provenance). Listing is non-lazy, so ``config`` and ``summary`` arrive with each
    page: N runs cost ``ceil(N / per_page) + 1`` requests. ``history_keys`` adds exact histories
    (one ``scan_history`` per run and key, only for runs in ``history_states``). Nested config
    keys are flattened with ``.``; W&B cannot filter on those server-side (wandb#3087).

    ``client_kwargs`` holds the W&B client's options (:data:`CLIENT_KEYS`): ``per_page`` (runs per request),
    ``order`` (default ``+created_at``), ``timeout`` (each request's limit in seconds, the public
    ``wandb.Api(timeout=)``; default: wandb's; a request wandb-core is still retrying (5xx, 429) fails after it),
    ``api_key`` and ``base_url`` (default: the environment's), or ``api``, a ``wandb.Api`` to use. ``retry`` is
    our own retry loop around the whole listing (its time budget, waits and progress); wandb-core's internal
    retry count is not configurable through a public API, so there is no option for it. Under a ``retry``
    budget a request waits at most the budget's request timeout (a larger ``WANDB_HTTP_TIMEOUT`` is not waited
    for; an explicit ``timeout`` is), and a zero budget, or one that does not wait for a starting server, says
    at once that the server's port refuses connections.

    Example:
        >>> runs = load_wandb_runs("my-team/hopper", sweep="abc123",
        ...                        filters={"tags": {"$in": ["baseline"]}},
        ...                        client_kwargs={"timeout": 30})   # doctest: +SKIP
    """
    client = client_options(
        moved_client_options(client_kwargs, legacy, where="load_wandb_runs()"), CLIENT_KEYS, tracker="W&B"
    )
    if client.get("api") is None:  # a closed port is said at once, unless the budget is there to wait for it
        check_reachable(retry, client.get("base_url"))
        if retry is not None and client.get("timeout") is None:
            client = {**client, "timeout": request_timeout(retry)}
    if retry is not None and retry.total > 0:
        # the whole listing is retried (a failed page leaves no half-read state behind)
        return retry.call(
            lambda: _listing(path, sweep, filters, history_keys, history_states, client),
            f"listing runs of {path}",
            bounded=False,  # a long listing makes progress page by page; each request has wandb's own timeout
        )
    return _listing(path, sweep, filters, history_keys, history_states, client)


def _listing(
    path: str,
    sweep: str | None,
    filters: Mapping[str, Any] | None,
    history_keys: Iterable[str] | None,
    history_states: Iterable[str] | None,
    client: Mapping[str, Any],
) -> list[RunRecord]:
    """One listing of ``path`` with the checked client options (no retries: :func:`load_wandb_runs` retries it)."""
    api = client.get("api")
    if api is None:
        api = public_api(timeout=client.get("timeout"), api_key=client.get("api_key"), base_url=client.get("base_url"))
    per_page, order = client.get("per_page") or DEFAULT_PER_PAGE, client.get("order") or DEFAULT_ORDER
    entity, project = split_path(path)
    with wandb_errors(f"resolving the default entity for {project!r}"):
        entity = entity or api.default_entity
    where = f"listing runs of {entity}/{project}" + (f" (sweep {sweep})" if sweep else "")
    keys = list(history_keys or [])
    states = {s.lower() for s in history_states} if history_states is not None else None
    records: list[RunRecord] = []
    with wandb_errors(where):
        runs = api.runs(
            f"{entity}/{project}",
            filters=combine_filters(sweep, filters),
            order=order,
            per_page=int(per_page),
            lazy=False,
        )
        for run in runs:
            rec = _record_from_run(run, entity, project)
            if keys and (states is None or rec.state in states):
                # a {seed} key: one scan per matching key the run's summary lists
                rec.history = _exact_history(run, expand_keys(keys, rec.summary), page_size=1000)
            records.append(rec)
    return records


def is_analysis_run(record: RunRecord) -> bool:
    """True for a run the W&B sink wrote (job type ``rl-reliable-analysis``)."""
    return record.attrs.get("job_type") == ANALYSIS_JOB_TYPE


def _common(values: Iterable[Any]) -> Any:
    """The value every run shares (None when they differ or some run has none)."""
    distinct = {v or None for v in values}
    return distinct.pop() if len(distinct) == 1 else None


class WandbSource:
    """Runs of ``ENTITY/PROJECT`` (``path``; optionally one ``sweep`` and W&B ``filters``) or offline runs.

    Give either ``path`` (online) or ``offline_dir`` (a folder holding ``wandb/offline-run-*``).
    Online, a run that says "running" but sent no heartbeat for ``stale_after`` seconds (default 600;
    None: never) is treated as crashed (named in the table's warnings; see ``trackers/base/heartbeat``).

    Example:
        >>> WandbSource(path="my-team/hopper", sweep="abc123").table(**DEFAULT_REFS)   # doctest: +SKIP
    """

    tracker = "wandb"

    def __init__(
        self,
        *,
        path: str | None = None,
        offline_dir: str | os.PathLike | None = None,
        sweep: str | None = None,
        filters: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        stale_after: float | None = DEFAULT_STALE_AFTER,
        client_kwargs: Mapping[str, Any] | None = None,
        **legacy: Any,
    ):
        if bool(path) == bool(offline_dir):
            raise InputError(
                said(
                    "give either ",
                    kw("path="),
                    " (ENTITY/PROJECT, online) or ",
                    kw("offline_dir="),
                    " (offline runs), not both or neither",
                )
            )
        if offline_dir and filters:
            raise InputError(
                said(
                    kw("filters="),
                    " is a server-side W&B filter; with ",
                    kw("offline_dir="),
                    " select runs with ",
                    kw("sweep="),
                    " or the field references instead",
                )
            )
        client = moved_client_options(client_kwargs, legacy, where="WandbSource()")
        if isinstance((client or {}).get("per_page"), int) and (client or {})["per_page"] < 1:
            raise InputError(said(kw("per_page="), " must be at least 1"))  # the words of --per-page
        #: the W&B client options (:data:`CLIENT_KEYS`), checked
        self.client_kwargs = client_options(client, CLIENT_KEYS, tracker="W&B")
        self.path = path
        self.offline_dir = Path(offline_dir) if offline_dir else None
        self.sweep = sweep
        self.filters = dict(filters) if filters else None
        self.per_page = int(self.client_kwargs.get("per_page") or DEFAULT_PER_PAGE)
        self.retry = retry
        if stale_after is not None and float(stale_after) <= 0:
            raise InputError(
                said(kw("stale_after="), f" must be a positive number of seconds (or None), got {stale_after!r}")
            )
        self.stale_after = None if stale_after is None else float(stale_after)
        self.stale: list[str] = []
        self.problems: list[str] = []
        self._records: list[RunRecord] | None = None

    def records(self, *, history_keys: Sequence[str] = ()) -> list[RunRecord]:
        """Every run of the selection (all states); ``history_keys`` adds exact histories."""
        if self._records is None or history_keys:
            if self.offline_dir is not None:
                found = read_offline_runs(self.offline_dir, history_keys=list(history_keys) or None)
                self.problems = [str(p) for p in found.problems]
                records = list(found)
                if self.sweep:
                    records = [r for r in records if r.attrs.get("sweep") == self.sweep]
            else:
                records = load_wandb_runs(
                    str(self.path),
                    sweep=self.sweep,
                    filters=self.filters,
                    history_keys=list(history_keys) or None,
                    retry=self.retry,
                    client_kwargs={**self.client_kwargs, "per_page": self.per_page},
                )
                self.stale = mark_stale(records, self.stale_after)
            self._records = records
        return self._records

    def common(self, attr: str) -> Any:
        """The value of ``attrs[attr]`` every listed run shares (e.g. its sweep or project), else None."""
        return _common(r.attrs.get(attr) for r in self.records())

    def source_info(self) -> dict[str, Any]:
        if self.offline_dir is not None:
            return {
                "tracker": "wandb",
                "kind": "wandb-offline",
                "location": str(self.offline_dir.absolute()),
                "sweep": self.sweep,
                "offline_problems": list(self.problems),
            }
        return {
            "tracker": "wandb",
            "kind": "wandb",
            "location": self.path,
            "sweep": self.sweep,
            "filters": self.filters,
            "per_page": self.per_page,
        }

    def runs(self, request: SourceRequest, /) -> SourceRuns:
        """Every run of the selection (all states), with the histories the request's score rule and curves need."""
        req = request.with_defaults(DEFAULT_REFS)
        keys = [req.history_key] if req.history_key else []
        try:
            if parse_score_rule(req.score_rule).needs_history:
                keys += [history_name(ref) for ref in score_refs(req.score or ())]
        except ValueError as err:
            raise InputError(str(err)) from None
        records = self.records(history_keys=list(dict.fromkeys(keys)))
        notes = [stale_warning(self.stale, self.stale_after, "W&B")] if self.stale and self.stale_after else []
        info = self.source_info()
        if notes:
            info["stale_after"] = self.stale_after
        return SourceRuns(records, "W&B", info, request=req, is_analysis=is_analysis_run, notes=notes)

    def table(
        self, request: SourceRequest | None = None, /, *, read: ReadOptions | None = None, **keywords: Any
    ) -> ScoreTable:
        """The selected runs as a ScoreTable: a :class:`SourceRequest`, or its field keywords and ``read``, through
        the one intake (:func:`~rl_reliable_logger.trackers.base.intake.read_table`)."""
        request = request_of(
            request, read, keywords, where="WandbSource.table()", column=kind_column("config"), defaults=DEFAULT_REFS
        )
        return read_table(self, request)


def wandb_table(
    path: str | None = None,
    *,
    offline_dir: str | os.PathLike | None = None,
    sweep: str | None = None,
    filters: Mapping[str, Any] | None = None,
    read: ReadOptions | None = None,
    client_kwargs: Mapping[str, Any] | None = None,
    **fields: Any,
) -> ScoreTable:
    """A ScoreTable from W&B runs (online ``path`` or ``offline_dir``): ``fields`` are the field references of
    :meth:`WandbSource.table` (``algorithm``, ``task``, ``seed``, ``score``, ...), ``read`` (:class:`ReadOptions`)
    says how runs are read, ``client_kwargs`` holds the W&B client's options (:data:`CLIENT_KEYS`).

    Example:
        >>> table = wandb_table("my-team/hopper", sweep="abc123", read=ReadOptions(reruns="latest"))  # doctest: +SKIP
    """
    client = {"per_page": fields.pop("per_page")} if "per_page" in fields else {}
    client_kwargs = moved_client_options(client_kwargs, client, where="wandb_table()")
    source = WandbSource(path=path, offline_dir=offline_dir, sweep=sweep, filters=filters, client_kwargs=client_kwargs)
    request = request_of(None, read, fields, where="wandb_table()", column=kind_column("config"), defaults=DEFAULT_REFS)
    return read_table(source, request)
