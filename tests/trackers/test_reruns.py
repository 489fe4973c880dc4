"""One seed trained more than once (issue 54): ``--drop-invalid`` kept the older run and dropped the rerun without a
word. The intake now refuses by default (``--drop-invalid`` never picks), and ``--reruns latest|first`` keeps the
run that started last or first by each run's start time, saying which was kept and which left out."""

from __future__ import annotations

import pytest

from rl_reliable_logger import InputError
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.trackers.base.records import RunRecord, records_to_table
from tests.support.rl_logs import write_evaluations, write_monitor

FIELDS = {"algorithm": "config.a", "task": "config.t", "seed": "config.s", "score": "summary.v"}
FAST = ["--reps", "100", "--profile-reps", "20", "--improvement-reps", "20", "--seed", "0", "--no-figures"]


def _run(run_id: str, seed: int, value: float, started: float | None, algorithm: str = "A") -> RunRecord:
    return RunRecord(
        run_id, None, "finished", config={"a": algorithm, "t": "x", "s": seed}, summary={"v": value}, started=started
    )


def _runs() -> list[RunRecord]:
    """Seeds 0-2 of A and B (started at 100), and seed 0 of A again (started at 200)."""
    return [*(_run(f"{a}{s}", s, 1.0 + s, 100.0, a) for a in "AB" for s in range(3)), _run("A0-again", 0, 9.0, 200.0)]


def test_a_seed_in_two_runs_is_refused_by_default_even_when_dropping():
    runs = _runs()
    for extra in ({}, {"on_invalid": "drop"}):
        with pytest.raises(InputError, match=r"duplicate seed 0 for A / x: runs A0, A0-again") as err:
            records_to_table(runs, **FIELDS, **extra)
        assert "`reruns='latest'` to keep the run that started last" in str(err.value)
        assert "by default, `reruns='refuse'`" in str(err.value)


@pytest.mark.parametrize("rule, kept, left", [("latest", "A0-again", "A0"), ("first", "A0", "A0-again")])
def test_latest_and_first_keep_one_run_by_start_time_and_say_which(rule, kept, left):
    table = records_to_table(_runs(), **FIELDS, reruns=rule)
    assert kept in set(table.frame["run_id"]) and left not in set(table.frame["run_id"])
    assert list(table.dropped["run_id"]) == [left]
    assert table.dropped["reason"].iloc[0] == f"rerun of seed 0 (`reruns='{rule}'` kept run {kept})"
    said = [w for w in table.warnings if w.startswith("kept the run that started")]
    assert said == [
        f"kept the run that started {'last' if rule == 'latest' else 'first'} of each of 1 seed trained more than "
        f"once (`reruns='{rule}'`): A / x seed 0: kept {kept}, left out {left}"
    ]


@pytest.mark.parametrize(
    "times, says", [((None, 200.0), "1 of them records no start time"), ((50.0, 50.0), "the same")]
)
def test_which_started_last_cannot_be_told_is_refused(times, says):
    runs = _runs()
    runs[0].started, runs[-1].started = times
    with pytest.raises(InputError, match=f"which run started last cannot be told: .*{says}"):
        records_to_table(runs, **FIELDS, reruns="latest")


def test_an_unknown_choice_is_named():
    with pytest.raises(InputError, match=r"`reruns=` is one of 'refuse', 'latest', 'first', got 'newest'"):
        records_to_table(_runs(), **FIELDS, reruns="newest")


def _sb3_rerun(root) -> None:
    """SB3 trained again into one folder: PPO_2 beside PPO_1 for seed 0 (monitor t_start a day later)."""
    for algorithm in ("PPO", "A2C"):
        for seed in range(3):
            folder = root / algorithm / "CartPole-v1" / f"seed_{seed}" / f"{algorithm}_1"
            write_evaluations(folder, [1000, 2000], [[1.0 + seed], [2.0 + seed]])
            write_monitor(folder, [1.0] * 3, t_start=1_700_000_000.0)
    again = root / "PPO" / "CartPole-v1" / "seed_0" / "PPO_2"
    write_evaluations(again, [1000, 2000], [[5.0], [9.0]])
    write_monitor(again, [1.0] * 3, t_start=1_700_086_400.0)


def _cli(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    out = capsys.readouterr()
    return code, out.err + out.out


def test_the_command_refuses_then_keeps_the_latest_sb3_rerun(tmp_path, capsys):
    _sb3_rerun(tmp_path)
    base = ["sb3", str(tmp_path), "--layout", "{algorithm}/{task}/seed_{seed}/*", *FAST]
    for extra in ([], ["--drop-invalid"]):
        code, err = _cli([*base, *extra], capsys)
        assert code == 2 and "duplicate seed 0 for PPO / CartPole-v1" in err and "--reruns latest" in err, err
    code, err = _cli([*base, "--reruns", "latest", "--out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    assert "kept PPO/CartPole-v1/seed_0/PPO_2, left out PPO/CartPole-v1/seed_0/PPO_1" in err
    assert "(--reruns latest)" in err and "(--drop-invalid)" not in err
    scores = (tmp_path / "out" / "scores.csv").read_text()
    assert "PPO_2" in scores and "PPO_1,0" not in scores


def test_the_latest_of_tensorboard_reruns_is_the_one_whose_events_are_later(tmp_path, capsys):
    tensorboardX = pytest.importorskip("tensorboardX")
    pytest.importorskip("tensorboard")
    for algorithm in ("PPO", "A2C"):
        for seed in range(3):
            for run, value in ((1, 1.0 + seed), *(((2, 9.0),) if (algorithm, seed) == ("PPO", 0) else ())):
                writer = tensorboardX.SummaryWriter(
                    str(tmp_path / algorithm / "CartPole-v1" / f"seed_{seed}" / f"{algorithm}_{run}")
                )
                writer.add_scalar("eval/mean_reward", value, 1000, walltime=1_700_000_000.0 + 86_400 * run)
                writer.close()
    argv = [
        "tensorboard",
        str(tmp_path),
        "--layout",
        "{algorithm}/{task}/seed_{seed}/*",
        "--score-key",
        "eval/mean_reward",
    ]
    code, err = _cli([*argv, "--reruns", "latest", *FAST], capsys)
    assert code == 0 and "kept PPO/CartPole-v1/seed_0/PPO_2, left out PPO/CartPole-v1/seed_0/PPO_1" in err, err
    code, err = _cli([*argv, "--reruns", "first", *FAST], capsys)
    assert code == 0 and "kept PPO/CartPole-v1/seed_0/PPO_1, left out PPO/CartPole-v1/seed_0/PPO_2" in err, err


@pytest.mark.parametrize("command", ["", "plan "])
def test_every_source_command_has_the_one_declared_flag(command, capsys):
    from rl_reliable_logger.trackers import registry

    for name in registry.names():
        with pytest.raises(SystemExit):
            main([*command.split(), name, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--reruns {refuse,latest,first}" in text and "keep the run that started last" in text, name
