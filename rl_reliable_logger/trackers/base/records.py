"""Tracker-neutral run records and the field-reference grammar shared by every adapter.

Each tracker's Source turns its runs into :class:`RunRecord` objects; this
module turns records into a :class:`~rl_reliable_logger.scores.ScoreTable`, so grouping rules,
missing-field errors and unfinished-run bookkeeping are the same for every tracker.

Field references: ``config.<key>``, ``summary.<key>``, ``params.<key>``, ``metrics.<key>``,
``tags.<key>`` (a tag's value, or for list tags the part after ``<prefix>:`` / ``<prefix>=``
of the tag that starts with it: a tag ``algo:PPO`` gives ``PPO`` for ``tags.algo``) and
``run.<attr>`` (``name``, ``id``, ``group``, ``job_type``, ``sweep``, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from ...data.counts import agree, plural
from ...data.names import value_key, value_text
from ...data.scores import FINAL_SCORE, LAST_STEP, ScoreTable, seed_key
from ...errors import InputError, ScoreTableError
from ...wording import Field, Message, kw, said
from .drops import drop_summary
from .messages import DROP_INVALID, Hints
from .request import KINDS, REF_FIELDS, ROW_COLUMNS, SourceRequest
from .reruns import choice_hint, pick_rerun, rerun_keyword
from .scoring import (
    MAX_BIAS_WARNING,
    SEED_PLACEHOLDER,
    ScoreRule,
    final_value_problem,
    finite_number,
    history_name,
    parse_score_rule,
    score_refs,
    seed_pattern,
    with_seed,
)

FINISHED = "finished"
#: The summary keys (and columns) of the successful and total episodes behind a run's score, where a Source reads
#: them (for ``--successes successes --episodes episodes``).
SUCCESS_COUNTS = ("successes", "episodes")


def success_fields(records: Sequence[RunRecord]) -> dict[str, str] | None:
    """The ``value_fields`` of the success counts when any of ``records`` has them in its summary (else None)."""
    if not any(SUCCESS_COUNTS[0] in r.summary for r in records):
        return None
    return {column: f"summary.{column}" for column in SUCCESS_COUNTS}


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
    #: the seed label of one seed of a run that logs several (a ``{seed}`` score key); None for one seed per run
    seed_label: str | None = None
    #: when the run started, in seconds since the epoch (a tracker's start time; for a log folder the time its
    #: writer recorded, else its data file's modification time); None where unknown. Orders the runs of one seed
    #: trained more than once (``reruns=``, :mod:`.reruns`)
    started: float | None = None


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
    return (
        f"{record.run_id}"
        + (f" ({record.name})" if record.name and record.name != record.run_id else "")
        + (f" seed {record.seed_label}" if record.seed_label is not None else "")
    )


def _identity(record: RunRecord, key: Any = None) -> str:
    """A run's identity in the table: its run id (or run key), plus the seed label for a run of several seeds."""
    base = str(record.run_id if key is None else key)
    return base if record.seed_label is None else f"{base}:seed={record.seed_label}"


def variant_label(algorithm: Any, variants: Mapping[str, Any]) -> str:
    """``PPO`` + ``{"config.lr": 0.001}`` -> ``PPO lr=0.001`` (the algorithm label of a sweep configuration; text a
    label would misread is quoted, :func:`~...data.names.value_text`, so two configurations never share one)."""
    if not variants:
        return str(algorithm)
    return f"{algorithm} " + ", ".join(f"{ref.split('.', 1)[1]}={value_text(value)}" for ref, value in variants.items())


def last_step(record: RunRecord, score_ref: str) -> float | None:
    """The last logged step of a run's score key where the record holds its history (None where it does not, or
    where a step is no finite number): what the budget checks compare, with or without the curves."""
    points = (record.history or {}).get(history_name(score_ref)) or ()
    finite = [float(step) for step, _ in points if finite_number(step)]
    return max(finite) if finite and len(finite) == len(points) else None


