"""Reading SB3's evaluations.npz and monitor.csv files: exact arrays, and one sentence for every bad file."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest

from rl_reliable_logger.errors import InputError
from rl_reliable_logger.trackers.sb3.files import read_evaluations, read_monitor
from tests.support.rl_logs import write_evaluations, write_monitor


def test_evaluations_as_evalcallback_writes_them(tmp_path):
    path = write_evaluations(tmp_path, [500, 1000], [[1.0, 2.0, 4.0], [5.0, 5.5, 6.0]], [[1, 0, 0], [1, 1, 0]])
    ev = read_evaluations(path)
    assert ev.timesteps.tolist() == [500, 1000]
    assert ev.mean_returns() == pytest.approx([7 / 3, 5.5])
    assert ev.successes is not None and ev.successes.sum(axis=1).tolist() == [1, 2]
    assert ev.ep_lengths is not None and ev.ep_lengths.shape == (2, 3)


def _npz(path, **members: bytes) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    return str(path)


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=True)
    return buf.getvalue()


def test_an_object_array_is_refused_and_never_unpickled(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "pwned"),))

    payload = np.empty(1, dtype=object)
    payload[0] = Boom()
    path = _npz(tmp_path / "evaluations.npz", timesteps=_npy(np.array([1])), results=_npy(payload))
    with pytest.raises(InputError, match="never unpickled"):
        read_evaluations(path)
    assert not (tmp_path / "pwned").exists()


def test_a_header_claiming_terabytes_is_named_not_allocated(tmp_path):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 5)})
    buf.write(b"\0" * 80)
    path = _npz(tmp_path / "evaluations.npz", timesteps=_npy(np.array([1])), results=buf.getvalue())
    with pytest.raises(InputError, match=r"claims 40,000,000,000,000 bytes of data but holds 80"):
        read_evaluations(path)


@pytest.mark.parametrize(
    "members, words",
    [
        ({"results": np.ones((2, 3))}, "has no timesteps array"),
        ({"timesteps": np.array([1, 2]), "results": np.ones((3, 3))}, "one row of episode returns per evaluation"),
        ({"timesteps": np.array([2, 1]), "results": np.ones((2, 3))}, "timesteps go backwards"),
        ({"timesteps": np.array([1, 2]), "results": np.array([[1.0, np.nan], [1, 2]])}, "not finite numbers"),
        (
            {"timesteps": np.array([1, 2]), "results": np.ones((2, 3)), "successes": np.ones((2, 2), bool)},
            "successes has shape",
        ),
        (
            {"timesteps": np.array([1, 2]), "results": np.ones((2, 2)), "successes": np.full((2, 2), 3)},
            "true/false",
        ),
    ],
)
def test_inconsistent_arrays_are_one_sentence(tmp_path, members, words):
    path = _npz(tmp_path / "evaluations.npz", **{k: _npy(v) for k, v in members.items()})
    with pytest.raises(InputError, match=words) as err:
        read_evaluations(path)
    assert str(err.value).startswith(str(path))


def test_a_truncated_archive_is_named(tmp_path):
    path = write_evaluations(tmp_path, [1, 2], [[1.0], [2.0]])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="not a readable .npz archive"):
        read_evaluations(path)


def test_a_fifo_is_refused_before_opening(tmp_path):
    fifo = tmp_path / "evaluations.npz"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        read_evaluations(fifo)


def test_monitor_files_of_several_workers_merge_by_end_time(tmp_path):
    a = write_monitor(tmp_path, [1.0, 2.0, 3.0], [10, 20, 30], rank=0, t_start=100.0)
    b = write_monitor(tmp_path, [10.0, 20.0], [5, 5], rank=1, t_start=100.75, info={"is_success": [True, False]})
    with pytest.raises(InputError, match="has no is_success column, which the run's other monitor files have"):
        read_monitor([a, b])
    b = write_monitor(tmp_path, [10.0, 20.0], [5, 5], rank=1, t_start=100.75)
    log = read_monitor([a, b])
    # ends: a at 100.5, 101, 101.5; b at 101.25, 101.75
    assert log.returns.tolist() == [1.0, 2.0, 10.0, 3.0, 20.0]
    assert log.timesteps().tolist() == [10, 30, 35, 65, 70]


def test_monitor_success_column(tmp_path):
    path = write_monitor(tmp_path, [1.0, 2.0, 3.0], info={"is_success": [True, False, True]})
    log = read_monitor([path])
    assert log.extras["is_success"].tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize(
    "text, words",
    [
        ("r,l,t\n1,2,3\n", "no SB3 header line"),
        ('#{"t_start": 0}\nx,y\n1,2\n', "no r, l, t columns"),
        ('#{"t_start": 0}\nr,l,t\n1,2,3\nnan,2,3\n', "line 4: r is 'nan'"),
        ('#{"t_start": "soon"}\nr,l,t\n1,2,3\n', "damaged header line"),
    ],
)
def test_bad_monitor_files_name_file_and_line(tmp_path, text, words):
    path = tmp_path / "monitor.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=words):
        read_monitor([path])


def test_a_flipped_byte_in_the_data_is_an_error_never_a_wrong_number(tmp_path):
    path = write_evaluations(tmp_path, [1, 2], [[12345.678, 1.0], [2.0, 3.0]])
    data = bytearray(path.read_bytes())
    at = bytes(data).index(np.float64(12345.678).tobytes())
    data[at + 3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="not a readable .npz archive"):
        read_evaluations(path)
