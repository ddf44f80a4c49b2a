"""A local Anthropic Messages API server for tests: records requests, serves planned or default answers.

    with FakeAnthropic() as fake:
        fake.plan(rate_limited(retry_after_ms=10), answer("hello"))
        client = anthropic.Anthropic(api_key="sk-test", base_url=fake.url)

Requests beyond the plan are answered by `responder(body)`: a text, wrapped in a valid Messages response whose usage
counts words and simulates prompt caching (the first request with a given cached prefix, the tools and the system
blocks up to the last cache mark, writes it to the cache, later ones read it), or a `Planned` answer.

Tool use is spoken as the Messages API speaks it: `tool_use(("memory_recall", {"query": "x"}))` answers with
`tool_use` blocks (ids `toolu_fake_<request>_<n>`) and stop reason "tool_use", and every request is checked the way
the API checks it (`tool_protocol_error`): a conversation with tool blocks must define tools, every `tool_use` must be
answered by a `tool_result` with its id at the start of the very next user message, and no `tool_result` may answer
anything else. A request that breaks a rule gets the API's 400 `invalid_request_error`.
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

Responder = Callable[[dict[str, Any]], "str | Planned"]


@dataclass(frozen=True)
class Planned:
    """One planned response. `text` (and `tool_calls`) are wrapped into a Messages body; `body` is sent as JSON;
    `raw` as is."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    text: str | None = None
    body: dict[str, Any] | None = None
    raw: bytes | None = None
    delay: float = 0.0
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()  # (name, input) of each tool_use block


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def answer(text: str, *, delay: float = 0.0) -> Planned:
    return Planned(text=text, delay=delay)


def tool_use(*calls: tuple[str, dict[str, Any]], text: str = "") -> Planned:
    """An answer calling tools: `text` (if any), then a `tool_use` block per (name, input); stop reason tool_use."""
    return Planned(text=text, tool_calls=tuple(calls))


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


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The `tool_result` blocks of the request's last message (empty when it reports none)."""
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else None
    return [block for block in content if block.get("type") == "tool_result"] if isinstance(content, list) else []


def tool_protocol_error(body: dict[str, Any]) -> str | None:
    """What the Messages API would refuse in this request's tool use, or None when it is well formed."""
    tools = body.get("tools")
    names = {tool.get("name") for tool in tools or []}
    choice = body.get("tool_choice")
    if choice is not None and (not tools or choice.get("type") not in ("auto", "any", "tool", "none")):
        return "tool_choice needs tools, and a type of auto, any, tool or none"
    pending: list[str] = []  # ids of the previous assistant message's tool_use blocks
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        uses = [block for block in blocks if block.get("type") == "tool_use"]
        results = [block for block in blocks if block.get("type") == "tool_result"]
        if (uses or results) and not tools:
            return "Requests which include `tool_use` or `tool_result` blocks must define tools."
        if any(use.get("name") not in names for use in uses):
            return f"messages.{index}: tool_use names a tool that is not defined"
        if message.get("role") == "user":
            leading = [block.get("tool_use_id") for block in blocks[: len(results)]]
            if len(leading) != len(results) or any(b.get("type") != "tool_result" for b in blocks[: len(results)]):
                return f"messages.{index}: tool_result blocks must come first in the message"
            if sorted(map(str, leading)) != sorted(pending):
                return (
                    f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after, "
                    "or a `tool_result` answers no `tool_use` of the previous message"
                )
            pending = []
        else:
            if pending:
                return f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after"
            if message.get("role") == "assistant" and results:
                return f"messages.{index}: an assistant message cannot carry tool_result blocks"
            pending = [str(use.get("id")) for use in uses]
    if pending:
        return "the last message calls tools; their results must follow before the model can answer"
    return None


def default_responder(body: dict[str, Any]) -> str:
    """Answer in the shape the request asks for: curation or verdict JSON, kept lessons, new lessons, or a reply.

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
    if re.search(r"\b1\s*(?:to|-)\s*3 lessons\b|lessons should you remember", lowered):
        return "- Fake lesson: write down what the team decided.\n- Fake lesson: check the tests first."
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
        answer = self.responder(recorded.body)
        return answer if isinstance(answer, Planned) else Planned(text=answer)

    def _message(
        self, body: dict[str, Any], text: str, calls: tuple[tuple[str, dict[str, Any]], ...]
    ) -> dict[str, Any]:
        number = len(self.requests)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text or not calls else []
        content += [
            {"type": "tool_use", "id": f"toolu_fake_{number}_{n}", "name": name, "input": given}
            for n, (name, given) in enumerate(calls, start=1)
        ]
        return {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "unknown"),
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": self._usage(body, text + json.dumps([given for _, given in calls]) if calls else text),
        }

    def _usage(self, body: dict[str, Any], text: str) -> dict[str, int]:
        system = body.get("system") if isinstance(body.get("system"), list) else []
        last_cached = max((i for i, block in enumerate(system) if block.get("cache_control")), default=-1)
        prefix = "\n".join(str(block.get("text", "")) for block in system[: last_cached + 1])
        tools = body.get("tools") or []
        if any(tool.get("cache_control") for tool in tools):  # tools come first in the cached prefix
            prefix = json.dumps(tools) + "\n" + prefix
        cached = len(prefix.split())
        with self._lock:
            seen = prefix in self._cached_prefixes
            self._cached_prefixes.add(prefix)
        system_text, _ = request_text(body)
        messages_words = sum(len(json.dumps(m.get("content", "")).split()) for m in body.get("messages", []))
        tool_words = len(json.dumps(tools).split()) if tools else 0
        return {
            "input_tokens": len(system_text.split()) + tool_words - cached + messages_words,
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
                problem = tool_protocol_error(body)
                if problem is not None:
                    with fake._lock:
                        fake.requests.append(recorded)
                    self._send(400, {}, json.dumps(_error("invalid_request_error", problem)).encode())
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
        if planned.text is None and not planned.tool_calls:
            answer = self.responder(body)
            planned = answer if isinstance(answer, Planned) else Planned(text=answer)
        return json.dumps(self._message(body, planned.text or "", planned.tool_calls)).encode()
