"""ScoreTable: the one data model every source produces and every analysis consumes.

A tidy (long) table, one row per run and task (and per step for learning curves), with the
canonical columns ``algorithm, task, run_id, seed, score`` (+ ``step``) and any extra
provenance columns (run URL, hyperparameters, state, ...).

Validation happens once, here, so that every downstream step can trust its input. Each
problem is named (algorithm, task, run, row) and comes with the fix. By default a problem is an
error; ``on_invalid="drop"`` drops the offending rows instead and records each one (with its
reason) in :attr:`ScoreTable.dropped`, which ends up in the report's provenance.
"""

from __future__ import annotations

import contextlib
import gzip
import math
import os
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import ScoreTableError
from ..wording import Message, kw, said
from . import csvcells
from .counts import agree, plural
from .fields import check_distinct, column_list, separator_hint
from .files import check_regular_file
from .jsontext import JsonProblem, parse
from .names import NameMode, check_names, is_missing, seed_key, value_text
from .read_memory import check_read_memory

CANONICAL = ("algorithm", "task", "run_id", "seed", "score")
#: The step column read when the input has it (every field defaults to its usual column name).
DEFAULT_STEP = "step"
#: A tracker table's final score when it also holds learning curves (the score key's value, which may differ
#: from the curve's last point): a score column, transformed with ``score`` by :meth:`ScoreTable.map_scores`.
FINAL_SCORE = "final_score"
#: Each run's last logged step where its source knows it (an SB3 evaluation's timesteps, a TensorBoard tag's steps,
#: a tracker metric's history), without the curve rows: the protocol checks compare training budgets by it, so a run
#: killed early is found whether or not the curves are read.
LAST_STEP = "last_step"
_MAX_LISTED = 15


def _listing(items: Sequence[str]) -> str:
    """The items on one line: CLI errors are one line each."""
    shown = [" ".join(str(item).split()) for item in items[:_MAX_LISTED]]
    if len(items) > _MAX_LISTED:
        shown.append(f"... and {len(items) - _MAX_LISTED} more")
    return "; ".join(shown)


#: Largest |score| times this many rows, to the fourth power, must stay below float64's maximum (see
#: :func:`magnitude_limit`).
_HEADROOM = 4.0


def magnitude_limit(n_rows: int) -> float:
    """The largest magnitude a score may have in a table of ``n_rows`` values, raw or normalised (the one bound):
    sums of the values, differences between them, their squares (variances, standard errors) and the squares of
    those (the effective number of tasks weighs each task by its variance squared) all stay finite in float64.
    About 1e75 for 30 rows; any real return is many orders of magnitude below.

    Example:
        >>> f"{magnitude_limit(30):.2g}"
        '9.6e+74'
    """
    return float(np.finfo(np.float64).max) ** 0.25 / (_HEADROOM * max(n_rows, 2))


def check_magnitudes(values: np.ndarray, *, what: str = "scores", rows: pd.DataFrame | None = None) -> None:
    """Refuse scores so large that a sum, a difference or a variance of them overflows float64 (inf/nan intervals);
    ``rows`` (the table the values come from) names the run with the largest."""
    if values.size == 0:
        return
    at = int(np.argmax(np.abs(values)))
    biggest = float(abs(values[at]))
    limit = magnitude_limit(values.size)
    if biggest > limit:
        where = ""
        if rows is not None:
            row = rows.iloc[at]
            where = f" (the largest: {row.get('algorithm')} / {row.get('task')}, run {row.get('run_id', at)})"
        if biggest == np.finfo(np.float64).max:
            where += "; 1.8e+308 (the largest float) is how some trackers store an infinite metric (a diverged run)"
        raise ScoreTableError(
            f"{what} up to {biggest:.3g} in magnitude{where}: with {values.size} rows, sums, differences and "
            f"variances of such values overflow float64 (the limit here is {limit:.3g}); rescale or normalise the "
            "scores first."
        )


def _configured_run_ids(frame: pd.DataFrame, keys: Sequence[str]) -> pd.Series:
    """Run keys of a sweep read by seed: configuration and seed (``"lr=0.001, seed=0"``), values exact: each value's
    text is one value's (:func:`~.names.value_text`: ``lr='1, b=2', b=3`` is not ``lr=1, b='2, b=3'``)."""
    absent = [str(k) for k in keys if k not in frame.columns]
    if absent:
        cols = column_list(frame.columns)
        raise ScoreTableError(
            said(
                f"hyperparameter column(s) {', '.join(map(repr, absent))} not in the input (it has: {cols}); "
                "name existing columns with ",
                kw("hyperparameter_keys="),
                ".",
            )
        )
    parts = [frame[k].map(lambda v, k=k: f"{k}={value_text(v)}, ") for k in keys]  # one text per value
    label = parts[0].astype(object)
    for part in parts[1:]:
        label = label + part
    return label + "seed=" + frame["run_id"].astype(str)


def _plain(value: Any) -> Any:
    """numpy scalars as Python values, so messages show ``inf``, not ``np.float64(inf)``."""
    return value.item() if isinstance(value, np.generic) else value


