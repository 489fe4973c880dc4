"""Names that collide with an output table's own rows or columns: refused when they would be indistinguishable
(:data:`~rl_reliable_logger.data.names.RESERVED`), kept apart everywhere else.

``ranks.csv`` holds a row per (algorithm, ``__average__``, rank) for the mean over tasks: a real task of that name
gave two indistinguishable rows whose probabilities summed to 2, with exit 0. Every other table keeps names in
their own columns, so a name equal to a column of any table (``task``, ``point``, ``n_runs``...) must come back
unchanged from every table and every output format."""

from __future__ import annotations

import csv
import io
import unicodedata

import pandas as pd
import pytest

from rl_reliable_logger.analysis.report import REPORT_TABLES, Report
from rl_reliable_logger.cli.main import main
from rl_reliable_logger.data.names import RESERVED
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import InputError

FAST = ["--reps", "100", "--profile-reps", "50", "--improvement-reps", "50", "--seed", "0", "--quiet"]
RESERVED_CASES = [(field, name) for field, names in RESERVED.items() for name in names]


def _frame(algorithms: list[str], tasks: list[str]) -> pd.DataFrame:
    rows = [
        (alg, task, seed, round(0.1 * a + 0.05 * t + 0.01 * seed, 4))
        for a, alg in enumerate(algorithms)
        for t, task in enumerate(tasks)
        for seed in range(3)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "task", "seed", "score"])


def _csv(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame.to_csv(buf, index=False, quoting=csv.QUOTE_MINIMAL)
    return buf.getvalue().encode()


@pytest.mark.parametrize("field, name", RESERVED_CASES)
def test_every_reserved_name_is_refused_in_its_field(field, name, tmp_path, capsys):
    names = {"algorithm": ["A", "B"], "task": ["t1", "t2"]}
    names[field] = [*names[field][:1], name]
    with pytest.raises(InputError, match=rf"{field} name '{name}' in .* is reserved"):
        ScoreTable(_frame(names["algorithm"], names["task"]))
    # as a reader sees it: a full-width spelling of the same name is refused too
    wide = unicodedata.normalize("NFKC", name).translate({ord("_"): "\uff3f"})
    names[field] = [*names[field][:1], wide]
    with pytest.raises(InputError, match="is reserved"):
        ScoreTable(_frame(names["algorithm"], names["task"]))
    names[field] = [*names[field][:1], name]
    path = tmp_path / "scores.csv"
    path.write_bytes(_csv(_frame(names["algorithm"], names["task"])))
    assert main(["evaluate", str(path), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: {field} name '{name}'") and "reserved" in err, err


def test_names_equal_to_the_columns_of_every_table_are_kept_apart(tmp_path, capsys):
    """Algorithms and tasks named after every column of every Report table: each table and format holds them
    as names (report.html's per-task table used to fail with "cannot insert task, already exists")."""
    text_columns = sorted({c for spec in REPORT_TABLES for c in spec.text_columns})
    algorithms = ["A", *text_columns, "index", "level_0", "cell", "n_runs", "point", "rank", "probability"]
    tasks = ["t", "algorithm", "task", "index", "metric"]
    path = tmp_path / "scores.csv"
    path.write_bytes(_csv(_frame(algorithms, tasks)))
    out = tmp_path / "out"
    assert main(["evaluate", str(path), *FAST, "--jordan", "--compare-all", "--out", str(out)]) == 0, (
        capsys.readouterr().err
    )
    report = Report.load(out)
    assert report.algorithms == sorted(algorithms)  # the tables' order: sorted names (issue 43)
    assert set(report.per_task["task"]) == set(tasks)
    ranks = report.ranks
    assert set(ranks["task"]) == {*tasks, "__average__"}
    for (alg, task), sub in ranks.groupby(["algorithm", "task"]):
        assert sub["rank"].is_unique and abs(sub["probability"].sum() - 1) < 1e-9, (alg, task)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "could not be drawn" not in html
    md = [line for line in (out / "table.md").read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    assert len(md) == 2 + len(algorithms)
    assert main(["report", str(out)]) == 0
