"""Which tracker runs are analysed: the client-side selection every tracker shares.

A tracker lists runs (server-side filters differ: one has no OR, another cannot filter nested
config keys); this module then decides, the same way for every tracker, which of them go into the
ScoreTable: earlier analysis runs and runs that carry none of the fields are skipped (and listed
with a reason), ``algorithms`` / ``tasks`` keep only those values, and a typo in them is an error
naming the values that exist.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from ...data.counts import agree, plural
from ...errors import InputError
from ...wording import Message, kw, message_of, said
from .drops import drop_summary
from .messages import DROP_INVALID, Hints
from .records import FINISHED, FieldRef, RunRecord, parse_field_ref, records_to_table, resolve, variant_label
from .request import SourceRequest
from .scoring import expand_keys, history_name, parse_score_rule, score_refs, seed_pattern

if TYPE_CHECKING:  # pragma: no cover
    from ...data.scores import ScoreTable
    from .protocols import SourceRuns


def _has(record: RunRecord, ref: FieldRef) -> bool:
    try:
        resolve(record, ref)
        return True
    except KeyError:
        return False


def parse_refs(refs: Mapping[str, str]) -> dict[str, FieldRef]:
    """Parse ``{"algorithm": "tags.x", ...}``; a bad one is an InputError naming the keyword."""
    out = {}
    for name, ref in refs.items():
        try:
            out[name] = parse_field_ref(ref)
        except ValueError as err:
            raise InputError(said(kw(name + "="), f": {err}")) from None
    return out


def select_records(
    records: Sequence[RunRecord],
    refs: Mapping[str, FieldRef],
    *,
    is_analysis: Callable[[RunRecord], bool],
    algorithms: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    variant: Sequence[FieldRef] = (),
) -> tuple[list[RunRecord], list[dict[str, Any]]]:
    """(kept, skipped): drop analysis runs, runs with none of the fields, unselected algorithms/tasks.

    A run that has some of the fields but not all is kept, so that ``records_to_table`` names it
    as an error (it is probably a training run with a typo, not an unrelated run). With ``variant``
    references (sweeps), an entry of ``algorithms`` selects a run when it is the base algorithm
    (``PPO``: every configuration) or the full label (``PPO lr=0.001``: that configuration only).

    Example:
        >>> r = RunRecord("a", None, "finished", config={"algo": "PPO"})
        >>> kept, skipped = select_records([r], {"algorithm": parse_field_ref("config.algo")},
        ...                                is_analysis=lambda rec: False, algorithms=["PPO"])
        >>> [k.run_id for k in kept], skipped
        (['a'], [])
    """
    kept: list[RunRecord] = []
    skipped: list[dict[str, Any]] = []
    data_refs = [ref for ref in refs.values() if ref.kind != "run"]
    seen: dict[str, set[str]] = {"algorithm": set(), "task": set()}
    for r in records:
        reason = None
        if is_analysis(r):
            reason = "is an rl-reliable analysis run"
        elif data_refs and not any(_has(r, ref) for ref in data_refs):
            reason = "has none of the fields " + ", ".join(str(ref) for ref in data_refs)
        else:
            for values, name in ((algorithms, "algorithm"), (tasks, "task")):
                if name not in refs or not _has(r, refs[name]):
                    continue
                value = str(resolve(r, refs[name]))
                labels = {value}
                if name == "algorithm" and variant:
                    try:
                        labels.add(variant_label(value, {str(ref): resolve(r, ref) for ref in variant}))
                    except KeyError:
                        pass  # lacks a variant field: records_to_table names it
                seen[name] |= labels
                if values and not labels & set(map(str, values)):
                    reason = f"{name} {max(labels, key=len)!r} not selected"
                    break
        if reason is None:
            kept.append(r)
        else:
            skipped.append({"run_id": r.run_id, "name": r.name, "state": r.state, "reason": reason})
    _name_parents(kept, skipped)
    for values, name in ((algorithms, "algorithm"), (tasks, "task")):
        unknown = [v for v in (values or ()) if str(v) not in seen[name]]
        if unknown and seen[name]:
            raise InputError(
                said(
                    kw(name + "s="),
                    f" names {', '.join(repr(str(v)) for v in unknown)}, which no run has; known {name}s: "
                    f"{', '.join(repr(v) for v in sorted(seen[name]))}.",
                ),
                [f"unknown {name} {v!r}" for v in unknown],
            )
    return kept, skipped


#: Why a run without the fields is skipped when it is the parent of analysed runs (an MLproject's grid run).
PARENT_REASON = "is the parent run of analysed runs (it carries none of the fields)"


def _name_parents(kept: Sequence[RunRecord], skipped: list[dict[str, Any]]) -> None:
    """A skipped run that the kept runs name as their parent (``attrs["parent_run_id"]``) is expected there, not
    unrelated: its reason says so, and :func:`unrelated_warning` does not warn about it."""
    parents = {str(r.attrs["parent_run_id"]) for r in kept if r.attrs.get("parent_run_id")}
    for entry in skipped:
        if entry["run_id"] in parents and str(entry["reason"]).startswith("has none"):
            entry["reason"] = PARENT_REASON


def unrelated_warning(skipped: Sequence[Mapping[str, Any]], refs: Mapping[str, str], tracker: str) -> str | None:
    """The console warning for runs skipped because they carry none of the fields (or None)."""
    unrelated = [s for s in skipped if str(s["reason"]).startswith("has none")]
    if not unrelated:
        return None
    return (
        f"skipped {plural(len(unrelated), 'run', tracker)} that {agree(len(unrelated), 'have')} none of the fields {', '.join(refs.values())} "
        f"(runs of something else, or training runs whose fields have other names): {', '.join(str(s['run_id']) for s in unrelated[:10])}"
        + (" ..." if len(unrelated) > 10 else "")
    )


def _history_names(records: Sequence[RunRecord], key: str) -> dict[str, list[RunRecord]]:
    """The history names to read and the runs to read each for: ``key`` itself, or for a ``{seed}`` key the
    metric / summary names each run has that match it (a run's latest values list every name it logged)."""
    if seed_pattern(key) is None:
        return {key: list(records)}
    out: dict[str, list[RunRecord]] = {}
    for record in records:
        for name in expand_keys([key], {*record.metrics, *record.summary}):
            out.setdefault(name, []).append(record)
    return out


def source_table(runs: SourceRuns, request: SourceRequest) -> ScoreTable:
    """Select runs and group them into a ScoreTable: the one path every Source's runs take (through
    :func:`~.intake.read_table`).

    ``request`` gets the source's default field references; its ``score`` may be a fallback list
    (``"summary.a,summary.b"``). ``runs.fill_history(kept_runs, key)`` reads histories only for the runs that
    are used. Skipped runs are listed in ``table.source["skipped"]``; unrelated and unfinished runs, and the
    source's unreadable runs and notes, are also said in ``table.warnings`` (printed on the console). Field
    references are said in the source's words (``runs.hints.refs``) in its errors, warnings and provenance.
    """
    hints = runs.hints
    if not hints.refs:
        return _source_table(runs, request)
    try:
        table = _source_table(runs, request)
    except InputError as err:
        if err.message_parts is None:  # text names no field as a part: nothing to put in the source's words
            raise
        raise InputError(hints.worded(err.message_parts), err.problems) from None
    table.warnings[:] = [hints.worded_line(w) for w in table.warnings]
    return table


def _source_table(runs: SourceRuns, request: SourceRequest) -> ScoreTable:
    asked, request = request, _as_read(request, runs.request)
    records, tracker = runs.records, runs.label
    hints = replace(runs.hints, shown={**runs.hints.shown, **shown_refs(asked, request)})
    try:
        scores = score_refs(request.score or ())
        rule = parse_score_rule(request.score_rule)
    except ValueError as err:
        raise InputError(str(err)) from None
    shown = request.refs()
    parsed = parse_refs(shown)
    parsed.update(parse_refs({f"score {i}": ref for i, ref in enumerate(scores)}))
    flat = {name: hints.ref(ref) for name, ref in {**shown, "score": ",".join(scores)}.items()}
    variant_refs = [parse_refs({"variant": ref})["variant"] for ref in request.variant]
    kept, skipped = select_records(
        records,
        parsed,
        is_analysis=runs.is_analysis,
        algorithms=request.algorithms,
        tasks=request.tasks,
        variant=variant_refs,
    )
    info = dict(runs.info)
    info.update({"n_runs_found": len(records) + len(runs.unreadable), "skipped": [*runs.skipped, *skipped]})
    if request.algorithms:
        info["algorithms_selected"] = [str(a) for a in request.algorithms]
    if request.tasks:
        info["tasks_selected"] = [str(t) for t in request.tasks]
    where = info.get("location", f"the {tracker} runs")
    check_unreadable(runs.unreadable, request, hints)
    if not kept:
        reason = (
            f"; {plural(len(skipped), 'run')} {agree(len(skipped), 'were')} skipped because they have none of the fields "
            f"{', '.join(flat.values())} or are analysis runs"
            if skipped
            else ""
        )
        raise InputError(said(f"no runs to analyse in {where}{reason}. ", hints.fields, "."))
    check_configuration_keys(kept, request, hints)
    wanted = [request.history_key] if request.history_key is not None else []
    if rule.needs_history:
        wanted += [history_name(ref) for ref in scores]
    if wanted and runs.fill_history is not None:
        used = [r for r in kept if request.include_unfinished or r.state == FINISHED]
        for key in dict.fromkeys(wanted):
            for name, runs_of in _history_names(used, key).items():
                runs.fill_history(runs_of, name)
    table = records_to_table(kept, replace(request, score=scores, score_rule=rule), source=info, hints=hints)
    note = unrelated_warning(skipped, flat, tracker)
    if note:
        table.warnings.append(note)
    if runs.skipped:
        table.warnings.append(
            f"skipped {plural(len(runs.skipped), 'folder')} that {agree(len(runs.skipped), 'are')} no runs: "
            + ", ".join(f"{s['run_id']!r} ({s['reason']})" for s in runs.skipped[:10])
            + (" ..." if len(runs.skipped) > 10 else "")
        )
    excluded = table.source.get("excluded") or []
    if excluded:
        table.warnings.append(
            said(
                f"left out {plural(len(excluded), 'run', f'unfinished {tracker}')} (",
                ", ".join(f"{n} {s}" for s, n in table.source.get("excluded_summary", {}).items()),
                ")",
                said("; pass ", kw("include_unfinished=True"), " to use them")
                if hints.has("include_unfinished=True")
                else "",
            ).text()
        )
    if runs.unreadable:
        record_unreadable(table, runs.unreadable, n_runs=len(records) + len(runs.unreadable))
    if runs.notes:  # what the source read around comes first: it qualifies everything after it
        table.warnings[:0] = list(dict.fromkeys(runs.notes))
        table.source["notes"] = list(dict.fromkeys(runs.notes))
    return table


#: The request fields a Source may restate in its own references (:attr:`SourceRuns.request`); the others are rules.
_REFERENCES = ("algorithm", "task", "seed", "score", "curve_key", "extra_fields", "value_fields")


def shown_refs(asked: SourceRequest, read: SourceRequest) -> dict[str, str]:
    """``{reference the source reads: reference as asked}`` where a Source restated one (a TensorBoard tag
    ``eval/return`` read as ``summary.eval/return``, a Ray key ``config/lr`` as ``config.lr``), so that messages
    name what the user gave.

    Example:
        >>> shown_refs(SourceRequest(score="ret"), SourceRequest(score="summary.ret"))
        {'summary.ret': 'ret'}
    """
    pairs: list[tuple[Any, Any]] = [(getattr(read, n), getattr(asked, n)) for n in ("algorithm", "task", "seed")]
    pairs.append((read.curve_key, asked.curve_key))
    pairs += [(ref, (asked.extra_fields or {}).get(name)) for name, ref in (read.extra_fields or {}).items()]
    try:
        asked_scores, read_scores = score_refs(asked.score or ()), score_refs(read.score or ())
    except ValueError:
        asked_scores = read_scores = []
    if len(asked_scores) == len(read_scores):
        pairs += list(zip(read_scores, asked_scores))
    return {str(r): str(a) for r, a in pairs if r is not None and a is not None and str(r) != str(a)}


def _as_read(asked: SourceRequest, read: SourceRequest | None) -> SourceRequest:
    """The request in the source's references; a source that changed a rule (state, drops, selection, names) is a
    bug of that source, refused here so that no source can skip a rule."""
    if read is None:
        return asked
    if replace(read, **{name: getattr(asked, name) for name in _REFERENCES}) != asked:
        changed = [
            f.name
            for f in fields(asked)
            if f.name not in _REFERENCES and getattr(asked, f.name) != getattr(read, f.name)
        ]
        raise TypeError(f"a Source may restate only the field references of a request, not {', '.join(changed)}")
    return read


#: Runs an error lists before it counts the rest.
_SHOWN = 10


def check_unreadable(unreadable: Sequence[Mapping[str, Any]], request: SourceRequest, hints: Hints) -> None:
    """Runs whose files cannot be read are an error naming each file, unless ``on_invalid="drop"``."""
    if not unreadable or request.on_invalid == "drop":
        return
    reasons: list[Message | str] = []
    for d in unreadable[:_SHOWN]:  # a reason that keeps its message (a keyword named in it) stays a message
        reasons += ["; " if reasons else "", message_of(d["reason"])]
    raise InputError(
        said(
            f"{plural(len(unreadable), 'run')} cannot be read: ",
            *reasons,
            " ..." if len(unreadable) > _SHOWN else "",
            said(". Pass ", kw(DROP_INVALID), " to leave these runs out (they are listed in provenance).")
            if hints.has(DROP_INVALID)
            else ".",
        ),
        [str(d["reason"]) for d in unreadable],
    )


def record_unreadable(table: ScoreTable, unreadable: Sequence[Mapping[str, Any]], *, n_runs: int) -> None:
    """Runs left out because their files cannot be read: in ``table.dropped`` (provenance) and one console line."""
    import pandas as pd

    rows = [
        {"run_id": d["run_id"], "algorithm": d.get("algorithm"), "task": d.get("task"), "reason": d["reason"]}
        for d in unreadable
    ]
    table.dropped = pd.concat([pd.DataFrame(rows), table.dropped], ignore_index=True)
    table.warnings.extend(
        drop_summary(
            [{**r, "reason": "damaged, truncated or unreadable file"} for r in rows],
            n_runs=n_runs,
            cells_before={},
            cells_after={},
        )
    )
    table.source["damaged"] = [r["reason"] for r in rows]


def check_configuration_keys(kept: Sequence[RunRecord], request: SourceRequest, hints: Hints) -> None:
    """A configuration (hyperparameter) key that none of the runs has is a typo: one sentence naming it and the
    keys the runs do have, never a silent column of empty cells."""
    for name, text in (request.extra_fields or {}).items():
        try:
            ref = parse_field_ref(text)
        except ValueError as err:
            raise InputError(said(kw(hints.configuration), f" {name!r}: {err}")) from None
        if any(_has(r, ref) for r in kept):
            continue
        known: set[str] = set()
        for r in kept[:200]:
            mapping = getattr(r, ref.kind, {}) if ref.kind not in ("tags", "run") else {}
            if isinstance(mapping, Mapping):
                known.update(str(k) for k in mapping)
        shown = sorted(known)[:12]
        raise InputError(
            said(kw(hints.configuration), f" names {name!r}, which no run has")
            + (f" (the runs' {ref.kind} keys: {', '.join(shown)}{', ...' if len(known) > 12 else ''})" if shown else "")
            + "; check the spelling."
        )
