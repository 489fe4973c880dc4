"""MLflow as a Sink: publish a Report onto a new analysis run or an existing parent run.

What lands on the run (the contract every sink shares is in ``trackers/base/protocols.py``):

* ``rl_reliable/<hash16>/bundle/`` -- the verified results bundle (only its manifest files);
  ``rl_reliable/<hash16>/tables/*.json`` -- every table as MLflow table JSON, registered in
  ``mlflow.loggedArtifacts`` so the UI shows them as tables;
* headline metrics from :func:`~rl_reliable_logger.trackers.base.publishing.headline_metrics`
  (``iqm/PPO``, ``iqm_low/PPO``, ...), logged at a new step for every new report; curves as
  stepped ``curve_<metric>/<algorithm>`` metrics; params, a dataset input and nesting (``presentation.py``);
* tags ``rl_reliable.*``: ``report_hash``, ``current_report`` (the folder of the current report),
  ``publish_state`` (``writing`` / ``complete`` / ``failed``) and provenance.

Replace, don't merge: a changed report goes into its own folder; the table registry and
``current_report`` then point at it alone, earlier report folders are deleted where the artifact
store allows it (else listed in ``rl_reliable.superseded``), and headline keys the new report does
not have are set to NaN. Crash-safe: a new analysis run that fails ends FAILED with
``rl_reliable.failure``; on a parent run ``publish_state`` stays ``writing``/``failed`` and the
hash tag is not set, so the next publish redoes it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import time
import urllib.parse
import uuid
from collections.abc import Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ...analysis.options import ci_label
from ...analysis.report import TABLES
from ...data.counts import fixed
from ...data.names import escape_markdown, escape_markdown_prose
from ...errors import TrackerError
from ...lines import one_line
from ...notes import note
from ...render.export import PAGE_CHART, PAGE_CHART_FORMATS
from ...render.intervals import headline_intervals
from ...store.files import write_private
from ...store.manifest import Bundle
from ...version import __version__
from ...wording import kw, said
from ..base.deprecation import moved_keywords
from ..base.protocols import PublishResult
from ..base.publishing import (
    PublishOptions,
    bundle_files,
    check_not_source,
    current_name,
    curve_metrics,
    display_frame,
    headline_metrics,
    publisher_claim,
    publisher_gone,
    recovered_line,
    report_hash,
    run_count,
    run_name,
    series_key,
    source_run_ids,
    superseded_name,
)
from ..base.retry import TRANSIENT, classify
from .client import Tracker, run_page_url
from .names import LABEL
from .presentation import (
    HEADLINE_STEP,
    PARENT_TAG,
    analysis_params,
    common_parent,
    creator_tags,
    experiments_of,
    log_scores_dataset,
    new_params,
    run_links,
    source_runs,
)
from .quiet import end_run_quietly
from .source import ANALYSIS_ROLE, ROLE_TAG

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report

HASH_TAG = "rl_reliable.report_hash"
CURRENT_TAG = "rl_reliable.current_report"
STATE_TAG = "rl_reliable.publish_state"
FAILURE_TAG = "rl_reliable.failure"
SUPERSEDED_TAG = "rl_reliable.superseded"
ARTIFACT_DIR = "rl_reliable"
LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"
LOCK_TAG = "rl_reliable.publish_lock"
CURVE_KEYS_TAG = "rl_reliable.curve_keys"
PARAMS_KEPT_TAG = "rl_reliable.params_kept"
#: Names the source the analysis was computed from (:func:`series_key`): one series, one current run.
SERIES_TAG = "rl_reliable.series"
#: ``true`` on the one current analysis run of a series, ``false`` on the ones it replaced.
CURRENT_RUN_TAG = "rl_reliable.is_current"
#: On a replaced (or interrupted) analysis run: the id of the run that replaced it.
SUPERSEDED_BY_TAG = "rl_reliable.superseded_by"
#: ``<host> <pid> <expiry>`` of the process writing a new analysis run, so a later publish can tell a
#: publish that is still running from one that was killed.
PUBLISHER_TAG = "rl_reliable.publisher"
_MAX_TAG_VALUE = 5000
#: A publisher's claim on a run lasts this long (a killed publisher blocks others no longer).
LEASE_SECONDS = 600.0
#: Wait after claiming before checking the claim held (must exceed one read-then-write round trip).
SETTLE_SECONDS = 1.0
#: How long to wait for another publisher on the same run before giving up.
WAIT_SECONDS = 300.0
_KEY = re.compile(r"^[A-Za-z0-9_\-. /]{1,250}$")


def parent_run(client: Tracker, run_id: str) -> Any:
    """The existing, not deleted run ``run_id`` a report is published onto, or a TrackerError in one sentence
    naming the run id and what to do. Called before any run is read (``--publish RUN_ID``), and again on publishing.
    """
    from mlflow.exceptions import MlflowException

    try:
        run = client.call(f"reading the parent run {run_id}", client.client.get_run, run_id)
    except MlflowException as err:  # a refused or silent server is a TrackerError from client.call already
        missing = getattr(err, "error_code", "") in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE")
        detail = one_line(err.message, limit=200)
        problem = (
            f"not found at {client.shown_uri} ({detail})" if missing else f"unreadable at {client.shown_uri} ({detail})"
        )
    else:
        if getattr(run.info, "lifecycle_stage", "active") == "active":
            return run
        problem = f"at {client.shown_uri} is deleted"
    raise TrackerError(
        said(
            f"parent run {run_id!r} {problem}, so nothing can be published onto it. Pass the id of an existing run "
            "that is not one of the runs analysed (e.g. the sweep's parent run) to ",
            kw("parent_run_id="),
            ", or publish to a new analysis run.",
        )
    )


def valid_metric_key(key: str) -> bool:
    """MLflow's metric-name rule (letters, digits, ``_ - . /`` and spaces; no ``..`` or leading ``/``)."""
    return bool(_KEY.match(key)) and ".." not in key and not key.startswith("/") and "//" not in key


