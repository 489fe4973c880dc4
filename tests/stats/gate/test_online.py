"""The online rules: SAFFRON and LORD++ levels as the papers write them, and their invariant (the error charged
never exceeds the budget the keeps earned), over random histories."""

from __future__ import annotations

import numpy as np
import pytest

from rl_reliable_logger.stats.gate import online


def _saffron_by_the_paper(rule: online.Rule, candidate: list[bool], rejected: list[bool]) -> float:
    """Ramdas et al. 2018, Algorithm 1, term by term: C_{j+} counts the candidates after the j-th rejection."""
    t = len(candidate) + 1
    taus = [i + 1 for i, r in enumerate(rejected) if r]
    lam, alpha, w0 = rule.lam, rule.alpha, rule.initial_wealth
    c0 = sum(candidate)
    value = w0 * float(online.gamma(t - c0, rule.decay))
    for j, tau in enumerate(taus):
        after = sum(candidate[tau:])  # tests tau+1 .. t-1
        reward = (1 - lam) * alpha - w0 if j == 0 else (1 - lam) * alpha
        value += reward * float(online.gamma(t - tau - after, rule.decay))
    return min(lam, value)


def _lord_by_the_paper(rule: online.Rule, rejected: list[bool]) -> float:
    """Ramdas et al. 2017, LORD++: γ_t W0 + (α - W0) γ_{t-τ_1} + α Σ_{j>=2} γ_{t-τ_j}."""
    t = len(rejected) + 1
    taus = [i + 1 for i, r in enumerate(rejected) if r]
    value = rule.initial_wealth * float(online.gamma(t, rule.decay))
    for j, tau in enumerate(taus):
        value += (rule.alpha - rule.initial_wealth if j == 0 else rule.alpha) * float(online.gamma(t - tau, rule.decay))
    return value


def _histories(seed: int, tests: int = 80) -> list[tuple[list[bool], list[bool]]]:
    rng = np.random.default_rng(seed)
    out = []
    for share in (0.1, 0.4, 0.8):
        cand = list(rng.random(tests) < share)
        rej = [bool(c and rng.random() < 0.6) for c in cand]
        out.append((cand, rej))
    return out


@pytest.mark.parametrize("rule", [online.Rule(), online.Rule(lam=0.5, w0=0.9, decay=2.0)])
def test_saffron_levels_are_the_papers(rule: online.Rule) -> None:
    for cand, rej in _histories(1):
        for t in range(len(cand)):
            assert online.level(rule, cand[:t], rej[:t]) == pytest.approx(
                _saffron_by_the_paper(rule, cand[:t], rej[:t])
            )


def test_lord_plus_plus_levels_are_the_papers() -> None:
    rule = online.Rule(procedure="lord++", w0=0.5)
    for cand, rej in _histories(2):
        for t in range(len(cand)):
            assert online.level(rule, cand[:t], rej[:t]) == pytest.approx(_lord_by_the_paper(rule, rej[:t]))


@pytest.mark.parametrize("procedure", online.PROCEDURES)
def test_the_charged_error_never_exceeds_the_budget(procedure: str) -> None:
    """The estimate of the false-discovery proportion stays at most α whatever the outcomes (the rules' invariant)."""
    rule = online.Rule(procedure=procedure, w0=0.9)
    for cand, rej in _histories(3, tests=300):
        levels: list[float] = []
        for t in range(len(cand)):
            levels.append(online.level(rule, cand[:t], rej[:t]))
            charged = online.charged(rule, levels, cand[: t + 1])
            assert charged <= online.budget(rule, sum(rej[: t + 1])) + 1e-12


def test_a_keep_earns_level_back_and_candidates_cost_nothing() -> None:
    rule = online.Rule()
    first = online.level(rule, [], [])
    assert first == pytest.approx(rule.initial_wealth * float(online.gamma(1, rule.decay)))
    assert online.level(rule, [True], [True]) > first  # a keep earns
    assert online.level(rule, [True], [False]) == pytest.approx(first)  # a candidate is free
    assert online.level(rule, [False], [False]) < first  # a non-candidate is charged
    assert online.charged(rule, [0.01, 0.02], [True, False]) == pytest.approx(0.02 / (1 - rule.lam))
    assert float(online.gamma(np.arange(1, 200_001), 1.6).sum()) == pytest.approx(1.0, abs=2e-3)


def test_bad_rules_and_histories_are_refused() -> None:
    with pytest.raises(ValueError, match="procedure"):
        online.Rule(procedure="bh")
    with pytest.raises(ValueError, match="decay"):
        online.Rule(decay=1.0)
    with pytest.raises(ValueError, match="lam"):
        online.Rule(lam=1.0)
    with pytest.raises(ValueError, match="always a candidate"):
        online.level(online.Rule(), [False], [True])


def test_saffron_reproduces_the_onlinefdr_packages_example() -> None:
    """The example of the R package onlineFDR's SAFFRON (Robertson et al.; α = 0.05, λ = 0.5, W0 = α/2 in its
    units, γ_j ∝ j^-1.6, p-values in order): the same levels and rejections. Its W0 multiplies (1 - λ), ours does
    not: its α/2 is our ``w0 = 0.5``."""
    p = [2.90e-08, 0.06743, 0.01514, 0.08174, 0.00171, 3.60e-05, 0.79149, 0.27201, 0.28295, 7.59e-08]
    published = [0.005468627, 0.010937254, 0.010937254, 0.010937254, 0.010937254, 0.021874508, 0.032811762,
                 0.010823845, 0.010823845, 0.010823845]  # fmt: skip
    rule = online.Rule(alpha=0.05, lam=0.5, w0=0.5, decay=1.6)
    cand: list[bool] = []
    rej: list[bool] = []
    for value, expected in zip(p, published):
        level = online.level(rule, cand, rej)
        assert level == pytest.approx(expected, abs=2e-9)
        cand.append(value <= rule.lam)
        rej.append(value <= level)
    assert [i for i, r in enumerate(rej) if r] == [0, 4, 5, 9]
