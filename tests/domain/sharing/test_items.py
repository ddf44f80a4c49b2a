"""Sharing one item with fakes: one lesson or one pin in the teammate's shared block, gone once it is gone."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from nightwatch.domain.errors import InvalidInputError, InvalidNameError, NotFoundError, StorageError
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.pins import PinService
from nightwatch.domain.pins.models import PinKind
from nightwatch.domain.recall import Recall
from nightwatch.domain.sharing import Item, ItemKind, SharedItem, SharingService
from tests.fakes import (
    FakeClock,
    FakePinFiles,
    FakePinPages,
    InMemoryItemShareRepository,
    InMemoryMemoryStore,
    InMemoryPendingLessons,
    InMemoryPersonaRepository,
    InMemoryPinRepository,
    InMemoryShareRepository,
    ScriptedLLM,
)

PROJECT = "night-watch"
TOPIC = "Is the admin console safe to expose?"
COOKIE = "The session cookie lacks the SameSite attribute on the admin console."
TOKENS = "Admin API tokens expire after one hour and are never refreshed silently."
NEWER = "The session cookie now sets SameSite=Strict on every console page."
THREAT = "/srv/docs/threat-model.md"
RUNBOOK = "/srv/docs/runbook.md"
TEAM = (
    Persona(name="Maya", slug="maya", role="Security Reviewer"),
    Persona(name="Dev", slug="dev", role="Implementer"),
    Persona(name="Priya", slug="priya", role="QA Engineer"),
)


@dataclass
class World:
    personas: PersonaService
    items: InMemoryItemShareRepository
    pin_repo: InMemoryPinRepository
    files: FakePinFiles
    pins: PinService
    memory: MemoryService
    store: InMemoryMemoryStore
    sharing: SharingService
    clock: FakeClock

    def get(self, name: str) -> Persona:
        return self.personas.get(name)

    def lesson(self, text: str, persona: str = "Maya") -> str:
        return self.memory.remember(self.get(persona), PROJECT, text).id

    def pin(self, persona: str | None, path: str, text: str, project: str = PROJECT) -> str:
        self.files.write(path, text)
        pin = self.pins.add(persona, project, PinKind.FILE, path, added_by="cli").pin
        return str(pin.id)

    def dev_reads(self) -> list[tuple[str, str, str]]:
        block = self.sharing.read(self.get("Dev"), PROJECT, TOPIC)
        return [(item.source, item.kind, item.text) for item in block.items]

    def listed(self) -> list[tuple[str, str, str]]:
        return [(view.sharer.name, view.audience, view.shown) for view in self.sharing.shares()]


def world() -> World:
    repo, store, clock = InMemoryPersonaRepository(TEAM), InMemoryMemoryStore(), FakeClock()
    shares, items, pin_repo, files = (
        InMemoryShareRepository(repo),
        InMemoryItemShareRepository(repo),
        InMemoryPinRepository(repo),
        FakePinFiles(),
    )
    personas = PersonaService(
        repo=repo, store=store, clock=clock, pending=InMemoryPendingLessons(), shares=shares, pins=pin_repo
    )
    pins = PinService(pins=pin_repo, personas=personas, files=files, pages=FakePinPages(), clock=clock)
    memory = MemoryService(
        store=store, llm=ScriptedLLM(), clock=clock, recall=Recall(), policy=MemoryPolicy(use_model_for_curation=False)
    )
    sharing = SharingService(shares=shares, items=items, personas=personas, memory=memory, pins=pins, clock=clock)
    return World(personas, items, pin_repo, files, pins, memory, store, sharing, clock)


def lesson(lesson_id: str) -> Item:
    return Item(ItemKind.LESSON, lesson_id)


def pin(number: str) -> Item:
    return Item(ItemKind.PIN, number)


# --- one lesson -----------------------------------------------------------------------------------------------------


def test_one_shared_lesson_reaches_the_teammate_alone_and_attributed() -> None:
    w = world()
    cookie = w.lesson(COOKIE)
    w.lesson(TOKENS)
    outcome = w.sharing.share_item("maya", "Dev", PROJECT, lesson(cookie))
    assert outcome.message == f"Maya now shares lesson {cookie} on project night-watch with Dev: {COOKIE}"
    assert w.dev_reads() == [("Maya", SharedItem.LESSON, COOKIE)]  # her other lesson stays hers
    block = w.sharing.read(w.get("Dev"), PROJECT, TOPIC)
    assert block.text == f"- from Maya (Security Reviewer): {COOKIE}"
    assert w.sharing.read(w.get("Priya"), PROJECT, TOPIC).empty  # the share names Dev only
    assert w.sharing.read(w.get("Dev"), "other", TOPIC).empty  # and this project only
    assert w.listed() == [("Maya", "Dev", f"lesson {cookie}: {COOKIE}")]


def test_sharing_the_same_lesson_again_changes_nothing_and_all_reaches_everyone() -> None:
    w = world()
    cookie = w.lesson(COOKIE)
    w.sharing.share_item("Maya", "Dev", PROJECT, lesson(cookie))
    again = w.sharing.share_item("Maya", "dev", "Night Watch", lesson(cookie))
    assert again.message == f"Maya already shares lesson {cookie} on project night-watch with Dev; nothing changed."
    assert len(w.items.rows) == 1
    w.sharing.share_item("Maya", "all", PROJECT, lesson(cookie))
    assert [item.text for item in w.sharing.read(w.get("Priya"), PROJECT, TOPIC).items] == [COOKIE]
    assert [item.text for item in w.sharing.read(w.get("Dev"), PROJECT, TOPIC).items] == [COOKIE]  # once, not twice
    assert w.sharing.read(w.get("Maya"), PROJECT, TOPIC).empty  # her own lesson is in her own memory


def test_a_lesson_shared_alone_and_through_a_share_of_all_lessons_comes_once_and_first() -> None:
    w = world()
    w.lesson(TOKENS)
    cookie = w.lesson(COOKIE)
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share_item("Maya", "Dev", PROJECT, lesson(cookie))
    texts = [text for _, _, text in w.dev_reads()]
    assert texts[0] == COOKIE
    assert sorted(texts) == sorted([COOKIE, TOKENS])


def test_a_forgotten_lesson_is_no_longer_shown_and_the_share_says_it_is_gone() -> None:
    w = world()
    cookie = w.lesson(COOKIE)
    w.sharing.share_item("Maya", "Dev", PROJECT, lesson(cookie))
    w.memory.forget(w.get("Maya"), PROJECT, cookie)
    assert w.dev_reads() == []
    assert w.listed() == [("Maya", "Dev", f"lesson {cookie} (gone: forgotten)")]
    w.lesson(COOKIE)  # taught again: the same text is the same lesson, shown again
    assert w.dev_reads() == [("Maya", SharedItem.LESSON, COOKIE)]


def test_a_superseded_lesson_is_no_longer_shown_and_cannot_be_shared() -> None:
    w = world()
    cookie = w.lesson(COOKIE)
    w.sharing.share_item("Maya", "Dev", PROJECT, lesson(cookie))
    newer = w.lesson(NEWER)
    stale = f"- ~~{COOKIE}~~ <!-- superseded-by:{newer} on:2026-11-24 -->"
    w.store.files[("maya", PROJECT)] = f"## 2026-11-24 · note\n- {NEWER}\n\n## Superseded\n{stale}\n"
    assert w.dev_reads() == []
    assert w.listed() == [("Maya", "Dev", f"lesson {cookie} (gone: superseded)")]
    with pytest.raises(InvalidInputError, match=f"superseded by lesson {newer}; share that one instead"):
        w.sharing.share_item("Maya", "Priya", PROJECT, lesson(cookie))


# --- one pin --------------------------------------------------------------------------------------------------------


def test_one_shared_pin_reaches_the_teammate_on_its_own_project() -> None:
    w = world()
    threat = w.pin("Maya", THREAT, "The admin API is reachable only from the VPN.")
    w.pin("Maya", RUNBOOK, "Restart the queue before the database.")
    outcome = w.sharing.share_item("Maya", "Dev", None, pin(threat))
    assert outcome.message == f"Maya now shares pin #{threat} on project night-watch with Dev: file {THREAT}"
    [(source, kind, text)] = w.dev_reads()  # the runbook stays hers
    assert (source, kind) == ("Maya", SharedItem.PIN)
    assert text == f"[pin {threat} · file {THREAT}]\n  > The admin API is reachable only from the VPN."
    assert w.listed() == [("Maya", "Dev", f"pin #{threat}: file {THREAT}")]
    w.files.write(THREAT, "The admin API moved behind the SSO proxy.")  # read as her own next turn reads it
    assert w.dev_reads()[0][2].endswith("> The admin API moved behind the SSO proxy.")


def test_a_removed_pin_is_no_longer_shown_and_the_share_says_it_is_gone() -> None:
    w = world()
    threat = w.pin("Maya", THREAT, "The admin API is reachable only from the VPN.")
    w.sharing.share_item("Maya", "Dev", PROJECT, pin(threat))
    w.pins.remove(int(threat))
    assert w.dev_reads() == []
    assert w.listed() == [("Maya", "Dev", f"pin #{threat} (gone: unpinned)")]


def test_a_pin_made_after_the_share_under_a_reused_number_is_not_the_one_shared() -> None:
    w = world()
    threat = w.pin("Maya", THREAT, "The admin API is reachable only from the VPN.")
    w.sharing.share_item("Maya", "Dev", PROJECT, pin(threat))
    [(stored, key)] = w.pin_repo.rows.values()
    later = replace(
        stored, source=RUNBOOK, content="Restart the queue first.", created_at=w.clock.now() + timedelta(seconds=1)
    )
    w.pin_repo.rows[int(threat)] = (later, key)  # as a database may number the next pin after the last one removed
    assert w.dev_reads() == []
    assert w.listed() == [("Maya", "Dev", f"pin #{threat} (gone: unpinned)")]


def test_a_pin_is_shared_only_by_its_own_persona_and_on_its_own_project() -> None:
    w = world()
    threat = w.pin("Maya", THREAT, "The admin API is reachable only from the VPN.")
    everyone = w.pin(None, RUNBOOK, "Restart the queue before the database.")
    with pytest.raises(InvalidInputError, match=f"Pin #{threat} is Maya's, not Dev's"):
        w.sharing.share_item("Dev", "Priya", PROJECT, pin(threat))
    with pytest.raises(InvalidInputError, match="pinned for every persona of night-watch already"):
        w.sharing.share_item("Maya", "Dev", PROJECT, pin(everyone))
    with pytest.raises(InvalidInputError, match="is on project night-watch, not other"):
        w.sharing.share_item("Maya", "Dev", "other", pin(threat))
    assert w.items.rows == []


# --- refusals, unsharing --------------------------------------------------------------------------------------------


def test_unknown_items_oneself_and_unknown_personas_are_refused_and_nothing_is_stored() -> None:
    w = world()
    cookie = w.lesson(COOKIE)
    with pytest.raises(NotFoundError, match="Maya has no lesson deadbeef on project night-watch"):
        w.sharing.share_item("Maya", "Dev", PROJECT, lesson("deadbeef"))
    with pytest.raises(NotFoundError, match="There is no pin #7"):
        w.sharing.share_item("Maya", "Dev", None, pin("7"))
    with pytest.raises(InvalidInputError, match="Maya cannot share with itself"):
        w.sharing.share_item("Maya", "maya", PROJECT, lesson(cookie))
    with pytest.raises(NotFoundError, match="No persona is called 'Nobody'"):
        w.sharing.share_item("Nobody", "Dev", PROJECT, lesson(cookie))
    with pytest.raises(NotFoundError, match="No persona is called 'Nobody'"):
        w.sharing.share_item("Maya", "Nobody", PROJECT, lesson(cookie))
    with pytest.raises(InvalidNameError):
        w.sharing.share_item("Maya", "<script>", PROJECT, lesson(cookie))
    with pytest.raises(NotFoundError, match="Maya has no lesson"):  # a lesson is looked for on its own project
        w.sharing.share_item("Maya", "Dev", "other", lesson(cookie))
    assert w.items.rows == []


def test_unsharing_one_item_takes_it_away_and_leaves_the_others() -> None:
    w = world()
    cookie, tokens = w.lesson(COOKIE), w.lesson(TOKENS)
    threat = w.pin("Maya", THREAT, "The admin API is reachable only from the VPN.")
    for item in (lesson(cookie), lesson(tokens), pin(threat)):
        w.sharing.share_item("Maya", "Dev", PROJECT, item)
    outcome = w.sharing.unshare_item("Maya", "Dev", PROJECT, lesson(cookie))
    assert outcome.message == f"Maya no longer shares lesson {cookie} on project night-watch with Dev."
    gone = w.sharing.unshare_item("Maya", "Dev", None, pin(threat))  # a pin's share is found on its project
    assert gone.message == f"Maya no longer shares pin #{threat} on project night-watch with Dev."
    assert w.dev_reads() == [("Maya", SharedItem.LESSON, TOKENS)]
    with pytest.raises(NotFoundError, match=f"Maya does not share lesson {cookie} on project night-watch with Dev"):
        w.sharing.unshare_item("Maya", "Dev", PROJECT, lesson(cookie))
    with pytest.raises(NotFoundError, match=f"Maya does not share pin #{threat} with Dev"):
        w.sharing.unshare_item("Maya", "Dev", None, pin(threat))


def test_an_item_share_goes_with_a_deleted_persona_and_a_storage_fault_costs_only_its_lines() -> None:
    w = world()
    cookie = w.lesson(COOKIE)
    w.sharing.share_item("Maya", "Dev", PROJECT, lesson(cookie))
    w.items.broken = True
    assert w.dev_reads() == []  # the turn goes on without it
    with pytest.raises(StorageError):
        w.sharing.share_item("Maya", "Priya", PROJECT, lesson(cookie))
    w.items.broken = False
    w.personas.delete("Maya")
    assert w.items.list() == []
    assert w.listed() == []


def test_without_item_shares_kept_sharing_one_is_refused_and_reading_goes_on() -> None:
    w = world()
    cookie = w.lesson(COOKIE)
    bare = SharingService(
        shares=InMemoryShareRepository(InMemoryPersonaRepository(TEAM)),
        personas=w.personas,
        memory=w.memory,
        clock=w.clock,
    )
    with pytest.raises(StorageError, match="needs the database's item shares"):
        bare.share_item("Maya", "Dev", PROJECT, lesson(cookie))
    assert bare.read(w.get("Dev"), PROJECT, TOPIC).empty