def _source_info(report: Report) -> dict[str, Any]:
    src = (report.provenance or {}).get("source")
    return dict(src) if isinstance(src, Mapping) else {}


def _clip(text: str, limit: int = _MAX_TAG_VALUE) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _analysis_tags(report: Report) -> dict[str, str]:
    src = _source_info(report)
    prov = report.provenance or {}
    tags = {
        "rl_reliable.version": str(__version__),
        "rl_reliable.n_runs": str(run_count(report)),
        "rl_reliable.algorithms": ", ".join(map(str, report.algorithms)),
    }
    if not report.scores.empty and "task" in report.scores:
        tags["rl_reliable.tasks"] = ", ".join(map(str, dict.fromkeys(report.scores["task"].astype(str))))
    if src:
        tags["rl_reliable.source.tracker"] = str(src.get("tracker", src.get("kind", "")))
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


NOTE_TAG = "mlflow.note.content"
#: Separates the user's own description of a parent run from the part this package writes.
NOTE_MARK = "<!-- rl-reliable: written by rl_reliable_logger; text below this line is replaced on publish -->"


def _merged_note(existing: str | None, ours: str) -> str:
    """The user's description (kept) followed by ours (replaced on every publish)."""
    mine = existing.split(NOTE_MARK, 1)[0].rstrip() if existing else ""
    return (mine + "\n\n" if mine else "") + NOTE_MARK + "\n\n" + ours


#: The bundle's comparison chart (every algorithm's aggregate metrics with their intervals, one figure), in the
#: format the description shows best first: the SVG keeps its size in points (about 1100 pixels wide), the PNG
#: is drawn for print (about 1500); the UI's Markdown cannot scale an image. The writer always writes its SVG
#: (:data:`...render.export.PAGE_CHART`); the PNG is for bundles written before it did.
CHART_FILES = tuple(f"figures/{PAGE_CHART}.{fmt}" for fmt in (*PAGE_CHART_FORMATS, "png"))


def _chart_markdown(folder: str, run_id: str, path: str) -> str:
    """The bundle's comparison chart ``path`` shown in the run's description (the server's own artifact route).

    MLflow's charts draw one panel per metric key (``iqm/PPO``, ``iqm_low/PPO``, ...), none with a band
    across algorithms; the figure in the bundle is the comparison. The link is relative, so it works
    behind a ``--static-prefix`` too.
    """
    full = f"{folder}/bundle/{path}"
    query = urllib.parse.urlencode({"path": full, "run_uuid": run_id})
    return f"![aggregate metrics with intervals, every algorithm (artifact {full})](get-artifact?{query})"


#: Ends every cell of the description's table but the last: MLflow 3.x's UI draws Markdown tables with no cell
#: padding and strips style attributes, so without it the columns touch (``247.760]221.346``). An entity, since
#: Markdown trims whitespace characters at a cell's ends.
CELL_GAP = "&emsp;&emsp;"
#: Inside a cell (``0.806 [0.783, 0.825]``), so a narrow window wraps between columns, not inside a number.
_NBSP = "\u00a0"


def _cell(row: Any) -> str:
    return f"{fixed(row['point'])}{_NBSP}[{fixed(row['low'])},{_NBSP}{fixed(row['high'])}]"


