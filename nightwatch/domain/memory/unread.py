"""The lines of a memory file Night Watch could not read, so that a person is told about them instead of losing them.

Every such line stays in the file as written (a document keeps each line that is not a lesson); this finds the ones
worth reporting. Read without being lessons: blank lines, the title and other headings, section headers, whole-line
comments, horizontal rules, all of the history section, and prose outside dated sections (a person's own notes).
Not read: any other line in a dated section (prose, a bullet with no words, a lesson whose metadata comment is
malformed, a `> ` overview line with no lesson right above it, or with no words or a comment in it), and a bullet
anywhere else that could not be read as a lesson.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from nightwatch.domain.memory.format import MemoryDocument, bullet_text
from nightwatch.domain.memory.models import UnreadLine

_WHOLE_COMMENT = re.compile(r"<!--.*-->")
_RULE = re.compile(r"([-*_])(?:[ \t]*\1){2,}")  # a markdown horizontal rule: ---, ***, _ _ _


def unread_lines(doc: MemoryDocument) -> list[UnreadLine]:
    """The lines of `doc` that are neither lessons nor structure, numbered as in the text `doc.render()` gives."""
    found: list[UnreadLine] = []
    number = 0
    for section in doc.sections:
        number += section.header is not None
        for line in section.lines:
            number += 1
            raw = line.raw
            if line.lesson is not None:  # a lesson with an overview spans several lines
                number += raw.count("\n") if raw is not None else bool(line.lesson.overview)
            elif raw is not None and not section.history and _unread(raw, section.day):
                found.append(UnreadLine(number, raw))
    return found


def unread_summary(lines: Sequence[UnreadLine], width: int = 60) -> str:
    """One line for a person: '2 lines not understood: line 14 "…", line 20 "…"' ('' when there are none)."""
    if not lines:
        return ""
    shown = ", ".join(f'line {line.number} "{_clip(line.text.strip(), width)}"' for line in lines)
    return f"{len(lines)} line{'' if len(lines) == 1 else 's'} not understood: {shown}"


def _unread(raw: str, day: date | None) -> bool:
    line = raw.strip()
    if not line or line.startswith("#") or _WHOLE_COMMENT.fullmatch(line) or _RULE.fullmatch(line):
        return False
    return day is not None or bullet_text(line) is not None


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
