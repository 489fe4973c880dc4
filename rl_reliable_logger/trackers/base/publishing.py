"""Publishing rules every Sink shares: the content hash, headline keys, run names, source-run checks.

One implementation here, used by the folder sink and every tracker's sink, so "already published", metric
names, run names and refusals mean the same on every tracker.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...analysis.hashing import report_hash
from ...errors import InputError, TrackerError
from ...render.tables import headline_phrase
from ...store.bundle import read_bundle
from ...store.manifest import Bundle
from ...wording import kw, said

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report
    from .retry import RetryPolicy

__all__ = [
    "PublishOptions",
    "run_count",
    "bundle_files",
    "check_not_source",
    "curve_metrics",
    "display_frame",
    "headline_metrics",
    "key_segment",
    "publisher_claim",
    "publisher_gone",
    "recovered_line",
    "report_hash",
    "run_name",
    "SUPERSEDED_PREFIX",
    "current_name",
    "superseded_name",
    "series_key",
    "source_run_ids",
    "uri_identity",
]


@dataclass(frozen=True)
class PublishOptions:
    """How a sink publishes, whichever tracker it writes to: ``force=True`` publishes a new analysis run even when
    the same content was published before (default: the earlier one is reused); ``figures=False`` leaves the
    figures out; ``retry`` bounds the time spent riding out an outage (default: the sink's own budget).

    Example:
        >>> PublishOptions(force=True)
        PublishOptions(force=True, figures=True, retry=None)
    """

    force: bool = False
    figures: bool = True
    retry: RetryPolicy | None = None

    def __post_init__(self) -> None:
        for name in ("force", "figures"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(said(kw(name + "="), f" is True or False, got a {type(getattr(self, name)).__name__}"))


_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def key_segment(name: str) -> str:
    """One part of a metric key for an algorithm or metric name.

    A plain name (letters, digits, ``_ . -``; up to 64 characters; not starting with ``_ . -``) is
    used as it is. Any other name keeps its plain characters and gets ``-`` plus the first 6 hex
    digits of its SHA-256, so ``A+B`` and ``A=B`` (and ``PPO/low``) get different, stable keys.

    Example:
        >>> key_segment("PPO"), key_segment("A+B") != key_segment("A=B"), "/" in key_segment("PPO/low")
        ('PPO', True, False)
    """
    text = str(name)
    if _PLAIN.match(text) and ".." not in text:
        return text
    stem = _UNSAFE.sub("_", text).strip("_.-")[:40].replace("..", "_") or "x"
    return f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def headline_metrics(report: Report, *, valid: Callable[[str], bool] | None = None) -> dict[str, float]:
    """``<metric>/<algorithm>``, ``<metric>_low/<algorithm>``, ``<metric>_high/<algorithm>`` per aggregate row.

    The statistic comes first, the algorithm last: the trackers group charts into sections by
    the part of the key before the first ``/``, so each section holds one statistic (``iqm``,
    ``iqm_low``, ``iqm_high``) with one chart per algorithm. Keys are built by :func:`key_segment`,
    checked against ``valid`` (a tracker's key rule) before anything is written; two rows that would
    share a key are an InputError naming both. Only finite values are returned.

    Example:
        >>> from rl_reliable_logger.analysis.report import Report
        >>> import pandas as pd
        >>> r = Report(aggregates=pd.DataFrame({"algorithm": ["PPO"], "metric": ["iqm"],
        ...            "point": [0.5], "low": [0.4], "high": [0.6]}))
        >>> headline_metrics(r)
        {'iqm/PPO': 0.5, 'iqm_low/PPO': 0.4, 'iqm_high/PPO': 0.6}
    """
    out: dict[str, float] = {}
    owner: dict[str, tuple[str, str]] = {}
    for row in report.aggregates.itertuples(index=False):
        stat, alg = key_segment(str(row.metric)), key_segment(str(row.algorithm))
        for suffix, value in (("", row.point), ("_low", row.low), ("_high", row.high)):
            key = f"{stat}{suffix}/{alg}"
            who = (str(row.metric), str(row.algorithm))
            _claim(key, who, owner, valid, what="headline metric")
            number = _finite(value)
            if number is not None:
                out[key] = number
    return out


def curve_metrics(report: Report, *, valid: Callable[[str], bool] | None = None) -> dict[str, list[tuple[int, float]]]:
    """Sample-efficiency curves as stepped series: ``curve_<metric>/<algorithm>`` (+ ``_low``, ``_high``).

    Each key maps to ``[(step, value), ...]`` in step order (finite values only), ready to be logged
    as a metric history. Empty when the report has no curves. Steps must be whole numbers (trackers
    store integer steps); other steps are an InputError before anything is written.
    """
    curves = report.curves
    out: dict[str, list[tuple[int, float]]] = {}
    if curves is None or curves.empty:
        return out
    owner: dict[str, tuple[str, str]] = {}
    for row in curves.itertuples(index=False):
        stat, alg = "curve_" + key_segment(str(row.metric)), key_segment(str(row.algorithm))
        step = _finite(row.step)
        if step is None or step != int(step):
            raise InputError(
                f"curve step {row.step!r} (metric {row.metric!r}, algorithm {row.algorithm!r}) is not a whole "
                "number; trackers store integer steps. Nothing was written."
            )
        for suffix, value in (("", row.point), ("_low", row.low), ("_high", row.high)):
            key = f"{stat}{suffix}/{alg}"
            _claim(key, (str(row.metric), str(row.algorithm)), owner, valid, what="curve metric")
            number = _finite(value)
            if number is not None:
                out.setdefault(key, []).append((int(step), number))
    return {k: sorted(v) for k, v in out.items()}


def _finite(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _claim(
    key: str,
    who: tuple[str, str],
    owner: dict[str, tuple[str, str]],
    valid: Callable[[str], bool] | None,
    *,
    what: str,
) -> None:
    """Check ``key`` against the tracker rule and against the (metric, algorithm) that already uses it."""
    if valid is not None and not valid(key):
        raise InputError(
            f"{what} key {key!r} (metric {who[0]!r}, algorithm {who[1]!r}) "
            "is not accepted by the tracker; nothing was written"
        )
    if key in owner and owner[key] != who:
        a, b = (owner[key][1], who[1]) if owner[key][0] == who[0] else (owner[key], who)
        raise InputError(
            f"algorithms {a!r} and {b!r} would both publish the metric key {key!r}; "
            "rename one of them. Nothing was written.",
            [f"{a!r} and {b!r} -> {key!r}"],
        )
    owner[key] = who


def display_frame(frame: Any, digits: int = 6) -> Any:
    """A copy of ``frame`` with floats rounded to ``digits`` significant digits, for a tracker's table view.

    Only for what a UI shows; the bundle's CSVs keep full precision.

    Example:
        >>> import pandas as pd
        >>> display_frame(pd.DataFrame({"x": [0.123456789, 12345.6789]}))["x"].tolist()
        [0.123457, 12345.7]
    """
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype.kind == "f":
            out[col] = [float(f"{v:.{digits}g}") if math.isfinite(v) else v for v in out[col]]
    return out


#: Put before the name of an analysis run another one replaced, so MLflow's runs list (whose name column is cut
#: after about 20 characters, 19 for a run nested under a parent) shows which analysis is current: short, so
#: the mark and the whole report hash still show.
SUPERSEDED_PREFIX = "old · "


def run_name(report: Report, digest: str) -> str:
    """``<hash8> · IQM PPO 0.412, SAC 0.388 · rl-reliable · 48 runs · 2 algorithms × 6 tasks``: the analysis run's
    name on every tracker.

    What tells two analyses apart comes first: runs lists cut names after about 20 characters, and the
    report hash is what differs between the analyses of changed data. Then the headline result
    (:func:`~rl_reliable_logger.render.tables.headline_phrase`), since a runs list shows names, not
    descriptions: widen its name column to read it.
    """
    n_alg = len(report.algorithms) if len(report.aggregates) else 0
    tasks = report.provenance.get("tasks")
    if not isinstance(tasks, list):
        tasks = list(dict.fromkeys(report.scores["task"].astype(str))) if "task" in report.scores else []
    a = "algorithm" if n_alg == 1 else "algorithms"
    t = "task" if len(tasks) == 1 else "tasks"
    n_runs = run_count(report)
    r = "run" if n_runs == 1 else "runs"
    headline = headline_phrase(report)
    return (
        f"{digest[:8]} · "
        + (f"{headline} · " if headline else "")
        + f"rl-reliable · {n_runs} {r} · {n_alg} {a} × {len(tasks)} {t}"
    )


def superseded_name(name: str) -> str:
    """The name an analysis run gets once another one replaced it (unchanged when it already says so)."""
    return name if name.startswith(SUPERSEDED_PREFIX) else SUPERSEDED_PREFIX + name


def current_name(name: str) -> str:
    """The name of an analysis run made current again (the superseded mark removed)."""
    return name[len(SUPERSEDED_PREFIX) :] if name.startswith(SUPERSEDED_PREFIX) else name


#: What names the runs a report was computed from (not when or how they were read): publishes with the same
#: values are one series, of which exactly one analysis run is current.
_SERIES_FIELDS = ("tracker", "kind", "tracking_uri", "experiments", "filter", "location", "path", "sweep", "fields")


#: Ports a URI of that scheme means without writing them.
_DEFAULT_PORTS = {"http": 80, "https": 443}


def uri_identity(uri: str) -> str:
    """The store a tracking URI names, one spelling per store: a SQLite or file store by its absolute, resolved
    path (``sqlite:///m.db`` from ``/abs/path`` is ``sqlite:////abs/path/m.db``), a server without credentials,
    default port or trailing ``/`` and with its scheme and host in lower case. Publishes through two spellings
    of one store are one series (:func:`series_key`), so one analysis run stays current.

    Example:
        >>> uri_identity("HTTP://alice:s3cret@Tracker.example:80/")
        'http://tracker.example'
        >>> uri_identity("sqlite:////abs/path/../path/m.db")
        'sqlite:////abs/path/m.db'
    """
    from urllib.parse import urlsplit

    text = str(uri).strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        return os.path.realpath(text) if text else text  # a plain path: MLflow's file store
    scheme = scheme.lower()
    if scheme in ("sqlite", "file"):
        path, query = (rest.split("?", 1) + [""])[:2]
        path = path[1:] if path.startswith("/") else path  # sqlite:///rel.db, sqlite:////abs.db; file:///abs
        if path in ("", ":memory:"):
            return f"{scheme}:///{path}"
        absolute = os.path.realpath(path if scheme == "sqlite" else "/" + path.lstrip("/"))
        prefix = "sqlite:///" if scheme == "sqlite" else "file://"  # sqlite:////abs/m.db, file:///abs/mlruns
        return prefix + absolute + (f"?{query}" if query else "")
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port is not None and port != _DEFAULT_PORTS.get(scheme) else "")
    path = parts.path.rstrip("/")
    return f"{scheme}://{netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def series_key(report: Report) -> str:
    """16 hex digits naming the source of ``report`` (tracker, experiments or project, filter, fields).

    Two publishes of the same source share it whatever the data, so the newer analysis run supersedes
    the older one; a report without source information gets one key per set of algorithms and tasks.

    Example:
        >>> from rl_reliable_logger.analysis.report import Report
        >>> a = Report(provenance={"source": {"tracker": "t", "experiments": [{"id": "1"}], "read_at": 1}})
        >>> b = Report(provenance={"source": {"tracker": "t", "experiments": [{"id": "1"}], "read_at": 2}})
        >>> series_key(a) == series_key(b)
        True
    """
    import json

    src = (report.provenance or {}).get("source")
    if isinstance(src, dict) and src:
        basis: dict[str, Any] = {k: src[k] for k in _SERIES_FIELDS if k in src}
        if isinstance(basis.get("tracking_uri"), str):  # one store, however its URI was spelled
            basis["tracking_uri"] = uri_identity(basis["tracking_uri"])
    else:
        tasks = sorted(map(str, report.scores["task"].unique())) if "task" in report.scores else []
        basis = {"algorithms": sorted(map(str, report.algorithms)), "tasks": tasks}
    return hashlib.sha256(json.dumps(basis, sort_keys=True, default=str).encode()).hexdigest()[:16]


def publisher_claim(lease: float) -> str:
    """``<host> <pid> <expiry>``: who is writing an analysis run, and until when that claim holds."""
    import socket
    import time

    return f"{socket.gethostname()} {os.getpid()} {time.time() + lease:.0f}"


def recovered_line(label: str, run_ids: list[str]) -> str:
    """The console line saying a publish ended the analysis runs an interrupted publish had left open.

    Example:
        >>> recovered_line("MLflow", ["3f2a"])
        'ended 1 interrupted MLflow publish (analysis run 3f2a, now marked failed): the process writing it stopped before it finished'
    """
    n = len(run_ids)
    what = "publish" if n == 1 else "publishes"
    runs = "analysis run" if n == 1 else "analysis runs"
    shown = ", ".join(run_ids[:5]) + (f" and {n - 5} more" if n > 5 else "")
    return (
        f"ended {n} interrupted {label} {what} ({runs} {shown}, now marked failed): "
        f"the process writing {'it' if n == 1 else 'them'} stopped before it finished"
    )


def publisher_gone(claim: str | None, started: float, lease: float) -> bool:
    """True when the publisher named by ``claim`` (:func:`publisher_claim`) cannot still be writing.

    On this host: its process no longer exists (this process itself counts as alive). Elsewhere,
    or with no claim recorded (older versions): the claim expired, ``lease`` seconds after ``started``
    (a Unix time) when none is recorded.
    """
    import socket
    import time

    host, pid, expiry = ((claim or "").split(" ") + ["", "", ""])[:3]
    if host == socket.gethostname() and pid.isdigit():
        if int(pid) == os.getpid():
            return False  # another publish in this process may be writing it
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False  # alive, owned by another user
        return False
    try:
        return float(expiry) < time.time()
    except ValueError:
        return started + lease < time.time()


def run_count(report: Report) -> int:
    """How many runs the scores come from (:meth:`Report.counts`, the one count every output prints)."""
    return report.counts().runs


def source_run_ids(report: Report) -> set[str]:
    """Tracker ids of the runs the report's scores came from."""
    scores = report.scores
    if "tracker_run_id" not in scores.columns:
        return set()
    return {str(v) for v in scores["tracker_run_id"].dropna().unique()}


def check_not_source(target: str | None, sources: Iterable[str], *, keyword: str = "parent_run_id=") -> None:
    """Refuse to publish onto a run the scores came from (call it before any computation)."""
    if target and str(target) in {str(s) for s in sources}:
        raise TrackerError(
            said(
                f"refusing to publish onto run {target}: it is one of the runs the scores came from, and "
                "publishing never changes source runs. Pass another run to ",
                kw(keyword),
                " or publish to a new analysis run.",
            )
        )


@contextmanager
def bundle_files(report: Report, bundle: str | os.PathLike | None, *, figures: bool = True) -> Iterator[Bundle]:
    """The verified bundle of ``report`` in a private temporary folder: only its manifest files exist there.

    With ``bundle`` (a folder written by ``save_report``) its files are verified against the
    manifest and must hold this report (same content hash); otherwise a fresh bundle is written.
    """
    from ...render.writer import save_report

    digest = report_hash(report)
    with tempfile.TemporaryDirectory(prefix="rl-reliable-publish-") as tmp:
        if bundle is not None:
            verified = read_bundle(bundle)
            if verified.report_hash != digest:
                raise InputError(
                    said(
                        f"{Path(bundle) / 'manifest.json'}: the bundle holds another report (hash "
                        f"{verified.report_hash[:8]}, this one {digest[:8]}); write this report there first or "
                        "publish without ",
                        kw("bundle="),
                    )
                )
            verified.copy_to(Path(tmp) / "bundle")
            yield read_bundle(Path(tmp) / "bundle")
        else:
            yield read_bundle(save_report(report, Path(tmp) / "bundle", figures=figures))