def _headline_table(report: Report) -> list[str]:
    """The headline metrics as a Markdown table that MLflow's UI shows with space between the columns."""
    agg = report.aggregates
    if agg.empty:
        return []
    metrics = list(dict.fromkeys(agg["metric"].astype(str)))
    by = {(str(r["algorithm"]), str(r["metric"])): r for _, r in agg.iterrows()}

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(c + CELL_GAP for c in cells[:-1]) + f" | {cells[-1]} |"

    lines = [row(["algorithm", *(escape_markdown(m) for m in metrics)]), "|---" * (len(metrics) + 1) + "|"]
    for alg in dict.fromkeys(agg["algorithm"].astype(str)):
        lines.append(row([escape_markdown(alg), *(_cell(by[alg, m]) if (alg, m) in by else "" for m in metrics)]))
    return lines


def _note(report: Report, folder: str, links: list[str] | None = None, *, chart: str | None = None) -> str:
    """Markdown shown as the run's description in the MLflow UI: what was analysed and the headline table first
    (the UI folds a long description after a few lines), then how the intervals were computed, the comparison
    chart (``chart``: :func:`_chart_markdown`), the warnings and source-run links."""
    prov = report.provenance
    intervals = headline_intervals(prov) or f"{ci_label(prov.get('ci', 0.95))} intervals"
    lines = [f"**rl-reliable analysis** of {escape_markdown_prose(report.counts().text())}.", ""]
    lines += _headline_table(report)
    lines += ["", f"Point estimate [interval]: {escape_markdown_prose(intervals)}."]
    if chart:
        lines += ["", chart]
    lines += ["", f"Tables: artifacts `{folder}/tables/*.json`; report: `{folder}/bundle/report.html`."]
    if report.warnings:
        lines += ["", "Warnings:", ""] + [f"- {escape_markdown_prose(w)}" for w in report.warnings[:20]]
    if links:
        lines += ["", f"Source runs ({len(source_runs(report))}):", ""] + links
    return _clip("\n".join(lines), 12000)


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


def _table_json(frame: Any) -> str:
    """MLflow's table JSON (``{"columns": [...], "data": [[...]]}``), made by us so it overwrites.

    Floats are written exactly; NaN / missing become ``null``.
    """
    payload = {
        "columns": [str(c) for c in frame.columns],
        "data": [[_json_value(v) for v in row] for row in frame.itertuples(index=False, name=None)],
    }
    return json.dumps(payload, allow_nan=False)


