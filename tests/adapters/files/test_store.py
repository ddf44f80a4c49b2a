"""FileMemoryStore on real temporary folders: the layout on disk, atomic writes, folders, links and hostile names.

What every MemoryStore does (read, update, rollback, moves, vectors, concurrency) is the contract suite's, in
tests/adapters/memory_contract/, which runs on this store too; this file checks what only files have.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import numpy as np
import pytest

from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.domain.errors import InvalidNameError, StorageError
from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.ports import FolderMove
from nightwatch.domain.models import Persona
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.vectors import VectorTable
from tests.fakes import FakeClock, ScriptedLLM

NOW = datetime(2026, 11, 21, 9, 30, 5, tzinfo=UTC)
HOSTILE = ["../../etc", "..", ".", "/abs/path", "a\x00b", "x" * 10_000, "mаya", "Maya", "a/b", "", " ", "-a", "a--b"]


def tree(root: Path) -> dict[str, str]:
    """Every path under root with its kind and content, to prove nothing changed."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(folder, name), root)] = "dir"
        for name in files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = Path(path).read_text(errors="replace")
    return found


@pytest.fixture
def store(home: Path) -> FileMemoryStore:
    return FileMemoryStore(home)


def memory_file(home: Path, persona: str = "carlos", project: str = "p") -> Path:
    return home / "agents" / persona / "memories" / project / "main.md"


def test_read_of_a_missing_file_creates_nothing(store: FileMemoryStore, home: Path) -> None:
    assert store.read("carlos", "p") == ""
    assert store.update("carlos", "p", lambda text: text) == ""
    assert store.rollback("carlos", "p") is False
    assert list(home.iterdir()) == []


def test_update_writes_the_file_at_the_documented_path(store: FileMemoryStore, home: Path) -> None:
    assert store.update("carlos", "night-watch", lambda text: text + "# Carlos\n") == "# Carlos\n"
    path = memory_file(home, project="night-watch")
    assert path.read_text() == "# Carlos\n"
    assert store.read("carlos", "night-watch") == "# Carlos\n"
    assert store.projects("carlos") == ["night-watch"]
    assert sorted(os.listdir(path.parent)) == ["main.md", "main.md.lock"]


def test_unchanged_text_is_not_rewritten(store: FileMemoryStore, home: Path) -> None:
    store.update("carlos", "p", lambda _: "same\n")
    path = memory_file(home)
    inode = path.stat().st_ino
    store.update("carlos", "p", lambda text: text)
    assert path.stat().st_ino == inode  # a write would have replaced the file


def test_a_failing_change_leaves_the_file_intact_and_no_temp_files(store: FileMemoryStore, home: Path) -> None:
    store.update("carlos", "p", lambda _: "original\n")

    def broken(text: str) -> str:
        raise RuntimeError("change failed half-way")

    with pytest.raises(RuntimeError):
        store.update("carlos", "p", broken)
    assert memory_file(home).read_text() == "original\n"
    assert sorted(os.listdir(memory_file(home).parent)) == ["main.md", "main.md.lock"]


def test_non_utf8_bytes_do_not_break_reading(store: FileMemoryStore, home: Path) -> None:
    path = memory_file(home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"# title\n- caf\xe9 lesson\n")
    assert "caf\ufffd lesson" in store.read("carlos", "p")


def test_a_compaction_keeps_the_previous_version_as_main_md_prev(store: FileMemoryStore, home: Path) -> None:
    store.update("carlos", "p", lambda _: "v1\n")
    assert store.replace_keeping_previous("carlos", "p", "v1\n", "v2\n") is True
    prev = memory_file(home).parent / "main.md.prev"
    assert prev.read_text() == "v1\n"
    assert store.rollback("carlos", "p") is True
    assert memory_file(home).read_text() == "v1\n"
    assert not prev.exists()


def test_a_rename_moves_the_folder_and_restore_moves_it_back(store: FileMemoryStore, home: Path) -> None:
    store.update("carlos", "p", lambda _: "lessons\n")
    move = store.migrate("carlos", "charles", NOW)
    assert not (home / "agents" / "carlos").exists()
    assert memory_file(home, "charles").read_text() == "lessons\n"
    store.restore(move)
    assert memory_file(home).read_text() == "lessons\n"
    assert not (home / "agents" / "charles").exists()
    assert store.migrate("ghost", "spirit", NOW) == FolderMove(moved=False)
    assert not (home / "agents" / "spirit").exists()


