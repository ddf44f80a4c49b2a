"""Sharing with fakes: share, unshare and list, the shared block a turn reads, renames and deletes."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from nightwatch.domain.errors import InvalidInputError, InvalidNameError, NotFoundError, StorageError
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaDraft, PersonaService
from nightwatch.domain.recall import Recall
from nightwatch.domain.sharing import EVERYONE, SharingService, validate_receiver, validate_share_content
from nightwatch.domain.sharing.models import ShareContent
from nightwatch.domain.tokens import estimate_tokens
from tests.adapters.memory_contract.memories import ManualBackfill, WordHashEmbedder
from tests.fakes import (
    FakeClock,
    InMemoryMemoryStore,
    InMemoryPendingLessons,
    InMemoryPersonaRepository,
    InMemoryPersonaTransactions,
    InMemoryShareRepository,
    ScriptedLLM,
)

PROJECT = "night-watch"
CVE = "Lodash 4.17.20 has a prototype pollution CVE; pin 4.17.21 in every service."
OTHER = "The staging database is wiped every Monday morning."
NOTES = (
    "Billing retries charge cards twice when the queue stalls.",
    "The search cluster keeps logs for only three days.",
    "Mobile builds sign with a key stored on one laptop.",
    "Admin console sessions never expire on their own.",
    "Nightly exports land in a world-readable bucket.",
    "The mail relay accepts mail from any internal host.",
    "Audit trail rows can be edited by support staff.",
    "The image proxy fetches any URL a user pastes.",
    "Webhook signatures are checked only in production.",
    "Feature flags are read from an unauthenticated endpoint.",
    "Metrics gateway passwords sit in the Helm chart.",
    "CI runners share one cache across forks.",
)
TEAM = (
    Persona(name="Maya", slug="maya", role="Security Reviewer"),
    Persona(name="Dev", slug="dev", role="Implementer"),
    Persona(name="Priya", slug="priya", role="QA Engineer"),
)


@dataclass
class World:
    repo: InMemoryPersonaRepository
    store: RefusingStore
    shares: InMemoryShareRepository
    personas: PersonaService
    memory: MemoryService
    sharing: SharingService
    backfill: ManualBackfill
    encoder: WordHashEmbedder

    def get(self, name: str) -> Persona:
        return self.personas.get(name)

    def remember(self, name: str, text: str, project: str = PROJECT) -> None:
        self.memory.remember(self.get(name), project, text)


class RefusingStore(InMemoryMemoryStore):
    """A memory store that refuses to read the memories of the personas in `refusing`, as a symlinked file is."""

    def __init__(self) -> None:
        super().__init__()
        self.refusing: set[str] = set()

    def read(self, persona_slug: str, project_slug: str) -> str:
        if persona_slug in self.refusing:
            raise StorageError(f"agents/{persona_slug}/memories/{project_slug}/main.md is a symbolic link; refused.")
        return super().read(persona_slug, project_slug)


def world(*, budget: int = 600, transactions: bool = False) -> World:
    repo = InMemoryPersonaRepository(TEAM)
    store, pending, clock = RefusingStore(), InMemoryPendingLessons(), FakeClock()
    shares = InMemoryShareRepository(repo)
    backfill, encoder = ManualBackfill(), WordHashEmbedder()
    memory = MemoryService(
        store=store,
        llm=ScriptedLLM(),
        clock=clock,
        recall=Recall(encoder=encoder),
        policy=MemoryPolicy(use_model_for_curation=False),
        backfill=backfill,
    )
    together = InMemoryPersonaTransactions(repo, store, pending, shares) if transactions else None
    personas = PersonaService(
        repo=repo, store=store, clock=clock, pending=pending, shares=shares, transactions=together
    )
    sharing = SharingService(shares=shares, personas=personas, memory=memory, clock=clock, token_budget=budget)
    return World(repo, store, shares, personas, memory, sharing, backfill, encoder)


# --- share, unshare, list -----------------------------------------------------------------------------------------


def test_sharing_says_what_is_shared_with_whom_and_again_changes_only_what() -> None:
    w = world()
    first = w.sharing.share("maya", "Dev", PROJECT)
    assert first.message == "Maya now shares lessons on project night-watch with Dev."
    again = w.sharing.share("Maya", "dev", "Night Watch")
    assert again.message == "Maya already shares lessons on project night-watch with Dev; nothing changed."
    wider = w.sharing.share("Maya", "Dev", PROJECT, "ALL")
    assert wider.message == (
        "Maya now shares lessons and pinned documents on project night-watch with Dev (before: lessons)."
    )
    assert [(s.sharer_id, s.receiver_id, s.project, s.what) for s in w.shares.rows] == [
        (w.get("maya").id, w.get("dev").id, PROJECT, ShareContent.ALL)
    ]


def test_sharing_with_all_is_one_share_that_names_no_persona() -> None:
    w = world()
    outcome = w.sharing.share("Maya", "All", PROJECT, ShareContent.PINS)
    assert outcome.message == (
        "Maya now shares pinned documents on project night-watch with every persona (ones created later too)."
    )
    assert [(s.receiver_id, s.what) for s in w.shares.rows] == [(None, ShareContent.PINS)]
    assert [view.audience for view in w.sharing.shares()] == [EVERYONE]


def test_sharing_with_oneself_is_refused_and_stores_nothing() -> None:
    w = world()
    with pytest.raises(InvalidInputError, match=r"Maya cannot share with itself.*Name another persona, or all"):
        w.sharing.share("Maya", "maya", PROJECT)
    assert w.shares.rows == []


@pytest.mark.parametrize(
    ("sharer", "receiver", "project", "what", "error", "message"),
    [
        ("Nobody", "Dev", PROJECT, "lessons", NotFoundError, "No persona is called 'Nobody'"),
        ("Maya", "Nobody", PROJECT, "lessons", NotFoundError, "No persona is called 'Nobody'"),
        ("Maya", "Dev", "../etc", "lessons", InvalidNameError, "project name"),
        ("Maya", "", PROJECT, "lessons", InvalidInputError, "Say whom to share with"),
        ("Maya", "Dev", PROJECT, "memories", InvalidInputError, "one of lessons, pins or all"),
        ("Ma/ya", "Dev", PROJECT, "lessons", InvalidNameError, "not allowed"),
    ],
)
def test_bad_shares_say_what_is_accepted(
    sharer: str, receiver: str, project: str, what: str, error: type[Exception], message: str
) -> None:
    w = world()
    with pytest.raises(error, match=message):
        w.sharing.share(sharer, receiver, project, what)
    assert w.shares.rows == []


def test_the_input_rules_on_their_own() -> None:
    assert validate_receiver(" ALL ") == EVERYONE
    assert validate_receiver(" Code  Reviewer ") == "Code Reviewer"
    assert validate_share_content(" Pins") is ShareContent.PINS
    assert validate_share_content(ShareContent.ALL) is ShareContent.ALL
    with pytest.raises(InvalidInputError, match=r"got '\\x00'"):
        validate_share_content("\x00")
    with pytest.raises(InvalidInputError):
        validate_share_content(None)


def test_unsharing_removes_the_share_and_an_absent_one_is_not_found() -> None:
    w = world()
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share("Maya", "Priya", PROJECT)
    outcome = w.sharing.unshare("maya", "DEV", PROJECT)
    assert outcome.message == "Maya no longer shares lessons on project night-watch with Dev."
    assert [view.audience for view in w.sharing.shares()] == ["Priya"]
    with pytest.raises(NotFoundError, match=r"Maya shares nothing on project night-watch with Dev.*List the shares"):
        w.sharing.unshare("Maya", "Dev", PROJECT)
    with pytest.raises(NotFoundError, match="Maya shares nothing on project other with Priya"):
        w.sharing.unshare("Maya", "Priya", "other")


def test_unsharing_with_one_persona_says_when_a_share_with_all_still_reaches_it() -> None:
    w = world()
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share("Maya", "all", PROJECT, "all")
    outcome = w.sharing.unshare("Maya", "Dev", PROJECT)
    assert outcome.message.endswith(
        "Dev still receives them through Maya's share with all (lessons and pinned documents)."
    )


def test_listing_by_project_and_by_persona_includes_shares_with_all() -> None:
    w = world()
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share("Priya", "all", PROJECT)
    w.sharing.share("Dev", "Maya", "other")
    every = [(v.sharer.name, v.audience, v.project) for v in w.sharing.shares()]
    assert every == [("Maya", "Dev", PROJECT), ("Priya", "all", PROJECT), ("Dev", "Maya", "other")]
    assert [(v.sharer.name, v.audience) for v in w.sharing.shares(project="Night Watch")] == [
        ("Maya", "Dev"),
        ("Priya", "all"),
    ]
    dev = [(v.sharer.name, v.audience, v.project) for v in w.sharing.shares(persona="dev")]
    assert dev == [("Maya", "Dev", PROJECT), ("Priya", "all", PROJECT), ("Dev", "Maya", "other")]
    priya = [(v.sharer.name, v.audience) for v in w.sharing.shares(persona="Priya", project=PROJECT)]
    assert priya == [("Priya", "all")]


# --- the shared block -----------------------------------------------------------------------------------------------


def test_a_shared_lesson_reaches_the_receiver_with_whose_it_is() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT)
    block = w.sharing.read(w.get("Dev"), PROJECT, "Which lodash version do we pin?")
    assert [(item.source, item.kind, item.text) for item in block.items] == [("Maya", "lesson", CVE)]
    assert block.text == f"- from Maya (Security Reviewer): {CVE}"
    assert block.tokens == estimate_tokens(block.text)
    assert (block.total_items, block.sources) == (1, ("Maya",))


def test_only_the_receiver_the_share_names_gets_it_and_all_reaches_personas_created_later() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT)
    assert w.sharing.read(w.get("Priya"), PROJECT, "lodash").empty
    assert w.sharing.read(w.get("Dev"), "other", "lodash").empty  # another project
    w.sharing.share("Maya", "all", PROJECT)
    ines = w.personas.create(PersonaDraft(name="Ines", role="Data engineer")).persona
    assert ines is not None
    assert [item.text for item in w.sharing.read(ines, PROJECT, "lodash").items] == [CVE]
    assert w.sharing.read(w.get("Maya"), PROJECT, "lodash").empty  # her own share with all is not read back


def test_a_persona_shared_with_twice_gets_each_lesson_once() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share("Maya", "all", PROJECT)
    assert [item.text for item in w.sharing.read(w.get("Dev"), PROJECT, "lodash").items] == [CVE]


def test_a_share_of_pins_only_brings_no_lessons() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT, "pins")
    assert w.sharing.read(w.get("Dev"), PROJECT, "lodash").empty


def test_a_read_may_bring_its_own_budget() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT)
    dev = w.get("Dev")
    assert w.sharing.read(dev, PROJECT, "lodash", budget=0).empty  # the deliberation's budget, taken when it began
    assert [item.text for item in w.sharing.read(dev, PROJECT, "lodash", budget=400).items] == [CVE]


def test_unsharing_takes_effect_on_the_next_read() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT)
    dev = w.get("Dev")
    assert not w.sharing.read(dev, PROJECT, "lodash").empty
    w.sharing.unshare("Maya", "Dev", PROJECT)
    assert w.sharing.read(dev, PROJECT, "lodash").empty
    assert w.shares.received_calls == 2  # asked afresh each time: nothing is cached between turns


def test_each_sharer_gives_its_best_in_turn_and_the_budget_holds() -> None:
    w = world(budget=80)  # room for the two best lines, not for a third
    for note in NOTES:
        w.remember("Maya", note)
    w.remember("Maya", CVE)
    w.remember("Priya", "The lodash upgrade needs the prototype pollution regression test first.")
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share("Priya", "Dev", PROJECT)
    block = w.sharing.read(w.get("Dev"), PROJECT, "lodash prototype pollution")
    assert block.tokens <= 80
    assert [item.source for item in block.items] == ["Maya", "Priya"]  # Maya's weaker notes wait their turn
    assert block.items[0].text == CVE
    assert block.total_items == len(w.memory.lessons(w.get("Maya"), PROJECT)) + 1 >= 10


def test_the_sharers_pinned_lessons_lead() -> None:
    w = world(budget=45)  # room for one of the two lines
    w.remember("Maya", CVE)
    w.remember("Maya", OTHER)
    w.sharing.share("Maya", "Dev", PROJECT)
    block = w.sharing.read(w.get("Dev"), PROJECT, "lodash prototype pollution")
    assert [item.text for item in block.items] == [CVE]  # the best match
    text = w.store.files[("maya", PROJECT)].replace(f"- {OTHER}", f"- 📌 {OTHER}")
    w.store.files[("maya", PROJECT)] = text
    block = w.sharing.read(w.get("Dev"), PROJECT, "lodash prototype pollution")
    assert [item.text for item in block.items] == [OTHER]


def test_reading_shared_lessons_never_writes_to_the_sharers_memory() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.store.files[("maya", PROJECT)] += f"- {OTHER}\n"  # typed in by hand: it has no vector yet
    before_text, before_vectors = w.store.files[("maya", PROJECT)], w.store.vectors.get(("maya", PROJECT))
    w.sharing.share("Maya", "Dev", PROJECT)
    embedded = len(w.encoder.embedded)
    for _ in range(3):
        assert len(w.sharing.read(w.get("Dev"), PROJECT, "lodash").items) == 2
    assert w.store.files[("maya", PROJECT)] == before_text
    assert w.store.vectors.get(("maya", PROJECT)) is before_vectors
    assert w.backfill.requested == []  # the hand-typed lesson is ranked on its words, not embedded from Dev's turn
    assert w.encoder.embedded[embedded:] == ["lodash"]  # only the topic, once
    w.memory.read(w.get("Maya"), PROJECT, "lodash")  # Maya's own read still asks for it
    assert w.backfill.requested == [("maya", PROJECT)]


def test_an_unreadable_sharer_costs_only_its_own_lines() -> None:
    w = world()
    w.remember("Maya", CVE)
    w.remember("Priya", OTHER)
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share("Priya", "Dev", PROJECT)
    w.store.refusing.add("maya")
    block = w.sharing.read(w.get("Dev"), PROJECT, "staging")
    assert [item.source for item in block.items] == ["Priya"]


def test_a_zero_budget_reads_nothing() -> None:
    w = world(budget=0)
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT)
    assert w.sharing.read(w.get("Dev"), PROJECT, "lodash").empty
    assert w.shares.received_calls == 0


# --- renames and deletes --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("transactions", [False, True], ids=["memory in files", "memory in the database"])
def test_a_rename_keeps_the_share_and_the_lines_carry_the_new_name(transactions: bool) -> None:
    w = world(transactions=transactions)
    w.remember("Maya", CVE)
    w.sharing.share("Maya", "Dev", PROJECT)
    w.personas.rename("Maya", "Maya Sec")
    w.personas.rename("Dev", "Devon")
    block = w.sharing.read(w.get("Devon"), PROJECT, "lodash")
    assert block.text == f"- from Maya Sec (Security Reviewer): {CVE}"
    assert [(v.sharer.name, v.audience) for v in w.sharing.shares()] == [("Maya Sec", "Devon")]


@pytest.mark.parametrize("transactions", [False, True], ids=["memory in files", "memory in the database"])
def test_a_delete_removes_the_shares_a_persona_gives_and_receives_and_says_so(transactions: bool) -> None:
    w = world(transactions=transactions)
    w.remember("Maya", CVE)
    w.remember("Priya", OTHER)
    w.sharing.share("Maya", "Dev", PROJECT)
    w.sharing.share("Maya", "all", "other")
    w.sharing.share("Priya", "Maya", PROJECT)
    w.sharing.share("Priya", "Dev", PROJECT)
    outcome = w.personas.delete("Maya")
    assert outcome.message.endswith("; the 3 shares it gave or received were removed.")
    assert [(v.sharer.name, v.audience) for v in w.sharing.shares()] == [("Priya", "Dev")]
    assert [item.source for item in w.sharing.read(w.get("Dev"), PROJECT, "lodash").items] == ["Priya"]
    one = w.personas.delete("Priya")
    assert one.message.endswith("; the one share it gave or received was removed.")
    assert "share" not in w.personas.delete("Dev").message


def test_a_delete_the_database_refuses_keeps_the_shares() -> None:
    w = world(transactions=True)
    w.sharing.share("Maya", "Dev", PROJECT)

    def refuse(persona_id: int) -> None:
        raise StorageError("The database could not delete the persona (OperationalError).")

    w.repo.remove = refuse  # type: ignore[method-assign]
    with pytest.raises(StorageError, match="Nothing was changed"):
        w.personas.delete("Maya")
    assert [(v.sharer.name, v.audience) for v in w.sharing.shares()] == [("Maya", "Dev")]


def test_a_persona_not_stored_yet_reads_nothing_shared() -> None:
    w = world()
    w.sharing.share("Maya", "all", PROJECT)
    w.remember("Maya", CVE)
    assert w.sharing.read(replace(w.get("Dev"), id=None), PROJECT, "lodash").empty