class MlflowSink:
    """Publish reports to MLflow: onto ``parent_run_id``, or onto a new analysis run in ``experiment``.

    ``publishing`` (:class:`PublishOptions`): ``force=True`` publishes a new analysis run even when one with the same
    content exists, ``figures=False`` leaves the figures out, ``retry`` bounds the time spent riding out an outage.
    ``force=``, ``figures=`` and ``retry=`` as separate keywords still work for this release (DeprecationWarning).

    Example:
        >>> MlflowSink(tracking_uri="sqlite:///mlflow.db", experiment="bandits").publish(report)  # doctest: +SKIP
        PublishResult(tracker='mlflow', target='3f2a...', url=None, created=True, report_hash='...')
    """

    tracker = "mlflow"

    def __init__(
        self,
        *,
        tracking_uri: str | None = None,
        experiment: str | None = None,
        parent_run_id: str | None = None,
        publishing: PublishOptions | None = None,
        **legacy: Any,
    ):
        unknown = [key for key in legacy if key not in ("force", "figures", "retry")]
        if unknown:
            raise TypeError(f"MlflowSink() got an unexpected keyword argument {unknown[0]!r}")
        moved = moved_keywords(publishing, legacy, where="MlflowSink()", keyword="publishing", bundle="PublishOptions")
        publishing = PublishOptions(**moved) if moved is not None else publishing or PublishOptions()
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self.parent_run_id = parent_run_id
        self.publishing = publishing
        self.figures = publishing.figures
        self.force = publishing.force  # a new analysis run even when one with the same content exists
        self.retry = publishing.retry

    def publish(self, report: Report, *, bundle: str | os.PathLike | None = None) -> PublishResult:
        digest = report_hash(report)
        check_not_source(self.parent_run_id, source_run_ids(report))
        metrics = headline_metrics(report, valid=valid_metric_key)  # every key checked before any write
        curve_metrics(report, valid=valid_metric_key)
        with bundle_files(report, bundle, figures=self.figures) as verified:  # verified before anything is written
            client = Tracker(self.tracking_uri, must_exist=False, retry=self.retry, uri_keyword=kw("tracking_uri="))
            if self.parent_run_id:
                return self._onto_parent(client, report, digest, metrics, verified)
            return self._new_run(client, report, digest, metrics, verified)

    # ------------------------------------------------------------------ targets
    def _onto_parent(
        self, client: Tracker, report: Report, digest: str, metrics: dict[str, float], verified: Bundle
    ) -> PublishResult:
        run_id = str(self.parent_run_id)
        run = parent_run(client, run_id)
        url = run_page_url(client.uri, run.info.experiment_id, run_id)
        if _complete(run.data.tags, digest):
            return PublishResult("mlflow", run_id, url, False, digest, label=LABEL)
        with _lease(client, run_id):  # one publisher at a time on a run that already exists
            if _complete(client.call("reading the parent run", client.client.get_run, run_id).data.tags, digest):
                return PublishResult("mlflow", run_id, url, False, digest, label=LABEL)  # published while we waited
            before = client.call("reading the parent run", client.client.get_run, run_id).data.tags.get(HASH_TAG)
            _set_tags(client, run_id, {STATE_TAG: "writing"})
            self._write_verified(client, run, report, digest, metrics, verified, end_failed=False)
        replaced = (f"report {before[:8]} on the same run",) if before and before != digest else ()
        return PublishResult("mlflow", run_id, url, True, digest, label=LABEL, replaced=replaced)

    def _write_verified(
        self,
        client: Tracker,
        run: Any,
        report: Report,
        digest: str,
        metrics: dict[str, float],
        verified: Bundle,
        *,
        end_failed: bool,
    ) -> None:
        """Write the report onto ``run`` and verify it; on any failure tag the run failed (with the reason), and
        with ``end_failed`` (a run this publish created) end it FAILED, so nothing half-written looks complete."""
        run_id = run.info.run_id
        try:
            self._write(client, run, report, digest, metrics, verified)
            _verify(client, run_id, digest, metrics)
        except BaseException as err:
            if not (isinstance(err, TrackerError) and classify(err) in TRANSIENT):  # a server that is down is
                # not asked again (that would wait out another budget): the next publish ends the run
                with contextlib.suppress(Exception):
                    _mark_failed(client.single_attempt(), run_id, _reason(err), end=end_failed)
            raise

    def _new_run(
        self, client: Tracker, report: Report, digest: str, metrics: dict[str, float], verified: Bundle
    ) -> PublishResult:
        exp_id = _publish_experiment(client, report, self.experiment)
        series = series_key(report)
        ended = _end_orphans(client, exp_id, series)  # an earlier publish that was killed: FAILED, not RUNNING
        if ended:
            note(recovered_line(LABEL, ended))
        sources = source_run_ids(report)
        earlier = [] if self.force else _finished_analysis_runs(client, exp_id, digest)
        if earlier:
            first = earlier[0].info.run_id
            replaced = _make_current(client, exp_id, series, first, sources)
            url = run_page_url(client.uri, exp_id, first)
            return PublishResult("mlflow", first, url, False, digest, label=LABEL, replaced=replaced)
        tags = {
            ROLE_TAG: ANALYSIS_ROLE,
            STATE_TAG: "writing",
            SERIES_TAG: series,
            PUBLISHER_TAG: publisher_claim(LEASE_SECONDS),
        }
        tags.update(creator_tags())
        parent = common_parent(client, [rid for rid, _ in source_runs(report)], exp_id)
        if parent:
            tags[PARENT_TAG] = parent  # shown nested under the runs' shared parent
        run = client.call(
            "creating the analysis run", client.client.create_run, exp_id, run_name=run_name(report, digest), tags=tags
        )
        run_id = run.info.run_id
        self._write_verified(client, run, report, digest, metrics, verified, end_failed=True)
        client.call("finishing the analysis run", end_run_quietly, client.client, run_id, "FINISHED")
        # two publishers of the same content at once: keep the oldest run, delete ours
        same = [] if self.force else _finished_analysis_runs(client, exp_id, digest)
        if same and same[0].info.run_id != run_id:
            client.call("removing a duplicate analysis run", client.client.delete_run, run_id)
            first = same[0].info.run_id
            replaced = _make_current(client, exp_id, series, first, sources)
            url = run_page_url(client.uri, exp_id, first)
            return PublishResult("mlflow", first, url, False, digest, label=LABEL, replaced=replaced)
        replaced = _make_current(client, exp_id, series, run_id, sources)
        url = run_page_url(client.uri, exp_id, run_id)
        return PublishResult("mlflow", run_id, url, True, digest, label=LABEL, replaced=replaced)

    # ------------------------------------------------------------------ writing
    def _write(
        self, client: Tracker, run: Any, report: Report, digest: str, metrics: dict[str, float], verified: Bundle
    ) -> None:
        """Upload the verified bundle and the tables into a new folder, then make it the only current report."""
        from mlflow.entities import Metric

        run_id = run.info.run_id
        folder = f"{ARTIFACT_DIR}/{digest[:16]}"
        client.call(
            "uploading the report bundle",
            client.client.log_artifacts,
            run_id,
            str(verified.root),
            f"{folder}/bundle",
        )
        tables_dir = verified.root.parent / "tables"
        tables = {
            f"{name}.json": _table_json(display_frame(frame))  # CSVs keep full precision
            for name, frame in [(n, report.table(n)) for n in TABLES] + sorted(report.extra.items())
            if frame is not None and not frame.empty
        }
        write_private(tables_dir, tables)  # the private folder of this publish (bundle_files)
        table_paths = [f"{folder}/tables/{name}" for name in tables]
        client.call("uploading the tables", client.client.log_artifacts, run_id, str(tables_dir), f"{folder}/tables")

        fresh = client.call("reading the run", client.client.get_run, run_id)
        tags = dict(fresh.data.tags)
        registered = json.loads(tags.get(LOGGED_ARTIFACTS_TAG, "[]") or "[]")
        kept = [r for r in registered if not str(r.get("path", "")).startswith(ARTIFACT_DIR + "/")]
        step = int(time.time() * 1000)
        stale = [k for k in fresh.data.metrics if _ours(k, tags) and k not in metrics]
        curves = curve_metrics(report)
        stale += [k for k in fresh.data.metrics if _ours(k, tags, CURVE_KEYS_TAG) and k not in curves]
        batch = [Metric(key, value, step, HEADLINE_STEP) for key, value in metrics.items()]
        batch += [Metric(key, float("nan"), step, HEADLINE_STEP) for key in stale]
        batch += [Metric(key, value, step, s) for key, series in curves.items() for s, value in series]
        for start in range(0, len(batch), 1000):
            client.call(
                "logging headline metrics", client.client.log_batch, run_id, metrics=batch[start : start + 1000]
            )
        _present(client, run, report)
        superseded = _remove_other_reports(client, run, folder)
        final = dict(_analysis_tags(report))
        final.update(
            {
                LOGGED_ARTIFACTS_TAG: json.dumps(kept + [{"path": p, "type": "table"} for p in table_paths]),
                CURRENT_TAG: folder,
                "rl_reliable.headline_keys": _clip(json.dumps(sorted(metrics))),
                CURVE_KEYS_TAG: _clip(json.dumps(sorted(curves))),
                SUPERSEDED_TAG: _clip(", ".join(superseded)) or "(none)",
            }
        )
        ids = [rid for rid, _ in source_runs(report)]
        exps = [str(e.get("id")) for e in _source_info(report).get("experiments") or [] if isinstance(e, Mapping)]
        links = run_links(report, experiments_of(client, ids, exps or [run.info.experiment_id]))
        chart = next((_chart_markdown(folder, run_id, c) for c in CHART_FILES if c in verified.contents), None)
        note = _note(report, folder, links, chart=chart)
        if run.data.tags.get(ROLE_TAG) == ANALYSIS_ROLE:
            final[NOTE_TAG] = note
        else:  # the user's parent run keeps its own description; ours follows it
            final[NOTE_TAG] = _merged_note(fresh.data.tags.get(NOTE_TAG), note)
        _set_tags(client, run_id, final)
        _set_tags(client, run_id, {HASH_TAG: digest, STATE_TAG: "complete"})


