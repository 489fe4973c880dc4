"""``rl-reliable gate``: a research loop on its exit statuses (3 run more, 0 keep, 4 discard), the seeds it asks for
running on both sides, ``--json`` for agents, one file holding both sides, and errors as one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support.cli import run_cli

TASKS = ("walker", "hopper")


def _runs(name: str, effect: float, seeds: list[int]) -> pd.DataFrame:
    rows = []
    for s in seeds:
        shared = np.random.default_rng([0, s]).normal(0, 1, len(TASKS))
        own = np.random.default_rng([1, s, sum(map(ord, name))]).normal(0, 0.5, len(TASKS))
        rows += [
            {"algorithm": name, "task": t, "seed": s, "score": 10 + effect + a + b}
            for t, a, b in zip(TASKS, shared, own)
        ]
    return pd.DataFrame(rows)


def _gate(capsys, tmp_path: Path, name: str, effect: float, incumbent: tuple[str, float], seeds: list[int], *extra):
    cand, inc = tmp_path / f"{name}.csv", tmp_path / "incumbent.csv"
    _runs(name, effect, seeds).to_csv(cand, index=False)
    _runs(*incumbent, seeds).to_csv(inc, index=False)
    state = tmp_path / "state"
    return run_cli(
        capsys, "gate", cand, "--incumbent", inc, "--state", state, "--name", name, "--min-effect", "0.5", *extra
    )


def test_a_loop_on_the_exit_status_keeps_a_real_change_and_discards_a_useless_one(tmp_path: Path, capsys) -> None:
    seeds, codes = [0, 1, 2], []
    while True:  # a real change: run the seeds the gate asks for until the verdict is final
        code, out, err = _gate(capsys, tmp_path, "lr-3e-4", 3.0, ("base", 0.0), seeds)
        codes.append(code)
        if code != 3:
            break
        line = next(x for x in out.splitlines() if x.startswith("next seeds"))
        more = [int(s) for s in line.split(": ")[1].split(", ")]
        runs = pd.read_csv(tmp_path / "state" / "runs.csv")  # the launch file: both sides on those seeds
        assert sorted(set(runs["seed"])) == more and set(runs["algorithm"]) == {"lr-3e-4", "base"}
        seeds += more
    assert codes[-1] == 0 and set(codes[:-1]) == {3}, (codes, err)
    assert out.startswith("keep: lr-3e-4 against base") and "interval [" in out and "level " in out
    # the next change is compared with the kept one, on the fresh seeds the keep named
    fresh = [int(s) for s in next(x for x in out.splitlines() if x.startswith("next seeds")).split(": ")[1].split(", ")]
    code, out, err = _gate(capsys, tmp_path, "wd", -3.0, ("lr-3e-4", 3.0), fresh)
    assert code == 4 and out.startswith("discard: wd against lr-3e-4"), err
    assert "discard at the screen: not on course to beat the incumbent" in out


def test_json_is_one_object_for_agents(tmp_path: Path, capsys) -> None:
    code, out, err = _gate(capsys, tmp_path, "a", 3.0, ("base", 0.0), [0, 1, 2], "--json")
    assert code == 3, err
    verdict = json.loads(out)
    assert verdict["verdict"] == "run_more" and verdict["exit_status"] == 3 and verdict["next_seeds"] == [3, 4, 5]
    assert verdict["interval"] == [None, None] and verdict["level"] > 0 and verdict["name"] == "a"
    assert any(path.endswith("runs.csv") for path in verdict["launch_files"])


def test_one_file_holds_both_sides(tmp_path: Path, capsys) -> None:
    both = tmp_path / "runs.csv"
    pd.concat([_runs("a", 3.0, [0, 1, 2]), _runs("base", 0.0, [0, 1, 2])]).to_csv(both, index=False)
    code, out, err = run_cli(capsys, "gate", both, "--incumbent", "base", "--state", tmp_path / "s", "--name", "a",
                             "--min-effect", "0.5")  # fmt: skip
    assert code == 3 and out.startswith("run_more: a against base"), err
    code, out, err = run_cli(capsys, "gate", both, "--incumbent", "nobody", "--state", tmp_path / "s", "--name", "a",
                             "--min-effect", "0.5")  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "--incumbent 'nobody' is no algorithm of the file" in err


def test_errors_are_one_line_in_flag_words_with_exit_2(tmp_path: Path, capsys) -> None:
    code, _, _ = _gate(capsys, tmp_path, "a", 3.0, ("base", 0.0), [0, 1, 2])
    assert code == 3
    code, out, err = _gate(capsys, tmp_path, "a", 3.0, ("base", 0.0), [0, 1, 2, 3], "--alpha", "0.1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--alpha was 0.05 at the stream's first candidate, now 0.1" in err
    code, out, err = _gate(capsys, tmp_path, "b", 1.0, ("base", 0.0), [2, 6, 7])
    assert code == 2 and "seed '2' was a seed of candidate 'a' of this stream" in err


def test_help_teaches_the_loop() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "rl_reliable_logger", "gate", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for words in ("Exit status: 0 keep, 4 discard, 3 run more", "a research loop", "case $? in", "--min-effect E"):
        assert words in out.stdout


def test_the_candidates_own_file_as_incumbent_is_refused(tmp_path, capsys):
    """The same file on both sides would compare the candidate with itself: one sentence, exit 2, no state."""
    from tests.support.cli import run_cli

    runs = tmp_path / "cand.csv"
    runs.write_text("algorithm,task,seed,score\n" + "".join(f"B,t1,{s},{1 + s / 10}\n" for s in range(3)))
    same = tmp_path / "." / "cand.csv"
    code, _, err = run_cli(
        capsys, "gate", runs, "--incumbent", same, "--state", tmp_path / "g", "--name", "x", "--min-effect", 0.1
    )
    assert code == 2 and err.count("\n") == 1, err
    assert "is the candidate's own file: the gate would compare the candidate with itself" in err
    assert not (tmp_path / "g").exists()
