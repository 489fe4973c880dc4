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
import os
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
    #: symlinks to plant: path in the case folder -> target ("{dir}" is the case folder)
    links: dict[str, str] = field(default_factory=dict)
    #: FIFOs (named pipes) to create in the case folder: reading one would block forever
    fifos: tuple[str, ...] = ()
    #: commands run first (each must exit 0), e.g. to write a results folder the probe then tampers with
    before: list[list[str]] = field(default_factory=list)
    #: name of a function of this module that edits the case folder after ``before`` (``tamper_<name>``)
    tamper: str | None = None
    #: regex the whole output (stdout and stderr) must match, for probes that do not end in one error line
    output: str | None = None
    #: texts that must appear nowhere in the output (secrets, terminal escapes)
    absent: tuple[str, ...] = ()


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
            error=r"4 problems in the scores: boolean score",
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
            error=r"scores up to 1e\+308 in magnitude \(the largest: A / t1, run .*\): .* overflow float64",
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
    out += results_folder_cases() + secret_cases() + malformed_cases() + confusable_cases() + size_and_level_cases()
    out += tampered_folder_cases() + curve_step_cases() + special_file_cases() + reserved_name_cases()
    return out


# ==================================================================================== second pass (issue 25)
#: Fast settings of ``rl-reliable plan``.
PLAN = ["--runs", "3", "--trials", "5", "--sim-reps", "50", "--quiet"]


def _manifest(kind: str | None = None) -> bytes:
    """The manifest of an empty bundle of ``kind`` (a results folder the probes must not overwrite)."""
    payload = {"format": "rl-reliable-bundle", "format_version": 1, "tool": "rl_reliable_logger"}
    payload.update({"tool_version": "0", "report_hash": "0" * 64, "files": []})
    if kind:
        payload["kind"] = kind
    return json.dumps(payload).encode()


def _sqlite_app() -> bytes:
    """A user's own SQLite database (not an MLflow store)."""
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "app.db"
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE users (id INTEGER, name TEXT)")
        db.execute("INSERT INTO users VALUES (1, 'alice')")
        db.commit()
        db.close()
        return path.read_bytes()


def _pending(run: dict, tracker: str = "mlflow", cause: str = "unreachable", algorithm: str = "A") -> bytes:
    """A pending final-score file as ``log_final_score`` writes it (trackers/base/pending.py)."""
    from rl_reliable_logger.trackers.base.pending import FORMAT, VERSION

    data = {"format": FORMAT, "version": VERSION, "tracker": tracker, "run": run, "score": 0.5}
    data.update({"algorithm": algorithm, "task": "t", "seed": 0, "written_at": "2026-01-01T00:00:00Z"})
    data.update({"cause": cause, "error": "x"})
    return json.dumps(data).encode()


