"""Persona item shares: one lesson or one pin of a persona opened read-only to another persona, or to every persona.

`kind` is lesson or pin and `item` the lesson's id or the pin's number: named, never copied, and with no foreign key to
the pin, so a pin removed leaves its share (listed as gone) rather than silently taking it away. Personas go by id and
their item shares go with them. At most one share per sharer, receiver, project and item: a unique constraint, and a
partial unique index for the shares with every persona (NULLs never clash in a unique constraint).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the persona_item_shares table and its indexes (unless a database made from the models has them)."""
    if "persona_item_shares" in sa.inspect(op.get_bind()).get_table_names():
        return
    op.create_table(
        "persona_item_shares",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("sharer_id", sa.Integer(), sa.ForeignKey("personas.id", ondelete="CASCADE"), nullable=False),
        sa.Column("receiver_id", sa.Integer(), sa.ForeignKey("personas.id", ondelete="CASCADE"), nullable=True),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("item", sa.String(20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("sharer_id", "receiver_id", "project", "kind", "item", name="uq_persona_item_shares"),
    )
    op.create_index(
        "uq_persona_item_shares_with_all",
        "persona_item_shares",
        ["sharer_id", "project", "kind", "item"],
        unique=True,
        sqlite_where=sa.text("receiver_id IS NULL"),
        postgresql_where=sa.text("receiver_id IS NULL"),
    )
    op.create_index("ix_persona_item_shares_project_receiver", "persona_item_shares", ["project", "receiver_id"])


def downgrade() -> None:
    """Drop the table: every share of one item is forgotten (the personas, their memory, pins and other shares stay)."""
    op.drop_index("ix_persona_item_shares_project_receiver", table_name="persona_item_shares")
    op.drop_index("uq_persona_item_shares_with_all", table_name="persona_item_shares")
    op.drop_table("persona_item_shares")
