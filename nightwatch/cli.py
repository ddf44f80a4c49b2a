"""The `nightwatch` command: personas, memory, terminal deliberations, and the Slack app."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import TextIO

import yaml
from injector import Injector

from nightwatch.adapters.redaction import install_redaction, redact
from nightwatch.config import Settings
from nightwatch.domain.deliberation import (
    PERSONAS_MAX,
    TOPIC_MAX,
    DeliberationEngine,
    DeliberationRequest,
    validate_optional_topic,
    validate_persona_list,
    validate_topic,
)
from nightwatch.domain.errors import ConfigError, InvalidInputError, NightWatchError
from nightwatch.domain.inputs import whole_number
from nightwatch.domain.memory import (
    CLI_AUTHOR,
    LESSON_MAX,
    QUERY_MAX,
    SEARCH_MAX,
    MemoryService,
    Retried,
    orphans,
    unread_summary,
    validate_lesson,
    validate_lesson_id,
    validate_query,
)
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.personas import (
    PERSONA_NAME_MAX,
    PROJECT_NAME_MAX,
    ROLE_MAX,
    PersonaDraft,
    PersonaService,
    persona_to_dict,
    project_slug,
    validate_avatar,
    validate_persona_name,
    validate_role,
)
from nightwatch.domain.ports import RECENT_MAX, DeliberationLog
from nightwatch.domain.recall import Scored
from nightwatch.startup import start
from nightwatch.wiring import build_injector

Handler = Callable[[Injector, argparse.Namespace, TextIO], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failed, 2 bad usage)."""
    parser = _parser()
    try:
        # Our checks raise InvalidInputError from parse_args; argparse's own complaints exit 2.
        args = _without_secrets(parser.parse_args(argv))
        if not hasattr(args, "handler"):
            parser.print_help()
            return 2
        settings = _settings(args)
        logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
        install_redaction()
        for notice in settings.notices:
            print(f"note: {notice}", file=sys.stderr)
        container = build_injector(settings)
        start(container)
        handler: Handler = args.handler
        return handler(container, args, sys.stdout)
    except NightWatchError as exc:
        print(f"error: {redact(str(exc))}", file=sys.stderr)  # a message may quote what was typed
        return 2 if isinstance(exc, InvalidInputError | ConfigError) else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _without_secrets(args: argparse.Namespace) -> argparse.Namespace:
    """Every text argument (a topic, a lesson, a query) with its secrets redacted, where it enters."""
    for name, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, name, redact(value))
    return args


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    llm = getattr(args, "llm", None)
    if llm == "anthropic" and not settings.anthropic_api_key:
        raise ConfigError("--llm anthropic needs ANTHROPIC_API_KEY; set it, or use --llm offline.")
    if llm:
        notices = () if llm == "anthropic" else settings.notices
        settings = dataclasses.replace(settings, llm=llm, notices=notices)
    return settings


# --- personas ------------------------------------------------------------------------------------------------------


