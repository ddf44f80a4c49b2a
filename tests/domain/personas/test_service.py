"""PersonaService: the persona use cases, with in-memory fakes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from pathlib import PurePosixPath

import pytest

from nightwatch.domain.errors import (
    ConflictError,
    InvalidInputError,
    InvalidNameError,
    NotFoundError,
    StorageError,
)
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.memory.ports import FolderMove
from nightwatch.domain.models import Persona, Skill, Soul, Style
from nightwatch.domain.personas.service import PersonaDraft, PersonaOutcome, PersonaService
from tests.fakes import T0, FakeClock, InMemoryMemoryStore, InMemoryPendingLessons, InMemoryPersonaRepository

LESSON = "# Maya · night-watch\n\n## 2026-11-20 · pr_review\n- Webhook signatures need constant-time compares.\n"


class Env:
    def __init__(self, repo: InMemoryPersonaRepository | None = None) -> None:
        self.repo = repo or InMemoryPersonaRepository()
        self.store = InMemoryMemoryStore()
        self.clock = FakeClock()
        self.pending = InMemoryPendingLessons()
        self.service = PersonaService(repo=self.repo, store=self.store, clock=self.clock, pending=self.pending)

    def create(self, name: str, role: str = "Reviewer", **fields: object) -> Persona:
        outcome = self.service.create(PersonaDraft(name=name, role=role, **fields))  # type: ignore[arg-type]
        assert outcome.persona is not None
        return outcome.persona

    def remember(self, slug: str, project: str = "night-watch", text: str = LESSON) -> None:
        self.store.update(slug, project, lambda _old: text)


@pytest.fixture
def env() -> Env:
    return Env()


# --- create / get / list ---------------------------------------------------------------------------------------------


def test_create_derives_the_slug_and_stamps_times(env: Env) -> None:
    outcome = env.service.create(PersonaDraft(name="  Maya   Sec ", role="  Security   Reviewer "))
    persona = outcome.persona
    assert persona is not None
    assert (persona.name, persona.slug, persona.role) == ("Maya Sec", "maya-sec", "Security Reviewer")
    assert persona.id is not None
    assert persona.created_at == persona.updated_at == T0
    assert "agents/maya-sec/" in outcome.message
    assert env.repo.find("maya sec") == persona


def test_create_applies_every_draft_field(env: Env) -> None:
    soul = Soul(who_i_am="I guard the gates.", worldview=("Trust nothing.",))
    style = Style(tone="calm", good_examples=("Blocking: IDOR on /invoices.",))
    skill = Skill(modes={"pr_review": "Check auth."}, additional_instructions=("Never echo secrets.",))
    persona = env.create(
        "Vera",
        role="Auditor",
        avatar=":lock:",
        soul=soul,
        style=style,
        skill=skill,
        model="claude-haiku-4-5",
        system_prompt_override="You are Vera.",
        active=False,
    )
    assert (persona.soul, persona.style, persona.skill) == (soul, style, skill)
    assert (persona.avatar, persona.model, persona.system_prompt_override, persona.active) == (
        ":lock:",
        "claude-haiku-4-5",
        "You are Vera.",
        False,
    )


@pytest.mark.parametrize("role", [None, "", "   ", "x" * 201])
def test_create_refuses_a_missing_or_overlong_role(env: Env, role: str | None) -> None:
    with pytest.raises(InvalidInputError, match="role"):
        env.service.create(PersonaDraft(name="Maya", role=role))
    assert env.repo.list() == []


def test_create_refuses_a_missing_name(env: Env) -> None:
    with pytest.raises(InvalidNameError, match="needs a name"):
        env.service.create(PersonaDraft(role="Reviewer"))
    assert env.repo.list() == []


HOSTILE_NAMES = [
    "../../etc",
    "..",
    "/abs/path",
    "Maya\x00",
    "x" * 10_000,
    "М\u0430ya",  # Cyrillic capital Em and small a: looks like "Maya"
    "",
    "   ",
    "Maya\nSec",
    "maya/../dev",
    "---",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=repr)
def test_hostile_names_are_refused_and_nothing_is_created(env: Env, name: str) -> None:
    env.remember("maya")
    with pytest.raises(InvalidNameError) as caught:
        env.service.create(PersonaDraft(name=name, role="Reviewer"))
    assert "\x00" not in str(caught.value)
    assert len(str(caught.value)) < 300
    assert env.repo.list() == []
    assert list(env.store.files) == [("maya", "night-watch")]


@pytest.mark.parametrize("name", ["../../etc", "Maya\x00", "x" * 10_000, "М\u0430ya"], ids=repr)
def test_hostile_rename_targets_are_refused_and_nothing_moves(env: Env, name: str) -> None:
    env.create("Maya")
    env.remember("maya")
    with pytest.raises(InvalidNameError):
        env.service.rename("Maya", name)
    assert env.service.get("maya").name == "Maya"
    assert list(env.store.files) == [("maya", "night-watch")]


@pytest.mark.parametrize("taken", ["maya", "MAYA", " Maya "])
def test_duplicate_names_ignoring_case_conflict(env: Env, taken: str) -> None:
    env.create("Maya")
    with pytest.raises(ConflictError, match="already exists"):
        env.service.create(PersonaDraft(name=taken, role="Other"))
    assert [p.name for p in env.repo.list()] == ["Maya"]


@pytest.mark.parametrize("clash", ["Maya_Sec", "maya-sec", "Maya  -  Sec"])
def test_names_with_the_same_slug_conflict(env: Env, clash: str) -> None:
    env.create("Maya Sec")
    with pytest.raises(ConflictError, match=r"agents/maya-sec/"):
        env.service.create(PersonaDraft(name=clash, role="Other"))
    assert [p.name for p in env.repo.list()] == ["Maya Sec"]


@pytest.mark.parametrize(
    "avatar", ["🔒", "🏗️", "👩🏽‍💻", "🇳🇱", ":lock:", ":+1:", "https://example.com/maya.png", "", None]
)
def test_good_avatars_are_accepted(env: Env, avatar: str | None) -> None:
    assert env.create("Maya", avatar=avatar).avatar == (avatar or "")


@pytest.mark.parametrize(
    "avatar",
    [
        "hello",
        "Maya 🔒",
        "javascript:alert(1)",
        "ftp://example.com/a.png",
        "https://",
        "https://exa mple.com/a.png",
        "<img src=x>",
        ":Not A Code:",
        "https://example.com/" + "a" * 600,
    ],
)
def test_bad_avatars_are_refused(env: Env, avatar: str) -> None:
    with pytest.raises(InvalidInputError, match="avatar"):
        env.service.create(PersonaDraft(name="Maya", role="Reviewer", avatar=avatar))
    assert env.repo.list() == []


@pytest.mark.parametrize("model", ["two words", "x" * 101])
def test_bad_model_overrides_are_refused(env: Env, model: str) -> None:
    with pytest.raises(InvalidInputError, match="model override"):
        env.service.create(PersonaDraft(name="Maya", role="Reviewer", model=model))


def test_get_matches_name_ignoring_case_or_slug(env: Env) -> None:
    maya = env.create("Maya Sec")
    assert env.service.get("MAYA SEC") == maya
    assert env.service.get("maya-sec") == maya
    assert env.service.get("  maya sec ") == maya
    assert env.service.get_by_id(maya.id or 0) == maya


@pytest.mark.parametrize("query", ["Carla", "", "../../etc", "x\x00" * 5000])
def test_get_unknown_lists_the_known_names(env: Env, query: str) -> None:
    env.create("Maya")
    env.create("Carlos")
    with pytest.raises(NotFoundError) as caught:
        env.service.get(query)
    message = str(caught.value)
    assert "Known personas: Carlos, Maya." in message
    assert "\x00" not in message
    assert len(message) < 300


class LookupRecordingRepository(InMemoryPersonaRepository):
    """The in-memory repository, noting every key it is asked to find."""

    def __init__(self) -> None:
        super().__init__()
        self.looked_up: list[str] = []

    def find(self, name_or_slug: str) -> Persona | None:
        self.looked_up.append(name_or_slug)
        return super().find(name_or_slug)


@pytest.mark.parametrize("query", ["a\x00b", "\udcff", "x" * 41, "../../etc", "🔒"])
def test_get_never_looks_up_text_no_persona_could_be_named(query: str) -> None:
    env = Env(LookupRecordingRepository())
    env.create("Maya")
    assert isinstance(env.repo, LookupRecordingRepository)
    env.repo.looked_up.clear()
    with pytest.raises(NotFoundError, match="Known personas: Maya"):
        env.service.get(query)
    assert env.repo.looked_up == []
    assert env.service.get("maya").name == "Maya"
    assert env.repo.looked_up == ["maya"]


def test_get_by_unknown_id(env: Env) -> None:
    with pytest.raises(NotFoundError, match="id 42"):
        env.service.get_by_id(42)


def test_list_can_leave_out_inactive_personas(env: Env) -> None:
    env.create("Maya")
    env.create("Ghost", active=False)
    assert [p.name for p in env.service.list()] == ["Maya", "Ghost"]
    assert [p.name for p in env.service.list(include_inactive=False)] == ["Maya"]


# --- update / rename -------------------------------------------------------------------------------------------------


def test_update_changes_fields_and_keeps_the_folder(env: Env) -> None:
    env.create("Maya")
    env.remember("maya")
    env.clock.advance(minutes=5)
    outcome = env.service.update("maya", PersonaDraft(role="AppSec Lead", avatar="🛡️"))
    assert outcome.persona is not None
    assert (outcome.persona.role, outcome.persona.avatar) == ("AppSec Lead", "🛡️")
    assert outcome.persona.updated_at == env.clock.now()
    assert outcome.persona.created_at == T0
    assert outcome.move is None
    assert outcome.message == "Updated Maya: role, avatar."
    assert env.store.read("maya", "night-watch") == LESSON


def test_update_with_nothing_new_changes_nothing(env: Env) -> None:
    maya = env.create("Maya", role="Reviewer")
    env.clock.advance(minutes=5)
    outcome = env.service.update("Maya", PersonaDraft(name="Maya", role="Reviewer"))
    assert outcome.persona == maya
    assert outcome.message == "Nothing to change for Maya."


def test_update_refuses_a_bad_field_and_changes_nothing(env: Env) -> None:
    maya = env.create("Maya")
    with pytest.raises(InvalidInputError, match="avatar"):
        env.service.update("Maya", PersonaDraft(role="New Role", avatar="not an avatar"))
    assert env.service.get("Maya") == maya


def test_update_with_a_new_name_is_a_rename(env: Env) -> None:
    env.create("Maya")
    env.remember("maya")
    outcome = env.service.update("Maya", PersonaDraft(name="Maya Sec", role="AppSec"))
    assert outcome.persona is not None
    assert (outcome.persona.slug, outcome.persona.role) == ("maya-sec", "AppSec")
    assert env.store.read("maya-sec", "night-watch") == LESSON
    assert "also updated role" in outcome.message


def test_rename_migrates_memory(env: Env) -> None:
    maya = env.create("Maya")
    env.remember("maya", "night-watch")
    env.remember("maya", "billing", "# other\n")
    outcome = env.service.rename("Maya", "Maya Sec")
    assert outcome.persona is not None
    assert (outcome.persona.id, outcome.persona.name, outcome.persona.slug) == (maya.id, "Maya Sec", "maya-sec")
    assert env.store.projects("maya") == []
    assert env.store.projects("maya-sec") == ["billing", "night-watch"]
    assert env.store.read("maya-sec", "night-watch") == LESSON
    assert outcome.move == FolderMove(True, PurePosixPath("agents/maya"), PurePosixPath("agents/maya-sec"))
    assert outcome.message == "Renamed Maya to Maya Sec; memory moved to agents/maya-sec/."
    with pytest.raises(NotFoundError):
        env.service.get("Maya")


def test_rename_without_memory_moves_nothing(env: Env) -> None:
    env.create("Maya")
    outcome = env.service.rename("maya", "Mia")
    assert outcome.persona is not None
    assert outcome.persona.slug == "mia"
    assert outcome.move == FolderMove(moved=False)
    assert "no memory yet" in outcome.message


def test_rename_changing_only_case_needs_no_folder_move(env: Env) -> None:
    env.create("maya")
    env.remember("maya")
    outcome = env.service.rename("maya", "MAYA")
    assert outcome.persona is not None
    assert (outcome.persona.name, outcome.persona.slug) == ("MAYA", "maya")
    assert outcome.move is None
    assert env.store.read("maya", "night-watch") == LESSON
    assert outcome.message == "Renamed maya to MAYA; its memory stays in agents/maya/."


def test_rename_collision_keeps_the_stray_folder(env: Env) -> None:
    env.create("Maya")
    env.remember("maya", text="mine\n")
    env.remember("maya-sec", text="stray\n")  # a folder with no persona, e.g. restored by hand
    outcome = env.service.rename("Maya", "Maya Sec")
    assert env.store.read("maya-sec", "night-watch") == "mine\n"
    assert env.store.archived == {"maya-sec-20261121T090000Z": {"night-watch": "stray\n"}}
    assert outcome.move is not None
    assert outcome.move.set_aside == PurePosixPath("agents/.archived/maya-sec-20261121T090000Z")
    assert outcome.message == (
        "Renamed Maya to Maya Sec; memory moved to agents/maya-sec/; "
        "a stray folder that was there is kept at agents/.archived/maya-sec-20261121T090000Z/."
    )


def test_rename_onto_another_persona_conflicts_and_moves_nothing(env: Env) -> None:
    env.create("Maya")
    env.create("Carlos")
    env.remember("maya", text="maya's\n")
    env.remember("carlos", text="carlos's\n")
    with pytest.raises(ConflictError, match="Carlos already exists"):
        env.service.rename("Maya", "carlos")
    with pytest.raises(ConflictError, match="agents/carlos/"):
        env.service.rename("Maya", "Carlos_")
    assert env.store.read("maya", "night-watch") == "maya's\n"
    assert env.store.read("carlos", "night-watch") == "carlos's\n"
    assert [p.name for p in env.service.list()] == ["Maya", "Carlos"]


def test_rename_unknown_persona(env: Env) -> None:
    with pytest.raises(NotFoundError):
        env.service.rename("Nobody", "Somebody")


# --- delete ----------------------------------------------------------------------------------------------------------


def test_delete_archives_memory(env: Env) -> None:
    env.create("Maya")
    env.remember("maya")
    outcome = env.service.delete("MAYA")
    assert outcome.persona is None
    assert env.repo.list() == []
    assert env.store.projects("maya") == []
    assert env.store.archived == {"maya-20261121T090000Z": {"night-watch": LESSON}}
    assert outcome.message == "Deleted Maya; its memory was archived to agents/.archived/maya-20261121T090000Z/."


def test_delete_without_memory(env: Env) -> None:
    env.create("Maya")
    outcome = env.service.delete("maya")
    assert outcome.message == "Deleted Maya; it had no memory to archive."
    assert env.repo.list() == []


def test_a_new_persona_with_the_old_name_starts_with_empty_memory(env: Env) -> None:
    env.create("Maya")
    env.remember("maya")
    env.service.delete("Maya")
    outcome = env.service.create(PersonaDraft(name="Maya", role="Reviewer"))
    assert env.store.read("maya", "night-watch") == ""
    assert "found memory" not in outcome.message


def test_create_tells_when_it_adopts_memory_already_on_disk(env: Env) -> None:
    env.remember("vera", "billing")
    outcome = env.service.create(PersonaDraft(name="Vera", role="Auditor"))
    assert "found memory already in agents/vera/ for billing" in outcome.message


def test_rename_tells_when_it_adopts_memory_already_on_disk(env: Env) -> None:
    env.create("Vera")
    env.remember("vera-b", "billing")
    outcome = env.service.rename("Vera", "Vera B")
    assert outcome.message.endswith("It found memory already in agents/vera-b/ for billing and uses it.")
    assert env.store.read("vera-b", "billing") == LESSON


# --- consistency when a step fails -----------------------------------------------------------------------------------


class FailingRepository(InMemoryPersonaRepository):
    """Stores personas, but refuses save/remove with the given error once armed."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error
        self.armed = False

    def save(self, persona: Persona) -> Persona:
        if self.armed:
            raise self.error
        return super().save(persona)

    def remove(self, persona_id: int) -> None:
        if self.armed:
            raise self.error
        super().remove(persona_id)


