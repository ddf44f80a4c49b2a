"""Held lessons: lessons taught that wait for an admin (taught by someone who may not teach, or reading as an
instruction to the model), in the database so every replica shows and settles the same ones.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the table (unless a database made from the models has it already)."""
    if "held_lessons" in sa.inspect(op.get_bind()).get_table_names():
        return
    op.create_table(
        "held_lessons",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("persona_id", sa.Integer(), nullable=False),
        sa.Column("persona", sa.String(80), nullable=False),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("reason", sa.String(20), nullable=False),
        sa.Column("held_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("author", sa.String(80), nullable=True),
        sa.Column("link", sa.Text(), nullable=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("category", sa.String(20), nullable=True),
    )


def downgrade() -> None:
    """Drop the table; lessons still held are lost (nothing of them reached a memory)."""
    op.drop_table("held_lessons")
