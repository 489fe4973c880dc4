"""A Ray Tune experiment folder read as data: its JSON and CSV files only, never a pickle, never Ray.

An experiment folder comes from anywhere (a colleague's results, a download), so it is untrusted input. Tune
keeps the same facts twice, as JSON/CSV and as pickles (``tuner.pkl``, ``params.pkl``, an ERROR trial's
``error.pkl``); unpickling a file runs whatever code it names. This module reads only:

* ``experiment_state-<time>.json`` (the newest one): its ``trial_data`` entries, each a pair of JSON texts, give
  each trial's id, status (``TERMINATED``, ``ERROR``, ``RUNNING``, ``PENDING``, ``PAUSED``), config and folder
  name (the trial state) and its last reported result (the runtime state). In an experiment race_tune's end
  recorder watched (:func:`.ended.recording`), a TERMINATED trial without an end record is CUT_OFF: Tune stopped
  the whole experiment (``fail_fast`` after an error, a ``Stopper``'s ``stop_all()``, ``time_budget_s``) and
  marked it TERMINATED before its trainable returned; the note says how many. Values Tune could only pickle are
  stored as ``{"_type": "CLOUDPICKLE_FALLBACK", "value": <hex>}``: they are never decoded, the note says which
  trial and key, and the trial goes on without them (a field it needs is then missing and named as such);
* when that file is empty or cut short (Tune writes it in place, so a driver killed mid-write leaves it so; JSON
  that is complete, or wrong before its end, is still refused), each trial's folder instead: ``params.json`` (the
  config) and its reports (the last one the last result). Tune records a function trial's normal end only in the
  state file, so such a trial is TERMINATED only when its last report is marked ``done`` or is the report
  race_tune's end record names (:mod:`.ended`), ERROR with Tune's ``error.txt``, else UNKNOWN (left out as
  unfinished); the Experiment's note says so. Tune writes those files in place too, and copies a trial's folder
  to the storage path in place: a trial whose ``params.json`` is cut, or whose reports are (the file ends inside a
  report, or ``result.json`` holds fewer than ``progress.csv``), is passed over, the note naming its folder (its
  run is not known whole: a race runs it again with its seed);
* each trial folder's ``result.json`` (one JSON object per report; ``progress.csv`` when there is no
  ``result.json``), for the reported history, only when a score rule or the curves need it. A TERMINATED trial's
  reports a kill cut (the file ends inside a report, or before the last report the state file records:
  :func:`finished_reports`) are passed over as the folder read passes them over, with one note naming the folder
  and file (:func:`cut_reports_note`).

JSON goes through the one JSON reader (:mod:`...data.jsontext`: a key written twice, an integer no float holds,
nesting too deep are refused naming the file) and ``progress.csv`` through the one CSV row reader
(:mod:`...data.csvrows`: a column named twice, a row too short or too long, a field beyond 131,072 characters).

Every file is opened through :mod:`rl_reliable_logger.data.files` (regular files only, a FIFO or device refused
before opening); a trial folder name that is not one plain name (``..``, a path) is not followed. Nothing of Ray
is imported, so reading needs no Ray and prints none of Ray's log lines; a relative path is a path.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...data.csvrows import csv_records
from ...data.files import read_bytes, read_text
from ...data.jsontext import JsonProblem, loads, parse
from ...errors import InputError
from .ended import FOLDER, ended, last_iteration, recording

#: The status of a trial Tune marked TERMINATED when it stopped the whole experiment, before its trainable returned
#: (no end record in an experiment race_tune's recorder watched): not Tune's word, ours.
CUT_OFF = "CUT_OFF"
#: Tune's trial states, as our run states (a trial is a finished run only when Tune terminated it normally).
STATES = {
    "TERMINATED": "finished",
    "ERROR": "error",
    "RUNNING": "running",
    "PENDING": "pending",
    "PAUSED": "paused",
    CUT_OFF: "cut off",
}
#: How Tune marks a value it could only pickle (the pickle is never read).
PICKLED = "CLOUDPICKLE_FALLBACK"
#: The largest experiment state or result file read (far beyond any real one).
MAX_STATE_BYTES = 2 << 30


@dataclass
class Trial:
    """One trial as its JSON says: id, status, config (flattened), last result (flattened), folder (or None)."""

    trial_id: str
    status: str
    config: dict[str, Any]
    last_result: dict[str, Any]
    folder: Path | None
    name: str | None
    #: when Tune started the trial (its runtime state's ``start_time``, seconds since the epoch), None if unrecorded
    started: float | None = None


@dataclass
class Experiment:
    """The trials of one experiment folder, the state file they came from, and what was read around."""

    folder: Path
    state_file: Path
    trials: list[Trial]
    notes: list[str] = field(default_factory=list)


def flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as Ray flattens them: ``{"env": {"name": "x"}}`` -> ``{"env/name": "x"}``.

    Example:
        >>> flat({"env": {"name": "x"}, "lr": 0.1})
        {'env/name': 'x', 'lr': 0.1}
    """
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value.get("_type") != PICKLED:
            out.update(flat(value, name + "/"))
        else:
            out[name] = value
    return out


