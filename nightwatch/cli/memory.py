"""`nightwatch memory ...`: show, list the projects of, add, forget, search, compact, roll back and retry a persona's
memory."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory import (
    CLI_AUTHOR,
    MemoryService,
    MemoryTransfer,
    Remembered,
    Retried,
    orphans,
    unread_summary,
)
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.personas import (
    PersonaService,
    project_slug,
)
from nightwatch.domain.recall import Scored

_OVERVIEW_INDENT = " " * 24  # under the abstract, past the id and the date


def _lesson_line(lesson: Lesson) -> str:
    """The lesson's line: id, date, marks, category, abstract, author; its overview, when it has one, on the next."""
    marks = ("📌 " if lesson.pinned else "") + (f"(seen {lesson.seen}×) " if lesson.seen > 1 else "")
    category = f"[{lesson.category}] " if lesson.category else ""
    line = f"  {lesson.id}  {lesson.recorded_at:%Y-%m-%d}  {marks}{category}{lesson.text}{_added_by(lesson)}"
    return f"{line}\n{_OVERVIEW_INDENT}{lesson.overview}" if lesson.overview else line


def _added_by(lesson: Lesson) -> str:
    """Who added the lesson, when a person did: '  · added from the CLI' or '  · added by U123ABC'."""
    if lesson.author is None:
        return ""
    return "  · added from the CLI" if lesson.author == CLI_AUTHOR else f"  · added by {lesson.author}"


def _target(personas: PersonaService, args: argparse.Namespace) -> tuple[Persona, str]:
    """The persona and project a memory command names."""
    return personas.get(args.persona), project_slug(args.project)


def memory_show(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    persona, project = _target(personas, args)
    lessons = memory.lessons(persona, project, category=args.category)
    history = [] if args.category else memory.history(persona, project)
    count = f"{len(lessons)} lesson" + ("" if len(lessons) == 1 else "s")
    about = f" in {args.category}" if args.category else ""
    print(f"{memory.path_hint(persona, project)} · {count}{about}", file=out)
    if not lessons:
        print(_elsewhere(memory, persona, project) if not args.category else f"  (no lessons{about} yet)", file=out)
    replaced: dict[str, list[Lesson]] = {}
    for old in history:
        replaced.setdefault(old.superseded_by or "", []).append(old)
    for lesson in lessons:
        print(_lesson_line(lesson), file=out)
        for old in replaced.get(lesson.id, []):  # what this lesson replaced, so a person sees why it changed
            print(f"{_OVERVIEW_INDENT}supersedes {old.id}: {old.text}", file=out)
    if history:
        print("Superseded:", file=out)
        for lesson in history:
            print(f"  {lesson.id}  {lesson.text}  (superseded by {lesson.superseded_by}){_added_by(lesson)}", file=out)
    unread = memory.unread_lines(persona, project)
    if unread:
        print(unread_summary(unread), file=out)
    return 0


def memory_projects(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    persona = personas.get(args.persona)
    counts = _lesson_counts(memory, persona)
    if args.json:
        rows = [{"project": project, "lessons": count} for project, count in counts]
        print(json.dumps({"persona": persona.slug, "projects": rows}, ensure_ascii=False), file=out)
        return 0
    if not counts:
        print(f'{persona.name} has no memory yet: nightwatch memory add {persona.slug} "LESSON" --project P', file=out)
    for project, count in counts:
        print(f"{project:<24} {count} lesson{'' if count == 1 else 's'}", file=out)
    return 0


def _lesson_counts(memory: MemoryService, persona: Persona) -> list[tuple[str, int]]:
    """Each project the persona has a memory of, by name, with how many live lessons it holds."""
    return [(project, len(memory.lessons(persona, project))) for project in memory.projects(persona)]


def _elsewhere(memory: MemoryService, persona: Persona, project: str) -> str:
    """The line `memory show` prints for a project without lessons: where the persona's lessons are, if anywhere."""
    others = sorted(((n, p) for p, n in _lesson_counts(memory, persona) if n and p != project), key=lambda c: -c[0])
    if not others:
        return "  (no lessons yet)"
    where = ", ".join(f"{name} ({count})" for count, name in others)
    return f'  no lessons in project "{project}"; {persona.name} has lessons in: {where}; use --project NAME'


def memory_add(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    persona, project = _target(personas, args)
    found = memory.record(persona, project, args.lesson, author=CLI_AUTHOR, category=args.category)
    if args.json:
        print(json.dumps(_remembered_row(found, persona, project), ensure_ascii=False), file=out)
        return 0
    lesson = found.lesson
    seen = f", seen {lesson.seen}×" if found.outcome == "merged" else ""
    category = f" ({lesson.category})" if lesson.category else ""
    print(f"Remembered {lesson.id} — {found.said}{seen}{category}: {lesson.text}", file=out)
    return 0


def _remembered_row(found: Remembered, persona: Persona, project: str) -> dict[str, object]:
    lesson = found.lesson
    return {
        "persona": persona.slug,
        "project": project,
        "id": lesson.id,
        "text": lesson.text,
        "category": lesson.category,
        "outcome": found.outcome,
        "said": found.said,
        "merged_into": lesson.id if found.outcome == "merged" else None,
        "superseded": found.replaced,
        "seen": lesson.seen,
    }


def memory_forget(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    persona, project = _target(personas, args)
    lesson = memory.forget(persona, project, args.id)
    print(f"Forgot {lesson.id}: {lesson.text}", file=out)
    return 0


def memory_search(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    persona, project = _target(personas, args)
    found = memory.search(persona, project, args.query, limit=args.limit, category=args.category)
    if args.json:
        rows = [_hit_row(hit) for hit in found]
        document = {"query": args.query, "project": project, "category": args.category, "results": rows}
        print(json.dumps(document, ensure_ascii=False), file=out)
        return 0
    if not found:
        about = f" in {args.category}" if args.category else ""
        print(f"No lessons{about} match {args.query!r}.", file=out)
    for hit in found:
        print(_lesson_line(hit.lesson), file=out)
    return 0


def _hit_row(hit: Scored) -> dict[str, object]:
    lesson, parts = hit.lesson, hit.parts
    return {
        "id": lesson.id,
        "text": lesson.text,
        "category": lesson.category,
        "overview": lesson.detail,
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


def memory_compact(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    persona, project = _target(personas, args)
    result = memory.compact(persona, project)
    print(result.message, file=out)
    return 0 if result.compacted or result.lines_before <= result.lines_after else 1


def memory_clear(args: argparse.Namespace, out: TextIO, *, transfer: MemoryTransfer, personas: PersonaService) -> int:
    persona, project = _target(personas, args)
    if not args.yes:
        raise InvalidInputError(
            f"Clearing forgets every lesson of {persona.name}'s memory of {project}; add --yes to confirm "
            "(`nightwatch memory rollback` brings it back)."
        )
    held = transfer.clear(persona, project)
    print(
        f"Cleared {persona.name}'s memory of {project} ({held} lesson{'' if held == 1 else 's'}). "
        f"Undo: nightwatch memory rollback {persona.slug} --project {project}",
        file=out,
    )
    return 0


def memory_rollback(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    persona, project = _target(personas, args)
    if memory.rollback(persona, project):
        print("Restored the version kept before the last compaction or clear.", file=out)
        return 0
    print("Nothing to roll back: no compaction or clear has been kept for this memory.", file=out)
    return 1


def memory_retry(args: argparse.Namespace, out: TextIO, *, memory: MemoryService, personas: PersonaService) -> int:
    from nightwatch.adapters.terminal import render_retry

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
