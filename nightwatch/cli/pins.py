"""`nightwatch pin add|list|remove|refresh`: pinned context, the documents a persona's prompts carry for a project.

Arguments are checked as they are parsed (arguments.py), so by the time a handler runs `args.pin_persona` is a
persona name or None (every persona of the project), and `args.pin_kind`/`args.pin_value` say what to pin. A file
path is made absolute from the current folder here: a person at a shell means the file they see.
"""

from __future__ import annotations

import argparse
import os
from datetime import datetime
from typing import TextIO

from nightwatch.domain.memory import CLI_AUTHOR
from nightwatch.domain.pins import PinService, PinView, pin_files
from nightwatch.domain.pins.models import PinKind, PinStatus
from nightwatch.domain.pins.ports import PinFiles


def pin_add(args: argparse.Namespace, out: TextIO, *, pins: PinService, files: PinFiles) -> int:
    kind, value = PinKind(args.pin_kind), args.pin_value  # entry.py redacts every text argument, enums included
    if kind is PinKind.FILE and not os.path.isabs(value):
        value = os.path.join(os.getcwd(), value)
    if kind is PinKind.FILE:  # a file, a folder or a glob: each file its own pin
        pinned = pin_files(
            pins,
            files,
            args.pin_persona,
            args.project,
            value,
            added_by=CLI_AUTHOR,
            anywhere=True,
            recursive=args.recursive,
        )
        print("\n".join(pinned.messages), file=out)
        return 0 if pinned.outcomes else 1
    outcome = pins.add(args.pin_persona, args.project, kind, value, added_by=CLI_AUTHOR, anywhere=True)
    print(outcome.message, file=out)
    return 0


def pin_list(args: argparse.Namespace, out: TextIO, *, pins: PinService) -> int:
    views = pins.list(args.persona, args.project)
    if not views:
        print(
            "Nothing is pinned yet. Pin a file: nightwatch pin add PERSONA docs/ARCHITECTURE.md --project P", file=out
        )
    for view in views:
        print(pin_line(view), file=out)
    return 0


def pin_remove(args: argparse.Namespace, out: TextIO, *, pins: PinService) -> int:
    pin = pins.remove(args.id)
    print(f"Unpinned #{pin.id}: {PinView(pin, None, 0).label}", file=out)
    return 0


def pin_refresh(args: argparse.Namespace, out: TextIO, *, pins: PinService) -> int:
    outcomes = pins.refresh(args.id)
    if not outcomes:
        print("No file or page is pinned, so there is nothing to read again.", file=out)
    for outcome in outcomes:
        print(outcome.message, file=out)
    return 0 if all(outcome.ok for outcome in outcomes) else 1


def pin_line(view: PinView) -> str:
    """One pin as `pin list` prints it: #id, for whom, project, what, size, when read, and any flag."""
    pin = view.pin
    whose = view.persona or "every persona"
    line = (
        f"#{pin.id:<4} {whose:<16} {pin.project:<16} {view.label} · {view.tokens:,} tokens · read {_when(pin.read_at)}"
    )
    if pin.status is PinStatus.MISSING:
        line += f" · FILE MISSING since {_when(pin.status_since)} (its last content is still injected, marked stale)"
    elif pin.status is PinStatus.UNREADABLE:
        line += f" · UNREADABLE since {_when(pin.status_since)}: {pin.problem or 'unknown'}"
    return line


def _when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else "?"