def _json(text: str, where: str) -> Any:
    return loads(text, where)


def _state_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("experiment_state-*.json"))


def has_state(folder: Path) -> bool:
    """Whether ``folder`` holds Tune's experiment state (Tune killed early leaves a folder without one)."""
    return bool(_state_files(folder))


def _state_file(folder: Path) -> Path:
    found = _state_files(folder)
    if not found:
        pickles = sorted(p.name for p in folder.glob("*.pkl"))
        raise InputError(
            f"{str(folder)!r} is not a Ray Tune experiment folder (the folder Tuner's RunConfig(storage_path, name) "
            "wrote, with an experiment_state-*.json)"
            + (f"; it has only Ray's pickles ({', '.join(pickles[:3])}), which are never read" if pickles else "")
        )
    return found[-1]  # Tune names the files by time; the newest is the experiment's state


#: Pickled values left out: ``{(what, key): [trial ids]}`` (said once per key, not once per trial).
Pickled = dict[tuple[str, str], list[str]]

#: Trial ids a note names before it counts the rest.
_SHOWN_TRIALS = 5


def _without_pickles(values: dict[str, Any], what: str, trial_id: str, pickled: Pickled) -> dict[str, Any]:
    """``values`` without the entries Tune could only pickle; each one recorded in ``pickled``."""
    keys = [k for k, v in values.items() if isinstance(v, Mapping) and v.get("_type") == PICKLED]
    for key in keys:
        pickled.setdefault((what, key), []).append(trial_id)
    return {k: v for k, v in values.items() if k not in keys}


def pickle_notes(pickled: Pickled) -> list[str]:
    """One note per value Tune could only pickle, naming the trials (a sweep of 1000 trials is one line).

    Example:
        >>> pickle_notes({("config key", "env"): ["a", "b"]})
        ["Ray Tune config key 'env' is stored only as a pickle in 2 trials (a, b), which is never read (untrusted input); they are read without it"]
    """
    out = []
    for (what, key), ids in pickled.items():
        shown = ", ".join(ids[:_SHOWN_TRIALS]) + (
            f" and {len(ids) - _SHOWN_TRIALS} more" if len(ids) > _SHOWN_TRIALS else ""
        )
        where, they = (f"trial {ids[0]}", "it is") if len(ids) == 1 else (f"{len(ids)} trials ({shown})", "they are")
        out.append(
            f"Ray Tune {what} {key!r} is stored only as a pickle in {where}, which is never read (untrusted input); "
            f"{they} read without it"
        )
    return out


def _trial_folder(folder: Path, name: Any) -> Path | None:
    """The trial's folder inside the experiment folder: a plain folder name only, never a path out of it."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        return None
    return folder / name


def _trial(folder: Path, entry: Any, where: str, pickled: Pickled) -> Trial:
    if not (isinstance(entry, (list, tuple)) and len(entry) == 2 and all(isinstance(e, str) for e in entry)):
        raise InputError(f"{where}: a trial_data entry is not a pair of JSON texts (an unknown Ray Tune format)")
    state, runtime = _json(entry[0], where), _json(entry[1], where)
    if not isinstance(state, Mapping) or not isinstance(runtime, Mapping):
        raise InputError(f"{where}: a trial's state is not a JSON object (an unknown Ray Tune format)")
    trial_id = str(state.get("trial_id") or "")
    if not trial_id:
        raise InputError(f"{where}: a trial has no trial_id (an unknown Ray Tune format)")
    config = state.get("config")
    config = flat(config) if isinstance(config, Mapping) else {}
    last = runtime.get("last_result")
    last = dict(last) if isinstance(last, Mapping) else {}
    last.pop("config", None)
    name = state.get("relative_logdir")
    return Trial(
        trial_id=trial_id,
        status=str(state.get("status") or "unknown"),
        config=_without_pickles(config, "config key", trial_id, pickled),
        last_result=_without_pickles(flat(last), "reported metric", trial_id, pickled),
        folder=_trial_folder(folder, name),
        name=name if isinstance(name, str) else None,
        started=_start_time(runtime.get("start_time")),
    )


def _start_time(value: Any) -> float | None:
    """A runtime state's ``start_time`` (``time.time()`` when Tune started the trial; None before it ran)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    return float(value) if ok else None