def results_folder_cases() -> list[Case]:
    """Never write into something that is not ours: every writing command goes through one guard."""
    pilot = _csv(grid(["A", "B"]))
    plan = ["plan", "{dir}/pilot.csv", *PLAN]
    return [
        Case(
            "plan_out_user_folder",
            {"pilot.csv": pilot, "mine/notes.txt": b"my notes"},
            [*plan, "--out", "{dir}/mine"],
            2,
            error=r"mine/notes\.txt: the output folder holds files rl_reliable_logger did not write",
        ),
        Case(
            "plan_out_own_input",
            {"in/plan.csv": pilot},
            ["plan", "{dir}/in/plan.csv", *PLAN, "--out", "{dir}/in"],
            2,
            error=r"plan\.csv: an input file inside the output folder",
        ),
        Case(
            "plan_out_symlinked_folder",
            {"pilot.csv": pilot, "real/keep.txt": b"keep"},
            [*plan, "--out", "{dir}/link"],
            2,
            error=r"link: the output folder is a symlink",
            links={"link": "{dir}/real"},
        ),
        Case(
            "plan_out_planted_png_symlink",
            {"pilot.csv": pilot, "victim.txt": b"a file outside the folder"},
            [*plan, "--out", "{dir}/out"],
            2,
            error=r"plan\.png: a symlink or special file in the output folder",
            links={"out/plan.png": "{dir}/victim.txt"},
            why="the write would have gone through the link to victim.txt",
        ),
        Case(
            "plan_out_results_bundle",
            {"pilot.csv": pilot, "results/manifest.json": _manifest()},
            [*plan, "--out", "{dir}/results"],
            2,
            error=r"holds a results bundle \(rl-reliable evaluate\), not a plan",
        ),
        Case(
            "evaluate_out_plan_folder",
            {"scores.csv": pilot, "plan/manifest.json": _manifest("plan")},
            ["evaluate", "{dir}/scores.csv", *FAST, "--out", "{dir}/plan"],
            2,
            error=r"holds a plan \(rl-reliable plan\), not a results bundle",
        ),
        Case(
            "plan_out_replaces_its_own_plan",
            {"pilot.csv": pilot},
            [*plan, "--out", "{dir}/out"],
            0,
            check="plan_folder",
            before=[[*plan, "--target-width", "0.5", "--out", "{dir}/out"]],
            why="an earlier plan is replaced as a whole: its launch.csv does not survive",
        ),
        Case(
            "mlflow_sqlite_not_a_store",
            {"app.db": _sqlite_app()},
            ["mlflow", "--tracking-uri", "sqlite:///{dir}/app.db", "--experiment", "x", "--quiet"],
            2,
            error=r"app\.db is not an MLflow database .*left unchanged",
        ),
        Case(
            "pending_push_sqlite_not_a_store_and_a_bad_file",
            {
                "app.db": _sqlite_app(),
                "pending/a.json": _pending({"run_id": "abc", "tracking_uri": "sqlite:///elsewhere.db"}),
                "pending/b.json": b"{not json",
            },
            ["pending", "{dir}/pending", "--push", "--tracking-uri", "sqlite:///{dir}/app.db", "--retry-for", "0"],
            2,
            output=r"(?s)skipped .*b\.json: not a readable pending score file.*not pushed: a\.json: .*app\.db is not an "
            r"MLflow database",
            why="each bad file is reported and the batch goes on; the user's database is not touched",
        ),
        Case(
            "report_restores_a_bundle_a_killed_swap_left_aside",
            {"scores.csv": pilot},
            ["report", "{dir}/out", "--quiet"],
            0,
            before=[["evaluate", "{dir}/scores.csv", *FAST, "--no-figures", "--out", "{dir}/out"]],
            tamper="killed_swap",
            output=r"restored the previous results bundle",
            check="bundle_verified",
        ),
    ]


def secret_cases() -> list[Case]:
    """Secrets never reach the console or the outputs."""
    ansi = "\x1b[2J\x1b]0;pwned\x07"
    rows = [(*r, "sk-live-0123456789", "http://alice:p@ss@mlflow.example/x") for r in grid(["A", "B"])]
    return [
        Case(
            "pending_lists_redacted_and_escaped",
            {
                "pending/a.json": _pending(
                    {"run_id": "r1", "tracking_uri": "http://alice:p@ss@mlflow.example:5000"}, cause="cut" + ansi
                ),
                "pending/b.json": _pending(
                    {"run_id": "r2", "entity": "e", "project": "p", "base_url": "https://bob:s3c@r@t@wandb.example"},
                    tracker="wandb",
                ),
            },
            ["pending", "{dir}/pending"],
            0,
            output=r"(?s)alice:\*\*\*@mlflow\.example.*bob:\*\*\*@wandb\.example",
            absent=("p@ss", "ss@mlflow", "s3c", "t@wandb", "\x1b", "\x07"),
        ),
        Case(
            "secret_extra_columns",
            {"scores.csv": _csv(rows, "algorithm,task,seed,score,api_key,url")},
            ["evaluate", "{dir}/scores.csv", *FAST, "--no-figures", "--out", "{dir}/out"],
            0,
            check="no_secrets_in_outputs",
            output=r"'api_key' look like secrets",
            absent=("sk-live", "p@ss"),
        ),
    ]


