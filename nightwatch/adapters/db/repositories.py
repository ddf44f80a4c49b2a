"""SQLAlchemy repositories: rows in, frozen domain dataclasses out. No business rules live here."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Row, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db.schema import persona_shares, personas, pins, seeded_defaults, utc
from nightwatch.adapters.db.transactions import Bind, begin
from nightwatch.domain.errors import ConflictError, InvalidInputError, NotFoundError, StorageError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import section_to_dict, skill_from_dict, soul_from_dict, style_from_dict


def _aware(value: datetime | None) -> datetime:
    """A stored time as aware UTC (SQLite drops the zone; PostgreSQL returns the session's zone)."""
    if value is None:
        raise StorageError("A persona row has no timestamp; the database looks damaged. Restore it from a backup.")
    aware = utc(value)
    assert aware is not None
    return aware.astimezone(UTC)


def _for_storage(value: datetime | None) -> datetime:
    """A time to store, in UTC (SQLite would keep the wall clock of any other zone and drop the offset)."""
    return (value or datetime.now(UTC)).astimezone(UTC)


class SqlPersonaRepository:
    """PersonaRepository over the `personas` and `seeded_defaults` tables; names are unique via `name_key`."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind  # an Engine, or a Connection whose transaction every call joins (see transactions.py)

    @contextmanager
    def _begin(self, doing: str) -> Iterator[Connection]:
        """A transaction whose database errors become domain errors a person can act on."""
        try:
            with begin(self._bind, doing, clashes=True) as conn:
                yield conn
        except IntegrityError as err:
            raise ConflictError(
                "Another persona already has that name (ignoring case) or the same memory folder; choose another name."
            ) from err

    # --- reading ------------------------------------------------------------------------------------------------

    def list(self, *, include_inactive: bool = True) -> builtins.list[Persona]:
        query = select(personas).order_by(personas.c.id)
        if not include_inactive:
            query = query.where(personas.c.active.is_(True))
        with self._begin("list the personas") as conn:
            return [self._persona(row) for row in conn.execute(query)]

    def get(self, persona_id: int) -> Persona | None:
        with self._begin("read a persona") as conn:
            row = conn.execute(select(personas).where(personas.c.id == persona_id)).first()
        return None if row is None else self._persona(row)

    def find(self, name_or_slug: str) -> Persona | None:
        key = name_or_slug.strip().lower()
        with self._begin("look up a persona") as conn:
            # A name match wins over a slug match, so `find(p.name)` always returns p.
            row = conn.execute(select(personas).where(personas.c.name_key == key)).first()
            if row is None:
                row = conn.execute(select(personas).where(personas.c.slug == key)).first()
        return None if row is None else self._persona(row)

    # --- writing ------------------------------------------------------------------------------------------------

    def add(self, persona: Persona) -> Persona:
        values = self._values(persona)
        with self._begin("add the persona") as conn:
            key = conn.execute(insert(personas).values(**values)).inserted_primary_key
            assert key is not None
            row = conn.execute(select(personas).where(personas.c.id == key[0])).one()
        return self._persona(row)

    def save(self, persona: Persona) -> Persona:
        if persona.id is None:
            raise NotFoundError(f"The persona {persona.name} has not been stored yet; create it first.")
        values = self._values(persona)
        with self._begin("save the persona") as conn:
            result = conn.execute(update(personas).where(personas.c.id == persona.id).values(**values))
            if result.rowcount == 0:
                raise NotFoundError(f"The persona {persona.name} no longer exists; it may have been deleted.")
            row = conn.execute(select(personas).where(personas.c.id == persona.id)).one()
        return self._persona(row)

    def remove(self, persona_id: int) -> None:
        """Delete the persona and, in the same transaction, the shares it gives and receives and its own pins.

        The foreign keys cascade too; deleting those rows first keeps that true on a SQLite connection opened without
        `PRAGMA foreign_keys=ON`. Project-wide pins (no persona) stay.
        """
        shares = persona_shares.c
        with self._begin("delete the persona") as conn:
            conn.execute(
                delete(persona_shares).where(or_(shares.sharer_id == persona_id, shares.receiver_id == persona_id))
            )
            conn.execute(delete(pins).where(pins.c.persona_id == persona_id))
            conn.execute(delete(personas).where(personas.c.id == persona_id))

    def file_marks(self) -> dict[str, str | None]:
        with self._begin("read which personas came from files") as conn:
            rows = conn.execute(select(seeded_defaults.c.slug, seeded_defaults.c.fingerprint))
            return {row.slug: row.fingerprint for row in rows}

    def mark_file(self, slug: str, fingerprint: str | None) -> None:
        with self._begin("record a persona file") as conn:
            changed = conn.execute(
                update(seeded_defaults).where(seeded_defaults.c.slug == slug).values(fingerprint=fingerprint)
            )
            if changed.rowcount:
                return
        try:
            with self._begin("record a persona file") as conn:
                conn.execute(
                    insert(seeded_defaults).values(slug=slug, seeded_at=datetime.now(UTC), fingerprint=fingerprint)
                )
        except ConflictError:
            self.mark_file(slug, fingerprint)  # another replica inserted it meanwhile: update theirs

    # --- mapping ------------------------------------------------------------------------------------------------

    @staticmethod
    def _values(persona: Persona) -> dict[str, Any]:
        return {
            "name": persona.name,
            "name_key": persona.name.lower(),
            "slug": persona.slug,
            "role": persona.role,
            "avatar": persona.avatar,
            "soul": section_to_dict(persona.soul),
            "style": section_to_dict(persona.style),
            "skill": section_to_dict(persona.skill),
            "model": persona.model,
            "system_prompt_override": persona.system_prompt_override,
            "active": persona.active,
            "created_by": persona.created_by,
            "created_at": _for_storage(persona.created_at),
            "updated_at": _for_storage(persona.updated_at or persona.created_at),
        }

    @staticmethod
    def _persona(row: Row[Any]) -> Persona:
        data = row._mapping
        where = f"persona {data['name']!r} (id {data['id']}) in the database"
        try:
            soul = soul_from_dict(data["soul"], f"{where}: soul")
            style = style_from_dict(data["style"], f"{where}: style")
            skill = skill_from_dict(data["skill"], f"{where}: skill")
        except InvalidInputError as err:
            raise StorageError(f"{err} Fix the row, or delete and recreate the persona.") from err
        return Persona(
            id=data["id"],
            name=data["name"],
            slug=data["slug"],
            role=data["role"],
            avatar=data["avatar"] or "",
            soul=soul,
            style=style,
            skill=skill,
            model=data["model"],
            system_prompt_override=data["system_prompt_override"],
            active=True if data["active"] is None else bool(data["active"]),
            created_at=_aware(data["created_at"]),
            created_by=data["created_by"],
            updated_at=_aware(data["updated_at"]),
        )
