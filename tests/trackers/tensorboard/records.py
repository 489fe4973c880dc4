"""Event-file records written by hand for the reader's hostile cases: the framing stated from TensorFlow's record
format (``uint64 length | masked CRC32C(length) | data | masked CRC32C(data)``), independently of the reader."""

from __future__ import annotations

import struct

import google_crc32c


def masked(data: bytes) -> int:
    """TensorFlow's masked CRC32C: rotate right by 15 bits, add 0xa282ead8 (mod 2**32)."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data: bytes, *, length: int | None = None) -> bytes:
    """One record of ``data``; ``length`` writes another length (with its own valid checksum)."""
    header = struct.pack("<Q", len(data) if length is None else length)
    return header + struct.pack("<I", masked(header)) + data + struct.pack("<I", masked(data))
