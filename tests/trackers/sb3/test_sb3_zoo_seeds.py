"""rl-baselines3-zoo's seeds (issue 54): in ``logs/ppo/CartPole-v1_1`` the ``_1`` is rl-zoo's run counter; the seed
is the ``seed:`` of ``CartPole-v1_1/CartPole-v1/args.yml``, which rl-zoo's ExperimentManager writes with
``yaml.dump`` of an ``OrderedDict`` of the training command's arguments. Read from there (safe YAML only) when
present, else from the folder as before, and the console says which."""

from __future__ import annotations

import argparse
from collections import OrderedDict
from pathlib import Path

import pytest

from rl_reliable_logger import InputError
from rl_reliable_logger.trackers.sb3 import sb3_table
from tests.support.rl_logs import write_evaluations

yaml = pytest.importorskip("yaml")


def _zoo_run(root: Path, algorithm: str, counter: int, seed: int | None, score: float) -> Path:
    """A run folder as rl-zoo's ExperimentManager leaves it: evaluations.npz and <env>/args.yml."""
    folder = root / algorithm / f"CartPole-v1_{counter}"
    write_evaluations(folder, [1000, 2000], [[score - 1], [score]])
    args = argparse.Namespace(algo=algorithm, env="CartPole-v1", n_timesteps=-1, eval_freq=1000, tensorboard_log="")
    if seed is not None:
        args.seed = seed
    (folder / "CartPole-v1").mkdir()
    ordered = OrderedDict([(key, vars(args)[key]) for key in sorted(vars(args).keys())])  # rl-zoo's own code
    (folder / "CartPole-v1" / "args.yml").write_text(yaml.dump(ordered))
    return folder / "CartPole-v1" / "args.yml"


def test_the_seed_is_args_yml_s_and_the_suffix_a_run_counter(tmp_path):
    for algorithm in ("ppo", "a2c"):
        for counter, seed in ((1, 2718), (2, 31415), (3, 42)):
            _zoo_run(tmp_path, algorithm, counter, seed, 10.0 * counter)
    table = sb3_table(tmp_path)
    assert sorted(table.frame[table.frame["algorithm"] == "ppo"]["seed"]) == [42, 2718, 31415]
    assert any("`seed` of rl-zoo's args.yml" in w and "run counter" in w for w in table.warnings), table.warnings


def test_without_args_yml_the_folder_rule_stays_and_is_said(tmp_path):
    for algorithm in ("ppo", "a2c"):
        _zoo_run(tmp_path, algorithm, 1, 7, 1.0)
        write_evaluations(tmp_path / algorithm / "CartPole-v1_2", [1000, 2000], [[1.0], [2.0]])
    table = sb3_table(tmp_path)
    assert sorted(table.frame[table.frame["algorithm"] == "a2c"]["seed"]) == [2, 7]
    assert any("is the folder's path as the layout reads it" in w and "no args.yml" in w for w in table.warnings)


def test_one_seed_under_two_counters_is_a_rerun(tmp_path):
    for algorithm in ("ppo", "a2c"):
        _zoo_run(tmp_path, algorithm, 1, 5, 1.0)
        _zoo_run(tmp_path, algorithm, 2, 5, 2.0)
    with pytest.raises(InputError, match="duplicate seed 5 for"):
        sb3_table(tmp_path)


@pytest.mark.parametrize(
    "text, says",
    [
        ("!!python/object/apply:os.system ['touch {marker}']\n", "safe YAML only"),
        ("seed: !!python/object/new:builtins.int [3]\n", "safe YAML only"),
        ("seed: 1.5\n", "its seed is 1.5, not a whole number"),
        ("- a\n- b\n", "a mapping of the training command's arguments"),
        ("seed: [unclosed\n", "safe YAML only"),
    ],
    ids=["code", "object", "fraction", "list", "broken"],
)
def test_an_args_yml_no_rl_zoo_writes_is_named_and_never_run(tmp_path, text, says):
    marker = tmp_path / "EXECUTED"
    for algorithm in ("ppo", "a2c"):
        args = _zoo_run(tmp_path / "logs", algorithm, 1, 3, 1.0)
    args.write_text(text.format(marker=marker))
    with pytest.raises(InputError, match=says) as err:
        sb3_table(tmp_path / "logs")
    assert "args.yml" in str(err.value) and not marker.exists()
