"""``gate()``: a stream of candidates through its ledger: verdicts and the seeds to run next, a keep making the
candidate the incumbent, replay, abandonment, every refusal in one sentence, and a tampered ledger refused."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rl_reliable_logger import InputError, gate
from rl_reliable_logger.looks.gate import GATE
from rl_reliable_logger.looks.ledger import read_state
from rl_reliable_logger.stats.gate import online
from rl_reliable_logger.store.kinds import BundleError

TASKS = ("walker", "hopper")


def runs(
    name: str, effect: float, seeds: list[int] | range, *, seed: int = 0, tasks: tuple[str, ...] = TASKS
) -> pd.DataFrame:
    """``name``'s runs: each seed's score on each task is the seed's shared level, ``effect`` and its own noise
    (a fixed stream per (name, seed): the same seed gives the same run whenever it is asked for)."""
    rows = []
    for s in seeds:
        shared = np.random.default_rng([seed, int(s)]).normal(0, 1, len(tasks))
        own = np.random.default_rng([seed, int(s), sum(map(ord, name))]).normal(0, 0.5, len(tasks))
        rows += [
            {"algorithm": name, "task": t, "seed": s, "score": 10 + effect + a + b}
            for t, a, b in zip(tasks, shared, own)
        ]
    return pd.DataFrame(rows)


def until_final(state: Path, name: str, effect: float, incumbent: tuple[str, float], first: list[int], **design):
    """Gate one candidate until its verdict is final, running the seeds each look asks for; every result."""
    seeds, out = list(first), []
    while True:
        result = gate(runs(name, effect, seeds), runs(*incumbent, seeds), state=state, name=name, **design)
        out.append(result)
        if result.verdict != "run_more":
            return out
        seeds += list(result.next_seeds)


def test_a_clear_improvement_is_kept_and_becomes_the_incumbent(tmp_path: Path) -> None:
    state = tmp_path / "gate"
    looks = until_final(state, "lr-3e-4", 3.0, ("base", 0.0), [0, 1, 2], min_effect=0.5)
    kept = looks[-1]
    assert kept.verdict == "keep" and kept.seeds <= 10 and kept.interval[0] > 0.5
    assert [r.verdict for r in looks[:-1]] == ["run_more"] * (len(looks) - 1)
    assert kept.level == pytest.approx(online.level(online.Rule(), [], []))  # the stream's first test
    assert kept.next_seeds == (kept.seeds, kept.seeds + 1, kept.seeds + 2)  # fresh seeds for the next candidate
    # the next candidate is compared with the kept one on those seeds; the old incumbent is refused
    seeds = list(kept.next_seeds)
    with pytest.raises(InputError, match="'lr-3e-4' is the incumbent of this stream|recorded .* for its incumbent"):
        gate(runs("wd", 0.0, seeds), runs("base", 0.0, range(kept.seeds + 3)), state=state, name="wd", min_effect=0.5)
    nxt = gate(runs("wd", 0.0, seeds), runs("lr-3e-4", 3.0, seeds), state=state, name="wd", min_effect=0.5)
    assert nxt.incumbent == "lr-3e-4" and nxt.candidate == 2
    assert list(nxt.stream["name"]) == ["lr-3e-4", "wd"] and nxt.stream["verdict"].iat[0] == "keep"


def test_a_clear_loser_is_discarded_at_the_screen_spending_nothing(tmp_path: Path) -> None:
    result = gate(runs("bad", -3.0, [0, 1, 2]), runs("base", 0.0, [0, 1, 2]), state=tmp_path / "g", name="bad",
                  min_effect=0.5)  # fmt: skip
    assert result.verdict == "discard" and result.outcome == "screened" and result.level is None
    assert result.alpha_spent == 0 and result.next_seeds == (3, 4, 5)
    assert result.reason.startswith("discard at the screen: not on course to beat the incumbent by min_effect")
    assert re.search(r", z -?\d+\.\d\d < screen 0\.75\)$", result.reason), result.reason  # the threshold it missed


def test_the_same_scores_replay_the_verdict_and_the_ledger_is_the_audit_trail(tmp_path: Path) -> None:
    state = tmp_path / "gate"
    looks = until_final(state, "a", 3.0, ("base", 0.0), [0, 1, 2], min_effect=0.5)
    before = (state / "looks.json").read_bytes()
    again = gate(runs("a", 3.0, range(looks[-1].seeds)), runs("base", 0.0, range(looks[-1].seeds)), state=state,
                 name="a", min_effect=0.5)  # fmt: skip
    assert again.replayed and again.verdict == looks[-1].verdict and again.record == looks[-1].record
    assert (state / "looks.json").read_bytes() == before  # nothing written
    design, history = read_state(state, ledger=GATE)
    assert [h["look"] for h in history] == list(range(1, len(looks) + 1))
    assert {"name", "seeds", "scores", "incumbent_scores", "level", "charged", "budget", "outcome"} <= set(history[-1])
    assert design.min_effect == 0.5 and design.tasks == tuple(sorted(TASKS))


def test_a_final_verdict_is_final_and_a_new_name_abandons_an_open_candidate(tmp_path: Path) -> None:
    state = tmp_path / "gate"
    first = gate(runs("a", 0.6, [0, 1, 2]), runs("base", 0.0, [0, 1, 2]), state=state, name="a", min_effect=0.2)
    assert first.verdict == "run_more" and first.level is not None
    other = gate(
        runs("b", 0.0, [3, 4, 5]), runs("base", 0.0, [0, 1, 2, 3, 4, 5]), state=state, name="b", min_effect=0.2
    )
    abandoned = other.stream.set_index("name").loc["a"]
    assert abandoned["verdict"] == "discard" and abandoned["outcome"] == "abandoned"
    assert other.alpha_spent == pytest.approx(first.level / (1 - online.Rule().lam))  # a's level stays spent
    with pytest.raises(InputError, match="candidate 'a' was abandoned at stream look 2 .*final: submit a new change"):
        gate(runs("a", 0.6, [0, 1, 2, 6]), runs("base", 0.0, [0, 1, 2, 6]), state=state, name="a", min_effect=0.2)


def test_a_seed_on_one_side_only_is_named(tmp_path: Path) -> None:
    state = tmp_path / "g"
    with pytest.raises(InputError, match="seed '2' of candidate 'c' has no run of the incumbent 'base'"):
        gate(runs("c", 1.0, [0, 1, 2]), runs("base", 0.0, [0, 1]), state=state, name="c", min_effect=0.2)
    assert not state.exists()  # nothing recorded
    # the incumbent may have run more seeds (e.g. ten up front): only the ones the gate asked for must pair
    first = gate(runs("c", 0.6, [0, 1, 2]), runs("base", 0.0, range(10)), state=state, name="c", min_effect=0.2)
    assert first.verdict == "run_more" and first.next_seeds == (3, 4, 5)
    with pytest.raises(InputError, match="seed '5' of the incumbent 'base' has no run of candidate 'c'"):
        gate(runs("c", 0.6, [0, 1, 2, 3, 4]), runs("base", 0.0, range(10)), state=state, name="c", min_effect=0.2)


def test_refusals_each_in_one_sentence(tmp_path: Path) -> None:
    state = tmp_path / "gate"
    gate(runs("a", 0.6, [0, 1, 2]), runs("base", 0.0, [0, 1, 2]), state=state, name="a", min_effect=0.2)
    base = runs("base", 0.0, range(8))
    cases = [
        ({"min_effect": 0.3}, "a", runs("a", 0.6, [0, 1, 2, 3]), base, "`min_effect=` was 0.2 at the stream's first"),
        ({"alpha": 0.1}, "a", runs("a", 0.6, [0, 1, 2, 3]), base, "`alpha=` was 0.05"),
        ({"max_seeds": 12}, "a", runs("a", 0.6, [0, 1, 2, 3]), base, "`max_seeds=` was 10"),
        ({}, "b", runs("b", 0.0, [2, 6, 7]), base, "seed '2' was a seed of candidate 'a' of this stream"),
        ({}, "a", runs("a", 0.6, [0, 1, 3]), base, "seed '2' of look 1 of candidate 'a' is missing now"),
        ({}, "a", runs("a", 0.6, [0, 1, 2, 3], seed=7), base, "candidate's run on seed '0' scores differently from"),
        ({}, "a", runs("a", 0.6, [0, 1, 2]), runs("base", 0.0, [0, 1, 2], seed=3), "incumbent's run on seed '0'"),
        ({}, "base", runs("base", 0.6, [5, 6, 7]), base, "'base' is the incumbent of this stream"),
        ({}, "a", runs("a", 0.6, range(11)), runs("base", 0.0, range(11)), "more than the stream's `max_seeds=10`"),
        ({}, "a", runs("a", 0.6, [0, 1, 2, 3], tasks=("walker",)), base, "the stream was started on"),
        ({"reps": 100}, "a", runs("a", 0.6, [0, 1, 2, 3]), base, "`reps=` does not apply to a gate"),
    ]
    before = (state / "looks.json").read_bytes()
    for extra, name, cand, inc, message in cases:
        design = {"min_effect": 0.2, **extra}
        with pytest.raises(InputError, match=message) as caught:
            gate(cand, inc, state=state, name=name, **design)
        assert "\n" not in str(caught.value)
    assert (state / "looks.json").read_bytes() == before


def test_too_few_seeds_for_the_screen_take_no_look(tmp_path: Path) -> None:
    state = tmp_path / "gate"
    result = gate(runs("a", 1.0, [0, 1]), runs("base", 0.0, [0, 1]), state=state, name="a", min_effect=0.2)
    assert result.verdict == "run_more" and result.next_seeds == (2,) and result.outcome == "too_few"
    assert not state.exists() and "no look taken" in repr(result)


def test_a_metric_where_lower_is_better_turns_the_difference(tmp_path: Path) -> None:
    """With the optimality gap (lower is better) a candidate whose gap is far smaller is the improvement."""
    seeds = list(range(10))
    cand, inc = runs("a", 0.0, seeds), runs("base", 0.0, seeds)
    cand["score"] = 0.9 + (cand["score"] - 10) * 0.02  # normalised-looking scores: gap about 0.1 ...
    inc["score"] = 0.3 + (inc["score"] - 10) * 0.02  # ... against about 0.7
    result = gate(cand, inc, state=tmp_path / "g", name="a", min_effect=0.2, metric="optimality_gap")
    assert result.mean == pytest.approx(0.6, abs=0.05) and result.verdict == "keep"


def test_the_result_reads_in_twenty_lines_and_as_html(tmp_path: Path) -> None:
    result = gate(runs("a", 1.0, [0, 1, 2]), runs("base", 0.0, [0, 1, 2]), state=tmp_path / "g", name="a",
                  min_effect=0.2)  # fmt: skip
    text = repr(result)
    assert len(text.splitlines()) <= 20 and "run_more" in text and "next seeds:  3, 4, 5" in text
    html = result._repr_html_()
    assert html.startswith("<table>") and "&#x27;a&#x27;" in html or "'a'" in html


def test_a_tampered_ledger_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "gate"
    until_final(state, "a", 3.0, ("base", 0.0), [0, 1, 2], min_effect=0.5)
    looks_file = state / "looks.json"
    looks = json.loads(looks_file.read_text())
    looks[-1]["scores"][0] += 1.0
    looks_file.write_text(json.dumps(looks))
    with pytest.raises(BundleError, match="looks.json"):
        gate(runs("b", 0.0, [20, 21, 22]), runs("a", 3.0, [20, 21, 22]), state=state, name="b", min_effect=0.5)


def test_an_edited_level_is_refused_even_with_a_matching_manifest(tmp_path: Path) -> None:
    from rl_reliable_logger.looks.ledger import write_state

    state = tmp_path / "gate"
    until_final(state, "a", 3.0, ("base", 0.0), [0, 1, 2], min_effect=0.5)
    design, history = read_state(state, ledger=GATE)
    history[-1]["level"] = 0.2  # a level the stream never gave, written back through the writer itself
    write_state(state, design, history, ledger=GATE)
    with pytest.raises(InputError, match="level 0.2 is not the one the stream gives"):
        gate(runs("b", 0.0, [20, 21, 22]), runs("a", 3.0, [20, 21, 22]), state=state, name="b", min_effect=0.5)


def test_infinite_statistics_survive_the_ledger(tmp_path: Path) -> None:
    """Differences without spread give z = inf: recorded as text, read back as a number."""
    state = tmp_path / "gate"
    flat = pd.DataFrame({"algorithm": "a", "task": "x", "seed": [0, 1, 2], "score": [2.0, 3.0, 4.0]})
    base = flat.assign(algorithm="base", score=flat["score"] - 1.5)
    first = gate(flat, base, state=state, name="a", min_effect=0.2)
    assert first.verdict == "run_more" and math.isinf(float(first.record["z"]))
    assert read_state(state, ledger=GATE) is not None


def test_a_gate_call_imports_no_plotting_and_no_tracker_client(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.support.paths import REPO

    script = (
        "import sys, warnings, pandas as pd\n"
        "from rl_reliable_logger import gate\n"
        "warnings.simplefilter('ignore')\n"
        "df = pd.DataFrame({'algorithm': 'a', 'task': 'x', 'seed': [0, 1, 2], 'score': [1.0, 2.0, 3.5]})\n"
        f"gate(df, df.assign(algorithm='b', score=[0.2, 0.5, 0.1]), state={str(tmp_path / 'g')!r}, name='a',"
        " min_effect=0.1)\n"
        "print(sorted(m for m in ('matplotlib', 'mlflow', 'wandb') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_the_intakes_notes_on_runs_per_cell_are_not_passed_on_but_others_are(tmp_path: Path) -> None:
    """A gate's test is exact for a few seeds: the intake's notes on intervals (runs per cell) are not said, which
    the intake marks as data (``ScoreTable.interval_notes``), not by their wording; its other warnings are."""
    import warnings

    from rl_reliable_logger import ScoreTable

    def rates(name: str, effect: float) -> ScoreTable:  # success counts, no score column: a note the gate keeps
        frame = runs(name, effect, [0, 1, 2])
        frame = frame.assign(successes=frame.pop("score").round(), episodes=100)
        return ScoreTable(frame, rate_of=("successes", "episodes"))

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        gate(rates("lr", 3.0), rates("base", 0.0), state=tmp_path / "g", name="lr", min_effect=0.01)
    texts = [str(w.message) for w in said]
    assert sum("each run's score is its success rate" in t for t in texts) == 1, texts  # said once, not twice
    assert not any("fewer than 5 runs" in t or "under-cover" in t for t in texts), texts
