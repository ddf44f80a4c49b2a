"""Curation by category: events and cases always create, profile and preferences update their entry, the rest follow
the meaning-based rule; the rules win over a model's advice where they apply. Lessons here are compared by words
(no vectors); tests/adapters/test_category_curation.py runs the same rules by meaning with the real encoder.
"""

from __future__ import annotations

import json

import pytest

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.models import Category, Persona
from nightwatch.domain.recall import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

DEV = Persona(name="Dev", slug="dev", role="Implementer")


def service(llm: ScriptedLLM | None = None, *, model: bool = False) -> tuple[MemoryService, InMemoryMemoryStore]:
    store = InMemoryMemoryStore()
    policy = MemoryPolicy(use_model_for_curation=model)
    memory = MemoryService(store=store, llm=llm or ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy)
    return memory, store


def live(memory: MemoryService) -> list[tuple[str, Category | None, int]]:
    return [(lesson.text, lesson.category, lesson.seen) for lesson in memory.lessons(DEV, "p")]


@pytest.mark.parametrize("category", ["events", "cases"])
def test_events_and_cases_are_created_even_when_the_rule_would_merge_or_supersede(category: Category) -> None:
    memory, _ = service()
    memory.remember(DEV, "p", "Retry flaky tests 3 times.", category=category)
    memory.remember(DEV, "p", "Retry flaky tests 3 times, always.", category=category)  # a restatement by words
    memory.remember(DEV, "p", "Retry flaky tests 5 times now.", category=category)  # an update by words
    assert live(memory) == [
        ("Retry flaky tests 3 times.", category, 1),
        ("Retry flaky tests 3 times, always.", category, 1),
        ("Retry flaky tests 5 times now.", category, 1),
    ]
    assert memory.history(DEV, "p") == []


def test_the_same_words_merge_even_for_an_event_since_two_lessons_cannot_share_an_id() -> None:
    memory, _ = service()
    memory.remember(DEV, "p", "The 2026-03-02 deploy was rolled back.", category="events")
    memory.remember(DEV, "p", "the 2026-03-02 deploy was rolled back", category="events", overview="The canary.")
    [lesson] = memory.lessons(DEV, "p")
    assert (lesson.seen, lesson.overview) == (2, "The canary.")  # the kept one gains the overview it lacked


def test_without_a_category_the_same_lessons_follow_the_meaning_rule() -> None:
    memory, _ = service()
    memory.remember(DEV, "p", "Retry flaky tests 3 times.")
    memory.remember(DEV, "p", "Retry flaky tests 3 times, always.")
    memory.remember(DEV, "p", "Retry flaky tests 5 times now.")
    assert live(memory) == [("Retry flaky tests 5 times now.", None, 1)]
    assert [lesson.text for lesson in memory.history(DEV, "p")] == ["Retry flaky tests 3 times."]


@pytest.mark.parametrize("category", ["entities", "patterns"])
def test_entities_and_patterns_follow_the_meaning_rule(category: Category) -> None:
    memory, _ = service()
    memory.remember(DEV, "p", "Retry flaky tests 3 times.", category=category)
    memory.remember(DEV, "p", "Retry flaky tests 3 times, always.", category=category)
    memory.remember(DEV, "p", "Retry flaky tests 5 times now.", category=category)
    assert live(memory) == [("Retry flaky tests 5 times now.", category, 1)]


@pytest.mark.parametrize("category", ["profile", "preferences"])
def test_profile_and_preferences_update_their_entry(category: Category) -> None:
    memory, _ = service()
    first = memory.remember(DEV, "p", "Squash commits when merging feature branches.", category=category)
    memory.remember(DEV, "p", "Squash commits when merging feature branches!", category=category)  # restated
    newer = memory.remember(
        DEV, "p", "Rebase commits when merging feature branches.", category=category, overview="Since the Q3 retro."
    )
    assert live(memory) == [("Rebase commits when merging feature branches.", category, 3)]  # the entry's count
    [old] = memory.history(DEV, "p")
    assert (old.id, old.superseded_by, old.category) == (first.id, newer.id, category)
    assert newer.overview == "Since the Q3 retro."


