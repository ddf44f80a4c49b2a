"""A local HTTP server for pinned pages: each path answers with a planned status, headers and body."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Page:
    body: bytes = b""
    status: int = 200
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip_headers: float = 0.0  # seconds between the bytes of the status line and headers (0: sent at once)
    drip_body: float = 0.0  # seconds between the bytes of the body


class PageServer:
    """Serves `pages` (path -> Page) on 127.0.0.1 from a thread; records the paths asked for and their Host."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.requests: list[tuple[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def text(self, path: str, text: str, content_type: str = "text/plain; charset=utf-8") -> str:
        self.pages[path] = Page(text.encode(), content_type=content_type)
        return self.url(path)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        self.pages[path] = Page(status=status, headers={"Location": location})
        return self.url(path)

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append((self.path, self.headers.get("Host", "")))
                page = server.pages.get(self.path, Page(b"not here", status=404))
                if page.delay:
                    time.sleep(page.delay)
                head = [f"HTTP/1.1 {page.status} Planned", f"Content-Type: {page.content_type}"]
                head += [f"Content-Length: {len(page.body)}", *(f"{k}: {v}" for k, v in page.headers.items())]
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client stops reading a page over
                    self._send("\r\n".join([*head, "", ""]).encode(), page.drip_headers)  # the size cap, or gives
                    self._send(page.body, page.drip_body)  # up on a dripping one
                self.close_connection = True

            def _send(self, data: bytes, drip: float) -> None:
                if not drip:
                    self.wfile.write(data)
                    return
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(drip)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
