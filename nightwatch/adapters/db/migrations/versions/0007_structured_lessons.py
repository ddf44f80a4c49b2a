"""Structured lessons: a kept lesson's category and overview, and how far a thread's summarised messages were mined.

`pending_lessons` gains `category` and `overview` (NULL for rows kept before this revision, and for lessons that
have none), so a lesson a storage fault kept keeps both until a retry writes it. `thread_summaries` gains
`extracted`: the messages of the thread (from its first) that lessons were already taken from as they were
summarised away, so a later turn, a takeover or the next deliberation in the thread never takes them twice. It is 0
for existing rows: their summarised messages are mined once, at the thread's next turn. A column already there is
left as it is.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the columns (each only if missing: a database may have been made with them)."""
    inspector = sa.inspect(op.get_bind())
    wanted: dict[str, tuple[sa.Column[object], ...]] = {
        "pending_lessons": (
            sa.Column("category", sa.String(20), nullable=True),
            sa.Column("overview", sa.Text(), nullable=True),
        ),
        "thread_summaries": (sa.Column("extracted", sa.Integer(), nullable=False, server_default=sa.text("0")),),
    }
    for table, columns in wanted.items():
        present = {column["name"] for column in inspector.get_columns(table)}
        for column in columns:
            if column.name not in present:
                op.add_column(table, column)


def downgrade() -> None:
    """Drop the columns (batch mode: SQLite rebuilds the tables); kept lessons lose their category and overview."""
    with op.batch_alter_table("thread_summaries") as batch:
        batch.drop_column("extracted")
    with op.batch_alter_table("pending_lessons") as batch:
        batch.drop_column("overview")
        batch.drop_column("category")
