"""A trial's normal end, recorded by :func:`~.race.race_tune` where a kill cannot leave it half-written.

Ray Tune records a function trial's normal end only in its experiment state file, which it writes in place: a
driver killed mid-write leaves the file cut short, and the trials read from their folders are then of unknown
state, so a race would run the look's ended runs again. While a look runs, :func:`end_recorder` (a
``ray.tune.Callback``) writes one small JSON per trial Tune stops normally (``on_trial_complete`` of a RUNNING
trial: its trainable returned, or a stop criterion or scheduler ended it; or of a PAUSED trial a scheduler such as
HyperBand stops; Tune marks it TERMINATED) into ``<experiment>/rl-reliable-ended/<trial id>.ended.json``, through
the one writer (a temporary sibling renamed over it: a reader sees the record whole or not at all). An errored
trial, or one cut off by a kill, Ctrl-C or the end of the experiment, never gets one (Tune calls
``on_trial_error`` or no callback for those).

The recorder makes the folder when the look starts (:func:`recording`: the experiment's end records are complete).
Ray Tune 2.40 to 2.60 also marks TERMINATED, with no callback, the trials it cuts off itself when it stops the
whole experiment (``FailureConfig(fail_fast=True)`` after a trial errors, a ``Stopper`` whose ``stop_all()`` is
True, ``TuneConfig(time_budget_s=...)``: ``TuneController._stop_experiment_if_needed``): in an experiment the
recorder watched, a TERMINATED trial without a record is such a trial, cut off (:mod:`.experiment`). A folder
written before the recorder made its folder (an older version) is read as Tune's state file says.

When the state file is cut short, :func:`ended` tells the folder reading (:mod:`.experiment`) which trials ended
normally, and after which report (``training_iteration``): a trial counts as ended only when its folder's last
report is that one. A record that is not one we write (not JSON, another format or version, a name that is not its
trial's, ...) is passed over with a note naming the file: the record only spares compute (without it the trial is
unfinished and its run runs again, with its seed, counted once), so refusing the whole look over it would be worse.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...data.jsontext import read_json
from ...errors import InputError

#: The folder of the end records inside an experiment folder (it holds no trial's files, so it is no trial folder).
FOLDER = "rl-reliable-ended"
#: How a record's file name ends (after the trial id).
SUFFIX = ".ended.json"
#: A record's ``format``: ours, and its version.
FORMAT = "rl_reliable_logger/raytune-trial-end"
VERSION = 1
#: The largest record read (one is under 200 bytes).
MAX_RECORD_BYTES = 4096
#: The file kind the one writer writes a record as (:data:`rl_reliable_logger.store.kinds.WRITERS`).
KIND = "raytune-end"
#: A trial id that is one plain file name (Tune's are ``<hex>_<5 digits>``).
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def record_path(experiment: Path, trial_id: str) -> Path | None:
    """Where the end record of ``trial_id`` lives in ``experiment``; None for an id that is no plain file name."""
    if not _PLAIN_ID.fullmatch(trial_id):
        return None
    return experiment / FOLDER / f"{trial_id}{SUFFIX}"


def record_text(trial_id: str, iteration: int) -> str:
    """The record of a trial that ended normally after its report ``iteration`` (``training_iteration``; 0 for a
    trial that ended without reporting)."""
    return json.dumps({"format": FORMAT, "version": VERSION, "trial_id": trial_id, "training_iteration": iteration})


def write_end(experiment: Path, trial_id: str, iteration: int) -> Path | None:
    """Record that ``trial_id`` ended normally after report ``iteration`` (replaced atomically; None: not recorded,
    for an id that is no plain file name)."""
    from ...store.files import write_file

    path = record_path(experiment, trial_id)
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_file(path, (record_text(trial_id, iteration) + "\n").encode("utf-8"), kind=KIND)


def _iteration(value: Any, least: int = 1) -> int | None:
    """A report's ``training_iteration`` as an int (a ``progress.csv`` gives 3.0), None if it is none (below
    ``least``: a record says 0 for a trial that ended without a report)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return int(value) if float(value).is_integer() and value >= least else None


