"""Pin numbers are never given again: on SQLite the pins table is rebuilt with AUTOINCREMENT, every row kept.

A pin's number is its row id, and `pin remove N` names a pin by it. SQLite gives a new row the highest id in use plus
one, so removing the newest pin gave its number to the next one, and an old `pin remove N` removed a different pin.
With AUTOINCREMENT, SQLite keeps the highest id ever given (in sqlite_sequence) and counts on from it, under the
file's write lock, so two writers never get the same number. PostgreSQL's identity sequence never gives a number
twice already: nothing changes there.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (
    "id, persona_id, project, kind, source, source_key, content, content_hash, stamp, read_at, added_by, status, "
    "status_since, problem, created_at"
)


def upgrade() -> None:
    """Rebuild the pins table with AUTOINCREMENT on SQLite (its rows, ids and indexes kept)."""
    if op.get_bind().dialect.name == "sqlite":
        _rebuild(autoincrement=True)


def downgrade() -> None:
    """Rebuild it without AUTOINCREMENT on SQLite: a removed pin's number may be given again, as before."""
    if op.get_bind().dialect.name == "sqlite":
        _rebuild(autoincrement=False)


def _rebuild(*, autoincrement: bool) -> None:
    """Copy the pins into a new table of the same shape, then put it in the old one's place."""
    op.create_table(
        "pins_rebuilt",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("persona_id", sa.Integer(), sa.ForeignKey("personas.id", ondelete="CASCADE"), nullable=True),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("source_key", sa.String(64), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("stamp", sa.String(200), nullable=True),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("added_by", sa.String(80), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("status_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("persona_id", "project", "source_key", name="uq_pins_persona_project_source"),
        sqlite_autoincrement=autoincrement,
    )
    # Copying the rows with their ids sets sqlite_sequence to the highest of them. The SQL is built from constants.
    op.execute(f"INSERT INTO pins_rebuilt ({_COLUMNS}) SELECT {_COLUMNS} FROM pins")  # noqa: S608
    op.drop_index("ix_pins_project_persona", table_name="pins")
    op.drop_index("uq_pins_project_wide_source", table_name="pins")
    op.drop_table("pins")
    op.rename_table("pins_rebuilt", "pins")
    op.create_index(
        "uq_pins_project_wide_source",
        "pins",
        ["project", "source_key"],
        unique=True,
        sqlite_where=sa.text("persona_id IS NULL"),
    )
    op.create_index("ix_pins_project_persona", "pins", ["project", "persona_id"])