class FailingStore(InMemoryMemoryStore):
    def __init__(self, error: Exception, *, fail_restore: bool = False) -> None:
        super().__init__()
        self.error = error
        self.fail_restore = fail_restore
        self.fail_moves = False

    def migrate(self, old_slug: str, new_slug: str, now: datetime) -> FolderMove:
        if self.fail_moves:
            raise self.error
        return super().migrate(old_slug, new_slug, now)

    def archive(self, slug: str, now: datetime) -> FolderMove:
        if self.fail_moves:
            raise self.error
        return super().archive(slug, now)

    def restore(self, move: FolderMove) -> None:
        if self.fail_restore:
            raise self.error
        super().restore(move)


def failing_env(error: Exception) -> tuple[Env, FailingRepository]:
    repo = FailingRepository(error)
    env = Env(repo)
    env.create("Maya")
    env.remember("maya")
    repo.armed = True
    return env, repo


def test_failed_database_rename_puts_the_folder_back() -> None:
    env, _ = failing_env(RuntimeError("disk I/O error"))
    with pytest.raises(StorageError) as caught:
        env.service.rename("Maya", "Maya Sec")
    assert "Nothing was changed" in str(caught.value)
    assert "disk I/O error" in str(caught.value)
    assert env.store.read("maya", "night-watch") == LESSON
    assert env.store.projects("maya-sec") == []
    assert env.service.get("maya").name == "Maya"