def malformed_cases() -> list[Case]:
    """Malformed files are errors naming the row or key, never shifted or arbitrarily chosen values."""
    lines = _csv(grid(["A", "B"])).decode().splitlines()
    trailing = "\n".join([lines[0], lines[1] + ",", *lines[2:]]) + "\n"
    every = "\n".join([lines[0]] + [line + ",9" for line in lines[1:]]) + "\n"
    short = "\n".join([*lines[:3], lines[3].rsplit(",", 1)[0], *lines[4:]]) + "\n"
    records = [json.dumps(r) for r in _records(grid(["A", "B"]))]
    repeated = records[2][:-1] + ', "score": 99}'
    pong = grid(["A", "B"], ["Pong", "PongNoFrameskip-v4"])
    js = ["evaluate", "{dir}/scores.json", *FAST]
    return [
        Case(
            "csv_extra_trailing_field",
            {"scores.csv": trailing.encode()},
            ["evaluate", "{dir}/scores.csv", *FAST],
            2,
            error=r"scores\.csv: malformed CSV: row 0 \(line 2\) has 5 field\(s\) but the header has 4",
        ),
        Case(
            "csv_every_row_one_field_more",
            {"scores.csv": every.encode()},
            ["evaluate", "{dir}/scores.csv", *FAST],
            2,
            error=r"row 0 \(line 2\) has 5 field\(s\)",
            why="pandas would take the first field as the index and shift every value one column",
        ),
        Case(
            "csv_short_row",
            {"scores.csv": short.encode()},
            ["evaluate", "{dir}/scores.csv", *FAST],
            2,
            error=r"row 2 \(line 4\) has 3 field\(s\) but the header has 4",
        ),
        Case(
            "csv_duplicate_column",
            {"scores.csv": _csv([(*r, 7) for r in grid(["A", "B"])], "algorithm,task,seed,score,score")},
            ["evaluate", "{dir}/scores.csv", *FAST],
            2,
            error=r"column 'score' appears twice in the header \(columns 4 and 5\)",
        ),
        Case(
            "json_duplicate_key",
            {"scores.json": ("[" + ",".join([*records[:2], repeated, *records[3:]]) + "]").encode()},
            js,
            2,
            error=r"scores\.json: key 'score' appears twice in one object",
        ),
        Case(
            "jsonl_repeated_field",
            {"scores.jsonl": "\n".join([*records[:2], repeated, *records[3:]]).encode()},
            ["evaluate", "{dir}/scores.jsonl", *FAST],
            2,
            error=r"scores\.jsonl: line 3: key 'score' appears twice",
        ),
        Case(
            "json_integer_too_large",
            {"scores.json": json.dumps(_records(_with(grid(["A", "B"]), 0, score=10**400))).encode()},
            js,
            2,
            error=r"scores\.json: the integer 1000.* \(401 digits\) is too large for a number",
        ),
        Case(
            "json_nested_too_deeply",
            {"scores.json": b"[" * 100_000 + b"]" * 100_000},
            js,
            2,
            error=r"scores\.json: the JSON is nested too deeply",
        ),
        Case(
            "two_spellings_of_one_task",
            {"scores.csv": _csv(pong), "refs.csv": b"task,low,high\nPong,-21,21\n"},
            ["evaluate", "{dir}/scores.csv", *FAST, "--normalize", "{dir}/refs.csv"],
            2,
            error=r"'Pong' and 'PongNoFrameskip-v4' are one game",
        ),
    ]


def confusable_cases() -> list[Case]:
    """Names that print the same are refused, as docs/untrusted-input.md says."""
    ev = ["evaluate", "{dir}/scores.csv", *FAST]
    return [
        Case(
            "cyrillic_lookalike",
            {"scores.csv": _csv(grid(["PPO", "\u0420\u0420\u041e"]))},
            ev,
            2,
            error=r"different algorithm names .* print the same",
        ),
        Case(
            "rtl_override",
            {"scores.csv": _csv(grid(["A", "B\u202eC"]))},
            ev,
            2,
            error=r"control character \(U\+202E\)",
        ),
        Case(
            "variation_selector",
            {"scores.csv": _csv(grid(["A", "A\ufe0f"]))},
            ev,
            2,
            error=r"different algorithm names .* print the same",
        ),
        *[
            Case(
                f"lookalike_{label}",
                {"scores.csv": _csv(grid(["PPO", twin]))},
                ev,
                2,
                error=r"different algorithm names .* print the same",
            )
            for label, twin in [
                ("greek_capitals", "\u03a1\u03a1\u039f"),  # Greek Rho Rho Omicron
                ("mixed_script", "\u0420PO"),  # one Cyrillic letter among Latin ones
                ("full_width", "\uff30\uff30\uff2f"),  # NFKC folds full-width forms
                ("zero_width_space", "P\u200bPO"),
                ("hangul_filler", "PPO\u3164"),  # a letter that prints as a blank
                ("grapheme_joiner", "PP\u034fO"),
                ("tag_character", "PPO\U000e0041"),
                ("armenian_oh", "PP\u0555"),
            ]
        ],
        Case(
            "lookalike_task_names",
            {"scores.csv": _csv(grid(["A", "B"], tasks=("Hopper", "H\u043epper")))},
            ev,
            2,
            error=r"different task names .* print the same",
        ),
        Case(
            "bidi_isolate",
            {"scores.csv": _csv(grid(["A", "B\u2067C"]))},
            ev,
            2,
            error=r"control character \(U\+2067\)",
        ),
    ]


