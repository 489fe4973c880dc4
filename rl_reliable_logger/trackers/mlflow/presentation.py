"""What makes an analysis run look native in the MLflow UI (params, dataset input, nesting, links).

The MLflow sink writes the results; this module adds what the UI uses to show and compare them:
analysis options as params (the run comparison view only lists params), the score table as a
dataset input (the "Datasets" column), the ``mlflow.parentRunId`` of the source runs' shared
parent, "Source"/"Created by" tags, and a Markdown description that links to the source runs.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...data.names import escape_markdown
from ...version import __version__
from ..base.publishing import run_count

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.report import Report
    from .client import Tracker

PARENT_TAG = "mlflow.parentRunId"
SOURCE_NAME_TAG = "mlflow.source.name"
SOURCE_TYPE_TAG = "mlflow.source.type"
USER_TAG = "mlflow.user"
#: Headline metrics are one summary value each, logged at step 0: a later publish still wins by its newer
#: timestamp (MLflow's latest value is the largest (step, timestamp)), and the UI's charts do not put a
#: wall-clock number on their "Step" axis.
HEADLINE_STEP = 0
#: The run description shows at most this many source-run links.
MAX_LINKS = 50
#: MLflow's param value limit is 6000 characters (500 on older servers); stay within the smaller one.
_MAX_PARAM = 500


def _text(value: Any) -> str:
    """A param's text: a list joined by ", ", a mapping as sorted JSON, None or nothing as ``(none)``."""
    if value is None or value == [] or value == ():
        return "(none)"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def _fitted(value: str) -> str:
    """``value`` within MLflow's length limit; a longer one is cut and ends in the SHA-256 of the whole text
    (so two different long values never read the same)."""
    if len(value) <= _MAX_PARAM:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    tail = f"... (sha256 {digest})"
    return value[: _MAX_PARAM - len(tail)] + tail


def analysis_params(report: Report) -> dict[str, str]:
    """The analysis options and the source selection as ``rl_reliable.*`` params (compared in the UI).

    Every option that shapes the results is one param (``published``: all but the execution settings,
    ``ci_label`` included, and a published watch or race look's design as ``rl_reliable.design.*``), so two
    analyses that differ in any of them differ in the run comparison view.
    """
    from ...analysis.options import published

    prov = report.provenance or {}
    params: dict[str, str] = {}
    for key, value in published(prov).items():
        params[f"rl_reliable.{key}"] = _text(value)
    src = prov.get("source")
    if isinstance(src, Mapping):
        params["rl_reliable.source.tracker"] = str(src.get("tracker", src.get("kind", "")))
        params["rl_reliable.source.filter"] = str(src.get("filter", "")) or "(none)"
        fields = src.get("fields") or {}
        for name in ("algorithm", "task", "seed", "score"):
            if isinstance(fields, Mapping) and name in fields:
                params[f"rl_reliable.source.{name}_key"] = str(fields[name])
    params["rl_reliable.n_runs"] = str(run_count(report))
    params["rl_reliable.algorithms"] = _text([str(a) for a in report.algorithms])
    out = {}
    for key, value in params.items():
        if value == "":
            continue
        out[key] = _fitted(value)
    return out


