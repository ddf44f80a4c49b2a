"""Pinned context: documents (a file, a page, a text) pinned to a persona's prompts for one project, or to all.

`persona_id` names the persona by id (a rename changes nothing) and goes with it when it is deleted; NULL pins the
document for every persona of the project. `content` is the snapshot injected into prompts; `stamp` and `status`
say which version of a file it came from and whether the file is still there. One pin per persona (or project-wide),
project and source: a unique constraint, and a partial unique index for the project-wide ones (NULLs never clash in
a unique constraint).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the pins table and its indexes."""
    op.create_table(
        "pins",
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
    )
    op.create_index(
        "uq_pins_project_wide_source",
        "pins",
        ["project", "source_key"],
        unique=True,
        sqlite_where=sa.text("persona_id IS NULL"),
        postgresql_where=sa.text("persona_id IS NULL"),
    )
    op.create_index("ix_pins_project_persona", "pins", ["project", "persona_id"])


def downgrade() -> None:
    """Drop the pins table: every pin is forgotten (the files and pages themselves are untouched)."""
    op.drop_index("ix_pins_project_persona", table_name="pins")
    op.drop_index("uq_pins_project_wide_source", table_name="pins")
    op.drop_table("pins")
