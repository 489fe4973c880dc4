"""W&B as a Sink: publish a Report as a new analysis run with an ``rl-reliable-report`` artifact.

The run (job type ``rl-reliable-analysis``) is attached to the sweep, or put in a group. It logs the
verified results bundle (only its manifest files) and every table as a ``wandb.Table`` in one
artifact, charts built from the tables, and the shared headline keys
(:func:`~rl_reliable_logger.trackers.base.publishing.headline_metrics`) in the run summary.

Contract (shared by every sink, see ``trackers/base/protocols.py``): the same content is never
published twice (alias ``rh-<hash16>`` online; ``wandb/rl-reliable-published.json`` offline); a
changed report is a new version of the same artifact (``latest`` moves to it); the artifact is
logged last, and a publish that fails finishes its run with exit code 1 and no artifact; a new run
is always created, so no source run is ever written to.

``WANDB_MODE=disabled`` publishes nothing (the result says so; the local results bundle is the
caller's and is still written). Offline, every artifact file is kept inside the offline run folder
(``<run>/rl-reliable-artifact/``, not wandb's staging folder under ``WANDB_DATA_DIR``) and named
relative to the folder that holds ``wandb/``: copying ``wandb/`` to another machine and running
``wandb sync wandb/offline-run-*`` from the folder that holds it there uploads the whole report.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...analysis.options import published_options
from ...analysis.report import TABLES
from ...errors import InputError, TrackerError
from ...notes import note
from ...store.manifest import Bundle
from ...wording import Message, kw, message_of, said
from ..base.clients import ClientKey, client_options, moved_client_options
from ..base.deprecation import callers_level, moved_keywords, spelled
from ..base.pending import PendingPublishError, kept_message
from ..base.protocols import PublishResult
from ..base.publishing import (
    PublishOptions,
    bundle_files,
    check_not_source,
    headline_metrics,
    publisher_claim,
    publisher_gone,
    recovered_line,
    report_hash,
    run_name,
    source_run_ids,
)
from ..base.retry import DEFAULT_RETRY_FOR, REQUEST_TIMEOUT, TRANSIENT, Deadline, RetryPolicy, classify
from .charts import create_presets, interval_charts
from .client import describe_error, import_wandb, is_client_error, new_run_id, public_api, split_path, wandb_errors
from .names import LABEL
from .source import ANALYSIS_JOB_TYPE, WandbSource

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report

ARTIFACT_TYPE = "rl-reliable-report"
#: Local record of offline publishes, kept in the ``wandb/`` folder next to the offline runs.
OFFLINE_INDEX = "rl-reliable-published.json"
HASH_KEY = "rl_reliable/report_hash"
#: Summary keys of an online analysis run: ``writing`` until its artifact is committed, then ``complete``
#: (``failed`` when a later publish found it interrupted); whether it is the current analysis of its
#: source, and which run replaced it.
STATE_KEY = "rl_reliable/publish_state"
CURRENT_KEY = "rl_reliable/is_current"
SUPERSEDED_BY_KEY = "rl_reliable/superseded_by"
FAILURE_KEY = "rl_reliable/failure"
#: Folder inside an offline run that holds the artifact's files (instead of wandb's staging folder).
ARTIFACT_FOLDER = "rl-reliable-artifact"
#: What a publish under ``WANDB_MODE=disabled`` says.
#: How long an offline publisher's claim lasts when it runs on another host (see ``publisher_gone``).
LEASE_SECONDS = 600.0
#: Said once per offline publish: W&B creates chart presets on a server, which an offline run has not.
OFFLINE_PRESETS_NOTE = (
    "W&B chart presets cannot be created offline: the interval charts use the built-in line presets "
    "(low, point, high as lines); publish once online, or call create_presets, for error bars and bands"
)
#: Why an interrupted offline publish was marked failed.
INTERRUPTED = (
    "interrupted: the publish writing this run stopped before it finished (its process ended); "
    "a later publish of the same source marked it failed"
)
#: Seconds of an online publish's time budget kept for ``run.finish()`` (wandb's public ``finish_timeout``):
#: ``wandb.init`` and the artifact upload get what is left of the budget minus this.
FINISH_RESERVE = REQUEST_TIMEOUT / 2
DISABLED = "W&B is disabled (WANDB_MODE=disabled), so nothing was written to W&B; unset it or use WANDB_MODE=offline to keep a W&B copy"


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-.")[:100] or "report"


def artifact_name(*, project: str, sweep: str | None = None, group: str | None = None) -> str:
    """``rl-reliable-report-<sweep|group|project>``: one artifact collection per analysed set of runs."""
    return "rl-reliable-report-" + _safe_name(sweep or group or project)


def valid_summary_key(key: str) -> bool:
    """W&B's rule for summary keys: not empty, not starting with ``_`` (reserved), no control characters."""
    return bool(key) and not key.startswith("_") and key.isprintable() and len(key) <= 256


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


