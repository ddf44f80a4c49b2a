"""The fake Slack's HTTP side: a threaded server that reads requests the way slack_sdk sends them.

slack_sdk posts JSON, urlencoded or multipart/form-data bodies (plus query strings), with the token in a Bearer
header or a `token` field; JSON-valued fields such as `blocks` arrive as strings in form bodies.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import functools
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fake_slack_rules import Json

JSON_ARGS = ("blocks", "attachments", "view", "metadata")
# (path, args, token) -> (status, extra headers, JSON body)
Answer = Callable[[str, Json, str | None], tuple[int, dict[str, str], Json]]


class HttpServer:
    """Serves `answer` on 127.0.0.1 from a background thread."""

    def __init__(self, answer: Answer, *, listen_backlog: int | None = None) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(answer))
        if listen_backlog is not None:  # http.server listens with a backlog of 5
            self._server.socket.listen(listen_backlog)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        serve = functools.partial(self._server.serve_forever, poll_interval=0.05)  # quick shutdown
        self._thread = threading.Thread(target=serve, name="fake-slack-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _handler_for(answer: Answer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

        def _answer(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            args: Json = dict(parse_qsl(url.query, keep_blank_values=True))
            args.update(parse_body(self.headers.get("Content-Type", ""), self.rfile.read(length)))
            token = _bearer(self.headers.get("Authorization")) or args.get("token")
            args.pop("token", None)
            status, headers, body = answer(url.path, _decode_json_args(args), token)
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Stays quiet: tests read `fake.calls`, not stderr."""

    return Handler


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return None


def parse_body(content_type: str, body: bytes) -> Json:
    """Reads a JSON, urlencoded or multipart/form-data body."""
    if not body:
        return {}
    kind = content_type.split(";", maxsplit=1)[0].strip().lower()
    if kind == "application/json":
        parsed = json.loads(body)
        return parsed if isinstance(parsed, dict) else {}
    if kind == "multipart/form-data":
        header = f"Content-Type: {content_type}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(header + body)
        fields: Json = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            fields[str(name)] = payload.decode("utf-8") if isinstance(payload, bytes) else ""
        return fields
    return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))


def _decode_json_args(args: Json) -> Json:
    for key in JSON_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value[:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                args[key] = json.loads(value)
    return args
