"""Fast simulated coverage of the 95% percentile stratified-bootstrap intervals (IQM and mean).

A reduced version of ``benchmarks/coverage/coverage_methods.py`` (see ``tests/support/simulation.py`` for the models and for how the true values
are computed exactly): 500 (equal runs) and 300 (ragged runs) simulated data sets from a skewed,
heavy-tailed RL-like population (``pareto-mix``: per task, a fraction w_m of "failed" runs near 0
and a Pareto(alpha_m in [2.2, 4]) tail, 10 tasks), each analysed with the library's stratified bootstrap at 1,000 replicates, exactly
as ``evaluate()`` computes aggregate intervals (``bootstrap.replicates`` + ``intervals.interval``
with ``metrics.iqm`` / ``metrics.mean``). The interval targets the population values with the task
set fixed: the 25%-trimmed mean of the equal-weight task mixture (IQM) and the mean of the task
means (mean).

Population: exactly the ``pareto-mix``, M = 10 rows of the thorough study (task parameters and
ragged run counts from seed 2021 + 10; ragged now means 5-15 runs per task), whose 1,000-trial results (2,000 reps) were
IQM 0.933 ± 0.008 / mean 0.929 ± 0.008 with 10 runs per task, and IQM 0.918 ± 0.009 /
mean 0.887 ± 0.010 with 5-10 runs per task (benchmarks/README.md).

Tolerances, from the binomial SE sqrt(p(1-p)/T) of the test's own trial count T:

* equal runs, T = 500: SE = 0.011 at p = 0.93, and we require coverage in [0.90, 0.985]
  (the issue's lower bound minus about 3 SE, and 5 SE above): a correct implementation fails the
  lower bound with probability about 0.5% per change of random stream;
* ragged runs (5-10), T = 300: SE = 0.018 at p = 0.89. Tasks with 5 runs make the percentile
  bootstrap under-cover (the bootstrap variance of a mean is (n-1)/n of the true one, 0.8 at n = 5),
  so we require [0.85, 0.985] (2 SE below the thorough estimate for the mean). That is a *documented
  under-coverage*, not the 93-97% target.

What these bounds catch: a 90% level, a bootstrap centred on the wrong value, a weighting that lets
5-run tasks count less or more than 1/M, or a wrong truth all move coverage well below 0.85-0.90;
a non-stratified (task-pooled) resample inflates the interval with between-task variance and pushes
coverage to about 1. The percentile bootstrap is known to under-cover slightly at 10 runs per task;
the thorough study's lognormal model (sigma up to 1.5) under-covers the *mean* much more (about
0.80-0.88, truth above the interval), which is reported in the README and not asserted here.

The random seeds are fixed, so the test is deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import simulation

REPS, TASKS, SEED = 1_000, 10, 2031  # SEED = the thorough study's 2021 + M
TRIALS = {"equal": 500, "ragged": 300}
LOWER = {"equal": 0.90, "ragged": 0.85}


study = simulation


def test_true_values_are_exact():
    """The exact truths agree with a large Monte-Carlo sample of the same population."""
    tasks = study.make_tasks("pareto-mix", TASKS, seed=SEED)
    mc_iqm, mc_mean = study.monte_carlo_truth(tasks, 2_000_000, seed=0)
    # MC standard errors are below 1e-3 for both at 200k draws per task
    assert study.true_trimmed_mean(tasks) == pytest.approx(mc_iqm, abs=3e-3)
    assert study.true_mean(tasks) == pytest.approx(mc_mean, abs=5e-3)
    # and the population IQM of a single symmetric task is its centre
    sym = [study.Task((1.0,), (study.LogNormal(0.0, 1e-9),))]
    assert study.true_trimmed_mean(sym) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("design", ["equal", "ragged"])
def test_percentile_interval_coverage_of_true_iqm_and_mean(design):
    tasks = study.make_tasks("pareto-mix", TASKS, seed=SEED)
    sizes = study.run_sizes(design, TASKS, seed=SEED)
    assert (
        (sizes == 10).all() if design == "equal" else (sizes.min() >= 5 and sizes.max() <= 15 and len(set(sizes)) > 1)
    )
    cov = study.simulate(tasks, sizes, TRIALS[design], REPS, seed=5)
    rate, se = cov.rate(), cov.se()
    for j, name in enumerate(("iqm", "mean")):
        assert LOWER[design] <= rate[j] <= 0.985, f"{design} {name}: coverage {rate[j]:.3f} ± {se[j]:.3f}"
    assert np.all(cov.width["percentile"] > 0)


def test_small_sample_methods_cover_where_the_percentile_interval_falls_short():
    """5 runs on 10 normal tasks: percentile under-covers (the (n-1)/n shrinkage); expanded (IQM) and
    bootstrap-t (mean) reach nominal. 400 trials: SE ~ 0.011, bounds 3 SE below 0.95 / above 0.90."""
    from tests.support.simulation import make_tasks, run_sizes, simulate

    tasks = make_tasks("normal", 10, 2031)
    cov = simulate(
        tasks, run_sizes("equal", 10, 2031, 5), 400, 1000, seed=3, methods=("percentile", "expanded", "bootstrap-t")
    )
    assert cov.rate("percentile")[1] < 0.93
    assert cov.rate("expanded")[0] >= 0.915
    assert cov.rate("bootstrap-t")[1] >= 0.915