def read_experiment(folder: str | os.PathLike[str]) -> Experiment:
    """The trials of the experiment folder, in trial order (trial ids count up as Tune creates trials); read from
    the trial folders, with a note, when the state file is empty or cut short.

    Example:
        >>> read_experiment("~/ray_results/bandits").trials[0].status   # doctest: +SKIP
        'TERMINATED'
    """
    path = Path(os.fspath(folder)).expanduser()
    if not path.is_dir():
        raise InputError(f"Ray Tune experiment folder {str(os.fspath(folder))!r} does not exist or is not a folder.")
    state_file = _state_file(path)
    where = str(state_file)
    text = read_text(state_file, "Ray Tune experiment state", max_bytes=MAX_STATE_BYTES)
    try:
        data = _json(text, where)
    except InputError:
        if not cut_short(text):
            raise
        return _from_trial_folders(path, state_file, "empty" if not text.strip() else "cut short")
    entries = data.get("trial_data") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        raise InputError(f"{where}: has no trial_data list (an unknown Ray Tune format)")
    pickled: Pickled = {}
    trials = sorted((_trial(path, entry, where, pickled) for entry in entries), key=lambda t: t.trial_id)
    return Experiment(path, state_file, trials, [*_cut_off(path, trials), *pickle_notes(pickled)])


def _cut_off(folder: Path, trials: list[Trial]) -> list[str]:
    """Mark CUT_OFF the TERMINATED trials without an end record, when race_tune's recorder watched the experiment
    (an older folder, or any other experiment, is read as Tune says); the notes say how many (and any record
    passed over)."""
    if not recording(folder):
        return []
    ends, notes = ended(folder)
    cut = [t for t in trials if t.status == "TERMINATED" and t.trial_id not in ends]
    for trial in cut:
        trial.status = CUT_OFF
    if cut:
        notes.append(cut_off_note(str(folder), len(cut), len(trials), "marked TERMINATED"))
    return notes


def cut_off_note(experiment: str, cut: int, total: int, which: str) -> str:
    """The note on ``cut`` of an experiment's ``total`` trials (``which``: how Tune listed them) that ended with no
    end record: Tune cut them off; said alike for a folder read and a ``ResultGrid``."""
    count = f"{cut} of its {total} trials" if total != 1 else "its 1 trial"
    return (
        f"Ray Tune experiment {experiment!r}: {count} {which} ended with no end record from race_tune ({FOLDER!r}): "
        "Tune cut them off when it stopped the whole experiment (fail_fast after an error, a Stopper's stop_all(), "
        "time_budget_s) before their trainable returned; they are unfinished runs"
    )


#: What Python's JSON decoder says when a text ends before its value does (the text read so far was valid).
_ENDED_EARLY = ("Expecting", "Unterminated string")
#: The words JSON has, and the characters of a number: a text cut inside one ends in a part of it.
_WORDS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_NUMBER_PART = re.compile(r"[-+0-9.eE]+")


def cut_short(text: str) -> bool:
    """Whether ``text`` is empty or JSON cut off before its end (a writer killed mid-write), not JSON that is wrong
    somewhere before its end or complete.

    Example:
        >>> cut_short(""), cut_short('{"trial_data": [["{'), cut_short('{"trial_data": [1.'), cut_short("{}")
        (True, True, True, False)
        >>> cut_short('{"a": 1} x'), cut_short("\\x00garbage"), cut_short('{"a": tru'), cut_short('{"a": 1 2')
        (False, False, True, False)
    """
    if not text.strip():
        return True
    try:
        json.loads(text)  # only where it fails: the text is read by the one JSON reader
    except json.JSONDecodeError as err:
        tail = text[err.pos :].strip()
        if not err.msg.startswith(_ENDED_EARLY):
            return False
        if err.msg.startswith("Unterminated string") or not tail:
            return True  # the decoder reached the end of the text inside a value
        if err.msg.startswith("Expecting value"):  # a value begun: a word or a number cut short
            return any(word.startswith(tail) for word in _WORDS) or _NUMBER_PART.fullmatch(tail) is not None
        return text[err.pos - 1 : err.pos].isdigit() and _NUMBER_PART.fullmatch(tail) is not None  # "1." "1e"
    except (ValueError, RecursionError):
        return False
    return False


