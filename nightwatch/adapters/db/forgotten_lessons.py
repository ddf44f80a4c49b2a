"""SqlForgottenLessons: lessons a persona forgot with its `memory_forget` tool, kept in `forgotten_lessons` for Undo.

Rows never leave this module: every method returns the domain's frozen Forgotten. `mark_restored` changes a row only
while nobody restored it, so of two Undo clicks at once exactly one is recorded.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from sqlalchemy import Column, DateTime, Integer, String, Table, Text, insert, select, update
from sqlalchemy.engine import RowMapping

from nightwatch.adapters.db.schema import metadata, utc
from nightwatch.adapters.db.transactions import Bind, begin
from nightwatch.domain.memory.ports import Forgotten

# On the one metadata with every other table (this module is imported with the db package, so always).
forgotten_lessons = Table(  # each a one-lesson memory document that Undo imports back (domain/teaching/forgetting.py)
    "forgotten_lessons",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("persona_id", Integer, nullable=False),  # the persona's id, so a rename meanwhile still finds it
    Column("persona", String(80), nullable=False),  # its name when it forgot, for showing
    Column("project", String(80), nullable=False),
    Column("lesson_id", String(16), nullable=False),
    Column("text", Text, nullable=False),
    Column("kept", Text, nullable=False),
    Column("thread", String(200), nullable=False),
    Column("forgotten_at", DateTime(timezone=True), nullable=False),
    Column("restored_at", DateTime(timezone=True), nullable=True),
    Column("restored_by", String(80), nullable=True),
)


class SqlForgottenLessons:
    """The ForgottenLessons port on the `forgotten_lessons` table."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind

    def keep(self, forgotten: Forgotten) -> Forgotten:
        values = {
            "persona_id": forgotten.persona_id,
            "persona": forgotten.persona,
            "project": forgotten.project,
            "lesson_id": forgotten.lesson_id,
            "text": forgotten.text,
            "kept": forgotten.kept,
            "thread": forgotten.thread[:200],
            "forgotten_at": forgotten.forgotten_at.astimezone(UTC),
        }
        with begin(self._bind, "keep a forgotten lesson") as conn:
            key = conn.execute(insert(forgotten_lessons).values(**values)).inserted_primary_key
        kept_id = key[0] if key else None
        return replace(forgotten, id=int(kept_id) if isinstance(kept_id, int) else None)

    def get(self, forgotten_id: int) -> Forgotten | None:
        with begin(self._bind, "read a forgotten lesson") as conn:
            query = select(forgotten_lessons).where(forgotten_lessons.c.id == forgotten_id)
            row = conn.execute(query).mappings().first()
            return None if row is None else _forgotten(row)

    def mark_restored(self, forgotten_id: int, user: str, now: datetime) -> bool:
        table = forgotten_lessons
        with begin(self._bind, "record a restored lesson") as conn:
            changed = conn.execute(
                update(table)
                .where(table.c.id == forgotten_id, table.c.restored_by.is_(None))
                .values(restored_at=now.astimezone(UTC), restored_by=user)
            ).rowcount
        return bool(changed)


def _forgotten(row: RowMapping) -> Forgotten:
    forgotten_at = utc(row["forgotten_at"])
    assert forgotten_at is not None  # the column is NOT NULL
    return Forgotten(
        persona_id=int(row["persona_id"]),
        persona=row["persona"],
        project=row["project"],
        lesson_id=row["lesson_id"],
        text=row["text"],
        kept=row["kept"],
        thread=row["thread"],
        forgotten_at=forgotten_at,
        restored_at=utc(row["restored_at"]),
        restored_by=row["restored_by"],
        id=int(row["id"]),
    )
