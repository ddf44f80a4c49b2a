"""Meaning fused with keywords: stored lesson vectors against the query's, through the Embedder port.

A small concept-space fake stands in for all-MiniLM-L6-v2: words that mean the same thing share an axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import Recall
from nightwatch.domain.vectors import LessonVectors, VectorTable, nearest, vector_key

NOW = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "outage": 1, "downtime": 1, "incident": 1, "lunch": 2}


class ConceptEmbedder:
    """Counts the texts it was asked to embed."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.embedded.extend(texts)
        vectors = np.zeros((len(texts), 4), dtype=np.float32)
        vectors[:, 3] = 0.1
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                if word in CONCEPTS:
                    vectors[row, CONCEPTS[word]] += 1.0
        return vectors


LESSONS = (
    Lesson(id="car", text="The car park closes at nine.", recorded_at=NOW - timedelta(days=9), link="1"),
    Lesson(id="down", text="Announce downtime an hour ahead.", recorded_at=NOW - timedelta(days=50), link="2"),
    Lesson(id="lunch", text="Team lunch is on Fridays.", recorded_at=NOW - timedelta(days=1), link="3"),
)


def stored(encoder: ConceptEmbedder, lessons: Sequence[Lesson] = LESSONS) -> LessonVectors:
    texts = [lesson.text for lesson in lessons]
    table = VectorTable.empty().with_texts(texts, encoder.embed(texts))
    return table.aligned([vector_key(text) for text in texts])


def test_meaning_finds_a_lesson_sharing_no_keyword() -> None:
    encoder = ConceptEmbedder()
    vectors = stored(encoder)
    assert Recall().rank(LESSONS, "automobile", NOW)[0].lesson.id == "lunch"  # keywords alone: only recency
    assert Recall(encoder=encoder).rank(LESSONS, "automobile", NOW, vectors)[0].lesson.id == "car"


def test_keywords_still_count_when_meaning_is_on() -> None:
    encoder = ConceptEmbedder()
    ranked = Recall(encoder=encoder).rank(LESSONS, "outage downtime", NOW, stored(encoder))
    assert ranked[0].lesson.id == "down"
    assert ranked[0].parts.keyword > 0
    assert ranked[0].parts.meaning > 0


def test_a_read_embeds_only_the_query_once() -> None:
    encoder = ConceptEmbedder()
    vectors = stored(encoder)
    encoder.embedded.clear()
    recall = Recall(encoder=encoder)
    for query in ("incident", "vehicle", "incident"):
        recall.rank(LESSONS, query, NOW, vectors)
    assert encoder.embedded == ["incident", "vehicle"]


def test_an_empty_query_does_not_embed() -> None:
    encoder = ConceptEmbedder()
    vectors = stored(encoder)
    encoder.embedded.clear()
    ranked = Recall(encoder=encoder).rank(LESSONS, "  ", NOW, vectors)
    assert ranked[0].lesson.id == "lunch"
    assert encoder.embedded == []


def test_a_lesson_without_a_vector_scores_on_keywords_alone() -> None:
    encoder = ConceptEmbedder()
    table = VectorTable.empty().with_texts([LESSONS[0].text], encoder.embed([LESSONS[0].text]))
    vectors = table.aligned([vector_key(lesson.text) for lesson in LESSONS])
    assert vectors.present.tolist() == [True, False, False]
    ranked = {hit.lesson.id: hit for hit in Recall(encoder=encoder).rank(LESSONS, "downtime outage", NOW, vectors)}
    assert ranked["down"].parts.meaning == 0.0
    assert ranked["down"].parts.keyword > 0
    assert ranked["car"].parts.meaning == 0.0  # present, but far from the query


def test_the_table_keeps_one_row_per_text_and_drops_what_is_gone() -> None:
    encoder = ConceptEmbedder()
    table = VectorTable.empty().with_texts(["car", "lunch"], encoder.embed(["car", "lunch"]))
    again = table.with_texts(["car", "outage"], encoder.embed(["car", "outage"]))
    assert len(again) == 3
    assert table.with_texts(["car"], encoder.embed(["car"])) is table
    assert again.missing(["car", "vehicle", "vehicle"]) == ["vehicle"]
    assert list(again.only([vector_key("outage")]).keys) == [vector_key("outage")]
    assert np.allclose(np.linalg.norm(again.matrix, axis=1), 1.0)


def test_nearest_is_closest_first_above_the_floor() -> None:
    encoder = ConceptEmbedder()
    vectors = stored(encoder)
    probe = encoder.embed(["vehicle"])[0]
    probe /= np.linalg.norm(probe)
    assert nearest(probe, vectors, limit=3, floor=0.5) == [(0, nearest(probe, vectors, limit=1, floor=0.0)[0][1])]
    assert nearest(probe, vectors, limit=3, floor=1.01) == []
