"""A memory's lesson vectors in the database: a few segment rows of up to 512 vectors each.

A segment holds its vectors' keys (16 ASCII characters each, a hash of the lesson's text: domain/vectors.py) and
the vectors themselves (little-endian float32), in the same order. Measured here at 10,000 lessons: one row per
vector made a read fetch 10,000 rows (about 50 ms on SQLite and on PostgreSQL), and one blob per memory would be
rewritten whole (15 MB) for every lesson written. With segments a read is one indexed SELECT of 20-30 rows (about
20 ms on SQLite, 25-45 ms on PostgreSQL); a save reads only the keys, appends its new vectors as a segment of their
own, and once more than 8 segments are part-filled merges them (at most a segment's worth of vectors rewritten).
Dropping keys rewrites only the segments that held them. Vectors of another dimension (another model's) are
replaced, as a vector file of another dimension is.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import Connection, Select, delete, insert, select

from nightwatch.adapters.db.schema import memory_documents, memory_vectors
from nightwatch.domain.vectors import VectorTable

SEGMENT = 512  # vectors per full segment: about 790 KB at 384 dimensions
PART_FILLED = 8  # part-filled segments a memory may have before they are merged
KEY = 16  # characters per key

segments = memory_vectors


@dataclass(frozen=True)
class _Segment:
    number: int
    dimensions: int
    keys: tuple[str, ...]


def read(conn: Connection, owner: str, project: str) -> VectorTable:
    """The vectors stored for one document (empty when there are none)."""
    documents = memory_documents
    query = (
        select(segments.c.dimensions, segments.c.lesson_keys, segments.c.vectors)
        .join_from(segments, documents, segments.c.document_id == documents.c.id)
        .where(documents.c.owner == owner, documents.c.project == project)
        .order_by(segments.c.segment)
    )
    return decode(_fetch(conn, query))


def decode(rows: Sequence[tuple[int, bytes, bytes]]) -> VectorTable:
    """A table from (dimensions, keys, vectors) segments; a segment that is not whole or not of the last segment's
    dimensions is left out, and a later vector for a key wins."""
    dimensions = rows[-1][0] if rows else 0
    whole = [
        (keys, vectors)
        for size, keys, vectors in rows
        if size == dimensions > 0 and len(keys) % KEY == 0 and len(vectors) == len(keys) // KEY * 4 * dimensions
    ]
    if not whole:
        return VectorTable.empty()
    text = b"".join(keys for keys, _ in whole).decode("ascii", "replace")
    names = [text[start : start + KEY] for start in range(0, len(text), KEY)]
    data = bytearray().join(vectors for _, vectors in whole)  # one copy, and writable
    matrix = np.frombuffer(data, dtype="<f4").reshape(len(names), dimensions).astype(np.float32, copy=False)
    if len(set(names)) < len(names):  # never written so; read as a vector file reads repeated keys
        latest = {name: row for row, name in enumerate(names)}
        names, matrix = list(latest), matrix[list(latest.values())]
    return VectorTable(tuple(names), matrix)


def save(conn: Connection, document_id: int, table: VectorTable, keep: frozenset[str] | None) -> None:
    """Store the vectors of `table` not stored yet; with `keep`, drop every stored key it lacks.

    The caller holds the document's lock, so no other writer changes its segments meanwhile.
    """
    mine = segments.c.document_id == document_id
    stored = _segments(conn, document_id)
    if any(segment.dimensions != table.dimensions for segment in stored):
        conn.execute(delete(segments).where(mine))
        stored = []
    where = {key: segment.number for segment in stored for key in segment.keys}
    gone = {key for key in where if keep is not None and key not in keep}
    new = [key for key in table.keys if key not in where]
    rewrite = {where[key] for key in gone}
    part_filled = [segment.number for segment in stored if len(segment.keys) < SEGMENT]
    if new and len(part_filled) >= PART_FILLED:
        rewrite.update(part_filled)
    if not new and not rewrite:
        return
    carried = _load(conn, document_id, rewrite)
    carried = carried.only(key for key in carried.keys if key not in gone)
    if rewrite:
        conn.execute(delete(segments).where(mine, segments.c.segment.in_(sorted(rewrite))))
    fresh = carried.with_rows(table.only(new)) if len(carried) else table.only(new)
    first = max((segment.number for segment in stored), default=-1) + 1
    rows = [
        _row(document_id, first + index, fresh, fresh.keys[start : start + SEGMENT])
        for index, start in enumerate(range(0, len(fresh), SEGMENT))
    ]
    if rows:
        conn.execute(insert(segments), rows)


def _segments(conn: Connection, document_id: int) -> list[_Segment]:
    """The document's segments with their keys, not their vectors."""
    query = (
        select(segments.c.segment, segments.c.dimensions, segments.c.lesson_keys)
        .where(segments.c.document_id == document_id)
        .order_by(segments.c.segment)
    )
    found = []
    for number, dimensions, keys in conn.execute(query).all():
        text = bytes(keys).decode("ascii", "replace")
        found.append(_Segment(number, dimensions, tuple(text[i : i + KEY] for i in range(0, len(text), KEY))))
    return found


def _load(conn: Connection, document_id: int, numbers: Collection[int]) -> VectorTable:
    """The vectors of these segments."""
    if not numbers:
        return VectorTable.empty()
    query = (
        select(segments.c.dimensions, segments.c.lesson_keys, segments.c.vectors)
        .where(segments.c.document_id == document_id, segments.c.segment.in_(sorted(numbers)))
        .order_by(segments.c.segment)
    )
    return decode([(int(size), bytes(keys), bytes(data)) for size, keys, data in conn.execute(query).all()])


def _row(document_id: int, number: int, table: VectorTable, keys: Sequence[str]) -> dict[str, Any]:
    matrix = np.ascontiguousarray(table.matrix[[table.rows[key] for key in keys]], dtype="<f4")
    return {
        "document_id": document_id,
        "segment": number,
        "dimensions": table.dimensions,
        "lesson_keys": "".join(keys).encode("ascii"),
        "vectors": matrix.tobytes(),
    }


def _fetch(conn: Connection, query: Select[Any]) -> list[tuple[int, bytes, bytes]]:
    """The query's rows straight from the driver's cursor, in the connection's transaction.

    psycopg's default text format sends a bytea as hex text twice its size, which then has to be decoded; its
    binary format sends the bytes (a 10,000-vector read in about half the time).
    """
    compiled = query.compile(dialect=conn.dialect)
    order = compiled.positiontup
    params: Any = tuple(compiled.params[name] for name in order) if order else compiled.params
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None  # a checked-out connection always has one
    cursor = dbapi.cursor(binary=True) if conn.dialect.driver == "psycopg" else dbapi.cursor()
    try:
        cursor.execute(str(compiled), params)
        rows: list[tuple[int, bytes, bytes]] = list(cursor.fetchall())  # both drivers give int and bytes
        return rows
    finally:
        cursor.close()
