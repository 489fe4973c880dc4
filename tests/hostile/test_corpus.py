"""Run every case of the generated hostile corpus through the CLI: one-line errors with exit 2, or the
documented behaviour with exit 0. Never a traceback, a raw exception name, or a silently wrong name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rl_reliable_logger.analysis.report import Report
from rl_reliable_logger.cli.main import main

from .generate import Case, argv, cases, write_case

CASES = cases()
RAW = re.compile(r"\b(KeyError|OSError|TypeError|AttributeError|IndexError|RecursionError|Traceback)\b")


def run(case: Case, tmp_path: Path, capsys) -> tuple[int, str, Path]:
    root = write_case(case, tmp_path)
    status = main(argv(case, root))
    err = capsys.readouterr().err
    return status, err, root


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, tmp_path, capsys):
    status, err, root = run(case, tmp_path, capsys)
    assert not RAW.search(err), err
    assert status == case.exit, err
    if case.exit == 2:
        lines = err.rstrip("\n").split("\n")
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        assert re.search(case.error, lines[0]), lines[0]
    else:
        CHECKS[case.check](root / "out", case)


def check_numeric_looking_names(out: Path, case: Case) -> None:
    report = Report.load(out)
    assert report.algorithms == ["007", "1", "1.0", "1e3"]
    assert sorted(set(report.per_task["task"])) == ["01", "1"]
    assert set(report.aggregates["algorithm"]) == {"007", "1", "1.0", "1e3"}
    assert set(report.scores["algorithm"]) == {"007", "1", "1.0", "1e3"}


def check_formula_names(out: Path, case: Case) -> None:
    names = ['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "'quoted", "\u2212minus"]
    for csv_file in out.glob("*.csv"):
        for line in csv_file.read_text(encoding="utf-8").splitlines():
            for cell in line.split(","):
                assert not cell.lstrip('"').startswith(("=", "+", "@")), (csv_file.name, line)
    report = Report.load(out)
    assert report.algorithms == names
    assert set(report.aggregates["algorithm"]) == set(names)
    assert set(report.scores["task"]) == {"=t", "t"}
    assert report.aggregates["point"].dtype.kind == "f"  # numbers stay numbers


def check_markup_names(out: Path, case: Case) -> None:
    md = (out / "table.md").read_text(encoding="utf-8")
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 9  # header, rule, one row per algorithm: no name split a row
    assert all(line.count("|") - line.count("\\|") == rows[0].count("|") for line in rows)
    assert "](http" not in md.replace("\\](", "") and "<script>" not in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html
    figures = {p.stem for p in (out / "figures").glob("*.png")}
    assert "interval_estimates" in figures, figures
    assert Report.load(out).algorithms == [r[0] for r in _rows(case)][::6]
    assert "could not be drawn" not in html


def check_long_names(out: Path, case: Case) -> None:
    import struct

    for png in (out / "figures").glob("*.png"):
        width, height = struct.unpack(">II", png.read_bytes()[16:24])
        assert width < 5000 and height < 5000, (png.name, width, height)
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "L" * 5000 in md and "L" * 4999 + "M" in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "L" * 5000 in html  # the key: short label -> full name


def check_non_latin_names(out: Path, case: Case) -> None:
    assert Report.load(out).algorithms == ["算法甲", "алгоритм", "🤖 agent", "خوارزمية", "naïve-é"]


def check_plain_ab(out: Path, case: Case) -> None:
    assert Report.load(out).algorithms == ["A", "B"]


def check_normalised_names(out: Path, case: Case) -> None:
    import json

    assert Report.load(out).algorithms == ["Caf\u00e9", "B"]  # NFC, stripped
    rewrites = json.loads((out / "provenance.json").read_text(encoding="utf-8"))["source"]["name_rewrites"]
    assert len(rewrites) == 2 and any("'B '" in r for r in rewrites), rewrites


def _rows(case: Case) -> list[list[str]]:
    import csv
    import io

    return list(csv.reader(io.StringIO(case.files["scores.csv"].decode())))[1:]


CHECKS = {name[len("check_") :]: fn for name, fn in globals().items() if name.startswith("check_")}
