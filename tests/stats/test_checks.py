"""Warnings for meaningless aggregates and floating-point tidying of points and fractions."""

import numpy as np

from rl_reliable_logger.stats import checks


def test_raw_scale_warning_names_the_tasks():
    rng = np.random.default_rng(0)
    per_task = {
        "pong": rng.normal(15, 3, 10),
        "breakout": rng.normal(300, 50, 10),
        "seaquest": rng.normal(9000, 900, 10),
    }
    msg = checks.raw_scale_warning(per_task)
    assert msg is not None and "'seaquest'" in msg and "'pong'" in msg and "normalise" in msg
    assert checks.raw_scale_warning({"a": rng.normal(1, 0.2, 10), "b": rng.normal(2, 0.3, 10)}) is None
    assert checks.task_scale_ratio([np.zeros(5), np.ones(5)]) == 1.0  # an all-zero task has no scale


def test_raw_scale_warning_tells_performance_from_scale():
    """Issue 52: scores already in [0, 1] on which one task is mostly failed differ 11-fold in their typical
    scores, but that is performance on one scale; tasks whose best runs differ as much differ in scale."""
    rng = np.random.default_rng(1)
    solved, failed = rng.uniform(0.6, 1.0, 10), np.r_[rng.uniform(0.0, 0.08, 9), 0.95]
    performance = checks.raw_scale_warning({"solved": solved, "failed": failed})
    assert performance is not None and "performance on one common scale" in performance
    assert "`normalize=already-normalized`" in performance and "best runs differ only" in performance
    scale = checks.raw_scale_warning({"pong": rng.normal(15, 3, 10), "seaquest": rng.normal(9000, 900, 10)})
    assert scale is not None and "the task scales differ" in scale and "performance" not in scale
    assert checks.task_reach_ratio([solved, failed]) < 1.1 < checks.task_scale_ratio([solved, failed])


def test_raw_scale_and_gap_warnings_name_keywords_the_cli_turns_into_flags():
    """Issue 13: `(normalize=...)` without backticks reached the command line as a Python keyword."""
    from rl_reliable_logger.cli.flags import as_flags

    per_task = {"pong": np.array([10.0, 20.0, 15.0]), "seaquest": np.array([9000.0, 8000.0, 9500.0])}
    raw = checks.raw_scale_warning(per_task)
    gap = checks.gap_warning(1.0, np.array([100.0, 200.0]), normalized=False)
    assert "`normalize=`" in raw and "`normalize=`" in gap and "`gamma=`" in gap
    for cli in (as_flags(raw), as_flags(gap, analysis=True)):
        assert "--normalize" in cli and "normalize=" not in cli and "`" not in cli
    assert "--gamma" in as_flags(gap)


def test_gap_warning_on_raw_scores_and_saturated_gamma():
    assert "not normalised" in checks.gap_warning(1.0, np.array([100.0, 200.0]), normalized=False)
    assert "about 0" in checks.gap_warning(1.0, np.full(20, 3.0), normalized=True)
    assert checks.gap_warning(1.0, np.linspace(0, 2, 20), normalized=True) is None


def test_clip_noise_only_moves_noise():
    low, high = np.array([-9.4e-16, 0.0, 0.2]), np.array([-7.2e-16, 1.0, 0.3])
    point = np.array([6e-16, 1.0 + 1e-15, 0.5])
    out = checks.clip_noise(point, low, high)
    assert out[0] == high[0] and out[1] == 1.0 and out[2] == 0.5  # 0.5 is far outside: not noise, kept
    np.testing.assert_array_equal(
        checks.clip_fraction(np.array([0.9999999999999974, 1 + 1e-14, -1e-15, 1.2, -0.1])),
        [0.9999999999999974, 1.0, 0.0, 1.2, -0.1],
    )


def test_raw_scale_warning_fires_on_tasks_scored_on_opposite_sides_of_zero():
    """Issue 57: CartPole's 0..500 and Acrobot's -500..0 are alike in magnitude (no fold difference), but one task
    counts rewards and the other penalties; scores in [0, 1] never fire it, however far apart the tasks are."""
    cartpole, acrobot = np.array([338.0, 15.7, 67.7, 365.0, 9.7, 9.0]), np.array([-145.0, -500, -500, -500, -500, -265])
    assert checks.task_scale_ratio([cartpole, acrobot]) < checks.SCALE_RATIO_WARN  # the fold rule alone is silent
    msg = checks.raw_scale_warning({"CartPole-v1": cartpole, "Acrobot-v1": acrobot})
    assert msg is not None and "'Acrobot-v1' scores at or below 0" in msg and "'CartPole-v1'" in msg
    assert "the task scales differ" in msg and "`normalize=` a CSV of task,low,high" in msg
    assert checks.opposite_signs({"a": np.array([0.0, 0.02]), "b": np.array([0.9, 1.0])}) is None
    assert checks.opposite_signs({"a": np.array([-1.0, 2.0]), "b": np.array([3.0, 4.0])}) is None  # a task on both
    assert checks.raw_scale_warning({"a": np.array([-10.0, -12]), "b": np.array([-11.0, -9])}) is None
