"""The event-file reader (issue 44 item 2, issue 41's TensorBoard cases): TensorBoard's record format read by our
own code, each record checked, a bad record named by the byte where it starts, FIFOs and devices refused."""

from __future__ import annotations

import os
import struct
import threading
from pathlib import Path

import pytest

pytest.importorskip(
    "tensorboard", reason="TensorBoard is not installed (pip install 'rl_reliable_logger[tensorboard]')"
)
tensorboardX = pytest.importorskip("tensorboardX", reason="tensorboardX is not installed (a dev dependency)")

from tensorboard.compat.proto import event_pb2, summary_pb2  # noqa: E402

from rl_reliable_logger import InputError  # noqa: E402
from rl_reliable_logger.trackers.tensorboard import tensorboard_table  # noqa: E402
from rl_reliable_logger.trackers.tensorboard.events import read_scalars  # noqa: E402
from tests.trackers.tensorboard.records import masked, record  # noqa: E402

TAG = "eval/return"


def _event(step: int, tag: str, value: float) -> bytes:
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
    return event_pb2.Event(step=step, wall_time=1.0, summary=summary).SerializeToString()


def _log(path: Path, steps: int = 5) -> list[int]:
    """An event file written by tensorboardX (two tags a step); returns where each record starts."""
    writer = tensorboardX.SummaryWriter(str(path.parent))
    for step in range(steps):
        writer.add_scalar(TAG, 0.5 * step, step)
        writer.add_scalar("train/loss", 1.0, step)
    writer.close()
    (found,) = path.parent.glob("*tfevents*")
    found.rename(path)
    data, starts, pos = path.read_bytes(), [], 0
    while pos < len(data):
        starts.append(pos)
        pos += 16 + struct.unpack_from("<Q", data, pos)[0]
    assert pos == len(data)
    return starts


def test_every_record_is_read_and_only_the_wanted_tag_kept(tmp_path):
    path = tmp_path / "run" / "events.out.tfevents.1.host"
    _log(path, steps=40)
    got = read_scalars(str(path), [TAG])
    assert got.damage is None
    assert got.points == {TAG: [(float(s), 0.5 * s) for s in range(40)]}
    assert read_scalars(str(path), ["not/there"]).points == {}


def test_records_framed_by_hand_are_read(tmp_path):
    """The documented framing written independently of every writer: values, steps and an empty record."""
    path = tmp_path / "events.out.tfevents.2.host"
    path.write_bytes(record(_event(3, TAG, 1.5)) + record(b"") + record(_event(7, TAG, -2.0)))
    assert read_scalars(str(path), [TAG]).points == {TAG: [(3.0, 1.5), (7.0, -2.0)]}
    empty = tmp_path / "events.out.tfevents.empty"
    empty.write_bytes(b"")  # a file created but never written: no records, no damage
    got = read_scalars(str(empty), [TAG])
    assert got.points == {} and got.damage is None


@pytest.mark.parametrize("where", [1, 4, -1])
def test_a_corrupt_length_field_is_named_by_its_record(tmp_path, where):
    """A flipped bit in a length: the length's checksum fails; never read as a huge allocation."""
    path = tmp_path / "run" / "events.out.tfevents.1.host"
    starts = _log(path)
    data = bytearray(path.read_bytes())
    data[starts[where] + 7] ^= 0x40  # the length's top byte: 2**62 more bytes
    path.write_bytes(bytes(data))
    got = read_scalars(str(path), [TAG])
    assert got.damage == f"damaged at byte {starts[where]}: the length field of the record there fails its checksum"


def test_a_huge_length_with_a_valid_checksum_is_truncation_not_memory(tmp_path):
    path = tmp_path / "events.out.tfevents.1.host"
    first = record(_event(0, TAG, 1.0))
    path.write_bytes(first + record(b"x" * 10, length=2**62))
    got = read_scalars(str(path), [TAG])
    assert got.damage is not None and got.damage.startswith(f"truncated at byte {len(first)}: the record there (")
    assert f"runs past the end of the file ({len(first) + 26:,} bytes)" in got.damage


@pytest.mark.parametrize("where", [1, 3])
def test_a_record_whose_data_fails_its_checksum_is_located_at_its_start(tmp_path, where):
    """The bad record in the middle of the file is named, not the file's end."""
    path = tmp_path / "run" / "events.out.tfevents.1.host"
    starts = _log(path)
    data = bytearray(path.read_bytes())
    data[starts[where] + 14] ^= 0x01  # a byte of that record's data
    path.write_bytes(bytes(data))
    got = read_scalars(str(path), [TAG])
    assert got.damage == f"damaged at byte {starts[where]}: the data of the record there fails its checksum"


