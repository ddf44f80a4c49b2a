"""Lesson vectors in files: the main.vectors format, appends a crash tore, the folder they move with; the backfill.

What every store does with vectors (round trip, keep, another dimension, written once, backfilled, compaction,
concurrent writers) is the contract suite's, in tests/adapters/memory_contract/test_vectors.py.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from nightwatch.adapters.files import vector_file
from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.domain.memory.vectors import BackgroundBackfill
from nightwatch.domain.vectors import VectorTable, vector_key
from tests.adapters.memory_contract.memories import DEV, NOW, WordHashEmbedder, service, table


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


def test_dropping_every_key_removes_the_file(home: Path) -> None:
    store = FileMemoryStore(home)
    store.save_vectors("dev", "p", table(["one thing"]))
    store.save_vectors("dev", "p", VectorTable.empty(), keep=frozenset())
    assert not vectors_file(home).exists()


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


def test_the_vectors_file_is_archived_with_its_folder(home: Path) -> None:
    store = FileMemoryStore(home)
    service(store, WordHashEmbedder()).remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    move = store.archive("dev", NOW)
    assert move.target is not None
    assert (home / move.target / "memories" / "p" / "main.vectors").is_file()


def test_a_broken_encoder_leaves_memory_working_by_keywords(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    from nightwatch.adapters.encoder.embeddings import MiniLMEncoder

    broken = home / "model"
    broken.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        (broken / name).write_text("not a model")
    memory = service(FileMemoryStore(home), MiniLMEncoder(model_dir=broken))
    lesson = memory.remember(DEV, "p", "Pin the CI image to node 20.11 in every pipeline.")
    assert [hit.lesson.id for hit in memory.search(DEV, "p", "node pipeline")] == [lesson.id]
    assert memory.read(DEV, "p", "which node version?").lessons == (lesson,)
    assert any("keywords only" in record.getMessage() for record in caplog.records)
