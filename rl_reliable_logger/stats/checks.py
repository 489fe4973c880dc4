"""Checks for numbers that would be meaningless or noisy: warnings and floating-point tidying.

* :func:`task_scale_ratio` / :func:`opposite_signs` / :func:`raw_scale_warning`: aggregating raw returns across
  tasks whose scales differ by orders of magnitude lets one task dominate every aggregate; across tasks scored on
  opposite sides of 0 (penalties and rewards) it adds one to the other.
* :func:`gap_warning`: the optimality gap at a threshold γ only means something on a scale where γ is a
  target (normalised scores, γ = 1 = human level); on raw returns it is usually 0 for every algorithm.
* :func:`normalization_warning`: scores declared normalised that look like raw returns (``normalize=
  'already-normalized'`` on returns of 150-420).
* :func:`clip_noise` / :func:`clip_fraction`: a point estimate can fall outside its own interval, or a
  fraction outside [0, 1], by floating-point noise only (e.g. 6e-16). Such values are moved onto the
  boundary; anything further out is left alone, since it is not noise. The tolerance is
  :data:`NOISE_TOL` relative to ``max(1, |value|)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..wording import Keyword, said

#: Relative tolerance below which a difference is floating-point noise (about 4500 ulps at 1.0).
NOISE_TOL = 1e-12
#: Ratio of task scales above which aggregating raw scores across tasks draws a warning.
SCALE_RATIO_WARN = 10.0


def _scale(values: np.ndarray) -> float:
    """A task's scale: the larger of its runs' median |score| and their IQR (0 for no runs)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return 0.0
    q25, q75 = np.quantile(v, [0.25, 0.75])
    return max(float(np.median(np.abs(v))), float(q75 - q25))


def _ratio(values: Sequence[float]) -> float:
    """Largest over smallest of the positive ``values`` (1 with fewer than two)."""
    positive = [v for v in values if v > 0]
    return max(positive) / min(positive) if len(positive) >= 2 else 1.0


def task_scale_ratio(per_task: Sequence[np.ndarray]) -> float:
    """Largest over smallest task scale; a task's scale is the larger of its median |score| and its IQR.

    Tasks whose scale is 0 (every run scored 0) are ignored; fewer than two tasks give 1.
    """
    return _ratio([_scale(v) for v in per_task])


def task_reach_ratio(per_task: Sequence[np.ndarray]) -> float:
    """Largest over smallest of the tasks' best |score|: what the tasks' runs reach, against their typical scores
    (:func:`task_scale_ratio`). Tasks on one scale reach about the same even where one is solved less often."""
    return _ratio([float(np.abs(np.asarray(v, dtype=float)).max()) for v in per_task if np.size(v)])


def opposite_signs(per_task: dict[str, np.ndarray]) -> tuple[str, str] | None:
    """A task whose runs all score at or below 0 (some below) and one whose runs all score at or above 0 (some
    above), or None: raw returns of penalties (Acrobot's -500..0) and of rewards (CartPole's 0..500) are on two
    scales, however alike their magnitudes. Scores already on one scale (success rates in [0, 1], however far apart
    the tasks' performance) are never on both sides of 0."""
    below = [t for t, v in per_task.items() if np.size(v) and np.all(v <= 0) and np.any(v < 0)]
    above = [t for t, v in per_task.items() if np.size(v) and np.all(v >= 0) and np.any(v > 0)]
    return (below[0], above[0]) if below and above else None


def _fold(ratio: float) -> str:
    """A ratio of scales as the warnings say it: ``11-fold``, and a huge one in powers of ten (``3.2e+40-fold``),
    never a number of 40 digits.

    Example:
        >>> _fold(11.4), _fold(3.2e40)
        ('11-fold', '3.2e+40-fold')
    """
    return f"{ratio:.0f}-fold" if ratio < 1e6 else f"{ratio:.2g}-fold"


