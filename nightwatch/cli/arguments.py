"""The `nightwatch` argument parser: every command and option, each value checked by its domain rule as it is read."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, TextIO, cast

from injector import Injector

from nightwatch.cli.database import db_upgrade
from nightwatch.cli.deliberation import context, deliberate, history, run
from nightwatch.cli.memory import (
    memory_add,
    memory_compact,
    memory_forget,
    memory_retry,
    memory_rollback,
    memory_search,
    memory_show,
)
from nightwatch.cli.personas import personas_create, personas_delete, personas_list, personas_rename, personas_show
from nightwatch.cli.pins import pin_add, pin_list, pin_refresh, pin_remove
from nightwatch.cli.shares import share, shares, unshare
from nightwatch.cli.transfer import memory_edit, memory_export, memory_import
from nightwatch.domain.deliberation import (
    PERSONAS_MAX,
    TOPIC_MAX,
    validate_optional_topic,
    validate_persona_list,
    validate_topic,
)
from nightwatch.domain.deliberation.ports import RECENT_MAX
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import whole_number
from nightwatch.domain.memory import (
    CATEGORIES,
    LESSON_MAX,
    QUERY_MAX,
    SEARCH_MAX,
    validate_category,
    validate_lesson,
    validate_lesson_id,
    validate_query,
)
from nightwatch.domain.personas import (
    PERSONA_NAME_MAX,
    PROJECT_NAME_MAX,
    ROLE_MAX,
    project_slug,
    validate_avatar,
    validate_persona_name,
    validate_role,
)
from nightwatch.domain.pins import EVERY_PERSONA, PIN_TEXT_MAX, pin_source, validate_pin_id, validate_pin_text
from nightwatch.domain.pins.models import PinKind
from nightwatch.domain.sharing import validate_receiver, validate_share_content
from nightwatch.domain.sharing.models import ShareContent

Handler = Callable[[Injector, argparse.Namespace, TextIO], int]


# --- argument checks -----------------------------------------------------------------------------------------------
# Each is a domain rule run as an argument's argparse `type`. A bad value raises InvalidInputError out of parse_args,
# so main answers "error: ..." with exit 2 before any file or database is opened; argparse's own complaints (a
# missing argument, an unknown option) still exit 2 with its usage line.

_NAME_RULE = f"1-{PERSONA_NAME_MAX} letters, digits, spaces, - or _"
_LESSON_HELP = f"one sentence worth remembering (1-{LESSON_MAX} characters)"
_PERSONAS_HELP = f"comma-separated persona names to include, e.g. maya,carlos (1-{PERSONAS_MAX})"
_PROJECT_HELP = f"project slug: 1-{PROJECT_NAME_MAX} letters, digits, spaces, '.', '_' or '-' (default: default)"


def _lesson(raw: str) -> str:
    """Check a lesson and keep it as typed: remembering it cleans it once more."""
    validate_lesson(raw)
    return raw


def _persona_list(raw: str) -> str:
    """Check a --personas list and write it back as plain comma-separated names."""
    return ",".join(validate_persona_list(raw))


def _count(option: str, high: int) -> Callable[[str], int]:
    """A check for an option that takes a whole number from 1 to `high`."""

    def count(raw: str) -> int:
        return whole_number(raw, what=option, low=1, high=high)

    return count


def _persona_or_all(raw: str) -> str:
    """A persona's name, or `all` (every persona of the project)."""
    return EVERY_PERSONA if raw.strip().lower() == EVERY_PERSONA else validate_persona_name(raw)


def _check_pin_add(args: argparse.Namespace) -> None:
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
    persona = _persona_or_all(words[0])
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