@pytest.mark.parametrize("cut", [1, 5, 13, 20])
def test_a_truncated_file_is_named_by_its_last_record(tmp_path, cut):
    path = tmp_path / "run" / "events.out.tfevents.1.host"
    starts = _log(path)
    data = path.read_bytes()
    path.write_bytes(data[:-cut] if cut < len(data) - starts[-1] else data[: starts[-1] + 5])
    got = read_scalars(str(path), [TAG])
    assert got.damage is not None and got.damage.startswith(f"truncated at byte {starts[-1]}: ")


def test_a_record_that_parses_as_no_event_is_named(tmp_path):
    path = tmp_path / "events.out.tfevents.1.host"
    first = record(_event(0, TAG, 1.0))
    path.write_bytes(first + record(b"\xff\xff" + TAG.encode()))
    got = read_scalars(str(path), [TAG])
    assert got.damage == f"damaged at byte {len(first)}: the record there is no event (DecodeError)"


def test_the_framing_checksum_is_tensorflows(tmp_path):
    """The mask of the checksum is TensorFlow's: a known CRC32C (RFC 3720's test vector) masked by hand."""
    assert masked(b"123456789") == ((((0xE3069283 >> 15) | (0xE3069283 << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_like_an_event_file_is_refused_without_blocking(tmp_path):
    run = tmp_path / "A" / "x" / "seed_0"
    _log(run / "events.out.tfevents.1.host")
    os.mkfifo(tmp_path / "A" / "x" / "seed_0" / "events.out.tfevents.2.host")
    result: dict = {}

    def read() -> None:
        try:
            tensorboard_table(tmp_path, score_key=TAG)
        except InputError as err:
            result["error"] = str(err)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "reading a FIFO blocked"
    assert "events.out.tfevents.2.host" in result["error"] and "FIFO" in result["error"]
    assert "\n" not in result["error"]


def test_a_link_to_a_device_is_refused(tmp_path):
    run = tmp_path / "A" / "x" / "seed_0"
    _log(run / "events.out.tfevents.1.host")
    (run / "events.out.tfevents.2.host").symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"events\.out\.tfevents\.2\.host.*character device"):
        tensorboard_table(tmp_path, score_key=TAG)


@pytest.mark.parametrize("block", [1, 7, 13, 64, 1000])
def test_records_across_block_boundaries_are_read_whole(tmp_path, monkeypatch, block):
    """The file is read in blocks: a record cut by a block's end is completed from the next, up to the file's end."""
    from rl_reliable_logger.trackers.tensorboard import events

    path = tmp_path / "run" / "events.out.tfevents.1.host"
    _log(path, steps=30)
    whole = read_scalars(str(path), [TAG])
    monkeypatch.setattr(events, "BLOCK_BYTES", block)
    assert read_scalars(str(path), [TAG]) == whole
    path.write_bytes(path.read_bytes()[:-3])
    assert read_scalars(str(path), [TAG]).damage is not None


def _tensor_event(step: int, content: bytes, dtype: int = 1) -> bytes:
    from tensorboard.compat.proto import tensor_pb2

    tensor = tensor_pb2.TensorProto(dtype=dtype, tensor_content=content)
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=TAG, tensor=tensor)])
    return event_pb2.Event(step=step, wall_time=1.0, summary=summary).SerializeToString()


@pytest.mark.parametrize("size", [0, 3, 5, 8])
def test_a_scalar_tensor_of_the_wrong_size_with_valid_checksums_is_named(tmp_path, size):
    """A float32 scalar holds 4 bytes: any other size is damage at its record (numpy's frombuffer raised)."""
    path = tmp_path / "events.out.tfevents.3.host"
    good = record(_tensor_event(1, struct.pack("<f", 1.5)))
    path.write_bytes(good + record(_tensor_event(2, b"\x00" * size)))
    got = read_scalars(str(path), [TAG])
    if size == 0:  # no content: not a scalar of this writer, skipped as before
        assert got.damage is None and got.points == {TAG: [(1.0, 1.5)]}
        return
    assert (
        got.damage == f"damaged at byte {len(good)}: a scalar float32 tensor of tag {TAG!r} holds {size} bytes, not 4"
    )
