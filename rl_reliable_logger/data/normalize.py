"""Score normalisation: ``(score - low) / (high - low)`` per task, with packaged reference tables.

Packaged tables (``references/*.csv``, built from the rliable authors' published references):

=============== ============================================================ ==================
name            tasks                                                        low → 0, high → 1
=============== ============================================================ ==================
``atari``       the 57 Atari games (alias ``atari57``)                       random → human
``atari100k``   the 26-game Atari 100k subset                                random → human
``atari-record`` the 57 Atari games                                          random → human world record
``procgen``     the 16 Procgen games, easy mode (alias ``procgen-easy``)     min → max return
``dmc``         any DeepMind Control task (returns lie in [0, 1000])         0 → 1000
=============== ============================================================ ==================

Procgen hard-mode ranges are published in the Procgen paper's appendix but could not be
confirmed from a primary source here, so they are not packaged: pass them as a CSV.

A user table is a CSV with columns ``task,low,high``. Task names match tolerantly:
``ALE/Pong-v5``, ``PongNoFrameskip-v4``, ``pong`` and ``Pong`` are the same game, and
``bankheist`` matches ``BankHeist``. A task with no reference is an error listing every
unmatched task and the closest known names — never a silent skip.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError, ScoreTableError
from ..wording import Keyword, said
from . import csvcells
from .counts import agree, plural
from .fields import column_list
from .files import check_regular_file
from .scores import ScoreTable, magnitude_limit

#: Scores the training code already normalised (0 and 1 as it defines them): kept as they are, and labelled
#: normalised, so no "scores are not normalised" warning is raised about them.
_ALREADY = "already-normalized"

_PACKAGED = {
    "atari": "atari57.csv",
    "atari57": "atari57.csv",
    "atari-57": "atari57.csv",
    "atari100k": "atari100k.csv",
    "atari-100k": "atari100k.csv",
    "atari-record": "atari57_record.csv",
    "procgen": "procgen_easy.csv",
    "procgen-easy": "procgen_easy.csv",
}
_RANGES = {"dmc": (0.0, 1000.0), "dm_control": (0.0, 1000.0), _ALREADY: (0.0, 1.0)}

_PREFIXES = re.compile(r"^(ale/|procgen:|procgen-|procgen_|dmc[/:_-]|dm_control[/:_-])", re.I)
_SUFFIXES = re.compile(r"(noframeskip|deterministic)?(-v\d+)?$", re.I)


def canonical_task_name(name: str) -> str:
    """Reduce a task name to a comparison key: ``ALE/BankHeist-v5`` → ``bankheist``.

    Example:
        >>> canonical_task_name("PongNoFrameskip-v4"), canonical_task_name("ALE/Pong-v5")
        ('pong', 'pong')
    """
    text = str(name).strip()
    text = _PREFIXES.sub("", text)
    text = _SUFFIXES.sub("", text)
    return re.sub(r"[^0-9a-z]", "", text.lower())


#: A normaliser's range must keep this much relative precision (and be a normal float) to divide by.
_MIN_RELATIVE_RANGE = 1e-12


def _degenerate(low: float, high: float) -> bool:
    width = high - low
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(width)) or not width > 0:
        return True
    return width < np.finfo(np.float64).tiny or width < _MIN_RELATIVE_RANGE * max(abs(low), abs(high))


def _keyed(table: pd.DataFrame, name: str) -> dict[str, tuple[str, float, float]]:
    """Reference rows by canonical task name; two rows for one task (``t3``, ``T3``) are an error."""
    keyed: dict[str, tuple[str, float, float]] = {}
    clashes: list[str] = []
    for task, low, high in table[["task", "low", "high"]].itertuples(index=False):
        key = canonical_task_name(task)
        if key in keyed:
            clashes.append(f"{keyed[key][0]!r} and {task!r}")
        keyed[key] = (str(task), float(low), float(high))
    if clashes:
        raise ScoreTableError(
            f"the {name!r} reference table lists one task more than once (names match ignoring case, "
            f"punctuation and version suffixes): {'; '.join(clashes)}. Keep one row per task."
        )
    return keyed


@dataclass(frozen=True)
class Normalizer:
    """A per-task affine map; ``name`` says what 0 and 1 mean (shown on every figure axis)."""

    name: str
    table: pd.DataFrame | None = None  # columns task, low, high (None for a range normaliser)
    low: float | None = None
    high: float | None = None
    description: str = ""

    def bounds(self, tasks: list[str]) -> dict[str, tuple[float, float]]:
        """(low, high) per task; raises ScoreTableError listing unmatched tasks and close names."""
        if self.table is None:
            return {t: (float(self.low), float(self.high)) for t in tasks}  # type: ignore[arg-type]
        keyed = _keyed(self.table, self.name)
        spellings: dict[str, list[str]] = {}
        for task in tasks:
            spellings.setdefault(canonical_task_name(task), []).append(task)
        twice = [names for names in spellings.values() if len(names) > 1]
        if twice:
            shown = "; ".join(" and ".join(repr(n) for n in names) for names in twice[:6])
            raise ScoreTableError(
                f"{plural(len(twice), 'task')} {agree(len(twice), 'are')} named two ways in one input: {shown} are one game for the {self.name!r} "
                "table (names match ignoring case, punctuation and version suffixes), so they would get one "
                "reference score and count twice. Use one name per task."
            )
        out, unmatched = {}, []
        for task in tasks:
            hit = keyed.get(canonical_task_name(task))
            if hit is None:
                unmatched.append(task)
            else:
                out[task] = (hit[1], hit[2])
        if unmatched:
            known = [v[0] for v in keyed.values()]
            lines = []
            for task in unmatched:
                close = difflib.get_close_matches(canonical_task_name(task), list(keyed), n=3, cutoff=0.6)
                hint = f" (closest: {', '.join(keyed[c][0] for c in close)})" if close else ""
                lines.append(f"{task}{hint}")
            raise ScoreTableError(
                said(
                    f"{plural(len(unmatched), 'task')} {agree(len(unmatched), 'have')} no reference score in the "
                    f"{self.name!r} table: "
                    + "; ".join(lines)
                    + f". The table knows {plural(len(known), 'task')}. Drop these tasks, or pass your own CSV with columns "
                    "task,low,high (",
                    Keyword("normalize", "path/to/refs.csv"),  # the command line: --normalize path/to/refs.csv
                    ").",
                )
            )
        bad = [f"{t} (low={lo!r}, high={hi!r})" for t, (lo, hi) in out.items() if _degenerate(lo, hi)]
        if bad:
            raise ScoreTableError(
                f"the {self.name!r} reference table needs a usable range high > low (high - low at least "
                f"{_MIN_RELATIVE_RANGE:g} of the larger magnitude and a normal float) for: {'; '.join(bad)}"
            )
        return out

    def _check_normalised(
        self, out: np.ndarray, raw: np.ndarray, tasks: pd.Series, bounds: Mapping[str, tuple[float, float]]
    ) -> None:
        """Refuse normalised scores beyond the bound raw scores get (:func:`~.scores.magnitude_limit`), naming the
        tasks whose reference range is too narrow for their scores."""
        limit = magnitude_limit(out.size)
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(out) <= limit)
        if not bad.any():
            return
        worst: dict[str, tuple[float, float]] = {}  # task -> (largest |normalised|, largest |raw|)
        for task, value, score in zip(tasks[bad].astype(str), np.abs(out[bad]), np.abs(raw[bad])):
            seen = worst.get(task, (0.0, 0.0))
            worst[task] = (max(seen[0], float(value)), max(seen[1], float(score)))
        named = sorted(worst, key=lambda t: worst[t][0], reverse=True)
        shown = "; ".join(
            f"task {t!r} reaches {worst[t][0]:.3g} (raw up to {worst[t][1]:.3g}, reference low={bounds[t][0]:g}, "
            f"high={bounds[t][1]:g})"
            for t in named[:3]
        ) + (f"; and {len(named) - 3} more" if len(named) > 3 else "")
        raise ScoreTableError(
            f"normalised scores too large: {shown}; with {out.size} rows, sums and variances of such values "
            f"overflow float64 (the limit here is {limit:.3g}), so check the low/high of "
            f"{'that task' if len(named) == 1 else 'those tasks'} in the {self.name!r} reference table (the range "
            "is far narrower than the scores), or rescale the raw scores."
        )

    #: An affine map applies to every training step, so learning curves are normalised too.
    per_step: bool = True
    #: Nothing to add to the report's warnings.
    caveat: str | None = None

    def apply(self, table: ScoreTable) -> ScoreTable:
        """Normalised copy of ``table`` (raw scores kept in ``raw_score``)."""
        bounds = self.bounds(table.tasks)

        def affine(tasks: pd.Series, values: np.ndarray) -> np.ndarray:
            low = tasks.map({t: b[0] for t, b in bounds.items()}).to_numpy(float)
            high = tasks.map({t: b[1] for t, b in bounds.items()}).to_numpy(float)
            with np.errstate(over="ignore", invalid="ignore"):  # refused below, naming the task, not warned
                out = (values - low) / (high - low)
            self._check_normalised(out, values, tasks, bounds)
            return out

        out = table.map_scores(affine)  # final scores of a tracker table with curves too
        out.source = {**out.source, "normalization": self.name, "normalization_description": self.description}
        return out


@dataclass(frozen=True)
class PercentileNormalizer:
    """Jordan et al.'s performance percentiles, fitted on the final scores being evaluated."""

    name: str = "percentiles"
    weights: str = "equilibrium"
    description: str = "performance percentile (Jordan et al. 2020; 0 to 1)"
    #: Fitted on final scores only: curves cannot be normalised this way.
    per_step: bool = False
    caveat: str | None = (
        "performance percentiles are fitted on these same runs and then held fixed: the bootstrap "
        "intervals do not include the normaliser's own uncertainty (Jordan et al.'s PBP intervals do)."
    )

    def apply(self, table: ScoreTable, mixture: np.ndarray | None = None) -> ScoreTable:
        """The final scores of ``table`` mapped to performance percentiles on their task.

        ``weights="equilibrium"`` needs ``mixture``, the (tasks, algorithms) equilibrium weights that the
        analysis layer computes (``analysis.normalization.normalize_final`` does both steps).
        """
        from .percentiles import percentile_normalize

        if self.weights == "equilibrium":
            if mixture is None:
                raise InputError(
                    "performance percentiles with the paper's equilibrium weights are fitted by the analysis: "
                    "use `evaluate(table, normalize='percentiles')` or "
                    "`rl_reliable_logger.analysis.normalization.normalize_final(table, 'percentiles')`"
                )
            out = percentile_normalize(table.final(), weights=mixture)
        else:
            out = percentile_normalize(table.final(), weights=self.weights)
        out.source["normalization_description"] = self.description
        return out


