"""A memory's read index: made for one text, it gives exactly what parsing that text gives; anything else is refused."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory import cache as cache_module
from nightwatch.domain.memory.derive import IndexedLessons, derive
from nightwatch.domain.memory.format import is_header, parse
from nightwatch.domain.memory.read_index import VERSION, ReadIndex, text_digest
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import KeywordWeights, Recall
from nightwatch.domain.vectors import vector_key
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer")
KEY = ("priya", "p")

# Every kind of line a read must get right: lessons above any section, each bullet form, pins, counts, authors,
# struck-through and superseded lessons, prose, comments, non-ASCII text, a CR at a line's end, no final newline.
TEXT = """# Priya · memory for p

- Undated: the staging cluster is reset every Monday.
A note a person wrote under the title.

## 2026-11-02 · deliberation · https://example.slack.com/archives/C1/p1
- 📌 Quarantine a flaky test within a day. <!-- seen:3 injected:2 -->
* The payments suite owns its fixtures; never share them. <!-- by:U123ABC -->
  1. Größe und Café: Unicode in test names breaks the JUnit report.
- ~~Retries hide flakiness.~~
- A bullet whose comment is malformed <!-- seen:many -->
<!-- a whole-line comment -->
2) Contract tests run before the e2e stage in ci/pipeline.yml 🚀  \r

## not a date · manual
+ Lessons under a header without a date are lessons too.

## 2026-11-09 · manual
• Release v2.3.1 broke the `AuthService` mock; pin mocks to the API version.
- Staging data is wiped every Monday.

