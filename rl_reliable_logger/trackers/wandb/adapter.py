"""Weights & Biases adapter: online source, offline source, sink, sweep wait, end-of-training call.

``wandb`` is imported inside each function, so ``import rl_reliable_logger`` never pays for it.

- :func:`load_wandb_runs` lists runs of ``ENTITY/PROJECT`` (optionally one sweep and W&B filters)
  with ``lazy=False`` listing (config + summary arrive with the page: ``per_page`` runs per request)
  and, when asked, exact histories through ``scan_history`` (never the sampled history, which is
  down-sampled differently between calls).
- :func:`read_offline_runs` (re-exported from ``_wandb_offline``) reads ``wandb/offline-run-*``.
- :func:`publish_wandb` logs a Report as a run attached to the sweep (or a group) with an Artifact
  of type ``rl-reliable-report``; the same content is never published twice (see its docstring).
- :func:`wait_for_sweep` blocks (bounded) until a sweep is finished and no run is still going.
- :func:`write_final_score` is what :func:`rl_reliable_logger.log_final_score` calls for W&B runs.

The API key is taken only from the environment (``WANDB_API_KEY``) or wandb's own login
(``wandb login`` / netrc); it is never printed or passed around by this module.
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
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import TrackerError
from ...redaction import redact
from ...render.writer import save_report
from ..base.records import DEFAULT_KEYS, RunRecord
from .offline import OfflineProblem, OfflineRuns, read_offline_runs

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report

__all__ = [
    "ANALYSIS_JOB_TYPE",
    "ARTIFACT_TYPE",
    "DEFAULT_PER_PAGE",
    "OfflineProblem",
    "OfflineRuns",
    "load_wandb_runs",
    "publish_wandb",
    "read_offline_runs",
    "wait_for_sweep",
]

ANALYSIS_JOB_TYPE = "rl-reliable-analysis"
ARTIFACT_TYPE = "rl-reliable-report"
#: Runs per listing request: 1000 runs cost 5 requests. W&B's own default is 50.
DEFAULT_PER_PAGE = 200
#: Local record of offline publishes, kept in the ``wandb/`` folder next to the offline runs.
OFFLINE_INDEX = "rl-reliable-published.json"
#: Provenance keys that change on every evaluation without changing the results.
_VOLATILE_PROVENANCE = {
    "created_at",
    "created",
    "timestamp",
    "time",
    "elapsed",
    "elapsed_seconds",
    "duration",
    "duration_seconds",
    "hostname",
    "host",
    "wall_time",
}
_VOLATILE_SOURCE = {"skipped_analysis_runs"}
_UNFINISHED_STATES = ("running", "pending")
_INTERNAL_CONFIG = {"_wandb", "wandb_version"}


# ---------------------------------------------------------------------------- client plumbing
def _import_wandb() -> Any:
    try:
        import wandb
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise TrackerError(
            "the W&B adapter needs the `wandb` package (0.31 or newer): pip install 'rl_reliable_logger[wandb]'"
        ) from exc
    return wandb


def split_path(path: str) -> tuple[str | None, str]:
    """``ENTITY/PROJECT`` or ``PROJECT`` -> (entity or None, project)."""
    parts = [p for p in str(path).strip().split("/") if p]
    if len(parts) == 1:
        return None, parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise TrackerError(f"bad W&B path {path!r}: use ENTITY/PROJECT (e.g. my-team/hopper-sweep) or PROJECT")


def _configure_retries(retry_max: int | None, retry_wait_max: float | None, timeout: float | None) -> None:
    """Pass retry/timeout limits to wandb-core (where 0.31 retries 5xx/429) through wandb's settings."""
    if retry_max is None and retry_wait_max is None and timeout is None:
        return
    wandb = _import_wandb()
    kwargs: dict[str, Any] = {}
    if retry_max is not None:
        kwargs["x_graphql_retry_max"] = int(retry_max)
    if retry_wait_max is not None:
        kwargs["x_graphql_retry_wait_max_seconds"] = float(retry_wait_max)
    if timeout is not None:
        kwargs["x_graphql_timeout_seconds"] = float(timeout)
    wandb.setup(settings=wandb.Settings(**kwargs))