def size_and_level_cases() -> list[Case]:
    """Sizes are refused before they run; interval levels the replicates cannot resolve are said so."""
    pilot = {"pilot.csv": _csv(grid(["A", "B"]))}
    plan = ["plan", "{dir}/pilot.csv", *PLAN]
    steps = [(a, t, s, sc, st) for (a, t, s, sc) in grid(["A", "B"]) for st in (0, 100)]
    scores = {"scores.csv": _csv(grid(["A", "B"]))}
    ev = ["evaluate", "{dir}/scores.csv", *FAST]
    return [
        Case("plan_ci_1_5", pilot, [*plan, "--ci", "1.5"], 2, error=r"--ci 1\.5 reads as a 1\.5% interval"),
        Case("plan_ci_nan", pilot, [*plan, "--ci", "nan"], 2, error=r"^error: --ci must be finite, got nan$"),
        Case("plan_seed_negative", pilot, [*plan, "--seed", "-1"], 2, error=r"--seed must be a non-negative integer"),
        Case("plan_trials_zero", pilot, [*plan, "--trials", "0"], 2, error=r"--trials of at least 2 .* got 0"),
        Case("plan_power_zero", pilot, [*plan, "--power", "0"], 2, error=r"--power must be between 0 and 1"),
        Case(
            "plan_sim_reps_huge",
            pilot,
            [*plan, "--sim-reps", "1000000000"],
            2,
            error=r"--sim-reps 1000000000 would need about .* of memory",
        ),
        Case(
            "plan_runs_huge",
            pilot,
            [*plan, "--runs", "1000000000"],
            2,
            error=r"planning 1,000,000,000 runs per task .* of memory",
        ),
        Case("metric_p_above_nan", scores, [*ev, "--metrics", "p_above_nan"], 2, error=r"unknown metric 'p_above_nan'"),
        Case(
            "reps_1",
            scores,
            [*ev, "--reps", "1", "--no-figures", "--out", "{dir}/out"],
            2,
            error=r"--reps 1 cannot give a 95% interval at all: an interval needs two or more replicates, and its "
            r"ends need at least 40 .*use --reps of 40 or more",
        ),
        Case(
            "reps_2",
            scores,
            [*ev, "--reps", "2", "--no-figures", "--out", "{dir}/out"],
            0,
            output=r"--reps 2 cannot resolve a 95% interval: its ends need at least 40 replicates",
        ),
        Case(
            "plan_level_999_from_10_sim_reps",
            pilot,
            [*plan, "--sim-reps", "10", "--ci", "99.9"],
            0,
            output=r"--sim-reps 10 cannot resolve a 99\.9% interval: its ends need at least 2,000 replicates",
        ),
        Case(
            "plan_ci_100",
            pilot,
            [*plan, "--ci", "100"],
            2,
            error=r"--ci 100\.0 is not a confidence level: give a fraction",
        ),
        Case(
            "evaluate_ci_100",
            scores,
            [*ev, "--ci", "100"],
            2,
            error=r"--ci 100\.0 is not a confidence level: give a fraction",
        ),
        Case("evaluate_ci_1_5", scores, [*ev, "--ci", "1.5"], 2, error=r"--ci 1\.5 reads as a 1\.5% interval"),
        Case("metric_p_above_inf", scores, [*ev, "--metrics", "p_above_inf"], 2, error=r"p_above_inf"),
        Case(
            "level_999_from_20_reps",
            scores,
            [*ev, "--reps", "20", "--ci", "99.9", "--no-figures", "--out", "{dir}/out"],
            0,
            output=r"--reps 20 cannot resolve a 99\.9% interval: its ends need at least 2,000 replicates",
        ),
        Case(
            "budget_negative",
            {"scores.csv": _csv(steps, "algorithm,task,seed,score,step")},
            [*ev, "--step-key", "step", "--budget", "-1"],
            2,
            error=r"--budget -1 is before every run's first logged step \(0\)",
        ),
        Case(
            "score_range_narrower_than_data",
            scores,
            [*ev, "--jordan", "--score-range", "0,0.01"],
            2,
            error=r"--score-range is narrower than the data on 2 tasks: 't1' has scores in",
        ),
        Case(
            "bca_one_run_per_cell",
            {"scores.csv": _csv(grid(["A", "B"], seeds=1))},
            [*ev, "--method", "bca"],
            2,
            error=r"needs two or more runs in at least one task",
        ),
    ]