def _present(client: Tracker, run: Any, report: Report) -> None:
    """Params (for the UI's run comparison) and the score table as the run's dataset input."""
    from mlflow.entities import Param

    existing = dict(client.call("reading the run", client.client.get_run, run.info.run_id).data.params)
    fresh, kept = new_params(analysis_params(report), existing)
    if fresh:
        items = [Param(k, v) for k, v in fresh.items()]
        for start in range(0, len(items), 100):
            client.call("logging params", client.client.log_batch, run.info.run_id, params=items[start : start + 100])
    # MLflow params never change: on a parent run published to before, differing ones keep the first value
    _set_tags(client, run.info.run_id, {PARAMS_KEPT_TAG: _clip(", ".join(kept)) or "(none)"})
    log_scores_dataset(client, run.info.run_id, report)


def _ours(key: str, tags: Mapping[str, str], listing: str = "rl_reliable.headline_keys") -> bool:
    try:
        return key in set(json.loads(tags.get(listing, "[]")))
    except ValueError:
        return False


def _remove_other_reports(client: Tracker, run: Any, keep: str) -> list[str]:
    """Delete earlier report folders of this run; return the ones the store would not delete."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    folders = [
        f.path
        for f in client.call("listing report folders", client.client.list_artifacts, run.info.run_id, ARTIFACT_DIR)
        if f.is_dir and f.path != keep
    ]
    left = []
    for path in folders:
        try:
            get_artifact_repository(run.info.artifact_uri).delete_artifacts(path)
        except Exception:  # a store without delete: the folder stays, but is not current
            left.append(path)
    return left


def _holder(client: Tracker, run_id: str) -> str | None:
    """The token of the publisher that holds the run's lease, or None when it is free or expired."""
    value = client.call("reading the publish lock", client.client.get_run, run_id).data.tags.get(LOCK_TAG, "")
    token, _, expiry = value.partition(" ")
    try:
        return token if token and float(expiry) > time.time() else None
    except ValueError:
        return None


