"""Online false-discovery-rate control over a stream of tests: SAFFRON (the gate's) and LORD++ (pure arrays).

A stream of hypotheses is tested one after another; test t gets a level ``α_t`` that depends only on the
outcomes of the tests before it, and a rejection earns level back for the tests after it ("alpha-wealth",
Foster & Stine 2008). Both rules here are generalized alpha-investing rules with a decay sequence
``γ_1 >= γ_2 >= ... >= 0``, ``Σ γ_j <= 1``, and initial wealth ``W0``:

* **LORD++** (Javanmard & Montanari 2018; Ramdas, Yang, Wainwright & Jordan 2017):
  ``α_t = γ_t W0 + (α - W0) γ_{t-τ_1} + α Σ_{j>=2} γ_{t-τ_j}``, τ_j the j-th rejection, ``W0 <= α``.
* **SAFFRON** (Ramdas, Zrnic, Wainwright & Jordan 2018): a test whose p-value is at most λ is a *candidate* and
  costs nothing; only the others are charged, ``α_t / (1 - λ)`` each:
  ``α_t = min(λ, W0 γ_{t-C_0+} + ((1-λ)α - W0) γ_{t-τ_1-C_1+} + (1-λ)α Σ_{j>=2} γ_{t-τ_j-C_j+})``,
  ``C_j+`` the candidates after the j-th rejection (all of them for j = 0), ``W0 <= (1-λ)α``. It adapts to the
  share of true effects: with many, most tests are candidates and the levels stay high.

**The guarantee.** If the p-values of the true nulls are super-uniform and independent of each other and of the
non-nulls, both rules keep the false-discovery rate ``E[V / max(R, 1)] <= α`` at every time (Ramdas et al. 2017,
Thm 2; Ramdas et al. 2018, Thm 1; the rules are monotone), and the estimate of the false-discovery proportion
``charged / max(R, 1)`` is at most α by construction (:func:`charged`). Nothing else is assumed of the non-nulls.

``gamma`` here is ``γ_j = j^{-p} / ζ(p)`` (sums to 1; SAFFRON's default p = 1.6): it spends much of a
rejection's reward on the next few tests, where a research stream's next real improvement is likely.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

PROCEDURES = ("saffron", "lord++")


@dataclass(frozen=True)
class Rule:
    """An online rule: ``procedure`` (``saffron`` or ``lord++``), the target FDR ``alpha``, SAFFRON's candidacy
    threshold ``lam`` (ignored by LORD++), the initial wealth as a share ``w0`` of its maximum, and the decay
    exponent ``decay`` of ``γ_j ∝ j^{-decay}``."""

    alpha: float = 0.05
    procedure: str = "saffron"
    lam: float = 0.1
    w0: float = 0.9
    decay: float = 1.6

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.procedure not in PROCEDURES:
            raise ValueError(f"procedure must be one of {', '.join(PROCEDURES)}, got {self.procedure!r}")
        if not 0 < self.lam < 1:
            raise ValueError(f"lam must be in (0, 1), got {self.lam}")
        if not 0 < self.w0 <= 1:
            raise ValueError(f"w0 must be in (0, 1], got {self.w0}")
        if not self.decay > 1:
            raise ValueError(f"decay must exceed 1 (the γ sequence must sum to at most 1), got {self.decay}")

    @property
    def initial_wealth(self) -> float:
        """``W0``: ``w0`` times the largest the rule allows (α for LORD++, (1 - λ) α for SAFFRON)."""
        return self.w0 * self.alpha * (1.0 if self.procedure == "lord++" else 1.0 - self.lam)

    @property
    def candidacy_level(self) -> float:
        """The p-value threshold below which a test costs nothing (λ for SAFFRON; LORD++ charges every test: 1)."""
        return self.lam if self.procedure == "saffron" else 1.0


def gamma(j: np.ndarray | int, decay: float) -> np.ndarray:
    """``γ_j = j^{-decay} / ζ(decay)`` for j >= 1 (0 for j < 1).

    >>> round(float(gamma(1, 1.6)), 4), round(float(gamma(np.arange(1, 100001), 1.6).sum()), 3)
    (0.4375, 0.999)
    """
    j = np.asarray(j, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(j >= 1, np.maximum(j, 1.0) ** -decay / special.zeta(decay, 1), 0.0)


def _history(candidate: Sequence[bool], rejected: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    c, r = np.asarray(candidate, dtype=bool), np.asarray(rejected, dtype=bool)
    if c.shape != r.shape or c.ndim != 1:
        raise ValueError("one candidacy and one rejection flag per earlier test")
    if (r & ~c).any():
        raise ValueError("a rejected test is always a candidate (its p-value is below its level <= λ)")
    return c, r


def level(rule: Rule, candidate: Sequence[bool], rejected: Sequence[bool]) -> float:
    """The level of the next test, given each earlier test's candidacy and rejection (in order).

    >>> rule = Rule(alpha=0.05, procedure="saffron", lam=0.25, w0=0.5, decay=1.6)
    >>> round(level(rule, [], []), 5)  # W0 γ_1 = 0.01875 * 0.4375
    0.0082
    >>> round(level(rule, [True], [True]), 5)  # after a keep: W0 γ_1 + ((1-λ)α - W0) γ_1
    0.01641
    """
    c, r = _history(candidate, rejected)
    t = c.size + 1
    taus = np.flatnonzero(r) + 1  # 1-based rejection times
    w0, a = rule.initial_wealth, rule.alpha
    if rule.procedure == "lord++":
        rewards = np.full(taus.size, a)
        if taus.size:
            rewards[0] = a - w0
        return float(w0 * gamma(t, rule.decay) + (rewards * gamma(t - taus, rule.decay)).sum())
    lam = rule.lam
    after = np.concatenate([[0], np.cumsum(c)])  # after[i]: candidates among the first i tests
    index0 = t - after[t - 1]
    indices = t - taus - (after[t - 1] - after[taus])
    rewards = np.full(taus.size, (1.0 - lam) * a)
    if taus.size:
        rewards[0] = (1.0 - lam) * a - w0
    out = w0 * gamma(index0, rule.decay) + (rewards * gamma(indices, rule.decay)).sum()
    return float(min(lam, out))


def charged(rule: Rule, levels: Sequence[float], candidate: Sequence[bool]) -> float:
    """The error charged so far: ``Σ α_t`` (LORD++) or ``Σ α_t (1 - C_t) / (1 - λ)`` (SAFFRON) over the tests.

    It is the numerator of the rule's estimate of the false-discovery proportion, never above
    :func:`budget` (the rules' invariant, checked in ``tests/stats/gate``).
    """
    lv, c = np.asarray(levels, dtype=float), np.asarray(candidate, dtype=bool)
    if rule.procedure == "lord++":
        return float(lv.sum())
    return float((lv * ~c).sum() / (1.0 - rule.lam))


def budget(rule: Rule, rejections: int) -> float:
    """What :func:`charged` may reach with ``rejections`` so far: ``W0`` (over (1 - λ) for SAFFRON) before the
    first, α per rejection after."""
    scale = 1.0 if rule.procedure == "lord++" else 1.0 - rule.lam
    return rule.alpha * rejections if rejections else rule.initial_wealth / scale
