"""The bytes of a memory's stored vectors (`main.vectors` beside `main.md`, or a database column).

A header (magic and dimensions) then fixed-size records: 16 ASCII characters of key (see domain/vectors.py)
and the vector as little-endian float32. Records are only ever appended, so a crash mid-append leaves at most a
partial last record, which reading ignores (and the next append cuts off). A later record for a key wins. A file of
another format or dimension reads as empty: its vectors are computed again.
"""

from __future__ import annotations

import struct

import numpy as np

from nightwatch.domain.vectors import VectorTable

MAGIC = b"NWVEC001"
HEADER = struct.Struct("<8sI")
KEY_BYTES = 16


def record_size(dimensions: int) -> int:
    return KEY_BYTES + 4 * dimensions


def header(dimensions: int) -> bytes:
    return HEADER.pack(MAGIC, dimensions)


def dimensions_of(data: bytes) -> int | None:
    """The dimensions a file's header declares, or None when it is not a vector file."""
    if len(data) < HEADER.size:
        return None
    magic, dimensions = HEADER.unpack_from(data)
    return int(dimensions) if magic == MAGIC and dimensions > 0 else None


def complete_length(data: bytes) -> int:
    """Bytes of the header and whole records (what an append keeps before adding more)."""
    dimensions = dimensions_of(data)
    if dimensions is None:
        return 0
    size = record_size(dimensions)
    return HEADER.size + (len(data) - HEADER.size) // size * size


def decode(data: bytes) -> VectorTable:
    """The table a file holds; empty when it is not one (wrong magic, no dimensions)."""
    dimensions = dimensions_of(data)
    if dimensions is None:
        return VectorTable.empty()
    layout = np.dtype([("key", f"S{KEY_BYTES}"), ("vector", "<f4", (dimensions,))])
    count = (len(data) - HEADER.size) // layout.itemsize
    records = np.frombuffer(data, dtype=layout, count=count, offset=HEADER.size)
    latest = {key.decode("ascii", "replace"): row for row, key in enumerate(records["key"].tolist())}
    rows = list(latest.values())
    return VectorTable(tuple(latest), np.ascontiguousarray(records["vector"][rows], dtype=np.float32))


def encode_records(table: VectorTable, keys: list[str] | None = None) -> bytes:
    """Records for these keys of the table (all of them by default)."""
    wanted = list(table.keys) if keys is None else keys
    layout = np.dtype([("key", f"S{KEY_BYTES}"), ("vector", "<f4", (table.dimensions,))])
    records = np.zeros(len(wanted), dtype=layout)
    records["key"] = [key.encode("ascii") for key in wanted]
    records["vector"] = table.matrix[[table.rows[key] for key in wanted]] if wanted else records["vector"]
    return records.tobytes()


def encode(table: VectorTable) -> bytes:
    """A whole file for the table."""
    return header(table.dimensions) + encode_records(table)
