"""A loopback stand-in for the W&B server, good enough for the Public API paths we use.

Why: since wandb 0.31 the Public API's GraphQL goes through the Go ``wandb-core`` sidecar, so
Python HTTP mocking libraries never see the requests. This is a real stdlib ``http.server`` on
127.0.0.1 that answers the operations the real client sends (dispatched on the GraphQL operation
name): ``Viewer``, ``GetDefaultEntity``, ``Runs`` (cursor pagination, MongoDB-style ``filters``),
``Run``, ``GetSweep``/``GetSweepLegacy``, ``RunHistoryKeys``, ``RunParquetHistory`` and the HTTP
Range GETs on the parquet URLs that ``scan_history`` makes, ``ArtifactByName`` style lookups for
the sink's idempotence check, and fault injection (HTTP 500, 429, slow answers, auth failure).

Online runs too (``wandb.init(mode="online")`` through wandb-core): ``UpsertBucket`` creates or
updates a stored run; ``POST /files/<entity>/<project>/<run>/file_stream`` appends history rows,
replaces the summary and, with ``complete``, sets the exit code and state (0 -> finished, else
failed); ``CreateRunFiles``, ``CreateArtifactManifest`` and ``CreateArtifactFiles`` hand out upload
URLs on this server (``PUT /upload/...``, kept in ``uploads``; artifact files are stored by MD5 and
checked against it); ``CreateArtifact`` makes a PENDING version (the same digest again reuses a
committed one, as W&B does) and ``CommitArtifact`` commits it once its manifest and every file
were uploaded, giving it its version number and moving ``latest`` and its aliases to it. Any
GraphQL operation not answered here is refused with HTTP 400 and listed in ``unknown``.
Where the client cannot see what the real server does, the stand-in assumes: an uncommitted
version has no aliases (so it is not found by ``NAME:ALIAS``), and no optional server features.

Usage (pytest)::

    from tests.support.wandb_standin import wandb_standin   # fixture
    def test_x(wandb_standin):
        wandb_standin.add_run("ent", "proj", id="r1", config={...}, summary={...}, history=[{...}])
        ...  # WANDB_BASE_URL / WANDB_API_KEY are set by the fixture

Everything recorded: ``standin.requests`` lists ``(operation, variables)`` for every GraphQL call;
``file_stream``, ``uploads``, ``created_artifacts()`` and ``run()`` show what a client wrote.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote

API_KEY = "x" * 40  # any 40-character key passes the client's format check
_OP = re.compile(r"(query|mutation)\s+(\w+)")


# ---------------------------------------------------------------------------- filters (Mongo subset)
def _get_field(run: dict[str, Any], key: str) -> tuple[bool, Any]:
    """Resolve a W&B filter field on a stored run; returns (present, value)."""
    if key.startswith("config."):
        rest = key[len("config.") :]
        if rest.endswith(".value"):
            rest = rest[: -len(".value")]
        return (rest in run["config"], run["config"].get(rest))
    for prefix in ("summary_metrics.", "summaryMetrics.", "summary."):
        if key.startswith(prefix):
            rest = key[len(prefix) :]
            return (rest in run["summary"], run["summary"].get(rest))
    mapping = {
        "name": "id",
        "id": "id",
        "displayName": "displayName",
        "display_name": "displayName",
        "state": "state",
        "tags": "tags",
        "group": "group",
        "jobType": "jobType",
        "sweep": "sweepName",
        "createdAt": "createdAt",
    }
    if key in mapping:
        return (True, run.get(mapping[key]))
    return (False, None)


def _cmp(op: str, value: Any, arg: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    if op == "$eq":
        return any(v == arg for v in values)
    if op == "$ne":
        return all(v != arg for v in values)
    if op == "$in":
        return any(v in arg for v in values)
    if op == "$nin":
        return all(v not in arg for v in values)
    if op == "$regex":
        return any(isinstance(v, str) and re.search(arg, v) is not None for v in values)
    try:
        if op == "$gt":
            return any(v is not None and v > arg for v in values)
        if op == "$gte":
            return any(v is not None and v >= arg for v in values)
        if op == "$lt":
            return any(v is not None and v < arg for v in values)
        if op == "$lte":
            return any(v is not None and v <= arg for v in values)
    except TypeError:
        return False
    raise ValueError(f"stand-in: unsupported operator {op}")


def matches(run: dict[str, Any], flt: dict[str, Any] | None) -> bool:
    """Evaluate a MongoDB-style W&B filter (the documented operator subset) against a stored run."""
    if not flt:
        return True
    for key, cond in flt.items():
        if key == "$and":
            if not all(matches(run, c) for c in cond):
                return False
        elif key == "$or":
            if not any(matches(run, c) for c in cond):
                return False
        elif key == "$nor":
            if any(matches(run, c) for c in cond):
                return False
        else:
            present, value = _get_field(run, key)
            if isinstance(cond, dict) and cond and all(k.startswith("$") for k in cond):
                for op, arg in cond.items():
                    if op == "$exists":
                        if bool(arg) != (present and value is not None):
                            return False
                    elif not (present and _cmp(op, value, arg)):
                        if op in ("$ne", "$nin") and not present:
                            continue
                        return False
            elif not (present and _cmp("$eq", value, cond)):
                return False
    return True


# ---------------------------------------------------------------------------- server state
@dataclass
class Fault:
    """One injected failure: answer ``op`` with ``status`` (or sleep ``delay`` seconds first)."""

    op: str  # GraphQL operation name, or "*" for any
    status: int = 500
    delay: float = 0.0
    times: int = 1


@dataclass
class StandIn:
    """Server state plus helpers to populate it; one per test."""

    host: str = "127.0.0.1"
    port: int = 0
    api_key: str = API_KEY
    projects: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    sweeps: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    range_requests: list[tuple[str, str | None]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    parquet: dict[str, bytes] = field(default_factory=dict)
    #: Custom chart presets created through ``createCustomChart``: ``"<entity>/<name>"`` -> its variables.
    custom_charts: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Reports saved through ``upsertView`` (their variables, ``spec`` is the report JSON).
    views: list[dict[str, Any]] = field(default_factory=list)
    #: Bytes PUT to the upload URLs the stand-in hands out, by storage path
    #: (``run/<entity>/<project>/<run>/<file>``, ``manifest/<artifact id>``, ``file/<md5 hex>``).
    uploads: dict[str, bytes] = field(default_factory=dict)
    #: Every file_stream POST: ``(entity/project/run, body)`` with the body as the client sent it.
    file_stream: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: GraphQL operations the stand-in does not know (answered with HTTP 400, so the client fails).
    unknown: list[str] = field(default_factory=list)
    #: Injected upload failures: storage-path substring -> remaining count (answered with HTTP 500).
    upload_faults: dict[str, int] = field(default_factory=dict)
    default_entity: str = "ent"
    on_request: Callable[[str, dict[str, Any]], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- population
    def add_run(
        self,
        entity: str,
        project: str,
        *,
        id: str,
        name: str | None = None,
        state: str = "finished",
        config: dict[str, Any] | None = None,
        summary: dict[str, Any] | None = None,
        tags: list[str] | None = None,
        group: str | None = None,
        job_type: str | None = None,
        sweep: str | None = None,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Store a run; ``history`` is a list of rows with ``_step`` (served as parquet)."""
        runs = self.projects.setdefault((entity, project), [])
        n = len(runs)
        run = {
            "id": id,
            "displayName": name or id,
            "state": state,
            "config": dict(config or {}),
            "summary": dict(summary or {}),
            "tags": list(tags or []),
            "group": group,
            "jobType": job_type,
            "sweepName": sweep,
            "createdAt": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}",
            "history": list(history or []),
            "entity": entity,
            "project": project,
        }
        runs.append(run)
        if run["history"]:
            self.parquet[f"{entity}-{project}-{id}"] = _to_parquet(run["history"])
        return run

    def add_sweep(
        self,
        entity: str,
        project: str,
        sweep_id: str,
        *,
        state: str = "FINISHED",
        expected: int | None = None,
        config: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        sw = {
            "id": sweep_id,
            "entity": entity,
            "project": project,
            "state": state,
            "runCountExpected": expected,
            "config": config or {"method": "grid", "parameters": {}},
        }
        self.sweeps[sweep_id] = sw
        return sw

    def add_artifact(
        self,
        entity: str,
        project: str,
        name: str,
        *,
        type: str,
        digest: str,
        aliases: list[str],
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store an artifact version (looked up by ``name:alias`` or ``name:vN``)."""
        version = sum(1 for a in self.artifacts if a["name"] == name)
        art = {
            "id": base64.b64encode(f"Artifact:{name}:{version}".encode()).decode(),
            "entity": entity,
            "project": project,
            "name": name,
            "type": type,
            "digest": digest,
            "aliases": list(aliases),
            "version": version,
            "metadata": metadata or {},
        }
        self.artifacts.append(art)
        return art

    def fail(self, op: str, status: int = 500, *, times: int = 1, delay: float = 0.0) -> None:
        """Inject ``times`` failures on operation ``op`` ("*" = any)."""
        self.faults.append(Fault(op, status, delay, times))

    def ops(self) -> list[str]:
        return [op for op, _ in self.requests]

    def run(self, entity: str, project: str, run_id: str) -> dict[str, Any] | None:
        """The stored run (also the ones the client created with ``wandb.init``), or None."""
        return next((r for r in self.projects.get((entity, project), []) if r["id"] == run_id), None)

    def created_artifacts(self, name: str | None = None) -> list[dict[str, Any]]:
        """Artifact versions the client created (``createArtifact``), in creation order."""
        return [a for a in self.artifacts if "created_by" in a and (name is None or a["name"] == name)]

    def artifact_file(self, art: dict[str, Any], path: str) -> bytes:
        """The bytes of one file of a committed artifact, found through its uploaded manifest."""
        entry = art["manifest"]["contents"][path]
        return self.uploads[f"file/{base64.b64decode(entry['digest']).hex()}"]

    # -- internals
    def _take_fault(self, op: str) -> Fault | None:
        with self.lock:
            for f in self.faults:
                if f.times > 0 and (f.op == op or f.op == "*"):
                    f.times -= 1
                    return f
        return None


def _to_parquet(rows: list[dict[str, Any]]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    keys: list[str] = []
    for row in rows:
        for k in row:
            if k not in keys:
                keys.append(k)
    cols = {k: [row.get(k) for row in rows] for k in keys}
    if "_step" in cols:
        cols["_step"] = [int(v) for v in cols["_step"]]
    table = pa.table(cols)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _run_node(st: StandIn, run: dict[str, Any], project_id: str) -> dict[str, Any]:
    keys = sorted({k for row in run["history"] for k in row})
    last_step = max((int(r.get("_step", 0)) for r in run["history"]), default=-1)
    return {
        "projectId": project_id,
        "id": base64.b64encode(f"Run:v1:{run['id']}:{run['project']}:{run['entity']}".encode()).decode(),
        "tags": run["tags"],
        "name": run["id"],
        "displayName": run["displayName"],
        "sweepName": run["sweepName"],
        "state": run["state"],
        "config": json.dumps({k: {"value": v, "desc": None} for k, v in run["config"].items()}),
        "group": run["group"],
        "jobType": run["jobType"],
        "commit": None,
        "readOnly": False,
        "createdAt": run["createdAt"],
        "heartbeatAt": run.get("heartbeatAt") or _heartbeat(run),
        "description": None,
        "notes": None,
        "systemMetrics": "{}",
        "summaryMetrics": json.dumps(run["summary"]),
        "historyLineCount": len(run["history"]),
        "user": {"name": "tester", "username": "tester"},
        "historyKeys": {
            "lastStep": last_step,
            "keys": {k: {"typeCounts": [{"type": "number", "count": len(run["history"])}]} for k in keys},
        },
    }


def _membership(art: dict[str, Any]) -> dict[str, Any]:
    """``ArtifactMembershipFragment`` for a stored artifact (shape the 0.31 pydantic models accept)."""
    proj = {"id": "UHJvamVjdDox", "internalId": "1", "name": art["project"], "entity": {"name": art["entity"]}}
    coll = {"__typename": "ArtifactSequence", "name": art["name"], "project": proj}
    aliases = [{"__typename": "ArtifactAlias", "id": f"al{i}", "alias": a} for i, a in enumerate(art["aliases"])]
    return {
        "__typename": "ArtifactCollectionMembership",
        "id": f"mem-{art['id']}",
        "versionIndex": art["version"],
        "createdAt": "2026-01-01T00:00:00",
        "aliases": aliases,
        "artifactCollection": coll,
        "artifact": {
            "__typename": "Artifact",
            "id": art["id"],
            "artifactSequence": coll,
            "versionIndex": art["version"],
            "artifactType": {"name": art["type"]},
            "description": None,
            "metadata": json.dumps(art.get("metadata", {})),
            "ttlDurationSeconds": -1,
            "ttlIsInherited": True,
            "tags": [],
            "historyStep": None,
            "state": art.get("state", "COMMITTED"),
            "size": 0,
            "digest": art["digest"],
            "digestAlgorithm": "MANIFEST_MD5",
            "commitHash": None,
            "fileCount": 0,
            "createdAt": "2026-01-01T00:00:00",
            "updatedAt": None,
        },
    }


def _by_name(st: StandIn, entity: str, project: str, name: str) -> dict[str, Any] | None:
    """The version ``NAME:ALIAS`` or ``NAME:vN`` (``NAME`` alone means ``latest``); only committed ones."""
    base, _, alias = name.partition(":")
    alias = alias or "latest"
    for art in st.artifacts:
        if (
            art["name"] == base
            and (art["entity"], art["project"]) == (entity, project)
            and art.get("state", "COMMITTED") == "COMMITTED"
            and (alias in art["aliases"] or alias == f"v{art['version']}")
        ):
            return art
    return None


def _project_id(st: StandIn, entity: str, project: str) -> str:
    keys = list(st.projects)
    return str(keys.index((entity, project)) + 1) if (entity, project) in st.projects else "999"


#: Public API operations answered by :func:`_answer`; any other operation name is refused (HTTP 400).
_READ_OPS = (
    "Viewer",
    "CreateCustomChart",
    "ProjectInternalId",
    "GetProjects",
    "CreateProject",
    "upsertView",
    "GetDefaultEntity",
    "DefaultEntity",
    "Runs",
    "Run",
    "RunHistoryKeys",
    "RunParquetHistory",
    "HistoryPage",
    "RunSampledHistory",
    "GetSweep",
    "GetSweepLegacy",
    "Sweep",
    "ArtifactMembershipByName",
    "ArtifactType",
    "ArtifactCreatedBy",
    "ArtifactByID",
)


def _answer(st: StandIn, op: str, variables: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` object for one GraphQL operation."""
    entity = variables.get("entity") or variables.get("entityName") or st.default_entity
    project = variables.get("project") or variables.get("projectName")
    if op == "Viewer":
        return {
            "viewer": {
                "id": "VXNlcjox",
                "entity": st.default_entity,
                "username": "tester",
                "flags": "{}",
                "teams": {"edges": []},
                "admin": False,
                "email": "t@example.invalid",
            }
        }
    if op == "CreateCustomChart":  # Api().create_custom_chart; re-creating a preset replaces it here
        key = f"{variables['entity']}/{variables['chartName']}"
        st.custom_charts[key] = dict(variables)
        return {"createCustomChart": {"chart": {"id": key}}}
    # W&B Reports (wandb-workspaces): project lookups, then upsertView with the report spec
    if op == "ProjectInternalId":
        return {"project": {"id": "UHJvamVjdDox", "internalId": "1"}}
    if op == "GetProjects":
        edges = [
            {"node": {"id": "UHJvamVjdDox", "name": p, "entityName": e}, "cursor": "c"}
            for (e, p) in st.projects
            if e == entity
        ]
        return {
            "models": {"pageInfo": {"__typename": "PageInfo", "endCursor": None, "hasNextPage": False}, "edges": edges}
        }
    if op == "CreateProject":
        inp = variables.get("input") or {}
        proj = {
            "id": "UHJvamVjdDox",
            "name": inp.get("name"),
            "entityName": inp.get("entityName"),
            "description": None,
            "access": "PRIVATE",
            "views": "{}",
        }
        return {"result": {"project": proj, "model": proj, "inserted": True}}
    if op == "upsertView":
        st.views.append(dict(variables))
        view_id = f"VmlldzoxMjM{len(st.views)}"
        return {
            "upsertView": {
                "view": {
                    "id": view_id,
                    "type": variables.get("type"),
                    "name": variables.get("name"),
                    "displayName": variables.get("displayName"),
                    "description": variables.get("description"),
                    "project": {
                        "id": "UHJvamVjdDox",
                        "name": variables.get("projectName"),
                        "entityName": variables.get("entityName"),
                    },
                    "spec": variables.get("spec"),
                    "updatedAt": "2026-11-23T00:00:00",
                },
                "inserted": True,
            }
        }
    if op in ("GetDefaultEntity", "DefaultEntity"):
        return {"viewer": {"id": "VXNlcjox", "entity": st.default_entity, "username": "tester"}}
    if op == "Runs":
        runs = [r for r in st.projects.get((entity, project), [])]
        flt = variables.get("filters")
        flt = json.loads(flt) if isinstance(flt, str) else flt
        selected = [r for r in runs if matches(r, flt)]
        order = variables.get("order") or "+created_at"
        reverse = order.startswith("-")
        if "created_at" in order:
            selected.sort(key=lambda r: r["createdAt"], reverse=reverse)
        cursor = variables.get("cursor")
        start = int(cursor) if cursor else 0
        per_page = int(variables.get("perPage") or 50)
        page = selected[start : start + per_page]
        pid = _project_id(st, entity, project)
        edges = [{"node": _run_node(st, r, pid), "cursor": str(start + i + 1)} for i, r in enumerate(page)]
        has_next = start + per_page < len(selected)
        if (entity, project) not in st.projects:
            return {"project": None}
        return {
            "project": {
                "internalId": pid,
                "runCount": len(selected),
                "readOnly": False,
                "runs": {"edges": edges, "pageInfo": {"endCursor": str(start + len(page)), "hasNextPage": has_next}},
            }
        }
    if op in ("Run", "RunHistoryKeys", "RunParquetHistory", "HistoryPage", "RunSampledHistory"):
        name = variables.get("name") or variables.get("runName") or variables.get("run")
        run = next((r for r in st.projects.get((entity, project), []) if r["id"] == name), None)
        if run is None:
            return {"project": {"run": None}} if (entity, project) in st.projects else {"project": None}
        node = _run_node(st, run, _project_id(st, entity, project))
        if op == "RunParquetHistory":
            key = f"{entity}-{project}-{run['id']}"
            urls = [f"{st.base_url}/files/{key}.parquet"] if key in st.parquet else []
            return {"project": {"run": {"parquetHistory": {"parquetUrls": urls, "liveData": []}}}}
        if op == "RunSampledHistory":
            node["sampledHistory"] = [run["history"]]
            return {"project": {"run": node}}
        if op == "HistoryPage":
            lo, hi = int(variables.get("minStep", 0)), int(variables.get("maxStep", 1 << 60))
            rows = [json.dumps(r) for r in run["history"] if lo <= int(r.get("_step", 0)) < hi]
            return {"project": {"run": {"history": rows[: int(variables.get("pageSize", 1000))]}}}
        return {"project": {"run": node}}
    if op in ("GetSweep", "GetSweepLegacy", "Sweep"):
        sid = variables.get("name") or variables.get("sweep") or variables.get("id")
        sw = st.sweeps.get(sid)
        if sw is None or (sw["entity"], sw["project"]) != (entity, project):
            return {"project": {"sweep": None}}
        runs = [r for r in st.projects.get((entity, project), []) if r["sweepName"] == sid]
        import yaml  # wandb depends on PyYAML

        return {
            "project": {
                "sweep": {
                    "id": base64.b64encode(f"Sweep:{sid}".encode()).decode(),
                    "name": sid,
                    "displayName": sid,
                    "state": sw["state"],
                    "bestLoss": None,
                    "config": yaml.safe_dump(sw["config"]),
                    "createdAt": "2026-01-01T00:00:00",
                    "heartbeatAt": "2026-01-01T00:00:00",
                    "updatedAt": "2026-01-01T00:00:00",
                    "earlyStopJobRunning": False,
                    "controller": None,
                    "scheduler": None,
                    "description": None,
                    "runCount": len(runs),
                    "runCountExpected": sw["runCountExpected"],
                }
            }
        }
    if op == "ArtifactMembershipByName":
        art = _by_name(st, entity, project, variables.get("name") or "")
        return {"project": {"artifactCollectionMembership": _membership(art) if art else None}}
    if op == "ArtifactByID":  # Artifact.wait() reads the logged version back
        art = next((a for a in st.artifacts if a["id"] == variables["id"]), None)
        return {"artifact": _membership(art)["artifact"] if art else None}
    if op == "ArtifactCreatedBy":  # Artifact.logged_by(): the run that created this version
        art = _find_artifact(st, variables["id"])
        run = st.run(art["entity"], art["project"], art["created_by"]) if art.get("created_by") else None
        creator = None
        if run is not None:
            proj = {
                "id": _b64(f"Project:{_project_id(st, art['entity'], art['project'])}"),
                "internalId": _project_id(st, art["entity"], art["project"]),
                "name": art["project"],
                "entity": {"name": art["entity"]},
            }
            creator = {"__typename": "Run", "id": _run_gid(run), "name": run["id"], "project": proj}
        return {"artifact": {"createdBy": creator}}
    if op == "ArtifactType":  # log_artifact asks which type an existing collection has
        art = _by_name(st, entity, project, variables.get("name") or "")
        return {"project": {"artifact": {"artifactType": {"name": art["type"]}} if art else None}}
    raise AssertionError(f"{op} is in _READ_OPS but has no answer")


# ---------------------------------------------------------------------------- run writing (online wandb.init)
#: Operations the real client sends while it creates a run, streams it, uploads files, logs an
#: artifact and finishes. Each answer has the shape wandb-core 0.31 asks for (query texts in the
#: ``wandb-core`` binary); state changes are recorded so tests read back what the client wrote.
_WRITE_OPS = (
    "ServerFeaturesQuery",
    "UpsertBucket",
    "RunResumeStatus",
    "CreateRunFiles",
    "CreateArtifact",
    "CreateArtifactManifest",
    "CreateArtifactFiles",
    "CommitArtifact",
    "UseArtifact",
    "FetchArtifactDigestAlgorithm",
    "XXHashDigestsEnabled",
)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _run_gid(run: dict[str, Any]) -> str:
    return _b64(f"Run:v1:{run['id']}:{run['project']}:{run['entity']}")


def _config_values(text: str | None) -> dict[str, Any]:
    """The client sends config as ``{"key": {"value": v, "desc": ...}}``; stored runs keep plain values."""
    if not text:
        return {}
    raw = json.loads(text)
    return {k: (v.get("value") if isinstance(v, dict) and "value" in v else v) for k, v in raw.items()}


def _upsert_bucket(st: StandIn, v: dict[str, Any]) -> dict[str, Any]:
    entity = v.get("entity") or st.default_entity
    project = v.get("project") or "uncategorized"
    run_id = v.get("name")
    if not run_id and v.get("id"):  # the Public API's run.update(): the stored run named by its storage id
        return _answer_run_update(st, v)
    if not run_id:
        raise ValueError("UpsertBucket without a run name or id")
    run = st.run(entity, project, run_id)
    inserted = run is None
    if run is None:
        run = st.add_run(entity, project, id=run_id, state="running")
        run["created_by"] = "client"
    fields = {"displayName": "displayName", "groupName": "group", "jobType": "jobType", "state": "state"}
    for var, key in fields.items():
        if v.get(var) is not None:
            run[key] = v[var]
    if v.get("sweep") is not None:
        run["sweepName"] = v["sweep"]
    if v.get("tags") is not None:
        run["tags"] = list(v["tags"])
    if v.get("notes") is not None:
        run["notes"] = v["notes"]
    if v.get("config") is not None:
        run["config"] = _config_values(v["config"])
    if v.get("summaryMetrics") is not None:
        run["summary"].update(json.loads(v["summaryMetrics"]))
    run.setdefault("upserts", []).append(dict(v))
    pid = _project_id(st, entity, project)
    return {
        "upsertBucket": {
            "bucket": {
                "id": _run_gid(run),
                "name": run["id"],
                "displayName": run["displayName"],
                "description": None,
                "config": json.dumps({k: {"value": x, "desc": None} for k, x in run["config"].items()}),
                "sweepName": run["sweepName"],
                "project": {
                    "id": _b64(f"Project:{pid}"),
                    "name": project,
                    "entity": {"id": _b64(f"Entity:{entity}"), "name": entity},
                },
                "historyLineCount": len(run["history"]),
            },
            "inserted": inserted,
        }
    }


def _find_artifact(st: StandIn, artifact_id: str) -> dict[str, Any]:
    art = next((a for a in st.artifacts if a["id"] == artifact_id), None)
    if art is None:
        raise ValueError(f"no artifact with id {artifact_id!r}")
    return art


def _create_artifact(st: StandIn, inp: dict[str, Any]) -> dict[str, Any]:
    entity = inp.get("entityName") or st.default_entity
    project = inp.get("projectName") or "uncategorized"
    name = inp["artifactCollectionName"]
    same = [a for a in st.artifacts if (a["entity"], a["project"], a["name"]) == (entity, project, name)]
    aliases = [a["alias"] for a in inp.get("aliases") or []]
    for art in same:  # W&B keeps one version per digest: logging the same content again reuses it
        if art.get("digest") == inp.get("digest") and art.get("state") == "COMMITTED":
            _move_aliases(st, art, aliases)
            return _created(art, same)
    art = st.add_artifact(entity, project, name, type=inp["artifactTypeName"], digest=inp["digest"], aliases=[])
    art.update(
        state="PENDING",
        created_by=inp.get("runName"),
        pending_aliases=aliases,
        description=inp.get("description"),
        metadata=json.loads(inp["metadata"]) if inp.get("metadata") else {},
        input=dict(inp),
        manifest=None,
        version=None,
    )
    return _created(art, same)


def _created(art: dict[str, Any], same: list[dict[str, Any]]) -> dict[str, Any]:
    committed = [a for a in same if a.get("state", "COMMITTED") == "COMMITTED"]
    latest = {"id": committed[-1]["id"]} if committed else None
    return {
        "createArtifact": {
            "artifact": {"id": art["id"], "state": art["state"], "artifactSequence": {"latestArtifact": latest}}
        }
    }


def _move_aliases(st: StandIn, art: dict[str, Any], aliases: list[str]) -> None:
    """An alias names one version of a collection: adding it to ``art`` takes it from the others."""
    for other in st.artifacts:
        if other is not art and (other["entity"], other["project"], other["name"]) == (
            art["entity"],
            art["project"],
            art["name"],
        ):
            other["aliases"] = [a for a in other["aliases"] if a not in aliases]
    art["aliases"] = list(dict.fromkeys([*art["aliases"], *aliases]))


def _commit_artifact(st: StandIn, artifact_id: str) -> dict[str, Any]:
    art = _find_artifact(st, artifact_id)
    if art["state"] != "COMMITTED":
        if art.get("manifest") is None:
            raise ValueError(f"commitArtifact {artifact_id!r} before its manifest was uploaded")
        for path, entry in art["manifest"]["contents"].items():
            key = f"file/{base64.b64decode(entry['digest']).hex()}"
            if key not in st.uploads:
                raise ValueError(f"commitArtifact {artifact_id!r}: file {path!r} was never uploaded")
        same = [
            a
            for a in st.artifacts
            if (a["entity"], a["project"], a["name"]) == (art["entity"], art["project"], art["name"])
        ]
        art["version"] = sum(1 for a in same if a.get("state") == "COMMITTED")
        art["state"] = "COMMITTED"
        _move_aliases(st, art, ["latest", *art.pop("pending_aliases", [])])
    return {"commitArtifact": {"artifact": {"id": art["id"], "digest": art["digest"]}}}


def _answer_write(st: StandIn, op: str, v: dict[str, Any]) -> dict[str, Any]:
    if op == "ServerFeaturesQuery":
        return {"serverInfo": {"features": []}}  # a plain server: no optional features
    if op == "UpsertBucket":
        return _upsert_bucket(st, v)
    if op == "RunResumeStatus":
        run = st.run(v.get("entity") or st.default_entity, v.get("project") or "uncategorized", v["name"])
        bucket = None
        if run is not None:
            bucket = {
                "id": _run_gid(run),
                "name": run["id"],
                "summaryMetrics": json.dumps(run["summary"]),
                "displayName": run["displayName"],
                "logLineCount": 0,
                "historyLineCount": len(run["history"]),
                "eventsLineCount": 0,
                "historyTail": json.dumps([json.dumps(r) for r in run["history"][-10:]]),
                "eventsTail": "[]",
                "config": json.dumps({k: {"value": x} for k, x in run["config"].items()}),
                "tags": run["tags"],
                "notes": run.get("notes"),
                "wandbConfig": json.dumps({}),
            }
        return {
            "model": {
                "id": "UHJvamVjdDox",
                "name": v.get("project"),
                "entity": {"id": "e", "name": v.get("entity")},
                "bucket": bucket,
            }
        }
    if op == "CreateRunFiles":
        run = st.run(v["entity"], v["project"], v["run"])
        if run is None:
            raise ValueError(f"createRunFiles for unknown run {v['entity']}/{v['project']}/{v['run']}")
        prefix = f"run/{v['entity']}/{v['project']}/{v['run']}/"
        files = [{"name": f, "uploadUrl": f"{st.base_url}/upload/{prefix}{f}"} for f in v["files"]]
        return {"createRunFiles": {"runID": _run_gid(run), "uploadHeaders": [], "files": files}}
    if op == "CreateArtifact":
        return _create_artifact(st, v["input"])
    if op == "CreateArtifactManifest":
        art = _find_artifact(st, v["artifactID"])
        art["manifest_digest"] = v["digest"]
        mid = _b64(f"ArtifactManifest:{art['id']}")
        upload = {"uploadUrl": f"{st.base_url}/upload/manifest/{quote(art['id'], safe='')}", "uploadHeaders": []}
        file = {"id": _b64(f"File:manifest:{art['id']}"), **(upload if v.get("includeUpload") else {})}
        return {"createArtifactManifest": {"artifactManifest": {"id": mid, "file": file}}}
    if op == "CreateArtifactFiles":
        edges = []
        for f in v["input"]["artifactFiles"]:
            key = f"file/{base64.b64decode(f['md5']).hex()}"
            url = None if key in st.uploads else f"{st.base_url}/upload/{key}"  # stored content is not re-sent
            node = {
                "storagePath": key,
                "uploadUrl": url,
                "uploadHeaders": [],
                "uploadMultipartUrls": None,
                "artifact": {"id": f["artifactID"]},
            }
            edges.append({"node": node})
        return {"createArtifactFiles": {"files": {"edges": edges}}}
    if op == "CommitArtifact":
        return _commit_artifact(st, v["artifactID"])
    if op == "UseArtifact":
        return {"useArtifact": {"artifact": {"id": v["input"]["artifactID"]}}}
    if op == "FetchArtifactDigestAlgorithm":
        return {"project": None}
    if op == "XXHashDigestsEnabled":
        return {"entity": {"xxhashDigestsEnabled": False}}
    raise AssertionError(op)


def _file_stream(st: StandIn, path: str, body: dict[str, Any]) -> None:
    """Apply one file_stream POST (history rows, the summary, the final exit code) to the stored run."""
    entity, project, run_id = path.split("/")
    run = st.run(entity, project, run_id)
    if run is None:
        raise ValueError(f"file_stream for unknown run {path}")
    st.file_stream.append((path, body))
    files = body.get("files") or {}
    history = files.get("wandb-history.jsonl")
    if history:
        del run["history"][int(history.get("offset", 0)) :]
        run["history"].extend(json.loads(line) for line in history["content"])
        st.parquet[f"{entity}-{project}-{run_id}"] = _to_parquet(run["history"])
    summary = files.get("wandb-summary.json")
    if summary and summary.get("content"):
        run["summary"] = json.loads(summary["content"][-1])
    if body.get("complete"):
        run["exitcode"] = body.get("exitcode")
        run["state"] = "finished" if body.get("exitcode") == 0 else "failed"


class _Handler(BaseHTTPRequestHandler):
    server_version = "wandb-standin/1"
    st: StandIn  # set per server class

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send(
        self, status: int, body: bytes, ctype: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests); nothing to answer

    def do_GET(self) -> None:
        st = self.st
        m = re.match(r"^/files/(.+)\.parquet$", self.path)
        if not m or m.group(1) not in st.parquet:
            self._send(404, b"not found", "text/plain")
            return
        data = st.parquet[m.group(1)]
        rng = self.headers.get("Range")
        st.range_requests.append((self.path, rng))
        if rng:
            mm = re.match(r"bytes=(\d*)-(\d*)", rng)
            if mm is None:
                self._send(416, b"", "text/plain")
                return
            a, b = mm.groups()
            if a == "":
                start, end = max(0, len(data) - int(b)), len(data) - 1
            else:
                start = int(a)
                end = min(int(b), len(data) - 1) if b else len(data) - 1
            part = data[start : end + 1]
            self._send(
                206,
                part,
                "application/octet-stream",
                {"Content-Range": f"bytes {start}-{end}/{len(data)}", "Accept-Ranges": "bytes"},
            )
            return
        self._send(200, data, "application/octet-stream", {"Accept-Ranges": "bytes"})

    def do_PUT(self) -> None:
        """Uploads to the URLs handed out by createRunFiles / createArtifactFiles / createArtifactManifest."""
        st = self.st
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.startswith("/upload/"):
            self._send(404, b"not an upload URL", "text/plain")
            return
        key = self.path[len("/upload/") :]
        with st.lock:
            hit = next((k for k, n in st.upload_faults.items() if n > 0 and k in key), None)
            if hit is not None:
                st.upload_faults[hit] -= 1
        if hit is not None:
            self._send(500, b"injected upload failure", "text/plain")
            return
        if key.startswith("file/") and hashlib.md5(raw).hexdigest() != key[len("file/") :]:
            self._send(400, b"content does not match the MD5 it was announced with", "text/plain")
            return
        with st.lock:
            st.uploads[key] = raw
            if key.startswith("manifest/"):
                _find_artifact(st, unquote(key[len("manifest/") :]))["manifest"] = json.loads(raw)
        self._send(200, b"", "text/plain")

    def do_HEAD(self) -> None:
        st = self.st
        m = re.match(r"^/files/(.+)\.parquet$", self.path)
        if not m or m.group(1) not in st.parquet:
            self._send(404, b"", "text/plain")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(st.parquet[m.group(1)])))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_POST(self) -> None:
        st = self.st
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        fs = re.match(r"^/files/([^/]+/[^/]+/[^/]+)/file_stream$", self.path)
        if fs:
            if not self._authorized():
                self._send(401, b'{"error":"user is not logged in"}')
                return
            try:
                _file_stream(st, fs.group(1), json.loads(raw))
            except Exception as exc:
                self._send(500, json.dumps({"error": f"stand-in error: {exc!r}"}).encode())
                return
            self._send(200, json.dumps({"exitcode": None, "limits": {}}).encode())
            return
        if not self.path.startswith("/graphql"):
            self._send(200 if "otel" in self.path else 404, b"{}")
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, b'{"errors":[{"message":"bad json"}]}')
            return
        query = body.get("query") or ""
        m = _OP.search(query)
        op = body.get("operationName") or (m.group(2) if m else "")
        variables = body.get("variables") or {}
        with st.lock:
            st.requests.append((op, variables))
        if st.on_request:
            st.on_request(op, variables)
        if not self._authorized():
            self._send(401, b'{"errors":[{"message":"user is not logged in"}]}')
            return
        fault = st._take_fault(op)
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.status and fault.status != 200:
                headers = {"Retry-After": "0"} if fault.status == 429 else None
                self._send(
                    fault.status,
                    json.dumps({"errors": [{"message": f"injected {fault.status}"}]}).encode(),
                    headers=headers,
                )
                return
        try:
            if op in _WRITE_OPS:
                data = _answer_write(st, op, variables)
            elif op in _READ_OPS:
                data = _answer(st, op, variables)
            else:
                with st.lock:
                    st.unknown.append(op)
                message = f"stand-in: unknown GraphQL operation {op!r}; teach tests/support/wandb_standin.py its answer"
                self._send(400, json.dumps({"errors": [{"message": message}]}).encode())
                return
        except Exception as exc:  # surfaced as a 500 so bugs in the stand-in are visible
            self._send(500, json.dumps({"errors": [{"message": f"stand-in error: {exc!r}"}]}).encode())
            return
        self._send(200, json.dumps({"data": data}).encode())

    def _authorized(self) -> bool:
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Basic "):
            try:
                user_pass = base64.b64decode(auth[6:]).decode()
            except ValueError:
                return False
            return user_pass.split(":", 1)[-1] == self.st.api_key
        if auth.startswith("Bearer "):
            return auth[7:] == self.st.api_key
        return False


