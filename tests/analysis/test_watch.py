"""The watch: decisions, launch lists, and a state folder that cannot be replayed, rewound or redesigned."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rl_reliable_logger as rl
from rl_reliable_logger.errors import InputError

SHIFTS = {"A": 0.0, "B": 8.0, "C": 0.05}


def scores(runs: dict[str, int], seed: int = 0, tasks: int = 4) -> pd.DataFrame:
    """``runs[alg]`` runs per task; run k of a cell is the same number whatever the count (runs accumulate)."""
    rows = []
    for a, n in runs.items():
        for t in range(tasks):
            values = np.random.default_rng([seed, ord(a), t]).normal(t + SHIFTS[a], 1.0, size=20)[:n]
            rows += [(a, f"task{t}", k, float(v)) for k, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def table(frame: pd.DataFrame) -> rl.ScoreTable:
    return rl.ScoreTable(frame)


DESIGN = {"looks": 3, "max_runs": 9, "reps": 300, "seed": 0}


def test_a_decided_comparison_stops_and_records_its_look(tmp_path: Path) -> None:
    result = rl.watch(table(scores({"A": 3, "B": 3})), state=tmp_path / "s", **DESIGN)
    assert result.stop and result.look == 1
    row = result.decisions.iloc[0]
    assert list(result.decisions.columns) == ["algorithm_x", "algorithm_y", "metric", "decision", "low", "high", "look"]
    assert (row.algorithm_x, row.algorithm_y, row.metric, row.decision, row.look) == ("A", "B", "iqm", "y>x", 1)
    assert row.low < row.high < 0
    assert result.launch.empty and list(result.launch.columns) == ["algorithm", "task", "add_runs"]
    looks = json.loads((tmp_path / "s" / "looks.json").read_text())
    assert len(looks) == 1 and looks[0]["hash"] == result.record["hash"]


def test_launch_lists_only_the_cells_an_open_comparison_needs(tmp_path: Path) -> None:
    result = rl.watch(table(scores({"A": 3, "B": 3, "C": 3})), state=tmp_path / "s", **DESIGN)
    decided = result.decisions.set_index(["algorithm_x", "algorithm_y"])["decision"]
    assert decided[("A", "B")] == "y>x" and decided[("B", "C")] == "x>y" and decided[("A", "C")] == "undecided"
    assert not result.stop
    assert set(result.launch["algorithm"]) == {"A", "C"} and len(result.launch) == 8
    assert (result.launch["add_runs"] == 3).all()  # ⌈2·9/3⌉ = 6 runs at look 2
    second = rl.watch(table(scores({"A": 6, "B": 3, "C": 6})), state=tmp_path / "s", **DESIGN)
    assert second.look == 2
    kept = second.decisions.set_index(["algorithm_x", "algorithm_y"])
    assert kept.loc[("A", "B"), "look"] == 1 and kept.loc[("A", "B"), "low"] == result.decisions.iloc[0]["low"]
    assert kept.loc[("A", "C"), "look"] == 2


def test_the_same_data_replays_the_recorded_look_whatever_the_row_order(tmp_path: Path) -> None:
    frame = scores({"A": 3, "C": 3})
    first = rl.watch(table(frame), state=tmp_path / "s", **DESIGN)
    written = (tmp_path / "s" / "looks.json").read_bytes()
    again = rl.watch(table(frame.sample(frac=1.0, random_state=3)), state=tmp_path / "s", **DESIGN)
    assert again.replayed and again.look == first.look == 1
    pd.testing.assert_frame_equal(again.decisions, first.decisions)
    pd.testing.assert_frame_equal(again.launch, first.launch)
    assert (tmp_path / "s" / "looks.json").read_bytes() == written


def test_results_do_not_depend_on_row_order_and_follow_the_seed(tmp_path: Path) -> None:
    frame = scores({"A": 3, "C": 3})
    one = rl.watch(table(frame), state=tmp_path / "a", **DESIGN)
    shuffled = rl.watch(table(frame.sample(frac=1.0, random_state=7)), state=tmp_path / "b", **DESIGN)
    pd.testing.assert_frame_equal(one.decisions, shuffled.decisions)
    other = rl.watch(table(frame), state=tmp_path / "c", **{**DESIGN, "seed": 1})
    assert other.decisions.iloc[0]["low"] != one.decisions.iloc[0]["low"]


def test_the_kth_look_spends_what_is_left_and_ends_the_watch(tmp_path: Path) -> None:
    state = tmp_path / "s"
    for look, n in enumerate((3, 6, 9), start=1):  # A and C are close: without futility they run to the end
        result = rl.watch(table(scores({"A": n, "C": n})), state=state, futility=0, **DESIGN)
        assert result.look == look
    assert result.stop and result.launch.empty
    times = json.loads((state / "looks.json").read_text())[-1]["pairs"][0]["times"]
    assert times == [3 / 9, 6 / 9, 1.0]
    with pytest.raises(InputError, match="all 3 looks"):
        rl.watch(table(scores({"A": 9, "C": 9}, seed=5)), state=state, futility=0, **DESIGN)


def test_refusals_are_one_sentence(tmp_path: Path) -> None:
    state = tmp_path / "s"
    rl.watch(table(scores({"A": 4, "C": 4})), state=state, **DESIGN)
    cases = [
        (scores({"A": 3, "C": 4}), DESIGN, "fewer than the 4 of look 1"),
        (scores({"A": 5, "C": 5}, seed=9), DESIGN, "no longer holds every run score of look 1"),
        (scores({"A": 5, "C": 5}), {**DESIGN, "alpha": 0.1}, "`alpha=` was 0.05"),
        (scores({"A": 5, "C": 5}), {**DESIGN, "reps": 400}, "`reps=` was 300"),
        (scores({"A": 5, "C": 5}, tasks=3), DESIGN, "the tasks of the scores were"),
        (scores({"A": 10, "C": 10}), DESIGN, "more than the design's `max_runs=9`"),
        (scores({"A": 5, "C": 5}), {**DESIGN, "method": "bca"}, "`method=` does not apply"),
        (scores({"A": 5, "C": 5}), {**DESIGN, "seed": None}, "reproducible `seed=`"),
    ]
    for frame, kwargs, message in cases:
        with pytest.raises(InputError, match=message) as err:
            rl.watch(table(frame), state=state, **kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="at least 2 runs"):
        rl.watch(table(scores({"A": 1, "C": 3})), state=tmp_path / "fresh", **DESIGN)


def test_a_state_folder_changed_by_hand_or_holding_other_files_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "s"
    rl.watch(table(scores({"A": 3, "C": 3})), state=state, **DESIGN)
    looks = state / "looks.json"
    looks.write_text(looks.read_text().replace('"look": 1', '"look": 0'))
    with pytest.raises(InputError, match="does not match the manifest"):
        rl.watch(table(scores({"A": 6, "C": 6})), state=state, **DESIGN)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not a watch state"):
        rl.watch(table(scores({"A": 3, "C": 3})), state=other, **DESIGN)
    assert (other / "notes.txt").read_text() == "mine"


def test_any_registered_metric_and_lower_is_better_flips_the_decision(tmp_path: Path) -> None:
    frame = scores({"A": 3, "B": 3})
    frame["score"] = frame["score"] / 20.0  # the optimality gap's threshold is 1
    gap = rl.watch(table(frame), state=tmp_path / "g", metric="optimality_gap", **DESIGN)
    mean = rl.watch(table(frame), state=tmp_path / "m", metric="mean", **DESIGN)
    assert gap.decisions.iloc[0]["decision"] == "y>x" and gap.decisions.iloc[0]["low"] > 0  # B's gap is smaller
    assert mean.decisions.iloc[0]["decision"] == "y>x" and mean.decisions.iloc[0]["high"] < 0
    with pytest.raises(InputError, match="unknown metric"):
        rl.watch(table(frame), state=tmp_path / "x", metric="no_such_metric", **DESIGN)


def test_a_stopped_watch_is_final_and_more_data_spends_no_look(tmp_path: Path) -> None:
    first = rl.watch(table(scores({"A": 3, "B": 3})), state=tmp_path / "s", **DESIGN)
    assert first.stop and first.look == 1
    later = rl.watch(table(scores({"A": 6, "B": 6})), state=tmp_path / "s", **DESIGN)
    assert later.stop and later.replayed and later.look == 1
    pd.testing.assert_frame_equal(later.decisions, first.decisions)
    assert len(json.loads((tmp_path / "s" / "looks.json").read_text())) == 1


def test_a_futile_pair_leaves_the_launch_list_and_the_watch_stops(tmp_path: Path) -> None:
    design = {**DESIGN, "looks": 4, "max_runs": 12}
    for name, futility in (("on", 0.1), ("off", 0.0)):
        first = rl.watch(table(scores({"A": 3, "B": 3, "C": 3})), state=tmp_path / name, futility=futility, **design)
        assert set(first.launch["algorithm"]) == {"A", "C"}  # A - C is open after look 1 (too early for futility)
        second = rl.watch(table(scores({"A": 6, "B": 3, "C": 6})), state=tmp_path / name, futility=futility, **design)
        row = second.decisions.set_index(["algorithm_x", "algorithm_y"]).loc[("A", "C")]
        record = next(p for p in second.record["pairs"] if p["algorithm_y"] == "C" and p["algorithm_x"] == "A")
        assert record["level"] == 0.05  # both other pairs were decided: A - C is tested at all of alpha
        if futility:
            assert (row.decision, row.look) == ("futile", 2) and record["conditional_power"] < futility
            assert second.stop and second.launch.empty
        else:
            assert row.decision == "undecided" and record["conditional_power"] is None
            assert not second.stop and set(second.launch["algorithm"]) == {"A", "C"}
    with pytest.raises(InputError, match="`futility=` was 0.1 at the first look, now 0.0"):
        rl.watch(table(scores({"A": 6, "B": 3, "C": 6})), state=tmp_path / "on", futility=0.0, **design)
    with pytest.raises(InputError, match="`futility=` must be a conditional power"):
        rl.watch(table(scores({"A": 3, "C": 3})), state=tmp_path / "bad", futility=1.5, **design)


def test_a_state_from_before_the_step_down_replays_and_goes_on_with_bonferroni(tmp_path: Path) -> None:
    """``watch_state_v0`` was written by the watch before Holm and futility (alpha / m for every pair)."""
    state = tmp_path / "s"
    shutil.copytree(Path(__file__).parent / "watch_state_v0", state)
    recorded = pd.read_csv(state / "decisions.csv")
    again = rl.watch(table(scores({"A": 3, "B": 3, "C": 3})), state=state, **DESIGN)
    assert again.replayed and again.look == 1 and again.design.multiplicity == "bonferroni"
    pd.testing.assert_frame_equal(again.decisions, recorded)
    second = rl.watch(table(scores({"A": 6, "B": 3, "C": 6})), state=state, **DESIGN)
    row = second.decisions.iloc[1]
    # the numbers the earlier version gave for this look: A - C at alpha / 3 although two pairs were decided
    assert (row.decision, row.look) == ("undecided", 2)
    # the old code's numbers (its own run, numpy 2); other numpy versions may sum in another order: last bits only
    old = pytest.approx((-1.181474233802341, 1.2705855952749914), rel=1e-12)
    assert (row.low, row.high) == old
    bound = second.record["pairs"][1]["bound"]
    assert bound == pytest.approx(2.933314319471784, rel=1e-12) and "level" not in second.record["pairs"][1]
    written = json.loads((state / "design.json").read_text())  # now says so explicitly
    assert (written["multiplicity"], written["futility"]) == ("bonferroni", 0.0)


def test_the_design_options_are_declared_like_every_option():
    """Issue 42: the watch's design options have one declaration each (check, flag, help), as the analysis and
    plan options, and the command line reads its design flags from them."""
    import argparse

    from rl_reliable_logger.analysis.declared import OptionError, declared
    from rl_reliable_logger.analysis.watch_options import WatchDesign
    from rl_reliable_logger.cli.options import add_declared_option, given_options

    parser = argparse.ArgumentParser()
    for field, decl in declared(WatchDesign):
        assert decl.flag and decl.help
        add_declared_option(parser, field, decl)
    args = parser.parse_args(["--looks", "3", "--max-runs", "12", "--compare", "B,A", "--futility", "0"])
    design = WatchDesign(**given_options(args, WatchDesign))
    assert (design.looks, design.max_runs, design.compare, design.futility) == (3, 12, ("A", "B"), 0.0)
    with pytest.raises(SystemExit):  # a design needs its looks and maximum runs
        parser.parse_args(["--looks", "3"])
    with pytest.raises(OptionError, match="`looks=4` is more than `max_runs=3`"):
        WatchDesign(looks=4, max_runs=3)
    with pytest.raises(OptionError, match="`alpha=` must be between 0 and 0.5"):
        WatchDesign(looks=2, max_runs=4, alpha=0.7)