def _stem_suffix(path: str | os.PathLike) -> str:
    """The format suffix, looking through ``.gz``: ``scores.tsv.gz`` → ``.tsv``."""
    suffixes = [x.lower() for x in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


_KINDS = {
    ".csv": "csv",
    ".txt": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
}


def _file_kind(path: str | os.PathLike, default: str | None = None) -> str:
    kind = _KINDS.get(_stem_suffix(path), default)
    if kind is None and os.path.isdir(path):
        raise ScoreTableError(
            f"{path} is a folder, not a score file: give a .csv, .tsv, .parquet, .json or .jsonl file (optionally "
            ".gz), or read a folder of logs with its reader (TensorBoard, Stable-Baselines3, Ray Tune, marl-eval)."
        )
    if kind is None:
        raise ScoreTableError(
            f"cannot tell the format of {path}: use a .csv, .tsv, .parquet, .json or .jsonl file (optionally .gz)."
        )
    return kind


@contextlib.contextmanager
def _reading(path: str | os.PathLike) -> Iterator[None]:
    """Turn the many ways reading a file can fail into one InputError line that names the file."""
    check_regular_file(path, "score")  # before opening: a FIFO would block, a device never end
    try:
        yield
    except ScoreTableError:
        raise
    except FileNotFoundError:
        raise ScoreTableError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ScoreTableError(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise ScoreTableError(f"{path}: permission denied") from None
    except UnicodeDecodeError as err:
        raise ScoreTableError(f"{path}: not UTF-8 text (byte {err.start}); save the file as UTF-8") from None
    except pd.errors.EmptyDataError:
        raise ScoreTableError(f"{path}: the file is empty (no header row)") from None
    except pd.errors.ParserError as err:
        detail = " ".join(str(err).split())
        raise ScoreTableError(f"{path}: malformed CSV: {detail}") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise ScoreTableError(f"{path}: not a valid gzip file ({err})") from None
    except OSError as err:
        raise ScoreTableError(f"{path}: cannot read ({err.strerror or err})") from None
    except (ValueError, TypeError) as err:  # pyarrow's ArrowInvalid is a ValueError
        detail = " ".join(str(err).split())[:200]
        raise ScoreTableError(f"{path}: cannot read ({type(err).__name__}: {detail})") from None


class ScoreTable:
    """Per-run scores of several algorithms on several tasks, validated.

    Args:
        data: a long DataFrame, one row per run (and task, and step).
        algorithm, task, seed, score: the columns that hold each field.
        run_id: column with a unique run key (e.g. a tracker run id). Default: the seed, so two
            rows with the same (algorithm, task, seed) are duplicates.
        step: column with the training step, for learning curves: ``"step"`` (default) when the input has
            that column; ``None``: no steps (the input holds final scores).
        on_invalid: ``"raise"`` (default) or ``"drop"`` the offending rows (recorded in ``dropped``).
        names: ``"strict"`` (default): names with surrounding whitespace, or two names that print the same
            (NFC vs NFD, ...), are errors; ``"normalize"``: strip them and put them in NFC, recording every
            rewrite in ``warnings`` and ``source["name_rewrites"]``. See :mod:`.names`.
        rate_of: ``(successes, episodes)``: columns of each run's successful and total evaluation episodes; where the
            input has no ``score`` column, each run's score is its success rate (successes / episodes), said in
            ``warnings``.
        hyperparameter_keys: columns naming a sweep's configuration. Without ``run_id``, a run is then
            identified by its configuration and seed (``"lr=0.001, seed=0"``), so every configuration may
            reuse seeds 0..k, as sweeps usually do.
        source: free-form description of where the scores came from (goes to provenance).

    Runs per task may differ between cells: each (algorithm, task) cell keeps its own count,
    and every task carries equal total weight in aggregate metrics.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"algorithm": ["A"] * 4, "task": ["x", "x", "y", "y"],
        ...                    "seed": [0, 1, 0, 1], "score": [0.1, 0.3, 0.5, 0.7]})
        >>> ScoreTable(df).cells()[("A", "x")]
        array([0.1, 0.3])
    """

    def __init__(
        self,
        data: pd.DataFrame,
        *,
        algorithm: str = "algorithm",
        task: str = "task",
        seed: str | None = "seed",
        score: str = "score",
        run_id: str | None = None,
        step: str | None = DEFAULT_STEP,
        on_invalid: Literal["raise", "drop"] = "raise",
        source: Mapping[str, Any] | None = None,
        names: NameMode = "strict",
        hyperparameter_keys: Sequence[str] = (),
        rate_of: tuple[str, str] | None = None,
    ) -> None:
        if on_invalid not in ("raise", "drop"):
            raise ValueError(f"on_invalid must be 'raise' or 'drop', not {on_invalid!r}")
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"ScoreTable needs a pandas DataFrame, got {type(data).__name__}")
        if not data.index.is_unique:  # e.g. pd.concat without ignore_index: rows are then named by position
            data = data.reset_index(drop=True)
        if step == DEFAULT_STEP and step not in data.columns:
            step = None  # the usual step column is used when the input has one, like every other field
        self.source: dict[str, Any] = dict(source or {})
        given = {"algorithm": algorithm, "task": task, "seed": seed, "score": score, "run_id": run_id, "step": step}
        self.source.setdefault("fields", {k: v for k, v in given.items() if v is not None})  # a tracker's: its refs
        self.warnings: list[str] = []
        #: The warnings that concern bootstrap intervals only (runs per cell): a look whose test is exact for a few
        #: seeds (the gate) does not pass them on. Each is also in :attr:`warnings`.
        self.interval_notes: list[str] = []
        dropped: list[dict[str, Any]] = []
        data = self._rate_as_score(data, score, rate_of)
        frame, rewrites = self._canonical(data, given, names, hyperparameter_keys)
        if hyperparameter_keys and run_id is None:
            frame["run_id"] = _configured_run_ids(frame, hyperparameter_keys)
        if rewrites:
            self.source["name_rewrites"] = rewrites
            shown = 50  # every rewrite is in provenance (name_rewrites); the console names the first 50
            self.warnings.append(
                (
                    said(f"{len(rewrites)} name(s) rewritten by ", kw("names='normalize'"), ": ")
                    + "; ".join(rewrites[:shown])
                    + (f"; and {len(rewrites) - shown} more (listed in provenance)" if len(rewrites) > shown else "")
                ).text()
            )
        frame, bad = self._check_scores(frame, score)
        dups = self._check_duplicates(
            frame, seed_given=run_id is None, drop=on_invalid == "drop", recorded={p["index"] for p in bad}
        )
        problems = bad + dups
        if problems and on_invalid == "raise":
            texts = [p["text"] for p in problems]
            raise ScoreTableError(self._message(texts, problems), texts)
        dropped += problems
        frame = frame.drop(index=[p["index"] for p in problems])
        gaps, gap_drops = self._check_coverage(frame)
        if gaps and on_invalid == "raise":
            raise ScoreTableError(self._message(gaps), gaps)
        dropped += gap_drops
        frame = frame.drop(index=[p["index"] for p in gap_drops])
        if frame.empty:
            raise ScoreTableError(
                "no valid scores left"
                + (f" after dropping {len(dropped)} invalid rows" if dropped else "")
                + "; check the score column and the grouping keys."
            )
        check_magnitudes(frame["score"].to_numpy(float), what="scores", rows=frame)
        self.frame = frame.reset_index(drop=True)
        self.dropped = pd.DataFrame(
            [{k: p.get(k) for k in ("run_id", "algorithm", "task", "reason")} for p in dropped],
            columns=["run_id", "algorithm", "task", "reason"],
        )
        self._warn_small_cells()

    # ------------------------------------------------------------------ validation
    def _rate_as_score(self, data: pd.DataFrame, score: str, rate_of: tuple[str, str] | None) -> pd.DataFrame:
        """``data`` with the score column ``successes / episodes`` where it has no score column but both counts (a
        file of success counts: the rate is the score), said in ``warnings``; else ``data`` as it is."""
        if rate_of is None or score in data.columns or not all(c in data.columns for c in rate_of):
            return data
        successes, episodes = rate_of
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = pd.to_numeric(data[successes], errors="coerce") / pd.to_numeric(data[episodes], errors="coerce")
        self.source["score_from"] = f"{successes} / {episodes}"
        self.warnings.append(
            f"the input has no score column {score!r}: each run's score is its success rate, {successes} / {episodes}"
        )
        return data.assign(**{score: rate.where(np.isfinite(rate))})

    @staticmethod
    def _canonical(
        data: pd.DataFrame,
        given: Mapping[str, str | None],
        names: NameMode = "strict",
        hyperparameter_keys: Sequence[str] = (),
    ) -> tuple[pd.DataFrame, list[str]]:
        """The input's fields under canonical names; one field in two roles (configuration keys included) is refused
        before anything is built from them."""
        if len(data) == 0:
            raise ScoreTableError("the input has no rows: nothing to evaluate. Check the file or the run filter.")
        wanted = {field: col for field, col in given.items() if col is not None}
        if "seed" not in wanted and "run_id" not in wanted:
            raise ScoreTableError("each run needs a key: give a seed column or a run_id column.")
        roles: dict[str, str | list[str]] = {f"{field}=": col for field, col in wanted.items()}
        if hyperparameter_keys:
            roles["hyperparameter_keys="] = list(hyperparameter_keys)
        check_distinct(roles)
        algorithm, task, score = str(given["algorithm"]), str(given["task"]), str(given["score"])
        seed, run_id, step = given.get("seed"), given.get("run_id"), given.get("step")
        absent = {field: col for field, col in wanted.items() if col not in data.columns}
        if absent:
            cols = column_list(data.columns)
            parts = [f"{field} column {col!r}" for field, col in absent.items()]
            raise ScoreTableError(
                said(
                    f"unknown column(s): {'; '.join(parts)}. The input has: {cols}. Name the right columns with ",
                    said("/").join(kw(f"{field}=") for field in ("algorithm", "task", "seed", "score")),
                    ".",
                )
            )
        if isinstance(data.columns, pd.MultiIndex) or data.columns.duplicated().any():
            dup = [str(c) for c in data.columns[data.columns.duplicated()]]
            raise ScoreTableError(
                f"the input has duplicate column name(s) {', '.join(dup)}; give each column one name."
            )
        out = pd.DataFrame(index=data.index)
        rewrites: list[str] = []
        # scores from a tracker carry its run ids: problems name those runs, not row numbers
        runs = data["tracker_run_id"].astype(str) if "tracker_run_id" in data.columns else None
        for field, col in (("algorithm", algorithm), ("task", task)):
            out[field], notes = check_names(data[col], field, col, mode=names, run_ids=runs)
            rewrites += notes
        if seed is not None:
            if run_id is None and any(is_missing(v) for v in data[seed]):
                check_names(data[seed], "seed", seed, run_ids=runs)  # raises, naming the rows
            out["seed"] = data[seed]
        else:
            out["seed"] = pd.Series([None] * len(data), index=data.index, dtype="object")
        if run_id is not None:
            out["run_id"], notes = check_names(data[run_id], "run id", run_id, mode=names, run_ids=runs)
        else:
            keys = pd.Series([seed_key(s) for s in out["seed"]], index=data.index, dtype=object)
            out["run_id"], notes = check_names(keys, "seed", str(seed), mode=names)
        rewrites += notes
        out["score"] = data[score]
        if step is not None:
            out["step"] = data[step]
        used = set(wanted.values())
        others = [col for col in data.columns if col not in used and col not in out.columns]
        if others:  # in one block: one column at a time is quadratic (20,000 columns took minutes)
            out = pd.concat([out, data[others]], axis=1)
        order = [c for c in ("algorithm", "task", "run_id", "seed", "score", "step") if c in out.columns]
        return out[order + [c for c in out.columns if c not in order]], rewrites

    @staticmethod
    def _where(row: pd.Series, index: Any) -> str:
        where = f"{row['algorithm']} / {row['task']} run {row['run_id']!r}"
        if "step" in row.index:
            where += f" step {row['step']}"
        return where + f" (row {index})"

    def _check_scores(self, frame: pd.DataFrame, score_col: str):
        raw = frame["score"]
        is_bool = raw.map(lambda v: isinstance(v, (bool, np.bool_))).astype(bool)
        if pd.api.types.is_bool_dtype(raw.dtype):
            is_bool[:] = True
        raw = raw.astype(object).where(~is_bool, "<bool>")
        numeric = pd.to_numeric(raw, errors="coerce").astype("float64")
        problems = []
        for index in frame.index[is_bool]:
            problems.append(
                self._problem(
                    frame.loc[index], index, f"boolean score {frame.at[index, 'score']!r} in column {score_col!r}"
                )
            )
        missing = raw.map(lambda v: v is None or v is pd.NA).astype(bool)
        non_finite = ~np.isfinite(numeric.to_numpy()) & ~missing.to_numpy() & ~is_bool.to_numpy()
        text = raw.astype(str).str.strip().str.lower()
        nan_like = (
            numeric.isna()
            & ~missing
            & (raw.map(lambda v: isinstance(v, float)).astype(bool) | text.isin({"nan", "inf", "-inf", ""}))
        )
        non_numeric = numeric.isna() & ~missing & ~nan_like & ~is_bool
        for index in frame.index[missing]:
            problems.append(self._problem(frame.loc[index], index, f"missing score in column {score_col!r}"))
        for index in frame.index[non_numeric]:
            problems.append(
                self._problem(frame.loc[index], index, f"non-numeric score {raw[index]!r} in column {score_col!r}")
            )
        for index in frame.index[non_finite & ~non_numeric.to_numpy()]:
            value = numeric[index]
            label = "nan (empty or NaN)" if np.isnan(value) else repr(float(value))
            problems.append(self._problem(frame.loc[index], index, f"non-finite score {label}"))
        frame = frame.copy()
        frame["score"] = numeric
        if "step" in frame.columns:
            raw_steps = frame["step"]
            step_bool = raw_steps.map(lambda v: isinstance(v, (bool, np.bool_))).astype(bool)
            if pd.api.types.is_bool_dtype(raw_steps.dtype):
                step_bool[:] = True
            steps = pd.to_numeric(raw_steps.astype(object).where(~step_bool, "<bool>"), errors="coerce")
            bad_steps = ~np.isfinite(steps.to_numpy(dtype=float, na_value=np.nan))
            for index in frame.index[bad_steps]:
                row = frame.loc[index]
                problems.append(
                    self._problem(
                        row, index, f"missing, non-numeric or non-finite step {_plain(frame.at[index, 'step'])!r}"
                    )
                )
            frame["step"] = steps
        return frame, problems

    def _problem(self, row: pd.Series, index: Any, reason: str) -> dict[str, Any]:
        return {
            "index": index,
            "run_id": row["run_id"],
            "algorithm": row["algorithm"],
            "task": row["task"],
            "reason": reason,
            "text": f"{reason}: {self._where(row, index)}",
        }

    def _check_duplicates(
        self, frame: pd.DataFrame, seed_given: bool, drop: bool = False, recorded: set[Any] | None = None
    ) -> list[dict[str, Any]]:
        """Rows that share a run key (and step). Raised: one problem per row after a key's first. Dropped
        (``drop``): which row of a key to keep must not depend on the order of the rows, so a key's rows that
        differ in any column are all dropped (none can be trusted over the others), and of rows identical in every
        column one is kept (which one cannot matter). Rows in ``recorded`` (already dropped for their score) are
        not recorded twice."""
        keys = ["algorithm", "task", "run_id"] + (["step"] if "step" in frame.columns else [])
        dup = frame.duplicated(keys, keep=False)
        problems: list[dict[str, Any]] = []
        if not dup.any():
            return problems
        fixed = {*CANONICAL, "step", "tracker_run_id", "run_name", "name", "source_dir", "url", "state", "score_key"}
        for _, group in frame[dup].groupby(keys, sort=False):
            first, *rest = list(group.index)
            # values as text, a missing one included (pandas 3 keeps NaN through astype(str), nunique skips it)
            kinds = group.astype(str).nunique(dropna=False)
            differs = [c for c in group.columns if c not in fixed and kinds[c] > 1][:3]
            names = ", ".join(f"row {i}" + self._extra_name(frame.loc[i]) for i in group.index)
            identical = not drop or bool((kinds <= 1).all())
            for index in rest if identical else group.index:
                row = frame.loc[index]
                what = "seed" if seed_given or row["run_id"] == seed_key(row["seed"]) else "run id"
                if not drop:
                    reason = f"duplicate {what} {row['run_id']!r} (also in row {first})"
                elif identical:
                    reason = f"duplicate {what} {row['run_id']!r}, identical to row {first} in every column (kept)"
                else:
                    others = ", ".join(str(i) for i in group.index if i != index)
                    reason = (
                        f"duplicate {what} {row['run_id']!r} with different values in row(s) {others}: every copy "
                        "dropped (which one is right cannot be told)"
                    )
                problem = self._problem(row, index, reason)
                problem["differs"] = differs
                problem["text"] = (
                    f"duplicate {what} {row['run_id']!r} for {row['algorithm']} / {row['task']}"
                    + (f" step {row['step']}" if "step" in row.index else "")
                    + f": {names}"
                )
                if not drop or index not in (recorded or set()):
                    problems.append(problem)
        return problems

    @staticmethod
    def _extra_name(row: pd.Series) -> str:
        parts = [
            f"{col}={row[col]}"
            for col in ("tracker_run_id", "run_name", "name", "source_dir")
            if col in row.index and pd.notna(row[col])
        ]
        return f" ({', '.join(parts)})" if parts else ""

    @staticmethod
    def _check_coverage(frame: pd.DataFrame) -> tuple[list[str], list[dict[str, Any]]]:
        """Algorithms missing tasks that others have: (one text per gap, one drop record per row)."""
        tasks_by_alg = frame.groupby("algorithm", sort=False)["task"].agg(set)
        all_tasks = set(frame["task"])
        texts, incomplete = [], set()
        for alg, tasks in tasks_by_alg.items():
            for task in sorted(all_tasks - tasks):
                texts.append(f"algorithm {alg!r} has no runs on task {task!r}, which other algorithms have")
                incomplete.add(task)
        drops = [
            {
                "index": index,
                "run_id": row["run_id"],
                "algorithm": row["algorithm"],
                "task": row["task"],
                "reason": f"task {row['task']!r} is missing for some algorithm; dropped for every algorithm",
            }
            for index, row in frame[frame["task"].isin(incomplete)].iterrows()
        ]
        return texts, drops

    @staticmethod
    def _message(texts: list[str], problems: list[dict[str, Any]] | None = None) -> Message:
        fix = said(
            "Fix the data at its source, or pass ",
            kw("on_invalid='drop'"),
            " to drop these rows; every dropped row is listed in the report's provenance.",
        )
        differs = list(dict.fromkeys(c for p in problems or () for c in p.get("differs", ())))
        if differs:
            fix = said(
                f"These rows differ in {', '.join(map(str, differs))}: if that is their configuration, pass ",
                kw("hyperparameter_keys="),
                f" {','.join(map(str, differs))} to analyse each configuration apart. ",
                fix,
            )
        if any(t.startswith("duplicate") for t in texts):
            fix = (
                fix
                if differs
                else said(
                    "If these are different runs, give each a unique key (",
                    kw("run_id="),
                    ", e.g. the tracker run id or a source column; for a sweep, name its configuration columns with ",
                    kw("hyperparameter_keys="),
                    "); otherwise remove the duplicates. ",
                    fix,
                )
            )
        if any("has no runs on task" in t for t in texts):
            fix = said("Evaluate all algorithms on the same tasks, or ", fix.uncapitalized())
        summary = ""
        if problems and len(texts) > _MAX_LISTED:
            groups: dict[tuple[str, str], int] = {}
            for p in problems:
                kind = re.sub(
                    r" ('.*'|\S+ \(.*\)|-?inf|nan)", "", p["reason"].split(" in column")[0].split(" (also")[0]
                )
                groups[(kind, p["algorithm"])] = groups.get((kind, p["algorithm"]), 0) + 1
            summary = "by kind and algorithm: " + "; ".join(f"{k} — {a}: {n}" for (k, a), n in groups.items()) + " — "
        return said(f"{plural(len(texts), 'problem')} in the scores: {summary}{_listing(texts)}. ", fix)

    def _note_interval(self, text: str) -> None:
        """A warning about intervals only (see :attr:`interval_notes`)."""
        self.warnings.append(text)
        self.interval_notes.append(text)

    def _warn_small_cells(self) -> None:
        sizes = self.frame.groupby(["algorithm", "task"], sort=False)["run_id"].nunique()
        singles = [f"{a} / {t}" for (a, t), n in sizes.items() if n < 2]
        if singles:
            self._note_interval(
                f"{plural(len(singles), 'cell', '(algorithm, task)')} {agree(len(singles), 'have')} a single run ({', '.join(singles[:8])}"
                + (", ..." if len(singles) > 8 else "")
                + "): point estimates are fine, but bootstrap intervals cannot reflect run-to-run variation there."
            )
        few = sizes[(sizes >= 2) & (sizes < 5)]
        if len(few):
            counts = sorted({int(n) for n in few})
            each = f"{counts[0]} each" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
            named = [f"{a} / {t} ({n})" for (a, t), n in few.items()]
            cells = (
                f"{'both cells' if len(few) == 2 else f'all {len(few)} cells'} have fewer than 5 runs ({each})"
                if len(few) == len(sizes) > 1
                else f"{plural(len(few), 'cell')} {agree(len(few), 'have')} fewer than 5 runs ({', '.join(named[:8])}"
                + (", ...)" if len(named) > 8 else ")")
            )
            self._note_interval(f"{cells}: intervals will be wide and can under-cover.")
        ragged = [f"{alg} ({s.min()}–{s.max()})" for alg, s in sizes.groupby(level=0, sort=False) if s.nunique() > 1]
        if ragged:
            self._note_interval(
                f"runs per task differ within {', '.join(ragged[:8])}{', ...' if len(ragged) > 8 else ''}: each task "
                "still carries equal weight (each run of task m weighs 1/(M·N_m))."
            )
        # unequal runs between algorithms: the protocol check ``runs.unequal`` (analysis/protocol.py) says it, once

    # ------------------------------------------------------------------ accessors
    @property
    def algorithms(self) -> list[str]:
        """Algorithms in order of first appearance."""
        return list(pd.unique(self.frame["algorithm"]))

    @property
    def tasks(self) -> list[str]:
        """Tasks in order of first appearance."""
        return list(pd.unique(self.frame["task"]))

    @property
    def has_steps(self) -> bool:
        return "step" in self.frame.columns

    def final(self, at_step: float | None = None) -> ScoreTable:
        """One row per run: the score at the last step (the table itself if it has no steps).

        A tracker table's ``final_score`` column (the score key's value, kept apart from the learning
        curve) is the final score. With ``at_step`` (a common training budget), the score at the last
        step at or before it instead; runs with no step that early are left out (the caller reports them).
        """
        if not self.has_steps:
            return self
        frame = self.frame.sort_values("step", kind="stable")
        if at_step is not None:
            frame = frame[frame["step"].astype(float) <= float(at_step)]
        last = frame.groupby(["algorithm", "task", "run_id"], sort=False).tail(1).sort_index()
        if FINAL_SCORE in last.columns:  # a tracker's final score, kept apart from its learning curve
            if at_step is None:
                last = last.assign(score=last[FINAL_SCORE].astype(float))
            last = last.drop(columns=[FINAL_SCORE])
        return self._replace(last.drop(columns=["step"]))

    def in_order(self, algorithms: Sequence[str] | None = None) -> ScoreTable:
        """A copy whose rows are in the canonical order every table follows: algorithms in ``algorithms``' order
        (the user's ``only_algorithms``), else sorted by name; then tasks sorted by name, runs by run key, steps
        ascending. So the order of the input rows changes nothing, not even which algorithm is ``algorithm_x``::

            >>> t = ScoreTable(pd.DataFrame({"algorithm": ["b", "a"], "task": ["x", "x"], "seed": [0, 0], "score": [1, 2]}))
            >>> t.in_order().algorithms, t.in_order(["b", "a"]).algorithms
            (['a', 'b'], ['b', 'a'])
        """
        names = [str(a) for a in self.algorithms]
        order = [a for a in dict.fromkeys(algorithms or ()) if a in set(names)]
        order += sorted(a for a in names if a not in set(order))
        frame = self.frame
        keys = pd.DataFrame(
            {
                "a": frame["algorithm"].astype(str).map({a: k for k, a in enumerate(order)}),
                "t": frame["task"].astype(str),
                "r": frame["run_id"].astype(str) if "run_id" in frame.columns else "",
                "s": frame["step"].astype(float) if "step" in frame.columns else 0.0,
            },
            index=frame.index,
        )
        index = keys.sort_values(["a", "t", "r", "s"], kind="stable").index
        return self._replace(frame.loc[index])

    def _replace(self, frame: pd.DataFrame) -> ScoreTable:
        """A new table with the same metadata and ``frame`` (already canonical and valid)."""
        new = object.__new__(ScoreTable)
        new.frame = frame.reset_index(drop=True)
        new.source = dict(self.source)
        new.warnings = list(self.warnings)
        new.interval_notes = list(self.interval_notes)
        new.dropped = self.dropped.copy()
        return new

    def map_scores(self, transform: Callable[[pd.Series, np.ndarray], np.ndarray]) -> ScoreTable:
        """A copy with every score column mapped by ``transform(tasks, values)`` (e.g. a per-task normalisation).

        Every score column means ``score`` and, on a tracker table with learning curves, ``final_score`` (the
        score key's value that :meth:`final` uses): a map of ``score`` alone would leave raw final scores
        behind under a normalised label. Raw scores are kept as ``raw_score``.
        """
        tasks = self.frame["task"]
        out = self._with_columns({"score": transform(tasks, self.frame["score"].to_numpy(float))})
        if FINAL_SCORE in self.frame.columns:
            finals = transform(tasks, self.frame[FINAL_SCORE].to_numpy(float))
            out.frame[FINAL_SCORE] = self._checked(finals, out.frame)
        return out

    def with_scores(self, scores: np.ndarray | pd.Series, *, keep_raw: bool = True) -> ScoreTable:
        """A copy with the ``score`` column replaced (e.g. normalised); raw scores kept as ``raw_score``.

        Refused on a table whose final scores are a column of their own (``final_score``, a tracker table with
        learning curves): new ``score`` values alone would leave those behind; use :meth:`map_scores`.
        """
        if FINAL_SCORE in self.frame.columns:
            raise ValueError(
                "with_scores() would leave the final_score column unchanged; use map_scores() to transform "
                "every score column of a table with learning curves"
            )
        return self._with_columns({"score": np.asarray(scores, dtype=float)}, keep_raw=keep_raw)

    def _with_columns(self, columns: Mapping[str, np.ndarray], *, keep_raw: bool = True) -> ScoreTable:
        frame = self.frame.copy()
        if keep_raw and "raw_score" not in frame.columns:
            frame.insert(frame.columns.get_loc("score") + 1, "raw_score", frame["score"])
        for name, values in columns.items():
            frame[name] = self._checked(values, frame)
        return self._replace(frame)

    @staticmethod
    def _checked(scores: np.ndarray, frame: pd.DataFrame) -> np.ndarray:
        """Transformed scores, refused when not finite or too large (naming the first runs)."""
        values = np.asarray(scores, dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            where = frame.loc[bad, ["algorithm", "task", "run_id"]].head(5)
            runs = "; ".join(f"{a} / {t} run {r!r}" for a, t, r in where.itertuples(index=False))
            raise ScoreTableError(
                f"{int(bad.sum())} transformed score(s) are not finite ({runs}): the transformation (e.g. the "
                "normalisation's low/high) overflows; check the reference ranges."
            )
        check_magnitudes(values, what="transformed scores")
        return values

    def cells(self) -> dict[tuple[str, str], np.ndarray]:
        """Final scores per (algorithm, task), in table order of algorithms and tasks, runs by run id."""
        # runs ordered by run id inside each cell: results do not depend on the input's row order
        frame = self.final().frame.sort_values("run_id", kind="stable")
        out: dict[tuple[str, str], np.ndarray] = {}
        groups = {key: g["score"].to_numpy(dtype=float) for key, g in frame.groupby(["algorithm", "task"], sort=False)}
        for alg in self.algorithms:
            for task in self.tasks:
                if (alg, task) in groups:
                    out[(alg, task)] = groups[(alg, task)]
        return out

    def runs_per_cell(self) -> pd.DataFrame:
        """Number of runs in each (algorithm, task) cell, as a wide table."""
        frame = self.final().frame
        counts = frame.groupby(["algorithm", "task"], sort=False).size().unstack("task")
        return counts.reindex(index=self.algorithms, columns=self.tasks)

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        n_runs = self.final().frame.shape[0]
        return (
            f"ScoreTable({plural(len(self.algorithms), 'algorithm')} × {plural(len(self.tasks), 'task')}, "
            f"{plural(n_runs, 'run')}" + (", with steps" if self.has_steps else "") + ")"
        )

    # ------------------------------------------------------------------ conversions
    @classmethod
    def from_pandas(cls, data: pd.DataFrame, **kwargs: Any) -> ScoreTable:
        """Same as the constructor (for symmetry with the other ``from_*``)."""
        return cls(data, **kwargs)

    def to_pandas(self) -> pd.DataFrame:
        """A copy of the canonical long table."""
        return self.frame.copy()

    @classmethod
    def from_file(cls, path: str | os.PathLike, **kwargs: Any) -> ScoreTable:
        """Read CSV/TSV, Parquet or JSON/JSON Lines by file extension (``.gz`` variants decompressed).

        Every read problem (missing file, bad encoding, malformed CSV/JSON, unreadable Parquet) is an
        :class:`~rl_reliable_logger.errors.InputError` naming the file.
        """
        from .bundle_scores import bundle_normalization

        kind = _file_kind(path)
        reader = {"csv": cls.from_csv, "tsv": cls.from_csv, "parquet": cls.from_parquet, "json": cls.from_json}
        table = reader[kind](path, **kwargs)
        recorded = bundle_normalization(path, str(kwargs.get("score", "score")))
        if recorded is not None:  # a results bundle's scores.csv: its score column is normalised already
            table.source["bundle_normalized"] = {"path": str(path), "normalize": recorded}
        return table

    @classmethod
    def from_csv(cls, path: str | os.PathLike, **kwargs: Any) -> ScoreTable:
        """Read a long CSV (``algorithm,task,seed,score`` by default); ``.tsv`` (and ``.tsv.gz``) is tab-separated.

        Name columns (algorithm, task, seed, run id) are read as text, exactly as written; cells neutralised
        by ``save_scores`` (see :mod:`.csvcells`) are restored.
        """
        sep = "\t" if _file_kind(path, default="csv") == "tsv" else ","
        names = [kwargs.get("algorithm", "algorithm"), kwargs.get("task", "task")]
        names += [kwargs.get(k, "seed" if k == "seed" else None) for k in ("seed", "run_id")]
        with _reading(path):
            check_read_memory(path, "tsv" if sep == "\t" else "csv")
            frame = csvcells.read_csv(
                path,
                text_columns=[n for n in names if n is not None],
                value_columns=kwargs.get("hyperparameter_keys") or (),
                sep=sep,
            )
        hint = separator_hint(frame.columns, sep)
        fields = [kwargs.get(k, k) for k in ("algorithm", "task", "score")]
        if hint and any(f not in frame.columns for f in fields):  # read as one column: say why, not which are absent
            raise ScoreTableError(f"{path}: the header is one column, {str(frame.columns[0])!r}: {hint}.")
        return cls(frame, **kwargs)

    @classmethod
    def from_parquet(cls, path: str | os.PathLike, **kwargs: Any) -> ScoreTable:
        try:
            import pyarrow  # noqa: F401
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ScoreTableError(
                f"reading Parquet needs pyarrow: pip install 'rl_reliable_logger[parquet]' ({err})"
            ) from None
        with _reading(path):
            check_read_memory(path, "parquet")
            frame = pd.read_parquet(path)
        return cls(frame, **kwargs)

    @classmethod
    def from_json(cls, path: str | os.PathLike, **kwargs: Any) -> ScoreTable:
        """Read JSON: a list of records (long form), ``{"columns", "data"}``, ``{algorithm: {task: [scores]}}``,
        or JSON Lines (``.jsonl``); ``.gz`` files are decompressed."""
        with _reading(path):
            check_read_memory(path, "json")
            raw = Path(path).read_bytes()
            if str(path).lower().endswith(".gz"):
                raw = gzip.decompress(raw)
            text = raw.decode("utf-8")
            if _stem_suffix(path) == ".jsonl":
                rows = []
                for number, line in enumerate(text.splitlines(), start=1):
                    if line.strip():
                        try:
                            rows.append(parse(line))
                        except JsonProblem as err:
                            raise ScoreTableError(f"{path}: line {number}: {err}") from None
                if not all(isinstance(r, dict) for r in rows):
                    raise ScoreTableError(f"{path}: every JSON Lines line must be an object (one record)")
                return cls(pd.DataFrame(rows), **kwargs)
            try:
                payload = parse(text)
            except JsonProblem as err:
                raise ScoreTableError(f"{path}: {err}") from None
        if isinstance(payload, dict) and "columns" in payload and "data" in payload:
            return cls(pd.DataFrame(payload["data"], columns=payload["columns"]), **kwargs)
        if isinstance(payload, dict) and payload and all(isinstance(v, Mapping) for v in payload.values()):
            return cls.from_nested(payload, **kwargs)
        if isinstance(payload, list) and payload and all(isinstance(r, Mapping) for r in payload):
            return cls(pd.DataFrame(payload), **kwargs)
        raise ScoreTableError(
            f"{path}: unrecognised JSON layout; expected a list of records with algorithm/task/seed/score, "
            '{"columns": [...], "data": [[...]]}, or {algorithm: {task: [score per run]}}.'
        )

    @classmethod
    def from_nested(cls, nested: Mapping[str, Mapping[str, Any]], **kwargs: Any) -> ScoreTable:
        """Build from ``{algorithm: {task: [score per run]}}``; the list position is the seed.

        A single number instead of a list is one run (seed 0). Strings, objects and nested lists are refused
        (a string is not split into characters).
        """
        rows = []
        for alg, tasks in nested.items():
            if not isinstance(tasks, Mapping):
                raise ScoreTableError(f"nested scores: algorithm {alg!r} must map tasks to score lists")
            for task, scores in tasks.items():
                if isinstance(scores, (int, float)) and not isinstance(scores, bool):
                    scores = [scores]
                elif not isinstance(scores, (list, tuple, np.ndarray)):
                    raise ScoreTableError(
                        f"nested scores: {alg!r} / {task!r} holds a {type(scores).__name__} ({str(scores)[:40]!r}); "
                        "expected a list of numbers, one per run."
                    )
                for i, value in enumerate(scores):
                    if isinstance(value, (list, tuple, dict, Mapping, str, bytes)):
                        shown = f" ({value[:40]!r})" if isinstance(value, (str, bytes)) else ""
                        raise ScoreTableError(
                            f"nested scores: {alg!r} / {task!r} run {i} is a {type(value).__name__}{shown}, not a "
                            "number; write scores as JSON numbers."
                        )
                    rows.append({"algorithm": alg, "task": task, "seed": i, "score": value})
        if not rows:
            raise ScoreTableError("nested scores: no runs at all (every task list is empty).")
        return cls(pd.DataFrame(rows), **kwargs)

    @classmethod
    def from_rliable(
        cls, score_dict: Mapping[str, np.ndarray], tasks: Sequence[str] | None = None, **kwargs: Any
    ) -> ScoreTable:
        """Build from rliable's ``{algorithm: array[runs, tasks]}``; NaN entries mean "no run"."""
        rows = []
        for alg, arr in score_dict.items():
            arr = np.asarray(arr, dtype=float)
            if arr.ndim != 2:
                raise ScoreTableError(
                    f"rliable scores for {alg!r} must be a 2-D array [runs, tasks], got shape {arr.shape}"
                )
            names = list(tasks) if tasks is not None else [f"task_{j}" for j in range(arr.shape[1])]
            if len(names) != arr.shape[1]:
                raise ScoreTableError(f"{alg!r} has {arr.shape[1]} task columns but {len(names)} task names were given")
            for i in range(arr.shape[0]):
                for j in range(arr.shape[1]):
                    if not math.isnan(arr[i, j]):
                        rows.append({"algorithm": alg, "task": names[j], "seed": i, "score": arr[i, j]})
        return cls(pd.DataFrame(rows), **kwargs)

    def to_rliable(self) -> tuple[dict[str, np.ndarray], list[str]]:
        """rliable's ``{algorithm: array[runs, tasks]}`` and the task order; needs equal runs per task."""
        sizes = self.runs_per_cell()
        if sizes.to_numpy().min() != sizes.to_numpy().max():
            raise ScoreTableError(
                "rliable needs the same number of runs in every (algorithm, task) cell; this table has "
                f"{int(sizes.to_numpy().min())} to {int(sizes.to_numpy().max())}. rl_reliable_logger itself handles this."
            )
        cells = self.cells()
        out = {alg: np.stack([cells[(alg, t)] for t in self.tasks], axis=1) for alg in self.algorithms}
        return out, self.tasks
