"""The database through SQLAlchemy: engine, tables, migrations, and the repositories that live on it.

Rows never leave this room: every repository returns the domain's frozen dataclasses.
"""

from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.migrate import SchemaChange, upgrade
from nightwatch.adapters.db.pending_lessons import SqlPendingLessons
from nightwatch.adapters.db.repositories import SqlPersonaRepository
from nightwatch.adapters.db.schema import make_engine
from nightwatch.adapters.db.slack_state import SlackState

__all__ = [
    "SchemaChange",
    "SlackState",
    "SqlDeliberationLog",
    "SqlPendingLessons",
    "SqlPersonaRepository",
    "make_engine",
    "upgrade",
]
