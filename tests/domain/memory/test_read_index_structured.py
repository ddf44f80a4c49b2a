"""The read index and structured lessons: a lesson built from the index has the category and overview parsing gives,
with the overview read from the text (so an overview edited by hand shows without a new index)."""

from __future__ import annotations

import random

import pytest

from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.derive import IndexedLessons, derive
from nightwatch.domain.memory.format import parse
from nightwatch.domain.memory.read_index import ReadIndex, text_digest
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import KeywordWeights, Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer")

TEXT = """# Priya · memory for p

- Undated lesson with an overview. <!-- cat:patterns -->
  > Written above every section.

## 2026-11-02 · deliberation · https://example.slack.com/archives/C1/p1
- 📌 Quarantine a flaky test within a day. <!-- cat:preferences seen:3 -->
  > The payments suite flaked for a week
  > before anyone quarantined it.
* Freezegun 1.5 fixed the login suite's clock skew. <!-- cat:cases by:U123ABC -->
  > 1.6 broke tz handling.
- A lesson without either.
- A bullet with a bad category <!-- cat:incident -->
  > this quote is no overview of a lesson
- Last lesson. <!-- cat:events -->
  > Its overview is the file's last line."""


def index_of(text: str, previous: ReadIndex | None = None) -> ReadIndex:
    return derive(text, text_digest(text), previous, KeywordWeights()).index


def indexed(text: str, index: ReadIndex) -> list:  # type: ignore[type-arg]
    return list(IndexedLessons(text, index, "Priya's memory of p", lambda: None))


@pytest.mark.parametrize("text", [TEXT, TEXT + "\n", TEXT.replace("\n", "\r\n")])
def test_lessons_built_from_the_index_have_the_category_and_overview_of_the_parse(text: str) -> None:
    parsed = parse(text).live()
    assert [(lesson.category, lesson.overview is not None) for lesson in parsed][:4] == [
        ("patterns", True),
        ("preferences", True),
        ("cases", True),
        (None, False),
    ]
    assert indexed(text, index_of(text)) == parsed
    assert list(derive(text, text_digest(text), None, KeywordWeights()).lessons.values()) == parsed


def test_an_overview_edited_by_hand_shows_through_an_index_derived_from_the_old_one() -> None:
    previous = index_of(TEXT)
    edited = TEXT.replace("  > 1.6 broke tz handling.", "  > 1.6 broke tz handling; 1.7 fixed it.")
    derived = derive(edited, text_digest(edited), previous, KeywordWeights())
    assert derived.lessons == {}  # every bullet line was known: nothing parsed
    assert indexed(edited, derived.index) == parse(edited).live()
    added = TEXT.replace("- A lesson without either.", "- A lesson without either.\n  > Now it has one.")
    assert indexed(added, index_of(added, previous)) == parse(added).live()


@pytest.mark.parametrize("seed", range(4))
def test_random_edits_of_overviews_keep_the_index_and_the_parse_in_step(seed: int) -> None:
    rng = random.Random(seed)
    previous = index_of(TEXT)
    lines = TEXT.split("\n")
    for _ in range(10):
        at = rng.randrange(len(lines))
        kind = rng.choice(("quote", "drop", "blank", "category"))
        if kind == "quote":
            lines.insert(at, f"  > Overview line {rng.randrange(100)}.")
        elif kind == "drop":
            del lines[at]
        elif kind == "blank":
            lines.insert(at, "")
        elif lines[at].startswith("- ") and "<!--" not in lines[at]:
            lines[at] += f" <!-- cat:{rng.choice(['events', 'cases', 'entities'])} -->"
        text = "\n".join(lines)
        previous = index_of(text, previous)
        assert indexed(text, previous) == parse(text).live()


def test_search_through_a_kept_index_shows_category_and_overview() -> None:
    store = InMemoryMemoryStore()
    store.files[("priya", "p")] = TEXT
    memory = MemoryService(store=store, llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=MemoryPolicy())
    memory.read(PRIYA, "p", "flaky tests")  # keeps the index
    again = MemoryService(store=store, llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=MemoryPolicy())
    [hit] = [hit.lesson for hit in again.search(PRIYA, "p", "quarantine flaky test")][:1]
    assert (hit.category, hit.overview) == (
        "preferences",
        "The payments suite flaked for a week before anyone quarantined it.",
    )
