"""The database: the tables the repositories read and write (the engine is made in engine.py, named here too).

`metadata` is what the code expects; the migrations in `migrations/versions/` are what makes a database so. A change
here needs a migration too: tests/adapters/db/test_migrations.py compares the migrated database with `metadata`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
    true,
)

from nightwatch.adapters.db.engine import make_engine  # noqa: F401  (where its callers have always found it)

metadata = MetaData()

personas = Table(
    "personas",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(40), nullable=False),
    Column("name_key", String(40), nullable=False, unique=True),  # lower-cased name: unique ignoring case
    Column("slug", String(80), nullable=False, unique=True),
    Column("role", String(200), nullable=False),
    Column("avatar", String(500), nullable=False, server_default=""),
    Column("soul", JSON, nullable=False),
    Column("style", JSON, nullable=False),
    Column("skill", JSON, nullable=False),
    Column("model", String(100), nullable=True),
    Column("system_prompt_override", Text, nullable=True),
    Column("active", Boolean, nullable=False, server_default=true()),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("created_by", String(80), nullable=True),  # the Slack user id of whoever created it there (else NULL)
)

# One mark per persona ever added from a file (the name is from when only the packaged defaults were): a deleted
# persona is not added again, and `fingerprint` is what its file last set (domain/personas/files.py).
seeded_defaults = Table(
    "seeded_defaults",
    metadata,
    Column("slug", String(80), primary_key=True),
    Column("seeded_at", DateTime(timezone=True), nullable=False),
    Column("fingerprint", String(64), nullable=True),
)

deliberations = Table(
    "deliberations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("topic", Text, nullable=False),
    Column("project", String(80), nullable=False),
    Column("thread", String(200), nullable=False),
    Column("status", String(20), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("verdict", JSON, nullable=True),
    Column("input_tokens", Integer, nullable=False, server_default=text("0")),
    Column("output_tokens", Integer, nullable=False, server_default=text("0")),
    Column("cache_read_tokens", Integer, nullable=False, server_default=text("0")),
    Column("cache_write_tokens", Integer, nullable=False, server_default=text("0")),
    Column("owner", String(200), nullable=True),  # the process running it; NULL in rows from before owners
    # The owner's lease, renewed while a Slack replica runs it; NULL for terminal runs (nobody takes those over).
    Column("heartbeat_at", DateTime(timezone=True), nullable=True),
    Column("takeovers", Integer, nullable=False, server_default=text("0")),  # times another replica took it over
    Column("changes", JSON, nullable=True),  # the lead's latest request for one more round, for a resumed run
    Index("ix_deliberations_thread", "thread"),
    Index("ix_deliberations_status", "status"),
)

turns = Table(
    "turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("deliberation_id", Integer, ForeignKey("deliberations.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("persona", String(40), nullable=False),
    Column("role", String(200), nullable=False),
    Column("text", Text, nullable=False),
    Column("round", Integer, nullable=False),
    Column("lessons_injected", Integer, nullable=False, server_default=text("0")),
    Column("skipped", Boolean, nullable=False, server_default=false()),
    Column("input_tokens", Integer, nullable=False, server_default=text("0")),
    Column("output_tokens", Integer, nullable=False, server_default=text("0")),
    Column("cache_read_tokens", Integer, nullable=False, server_default=text("0")),
    Column("cache_write_tokens", Integer, nullable=False, server_default=text("0")),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_turns_deliberation", "deliberation_id", "position"),
)

thread_summaries = Table(
    "thread_summaries",
    metadata,
    Column("thread", String(200), primary_key=True),
    Column("covered", Integer, nullable=False),
    Column("summary", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # Messages (from the thread's first) whose lessons were taken as they were summarised away: never taken twice.
    Column("extracted", Integer, nullable=False, server_default=text("0")),
)

seen_events = Table(
    "seen_events",
    metadata,
    Column("event_id", String(100), primary_key=True),
    Column("seen_at", DateTime(timezone=True), nullable=False),
)

channel_projects = Table(
    "channel_projects",
    metadata,
    Column("channel", String(40), primary_key=True),
    Column("project", String(80), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("last_activity_at", DateTime(timezone=True), nullable=True),
    Column("last_proactive_at", DateTime(timezone=True), nullable=True),
)

leases = Table(
    "leases",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("holder", String(100), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

pending_lessons = Table(  # lessons a memory write could not store, until a retry writes them (oldest id first)
    "pending_lessons",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("persona", String(80), nullable=False),  # the persona's slug, as its memory folder is named
    Column("project", String(80), nullable=False),
    Column("text", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("day", Date, nullable=False),
    Column("link", Text, nullable=True),
    Column("error", Text, nullable=False),
    Column("kept_at", DateTime(timezone=True), nullable=False),
    Column("author", String(80), nullable=True),  # who wrote it, when a person did
    Column("category", String(20), nullable=True),  # the lesson's category and overview, when it has them
    Column("overview", Text, nullable=True),
    Index("ix_pending_lessons_persona", "persona", "project", "id"),
)

memory_documents = Table(  # one memory per persona and project: the markdown a file store keeps in main.md
    "memory_documents",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # The persona's slug; `.archived/<slug>-<UTC timestamp>` once the persona is deleted (the folder the file store
    # would use under agents/), so a slug, which never holds a dot or a slash, never matches an archived row.
    Column("owner", String(120), nullable=False),
    Column("project", String(80), nullable=False),
    Column("text", Text, nullable=False),
    Column("version", Integer, nullable=False),  # 0 until text is first written, then one more per write
    Column("previous", Text, nullable=True),  # the text the last compaction replaced (main.md.prev), for rollback
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("owner", "project", name="uq_memory_documents_owner_project"),
)

memory_vectors = Table(  # lesson vectors (domain/vectors.py), up to 512 per row: adapters/db/vector_segments.py
    "memory_vectors",
    metadata,
    Column(
        "document_id", Integer, ForeignKey("memory_documents.id", ondelete="CASCADE"), primary_key=True, nullable=False
    ),
    Column("segment", Integer, primary_key=True, nullable=False),  # 0, 1, 2, ... in the order they were written
    Column("dimensions", Integer, nullable=False),
    Column("lesson_keys", LargeBinary, nullable=False),  # 16 ASCII characters per vector: a hash of its lesson's text
    Column("vectors", LargeBinary, nullable=False),  # little-endian float32, `dimensions` per vector, keys' order
)

persona_shares = Table(  # one persona's knowledge of a project opened read-only to another, or to every persona
    "persona_shares",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sharer_id", Integer, ForeignKey("personas.id", ondelete="CASCADE"), nullable=False),
    # NULL: every persona ("all"), ones created later included; never expanded into one row per persona.
    Column("receiver_id", Integer, ForeignKey("personas.id", ondelete="CASCADE"), nullable=True),
    Column("project", String(80), nullable=False),
    Column("what", String(10), nullable=False),  # lessons, pins or all
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("sharer_id", "receiver_id", "project", name="uq_persona_shares_sharer_receiver_project"),
    # NULLs differ in a unique constraint, so one share with all per sharer and project needs its own index.
    Index(
        "uq_persona_shares_with_all",
        "sharer_id",
        "project",
        unique=True,
        sqlite_where=text("receiver_id IS NULL"),
        postgresql_where=text("receiver_id IS NULL"),
    ),
    Index("ix_persona_shares_project_receiver", "project", "receiver_id"),
)

persona_item_shares = Table(  # one lesson or one pin of a persona's, opened read-only to another, or to every persona
    "persona_item_shares",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sharer_id", Integer, ForeignKey("personas.id", ondelete="CASCADE"), nullable=False),
    Column("receiver_id", Integer, ForeignKey("personas.id", ondelete="CASCADE"), nullable=True),  # NULL: all
    Column("project", String(80), nullable=False),
    Column("kind", String(10), nullable=False),  # lesson or pin
    # The lesson's id or the pin's number, named and never copied (no foreign key: a pin removed leaves its share,
    # which then says the pin is gone).
    Column("item", String(20), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("sharer_id", "receiver_id", "project", "kind", "item", name="uq_persona_item_shares"),
    Index(
        "uq_persona_item_shares_with_all",
        "sharer_id",
        "project",
        "kind",
        "item",
        unique=True,
        sqlite_where=text("receiver_id IS NULL"),
        postgresql_where=text("receiver_id IS NULL"),
    ),
    Index("ix_persona_item_shares_project_receiver", "project", "receiver_id"),
)

pins = Table(  # pinned context: a document's snapshot injected into a persona's prompts for one project
    "pins",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # The persona by id (a rename keeps its pins); NULL: every persona of the project. Deleted with its persona.
    Column("persona_id", Integer, ForeignKey("personas.id", ondelete="CASCADE"), nullable=True),
    Column("project", String(80), nullable=False),
    Column("kind", String(10), nullable=False),  # file, url or text
    Column("source", Text, nullable=False),  # the file's absolute path, the URL, or a text pin's first words
    Column("source_key", String(64), nullable=False),  # sha256 of the kind and the source (a text pin: its text)
    Column("content", Text, nullable=False),  # the snapshot, redacted
    Column("content_hash", String(64), nullable=False),
    Column("stamp", String(200), nullable=True),  # a file's version when read: device, inode, size, times
    Column("read_at", DateTime(timezone=True), nullable=False),
    Column("added_by", String(80), nullable=False),  # "cli" or a Slack user id
    Column("status", String(20), nullable=False),  # ok, missing or unreadable
    Column("status_since", DateTime(timezone=True), nullable=True),
    Column("problem", Text, nullable=True),  # why the source cannot be read now, for a person
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("persona_id", "project", "source_key", name="uq_pins_persona_project_source"),
    # NULLs differ in a unique constraint, so one project-wide pin per source needs its own index.
    Index(
        "uq_pins_project_wide_source",
        "project",
        "source_key",
        unique=True,
        sqlite_where=text("persona_id IS NULL"),
        postgresql_where=text("persona_id IS NULL"),
    ),
    Index("ix_pins_project_persona", "project", "persona_id"),
    sqlite_autoincrement=True,  # a removed pin's number is never given again (migration 0012)
)


def utc(value: datetime | None) -> datetime | None:
    """Reattach UTC to a datetime read back from a database that drops the zone (SQLite)."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