## Superseded
- ~~Run the whole suite on every commit.~~ <!-- superseded-by:1a2b3c4d on:2026-11-05 -->
- An old lesson kept as history."""


def index_of(text: str, previous: ReadIndex | None = None) -> ReadIndex:
    return derive(text, text_digest(text), previous, KeywordWeights()).index


def copied(index: ReadIndex) -> dict[str, NDArray[Any]]:
    return {name: np.array(array) for name, array in index.arrays().items()}


def nothing() -> None:
    return None


def loaded(text: str, arrays: dict[str, NDArray[Any]], on_mismatch: Callable[[], None] = nothing) -> IndexedLessons:
    index = ReadIndex.from_arrays(arrays, KeywordWeights())
    assert index.fits(text, text_digest(text))
    return IndexedLessons(text, index, "Priya's memory of p", on_mismatch)


@pytest.mark.parametrize("text", [TEXT, TEXT + "\n", "", "# Priya\n", "- A lesson and nothing else", "\n\n- a\n"])
def test_the_lessons_read_from_an_index_are_those_of_the_parse(text: str) -> None:
    lessons = loaded(text, copied(index_of(text)))
    assert list(lessons) == parse(text).live()
    assert [lessons[i] for i in reversed(range(len(lessons)))] == parse(text).live()[::-1]


def test_an_index_keeps_the_ids_vector_keys_and_signals_of_the_live_lessons() -> None:
    index = ReadIndex.from_arrays(copied(index_of(TEXT)), KeywordWeights())
    live = parse(TEXT).live()
    assert index.ids.astype("U8").tolist() == [lesson.id for lesson in live]
    assert index.vector_keys() == tuple(vector_key(lesson.text) for lesson in live)
    assert index.recall.signals.seen.tolist() == [lesson.seen for lesson in live]
    assert index.recall.signals.pinned.tolist() == [lesson.pinned for lesson in live]
    assert [index.links.value(row) for row in range(len(index))] == [lesson.link for lesson in live]
    assert [index.authors.value(row) for row in range(len(index))] == [lesson.author for lesson in live]
    assert [index.lesson(row, TEXT) for row in range(len(index))] == live


def test_an_index_fits_only_the_text_it_was_made_for() -> None:
    index = ReadIndex.from_arrays(copied(index_of(TEXT)), KeywordWeights())
    assert index.fits(TEXT, text_digest(TEXT))
    for other in (TEXT + " ", TEXT.replace("Monday", "monday"), ""):
        assert not index.fits(other, text_digest(other))
    assert not index.fits(TEXT[:100], text_digest(TEXT))  # lines past the end of the text


def test_an_index_of_another_version_or_other_weights_is_refused() -> None:
    arrays = copied(index_of(TEXT))
    with pytest.raises(ValueError, match="another version"):
        ReadIndex.from_arrays({**arrays, "version": np.array(VERSION + 1)}, KeywordWeights())
    with pytest.raises(ValueError, match="other keyword weights"):
        ReadIndex.from_arrays(arrays, KeywordWeights(k1=1.5))


def moved(arrays: dict[str, NDArray[Any]], name: str, change: Callable[[NDArray[Any]], NDArray[Any]]) -> Any:
    return {**arrays, name: change(arrays[name])}


@pytest.mark.parametrize(
    ("name", "change", "why"),
    [
        ("lines", lambda a: a[::-1] + 0, "out of order"),
        ("lines", lambda a: a[:-1], "shape"),
        ("headers", lambda a: np.where(a >= 0, a + 5_000, a), "out of order"),
        ("ids", lambda a: a.astype("S9"), "holds"),
        ("keys", lambda a: a[:3], "shape"),
        ("line_keys", lambda a: a.astype("S16"), "holds"),
        ("links", lambda a: a + 100, "link is out of range"),
        ("kinds", lambda a: a - 5, "kind is out of range"),
        ("texts", lambda a: a + 10_000, "outside its line"),
        ("live", np.zeros_like, "superseded"),
        ("version", lambda a: a + 1, "another version"),
    ],
)
def test_arrays_that_do_not_make_an_index_are_refused(
    name: str, change: Callable[[NDArray[Any]], NDArray[Any]], why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        ReadIndex.from_arrays(moved(copied(index_of(TEXT)), name, change), KeywordWeights())


def test_a_line_that_does_not_hold_its_lesson_fails_the_read_clearly_and_reports_the_index() -> None:
    arrays = copied(index_of(TEXT))
    arrays["texts"] = arrays["texts"] + np.array([1, 0], dtype=np.int32)  # each text now starts a letter late
    reported: list[bool] = []
    lessons = loaded(TEXT, arrays, lambda: reported.append(True))
    with pytest.raises(StorageError, match="read index kept beside Priya's memory of p does not match"):
        list(lessons)
    assert reported == [True]


def edits(text: str, seed: int) -> list[str]:
    """Texts a memory becomes: lessons appended, counts bumped, lines dropped, moved, struck, a header changed."""
    rng = random.Random(seed)
    lines = text.split("\n")
    found = []
    for _ in range(12):
        changed = list(lines)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(changed))
            kind = rng.choice(("append", "bump", "drop", "move", "strike", "header", "copy", "pin"))
            if kind == "append":
                changed.insert(at, f"- New lesson {rng.randrange(1000)} about flaky tests in svc_{at}.py.")
            elif kind == "bump":
                changed[at] = changed[at].replace("seen:3", "seen:4").replace("- ", "- ", 1) + " <!-- seen:2 -->"
            elif kind == "drop":
                del changed[at]
            elif kind == "move":
                changed.insert(rng.randrange(len(changed)), changed.pop(at))
            elif kind == "strike" and changed[at].startswith("- "):
                changed[at] = f"- ~~{changed[at][2:]}~~"
            elif kind == "header":
                changed.insert(at, f"## 2026-12-{1 + at % 28:02d} · manual · https://x/p{at % 3}")
            elif kind == "copy":
                changed.insert(at, changed[rng.randrange(len(changed))])
            elif kind == "pin" and changed[at].startswith("- "):
                changed[at] = f"- 📌 {changed[at][2:]}"
        found.append("\n".join(changed))
        lines = changed
    return found


def same_arrays(one: ReadIndex, other: ReadIndex) -> bool:
    mine, theirs = one.arrays(), other.arrays()
    return mine.keys() == theirs.keys() and all(
        mine[name].dtype == theirs[name].dtype and np.array_equal(mine[name], theirs[name]) for name in mine
    )


@pytest.mark.parametrize("seed", range(6))
def test_an_index_derived_from_another_texts_index_is_the_one_made_from_nothing(seed: int) -> None:
    previous = index_of(TEXT)
    for text in edits(TEXT, seed):
        made = index_of(text)
        derived = index_of(text, previous)
        assert same_arrays(derived, made)
        assert list(IndexedLessons(text, derived, "here", nothing)) == parse(text).live()
        previous = derived


def test_a_count_that_changed_keeps_the_keyword_index_and_a_new_lesson_rebuilds_it() -> None:
    previous = index_of(TEXT)
    bumped = TEXT.replace("<!-- seen:3 injected:2 -->", "<!-- seen:3 injected:3 -->")
    assert index_of(bumped, previous).recall.index is previous.recall.index
    added = TEXT.replace("- Staging data is wiped", "- Quarantine flaky tests first.\n- Staging data is wiped")
    assert index_of(added, previous).recall.index is not previous.recall.index
    assert list(derive(added, text_digest(added), previous, KeywordWeights()).lessons.values()) == [
        lesson for lesson in parse(added).live() if lesson.text == "Quarantine flaky tests first."
    ]  # the one new line is the only one parsed


# What a read derives from TEXT, reduced to what parsing, analysis and the index decide (the float weights rounded,
# so a last-bit difference of a maths library cannot change it). When a change to format.py, keywords.py, stemmer.py
# or index.py changes it, bump read_index.VERSION (an index made by the old code would be read as current) and
# then record the new fingerprint here.
FINGERPRINT = (1, "fe01e0d621dbe0f2")


def fingerprint(index: ReadIndex) -> str:
    digest = hashlib.sha256()
    for name, array in sorted(index.arrays().items()):
        kept = np.round(array, 4) if array.dtype.kind == "f" and name != "stamps" else array
        digest.update(name.encode() + np.ascontiguousarray(kept).tobytes())
    return digest.hexdigest()[:16]


def test_what_an_index_holds_changes_only_with_its_version() -> None:
    found = (VERSION, fingerprint(index_of(TEXT)))
    assert found == FINGERPRINT, (
        "What a read derives from a memory changed. Bump VERSION in domain/memory/read_index.py (so indexes made by "
        f"the old code are not used) and set FINGERPRINT in this test to {(VERSION + 1, found[1])}."
    )


def test_text_digest_is_sha256_of_the_utf8_text() -> None:
    assert text_digest("Größe") == hashlib.sha256("Größe".encode()).hexdigest()


def reading_service(store: InMemoryMemoryStore) -> MemoryService:
    policy = MemoryPolicy(use_model_for_curation=False)
    return MemoryService(store=store, llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy)


def test_the_first_read_keeps_an_index_and_a_new_process_reads_from_it_without_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = TEXT
    first = reading_service(store).read(PRIYA, "p", "flaky tests in the payments suite")
    assert ReadIndex.from_arrays(store.indexes[KEY], KeywordWeights()).digest == text_digest(TEXT)

    def no_parse(text: str) -> None:
        raise AssertionError("the text was parsed")

    monkeypatch.setattr(cache_module, "parse", no_parse)
    monkeypatch.setattr(cache_module, "derive", no_parse)
    again = reading_service(store).read(PRIYA, "p", "flaky tests in the payments suite")
    assert again == first
    assert again.lessons


def test_reads_that_only_list_keep_no_index() -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = TEXT
    memory = reading_service(store)
    assert memory.lessons(PRIYA, "p") == parse(TEXT).live()
    assert memory.history(PRIYA, "p") == parse(TEXT).stale()
    assert store.indexes == {}


@pytest.mark.parametrize(
    "line",
    ["##", "## x", "##x", "###", "### x", "#", "# x", "##\t2026-01-01", "## \r", "##\u2028", " ## x", "##  ", "-##"],
)
def test_a_header_is_what_parse_reads_as_one(line: str) -> None:
    sections = parse(f"{line}\n- a lesson\n").sections
    assert is_header(line) == (sections[-1].header == line)


def test_an_index_that_does_not_hold_its_lessons_stops_one_read_and_the_next_replaces_it() -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = TEXT
    expected = reading_service(store).read(PRIYA, "p", "flaky tests in the payments suite")
    store.indexes[KEY]["texts"] = store.indexes[KEY]["texts"] + np.array([1, 0], dtype=np.int32)
    memory = reading_service(store)
    with pytest.raises(StorageError, match="does not match the memory's text"):
        memory.read(PRIYA, "p", "flaky tests in the payments suite")
    assert memory.read(PRIYA, "p", "flaky tests in the payments suite") == expected
    assert reading_service(store).read(PRIYA, "p", "flaky tests in the payments suite") == expected  # kept anew


def test_a_changed_text_is_read_by_deriving_from_the_index_kept_before() -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = TEXT
    reading_service(store).read(PRIYA, "p", "anything")
    store.files[KEY] = TEXT.replace("## 2026-11-09 · manual\n", "## 2026-11-09 · manual\n- Retry flaky tests once.\n")
    fresh = InMemoryMemoryStore()
    fresh.files[KEY] = store.files[KEY]
    assert reading_service(store).read(PRIYA, "p", "retry flaky tests") == reading_service(fresh).read(
        PRIYA, "p", "retry flaky tests"
    )
    assert same_arrays(
        ReadIndex.from_arrays(store.indexes[KEY], KeywordWeights()),
        ReadIndex.from_arrays(fresh.indexes[KEY], KeywordWeights()),
    )


@pytest.mark.parametrize("seed", range(3))
def test_a_derived_keyword_index_is_the_one_recall_builds_from_the_parsed_lessons(seed: int) -> None:
    for text in (TEXT, *edits(TEXT, seed)):
        derived = index_of(text).recall.arrays()
        built = Recall().prepare(tuple(parse(text).live())).arrays()
        assert derived.keys() == built.keys()
        for name in derived:
            assert derived[name].dtype == built[name].dtype, name
            assert np.array_equal(derived[name], built[name]), name