_PERCENTILE_NAMES = ("percentiles", "percentile", "jordan")


def available() -> list[str]:
    """Names of the packaged normalisers."""
    return sorted(set(_PACKAGED) | set(_RANGES))


def _describe(name: str) -> str:
    if name.startswith("atari-record"):
        return "human world-record normalised score (random = 0, record = 1)"
    if name.startswith("atari"):
        return "human-normalised score (random = 0, human = 1)"
    if name.startswith("procgen"):
        return "min-max normalised return (Procgen easy mode)"
    if name == _ALREADY:
        return "score normalised by the training code (kept as logged)"
    if name in _RANGES:
        return "return / 1000 (DM Control)"
    return f"normalised score ({name})"


def describe(name: str) -> str | None:
    """What the scores of a packaged normaliser mean (the one description table; None for other names or paths).

    Example:
        >>> describe("atari")
        'human-normalised score (random = 0, human = 1)'
    """
    key = str(name).strip().lower().replace("_", "-")
    if key in _PERCENTILE_NAMES:
        return PercentileNormalizer.description
    for known in (key, key.replace("-", "_"), key.replace("-", "")):
        if known in _PACKAGED or known in _RANGES:
            return _describe(known)
    return None


#: What a user's reference table normalises to (CSV file, mapping or DataFrame alike).
_GIVEN = "normalised score (per task: reference low = 0, high = 1)"

