"""Every MemoryStore moves a renamed persona's memory, archives a deleted one's, and undoes either."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import PurePosixPath

from nightwatch.domain.memory.ports import FolderMove, MemoryStore
from tests.adapters.memory_contract.memories import table

NOW = datetime(2026, 11, 21, 9, 30, 5, tzinfo=UTC)


def test_migrate_moves_every_project_and_restore_moves_them_back(store: MemoryStore) -> None:
    store.update("carlos", "p", lambda _: "lessons\n")
    store.update("carlos", "q", lambda _: "more\n")
    store.update("maya", "p", lambda _: "maya's\n")
    move = store.migrate("carlos", "charles", NOW)
    assert move == FolderMove(True, PurePosixPath("agents/carlos"), PurePosixPath("agents/charles"))
    assert store.projects("carlos") == []
    assert store.read("carlos", "p") == ""
    assert store.read("charles", "p") == "lessons\n"
    assert store.projects("charles") == ["p", "q"]
    assert store.read("maya", "p") == "maya's\n"
    store.restore(move)
    assert store.read("carlos", "p") == "lessons\n"
    assert store.projects("charles") == []


def test_the_previous_version_and_the_vectors_move_too(store: MemoryStore) -> None:
    store.update("carlos", "p", lambda _: "v1\n")
    store.replace_keeping_previous("carlos", "p", "v1\n", "v2\n")
    store.save_vectors("carlos", "p", table(["a lesson"]))
    store.migrate("carlos", "charles", NOW)
    assert len(store.read_vectors("charles", "p")) == 1
    assert len(store.read_vectors("carlos", "p")) == 0
    assert store.rollback("charles", "p") is True
    assert store.read("charles", "p") == "v1\n"


def test_migrate_without_memory_is_a_no_op(store: MemoryStore) -> None:
    assert store.migrate("ghost", "spirit", NOW) == FolderMove(moved=False)
    assert store.projects("spirit") == []
    store.restore(FolderMove(moved=False))


def test_migrate_onto_stray_memory_sets_it_aside_and_loses_nothing(store: MemoryStore) -> None:
    store.update("carlos", "p", lambda _: "carlos lessons\n")
    store.update("charles", "p", lambda _: "stray lessons\n")
    store.update("charles", "q", lambda _: "stray q\n")
    move = store.migrate("carlos", "charles", NOW)
    assert move.set_aside == PurePosixPath("agents/.archived/charles-20261121T093005Z")
    assert store.read("charles", "p") == "carlos lessons\n"
    assert store.projects("charles") == ["p"]
    store.restore(move)
    assert store.read("carlos", "p") == "carlos lessons\n"
    assert store.read("charles", "p") == "stray lessons\n"
    assert store.read("charles", "q") == "stray q\n"


def test_archive_uses_a_utc_timestamp_and_a_counter_when_it_is_taken(store: MemoryStore) -> None:
    store.update("maya", "p", lambda _: "first\n")
    first = store.archive("maya", NOW)
    assert first == FolderMove(
        True, PurePosixPath("agents/maya"), PurePosixPath("agents/.archived/maya-20261121T093005Z")
    )
    assert store.projects("maya") == []
    assert store.read("maya", "p") == ""
    store.update("maya", "p", lambda _: "second\n")
    second = store.archive("maya", NOW)
    assert second.target == PurePosixPath("agents/.archived/maya-20261121T093005Z-2")
    assert store.archive("maya", NOW) == FolderMove(moved=False)
    store.restore(second)
    assert store.read("maya", "p") == "second\n"
    store.archive("maya", NOW)  # the name -2 is free again
    store.restore(first)
    assert store.read("maya", "p") == "first\n"


def test_archive_timestamp_is_utc_even_for_another_zone(store: MemoryStore) -> None:
    store.update("maya", "p", lambda _: "x\n")
    local = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert store.archive("maya", local).target == PurePosixPath("agents/.archived/maya-20261121T093005Z")


def test_a_new_persona_with_an_archived_name_starts_empty_and_the_archive_keeps_its_vectors(
    store: MemoryStore,
) -> None:
    store.update("maya", "p", lambda _: "old\n")
    store.save_vectors("maya", "p", table(["old lesson"]))
    move = store.archive("maya", NOW)
    assert store.read("maya", "p") == ""
    assert len(store.read_vectors("maya", "p")) == 0
    store.update("maya", "p", lambda _: "new\n")
    store.archive("maya", NOW + timedelta(seconds=1))
    store.restore(move)
    assert store.read("maya", "p") == "old\n"
    assert len(store.read_vectors("maya", "p")) == 1