def _describe_error(exc: BaseException, what: str) -> TrackerError:
    """One clear message for every client failure; never includes the API key."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:600] or name
    base_url = os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")
    low = text.lower()
    if (
        name in ("AuthenticationError", "UsageError")
        or "api key" in low
        or "401" in low
        or "not logged in" in low
        or "credentials" in low
        or "permission" in low
        or "403" in low
    ):
        hint = (
            "W&B rejected the credentials or none are configured. Set WANDB_API_KEY in the environment "
            "or run `wandb login` (and WANDB_BASE_URL for a self-hosted server), then retry."
        )
    elif "429" in low or "rate limit" in low:
        hint = "W&B rate-limited the requests (HTTP 429) and retries ran out; wait a minute and retry, or use a larger --per-page."
    elif "did not respond in time" in low or "timeout" in low or "timed out" in low:
        hint = "the W&B server did not answer in time; check the network / WANDB_BASE_URL, or raise WANDB_HTTP_TIMEOUT."
    elif re.search(r"\b5\d\d\b", low) or "giving up" in low:
        hint = "the W&B server kept failing after wandb's retries; try again later (status page: https://status.wandb.com)."
    elif "could not find" in low or "not found" in low:
        hint = "check the ENTITY/PROJECT spelling (and that your key can see it)."
    else:
        hint = "see the message above."
    return TrackerError(f"W&B request failed while {what} at {base_url}: {name}: {redact(text)}. {hint}")


@contextlib.contextmanager
def _errors(what: str) -> Iterator[None]:
    try:
        yield
    except TrackerError:
        raise
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        if not _is_client_error(exc):
            raise  # a bug or bad input, not a tracker failure: keep the real traceback
        raise _describe_error(exc, what) from None


def _is_client_error(exc: BaseException) -> bool:
    """wandb's own errors (auth, comm, wandb-core API failures) and network OS errors."""
    module = type(exc).__module__ or ""
    if module.startswith("wandb"):
        return True
    if isinstance(exc, (OSError, TimeoutError, ConnectionError)):
        return True
    # wandb's Public API raises plain ValueError for a missing project ("Could not find project X")
    return isinstance(exc, ValueError) and "could not find" in str(exc).lower()


def _new_run_id() -> str:
    import secrets
    import string

    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(8))


def _api(*, timeout: float | None = None, retry_max: int | None = None, retry_wait_max: float | None = None) -> Any:
    """A ``wandb.Api`` using only the environment / wandb login for the key (never prompting)."""
    wandb = _import_wandb()
    _configure_retries(retry_max, retry_wait_max, None)
    with _errors("connecting"):
        return wandb.Api(timeout=int(timeout) if timeout is not None else None)


