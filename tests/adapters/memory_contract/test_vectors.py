"""Every MemoryStore keeps each lesson's vector beside its memory; the memory service writes each one once."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.vectors import VectorTable, vector_key
from tests.adapters.memory_contract.conftest import Stores
from tests.adapters.memory_contract.memories import DEV, NOW, ManualBackfill, WordHashEmbedder, service, table
from tests.fakes import FakeClock, ScriptedLLM


def test_vectors_round_trip_and_only_new_keys_are_added(store: MemoryStore) -> None:
    assert len(store.read_vectors("dev", "p")) == 0
    first = table(["one thing", "two things"])
    store.save_vectors("dev", "p", first)
    store.save_vectors("dev", "p", table(["two things", "three things"]))
    stored = store.read_vectors("dev", "p")
    assert set(stored.keys) == {vector_key(text) for text in ("one thing", "two things", "three things")}
    assert stored.dimensions == 16
    for key in first.keys:
        assert np.array_equal(stored.matrix[stored.rows[key]], first.matrix[first.rows[key]])


def test_a_stored_vector_is_kept_not_overwritten(store: MemoryStore) -> None:
    key = vector_key("a lesson")
    store.save_vectors("dev", "p", VectorTable((key,), np.ones((1, 4), dtype=np.float32)))
    store.save_vectors("dev", "p", VectorTable((key,), np.zeros((1, 4), dtype=np.float32)))
    assert np.array_equal(store.read_vectors("dev", "p").matrix, np.ones((1, 4), dtype=np.float32))


def test_vectors_of_one_memory_are_not_another_memorys(store: MemoryStore) -> None:
    store.save_vectors("dev", "p", table(["only in p"]))
    assert len(store.read_vectors("dev", "q")) == 0
    assert len(store.read_vectors("maya", "p")) == 0


def test_keep_drops_the_rows_of_lessons_that_are_gone(store: MemoryStore) -> None:
    store.save_vectors("dev", "p", table(["old lesson", "kept lesson"]))
    store.save_vectors("dev", "p", table(["kept lesson", "new lesson"]), keep=frozenset({vector_key("kept lesson")}))
    assert set(store.read_vectors("dev", "p").keys) == {vector_key("kept lesson"), vector_key("new lesson")}
    store.save_vectors("dev", "p", table([]), keep=frozenset())
    assert len(store.read_vectors("dev", "p")) == 0


def test_saving_nothing_writes_nothing_and_vectors_alone_are_no_memory(store: MemoryStore) -> None:
    store.save_vectors("dev", "p", VectorTable.empty())
    assert len(store.read_vectors("dev", "p")) == 0
    store.save_vectors("dev", "q", table(["a lesson"]))
    assert store.projects("dev") == []
    assert store.read("dev", "q") == ""


@pytest.mark.parametrize("dimensions", [8, 16])
def test_vectors_of_another_dimension_are_replaced_not_mixed(store: MemoryStore, dimensions: int) -> None:
    other = VectorTable((vector_key("x"),), np.ones((1, dimensions), dtype=np.float32))
    store.save_vectors("dev", "p", other)
    store.save_vectors("dev", "p", table(["y"]))
    stored = store.read_vectors("dev", "p")
    assert stored.dimensions == 16
    assert vector_key("y") in stored
    assert (vector_key("x") in stored) == (dimensions == 16)


@pytest.mark.slow
def test_ten_thousand_vectors_round_trip(store: MemoryStore) -> None:
    texts = [f"lesson {n}" for n in range(10_000)]
    matrix = np.random.default_rng(3).normal(size=(len(texts), 384)).astype(np.float32)
    written = VectorTable.empty().with_texts(texts, matrix)
    store.save_vectors("dev", "p", written)
    stored = store.read_vectors("dev", "p")
    assert set(stored.keys) == set(written.keys)
    order = [written.rows[key] for key in stored.keys]
    assert np.array_equal(stored.matrix, written.matrix[order])


def test_a_lesson_is_embedded_once_when_written_and_never_by_a_read(stores: Stores) -> None:
    encoder = WordHashEmbedder()
    memory = service(stores.make(), encoder)
    memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    memory.remember(DEV, "p", "Run the migration dry-run against a production snapshot.")
    assert encoder.embedded.count("Pin the CI image to node 20.11 in every pipeline.") == 1
    written = len(encoder.embedded)
    fresh = service(stores.make(), encoder)  # a new process: the vectors come from the store
    block = fresh.read(DEV, "p", "node version for the pipeline")
    assert block.lessons
    assert encoder.embedded[written:] == ["node version for the pipeline"]
    assert len(fresh.store.read_vectors("dev", "p")) == 2


def test_a_lesson_written_without_a_vector_is_backfilled_not_embedded_by_the_read(stores: Stores) -> None:
    encoder = WordHashEmbedder()
    backfill = ManualBackfill()
    memory = service(stores.make(), encoder, backfill)
    memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    stores.make().update("dev", "p", lambda text: text + "- Rotate the deploy keys every quarter.\n")  # by hand
    before = len(encoder.embedded)
    memory.read(DEV, "p", "deploy keys")
    memory.read(DEV, "p", "deploy keys again")
    assert "Rotate the deploy keys every quarter." not in encoder.embedded[before:]
    assert backfill.requested == [("dev", "p")]  # once per version of the memory
    assert memory.backfill("dev", "p") == 1
    assert vector_key("Rotate the deploy keys every quarter.") in memory.store.read_vectors("dev", "p")
    assert memory.backfill("dev", "p") == 0


def test_vectors_follow_a_rename_and_an_archive(store: MemoryStore) -> None:
    service(store, WordHashEmbedder()).remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    store.migrate("dev", "devon", NOW)
    assert len(store.read_vectors("devon", "p")) == 1
    move = store.archive("devon", NOW)
    assert len(store.read_vectors("devon", "p")) == 0
    store.restore(move)
    assert len(store.read_vectors("devon", "p")) == 1


def test_a_compaction_embeds_the_lessons_it_wrote_and_lets_the_dropped_go(store: MemoryStore) -> None:
    llm = ScriptedLLM(default={Purpose.COMPACTION: "- Pin CI images and rotate deploy keys quarterly."})
    policy = MemoryPolicy(use_model_for_curation=False, compaction_target=1)
    memory = service(store, WordHashEmbedder(), policy=policy, llm=llm)
    memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    memory.remember(DEV, "p", "Rotate the deploy keys every quarter.")
    assert isinstance(memory.clock, FakeClock)
    memory.clock.advance(days=1)  # the next day: a model's compaction may not drop the newest lesson of its own day
    assert memory.compact(DEV, "p").compacted
    stored = store.read_vectors("dev", "p")
    assert set(stored.keys) == {vector_key("Pin CI images and rotate deploy keys quarterly.")}
    assert memory.rollback(DEV, "p")
    assert [lesson.text for lesson in memory.lessons(DEV, "p")] == [
        "Pin the CI image to node 20.11 in every pipeline.",
        "Rotate the deploy keys every quarter.",
    ]


def test_twenty_concurrent_writers_leave_a_vector_for_every_lesson(stores: Stores) -> None:
    writers = 20
    start = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            start.wait()
            # each writer is its own service and store, as separate processes would be
            memory = service(stores.make(), WordHashEmbedder())
            memory.remember(DEV, "p", f"Module_{n}.py needs review {n} times per release.")
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    lessons = service(stores.make(), WordHashEmbedder()).lessons(DEV, "p")
    assert len(lessons) == writers
    stored = stores.make().read_vectors("dev", "p")
    assert {vector_key(lesson.text) for lesson in lessons} <= set(stored.keys)
