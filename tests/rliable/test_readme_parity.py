"""rliable's README usage on the Atari 100k data (``tests/support/rliable_readme.py``, shared with the benchmark), run unchanged with the drop-in,
against rliable 1.2's own results stored in ``oracle_readme.json`` (made by ``python
benchmarks/rliable/bench_rliable_dropin.py --reps 2000 --write-oracle tests/rliable/oracle_readme.json`` with rliable 1.2 in
its venv): point estimates identical, interval endpoints within Monte-Carlo error of two independent bootstraps."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.paths import REPO, SHARED_DATA

ORACLE = REPO / "tests" / "rliable" / "oracle_readme.json"


def _readme_module():
    from tests.support import rliable_readme

    return rliable_readme


@pytest.fixture(scope="module")
def results():
    if not (SHARED_DATA / "dopamine_atari_baselines").is_dir():
        pytest.skip(f"the shared data folder ({SHARED_DATA}) is needed: set RL_RELIABLE_SHARED_DATA")
    from rl_reliable_logger.rliable import library as rly
    from rl_reliable_logger.rliable import metrics

    readme = _readme_module()
    oracle = json.loads(ORACLE.read_text())
    finals, curves = readme.load_inputs()
    np.random.seed(oracle["seed"])
    ours = readme.to_json(readme.readme_usage(rly, metrics, finals, curves, oracle["reps"]))
    return readme, oracle, ours, finals


#: The numpy major version the stored rliable 1.2 results were computed with (numpy 2.4 in rliable's venv).
ORACLE_NUMPY_MAJOR = 2


@pytest.mark.parametrize("snippet", ["aggregates", "poi", "curve", "profile"])
def test_points_identical_to_rliable(results, snippet) -> None:
    """Bit for bit on the numpy the oracle ran on; at the dependency floors (numpy 1.26) a reduction may differ in
    the last bit, so there the points agree to 4 units in the last place."""
    _, oracle, ours, _ = results
    if int(np.__version__.split(".")[0]) == ORACLE_NUMPY_MAJOR:
        assert ours[snippet]["points"] == oracle[snippet]["points"]
        return
    for key, theirs in oracle[snippet]["points"].items():
        np.testing.assert_array_max_ulp(np.asarray(ours[snippet]["points"][key]), np.asarray(theirs), maxulp=4)


@pytest.mark.parametrize("snippet", ["aggregates", "poi", "curve", "profile"])
def test_endpoints_within_monte_carlo_error_of_rliable(results, snippet) -> None:
    readme, oracle, ours, finals = results
    reps, step = oracle["reps"][snippet], readme.lattice_step(snippet, finals)
    for key, theirs in oracle[snippet]["intervals"].items():
        theirs, mine = np.asarray(theirs), np.asarray(ours[snippet]["intervals"][key])
        assert mine.shape == theirs.shape
        gap = np.abs(mine - theirs) / readme.mc_tolerance(theirs, reps, step)
        assert gap.max() <= 1.0, f"{snippet} {key}: endpoint gap {gap.max():.2f} x the Monte-Carlo tolerance"
