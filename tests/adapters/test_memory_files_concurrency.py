"""Concurrent writers lose nothing (threads and processes), and a writer killed mid-write leaves the file whole."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, date, datetime
from pathlib import Path

from nightwatch.adapters.memory_files import FileMemoryStore
from nightwatch.domain.memory.format import lesson_id, new_document, parse
from nightwatch.domain.memory.service import MemoryPolicy, MemoryService
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.recall.ranking import Recall
from tests.fakes import FakeClock, ScriptedLLM

WRITERS = 50
REPO = Path(__file__).resolve().parents[2]
DEV = Persona(name="Dev", slug="dev", role="Implementer")


def lesson(n: int) -> str:
    return f"Writer{n} owns module_{n}.py and must review its migrations."


def service(home: Path) -> MemoryService:
    policy = MemoryPolicy(use_model_for_curation=False, max_lines=1000)
    store = FileMemoryStore(home)
    return MemoryService(store=store, llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy)


def test_fifty_threads_lose_no_lesson(home: Path) -> None:
    memory = service(home)
    start = threading.Barrier(WRITERS)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            start.wait()
            # each thread has its own store too, as separate adapters in one process would
            MemoryService(
                store=FileMemoryStore(home),
                llm=ScriptedLLM(),
                clock=FakeClock(),
                recall=Recall(),
                policy=memory.policy,
            ).remember(DEV, "p", lesson(n))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    texts = [item.text for item in memory.lessons(DEV, "p")]
    assert sorted(texts) == sorted(lesson(n) for n in range(WRITERS))


def append_as_separate_process(home: str, n: int, go: str) -> None:
    """Runs in a child process: wait for the start signal, then append one lesson through the real store."""
    text = lesson(n)
    day = date(2026, 11, 21)
    new = Lesson(id=lesson_id(text), text=text, recorded_at=datetime(2026, 11, 21, tzinfo=UTC), kind="manual")

    def change(current: str) -> str:
        doc = parse(current) if current else new_document("Dev · memory for p")
        return doc.append([new], day, "manual", None).render()

    store = FileMemoryStore(Path(home))
    while not os.path.exists(go):
        time.sleep(0.01)
    store.update("dev", "p", change)


def test_fifty_processes_lose_no_lesson(home: Path, tmp_path: Path) -> None:
    # Forked writers start in a fraction of what 50 fresh interpreters need here; each is a separate process that
    # opens its own lock file descriptor, which is what flock excludes on. (The killed-writer test below uses a
    # freshly started interpreter.)
    context = multiprocessing.get_context("fork")
    go = tmp_path / "go"
    children = [
        context.Process(target=append_as_separate_process, args=(str(home), n, str(go))) for n in range(WRITERS)
    ]
    for child in children:
        child.start()
    pids = {child.pid for child in children}
    try:
        go.write_text("go")
        for child in children:
            child.join(timeout=60)
        codes = [child.exitcode for child in children]
    finally:
        for child in children:
            if child.is_alive():
                child.kill()
                child.join()
            child.close()
    assert codes == [0] * WRITERS
    assert len(pids | {os.getpid()}) == WRITERS + 1
    texts = [item.text for item in service(home).lessons(DEV, "p")]
    assert sorted(texts) == sorted(lesson(n) for n in range(WRITERS))


KILLED = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from nightwatch.adapters.memory_files import FileMemoryStore

    home, marker = Path(sys.argv[1]), Path(sys.argv[2])

    def stuck_fsync(fd):
        marker.write_text("writing")  # the temp file is written; the replace has not happened yet
        time.sleep(60)

    os.fsync = stuck_fsync
    FileMemoryStore(home).update("dev", "p", lambda text: text + "- half-written lesson\\n" * 50_000)
    """
)


def test_a_writer_killed_mid_write_leaves_the_file_intact(home: Path, tmp_path: Path) -> None:
    store = FileMemoryStore(home)
    original = "# Dev · memory for p\n\n## 2026-11-21 · manual\n- Keep this lesson.\n"
    store.update("dev", "p", lambda _: original)
    marker = tmp_path / "marker"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(home), str(marker)], env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists(), "the writer never reached the write"
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert store.read("dev", "p") == original
    folder = home / "agents" / "dev" / "memories" / "p"
    assert any(name.endswith(".tmp") for name in os.listdir(folder))  # the crash left its temp file behind
    # The lock died with the writer: the next write goes through, sweeps the orphan, and keeps the old lesson.
    store.update("dev", "p", lambda text: text + "- Next lesson.\n")
    assert [item.text for item in parse(store.read("dev", "p")).live()] == ["Keep this lesson.", "Next lesson."]
    assert sorted(os.listdir(folder)) == ["main.md", "main.md.lock"]
