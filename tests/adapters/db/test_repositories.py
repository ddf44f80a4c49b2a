"""SqlPersonaRepository against real SQLite (and PostgreSQL when DATABASE_URL points at one)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from freezegun import freeze_time
from sqlalchemy import Engine, text, update

from nightwatch.adapters.db import make_engine, upgrade
from nightwatch.adapters.db.repositories import SqlPersonaRepository
from nightwatch.adapters.db.schema import personas
from nightwatch.adapters.persona_files import load_default_personas
from nightwatch.domain.errors import ConflictError, NotFoundError, StorageError
from nightwatch.domain.models import Persona, Skill, Soul, Style
from nightwatch.domain.personas import FileApplied, FileOutcome, FilePersona
from nightwatch.domain.personas.service import PersonaDraft, PersonaService
from tests.fakes import T0, FakeClock, InMemoryMemoryStore


@pytest.fixture
def repo(engine: Engine) -> SqlPersonaRepository:
    return SqlPersonaRepository(engine)


def rich_persona(name: str = "Zoe Lee", **changes: object) -> Persona:
    persona = Persona(
        name=name,
        slug=name.lower().replace(" ", "-"),
        role="Sécurité — AppSec 🔒",
        avatar="https://example.com/zoë.png",
        soul=Soul(
            who_i_am="Je m'appelle Zoë. 日本語: セキュリティ.\nSecond line.",
            worldview=("Fail closed.", "Ünïcödé everywhere ✓"),
            opinions={"security": ("Least privilege.",), "api design": ("Version it.", "Idempotency keys.")},
            expertise=("OAuth 2.0", "JWT"),
            interests=("CTF",),
            tensions=("Speed vs safety",),
            boundaries=("No secrets in threads",),
            pet_peeves=("'It's internal'",),
        ),
        style=Style(
            voice_principles=("Risk first",),
            sentence_structure="Short.",
            tone="calm",
            words_used=("blast radius",),
            words_avoided=("bulletproof",),
            emoji_usage="⚠️ for blockers",
            rhetorical_moves=("Walks the attack",),
            anti_patterns=("Generic lists",),
            good_examples=("⚠️ Blocking: IDOR.",),
        ),
        skill=Skill(modes={"pr_review": "Check auth.", "incident": "Contain."}, additional_instructions=("Be brief",)),
        model="claude-haiku-4-5",
        system_prompt_override="Tu es Zoë.",
        active=False,
        created_at=T0,
        updated_at=T0 + timedelta(minutes=1),
    )
    return replace(persona, **changes)  # type: ignore[arg-type]


# --- round trips -----------------------------------------------------------------------------------------------------


def test_add_and_get_round_trip_every_field(repo: SqlPersonaRepository) -> None:
    persona = rich_persona()
    stored = repo.add(persona)
    assert stored.id is not None
    assert stored == replace(persona, id=stored.id)
    assert repo.get(stored.id) == stored
    assert repo.list() == [stored]


def test_timestamps_come_back_as_aware_utc(repo: SqlPersonaRepository) -> None:
    paris = timezone(timedelta(hours=2))
    stored = repo.add(rich_persona(created_at=datetime(2026, 6, 1, 11, 0, tzinfo=paris), updated_at=None))
    again = repo.get(stored.id or 0)
    assert again is not None
    assert again.created_at == datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    assert again.created_at is not None
    assert again.created_at.utcoffset() == timedelta(0)
    assert again.updated_at == again.created_at


def test_times_are_filled_in_from_the_clock_when_missing(repo: SqlPersonaRepository) -> None:
    with freeze_time(T0):
        stored = repo.add(Persona(name="Dev", slug="dev", role="Implementer"))
    assert stored.created_at == T0
    assert stored.created_at.tzinfo is not None


def test_save_updates_every_field(repo: SqlPersonaRepository) -> None:
    stored = repo.add(Persona(name="Dev", slug="dev", role="Implementer", created_at=T0, updated_at=T0))
    changed = rich_persona("Dev Ops", id=stored.id, slug="dev-ops", created_at=T0, updated_at=T0 + timedelta(hours=1))
    assert repo.save(changed) == changed
    assert repo.get(stored.id or 0) == changed
    assert repo.find("dev") is None


def test_list_can_leave_out_inactive(repo: SqlPersonaRepository) -> None:
    active = repo.add(Persona(name="Maya", slug="maya", role="Security", created_at=T0))
    repo.add(Persona(name="Ghost", slug="ghost", role="Gone", active=False, created_at=T0))
    assert [p.name for p in repo.list()] == ["Maya", "Ghost"]
    assert repo.list(include_inactive=False) == [active]


# --- finding ---------------------------------------------------------------------------------------------------------


def test_find_matches_name_ignoring_case_and_slug(repo: SqlPersonaRepository) -> None:
    stored = repo.add(Persona(name="Maya Sec", slug="maya-sec", role="Security", created_at=T0))
    for key in ("Maya Sec", "maya sec", "MAYA SEC", "  maya sec ", "maya-sec", "MAYA-SEC"):
        assert repo.find(key) == stored, key
    assert repo.find("maya") is None
    assert repo.find("../../etc") is None
    assert repo.get(999) is None


def test_find_prefers_the_name_over_a_slug(repo: SqlPersonaRepository) -> None:
    by_slug = repo.add(Persona(name="Al_B", slug="al-b", role="x", created_at=T0))
    by_name = repo.add(Persona(name="al-b2", slug="al-b2", role="x", created_at=T0))
    assert repo.find("al-b") == by_slug
    assert repo.find("AL-B2") == by_name


# --- conflicts and failures ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "slug"), [("MAYA", "maya-2"), ("Maya_", "maya")])
def test_add_conflicts_on_name_ignoring_case_or_slug(repo: SqlPersonaRepository, name: str, slug: str) -> None:
    repo.add(Persona(name="Maya", slug="maya", role="Security", created_at=T0))
    with pytest.raises(ConflictError, match="choose another name"):
        repo.add(Persona(name=name, slug=slug, role="Other", created_at=T0))
    assert [p.name for p in repo.list()] == ["Maya"]


def test_save_conflicts_and_changes_nothing(repo: SqlPersonaRepository) -> None:
    repo.add(Persona(name="Maya", slug="maya", role="Security", created_at=T0))
    carlos = repo.add(Persona(name="Carlos", slug="carlos", role="Lead", created_at=T0))
    with pytest.raises(ConflictError):
        repo.save(replace(carlos, name="maya", slug="maya-x"))
    assert repo.get(carlos.id or 0) == carlos


def test_save_of_a_missing_persona(repo: SqlPersonaRepository) -> None:
    with pytest.raises(NotFoundError):
        repo.save(Persona(name="Nobody", slug="nobody", role="x", id=404, created_at=T0))
    with pytest.raises(NotFoundError):
        repo.save(Persona(name="Nobody", slug="nobody", role="x"))


def test_remove(repo: SqlPersonaRepository) -> None:
    stored = repo.add(Persona(name="Maya", slug="maya", role="Security", created_at=T0))
    repo.remove(stored.id or 0)
    repo.remove(12345)  # unknown ids are a no-op
    assert repo.list() == []
    assert repo.add(Persona(name="maya", slug="maya", role="Again", created_at=T0)).name == "maya"


def test_file_marks_are_recorded_once_and_keep_the_last_fingerprint(repo: SqlPersonaRepository) -> None:
    assert repo.file_marks() == {}
    repo.mark_file("maya", None)
    repo.mark_file("carlos", "c1")
    repo.mark_file("maya", "m1")
    repo.mark_file("maya", "m2")
    assert repo.file_marks() == {"maya": "m2", "carlos": "c1"}


def test_a_damaged_row_is_reported_with_its_field(engine: Engine, repo: SqlPersonaRepository) -> None:
    stored = repo.add(Persona(name="Maya", slug="maya", role="Security", created_at=T0))
    with engine.begin() as conn:
        conn.execute(update(personas).values(soul={"worldview": 5}))
    with pytest.raises(StorageError, match=r"persona 'Maya' \(id \d+\) in the database: soul.worldview"):
        repo.get(stored.id or 0)


def test_database_errors_become_storage_errors(engine: Engine, repo: SqlPersonaRepository) -> None:
    with engine.begin() as conn:
        # Their foreign keys would keep PostgreSQL from dropping personas.
        for referring in ("persona_shares", "persona_item_shares", "pins"):
            conn.execute(text(f"DROP TABLE {referring}"))
        conn.execute(text("DROP TABLE personas"))
    with pytest.raises(StorageError, match="check DATABASE_URL"):
        repo.list()


# --- the service over the real database ------------------------------------------------------------------------------


def test_defaults_are_added_once_and_kept_in_step_with_their_files_across_restarts(engine: Engine) -> None:
    defaults = load_default_personas()
    files = [FilePersona(p, f"personas/{p.slug}.yml") for p in defaults]

    def service() -> PersonaService:
        return PersonaService(repo=SqlPersonaRepository(engine), store=InMemoryMemoryStore(), clock=FakeClock())

    def outcomes(applied: list[FileApplied]) -> list[tuple[str, FileOutcome]]:
        return [(item.file.persona.name, item.outcome) for item in applied]

    assert {outcome for _, outcome in outcomes(service().apply_files(files))} == {FileOutcome.ADDED}
    # What the database gives back has the file's fingerprint: nothing is lost on the way, so nothing looks edited.
    assert {outcome for _, outcome in outcomes(service().apply_files(files))} == {FileOutcome.UNCHANGED}
    service().delete("Maya")
    assert ("Maya", FileOutcome.DELETED) in outcomes(service().apply_files(files))
    assert sorted(p.name for p in service().list()) == ["Carlos", "Dev", "Priya"]
    stored = service().get("priya")
    assert stored == replace(defaults[3], id=stored.id, created_at=stored.created_at, updated_at=stored.updated_at)
    changed = replace(defaults[3], role="QA Lead")
    assert outcomes(service().apply_files([FilePersona(changed, "personas/priya.yml")])) == [
        ("Priya", FileOutcome.UPDATED)
    ]
    assert service().get("priya").role == "QA Lead"
    service().update("priya", PersonaDraft(role="Our QA"))
    again = replace(defaults[3], role="QA Head")
    assert outcomes(service().apply_files([FilePersona(again, "personas/priya.yml")])) == [
        ("Priya", FileOutcome.EDITED)
    ]
    assert service().get("priya").role == "Our QA"


def test_rename_and_conflict_through_the_service(engine: Engine) -> None:
    service = PersonaService(repo=SqlPersonaRepository(engine), store=InMemoryMemoryStore(), clock=FakeClock())
    service.create(PersonaDraft(name="Maya", role="Security"))
    service.create(PersonaDraft(name="Carlos", role="Lead"))
    assert service.rename("maya", "Maya Sec").persona is not None
    with pytest.raises(ConflictError):
        service.rename("Maya Sec", "CARLOS")
    assert sorted(p.slug for p in service.list()) == ["carlos", "maya-sec"]


# --- upgrades --------------------------------------------------------------------------------------------------------


OLD_SCHEMA = """
CREATE TABLE personas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name VARCHAR(40) NOT NULL,
    name_key VARCHAR(40) NOT NULL UNIQUE,
    slug VARCHAR(80) NOT NULL UNIQUE,
    role VARCHAR(200) NOT NULL,
    soul JSON NOT NULL,
    style JSON NOT NULL,
    skill JSON NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
