"""`nightwatch pin add|list|remove|refresh`: their arguments, and the rule across `pin add`'s words."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, cast

from nightwatch.cli.options import NAME_RULE, Commands, command, project_option
from nightwatch.cli.pins import pin_add, pin_list, pin_refresh, pin_remove
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.personas import project_slug, validate_persona_name
from nightwatch.domain.pins import EVERY_PERSONA, PIN_TEXT_MAX, pin_source, validate_pin_id, validate_pin_text
from nightwatch.domain.pins.models import PinKind


def pin_commands(commands: Commands) -> None:
    """`nightwatch pin add|list|remove|refresh`."""
    pin = commands.add_parser("pin", help="pin files, pages and texts to a persona's prompts (pinned context)")
    ops = cast(
        Commands,
        pin.add_subparsers(title="pin commands", metavar="ACTION", required=True, parser_class=CheckedParser),
    )
    add = command(ops, "add", pin_add, "pin a file, a page or a text to a persona's prompts for a project")
    add.add_argument("persona", nargs="?", help=f"persona name or slug ({NAME_RULE}), or all: every persona")
    add.add_argument(
        "source",
        nargs="?",
        help="a file's path, a folder or a glob such as 'docs/*.md' (each file its own pin, at most 50), "
        "or an http(s) URL (fetched once, now)",
    )
    add.add_argument("--recursive", action="store_true", help="for a folder: the files in its subfolders too")
    add.add_argument("--text", type=validate_pin_text, help=f"pin this text instead (1-{PIN_TEXT_MAX:,} characters)")
    add.add_argument("--shared", action="store_true", help="for every persona of the project (PERSONA: none or all)")
    project_option(add)
    add.set_defaults(check=check_pin_add)
    listed = command(ops, "list", pin_list, "list the pins: every one, or those a persona gets")
    listed.add_argument("persona", nargs="?", type=persona_or_all, help="persona name or slug, or all")
    listed.add_argument("--project", type=project_slug, help="project slug (default: every project)")
    command(ops, "remove", pin_remove, "unpin by the number pin list shows").add_argument("id", type=validate_pin_id)
    refresh = command(ops, "refresh", pin_refresh, "read pinned files and fetch pinned pages again")
    refresh.add_argument("id", nargs="?", type=validate_pin_id, help="only this pin (default: every file and page)")


def persona_or_all(raw: str) -> str:
    """A persona's name, or `all` (every persona of the project)."""
    return EVERY_PERSONA if raw.strip().lower() == EVERY_PERSONA else validate_persona_name(raw)


def check_pin_add(args: argparse.Namespace) -> None:
    """`pin add [PERSONA] (SOURCE | --text TEXT) [--shared]`: whose pin, and what it pins, from the words given.

    PERSONA is a persona's name or `all`; with --shared it may be left out (and must not name one persona).
    Sets `pin_persona` (None: every persona of the project), `pin_kind` and `pin_value`.
    """
    words = [word for word in (args.persona, args.source) if word is not None]
    example = "nightwatch pin add maya docs/ARCHITECTURE.md --project P"
    if args.text is not None and len(words) == 2:
        raise InvalidInputError(f"Pin either {words[1]!r} or --text, not both: one pin at a time.")
    if args.text is None and len(words) == 1 and args.shared:
        words = [EVERY_PERSONA, words[0]]  # `pin add SOURCE --shared`
    if not words and args.shared:
        words = [EVERY_PERSONA]  # `pin add --text TEXT --shared`
    wanted = 1 if args.text is not None else 2
    if len(words) != wanted:
        raise InvalidInputError(
            f'Name the persona (or all) and what to pin: `{example}`, a URL instead of the path, or --text "...".'
        )
    persona = persona_or_all(words[0])
    if args.shared and persona != EVERY_PERSONA:
        raise InvalidInputError(
            f"--shared pins for every persona of the project, not for {persona} alone: leave out the persona (or "
            "write all), or leave out --shared."
        )
    args.pin_persona = None if persona == EVERY_PERSONA else persona
    if args.text is not None:
        args.pin_kind, args.pin_value = PinKind.TEXT, args.text
    else:
        args.pin_kind, args.pin_value = pin_source(words[1])


class CheckedParser(argparse.ArgumentParser):
    """A command's parser that runs its `check` (a rule across its arguments) once every argument is read."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, rest = super().parse_known_args(args, namespace)
        check: Callable[[argparse.Namespace], Any] | None = getattr(parsed, "check", None)
        if check is not None:
            check(parsed)
        return parsed, rest
