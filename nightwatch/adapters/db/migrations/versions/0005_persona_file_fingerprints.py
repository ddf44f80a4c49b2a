"""Persona files: each mark of a persona added from a file keeps the fingerprint of what its file last set.

A persona defined by a YAML file (personas/ or NIGHTWATCH_PERSONAS_DIR) is updated from its file while its row still
has that fingerprint, that is while nobody has edited it in Slack or the CLI (domain/personas/files.py). Marks from
before this revision get NULL: their persona is adopted by its file only once it equals the file.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the fingerprint column (NULL in every existing mark)."""
    op.add_column("seeded_defaults", sa.Column("fingerprint", sa.String(64), nullable=True))


def downgrade() -> None:
    """Drop the fingerprint column (batch mode: SQLite rebuilds the table)."""
    with op.batch_alter_table("seeded_defaults") as batch:
        batch.drop_column("fingerprint")
