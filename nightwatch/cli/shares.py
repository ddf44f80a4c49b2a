"""`nightwatch share`, `unshare` and `shares`: open a persona's knowledge of a project to teammates, read-only."""

from __future__ import annotations

import argparse
from typing import TextIO

from nightwatch.domain.sharing import SharingService, describe


def share(args: argparse.Namespace, out: TextIO, *, sharing: SharingService) -> int:
    outcome = sharing.share(args.persona, args.receiver, args.project, args.what)
    print(outcome.message, file=out)
    return 0


def unshare(args: argparse.Namespace, out: TextIO, *, sharing: SharingService) -> int:
    print(sharing.unshare(args.persona, args.receiver, args.project).message, file=out)
    return 0


def shares(args: argparse.Namespace, out: TextIO, *, sharing: SharingService) -> int:
    views = sharing.shares(project=args.project, persona=args.persona)
    if not views:
        whose = f" by or with {args.persona}" if args.persona else ""
        where = f" on project {args.project}" if args.project else ""
        print(f"Nothing is shared{whose}{where}. Share: nightwatch share PERSONA --with OTHER --project P", file=out)
        return 0
    rows = [("project", "from", "to", "what")]
    rows += [(view.project, view.sharer.name, view.audience, describe(view.what)) for view in views]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3], file=out)
    return 0