def curve_step_cases() -> list[Case]:
    """Learning curves over steps at the float limit: a finite grid (no inf/NaN steps), every figure drawn."""
    curve = ["--step-key", "step", "--curves"]  # the default curve replicates, as the probe ran

    def steps(first: float, last: float) -> bytes:
        rows = [
            (a, t, s, step, round(0.1 * a_i + 0.01 * s + 0.1 * k, 4))
            for a_i, a in enumerate(["A", "B"])
            for t in ("t1", "t2")
            for s in range(3)
            for k, step in enumerate((first, 1e307 * (1 + s), last))
        ]
        return _csv(rows, "algorithm,task,seed,step,score")

    return [
        Case(
            f"curve_steps_{label}",
            {"scores.csv": steps(first, last)},
            ["evaluate", "{dir}/scores.csv", *FAST, *curve, "--curve-points", str(points), "--out", "{dir}/out"],
            0,
            check="finite_curves",
            why=why,
            extra={"points": points},
        )
        for label, first, last, points, why in [
            ("up_to_1_7e308", 0.0, 1.7e308, 100_000, "100,000 evenly spaced steps up to the float limit"),
            ("span_overflows", -1.7e308, 1.7e308, 1000, "the span (3.4e308) overflowed a float: inf/NaN steps, exit 1"),
        ]
    ]


def tampered_folder_cases() -> list[Case]:
    """``rl-reliable report`` on a results folder edited after it was written: one line naming file and field."""
    written = [["evaluate", "{dir}/scores.csv", *FAST, "--no-figures", "--out", "{dir}/out"]]
    expected = {
        "aggregates_number": r"out/manifest\.json: the tables do not give the report_hash",
        "aggregates_text": r"out/aggregates\.csv: column 'point' holds text \('abc'\)",
        "aggregates_columns": r"out/aggregates\.csv: column\(s\) algorithm, .* missing",
        "aggregates_no_rows": r"out/aggregates\.csv: the table has no rows",
        "provenance_types": r"out/provenance\.json: field 'ci' is \"ninety-five\"",
        "provenance_deep": r"out/provenance\.json: unreadable JSON",
        "manifest_size_text": r"out/manifest\.json: unreadable manifest: files\[0\]\.size",
        "manifest_size_huge": r"out/manifest\.json: unreadable manifest: files\[0\]\.size .* is 'inf'",
        "manifest_size_null": r"out/manifest\.json: unreadable manifest: files\[0\]\.size",
        "manifest_size_list": r"out/manifest\.json: unreadable manifest: files\[0\]\.size",
        "manifest_deep": r"out/manifest\.json: unreadable manifest",
    }
    return [
        Case(
            f"report_{edit}",
            {"scores.csv": _csv(grid(["A", "B"]))},
            ["report", "{dir}/out", "--quiet"],
            2,
            error=pattern,
            before=written,
            tamper=edit,
        )
        for edit, pattern in expected.items()
    ]


def special_file_cases() -> list[Case]:
    """Inputs that are not regular files are refused before they are opened: a FIFO blocked ``evaluate`` forever,
    a link to ``/dev/zero`` would be read without end."""
    scores = {"scores.csv": _csv(grid(["A", "B"]))}
    special = r"is a FIFO \(named pipe\), not a regular file; give the path of the {} file itself$"
    plan = ["plan", "{dir}/in.csv", "--runs", "3", "--trials", "5", "--sim-reps", "50", "--quiet"]
    return [
        Case(
            "fifo_input",
            {},
            ["evaluate", "{dir}/in.csv", *FAST],
            2,
            error=r"in\.csv: " + special.format("score"),
            fifos=("in.csv",),
        ),
        Case(
            "fifo_json_input",
            {},
            ["evaluate", "{dir}/in.json.gz", *FAST],
            2,
            error=r"in\.json\.gz: is a FIFO",
            fifos=("in.json.gz",),
        ),
        Case("fifo_plan_input", {}, plan, 2, error=r"in\.csv: is a FIFO", fifos=("in.csv",)),
        Case(
            "fifo_reference_table",
            scores,
            ["evaluate", "{dir}/scores.csv", *FAST, "--normalize", "{dir}/refs.csv"],
            2,
            error=r"refs\.csv: " + special.format("reference table"),
            fifos=("refs.csv",),
        ),
        Case(
            "link_to_dev_zero",
            {},
            ["evaluate", "{dir}/zero.csv", *FAST],
            2,
            error=r"zero\.csv: is a character device, not a regular file",
            links={"zero.csv": "/dev/zero"},
        ),
        Case(
            "link_to_dev_null_parquet",
            {},
            ["evaluate", "{dir}/null.parquet", *FAST],
            2,
            error=r"null\.parquet: is a character device",
            links={"null.parquet": "/dev/null"},
        ),
    ]


