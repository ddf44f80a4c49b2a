"""Memory in the database: each persona's memory of each project as one row of markdown, shared by every replica.

The row holds the text a file store keeps in `main.md` (so every rule of the domain applies unchanged), a version
(one more per write), the text the last compaction replaced (`main.md.prev`) and, in `memory_vectors`, each
lesson's vector (vector_segments.py). A write locks its row: `SELECT ... FOR UPDATE` on PostgreSQL, the write
transaction itself on SQLite (BEGIN IMMEDIATE, see db/transactions.py), and applies its change to the text it finds
under the lock, so concurrent writers on any machine lose nothing; the first write of a document inserts its row
with INSERT ... ON CONFLICT DO NOTHING and then locks it, so two first writers cannot race either. A transaction
commits whole or not at all: a process killed mid-write leaves the old version. A rename moves a persona's rows to
its new slug and a delete moves them to `.archived/<slug>-<UTC timestamp>`, the names a file store gives the
folders under agents/; built on a Connection (persona_transactions.py) the store does that inside the persona's
own transaction. Each new or changed line is redacted before it is written, as the file store does. A read is one
SELECT on the (owner, project) index that sends the text back only when the row or its version changed since this
store last read it, so each turn's read of a large, unchanged memory stays cheap.

Built `fenced` (as the app builds it), a write first locks the row of the persona that holds its slug (`SELECT ...
FOR SHARE` on PostgreSQL; SQLite's write transaction already excludes every other writer) and is refused
(MemoryMovedError) when no persona holds it. A rename or delete changes that row in the transaction that moves the
memory, so a write either commits before it (and its row moves too) or waits for it and finds the slug gone: no
write racing a rename lands under the old slug, where a persona created later with that name would find it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime

from sqlalchemy import Connection, Engine, and_, case, false, select

from nightwatch.adapters.db import vector_segments
from nightwatch.adapters.db.memory_rows import (
    AGENTS,
    KnownTexts,
    documents,
    free_archive_name,
    give,
    locked_row,
    owner_of,
    owns,
    refuse_unless,
    write_row,
)
from nightwatch.adapters.db.schema import personas
from nightwatch.adapters.db.transactions import Bind, database_errors, transaction
from nightwatch.adapters.secrets import redact_new_lines
from nightwatch.domain.arrays import Arrays
from nightwatch.domain.memory.ports import FolderMove
from nightwatch.domain.personas import check_slug
from nightwatch.domain.vectors import VectorTable

__all__ = ["DatabaseMemoryStore"]


class DatabaseMemoryStore:
    """The MemoryStore port on the `memory_documents` and `memory_vectors` tables.

    `fenced`: a write to a slug no persona holds is refused (see the module doc); unfenced (tools and tests that keep
    memory for no persona, and a persona's own transaction, which moves it), any valid slug may be written.
    """

    def __init__(self, bind: Bind, *, fenced: bool = False) -> None:
        self._bind = bind  # an Engine, or a Connection whose transaction every call joins
        self._fenced = fenced
        self._known = KnownTexts()

    # --- text ---------------------------------------------------------------------------------------------------

    def read(self, persona_slug: str, project_slug: str) -> str:
        """The document's text, or '' when there is none: one SELECT on the (owner, project) index.

        The text comes back only when its row or version differs from the last one this store read: a turn's read
        of an unchanged 10,000-lesson memory moves a few bytes, not the whole text (on PostgreSQL, not detoasted).
        """
        owner, project = check_slug(persona_slug), check_slug(project_slug)
        known = self._known.get(owner, project)
        same = and_(documents.c.id == known[0], documents.c.version == known[1]) if known else false()
        query = select(documents.c.id, documents.c.version, case((same, None), else_=documents.c.text)).where(
            documents.c.owner == owner, documents.c.project == project
        )
        with self._reading("read a memory") as conn:
            row = conn.execute(query).first()
        if row is None:
            return ""
        if row[2] is None and known is not None:  # the text column is never NULL: NULL means "as you knew it"
            return known[2]
        text = str(row[2])
        if isinstance(self._bind, Engine):  # a joined transaction may yet roll back: remember only committed rows
            self._known.put(owner, project, (int(row[0]), int(row[1]), text))
        return text

    def update(self, persona_slug: str, project_slug: str, change: Callable[[str], str]) -> str:
        """Under the row's lock, read the text, write `change(text)`, return the new text (unchanged: no write)."""
        owner, project = check_slug(persona_slug), check_slug(project_slug)
        with self._writing("write a memory") as conn:
            held = self._hold(conn, owner)
            row = locked_row(conn, owner, project)
            if row is None:
                if change("") == "":
                    return ""  # nothing to write: create no row for it
                refuse_unless(held, owner)
                row = locked_row(conn, owner, project, create=True)
                assert row is not None
            old = row.text
            new = change(old)
            if new != old:
                refuse_unless(held, owner)
                new = redact_new_lines(old, new, "a memory document")
                write_row(conn, row, text=new)
            return new

    def replace_keeping_previous(self, persona_slug: str, project_slug: str, expected: str, text: str) -> bool:
        """If the text is still `expected`, keep it as the previous version and write `text`; else write nothing."""
        owner, project = check_slug(persona_slug), check_slug(project_slug)
        with self._writing("write a compacted memory") as conn:
            refuse_unless(self._hold(conn, owner), owner)
            row = locked_row(conn, owner, project)
            if (row.text if row is not None else "") != expected:
                return False
            row = row or locked_row(conn, owner, project, create=True)
            assert row is not None
            write_row(conn, row, text=redact_new_lines(expected, text, "a memory document"), previous=expected)
            return True

    def rollback(self, persona_slug: str, project_slug: str) -> bool:
        """Restore the previous version over the text; False when there is none."""
        owner, project = check_slug(persona_slug), check_slug(project_slug)
        with self._writing("roll a memory back") as conn:
            refuse_unless(self._hold(conn, owner), owner)
            row = locked_row(conn, owner, project)
            if row is None or row.previous is None:
                return False
            write_row(conn, row, text=row.previous, previous=None)
            return True

    def projects(self, persona_slug: str) -> list[str]:
        """Project slugs this persona has a memory of (a row only its vectors or a lock made is not one)."""
        owner = check_slug(persona_slug)
        query = (
            select(documents.c.project)
            .where(documents.c.owner == owner, documents.c.version > 0)
            .order_by(documents.c.project)
        )
        with self._reading("list a persona's memories") as conn:
            return [str(project) for project in conn.execute(query).scalars()]

    def location(self, persona_slug: str, project_slug: str) -> str:
        """The row a person (or `psql`) finds this memory in."""
        owner, project = check_slug(persona_slug), check_slug(project_slug)
        return f"the database (memory_documents, owner {owner}, project {project})"

    # --- vectors ------------------------------------------------------------------------------------------------

    def read_vectors(self, persona_slug: str, project_slug: str) -> VectorTable:
        """The vectors stored with this memory (empty when there are none)."""
        owner, project = check_slug(persona_slug), check_slug(project_slug)
        with self._reading("read a memory's vectors") as conn:
            return vector_segments.read(conn, owner, project)

    def save_vectors(
        self, persona_slug: str, project_slug: str, table: VectorTable, *, keep: frozenset[str] | None = None
    ) -> None:
        """Under the memory's lock, store the rows of `table` not stored yet; with `keep`, drop every other key."""
        owner, project = check_slug(persona_slug), check_slug(project_slug)
        if not len(table) and keep is None:
            return
        with self._writing("store a memory's vectors") as conn:
            refuse_unless(self._hold(conn, owner), owner)
            row = locked_row(conn, owner, project, create=bool(len(table)))
            if row is not None:
                vector_segments.save(conn, row.id, table, keep)

    # --- read index ---------------------------------------------------------------------------------------------

    def read_index(self, persona_slug: str, project_slug: str) -> Arrays:
        """Always empty: the database keeps no read index (a process's first read derives it from the text)."""
        return {}

    def save_index(self, persona_slug: str, project_slug: str, arrays: Callable[[], Arrays]) -> None:
        """Keeps nothing, and so never builds the arrays."""

    # --- moves --------------------------------------------------------------------------------------------------

    def migrate(self, old_slug: str, new_slug: str, now: datetime) -> FolderMove:
        """Give agents/<old>'s rows to <new>; rows <new> already had are set aside into the archive first."""
        old, new = check_slug(old_slug), check_slug(new_slug)
        if old == new:
            return FolderMove(moved=False)
        with self._writing("move a renamed persona's memory") as conn:
            if not owns(conn, old):
                return FolderMove(moved=False)
            set_aside = None
            if owns(conn, new):
                set_aside = free_archive_name(conn, new, now)
                give(conn, new, set_aside)
            give(conn, old, new)
        return FolderMove(True, AGENTS / old, AGENTS / new, AGENTS / set_aside if set_aside else None)

    def archive(self, slug: str, now: datetime) -> FolderMove:
        """Move agents/<slug>'s rows to agents/.archived/<slug>-<UTC timestamp>; no rows is a no-op."""
        owner = check_slug(slug)
        with self._writing("archive a deleted persona's memory") as conn:
            if not owns(conn, owner):
                return FolderMove(moved=False)
            name = free_archive_name(conn, owner, now)
            give(conn, owner, name)
        return FolderMove(True, AGENTS / owner, AGENTS / name)

    def restore(self, move: FolderMove) -> None:
        """Undo a migrate or archive: the rows go back, then any that were set aside return."""
        if not move.moved or move.source is None or move.target is None:
            return
        source, target = owner_of(move.source), owner_of(move.target)
        set_aside = owner_of(move.set_aside) if move.set_aside is not None else None
        with self._writing("move memory back") as conn:
            give(conn, target, source)
            if set_aside is not None:
                give(conn, set_aside, target)

    def moving(self, *persona_slugs: str) -> nullcontext[None]:
        """Nothing to hold: a rename or delete changes the persona row that fenced writes lock (see the module doc)."""
        return nullcontext()

    # --- transactions -------------------------------------------------------------------------------------------

    def _hold(self, conn: Connection, owner: str) -> bool:
        """Fenced: lock the row of the persona holding `owner` until the transaction ends; whether one holds it."""
        if not self._fenced:
            return True
        query = select(personas.c.id).where(personas.c.slug == owner).with_for_update(read=True)
        return conn.execute(query).first() is not None

    @contextmanager
    def _reading(self, doing: str) -> Iterator[Connection]:
        with database_errors(doing):
            if isinstance(self._bind, Connection):
                yield self._bind
            else:
                with self._bind.connect() as conn:
                    yield conn

    @contextmanager
    def _writing(self, doing: str) -> Iterator[Connection]:
        with database_errors(doing), transaction(self._bind, write=True) as conn:
            yield conn
