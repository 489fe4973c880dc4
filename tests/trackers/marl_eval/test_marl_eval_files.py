"""Reading marl-eval JSON: the nesting JsonLogger writes, and one sentence for every bad file."""

from __future__ import annotations

import json
import os

import pytest

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers.marl_eval.files import read_marl_eval
from tests.support.rl_logs import marl_eval_json, write_marl_eval

RUN = {
    "env": "Matrax",
    "task": "Climbing-stateless-v0",
    "algorithm": "ff_ippo",
    "seed": "seed_0",
    "steps": [(1000, [1.0, 2.0]), (2000, [3.0, 5.0])],
    "absolute": [6.0, 8.0, 7.0],
}


def test_runs_steps_and_absolute_metrics(tmp_path):
    other = {**RUN, "seed": "seed_1", "algorithm": "rec_mappo"}
    path = write_marl_eval(tmp_path / "metrics.json", marl_eval_json([RUN, other]))
    runs = read_marl_eval(path)
    assert [(r.algorithm, r.seed) for r in runs] == [("ff_ippo", "seed_0"), ("rec_mappo", "seed_1")]
    assert runs[0].steps == [
        (1000.0, {"mean_episode_return": [1.0, 2.0]}),
        (2000.0, {"mean_episode_return": [3.0, 5.0]}),
    ]
    assert runs[0].absolute == {"mean_episode_return": [6.0, 8.0, 7.0]}


def test_steps_are_ordered_by_their_number_not_their_text(tmp_path):
    data = {"e": {"t": {"a": {"0": {f"STEP_{k}": {"step_count": 10 * k, "win_rate": [k / 20]} for k in (10, 2, 1)}}}}}
    runs = read_marl_eval(write_marl_eval(tmp_path / "m.json", data))
    assert [count for count, _ in runs[0].steps] == [10.0, 20.0, 100.0]
    assert runs[0].absolute == {}


@pytest.mark.parametrize(
    "data, words",
    [
        ([], "top level must be a non-empty object of environment names"),
        ({"e": {"t": {}}}, "task e / t must be a non-empty object of algorithm names"),
        ({"e": {"t": {"a": {"s": {"step_0": {"return": [1]}}}}}}, "run e / t / a / s, step_0 has no step_count"),
        ({"e": {"t": {"a": {"s": {"absolute_metrics": {"return": [1, "x"]}}}}}}, "holds 'x', not a finite number"),
        ({"e": {"t": {"a": {"s": {"absolute_metrics": {"return": []}}}}}}, "return is an empty list"),
        ({"e": {"t": {"a": {"s": {"absolute_metrics": {"return": [True]}}}}}}, "holds True"),
        ({"e": {"t": {"a": {"s": [1, 2]}}}}, "run e / t / a / s is not an object"),
    ],
)
def test_bad_structure_is_one_sentence_naming_file_and_run(tmp_path, data, words):
    path = write_marl_eval(tmp_path / "m.json", data)
    with pytest.raises(InputError, match=words) as err:
        read_marl_eval(path)
    assert str(err.value).startswith(str(path))


def test_nan_and_broken_json_are_named(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"e": {"t": {"a": {"s": {"absolute_metrics": {"return": [NaN]}}}}}}')
    with pytest.raises(InputError, match="not a finite number"):
        read_marl_eval(path)
    path.write_text('{"e": {"t": ')
    with pytest.raises(InputError, match="invalid JSON at line 1 column"):
        read_marl_eval(path)
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        read_marl_eval(path)


def test_a_fifo_is_refused(tmp_path):
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        read_marl_eval(fifo)


def test_names_stay_text(tmp_path):
    data = marl_eval_json([{**RUN, "task": "=1+1", "seed": "007"}])
    runs = read_marl_eval(write_marl_eval(tmp_path / "m.json", data))
    assert (runs[0].task, runs[0].seed) == ("=1+1", "007")
    assert json.loads((tmp_path / "m.json").read_text())  # the file is untouched


@pytest.mark.parametrize(
    "text, says",
    [
        (
            '{"e": {"t": {"a": {"s": {"absolute_metrics": {"return": [1.0], "return": [2.0]}}}}}}',
            "key 'return' appears twice",
        ),
        ('{"e": {"t": {"a": {"s": {"absolute_metrics": {"return": [1.0]}}, "s": {}}}}}', "key 's' appears twice"),
        (
            '{"e": {"t": {"a": {"s": {"absolute_metrics": {"return": [' + "1" * 400 + "]}}}}}}",
            r"\(400 digits\) is too large",
        ),
        ('{"e": {"t": {"a": {"s": {"absolute_metrics": {"return": [' + "1" * 4301 + "]}}}}}}", r"\(4,301 digits\)"),
    ],
    ids=["metric-twice", "seed-twice", "400-digits", "4301-digits"],
)
def test_json_no_logger_writes_is_one_sentence_naming_the_file(tmp_path, text, says):
    """A seed written twice silently dropped a run; a 400-digit integer was an OverflowError."""
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(InputError, match=says) as err:
        read_marl_eval(path)
    assert str(err.value).startswith(str(path))
