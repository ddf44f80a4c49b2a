"""Lessons a person wrote carry who wrote them, through every rewrite; lessons a persona recorded carry no one."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import CLI_AUTHOR, MemoryPolicy, MemoryService
from nightwatch.domain.memory.answers import Candidate
from nightwatch.domain.memory.compaction import compacted
from nightwatch.domain.memory.document import unread_lines
from nightwatch.domain.memory.format import lesson_id, parse, render_lesson
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

DEV = Persona(name="Dev", slug="dev", role="Implementer")
KEY = ("dev", "p")
FILE = (
    "# Dev · memory for p\n\n"
    "## 2026-11-20 · manual\n"
    "- Staging data is wiped every Monday. <!-- by:U123ABC -->\n"
    "- Run the schema linter before every migration PR. <!-- by:cli seen:2 -->\n"
    "- Feature flags live in flags.yaml.\n"
)


def service(store: InMemoryMemoryStore | None = None, llm: ScriptedLLM | None = None) -> MemoryService:
    policy = MemoryPolicy(use_model_for_curation=False, compaction_target=2)
    return MemoryService(
        store=store or InMemoryMemoryStore(),
        llm=llm or ScriptedLLM(),
        clock=FakeClock(),
        recall=Recall(),
        policy=policy,
    )


def test_the_author_is_read_from_the_metadata_comment_and_absent_without_one() -> None:
    wiped, linter, flags = parse(FILE).live()
    assert (wiped.author, linter.author, flags.author) == ("U123ABC", CLI_AUTHOR, None)
    assert linter.seen == 2


def test_a_by_that_cannot_be_an_author_leaves_the_line_unread_and_as_written() -> None:
    text = "## 2026-11-20 · manual\n- Staging data is wiped every Monday. <!-- by:<@U1> -->\n"
    doc = parse(text)
    assert doc.live() == []
    assert [line.number for line in unread_lines(doc)] == [2]
    assert doc.render() == text


def test_the_id_is_a_hash_of_the_text_only() -> None:
    [wiped, *_] = parse(FILE).live()
    assert wiped.id == lesson_id("Staging data is wiped every Monday.")
    assert wiped.id == parse(FILE.replace("by:U123ABC", "by:U999")).live()[0].id


def test_a_lesson_renders_its_author_beside_its_counts() -> None:
    [wiped, _, flags] = parse(FILE).live()
    assert render_lesson(replace(wiped, seen=3, injected=1)) == (
        "- Staging data is wiped every Monday. <!-- by:U123ABC seen:3 injected:1 -->"
    )
    assert render_lesson(flags) == "- Feature flags live in flags.yaml."


def test_a_lesson_remembered_for_a_person_stores_its_author() -> None:
    store = InMemoryMemoryStore()
    memory = service(store)
    lesson = memory.remember(DEV, "p", "Releases are tagged from main only.", author="U42XYZ")
    assert lesson.author == "U42XYZ"
    assert "- Releases are tagged from main only. <!-- by:U42XYZ -->\n" in store.files[KEY]
    assert memory.lessons(DEV, "p")[0].author == "U42XYZ"


@pytest.mark.parametrize("author", ["", "two words", "U1 -->", "<@U1>", "x" * 65])
def test_an_author_that_cannot_be_kept_is_refused(author: str) -> None:
    store = InMemoryMemoryStore()
    with pytest.raises(InvalidInputError, match="author"):
        service(store).remember(DEV, "p", "Releases are tagged from main only.", author=author)
    assert store.files == {}


def test_a_lesson_a_persona_reflected_carries_no_author() -> None:
    llm = ScriptedLLM().script(Purpose.REFLECTION, "- The retry queue needs a dead-letter topic for poison messages.")
    store = InMemoryMemoryStore()
    [found] = service(store, llm).reflect(DEV, "p", ReflectionContext(kind="deliberation", topic="t", summary="s"))
    lesson = found.lesson
    assert lesson.author is None
    assert "by:" not in store.files[KEY]


def test_the_author_survives_counting_restating_and_injection() -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = FILE
    memory = service(store)
    again = memory.remember(DEV, "p", "Staging data is wiped every Monday", author="U777")
    assert (again.author, again.seen) == ("U123ABC", 2)  # the one who wrote it first stays its author
    memory.note_injected(DEV, "p", [again.id])
    assert (
        "- Staging data is wiped every Monday. <!-- by:U123ABC seen:2 last:2026-11-21 injected:1 -->\n"
        in store.files[KEY]
    )


def test_the_author_survives_being_superseded() -> None:
    doc = parse(FILE)
    wiped = doc.live()[0]
    text = doc.supersede(wiped.id, "deadbeef", date(2026, 11, 22)).render()
    assert "- ~~Staging data is wiped every Monday.~~ <!-- superseded-by:deadbeef on:2026-11-22 by:U123ABC -->" in text
    [stale] = parse(text).stale()
    assert stale.author == "U123ABC"


def test_the_author_survives_compaction_when_the_lesson_is_kept() -> None:
    answer = [
        Candidate("Staging data is wiped every Monday."),
        Candidate("Flags and migrations each have one checked place."),
    ]
    result = compacted(parse(FILE), answer, target=2, day=date(2026, 11, 22))
    assert result.document is not None
    authors = {lesson.text: lesson.author for lesson in result.document.live()}
    assert authors == {
        "Staging data is wiped every Monday.": "U123ABC",
        "Flags and migrations each have one checked place.": None,
    }
    assert "<!-- by:U123ABC -->" in result.document.render()


def test_the_author_survives_a_forget_of_another_lesson_byte_for_byte() -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = FILE
    memory = service(store)
    memory.forget(DEV, "p", lesson_id("Feature flags live in flags.yaml."))
    assert store.files[KEY] == FILE.replace("- Feature flags live in flags.yaml.\n", "")