def _folder_state(folder: Path, rows: list[dict[str, Any]], end: int | None) -> str:
    """What a trial's folder says of its state: ERROR with Tune's ``error.txt``; TERMINATED when its last report
    is marked done, or is the report race_tune's end record names (``end``, :mod:`.ended`); else UNKNOWN (a
    function trainable's normal end is recorded only in the experiment state)."""
    if os.path.lexists(folder / "error.txt"):
        return "ERROR"
    if rows and rows[-1].get("done") in (True, "True"):
        return "TERMINATED"
    return "TERMINATED" if rows and end is not None and last_iteration(rows[-1]) == end else "UNKNOWN"


#: The files a trial folder holds its reports in (``progress.csv`` only when there is no ``result.json``).
_REPORT_FILES = ("result.json", "progress.csv")


def _folder_trial(folder: Path, pickled: Pickled, ends: Mapping[str, int]) -> Trial | str:
    """One trial as its own folder says: ``params.json`` (the config) and its reports (the last one the last
    result, its ``trial_id`` the id; a trial that never reported is known by its folder name). Instead, the name of
    the file a kill cut, for a trial whose ``params.json`` is empty or cut short, or whose reports are cut short
    (:func:`_reports_cut`): the driver writes them in place, as the state file, and copies the trial's folder to
    the storage path in place too (seen: an ended trial's ``params.json`` and ``result.json`` empty, its
    ``progress.csv`` whole, after a kill). Its configuration, or the run it holds, is then not known whole (a
    report left out could be the last, the score), so its run is not there, and a race runs it again with its
    seed (counted once: the trial passed over has no score)."""
    trial = Trial(folder.name, "UNKNOWN", {}, {}, folder, folder.name)
    params = folder / "params.json"
    text = read_text(params, "Ray Tune trial config") if os.path.lexists(params) else "{}"
    if cut_short(text):
        return "params.json"
    config = loads(text, params)
    if not isinstance(config, Mapping):
        raise InputError(f"{params}: is not a JSON object (an unknown Ray Tune format)")
    rows, cut = _reports(trial, complete=False) if _has_reports(folder) else ([], None)
    cut = cut or _reports_cut(folder, rows)
    if cut is not None:
        return cut
    last = rows[-1] if rows else {}
    trial.trial_id = str(last.get("trial_id") or folder.name)
    trial.status = _folder_state(folder, rows, ends.get(trial.trial_id))
    trial.config = _without_pickles(flat(config), "config key", trial.trial_id, pickled)
    trial.last_result = _without_pickles(dict(last), "reported metric", trial.trial_id, pickled)
    return trial


def _has_reports(folder: Path) -> bool:
    return any(os.path.lexists(folder / name) for name in _REPORT_FILES)


def _reports_cut(folder: Path, rows: list[dict[str, Any]], last: int | None = None) -> str | None:
    """The report file read when its whole reports (``rows``) end before the last one Tune recorded: before report
    ``last`` (the ``training_iteration`` of the state file's last result; no report reaches it, in any order), or,
    for ``result.json``, fewer than the ``progress.csv`` beside it (Tune writes every report to both). A kill cut
    it at a line end (or left it empty) while Tune wrote or copied it. Else None."""
    result, progress = folder / "result.json", folder / "progress.csv"
    read = result if os.path.lexists(result) or not os.path.lexists(progress) else progress
    if last is not None:
        reached = [i for i in map(last_iteration, rows) if i is not None]
        if not rows or (reached and max(reached) < last):  # reports without the counter tell nothing of it
            return read.name
    if not (os.path.lexists(result) and os.path.lexists(progress)):
        return None
    try:
        text, _ = _report_text(progress, "Ray Tune progress", complete=False)
        listed = _csv_rows(text, str(progress), complete=False)
    except InputError:  # progress.csv is not read when there is a result.json: it only tells of a cut
        return None
    return "result.json" if len(listed) > len(rows) else None


