"""main.index beside main.md: a read gives the same answer with a fresh, stale, damaged or no read index.

A fresh index spares a new process the parse; any other is ignored, never crashes a read, and is replaced by the
read that parsed. It lives in the memory's folder, so it follows renames and archives, and costs nothing to lose.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from nightwatch.adapters.files import index_file
from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.domain.errors import StorageError
from nightwatch.domain.memory.read_index import ReadIndex, text_digest
from nightwatch.domain.memory.service import MemoryService
from nightwatch.domain.recall import KeywordWeights
from nightwatch.domain.vectors import VectorTable
from tests.adapters.memory_contract.memories import DEV, NOW, WordHashEmbedder, service

SUBJECTS = ("the auth service", "session cookies", "schema migrations", "the search index", "feature flags")
OBJECTS = ("token refresh", "a rollback script", "p95 latency", "idempotency keys", "backoff with jitter")
QUERIES = (
    ("token refresh in auth_service.py", ""),
    ("rollback script", "we argued about migrations and the search index for an hour"),
    ("Größe", ""),
    ("", ""),
    ("nothing here matches at all", ""),
)


def memory_text(lessons: int = 240, seed: int = 5) -> str:
    """Dated sections of 1-3 lessons in every form the file takes: pins, counts, authors, struck and superseded."""
    rng = random.Random(seed)
    lines = ["# Dev · memory for p", "", "- An undated lesson: check the auth service first.", ""]
    marks = ("- ", "* ", "1. ", "  - ", "- 📌 ")
    for number in range(lessons):
        if number % 3 == 0:
            lines += ["", f"## 2026-{1 + number // 60:02d}-{1 + number % 28:02d} · deliberation · https://x/p{number}"]
        text = f"{rng.choice(SUBJECTS).capitalize()} needs {rng.choice(OBJECTS)}; see NW-{number}."
        comment = rng.choice(("", " <!-- seen:3 -->", " <!-- injected:4 by:U1 -->", ""))
        lines.append(f"{rng.choice(marks)}{text}{comment}")
        if number % 41 == 0:
            lines.append(f"- ~~{text} (old)~~")
            lines.append("a line a person typed that is not a lesson")
    lines += ["", "## Superseded", "- ~~Retries hide flakiness.~~ <!-- superseded-by:1a2b3c4d on:2026-02-01 -->"]
    lines.append("- Größe: Unicode survives in a lesson.")
    return "\n".join(lines) + "\n"


def index_path(home: Path) -> Path:
    return home / "agents" / "dev" / "memories" / "p" / "main.index"


def new_process(home: Path) -> MemoryService:
    """A memory service as a new process has it: nothing cached, meaning on."""
    return service(FileMemoryStore(home), WordHashEmbedder())


def answers(memory: MemoryService) -> list[object]:
    """Everything a read can tell: blocks, search hits with scores, lessons, history, lines not understood."""
    found: list[object] = [memory.read(DEV, "p", topic, thread) for topic, thread in QUERIES]
    for topic, _ in QUERIES:
        found.append([(hit.lesson, hit.score, hit.parts) for hit in memory.search(DEV, "p", topic, 20)])
    found += [memory.lessons(DEV, "p"), memory.history(DEV, "p"), memory.unread_lines(DEV, "p")]
    return found


@pytest.fixture
def memory(home: Path) -> str:
    """A memory of 240 lessons with a stored vector for all but a few (those are scored on keywords)."""
    text = memory_text()
    store = FileMemoryStore(home)
    store.update("dev", "p", lambda _: text)
    texts = [lesson.text for lesson in new_process(home).lessons(DEV, "p")]
    kept = [t for i, t in enumerate(texts) if i % 50 != 7]
    store.save_vectors("dev", "p", VectorTable.empty().with_texts(kept, WordHashEmbedder().embed(kept)))
    return text


def made_for(home: Path) -> str | None:
    """The digest of the text the index on disk was made for (None when there is no usable one)."""
    arrays = index_file.decode(index_path(home).read_bytes()) if index_path(home).exists() else {}
    return ReadIndex.from_arrays(arrays, KeywordWeights()).digest if arrays else None


def flip_bytes(data: bytes) -> bytes:
    rng = random.Random(len(data))
    damaged = bytearray(data)
    for at in rng.sample(range(len(damaged)), 5):
        damaged[at] ^= 0x5A
    return bytes(damaged)


STATES: dict[str, Callable[[bytes], bytes | None]] = {
    "none": lambda fresh: None,
    "fresh": lambda fresh: fresh,
    "empty": lambda fresh: b"",
    "truncated": lambda fresh: fresh[: len(fresh) // 2],
    "cut at the end": lambda fresh: fresh[:-1],
    "bytes flipped": flip_bytes,
    "garbage": lambda fresh: b"not an index at all\n" * 100,
    "another format": lambda fresh: index_file.encode({"digest": np.arange(3)}),
}


@pytest.mark.parametrize("state", [*STATES, "stale"])
def test_a_read_answers_the_same_with_a_fresh_stale_damaged_or_no_index(home: Path, memory: str, state: str) -> None:
    path = index_path(home)
    new_process(home).read(DEV, "p", "anything")
    fresh = path.read_bytes()
    path.unlink()
    expected = answers(new_process(home))  # no index: the text parsed, as before read indexes existed
    if state == "stale":  # made for the text before a hand edit
        FileMemoryStore(home).update("dev", "p", lambda text: text.replace("p95 latency", "p99 latency", 1))
        new_process(home).read(DEV, "p", "anything")
        FileMemoryStore(home).update("dev", "p", lambda _: memory)
        assert made_for(home) not in (None, text_digest(memory))
    else:
        path.unlink(missing_ok=True)
        state_bytes = STATES[state](fresh)
        if state_bytes is not None:
            path.write_bytes(state_bytes)
    assert answers(new_process(home)) == expected
    assert made_for(home) == text_digest(memory)  # a read that had to parse left a fresh index behind


def test_a_fresh_index_is_used_as_it_is(home: Path, memory: str) -> None:
    first = new_process(home).read(DEV, "p", "token refresh")
    stamp = index_path(home).stat().st_mtime_ns
    time.sleep(0.01)
    assert new_process(home).read(DEV, "p", "token refresh") == first
    assert index_path(home).stat().st_mtime_ns == stamp  # read, not made again


@pytest.mark.slow
def test_random_damage_to_the_index_never_breaks_a_read(home: Path, memory: str) -> None:
    new_process(home).read(DEV, "p", "anything")
    fresh = index_path(home).read_bytes()
    expected = new_process(home).read(DEV, "p", "rollback script")
    rng = random.Random(11)
    for _ in range(60):
        damaged = bytearray(fresh)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        index_path(home).write_bytes(bytes(damaged[: rng.choice((len(damaged), rng.randrange(len(damaged))))]))
        assert new_process(home).read(DEV, "p", "rollback script") == expected


def test_decoding_damaged_bytes_gives_no_arrays_never_an_error() -> None:
    fresh = index_file.encode({"digest": np.array(b"a" * 64, dtype="S64"), "docs": np.arange(500, dtype=np.int32)})
    rng = random.Random(3)
    for _ in range(2000):
        damaged = bytearray(fresh)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        arrays = index_file.decode(bytes(damaged))
        for name in arrays:
            try:
                array = arrays[name]
            except ValueError:
                continue  # damaged: the domain takes it as no index
            assert isinstance(array, np.ndarray)
            assert array.dtype != object
    assert index_file.decode(index_file.encode({})) == {}
    with pytest.raises(ValueError, match="pickle"):
        index_file.encode({"objects": np.array([{"a": 1}], dtype=object)})


def test_a_write_leaves_the_index_stale_and_the_next_read_replaces_it(home: Path, memory: str) -> None:
    new_process(home).read(DEV, "p", "anything")
    new_process(home).remember(DEV, "p", "The search index rebuild takes 40 minutes; schedule it at night.")
    text = FileMemoryStore(home).read("dev", "p")
    assert made_for(home) == text_digest(memory)
    block = new_process(home).read(DEV, "p", "search index rebuild")
    assert "40 minutes" in block.text
    assert made_for(home) == text_digest(text)


def test_compaction_and_rollback_leave_the_index_stale_and_reads_right(home: Path, memory: str) -> None:
    store = FileMemoryStore(home)
    new_process(home).read(DEV, "p", "anything")
    condensed = "# Dev · memory for p\n\n## 2026-11-20 · compaction\n- Session cookies need token refresh.\n"
    assert store.replace_keeping_previous("dev", "p", memory, condensed)
    assert [lesson.text for lesson in new_process(home).read(DEV, "p", "token refresh").lessons] == [
        "Session cookies need token refresh."
    ]
    assert made_for(home) == text_digest(condensed)
    assert store.rollback("dev", "p")
    index_path(home).unlink()
    expected = new_process(home).read(DEV, "p", "token refresh")
    new_process(home).read(DEV, "p", "anything")
    store.replace_keeping_previous("dev", "p", memory, condensed)
    store.rollback("dev", "p")
    assert new_process(home).read(DEV, "p", "token refresh") == expected


def test_the_index_follows_a_rename_and_is_used_there(home: Path, memory: str) -> None:
    store = FileMemoryStore(home)
    new_process(home).read(DEV, "p", "anything")
    store.migrate("dev", "devon", NOW)
    moved = home / "agents" / "devon" / "memories" / "p" / "main.index"
    stamp = moved.stat().st_mtime_ns
    renamed = DEV.__class__(name="Devon", slug="devon", role=DEV.role)
    assert new_process(home).read(renamed, "p", "token refresh").lessons
    assert moved.stat().st_mtime_ns == stamp
    archived = store.archive("devon", NOW)
    assert archived.target is not None
    assert (home / archived.target / "memories" / "p" / "main.index").is_file()


def test_an_index_is_never_kept_where_the_memory_folder_is_gone(home: Path) -> None:
    store = FileMemoryStore(home)
    store.save_index("dev", "p", lambda: {"a": np.zeros(1)})
    assert list(home.iterdir()) == []


def test_a_folder_where_the_index_should_be_is_refused_by_name(home: Path, memory: str) -> None:
    index_path(home).mkdir()
    with pytest.raises(StorageError, match=r"agents/dev/memories/p/main\.index in NIGHTWATCH_HOME is a folder"):
        new_process(home).read(DEV, "p", "anything")


def test_the_index_is_written_atomically_and_crashed_writes_are_swept_once_old(home: Path, memory: str) -> None:
    folder = index_path(home).parent
    old, young = folder / ".main.cache.old.tmp", folder / ".main.cache.young.tmp"
    old.write_bytes(b"x")
    young.write_bytes(b"x")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    new_process(home).remember(DEV, "p", "Idempotency keys expire after 24 hours in the payments API.")
    assert not old.exists()
    assert young.exists()  # may be a live read's, which takes no lock
    new_process(home).read(DEV, "p", "anything")
    assert sorted(name for name in os.listdir(folder) if name.startswith(".")) == [".main.cache.young.tmp"]


def test_a_read_index_holds_what_the_text_gives(home: Path, memory: str) -> None:
    new_process(home).read(DEV, "p", "anything")
    index = ReadIndex.from_arrays(index_file.decode(index_path(home).read_bytes()), KeywordWeights())
    assert index.fits(memory, text_digest(memory))
    assert index.ids.astype("U8").tolist() == [lesson.id for lesson in new_process(home).lessons(DEV, "p")]


@pytest.mark.slow
def test_services_reading_in_threads_while_another_writes_never_fail_and_end_right(home: Path, memory: str) -> None:
    """Meaning off: a reader that saw a lesson before its writer stored its vector waits for a backfill by design."""
    errors: list[BaseException] = []
    readers = [service(FileMemoryStore(home)) for _ in range(3)]
    stop = threading.Event()

    def read(memory_service: MemoryService) -> None:
        while not stop.is_set():
            try:
                memory_service.read(DEV, "p", "token refresh in auth_service.py")
            except BaseException as err:  # any failure fails the test
                errors.append(err)

    threads = [threading.Thread(target=read, args=(reader,)) for reader in readers for _ in range(2)]
    for thread in threads:
        thread.start()
    writer = new_process(home)
    for number in range(8):
        writer.remember(DEV, "p", f"Token refresh number {number} must retry with backoff in auth_service.py.")
    stop.set()
    for thread in threads:
        thread.join()
    assert errors == []
    expected = service(FileMemoryStore(home)).read(DEV, "p", "token refresh in auth_service.py")
    index_path(home).unlink()
    assert service(FileMemoryStore(home)).read(DEV, "p", "token refresh in auth_service.py") == expected
    assert all(reader.read(DEV, "p", "token refresh in auth_service.py") == expected for reader in readers)
