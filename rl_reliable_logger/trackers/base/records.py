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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...data.counts import agree, plural
from ...data.scores import FINAL_SCORE, ScoreTable, seed_key
from ...errors import ScoreTableError
from .drops import drop_summary
from .messages import DROP_INVALID, kw
from .scoring import MAX_BIAS_WARNING, ScoreRule, final_value_problem, history_name, parse_score_rule, score_refs

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


def variant_label(algorithm: Any, variants: Mapping[str, Any]) -> str:
    """``PPO`` + ``{"config.lr": 0.001}`` -> ``PPO lr=0.001`` (the algorithm label of a sweep configuration)."""
    if not variants:
        return str(algorithm)
    return f"{algorithm} " + ", ".join(f"{ref.split('.', 1)[1]}={value}" for ref, value in variants.items())


def _final_score(record: RunRecord, refs: list[FieldRef], rule: ScoreRule) -> tuple[Any, str | None, str | None]:
    """(value, the reference it came from, problem): the first score reference the run has, by ``rule``."""
    for ref in refs:
        if rule.needs_history:
            points = (record.history or {}).get(history_name(str(ref)))
            if not points:
                continue
            value, problem = rule.apply(sorted(points))
            return value, str(ref), (f"{ref} by score rule {rule}: {problem}" if problem else None)
        try:
            return resolve(record, ref), str(ref), None
        except KeyError:
            continue
    return None, None, None


