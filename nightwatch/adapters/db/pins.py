"""SqlPinRepository: pinned context in the `pins` table (the PinRepository port).

Rows never leave this module: every method returns the domain's frozen Pin. A project-wide pin is a row whose
persona is NULL. A pin's content is redacted again before it is stored (a backstop: files and pages are redacted
where they are read, typed text where it enters), and only when it changed, since a large snapshot costs tens of
milliseconds to scan. Writes run in write transactions (BEGIN IMMEDIATE on SQLite); on PostgreSQL two replicas
pinning the same source at once meet at the unique indexes, and the one that loses updates the winner's row.
"""

from __future__ import annotations

import builtins
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, insert, or_, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db.schema import pins, utc
from nightwatch.adapters.db.transactions import Bind, begin
from nightwatch.adapters.secrets import redact_backstop
from nightwatch.domain.errors import NotFoundError, StorageError
from nightwatch.domain.pins import snapshot_hash
from nightwatch.domain.pins.models import Pin, PinKind, PinStatus

columns = pins.c
WHERE = "the pins table"


class SqlPinRepository:
    """The PinRepository port on `pins`; ids give the order pins were made in."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind  # an Engine, or a Connection whose transaction every call joins (see transactions.py)

    def add(self, pin: Pin, key: str) -> tuple[Pin, bool]:
        """Insert the pin, or give the one with the same persona, project and key this snapshot; (stored, new)."""
        pin = _clean(pin)
        try:
            return self._add(pin, key)
        except IntegrityError:  # another writer inserted the same pin first: update theirs
            try:
                return self._add(pin, key)
            except IntegrityError as err:  # still refused: its persona was deleted meanwhile
                raise NotFoundError(
                    "The persona of this pin no longer exists; it may have just been deleted. List the personas and "
                    "try again."
                ) from err

    def get(self, pin_id: int) -> Pin | None:
        with self._begin("read a pin") as conn:
            row = conn.execute(select(pins).where(columns.id == pin_id)).mappings().first()
        return None if row is None else _pin(row)

    def list(self, *, project: str | None = None, kind: PinKind | None = None) -> builtins.list[Pin]:
        query = select(pins).order_by(columns.id)
        if project is not None:
            query = query.where(columns.project == project)
        if kind is not None:
            query = query.where(columns.kind == kind.value)
        with self._begin("list the pins") as conn:
            return [_pin(row) for row in conn.execute(query).mappings()]

    def for_persona(self, persona_id: int, project: str) -> builtins.list[Pin]:
        """The persona's own pins on the project and the project-wide ones, oldest first (one indexed query)."""
        query = (
            select(pins)
            .where(columns.project == project, or_(columns.persona_id == persona_id, columns.persona_id.is_(None)))
            .order_by(columns.id)
        )
        with self._begin("read a persona's pins") as conn:
            return [_pin(row) for row in conn.execute(query).mappings()]

    def update(self, pin: Pin) -> Pin | None:
        """Store the pin's snapshot and status; the content only when it changed (see the module's docstring)."""
        with self._begin("store a pin's snapshot", write=True) as conn:
            stored = conn.execute(select(columns.content_hash).where(columns.id == pin.id).with_for_update()).first()
            if stored is None:
                return None
            values = _state(pin)
            if stored[0] != pin.content_hash:
                pin = _clean(pin)
                values |= {"content": pin.content, "content_hash": pin.content_hash}
            conn.execute(update(pins).where(columns.id == pin.id).values(**values))
            row = conn.execute(select(pins).where(columns.id == pin.id)).mappings().one()
        return _pin(row)

    def remove(self, pin_id: int) -> Pin | None:
        with self._begin("remove a pin", write=True) as conn:
            row = conn.execute(select(pins).where(columns.id == pin_id)).mappings().first()
            if row is None:
                return None
            conn.execute(delete(pins).where(columns.id == pin_id))
        return _pin(row)

    def _add(self, pin: Pin, key: str) -> tuple[Pin, bool]:
        persona = columns.persona_id.is_(None) if pin.persona_id is None else columns.persona_id == pin.persona_id
        match: tuple[ColumnElement[bool], ...] = (persona, columns.project == pin.project, columns.source_key == key)
        with self._begin("store a pin", write=True) as conn:
            found = conn.execute(select(columns.id).where(*match).with_for_update()).first()
            if found is None:
                inserted = conn.execute(insert(pins).values(**_values(pin, key))).inserted_primary_key
                assert inserted is not None
                pin_id, new = inserted[0], True
            else:
                pin_id, new = found[0], False
                snapshot = _state(pin) | {
                    "source": pin.source,
                    "content": pin.content,
                    "content_hash": pin.content_hash,
                }
                conn.execute(update(pins).where(columns.id == pin_id).values(**snapshot))
            row = conn.execute(select(pins).where(columns.id == pin_id)).mappings().one()
        return _pin(row), new

    def _begin(self, doing: str, *, write: bool = False) -> AbstractContextManager[Connection]:
        """A transaction whose database errors (but a clash at a unique index) become a StorageError."""
        return begin(self._bind, doing, write=write, clashes=True)


def _clean(pin: Pin) -> Pin:
    """The pin with its source and content redacted (the hash follows the content when that changes it)."""
    content = redact_backstop(pin.content, WHERE)
    source = redact_backstop(pin.source, WHERE)
    if content == pin.content and source == pin.source:
        return pin
    return replace(pin, source=source, content=content, content_hash=snapshot_hash(content))


def _stored(moment: datetime | None) -> datetime | None:
    return moment.astimezone(UTC) if moment is not None else None


def _state(pin: Pin) -> dict[str, Any]:
    return {
        "stamp": pin.stamp,
        "read_at": _stored(pin.read_at),
        "status": pin.status.value,
        "status_since": _stored(pin.status_since),
        "problem": pin.problem,
    }


def _values(pin: Pin, key: str) -> dict[str, Any]:
    return _state(pin) | {
        "persona_id": pin.persona_id,
        "project": pin.project,
        "kind": pin.kind.value,
        "source": pin.source,
        "source_key": key,
        "content": pin.content,
        "content_hash": pin.content_hash,
        "added_by": pin.added_by,
        "created_at": _stored(pin.created_at or datetime.now(UTC)),
    }


def _pin(row: RowMapping) -> Pin:
    try:
        kind, status = PinKind(row["kind"]), PinStatus(row["status"])
    except ValueError as err:
        raise StorageError(
            f"The pin with id {row['id']} has the kind {row['kind']!r} and status {row['status']!r}, which this "
            "version does not know; fix the row (file, url or text; ok, missing or unreadable) or remove the pin."
        ) from err
    read_at = utc(row["read_at"])
    assert read_at is not None  # NOT NULL
    return Pin(
        persona_id=row["persona_id"],
        project=row["project"],
        kind=kind,
        source=row["source"],
        content=row["content"],
        content_hash=row["content_hash"],
        read_at=read_at.astimezone(UTC),
        added_by=row["added_by"],
        status=status,
        status_since=_aware(row["status_since"]),
        problem=row["problem"],
        stamp=row["stamp"],
        created_at=_aware(row["created_at"]),
        id=int(row["id"]),
    )


def _aware(moment: datetime | None) -> datetime | None:
    value = utc(moment)
    return value.astimezone(UTC) if value is not None else None
