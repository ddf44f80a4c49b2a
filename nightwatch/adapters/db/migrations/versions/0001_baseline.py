"""Baseline: every table Night Watch had before migrations, made here or completed on an earlier release's database.

On an empty database this creates each table as written below. On a database an earlier release made (its tables,
no alembic_version) the tables and their rows stay: a table it lacks is created, a column it lacks is added (every
such column is nullable or has a server default), an index it lacks is made. The old `meta` table is dropped: it held
only `schema_version`, which alembic_version replaces.

The tables are written out, not taken from schema.py, so that later changes to schema.py cannot change what this
revision does; a later change is a later revision.

Revision ID: 0001
Revises:
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = (  # in creation order; dropped in reverse
    "personas",
    "seeded_defaults",
    "deliberations",
    "turns",
    "thread_summaries",
    "seen_events",
    "channel_projects",
    "leases",
    "pending_lessons",
)


def upgrade() -> None:
    """Create the baseline tables and indexes, or add what an earlier release's tables lack; drop `meta`."""
    _table(
        "personas",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("name_key", sa.String(40), nullable=False),  # lower-cased name: unique ignoring case
        sa.Column("slug", sa.String(80), nullable=False),
        sa.Column("role", sa.String(200), nullable=False),
        sa.Column("avatar", sa.String(500), nullable=False, server_default=""),
        sa.Column("soul", sa.JSON(), nullable=False),
        sa.Column("style", sa.JSON(), nullable=False),
        sa.Column("skill", sa.JSON(), nullable=False),
        sa.Column("model", sa.String(100), nullable=True),
        sa.Column("system_prompt_override", sa.Text(), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("name_key"),
        sa.UniqueConstraint("slug"),
    )
    _table(
        "seeded_defaults",
        sa.Column("slug", sa.String(80), primary_key=True),
        sa.Column("seeded_at", sa.DateTime(timezone=True), nullable=False),
    )
    _table(
        "deliberations",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("topic", sa.Text(), nullable=False),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("thread", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("verdict", sa.JSON(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("output_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("cache_read_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("cache_write_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("owner", sa.String(200), nullable=True),  # the process running it; NULL in rows from before owners
    )
    _index("ix_deliberations_thread", "deliberations", "thread")
    _index("ix_deliberations_status", "deliberations", "status")
    _table(
        "turns",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("deliberation_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("persona", sa.String(40), nullable=False),
        sa.Column("role", sa.String(200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("lessons_injected", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("skipped", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("input_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("output_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("cache_read_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("cache_write_tokens", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["deliberation_id"], ["deliberations.id"], ondelete="CASCADE"),
    )
    _index("ix_turns_deliberation", "turns", "deliberation_id", "position")
    _table(
        "thread_summaries",
        sa.Column("thread", sa.String(200), primary_key=True),
        sa.Column("covered", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    _table(
        "seen_events",
        sa.Column("event_id", sa.String(100), primary_key=True),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    _table(
        "channel_projects",
        sa.Column("channel", sa.String(40), primary_key=True),
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_proactive_at", sa.DateTime(timezone=True), nullable=True),
    )
    _table(
        "leases",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("holder", sa.String(100), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    _table(  # lessons a memory write could not store, until a retry writes them (oldest id first)
        "pending_lessons",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("persona", sa.String(80), nullable=False),  # the persona's slug, as its memory folder is named
        sa.Column("project", sa.String(80), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("link", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("kept_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("author", sa.String(80), nullable=True),  # who wrote it, when a person did
    )
    _index("ix_pending_lessons_persona", "pending_lessons", "persona", "project", "id")
    if sa.inspect(op.get_bind()).has_table("meta"):
        op.drop_table("meta")


def downgrade() -> None:
    """Drop every baseline table (and its rows): back to an empty database."""
    for name in reversed(TABLES):
        op.drop_table(name)


def _table(name: str, *items: sa.schema.SchemaItem) -> None:
    """Create the table; if an earlier release made it already, add the columns it lacks."""
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table(name):
        op.create_table(name, *items)
        return
    present = {column["name"] for column in inspector.get_columns(name)}
    for item in items:
        if isinstance(item, sa.Column) and item.name not in present:
            op.add_column(name, item)


def _index(name: str, table: str, *columns: str) -> None:
    """Create the index unless the table has it already."""
    if name not in {index["name"] for index in sa.inspect(op.get_bind()).get_indexes(table)}:
        op.create_index(name, table, list(columns))