def _personas_list(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    personas = container.get(PersonaService).list()
    if not personas:
        print("No personas. Create one: nightwatch personas create NAME --role ROLE", file=out)
    for persona in personas:
        state = "" if persona.active else "  (inactive)"
        print(f"{persona.avatar or '-'}  {persona.name:<20} {persona.role}  [{persona.slug}]{state}", file=out)
    return 0


def _personas_show(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    persona = container.get(PersonaService).get(args.name)
    data = persona_to_dict(persona)
    print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip(), file=out)
    return 0


def _personas_create(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    draft = PersonaDraft(name=args.name, role=args.role, avatar=args.avatar)
    outcome = container.get(PersonaService).create(draft)
    print(outcome.message, file=out)
    return 0


def _personas_rename(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    print(container.get(PersonaService).rename(args.old, args.new).message, file=out)
    return 0


def _personas_delete(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    if not args.yes:
        raise InvalidInputError(
            f"Deleting {args.name} archives its memory and removes the persona; run again with --yes to confirm."
        )
    print(container.get(PersonaService).delete(args.name).message, file=out)
    return 0


# --- memory --------------------------------------------------------------------------------------------------------


def _lesson_line(lesson: Lesson) -> str:
    marks = ("📌 " if lesson.pinned else "") + (f"(seen {lesson.seen}×) " if lesson.seen > 1 else "")
    return f"  {lesson.id}  {lesson.recorded_at:%Y-%m-%d}  {marks}{lesson.text}{_added_by(lesson)}"


def _added_by(lesson: Lesson) -> str:
    """Who added the lesson, when a person did: '  · added from the CLI' or '  · added by U123ABC'."""
    if lesson.author is None:
        return ""
    return "  · added from the CLI" if lesson.author == CLI_AUTHOR else f"  · added by {lesson.author}"


def _memory_target(container: Injector, args: argparse.Namespace) -> tuple[MemoryService, Persona, str]:
    persona = container.get(PersonaService).get(args.persona)
    return container.get(MemoryService), persona, project_slug(args.project)


def _memory_show(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    memory, persona, project = _memory_target(container, args)
    lessons = memory.lessons(persona, project)
    history = memory.history(persona, project)
    count = f"{len(lessons)} lesson" + ("" if len(lessons) == 1 else "s")
    print(f"{memory.path_hint(persona, project)} · {count}", file=out)
    if not lessons:
        print("  (no lessons yet)", file=out)
    for lesson in lessons:
        print(_lesson_line(lesson), file=out)
    if history:
        print("Superseded:", file=out)
        for lesson in history:
            print(f"  {lesson.id}  {lesson.text}  (superseded by {lesson.superseded_by}){_added_by(lesson)}", file=out)
    unread = memory.unread_lines(persona, project)
    if unread:
        print(unread_summary(unread), file=out)
    return 0


def _memory_add(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    memory, persona, project = _memory_target(container, args)
    lesson = memory.remember(persona, project, args.lesson, author=CLI_AUTHOR)
    print(f"Remembered {lesson.id}: {lesson.text}", file=out)
    return 0


def _memory_forget(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    memory, persona, project = _memory_target(container, args)
    lesson = memory.forget(persona, project, args.id)
    print(f"Forgot {lesson.id}: {lesson.text}", file=out)
    return 0


def _memory_search(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    memory, persona, project = _memory_target(container, args)
    found = memory.search(persona, project, args.query, limit=args.limit)
    if args.json:
        rows = [_hit_row(hit) for hit in found]
        print(json.dumps({"query": args.query, "project": project, "results": rows}, ensure_ascii=False), file=out)
        return 0
    if not found:
        print(f"No lessons match {args.query!r}.", file=out)
    for hit in found:
        print(_lesson_line(hit.lesson), file=out)
    return 0


def _hit_row(hit: Scored) -> dict[str, object]:
    lesson, parts = hit.lesson, hit.parts
    return {
        "id": lesson.id,
        "text": lesson.text,
        "recorded_at": lesson.recorded_at.isoformat(),
        "pinned": lesson.pinned,
        "seen": lesson.seen,
        "author": lesson.author,
        "score": round(hit.score, 4),
        "parts": {
            "keyword": round(parts.keyword, 4),
            "meaning": round(parts.meaning, 4),
            "recency": round(parts.recency, 4),
            "use": round(parts.use, 4),
        },
    }


def _memory_compact(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    memory, persona, project = _memory_target(container, args)
    result = memory.compact(persona, project)
    print(result.message, file=out)
    return 0 if result.compacted or result.lines_before <= result.lines_after else 1


def _memory_rollback(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    memory, persona, project = _memory_target(container, args)
    if memory.rollback(persona, project):
        print("Restored the version kept before the last compaction.", file=out)
        return 0
    print("Nothing to roll back: no compaction has been kept for this memory.", file=out)
    return 1


def _memory_retry(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    from nightwatch.adapters.terminal import render_retry

    memory, personas = container.get(MemoryService), container.get(PersonaService)
    project = project_slug(args.project) if args.project else None
    known = {persona.slug: persona for persona in personas.list()}
    slugs = [personas.get(args.persona).slug] if args.persona else [lesson.persona for lesson in memory.waiting()]
    report: list[Retried] = []
    for slug in dict.fromkeys(slugs):
        if slug in known:
            report += memory.retry(known[slug], project)
        else:
            report += orphans(memory.waiting(slug), project)
    print(render_retry(report), file=out)
    return 1 if any(item.waiting for item in report) else 0


# --- deliberation --------------------------------------------------------------------------------------------------


def _deliberate(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    from nightwatch.adapters.terminal import TerminalPoster, render_result_json

    names = tuple(n.strip() for n in (args.personas or "").split(",") if n.strip())
    personas = container.get(PersonaService)
    for name in names:
        personas.get(name)  # fail early with a clear message
    request = DeliberationRequest(
        topic=args.topic,
        project=project_slug(args.project),
        thread=f"terminal:{uuid.uuid4().hex[:12]}",
        personas=names,
    )
    poster = TerminalPoster(out=out, quiet=args.json)
    result = container.get(DeliberationEngine).run(request, poster)
    if args.json:
        print(json.dumps(render_result_json(result), ensure_ascii=False, indent=2), file=out)
    for message in result.unsaved:  # lessons storage refused: kept for `nightwatch memory retry`
        print(f"error: {message}", file=sys.stderr)
    return 1 if result.unsaved else 0


def _context(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    from nightwatch.adapters.terminal import render_budget

    persona = container.get(PersonaService).get(args.persona)
    project = project_slug(args.project)
    budget = container.get(DeliberationEngine).context_budget(persona.name, project, args.topic)
    print(render_budget(persona, project, budget), file=out)
    return 0


def _history(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    recent = container.get(DeliberationLog).recent(args.limit)  # type: ignore[type-abstract]  # a Protocol key
    if not recent:
        print('No deliberations yet. Start one: nightwatch deliberate "TOPIC"', file=out)
    for item in recent:
        when = f"{item.started_at:%Y-%m-%d %H:%M}" if item.started_at else "?"
        outcome = item.verdict.decision.value if item.verdict else item.status.value
        where = "terminal" if item.thread.startswith("terminal:") else "slack"
        print(f"#{item.id}  {when}  {outcome:<11} {item.project:<16} {where:<8}  {item.topic[:80]}", file=out)
    return 0


def _run(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    from nightwatch.adapters.slack import SlackApp, run_socket_mode

    settings = container.get(Settings)  # start() has already closed the deliberations a dead process left running
    run_socket_mode(container.get(SlackApp), settings.slack.app_token)
    return 0


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


# --- parser --------------------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nightwatch",
        description="AI personas that deliberate in Slack threads and remember what they learn.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    personas = commands.add_parser("personas", help="list, show, create, rename, delete personas")
    ops = personas.add_subparsers(title="persona commands", metavar="ACTION", required=True)
    _command(ops, "list", _personas_list, "list every persona")
    _persona_argument(_command(ops, "show", _personas_show, "show one persona in full"), "name")
    create = _command(ops, "create", _personas_create, "create a persona")
    _persona_argument(create, "name")
    create.add_argument("--role", type=validate_role, required=True, help=f'e.g. "Database Reviewer" (1-{ROLE_MAX})')
    create.add_argument("--avatar", type=validate_avatar, help="an emoji like :owl: or an image URL")
    rename = _command(ops, "rename", _personas_rename, "rename a persona (its memory folder follows)")
    _persona_argument(rename, "old")
    _persona_argument(rename, "new")
    delete = _command(ops, "delete", _personas_delete, "delete a persona (its memory is archived)")
    _persona_argument(delete, "name")
    delete.add_argument("--yes", action="store_true", help="confirm the deletion")

    memory = commands.add_parser("memory", help="show, add, forget, search, compact, retry a persona's memory")
    mem = memory.add_subparsers(title="memory commands", metavar="ACTION", required=True)
    _memory_command(mem, "show", _memory_show, "show a persona's lessons for a project")
    _memory_command(mem, "add", _memory_add, "remember a lesson").add_argument(
        "lesson", type=_lesson, help=_LESSON_HELP
    )
    _memory_command(mem, "forget", _memory_forget, "forget a lesson by id").add_argument("id", type=validate_lesson_id)
    search = _memory_command(mem, "search", _memory_search, "find the lessons that match a query")
    search.add_argument("query", type=validate_query, help=f"1-{QUERY_MAX} characters")
    search.add_argument("--json", action="store_true", help="print one JSON document")
    search.add_argument("--limit", type=_count("--limit", SEARCH_MAX), default=10, help=f"1-{SEARCH_MAX} (default: 10)")
    _memory_command(mem, "compact", _memory_compact, "condense the memory file with the model")
    _memory_command(mem, "rollback", _memory_rollback, "restore the version kept before the last compaction")
    retry = _command(mem, "retry", _memory_retry, "write the lessons kept after a storage fault, oldest first")
    retry.add_argument("persona", nargs="?", help="persona name or slug (default: every persona with kept lessons)")
    retry.add_argument("--project", help="project slug (default: every project)")

    deliberate = _command(commands, "deliberate", _deliberate, "run a deliberation in the terminal")
    deliberate.add_argument("topic", type=validate_topic, help=f"1-{TOPIC_MAX:,} characters")
    _project_option(deliberate)
    deliberate.add_argument("--personas", type=_persona_list, help=_PERSONAS_HELP)
    deliberate.add_argument("--llm", choices=("offline", "anthropic"), help="override NIGHTWATCH_LLM")
    deliberate.add_argument("--json", action="store_true", help="print one JSON document instead of the transcript")

    context = _command(commands, "context", _context, "show the token budget of a persona's system prompt")
    _persona_argument(context, "persona")
    _project_option(context)
    context.add_argument("--topic", type=validate_optional_topic, default="", help="default: the project's latest")

    history = _command(commands, "history", _history, "recent deliberations and how they ended")
    history.add_argument(
        "--limit", type=_count("--limit", RECENT_MAX), default=20, help=f"1-{RECENT_MAX} (default: 20)"
    )

    _command(commands, "run", _run, "start the Slack app over Socket Mode")
    return parser


def _command(
    group: argparse._SubParsersAction[argparse.ArgumentParser], name: str, handler: Handler, help_text: str
) -> argparse.ArgumentParser:
    command = group.add_parser(name, help=help_text, description=help_text)
    command.set_defaults(handler=handler)
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


if __name__ == "__main__":
    sys.exit(main())
