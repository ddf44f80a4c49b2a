"""The lead's request for changes: stored with its deliberation, so a replica that resumes the run honours it.

`changes` holds the lead's latest CHANGES verdict (JSON, with the round it opened) while the deliberation runs; it is
NULL for every existing row and for deliberations the lead never sent back. A column already there (a database made
from the current tables) is left as it is.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the column to deliberations (only if missing: a database may have been made with it)."""
    present = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("deliberations")}
    if "changes" not in present:
        op.add_column("deliberations", sa.Column("changes", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop the column (batch mode: SQLite rebuilds the table); a running deliberation resumed later goes without."""
    with op.batch_alter_table("deliberations") as batch:
        batch.drop_column("changes")
