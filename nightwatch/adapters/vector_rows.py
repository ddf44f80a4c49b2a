"""A memory's lesson vectors as database rows: (document, key) -> the vector as little-endian float32 bytes.

Rows rather than one blob per document: a write inserts only its new lessons' rows, where the blob of a
10,000-lesson memory (15 MB) would be rewritten for every lesson, and on PostgreSQL a 15 MB bytea also reads slower
(260-360 ms here) than 10,000 rows. A read is one indexed SELECT fetched straight from the driver (on PostgreSQL in
psycopg's binary format) and joined into one matrix. The database counterpart of vector_file.py: rows whose length
is not the written table's (another model's vectors) are replaced, as a vector file of another dimension is, and a
read keeps the rows of the most common length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection, Select, delete, func, insert, select

from nightwatch.adapters.db import memory_documents, memory_vectors
from nightwatch.domain.vectors import VectorTable

_CHUNK = 500  # keys per DELETE ... IN (...): well under every driver's limit on bound parameters


def read(conn: Connection, owner: str, project: str) -> VectorTable:
    """The vectors stored for one document (empty when there are none)."""
    documents, vectors = memory_documents, memory_vectors
    query = (
        select(vectors.c.key, vectors.c.vector)
        .join_from(vectors, documents, vectors.c.document_id == documents.c.id)
        .where(documents.c.owner == owner, documents.c.project == project)
    )
    return decode(_fetch(conn, query))


def decode(rows: Sequence[tuple[str, bytes]]) -> VectorTable:
    """A table from (key, bytes) rows; rows of an odd length or not of the most common one are left out."""
    if not rows:
        return VectorTable.empty()
    keys, blobs = zip(*rows, strict=True)
    size = len(blobs[0])
    if size % 4 or not size or any(len(blob) != size for blob in blobs):
        sizes = Counter(len(blob) for blob in blobs if blob and len(blob) % 4 == 0)
        if not sizes:
            return VectorTable.empty()
        size = sizes.most_common(1)[0][0]
        kept = [(key, blob) for key, blob in rows if len(blob) == size]
        keys, blobs = zip(*kept, strict=True)
    data = bytearray().join(blobs)  # one copy, and writable, as vector_file.decode's matrix is
    matrix = np.frombuffer(data, dtype="<f4").reshape(len(blobs), size // 4)
    return VectorTable(tuple(keys), matrix.astype(np.float32, copy=False))


def save(conn: Connection, document_id: int, table: VectorTable, keep: frozenset[str] | None) -> None:
    """Insert the rows of `table` not stored yet; with `keep`, delete the stored keys it lacks.

    When the stored rows are another length than this table's vectors (another model's), they are all deleted first:
    every save keeps a document's rows one length, so one row tells. The caller holds the document's lock, so no
    other writer adds or drops rows of it meanwhile. Only the keys are read (from the primary key's index).
    """
    vectors = memory_vectors
    mine = vectors.c.document_id == document_id
    size = conn.execute(select(func.length(vectors.c.vector)).where(mine).limit(1)).scalar()
    if size is not None and size != 4 * table.dimensions:
        conn.execute(delete(vectors).where(mine))
    stored = set(conn.execute(select(vectors.c.key).where(mine)).scalars().all())
    if keep is not None:
        gone = sorted(stored - keep)
        for start in range(0, len(gone), _CHUNK):
            conn.execute(delete(vectors).where(mine, vectors.c.key.in_(gone[start : start + _CHUNK])))
        stored -= set(gone)
    new = [key for key in table.keys if key not in stored]
    if new:
        matrix = np.ascontiguousarray(table.matrix, dtype="<f4")
        rows = [{"document_id": document_id, "key": key, "vector": matrix[table.rows[key]].tobytes()} for key in new]
        conn.execute(insert(vectors), rows)


def _fetch(conn: Connection, query: Select[Any]) -> list[tuple[str, bytes]]:
    """The query's rows straight from the driver's cursor, in the connection's transaction.

    At 10,000 vectors SQLAlchemy's result rows cost more than the fetch itself, and psycopg's default text format
    sends each bytea as hex text twice its size: this way a read takes about a third of the time on PostgreSQL and
    two thirds on SQLite.
    """
    compiled = query.compile(dialect=conn.dialect)
    order = compiled.positiontup
    params: Any = tuple(compiled.params[name] for name in order) if order else compiled.params
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None  # a checked-out connection always has one
    cursor = dbapi.cursor(binary=True) if conn.dialect.driver == "psycopg" else dbapi.cursor()
    try:
        cursor.execute(str(compiled), params)
        rows: list[tuple[str, bytes]] = list(cursor.fetchall())  # both drivers give str keys and bytes vectors
        return rows
    finally:
        cursor.close()