@contextlib.contextmanager
def _lease(client: Tracker, run_id: str) -> Iterator[None]:
    """Hold the run's publish lease (tag ``rl_reliable.publish_lock``) while writing to it.

    Claim when free, wait :data:`SETTLE_SECONDS`, and keep the claim only if it is still ours
    (Fischer's timed mutual exclusion: MLflow has no compare-and-set). Another holder is waited
    for up to :data:`WAIT_SECONDS`; a claim expires after :data:`LEASE_SECONDS`.
    """
    me = uuid.uuid4().hex
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        if _holder(client, run_id) is None:
            _set_tags(client, run_id, {LOCK_TAG: f"{me} {time.time() + LEASE_SECONDS:.0f}"})
            time.sleep(SETTLE_SECONDS)
            if _holder(client, run_id) == me:
                break
        if time.monotonic() > deadline:
            raise TrackerError(
                f"run {run_id} is being published to by another process (tag {LOCK_TAG}); try again when it has "
                "finished (a claim left by a killed publisher expires after "
                f"{LEASE_SECONDS / 60:.0f} minutes)."
            )
        time.sleep(0.2 + random.random())
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            if _holder(client, run_id) == me:
                client.call("releasing the publish lock", client.client.delete_tag, run_id, LOCK_TAG)


def _complete(tags: Mapping[str, str], digest: str) -> bool:
    return tags.get(HASH_TAG) == digest and tags.get(STATE_TAG, "complete") == "complete"


def _mark_failed(
    client: Tracker, run_id: str, reason: str, *, end: bool, extra: Mapping[str, str] | None = None
) -> None:
    """Tag ``run_id`` failed with ``reason`` (and end it FAILED with ``end``), in one call within the budget."""
    from mlflow.entities import RunTag

    tags = {STATE_TAG: "failed", FAILURE_TAG: _clip(reason, 500), **(extra or {})}

    def mark() -> None:
        client.client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])
        if end:
            end_run_quietly(client.client, run_id, "FAILED")

    client.call("marking the run failed", mark)


def _reason(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}".strip()


def _verify(client: Tracker, run_id: str, digest: str, metrics: Mapping[str, float]) -> None:
    """Read the run back: the current report, its hash and every headline metric must be ours."""
    run = client.call("checking the published report", client.client.get_run, run_id)
    tags, seen = run.data.tags, run.data.metrics
    wrong = [k for k, v in metrics.items() if seen.get(k) != v]
    folder = f"{ARTIFACT_DIR}/{digest[:16]}"
    listed = client.call("checking the published files", client.client.list_artifacts, run_id, f"{folder}/bundle")
    if not any(f.path.endswith("/manifest.json") for f in listed):
        wrong.append(f"{folder}/bundle/manifest.json")
    if tags.get(HASH_TAG) != digest or tags.get(CURRENT_TAG) != folder or wrong:
        raise TrackerError(
            f"run {run_id} was changed by another publish at the same time (report hash now "
            f"{str(tags.get(HASH_TAG))[:8]}, this one {digest[:8]}"
            + (f"; {wrong[0]!r} differs or is missing" if wrong else "")
            + "). Publish again once the other one has finished."
        )


def _analysis_runs(client: Tracker, exp_id: str, where: str, what: str) -> list[Any]:
    runs = client.call(
        what,
        client.client.search_runs,
        [exp_id],
        filter_string=f"tags.`{ROLE_TAG}` = '{ANALYSIS_ROLE}'" + (f" and {where}" if where else ""),
        max_results=1000,
    )
    return sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id))


