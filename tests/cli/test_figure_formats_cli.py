"""`--figure-formats` on the command line: checked before any computation, and only the chosen files written."""

import json

from rl_reliable_logger.cli.main import main
from tests.support.paths import EXAMPLES

FAST = ["--reps", "100", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0"]


def test_unknown_format_is_refused_before_any_output(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        ["evaluate", str(EXAMPLES / "atari100k_scores.csv"), *FAST, "--out", str(out), "--figure-formats", "gif"]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --figure-formats has 'gif'; the figures can be written as png, svg"]
    assert not out.exists()


def test_svg_only_writes_no_png(tmp_path):
    out = tmp_path / "res"
    args = ["evaluate", str(EXAMPLES / "atari100k_scores.csv"), *FAST, "--only-algorithms", "DER,SPR"]
    assert main([*args, "--out", str(out), "--figure-formats", "svg", "--quiet"]) == 0
    files = {f["path"] for f in json.loads((out / "manifest.json").read_text())["files"]}
    figures = {p for p in files if p.startswith("figures/")}
    assert figures and all(p.endswith(".svg") for p in figures)
    assert "report.html" in files and "methods.md" in files
