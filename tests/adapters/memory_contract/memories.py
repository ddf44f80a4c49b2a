"""What the contract tests share: a deterministic encoder, a backfill run by hand, and a memory service on a store.

The encoder hashes each word onto 16 axes, so texts that share words are close and no model is needed; the real
encoder has its own tests (tests/adapters/encoder/test_embeddings.py).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from nightwatch.domain.recall.ports import Embedder
from nightwatch.domain.vectors import VectorTable
from tests.fakes import FakeClock, ScriptedLLM

NOW = datetime(2026, 11, 21, 9, 30, 5, tzinfo=UTC)
DEV = Persona(name="Dev", slug="dev", role="Implementer")


class WordHashEmbedder:
    """Bag of hashed words: texts sharing words are close. Records every text it embeds."""

    def __init__(self) -> None:
        self.embedded: list[str] = []
        self.lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        with self.lock:
            self.embedded.extend(texts)
        matrix = np.zeros((len(texts), 16), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                matrix[row, hashlib.sha256(word.strip(".,").encode()).digest()[0] % 16] += 1.0
        return matrix


class ManualBackfill:
    """Records which memories asked for a backfill; the test runs it when it wants to."""

    def __init__(self) -> None:
        self.requested: list[tuple[str, str]] = []

    def request(self, persona_slug: str, project: str) -> None:
        self.requested.append((persona_slug, project))


def table(texts: list[str]) -> VectorTable:
    """The word-hash vectors of these texts."""
    return VectorTable.empty().with_texts(texts, WordHashEmbedder().embed(texts))


def service(
    store: MemoryStore,
    encoder: Embedder | None = None,
    backfill: ManualBackfill | None = None,
    policy: MemoryPolicy | None = None,
    llm: ScriptedLLM | None = None,
) -> MemoryService:
    """A memory service on `store`, offline curation, the clock at NOW; meaning on when given an encoder."""
    return MemoryService(
        store=store,
        llm=llm or ScriptedLLM(),
        clock=FakeClock(NOW),
        recall=Recall(encoder=encoder),
        policy=policy or MemoryPolicy(use_model_for_curation=False),
        backfill=backfill or ManualBackfill(),
    )