def test_failed_database_rename_restores_the_stray_too() -> None:
    env, _ = failing_env(StorageError("The database is locked."))
    env.remember("maya-sec", text="stray\n")
    with pytest.raises(StorageError, match="Nothing was changed"):
        env.service.rename("Maya", "Maya Sec")
    assert env.store.read("maya", "night-watch") == LESSON
    assert env.store.read("maya-sec", "night-watch") == "stray\n"
    assert env.store.archived == {}


def test_a_conflict_found_only_by_the_database_keeps_its_type() -> None:
    env, _ = failing_env(ConflictError("A persona with that name was just created."))
    with pytest.raises(ConflictError, match="Nothing was changed"):
        env.service.rename("Maya", "Maya Sec")
    assert env.store.read("maya", "night-watch") == LESSON


def keep_for_retry(env: Env, slug: str, *texts: str) -> None:
    kept = [
        PendingLesson(slug, "night-watch", text, "deliberation", date(2026, 11, 20), None, "disk full", T0)
        for text in texts
    ]
    env.pending.keep(kept)


def test_rename_moves_the_lessons_kept_for_a_retry(env: Env) -> None:
    env.create("Maya")
    env.create("Dev")
    keep_for_retry(env, "maya", "Webhook signatures need constant-time compares.")
    keep_for_retry(env, "dev", "Profile before optimising.")
    env.service.rename("Maya", "Maya Sec")
    assert [(row.persona, row.text) for row in env.pending.rows] == [
        ("maya-sec", "Webhook signatures need constant-time compares."),
        ("dev", "Profile before optimising."),
    ]


