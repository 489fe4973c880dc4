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


def test_png_only_by_default_and_svg_copies_later_from_the_bundle(tmp_path, capsys):
    """Issue 56: SVG copies are drawn on request, now (``--figure-formats png,svg``) or later (``report DIR``)."""
    out = tmp_path / "res"
    args = ["evaluate", str(EXAMPLES / "atari100k_scores.csv"), *FAST, "--only-algorithms", "DER,SPR"]
    assert main([*args, "--out", str(out), "--quiet"]) == 0

    def listed() -> set[str]:
        return {f["path"] for f in json.loads((out / "manifest.json").read_text())["files"]}

    figures = {p for p in listed() if p.startswith("figures/")}
    chart = "figures/interval_estimates.svg"  # the chart a tracker's page shows: always SVG too
    assert chart in figures and all(p.endswith(".png") for p in figures - {chart})
    tables = {p: (out / p).read_bytes() for p in listed() if p.endswith(".csv")}
    assert main(["report", str(out), "--figure-formats", "png,svg", "--quiet"]) == 0
    svgs = {p for p in listed() if p.startswith("figures/") and p.endswith(".svg")}
    assert {p.replace(".png", ".svg") for p in figures} == svgs
    assert {p: (out / p).read_bytes() for p in tables} == tables  # the tables are kept byte for byte
    assert main(["report", str(out), "--figure-formats", "gif"]) == 2
    assert "--figure-formats has 'gif'" in capsys.readouterr().err


def test_output_flags_that_cannot_act_are_refused_before_any_work(tmp_path, capsys):
    """``--figure-formats`` with ``--no-figures`` contradict each other; ``--figure-formats`` and ``--force`` act only
    on the folder ``--out`` writes: each is one sentence naming the flags, exit 2, and nothing is written."""
    out = tmp_path / "res"
    args = ["evaluate", str(EXAMPLES / "atari100k_scores.csv"), *FAST, "--quiet"]
    cases = {
        ("--no-figures", "--figure-formats", "svg", "--out", str(out)): "--figure-formats asks for figures and "
        "--no-figures for none: give one of them",
        ("--figure-formats", "svg"): "--figure-formats acts only on the folder --out writes: add --out DIR, or "
        "leave --figure-formats out",
        ("--force", "--figure-formats", "png"): "--figure-formats and --force act only on the folder --out writes",
    }
    for flags, said in cases.items():
        assert main([*args, *flags]) == 2, flags
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.strip().splitlines()) == 1, captured
        assert captured.err.startswith(f"error: {said}"), captured.err
        assert not out.exists()
    assert main([*args, "--no-figures"]) == 0  # a tracker's command publishes without --out: not refused