INSERT INTO personas (name, name_key, slug, role, soul, style, skill, created_at, updated_at) VALUES (
    'Old Timer', 'old timer', 'old-timer', 'Reviewer',
    '{"who_i_am": "I was here first.", "opinions": {"testing": ["Write the test first."]}}',
    '{"tone": "dry"}', '{"modes": {"pr_review": "Look closely."}}',
    '2025-01-02 03:04:05.000000', '2025-01-02 03:04:05.000000'
);
"""


def test_an_older_database_upgrades_without_losing_its_persona(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    raw = sqlite3.connect(path)
    raw.executescript(OLD_SCHEMA)
    raw.close()
    engine = make_engine(f"sqlite:///{path}")
    try:
        upgrade(engine)
        upgrade(engine)  # a second start finds nothing to do
        repo = SqlPersonaRepository(engine)
        old = repo.find("old timer")
        assert old is not None
        assert (old.name, old.slug, old.role, old.avatar, old.model, old.active) == (
            "Old Timer",
            "old-timer",
            "Reviewer",
            "",
            None,
            True,
        )
        assert old.system_prompt_override is None
        assert old.soul.opinions == {"testing": ("Write the test first.",)}
        assert (old.style.tone, old.skill.modes) == ("dry", {"pr_review": "Look closely."})
        assert old.created_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
        assert repo.file_marks() == {}
        updated = repo.save(replace(old, avatar="🧓", model="claude-haiku-4-5"))
        assert repo.get(old.id or 0) == updated
    finally:
        engine.dispose()
