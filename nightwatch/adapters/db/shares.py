"""SqlShareRepository: who shares what with whom, in the `persona_shares` table (the ShareRepository port).

Rows never leave this module: every method returns the domain's frozen Share. A share with every persona is a row
whose receiver is NULL. A write runs in a write transaction (BEGIN IMMEDIATE on SQLite); on PostgreSQL two replicas
sharing the same thing at once meet at the unique indexes, and the one that loses updates the winner's row instead.
"""

from __future__ import annotations

import builtins
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, insert, or_, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.exc import IntegrityError

from nightwatch.adapters.db.schema import persona_shares, utc
from nightwatch.adapters.db.transactions import Bind, begin
from nightwatch.domain.errors import NotFoundError, StorageError
from nightwatch.domain.sharing.models import Share, ShareContent

shares = persona_shares.c


class SqlShareRepository:
    """The ShareRepository port on `persona_shares`; ids give the order shares were made in."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind  # an Engine, or a Connection whose transaction every call joins (see transactions.py)

    def put(self, share: Share) -> Share | None:
        """Insert the share, or update `what` of the one naming the same personas and project; returns it as it was."""
        try:
            return self._put(share)
        except IntegrityError:  # another writer inserted the same share first: update theirs
            try:
                return self._put(share)
            except IntegrityError as err:  # still refused: a persona it names was deleted meanwhile
                raise NotFoundError(
                    "One of the personas of this share no longer exists; it may have just been deleted. "
                    "List the personas and try again."
                ) from err

    def remove(self, sharer_id: int, receiver_id: int | None, project: str) -> Share | None:
        """Delete that share; returns it, or None when there was none."""
        with self._begin("remove a share", write=True) as conn:
            row = conn.execute(select(persona_shares).where(*_key(sharer_id, receiver_id, project))).mappings().first()
            if row is None:
                return None
            conn.execute(delete(persona_shares).where(shares.id == row["id"]))
        return _share(row)

    def list(self, *, project: str | None = None, persona_id: int | None = None) -> builtins.list[Share]:
        """Every share, one project's, or those naming the persona as sharer or receiver; oldest first."""
        query = select(persona_shares).order_by(shares.id)
        if project is not None:
            query = query.where(shares.project == project)
        if persona_id is not None:
            query = query.where(or_(shares.sharer_id == persona_id, shares.receiver_id == persona_id))
        with self._begin("list the shares") as conn:
            return [_share(row) for row in conn.execute(query).mappings()]

    def received(self, receiver_id: int, project: str) -> builtins.list[Share]:
        """The shares naming this persona or every persona on this project; oldest first (one indexed query)."""
        query = (
            select(persona_shares)
            .where(shares.project == project, or_(shares.receiver_id == receiver_id, shares.receiver_id.is_(None)))
            .order_by(shares.id)
        )
        with self._begin("read what is shared with a persona") as conn:
            return [_share(row) for row in conn.execute(query).mappings()]

    def _put(self, share: Share) -> Share | None:
        key = _key(share.sharer_id, share.receiver_id, share.project)
        with self._begin("store a share", write=True) as conn:
            row = conn.execute(select(persona_shares).where(*key).with_for_update()).mappings().first()
            if row is None:
                conn.execute(insert(persona_shares).values(**_values(share)))
                return None
            conn.execute(update(persona_shares).where(shares.id == row["id"]).values(what=share.what.value))
        return _share(row)

    def _begin(self, doing: str, *, write: bool = False) -> AbstractContextManager[Connection]:
        """A transaction whose database errors (but a clash at a unique index) become a StorageError."""
        return begin(self._bind, doing, write=write, clashes=True)


def _key(sharer_id: int, receiver_id: int | None, project: str) -> tuple[ColumnElement[bool], ...]:
    receiver = shares.receiver_id.is_(None) if receiver_id is None else shares.receiver_id == receiver_id
    return shares.sharer_id == sharer_id, receiver, shares.project == project


def _values(share: Share) -> dict[str, Any]:
    return {
        "sharer_id": share.sharer_id,
        "receiver_id": share.receiver_id,
        "project": share.project,
        "what": share.what.value,
        "created_at": (share.created_at or datetime.now(UTC)).astimezone(UTC),
    }


def _share(row: RowMapping) -> Share:
    try:
        what = ShareContent(row["what"])
    except ValueError as err:
        raise StorageError(
            f"The share with id {row['id']} says it opens {row['what']!r}, which this version does not know; "
            "fix the row (lessons, pins or all) or remove the share."
        ) from err
    return Share(row["sharer_id"], row["receiver_id"], row["project"], what, utc(row["created_at"]))
