"""SqlHeldLessons: lessons taught that wait for an admin, in the `held_lessons` table every replica reads.

Rows never leave this module: every method returns the domain's frozen HeldLesson. `take` deletes the row and
reports whether it deleted it, so when two admins settle the same lesson at once only one of them does.
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from datetime import UTC

from sqlalchemy import Column, DateTime, Integer, String, Table, Text, delete, insert, select
from sqlalchemy.engine import RowMapping

from nightwatch.adapters.db.schema import metadata, utc
from nightwatch.adapters.db.transactions import Bind, begin
from nightwatch.domain.memory import CATEGORIES
from nightwatch.domain.teaching import HeldLesson, Reason

# On the one metadata with every other table (this module is imported with the db package, so always).
held_lessons = Table(  # lessons taught that wait for an admin to approve or drop them (see domain/teaching/review.py)
    "held_lessons",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("persona_id", Integer, nullable=False),  # the persona's id, so a rename keeps its held lessons
    Column("persona", String(80), nullable=False),  # its name when the lesson was held, for showing
    Column("project", String(80), nullable=False),
    Column("text", Text, nullable=False),
    Column("reason", String(20), nullable=False),  # "teacher" or "instruction"
    Column("held_at", DateTime(timezone=True), nullable=False),
    Column("author", String(80), nullable=True),
    Column("link", Text, nullable=True),
    Column("kind", String(40), nullable=False),
    Column("category", String(20), nullable=True),
)

_REASONS = {Reason.TEACHER: "teacher", Reason.INSTRUCTION: "instruction"}
_BY_NAME = {name: reason for reason, name in _REASONS.items()}


class SqlHeldLessons:
    """The HeldLessons port on the `held_lessons` table; ids give the order lessons were held in."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind

    def hold(self, lesson: HeldLesson) -> HeldLesson:
        values = {
            "persona_id": lesson.persona_id,
            "persona": lesson.persona,
            "project": lesson.project,
            "text": lesson.text,
            "reason": _REASONS[lesson.reason],
            "held_at": lesson.held_at.astimezone(UTC),
            "author": lesson.author,
            "link": lesson.link,
            "kind": lesson.kind,
            "category": lesson.category,
        }
        with begin(self._bind, "hold a lesson for review") as conn:
            key = conn.execute(insert(held_lessons).values(**values)).inserted_primary_key
        held_id = key[0] if key else None
        return replace(lesson, id=int(held_id) if isinstance(held_id, int) else None)

    def list(self) -> builtins.list[HeldLesson]:
        with begin(self._bind, "read the lessons held for review") as conn:
            rows = conn.execute(select(held_lessons).order_by(held_lessons.c.id)).mappings()
            return [_held(row) for row in rows]

    def take(self, held_id: int) -> HeldLesson | None:
        with begin(self._bind, "settle a held lesson") as conn:
            row = conn.execute(select(held_lessons).where(held_lessons.c.id == held_id)).mappings().first()
            if row is None:
                return None
            gone = conn.execute(delete(held_lessons).where(held_lessons.c.id == held_id)).rowcount
            return _held(row) if gone else None


def _held(row: RowMapping) -> HeldLesson:
    held_at = utc(row["held_at"])
    assert held_at is not None  # the column is NOT NULL
    return HeldLesson(
        persona_id=int(row["persona_id"]),
        persona=row["persona"],
        project=row["project"],
        text=row["text"],
        reason=_BY_NAME.get(row["reason"], Reason.INSTRUCTION),
        held_at=held_at.astimezone(UTC),
        author=row["author"],
        link=row["link"],
        kind=row["kind"],
        category=next((category for category in CATEGORIES if category == row["category"]), None),
        id=int(row["id"]),
    )
