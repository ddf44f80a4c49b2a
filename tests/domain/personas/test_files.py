"""Personas defined by files: added once, updated from their file while nobody edits them elsewhere (files.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nightwatch.domain.models import Persona, Soul
from nightwatch.domain.personas import FileOutcome, FilePersona, PersonaDraft, PersonaService, fingerprint
from tests.fakes import T0, FakeClock, InMemoryMemoryStore, InMemoryPendingLessons, InMemoryPersonaRepository

MAYA = Persona(name="Maya", slug="maya", role="Security Reviewer", soul=Soul(who_i_am="I'm Maya."))
CARLOS = Persona(name="Carlos", slug="carlos", role="Tech Lead / Architect")


class Env:
    def __init__(self) -> None:
        self.repo = InMemoryPersonaRepository()
        self.clock = FakeClock()
        self.service = PersonaService(
            repo=self.repo, store=InMemoryMemoryStore(), clock=self.clock, pending=InMemoryPendingLessons()
        )

    def apply(self, *personas: Persona) -> list[tuple[str, FileOutcome]]:
        files = [FilePersona(p, f"personas/{p.slug}.yml") for p in personas]
        return [(item.file.persona.name, item.outcome) for item in self.service.apply_files(files)]

    def persona(self, slug: str) -> Persona:
        found = self.repo.find(slug)
        assert found is not None
        return found


@pytest.fixture
def env() -> Env:
    return Env()


# --- adding ----------------------------------------------------------------------------------------------------------


def test_files_add_their_personas_once(env: Env) -> None:
    assert env.apply(MAYA, CARLOS) == [("Maya", FileOutcome.ADDED), ("Carlos", FileOutcome.ADDED)]
    assert all(p.id is not None and p.created_at == T0 for p in env.service.list())
    assert env.apply(MAYA, CARLOS) == [("Maya", FileOutcome.UNCHANGED), ("Carlos", FileOutcome.UNCHANGED)]
    assert [p.name for p in env.service.list()] == ["Maya", "Carlos"]
    assert env.repo.file_marks() == {"maya": fingerprint(MAYA), "carlos": fingerprint(CARLOS)}


def test_a_new_file_adds_its_persona_on_a_later_apply(env: Env) -> None:
    env.apply(MAYA)
    assert env.apply(MAYA, CARLOS) == [("Maya", FileOutcome.UNCHANGED), ("Carlos", FileOutcome.ADDED)]


def test_a_deleted_persona_stays_deleted_whatever_its_file_says(env: Env) -> None:
    env.apply(MAYA, CARLOS)
    env.service.delete("Maya")
    assert env.apply(MAYA, CARLOS)[0] == ("Maya", FileOutcome.DELETED)
    changed = replace(MAYA, role="Security Lead")
    [applied, _] = env.service.apply_files([FilePersona(changed, "personas/maya.yml"), FilePersona(CARLOS, "c")])
    assert (applied.outcome, applied.pending) == (FileOutcome.DELETED, True)
    assert [p.name for p in env.service.list()] == ["Carlos"]


@pytest.mark.parametrize("custom", ["maya", "Maya_"])
def test_a_file_whose_name_is_taken_is_not_added_and_never_appears_later(env: Env, custom: str) -> None:
    env.service.create(PersonaDraft(name=custom, role="Our own Maya"))
    assert env.apply(MAYA, CARLOS) == [("Maya", FileOutcome.TAKEN), ("Carlos", FileOutcome.ADDED)]
    assert "maya" in env.repo.file_marks()
    assert env.persona(custom).role == "Our own Maya"  # never overwritten by the file
    assert env.apply(MAYA)[0][1] is FileOutcome.EDITED
    assert env.persona(custom).role == "Our own Maya"
    env.service.delete(custom)
    assert env.apply(MAYA, CARLOS)[0] == ("Maya", FileOutcome.DELETED)
    assert [p.name for p in env.service.list()] == ["Carlos"]


# --- updating --------------------------------------------------------------------------------------------------------


def test_a_changed_file_updates_a_persona_nobody_edited(env: Env) -> None:
    env.apply(MAYA)
    added = env.persona("maya")
    env.clock.advance(hours=1)
    changed = replace(MAYA, role="Security Lead", avatar=":lock:", soul=Soul(who_i_am="I'm Maya, now leading."))
    assert env.apply(changed) == [("Maya", FileOutcome.UPDATED)]
    now = env.persona("maya")
    assert (now.role, now.avatar, now.soul.who_i_am) == ("Security Lead", ":lock:", "I'm Maya, now leading.")
    assert (now.id, now.created_at, now.updated_at) == (added.id, T0, env.clock.now())
    assert env.repo.file_marks()["maya"] == fingerprint(changed)
    assert env.apply(replace(changed, role="Security Head")) == [("Maya", FileOutcome.UPDATED)]


def test_a_persona_edited_in_slack_or_the_cli_is_never_overwritten_by_its_file(env: Env) -> None:
    env.apply(MAYA)
    env.service.update("Maya", PersonaDraft(role="Our security reviewer"))
    [applied] = env.service.apply_files([FilePersona(replace(MAYA, role="Security Lead"), "personas/maya.yml")])
    assert (applied.outcome, applied.pending) == (FileOutcome.EDITED, True)
    assert env.persona("maya").role == "Our security reviewer"
    [same] = env.service.apply_files([FilePersona(MAYA, "personas/maya.yml")])
    assert same.outcome is FileOutcome.EDITED  # still theirs, even when the file goes back


def test_a_persona_made_equal_to_its_file_again_follows_the_file_again(env: Env) -> None:
    env.apply(MAYA)
    env.service.update("Maya", PersonaDraft(role="Our security reviewer"))
    env.service.update("Maya", PersonaDraft(role=MAYA.role))
    assert env.apply(MAYA) == [("Maya", FileOutcome.UNCHANGED)]
    assert env.apply(replace(MAYA, role="Security Lead")) == [("Maya", FileOutcome.UPDATED)]


def test_a_deactivated_persona_counts_as_edited(env: Env) -> None:
    env.apply(MAYA)
    env.service.update("Maya", PersonaDraft(active=False))
    assert env.apply(replace(MAYA, role="Security Lead")) == [("Maya", FileOutcome.EDITED)]
    assert env.persona("maya").active is False


def test_a_mark_from_before_fingerprints_is_adopted_once_the_persona_equals_its_file(env: Env) -> None:
    env.repo.add(replace(MAYA, created_at=T0, updated_at=T0))
    env.repo.mark_file("maya", None)  # seeded by an earlier release
    assert env.apply(replace(MAYA, role="Security Lead")) == [("Maya", FileOutcome.EDITED)]
    assert env.apply(MAYA) == [("Maya", FileOutcome.UNCHANGED)]
    assert env.repo.file_marks()["maya"] == fingerprint(MAYA)
    assert env.apply(replace(MAYA, role="Security Lead")) == [("Maya", FileOutcome.UPDATED)]


def test_a_changed_name_in_a_file_is_a_new_persona_and_the_old_one_stays(env: Env) -> None:
    env.apply(MAYA)
    renamed = replace(MAYA, name="Maia", slug="maia")
    assert env.apply(renamed) == [("Maia", FileOutcome.ADDED)]
    assert sorted(p.name for p in env.service.list()) == ["Maia", "Maya"]


def test_the_fingerprint_covers_every_own_field_and_no_id_or_time() -> None:
    assert fingerprint(MAYA) == fingerprint(replace(MAYA, id=7, created_at=T0, updated_at=T0))
    for change in ({"role": "x"}, {"avatar": ":x:"}, {"model": "m"}, {"active": False}, {"soul": Soul(who_i_am="x")}):
        assert fingerprint(replace(MAYA, **change)) != fingerprint(MAYA)  # type: ignore[arg-type]
