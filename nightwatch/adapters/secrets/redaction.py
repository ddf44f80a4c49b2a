"""The one redaction step: every text Night Watch stores, shows or logs passes `redact` on the way.

A secret is replaced by its kind in words, `[redacted slack token]`, so a lesson that mentions one still reads as a
sentence. `redact` is idempotent: a marker is never taken for a secret, so redacting twice changes nothing. The
patterns (detect-secrets' plugins plus a few of ours) live in patterns.py, providers.py and context.py.

Where it runs: inputs where they enter (the CLI's arguments, Slack payloads and thread reads), model output where it
leaves the LLM adapter (`RedactingLLM`, bound in wiring.py), and as a backstop at the stores (memory files, the
deliberation log) and the printers; the logging filter below redacts every log line.
"""

from __future__ import annotations

import logging
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from nightwatch.adapters.secrets.patterns import FINDERS, Finder
from nightwatch.domain.llm import LLM, LLMRequest, LLMResponse

log = logging.getLogger(__name__)

MARKER = re.compile(r"\[redacted [a-z0-9 ]+\]")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@dataclass(frozen=True)
class Finding:
    """A secret in a text: where it is and what kind it is, in words."""

    start: int
    end: int
    kind: str


class Redactor:
    """Finds secrets with `detectors` and replaces each with `[redacted <kind>]`.

    A value found once is a secret wherever else it stands in the same text (a password in a URL and again in a
    `username:` line, a token echoed into a command and named in a comment).
    """

    def __init__(self, detectors: Sequence[Finder] = FINDERS) -> None:
        self._detectors = tuple(detectors)

    def findings(self, text: str) -> list[Finding]:
        """The secrets in `text`, in order; overlapping findings are merged and named by the most specific one.

        A marker is never a secret, nor a word that names one (`[redacted secret]` says `secret`), so the detectors
        see each marker blanked out, and redacting redacted text changes nothing.
        """
        markers = [marker.span() for marker in MARKER.finditer(text)]
        seen = _blanked(text, markers) if markers else text
        lowered = seen.lower()
        if len(lowered) != len(seen):  # a few characters lower-case to two; positions must stay those of `text`
            lowered = seen.translate(_ASCII_LOWER)
        hits = [
            _Hit(start, end, rank, detector.kind)
            for rank, detector in enumerate(self._detectors)
            for start, end in detector.spans(seen, lowered)
        ]
        hits += _elsewhere(seen, hits)
        if hits and markers:
            hits = [hit for hit in hits if not any(start < hit.end and hit.start < end for start, end in markers)]
        return [Finding(hit.start, hit.end, hit.kind) for hit in _merged(hits)]

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `[redacted <kind>]`."""
        pieces: list[str] = []
        at = 0
        for finding in self.findings(text):
            pieces += (text[at : finding.start], f"[redacted {finding.kind}]")
            at = finding.end
        return "".join(pieces) + text[at:] if pieces else text


@dataclass(frozen=True, order=True)
class _Hit:
    start: int
    end: int
    rank: int  # the detector's place in the list: lower is more specific
    kind: str


_BLANK = "("  # what a marker reads as to the detectors: no value, word or token can hold it


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    pieces: list[str] = []
    at = 0
    for start, end in spans:
        pieces += (text[at:start], _BLANK * (end - start))
        at = end
    return "".join(pieces) + text[at:]


_ECHOED = 8  # a found value at least this long is looked for elsewhere in the text


def _elsewhere(text: str, hits: list[_Hit]) -> list[_Hit]:
    """Hits for every other place where a found value stands again in `text`."""
    more = []
    for value, hit in {text[hit.start : hit.end]: hit for hit in hits if hit.end - hit.start >= _ECHOED}.items():
        at = text.find(value)
        while at >= 0:
            if at != hit.start:
                more.append(_Hit(at, at + len(value), hit.rank, hit.kind))
            at = text.find(value, at + len(value))
    return more


def _merged(hits: list[_Hit]) -> list[_Hit]:
    """Overlapping hits as one, spanning them all, named by the most specific detector among them."""
    merged: list[_Hit] = []
    for hit in sorted(hits):
        last = merged[-1] if merged else None
        if last is None or hit.start >= last.end:
            merged.append(hit)
            continue
        named = last if last.rank <= hit.rank else hit
        merged[-1] = _Hit(last.start, max(last.end, hit.end), named.rank, named.kind)
    return merged


_REDACTOR = Redactor()


def redact(text: str) -> str:
    """`text` with every secret replaced by `[redacted <kind>]` (idempotent)."""
    return _REDACTOR.redact(text)


def redact_backstop(text: str, where: str) -> str:
    """`text` redacted, at a store or printer; a secret found here got past the redaction where it entered."""
    clean = redact(text)
    if clean != text:
        log.warning("A secret reached %s unredacted and was redacted there; redact it where it enters.", where)
    return clean


def redact_new_lines(old: str, new: str, where: str) -> str:
    """`new` with each line that `old` lacks passed through `redact_backstop`; lines kept as they were are not.

    A store's backstop: rewriting a long memory file to bump one counter need not scan every lesson again.
    """
    known = set(old.splitlines())
    return "".join(
        line if line.rstrip("\r\n") in known else redact_backstop(line, where) for line in new.splitlines(keepends=True)
    )


def redact_data(value: Any) -> Any:
    """A JSON-ready value with `redact` applied to every string in it, keys included."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_data(key): redact_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(item) for item in value]
    return value


class RedactingLLM:
    """The LLM port with secrets redacted from every answer, where model output leaves the adapters.

    A lesson's id is a hash of its text, so a reflection's lessons must be clean before the memory computes it.
    """

    def __init__(self, inner: LLM) -> None:
        self.inner = inner

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The inner model's answer, redacted: its text, and every string in the input of each tool call it makes."""
        response = self.inner.complete(request)
        calls = tuple(replace(call, input=redact_data(dict(call.input))) for call in response.tool_calls)
        return replace(response, text=redact(response.text), tool_calls=calls)


class TokenRedactingFilter(logging.Filter):
    """Rewrites a record's message, arguments and traceback text with secrets redacted; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def install_redaction(logger: logging.Logger | None = None) -> TokenRedactingFilter:
    """Add the filter to every handler of `logger` (default: the root logger), creating one if it has none.

    Handler filters see records from every logger that propagates to them; a logger filter would not.
    """
    target = logger or logging.getLogger()
    if not target.handlers:
        target.addHandler(logging.StreamHandler())
    found = next((f for h in target.handlers for f in h.filters if isinstance(f, TokenRedactingFilter)), None)
    redactor = found or TokenRedactingFilter()
    for handler in target.handlers:
        if redactor not in handler.filters:
            handler.addFilter(redactor)
    return redactor