def _is_trial_folder(path: Path) -> bool:
    """A folder of the experiment (not a link out of it) holding a trial's files."""
    if path.is_symlink() or not path.is_dir() or _trial_folder(path.parent, path.name) is None:
        return False
    return any(os.path.lexists(path / name) for name in ("params.json", *_REPORT_FILES))


def _from_trial_folders(folder: Path, state_file: Path, how: str) -> Experiment:
    """The experiment read from its trial folders, when its state file is ``how`` (empty or cut short); a folder
    whose config or reports a kill cut is passed over, with a note naming it (its run is not there: a race runs it
    again). A trial race_tune recorded as ended normally (:mod:`.ended`) is TERMINATED when its last report is the
    one recorded."""
    pickled: Pickled = {}
    ends, end_notes = ended(folder)
    read = {p: _folder_trial(p, pickled, ends) for p in sorted(folder.iterdir()) if _is_trial_folder(p)}
    trials = sorted((t for t in read.values() if isinstance(t, Trial)), key=lambda t: t.trial_id)
    count = f"its {len(trials)} trials were" if len(trials) != 1 else "its 1 trial was"
    note = (
        f"Ray Tune experiment state {str(state_file)!r} is {how} (as Tune leaves it when stopped while writing it): "
        f"{count} read from their folders (params.json, result.json or progress.csv); Tune records a normal end "
        "only in that file, so a trial whose last report is not marked done is of unknown state, an unfinished run"
    )
    if ends:
        recorded = sum(t.status == "TERMINATED" and t.trial_id in ends for t in trials)
        note += (
            f", unless race_tune recorded its end ({recorded} trial(s) ended normally by their end records in "
            f"{FOLDER!r})"
        )
    passed = [p.name for p, t in read.items() if t == "params.json"]
    if passed:
        note += (
            f"; {len(passed)} trial folder(s) ({', '.join(repr(n) for n in passed)}) are not read: their params.json "
            "is empty or cut short (a kill while Tune set the trial up or copied its folder), so their configuration "
            "is unknown and a race runs them again"
        )
    cut = {p.name: t for p, t in read.items() if isinstance(t, str) and t in _REPORT_FILES}
    if cut:
        note += "; " + _cut_clause(cut, "the file ends inside a report, or result.json holds fewer than progress.csv")
    return Experiment(folder, state_file, trials, [note, *end_notes, *pickle_notes(pickled)])


def _number_or_text(text: str) -> Any:
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _csv_rows(text: str, where: str, *, complete: bool) -> list[dict[str, Any]]:
    """The reports of a ``progress.csv``, through the one CSV row reader (a column named twice, a ragged row or a
    huge field refused by line); a trial still running may end in a row cut short while Tune writes it. The trial
    id stays text (Tune's are hex digits: ``12345678`` or ``1234e567`` is no number)."""
    records = csv_records(io.StringIO(text, newline=""), where, short_last=not complete)
    _, header = next(records, (0, []))
    rows = [fields for _, fields in records]
    if rows and len(rows[-1]) < len(header):
        rows.pop()  # being written
    return [
        {k: v if k == "trial_id" and v else _number_or_text(v) for k, v in zip(header, fields) if k} for fields in rows
    ]


def _report_text(path: Path, what: str, *, complete: bool) -> tuple[str, str | None]:
    """The text of a report file: all of it (``complete``), or its whole lines and what follows the last line end
    (``""``: nothing; None: a line cut inside a character), a line Tune was writing or copying when stopped."""
    if complete:
        return read_text(path, what, max_bytes=MAX_STATE_BYTES), ""
    data = read_bytes(path, what, max_bytes=MAX_STATE_BYTES)
    end = data.rfind(b"\n") + 1
    try:
        text = data[:end].decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: the {what} file is not UTF-8 text (byte {err.start})") from None
    try:
        return text, data[end:].decode("utf-8")
    except UnicodeDecodeError as err:
        if err.end < len(data) - end:  # not a character cut at the end: bytes that are no UTF-8
            raise InputError(f"{path}: the {what} file is not UTF-8 text (byte {end + err.start})") from None
        return text, None