def raw_scale_warning(per_task: dict[str, np.ndarray], threshold: float = SCALE_RATIO_WARN) -> str | None:
    """A warning when raw scores of different tasks lie on opposite sides of 0 (:func:`opposite_signs`) or differ
    in scale by more than ``threshold`` (else None).

    Typical scores that differ are a difference of scale or of performance: where the tasks' best runs reach
    about the same (:func:`task_reach_ratio` at most ``threshold``, e.g. scores already in [0, 1] on which one
    task is mostly failed), the warning says it may be performance on one scale; else that the scales differ.

    Example:
        >>> print(raw_scale_warning({"Acrobot-v1": np.array([-500.0, -145]), "CartPole-v1": np.array([338.0, 15])}))
        scores are not normalised and every run of 'Acrobot-v1' scores at or below 0 where every run of 'CartPole-v1' scores at or above 0: the task scales differ, so an aggregate across tasks adds penalties to rewards; normalise the scores first (`normalize=` a CSV of task,low,high: each task's random and best score).
    """
    signs = opposite_signs(per_task)
    if signs is not None:
        return said(
            f"scores are not normalised and every run of {signs[0]!r} scores at or below 0 where every run of "
            f"{signs[1]!r} scores at or above 0: the task scales differ, so an aggregate across tasks adds penalties "
            "to rewards; normalise the scores first (",
            Keyword("normalize"),
            " a CSV of task,low,high: each task's random and best score).",
        ).text()
    ratio = task_scale_ratio(list(per_task.values()))
    if ratio <= threshold:
        return None
    scales = {t: _scale(v) for t, v in per_task.items()}
    big, small = max(scales, key=scales.__getitem__), min((t for t in scales if scales[t] > 0), key=scales.__getitem__)
    reach = task_reach_ratio(list(per_task.values()))
    typical = f"scores are not normalised and the tasks' typical scores differ {_fold(ratio)} ({big!r} vs {small!r})"
    if reach <= threshold:
        return said(
            f"{typical}, but their best runs differ only {reach:.1f}-fold: this may be a difference of performance on "
            "one common scale (some tasks solved less often), not of scale. If the tasks share a scale, say so (",
            Keyword("normalize", "already-normalized"),
            "); if not, normalise them (",
            Keyword("normalize"),
            "): aggregates across tasks of different scales are dominated by the large-scale tasks.",
        ).text()
    return said(
        f"{typical}, and so do their best runs ({_fold(reach)}): the task scales differ, so aggregates across tasks "
        "are dominated by the large-scale tasks; normalise the scores first (",
        Keyword("normalize"),
        ").",
    ).text()


#: Median |score| above which scores said to be normalised contradict it: on a normalised scale 0 and 1 are the
#: reference levels, and even MuZero's median human-normalised score over the 57 Atari games is about 20.
NORMALIZED_MEDIAN_LIMIT = 50.0


def normalization_warning(values: np.ndarray, normalization: str, gamma: float = 1.0) -> str | None:
    """A warning when scores said to be normalised (``normalization``: what the analysis calls them) lie far outside
    the range normalised scores take (median |score| above :data:`NORMALIZED_MEDIAN_LIMIT`): they look like raw
    returns, and every number on the normalised scale (the optimality gap, the profiles' axes, the methods
    paragraph's words) is wrong. One warning, which also stands for :func:`gap_warning`'s."""
    v = np.abs(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    if not v.size or not float(np.median(v)) > NORMALIZED_MEDIAN_LIMIT:
        return None
    return said(
        f"the scores are declared normalised ({normalization}) but look like raw returns: their median |score| is "
        f"{float(np.median(v)):.4g} (from {float(v.min()):.4g} to {float(v.max()):.4g}), where normalised scores put "
        f"0 and 1 at the reference levels; so the optimality gap (gamma = {gamma:g}) is about 0 for every algorithm "
        "and the figures and methods paragraph call raw returns normalised. Pass the normaliser of these tasks (",
        Keyword("normalize"),
        " atari100k, atari, procgen, dmc or a CSV of task,low,high), or leave ",
        Keyword("normalize"),
        " out for raw returns.",
    ).text()


def gap_warning(gamma: float, values: np.ndarray, normalized: bool) -> str | None:
    """A warning when the optimality gap at ``gamma`` is uninformative: raw scores, or ``gamma`` below almost all runs."""
    v = np.asarray(values, dtype=float)
    if not normalized:
        return said(
            f"the optimality gap measures the shortfall below gamma = {gamma:g}, a target on a normalised scale; the "
            "scores are not normalised, so it is not meaningful here (normalise with ",
            Keyword("normalize"),
            ", or set ",
            Keyword("gamma"),
            " on the raw scale).",
        ).text()
    if v.size and np.mean(v >= gamma) > 0.95:
        return (
            f"over 95% of runs score at or above gamma = {gamma:g}: the optimality gap is about 0 for every algorithm."
        )
    return None


def clip_noise(point: np.ndarray, low: np.ndarray, high: np.ndarray, tol: float = NOISE_TOL) -> np.ndarray:
    """``point`` moved into ``[low, high]`` where it lies outside by at most ``tol * max(1, |point|)``."""
    point, low, high = (np.asarray(a, dtype=float) for a in (point, low, high))
    slack = tol * np.maximum(1.0, np.abs(point))
    out = np.where((point < low) & (low - point <= slack), low, point)
    return np.where((out > high) & (out - high <= slack), high, out)


def clip_fraction(values: np.ndarray, tol: float = NOISE_TOL) -> np.ndarray:
    """Fractions moved into ``[0, 1]`` where they lie outside by at most ``tol``."""
    v = np.asarray(values, dtype=float)
    v = np.where((v < 0) & (v >= -tol), 0.0, v)
    return np.where((v > 1) & (v <= 1 + tol), 1.0, v)
