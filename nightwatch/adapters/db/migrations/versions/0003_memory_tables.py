"""Memory in the database: one row per persona and project memory (its markdown), and its lesson vectors.

`memory_documents` holds what the files store keeps in `main.md` (and `main.md.prev` as `previous`), with a version
bumped by every write; `owner` is the persona's slug, or `.archived/<slug>-<UTC timestamp>` once it is deleted.
`memory_vectors` holds the lesson vectors up to 512 to a row (adapters/db/vector_segments.py), deleted with their
memory. Used when NIGHTWATCH_MEMORY_STORE=database (the default on PostgreSQL).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the two memory tables."""
    op.create_table(
        "memory_documents",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(120), nullable=False),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("previous", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("owner", "project", name="uq_memory_documents_owner_project"),
    )
    op.create_table(
        "memory_vectors",
        sa.Column(
            "document_id",
            sa.Integer(),
            sa.ForeignKey("memory_documents.id", ondelete="CASCADE"),
            primary_key=True,
            nullable=False,
        ),
        sa.Column("segment", sa.Integer(), primary_key=True, nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("lesson_keys", sa.LargeBinary(), nullable=False),
        sa.Column("vectors", sa.LargeBinary(), nullable=False),
    )


def downgrade() -> None:
    """Drop the memory tables and every memory kept in them (export first: `nightwatch memory export DIR`)."""
    op.drop_table("memory_vectors")
    op.drop_table("memory_documents")
