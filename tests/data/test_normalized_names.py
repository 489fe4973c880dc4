"""``names="normalize"`` never merges two names: two different input names that normalise to one (``'B '`` and
``'B'``, NFD and NFC) are one error naming both, whatever ``on_invalid`` is, before duplicates are looked for."""

from __future__ import annotations

import unicodedata

import pandas as pd
import pytest

from rl_reliable_logger.cli.flags import cli_message
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import InputError


def _grid(algorithms=("A", "B"), tasks=("t1", "t2", "t3"), seeds=5) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"algorithm": a, "task": t, "seed": s, "score": 1.0 + i + 0.1 * j + 0.01 * s}
            for i, a in enumerate(algorithms)
            for j, t in enumerate(tasks)
            for s in range(seeds)
        ]
    )


@pytest.mark.parametrize("on_invalid", ["raise", "drop"])
def test_two_algorithms_that_normalise_to_one_name_are_an_error_naming_both(on_invalid):
    frame = _grid(algorithms=("B ", "B"))  # the tester's nm12.csv: A renamed 'B '
    with pytest.raises(InputError) as err:
        ScoreTable(frame, names="normalize", on_invalid=on_invalid)  # was: one algorithm 'B', 15 runs dropped
    text = str(err.value)
    assert "\n" not in text and "'B ' (row(s) 0, 1," in text and "and 'B' (row(s) 15, 16," in text, text
    assert "algorithm column 'algorithm'" in text and "never merged" in text, text
    assert "duplicate seed" not in text, text
    assert "--normalize-names" in cli_message(err.value)


@pytest.mark.parametrize("on_invalid", ["raise", "drop"])
def test_two_tasks_that_normalise_to_one_name_are_an_error_naming_both(on_invalid):
    frame = _grid()
    frame.loc[frame["task"] == "t1", "task"] = " t2"
    with pytest.raises(InputError, match=r"task names ' t2' \(row\(s\) .*\) and 't2' \(row\(s\) .*\) in task column"):
        ScoreTable(frame, names="normalize", on_invalid=on_invalid)


def test_nfc_and_nfd_spellings_in_one_input_are_not_merged():
    nfc, nfd = unicodedata.normalize("NFC", "Café"), unicodedata.normalize("NFD", "Café")
    with pytest.raises(InputError, match="both become"):
        ScoreTable(_grid(algorithms=(nfd, nfc)), names="normalize", on_invalid="drop")
    with pytest.raises(InputError, match="print the same") as err:  # strict mode no longer offers a merge
        ScoreTable(_grid(algorithms=(nfd, nfc)))
    assert "normalize" not in str(err.value)


def test_a_name_rewritten_alone_is_still_accepted():
    table = ScoreTable(_grid(algorithms=("A", "B ")), names="normalize")
    assert table.algorithms == ["A", "B"] and len(table.frame) == 30 and table.dropped.empty
    assert table.source["name_rewrites"] == ["algorithm name 'B ' normalised to 'B'"]
