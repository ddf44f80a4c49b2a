"""The health endpoint of `nightwatch run`: /healthz, /readyz and /metrics on NIGHTWATCH_HEALTH_PORT.

- /healthz: 200 while the process is serving (the server runs from connect to shutdown).
- /readyz: 200 only while `not_ready()` returns None (Socket Mode connected and the database answering); else 503
  with the reason in the body.
- /metrics: the process's metrics in the Prometheus text format.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from nightwatch.adapters.runtime.metrics import Metrics

log = logging.getLogger(__name__)

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


@dataclass(frozen=True)
class HealthOptions:
    """Where to serve health and metrics, and how to tell the database answers (None: it does; else why not)."""

    host: str
    port: int
    metrics: Metrics
    database_problem: Callable[[], str | None]


class HealthServer:
    """A small HTTP server on its own thread; `start()` binds (raising OSError when the port is taken)."""

    def __init__(self, *, host: str, port: int, metrics: Metrics, not_ready: Callable[[], str | None]) -> None:
        self._metrics = metrics
        self._not_ready = not_ready
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="health", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()
        log.info("Health and metrics on port %d: /healthz, /readyz, /metrics", self.port)

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def answer(self, path: str) -> tuple[int, str, bytes]:
        """The status, content type and body for a GET of `path`."""
        if path == "/healthz":
            return 200, "text/plain", b"ok\n"
        if path == "/readyz":
            reason = self._safely_not_ready()
            return (200, "text/plain", b"ready\n") if reason is None else (503, "text/plain", f"{reason}\n".encode())
        if path == "/metrics":
            return 200, PROMETHEUS_TEXT, self._metrics.exposition()
        return 404, "text/plain", b"not found: try /healthz, /readyz or /metrics\n"

    def _safely_not_ready(self) -> str | None:
        try:
            return self._not_ready()
        except Exception as err:  # noqa: BLE001 - a probe is answered, never crashed
            return f"readiness check failed: {type(err).__name__}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, content_type, body = server.answer(self.path.split("?", 1)[0])
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("health: " + format, *args)

        return Handler
