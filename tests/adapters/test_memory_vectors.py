"""Lesson vectors beside main.md: the file format, the store, and the memory service writing them once.

The encoder here is a deterministic fake (a hash of each word on 16 axes) so the tests need no model; the real
encoder has its own tests (test_embeddings.py).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from nightwatch.adapters import vector_file
from nightwatch.adapters.memory_files import FileMemoryStore
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.backfill import BackgroundBackfill
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from nightwatch.domain.vectors import VectorTable, vector_key
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
    def __init__(self) -> None:
        self.requested: list[tuple[str, str]] = []

    def request(self, persona_slug: str, project: str) -> None:
        self.requested.append((persona_slug, project))


def table(texts: list[str]) -> VectorTable:
    return VectorTable.empty().with_texts(texts, WordHashEmbedder().embed(texts))


def service(home: Path, encoder: WordHashEmbedder, backfill: ManualBackfill | None = None) -> MemoryService:
    return MemoryService(
        store=FileMemoryStore(home),
        llm=ScriptedLLM(),
        clock=FakeClock(NOW),
        recall=Recall(encoder=encoder),
        policy=MemoryPolicy(use_model_for_curation=False),
        backfill=backfill or ManualBackfill(),
    )


def vectors_file(home: Path, persona: str = "dev", project: str = "p") -> Path:
    return home / "agents" / persona / "memories" / project / "main.vectors"


def test_the_file_format_round_trips_and_ignores_a_torn_last_record() -> None:
    original = table(["alpha beta", "gamma"])
    data = vector_file.encode(original)
    decoded = vector_file.decode(data + b"\x01\x02\x03")
    assert decoded.keys == original.keys
    assert np.array_equal(decoded.matrix, original.matrix)
    assert len(vector_file.decode(b"not a vector file at all")) == 0
    assert vector_file.complete_length(data + b"xx") == len(data)


def test_the_store_appends_rows_and_a_torn_append_is_repaired(home: Path) -> None:
    store = FileMemoryStore(home)
    store.save_vectors("dev", "p", table(["one thing"]))
    path = vectors_file(home)
    with path.open("ab") as handle:
        handle.write(b"half a record")  # a crash in the middle of an append
    store.save_vectors("dev", "p", table(["one thing", "another thing"]))
    stored = store.read_vectors("dev", "p")
    assert set(stored.keys) == {vector_key("one thing"), vector_key("another thing")}
    assert (path.stat().st_size - vector_file.HEADER.size) % vector_file.record_size(16) == 0


def test_keep_drops_the_rows_of_lessons_that_are_gone(home: Path) -> None:
    store = FileMemoryStore(home)
    store.save_vectors("dev", "p", table(["old lesson", "kept lesson"]))
    store.save_vectors("dev", "p", table(["kept lesson"]), keep=frozenset({vector_key("kept lesson")}))
    assert store.read_vectors("dev", "p").keys == (vector_key("kept lesson"),)


def test_a_lesson_is_embedded_once_when_written_and_never_by_a_read(home: Path) -> None:
    encoder = WordHashEmbedder()
    memory = service(home, encoder)
    memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    memory.remember(DEV, "p", "Run the migration dry-run against a production snapshot.")
    assert encoder.embedded.count("Pin the CI image to node 20.11 in every pipeline.") == 1
    written = len(encoder.embedded)
    fresh = service(home, encoder)  # a new process: the vectors come from main.vectors
    block = fresh.read(DEV, "p", "node version for the pipeline")
    assert block.lessons
    assert encoder.embedded[written:] == ["node version for the pipeline"]
    assert len(fresh.store.read_vectors("dev", "p")) == 2


def test_a_hand_written_lesson_is_backfilled_not_embedded_by_the_read(home: Path) -> None:
    encoder = WordHashEmbedder()
    backfill = ManualBackfill()
    memory = service(home, encoder, backfill)
    memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    path = home / "agents" / "dev" / "memories" / "p" / "main.md"
    path.write_text(path.read_text() + "- Rotate the deploy keys every quarter.\n")
    before = len(encoder.embedded)
    memory.read(DEV, "p", "deploy keys")
    memory.read(DEV, "p", "deploy keys again")
    assert "Rotate the deploy keys every quarter." not in encoder.embedded[before:]
    assert backfill.requested == [("dev", "p")]  # once per version of the file
    assert memory.backfill("dev", "p") == 1
    assert vector_key("Rotate the deploy keys every quarter.") in memory.store.read_vectors("dev", "p")
    assert memory.backfill("dev", "p") == 0


def test_the_background_backfill_runs_the_work_once_per_memory() -> None:
    done: list[tuple[str, str]] = []
    gate = threading.Event()

    def work(persona: str, project: str) -> int:
        gate.wait(5)
        done.append((persona, project))
        return 1

    backfill = BackgroundBackfill(work)
    backfill.request("dev", "p")
    backfill.request("maya", "p")
    backfill.request("maya", "p")
    gate.set()
    assert backfill.wait_idle(5)
    assert sorted(done) == [("dev", "p"), ("maya", "p")]


def test_vectors_follow_a_rename_and_an_archive(home: Path) -> None:
    encoder = WordHashEmbedder()
    memory = service(home, encoder)
    memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    store = FileMemoryStore(home)
    store.migrate("dev", "devon", NOW)
    assert len(store.read_vectors("devon", "p")) == 1
    move = store.archive("devon", NOW)
    assert move.target is not None
    assert (home / move.target / "memories" / "p" / "main.vectors").is_file()


@pytest.mark.parametrize("dimensions", [8, 16])
def test_a_file_of_another_dimension_is_replaced_not_mixed(home: Path, dimensions: int) -> None:
    store = FileMemoryStore(home)
    other = VectorTable((vector_key("x"),), np.ones((1, dimensions), dtype=np.float32))
    store.save_vectors("dev", "p", other)
    store.save_vectors("dev", "p", table(["y"]))
    stored = store.read_vectors("dev", "p")
    assert stored.dimensions == 16
    assert vector_key("y") in stored
    assert (vector_key("x") in stored) == (dimensions == 16)


def test_a_broken_encoder_leaves_memory_working_by_keywords(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    from nightwatch.adapters.embeddings import MiniLMEncoder

    broken = home / "model"
    broken.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        (broken / name).write_text("not a model")
    memory = MemoryService(
        store=FileMemoryStore(home),
        llm=ScriptedLLM(),
        clock=FakeClock(NOW),
        recall=Recall(encoder=MiniLMEncoder(model_dir=broken)),
        policy=MemoryPolicy(use_model_for_curation=False),
        backfill=ManualBackfill(),
    )
    lesson = memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    assert [hit.lesson.id for hit in memory.search(DEV, "p", "node pipeline")] == [lesson.id]
    assert memory.read(DEV, "p", "which node version?").lessons == (lesson,)
    assert any("keywords only" in record.getMessage() for record in caplog.records)


def test_a_compaction_embeds_the_lessons_it_wrote_and_lets_the_dropped_go(home: Path) -> None:
    from nightwatch.domain.models import Purpose

    encoder = WordHashEmbedder()
    llm = ScriptedLLM(default={Purpose.COMPACTION: "- Pin CI images and rotate deploy keys quarterly."})
    memory = MemoryService(
        store=FileMemoryStore(home),
        llm=llm,
        clock=FakeClock(NOW),
        recall=Recall(encoder=encoder),
        policy=MemoryPolicy(use_model_for_curation=False, compaction_target=1),
        backfill=ManualBackfill(),
    )
    memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    memory.remember(DEV, "p", "Rotate the deploy keys every quarter.")
    assert memory.compact(DEV, "p").compacted
    stored = FileMemoryStore(home).read_vectors("dev", "p")
    assert set(stored.keys) == {vector_key("Pin CI images and rotate deploy keys quarterly.")}


def test_twenty_concurrent_writers_leave_a_vector_for_every_lesson(home: Path) -> None:
    writers = 20
    start = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            start.wait()
            # each writer is its own service and store, as separate processes would be
            service(home, WordHashEmbedder()).remember(DEV, "p", f"Module_{n}.py needs review {n} times per release.")
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    lessons = service(home, WordHashEmbedder()).lessons(DEV, "p")
    assert len(lessons) == writers
    stored = FileMemoryStore(home).read_vectors("dev", "p")
    assert {vector_key(lesson.text) for lesson in lessons} <= set(stored.keys)
    size = vectors_file(home).stat().st_size
    assert (size - vector_file.HEADER.size) % vector_file.record_size(16) == 0
