"""Refuse a score file too large to read in the memory available, before reading it (never an OOM kill).

The factors are peak bytes of memory per byte of (uncompressed) input while pandas parses it and the
ScoreTable validates it, measured on score files: a 26 MB, 1M-row CSV peaks at about 490 MB above the
interpreter (x19); JSON builds a Python object per value first. They err on the side of reading.
"""

from __future__ import annotations

import os
import zlib

from ..errors import ScoreTableError
from ..memory import available_memory, format_bytes

#: Peak memory per byte of input, by format.
FACTORS = {"csv": 25, "tsv": 25, "json": 40, "parquet": 12}


def input_size(path: str | os.PathLike, kind: str) -> int:
    """Bytes of data in the file once decompressed: gzip's recorded size, Parquet's uncompressed row groups."""
    size = os.stat(path).st_size
    if str(path).lower().endswith(".gz") and size >= 4:
        with open(path, "rb") as fh:
            if fh.read(2) != b"\x1f\x8b":
                return size  # not gzip: the reader says so
            fh.seek(-4, os.SEEK_END)
            recorded = int.from_bytes(fh.read(4), "little")  # modulo 2**32, of the last member
        return max(recorded, size)
    if kind == "parquet":
        try:
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(path).metadata
            return max(size, sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)))
        except (ImportError, OSError, ValueError):
            return size  # the reader says what is wrong with the file
    return size


def gzip_damage(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not a complete gzip file (None when it decompresses to its end), read in streaming mode
    (1 MB of output at a time, discarded): a file cut short has random bytes where its size should be, so the
    size it seems to record must not be believed before the stream is known to be whole."""
    stream = zlib.decompressobj(wbits=31)
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 16):
                while chunk:
                    stream.decompress(chunk, 1 << 20)
                    chunk = stream.unconsumed_tail
                    if stream.eof and stream.unused_data:  # the next member of a multi-member file
                        chunk, stream = stream.unused_data + chunk, zlib.decompressobj(wbits=31)
    except zlib.error as err:
        return f"its compressed data is corrupt ({err})"
    return None if stream.eof else "it ends before the end of its compressed data (cut short)"


def check_read_memory(path: str | os.PathLike, kind: str, *, available: float | None = None) -> None:
    """Raise a ScoreTableError naming the file when reading it would need more memory than is available."""
    avail = available_memory() if available is None else available
    if avail is None:
        return
    size = input_size(path, kind)
    need = FACTORS.get(kind, 25) * size
    damage = gzip_damage(path) if need > avail and str(path).lower().endswith(".gz") else None
    if damage is not None:
        raise ScoreTableError(f"{path}: not a complete gzip file: {damage}; copy or write the file again")
    if need > avail:
        raise ScoreTableError(
            f"{path}: reading its {format_bytes(size)} of {kind} data would need about {format_bytes(need)} of "
            f"memory, but about {format_bytes(avail)} is available; split the file (e.g. by task or algorithm) "
            "and evaluate the parts, or use a machine with more memory"
        )
