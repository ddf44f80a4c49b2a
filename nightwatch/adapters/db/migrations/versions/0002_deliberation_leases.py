"""Deliberation leases: a Slack deliberation's heartbeat, and how many times another replica took it over.

`heartbeat_at` is NULL for terminal deliberations and rows written before this revision: no lease, so they are
never taken over. `takeovers` starts at 0 for every existing row. A column already there (a database made from
the current tables by an older test or tool) is left as it is.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the lease columns to deliberations (each only if missing: a database may have been made with them)."""
    present = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("deliberations")}
    for column in (
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("takeovers", sa.Integer(), nullable=False, server_default=sa.text("0")),
    ):
        if column.name not in present:
            op.add_column("deliberations", column)


def downgrade() -> None:
    """Drop the lease columns (batch mode: SQLite rebuilds the table)."""
    with op.batch_alter_table("deliberations") as batch:
        batch.drop_column("takeovers")
        batch.drop_column("heartbeat_at")