#: What ``normalize=`` accepts, for the one sentence that refuses anything else.
ACCEPTED = (
    f"a packaged name ({', '.join(available())}, 'percentiles'), the path of a CSV with columns task,low,high, "
    "a mapping {task: (low, high)}, a DataFrame with columns task, low, high, or a normaliser object"
)


def get_normalizer(
    spec: str | os.PathLike | Normalizer | PercentileNormalizer | Mapping | pd.DataFrame,
) -> Normalizer | PercentileNormalizer:
    """A packaged normaliser by name, ``"percentiles"`` (Jordan et al.), or a user's reference scores: a CSV
    ``task,low,high`` by path, a mapping ``{task: (low, high)}`` or a DataFrame with columns task, low, high.

    Example:
        >>> get_normalizer("atari100k").bounds(["ALE/Pong-v5"])
        {'ALE/Pong-v5': (-20.7, 14.6)}
        >>> get_normalizer({"Pong": (-20.7, 14.6)}).bounds(["ALE/Pong-v5"])
        {'ALE/Pong-v5': (-20.7, 14.6)}
    """
    if isinstance(spec, (Normalizer, PercentileNormalizer)):
        return spec
    if isinstance(spec, (Mapping, pd.DataFrame)):
        return _given(spec)
    if not isinstance(spec, (str, os.PathLike)):
        raise ScoreTableError(f"normalize= was given a {type(spec).__name__!r}; it takes {ACCEPTED}.")
    key = str(spec).strip().lower()
    if key in _PERCENTILE_NAMES:
        return PercentileNormalizer()
    if key in _PACKAGED:
        ref = resources.files(__package__) / "references" / _PACKAGED[key]
        with resources.as_file(ref) as path:
            table = pd.read_csv(path)
        return Normalizer(name=key, table=table, description=_describe(key))
    if key in _RANGES:
        low, high = _RANGES[key]
        return Normalizer(name=key, low=low, high=high, description=_describe(key))
    path = Path(spec)
    if path.exists():
        check_regular_file(path, "reference table")
        try:
            table = csvcells.read_csv(path, text_columns=["task"])
        except (OSError, ValueError, UnicodeDecodeError) as err:
            detail = " ".join(str(err).split())[:200]
            raise ScoreTableError(f"{path}: cannot read the reference table ({type(err).__name__}: {detail})") from None
        return Normalizer(name=path.name, table=_reference_table(table, str(path), path.name), description=_GIVEN)
    raise ScoreTableError(
        f"unknown normalisation {spec!r}: use one of {', '.join(available())}, 'percentiles' (Jordan et al.), "
        "or the path of a CSV with columns task,low,high."
    )


