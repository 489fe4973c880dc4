"""Tracker-neutral run records and the field-reference grammar shared by every adapter.

Adapters (W&B online/offline, MLflow) turn tracker runs into :class:`RunRecord` objects; this
module turns records into a :class:`~rl_reliable_logger.scores.ScoreTable`, so grouping rules,
missing-field errors and unfinished-run bookkeeping are the same for every tracker.

Field references: ``config.<key>``, ``summary.<key>``, ``params.<key>``, ``metrics.<key>``,
``tags.<key>`` (MLflow tag value, or for W&B list tags the part after ``<prefix>:`` / ``<prefix>=``
of the tag that starts with it: a tag ``algo:PPO`` gives ``PPO`` for ``tags.algo``) and
``run.<attr>`` (``name``, ``id``, ``group``, ``job_type``, ``sweep``, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...data.scores import ScoreTable, seed_key
from ...errors import ScoreTableError
from .messages import DROP_INVALID, kw

#: The end-of-training convention: names written by :func:`rl_reliable_logger.log_final_score`.
DEFAULT_KEYS = {
    "algorithm": "rl_reliable_algorithm",
    "task": "rl_reliable_task",
    "seed": "rl_reliable_seed",
    "score": "rl_reliable_final_score",
}

KINDS = ("config", "summary", "params", "metrics", "tags", "run")
FINISHED = "finished"


@dataclass
class RunRecord:
    """One tracker run, tracker-neutral."""

    run_id: str
    name: str | None
    state: str
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    tags: list[str] | dict[str, str] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    history: dict[str, list[tuple[float, float]]] | None = None


@dataclass(frozen=True)
class FieldRef:
    """A parsed field reference such as ``config.env_id``."""

    kind: str
    key: str

    def __str__(self) -> str:
        return f"{self.kind}.{self.key}"


class _Missing(Exception):
    pass


def parse_field_ref(ref: str) -> FieldRef:
    """Parse ``kind.key``; raises ValueError listing the valid kinds.

    Example:
        >>> parse_field_ref("config.env_id")
        FieldRef(kind='config', key='env_id')
    """
    kind, sep, key = str(ref).partition(".")
    if not sep or kind not in KINDS or not key:
        raise ValueError(
            f"bad field reference {ref!r}: use one of {', '.join(k + '.<key>' for k in KINDS)} "
            "(e.g. config.env_id, tags.algo, metrics.final_return, run.group)."
        )
    return FieldRef(kind, key)


def _lookup_nested(mapping: Mapping[str, Any], key: str) -> Any:
    if key in mapping:
        return mapping[key]
    # nested dicts addressed with dots: config.optim.lr
    node: Any = mapping
    for part in key.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            raise _Missing
    return node


def resolve(record: RunRecord, ref: FieldRef) -> Any:
    """The value of ``ref`` in ``record``; raises ``KeyError`` when the run does not have it."""
    try:
        if ref.kind == "run":
            if ref.key == "id":
                return record.run_id
            if ref.key == "name":
                if record.name is None:
                    raise _Missing
                return record.name
            value = record.attrs.get(ref.key)
            if value is None or value == "":
                raise _Missing
            return value
        if ref.kind == "tags":
            return _resolve_tag(record.tags, ref.key)
        mapping = getattr(record, ref.kind)
        value = _lookup_nested(mapping, ref.key)
        if value is None:
            raise _Missing
        if isinstance(value, Mapping) and "value" in value and len(value) == 1:
            value = value["value"]
        return value
    except _Missing:
        raise KeyError(str(ref)) from None


def _resolve_tag(tags: list[str] | dict[str, str], key: str) -> str:
    if isinstance(tags, Mapping):
        if key in tags:
            return tags[key]
        raise _Missing
    found = [t.split(sep, 1)[1] for t in tags for sep in (":", "=") if t.startswith(key + sep)]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise ValueError(f"several tags match the prefix {key!r}: {found}")
    raise _Missing


def _run_label(record: RunRecord) -> str:
    return f"{record.run_id}" + (f" ({record.name})" if record.name and record.name != record.run_id else "")


def records_to_table(
    records: Iterable[RunRecord],
    *,
    algorithm: str,
    task: str,
    seed: str,
    score: str,
    run_key: str | None = None,
    include_unfinished: bool = False,
    on_invalid: str = "raise",
    history_key: str | None = None,
    source: Mapping[str, Any] | None = None,
    extra_fields: Mapping[str, str] | None = None,
) -> ScoreTable:
    """Group tracker runs into a ScoreTable with the given field references.

    Unfinished runs are skipped unless ``include_unfinished`` and listed in
    ``table.source["excluded"]``. Runs that lack a field are an error naming each run (or, with
    ``on_invalid="drop"``, dropped and recorded). With ``history_key`` the table gets one row per
    logged step of that key (for sample-efficiency curves).

    Example:
        >>> rec = RunRecord("r1", "ppo-0", "finished", config={"algo": "PPO", "env": "Pong", "seed": 0},
        ...                 summary={"ret": 1.0})
        >>> records_to_table([rec], algorithm="config.algo", task="config.env", seed="config.seed",
        ...                  score="summary.ret").frame[["algorithm", "task", "score"]].values.tolist()
        [['PPO', 'Pong', 1.0]]
    """
    refs = {"algorithm": algorithm, "task": task, "seed": seed, "score": score}
    if run_key:
        refs["run_key"] = run_key
    for name, extra in (extra_fields or {}).items():
        refs[name] = extra
    parsed: dict[str, FieldRef] = {}
    for name, text in refs.items():
        try:
            parsed[name] = parse_field_ref(text)
        except ValueError as err:
            raise ScoreTableError(f"{kw(name + '=')}: {err}") from None
    records = list(records)
    info: dict[str, Any] = dict(source or {})
    info["fields"] = dict(refs)
    info["n_runs_seen"] = len(records)
    if not records:
        raise ScoreTableError(
            "no runs found"
            + (f" in {info['location']}" if "location" in info else "")
            + ". Check the project / experiment name and the filter."
        )
    excluded: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    missing: dict[str, list[str]] = {}
    dropped_missing: list[dict[str, Any]] = []
    for record in records:
        state = (record.state or "").lower()
        if state != FINISHED and not include_unfinished:
            excluded.append({"run_id": record.run_id, "name": record.name, "state": state or "unknown"})
            continue
        values: dict[str, Any] = {}
        lacks = []
        for name, ref in parsed.items():
            try:
                values[name] = resolve(record, ref)
            except KeyError:
                if name in ("algorithm", "task", "seed", "score", "run_key"):
                    lacks.append(str(ref))
                else:
                    values[name] = None
        if lacks:
            for lacked in lacks:
                missing.setdefault(lacked, []).append(_run_label(record))
            dropped_missing.append(
                {
                    "run_id": record.run_id,
                    "algorithm": values.get("algorithm"),
                    "task": values.get("task"),
                    "reason": "missing field(s) " + ", ".join(lacks),
                }
            )
            continue
        base = {
            "algorithm": values["algorithm"],
            "task": values["task"],
            # the ScoreTable key: the seed unless a run key is named, so two runs with one seed clash
            "run_id": str(values["run_key"]) if "run_key" in values else seed_key(values["seed"]),
            "seed": values["seed"],
            "tracker_run_id": record.run_id,
            "run_name": record.name,
            "state": state,
        }
        for name in extra_fields or {}:
            base[name] = values.get(name)
        if record.attrs.get("url"):
            base["url"] = record.attrs["url"]
        if history_key is not None:
            hist = (record.history or {}).get(history_key)
            if not hist:
                missing.setdefault(f"history of {history_key}", []).append(_run_label(record))
                continue
            for step, value in hist:
                rows.append({**base, "step": step, "score": value})
        else:
            rows.append({**base, "score": values["score"]})
    info["excluded"] = excluded
    if excluded:
        by_state: dict[str, int] = {}
        for e in excluded:
            by_state[e["state"]] = by_state.get(e["state"], 0) + 1
        info["excluded_summary"] = by_state
    if missing and on_invalid != "drop":
        lines = [
            f"{len(runs)} run(s) lack {ref}: {', '.join(runs[:10])}" + (" ..." if len(runs) > 10 else "")
            for ref, runs in missing.items()
        ]
        raise ScoreTableError(
            "some runs lack a field needed to group them:\n"
            + "\n".join(f"  - {line}" for line in lines)
            + f"\nName the right fields with {kw('algorithm=')}, {kw('task=')}, {kw('seed=')} and {kw('score=')}, "
            f"or pass {kw(DROP_INVALID)} to leave these runs out (they are listed in provenance)."
        )
    if not rows:
        states = ", ".join(f"{n} {s}" for s, n in info.get("excluded_summary", {}).items())
        raise ScoreTableError(
            "no usable runs"
            + (
                f": all {len(records)} runs were skipped ({states}); pass {kw('include_unfinished=True')} to use them"
                if excluded
                else ""
            )
        )
    frame = pd.DataFrame(rows)
    table = ScoreTable(
        frame,
        run_id="run_id",
        step="step" if history_key is not None else None,
        on_invalid=on_invalid,  # type: ignore[arg-type]
        source=info,
    )
    if dropped_missing:
        table.dropped = pd.concat([table.dropped, pd.DataFrame(dropped_missing)], ignore_index=True)
    return table
