"""Generate the hostile / malformed input corpus: every file is built here, none is pasted by hand.

Each :class:`Case` is a set of input files, the ``rl-reliable`` arguments to run on them, and the
expected outcome: exit status 2 with a one-line error matching ``error`` (naming the file, row or
option), or exit status 0 with the documented behaviour checked by ``check`` (a name of a function in
``test_corpus.py``).

Run it to look at the corpus by hand::

    python tests/hostile/generate.py /tmp/hostile     # writes the files and expected.tsv
"""

from __future__ import annotations

import gzip
import io
import json
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

#: Fast settings for cases that are expected to run: the corpus checks behaviour, not the statistics.
FAST = ["--reps", "200", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0", "--quiet"]


@dataclass
class Case:
    name: str
    files: dict[str, bytes]
    args: list[str]  # "{dir}" is replaced by the case folder
    exit: int
    error: str | None = None  # regex the single stderr line must match (exit 2)
    check: str | None = None  # documented behaviour, checked by test_corpus.check_<name> (exit 0)
    why: str = ""
    extra: dict = field(default_factory=dict)


def _csv(rows: list[tuple], header: str = "algorithm,task,seed,score") -> bytes:
    import csv

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header.split(","))
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def grid(algorithms: list[str], tasks: list[str] = ("t1", "t2"), seeds: int = 3, score=None) -> list[tuple]:
    """Every algorithm on every task with ``seeds`` runs; scores differ by algorithm and seed."""
    rows = []
    for a, alg in enumerate(algorithms):
        for t, task in enumerate(tasks):
            for s in range(seeds):
                value = score(a, t, s) if score else round(0.1 * a + 0.05 * t + 0.01 * s, 4)
                rows.append((alg, task, s, value))
    return rows


def _records(rows: list[tuple]) -> list[dict]:
    return [dict(zip(("algorithm", "task", "seed", "score"), r)) for r in rows]


def _parquet(columns: dict[str, list]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table(columns), buf)
    return buf.getvalue()


def _with(rows: list[tuple], index: int, **changes) -> list[tuple]:
    out = list(rows)
    fields = dict(zip(("algorithm", "task", "seed", "score"), out[index]))
    fields.update(changes)
    out[index] = tuple(fields.values())
    return out