def reserved_name_cases() -> list[Case]:
    """A task named like the ranks table's own mean-over-tasks row (``__average__``) is refused: ranks.csv held
    two indistinguishable rows per (algorithm, rank) and probabilities summing to 2."""
    return [
        Case(
            "reserved_task_average",
            {"scores.csv": _csv(grid(["A", "B"], ["t1", "__average__"]))},
            ["evaluate", "{dir}/scores.csv", *FAST],
            2,
            error=r"scores\.csv: task name '__average__' in task column 'task' is reserved",
        )
    ]


def write_case(case: Case, folder: Path) -> Path:
    """Write the case's files and symlinks into ``folder/<name>``; return that folder."""
    root = folder / case.name
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for rel, target in case.links.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target.replace("{dir}", str(root)))
    for rel in case.fifos:
        os.mkfifo(root / rel)
    return root


def prepare(case: Case, root: Path, run) -> None:
    """Run the case's ``before`` commands with ``run(argv) -> exit status`` and apply its ``tamper`` edit."""
    for command in case.before:
        status = run([a.replace("{dir}", str(root)) for a in command])
        assert status == 0, f"{case.name}: setup command failed: {command}"
    if case.tamper:
        globals()[f"tamper_{case.tamper}"](root)


# ---------------------------------------------------------------------------------------- tampering
def _rehash(folder: Path) -> None:
    """Rewrite the manifest's sizes and SHA-256 to match the files: a consistent edit, not a corrupt one."""
    import hashlib

    manifest = json.loads((folder / "manifest.json").read_text())
    for entry in manifest["files"]:
        data = (folder / entry["path"]).read_bytes()
        entry["size"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _edit_manifest_size(root: Path, value) -> None:
    manifest = json.loads((root / "out" / "manifest.json").read_text())
    manifest["files"][0]["size"] = value
    (root / "out" / "manifest.json").write_text(json.dumps(manifest))


def _edit_point(root: Path, change) -> None:
    """Change the point estimate of the first row of aggregates.csv, then make the manifest match."""
    path = root / "out" / "aggregates.csv"
    lines = path.read_text().splitlines()
    at = lines[0].split(",").index("point")
    cells = lines[1].split(",")
    cells[at] = change(cells[at])
    lines[1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    _rehash(root / "out")


def tamper_aggregates_number(root: Path) -> None:
    _edit_point(root, lambda v: str(float(v) + 0.5))


def tamper_aggregates_text(root: Path) -> None:
    _edit_point(root, lambda v: "abc")


def tamper_aggregates_columns(root: Path) -> None:
    (root / "out" / "aggregates.csv").write_text("a,b\n1,2\n")
    _rehash(root / "out")


def tamper_aggregates_no_rows(root: Path) -> None:
    path = root / "out" / "aggregates.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    _rehash(root / "out")


def tamper_provenance_types(root: Path) -> None:
    path = root / "out" / "provenance.json"
    provenance = json.loads(path.read_text())
    provenance["ci"] = "ninety-five"
    path.write_text(json.dumps(provenance))
    _rehash(root / "out")


def tamper_provenance_deep(root: Path) -> None:
    (root / "out" / "provenance.json").write_text('{"ci": ' + "[" * 50_000 + "]" * 50_000 + "}")
    _rehash(root / "out")


def tamper_manifest_size_text(root: Path) -> None:
    _edit_manifest_size(root, "12")


def tamper_manifest_size_huge(root: Path) -> None:
    _edit_manifest_size(root, 1e400)


def tamper_manifest_size_null(root: Path) -> None:
    _edit_manifest_size(root, None)


def tamper_manifest_size_list(root: Path) -> None:
    _edit_manifest_size(root, [1])


def tamper_manifest_deep(root: Path) -> None:
    (root / "out" / "manifest.json").write_text("[" * 50_000 + "]" * 50_000)


def tamper_killed_swap(root: Path) -> None:
    """What a writer killed between the two renames of the bundle swap leaves: no --out, the bundle aside."""
    import os
    import subprocess

    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True).stdout)
    aside = root / f".out.rl-reliable-old-{dead}-x"
    aside.mkdir()
    os.rename(root / "out", aside / "bundle")


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