def _end_orphans(client: Tracker, exp_id: str, series: str) -> list[str]:
    """End FAILED every RUNNING analysis run of this series (or of no recorded series) whose publisher is gone.

    A publish killed with its process (or whose server died) leaves its run RUNNING with
    ``publish_state=writing``; the next publish of the same source finds it here, tags it failed
    with the reason and ends it, so no orphan stays RUNNING. Returns the ids it ended.
    """
    ended = []
    for run in _analysis_runs(client, exp_id, "attributes.status = 'RUNNING'", "looking for interrupted publishes"):
        tags = run.data.tags
        if tags.get(STATE_TAG) == "complete" or tags.get(SERIES_TAG, series) != series:
            continue
        if SERIES_TAG not in tags and not str(run.info.run_name or "").startswith("rl-reliable · "):  # old names
            continue  # written by an older version: only runs named as this package names them
        if not publisher_gone(tags.get(PUBLISHER_TAG), (run.info.start_time or 0) / 1000, LEASE_SECONDS):
            continue  # another publish is writing it right now
        reason = (
            "interrupted: the publish writing this run stopped before it finished (its process ended); "
            "a later publish of the same source ended it"
        )
        _mark_failed(client, run.info.run_id, reason, end=True, extra={CURRENT_RUN_TAG: "false"})
        ended.append(run.info.run_id)
    return ended


#: Ends the line a replaced analysis run's description starts with (found and removed by the next publish).
SUPERSEDED_MARK = "<!-- rl-reliable: superseded -->"


def _superseded_note(note: str, by: tuple[str, str, str] | None) -> str:
    """``note`` without its superseded line, then (with ``by``: run id, name, experiment id) a new one on top that
    links the run that replaced it."""
    body = "\n".join(line for line in note.split("\n") if not line.endswith(SUPERSEDED_MARK)).lstrip("\n")
    if by is None:
        return body
    run_id, name, exp = by
    line = (
        f"**Superseded**: not the current analysis; it was replaced by [{escape_markdown(name)}]"
        f"(#/experiments/{exp}/runs/{run_id}) (run `{run_id}`). {SUPERSEDED_MARK}"
    )
    return _clip(line + "\n\n" + body, 12000)


def _make_current(
    client: Tracker, exp_id: str, series: str, current: str, sources: Collection[str] = ()
) -> tuple[str, ...]:
    """Mark ``current`` the one current analysis run of ``series``; the runs it replaces record its id.

    A run that was current (or never replaced, e.g. an interrupted one) gets ``is_current=false`` and
    ``superseded_by=<current>``, and its description starts with a line linking ``current``; one replaced
    earlier keeps the run that replaced it. Names follow (best effort, :func:`_rename`): replaced runs start
    with ``old · `` (what the runs list shows), and ``current`` loses that mark (and its description the
    superseded line) when the same report is published again. Returns what it replaced (``analysis run
    <id>``, for the console), the runs that were current until now.
    """
    names: dict[str, str] = {}
    runs = _analysis_runs(client, exp_id, f"tags.`{SERIES_TAG}` = '{series}'", "marking the current analysis")
    now = next((r for r in runs if r.info.run_id == current), None)
    now_name = current_name(str(now.info.run_name or current)) if now is not None else current
    replaced = []
    for run in runs:
        tags, run_id = run.data.tags, run.info.run_id
        if run_id in sources:
            continue  # never written onto a source run (analysis runs are never read as sources anyway)
        name = str(run.info.run_name or "")
        wanted = current_name(name) if run_id == current else superseded_name(name)
        if name and wanted != name and run.info.status != "RUNNING":  # a RUNNING one is another publish's
            names[run_id] = wanted
        note = tags.get(NOTE_TAG, "")
        if run_id == current:
            if SUPERSEDED_MARK in note:
                _set_tags(client, run_id, {NOTE_TAG: _superseded_note(note, None)})
            continue
        if tags.get(CURRENT_RUN_TAG) == "true" or SUPERSEDED_BY_TAG not in tags:
            if tags.get(CURRENT_RUN_TAG) == "true":
                replaced.append(f"analysis run {run_id}")
            marks = {CURRENT_RUN_TAG: "false", SUPERSEDED_BY_TAG: current}
            if note:
                marks[NOTE_TAG] = _superseded_note(note, (current, now_name, exp_id))
            _set_tags(client, run_id, marks)
    _set_tags(client, current, {CURRENT_RUN_TAG: "true"})
    if SUPERSEDED_BY_TAG in client.call("reading the run", client.client.get_run, current).data.tags:
        client.call("clearing superseded_by", client.client.delete_tag, current, SUPERSEDED_BY_TAG)
    _rename(client, names)
    return tuple(replaced)


