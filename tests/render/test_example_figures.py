"""The README's figures (``examples/figures``) are what ``python examples/dopamine_figures.py`` draws today.

Each committed PNG carries a digest of its inputs (the numbers it shows and the figure code's source); the script
leaves a figure whose digest is unchanged untouched, so on an up-to-date checkout it writes nothing and
``git status`` stays clean, whatever matplotlib version runs it.
"""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from tests.support.paths import REPO

SCRIPT = REPO / "examples" / "dopamine_figures.py"
FIGURES = REPO / "examples" / "figures"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("dopamine_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_figures_are_not_stale_and_the_script_rewrites_none_of_them(script, tmp_path, capsys):
    shutil.copytree(FIGURES, tmp_path / "figures")
    before = {p.name: p.read_bytes() for p in (tmp_path / "figures").iterdir()}
    script.main(["--figures", str(tmp_path / "figures")])
    printed = capsys.readouterr().out
    stale = [name for name in script.FIGURE_TABLES if f"wrote {tmp_path / 'figures' / name}.png" in printed]
    assert not stale, f"stale README figures {stale}: run `python examples/dopamine_figures.py` and commit them"
    assert {p.name: p.read_bytes() for p in (tmp_path / "figures").iterdir()} == before


def test_a_figure_whose_numbers_changed_is_redrawn(script, tmp_path, capsys):
    report = script.compute_report(reps=2_000)  # other numbers than the committed figures'
    name = "dopamine_interval_estimates"
    assert script.inputs_digest(report, name) != script.recorded_digest(FIGURES / f"{name}.png")
    assert script.recorded_digest(tmp_path / "missing.png") is None
