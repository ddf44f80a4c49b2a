"""The `nightwatch` argument parser: every command and option, each value checked by its domain rule as it is read."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from nightwatch.adapters.soul_files import SOUL_FILE_MAX_BYTES
from nightwatch.cli.database import db_upgrade
from nightwatch.cli.deliberation import context, deliberate, history, run
from nightwatch.cli.memory import (
    memory_add,
    memory_clear,
    memory_compact,
    memory_forget,
    memory_projects,
    memory_retry,
    memory_rollback,
    memory_search,
    memory_show,
)
from nightwatch.cli.options import (
    NAME_RULE,
    PROJECT_HELP,
    Commands,
    command,
    memory_command,
    persona_argument,
    project_option,
)
from nightwatch.cli.personas import (
    personas_create,
    personas_delete,
    personas_edit,
    personas_list,
    personas_rename,
    personas_show,
)
from nightwatch.cli.pin_arguments import pin_commands
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
    ROLE_MAX,
    project_slug,
    validate_avatar,
    validate_persona_name,
    validate_role,
)
from nightwatch.domain.pins import validate_pin_id
from nightwatch.domain.sharing import validate_receiver, validate_share_content

# --- argument checks -----------------------------------------------------------------------------------------------
# Each is a domain rule run as an argument's argparse `type`. A bad value raises InvalidInputError out of parse_args,
# so main answers "error: ..." with exit 2 before any file or database is opened; argparse's own complaints (a
# missing argument, an unknown option) still exit 2 with its usage line.

_LESSON_HELP = f"one sentence worth remembering (1-{LESSON_MAX} characters)"
_SOUL_HELP = (
    f"a UTF-8 file of at most {SOUL_FILE_MAX_BYTES // 1024} KB: prose (who the persona is), or in a .yml file the "
    "soul section of a persona file"
)
_PERSONAS_HELP = f"comma-separated persona names to include, e.g. maya,carlos (1-{PERSONAS_MAX})"


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


# --- parser --------------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nightwatch",
        description="AI personas that deliberate in Slack threads and remember what they learn.",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log more: -v at INFO, -vv at DEBUG (default: WARNING, or NIGHTWATCH_LOG_LEVEL; `run` logs at INFO)",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    _personas_commands(commands)
    _memory_commands(commands)
    _share_commands(commands)
    pin_commands(commands)

    deliberate_command = command(
        commands, "deliberate", deliberate, "run a deliberation in the terminal", uses_model=True
    )
    deliberate_command.add_argument("topic", type=validate_topic, help=f"1-{TOPIC_MAX:,} characters")
    project_option(deliberate_command)
    deliberate_command.add_argument("--personas", type=_persona_list, help=_PERSONAS_HELP)
    deliberate_command.add_argument("--llm", choices=("offline", "anthropic"), help="override NIGHTWATCH_LLM")
    deliberate_command.add_argument(
        "--json", action="store_true", help="print one JSON document instead of the transcript"
    )

    context_command = command(commands, "context", context, "show the token budget of a persona's system prompt")
    persona_argument(context_command, "persona")
    project_option(context_command)
    context_command.add_argument(
        "--topic", type=validate_optional_topic, default="", help="default: the project's latest"
    )
    shown = context_command.add_mutually_exclusive_group()
    shown.add_argument(
        "--full", action="store_true", help="also list every lesson, pin and shared item that went into the prompt"
    )
    shown.add_argument("--show", action="store_true", help="print the whole system prompt as the model gets it")

    history_command = command(commands, "history", history, "recent deliberations and how they ended")
    history_command.add_argument(
        "--limit", type=_count("--limit", RECENT_MAX), default=20, help=f"1-{RECENT_MAX} (default: 20)"
    )
    history_command.add_argument(
        "--show", type=_count("--show", 2**62), metavar="ID", help="one deliberation, every turn in full"
    )

    db = commands.add_parser("db", help="upgrade the database schema")
    db_ops = db.add_subparsers(title="database commands", metavar="ACTION", required=True)
    # No start-up first: this command is the upgrade start-up runs, reported.
    command(db_ops, "upgrade", db_upgrade, "run the database migrations this version needs", start_up=False)

    command(commands, "run", run, "start the Slack app over Socket Mode", uses_model=True, log_level="INFO")
    return parser


def _personas_commands(commands: Commands) -> None:
    """`nightwatch personas list|show|create|edit|rename|delete`."""
    personas = commands.add_parser("personas", help="list, show, create, edit, rename, delete personas")
    ops = personas.add_subparsers(title="persona commands", metavar="ACTION", required=True)
    command(ops, "list", personas_list, "list every persona")
    persona_argument(command(ops, "show", personas_show, "show one persona in full"), "name")
    create = command(ops, "create", personas_create, "create a persona")
    persona_argument(create, "name")
    create.add_argument("--role", type=validate_role, required=True, help=f'e.g. "Database Reviewer" (1-{ROLE_MAX})')
    create.add_argument("--avatar", type=validate_avatar, help="an emoji like :owl: or an image URL")
    create.add_argument("--soul", metavar="FILE", help=_SOUL_HELP + " (default: from the role)")
    edit = command(ops, "edit", personas_edit, "change a persona's soul, role or avatar")
    persona_argument(edit, "name")
    edit.add_argument("--soul", metavar="FILE", help=_SOUL_HELP)
    edit.add_argument("--role", type=validate_role, help=f"a new role (1-{ROLE_MAX})")
    edit.add_argument("--avatar", type=validate_avatar, help="a new avatar: an emoji like :owl: or an image URL")
    rename = command(ops, "rename", personas_rename, "rename a persona (its memory folder follows)")
    persona_argument(rename, "old")
    persona_argument(rename, "new")
    delete = command(ops, "delete", personas_delete, "delete a persona (its memory is archived)")
    persona_argument(delete, "name")
    delete.add_argument("--yes", action="store_true", help="confirm the deletion")


def _memory_commands(commands: Commands) -> None:
    """`nightwatch memory show|projects|add|forget|search|compact|rollback|edit|export|import|retry`."""
    memory = commands.add_parser("memory", help="show, add, forget, search, compact, retry a persona's memory")
    mem = memory.add_subparsers(title="memory commands", metavar="ACTION", required=True)
    _category_option(memory_command(mem, "show", memory_show, "show a persona's lessons for a project"))
    projects = command(mem, "projects", memory_projects, "list a persona's projects and their lesson counts")
    persona_argument(projects, "persona")
    projects.add_argument("--json", action="store_true", help="print one JSON document")
    add = memory_command(mem, "add", memory_add, "remember a lesson")
    add.add_argument("lesson", type=_lesson, help=_LESSON_HELP)
    add.add_argument("--category", type=validate_category, help=f"what the lesson is about: {', '.join(CATEGORIES)}")
    add.add_argument("--json", action="store_true", help="print what happened as one JSON document")
    memory_command(mem, "forget", memory_forget, "forget a lesson by id").add_argument("id", type=validate_lesson_id)
    search = memory_command(mem, "search", memory_search, "find the lessons that match a query")
    search.add_argument("query", type=validate_query, help=f"1-{QUERY_MAX} characters")
    search.add_argument("--json", action="store_true", help="print one JSON document")
    _category_option(search)
    search.add_argument("--limit", type=_count("--limit", SEARCH_MAX), default=10, help=f"1-{SEARCH_MAX} (default: 10)")
    memory_command(mem, "compact", memory_compact, "condense the memory file with the model", uses_model=True)
    clear = memory_command(mem, "clear", memory_clear, "forget every lesson of a project (rollback brings them back)")
    clear.add_argument("--yes", action="store_true", help="confirm the clear")
    memory_command(mem, "rollback", memory_rollback, "restore the version kept before the last compaction or clear")
    memory_command(mem, "edit", memory_edit, "open the memory in $EDITOR; saved only if nobody wrote meanwhile")
    export = command(mem, "export", memory_export, "write every memory as markdown files into a new folder")
    export.add_argument("dir", help="a new or empty folder")
    imported = command(mem, "import", memory_import, "merge a folder of memory files in, by lesson id")
    imported.add_argument("dir", help="a folder made by `memory export`, or a NIGHTWATCH_HOME")
    retry = command(mem, "retry", memory_retry, "write the lessons kept after a storage fault, oldest first")
    retry.add_argument(
        "persona", nargs="?", type=validate_persona_name, help="persona name or slug (default: every persona)"
    )
    retry.add_argument("--project", type=project_slug, help="project slug (default: every project)")


def _category_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--category", type=validate_category, help=f"only the lessons of one category: {', '.join(CATEGORIES)}"
    )


def _share_commands(commands: Commands) -> None:
    """`nightwatch share|unshare|shares`: all of a persona's lessons or pins of a project, or one of them."""
    opened = command(commands, "share", share, "let another persona (or all) read a persona's knowledge of a project")
    persona_argument(opened, "persona")
    _receiver_option(opened)
    _share_project_option(opened)
    what = _item_options(opened)
    what.add_argument("--what", type=validate_share_content, help="lessons, pins or all (default: lessons)")
    closed = command(commands, "unshare", unshare, "stop sharing a persona's knowledge of a project, or one item")
    persona_argument(closed, "persona")
    _receiver_option(closed)
    _share_project_option(closed)
    _item_options(closed)
    listed = command(commands, "shares", shares, "list what is shared, by whom, with whom")
    listed.add_argument(
        "persona", nargs="?", type=validate_persona_name, help="only what this persona gives or receives"
    )
    listed.add_argument("--project", type=project_slug, help="only this project (default: every project)")


def _share_project_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--project", type=project_slug, help=f"{PROJECT_HELP}; a pin's share: the pin's project")


def _item_options(command: argparse.ArgumentParser) -> argparse._MutuallyExclusiveGroup:
    """--lesson ID and --pin PIN_ID: one item rather than all of a persona's lessons or pins."""
    one = command.add_mutually_exclusive_group()
    one.add_argument("--lesson", type=validate_lesson_id, metavar="ID", help="only this lesson (its id, `memory show`)")
    one.add_argument("--pin", type=validate_pin_id, metavar="PIN_ID", help="only this pin (its number, `pin list`)")
    return one


def _receiver_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--with",
        dest="receiver",
        metavar="OTHER",
        type=validate_receiver,
        required=True,
        help=f"the persona who reads it ({NAME_RULE}), or all for every persona, ones created later too",
    )
