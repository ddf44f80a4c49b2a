"""`nightwatch share`, `unshare` and `shares`: open a persona's knowledge of a project to teammates, read-only.

All of its lessons or pins (`--what`), or one of them (`--lesson ID`, `--pin PIN_ID`). Without `--project`, a whole
share and a lesson are on the project `default`; a pin's share is on the pin's own project.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from nightwatch.domain.sharing import Item, ItemKind, SharingService
from nightwatch.domain.sharing.models import ShareContent

DEFAULT_PROJECT = "default"


def share(args: argparse.Namespace, out: TextIO, *, sharing: SharingService) -> int:
    item = _item(args)
    if item is None:
        what = args.what or ShareContent.LESSONS
        outcome = sharing.share(args.persona, args.receiver, args.project or DEFAULT_PROJECT, what)
    else:
        outcome = sharing.share_item(args.persona, args.receiver, _project_for(item, args.project), item)
    print(outcome.message, file=out)
    return 0


def unshare(args: argparse.Namespace, out: TextIO, *, sharing: SharingService) -> int:
    item = _item(args)
    if item is None:
        outcome = sharing.unshare(args.persona, args.receiver, args.project or DEFAULT_PROJECT)
    else:
        outcome = sharing.unshare_item(args.persona, args.receiver, args.project, item)
    print(outcome.message, file=out)
    return 0


def shares(args: argparse.Namespace, out: TextIO, *, sharing: SharingService) -> int:
    views = sharing.shares(project=args.project, persona=args.persona)
    if not views:
        whose = f" by or with {args.persona}" if args.persona else ""
        where = f" on project {args.project}" if args.project else ""
        print(f"Nothing is shared{whose}{where}. Share: nightwatch share PERSONA --with OTHER --project P", file=out)
        return 0
    rows = [("project", "from", "to", "what")]
    rows += [(view.project, view.sharer.name, view.audience, view.shown) for view in views]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3], file=out)
    return 0


def _item(args: argparse.Namespace) -> Item | None:
    if args.lesson is not None:
        return Item(ItemKind.LESSON, args.lesson)
    if args.pin is not None:
        return Item(ItemKind.PIN, str(args.pin))
    return None


def _project_for(item: Item, project: str | None) -> str | None:
    """A lesson's project (default when none is named); a pin's as named, or None for the pin's own."""
    return (project or DEFAULT_PROJECT) if item.kind is ItemKind.LESSON else project