def test_a_stray_folder_is_set_aside_into_the_archive_folder(store: FileMemoryStore, home: Path) -> None:
    store.update("carlos", "p", lambda _: "carlos lessons\n")
    store.update("charles", "p", lambda _: "stray lessons\n")
    move = store.migrate("carlos", "charles", NOW)
    assert move.set_aside == PurePosixPath("agents/.archived/charles-20261121T093005Z")
    stray = home / "agents" / ".archived" / "charles-20261121T093005Z" / "memories" / "p" / "main.md"
    assert stray.read_text() == "stray lessons\n"
    store.restore(move)
    assert os.listdir(home / "agents" / ".archived") == []


def test_an_archive_is_a_folder_under_agents_archived(store: FileMemoryStore, home: Path) -> None:
    store.update("maya", "p", lambda _: "first\n")
    store.archive("maya", NOW)
    store.update("maya", "p", lambda _: "second\n")
    store.archive("maya", NOW)
    archived = home / "agents" / ".archived"
    assert (archived / "maya-20261121T093005Z" / "memories" / "p" / "main.md").read_text() == "first\n"
    assert (archived / "maya-20261121T093005Z-2" / "memories" / "p" / "main.md").read_text() == "second\n"
    assert not (home / "agents" / "maya").exists()


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_slugs_are_refused_and_nothing_changes(tmp_path: Path, bad: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root\n")
    store = FileMemoryStore(home)
    store.update("carlos", "p", lambda _: "safe\n")
    before = tree(tmp_path)
    calls = [
        lambda: store.read(bad, "p"),
        lambda: store.read("carlos", bad),
        lambda: store.update(bad, "p", lambda _: "x"),
        lambda: store.update("carlos", bad, lambda _: "x"),
        lambda: store.replace_keeping_previous(bad, "p", "", "x"),
        lambda: store.replace_keeping_previous("carlos", bad, "safe\n", "x"),
        lambda: store.rollback(bad, "p"),
        lambda: store.projects(bad),
        lambda: store.migrate(bad, "carlos", NOW),
        lambda: store.migrate("carlos", bad, NOW),
        lambda: store.archive(bad, NOW),
    ]
    for call in calls:
        with pytest.raises(InvalidNameError, match="not a valid slug"):
            call()
    assert tree(tmp_path) == before


def test_hostile_persona_and_project_names_through_the_service_touch_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    memory = MemoryService(
        store=FileMemoryStore(home),
        llm=ScriptedLLM(default={Purpose.REFLECTION: "- a lesson"}),
        clock=FakeClock(),
        recall=Recall(),
        policy=MemoryPolicy(use_model_for_curation=False),
    )
    for bad in HOSTILE:
        with pytest.raises(InvalidNameError):
            memory.remember(Persona(name="x", slug=bad, role="r"), "p", "A real lesson about deploys.")
        with pytest.raises(InvalidNameError):
            memory.remember(Persona(name="x", slug="x", role="r"), bad, "A real lesson about deploys.")
    assert tree(tmp_path) == {"home": "dir"}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "memories" / "p").mkdir(parents=True)
    (folder / "memories" / "p" / "main.md").write_text("secret\n")
    return folder


def test_symlinked_persona_folder_pointing_outside_is_refused(
    store: FileMemoryStore, home: Path, outside: Path, tmp_path: Path
) -> None:
    (home / "agents").mkdir()
    (home / "agents" / "evil").symlink_to(outside, target_is_directory=True)
    before = tree(tmp_path)
    for call in (
        lambda: store.read("evil", "p"),
        lambda: store.update("evil", "p", lambda _: "overwritten\n"),
        lambda: store.replace_keeping_previous("evil", "p", "secret\n", "x"),
        lambda: store.projects("evil"),
        lambda: store.migrate("evil", "good", NOW),
        lambda: store.archive("evil", NOW),
    ):
        with pytest.raises(StorageError, match=r"agents/evil in NIGHTWATCH_HOME .* is a symbolic link"):
            call()
    store.update("carlos", "p", lambda _: "mine\n")
    with pytest.raises(StorageError, match="Replace the link with the real file or folder"):
        store.migrate("carlos", "evil", NOW)
    assert (outside / "memories" / "p" / "main.md").read_text() == "secret\n"
    assert {k: v for k, v in tree(tmp_path).items() if k.startswith("outside")} == {
        k: v for k, v in before.items() if k.startswith("outside")
    }


