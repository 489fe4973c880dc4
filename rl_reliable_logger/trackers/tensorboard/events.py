"""Scalar points of a few tags from TensorBoard event files, one file at a time.

The reader is TensorBoard's own record loader (``RawEventFileLoader`` of
``tensorboard.backend.event_processing.event_file_loader``) and its ``Event`` protocol buffer, chosen by
measurement (``benchmarks/speed/bench_tensorboard_readers.py``, ``benchmarks/README.md``): it streams one record at
a time, so only the points of the wanted tags are kept. TensorBoard documents no Python reading API; this
module is the one place that names these modules, so a change in them is fixed here.

The loader stops quietly at a truncated or corrupted record (it is built to tail files still being
written). Every record it yields is counted (each is its payload plus 16 framing bytes), so a file whose
records do not add up to its size is damaged, and is named with the byte where reading stopped.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

#: Bytes around each record's payload: its length (8), the length's checksum (4) and the payload's (4).
FRAMING = 16
#: TensorBoard's own rule for an event file: the name contains ``tfevents``.
MARKER = "tfevents"
# TensorFlow's DataType codes of scalar tensors (tensorboard.compat.proto.types_pb2)
_DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 9: np.int64, 19: np.float16}


@dataclass
class FileScalars:
    """The points read from one event file: ``points[tag]`` is a list of (step, value); ``damage`` says why
    reading stopped before the end of the file (None when the whole file was read)."""

    path: str
    points: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    damage: str | None = None


def is_event_file(name: str) -> bool:
    """True for a file TensorBoard would read as an event file."""
    return MARKER in name


def _scalar(value: object) -> float | None:
    """The number in a summary value: ``simple_value`` (tensorboardX, PyTorch) or a scalar tensor (TF 2,
    ``tensorboard.summary.Writer``); None for anything else (images, histograms, non-scalar tensors)."""
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    if kind == "simple_value":
        return float(value.simple_value)  # type: ignore[attr-defined]
    if kind != "tensor":
        return None
    tensor = value.tensor  # type: ignore[attr-defined]
    dtype = _DTYPES.get(int(tensor.dtype))
    if dtype is None or len(tensor.tensor_shape.dim) > 0:
        return None
    if tensor.tensor_content:
        array = np.frombuffer(tensor.tensor_content, dtype=np.dtype(dtype).newbyteorder("<"))
        return float(array[0]) if array.size == 1 else None
    for name in ("float_val", "double_val", "int_val", "int64_val", "half_val"):
        values = getattr(tensor, name)
        if len(values) == 1:
            if name == "half_val":  # float16 bits stored in an int
                return float(np.array([values[0]], dtype=np.uint16).view(np.float16)[0])
            return float(values[0])
    return None


def read_scalars(path: str, tags: Collection[str]) -> FileScalars:
    """The (step, value) points of ``tags`` in the event file ``path``, in file order.

    Only the wanted tags' points are kept; a damaged or truncated file gets ``damage`` set (its points
    up to the damage are returned but must not be used as a complete run).
    """
    from google.protobuf.message import DecodeError
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2

    out = FileScalars(path)
    wanted = set(tags)
    consumed = 0
    try:
        size = os.path.getsize(path)
        for record in RawEventFileLoader(path).Load():
            event = event_pb2.Event.FromString(record)
            consumed += len(record) + FRAMING
            if not event.HasField("summary"):
                continue
            for value in event.summary.value:
                if value.tag in wanted:
                    number = _scalar(value)
                    if number is not None:
                        out.points.setdefault(value.tag, []).append((float(event.step), number))
    except OSError as err:
        out.damage = f"cannot be read ({err.strerror or err})"
        return out
    except (DecodeError, ValueError) as err:  # a record whose checksum holds but whose bytes are no Event
        out.damage = f"damaged: the record at byte {consumed} is no event ({type(err).__name__})"
        return out
    if consumed != size:
        out.damage = f"truncated or damaged after byte {consumed} of {size}"
    return out
