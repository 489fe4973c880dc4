"""Scalar points of a few tags from TensorBoard event files: our own reader of the documented record format.

An event file is a sequence of records (TensorFlow's TFRecord framing, which TensorBoard, tensorboardX, PyTorch
and TensorFlow all write), each::

    uint64 length (little-endian) | uint32 masked CRC32C of those 8 bytes | data (length bytes) | uint32 masked CRC32C of data

where the masked CRC32C of ``b`` is ``((c >> 15 | c << 17) + 0xa282ead8) mod 2³²``, ``c`` the CRC32C (Castagnoli)
of ``b``, and the data of a record is one serialised ``Event`` protocol buffer (the schema of
``tensorflow/core/util/event.proto``). The file is read in large blocks; each record's two checksums are checked
(in C, by ``google-crc32c``), and only records whose bytes contain a wanted tag are parsed, with TensorBoard's
compiled ``Event`` class (``tensorboard.compat.proto.event_pb2``, generated from that public schema; TensorBoard
documents no Python API for reading logs, and this module names no other TensorBoard module).

A record is checked before it is trusted: a length whose checksum fails, a record running past the end of the
file, a data checksum that fails or data that is no ``Event`` stop the reading, and the file is named with the
byte where that record starts (``damage``); nothing after it is read. The file is opened by the one opener,
:func:`~rl_reliable_logger.data.files.open_input` (a FIFO or a device is refused, never read).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from ...data.files import open_input
from ...errors import InputError

#: Bytes around each record's payload: its length (8), the length's checksum (4) and the payload's (4).
FRAMING = 16
#: TensorBoard's own rule for an event file: the name contains ``tfevents``.
MARKER = "tfevents"
#: Bytes read from the file at a time (a record longer than this is read whole, after its length is checked).
BLOCK_BYTES = 8 * 2**20
_HEADER = struct.Struct("<QI")  # the length and its masked checksum
_FOOTER = struct.Struct("<I")  # the data's masked checksum
_MASK_DELTA = 0xA282EAD8
_NO_LIMIT = 2**62  # the opener's size ceiling is for files read whole; records are read a block at a time
# TensorFlow's DataType codes of scalar tensors (the DataType enum of tensorflow/core/framework/types.proto)
_DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 9: np.int64, 19: np.float16}


@dataclass
class FileScalars:
    """The points read from one event file: ``points[tag]`` is a list of (step, value); ``damage`` says why
    reading stopped before the end of the file (None when the whole file was read)."""

    path: str
    points: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    damage: str | None = None
    #: the wall time (seconds since the epoch) of the first event read with a wanted tag: when the run logged it
    started: float | None = None


class RecordDamage(Exception):
    """A record that cannot be trusted: ``kind`` is ``truncated`` or ``damaged``, ``offset`` the byte where the
    record starts, ``detail`` what is wrong with it; ``str()`` is the phrase ``read_scalars`` reports."""

    def __init__(self, kind: str, offset: int, detail: str) -> None:
        super().__init__(f"{kind} at byte {offset}: {detail}")
        self.kind, self.offset, self.detail = kind, offset, detail


def is_event_file(name: str) -> bool:
    """True for a file TensorBoard would read as an event file."""
    return MARKER in name


def _libraries() -> tuple[Callable[[bytes], int], Any, type[Exception]]:
    """(CRC32C of bytes, the ``Event`` class, protobuf's DecodeError), or the one sentence saying what to install."""
    try:
        import google_crc32c
        from google.protobuf.message import DecodeError
        from tensorboard.compat.proto import event_pb2
    except ImportError as err:
        raise InputError(
            f"reading TensorBoard event files needs the tensorboard extra ({err}): "
            "pip install 'rl_reliable_logger[tensorboard]'"
        ) from None
    return google_crc32c.value, event_pb2.Event, DecodeError


def masked_crc32c(crc32c: Callable[[bytes], int], data: bytes) -> int:
    """The masked CRC32C a record stores for ``data`` (see the module docstring)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def records(fh: BinaryIO, size: int, crc32c: Callable[[bytes], int]) -> Iterator[tuple[int, bytes]]:
    """``(offset, data)`` of every record of the open event file ``fh`` of ``size`` bytes, each checked; raises
    :class:`RecordDamage` at the first record that is truncated or fails a checksum."""
    buf, base, pos = b"", 0, 0  # buf holds the file's bytes [base, base + len(buf)); pos: the next record in buf
    while True:
        if len(buf) - pos < 12:  # the next header is not whole in the buffer
            left = len(buf) - pos
            buf, base, pos = buf[pos:] + fh.read(max(BLOCK_BYTES, 12 - left)), base + pos, 0
            if not buf:
                return
            if len(buf) < 12:
                raise RecordDamage("truncated", base, f"the file ends {len(buf)} bytes into the 12-byte header there")
        length, length_crc = _HEADER.unpack_from(buf, pos)
        if masked_crc32c(crc32c, buf[pos : pos + 8]) != length_crc:
            raise RecordDamage("damaged", base + pos, "the length field of the record there fails its checksum")
        end = pos + 12 + length + 4
        if end > len(buf):
            if base + end > size:
                raise RecordDamage(
                    "truncated",
                    base + pos,
                    f"the record there ({length + FRAMING:,} bytes) runs past the end of the file ({size:,} bytes)",
                )
            need = end - pos  # the whole record, from its start
            buf, base, pos = buf[pos:] + fh.read(max(BLOCK_BYTES, end - len(buf))), base + pos, 0
            if len(buf) < need:  # the file shrank while it was read
                raise RecordDamage("truncated", base, "the file ended while it was read")
            continue
        data = buf[pos + 12 : pos + 12 + length]
        if masked_crc32c(crc32c, data) != _FOOTER.unpack_from(buf, pos + 12 + length)[0]:
            raise RecordDamage("damaged", base + pos, "the data of the record there fails its checksum")
        yield base + pos, data
        pos = end


def _scalar(value: Any) -> float | None:
    """The number in a summary value: ``simple_value`` (tensorboardX, PyTorch) or a scalar tensor (TF 2,
    ``tensorboard.summary.Writer``); None for anything else (images, histograms, non-scalar tensors)."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind != "tensor":
        return None
    tensor = value.tensor
    dtype = _DTYPES.get(int(tensor.dtype))
    if dtype is None or len(tensor.tensor_shape.dim) > 0:
        return None
    if tensor.tensor_content:
        kind = np.dtype(dtype).newbyteorder("<")
        if len(tensor.tensor_content) != kind.itemsize:  # a scalar holds exactly one value (checksums hold anyway)
            raise ValueError(
                f"a scalar {kind.name} tensor of tag {value.tag!r} holds {len(tensor.tensor_content)} bytes, "
                f"not {kind.itemsize}"
            )
        return float(np.frombuffer(tensor.tensor_content, dtype=kind)[0])
    for name in ("float_val", "double_val", "int_val", "int64_val", "half_val"):
        values = getattr(tensor, name)
        if len(values) == 1:
            if name == "half_val":  # float16 bits stored in an int
                return float(np.array([values[0]], dtype=np.uint16).view(np.float16)[0])
            return float(values[0])
    return None


def read_scalars(path: str, tags: Collection[str]) -> FileScalars:
    """The (step, value) points of ``tags`` in the event file ``path``, in file order.

    Only the wanted tags' points are kept; a damaged or truncated file gets ``damage`` set, one phrase naming the
    byte where the bad record starts (its points up to the damage are returned but must not be used as a complete
    run). A FIFO, a device or a directory is refused (:class:`~rl_reliable_logger.errors.InputError`), never read.
    """
    crc32c, event_class, decode_error = _libraries()
    out = FileScalars(path)
    wanted = set(tags)
    needles = [tag.encode("utf-8") for tag in wanted]  # a record can hold a tag only if its bytes contain it
    offset = 0
    try:
        with open_input(path, "event", max_bytes=_NO_LIMIT) as fh:  # read in blocks: any size fits
            size = os.fstat(fh.fileno()).st_size
            for record in records(fh, size, crc32c):
                offset, data = record  # offset: named if the record's data is no Event
                if not any(needle in data for needle in needles):
                    continue
                event = event_class.FromString(data)
                if not event.HasField("summary"):
                    continue
                if out.started is None and event.wall_time > 0:
                    out.started = float(event.wall_time)
                for value in event.summary.value:
                    if value.tag in wanted:
                        number = _scalar(value)
                        if number is not None:
                            out.points.setdefault(value.tag, []).append((float(event.step), number))
    except OSError as err:
        out.damage = f"cannot be read ({err.strerror or err})"
    except RecordDamage as err:
        out.damage = str(err)
    except decode_error as err:  # a record whose checksums hold but whose bytes are no Event
        out.damage = str(RecordDamage("damaged", offset, f"the record there is no event ({type(err).__name__})"))
    except ValueError as err:  # an Event whose scalar tensor is malformed
        out.damage = str(RecordDamage("damaged", offset, str(err)))
    return out
