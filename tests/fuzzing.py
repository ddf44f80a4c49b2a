"""What the fuzz tests share: a log handler that keeps every record carrying an exception (a traceback in the logs)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


class TracebackCatcher(logging.Handler):
    """Keeps every log record that carries an exception."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.caught: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.caught.append(record)


@contextmanager
def catching_tracebacks() -> Iterator[TracebackCatcher]:
    """Catch tracebacks logged anywhere (the root logger's handlers see every propagating record) while inside."""
    catcher = TracebackCatcher()
    root = logging.getLogger()
    root.addHandler(catcher)
    try:
        yield catcher
    finally:
        root.removeHandler(catcher)