class _CheckedParser(argparse.ArgumentParser):
    """A command's parser that runs its `check` (a rule across its arguments) once every argument is read."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, rest = super().parse_known_args(args, namespace)
        check: Callable[[argparse.Namespace], Any] | None = getattr(parsed, "check", None)
        if check is not None:
            check(parsed)
        return parsed, rest


# --- parser --------------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nightwatch",
        description="AI personas that deliberate in Slack threads and remember what they learn.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    _personas_commands(commands)
    _memory_commands(commands)
    _share_commands(commands)
    _pin_commands(commands)

    deliberate_command = _command(commands, "deliberate", deliberate, "run a deliberation in the terminal")
    deliberate_command.add_argument("topic", type=validate_topic, help=f"1-{TOPIC_MAX:,} characters")
    _project_option(deliberate_command)
    deliberate_command.add_argument("--personas", type=_persona_list, help=_PERSONAS_HELP)
    deliberate_command.add_argument("--llm", choices=("offline", "anthropic"), help="override NIGHTWATCH_LLM")
    deliberate_command.add_argument(
        "--json", action="store_true", help="print one JSON document instead of the transcript"
    )

    context_command = _command(commands, "context", context, "show the token budget of a persona's system prompt")
    _persona_argument(context_command, "persona")
    _project_option(context_command)
    context_command.add_argument(
        "--topic", type=validate_optional_topic, default="", help="default: the project's latest"
    )

    history_command = _command(commands, "history", history, "recent deliberations and how they ended")
    history_command.add_argument(
        "--limit", type=_count("--limit", RECENT_MAX), default=20, help=f"1-{RECENT_MAX} (default: 20)"
    )
    history_command.add_argument(
        "--show", type=_count("--show", 2**62), metavar="ID", help="one deliberation, every turn in full"
    )

    db = commands.add_parser("db", help="upgrade the database schema")
    db_ops = db.add_subparsers(title="database commands", metavar="ACTION", required=True)
    # No start-up first: this command is the upgrade start-up runs, reported.
    _command(db_ops, "upgrade", db_upgrade, "run the database migrations this version needs", start_up=False)

    _command(commands, "run", run, "start the Slack app over Socket Mode")
    return parser


def _personas_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`nightwatch personas list|show|create|rename|delete`."""
    personas = commands.add_parser("personas", help="list, show, create, rename, delete personas")
    ops = personas.add_subparsers(title="persona commands", metavar="ACTION", required=True)
    _command(ops, "list", personas_list, "list every persona")
    _persona_argument(_command(ops, "show", personas_show, "show one persona in full"), "name")
    create = _command(ops, "create", personas_create, "create a persona")
    _persona_argument(create, "name")
    create.add_argument("--role", type=validate_role, required=True, help=f'e.g. "Database Reviewer" (1-{ROLE_MAX})')
    create.add_argument("--avatar", type=validate_avatar, help="an emoji like :owl: or an image URL")
    rename = _command(ops, "rename", personas_rename, "rename a persona (its memory folder follows)")
    _persona_argument(rename, "old")
    _persona_argument(rename, "new")
    delete = _command(ops, "delete", personas_delete, "delete a persona (its memory is archived)")
    _persona_argument(delete, "name")
    delete.add_argument("--yes", action="store_true", help="confirm the deletion")


def _memory_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`nightwatch memory show|add|forget|search|compact|rollback|edit|export|import|retry`."""
    memory = commands.add_parser("memory", help="show, add, forget, search, compact, retry a persona's memory")
    mem = memory.add_subparsers(title="memory commands", metavar="ACTION", required=True)
    _memory_command(mem, "show", memory_show, "show a persona's lessons for a project")
    add = _memory_command(mem, "add", memory_add, "remember a lesson")
    add.add_argument("lesson", type=_lesson, help=_LESSON_HELP)
    add.add_argument("--category", type=validate_category, help=f"what the lesson is about: {', '.join(CATEGORIES)}")
    _memory_command(mem, "forget", memory_forget, "forget a lesson by id").add_argument("id", type=validate_lesson_id)
    search = _memory_command(mem, "search", memory_search, "find the lessons that match a query")
    search.add_argument("query", type=validate_query, help=f"1-{QUERY_MAX} characters")
    search.add_argument("--json", action="store_true", help="print one JSON document")
    search.add_argument("--limit", type=_count("--limit", SEARCH_MAX), default=10, help=f"1-{SEARCH_MAX} (default: 10)")
    _memory_command(mem, "compact", memory_compact, "condense the memory file with the model")
    _memory_command(mem, "rollback", memory_rollback, "restore the version kept before the last compaction")
    _memory_command(mem, "edit", memory_edit, "open the memory in $EDITOR; saved only if nobody wrote meanwhile")
    export = _command(mem, "export", memory_export, "write every memory as markdown files into a new folder")
    export.add_argument("dir", help="a new or empty folder")
    imported = _command(mem, "import", memory_import, "merge a folder of memory files in, by lesson id")
    imported.add_argument("dir", help="a folder made by `memory export`, or a NIGHTWATCH_HOME")
    retry = _command(mem, "retry", memory_retry, "write the lessons kept after a storage fault, oldest first")
    retry.add_argument(
        "persona", nargs="?", type=validate_persona_name, help="persona name or slug (default: every persona)"
    )
    retry.add_argument("--project", type=project_slug, help="project slug (default: every project)")


def _share_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`nightwatch share|unshare|shares`."""
    opened = _command(commands, "share", share, "let another persona (or all) read a persona's knowledge of a project")
    _persona_argument(opened, "persona")
    _receiver_option(opened)
    _project_option(opened)
    opened.add_argument(
        "--what",
        type=validate_share_content,
        default=ShareContent.LESSONS,
        help="lessons, pins or all (default: lessons)",
    )
    closed = _command(commands, "unshare", unshare, "stop sharing a persona's knowledge of a project")
    _persona_argument(closed, "persona")
    _receiver_option(closed)
    _project_option(closed)
    listed = _command(commands, "shares", shares, "list what is shared, by whom, with whom")
    listed.add_argument(
        "persona", nargs="?", type=validate_persona_name, help="only what this persona gives or receives"
    )
    listed.add_argument("--project", type=project_slug, help="only this project (default: every project)")


