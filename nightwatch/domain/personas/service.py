"""Persona use cases: apply persona files, list, get, create, update, rename (moving memory), delete (archiving it).

A rename or delete changes two things, the memory and the database row; moves.py keeps them in step (folder first
with memory in files, one transaction with memory in the database). Lessons kept after a storage fault
(PendingLessons) follow a rename; a delete drops them with the persona, and its message says how many, as it does
for the shares the persona gave or received and its own pinned context (keyed by id, so a rename keeps them).
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from nightwatch.domain.errors import ConflictError, InvalidNameError, NotFoundError
from nightwatch.domain.memory.ports import FolderMove, MemoryStore, PendingLessons
from nightwatch.domain.models import Persona, Skill, Soul, Style
from nightwatch.domain.names import persona_slug, validate_persona_name
from nightwatch.domain.personas.codec import (
    persona_from_dict,
    persona_to_dict,
    validate_avatar,
    validate_model,
    validate_override,
    validate_role,
)
from nightwatch.domain.personas.files import FileApplied, FilePersona, apply_files
from nightwatch.domain.personas.moves import FolderFirst, MemoryMoves, OneTransaction, folder
from nightwatch.domain.personas.ports import PersonaRepository, PersonaTransactions
from nightwatch.domain.personas.souls import soul_for_role
from nightwatch.domain.pins.ports import PinRepository
from nightwatch.domain.ports import Clock
from nightwatch.domain.sharing.ports import ShareRepository

__all__ = ["PersonaDraft", "PersonaOutcome", "PersonaService", "persona_from_dict", "persona_to_dict"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PersonaDraft:
    """Fields a user supplies on create or update; None means 'unchanged' on update."""

    name: str | None = None
    role: str | None = None
    avatar: str | None = None
    soul: Soul | None = None
    style: Style | None = None
    skill: Skill | None = None
    model: str | None = None
    system_prompt_override: str | None = None
    active: bool | None = None


@dataclass(frozen=True)
class PersonaOutcome:
    """What a persona use case did: the persona now (None after delete) and a message for a person."""

    persona: Persona | None
    message: str
    move: FolderMove | None = None


def _shown(raw: str) -> str:
    text = raw if len(raw) <= 40 else raw[:37] + "..."
    return repr(text.replace("\x00", "\\0"))


def _may_name_a_persona(key: str) -> bool:
    """Whether `key` follows the naming rules, as every stored name and slug does."""
    try:
        validate_persona_name(key)
    except InvalidNameError:
        return False
    return True


class PersonaService:
    """Creates, changes and removes personas, keeping their memory in step with the database.

    With `transactions` (memory kept in the personas' own database) a rename or delete moves the memory in the
    persona's transaction; without, the memory folder moves first and moves back if the database step fails.
    """

    def __init__(
        self,
        *,
        repo: PersonaRepository,
        store: MemoryStore,
        clock: Clock,
        pending: PendingLessons | None = None,
        transactions: PersonaTransactions | None = None,
        pins: PinRepository | None = None,
        shares: ShareRepository | None = None,
    ) -> None:
        self._repo = repo
        self._store = store
        self._clock = clock
        self._moves: MemoryMoves = (
            OneTransaction(transactions=transactions, clock=clock)
            if transactions is not None
            else FolderFirst(repo=repo, store=store, clock=clock, pending=pending, shares=shares, pins=pins)
        )

    # --- reading ------------------------------------------------------------------------------------------------

    def list(self, *, include_inactive: bool = True) -> builtins.list[Persona]:
        """Every persona, oldest first; only the active ones when `include_inactive` is False."""
        return self._repo.list(include_inactive=include_inactive)

    def get(self, name_or_slug: str) -> Persona:
        """The persona whose name matches ignoring case, or whose slug matches; NotFoundError lists the known names."""
        key = name_or_slug.strip() if isinstance(name_or_slug, str) else ""
        found = self._repo.find(key) if _may_name_a_persona(key) else None  # the database never sees other text
        if found is None:
            known = ", ".join(sorted(p.name for p in self._repo.list())) or "none yet"
            raise NotFoundError(
                f"No persona is called {_shown(str(name_or_slug))}. Known personas: {known}. "
                "Check the spelling, or create it first."
            )
        return found

    def get_by_id(self, persona_id: int) -> Persona:
        """The persona with this id, or NotFoundError."""
        found = self._repo.get(persona_id)
        if found is None:
            raise NotFoundError(f"No persona has the id {persona_id}; it may have been deleted. List them again.")
        return found

    # --- persona files -----------------------------------------------------------------------------------------

    def apply_files(self, files: Sequence[FilePersona]) -> builtins.list[FileApplied]:
        """Add the personas files define, and update those nobody edited since their file set them (files.py)."""
        return apply_files(self._repo, self._clock, files)

    # --- changing -----------------------------------------------------------------------------------------------

    def create(self, draft: PersonaDraft, *, created_by: str | None = None) -> PersonaOutcome:
        """Create a persona from a draft that has at least a name and a role (without a soul, one from its role);
        `created_by` is the Slack user id of whoever created it there (who may then clear its memory)."""
        if draft.name is None:
            raise InvalidNameError("A persona needs a name: 1-40 letters, digits, spaces, - or _.")
        name = validate_persona_name(draft.name)
        slug = persona_slug(name)
        role = validate_role(draft.role)
        persona = self._apply(Persona(name=name, slug=slug, role=role, soul=soul_for_role(name, role)), draft)
        self._refuse_clash(name, slug, None)
        now = self._clock.now()
        created = self._repo.add(replace(persona, created_at=now, updated_at=now, created_by=created_by or None))
        return PersonaOutcome(
            created,
            f"Created {created.name} ({created.role}); its memory lives in agents/{slug}/.{self._adopted(slug)}",
        )

    def update(self, name_or_slug: str, draft: PersonaDraft) -> PersonaOutcome:
        """Change the fields the draft gives; a new name is a rename and moves the memory folder."""
        current = self.get(name_or_slug)
        changed = self._apply(current, draft)
        if draft.name is not None:
            name = validate_persona_name(draft.name)
            changed = replace(changed, name=name, slug=persona_slug(name))
        if changed == current:
            return PersonaOutcome(current, f"Nothing to change for {current.name}.")
        if changed.name != current.name:
            self._refuse_clash(changed.name, changed.slug, current.id)
        changed = replace(changed, updated_at=self._clock.now())
        if changed.slug == current.slug:
            saved = self._repo.save(changed)
            return PersonaOutcome(saved, self._updated_message(current, saved))
        return self._move_then_save(current, changed)

    def rename(self, name_or_slug: str, new_name: str) -> PersonaOutcome:
        """Rename a persona; its memory folder moves with it."""
        return self.update(name_or_slug, PersonaDraft(name=new_name))

    def delete(self, name_or_slug: str) -> PersonaOutcome:
        """Delete a persona, archiving its memory to agents/.archived/<slug>-<UTC timestamp>/."""
        persona = self.get(name_or_slug)
        deleted = self._moves.delete(persona)
        move = deleted.move
        where = f"its memory was archived to {folder(move.target)}" if move.moved else "it had no memory to archive"
        count = len(deleted.dropped)
        went = f"; {count} lesson{'s' if count != 1 else ''} waiting to be saved went with it" if count else ""
        gone = _shares_gone(len(deleted.shares)) + _pins_gone(len(deleted.pins))
        return PersonaOutcome(None, f"Deleted {persona.name}; {where}{went}{gone}.", move)

    # --- steps --------------------------------------------------------------------------------------------------

    def _apply(self, persona: Persona, draft: PersonaDraft) -> Persona:
        """Validate and apply every field of the draft except the name."""
        changes: dict[str, object] = {}
        if draft.role is not None:
            changes["role"] = validate_role(draft.role)
        if draft.avatar is not None:
            changes["avatar"] = validate_avatar(draft.avatar)
        if draft.model is not None:
            changes["model"] = validate_model(draft.model)
        if draft.system_prompt_override is not None:
            changes["system_prompt_override"] = validate_override(draft.system_prompt_override)
        for section in ("soul", "style", "skill", "active"):
            if getattr(draft, section) is not None:
                changes[section] = getattr(draft, section)
        return replace(persona, **changes)  # type: ignore[arg-type]

    def _adopted(self, slug: str) -> str:
        """A note when memory already sits in the folder a persona now owns (e.g. restored by hand)."""
        projects = self._store.projects(slug)
        if not projects:
            return ""
        return f" It found memory already in agents/{slug}/ for {', '.join(projects)} and uses it."

    def _taken_by(self, name: str, slug: str, own_id: int | None) -> Persona | None:
        for key in (name, slug):
            other = self._repo.find(key)
            if other is not None and other.id != own_id:
                return other
        return None

    def _refuse_clash(self, name: str, slug: str, own_id: int | None) -> None:
        other = self._taken_by(name, slug, own_id)
        if other is None:
            return
        if other.name.lower() == name.lower():
            raise ConflictError(f"A persona named {other.name} already exists; choose another name.")
        raise ConflictError(
            f"The name {name} would share the memory folder agents/{slug}/ with the persona {other.name}; "
            "choose a name that differs in more than punctuation, spaces or case."
        )

    def _move_then_save(self, current: Persona, changed: Persona) -> PersonaOutcome:
        saved, move = self._moves.rename(current, changed)
        message = self._renamed_message(current, saved, move)
        return PersonaOutcome(saved, message + self._adopted(saved.slug) if not move.moved else message, move)

    # --- messages -----------------------------------------------------------------------------------------------

    @staticmethod
    def _updated_message(before: Persona, after: Persona) -> str:
        others = _changed_fields(before, after)
        if before.name != after.name:
            also = f"; also updated {', '.join(others)}" if others else ""
            return f"Renamed {before.name} to {after.name}; its memory stays in agents/{after.slug}/{also}."
        return f"Updated {after.name}: {', '.join(others)}."

    @staticmethod
    def _renamed_message(before: Persona, after: Persona, move: FolderMove) -> str:
        if move.moved:
            text = f"Renamed {before.name} to {after.name}; memory moved to {folder(move.target)}"
        else:
            text = f"Renamed {before.name} to {after.name}; it had no memory yet, so no folder moved"
        if move.set_aside is not None:
            text += f"; a stray folder that was there is kept at {folder(move.set_aside)}"
        others = _changed_fields(before, after)
        if others:
            text += f"; also updated {', '.join(others)}"
        return text + "."


def _shares_gone(count: int) -> str:
    """The part of a delete's message about the shares that went with the persona."""
    if not count:
        return ""
    return (
        f"; the {count} shares it gave or received were removed"
        if count > 1
        else "; the one share it gave or received was removed"
    )


def _pins_gone(count: int) -> str:
    """The part of a delete's message about the persona's own pins, which went with it."""
    if not count:
        return ""
    return f"; its {count} pins were removed" if count > 1 else "; its pin was removed"


_EDITABLE = ("role", "avatar", "soul", "style", "skill", "model", "system_prompt_override", "active")


def _changed_fields(before: Persona, after: Persona) -> list[str]:
    """Names (for a person) of the fields other than the name that differ."""
    return [field.replace("_", " ") for field in _EDITABLE if getattr(before, field) != getattr(after, field)]