def start(st: StandIn | None = None) -> tuple[StandIn, ThreadingHTTPServer]:
    """Start a stand-in on an ephemeral 127.0.0.1 port (daemon thread); returns (state, server)."""
    st = st or StandIn()
    handler = type("Handler", (_Handler,), {"st": st})
    server = ThreadingHTTPServer((st.host, 0), handler)
    server.daemon_threads = True
    st.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return st, server


#: Settings that keep the real client's retry loops short in fault tests. TEST SUPPORT ONLY: wandb documents
#: ``x_`` settings as internal; the package never sets them (tests/test_public_apis.py checks), it bounds calls
#: with the public ``wandb.Api(timeout=)`` and its own deadlines. Tests use these to keep wandb-core's
#: background retries of a test's own process short.
FAST_RETRY_SETTINGS = {"x_graphql_retry_max": 2, "x_graphql_retry_wait_max_seconds": 1}


# ============================================================================ sources helper (issue 11)
# Added by the `sources` work (pending final scores, stale heartbeats); the operations above are untouched.
# ``UpsertBucket`` with a storage id and no run name is the Public API's ``wandb.Api().run(path).update()``:
# config, tags and summary are written onto the stored run (``_answer_run_update``).


def _run_by_storage_id(st: StandIn, storage_id: str) -> dict[str, Any] | None:
    try:
        _, _, run_id, project, entity = base64.b64decode(storage_id).decode().split(":", 4)
    except (ValueError, UnicodeDecodeError):
        return None
    return next((r for r in st.projects.get((entity, project), []) if r["id"] == run_id), None)


def _answer_run_update(st: StandIn, variables: dict[str, Any]) -> dict[str, Any]:
    run = _run_by_storage_id(st, str(variables.get("id") or ""))
    if run is None:
        raise KeyError(f"no stored run with storage id {variables.get('id')!r}")
    if variables.get("config") is not None:
        config = json.loads(variables["config"])
        run["config"] = {k: v.get("value") for k, v in config.items() if k != "_wandb" and isinstance(v, dict)}
    if variables.get("tags") is not None:
        run["tags"] = list(variables["tags"])
    if variables.get("summaryMetrics") is not None:
        run["summary"] = json.loads(variables["summaryMetrics"])
    return {"upsertBucket": {"bucket": _run_node(st, run, _project_id(st, run["entity"], run["project"]))}}


def _heartbeat(run: dict[str, Any]) -> str:
    """A running run heartbeats (now), as on W&B; set ``run["heartbeatAt"]`` for a stale one. Others: created."""
    if run["state"] == "running":
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    return str(run["createdAt"])
