"""The one opener (``data/files.py``, issue 41): regular files only, refused by name before anything blocks."""

from __future__ import annotations

import os

import pytest

from rl_reliable_logger.data.files import check_regular_file, open_input, read_text
from rl_reliable_logger.errors import InputError


def test_a_regular_file_is_read_by_relative_and_absolute_path(tmp_path, monkeypatch):
    (tmp_path / "run.json").write_text('{"a": 1}')
    monkeypatch.chdir(tmp_path)
    assert read_text("run.json", "run") == read_text(tmp_path / "run.json", "run") == '{"a": 1}'
    os.symlink("run.json", tmp_path / "link.json")
    assert read_text("link.json", "run") == '{"a": 1}'


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda p: os.mkfifo(p), r"is a FIFO \(named pipe\), not a regular file"),
        (lambda p: os.symlink("/dev/zero", p), "is a character device, not a regular file"),
        (lambda p: os.symlink(p.name, p), "is a symbolic link loop"),
        (lambda p: p.mkdir(), "is a directory, not a regular file"),
    ],
)
def test_what_is_no_regular_file_is_refused_by_name(tmp_path, make, says):
    path = tmp_path / "events.out.tfevents.1"
    make(path)
    for call in (lambda: check_regular_file(path, "event"), lambda: open_input(path, "event")):
        with pytest.raises(InputError, match=says) as err:
            call()
        assert str(path) in str(err.value) and "event file" in str(err.value)


def test_a_missing_file_passes_the_check_and_is_named_by_the_opener(tmp_path):
    check_regular_file(tmp_path / "absent.json")
    with pytest.raises(InputError, match="absent.json: no such run file"):
        open_input(tmp_path / "absent.json", "run")


def test_a_file_larger_than_its_format_holds_is_refused_with_its_size(tmp_path):
    (tmp_path / "big.json").write_bytes(b"x" * 100)
    with pytest.raises(InputError, match=r"big.json: is 100 bytes, more than any state file should hold \(10\)"):
        read_text(tmp_path / "big.json", "state", max_bytes=10)


def test_text_that_is_not_utf8_is_named_with_its_byte(tmp_path):
    (tmp_path / "bad.json").write_bytes(b'{"a": "\xff"}')
    with pytest.raises(InputError, match=r"bad.json: the run file is not UTF-8 text \(byte 7\)"):
        read_text(tmp_path / "bad.json", "run")