def _record(path: Path) -> tuple[str, int] | str:
    """(trial id, iteration) of the record at ``path``, or why it is passed over."""
    try:
        data = read_json(path, "Ray Tune trial end record", max_bytes=MAX_RECORD_BYTES)
    except InputError as err:
        return str(err)
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        return "it is not an end record race_tune writes"
    if data.get("version") != VERSION:
        return f"its version {data.get('version')!r} is not {VERSION}, the one this version reads"
    trial_id, iteration = data.get("trial_id"), _iteration(data.get("training_iteration"), least=0)
    if not isinstance(trial_id, str) or path.name != f"{trial_id}{SUFFIX}" or iteration is None:
        return "its trial id or training_iteration is not that of its file name and a report"
    return trial_id, iteration


def recording(experiment: Path) -> bool:
    """Whether the recorder watched ``experiment`` (it makes the records' folder when the look starts): then every
    trial Tune ended normally has a record, and a TERMINATED trial without one was cut off by Tune itself."""
    folder = experiment / FOLDER
    return folder.is_dir() and not folder.is_symlink()


def ended(experiment: Path) -> tuple[dict[str, int], list[str]]:
    """The trials of ``experiment`` recorded as ended normally (id -> the ``training_iteration`` of their last
    report), and one note per record passed over. A hidden file (the writer's temporary file a kill left) is no
    record."""
    folder = experiment / FOLDER
    if not os.path.lexists(folder):
        return {}, []
    if folder.is_symlink() or not folder.is_dir():
        return {}, [f"{str(folder)!r} is not a folder: its end records are not read (its trials' runs run again)"]
    out: dict[str, int] = {}
    notes = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or not path.name.endswith(SUFFIX):
            continue
        got = _record(path)
        if isinstance(got, str):
            notes.append(
                f"Ray Tune trial end record {str(path)!r} is passed over ({got}): its trial counts as ended only "
                "if the state file or its last report says so"
            )
        else:
            out[got[0]] = got[1]
    return out, notes


def last_iteration(result: Mapping[str, Any]) -> int | None:
    """The ``training_iteration`` of a trial's last report (None when it reported none)."""
    return _iteration(result.get("training_iteration"))


def end_recorder(experiment: Path) -> Any:
    """A ``ray.tune.Callback`` recording, in the driver, each trial of ``experiment`` Tune stops normally."""
    from ray import tune

    class EndRecorder(tune.Callback):
        """Makes the records' folder when the look starts, then writes a trial's end record when Tune stops it
        normally (never for an error, ``on_trial_error``, nor for a trial Tune cuts off when it stops the whole
        experiment: Tune calls no callback for those)."""

        def setup(
            self,
            stop: Any = None,
            num_samples: int | None = None,
            total_num_samples: int | None = None,
            **info: Any,
        ) -> None:
            try:
                (experiment / FOLDER).mkdir(parents=True, exist_ok=True)
            except OSError as err:  # without the folder the look's TERMINATED trials are taken as Tune says
                _not_recorded(
                    f"the end records of {experiment.name!r}", err, "a trial Tune cuts off itself is read as finished"
                )

        def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
            # Tune calls this from stop_trial, before it marks the trial TERMINATED: a RUNNING trial is one whose
            # trainable returned or that a stop criterion or scheduler ended, a PAUSED one a scheduler stopped
            # (HyperBand); a PENDING one never ran and is left out
            if str(trial.status) not in ("RUNNING", "PAUSED"):
                return
            result = trial.last_result or {}
            done = last_iteration(result)
            if done is None and str(trial.status) == "PAUSED":
                return
            try:
                write_end(experiment, str(trial.trial_id), 0 if done is None else done)
            except (OSError, InputError) as err:  # the record only spares compute: the trial must not error
                _not_recorded(f"the end of trial {trial.trial_id}", err, "its run runs again at the next call")

    return EndRecorder()


def _not_recorded(what: str, err: Exception, then: str) -> None:
    warnings.warn(
        f"race_tune could not record {what} ({err}); {then}",
        RuntimeWarning,
        stacklevel=2,
    )
