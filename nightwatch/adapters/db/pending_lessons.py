"""SqlPendingLessons: lessons a memory write could not store, in the `pending_lessons` table until a retry.

Rows never leave this module: every method returns the domain's frozen PendingLesson. The table lives in the same
database as everything else, so lessons that a full disk or a broken memory folder kept out of `main.md` survive a
restart; on PostgreSQL every replica sees them.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.engine import RowMapping

from nightwatch.adapters.db.schema import pending_lessons, utc
from nightwatch.adapters.db.transactions import Bind, begin
from nightwatch.domain.memory import CATEGORIES
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.models import Category


class SqlPendingLessons:
    """The PendingLessons port on the `pending_lessons` table; ids give the order lessons were kept in."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind  # an Engine, or a Connection whose transaction every call joins (see transactions.py)

    def keep(self, lessons: Sequence[PendingLesson]) -> builtins.list[PendingLesson]:
        """Store these lessons in one transaction, in order; returns them with their ids."""
        kept: list[PendingLesson] = []
        with self._begin("keep lessons for a retry") as conn:
            for lesson in lessons:
                key = conn.execute(insert(pending_lessons).values(**_values(lesson))).inserted_primary_key
                kept.append(_with_id(lesson, key[0] if key else None))
        return kept

    def waiting(self, persona_slug: str | None = None, project: str | None = None) -> builtins.list[PendingLesson]:
        """Kept lessons, oldest first: all, one persona's, or one persona's for one project."""
        query = select(pending_lessons).order_by(pending_lessons.c.id)
        if persona_slug is not None:
            query = query.where(pending_lessons.c.persona == persona_slug)
        if project is not None:
            query = query.where(pending_lessons.c.project == project)
        with self._begin("read the lessons kept for a retry") as conn:
            return [_lesson(row) for row in conn.execute(query).mappings()]

    def remove(self, ids: Sequence[int]) -> None:
        """Forget these lessons: a retry wrote them."""
        if ids:
            with self._begin("forget lessons a retry wrote") as conn:
                conn.execute(delete(pending_lessons).where(pending_lessons.c.id.in_(list(ids))))

    def failed(self, ids: Sequence[int], error: str) -> None:
        """Record why the latest retry of these lessons failed."""
        if ids:
            with self._begin("record why a retry failed") as conn:
                conn.execute(update(pending_lessons).where(pending_lessons.c.id.in_(list(ids))).values(error=error))

    def move(self, old_slug: str, new_slug: str) -> int:
        """File a renamed persona's kept lessons under its new slug; returns how many moved."""
        statement = update(pending_lessons).where(pending_lessons.c.persona == old_slug).values(persona=new_slug)
        with self._begin("move kept lessons to a renamed persona") as conn:
            return int(conn.execute(statement).rowcount or 0)

    def drop(self, persona_slug: str) -> int:
        """Forget a deleted persona's kept lessons; returns how many."""
        with self._begin("forget a deleted persona's kept lessons") as conn:
            return int(
                conn.execute(delete(pending_lessons).where(pending_lessons.c.persona == persona_slug)).rowcount or 0
            )

    def _begin(self, doing: str) -> AbstractContextManager[Connection]:
        """A transaction whose database errors become a StorageError."""
        return begin(self._bind, doing)


def _values(lesson: PendingLesson) -> dict[str, object]:
    return {
        "persona": lesson.persona,
        "project": lesson.project,
        "text": lesson.text,
        "kind": lesson.kind,
        "day": lesson.day,
        "link": lesson.link,
        "error": lesson.error,
        "kept_at": lesson.kept_at.astimezone(UTC),
        "author": lesson.author,
        "category": lesson.category,
        "overview": lesson.overview,
    }


def _with_id(lesson: PendingLesson, key: object) -> PendingLesson:
    return replace(lesson, id=int(key) if isinstance(key, int) else None)


def _lesson(row: RowMapping) -> PendingLesson:
    kept_at = utc(row["kept_at"])
    assert kept_at is not None  # the column is NOT NULL
    return PendingLesson(
        persona=row["persona"],
        project=row["project"],
        text=row["text"],
        kind=row["kind"],
        day=row["day"],
        link=row["link"],
        error=row["error"],
        kept_at=kept_at.astimezone(UTC),
        author=row["author"],
        category=_category(row["category"]),
        overview=row["overview"],
        id=int(row["id"]),
    )


def _category(value: str | None) -> Category | None:
    """A stored category; anything else (a row written by hand) is no category, as a lesson's file would read it."""
    return next((category for category in CATEGORIES if category == value), None)
