"""Personas defined by files (the packaged defaults, NIGHTWATCH_PERSONAS_DIR): added once, then kept in step with
their file for as long as nobody changes them in Slack or the CLI.

The rule, per persona file (a persona is known by its slug; the file's `name` says which):

- never added from a file before: it is added, unless a persona already holds that name or folder; either way it
  is marked, so it never appears later by surprise;
- added before, and still exactly what a file last set (its fingerprint matches the mark): a changed file updates
  it (soul, style, skill, role, avatar, model, active...), for the next deliberation;
- changed since in Slack or the CLI: it is theirs now, and the file is not applied (the outcome says so; once the
  persona equals its file again, the file applies again);
- deleted in Slack or the CLI: it stays deleted.

A file that is removed changes nothing (personas live in the database once added); a changed `name` in a file is a
new persona, and the old one stays with its memory (rename in Slack or with `nightwatch personas rename` instead).
A mark from before fingerprints were kept (None) is adopted once its persona equals its file.
"""

from __future__ import annotations

import builtins
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from nightwatch.domain.errors import ConflictError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas.codec import persona_to_dict
from nightwatch.domain.personas.ports import PersonaRepository
from nightwatch.domain.ports import Clock


@dataclass(frozen=True)
class FilePersona:
    """A persona as a file defines it, and where it came from (for the log)."""

    persona: Persona
    source: str


class FileOutcome(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    EDITED = "edited"  # changed in Slack or the CLI since a file set it: the file is not applied
    DELETED = "deleted"  # deleted in Slack or the CLI: it stays deleted
    TAKEN = "taken"  # never added: another persona holds its name or folder


@dataclass(frozen=True)
class FileApplied:
    """What applying one persona file did; `pending` is True when the file says something the persona does not."""

    file: FilePersona
    outcome: FileOutcome
    persona: Persona | None = None
    pending: bool = False


def fingerprint(persona: Persona) -> str:
    """A hash of a persona's own fields (not its id or times): equal fingerprints, equal personas."""
    text = json.dumps(persona_to_dict(persona), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def apply_files(repo: PersonaRepository, clock: Clock, files: Sequence[FilePersona]) -> builtins.list[FileApplied]:
    """Add or update the personas `files` define, by the rule above; one outcome per file, in order."""
    marks = repo.file_marks()
    return [_apply(repo, clock, marks, file) for file in files]


def _apply(repo: PersonaRepository, clock: Clock, marks: dict[str, str | None], file: FilePersona) -> FileApplied:
    wanted = file.persona
    wanted_print = fingerprint(wanted)
    if wanted.slug not in marks:
        return _add(repo, clock, file)
    mark = marks[wanted.slug]
    row = repo.find(wanted.slug)
    if row is None or row.slug != wanted.slug:
        return FileApplied(file, FileOutcome.DELETED, pending=mark != wanted_print)
    row_print = fingerprint(row)
    if row_print == wanted_print:
        if mark != row_print:
            repo.mark_file(wanted.slug, row_print)
        return FileApplied(file, FileOutcome.UNCHANGED, row)
    if mark is None or row_print != mark:
        return FileApplied(file, FileOutcome.EDITED, row, pending=True)
    saved = repo.save(
        replace(wanted, id=row.id, created_at=row.created_at, updated_at=clock.now(), created_by=row.created_by)
    )
    repo.mark_file(wanted.slug, fingerprint(saved))
    return FileApplied(file, FileOutcome.UPDATED, saved)


def _add(repo: PersonaRepository, clock: Clock, file: FilePersona) -> FileApplied:
    wanted = file.persona
    holder = repo.find(wanted.name) or repo.find(wanted.slug)
    if holder is not None:
        repo.mark_file(wanted.slug, None)
        return FileApplied(file, FileOutcome.TAKEN, holder)
    now = clock.now()
    try:
        added = repo.add(replace(wanted, id=None, created_at=now, updated_at=now))
    except ConflictError:  # another process added it meanwhile
        repo.mark_file(wanted.slug, fingerprint(wanted))
        return FileApplied(file, FileOutcome.UNCHANGED, repo.find(wanted.slug))
    repo.mark_file(wanted.slug, fingerprint(added))
    return FileApplied(file, FileOutcome.ADDED, added)