def finished_reports(trial: Trial) -> tuple[list[dict[str, Any]], str | None]:
    """Every report of a trial Tune terminated (read from an intact state file), and the name of its report file
    when a kill cut it (None when whole): Tune writes the file in place and copies the trial's folder to the
    storage path in place, so it may end inside a report (:func:`_reports`), or at a line end before the last
    report the state file records (:func:`_reports_cut`). The run it holds is then not known whole (a report left
    out could be the last, the score): the trial is passed over as the folder read passes it over."""
    rows, cut = _reports(trial, complete=False)
    if cut is None and trial.folder is not None:
        cut = _reports_cut(trial.folder, rows, last_iteration(trial.last_result))
    return rows, cut


def cut_reports_note(folder: Path, cut: Mapping[str, str]) -> str:
    """The note on the trials of an intact state file passed over because a kill cut their reports: ``cut`` maps
    each trial folder's name to the report file cut."""
    why = "the file ends inside a report or before the last report the state file records, or result.json holds"
    return f"Ray Tune experiment {str(folder)!r}: " + _cut_clause(cut, why + " fewer than progress.csv")


def _cut_clause(cut: Mapping[str, str], why: str) -> str:
    """Trial folders passed over for reports a kill cut (``why``: how it shows), one clause naming each folder (in
    name order) and its file."""
    named = ", ".join(f"{name!r} ({cut[name]})" for name in sorted(cut))
    return (
        f"{len(cut)} trial folder(s) ({named}) are not read: their reports are cut short ({why}: a kill while Tune "
        "wrote or copied them), so the run they hold is not known whole and a race runs them again with their seeds"
    )


def reports(trial: Trial, *, complete: bool) -> list[dict[str, Any]]:
    """Every reported result of ``trial`` (flattened), from ``result.json`` (or ``progress.csv``).

    ``complete=False`` (a trial still running) allows a last line cut short while Tune writes it (left out); any
    other line that is not JSON is an InputError naming the file and line.
    """
    return _reports(trial, complete=complete)[0]


def _reports(trial: Trial, *, complete: bool) -> tuple[list[dict[str, Any]], str | None]:
    """:func:`reports`, and the name of the report file whose last line is cut short (None when none is): a
    ``progress.csv`` row without its line end (its last field may be cut), a ``result.json`` line that is not one
    whole JSON object."""
    if trial.folder is None:
        raise InputError(
            f"Ray Tune trial {trial.trial_id}: its folder name {trial.name!r} is not one plain folder name; "
            "its reports are not read"
        )
    result = trial.folder / "result.json"
    if not os.path.lexists(result) and os.path.lexists(trial.folder / "progress.csv"):
        progress = trial.folder / "progress.csv"
        text, tail = _report_text(progress, "Ray Tune progress", complete=complete)
        cut = tail is None or bool(tail.strip())
        return _csv_rows(text, str(progress), complete=complete), progress.name if cut else None
    text, tail = _report_text(result, "Ray Tune result", complete=complete)
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        row = _report(line, f"{result}: line {number}")
        if row is not None:
            out.append(row)
    if tail is None or tail.strip():
        try:
            row = _report(tail or "", "")
        except InputError:  # the line Tune was writing or copying
            return out, result.name
        if row is None:
            return out, result.name
        out.append(row)
    return out, None


def _report(line: str, where: str) -> dict[str, Any] | None:
    """One ``result.json`` line as a flattened report (None: a blank line, or JSON that is no object)."""
    if not line.strip():
        return None
    try:
        row = parse(line)
    except JsonProblem as err:
        raise InputError(f"{where}: {err}; repair or remove the trial") from None
    if not isinstance(row, Mapping):
        return None
    row = dict(row)
    row.pop("config", None)
    return flat(row)


def history(rows: Iterable[Mapping[str, Any]], key: str, step_key: str) -> list[tuple[float, Any]]:
    """(step, value) of every report that has ``key``: steps are ``step_key`` (or the report's rank). A reported
    NaN is kept (a score rule then names the run, as for every other source); only a report without ``key``
    (absent from a ``result.json`` line, an empty ``progress.csv`` cell) is left out."""
    rows = list(rows)
    has_steps = any(step_key in r for r in rows)
    out = []
    for rank, row in enumerate(rows, 1):
        value = row.get(key)
        if value is None:
            continue
        step = row.get(step_key) if has_steps else rank
        try:
            out.append((float(step), value))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
    return out
