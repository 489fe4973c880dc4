"""MLflow client plumbing: one MlflowClient per tracking URI, bounded retries, clear errors.

``mlflow`` is imported inside these functions, so ``import rl_reliable_logger`` works without it.
Each request is retried by MLflow itself (its ``MLFLOW_HTTP_REQUEST_*`` settings, which this package
never changes: they are process-wide, and changing ``os.environ`` around calls made from several
threads races). The :class:`~rl_reliable_logger.trackers.base.retry.RetryPolicy` handed to
:class:`Tracker` is a wall-clock budget on top: on a server (``http(s)://``) each call runs in a worker
thread and the caller stops waiting when the budget plus one request timeout is used up, however
long MLflow would keep retrying; calls that failed for a transient cause (timeout, 5xx, 429,
connection) are retried within the budget. After that a :class:`TrackerError` names the URI, the
cause, the attempts and the budget.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...data.files import check_regular_file, open_input
from ...errors import TrackerError
from ...lines import one_line, shorten
from ...redaction import redact
from ...wording import Keyword, Message, kw, message_of, said
from ..base.clients import client_key
from ..base.retry import OutOfTime, RetryPolicy, classify, first_contact_problem, no_retries

PAGE_SIZE = 1000


# --------------------------------------------------------------------------- plumbing
def import_mlflow() -> Any:
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
    return str(import_mlflow().get_tracking_uri())


def is_remote(uri: str) -> bool:
    return uri.split(":", 1)[0].lower() in ("http", "https", "databricks")


def sqlite_path(uri: str) -> Path | None:
    if not uri.lower().startswith("sqlite:///"):
        return None
    path = uri[len("sqlite:///") :].split("?", 1)[0]
    if path in ("", ":memory:"):
        return None
    return Path(path if path.startswith("/") else path)


#: The pip package of each Python module a database tracking URI loads through SQLAlchemy (its driver).
_DRIVER_PACKAGES = {
    "psycopg": "psycopg[binary]",
    "psycopg2": "psycopg2-binary",
    "MySQLdb": "mysqlclient",
    "pymysql": "PyMySQL",
    "pymssql": "pymssql",
    "pyodbc": "pyodbc",
    "databricks.sdk": "databricks-sdk",
}
#: Tracking URI schemes MLflow opens as a database (SQLAlchemy), with the database they name.
_DATABASES = {"postgresql": "PostgreSQL", "mysql": "MySQL", "mssql": "SQL Server", "sqlite": "SQLite"}


def missing_module(uri: str, shown_uri: str, err: ImportError, uri_keyword: Keyword = kw("tracking_uri=")) -> Message:
    """One sentence for a tracking URI whose store needs a Python module that is not installed (a database
    driver, typically): the module, the package to ``pip install``, never the URI's password (``shown_uri``).

    Example:
        >>> err = ModuleNotFoundError("No module named 'psycopg'", name="psycopg")
        >>> str(missing_module("postgresql://h/db", "postgresql://h/db", err))[:79]
        'the postgresql:// tracking URI postgresql://h/db needs a PostgreSQL driver that'
    """
    scheme = uri.split(":", 1)[0].lower()
    module = err.name or one_line(err, limit=120)
    package = _DRIVER_PACKAGES.get(module, module.split(".", 1)[0])
    base = scheme.split("+", 1)[0]
    database = _DATABASES.get(base)
    if database is None:
        return said(
            f"the tracking URI {shown_uri} needs the Python module {module!r}, which is not installed: "
            f"`pip install '{package}'`, or point ",
            uri_keyword,
            " / MLFLOW_TRACKING_URI at another store.",
        )
    return said(
        f"the {scheme}:// tracking URI {shown_uri} needs a {database} driver that is not installed (Python module "
        f"{module!r}): `pip install '{package}'`, or name an installed driver in the URI ({base}+DRIVER://...).",
    )


#: Tables every MLflow SQLite store has (the schema migrations' own table and the experiments).
_MLFLOW_TABLES = {"alembic_version", "experiments", "runs"}


def _not_an_mlflow_store(path: Path) -> str | None:
    """Why the existing file ``path`` is not an MLflow SQLite store (None: it is one, or it is empty).

    Read-only and without MLflow: the file is opened with SQLite's ``mode=ro``, so nothing is created
    or changed in it. An empty file is accepted (MLflow creates its store in it, as in a new file)."""
    import sqlite3

    if path.stat().st_size == 0:
        return None
    with open_input(path, "MLflow database") as fh:
        if fh.read(16) != b"SQLite format 3\x00":
            return "not an SQLite file"
    try:
        with sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as err:
        return f"SQLite cannot read it: {err}"
    missing = sorted(_MLFLOW_TABLES - tables)
    return f"an SQLite database without MLflow's tables {', '.join(missing)}" if missing else None


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


#: How messages name the tracking URI of a Source's client: its ``client_kwargs=`` key (``--tracking-uri`` on the
#: command line). A sink and ``push_pending`` take ``tracking_uri=`` itself and pass that keyword instead.
URI_KEYWORD = client_key("tracking_uri")


class Tracker:
    """One MlflowClient on one URI; every call goes through :meth:`call` (retries + clear errors)."""

    def __init__(
        self,
        tracking_uri: str | None = None,
        *,
        must_exist: bool = True,
        retry: RetryPolicy | None = None,
        uri_keyword: Keyword = URI_KEYWORD,
    ):
        mlflow = import_mlflow()
        self.uri_keyword = uri_keyword  # how the caller's messages name the URI: a client_kwargs key, or a keyword
        self.retry = retry if retry is not None else no_retries()
        self.uri = _resolve_uri(tracking_uri)
        self.shown_uri = redact(self.uri)
        path = sqlite_path(self.uri)
        if path is not None and not path.is_dir():
            check_regular_file(path, "MLflow database")  # a FIFO would stall SQLite, a device never end
        if must_exist and path is not None and not path.exists():
            raise TrackerError(
                said(
                    f"no MLflow database at {path} (tracking URI {self.shown_uri}). MLflow's default store is "
                    "mlflow.db in the current folder: run from the folder you trained in, or pass ",
                    self.uri_keyword,
                    " / set MLFLOW_TRACKING_URI (e.g. sqlite:////abs/path/mlflow.db or http://host:5000).",
                )
            )
        if path is not None and path.exists() and (path.is_dir() or not os.access(path, os.R_OK)):
            # MLflow would retry opening it for about 100 s, logging a multi-line warning each time
            why = "is a folder, not a database file" if path.is_dir() else "cannot be read (permission denied)"
            raise TrackerError(f"the MLflow database {path} {why} (tracking URI {self.shown_uri}).")
        if path is not None and path.is_file():
            problem = _not_an_mlflow_store(path)
            if problem:  # MLflow would create its tables in the user's database before any other check
                raise TrackerError(
                    said(
                        f"{path} is not an MLflow database ({problem}; tracking URI {self.shown_uri}); it was not "
                        "opened and is left unchanged. Point ",
                        self.uri_keyword,
                        " / MLFLOW_TRACKING_URI at the MLflow store you trained with.",
                    )
                )
        # a zero budget waits for nothing, a starting server included: a closed port is said at once (MLflow's own
        # HTTP retries of a refused connection would otherwise use up the whole last request as a "timeout")
        if is_remote(self.uri) and (not self.retry.wait_for_start or self.retry.total <= 0):
            refused = first_contact_problem(self.uri)
            if refused:
                raise TrackerError(
                    said(
                        f"could not connect to the MLflow tracking server at {self.shown_uri} ({refused}): nothing "
                        "answers there. Check the host and port, and that the server is running; pass ",
                        kw("retry_for="),
                        " SECONDS (more than 0) to wait for a server that is still starting.",
                    )
                )
        try:
            self.client = mlflow.MlflowClient(tracking_uri=self.uri)  # a database URI opens its store here
        except ImportError as err:  # MLflow's SQLAlchemy store without the database's driver
            raise TrackerError(missing_module(self.uri, self.shown_uri, err, self.uri_keyword)) from None

    def single_attempt(self) -> Tracker:
        """This tracker with a single attempt (no retries, still bounded): for clean-up after a failure."""
        quick = copy.copy(self)
        quick.retry = dataclasses.replace(self.retry, total=0.0, progress=None)
        return quick

    def call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` within this tracker's time budget; tracker failures become TrackerError."""
        from mlflow.exceptions import MlflowException

        remote = is_remote(self.uri)

        def once() -> Any:
            try:
                return fn(*args, **kwargs)
            except MlflowException as err:
                if remote and _is_connection_error(err):
                    raise self._failure(what, err) from err
                raise
            except OSError as err:  # requests' ConnectionError is an OSError
                if remote:
                    raise self._failure(what, err) from err
                raise

        if not remote:  # a local store answers or fails by itself: its errors are raised as they are
            return self.retry.call(once, what, bounded=False, transient=lambda err: False)
        return self.retry.call(once, what, explain=lambda err: self._unreachable(what, err))

    def _failure(self, what: str, err: BaseException) -> TrackerError:
        failure = TrackerError(self._unreachable(what, err))
        failure.tracker_cause = classify(err)  # type: ignore[attr-defined]
        return failure

    def _unreachable(self, what: str, err: BaseException) -> Message | str:
        """Whole sentences: what failed and why, then what to check (the retry policy adds attempts and budget)."""
        if isinstance(err, TrackerError):
            return message_of(err)
        detail, cause = shorten(one_line(err), 600), classify(err)
        if isinstance(err, OutOfTime):  # MLflow was still retrying inside the request: say why, when a probe can
            # (a refused port answers at once; a silent host is left a "timeout" after half a second, so the
            # sentence costs the --retry-for promise at most that)
            refused = first_contact_problem(self.uri, timeout=0.5)
            if refused:
                cause, detail = "connection", f"{refused}; {detail}"
        return said(
            f"could not reach the MLflow tracking server at {self.shown_uri} while {what} ({cause}: "
            f"{detail}). Check that the server is running (`mlflow server --host ... --port ...`), that the URI is "
            "right (",
            self.uri_keyword,
            " / MLFLOW_TRACKING_URI) and that no proxy or firewall blocks it. MLflow's own retries within each "
            "request follow MLFLOW_HTTP_REQUEST_MAX_RETRIES and MLFLOW_HTTP_REQUEST_TIMEOUT.",
        )

    # ------------------------------------------------------------------ experiments
    def experiments(self, names_or_ids: Sequence[str]) -> list[Any]:
        """Resolve experiment names or ids; a missing one is an error listing the ones that exist."""
        from mlflow.exceptions import MlflowException

        found: list[Any] = []
        missing: list[str] = []
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
                said(
                    f"MLflow experiment(s) not found at {self.shown_uri}: {', '.join(repr(m) for m in missing)}. "
                    f"Existing experiments: {listing}. Pass ",
                    kw("experiments="),
                    " with one of these names or ids (or point ",
                    self.uri_keyword,
                    " at the store you trained with).",
                )
            )
        return found

    def search(self, experiment_ids: list[str], filter_string: str, page_size: int = PAGE_SIZE) -> list[Any]:
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


def run_page_url(uri: str, experiment_id: str, run_id: str) -> str | None:
    if uri.split(":", 1)[0].lower() in ("http", "https"):
        return f"{redact(uri).rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"
    return None
