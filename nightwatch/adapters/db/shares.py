"""Who shares what with whom: SqlShareRepository on `persona_shares` (the ShareRepository port), and
SqlItemShareRepository on `persona_item_shares`, the shares of one lesson or one pin (the ItemShareRepository port).

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

from nightwatch.adapters.db.schema import persona_item_shares, persona_shares, utc
from nightwatch.adapters.db.transactions import Bind, begin
from nightwatch.domain.errors import NotFoundError, StorageError
from nightwatch.domain.sharing.models import Item, ItemKind, ItemShare, Share, ShareContent

shares = persona_shares.c
items = persona_item_shares.c


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


class SqlItemShareRepository:
    """The ItemShareRepository port on `persona_item_shares`; ids give the order shares were made in."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind

    def put(self, share: ItemShare) -> ItemShare | None:
        """Insert the share unless it is stored already; returns the one stored, or None when it is new."""
        try:
            return self._put(share)
        except IntegrityError:  # another writer inserted the same share first, or a persona is gone
            found = self._find(share.sharer_id, share.receiver_id, share.project, share.item)
            if found is None:
                raise NotFoundError(
                    "One of the personas of this share no longer exists; it may have just been deleted. "
                    "List the personas and try again."
                ) from None
            return found

    def remove(self, sharer_id: int, receiver_id: int | None, project: str, item: Item) -> ItemShare | None:
        """Delete that share; returns it, or None when there was none."""
        with begin(self._bind, "remove a share", write=True, clashes=True) as conn:
            query = select(persona_item_shares).where(*_item_key(sharer_id, receiver_id, project, item))
            row = conn.execute(query).mappings().first()
            if row is None:
                return None
            conn.execute(delete(persona_item_shares).where(items.id == row["id"]))
        return _item_share(row)

    def list(self, *, project: str | None = None, persona_id: int | None = None) -> builtins.list[ItemShare]:
        """Every item share, one project's, or those naming the persona as sharer or receiver; oldest first."""
        query = select(persona_item_shares).order_by(items.id)
        if project is not None:
            query = query.where(items.project == project)
        if persona_id is not None:
            query = query.where(or_(items.sharer_id == persona_id, items.receiver_id == persona_id))
        with begin(self._bind, "list the shares", clashes=True) as conn:
            return [_item_share(row) for row in conn.execute(query).mappings()]

    def received(self, receiver_id: int, project: str) -> builtins.list[ItemShare]:
        """The item shares naming this persona or every persona on this project; oldest first (one indexed query)."""
        query = (
            select(persona_item_shares)
            .where(items.project == project, or_(items.receiver_id == receiver_id, items.receiver_id.is_(None)))
            .order_by(items.id)
        )
        with begin(self._bind, "read what is shared with a persona", clashes=True) as conn:
            return [_item_share(row) for row in conn.execute(query).mappings()]

    def _put(self, share: ItemShare) -> ItemShare | None:
        key = _item_key(share.sharer_id, share.receiver_id, share.project, share.item)
        with begin(self._bind, "store a share", write=True, clashes=True) as conn:
            row = conn.execute(select(persona_item_shares).where(*key)).mappings().first()
            if row is not None:
                return _item_share(row)
            conn.execute(insert(persona_item_shares).values(**_item_values(share)))
        return None

    def _find(self, sharer_id: int, receiver_id: int | None, project: str, item: Item) -> ItemShare | None:
        with begin(self._bind, "read a share", clashes=True) as conn:
            query = select(persona_item_shares).where(*_item_key(sharer_id, receiver_id, project, item))
            row = conn.execute(query).mappings().first()
        return _item_share(row) if row is not None else None


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


def _item_key(sharer_id: int, receiver_id: int | None, project: str, item: Item) -> tuple[ColumnElement[bool], ...]:
    receiver = items.receiver_id.is_(None) if receiver_id is None else items.receiver_id == receiver_id
    return (
        items.sharer_id == sharer_id,
        receiver,
        items.project == project,
        items.kind == item.kind,
        items.item == item.id,
    )


def _item_values(share: ItemShare) -> dict[str, Any]:
    return {
        "sharer_id": share.sharer_id,
        "receiver_id": share.receiver_id,
        "project": share.project,
        "kind": share.item.kind.value,
        "item": share.item.id,
        "created_at": (share.created_at or datetime.now(UTC)).astimezone(UTC),
    }


def _item_share(row: RowMapping) -> ItemShare:
    try:
        kind = ItemKind(row["kind"])
    except ValueError as err:
        raise StorageError(
            f"The share with id {row['id']} in persona_item_shares is of a {row['kind']!r}, which this version does "
            "not know; fix the row (lesson or pin) or remove the share."
        ) from err
    return ItemShare(
        row["sharer_id"], row["receiver_id"], row["project"], Item(kind, row["item"]), utc(row["created_at"])
    )
