"""A local Anthropic Messages API server for tests: records requests, serves planned or default answers.

    with FakeAnthropic() as fake:
        fake.plan(rate_limited(retry_after_ms=10), answer("hello"))
        client = anthropic.Anthropic(api_key="sk-test", base_url=fake.url)

Requests beyond the plan are answered by `responder(body) -> text`, wrapped in a valid Messages response whose usage
counts words and simulates prompt caching: the first request with a given cached system prefix writes it to the
cache, later ones read it.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Responder = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class Planned:
    """One planned response. `text` is wrapped into a Messages body; `body` is sent as JSON; `raw` as is."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    text: str | None = None
    body: dict[str, Any] | None = None
    raw: bytes | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def answer(text: str, *, delay: float = 0.0) -> Planned:
    return Planned(text=text, delay=delay)


def rate_limited(*, retry_after_ms: int = 10) -> Planned:
    """A 429 asking the client to wait `retry_after_ms` (and the whole-second `retry-after` header real APIs send)."""
    return Planned(
        status=429,
        headers={"retry-after-ms": str(retry_after_ms), "retry-after": "1"},
        body=_error("rate_limit_error", "Number of requests has exceeded your rate limit."),
    )


def overloaded(*, retry_after_ms: int = 10) -> Planned:
    return Planned(
        status=529, headers={"retry-after-ms": str(retry_after_ms)}, body=_error("overloaded_error", "Overloaded")
    )


def server_error(status: int = 500, *, retry_after_ms: int = 10) -> Planned:
    return Planned(status=status, headers={"retry-after-ms": str(retry_after_ms)}, body=_error("api_error", "Internal"))


def unauthorized() -> Planned:
    return Planned(status=401, body=_error("authentication_error", "invalid x-api-key"))


def slow(seconds: float, text: str = "Slow answer.") -> Planned:
    """An answer sent only after `seconds` (stopping the server cuts the wait short)."""
    return Planned(text=text, delay=seconds)


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# --- default answers -----------------------------------------------------------------------------------------------

# A reflection answered as a careful model answers the structured form: category, abstract, overview.
STRUCTURED_LESSONS = (
    "- [patterns] Fake lesson: write down what the team decided.\n"
    "  > Fake overview: the decision was only in the thread, and the next deliberation had to ask again.\n"
    "- [cases] Fake lesson: check the tests first.\n"
    "  > Fake overview: a red suite explained the failure before anyone read the code."
)


def request_text(body: dict[str, Any]) -> tuple[str, str]:
    """The system prompt text and the last user message text of a Messages request body."""
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "\n\n".join(str(block.get("text", "")) for block in system)
    last = ""
    for message in body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            last = content if isinstance(content, str) else " ".join(str(c.get("text", "")) for c in content)
    return str(system), last


def default_responder(body: dict[str, Any]) -> str:
    """Answer in the shape the request asks for: curation or verdict JSON, kept lessons, new lessons (in the structured
    form; NONE to an extraction), or a reply.

    Memory prompts (reflection, compaction, curation) put their instructions in the system prompt, deliberation
    prompts in the last user message; both are read.
    """
    system, instruction = request_text(body)
    text = f"{system}\n{instruction}"
    lowered = text.lower()
    if "supersede" in lowered and "json" in lowered:
        return json.dumps({"action": "create", "target": None})
    if '"decision"' in lowered:
        return json.dumps(
            {
                "decision": "APPROVE",
                "summary": "The fake model approves.",
                "reasons": ["Everyone who spoke agreed."],
                "action_items": ["Dev: ship it behind a flag."],
            }
        )
    limit = re.search(r"at most (\d+) lessons", lowered)
    if limit:
        kept = [line.replace("[pinned] ", "") for line in text.splitlines() if line.startswith("- ")]
        return "\n".join(kept[-int(limit.group(1)) :]) or "- Nothing worth keeping."
    if re.search(r"\b0 to 3 lessons\b", lowered):  # extraction from summarised messages: nothing, unless planned
        return "NONE"
    if re.search(r"\b1\s*(?:to|-)\s*3 lessons\b|lessons should you remember", lowered):
        return STRUCTURED_LESSONS
    if "summar" in instruction.lower():
        return "Fake summary of the thread so far."
    return "Fake answer from the fake Anthropic server."


# --- the server ---------------------------------------------------------------------------------------------------


class FakeAnthropic:
    """A threaded HTTP server on 127.0.0.1 implementing POST /v1/messages."""

    def __init__(self, responder: Responder = default_responder) -> None:
        self.responder = responder
        self.requests: list[Recorded] = []
        self._plan: list[Planned] = []
        self._cached_prefixes: set[str] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = False  # stop() waits for every handler, so no thread outlives a test
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def plan(self, *responses: Planned) -> FakeAnthropic:
        with self._lock:
            self._plan.extend(responses)
        return self

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- request handling -----------------------------------------------------------------------------------------

    def _next(self, recorded: Recorded) -> Planned:
        with self._lock:
            self.requests.append(recorded)
            if self._plan:
                return self._plan.pop(0)
        return Planned(text=self.responder(recorded.body))

    def _message(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        return {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "unknown"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": self._usage(body, text),
        }

    def _usage(self, body: dict[str, Any], text: str) -> dict[str, int]:
        system = body.get("system") if isinstance(body.get("system"), list) else []
        last_cached = max((i for i, block in enumerate(system) if block.get("cache_control")), default=-1)
        prefix = "\n".join(str(block.get("text", "")) for block in system[: last_cached + 1])
        cached = len(prefix.split())
        with self._lock:
            seen = prefix in self._cached_prefixes
            self._cached_prefixes.add(prefix)
        system_text, _ = request_text(body)
        messages_words = sum(len(json.dumps(m.get("content", "")).split()) for m in body.get("messages", []))
        return {
            "input_tokens": len(system_text.split()) - cached + messages_words,
            "output_tokens": len(text.split()),
            "cache_creation_input_tokens": cached if cached and not seen else 0,
            "cache_read_input_tokens": cached if cached and seen else 0,
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                recorded = Recorded(path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body)
                if self.path.split("?")[0] != "/v1/messages":
                    self._send(404, {}, json.dumps(_error("not_found_error", self.path)).encode())
                    return
                planned = fake._next(recorded)
                if planned.delay and fake._stopping.wait(planned.delay):
                    return
                self._send(planned.status, planned.headers, fake._payload(body, planned))

            def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                """Stay quiet: tests read `fake.requests`, not stderr."""

        return Handler

    def _payload(self, body: dict[str, Any], planned: Planned) -> bytes:
        if planned.raw is not None:
            return planned.raw
        if planned.body is not None:
            return json.dumps(planned.body).encode()
        text = planned.text if planned.text is not None else self.responder(body)
        return json.dumps(self._message(body, text)).encode()