def test_delete_drops_the_kept_lessons_and_says_how_many(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    env.create("Maya")
    env.create("Dev")
    keep_for_retry(env, "maya", "Webhook signatures need constant-time compares.", "Rotate keys quarterly.")
    keep_for_retry(env, "dev", "Profile before optimising.")
    outcome = env.service.delete("Maya")
    assert "2 lessons waiting to be saved went with it" in outcome.message
    assert [row.persona for row in env.pending.rows] == ["dev"]
    assert "Rotate keys quarterly." in caplog.text  # the log still has them
    assert "1 lesson waiting to be saved went with it" in env.service.delete("Dev").message
    env.create("Priya")
    assert "waiting" not in env.service.delete("Priya").message


def test_failed_database_rename_leaves_the_kept_lessons_with_the_old_name() -> None:
    env, _ = failing_env(RuntimeError("disk I/O error"))
    keep_for_retry(env, "maya", "Webhook signatures need constant-time compares.")
    with pytest.raises(StorageError, match="Nothing was changed"):
        env.service.rename("Maya", "Maya Sec")
    assert [row.persona for row in env.pending.rows] == ["maya"]


def test_failed_database_delete_puts_the_folder_back() -> None:
    env, _ = failing_env(RuntimeError("connection reset"))
    with pytest.raises(StorageError) as caught:
        env.service.delete("Maya")
    assert "Could not delete Maya" in str(caught.value)
    assert "Nothing was changed" in str(caught.value)
    assert env.store.read("maya", "night-watch") == LESSON
    assert env.store.archived == {}
    assert env.service.get("maya").name == "Maya"


@pytest.mark.parametrize("error", [StorageError("permission denied"), PermissionError(13, "Permission denied")])
@pytest.mark.parametrize("action", ["rename", "delete"])
def test_failed_folder_step_leaves_the_database_untouched(error: Exception, action: str) -> None:
    store = FailingStore(error)
    env = Env()
    env.store = store
    env.service = PersonaService(repo=env.repo, store=store, clock=env.clock)
    maya = env.create("Maya")
    env.remember("maya")
    store.fail_moves = True
    steps: dict[str, Callable[[], PersonaOutcome]] = {
        "rename": lambda: env.service.rename("Maya", "Maya Sec"),
        "delete": lambda: env.service.delete("Maya"),
    }
    step = steps[action]
    with pytest.raises(StorageError) as caught:
        step()
    assert "Nothing was changed" in str(caught.value)
    assert "memory folder agents/maya/" in str(caught.value)
    assert env.repo.list() == [maya]
    assert env.store.read("maya", "night-watch") == LESSON


def test_when_putting_the_folder_back_fails_too_the_user_is_told_where_it_is() -> None:
    repo = FailingRepository(RuntimeError("database gone"))
    store = FailingStore(OSError("read-only file system"), fail_restore=True)
    env = Env(repo)
    env.store = store
    env.service = PersonaService(repo=repo, store=store, clock=env.clock)
    env.create("Maya")
    env.remember("maya")
    repo.armed = True
    with pytest.raises(StorageError) as caught:
        env.service.rename("Maya", "Maya Sec")
    message = str(caught.value)
    assert "move agents/maya-sec/ back to agents/maya/ by hand" in message
    assert "database gone" in message