# ---------------------------------------------------------------------------- online source
def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping) and value and not prefix.endswith("_wandb"):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def _flat_config(config: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in config.items():
        if k in _INTERNAL_CONFIG:
            continue
        if isinstance(v, Mapping) and set(v) <= {"value", "desc"} and "value" in v:
            v = v["value"]  # server form {"k": {"value": v}}
        _flatten(str(k), v, out)
    return out


def _summary_dict(run: Any) -> dict[str, Any]:
    try:
        raw = run.summary._json_dict  # HTTPSummary's plain dict (no extra request)
    except AttributeError:
        raw = dict(run.summary)
    out: dict[str, Any] = {}
    for k, v in dict(raw).items():
        _flatten(str(k), v, out)
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


def _combine_filters(
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
    per_page: int = DEFAULT_PER_PAGE,
    history_keys: Iterable[str] | None = None,
    history_states: Iterable[str] | None = ("finished",),
    order: str = "+created_at",
    timeout: float | None = None,
    retry_max: int | None = None,
    retry_wait_max: float | None = None,
    api: Any = None,
) -> list[RunRecord]:
    """All runs of ``ENTITY/PROJECT`` (optionally one ``sweep`` and W&B ``filters``) as RunRecords.

    Every state is returned (``records_to_table`` keeps only finished runs by default and lists
    the others in provenance). Listing is non-lazy, so ``config`` and ``summary`` arrive with each
    page: N runs cost ``ceil(N / per_page) + 1`` requests. ``history_keys`` adds exact histories
    (one ``scan_history`` per run and key, only for runs in ``history_states``). Nested config
    keys are flattened with ``.``; W&B cannot filter on those server-side (wandb#3087).

    Example:
        >>> runs = load_wandb_runs("my-team/hopper", sweep="abc123",
        ...                        filters={"tags": {"$in": ["baseline"]}})   # doctest: +SKIP
    """
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    entity, project = split_path(path)
    if api is None:
        api = _api(timeout=timeout, retry_max=retry_max, retry_wait_max=retry_wait_max)
    with _errors(f"resolving the default entity for {project!r}"):
        entity = entity or api.default_entity
    where = f"listing runs of {entity}/{project}" + (f" (sweep {sweep})" if sweep else "")
    keys = list(history_keys or [])
    states = {s.lower() for s in history_states} if history_states is not None else None
    records: list[RunRecord] = []
    with _errors(where):
        runs = api.runs(
            f"{entity}/{project}",
            filters=_combine_filters(sweep, filters),
            order=order,
            per_page=int(per_page),
            lazy=False,
        )
        for run in runs:
            rec = _record_from_run(run, entity, project)
            if keys and (states is None or rec.state in states):
                rec.history = _exact_history(run, keys, page_size=1000)
            records.append(rec)
    return records


def sweep_status(path: str, sweep: str, *, api: Any = None) -> dict[str, Any]:
    """One poll: the sweep's state, expected/seen run counts and runs still running or pending."""
    entity, project = split_path(path)
    api = api or _api()
    with _errors(f"reading sweep {sweep}"):
        entity = entity or api.default_entity
        api.flush()  # Api caches runs and sweeps; every poll must see fresh state
        sw = api.sweep(f"{entity}/{project}/{sweep}")
        sw.load(force=True)  # flush() leaves the sweep cache alone
        active = api.runs(
            f"{entity}/{project}",
            filters=_combine_filters(sweep, None, _UNFINISHED_STATES),
            per_page=DEFAULT_PER_PAGE,
            lazy=False,
        )
        active_ids = [f"{r.id} ({r.state})" for r in active]
        total = api.runs(f"{entity}/{project}", filters={"sweep": sweep}, per_page=1, lazy=True)
        n_runs = len(total)
    return {
        "state": str(sw.state or "").upper(),
        "expected": getattr(sw, "expected_run_count", None),
        "runs": n_runs,
        "active": active_ids,
    }


def wait_for_sweep(
    path: str,
    sweep: str,
    *,
    timeout: float = 6 * 3600,
    poll: float = 30.0,
    progress: Callable[[str], None] | None = print,
    api: Any = None,
    _sleep: Callable[[float], None] = time.sleep,
    _clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Block until the sweep is FINISHED (or CANCELED) and none of its runs is running or pending.

    Raises ``TrackerError`` after ``timeout`` seconds, saying what is still going. ``progress``
    receives one line per poll. Returns the last status (see :func:`sweep_status`).

    Example:
        >>> wait_for_sweep("my-team/hopper", "abc123", timeout=3600, poll=60)  # doctest: +SKIP
    """
    api = api or _api()
    start = _clock()
    while True:
        status = sweep_status(path, sweep, api=api)
        done = status["state"] in ("FINISHED", "CANCELED") and not status["active"]
        expected = f"/{status['expected']}" if status["expected"] else ""
        line = (
            f"sweep {sweep}: {status['state'].lower()}, {status['runs']}{expected} runs, "
            f"{len(status['active'])} running or pending"
        )
        if progress:
            progress(line + (" - done" if done else ""))
        if done:
            return status
        elapsed = _clock() - start
        if elapsed + poll > timeout:
            still = ", ".join(status["active"][:10]) or "none, but the sweep is not finished"
            raise TrackerError(
                f"sweep {sweep} was not finished after {elapsed:.0f} s (state {status['state']}; still active: {still}). "
                "Re-run with a larger --wait-timeout, stop the sweep (`wandb sweep --stop`), or evaluate now without --wait."
            )
        _sleep(poll)


# ---------------------------------------------------------------------------- sink
def report_hash(report: Report) -> str:
    """Content hash of a Report: every table (as CSV) plus provenance without volatile keys.

    Two evaluations with the same inputs, options and seed give the same hash, so publishing
    them twice is recognised as one report.
    """
    h = hashlib.sha256()
    report.update_digest(h)
    prov = {k: v for k, v in report.provenance.items() if k not in _VOLATILE_PROVENANCE}
    if isinstance(prov.get("source"), Mapping):
        # earlier analysis runs are skipped by the source; publishing one must not change the hash
        prov["source"] = {k: v for k, v in prov["source"].items() if k not in _VOLATILE_SOURCE}
    h.update(json.dumps(prov, sort_keys=True, default=str).encode())
    h.update(json.dumps(list(report.warnings)).encode())
    return h.hexdigest()


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-.")[:100] or "report"


def artifact_name(*, project: str, sweep: str | None = None, group: str | None = None) -> str:
    """``rl-reliable-report-<sweep|group|project>``: one artifact collection per analysed set of runs."""
    return "rl-reliable-report-" + _safe_name(sweep or group or project)


def _root_dir(dir: str | os.PathLike | None) -> Path:
    """Where ``wandb.init(dir=...)`` puts its ``wandb/`` folder: ``dir``, else ``WANDB_DIR``, else cwd."""
    return Path(dir or os.environ.get("WANDB_DIR") or os.getcwd()).absolute()


def _index_path(dir: str | os.PathLike | None = None) -> Path:
    """``<root>/wandb/rl-reliable-published.json``: the offline publish record, next to the offline runs."""
    root = _root_dir(dir)
    sub = ".wandb" if (root / ".wandb").is_dir() else "wandb"  # wandb's own rule for its folder name
    return root / sub / OFFLINE_INDEX


def _read_index(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text())
        return list(data.get("published", []))
    except (OSError, ValueError, AttributeError):
        return []


def _write_index(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"published": entries}, indent=1) + "\n")
    tmp.replace(path)


def _previous_offline(index: Path, name: str, digest: str, entity: str | None, project: str) -> dict[str, Any] | None:
    for entry in _read_index(index):
        if (
            entry.get("artifact") == name
            and entry.get("report_hash") == digest
            and entry.get("project") == project
            and (entry.get("entity") or None) == (entity or None)
            and Path(entry.get("run_dir", "")).exists()
        ):
            return entry
    return None


def _previous_online(name: str, digest: str, entity: str | None, project: str) -> str | None:
    """``ENTITY/PROJECT/NAME:rh-<hash>`` if that alias exists on the server, else None."""
    api = _api()
    with _errors(f"checking for an earlier publish of {name}"):
        ent = entity or api.default_entity
        ref = f"{ent}/{project}/{name}:{_hash_alias(digest)}"
        return ref if api.artifact_exists(ref) else None


def _hash_alias(digest: str) -> str:
    return "rh-" + digest[:16]


def _save_report_files(
    report: Report, out: Path, *, figures: bool = True, files_dir: str | os.PathLike | None = None
) -> list[str]:
    """Tables + figures + HTML when the renderer is available, else tables only.

    ``files_dir``: a folder already written by ``save_report`` (``rl-reliable ... --out DIR``) is
    copied instead of drawing everything again.
    """
    import shutil

    if files_dir is not None and (Path(files_dir) / "aggregates.csv").exists():
        shutil.copytree(files_dir, out, dirs_exist_ok=True)
    else:
        save_report(report, out, figures=figures)
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


def _headline(report: Report) -> dict[str, float]:
    """Summary numbers: ``<metric>/<algorithm>`` point estimates and their ``_low``/``_high``."""
    out: dict[str, float] = {}
    for row in report.aggregates.itertuples(index=False):
        key = f"{row.metric}/{row.algorithm}"
        for suffix, value in (("", row.point), ("_low", row.low), ("_high", row.high)):
            try:
                v = float(value)
            except (TypeError, ValueError):
                continue
            if math.isfinite(v):
                out[key + suffix] = v
    return out


def _charts(wandb: Any, report: Report, tables: dict[str, Any]) -> dict[str, Any]:
    """W&B charts built from the report tables (W&B's built-in Vega presets)."""
    charts: dict[str, Any] = {}
    agg = report.aggregates
    for metric in list(dict.fromkeys(agg["metric"])):
        sub = agg[agg["metric"] == metric][["algorithm", "point", "low", "high"]].reset_index(drop=True)
        if sub.empty:
            continue
        t = wandb.Table(dataframe=sub)
        charts[f"charts/{metric}"] = wandb.plot.bar(
            t, "algorithm", "point", title=f"{metric} (point estimate; CI in table)"
        )
    prof = report.profiles
    if not prof.empty:
        for kind in list(dict.fromkeys(prof["kind"])):
            sub = prof[prof["kind"] == kind][["algorithm", "tau", "fraction"]].reset_index(drop=True)
            t = wandb.Table(dataframe=sub)
            charts[f"charts/profile_{kind}"] = wandb.plot_table(
                "wandb/line/v0",
                t,
                {"x": "tau", "y": "fraction", "stroke": "algorithm"},
                {"title": f"performance profile ({kind})"},
            )
    curves = report.curves
    if not curves.empty:
        for metric in list(dict.fromkeys(curves["metric"])):
            sub = curves[curves["metric"] == metric][["algorithm", "step", "point"]].reset_index(drop=True)
            t = wandb.Table(dataframe=sub)
            charts[f"charts/curve_{metric}"] = wandb.plot_table(
                "wandb/line/v0",
                t,
                {"x": "step", "y": "point", "stroke": "algorithm"},
                {"title": f"{metric} over steps"},
            )
    imp = report.improvement
    if not imp.empty:
        sub = imp.assign(pair=imp["algorithm_x"].astype(str) + " > " + imp["algorithm_y"].astype(str))[
            ["pair", "point", "low", "high"]
        ]
        charts["charts/probability_of_improvement"] = wandb.plot.bar(
            wandb.Table(dataframe=sub.reset_index(drop=True)), "pair", "point", title="P(X > Y)"
        )
    return charts


class PublishResult(str):
    """Where a report went (a ``str``); ``skipped`` is True when the same content was already there."""

    skipped: bool = False

    @classmethod
    def make(cls, location: str, skipped: bool) -> PublishResult:
        out = cls(location)
        out.skipped = skipped
        return out


def publish_wandb(
    report: Report,
    *,
    project: str,
    entity: str | None = None,
    sweep: str | None = None,
    group: str | None = None,
    mode: str | None = None,
    name: str | None = None,
    dir: str | os.PathLike | None = None,
    force: bool = False,
    figures: bool = True,
    files_dir: str | os.PathLike | None = None,
) -> str:
    """Publish ``report`` as a new W&B run of job type ``rl-reliable-analysis``; return where it went.

    The run is attached to ``sweep`` (it shows up among the sweep's runs) or, without a sweep, put
    in ``group`` (default ``rl-reliable``). It logs an Artifact of type ``rl-reliable-report``
    (every table as a ``wandb.Table`` plus the saved CSV/figures/HTML files), charts built from the
    tables, and the headline numbers (``<metric>/<algorithm>`` with ``_low``/``_high``) in the run
    summary. ``mode`` is ``"online"``, ``"offline"`` (sync later with ``wandb sync``) or None
    (wandb's default / ``WANDB_MODE``). Source runs are never touched.

    Publishing the same content twice creates nothing new: the report's content hash
    (:func:`report_hash`) is stored as artifact alias ``rh-<hash16>``. Online, an artifact with
    that alias is looked up first; offline, ``wandb/rl-reliable-published.json`` next to the
    offline runs records earlier publishes. On a match nothing is logged and the earlier location
    is returned. ``force=True`` skips the check. ``dir`` is wandb's run root (default
    ``WANDB_DIR`` or the working directory); for offline publishing pass the folder that holds
    the source runs' ``wandb/`` so the analysis run is synced with them. ``figures=False`` attaches
    tables only; ``files_dir`` reuses a folder already written by ``save_report``.

    Returns the run URL (online), the offline run directory (offline), or the earlier location
    (a :class:`PublishResult`, a ``str`` whose ``skipped`` says whether nothing new was logged).

    Example:
        >>> publish_wandb(report, project="hopper", entity="my-team", sweep="abc123")  # doctest: +SKIP
        'https://wandb.ai/my-team/hopper/runs/x1y2z3'
    """
    wandb = _import_wandb()
    if mode not in (None, "online", "offline"):
        raise ValueError(f"mode must be 'online', 'offline' or None, not {mode!r}")
    effective_mode = mode or os.environ.get("WANDB_MODE") or "online"
    if effective_mode in ("dryrun",):
        effective_mode = "offline"
    if effective_mode == "disabled":
        return PublishResult.make("nothing published: W&B is disabled (WANDB_MODE=disabled)", True)
    group = None if sweep else (group or "rl-reliable")
    art_name = artifact_name(project=project, sweep=sweep, group=group)
    digest = report_hash(report)
    alias = _hash_alias(digest)

    if not force:
        if effective_mode == "offline":
            previous = _previous_offline(_index_path(dir), art_name, digest, entity, project)
            if previous:
                return PublishResult.make(str(previous["run_dir"]), True)
        else:
            previous_ref = _previous_online(art_name, digest, entity, project)
            if previous_ref:
                return PublishResult.make(previous_ref, True)

    algorithms = ", ".join(report.algorithms) if len(report.aggregates) else ""
    settings_kwargs: dict[str, Any] = {"silent": True} if os.environ.get("WANDB_SILENT") else {}
    if sweep:
        settings_kwargs["sweep_id"] = sweep
    tags = ["rl-reliable"] + ([f"sweep:{sweep}"] if sweep else [])
    with (
        tempfile.TemporaryDirectory(prefix="rl-reliable-wandb-") as tmp,
        _errors(f"publishing the report to {entity + '/' if entity else ''}{project}"),
    ):
        files = _save_report_files(report, Path(tmp), figures=figures, files_dir=files_dir)
        run = wandb.init(
            project=project,
            entity=entity,
            group=group,
            job_type=ANALYSIS_JOB_TYPE,
            name=name or f"rl-reliable {sweep or group}",
            tags=tags,
            notes=f"rl_reliable_logger analysis of {algorithms}" if algorithms else None,
            config={
                "rl_reliable": {
                    k: v for k, v in report.provenance.items() if isinstance(v, (str, int, float, bool)) or v is None
                }
            },
            mode=effective_mode,
            id=_new_run_id(),  # never resume the caller's run (WANDB_RUN_ID under an agent)
            reinit="create_new",
            settings=wandb.Settings(**settings_kwargs),
            dir=str(_root_dir(dir)),
        )
        try:
            from ...analysis.report import TABLES

            art = wandb.Artifact(
                art_name,
                type=ARTIFACT_TYPE,
                metadata={
                    "report_hash": digest,
                    "sweep": sweep,
                    "group": group,
                    "files": files,
                    "algorithms": list(report.algorithms) if len(report.aggregates) else [],
                },
            )
            tables: dict[str, Any] = {}
            for tname in list(TABLES) + sorted(report.extra):
                frame = report.table(tname)
                if frame.empty and tname == "curves":
                    continue
                tables[tname] = wandb.Table(dataframe=frame.reset_index(drop=True))
                art.add(tables[tname], f"tables/{tname}")
            for rel in files:
                art.add_file(str(Path(tmp) / rel), name=f"files/{rel}")
            log: dict[str, Any] = {
                f"tables/{k}": v for k, v in tables.items() if k in ("aggregates", "per_task", "improvement")
            }
            log.update(_charts(wandb, report, tables))
            for rel in files:
                if rel.endswith(".png"):
                    log[f"figures/{Path(rel).stem}"] = wandb.Image(str(Path(tmp) / rel))
            run.log(log)
            run.summary.update({**_headline(report), "rl_reliable/report_hash": digest})
            run.log_artifact(art, aliases=["latest", alias] + ([f"sweep-{_safe_name(sweep)}"] if sweep else []))
            location = run.url if effective_mode != "offline" else str(Path(run.settings.sync_dir))
            run_id = run.id
        finally:
            run.finish()
    if effective_mode == "offline":
        index = Path(location).parent / OFFLINE_INDEX
        entries = _read_index(index)
        entries.append(
            {
                "artifact": art_name,
                "report_hash": digest,
                "project": project,
                "entity": entity,
                "sweep": sweep,
                "group": group,
                "run_id": run_id,
                "run_dir": location,
                "published_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
        _write_index(index, entries)
    return PublishResult.make(str(location), False)


# ---------------------------------------------------------------------------- end of training
def _is_wandb_run(obj: Any) -> bool:
    try:
        import wandb
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, wandb.sdk.wandb_run.Run)


def write_final_score(score: float, algorithm: str, task: str, seed: Any, run: Any = None) -> None:
    """Write the end-of-training convention onto a W&B run (the active one by default).

    Config ``rl_reliable_algorithm`` / ``rl_reliable_task`` / ``rl_reliable_seed``, tags
    ``algorithm:<A>`` and ``task:<T>``, and summary ``rl_reliable_final_score``. The score goes to
    the summary only, never to history: at finish a pending history row overwrites a summary key of
    the same name, so a key that is also logged could lose the final score.

    Example:
        >>> write_final_score(1234.5, "PPO", "Hopper-v4", 3)   # inside wandb.init(...)  # doctest: +SKIP
    """
    wandb = _import_wandb()
    run = run if run is not None else wandb.run
    if run is None:
        raise TrackerError(
            "no active W&B run: call log_final_score after `wandb.init(...)` and before `run.finish()`, "
            "or pass run=<the wandb Run> (needed for runs made with reinit='create_new')"
        )
    try:
        value = float(score)
    except (TypeError, ValueError):
        raise ValueError(f"final score must be a number, got {score!r} for {algorithm}/{task} seed {seed}") from None
    if not math.isfinite(value):
        raise ValueError(
            f"final score is {value} for {algorithm}/{task} seed {seed}; log a finite number "
            "(a diverged run should be recorded with its real final return, or not at all)"
        )
    for label, v in (("algorithm", algorithm), ("task", task)):
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"{label} must be a non-empty string, got {v!r}")
    if hasattr(seed, "item"):
        seed = seed.item()  # numpy scalar -> Python
    key = DEFAULT_KEYS["score"]
    run.config.update(
        {DEFAULT_KEYS["algorithm"]: algorithm, DEFAULT_KEYS["task"]: task, DEFAULT_KEYS["seed"]: seed},
        allow_val_change=True,
    )
    run.summary[key] = value
    wanted = [f"algorithm:{algorithm}", f"task:{task}"]
    current = list(run.tags or ())
    new_tags = current + [t for t in wanted if t not in current and len(t) <= 64]
    if new_tags != current:
        run.tags = tuple(new_tags)
