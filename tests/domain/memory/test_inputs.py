"""What memory accepts from a person: lessons, lesson ids, search queries and limits; and the service holds to it."""

from __future__ import annotations

import pytest

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory import (
    LESSON_MAX,
    QUERY_MAX,
    MemoryPolicy,
    MemoryService,
    validate_lesson,
    validate_lesson_id,
    validate_query,
    validate_search_limit,
)
from nightwatch.domain.models import Persona
from nightwatch.domain.recall.ranking import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

CARLOS = Persona(name="Carlos", slug="carlos", role="Tech Lead / Architect")
LESSON = "Run the schema linter before every migration PR."


def service() -> tuple[MemoryService, InMemoryMemoryStore]:
    store = InMemoryMemoryStore()
    policy = MemoryPolicy(use_model_for_curation=False)
    memory = MemoryService(store=store, llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy)
    return memory, store


def test_a_lesson_becomes_one_clean_line() -> None:
    assert validate_lesson("- Run the linter\n  before every PR.\t") == "Run the linter before every PR."
    assert len(validate_lesson("x" * LESSON_MAX)) == LESSON_MAX


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("", "A lesson cannot be empty"),
        (" \n\t", "A lesson cannot be empty"),
        ("<!-- -->", "A lesson cannot be empty"),
        ("x" * (LESSON_MAX + 1), "That lesson is 401 characters long; shorten it to at most 400."),
        ("Keys \x00 rotate.", "The lesson contains the control character '\\x00'"),
        ("Keys \x1b[2J rotate.", "The lesson contains the control character '\\x1b'"),
        ("Keys \udcff rotate.", "a stray byte that is not UTF-8 text"),
    ],
)
def test_a_bad_lesson_is_refused_with_what_is_accepted(raw: str, says: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_lesson(raw)
    assert says in str(caught.value)


def test_a_shorter_limit_applies_when_given() -> None:
    with pytest.raises(InvalidInputError, match="at most 10"):
        validate_lesson("eleven char", limit=10)


@pytest.mark.parametrize(("raw", "wanted"), [("3f9a2c1d", "3f9a2c1d"), (" 3F9A2C1D ", "3f9a2c1d")])
def test_a_lesson_id_is_eight_hex_characters_in_any_case(raw: str, wanted: str) -> None:
    assert validate_lesson_id(raw) == wanted


@pytest.mark.parametrize("raw", ["", "zz", "3f9a2c1", "3f9a2c1d0", "3f9a2c1g", "3f9a 2c1d", "\x00" * 8, "٣f9a2c1d"])
def test_a_malformed_lesson_id_says_what_an_id_looks_like(raw: str) -> None:
    with pytest.raises(InvalidInputError, match=r"A lesson id is 8 characters from 0-9 and a-f, such as 3f9a2c1d"):
        validate_lesson_id(raw)


def test_a_query_is_printable_text_of_bounded_length() -> None:
    assert validate_query("  session store ") == "session store"
    for bad, says in [("", "cannot be empty"), ("q" * (QUERY_MAX + 1), "at most 500"), ("a\x00", "control")]:
        with pytest.raises(InvalidInputError, match=says):
            validate_query(bad)


@pytest.mark.parametrize("raw", [0, -1, 101, "abc", True])
def test_a_search_limit_is_a_whole_number_from_1_to_100(raw: object) -> None:
    with pytest.raises(InvalidInputError, match="must be a whole number from 1 to 100"):
        validate_search_limit(raw)


def test_remember_refuses_control_characters_and_stores_nothing() -> None:
    memory, store = service()
    with pytest.raises(InvalidInputError, match="control character"):
        memory.remember(CARLOS, "p", "Run the linter \x00 first.")
    assert store.files == {}


def test_forget_refuses_a_malformed_id_and_leaves_the_memory_alone() -> None:
    memory, store = service()
    memory.remember(CARLOS, "p", LESSON)
    before = dict(store.files)
    with pytest.raises(InvalidInputError, match="8 characters from 0-9 and a-f"):
        memory.forget(CARLOS, "p", "zz")
    assert store.files == before


def test_search_refuses_a_limit_out_of_range() -> None:
    memory, _ = service()
    memory.remember(CARLOS, "p", LESSON)
    assert len(memory.search(CARLOS, "p", "linter", limit=1)) == 1
    with pytest.raises(InvalidInputError, match="from 1 to 100"):
        memory.search(CARLOS, "p", "linter", limit=-1)
