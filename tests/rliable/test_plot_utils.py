"""Every drop-in ``plot_utils`` function draws what rliable's draws and returns what rliable's returns."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.axes import Axes

from rl_reliable_logger.rliable import library as rly
from rl_reliable_logger.rliable import metrics, plot_utils

RNG = np.random.default_rng(0)
SCORES = {"A": RNG.gamma(2.0, 0.5, size=(5, 8)), "B": RNG.gamma(2.0, 0.7, size=(5, 8))}


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_plot_interval_estimates_returns_figure_and_axes() -> None:
    func = lambda x: np.array([metrics.aggregate_median(x), metrics.aggregate_iqm(x)])
    points, cis = rly.get_interval_estimates(SCORES, func, reps=200, random_state=0)
    fig, axes = plot_utils.plot_interval_estimates(points, cis, metric_names=["Median", "IQM"], algorithms=["A", "B"])
    assert len(axes) == 2 and axes[0].get_title() == "Median"
    bars = [p for p in axes[1].patches]
    assert len(bars) == 2
    np.testing.assert_allclose(bars[0].get_x(), cis["A"][0, 1])
    np.testing.assert_allclose(bars[0].get_width(), cis["A"][1, 1] - cis["A"][0, 1])
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["A", "B"]
    _, single = plot_utils.plot_interval_estimates(points, cis, metric_names=["Median"])
    assert isinstance(single, Axes) or len(np.atleast_1d(single)) == 2


@pytest.mark.parametrize("non_linear", [False, True])
def test_plot_performance_profiles(non_linear) -> None:
    taus = np.linspace(0.0, 3.0, 31)
    profiles, cis = rly.create_performance_profile(SCORES, taus, reps=100)
    fig, ax = plt.subplots()
    out = plot_utils.plot_performance_profiles(
        profiles,
        taus,
        performance_profile_cis=cis,
        use_non_linear_scaling=non_linear,
        xticks=[0.0, 0.5, 1.0, 2.0] if non_linear else None,
        ax=ax,
    )
    assert out is ax and len(ax.get_lines()) == 2
    x = ax.get_lines()[0].get_xdata()
    if non_linear:  # x is the share of runs below each tau (1 - mean profile), ticks labelled with the taus
        np.testing.assert_allclose(x, 1 - (profiles["A"] + profiles["B"]) / 2)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0.0", "0.5", "1.0", "2.0"]
    else:
        np.testing.assert_allclose(x, taus)
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), profiles["B"])
    assert plot_utils.plot_performance_profiles(profiles, taus) is not None  # makes its own axes


def test_plot_sample_efficiency_curve() -> None:
    curves = {k: np.stack([v * (f + 1) / 4 for f in range(4)], axis=-1) for k, v in SCORES.items()}
    iqm = lambda s: np.array([metrics.aggregate_iqm(s[..., f]) for f in range(s.shape[-1])])
    points, cis = rly.get_interval_estimates(curves, iqm, reps=100, random_state=0)
    ax = plot_utils.plot_sample_efficiency_curve(np.arange(1, 5), points, cis, algorithms=["A", "B"])
    assert isinstance(ax, Axes)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), points["A"])
    assert ax.get_xlabel() == "Number of Frames (in millions)"


def test_plot_probability_of_improvement() -> None:
    pairs = {"A,B": (SCORES["A"], SCORES["B"]), "B,A": (SCORES["B"], SCORES["A"])}
    probs, cis = rly.get_interval_estimates(pairs, metrics.probability_of_improvement, reps=100, random_state=0)
    ax = plot_utils.plot_probability_of_improvement(probs, cis)
    assert isinstance(ax, Axes)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A", "B"]
    np.testing.assert_allclose(ax.patches[0].get_x(), cis["A,B"][0, 0])
    twin = [a for a in ax.figure.axes if a is not ax][0]
    assert [t.get_text() for t in twin.get_yticklabels()] == ["B", "A"]