def test_an_updated_entry_keeps_its_pin() -> None:
    memory, store = service()
    memory.remember(DEV, "p", "Squash commits when merging feature branches.", category="preferences")
    store.update("dev", "p", lambda text: text.replace("- Squash", "- 📌 Squash"))
    memory.remember(DEV, "p", "Rebase commits when merging feature branches.", category="preferences")
    [lesson] = memory.lessons(DEV, "p")
    assert lesson.pinned


def test_a_preference_on_another_subject_is_its_own_entry() -> None:
    memory, _ = service()
    memory.remember(DEV, "p", "Squash commits when merging feature branches.", category="preferences")
    memory.remember(DEV, "p", "Name test files after the module they cover.", category="preferences")
    assert len(memory.lessons(DEV, "p")) == 2


def test_a_preference_never_updates_an_entry_of_another_category() -> None:
    memory, _ = service()
    memory.remember(DEV, "p", "Squash commits when merging feature branches.", category="patterns")
    memory.remember(DEV, "p", "Rebase commits when merging feature branches.", category="preferences")
    assert [text for text, _, _ in live(memory)] == [
        "Squash commits when merging feature branches.",
        "Rebase commits when merging feature branches.",
    ]


@pytest.mark.parametrize(
    ("category", "advice", "expected"),
    [
        ("events", "merge", 2),  # the model says it restates: events always create
        ("cases", "supersede", 2),
        ("preferences", "create", 1),  # an entry of its own category is close: it updates, whatever the advice
    ],
)
def test_the_category_rule_overrides_the_models_advice_and_the_model_is_not_asked(
    category: Category, advice: str, expected: int
) -> None:
    llm = ScriptedLLM({Purpose.CURATION: ""})
    memory, _ = service(llm, model=True)
    first = memory.remember(DEV, "p", "Squash commits when merging feature branches.", category=category)
    llm.default[Purpose.CURATION] = json.dumps({"action": advice, "target": first.id})
    memory.remember(DEV, "p", "Rebase commits when merging feature branches.", category=category)
    assert len(memory.lessons(DEV, "p")) == expected
    assert llm.calls(Purpose.CURATION) == []


def test_the_model_still_advises_on_a_lesson_the_category_does_not_settle() -> None:
    llm = ScriptedLLM({Purpose.CURATION: ""})
    memory, _ = service(llm, model=True)
    first = memory.remember(DEV, "p", "Squash commits when merging feature branches.", category="entities")
    llm.default[Purpose.CURATION] = json.dumps({"action": "supersede", "target": first.id})
    memory.remember(DEV, "p", "Feature branches now get their commits squashed by the bot.", category="entities")
    [prompt] = llm.calls(Purpose.CURATION)
    assert "(category: entities)" in prompt.system.text
    assert f"[{first.id}] (entities) Squash commits" in prompt.system.text
    assert [text for text, _, _ in live(memory)] == ["Feature branches now get their commits squashed by the bot."]


def test_remember_refuses_a_category_that_is_none_and_an_overview_too_long() -> None:
    memory, store = service()
    with pytest.raises(InvalidInputError, match="profile, preferences, entities, events, cases, patterns"):
        memory.remember(DEV, "p", "A lesson worth keeping.", category="incident")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="at most 600"):
        memory.remember(DEV, "p", "A lesson worth keeping.", overview="x " * 400)
    assert store.read("dev", "p") == ""


def test_remember_writes_the_category_and_a_clean_overview() -> None:
    memory, store = service()
    lesson = memory.remember(DEV, "p", "Staging is wiped on Mondays.", category="entities", overview=" Since\nMay. ")
    assert (lesson.category, lesson.overview) == ("entities", "Since May.")
    assert "- Staging is wiped on Mondays. <!-- cat:entities -->\n  > Since May.\n" in store.read("dev", "p")
