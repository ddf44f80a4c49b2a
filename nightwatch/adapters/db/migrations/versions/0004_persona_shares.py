"""Persona shares: one persona's knowledge of a project opened read-only to another persona, or to every persona.

`sharer_id` and `receiver_id` name personas by id (a rename changes nothing) and go with their persona when it is
deleted; `receiver_id` NULL means every persona, ones created later included. `what` is lessons, pins or all. At
most one share per sharer, receiver and project: a unique constraint, and a partial unique index for the shares with
every persona (NULLs never clash in a unique constraint).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the persona_shares table and its indexes."""
    op.create_table(
        "persona_shares",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("sharer_id", sa.Integer(), sa.ForeignKey("personas.id", ondelete="CASCADE"), nullable=False),
        sa.Column("receiver_id", sa.Integer(), sa.ForeignKey("personas.id", ondelete="CASCADE"), nullable=True),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("what", sa.String(10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("sharer_id", "receiver_id", "project", name="uq_persona_shares_sharer_receiver_project"),
    )
    op.create_index(
        "uq_persona_shares_with_all",
        "persona_shares",
        ["sharer_id", "project"],
        unique=True,
        sqlite_where=sa.text("receiver_id IS NULL"),
        postgresql_where=sa.text("receiver_id IS NULL"),
    )
    op.create_index("ix_persona_shares_project_receiver", "persona_shares", ["project", "receiver_id"])


def downgrade() -> None:
    """Drop the persona_shares table: every share is forgotten (the personas and their memory stay)."""
    op.drop_index("ix_persona_shares_project_receiver", table_name="persona_shares")
    op.drop_index("uq_persona_shares_with_all", table_name="persona_shares")
    op.drop_table("persona_shares")