def _receiver_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--with",
        dest="receiver",
        metavar="OTHER",
        type=validate_receiver,
        required=True,
        help=f"the persona who reads it ({_NAME_RULE}), or all for every persona, ones created later too",
    )


def _pin_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`nightwatch pin add|list|remove|refresh`."""
    pin = commands.add_parser("pin", help="pin files, pages and texts to a persona's prompts (pinned context)")
    ops = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        pin.add_subparsers(title="pin commands", metavar="ACTION", required=True, parser_class=_CheckedParser),
    )
    add = _command(ops, "add", pin_add, "pin a file, a page or a text to a persona's prompts for a project")
    add.add_argument("persona", nargs="?", help=f"persona name or slug ({_NAME_RULE}), or all: every persona")
    add.add_argument("source", nargs="?", help="a file's path, or an http(s) URL (fetched once, now)")
    add.add_argument("--text", type=validate_pin_text, help=f"pin this text instead (1-{PIN_TEXT_MAX:,} characters)")
    add.add_argument("--shared", action="store_true", help="for every persona of the project (PERSONA: none or all)")
    _project_option(add)
    add.set_defaults(check=_check_pin_add)
    listed = _command(ops, "list", pin_list, "list the pins: every one, or those a persona gets")
    listed.add_argument("persona", nargs="?", type=_persona_or_all, help="persona name or slug, or all")
    listed.add_argument("--project", type=project_slug, help="project slug (default: every project)")
    _command(ops, "remove", pin_remove, "unpin by the number pin list shows").add_argument("id", type=validate_pin_id)
    refresh = _command(ops, "refresh", pin_refresh, "read pinned files and fetch pinned pages again")
    refresh.add_argument("id", nargs="?", type=validate_pin_id, help="only this pin (default: every file and page)")


def _command(
    group: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    handler: Handler,
    help_text: str,
    *,
    start_up: bool = True,
) -> argparse.ArgumentParser:
    """Add a command; `start_up` says whether start-up (upgrade, seeding, closing abandoned runs) comes first."""
    command = group.add_parser(name, help=help_text, description=help_text)
    command.set_defaults(handler=handler, start_up=start_up)
    return command


def _memory_command(
    group: argparse._SubParsersAction[argparse.ArgumentParser], name: str, handler: Handler, help_text: str
) -> argparse.ArgumentParser:
    command = _command(group, name, handler, help_text)
    _persona_argument(command, "persona")
    _project_option(command)
    return command


def _persona_argument(command: argparse.ArgumentParser, name: str) -> None:
    command.add_argument(name, type=validate_persona_name, help=f"persona name or slug ({_NAME_RULE})")


def _project_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--project", type=project_slug, default="default", help=_PROJECT_HELP)
