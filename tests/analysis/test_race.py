"""One look of a race on a score table (``analysis/race.py``): configurations, launch lists, replay and refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import InputError, ScoreTable
from rl_reliable_logger.analysis import race as ra
from rl_reliable_logger.analysis.race_options import RaceOptions

LRS = (0.0001, 0.001, 0.01)
SHIFT = {0.0001: -0.6, 0.001: 0.0, 0.01: -3.0}  # 0.01 diverges: clearly worse
TASKS = ("cartpole", "pendulum", "reacher")


def _pool(seed: int = 0) -> dict[tuple[str, float, str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        (a, lr, t): 1.0 + 0.5 * m + SHIFT[lr] + (0.3 if a == "sac" else 0.0) + 0.7 * rng.standard_normal(10)
        for a in ("ppo", "sac")
        for lr in LRS
        for m, t in enumerate(TASKS)
    }


def _table(pool, counts=None, default=2) -> ScoreTable:
    rows = [
        {"algorithm": a, "lr": lr, "task": t, "seed": s, "score": float(v[s])}
        for (a, lr, t), v in pool.items()
        for s in range((counts or {}).get((a, lr, t), default))
    ]
    return ScoreTable(pd.DataFrame(rows), hyperparameter_keys=["lr"])


DESIGN = {"looks": 4, "max_runs": 8, "delta": 0.3}


def _design(table, keys=("lr",), metric="iqm", **options):
    opts = {**DESIGN, **{k: options.pop(k) for k in list(options) if k in DESIGN}}
    return ra.make_design(table, RaceOptions(**opts, metric=metric), list(keys), **options)


def test_the_first_look_eliminates_the_diverged_rate_and_lists_runs_with_the_hyperparameters() -> None:
    table = _table(_pool())
    design = _design(table, reps=500)
    assert design.configs == tuple((a, (lr,)) for a in ("ppo", "sac") for lr in LRS)
    assert design.labels()[0] == "ppo [lr=0.0001]"
    result = ra.take_look(table, design, [], reps=500)
    assert not result.stop and result.best is None and result.look == 1
    out = result.eliminated.set_index(["algorithm", "lr"])
    for a in ("ppo", "sac"):
        assert (a, 0.01) in out.index and out.loc[(a, 0.01), "high"] < 0  # worse than the one it was compared with
        assert out.loc[(a, 0.01), "reason"] == f"worse than {out.loc[(a, 0.01), 'against']}"
    launch = result.launch
    assert list(launch.columns) == ["algorithm", "lr", "task", "add_runs"]
    assert 0.01 not in set(launch["lr"]) and set(launch["add_runs"]) == {2}  # to the next planned 4 runs
    assert set(launch["task"]) == set(TASKS)


def test_the_race_runs_to_a_selection_within_delta_and_says_how_sure_it_is() -> None:
    pool = _pool(1)
    counts: dict = {}
    design, history, result = None, [], None
    for _ in range(4):
        table = _table(pool, counts)
        design = design or _design(table, reps=500)
        result = ra.take_look(table, design, history, reps=500)
        history.append(result.record)
        if result.stop:
            break
        for r in result.launch.itertuples(index=False):
            key = (r.algorithm, r.lr, r.task)
            counts[key] = counts.get(key, 2) + int(r.add_runs)
    assert result is not None and result.stop
    assert result.best == {"ppo": {"algorithm": "ppo", "lr": 0.001}, "sac": {"algorithm": "sac", "lr": 0.001}}
    sel = result.selected.set_index("algorithm")
    for a in ("ppo", "sac"):
        row = sel.loc[a]
        assert row["low"] <= row["point"] <= row["high"]
        assert row["margin_low"] == -row["regret"] <= 0 <= row["margin_high"]
        assert row["reason"] in ("within delta", "one left") and row["regret"] < 0.3
    assert result.launch.empty


def test_the_same_scores_replay_the_look_and_a_look_may_only_add_runs() -> None:
    pool = _pool(2)
    table = _table(pool, default=3)
    design = _design(table, reps=300)
    first = ra.take_look(table, design, [], reps=300)
    again = ra.take_look(_table(pool, default=3), design, [first.record], reps=300)
    assert again.replayed and again.record == first.record
    with pytest.raises(InputError, match="fewer than the 3 of look 1"):
        ra.take_look(_table(pool, default=2), design, [first.record], reps=300)


def test_refusals_name_the_keyword() -> None:
    table = _table(_pool())
    with pytest.raises(InputError, match="`delta=` must be 0 or a positive number"):
        _design(table, delta=-0.1)
    with pytest.raises(InputError, match="'momentum' not in the scores"):
        _design(table, keys=["momentum"])
    with pytest.raises(InputError, match="`metrics=` does not apply to a race; use metric="):
        _design(table, metrics=["iqm"])
    one = _table({k: v for k, v in _pool().items() if k[1] == 0.001})
    with pytest.raises(InputError, match="algorithm 'ppo' has 1 configuration"):
        _design(one)
    design = _design(table, reps=200)
    more = dict(_pool())
    more.update({("ppo", 0.1, t): np.ones(10) for t in TASKS})
    with pytest.raises(InputError, match="a configuration the race was not designed with"):
        ra.take_look(_table(more), design, [], reps=200)


def test_a_metric_where_lower_is_better_selects_the_smallest() -> None:
    pool = {k: np.clip(v / 4.0, 0.0, 1.5) for k, v in _pool(3).items()}  # scores near [0, 1]: a gap below γ = 1
    table = _table(pool, default=4)
    design = _design(table, delta=0.1, metric="optimality_gap", reps=300)
    result = ra.take_look(table, design, [], reps=300)
    gone = result.eliminated.set_index(["algorithm", "lr"])
    assert ("ppo", 0.01) in gone.index and gone.loc[("ppo", 0.01), "low"] > 0  # its gap is larger


def test_the_rows_order_changes_nothing() -> None:
    """Issue 43's table order: algorithms by sorted name (a race refuses ``only_algorithms=``), configurations by
    their values, so the rows reversed (sac and the largest rate first) give the same design, tables and record."""
    table = _table(_pool())
    rows = table.frame.iloc[::-1]  # reversed: sac's rows, with the largest rate, come first
    assert (rows["algorithm"].iat[0], rows["lr"].iat[0]) == ("sac", LRS[-1])
    shuffled = ScoreTable(rows[["algorithm", "lr", "task", "seed", "score"]], hyperparameter_keys=["lr"])
    design, again = _design(table, reps=300), _design(shuffled, reps=300)
    assert again == design and design.algorithms == ["ppo", "sac"]
    first, second = ra.take_look(table, design, [], reps=300), ra.take_look(shuffled, again, [], reps=300)
    for name in ("selected", "alive", "eliminated", "launch"):
        assert getattr(second, name).equals(getattr(first, name)), name
    assert second.record == first.record


def test_the_race_of_a_trimmed_mean_takes_its_spreads_from_the_winsorized_runs() -> None:
    """Issue 55: the intervals' degrees of freedom come from the tasks' spreads; for a trimmed-mean metric those of
    its winsorized runs (the share it trims, read from the registry), for any other metric the runs' own."""
    table = _table(_pool())
    assert _design(table, reps=200).statistics("ppo").trim == 0.25
    assert _design(table, metric="trimmed_mean_0.1", reps=200).statistics("ppo").trim == pytest.approx(0.1)
    assert _design(table, metric="mean", reps=200).statistics("ppo").trim == 0.0
    assert _design(table, reps=200).to_json()["procedure"] == 2
