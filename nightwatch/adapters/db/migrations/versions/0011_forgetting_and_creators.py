"""Lessons a persona forgot with its `memory_forget` tool, kept so that Undo can restore them; and who created each
persona in Slack (`personas.created_by`), who may clear its memory besides the admins.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the column and the table (unless a database made from the models has them already)."""
    inspector = sa.inspect(op.get_bind())
    if "created_by" not in {column["name"] for column in inspector.get_columns("personas")}:
        op.add_column("personas", sa.Column("created_by", sa.String(80), nullable=True))
    if "forgotten_lessons" in inspector.get_table_names():
        return
    op.create_table(
        "forgotten_lessons",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("persona_id", sa.Integer(), nullable=False),
        sa.Column("persona", sa.String(80), nullable=False),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("lesson_id", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("kept", sa.Text(), nullable=False),
        sa.Column("thread", sa.String(200), nullable=False),
        sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("restored_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("restored_by", sa.String(80), nullable=True),
    )


def downgrade() -> None:
    """Drop the table and the column: forgotten lessons can no longer be undone, and creators are forgotten."""
    op.drop_table("forgotten_lessons")
    with op.batch_alter_table("personas") as batch:
        batch.drop_column("created_by")
