"""Rules every value a person types shares: free text without control characters, and whole numbers in a range.

Each room keeps its own limits (how long a topic, a lesson or a role may be) and states them through these checks,
so every refusal reads alike and says what is accepted. Control characters are refused because NUL and escape
sequences corrupt a markdown file or a terminal and PostgreSQL stores no NUL in text, and lone surrogates (what
Python makes of bytes that are not UTF-8) because they cannot be written anywhere at all.
"""

from __future__ import annotations

import re
import unicodedata

from nightwatch.domain.errors import InvalidInputError

_ALLOWED_CONTROLS = frozenset("\t\n\r")
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,30}")


def shown(raw: object, limit: int = 40) -> str:
    """`raw` as a person should see it quoted in a message: short, and every unprintable character escaped."""
    text = str(raw)
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return text if text and text.isprintable() and text.strip() == text and "'" not in text else ascii(text)


def forbidden_character(text: str) -> str | None:
    """The first control character or lone surrogate in `text`, or None; tabs and line breaks are allowed."""
    for char in text:
        if char not in _ALLOWED_CONTROLS and unicodedata.category(char) in ("Cc", "Cs"):
            return char
    return None


def check_text(raw: object, *, what: str, limit: int, example: str) -> str:
    """Return `raw` without outer white space, or raise InvalidInputError saying what `what` accepts."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInputError(f"{what} cannot be empty: give 1-{limit:,} characters, for example {example}.")
    text = raw.strip()
    if len(text) > limit:
        raise InvalidInputError(f"{what} is {len(text):,} characters long; shorten it to at most {limit:,}.")
    check_printable(text, what=what)
    return text


def check_printable(text: str, *, what: str) -> str:
    """Return `text`, or raise InvalidInputError when it holds a control character (tabs and line breaks are fine)."""
    bad = forbidden_character(text)
    if bad is not None and unicodedata.category(bad) == "Cs":
        raise InvalidInputError(f"{what} contains {bad!a}, a stray byte that is not UTF-8 text; retype it.")
    if bad is not None:
        raise InvalidInputError(
            f"{what} contains the control character {bad!a}; use printable text (tabs and line breaks are fine)."
        )
    return text


def whole_number(raw: object, *, what: str, low: int, high: int) -> int:
    """Return `raw` (an int, or its decimal digits as text) if it lies from `low` to `high`, else raise."""
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, str) and _WHOLE_NUMBER.fullmatch(raw.strip()):
        value = int(raw.strip())
    if value is None or not low <= value <= high:
        raise InvalidInputError(f"{what} must be a whole number from {low:,} to {high:,} (got {shown(raw)}).")
    return value