def _final_score(record: RunRecord, refs: list[FieldRef], rule: ScoreRule) -> tuple[Any, str | None, str | None]:
    """(value, the reference it came from, problem): the first score reference the run has, by ``rule``."""
    for ref in refs:
        if rule.needs_history:
            points = (record.history or {}).get(history_name(str(ref)))
            if not points:
                continue
            value, problem = rule.apply(points)
            return value, str(ref), (f"{ref} by score rule {rule}: {problem}" if problem else None)
        try:
            return resolve(record, ref), str(ref), None
        except KeyError:
            continue
    return None, None, None


class _Unset:
    """``history_key`` not given: the request's."""


_UNSET = _Unset()


def records_to_table(
    records: Iterable[RunRecord],
    request: SourceRequest | None = None,
    *,
    source: Mapping[str, Any] | None = None,
    history_key: str | None | _Unset = _UNSET,
    hints: Hints | None = None,
    **keywords: Any,
) -> ScoreTable:
    """Group tracker runs into a ScoreTable by the field references of ``request`` (or its keywords).

    ``history_key`` names the curve's history as the records hold it (default: the history name of the
    request's ``curve_key``), for a Source whose record histories are named otherwise.

    ``score`` is the final score: one reference or a fallback list (the first one a run has is
    used; the count per reference is in provenance). ``score_rule`` (``last``, ``mean-last-N``,
    ``at-budget:STEP``, ``max``; see :mod:`.scoring`) reads it from the key's history. With
    ``curve_key`` the table also gets one row per logged step of that key (the learning curve);
    the final scores stay the score key's values (column ``final_score``). ``variant`` references
    are appended to the algorithm label (``PPO lr=0.001``), one label per sweep configuration.
    ``names`` is ScoreTable's (``"normalize"`` strips and NFC-normalises names instead of refusing them).
    ``hints`` words the advice of the messages in the source's own options (default: every keyword).

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
        req = SourceRequest.of(request, **keywords)
    except InputError as err:
        raise ScoreTableError(str(err)) from None
    hints = hints or Hints()
    fields_ = _Fields.parse(req, req.history_key if isinstance(history_key, _Unset) else history_key)
    records = [one for record in records for one in fields_.expand(record)]
    info: dict[str, Any] = dict(source or {})
    info["fields"] = fields_.provenance(hints.ref_words)
    info["n_runs_seen"] = len(records)
    if not records:
        raise ScoreTableError(
            "no runs found"
            + (f" in {info['location']}" if "location" in info else "")
            + ". Check the project / experiment name and the filter."
        )
    grouping = _Grouping(fields_, hints)
    for record in records:
        grouping.add(record)
    if not req.run_key:
        grouping.drop_duplicates()
    info["excluded"] = grouping.excluded
    if grouping.excluded:
        by_state: dict[str, int] = {}
        for e in grouping.excluded:
            by_state[e["state"]] = by_state.get(e["state"], 0) + 1
        info["excluded_summary"] = dict(sorted(by_state.items()))  # by state name, not by the runs' (random) ids
    if grouping.problems and (req.on_invalid != "drop" or grouping.refused):
        shown = grouping.problems
        if req.on_invalid == "drop":  # the other problems were dropped as asked: only the refused seeds are said
            shown = {kind: runs for kind, runs in shown.items() if str(kind).startswith("duplicate")}
        advice = list(grouping.advice)
        raise ScoreTableError(
            _problems_message(shown, hints, (grouping.differing, advice), dropping=req.on_invalid == "drop")
        )
    rows = _one_seed_type(grouping.rows(hints))
    info["score"] = fields_.score_provenance(grouping.used_refs, hints.ref_words)
    if not rows:
        raise ScoreTableError(_no_rows_message(info, records, grouping, hints))
    table = ScoreTable(
        pd.DataFrame(rows),
        run_id="run_id",
        step="step" if fields_.history_key is not None else None,
        on_invalid=req.on_invalid,  # type: ignore[arg-type]
        source=info,
        names=req.names,  # type: ignore[arg-type]
    )
    _add_warnings(table, grouping, n_runs=len(records) - len(grouping.excluded))
    return table


@dataclass(frozen=True)
class _Fields:
    """The parsed references of a request: the fields a run must have, its score keys and rule."""

    request: SourceRequest
    refs: dict[str, str]
    parsed: dict[str, FieldRef]
    scores: list[str]
    score_parsed: list[FieldRef]
    rule: ScoreRule
    history_key: str | None

    @classmethod
    def parse(cls, req: SourceRequest, history_key: str | None) -> _Fields:
        try:
            missing = [
                name for name in REF_FIELDS if getattr(req, name) is None and not (name == "seed" and req.seeded)
            ]
            if missing:
                raise ValueError(said(kw(missing[0] + "="), " is needed: name the field reference of each run"))
            scores = score_refs(req.score or ())
            rule = parse_score_rule(req.score_rule)
        except ValueError as err:
            raise ScoreTableError(str(err)) from None
        refs = req.refs()
        if req.run_key:
            refs["run_key"] = req.run_key
        for keyword, columns in (("extra_fields=", req.extra_fields), ("value_fields=", req.value_fields)):
            clash = [name for name in columns or {} if name in (*ROW_COLUMNS, *REF_FIELDS[:3])]
            if clash:
                raise ScoreTableError(
                    said(
                        kw(keyword),
                        f" names the column {clash[0]!r}, which every run's row has of its own (the logged steps, "
                        "the score, the run or its fields); read that key under another name",
                    )
                )
        both = sorted(set(req.extra_fields or {}) & set(req.value_fields or {}))
        if both:
            raise ScoreTableError(
                said(kw("extra_fields="), " and ", kw("value_fields="), f" both name the column {both[0]!r}")
            )
        refs.update(req.extra_fields or {})
        refs.update(req.value_fields or {})
        parsed: dict[str, FieldRef] = {}
        for name, text in [*refs.items(), *((f"variant {v}", v) for v in req.variant)]:
            try:
                parsed[name] = parse_field_ref(text)
            except ValueError as err:
                raise ScoreTableError(said(kw(name.split(" ")[0] + "="), f": {err}")) from None
        score_parsed = []
        for text in scores:
            try:
                score_parsed.append(parse_field_ref(text))
            except ValueError as err:
                raise ScoreTableError(said(kw("score="), f": {err}")) from None
        _check_placeholders(score_parsed, history_key)
        return cls(req, refs, parsed, scores, score_parsed, rule, history_key)

    def expand(self, record: RunRecord) -> list[RunRecord]:
        """One record per seed label that a ``{seed}`` score key matches in ``record``.

        A run where no key matches stays one record, so that it is named as lacking the score key.
        """
        labels: set[str] = set()
        for ref in self.score_parsed:
            pattern = seed_pattern(ref.key)
            if pattern is None:
                continue
            names = list(_mapping(record, ref.kind))
            if self.rule.needs_history:
                names += list(record.history or {})
            labels.update(m.group("seed") for m in map(pattern.fullmatch, names) if m)
        if not labels:
            return [record]
        return [replace(record, seed_label=label) for label in sorted(labels, key=_label_order)]

    def score_refs_of(self, record: RunRecord) -> list[FieldRef]:
        """The score references of one record (the placeholder filled by its seed label)."""
        return [FieldRef(ref.kind, with_seed(ref.key, record.seed_label)) for ref in self.score_parsed]

    def provenance(self, words: Callable[[str], str]) -> dict[str, Any]:
        """The fields read, each reference in the source's ``words`` (:meth:`.messages.Hints.ref_words`)."""
        scores = [words(s) for s in self.scores]
        out: dict[str, Any] = {k: words(v) for k, v in self.refs.items()}
        out["score"] = scores[0] if len(scores) == 1 else scores
        if self.request.variant:
            out["variant"] = [words(v) for v in self.request.variant]
        return out

    def score_provenance(self, used_refs: Mapping[str, int], words: Callable[[str], str]) -> dict[str, Any]:
        """How the final scores were read, each reference in the source's ``words``."""
        scores = [words(s) for s in self.scores]
        history_key = None if self.history_key is None else words(self.history_key)
        return {
            "keys": scores,
            "rule": str(self.rule),
            "runs_per_key": {words(k): n for k, n in used_refs.items()},
            "curve_key": history_key,
            "final_scores_from": f"{' or '.join(scores)} ({self.rule})"
            + (f"; the curve key {history_key} gives the learning curves only" if history_key else ""),
        }

    def variants(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {str(self.parsed[f"variant {v}"]): values[f"variant {v}"] for v in self.request.variant}

    def label(self, values: Mapping[str, Any]) -> Any:
        """The algorithm label of a run's values (None when it lacks the algorithm or a variant field)."""
        label = values.get("algorithm")
        if label is not None and all(f"variant {v}" in values for v in self.request.variant):
            label = variant_label(label, self.variants(values))
        return label

    def values(self, record: RunRecord) -> tuple[dict[str, Any], list[str]]:
        """(values of the fields, references the run lacks that it must have)."""
        values: dict[str, Any] = {} if record.seed_label is None else {"seed": record.seed_label}
        lacks = []
        for name, ref in self.parsed.items():
            try:
                values[name] = resolve(record, ref)
            except KeyError:
                if name in ("algorithm", "task", "seed", "run_key") or name.startswith("variant "):
                    lacks.append(str(ref))
                else:
                    values[name] = None
        return values, lacks


class _Grouping:
    """The runs of one ``records_to_table`` call sorted into candidates, exclusions, problems and drops."""

    def __init__(self, fields_: _Fields, hints: Hints):
        self.fields = fields_
        self.hints = hints  # a missing field is named as the user wrote it
        self.excluded: list[dict[str, Any]] = []
        self.candidates: list[tuple[RunRecord, dict[str, Any], Any]] = []
        self.problems: dict[Message | str, list[str]] = {}
        self.dropped: list[dict[str, Any]] = []
        self.used_refs: dict[str, int] = {}
        #: configuration keys whose values differ between runs reported as duplicates (the fix to name)
        self.differing: dict[str, None] = {}
        #: a seed in several runs was refused (by ``reruns=`` or because which started last cannot be told): an
        #: error even with ``on_invalid="drop"``, which never picks among the runs of one seed
        self.refused = False
        #: one line per seed of which ``reruns=`` kept one run
        self.reruns: list[str] = []
        #: what to do about the problems other than duplicates, each once (:meth:`Hints.fix_for`)
        self.advice: dict[Message | str, None] = {}

    def problem(self, kind: Message | str, record: RunRecord, values: Mapping[str, Any]) -> None:
        self.problems.setdefault(kind, []).append(_run_label(record))
        label = self.fields.label(values)
        self.dropped.append(
            {"run_id": _identity(record), "algorithm": label, "task": values.get("task"), "reason": str(kind)}
        )

    def add(self, record: RunRecord) -> None:
        """Sort one run: excluded (unfinished), a problem (a missing field, a bad score) or a candidate."""
        state = (record.state or "").lower()
        if state != FINISHED and not self.fields.request.include_unfinished:
            self.excluded.append({"run_id": record.run_id, "name": record.name, "state": state or "unknown"})
            self.excluded[-1].update(self._cell(record))
            return
        values, missing = self.fields.values(record)
        lacks: list[Message | Field] = [Field(self.hints.ref(ref)) for ref in missing]
        if lacks:
            self.advice[self.hints.fields] = None
        refs = self.fields.score_refs_of(record)
        final, used, why = _final_score(record, refs, self.fields.rule)
        if used is None:
            shown = [self.hints.ref(score) for score in self.fields.scores]
            self.advice[self.hints.fix_for(shown)] = None
            what = said(" or ").join(Field(ref) for ref in shown)
            lacks.append(said("history of ", what) if self.fields.rule.needs_history else what)
        if lacks:
            self.problem(said(MISSING, said(", ").join(lacks)), record, values)
            return
        if why is not None:
            self.advice[said("Score every run by a ", kw("score_rule="), " it meets (e.g. an earlier budget step)")] = (
                None
            )
            self.problem(why.split(": ", 1)[1] if ": " in why else why, record, values)
            return
        bad = final_value_problem(final)
        if bad is not None:
            self.problem(said(f"{bad} in ", Field(self.hints.ref(str(used)))), record, values)
            return
        key = self.fields.scores[[str(ref) for ref in refs].index(str(used))]  # the key as given, placeholder kept
        self.used_refs[key] = self.used_refs.get(key, 0) + 1
        values["algorithm"] = variant_label(values["algorithm"], self.fields.variants(values))
        values["_score_key"] = str(used)
        values[LAST_STEP] = last_step(record, str(used))
        self.candidates.append((record, values, float(final)))

    def _cell(self, record: RunRecord) -> dict[str, str]:
        """An unfinished run's algorithm, task, seed and configuration (``extra_fields``) values, as text (those it
        has): a watch or a race never launches its seed again, since the run may still finish."""
        values, _ = self.fields.values(record)
        cell = {"algorithm": self.fields.label(values), "task": values.get("task"), "seed": values.get("seed")}
        cell.update({name: values.get(name) for name in self.fields.request.extra_fields or {}})
        return {name: str(value) for name, value in cell.items() if value is not None}

    def drop_duplicates(self) -> None:
        """The same configuration and seed in several runs: refused, naming every run id (``reruns='refuse'``, and
        where which started last cannot be told), or one kept by ``reruns=`` and the others listed as dropped."""
        groups: dict[tuple[Any, ...], list[tuple[RunRecord, dict[str, Any], Any]]] = {}
        for cand in self.candidates:
            _, values, _ = cand
            key = (str(values["algorithm"]), str(values["task"]), seed_key(values["seed"])) + tuple(
                value_key(values.get(name)) for name in (self.fields.request.extra_fields or {})
            )
            groups.setdefault(key, []).append(cand)
        keep_ids = set()
        rule = self.fields.request.reruns
        for key, group in groups.items():
            if len(group) == 1:
                keep_ids.add(id(group[0][0]))
                continue
            kept, why = pick_rerun([r.started for r, _, _ in group], rule)
            if kept is None:
                self._duplicate(key, group, why)
            else:
                keep_ids.add(id(group[kept][0]))
                self._rerun(key, group, kept, rule)
        self.candidates = [c for c in self.candidates if id(c[0]) in keep_ids]

    def _duplicate(
        self, key: tuple[Any, ...], group: list[tuple[RunRecord, dict[str, Any], Any]], why: str | None
    ) -> None:
        ids = ", ".join(_run_label(r) for r, _, _ in group)
        self.differing.update(dict.fromkeys(_differing_config([r for r, _, _ in group], self.fields)))
        kind = f"duplicate seed {key[2]} for {key[0]} / {key[1]}: runs {ids}" + (f" ({why})" if why else "")
        self.problems.setdefault(kind, []).extend(_run_label(r) for r, _, _ in group[1:])
        self.refused = True

    def _rerun(
        self, key: tuple[Any, ...], group: list[tuple[RunRecord, dict[str, Any], Any]], kept: int, rule: str
    ) -> None:
        """One seed trained more than once, one run kept by ``reruns=``: the others dropped and listed, the choice
        said (with the configuration keys the runs differ in, which would make them configurations instead)."""
        keep = group[kept][0]
        others = [r for i, (r, _, _) in enumerate(group) if i != kept]
        differing = _differing_config([r for r, _, _ in group], self.fields)
        self.reruns.append(
            f"{key[0]} / {key[1]} seed {key[2]}: kept {_run_label(keep)}, left out {', '.join(map(_run_label, others))}"
            + (f" (they differ in {', '.join(differing)})" if differing else "")
        )
        for r in others:
            self.dropped.append(
                {
                    "run_id": _identity(r),
                    "algorithm": key[0],
                    "task": key[1],
                    "reason": f"rerun of seed {key[2]} ({rerun_keyword(rule)!s} kept run {_identity(keep)})",
                }
            )

    def rows(self, hints: Hints) -> list[dict[str, Any]]:
        """The table's rows: one per run, or one per logged step of the curve key (runs without it dropped)."""
        req = self.fields.request
        history_key = self.fields.history_key
        rows: list[dict[str, Any]] = []
        missing_curve: list[str] = []
        steps_known = any(values.get(LAST_STEP) is not None for _, values, _ in self.candidates)
        for record, values, final in self.candidates:
            base = self._base_row(record, values, steps_known)
            if history_key is None:
                rows.append({**base, "score": final})
                continue
            curve = with_seed(history_key, record.seed_label)
            hist = (record.history or {}).get(curve)
            if not hist:
                missing_curve.append(_run_label(record))
                self.dropped.append(
                    {
                        "run_id": _identity(record),
                        "algorithm": values["algorithm"],
                        "task": values["task"],
                        "reason": f"no logged history of the curve key {curve}",
                    }
                )
                continue
            rows.extend({**base, "step": step, "score": value, FINAL_SCORE: final} for step, value in hist)
        if missing_curve and req.on_invalid != "drop":
            raise ScoreTableError(
                f"{plural(len(missing_curve), 'run')} {agree(len(missing_curve), 'have')} a final score but no logged history of the curve key "
                f"{history_key!r}: {', '.join(missing_curve[:10])}"
                + (" ..." if len(missing_curve) > 10 else "")
                + (said(". Check ", kw("curve_key=")) if hints.has("curve_key=") else ". Check the curve key")
                + (
                    said(", or pass ", kw(DROP_INVALID), " to leave these runs out.")
                    if hints.has(DROP_INVALID)
                    else "."
                )
            )
        return rows

    def _base_row(self, record: RunRecord, values: Mapping[str, Any], steps_known: bool) -> dict[str, Any]:
        base = {
            "algorithm": values["algorithm"],
            "task": values["task"],
            # the ScoreTable key: the tracker run id (or the run key), never the seed
            "run_id": _identity(record, values.get("run_key")),
            "seed": values["seed"],
            "tracker_run_id": record.run_id,
            "run_name": record.name,
            "state": (record.state or "").lower(),
            "score_key": values["_score_key"],
        }
        for name in [*(self.fields.request.extra_fields or {}), *(self.fields.request.value_fields or {})]:
            base[name] = values.get(name)
        if steps_known:  # the source knows the steps
            base[LAST_STEP] = values.get(LAST_STEP)
        if record.attrs.get("url"):
            base["url"] = record.attrs["url"]
        return base


def _one_seed_type(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seed labels of one type: where some are text (``007``, ``a``), every label is its text as written (``7``),
    so the column holds labels, never a mix of numbers and text (which a tracker's table type refuses)."""
    kinds = {isinstance(row["seed"], str) for row in rows}
    if len(kinds) > 1:
        for row in rows:
            row["seed"] = seed_key(row["seed"])
    return rows


def _mapping(record: RunRecord, kind: str) -> Mapping[str, Any]:
    """The keys of one kind of a record (``metrics``, ``summary``, ...): where a ``{seed}`` key is matched."""
    value = record.attrs if kind == "run" else getattr(record, kind)
    return value if isinstance(value, Mapping) else {}


def _label_order(label: str) -> tuple[bool, int, str]:
    """Seed labels in numeric order where they are numbers (``2`` before ``10``), then as text."""
    return (not label.isdigit(), int(label) if label.isdigit() else 0, label)


def _check_placeholders(scores: Sequence[FieldRef], history_key: str | None) -> None:
    """A ``{seed}`` placeholder in some score keys but not all, or only in the curve key, is an error."""
    seeded = [SEED_PLACEHOLDER in ref.key for ref in scores]
    if any(seeded) and not all(seeded):
        raise ScoreTableError(
            said(
                kw("score="),
                f": either every key of the fallback list has the {SEED_PLACEHOLDER} placeholder or none (got "
                f"{', '.join(map(str, scores))})",
            )
        )
    if history_key is not None and (SEED_PLACEHOLDER in history_key) != any(seeded):
        raise ScoreTableError(
            said(
                kw("curve_key="),
                f" {history_key!r} and ",
                kw("score="),
                f" must both have the {SEED_PLACEHOLDER} placeholder or neither (a run holds one seed or several)",
            )
        )


#: Duplicate (algorithm, task, seed) lines an error shows before it counts the rest.
#: How a problem of runs that lack fields starts (its fields follow).
MISSING = "missing field(s) "
SHOWN_DUPLICATES = 5


def _differing_config(records: Sequence[RunRecord], fields_: _Fields) -> list[str]:
    """The config / params keys whose values differ between ``records`` (runs reported as one seed twice): the
    configuration keys that would tell them apart, if they are configurations."""
    used = {ref.key for ref in fields_.parsed.values() if ref.kind in ("config", "params")}
    out: list[str] = []
    for kind in ("config", "params"):
        mappings = [getattr(r, kind) for r in records]
        keys = sorted({k for m in mappings for k in m} - used)
        for key in keys:
            if len({repr(m.get(key)) for m in mappings}) > 1 and not isinstance(mappings[0].get(key), Mapping):
                out.append(key)
    return out[:3]


def _problems_message(
    problems: Mapping[Message | str, list[str]],
    hints: Hints,
    fixes_of: tuple[Mapping[str, None], list[Message | str]],
    *,
    dropping: bool = False,
) -> Message:
    """The error naming every run that cannot be used, by kind of problem, and what to do: ``fixes_of`` holds the
    configuration keys that differ between runs reported as one seed, and the advice that fits the other problems
    (a missing field's, a missing score's; none for a score the rule cannot read, such as a run short of the
    budget: it is the run, not the fields, that falls short)."""
    differing, advice = fixes_of
    lines: list[Message | str] = []
    duplicates = [kind for kind in problems if str(kind).startswith("duplicate")]
    for kind, runs in problems.items():
        if str(kind).startswith("duplicate"):
            if kind in duplicates[:SHOWN_DUPLICATES]:
                lines.append(kind)
            elif kind == duplicates[SHOWN_DUPLICATES]:
                rest = len(duplicates) - SHOWN_DUPLICATES
                lines.append(
                    f"... and {rest} more (algorithm, task, seed) {agree(rest, 'are')} repeated in another run"
                )
            continue
        lacked = said(kind).parts[1:] if str(kind).startswith(MISSING) else None
        what = said(agree(len(runs), "lack"), " ", Message(lacked)) if lacked is not None else said("— ", kind)
        listed = ", ".join(runs[:10]) + (" ..." if len(runs) > 10 else "")
        lines.append(said(f"{plural(len(runs), 'run')} ", what, f": {listed}"))
    fixes: list[Message | str] = list(advice) if len(duplicates) < len(problems) else []
    if hints.has(DROP_INVALID) and not dropping and len(duplicates) < len(problems):
        fixes.append(
            said(
                f"{('or pass' if fixes else 'Pass')} ",
                kw(DROP_INVALID),
                " to leave these runs out (they are listed in provenance)",
            )
        )
    # the duplicates' fix is said first: their list can be long, and the one line a user reads is cut at its end
    head = said(" (", _duplicate_hint(hints, list(differing)), ")") if duplicates else ""
    return said(
        "some runs cannot be used",
        head,
        ":\n",
        said("\n").join(said("  - ", line) for line in lines),
        said("\n", said("; ").join(fixes), ".") if fixes else "",
    )


def _duplicate_hint(hints: Hints, differing: Sequence[str]) -> Message:
    """What to do about one seed in two runs, in the source's own options (the differing keys first)."""
    fixes: list[Message | str] = []
    if differing:
        keys = ",".join(differing)
        fixes.append(
            said(
                f"these runs differ in {', '.join(differing)}: if "
                f"{('that is' if len(differing) == 1 else 'these are')} part of the configuration, pass ",
                kw(hints.configuration + keys),
                " so each configuration is analysed apart",
            )
        )
    fixes.append(
        (
            "if instead one seed was trained again, "
            if differing
            else "one seed in two runs usually means it was trained again: "
        )
        + choice_hint()
        + (
            said(", or keep one with ", kw("filter_string="), " (e.g. a tag or the start time)")
            if hints.has("filter_string=")
            else ""
        )
    )
    if hints.has("variant="):
        fixes.append(
            said("for a sweep tell configurations apart with ", kw("variant="), " or ", kw(hints.configuration))
        )
    elif not differing:
        fixes.append(said("tell configurations apart with ", kw(hints.configuration)))
    if hints.has("run_key="):
        fixes.append(said("pass ", kw("run_key="), " (e.g. run.id) if these are deliberately repeated runs"))
    if hints.duplicates:
        fixes.append(hints.duplicates)
    return said("; ").join(fixes)


def _no_rows_message(
    info: Mapping[str, Any], records: Sequence[RunRecord], grouping: _Grouping, hints: Hints
) -> Message:
    states = ", ".join(f"{n} {s}" for s, n in info.get("excluded_summary", {}).items())
    use = said("; pass ", kw("include_unfinished=True"), " to use them") if hints.has("include_unfinished=True") else ""
    return said("no usable runs") + (
        said(f": all {len(records)} runs were skipped as unfinished ({states})", use)
        if grouping.excluded and not grouping.candidates
        else f": every run was dropped ({len(grouping.dropped)} drop(s))"
        if grouping.dropped
        else ""
    )


def _add_warnings(table: ScoreTable, grouping: _Grouping, *, n_runs: int) -> None:
    """The drops, the max-rule bias and a mixed score key, in ``table.dropped`` and ``table.warnings``."""
    if grouping.dropped:
        table.dropped = pd.concat([pd.DataFrame(grouping.dropped), table.dropped], ignore_index=True)
    if grouping.reruns:
        shown = grouping.reruns[:SHOWN_DUPLICATES]
        rule = grouping.fields.request.reruns
        table.warnings.append(
            (
                said(
                    f"kept the run that started {('last' if rule == 'latest' else 'first')} of each of "
                    f"{plural(len(grouping.reruns), 'seed')} trained more than once (",
                    rerun_keyword(rule),
                    "): ",
                )
                + "; ".join(shown)
                + (
                    f"; and {len(grouping.reruns) - len(shown)} more (listed in provenance)"
                    if grouping.reruns[len(shown) :]
                    else ""
                )
            ).text()
        )
        table.source["reruns"] = {"rule": rule, "kept": list(grouping.reruns)}
    if grouping.fields.rule.kind == "max":
        table.warnings.append(MAX_BIAS_WARNING)
    if len(grouping.used_refs) > 1:
        table.warnings.append(
            said(
                "final scores come from several keys (fallback list): ",
                said(", ").join(said(f"{plural(n, 'run')} from ", Field(ref)) for ref, n in grouping.used_refs.items()),
            ).text()
        )
    if not len(table.dropped):
        return
    before: dict[tuple[str, str], set[str]] = {}
    for record, values, _ in grouping.candidates:
        before.setdefault((str(values["algorithm"]), str(values["task"])), set()).add(_identity(record))
    for d in grouping.dropped:
        if d.get("algorithm") is not None and d.get("task") is not None:
            before.setdefault((str(d["algorithm"]), str(d["task"])), set()).add(str(d["run_id"]))
    after = table.final().frame.groupby(["algorithm", "task"])["run_id"].nunique().to_dict()
    lines = drop_summary(
        table.dropped.to_dict("records"),
        n_runs=n_runs,
        cells_before={k: len(v) for k, v in before.items()},
        cells_after={(str(a), str(t)): int(n) for (a, t), n in after.items()},
    )
    table.source["drop_summary"] = list(lines)
    table.warnings.extend(lines)
