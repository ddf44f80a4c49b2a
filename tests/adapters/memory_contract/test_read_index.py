"""A store may keep a memory's read index (files do) or not (the database); reads answer the same either way."""

from __future__ import annotations

import numpy as np

from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.recall import Scored
from tests.adapters.memory_contract.conftest import Stores
from tests.adapters.memory_contract.memories import DEV, WordHashEmbedder, service

LESSONS = (
    "Pin the CI image to node 20.11 in every pipeline.",
    "Schema migrations need a rollback script reviewed by the DBA.",
    "The search index rebuild takes 40 minutes; run it at night.",
)


def hits(found: list[Scored]) -> list[tuple[str, float]]:
    return [(hit.lesson.id, hit.score) for hit in found]


def test_a_first_read_in_a_new_process_answers_the_same_whether_or_not_an_index_is_kept(stores: Stores) -> None:
    writer = service(stores.make(), WordHashEmbedder())
    for lesson in LESSONS:
        writer.remember(DEV, "p", lesson)
    first, second = (service(stores.make(), WordHashEmbedder()) for _ in range(2))
    block = first.read(DEV, "p", "rollback script for migrations")
    assert block.lessons
    assert second.read(DEV, "p", "rollback script for migrations") == block
    assert hits(second.search(DEV, "p", "search index")) == hits(first.search(DEV, "p", "search index"))
    kept = stores.make().read_index("dev", "p")
    assert bool(kept) == (stores.kind == "files")


def test_an_index_is_built_only_by_a_store_that_keeps_it(stores: Stores, store: MemoryStore) -> None:
    store.update("dev", "p", lambda _: "# Dev\n- A lesson.\n")
    built: list[bool] = []

    def arrays() -> dict[str, np.ndarray]:
        built.append(True)
        return {"a": np.arange(3)}

    store.save_index("dev", "p", arrays)
    assert built == ([True] if stores.kind == "files" else [])
    kept = store.read_index("dev", "p")
    assert [(name, array.tolist()) for name, array in kept.items()] == ([("a", [0, 1, 2])] if built else [])
    assert store.read_index("dev", "q") == {}
