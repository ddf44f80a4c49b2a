"""Pins' values: a pinned document, where it comes from and whether it could be read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class PinKind(StrEnum):
    """Where a pin's content comes from: a file on the server, a web page, or text a person typed."""

    FILE = "file"
    URL = "url"
    TEXT = "text"


class PinStatus(StrEnum):
    """Whether a pin's source could be read the last time it was looked at."""

    OK = "ok"
    MISSING = "missing"  # the file is gone; the last content read is kept, marked stale
    UNREADABLE = "unreadable"  # the file is there but cannot be pinned now (see Pin.problem); last content kept


@dataclass(frozen=True)
class Pin:
    """A document pinned to a persona's prompt for one project (pinned context; not a pinned lesson).

    `persona_id` names the persona by its database id, so a rename keeps its pins; None pins it for every persona of
    the project. `source` is the file's absolute path, the page's URL, or a text pin's title (its first words).
    `content` is the snapshot injected into prompts (redacted); `stamp` identifies the version of a file it was read
    from, compared with the file on disk before every turn.
    """

    persona_id: int | None
    project: str  # a slug
    kind: PinKind
    source: str
    content: str
    content_hash: str
    read_at: datetime
    added_by: str  # "cli" or the Slack user id of who pinned it
    status: PinStatus = PinStatus.OK
    status_since: datetime | None = None  # when the status last changed (a missing file: when it went missing)
    problem: str | None = None  # why the source cannot be read, for a person; None when status is OK
    stamp: str | None = None
    created_at: datetime | None = None
    id: int | None = None

    @property
    def shared(self) -> bool:
        """Whether every persona of the project gets this pin."""
        return self.persona_id is None
