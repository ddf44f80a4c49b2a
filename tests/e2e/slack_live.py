"""The real Night Watch Slack app served by `run_socket_mode` (the real SocketModeHandler) against FakeSlack."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from nightwatch.serve import run_socket_mode
from tests.adapters.slack.stack import APP_TOKEN, Stack, build_stack
from tests.fake_slack import FakeSlack


@dataclass
class LiveApp:
    """A running app: `stop()` does what SIGTERM does and returns whether every deliberation ended in time."""

    stack: Stack
    fake: FakeSlack
    _stop: threading.Event
    _thread: threading.Thread
    _result: dict[str, Any] = field(default_factory=dict)

    def stop(self, timeout: float = 30.0) -> bool:
        self._stop.set()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "run_socket_mode did not return"
        if "error" in self._result:
            raise self._result["error"]
        return bool(self._result.get("finished"))


@contextmanager
def live_app(home: Path, fake: FakeSlack, *, hand_over_seconds: float = 10.0, **kwargs: Any) -> Iterator[LiveApp]:
    """Start the app in a thread (as `nightwatch run` does in the main one); stop it and free everything after."""
    stack = build_stack(home, fake, with_authorize=False, **kwargs)
    stop = threading.Event()
    result: dict[str, Any] = {}

    def serve() -> None:
        try:
            result["finished"] = run_socket_mode(stack.slack, APP_TOKEN, stop=stop, hand_over_seconds=hand_over_seconds)
        except BaseException as err:  # handed to the test thread by stop()
            result["error"] = err

    thread = threading.Thread(target=serve, name="nightwatch-run", daemon=True)
    thread.start()
    live = LiveApp(stack, fake, stop, thread, result)
    try:
        fake.wait_for(lambda: fake.open_connections >= 1, timeout=10)
        yield live
    finally:
        if thread.is_alive():
            live.stop()
        stack.container.get(Engine).dispose()
