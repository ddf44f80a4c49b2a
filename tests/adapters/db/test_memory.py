"""DatabaseMemoryStore's own rows: versions, the previous version, archived owners, one SELECT per read, crashes.

What every store does is the contract suite's (tests/adapters/memory_contract/), which runs on this store on SQLite
and, with DATABASE_URL, on PostgreSQL; so does this file.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, event, insert, select

from nightwatch.adapters.db import make_engine, memory_documents, memory_vectors
from nightwatch.adapters.db.memory import DatabaseMemoryStore
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.ports import FolderMove
from nightwatch.domain.vectors import VectorTable, vector_key
from tests.adapters.db.conftest import engine, postgres_engine, sqlite_engine
from tests.waiting import wait_until

__all__ = ["engine", "postgres_engine", "sqlite_engine"]

NOW = datetime(2026, 11, 21, 9, 30, 5, tzinfo=UTC)


@pytest.fixture
def store(engine: Engine) -> DatabaseMemoryStore:
    return DatabaseMemoryStore(engine)


def rows(engine: Engine) -> list[dict[str, Any]]:
    query = select(
        memory_documents.c.owner,
        memory_documents.c.project,
        memory_documents.c.text,
        memory_documents.c.version,
        memory_documents.c.previous,
    ).order_by(memory_documents.c.owner, memory_documents.c.project)
    with engine.connect() as conn:
        return [dict(row) for row in conn.execute(query).mappings()]


def test_each_write_is_one_version_and_an_unchanged_text_writes_none(
    store: DatabaseMemoryStore, engine: Engine
) -> None:
    store.update("carlos", "p", lambda _: "v1\n")
    store.update("carlos", "p", lambda text: text + "v2\n")
    store.update("carlos", "p", lambda text: text)
    assert rows(engine) == [{"owner": "carlos", "project": "p", "text": "v1\nv2\n", "version": 2, "previous": None}]


def test_a_compaction_keeps_the_previous_text_in_its_row_and_rollback_uses_it_up(
    store: DatabaseMemoryStore, engine: Engine
) -> None:
    store.update("carlos", "p", lambda _: "long\n")
    assert store.replace_keeping_previous("carlos", "p", "long\n", "short\n")
    row = {"owner": "carlos", "project": "p"}
    assert rows(engine) == [{**row, "text": "short\n", "version": 2, "previous": "long\n"}]
    assert store.rollback("carlos", "p")
    assert rows(engine) == [{**row, "text": "long\n", "version": 3, "previous": None}]


def test_archived_and_set_aside_memory_is_owned_by_its_archive_name(store: DatabaseMemoryStore, engine: Engine) -> None:
    store.update("maya", "p", lambda _: "maya\n")
    store.update("mia", "p", lambda _: "stray\n")
    store.migrate("maya", "mia", NOW)
    store.archive("mia", NOW)
    assert [(row["owner"], row["text"]) for row in rows(engine)] == [
        (".archived/mia-20261121T093005Z", "stray\n"),
        (".archived/mia-20261121T093005Z-2", "maya\n"),
    ]


def test_vectors_alone_make_a_row_but_not_a_project(store: DatabaseMemoryStore, engine: Engine) -> None:
    store.save_vectors("dev", "p", VectorTable((vector_key("x"),), np.ones((1, 4), dtype=np.float32)))
    assert [(row["owner"], row["version"]) for row in rows(engine)] == [("dev", 0)]
    assert store.projects("dev") == []
    assert store.read("dev", "p") == ""


def test_a_read_is_one_select(store: DatabaseMemoryStore, engine: Engine) -> None:
    store.update("carlos", "p", lambda _: "v1\n")
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", seen)
    try:
        assert store.read("carlos", "p") == "v1\n"
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert len(statements) == 1
    assert statements[0].lstrip().upper().startswith("SELECT")


def test_an_unchanged_text_is_not_fetched_again_and_a_changed_or_new_row_is(engine: Engine) -> None:
    reader, writer = DatabaseMemoryStore(engine), DatabaseMemoryStore(engine)
    writer.update("carlos", "p", lambda _: "v1\n")
    first = reader.read("carlos", "p")
    assert reader.read("carlos", "p") is first  # the same object: the row sent back no text
    writer.update("carlos", "p", lambda text: text + "v2\n")
    assert reader.read("carlos", "p") == "v1\nv2\n"
    writer.migrate("carlos", "charles", NOW)  # the row read at version 2 goes; a new row reaches version 2 too
    writer.update("carlos", "p", lambda _: "fresh\n")
    writer.update("carlos", "p", lambda text: text + "more\n")
    assert reader.read("carlos", "p") == "fresh\nmore\n"
    assert reader.read("charles", "p") == "v1\nv2\n"


def vectors(count: int, dimensions: int = 8, start: int = 0) -> VectorTable:
    keys = tuple(vector_key(f"lesson {n}") for n in range(start, start + count))
    matrix = np.random.default_rng(start).normal(size=(count, dimensions)).astype(np.float32)
    return VectorTable(keys, matrix)


def segments(engine: Engine) -> list[tuple[int, int]]:
    """(segment number, vectors in it) of every stored segment."""
    query = select(memory_vectors.c.segment, memory_vectors.c.lesson_keys).order_by(memory_vectors.c.segment)
    with engine.connect() as conn:
        return [(number, len(keys) // 16) for number, keys in conn.execute(query)]


def test_vectors_are_stored_512_to_a_segment(store: DatabaseMemoryStore, engine: Engine) -> None:
    written = vectors(1_200)
    store.save_vectors("dev", "p", written)
    assert segments(engine) == [(0, 512), (1, 512), (2, 176)]
    stored = store.read_vectors("dev", "p")
    assert stored.keys == written.keys
    assert np.array_equal(stored.matrix, written.matrix)


def test_one_lesson_at_a_time_appends_small_segments_and_merges_them(
    store: DatabaseMemoryStore, engine: Engine
) -> None:
    for n in range(40):
        store.save_vectors("dev", "p", vectors(1, start=n))
        assert len(segments(engine)) <= 8  # never more part-filled segments than that
    assert sum(count for _, count in segments(engine)) == 40
    assert set(store.read_vectors("dev", "p").keys) == set(vectors(40).keys)


def test_dropping_keys_rewrites_only_the_segments_that_held_them(store: DatabaseMemoryStore, engine: Engine) -> None:
    written = vectors(1_200)
    store.save_vectors("dev", "p", written)
    dropped = written.keys[3]  # in segment 0
    store.save_vectors("dev", "p", VectorTable.empty(8), keep=frozenset(written.keys) - {dropped})
    assert segments(engine) == [(1, 512), (2, 176), (3, 511)]
    stored = store.read_vectors("dev", "p")
    assert set(stored.keys) == set(written.keys) - {dropped}
    for key in stored.keys:
        assert np.array_equal(stored.matrix[stored.rows[key]], written.matrix[written.rows[key]])


def test_a_torn_or_foreign_segment_is_left_out_of_a_read(store: DatabaseMemoryStore, engine: Engine) -> None:
    store.save_vectors("dev", "p", vectors(2, dimensions=4))
    with engine.connect() as conn:
        document = conn.execute(select(memory_documents.c.id)).scalar_one()
    torn = {"document_id": document, "dimensions": 4, "lesson_keys": vector_key("c").encode(), "vectors": b"\0" * 12}
    with engine.begin() as conn:  # segments written by hand, or half by something else
        conn.execute(insert(memory_vectors).values(segment=7, **torn))
        conn.execute(insert(memory_vectors).values({**torn, "segment": 5, "vectors": b"\0" * 12, "dimensions": 3}))
    assert set(store.read_vectors("dev", "p").keys) == set(vectors(2, dimensions=4).keys)


def test_restore_refuses_a_move_that_names_no_memory(store: DatabaseMemoryStore) -> None:
    for rel in ("../etc", "agents/.archived/../../x", "agents/Bad Name", "agents/.archived/maya", "elsewhere/maya"):
        with pytest.raises(StorageError, match="names no memory"):
            store.restore(FolderMove(True, PurePosixPath("agents/maya"), PurePosixPath(rel)))


def test_a_store_on_a_connection_joins_its_transaction(store: DatabaseMemoryStore, engine: Engine) -> None:
    store.update("maya", "p", lambda _: "kept\n")
    seen_inside: list[str] = []

    def change_then_fail() -> None:
        with engine.begin() as conn:
            joined = DatabaseMemoryStore(conn)
            joined.update("maya", "p", lambda text: text + "- rolled back\n")
            joined.archive("maya", NOW)
            seen_inside.append(joined.read("maya", "p"))
            raise RuntimeError("the caller's next step failed")

    with pytest.raises(RuntimeError, match="next step failed"):
        change_then_fail()
    assert seen_inside == [""]  # inside the transaction, the archive had happened
    assert store.read("maya", "p") == "kept\n"
    assert store.projects("maya") == ["p"]


def stuck_in_commit(url: str, marker: str) -> None:
    """Runs in a child process: write a new version, and stop for good just before its commit."""
    engine = make_engine(url)

    def stop(conn: Any) -> None:
        Path(marker).write_text("the update is sent; the commit is not")
        time.sleep(60)

    event.listen(engine, "commit", stop)
    DatabaseMemoryStore(engine).update("dev", "p", lambda text: text + "- half-written lesson\n" * 10_000)


@pytest.fixture
def url(engine: Engine) -> Iterator[str]:
    yield engine.url.render_as_string(hide_password=False)
    engine.dispose()


def test_a_writer_killed_before_its_commit_leaves_the_old_version(engine: Engine, url: str, tmp_path: Path) -> None:
    store = DatabaseMemoryStore(engine)
    store.update("dev", "p", lambda _: "# Dev\n- Keep this lesson.\n")
    engine.dispose()  # the child process inherits no open connection
    marker = tmp_path / "marker"
    child = multiprocessing.get_context("fork").Process(target=stuck_in_commit, args=(url, str(marker)))
    child.start()
    try:
        wait_until(marker.exists, "the writer to reach its commit", timeout=30, interval=0.01)
    finally:
        child.kill()
        child.join()
        child.close()
    assert store.read("dev", "p") == "# Dev\n- Keep this lesson.\n"
    # The lock died with the writer: the next write goes through on the old version.
    assert (
        store.update("dev", "p", lambda text: text + "- Next lesson.\n")
        == "# Dev\n- Keep this lesson.\n- Next lesson.\n"
    )
    assert rows(engine)[0]["version"] == 2
