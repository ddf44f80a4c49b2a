"""Every MemoryStore: concurrent writers (threads and processes) lose nothing; a killed writer leaves a whole version.

Processes are forked (fifty fresh interpreters take far longer to start here); each builds its own store and, for
the database, its own engine, as another replica would. The parent closes its connections before forking.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import random
import threading
import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from nightwatch.domain.memory import MemoryPolicy
from nightwatch.domain.memory.format import lesson_id, new_document, parse
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.models import Lesson
from tests.adapters.memory_contract.conftest import Stores
from tests.adapters.memory_contract.memories import DEV, service
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # fifty threads, fifty processes, writers killed at random

THREADS = 50
PROCESSES = {"files": 50, "sqlite": 50, "postgres": 30}  # PostgreSQL: leave room under max_connections (100)
FORK = multiprocessing.get_context("fork")
POLICY = MemoryPolicy(use_model_for_curation=False, max_lines=1000)


def lesson(n: int) -> str:
    return f"Writer{n} owns module_{n}.py and must review its migrations."


def test_fifty_threads_with_a_store_each_lose_no_lesson(stores: Stores) -> None:
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            memory = service(stores.make(), policy=POLICY)  # its own store, as separate adapters would be
            start.wait()
            memory.remember(DEV, "p", lesson(n))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    texts = [item.text for item in service(stores.make(), policy=POLICY).lessons(DEV, "p")]
    assert sorted(texts) == sorted(lesson(n) for n in range(THREADS))


def append_as_separate_process(stores: Stores, n: int, go: str) -> None:
    """Runs in a child process: wait for the start signal, then append one lesson through its own store."""
    text = lesson(n)
    new = Lesson(id=lesson_id(text), text=text, recorded_at=datetime(2026, 11, 21, tzinfo=UTC), kind="manual")

    def change(current: str) -> str:
        doc = parse(current) if current else new_document("Dev · memory for p")
        return doc.append([new], date(2026, 11, 21), "manual", None).render()

    store = stores.make()
    wait_until(lambda: os.path.exists(go), "the start signal", timeout=60, interval=0.01)
    try:
        store.update("dev", "p", change)
    finally:
        stores.close()


def test_many_processes_lose_no_lesson_and_race_the_first_write_safely(stores: Stores, tmp_path: Path) -> None:
    count = PROCESSES[stores.kind]
    go = tmp_path / "go"
    stores.close()
    children = [FORK.Process(target=append_as_separate_process, args=(stores, n, str(go))) for n in range(count)]
    for child in children:
        child.start()
    try:
        go.write_text("go")  # every child starts on a memory that does not exist yet: all race to create it
        for child in children:
            child.join(timeout=120)
        codes = [child.exitcode for child in children]
    finally:
        for child in children:
            if child.is_alive():
                child.kill()
                child.join()
            child.close()
    assert codes == [0] * count
    texts = [item.text for item in service(stores.make(), policy=POLICY).lessons(DEV, "p")]
    assert sorted(texts) == sorted(lesson(n) for n in range(count))


def version(number: int) -> str:
    """A version whose every line says which version it belongs to, so a mix of two would show."""
    return f"# v{number}\n" + "".join(f"- v{number} line {line}\n" for line in range(2_000))


def holds_version(store: MemoryStore, at_least: int) -> bool:
    """Whether the store holds version `at_least` or a later one (its first line is `# vN`)."""
    return int(store.read("dev", "p").split("\n", 1)[0].removeprefix("# v")) >= at_least


def write_versions_until_killed(stores: Stores, first: int) -> None:
    store = stores.make()
    for number in range(first, first + 10_000):
        store.update("dev", "p", lambda _, number=number: version(number))


def test_a_writer_killed_at_any_moment_leaves_one_whole_version(stores: Stores) -> None:
    stores.make().update("dev", "p", lambda _: version(1))
    number = 1
    for _ in range(4):  # four kills, each at a random moment of a write (one takes about 0.1 s here)
        stores.close()
        child = FORK.Process(target=write_versions_until_killed, args=(stores, number + 1))
        child.start()
        store = stores.make()
        try:
            written = functools.partial(holds_version, store, number + 2)
            wait_until(written, "the writer to write", timeout=60, interval=0.002)
            time.sleep(random.uniform(0, 0.15))
            child.kill()
            child.join()
        finally:
            if child.is_alive():
                child.kill()
                child.join()
            child.close()
        text = store.read("dev", "p")
        number = int(text.split("\n", 1)[0].removeprefix("# v"))
        assert text == version(number)
    # The lock died with the writer: the next write goes through and keeps what was there.
    assert store.update("dev", "p", lambda current: current + "- next\n") == version(number) + "- next\n"
