"""Every store: writes racing a rename or a delete of their persona lose no lesson that said "Remembered".

Fifty writers (forked processes, as fifty `nightwatch memory add` would be; on PostgreSQL 25 processes of two threads,
to stay under max_connections) each build the app from its wiring, resolve Maya, and wait; then all write at once,
and once a third of them have answered, Maya is renamed (or deleted). A write that said "Remembered" must be in
Mayanew's memory (or in the archive), one that did not must have said MemoryMovedError, nothing may sit under the old
slug, and a persona created later with the old name starts empty. A write that arrives after the rename, by the
persona resolved before it, is refused loudly and not kept for a retry.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

import pytest
from injector import Injector
from sqlalchemy import Engine, select

from nightwatch.adapters.db.schema import memory_documents
from nightwatch.config import Settings
from nightwatch.domain.errors import MemoryMovedError, NightWatchError
from nightwatch.domain.memory import MemoryService
from nightwatch.domain.memory.format import parse
from nightwatch.domain.memory.ports import FolderMove, PendingLessons
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaDraft, PersonaService
from nightwatch.startup import StartUp
from nightwatch.wiring import build_injector
from tests.adapters.memory_contract.conftest import Stores

WRITERS = 50
PROCESSES = {"files": 50, "sqlite": 50, "postgres": 25}  # PostgreSQL: two writers a process, one engine each
PROJECT = "night-watch"
FORK = multiprocessing.get_context("fork")
TIMEOUT = 120.0
STAGGER = 0.03  # seconds between one writer's start and the next's: writes arrive before, during and after a move


def lesson(n: int) -> str:
    return f"Writer{n} owns module_{n}.py and must review its migrations."


def settings_for(stores: Stores) -> Settings:
    """The app's settings on this store: files (personas in SQLite under the home) or the database at its URL."""
    env = {"NIGHTWATCH_HOME": str(stores.home), "NIGHTWATCH_LLM": "offline", "NIGHTWATCH_RECALL_DENSE": "off"}
    if stores.url is not None:
        env |= {"DATABASE_URL": stores.url, "NIGHTWATCH_MEMORY_STORE": "database"}
    return Settings.from_env(env)


def write_when_told(settings: Settings, numbers: list[int], folder: Path) -> None:
    """Runs in a child: build the app, resolve Maya, say ready, wait for go, then remember one lesson a thread."""
    container = build_injector(settings)
    try:
        maya, memory = container.get(PersonaService).get("maya"), container.get(MemoryService)
        threads = [threading.Thread(target=remember, args=(memory, maya, n, folder)) for n in numbers]
        for n in numbers:
            (folder / f"ready-{n}").touch()
        while not (folder / "go").exists():
            time.sleep(0.005)
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        container.get(Engine).dispose()


def remember(memory: MemoryService, maya: Persona, n: int, folder: Path) -> None:
    """What `nightwatch memory add` would have printed, written to said-<n>; writer n starts n steps after go."""
    time.sleep(n * STAGGER)
    try:
        said = f"Remembered {memory.remember(maya, PROJECT, lesson(n), author='cli').id}"
    except NightWatchError as err:
        said = f"{type(err).__name__}: {err}"
    (folder / f"said-{n}.tmp").write_text(said, encoding="utf-8")
    os.replace(folder / f"said-{n}.tmp", folder / f"said-{n}")


def count(folder: Path, prefix: str) -> int:
    return sum(name.startswith(prefix) and not name.endswith(".tmp") for name in os.listdir(folder))


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


@pytest.fixture
def app(stores: Stores) -> Iterator[Injector]:
    """The app on this store, started (schema, default personas), its connections closed again for the forks."""
    container = build_injector(settings_for(stores))
    container.get(StartUp).run()
    container.get(Engine).dispose()
    stores.close()
    try:
        yield container
    finally:
        container.get(Engine).dispose()


