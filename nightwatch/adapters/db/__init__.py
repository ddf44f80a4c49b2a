"""The database through SQLAlchemy: engine, tables, migrations, and the repositories that live on it.

Rows never leave this room: every repository returns the domain's frozen dataclasses. The memory store on the
database (adapters/db/memory.py) uses the memory tables and the transactions this room exports.
"""

from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.engine import make_engine
from nightwatch.adapters.db.forgotten_lessons import SqlForgottenLessons
from nightwatch.adapters.db.held_lessons import SqlHeldLessons
from nightwatch.adapters.db.memory import DatabaseMemoryStore
from nightwatch.adapters.db.migrate import SchemaChange, upgrade
from nightwatch.adapters.db.pending_lessons import SqlPendingLessons
from nightwatch.adapters.db.persona_transactions import SqlPersonaTransactions
from nightwatch.adapters.db.pins import SqlPinRepository
from nightwatch.adapters.db.probe import DatabaseProbe
from nightwatch.adapters.db.repositories import SqlPersonaRepository
from nightwatch.adapters.db.schema import memory_documents, memory_vectors
from nightwatch.adapters.db.shares import SqlItemShareRepository, SqlShareRepository
from nightwatch.adapters.db.slack_state import SlackState
from nightwatch.adapters.db.transactions import Bind, database_errors, transaction

__all__ = [
    "Bind",
    "DatabaseMemoryStore",
    "DatabaseProbe",
    "SchemaChange",
    "SlackState",
    "SqlDeliberationLog",
    "SqlForgottenLessons",
    "SqlHeldLessons",
    "SqlItemShareRepository",
    "SqlPendingLessons",
    "SqlPersonaRepository",
    "SqlPersonaTransactions",
    "SqlPinRepository",
    "SqlShareRepository",
    "database_errors",
    "make_engine",
    "memory_documents",
    "memory_vectors",
    "transaction",
    "upgrade",
]