def new_params(wanted: Mapping[str, str], existing: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Params that can be logged (MLflow params never change) and the keys kept at an older value."""
    fresh = {k: v for k, v in wanted.items() if k not in existing}
    kept = sorted(k for k, v in wanted.items() if k in existing and existing[k] != v)
    return fresh, kept


def creator_tags() -> dict[str, str]:
    """ "Source" and "Created by" in the UI: this package and the user running it."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name (some containers): leave "Created by" empty
        user = ""
    tags = {SOURCE_NAME_TAG: f"rl_reliable_logger {__version__}", SOURCE_TYPE_TAG: "LOCAL"}
    if user:
        tags[USER_TAG] = user
    return tags


def source_runs(report: Report) -> list[tuple[str, str]]:
    """``(tracker run id, label)`` of every source run, in score-table order."""
    scores = report.scores
    if scores.empty or "tracker_run_id" not in scores:
        return []
    seen: dict[str, str] = {}
    for row in scores.drop_duplicates("tracker_run_id").itertuples(index=False):
        rid = str(row.tracker_run_id)
        name = getattr(row, "run_name", None)
        label = f"{row.algorithm} · {row.task} · seed {row.seed}"
        seen[rid] = f"{name} ({label})" if isinstance(name, str) and name else label
    return list(seen.items())


def common_parent(client: Tracker, run_ids: list[str], experiment_id: str) -> str | None:
    """The ``mlflow.parentRunId`` every source run shares, if they share one in ``experiment_id``."""
    if not run_ids:
        return None
    parents: set[str | None] = set()
    for start in range(0, len(run_ids), 100):
        chunk = run_ids[start : start + 100]
        quoted = ", ".join("'" + r.replace("'", "") + "'" for r in chunk)
        runs = client.call(
            "reading the source runs' parent",
            client.client.search_runs,
            [experiment_id],
            filter_string=f"attributes.run_id IN ({quoted})",
            max_results=len(chunk),
        )
        if len(runs) != len(chunk):  # some sources are in another experiment: no common parent here
            return None
        parents |= {r.data.tags.get(PARENT_TAG) for r in runs}
        if len(parents) > 1:
            return None
    parent = next(iter(parents))
    return parent or None


def run_links(report: Report, experiment_ids: Mapping[str, str]) -> list[str]:
    """Markdown list items linking to each source run (``#/experiments/<exp>/runs/<id>``, the UI's route)."""
    items = []
    runs = source_runs(report)
    for rid, label in runs[:MAX_LINKS]:
        exp = experiment_ids.get(rid)
        text = escape_markdown(label)
        items.append(f"- [{text}](#/experiments/{exp}/runs/{rid})" if exp else f"- {text} (`{rid}`)")
    if len(runs) > MAX_LINKS:
        items.append(f"- ... and {len(runs) - MAX_LINKS} more (table `scores`, column `tracker_run_id`)")
    return items


def experiments_of(client: Tracker, run_ids: list[str], experiment_ids: list[str]) -> dict[str, str]:
    """Run id → experiment id for the source runs found in ``experiment_ids`` (for links)."""
    out: dict[str, str] = {}
    ids = run_ids[:MAX_LINKS]
    if not ids or not experiment_ids:
        return out
    quoted = ", ".join("'" + r.replace("'", "") + "'" for r in ids)
    runs = client.call(
        "reading the source runs",
        client.client.search_runs,
        experiment_ids,
        filter_string=f"attributes.run_id IN ({quoted})",
        max_results=len(ids),
    )
    return {r.info.run_id: r.info.experiment_id for r in runs}


def log_scores_dataset(client: Tracker, run_id: str, report: Report) -> bool:
    """Log the score table as the run's dataset input (name ``rl-reliable-scores``, source = the selection)."""
    from mlflow.data.code_dataset_source import CodeDatasetSource
    from mlflow.data.pandas_dataset import from_pandas
    from mlflow.entities import Dataset, DatasetInput, InputTag

    scores = report.scores
    if scores.empty:
        return False
    frame = scores.copy()
    for col in frame.columns:
        if frame[col].dtype == object:
            frame[col] = frame[col].map(lambda v: None if v is None else str(v))
    src = (report.provenance or {}).get("source")
    src = dict(src) if isinstance(src, Mapping) else {}
    exps = src.get("experiments") or []
    source = CodeDatasetSource(
        tags={
            "tracker": str(src.get("tracker", src.get("kind", ""))),
            "filter": str(src.get("filter", "")) or "(none)",
            "experiments": _text([f"{e.get('name')} ({e.get('id')})" if isinstance(e, Mapping) else e for e in exps]),
        }
    )
    # MLflow's hint about integer columns is for model signatures (missing values at inference time), not for a
    # logged table; it is raised when the schema is inferred, which ``to_dict`` does (lazily) too. MLflow's own
    # calls of pandas APIs deprecated in newer pandas (its digest) warn from its modules: not the user's to fix.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Hint: Inferred schema contains integer column", UserWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"mlflow\.")
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"mlflow\.")
        dataset = from_pandas(frame, source=source, name="rl-reliable-scores")
        entity = DatasetInput(Dataset(**dataset.to_dict()), tags=[InputTag("mlflow.data.context", "scores")])
    client.call("logging the score table as a dataset", client.client.log_inputs, run_id, datasets=[entity])
    return True
