"""The paired statistics of a look: the t statistic against the margin, its normal-scale z, and the edge cases
(one seed, no spread, all ties)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rl_reliable_logger.stats.gate.paired import paired_look, t_to_z, z_to_t


def test_the_t_statistic_is_scipys_one_sample_test_against_the_margin() -> None:
    d = np.array([0.9, 1.4, 0.7, 1.2, -0.3, 2.2])
    look = paired_look(d, 0.25)
    reference = stats.ttest_1samp(d, 0.25, alternative="greater")
    assert look.t == pytest.approx(reference.statistic)
    assert float(stats.norm.sf(look.z)) == pytest.approx(reference.pvalue)  # the same tail on the normal scale
    assert (look.seeds, look.mean, look.sd) == (6, pytest.approx(d.mean()), pytest.approx(d.std(ddof=1)))


@pytest.mark.parametrize("df", [2, 5, 9])
def test_t_and_z_maps_invert_each_other(df: int) -> None:
    for t in (-4.0, -0.5, 0.0, 1.3, 7.5, 40.0):
        # rel 1e-7: scipy 1.10 (the floor) inverts the t tail beyond z = 5 to about 2e-9 relative, newer to 1e-12
        assert z_to_t(t_to_z(t, df), df) == pytest.approx(t, rel=1e-7, abs=1e-12)
    assert t_to_z(math.inf, df) == math.inf and z_to_t(-math.inf, df) == -math.inf


def test_one_seed_has_no_statistic() -> None:
    look = paired_look(np.array([0.4]), 0.0)
    assert look.seeds == 1 and math.isnan(look.z) and look.mean == 0.4


def test_differences_without_spread_are_infinitely_far_from_the_margin_or_on_it() -> None:
    assert paired_look(np.full(5, 0.5), 0.2).z == math.inf
    assert paired_look(np.full(5, 0.1), 0.2).z == -math.inf
    ties = paired_look(np.zeros(4), 0.0)  # every seed a tie, margin 0: no evidence either way
    assert ties.z == 0.0 and ties.se == 0.0


def test_bad_differences_are_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        paired_look(np.array([]), 0.0)
    with pytest.raises(ValueError, match="finite"):
        paired_look(np.array([1.0, math.nan]), 0.0)
