"""The ``{seed}`` placeholder in the shared run records (every Source groups through ``records_to_table``)."""

from __future__ import annotations

import pytest

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers.base.records import RunRecord, records_to_table
from rl_reliable_logger.trackers.base.scoring import expand_keys, key_wanted, seed_pattern

FIELDS = {"algorithm": "config.algo", "task": "config.env"}


def _run(run_id: str, algo: str = "PPO", **metrics: float) -> RunRecord:
    return RunRecord(run_id, None, "finished", config={"algo": algo, "env": "Pong"}, metrics=dict(metrics))


def test_the_placeholder_matches_a_whole_number_as_written_in_any_segment():
    pattern = seed_pattern("a/{seed}/b")
    assert pattern is not None
    assert pattern.fullmatch("a/17/b").group("seed") == "17" and pattern.fullmatch("a/007/b").group("seed") == "007"
    assert pattern.fullmatch("a/x1/b") is None and pattern.fullmatch("a/\u0667/b") is None  # Arabic-Indic 7
    assert pattern.fullmatch("a//b") is None and pattern.fullmatch("a/1/2/b") is None
    seeded = seed_pattern("eval/return_seed{seed}")
    assert seeded is not None and seeded.fullmatch("eval/return_seed3")
    assert seeded.fullmatch("eval/return_seed_mean") is None and seeded.fullmatch("eval/return_seed0_std") is None
    assert seed_pattern("s{seed}/r{seed}").fullmatch("s1/r1") and not seed_pattern("s{seed}/r{seed}").fullmatch("s1/r2")
    assert seed_pattern("plain") is None
    assert key_wanted("ret_3", {"ret_{seed}"}) and not key_wanted("loss", {"ret_{seed}"})
    assert expand_keys(["ret_{seed}"], ["ret_10", "ret_2", "x"]) == ["ret_10", "ret_2"]


def test_seeds_in_numeric_order_and_a_duplicate_names_run_and_seed():
    runs = [_run("r1", **{"ret_10": 1.0, "ret_2": 2.0}), _run("r2", **{"ret_2": 3.0})]
    runs[0].started, runs[1].started = 100.0, 200.0
    with pytest.raises(InputError, match=r"duplicate seed 2 for PPO / Pong: runs r1 seed 2, r2 seed 2"):
        records_to_table(runs, **FIELDS, score="metrics.ret_{seed}")
    with pytest.raises(InputError, match=r"duplicate seed 2 for PPO / Pong"):  # dropping never picks a rerun
        records_to_table(runs, **FIELDS, score="metrics.ret_{seed}", on_invalid="drop")
    table = records_to_table(runs, **FIELDS, score="metrics.ret_{seed}", reruns="first")
    assert list(table.frame.run_id) == ["r1:seed=2", "r1:seed=10"]
    assert list(table.dropped.run_id) == ["r2:seed=2"]


def test_a_fallback_list_has_the_placeholder_in_every_key_or_none():
    with pytest.raises(InputError, match=r"every key of the fallback list has the \{seed\} placeholder or none"):
        records_to_table([_run("r", ret_0=1.0)], **FIELDS, score="metrics.ret_{seed},metrics.ret")
    table = records_to_table([_run("r", a_0=1.0, b_1=2.0)], **FIELDS, score="metrics.a_{seed},metrics.b_{seed}")
    assert dict(zip(table.frame.seed, table.frame.score)) == {"0": 1.0, "1": 2.0}


def test_the_curve_key_and_the_score_key_agree_on_the_placeholder():
    with pytest.raises(InputError, match=r"`curve_key=` 'ret' and `score=` must both have the \{seed\}"):
        records_to_table([_run("r", ret_0=1.0)], **FIELDS, score="metrics.ret_{seed}", curve_key="metrics.ret")
