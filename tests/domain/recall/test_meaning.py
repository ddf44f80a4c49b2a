"""Dense similarity fused with keywords, through the Embedder port (a small concept-space fake here)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from nightwatch.domain.models import Lesson
from nightwatch.domain.recall.ranking import Recall

NOW = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "outage": 1, "downtime": 1, "incident": 1, "lunch": 2}


class ConceptEmbedder:
    """Words that mean the same thing share an axis; counts the texts it was asked to embed."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        vectors = []
        for text in texts:
            vector = [0.0, 0.0, 0.0, 0.1]
            for word in text.lower().replace(".", " ").split():
                if word in CONCEPTS:
                    vector[CONCEPTS[word]] += 1.0
            vectors.append(vector)
        return vectors


LESSONS = [
    Lesson(id="car", text="The car park closes at nine.", recorded_at=NOW - timedelta(days=9), link="1"),
    Lesson(id="down", text="Announce downtime an hour ahead.", recorded_at=NOW - timedelta(days=50), link="2"),
    Lesson(id="lunch", text="Team lunch is on Fridays.", recorded_at=NOW - timedelta(days=1), link="3"),
]


def test_dense_similarity_finds_a_lesson_sharing_no_keyword() -> None:
    assert Recall().rank(LESSONS, "automobile", NOW)[0].lesson.id == "lunch"  # keywords alone: only recency
    assert Recall(encoder=ConceptEmbedder()).rank(LESSONS, "automobile", NOW)[0].lesson.id == "car"


def test_keywords_still_count_when_dense_is_on() -> None:
    ranked = Recall(encoder=ConceptEmbedder()).rank(LESSONS, "outage downtime", NOW)
    assert ranked[0].lesson.id == "down"


def test_lessons_are_embedded_once_per_lesson_set() -> None:
    encoder = ConceptEmbedder()
    recall = Recall(encoder=encoder)
    for query in ("incident", "vehicle", "lunch"):
        recall.rank(LESSONS, query, NOW)
    lesson_texts = [text for text in encoder.embedded if text in {item.text for item in LESSONS}]
    assert len(lesson_texts) == len(LESSONS)
    assert encoder.embedded[-1] == "lunch"  # each query is embedded on its own


def test_an_empty_query_does_not_embed() -> None:
    encoder = ConceptEmbedder()
    ranked = Recall(encoder=encoder).rank(LESSONS, "  ", NOW)
    assert ranked[0].lesson.id == "lunch"
    assert "  " not in encoder.embedded
