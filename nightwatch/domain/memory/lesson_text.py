"""What a lesson's text is, whatever line holds it: its normalised form and id, and the cleaning that makes text safe
as a bullet, an overview line or a section header's part. format.py reads and writes the lines around it.
"""

from __future__ import annotations

import hashlib
import re

COMMENT = re.compile(r"\s*<!--(.*?)-->\s*$")  # a bullet's trailing metadata comment
PIN_MARK = re.compile(r"^(?:📌\ufe0f?|\[pinned\])\s*", re.IGNORECASE)
STRUCK = re.compile(r"^~~(.+?)~~(.*)$")  # a crossed-out (superseded) lesson
_TRAILING_PUNCT = re.compile(r"[\s.,;:!?…]+$")
_TRAILING_CHARS = frozenset(".,;:!?…")  # the characters _TRAILING_PUNCT removes (white space is already collapsed)
_AUTHOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit, as str.isalnum reads one


def normalise(text: str) -> str:
    """Lower-case, collapse whitespace, drop markers and trailing punctuation: the text an id is made from."""
    body = text.strip()
    if "<!--" in body:
        body = COMMENT.sub("", body)
    body = PIN_MARK.sub("", body.strip()) if may_be_pinned(body) else body.strip()
    struck = STRUCK.match(body) if body.startswith("~~") else None
    if struck:
        body = struck.group(1) + struck.group(2)
    body = " ".join(body.lower().split())
    return _TRAILING_PUNCT.sub("", body) if body[-1:] in _TRAILING_CHARS else body


def may_be_pinned(body: str) -> bool:
    """Whether the text may start with a pin mark (a cheap test before the regex)."""
    return body.startswith("📌") or body[:1] == "["


def lesson_id(text: str) -> str:
    """Return the lesson's id: 8 hex characters of a hash of its normalised text."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:8]


def clean_lesson_text(text: str) -> str:
    """Make text safe as one bullet: one line, no file markup (comments, pins, strike-through, bullet marks)."""
    body = " ".join(text.replace("<!--", " ").replace("-->", " ").split())
    body = re.sub(r"^(?:[-*+•]\s+|\d+[.)]\s+)", "", body)
    previous = None
    while previous != body:
        previous = body
        body = PIN_MARK.sub("", body).strip()
    return body.replace("~~", "").strip()


def clean_overview(text: str) -> str:
    """Make text safe as a lesson's overview line: one line, no comment markup ('' when nothing is left)."""
    body = " ".join(text.replace("<!--", " ").replace("-->", " ").split())
    return body if has_word(body) else ""


def valid_author(author: str) -> bool:
    """True when `author` fits a lesson's metadata: one word of letters, digits, '.', '_' or '-' (a Slack user id)."""
    return bool(_AUTHOR.fullmatch(author))


def header_part(text: str) -> str:
    """Make text usable as one part of a section header (no newlines, no ' · ' separator)."""
    return " ".join(text.replace("·", "-").split())


def has_word(text: str) -> bool:
    """Whether the text holds a letter or a digit."""
    return _ALNUM.search(text) is not None