def _update_index(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Rewrite the offline publish record with ``change(entries)`` through the one writer (under its lock, to a
    temporary file, renamed), then read back."""
    from ...store.files import write_file

    entries: list[dict[str, Any]] = []

    def update(_old: bytes | None) -> bytes:  # under the record's lock: no concurrent publish is lost
        entries[:] = change(_read_index(path))
        return (json.dumps({"published": entries}, indent=1) + "\n").encode()

    write_file(path, update, kind="publish-record")
    if _read_index(path) != entries:
        raise TrackerError(
            f"{path}: another publish rewrote the offline publish record at the same time; run the publish again"
        )


def _same_series(entry: dict[str, Any], name: str, entity: str | None, project: str) -> bool:
    return (
        entry.get("artifact") == name
        and entry.get("project") == project
        and (entry.get("entity") or None) == (entity or None)
    )


def _end_offline_orphans(index: Path, name: str, entity: str | None, project: str) -> None:
    """Mark failed every offline publish of this artifact left ``writing`` by a process that is gone.

    A publish killed with its process leaves its entry ``writing`` (and its offline run holding at most
    part of the report, with no artifact); the next publish of the same source marks it ``failed`` with
    the reason here (one console line says so), and :func:`_make_offline_current` records which run
    replaced it.
    """
    ended: list[str] = []

    def change(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for entry in entries:
            if not _same_series(entry, name, entity, project) or entry.get("state") != "writing":
                continue
            if publisher_gone(entry.get("publisher"), float(entry.get("started") or 0), LEASE_SECONDS):
                entry.update(state="failed", current=False, failure=INTERRUPTED)
                ended.append(str(entry.get("run_id", "?")))
        return entries

    _update_index(index, change)
    if ended:
        note(recovered_line(LABEL + " offline", ended))


def _make_offline_current(index: Path, name: str, entity: str | None, project: str, run_id: str) -> None:
    """Mark ``run_id`` the one current publish of this artifact; the ones it replaces record its id."""

    def change(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for entry in entries:
            if not _same_series(entry, name, entity, project):
                continue
            if entry.get("run_id") == run_id:
                entry["current"] = True
                entry.pop("superseded_by", None)
            elif entry.get("current", True) or "superseded_by" not in entry:
                entry.update(current=False, superseded_by=run_id)
        return entries

    _update_index(index, change)


def _set_entry(index: Path, run_id: str, **fields: Any) -> None:
    """Update the fields of this publish's entry (added if missing)."""

    def change(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for entry in entries:
            if entry.get("run_id") == run_id:
                entry.update(fields)
                return entries
        return entries + [{"run_id": run_id, **fields}]

    _update_index(index, change)


def _previous_offline(index: Path, name: str, digest: str, entity: str | None, project: str) -> dict[str, Any] | None:
    for entry in _read_index(index):
        if (
            _same_series(entry, name, entity, project)
            and entry.get("report_hash") == digest
            and entry.get("state", "complete") == "complete"
            and Path(entry.get("run_dir") or "").exists()
        ):
            return entry
    return None


def _previous_online(
    name: str, digest: str, entity: str | None, project: str, api: Any = None
) -> tuple[str, str | None] | None:
    """(target, url) of an earlier publish when ``NAME:rh-<hash>`` exists on the server, else None.

    The target is the URL of the run that logged it, as the first publish returned; the artifact
    reference ``ENTITY/PROJECT/NAME:rh-<hash>`` when the server does not say which run that was.
    """
    api = api or public_api()
    with wandb_errors(f"checking for an earlier publish of {name}"):
        ent = entity or api.default_entity
        ref = f"{ent}/{project}/{name}:{_hash_alias(digest)}"
        if not api.artifact_exists(ref):
            return None
    try:
        run = api.artifact(ref).logged_by()
    except Exception as err:  # the publish is known; only which run made it is not
        if not is_client_error(err):
            raise
        run = None
    return (str(run.url), str(run.url)) if run is not None else (ref, None)


def _update_public_run(run: Any, fields: dict[str, Any], what: str) -> bool:
    """Set summary ``fields`` on another analysis run through the Public API (never a source run).

    Best effort: the publish itself does not depend on it, so a failure is a note, not an error.
    Returns whether the run was updated.
    """
    try:
        with wandb_errors(f"{what} ({run.id})"):
            for key, value in fields.items():
                run.summary[key] = value
            run.update()
    except TrackerError as err:
        note(message_of(err))
        return False
    return True


def _without_stop(message: Message) -> Message:
    """``message`` without the full stop at its end (a sentence that goes on after it)."""
    message = message.rstrip()
    if message.parts and isinstance(message.parts[-1], str):
        return Message((*message.parts[:-1], message.parts[-1].rstrip(".")))
    return message


def _hash_alias(digest: str) -> str:
    return "rh-" + digest[:16]


def _charts(wandb: Any, report: Report, presets: dict[str, str | None]) -> dict[str, Any]:
    """The run's charts (see :mod:`.charts`); one seam, so a failing chart can be tested."""
    return interval_charts(wandb, report, presets)


def with_run_links(scores: Any, report: Report, analysis_url: str | None) -> Any:
    """The scores with a ``run_link`` column: each source run's page (its own URL, else one built from
    the analysis run's host and the source's ``entity/project`` when the scores came from W&B)."""
    if scores.empty or "tracker_run_id" not in scores:
        return scores
    src = (report.provenance or {}).get("source")
    from_wandb = isinstance(src, dict) and str(src.get("tracker", src.get("kind", ""))).startswith("wandb")
    links = scores["url"].astype("string") if "url" in scores else None
    location = str(src.get("location") or "") if isinstance(src, dict) else ""
    if analysis_url and from_wandb and "/runs/" in analysis_url and location.count("/") == 1:
        host = analysis_url.rsplit("/runs/", 1)[0].rsplit("/", 2)[0]  # https://wandb.ai/<entity>/<project> -> host
        built = f"{host}/{location}/runs/" + scores["tracker_run_id"].astype(str)
        links = built if links is None else links.fillna(built)
    if links is None:
        return scores
    return scores.assign(run_link=links)


def keep_in_run_folder(art: Any, run_dir: Path, root: Path) -> None:
    """Move an offline artifact's files into ``<run_dir>/rl-reliable-artifact/`` and name them from ``root``.

    wandb copies added files to its staging folder (``$WANDB_DATA_DIR/artifacts/staging``, outside the
    run) and records absolute paths, so a copied ``wandb/`` folder synced elsewhere loses the artifact
    (``wandb sync`` reports success; only wandb-core's log says the files are missing). Here each file
    is copied next to the run, the staged copy is removed, and the manifest names the copy relative
    to ``root`` (the folder holding ``wandb/``), where ``wandb sync wandb/offline-run-*`` is run.
    """
    folder = (run_dir / ARTIFACT_FOLDER).resolve()
    for name, entry in art.manifest.entries.items():
        if not entry.local_path:
            continue  # a reference: nothing local
        source = Path(entry.local_path)
        target = (folder / str(name)).resolve()
        if folder not in target.parents:
            raise TrackerError(f"artifact entry {name!r} would leave the run folder; nothing was published")
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.resolve() != target:
            shutil.copyfile(source, target)
            if _is_staged(source):
                source.chmod(0o600)
                source.unlink()
        entry.local_path = os.path.relpath(target, root.resolve())


def _disabled() -> bool:
    """W&B switched off by the environment; it wins over an offline sink (the user turned W&B off)."""
    return os.environ.get("WANDB_MODE") == "disabled" or os.environ.get("WANDB_DISABLED", "").lower() in ("true", "1")


def _is_staged(path: Path) -> bool:
    """A copy in wandb's staging folder (safe to remove once copied into the run folder)."""
    from wandb.sdk.artifacts.staging import get_staging_dir

    return Path(get_staging_dir()).resolve() in path.resolve().parents


class _Unconfirmed(Exception):
    """The artifact was logged but W&B did not confirm its upload within the time budget."""

    def __init__(self, logged: dict[str, Any], error: TrackerError):
        super().__init__(str(error))
        self.logged, self.error = logged, error


def _late(deadline: Deadline | None, what: str) -> TrackerError:
    """The time-budget message for a wandb call that hit its (deadline-derived) timeout."""
    if deadline is None:
        return TrackerError(f"{what} did not finish in time")
    return deadline.out_of_time(what, exc=TimeoutError(f"W&B did not answer in time while {what}"))


def _never(err: BaseException) -> bool:
    """Best-effort steps are never retried."""
    return False


@contextlib.contextmanager
def _in_budget(deadline: Deadline | None, what: str) -> Iterator[None]:
    """A transient failure of a wandb call that has its own (deadline-derived) timeout ends the budget: say so."""
    try:
        yield
    except TrackerError as err:
        if deadline is None or classify(err) not in TRANSIENT:
            raise
        raise deadline.out_of_time(what, exc=err) from None


def _waiting(deadline: Deadline | None, what: str) -> contextlib.AbstractContextManager[None]:
    """Progress lines while a wandb call blocks under ``deadline`` (nothing without one)."""
    return deadline.waiting(what) if deadline is not None else contextlib.nullcontext()


@dataclass(frozen=True)
class _Job:
    """One publish of a report, what every step of it needs: the wandb module, the report, its verified bundle,
    content hash and summary metrics, the artifact name, where it goes, the mode and (online) the time budget."""

    wandb: Any
    report: Report
    verified: Bundle
    digest: str
    summary: dict[str, float]
    art_name: str
    where: str
    mode: str
    deadline: Deadline | None = None


#: The options of ``wandb.init`` a :class:`WandbSink` takes in ``client_kwargs=``.
SINK_CLIENT_KEYS = {
    "mode": ClientKey("'online', 'offline', 'disabled' or None", lambda value: isinstance(value, str)),
    "dir": ClientKey("a folder (text or a path)", lambda value: isinstance(value, (str, os.PathLike))),
}


class WandbSink:
    """Publish reports to W&B as a new ``rl-reliable-analysis`` run in ``project`` (attached to ``sweep`` or in ``group``).

    ``client_kwargs`` holds the options of ``wandb.init`` (:data:`SINK_CLIENT_KEYS`): ``mode`` is ``"online"``,
    ``"offline"`` (sync later with ``wandb sync``) or None (wandb's default / ``WANDB_MODE``); ``dir`` is wandb's
    run root (default ``WANDB_DIR`` or the working directory); for offline publishing pass the folder that holds
    the source runs' ``wandb/``. ``publishing`` (:class:`PublishOptions`): ``force=True`` publishes even when the
    same content was published before, ``figures=False`` leaves the figures out, ``retry`` is the time budget.

    Example:
        >>> WandbSink(project="hopper", entity="my-team", sweep="abc123").publish(report)  # doctest: +SKIP
    """

    tracker = "wandb"

    def __init__(
        self,
        *,
        project: str,
        entity: str | None = None,
        sweep: str | None = None,
        group: str | None = None,
        name: str | None = None,
        wandb_report: bool = False,
        publishing: PublishOptions | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
        **legacy: Any,
    ):
        client = {key: legacy.pop(key) for key in SINK_CLIENT_KEYS if key in legacy}
        client = client_options(
            moved_client_options(client_kwargs, client, where="WandbSink()"), SINK_CLIENT_KEYS, tracker="W&B"
        )
        unknown = [key for key in legacy if key not in ("force", "figures", "retry")]
        if unknown:
            raise TypeError(f"WandbSink() got an unexpected keyword argument {unknown[0]!r}")
        moved = moved_keywords(publishing, legacy, where="WandbSink()", keyword="publishing", bundle="PublishOptions")
        publishing = PublishOptions(**moved) if moved is not None else publishing or PublishOptions()
        mode = client.get("mode")
        if mode not in (None, "online", "offline", "disabled"):
            raise InputError(said(kw("mode="), f" must be 'online', 'offline', 'disabled' or None, not {mode!r}"))
        self.project, self.entity, self.sweep = project, entity, sweep
        self.group = None if sweep else (group or "rl-reliable")
        self.mode, self.name, self.dir = mode, name, client.get("dir")
        self.force, self.figures = publishing.force, publishing.figures
        self.wandb_report = wandb_report
        # one wall-clock budget for a whole online publish (every request, init, upload and finish)
        self.retry = publishing.retry if publishing.retry is not None else RetryPolicy(total=DEFAULT_RETRY_FOR)

    def publish(self, report: Report, *, bundle: str | os.PathLike | None = None) -> PublishResult:
        wandb = import_wandb()
        digest = report_hash(report)
        mode = "disabled" if _disabled() else self.mode or os.environ.get("WANDB_MODE") or "online"
        if mode == "dryrun":
            mode = "offline"
        if mode == "disabled":
            return PublishResult("wandb", "", None, False, digest, skipped=DISABLED, label=LABEL)
        summary = headline_metrics(report, valid=valid_summary_key)  # every key checked before any write
        if self.wandb_report:
            from .report_page import import_reports

            import_reports()  # a missing extra is an error before anything is written
        run_id = new_run_id()  # a new run: never the caller's (WANDB_RUN_ID under an agent), never a source
        check_not_source(run_id, source_run_ids(report), keyword="project=")
        art_name = artifact_name(project=self.project, sweep=self.sweep, group=self.group)
        where = f"{self.entity + '/' if self.entity else ''}{self.project}"

        with bundle_files(report, bundle, figures=self.figures) as verified:  # verified before anything is written
            job = _Job(wandb, report, verified, digest, summary, art_name, where, mode)
            if mode != "online":
                return self._publish(job, run_id)
            deadline = Deadline(self.retry)
            try:
                return self._publish(replace(job, deadline=deadline), run_id)
            except PendingPublishError:
                raise
            except TrackerError as err:
                if classify(err) not in TRANSIENT:
                    raise
                # W&B did not answer within the budget and no run was made: keep the report as an offline run
                kept = self._publish(replace(job, mode="offline"), new_run_id())
                path = Path(kept.target)
                raise PendingPublishError(
                    kept_message("W&B", str(err), "report", path, f"wandb sync {path}"), path
                ) from err

    def _publish(self, job: _Job, run_id: str) -> PublishResult:
        wandb, report, digest, art_name, where, mode, deadline = (
            job.wandb,
            job.report,
            job.digest,
            job.art_name,
            job.where,
            job.mode,
            job.deadline,
        )
        index = _index_path(self.dir)
        if mode == "offline":
            _end_offline_orphans(index, art_name, self.entity, self.project)
        earlier = None if self.force else self._earlier(index, art_name, digest, mode, deadline)
        if earlier is not None:
            return earlier
        replaced = None
        if deadline is not None:
            self._end_online_orphans(run_id, deadline)
            replaced = self._current_online(art_name, deadline)

        entry = {
            "artifact": art_name,
            "report_hash": digest,
            "project": self.project,
            "entity": self.entity,
            "sweep": self.sweep,
            "group": self.group,
        }
        if mode == "offline":  # recorded before the run exists: a publish killed from here on is found later
            claim = publisher_claim(LEASE_SECONDS)
            _set_entry(index, run_id, **entry, state="writing", publisher=claim, started=time.time())
        settings = self._settings(where, deadline)
        look = report.provenance.get("look_design")  # a published watch or race look: its frozen design
        starting = f"starting the analysis run in {where}"
        with (
            _in_budget(deadline, starting),
            wandb_errors(f"publishing the report to {where}"),
            _waiting(deadline, starting),
        ):
            run = wandb.init(
                project=self.project,
                entity=self.entity,
                group=self.group,
                job_type=ANALYSIS_JOB_TYPE,
                name=self.name or run_name(report, digest),
                tags=["rl-reliable"] + ([f"sweep:{self.sweep}"] if self.sweep else []),
                notes=f"rl_reliable_logger analysis of {report.counts().text()}: "
                f"{', '.join(map(str, report.algorithms))}",
                config={
                    "rl_reliable": {
                        **{
                            k: v
                            for k, v in report.provenance.items()
                            if isinstance(v, (str, int, float, bool)) or v is None
                        },
                        "n_runs": report.counts().runs,  # as the other trackers' rl_reliable.n_runs
                        # every option that shapes the results, as the other trackers' rl_reliable.<option>
                        "options": published_options(report.provenance.get("options") or {}),
                        # a watch's or race's look: its design, as the other trackers' rl_reliable.design.*
                        **({"design": dict(look)} if look else {}),
                    }
                },
                mode=mode,
                id=run_id,
                reinit="create_new",
                settings=wandb.Settings(**settings),
                dir=str(_root_dir(self.dir)),
            )
        try:
            logged, unconfirmed = self._write(job, run)
            location = run.url if mode != "offline" else str(Path(run.settings.sync_dir))
            entity, run_title = str(run.entity), str(run.name)
        except BaseException as err:
            with contextlib.suppress(Exception):  # past finish_timeout wandb keeps the data for `wandb sync`
                run.finish(exit_code=1)  # a failed publish never looks complete: no artifact, exit code 1
            if mode == "offline":
                why = f"{type(err).__name__}: {err}"[:500]
                _set_entry(index, run_id, state="failed", current=False, failure=why)
            raise
        _finish(run, run_id, unconfirmed, deadline)
        if self.wandb_report and not (deadline is not None and deadline.spent()):
            self._report_page(report, logged, mode, entity, run_title, location)
        if mode == "offline":
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            _set_entry(index, run_id, state="complete", run_dir=location, published_at=when)
            _make_offline_current(index, art_name, self.entity, self.project, run_id)
            return PublishResult("wandb", location, None, True, digest, label=LABEL)
        if replaced is not None and replaced.id != run_id:
            _update_public_run(replaced, {CURRENT_KEY: False, SUPERSEDED_BY_KEY: run_id}, "marking it superseded")
        return PublishResult("wandb", location, location, True, digest, label=LABEL)

    def _earlier(
        self, index: Path, art_name: str, digest: str, mode: str, deadline: Deadline | None
    ) -> PublishResult | None:
        """The earlier publish of the same content (made current again offline), or None."""
        if mode == "offline":
            previous = _previous_offline(index, art_name, digest, self.entity, self.project)
            if not previous:
                return None
            _make_offline_current(index, art_name, self.entity, self.project, str(previous["run_id"]))
            return PublishResult("wandb", str(previous["run_dir"]), None, False, digest, label=LABEL)
        assert deadline is not None
        found = deadline.step().call(
            lambda: _previous_online(art_name, digest, self.entity, self.project, self._api(deadline)),
            f"checking for an earlier publish of {art_name}",
        )
        return PublishResult("wandb", found[0], found[1], False, digest, label=LABEL) if found else None

    def _settings(self, where: str, deadline: Deadline | None) -> dict[str, Any]:
        """``wandb.Settings`` of the analysis run: quiet if asked, its sweep, and the budget's timeouts."""
        settings: dict[str, Any] = {"silent": True} if os.environ.get("WANDB_SILENT") else {}
        if self.sweep:
            settings["sweep_id"] = self.sweep
        if deadline is not None:  # wandb's public per-run timeouts: this run only, nothing process-wide
            if deadline.spent():
                raise deadline.out_of_time(f"publishing the report to {where}")
            settings.update(
                init_timeout=deadline.timeout(FINISH_RESERVE),
                finish_timeout=FINISH_RESERVE,
                finish_timeout_raises=True,
            )
        return settings

    def _write(self, job: _Job, run: Any) -> tuple[Any, TrackerError | None]:
        """Log the report onto the started run: (what was logged, the upload not confirmed in the budget or None)."""
        unconfirmed: TrackerError | None = None
        mode = job.mode
        if mode == "online":
            run.summary.update({STATE_KEY: "writing"})  # until the artifact is committed
        try:
            logged = self._log(job, run)
        except _Unconfirmed as late:
            logged, unconfirmed = late.logged, late.error
        if mode == "online":
            run.summary.update({STATE_KEY: "complete", CURRENT_KEY: True})
        return logged, unconfirmed

    def _analysis_filter(self) -> dict[str, Any]:
        where = {"sweep": self.sweep} if self.sweep else {"group": self.group}
        return {"$and": [{"jobType": ANALYSIS_JOB_TYPE}, where]}

    def _api(self, deadline: Deadline) -> Any:
        """A Public API client whose requests end within one request timeout and within the budget."""
        return public_api(timeout=min(REQUEST_TIMEOUT, deadline.timeout(FINISH_RESERVE)))

    def _end_online_orphans(self, run_id: str, deadline: Deadline) -> None:
        """Mark failed the analysis runs of this sweep / group whose publish never completed.

        A publish killed with its process leaves its run without ``publish_state=complete`` (W&B
        itself marks the run crashed once its heartbeats stop); the next publish records here that it
        was interrupted and which run replaces it. A run still sending heartbeats is left alone.
        """
        from ..base.heartbeat import DEFAULT_STALE_AFTER, is_stale

        what = f"looking for interrupted publishes in {self.entity or 'the default entity'}/{self.project}"

        def listing() -> list[Any]:
            api = self._api(deadline)
            path = f"{self.entity or api.default_entity}/{self.project}"
            with wandb_errors(what):
                return list(api.runs(path, filters=self._analysis_filter(), per_page=100))

        try:  # one attempt (best effort: it never spends the budget on retries), ending within the budget
            runs = deadline.step().call(listing, what, transient=_never)
        except TrackerError as err:
            # best effort, like marking a run superseded: the publish does not depend on it (a new project has
            # nothing to find; a server without the Public API's run listing cannot be asked)
            if getattr(err, "tracker_cause", "") != "not found":
                note(said(_without_stop(message_of(err)), "; interrupted publishes, if any, stay as they are"))
            return
        ended = []
        for run in runs:
            summary = dict(run.summary or {})
            state = summary.get(STATE_KEY)
            if state not in (None, "writing") or (state is None and HASH_KEY in summary):
                continue  # complete (or published by a version that did not record the state)
            if run.state == "running" and not is_stale(
                "running", getattr(run, "heartbeat_at", None), DEFAULT_STALE_AFTER
            ):
                continue  # another publish is writing it right now
            fields = {STATE_KEY: "failed", CURRENT_KEY: False, SUPERSEDED_BY_KEY: run_id, FAILURE_KEY: INTERRUPTED}
            if _update_public_run(run, fields, "marking an interrupted publish failed"):
                ended.append(str(run.id))
        if ended:
            note(recovered_line(LABEL, ended))

    def _current_online(self, art_name: str, deadline: Deadline) -> Any:
        """The run that logged the current (``latest``) version of the report artifact, or None."""

        def current() -> Any:
            api = self._api(deadline)
            ref = f"{self.entity or api.default_entity}/{self.project}/{art_name}:latest"
            with wandb_errors(f"reading the current version of {art_name}"):
                return api.artifact(ref).logged_by() if api.artifact_exists(ref) else None

        try:  # one attempt: best effort
            return deadline.step().call(current, f"reading the current version of {art_name}", transient=_never)
        except TrackerError:
            return None  # nothing published before (or not readable): nothing to mark superseded

    def _presets(self, run: Any, mode: str, deadline: Deadline | None) -> dict[str, str | None]:
        """The chart presets to use: the packaged ones when they can be created online, else None (built-ins)."""
        if mode != "online" or deadline is None:
            if mode == "offline":  # the promise of docs/wandb.md: the fallback is said, not silent
                note(OFFLINE_PRESETS_NOTE)
            return {}
        if deadline.left() < 2 * FINISH_RESERVE:  # best effort: never at the cost of the upload
            note("W&B chart presets not created (little of the time budget left); using built-in presets")
            return {}
        try:
            timeout = min(REQUEST_TIMEOUT, deadline.timeout(2 * FINISH_RESERVE))
            names, notes = create_presets(public_api(timeout=timeout), str(run.entity), timeout=timeout)
        except Exception as err:  # no Public API (e.g. no key): built-in presets
            names, notes = {}, [f"W&B chart presets not created ({type(err).__name__}); using built-in presets"]
        for line in notes:
            note(line)
        return names

    def _log(self, job: _Job, run: Any) -> dict[str, Any]:
        wandb, report, verified, summary, digest = job.wandb, job.report, job.verified, job.summary, job.digest
        art_name, mode, deadline = job.art_name, job.mode, job.deadline
        art = wandb.Artifact(
            art_name,
            type=ARTIFACT_TYPE,
            metadata={
                "report_hash": digest,
                "sweep": self.sweep,
                "group": self.group,
                "files": [f.path for f in verified.files] + ["manifest.json"],
                "algorithms": [str(a) for a in report.algorithms],
            },
        )
        tables: dict[str, Any] = {}
        scores = report.scores
        for tname in list(TABLES) + sorted(report.extra):
            frame = report.table(tname)
            if frame.empty and tname == "curves":
                continue
            if tname == "scores":
                frame = scores = with_run_links(frame, report, run.url if mode == "online" else None)
            tables[tname] = wandb.Table(dataframe=frame.reset_index(drop=True))
            art.add(tables[tname], f"tables/{tname}")
        for entry in [*verified.files, None]:  # only the manifest's files, and the manifest
            rel = entry.path if entry is not None else "manifest.json"
            art.add_file(str(verified.root / rel), name=f"files/{rel}")
        log: dict[str, Any] = {f"tables/{k}": v for k, v in tables.items()}  # every table, on the run too
        log.update(_charts(wandb, report, self._presets(run, mode, deadline)))
        html = verified.root / "report.html"
        if html.is_file():  # as written, self-contained: no W&B stylesheet injected
            log["report"] = wandb.Html(html.read_text(encoding="utf-8"), inject=False)
        for entry in verified.files:
            if entry.path.startswith("figures/") and entry.path.endswith(".png"):
                log[f"figures/{Path(entry.path).stem}"] = wandb.Image(str(verified.root / entry.path))
        run.log(log)
        run.summary.update({**summary, HASH_KEY: digest})
        if mode == "offline":
            keep_in_run_folder(art, Path(run.settings.sync_dir), _root_dir(self.dir))
        aliases = ["latest", _hash_alias(digest)] + ([f"sweep-{_safe_name(self.sweep)}"] if self.sweep else [])
        logged = run.log_artifact(art, aliases=aliases)  # last: a run without it is an incomplete publish
        out = {"charts": {k: v for k, v in log.items() if k.startswith("charts/")}, "scores": scores}
        if mode == "online":  # wandb uploads in the background: wait, so a failed upload fails the publish
            try:
                with _waiting(deadline, f"uploading the artifact {art_name}"):
                    logged.wait(timeout=int(deadline.timeout(FINISH_RESERVE)) if deadline is not None else None)
            except ValueError as err:  # how wandb reports a failed upload or commit
                raise describe_error(err, f"uploading the artifact {art_name}") from None
            except Exception as err:  # uploaded and committed; only reading the new version back failed
                if type(err).__name__ == "WaitTimeoutError":  # wandb's public timeout: not confirmed in time
                    raise _Unconfirmed(out, _late(deadline, f"uploading the artifact {art_name}")) from None
                if not is_client_error(err):
                    raise
                note(message_of(describe_error(err, f"reading back the uploaded artifact {art_name}")))
        return out

    def _report_page(
        self, report: Report, logged: dict[str, Any], mode: str, entity: str, run_title: str, run_url: str
    ) -> str | None:
        """Save the optional W&B Report (best effort: the publish itself is complete); print its URL."""
        if mode != "online":
            note(said(kw("wandb_report=True"), " needs an online W&B server; no W&B Report was made"))
            return None
        from .report_page import build_report, save_report_page

        sweep_url = (
            f"{run_url.rsplit('/runs/', 1)[0]}/sweeps/{self.sweep}" if self.sweep and "/runs/" in run_url else None
        )
        try:
            page = build_report(
                report,
                entity=entity,
                project=self.project,
                run_name=run_title,
                charts=logged["charts"],
                title=f"rl-reliable: {run_title}",
                scores=logged["scores"],
                sweep_url=sweep_url,
            )
            url = save_report_page(page)
        except Exception as err:  # the analysis run is published; only the Report failed
            note(f"the W&B Report could not be saved ({type(err).__name__}: {str(err)[:300]})")
            return None
        note(f"W&B Report: {url}")
        return url


def publish_wandb(
    report: Report, sink: WandbSink | None = None, *, bundle: str | os.PathLike | None = None, **legacy: Any
) -> PublishResult:
    """Publish ``report`` to W&B through ``sink`` (a :class:`WandbSink`, which says where and how); return a
    PublishResult. ``bundle`` is the results folder written by ``--out`` / ``report.write()``, uploaded as it is.

    Online, the sink's ``PublishOptions.retry`` is a wall-clock budget for the whole publish (default: 300 s of
    retrying, plus one request timeout); when W&B does not answer within it, the report is kept on disk and a
    :class:`~rl_reliable_logger.trackers.base.pending.PendingPublishError` names the folder and the
    ``wandb sync`` command that sends it. ``WandbSink(wandb_report=True)`` also saves a W&B Report (online only;
    extra ``[wandb-report]``) with the headline table, methods, interval charts, the HTML report and links to the
    source runs. The sink's keywords given here instead of a sink still work for one release (deprecated).

    Example:
        >>> publish_wandb(report, WandbSink(project="hopper", entity="my-team", sweep="abc123")).created  # doctest: +SKIP
        True
    """
    if legacy:
        if sink is not None:
            raise InputError(
                f"publish_wandb() got both a sink and {', '.join(f'{k}=' for k in legacy)}: give the sink's options "
                "once, in WandbSink(...)"
            )
        warnings.warn(
            f"publish_wandb(report, {spelled(legacy)}) is deprecated: pass publish_wandb(report, WandbSink(...)) "
            "(the old keywords go in the next release)",
            DeprecationWarning,
            stacklevel=callers_level(),
        )
        with warnings.catch_warnings():  # said once, above, in the words of publish_wandb
            warnings.simplefilter("ignore", DeprecationWarning)
            sink = WandbSink(**legacy)
    if sink is None:
        raise InputError("publish_wandb() needs a sink: publish_wandb(report, WandbSink(project=...))")
    return sink.publish(report, bundle=bundle)


def sink_for(
    source: WandbSource,
    *,
    target: str | None = None,
    group: str = "rl-reliable",
    project: str | None = None,
    force: bool = False,
    figures: bool = True,
    wandb_report: bool = False,
    retry: RetryPolicy | None = None,
) -> WandbSink | None:
    """The sink that publishes next to ``source``'s runs: attached to their sweep (``target="sweep"``), in
    ``group`` (``"group"``), or None (``"none"``). ``target=None`` picks the sweep when the runs share one, else
    the group: a new analysis run by default, as on the other trackers.
    ``wandb_report`` also saves a W&B Report (online only; needs ``rl_reliable_logger[wandb-report]``).

    Offline sources publish offline, next to the source runs, so ``wandb sync`` uploads them together.
    """
    sweep = source.sweep or source.common("sweep")
    target = target or ("sweep" if sweep else "group")
    if target == "none":
        return None
    if target == "sweep" and not sweep:
        raise InputError(
            said(
                "publishing to a sweep needs ",
                kw("sweep="),
                " (the runs do not share one sweep); or publish to a group",
            )
        )
    if project:
        entity, proj = split_path(project)
    elif source.offline_dir is not None:
        entity, proj = source.common("entity"), source.common("project")
        if not proj:
            raise InputError(
                said(
                    "the offline runs come from several projects (or none is recorded); say where to publish with ",
                    kw("project="),
                )
            )
    else:
        entity, proj = split_path(str(source.path))
    kwargs: dict[str, Any] = {
        "project": proj,
        "entity": entity,
        "wandb_report": wandb_report,
        "publishing": PublishOptions(force=force, figures=figures, retry=retry),
    }
    kwargs.update({"sweep": sweep} if target == "sweep" else {"group": group})
    if source.offline_dir is not None:
        root = source.offline_dir.absolute()
        if root.is_file():
            root = root.parent
        if root.name.startswith(("offline-run-", "run-")):
            root = root.parent
        kwargs["client_kwargs"] = {
            "mode": "offline",
            "dir": str(root.parent if root.name in ("wandb", ".wandb") else root),
        }
    return WandbSink(**kwargs)


def _finish(run: Any, run_id: str, unconfirmed: TrackerError | None, deadline: Deadline | None) -> None:
    """Finish the run; an upload not confirmed within the budget is a PendingPublishError naming ``wandb sync``."""
    try:
        with _waiting(deadline, f"finishing the analysis run {run_id}"):
            run.finish()
    except TimeoutError:  # finish_timeout: the last data is on disk, not on the server
        unconfirmed = unconfirmed or _late(deadline, f"finishing the analysis run {run_id}")
    if unconfirmed is not None:
        folder = Path(run.settings.sync_dir)
        what = "report (the run and its artifact)"
        raise PendingPublishError(
            kept_message(LABEL, str(unconfirmed), what, folder, f"wandb sync {folder}"), folder
        ) from None
