"""The intake's messages say what the file holds: column names whose whitespace would vanish are quoted, the article
agrees with the field, and a header read as one column says which separator the file seems to use."""

from __future__ import annotations

import pandas as pd
import pytest

from rl_reliable_logger.data.normalize import get_normalizer
from rl_reliable_logger.data.scores import ScoreTable
from rl_reliable_logger.errors import InputError

ROWS = "A,t1,0,1.0\nA,t1,1,2.0\nB,t1,0,1.5\nB,t1,1,2.5\n"


def test_a_column_name_with_whitespace_is_quoted_in_the_list_of_columns(tmp_path):
    path = tmp_path / "sphdr.csv"
    path.write_text("algorithm,task,seed, score\n" + ROWS)
    with pytest.raises(InputError) as err:
        ScoreTable.from_csv(path)
    assert "The input has: algorithm, task, seed, ' score'." in str(err.value), str(err.value)  # was: seed, score
    with pytest.raises(InputError, match=r"hyperparameter column.* \(it has: .*, score, 'lr '\)"):
        ScoreTable(pd.read_csv(tmp_path / "sphdr.csv").set_axis(["algorithm", "task", "seed", "lr "], axis=1).assign(
            score=1.0), hyperparameter_keys=["lr"])  # fmt: skip
    (tmp_path / "refs.csv").write_text("task,low, high\nt1,0,1\n")
    with pytest.raises(InputError, match=r"\(it has task, low, ' high'\)"):
        get_normalizer(tmp_path / "refs.csv")


@pytest.mark.parametrize("field, words", [("algorithm", "needs an algorithm;"), ("task", "needs a task;")])
def test_the_article_agrees_with_the_field(field, words):
    frame = pd.DataFrame({"algorithm": ["A", "A"], "task": ["t1", "t1"], "seed": [0, 1], "score": [1.0, 2.0]})
    frame.loc[0, field] = ""
    with pytest.raises(InputError, match=f"every run {words}"):  # was: "every run needs a algorithm"
        ScoreTable(frame)


@pytest.mark.parametrize(
    "name, header, said",
    [
        ("semi.csv", "algorithm;task;seed;score", "seems to use ';' as separator, not ','; save it comma-separated"),
        ("tabs.csv", "algorithm\ttask\tseed\tscore", "seems to use a tab as separator, not ','; name it .tsv"),
        ("commas.tsv", "algorithm,task,seed,score", "seems to use ',' as separator, not a tab; name it .csv"),
    ],
)
def test_a_header_read_as_one_column_names_the_separator_the_file_seems_to_use(tmp_path, name, header, said):
    path = tmp_path / name
    sep = header[len("algorithm")]
    path.write_text(header + "\n" + ROWS.replace(",", sep))
    with pytest.raises(InputError) as err:
        ScoreTable.from_csv(path)
    text = str(err.value)
    assert "\n" not in text and f"the header is one column, {header!r}: the file {said}" in text, text


def test_a_folder_given_as_the_score_file_is_named_a_folder(tmp_path):
    """A folder is no score file: the message says so (not "cannot tell the format") and names the readers of logs."""
    import pytest

    from rl_reliable_logger import ScoreTable
    from rl_reliable_logger.errors import ScoreTableError

    with pytest.raises(ScoreTableError, match=r"is a folder, not a score file: give a \.csv") as err:
        ScoreTable.from_file(tmp_path)
    assert "cannot tell the format" not in str(err.value)
