"""The one JSON reader, the one CSV row reader and the folder walk of ``data/`` (issue 54): every shape a log
should never have refused in one sentence naming the file (and the key, number or line), never a library's own
exception; small files read under a tight address-space limit; 1,100 nested folders listed without recursion."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from rl_reliable_logger.data.csvrows import csv_records
from rl_reliable_logger.data.files import walk
from rl_reliable_logger.data.jsontext import loads, read_json
from rl_reliable_logger.errors import InputError
from tests.support.deep import nested
from tests.support.paths import REPO


@pytest.mark.parametrize(
    "text, says",
    [
        ('{"e": {"score": 1, "score": 2}}', r"run\.json: key 'score' appears twice in one object \(1 and 2\)"),
        ('{"score": ' + "1" + "0" * 399 + "}", r"run\.json: the integer 1000.* \(400 digits\) is too large"),
        ('{"score": ' + "9" * 5000 + "}", r"run\.json: the integer 9999.* \(5,000 digits\) is too large"),
        ('{"score": -' + "9" * 309 + "}", r"\(309 digits\) is too large"),
        ("[" * 100_000 + "]" * 100_000, r"run\.json: the JSON is nested too deeply"),
        ('{"score": ', r"run\.json: invalid JSON at line 1 column 11"),
    ],
    ids=["duplicate-key", "400-digits", "5000-digits", "309-digits", "deep", "cut"],
)
def test_json_that_cannot_be_read_without_guessing_is_one_sentence(tmp_path, text, says):
    path = tmp_path / "run.json"
    path.write_text(text)
    with pytest.raises(InputError, match=says):
        read_json(path, "run")


def test_json_numbers_a_float_holds_are_read_as_written():
    assert loads('{"a": 1' + "0" * 300 + ', "b": 1e308, "c": NaN}', "x")["a"] == 10**300
    assert loads('{"a": [1, 2]}', "x") == {"a": [1, 2]}


@pytest.mark.parametrize(
    "lines, says",
    [
        (["r,l,r", "1,2,3"], r"column 'r' appears twice in the header \(columns 1 and 3\)"),
        (["r,l,t", "1,2"], r"row 0 \(line 3\) has 2 field\(s\) but the header has 3"),
        (["r,l,t", "1,2,3,4"], r"row 0 \(line 3\) has 4 field\(s\)"),
        (["r,l,t", "1,2", "1,2,3"], r"row 0 \(line 3\) has 2 field\(s\)"),
        (["r,l,t", "x" * 131_073 + ",1,2"], r"line 3 has a field longer than 131,072 characters"),
    ],
    ids=["column-twice", "short-row", "long-row", "short-row-then-more", "huge-field"],
)
def test_csv_shapes_a_log_never_has_are_named_by_line(lines, says):
    with pytest.raises(InputError, match=says):
        list(csv_records([line + "\n" for line in lines], "monitor.csv", first_line=2))


def test_a_short_last_row_is_allowed_only_when_asked():
    rows = list(csv_records(["a,b\n", "1,2\n", "3\n"], "p.csv", short_last=True))
    assert rows == [(1, ["a", "b"]), (2, ["1", "2"]), (3, ["3"])]


def test_walk_lists_1100_nested_folders_without_recursion(tmp_path):
    with nested(tmp_path, 1100) as here:
        (here / "evaluations.npz").write_bytes(b"")
        found = [(folder, files) for folder, files in walk(tmp_path) if files]
    assert found == [("/".join(["a"] * 1100), ["evaluations.npz"])]


def test_walk_does_not_follow_a_folder_link(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.json").write_text("{}")
    os.symlink(tmp_path, tmp_path / "b" / "loop")
    assert list(walk(tmp_path)) == [(".", []), ("b", ["loop", "x.json"])]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc")
def test_a_small_file_is_read_under_a_2_gb_address_space_limit(tmp_path):
    """The reader reserved max_bytes (2 GB for marl-eval, 8 GB by default) before reading a byte."""
    path = tmp_path / "m.json"
    path.write_text('{"a": 1}')
    code = (
        "from rl_reliable_logger.data.files import read_text; from rl_reliable_logger.trackers.marl_eval.files "
        f"import MAX_BYTES; print(read_text({str(path)!r}, max_bytes=MAX_BYTES), read_text({str(path)!r}))"
    )

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=cap,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.split() == ['{"a":', "1}", '{"a":', "1}"], done.stderr