def test_symlinked_agents_or_project_folder_is_refused(store: FileMemoryStore, home: Path, outside: Path) -> None:
    (home / "agents").symlink_to(outside, target_is_directory=True)
    with pytest.raises(StorageError, match="agents in NIGHTWATCH_HOME"):
        store.update("carlos", "p", lambda _: "x\n")
    (home / "agents").unlink()
    (home / "agents" / "dev" / "memories").mkdir(parents=True)
    (home / "agents" / "dev" / "memories" / "p").symlink_to(outside / "memories" / "p", target_is_directory=True)
    with pytest.raises(StorageError, match="agents/dev/memories/p in NIGHTWATCH_HOME"):
        store.read("dev", "p")
    assert (outside / "memories" / "p" / "main.md").read_text() == "secret\n"


def test_a_symlink_inside_the_root_is_refused_too(store: FileMemoryStore, home: Path) -> None:
    store.update("carlos", "p", lambda _: "shared\n")
    (home / "agents" / "alias").symlink_to(home / "agents" / "carlos", target_is_directory=True)
    with pytest.raises(StorageError, match=r"agents/alias .* is a symbolic link"):
        store.read("alias", "p")
    assert store.projects("carlos") == ["p"]


def _touching(store: FileMemoryStore) -> dict[str, list[Callable[[], object]]]:
    """The operations that use each file beside main.md."""
    table = VectorTable.empty().with_texts(["A lesson."], np.ones((1, 4), np.float32))
    return {
        "main.md": [lambda: store.read("carlos", "p"), lambda: store.update("carlos", "p", lambda t: t + "- A.\n")],
        "main.md.lock": [
            lambda: store.update("carlos", "p", lambda t: t + "- A.\n"),
            lambda: store.save_vectors("carlos", "p", table),
        ],
        "main.md.prev": [
            lambda: store.replace_keeping_previous("carlos", "p", "# Carlos\n", "# Carlos\n- Condensed.\n"),
            lambda: store.rollback("carlos", "p"),
        ],
        "main.vectors": [lambda: store.read_vectors("carlos", "p"), lambda: store.save_vectors("carlos", "p", table)],
        "main.index": [
            lambda: store.read_index("carlos", "p"),
            lambda: store.save_index("carlos", "p", lambda: {"a": np.zeros(2)}),
        ],
    }


@pytest.mark.parametrize("name", ["main.md", "main.md.lock", "main.md.prev", "main.vectors", "main.index"])
def test_a_memory_file_that_is_a_symlink_is_refused_and_its_target_untouched(
    store: FileMemoryStore, home: Path, outside: Path, name: str
) -> None:
    store.update("carlos", "p", lambda _: "# Carlos\n")
    target = outside / "memories" / "p" / "main.md"
    link = memory_file(home).parent / name
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    for call in _touching(store)[name]:
        with pytest.raises(StorageError, match=rf"agents/carlos/memories/p/{re.escape(name)} .* is a symbolic link"):
            call()
    assert target.read_text() == "secret\n"
    assert link.is_symlink()


def test_a_folder_where_the_memory_file_should_be_is_refused_by_name(store: FileMemoryStore, home: Path) -> None:
    memory_file(home, "dev").mkdir(parents=True)
    for call in (lambda: store.read("dev", "p"), lambda: store.update("dev", "p", lambda _: "x\n")):
        with pytest.raises(StorageError, match=r"agents/dev/memories/p/main\.md in NIGHTWATCH_HOME is a folder"):
            call()
    assert memory_file(home, "dev").is_dir()
    assert store.projects("dev") == []


def test_os_errors_become_storage_errors_that_say_what_to_do(store: FileMemoryStore, home: Path) -> None:
    (home / "agents").mkdir()
    (home / "agents" / "carlos").write_text("a file where a folder should be")
    with pytest.raises(StorageError, match="agents/carlos in NIGHTWATCH_HOME is a file where a folder should be"):
        store.update("carlos", "p", lambda _: "x\n")
    memory_file(home, "dev").parent.mkdir(parents=True)
    os.mkfifo(memory_file(home, "dev"))
    with pytest.raises(StorageError, match=r"agents/dev/memories/p/main\.md in NIGHTWATCH_HOME is not a regular file"):
        store.read("dev", "p")


def test_projects_ignores_folders_without_a_file_or_with_odd_names(store: FileMemoryStore, home: Path) -> None:
    store.update("carlos", "b", lambda _: "x\n")
    store.update("carlos", "a", lambda _: "x\n")
    (home / "agents" / "carlos" / "memories" / "empty").mkdir()
    (home / "agents" / "carlos" / "memories" / "Odd Name").mkdir()
    (home / "agents" / "carlos" / "memories" / "Odd Name" / "main.md").write_text("x")
    assert store.projects("carlos") == ["a", "b"]