def cases() -> list[Case]:
    """The whole corpus, in a fixed order."""
    base = grid(["A", "B"])
    nfc, nfd = unicodedata.normalize("NFC", "Café"), unicodedata.normalize("NFD", "Café")
    out: list[Case] = []
    add = out.append
    ev = ["evaluate", "{dir}/scores.csv", *FAST]

    # ---------------------------------------------------------------- names are text
    add(
        Case(
            "numeric_looking_names",
            {"scores.csv": _csv(grid(["007", "1", "1.0", "1e3"], ["01", "1"]))},
            [*ev, "--no-figures", "--out", "{dir}/out"],
            0,
            check="numeric_looking_names",
            why="007 stays 007; 1 and 1.0 stay two algorithms; tasks 01 and 1 stay two tasks",
        )
    )
    add(
        Case(
            "empty_algorithm",
            {"scores.csv": _csv(_with(base, 4, algorithm=""))},
            ev,
            2,
            error=r"scores\.csv: empty or missing algorithm name .* row\(s\) 4\b",
        )
    )
    add(
        Case(
            "na_algorithm",
            {"scores.csv": _csv(_with(base, 7, algorithm="NA"))},
            ev,
            2,
            error=r"scores\.csv: empty or missing algorithm name .* row\(s\) 7\b",
        )
    )
    add(
        Case(
            "nan_task",
            {"scores.csv": _csv(_with(base, 2, task="nan"))},
            ev,
            2,
            error=r"empty or missing task name .* row\(s\) 2\b",
        )
    )
    add(
        Case(
            "missing_seed",
            {"scores.csv": _csv(_with(base, 3, seed=""))},
            ev,
            2,
            error=r"empty or missing seed name .*column 'seed', row\(s\) 3\b",
        )
    )
    add(
        Case(
            "whitespace_name",
            {"scores.csv": _csv(grid(["A", " A"]))},
            ev,
            2,
            error=r"algorithm name ' A' has leading or trailing whitespace .* row\(s\) 6",
        )
    )
    add(
        Case(
            "trailing_space_task",
            {"scores.csv": _csv(grid(["A", "B"], ["t1", "t2 "]))},
            ev,
            2,
            error=r"task name 't2 ' has leading or trailing whitespace",
        )
    )
    add(
        Case(
            "nfc_vs_nfd",
            {"scores.csv": _csv(grid([nfc, nfd]))},
            ev,
            2,
            error=r"different algorithm names .* print the same",
        )
    )
    add(
        Case(
            "zero_width_space",
            {"scores.csv": _csv(grid(["A", "A\u200b"]))},
            ev,
            2,
            error=r"different algorithm names .* print the same",
        )
    )
    add(Case("fullwidth_compat", {"scores.csv": _csv(grid(["A1", "Ａ１"]))}, ev, 2, error=r"print the same"))
    add(
        Case(
            "newline_in_name",
            {"scores.csv": _csv(grid(["A", "B\nC"]))},
            ev,
            2,
            error=r"algorithm name with a control character \(U\+000A\) .* row\(s\) 6",
        )
    )
    add(
        Case(
            "nul_in_name",
            {"scores.json": json.dumps(_records(grid(["A", "B\x00"]))).encode()},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"control character \(U\+0000\)",
        )
    )
    add(
        Case(
            "names_normalised_on_request",
            {"scores.json": json.dumps(_records(grid([nfc, "B "]))).encode()},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"leading or trailing whitespace .*; fix the data, or pass --normalize-names",
            why="--normalize-names (the library's names='normalize') strips and NFC-normalises instead",
        )
    )
    add(
        Case(
            "names_normalised_with_flag",
            {"scores.json": json.dumps(_records(grid([nfd, "B "]))).encode()},
            ["evaluate", "{dir}/scores.json", *FAST, "--normalize-names", "--no-figures", "--out", "{dir}/out"],
            0,
            check="normalised_names",
            why="--normalize-names: 'B ' becomes 'B', NFD becomes NFC, each rewrite printed and in provenance",
        )
    )
    add(
        Case(
            "normalised_names_still_clash",
            {"scores.csv": _csv(grid(["A", "A "]))},
            [*ev, "--normalize-names"],
            2,
            error=r"a name is empty after stripping|print the same|duplicate",
            why="'A' and 'A ' are one name after stripping: their runs collide instead of merging silently",
        )
    )
    add(
        Case(
            "bad_redact_run_names_regex",
            {"scores.csv": _csv(base)},
            [*ev, "--redact-run-names", "tok_(\\w+"],
            2,
            error=r"^error: --redact-run-names 'tok_\(\\\\w\+': not a valid regular expression",
        )
    )
    add(
        Case(
            "redact_run_names_matching_nothing_everywhere",
            {"scores.csv": _csv(base)},
            [*ev, "--redact-run-names", "x*"],
            2,
            error=r"--redact-run-names 'x\*': .* matches the empty string",
        )
    )

    # ---------------------------------------------------------------- scores are finite reals
    bools = _records(base)
    bools[5]["score"] = True
    add(
        Case(
            "boolean_score_json",
            {"scores.json": json.dumps(bools).encode()},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"boolean score True in column 'score': A / t2 run '2' \(row 5\)",
        )
    )
    add(
        Case(
            "boolean_score_parquet",
            {
                "scores.parquet": _parquet(
                    {
                        "algorithm": ["A", "A", "B", "B"],
                        "task": ["t"] * 4,
                        "seed": [0, 1, 0, 1],
                        "score": [True, False, True, True],
                    }
                )
            },
            ["evaluate", "{dir}/scores.parquet", *FAST],
            2,
            error=r"4 problem\(s\) in the scores: boolean score",
        )
    )
    steps = [(a, t, s, sc, st) for (a, t, s, sc) in base for st in (0, 100)]
    steps[3] = (*steps[3][:4], "inf")
    add(
        Case(
            "infinite_step",
            {"scores.csv": _csv(steps, "algorithm,task,seed,score,step")},
            [*ev, "--step-key", "step", "--curves"],
            2,
            error=r"non-finite step inf: A / t1 run '1' step inf \(row 3\)",
        )
    )
    add(
        Case(
            "huge_scores",
            {"scores.csv": _csv(_with(base, 0, score=1e308))},
            ev,
            2,
            error=r"scores up to 1e\+308 in magnitude: .* overflow float64",
        )
    )
    add(
        Case(
            "score_1e400",
            {"scores.csv": _csv(_with(base, 1, score="1e400"))},
            ev,
            2,
            error=r"(non-finite score inf|non-numeric score '1e400' in column 'score'): A / t1 run '1' \(row 1\)",
        )
    )
    add(
        Case(
            "text_score",
            {"scores.csv": _csv(_with(base, 1, score="=1+1"))},
            ev,
            2,
            error=r"non-numeric score '=1\+1' in column 'score'",
        )
    )

    # ---------------------------------------------------------------- normalisation tables
    t3 = grid(["A", "B"], ["t3", "t4"])
    refs = b"task,low,high\nt3,0,1\nT3,0,2\nt4,0,1\n"
    add(
        Case(
            "refs_duplicate_task",
            {"scores.csv": _csv(t3), "refs.csv": refs},
            [*ev, "--normalize", "{dir}/refs.csv"],
            2,
            error=r"lists one task more than once .*'t3' and 'T3'",
        )
    )
    add(
        Case(
            "refs_subnormal_range",
            {"scores.csv": _csv(t3), "refs.csv": b"task,low,high\nt3,0,1e-320\nt4,0,1\n"},
            [*ev, "--normalize", "{dir}/refs.csv"],
            2,
            error=r"needs a usable range high > low .*t3 \(low=0\.0, high=1e-320\)",
        )
    )
    add(
        Case(
            "refs_tiny_relative_range",
            {"scores.csv": _csv(t3), "refs.csv": b"task,low,high\nt3,1e6,1000000.0000000001\nt4,0,1\n"},
            [*ev, "--normalize", "{dir}/refs.csv"],
            2,
            error=r"needs a usable range",
        )
    )
    add(
        Case(
            "refs_text_bound",
            {"scores.csv": _csv(t3), "refs.csv": b"task,low,high\nt3,0,abc\nt4,0,1\n"},
            [*ev, "--normalize", "{dir}/refs.csv"],
            2,
            error=r"refs\.csv: non-numeric low/high for task\(s\) t3",
        )
    )
    add(
        Case(
            "refs_missing_column",
            {"scores.csv": _csv(t3), "refs.csv": b"task,lo,high\nt3,0,1\n"},
            [*ev, "--normalize", "{dir}/refs.csv"],
            2,
            error=r"refs\.csv: a reference table needs columns task,low,high",
        )
    )

    # ---------------------------------------------------------------- outputs are inert
    formula = ['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "'quoted", "\u2212minus"]
    add(
        Case(
            "formula_names",
            {"scores.csv": _csv(grid(formula, ["=t", "t"]))},
            [*ev, "--no-figures", "--out", "{dir}/out"],
            0,
            check="formula_names",
            why="text cells starting with = + - @ are written with a leading ' and read back",
        )
    )
    markup = [
        "[x](http://evil.example)",
        "![i](http://evil.example/i.png)",
        "a|b",
        "<script>alert(1)</script>",
        "$\\alpha$",
        "{" * 300 + "x" + "}" * 300,
        "x_1^2 & 50% #1 ~\\",
        "$\\notacommand{$",
        "$" + "{" * 300 + "x" + "}" * 300 + "$",
    ]
    add(
        Case(
            "markup_names",
            {"scores.csv": _csv(grid(markup))},
            [*ev, "--out", "{dir}/out"],
            0,
            check="markup_names",
            why="Markdown/LaTeX/HTML escape every name; figures never go through mathtext",
        )
    )
    long_names = ["L" * 5000, "L" * 4999 + "M", "short"]
    add(
        Case(
            "long_names",
            {"scores.csv": _csv(grid(long_names))},
            [*ev, "--out", "{dir}/out"],
            0,
            check="long_names",
            why="names are abbreviated consistently in figures (bounded size), full in tables, with a key",
        )
    )
    scripts = ["算法甲", "алгоритм", "🤖 agent", "خوارزمية", "naïve-é"]
    add(
        Case(
            "non_latin_names",
            {"scores.csv": _csv(grid(scripts))},
            [*ev, "--no-figures", "--out", "{dir}/out"],
            0,
            check="non_latin_names",
            why="names come back byte-identical; table.tex compiles (see test_tex)",
        )
    )

    # ---------------------------------------------------------------- files
    add(
        Case(
            "json_gz",
            {"scores.json.gz": gzip.compress(json.dumps(_records(base)).encode())},
            ["evaluate", "{dir}/scores.json.gz", *FAST, "--no-figures", "--out", "{dir}/out"],
            0,
            check="plain_ab",
        )
    )
    tsv = _csv(base).decode().replace(",", "\t").encode()
    add(
        Case(
            "tsv_gz",
            {"scores.tsv.gz": gzip.compress(tsv)},
            ["evaluate", "{dir}/scores.tsv.gz", *FAST, "--no-figures", "--out", "{dir}/out"],
            0,
            check="plain_ab",
        )
    )
    add(
        Case(
            "jsonl_gz",
            {"scores.jsonl.gz": gzip.compress("\n".join(json.dumps(r) for r in _records(base)).encode())},
            ["evaluate", "{dir}/scores.jsonl.gz", *FAST, "--no-figures", "--out", "{dir}/out"],
            0,
            check="plain_ab",
        )
    )
    nested = {"A": {"t1": 0.5, "t2": [0.1, 0.2]}, "B": {"t1": 0.7, "t2": [0.3, 0.4]}}
    add(
        Case(
            "nested_scalar",
            {"scores.json": json.dumps(nested).encode()},
            ["evaluate", "{dir}/scores.json", *FAST, "--no-figures", "--out", "{dir}/out"],
            0,
            check="plain_ab",
            why="a single number is one run (seed 0)",
        )
    )
    add(
        Case(
            "nested_string",
            {"scores.json": json.dumps({"A": {"t1": "0.5"}, "B": {"t1": "0.7"}}).encode()},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"scores\.json: nested scores: 'A' / 't1' holds a str",
        )
    )
    add(
        Case(
            "nested_deep",
            {"scores.json": json.dumps({"A": {"t1": [[1, 2]]}, "B": {"t1": [[1]]}}).encode()},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"run 0 is a list, not a number",
        )
    )
    add(Case("missing_file", {}, ["evaluate", "{dir}/nope.csv", *FAST], 2, error=r"nope\.csv does not exist"))
    add(
        Case(
            "directory", {"dir.csv/x": b""}, ["evaluate", "{dir}/dir.csv", *FAST], 2, error=r"dir\.csv: is a directory"
        )
    )
    add(
        Case(
            "ragged_csv",
            {"scores.csv": b"algorithm,task,seed,score\nA,t,0,1\nA,t,1,2,3,4\n"},
            ev,
            2,
            error=r"scores\.csv: malformed CSV: .*line 3",
        )
    )
    add(Case("not_utf8", {"scores.csv": _csv(base)[:-10] + b"\xff\xfe\n"}, ev, 2, error=r"scores\.csv: not UTF-8 text"))
    add(
        Case(
            "bad_json",
            {"scores.json": b'[{"algorithm": "A",\n "task": }]'},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"scores\.json: invalid JSON at line 2 column",
        )
    )
    add(Case("empty_file", {"scores.csv": b""}, ev, 2, error=r"scores\.csv: the file is empty"))
    add(Case("header_only", {"scores.csv": b"algorithm,task,seed,score\n"}, ev, 2, error=r"the input has no rows"))
    add(
        Case(
            "fake_gzip",
            {"scores.csv.gz": b"not gzip at all"},
            ["evaluate", "{dir}/scores.csv.gz", *FAST],
            2,
            error=r"scores\.csv\.gz: not a valid gzip file",
        )
    )
    add(
        Case(
            "fake_parquet",
            {"scores.parquet": b"PAR1 but not really"},
            ["evaluate", "{dir}/scores.parquet", *FAST],
            2,
            error=r"scores\.parquet: cannot read",
        )
    )
    add(
        Case(
            "unknown_extension",
            {"scores.xlsx": b"x"},
            ["evaluate", "{dir}/scores.xlsx", *FAST],
            2,
            error=r"cannot tell the format of .*scores\.xlsx",
        )
    )
    add(
        Case(
            "json_scalar",
            {"scores.json": b"42"},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"scores\.json: unrecognised JSON layout",
        )
    )
    add(
        Case(
            "json_list_of_numbers",
            {"scores.json": b"[1, 2, 3]"},
            ["evaluate", "{dir}/scores.json", *FAST],
            2,
            error=r"unrecognised JSON layout",
        )
    )
    add(
        Case(
            "wrong_column",
            {"scores.csv": _csv(base)},
            [*ev, "--score-key", "return"],
            2,
            error=r"unknown column\(s\): score column 'return'",
        )
    )
    return out


def write_case(case: Case, folder: Path) -> Path:
    """Write the case's files into ``folder/<name>``; return that folder."""
    root = folder / case.name
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def argv(case: Case, root: Path) -> list[str]:
    return [a.replace("{dir}", str(root)) for a in case.args]


def main(out: str) -> None:
    folder = Path(out)
    lines = ["case\texit\texpected\tcommand"]
    for case in cases():
        root = write_case(case, folder)
        expected = case.error or f"documented: {case.why or case.check}"
        lines.append(f"{case.name}\t{case.exit}\t{expected}\trl-reliable {' '.join(argv(case, root))}")
    (folder / "expected.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines) - 1} cases to {folder}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus")