def _rename(client: Tracker, names: Mapping[str, str]) -> None:
    """Rename analysis runs this package created (one attempt each, best effort).

    The tags already say which run is current; a name that cannot be changed costs one printed line,
    never the publish.
    """
    quick = client.single_attempt()
    for run_id, name in names.items():
        try:
            quick.call("renaming an analysis run", quick.client.update_run, run_id, name=name)
        except Exception as err:
            note(
                f"analysis run {run_id} could not be renamed {name!r} ({one_line(str(err))[:300]}); "
                f"its tag {CURRENT_RUN_TAG} says whether it is current"
            )
            return


def _finished_analysis_runs(client: Tracker, exp_id: str, digest: str) -> list[Any]:
    runs = client.call(
        "looking for an earlier publish",
        client.client.search_runs,
        [exp_id],
        filter_string=(
            f"tags.`{HASH_TAG}` = '{digest}' and tags.`{ROLE_TAG}` = '{ANALYSIS_ROLE}' "
            "and attributes.status = 'FINISHED'"
        ),
        max_results=50,
    )
    return sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id))


def _set_tags(client: Tracker, run_id: str, tags: Mapping[str, str]) -> None:
    from mlflow.entities import RunTag

    items = [RunTag(k, v) for k, v in tags.items()]
    for start in range(0, len(items), 100):
        client.call("setting tags", client.client.log_batch, run_id, tags=items[start : start + 100])


def _publish_experiment(client: Tracker, report: Report, experiment: str | None) -> str:
    if experiment is None:
        exps = _source_info(report).get("experiments") or []
        if not exps:
            raise TrackerError(
                said(
                    "publishing to MLflow needs ",
                    kw("experiment="),
                    " (a name or id): the report does not say which MLflow experiment its scores came from.",
                )
            )
        first = exps[0]
        experiment = str(first.get("id") if isinstance(first, Mapping) else first)
    exp = client.call("looking up the experiment", client.client.get_experiment_by_name, str(experiment))
    if exp is None:
        from mlflow.exceptions import MlflowException

        try:
            exp = client.call("looking up the experiment", client.client.get_experiment, str(experiment))
        except MlflowException:
            exp = None
    if exp is None:
        return str(client.call("creating the experiment", client.client.create_experiment, str(experiment)))
    if exp.lifecycle_stage != "active":
        raise TrackerError(f"experiment {exp.name!r} (id {exp.experiment_id}) is deleted; restore it or pick another.")
    return str(exp.experiment_id)


def publish_mlflow(
    report: Report,
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    parent_run_id: str | None = None,
    bundle: str | os.PathLike | None = None,
    publishing: PublishOptions | None = None,
    **legacy: Any,
) -> PublishResult:
    """Publish ``report`` to MLflow (see :class:`MlflowSink`); return a PublishResult.

    With ``parent_run_id`` the report goes onto that existing run (its status is left as it is;
    a run the scores came from is refused); otherwise onto a new FINISHED run named
    ``<hash8> · IQM <algorithm> <value>, ... · rl-reliable · R runs · N algorithms × M tasks`` in ``experiment``
    (name or id; default: the first experiment the scores came from; the analysis run it replaces is renamed
    ``old · ...`` and its description links the new one).
    The same content published again writes nothing
    (``created`` is False) unless ``publishing=PublishOptions(force=True)`` (``figures``, ``retry``: see
    :class:`MlflowSink`; the separate ``force=``, ``figures=``, ``retry=`` are deprecated). ``bundle`` uploads the verified files of a folder written by
    ``save_report(report, folder)`` instead of drawing the figures again.

    Example:
        >>> first = publish_mlflow(report, experiment="bandits")      # doctest: +SKIP
        >>> publish_mlflow(report, experiment="bandits").created       # doctest: +SKIP
        False
    """
    unknown = [key for key in legacy if key not in ("force", "figures", "retry")]
    if unknown:
        raise TypeError(f"publish_mlflow() got an unexpected keyword argument {unknown[0]!r}")
    moved = moved_keywords(publishing, legacy, where="publish_mlflow()", keyword="publishing", bundle="PublishOptions")
    publishing = PublishOptions(**moved) if moved is not None else publishing
    sink = MlflowSink(
        tracking_uri=tracking_uri, experiment=experiment, parent_run_id=parent_run_id, publishing=publishing
    )
    return sink.publish(report, bundle=bundle)