def _given(spec: Mapping | pd.DataFrame) -> Normalizer:
    """A Normalizer of reference scores given in code: ``{task: (low, high)}`` or a DataFrame task, low, high."""
    if isinstance(spec, pd.DataFrame):
        table = spec
    else:
        pairs = {}
        for task, bounds in spec.items():
            if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
                raise ScoreTableError(
                    f"normalize=: task {str(task)!r} maps to {bounds!r}; a mapping gives each task its (low, high)."
                )
            pairs[task] = tuple(bounds)
        table = pd.DataFrame(
            {"task": list(pairs), "low": [b[0] for b in pairs.values()], "high": [b[1] for b in pairs.values()]}
        )
    table = table.assign(task=table["task"].astype(str)) if "task" in table else table
    return Normalizer(
        name="reference scores", table=_reference_table(table, "normalize=", "reference scores"), description=_GIVEN
    )


def _reference_table(table: pd.DataFrame, where: str, name: str) -> pd.DataFrame:
    """A user's reference table checked (columns task, low, high; finite numbers; task names; one row per task)
    and with numeric low/high; ``where`` starts each refusal (the file, or ``normalize=``)."""
    missing = {"task", "low", "high"} - set(table.columns)
    if missing:
        raise ScoreTableError(
            f"{where}: a reference table needs columns task,low,high; missing {', '.join(sorted(missing))} "
            f"(it has {column_list(table.columns)})."
        )
    nonnum = table[
        ~np.isfinite(pd.to_numeric(table["low"], errors="coerce").astype(float))
        | ~np.isfinite(pd.to_numeric(table["high"], errors="coerce").astype(float))
        | table["low"].map(lambda v: isinstance(v, bool))
        | table["high"].map(lambda v: isinstance(v, bool))
    ]
    if len(nonnum):
        raise ScoreTableError(f"{where}: non-numeric low/high for task(s) {', '.join(map(str, nonnum['task']))}")
    in_file = where != "normalize="  # a CSV's line numbers count its header; given rows count from 1
    empty = [line for line, t in enumerate(table["task"], start=2 if in_file else 1) if not str(t).strip()]
    if empty:
        said = "line(s)" if in_file else "row(s)"
        raise ScoreTableError(f"{where}: empty task name on {said} {', '.join(map(str, empty))}")
    table = table.assign(low=pd.to_numeric(table["low"]), high=pd.to_numeric(table["high"]))
    _keyed(table, name)  # duplicate tasks are an error now, not when the table is used
    return table


def spec_text(spec: object) -> str | None:
    """``normalize=`` as provenance records it: its text, or for reference scores given in code, what they are.

    Example:
        >>> spec_text({"Pong": (0, 1), "Breakout": (0, 30)})
        'reference scores given per task (2 tasks)'
    """
    if spec is None or isinstance(spec, str):
        return spec
    if isinstance(spec, (Mapping, pd.DataFrame)):
        return f"reference scores given per task ({plural(len(spec), 'task')})"
    return str(spec)


def normalize(
    table: ScoreTable, spec: str | os.PathLike | Normalizer | PercentileNormalizer | Mapping | pd.DataFrame
) -> ScoreTable:
    """Normalise ``table`` with a packaged name, a CSV path or reference scores (see :func:`get_normalizer`)."""
    return get_normalizer(spec).apply(table)