def records_to_table(
    records: Iterable[RunRecord],
    *,
    algorithm: str,
    task: str,
    seed: str,
    score: str | Sequence[str],
    run_key: str | None = None,
    include_unfinished: bool = False,
    on_invalid: str = "raise",
    history_key: str | None = None,
    source: Mapping[str, Any] | None = None,
    extra_fields: Mapping[str, str] | None = None,
    variant: Sequence[str] = (),
    score_rule: str | ScoreRule | None = None,
    names: str = "strict",
) -> ScoreTable:
    """Group tracker runs into a ScoreTable with the given field references.

    ``score`` is the final score: one reference or a fallback list (the first one a run has is
    used; the count per reference is in provenance). ``score_rule`` (``last``, ``mean-last-N``,
    ``at-budget:STEP``, ``max``; see :mod:`.scoring`) reads it from the key's history. With
    ``history_key`` the table also gets one row per logged step of that key (the learning curve);
    the final scores stay the score key's values (column ``final_score``). ``variant`` references
    are appended to the algorithm label (``PPO lr=0.001``), one label per sweep configuration.
    ``names`` is ScoreTable's (``"normalize"`` strips and NFC-normalises names instead of refusing them).

    A run's identity is the tracker run id (or ``run_key``), so seeds reused across configurations
    are normal; two runs with the same algorithm, task, seed and ``extra_fields`` values are a
    duplicate, reported once naming both run ids. Unfinished runs are skipped unless
    ``include_unfinished`` and listed in ``table.source["excluded"]``. Runs that lack a field, or
    whose final score is not a finite number, are an error naming each run (or, with
    ``on_invalid="drop"``, dropped, listed by run id in provenance and summarised per kind in
    ``table.warnings``).

    Example:
        >>> rec = RunRecord("r1", "ppo-0", "finished", config={"algo": "PPO", "env": "Pong", "seed": 0},
        ...                 summary={"ret": 1.0})
        >>> records_to_table([rec], algorithm="config.algo", task="config.env", seed="config.seed",
        ...                  score="summary.ret").frame[["algorithm", "task", "score"]].values.tolist()
        [['PPO', 'Pong', 1.0]]
    """
    try:
        score_list = score_refs(score)
        rule = parse_score_rule(score_rule)
    except ValueError as err:
        raise ScoreTableError(str(err)) from None
    refs: dict[str, str] = {"algorithm": algorithm, "task": task, "seed": seed}
    if run_key:
        refs["run_key"] = run_key
    for name, extra in (extra_fields or {}).items():
        refs[name] = extra
    parsed: dict[str, FieldRef] = {}
    for name, text in [*refs.items(), *((f"variant {v}", v) for v in variant)]:
        try:
            parsed[name] = parse_field_ref(text)
        except ValueError as err:
            raise ScoreTableError(f"{kw(name.split(' ')[0] + '=')}: {err}") from None
    score_parsed = []
    for text in score_list:
        try:
            score_parsed.append(parse_field_ref(text))
        except ValueError as err:
            raise ScoreTableError(f"{kw('score=')}: {err}") from None
    records = list(records)
    info: dict[str, Any] = dict(source or {})
    info["fields"] = {**refs, "score": score_list[0] if len(score_list) == 1 else score_list}
    if variant:
        info["fields"]["variant"] = list(variant)
    info["n_runs_seen"] = len(records)
    if not records:
        raise ScoreTableError(
            "no runs found"
            + (f" in {info['location']}" if "location" in info else "")
            + ". Check the project / experiment name and the filter."
        )
    excluded: list[dict[str, Any]] = []
    candidates: list[tuple[RunRecord, dict[str, Any], Any]] = []
    problems: dict[str, list[str]] = {}
    dropped: list[dict[str, Any]] = []
    used_refs: dict[str, int] = {}

    def problem(kind: str, record: RunRecord, values: Mapping[str, Any]) -> None:
        problems.setdefault(kind, []).append(_run_label(record))
        label = values.get("algorithm")
        if label is not None and all(f"variant {v}" in values for v in variant):
            label = variant_label(label, {str(parsed[f"variant {v}"]): values[f"variant {v}"] for v in variant})
        dropped.append({"run_id": record.run_id, "algorithm": label, "task": values.get("task"), "reason": kind})

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
                if name in ("algorithm", "task", "seed", "run_key") or name.startswith("variant "):
                    lacks.append(str(ref))
                else:
                    values[name] = None
        final, used, why = _final_score(record, score_parsed, rule)
        if used is None:
            what = " or ".join(score_list)
            lacks.append(f"history of {what}" if rule.needs_history else what)
        if lacks:
            problem("missing field(s) " + ", ".join(lacks), record, values)
            continue
        if why is not None:
            problem(why.split(": ", 1)[1] if ": " in why else why, record, values)
            continue
        bad = final_value_problem(final)
        if bad is not None:
            problem(f"{bad} in {used}", record, values)
            continue
        used_refs[str(used)] = used_refs.get(str(used), 0) + 1
        variants = {str(parsed[f"variant {v}"]): values[f"variant {v}"] for v in variant}
        values["algorithm"] = variant_label(values["algorithm"], variants)
        values["_score_key"] = str(used)
        candidates.append((record, values, float(final)))

    # duplicates: the same configuration and seed twice (reported once, naming every run id)
    if not run_key:
        groups: dict[tuple[Any, ...], list[tuple[RunRecord, dict[str, Any], Any]]] = {}
        for cand in candidates:
            _, values, _ = cand
            key = (str(values["algorithm"]), str(values["task"]), seed_key(values["seed"])) + tuple(
                str(values.get(name)) for name in (extra_fields or {})
            )
            groups.setdefault(key, []).append(cand)
        kept = []
        for key, group in groups.items():
            kept.append(group[0])
            if len(group) > 1:
                ids = ", ".join(_run_label(r) for r, _, _ in group)
                kind = f"duplicate seed {key[2]} for {key[0]} / {key[1]}: runs {ids}"
                problems.setdefault(kind, []).extend(_run_label(r) for r, _, _ in group[1:])
                for r, values, _ in group[1:]:
                    dropped.append(
                        {
                            "run_id": r.run_id,
                            "algorithm": values["algorithm"],
                            "task": values["task"],
                            "reason": f"duplicate seed {key[2]} (also run {group[0][0].run_id})",
                        }
                    )
        keep_ids = {id(c[0]) for c in kept}
        candidates = [c for c in candidates if id(c[0]) in keep_ids]

    info["excluded"] = excluded
    if excluded:
        by_state: dict[str, int] = {}
        for e in excluded:
            by_state[e["state"]] = by_state.get(e["state"], 0) + 1
        info["excluded_summary"] = by_state
    if problems and on_invalid != "drop":
        lines = []
        for kind, runs in problems.items():
            if kind.startswith("duplicate"):
                lines.append(kind)
            else:
                what = (
                    f"{agree(len(runs), 'lack')} {kind[17:]}" if kind.startswith("missing field(s) ") else f"— {kind}"
                )
                lines.append(
                    f"{plural(len(runs), 'run')} {what}: {', '.join(runs[:10])}" + (" ..." if len(runs) > 10 else "")
                )
        hint = (
            f"Name the right fields with {kw('algorithm=')}, {kw('task=')}, {kw('seed=')} and {kw('score=')} "
            f"(a comma-separated fallback list for mixed conventions)"
        )
        if any(k.startswith("duplicate") for k in problems):
            hint += (
                f"; for a sweep, tell configurations apart with {kw('variant=')} or {kw('extra_fields=')}, or pass "
                f"{kw('run_key=')} (e.g. run.id) if these are deliberately repeated runs"
            )
        raise ScoreTableError(
            "some runs cannot be used:\n"
            + "\n".join(f"  - {line}" for line in lines)
            + f"\n{hint}; or pass {kw(DROP_INVALID)} to leave these runs out (they are listed in provenance)."
        )

    rows: list[dict[str, Any]] = []
    missing_curve: list[str] = []
    for record, values, final in candidates:
        base = {
            "algorithm": values["algorithm"],
            "task": values["task"],
            # the ScoreTable key: the tracker run id (or the run key), never the seed
            "run_id": str(values["run_key"]) if "run_key" in values else str(record.run_id),
            "seed": values["seed"],
            "tracker_run_id": record.run_id,
            "run_name": record.name,
            "state": (record.state or "").lower(),
            "score_key": values["_score_key"],
        }
        for name in extra_fields or {}:
            base[name] = values.get(name)
        if record.attrs.get("url"):
            base["url"] = record.attrs["url"]
        if history_key is not None:
            hist = (record.history or {}).get(history_key)
            if not hist:
                missing_curve.append(_run_label(record))
                dropped.append(
                    {
                        "run_id": record.run_id,
                        "algorithm": values["algorithm"],
                        "task": values["task"],
                        "reason": f"no logged history of the curve key {history_key}",
                    }
                )
                continue
            for step, value in hist:
                rows.append({**base, "step": step, "score": value, FINAL_SCORE: final})
        else:
            rows.append({**base, "score": final})
    if missing_curve and on_invalid != "drop":
        raise ScoreTableError(
            f"{plural(len(missing_curve), 'run')} {agree(len(missing_curve), 'have')} a final score but no logged history of the curve key "
            f"{history_key!r}: {', '.join(missing_curve[:10])}"
            + (" ..." if len(missing_curve) > 10 else "")
            + f". Check {kw('curve_key=')}, or pass {kw(DROP_INVALID)} to leave these runs out."
        )
    info["score"] = {
        "keys": score_list,
        "rule": str(rule),
        "runs_per_key": used_refs,
        "curve_key": history_key,
        "final_scores_from": f"{' or '.join(score_list)} ({rule})"
        + (f"; the curve key {history_key} gives the learning curves only" if history_key else ""),
    }
    if not rows:
        states = ", ".join(f"{n} {s}" for s, n in info.get("excluded_summary", {}).items())
        raise ScoreTableError(
            "no usable runs"
            + (
                f": all {len(records)} runs were skipped ({states}); pass {kw('include_unfinished=True')} to use them"
                if excluded and not candidates
                else f": every run was dropped ({len(dropped)} drop(s))"
                if dropped
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
        names=names,  # type: ignore[arg-type]
    )
    if dropped:
        table.dropped = pd.concat([pd.DataFrame(dropped), table.dropped], ignore_index=True)
    if rule.kind == "max":
        table.warnings.append(MAX_BIAS_WARNING)
    if len(used_refs) > 1:
        table.warnings.append(
            "final scores come from several keys (fallback list): "
            + ", ".join(f"{plural(n, 'run')} from {ref}" for ref, n in used_refs.items())
        )
    if len(table.dropped):
        before: dict[tuple[str, str], set[str]] = {}
        for record, values, _ in candidates:
            before.setdefault((str(values["algorithm"]), str(values["task"])), set()).add(record.run_id)
        for d in dropped:
            if d.get("algorithm") is not None and d.get("task") is not None:
                before.setdefault((str(d["algorithm"]), str(d["task"])), set()).add(str(d["run_id"]))
        final_frame = table.final().frame
        after = final_frame.groupby(["algorithm", "task"])["run_id"].nunique().to_dict()
        n_total = len(records) - len(excluded)
        lines = drop_summary(
            table.dropped.to_dict("records"),
            n_runs=n_total,
            cells_before={k: len(v) for k, v in before.items()},
            cells_after={(str(a), str(t)): int(n) for (a, t), n in after.items()},
        )
        info_lines = list(lines)
        table.source["drop_summary"] = info_lines
        table.warnings.extend(info_lines)
    return table
