"""What a pin accepts: a file path, an http(s) URL or a text, and the id `pin list` prints; and how pins are keyed.

A path may be absolute or relative (the CLI makes it absolute from the current folder; Slack resolves it against
NIGHTWATCH_PIN_ROOTS) but never holds a `..` segment, so no spelling of it can climb out of a root. A URL is http or
https with a host and no user name or password in it. Whether a file may be read, and a page fetched, is decided
where they are read (PinFiles, PinPages): these rules only refuse what no reading could make usable.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlsplit

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_printable, check_text, shown, whole_number
from nightwatch.domain.pins.models import PinKind

PIN_TEXT_MAX = 8_000  # characters of a text pin
PIN_PATH_MAX = 4_096  # characters of a file path (Linux's PATH_MAX)
PIN_URL_MAX = 2_000  # characters of a URL
PINS_MAX = 20  # pins one persona gets on one project: its own and the project-wide ones
PIN_ID_MAX = 2**31 - 1
EVERY_PERSONA = "all"  # written for PERSONA: a project-wide pin, which every persona of the project gets
TITLE_CHARS = 60

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def validate_pin_text(raw: object) -> str:
    """Return the text of a text pin without outer white space, or raise InvalidInputError."""
    return check_text(raw, what="A pinned text", limit=PIN_TEXT_MAX, example='"Deploys freeze on Fridays."')


def validate_pin_path(raw: object) -> str:
    """Return a file path to pin as typed (outer white space removed), or raise InvalidInputError saying why not."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInputError("Give the file to pin, for example docs/ARCHITECTURE.md.")
    path = raw.strip()
    if len(path) > PIN_PATH_MAX:
        raise InvalidInputError(f"The path is {len(path):,} characters long; a path has at most {PIN_PATH_MAX:,}.")
    check_printable(path, what="The path")
    if any(char in path for char in "\t\n\r"):
        raise InvalidInputError(f"The path {shown(path)} holds a tab or a line break; give the file's path only.")
    if ".." in path.replace("\\", "/").split("/"):
        raise InvalidInputError(
            f"The path {shown(path)} climbs up with '..'; give the file's path without '..' (e.g. docs/runbook.md)."
        )
    if path.endswith("/"):
        raise InvalidInputError(f"The path {shown(path)} names a folder; pin a file in it.")
    return path


def validate_pin_url(raw: object) -> str:
    """Return an http(s) URL to pin, or raise InvalidInputError saying what is accepted."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInputError("Give the page to pin, for example https://example.com/runbook.")
    url = raw.strip()
    if len(url) > PIN_URL_MAX:
        raise InvalidInputError(f"The URL is {len(url):,} characters long; pin one of at most {PIN_URL_MAX:,}.")
    check_printable(url, what="The URL")
    if any(char.isspace() for char in url):
        raise InvalidInputError(f"The URL {shown(url)} holds white space; give the address alone.")
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port out of range or not a number
    except ValueError as err:
        raise InvalidInputError(f"The URL {shown(url)} is not a usable address ({err}).") from err
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidInputError(f"Only http:// and https:// pages can be pinned, not {shown(parts.scheme)}:// ones.")
    if not parts.hostname:
        raise InvalidInputError(f"The URL {shown(url)} names no host; write it as https://host/path.")
    if parts.username is not None or parts.password is not None:
        raise InvalidInputError("The URL holds a user name or password; pin a page that needs no login.")
    return url


def pin_source(raw: object) -> tuple[PinKind, str]:
    """Read a PATH|URL argument: an http(s) URL is a page, anything without a scheme:// a file path."""
    if isinstance(raw, str) and _SCHEME.match(raw.strip()):
        return PinKind.URL, validate_pin_url(raw)
    return PinKind.FILE, validate_pin_path(raw)


def validate_pin_id(raw: object) -> int:
    """Return a pin's id (the number `pin list` prints after #), or raise InvalidInputError."""
    if isinstance(raw, str) and raw.strip().startswith("#"):
        raw = raw.strip()[1:]
    return whole_number(raw, what="A pin's id (the number `pin list` shows after #)", low=1, high=PIN_ID_MAX)


def pin_title(text: str) -> str:
    """A text pin's title, as `pin list` and the prompt name it: its first words, up to about 60 characters."""
    first = " ".join(text.split())
    if len(first) <= TITLE_CHARS:
        return first
    cut = first[: TITLE_CHARS + 1].rsplit(" ", 1)[0] if " " in first[:TITLE_CHARS] else first[:TITLE_CHARS]
    return cut.rstrip(" ,;:.") + "…"


def pin_key(kind: PinKind, source: str, content: str) -> str:
    """What makes a pin the same pin: its file or URL, or a text pin's whole text (titles may repeat)."""
    what = content if kind is PinKind.TEXT else source
    return hashlib.sha256(f"{kind.value}\n{what}".encode()).hexdigest()


def snapshot_hash(text: str) -> str:
    """The hash stored with a pin's snapshot: a change of content changes it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
