"""Alembic's migration scripts for Night Watch's database: `env.py`, the template, and `versions/`, one per change.

Run them with `nightwatch db upgrade` (start-up runs them too); `nightwatch.adapters.db.migrate` says how.
"""
