"""The README is a user's front door: the no-account main job on the first screen, every command writing its own
folder (so following it top to bottom loses nothing), and short enough to read (issue 45)."""

from __future__ import annotations

import re

from tests.support.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
MAIN_JOB = "rl-reliable evaluate examples/atari100k_scores.csv --normalize atari100k --seed 0 --out results-atari/"


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"```(?:bash|sh|python|text)\n(.*?)```", text, flags=re.S)


def test_the_main_job_is_on_the_first_screen():
    lines = README.splitlines()
    assert len(lines) <= 300
    first = "\n".join(lines[:40])
    assert MAIN_JOB in first and "pip install" in first  # what it is, install, then the main job
    assert "report.html" in first  # and what to open next


def test_no_two_readme_commands_share_an_output_folder():
    outputs = []
    for block in _code_blocks(README):
        outputs += re.findall(r"--(?:out|state)\s+(\S+)", block)  # a watch's or a race's state folder too
        outputs += re.findall(r"save_report\([^,]+,\s*\"([^\"]+)\"", block)
    folders = [o.rstrip("/") for o in outputs]
    assert len(folders) >= 5, folders
    assert len(folders) == len(set(folders)), folders
    assert {"watch-state", "race-state"} <= set(folders)
    assert "results" not in folders  # the old shared default, which the W&B offline command overwrote


def test_ci_runs_the_readmes_test_command():
    """The test command the README gives is the one CI runs, at the newest versions and at the floors (issue 51)."""
    (command,) = [b.strip() for b in _code_blocks(README.split("## Tests (one command)", 1)[1])[:1]]
    assert command.startswith("python -m pytest") and "\n" not in command
    assert command in (REPO / ".ci" / "run").read_text().splitlines()
    floors = command.replace("python", '"$venv/bin/python"', 1)
    assert any(line.startswith(floors) for line in (REPO / ".ci" / "run-minimum").read_text().splitlines())
