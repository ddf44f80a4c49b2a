"""Memory rows as the database MemoryStore handles them: locked rows, new versions, owners, archive names."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath

from sqlalchemy import Connection, exists, select, update
from sqlalchemy.dialects import postgresql, sqlite

from nightwatch.adapters.db.schema import memory_documents
from nightwatch.domain.errors import MemoryMovedError, StorageError
from nightwatch.domain.personas import check_slug

AGENTS = PurePosixPath("agents")
ARCHIVED = ".archived"
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
ARCHIVE_NAME = re.compile(rf"{SLUG.pattern}-\d{{8}}T\d{{6}}Z(?:-\d+)?")
documents = memory_documents


class KnownTexts:
    """The text last read of each document, with its row id and version (a row's version grows with every write)."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._texts: dict[tuple[str, str], tuple[int, int, str]] = {}
        self._lock = threading.Lock()

    def get(self, owner: str, project: str) -> tuple[int, int, str] | None:
        with self._lock:
            return self._texts.get((owner, project))

    def put(self, owner: str, project: str, known: tuple[int, int, str]) -> None:
        with self._lock:
            self._texts.pop((owner, project), None)
            if len(self._texts) >= self._size:
                self._texts.pop(next(iter(self._texts)))
            self._texts[(owner, project)] = known


@dataclass(frozen=True)
class LockedRow:
    """A document row this transaction holds the lock of."""

    id: int
    text: str
    version: int
    previous: str | None


def locked_row(conn: Connection, owner: str, project: str, *, create: bool = False) -> LockedRow | None:
    """The document's row, locked until the transaction ends; with `create`, inserted first when missing."""
    query = (
        select(documents.c.id, documents.c.text, documents.c.version, documents.c.previous)
        .where(documents.c.owner == owner, documents.c.project == project)
        .with_for_update()
    )
    row = conn.execute(query).first()
    if row is None and create:
        values = {"owner": owner, "project": project, "text": "", "version": 0, "updated_at": datetime.now(UTC)}
        insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        conn.execute(insert(documents).values(**values).on_conflict_do_nothing(index_elements=["owner", "project"]))
        row = conn.execute(query).first()
    return None if row is None else LockedRow(int(row.id), str(row.text), int(row.version), row.previous)


def refuse_unless(held: bool, owner: str) -> None:
    """MemoryMovedError unless a persona holds `owner` (see DatabaseMemoryStore._hold): then nothing is written."""
    if not held:
        raise MemoryMovedError(
            f"No persona holds the memory of {owner} any more: it was renamed or deleted while this was being "
            "written, so nothing was written there. Run the command again with the persona's current name."
        )


def write_row(conn: Connection, row: LockedRow, *, text: str, **also: str | None) -> None:
    """Store a new version of a locked row's text (and, when given, its previous version)."""
    values = {"text": text, "version": row.version + 1, "updated_at": datetime.now(UTC), **also}
    conn.execute(update(documents).where(documents.c.id == row.id).values(**values))


def owns(conn: Connection, owner: str) -> bool:
    return bool(conn.execute(select(exists().where(documents.c.owner == owner))).scalar())


def give(conn: Connection, owner: str, to: str) -> None:
    conn.execute(update(documents).where(documents.c.owner == owner).values(owner=to))


def free_archive_name(conn: Connection, slug: str, now: datetime) -> str:
    """`.archived/<slug>-<UTC timestamp>`, with -2, -3, ... when that is taken."""
    base = f"{ARCHIVED}/{slug}-{now.astimezone(UTC):%Y%m%dT%H%M%SZ}"
    candidate, counter = base, 2
    while owns(conn, candidate):
        candidate, counter = f"{base}-{counter}", counter + 1
    return candidate


def owner_of(rel: PurePosixPath) -> str:
    """The owner a FolderMove path names: agents/<slug> or agents/.archived/<slug>-<timestamp>; nothing else."""
    parts = rel.parts
    if len(parts) == 2 and parts[0] == AGENTS.name and SLUG.fullmatch(parts[1]):
        return check_slug(parts[1])
    if len(parts) == 3 and parts[:2] == (AGENTS.name, ARCHIVED) and ARCHIVE_NAME.fullmatch(parts[2]):
        return f"{ARCHIVED}/{parts[2]}"
    raise StorageError(
        f"Refusing to move {rel}: it names no memory (agents/<slug> or agents/{ARCHIVED}/<slug>-<timestamp>). "
        "Nothing was moved; report this as a bug."
    )
