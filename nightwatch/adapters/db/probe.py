"""Whether the database answers, for the readiness probe of `nightwatch run` (/readyz)."""

from __future__ import annotations

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError


class DatabaseProbe:
    """Whether the database answers: None when it does, else why not (for a readiness probe)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def __call__(self) -> str | None:
        try:
            with self._engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except SQLAlchemyError as err:
            return f"the database does not answer ({type(err).__name__})"
        return None