def race(stores: Stores, app: Injector, tmp_path: Path, move: Callable[[], object]) -> dict[int, str]:
    """Start the writers, let a third of them answer, `move` Maya, and return what each writer said."""
    folder = tmp_path / "race"
    folder.mkdir()
    processes = PROCESSES[stores.kind]
    groups = [list(range(WRITERS))[start::processes] for start in range(processes)]
    children = [FORK.Process(target=write_when_told, args=(app.get(Settings), group, folder)) for group in groups]
    for child in children:
        child.start()
    try:
        wait_until(lambda: count(folder, "ready-") == WRITERS, "the writers to resolve Maya")
        (folder / "go").touch()
        wait_until(lambda: count(folder, "said-") >= WRITERS // 3, "a third of the writers to answer")
        move()
        for child in children:
            child.join(TIMEOUT)
        codes = [child.exitcode for child in children]
    finally:
        for child in children:
            if child.is_alive():
                child.kill()
                child.join()
            child.close()
    assert codes == [0] * processes
    said = {n: (folder / f"said-{n}").read_text(encoding="utf-8") for n in range(WRITERS)}
    refused = {n: text for n, text in said.items() if not text.startswith("Remembered ")}
    assert all(text.startswith("MemoryMovedError: ") and lesson(n) in text for n, text in refused.items()), refused
    return said


def remembered(said: dict[int, str]) -> set[str]:
    return {lesson(n) for n, text in said.items() if text.startswith("Remembered ")}


def nothing_left_under_maya(stores: Stores, app: Injector, old_maya: Persona) -> None:
    """No memory, no row, no folder and no kept lesson under `maya`; a late write by the old Maya is refused."""
    memory = app.get(MemoryService)
    with pytest.raises(MemoryMovedError, match=r"renamed or deleted.*Not remembered: 'A late lesson"):
        memory.remember(old_maya, PROJECT, "A late lesson about webhook retries and their backoff.")
    assert memory.store.projects("maya") == []
    assert app.get(PendingLessons).waiting() == []
    if stores.url is None:
        assert not (stores.home / "agents" / "maya").exists()
    else:
        with stores.engine().connect() as conn:
            owners = conn.execute(select(memory_documents.c.owner).where(memory_documents.c.owner == "maya"))
            assert owners.all() == []


def a_new_maya_starts_empty(app: Injector) -> None:
    personas, memory = app.get(PersonaService), app.get(MemoryService)
    created = personas.create(PersonaDraft(name="Maya", role="Security reviewer"))
    assert created.persona is not None
    assert "found memory already" not in created.message
    assert memory.projects(created.persona) == []
    assert memory.lessons(created.persona, PROJECT) == []
    memory.remember(created.persona, PROJECT, "Rotate the staging deploy key after every offboarding.")
    assert [item.text for item in memory.lessons(created.persona, PROJECT)] == [
        "Rotate the staging deploy key after every offboarding."
    ]


def test_fifty_writes_racing_a_rename_all_land_under_the_new_name(
    stores: Stores, app: Injector, tmp_path: Path
) -> None:
    personas, memory = app.get(PersonaService), app.get(MemoryService)
    old_maya = personas.get("maya")
    said = race(stores, app, tmp_path, lambda: personas.rename("maya", "Mayanew"))
    assert remembered(said)  # a third answered before the rename: at least those said "Remembered"
    mayanew = personas.get("Mayanew")
    assert {item.text for item in memory.lessons(mayanew, PROJECT)} == remembered(said)
    nothing_left_under_maya(stores, app, old_maya)
    a_new_maya_starts_empty(app)
    assert {item.text for item in memory.lessons(mayanew, PROJECT)} == remembered(said)


def test_fifty_writes_racing_a_delete_all_land_in_the_archive(stores: Stores, app: Injector, tmp_path: Path) -> None:
    personas = app.get(PersonaService)
    old_maya = personas.get("maya")
    moves: list[FolderMove | None] = []
    said = race(stores, app, tmp_path, lambda: moves.append(personas.delete("maya").move))
    assert remembered(said)
    [move] = moves
    assert move is not None
    assert move.target is not None
    assert {item.text for item in parse(archived_text(stores, move.target)).live()} == remembered(said)
    nothing_left_under_maya(stores, app, old_maya)
    a_new_maya_starts_empty(app)


def archived_text(stores: Stores, target: PurePosixPath) -> str:
    """The text of the archived memory of PROJECT: a file under agents/.archived/, or the row its owner names."""
    if stores.url is None:
        return (stores.home / target / "memories" / PROJECT / "main.md").read_text(encoding="utf-8")
    owner = target.relative_to("agents").as_posix()
    query = select(memory_documents.c.text).where(
        memory_documents.c.owner == owner, memory_documents.c.project == PROJECT
    )
    with stores.engine().connect() as conn:
        return str(conn.execute(query).scalar_one())
