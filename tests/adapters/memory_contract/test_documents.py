"""Every MemoryStore reads, updates, replaces-keeping-previous and rolls back one document the same way."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nightwatch.domain.errors import InvalidNameError
from nightwatch.domain.memory.ports import MemoryStore
from tests.adapters.memory_contract.conftest import Stores
from tests.adapters.secrets.secret_corpus import ALNUM, UPPER_DIGITS, fake

HOSTILE = ["../../etc", "..", ".", "/abs/path", "a\x00b", "x" * 10_000, "mаya", "Maya", "a/b", "", " ", "-a", "a--b"]
GITHUB = f"ghp_{fake(ALNUM, 36)}"
AWS = f"AKIA{fake(UPPER_DIGITS, 16)}"


def test_a_missing_document_reads_empty_and_an_empty_update_creates_nothing(store: MemoryStore) -> None:
    assert store.read("carlos", "p") == ""
    assert store.update("carlos", "p", lambda text: text) == ""
    assert store.projects("carlos") == []
    assert store.rollback("carlos", "p") is False


def test_update_writes_and_returns_the_new_text(store: MemoryStore) -> None:
    assert store.update("carlos", "night-watch", lambda text: text + "# Carlos\n") == "# Carlos\n"
    assert store.update("carlos", "night-watch", lambda text: text + "- A lesson.\n") == "# Carlos\n- A lesson.\n"
    assert store.read("carlos", "night-watch") == "# Carlos\n- A lesson.\n"
    assert store.projects("carlos") == ["night-watch"]
    assert store.read("carlos", "other") == ""
    assert store.read("maya", "night-watch") == ""


def test_another_store_over_the_same_memory_sees_every_write(stores: Stores) -> None:
    first, second = stores.make(), stores.make()
    first.update("carlos", "p", lambda _: "v1\n")
    assert second.read("carlos", "p") == "v1\n"
    second.update("carlos", "p", lambda text: text + "v2\n")
    assert first.read("carlos", "p") == "v1\nv2\n"


def test_a_failing_change_leaves_the_text_as_it_was(store: MemoryStore) -> None:
    store.update("carlos", "p", lambda _: "original\n")

    def broken(text: str) -> str:
        raise RuntimeError("change failed half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        store.update("carlos", "p", broken)
    assert store.read("carlos", "p") == "original\n"
    store.update("carlos", "p", lambda text: text + "next\n")  # the lock was let go
    assert store.read("carlos", "p") == "original\nnext\n"


def test_a_change_is_applied_to_the_latest_text(stores: Stores) -> None:
    """The change sees what another store wrote after this one last read: nothing is lost by a stale copy."""
    mine, theirs = stores.make(), stores.make()
    mine.update("carlos", "p", lambda _: "a\n")
    assert mine.read("carlos", "p") == "a\n"
    theirs.update("carlos", "p", lambda text: text + "b\n")
    assert mine.update("carlos", "p", lambda text: text + "c\n") == "a\nb\nc\n"


def test_projects_are_listed_in_order_per_persona(store: MemoryStore) -> None:
    for project in ("billing", "api", "night-watch"):
        store.update("carlos", project, lambda _, project=project: f"# {project}\n")
    store.update("maya", "zeta", lambda _: "# zeta\n")
    assert store.projects("carlos") == ["api", "billing", "night-watch"]
    assert store.projects("maya") == ["zeta"]
    assert store.projects("priya") == []


def test_replace_keeping_previous_and_rollback(store: MemoryStore) -> None:
    store.update("carlos", "p", lambda _: "v1\n")
    assert store.replace_keeping_previous("carlos", "p", "not what is there", "v2\n") is False
    assert store.read("carlos", "p") == "v1\n"
    assert store.rollback("carlos", "p") is False  # a refused replace kept nothing
    assert store.replace_keeping_previous("carlos", "p", "v1\n", "v2\n") is True
    assert store.read("carlos", "p") == "v2\n"
    store.update("carlos", "p", lambda text: text + "- written after the compaction\n")
    assert store.rollback("carlos", "p") is True
    assert store.read("carlos", "p") == "v1\n"
    assert store.rollback("carlos", "p") is False  # one level: the previous version is used up
    assert store.rollback("nobody", "p") is False


def test_a_second_compaction_keeps_only_the_version_just_before_it(store: MemoryStore) -> None:
    store.update("carlos", "p", lambda _: "v1\n")
    assert store.replace_keeping_previous("carlos", "p", "v1\n", "v2\n")
    assert store.replace_keeping_previous("carlos", "p", "v2\n", "v3\n")
    assert store.rollback("carlos", "p")
    assert store.read("carlos", "p") == "v2\n"


def test_replace_keeping_previous_on_a_missing_document(store: MemoryStore) -> None:
    assert store.replace_keeping_previous("carlos", "p", "", "# Carlos\n") is True
    assert store.read("carlos", "p") == "# Carlos\n"
    assert store.rollback("carlos", "p") is True
    assert store.read("carlos", "p") == ""


@pytest.mark.slow
def test_unicode_and_long_text_round_trip(store: MemoryStore) -> None:
    text = "# Maya · memory for p\n\n## 2026-11-21 · manual\n- Ümlaut, emoji 🦉, tab\there.\n" + "- x\n" * 20_000
    store.update("maya", "p", lambda _: text)
    assert store.read("maya", "p") == text


def test_new_lines_are_written_redacted_and_the_store_returns_what_it_wrote(store: MemoryStore) -> None:
    written = store.update("maya", "demo", lambda text: f"# Maya · memory for demo\n\n- Revoke {GITHUB} today.\n")
    assert written == "# Maya · memory for demo\n\n- Revoke [redacted github token] today.\n"
    assert store.read("maya", "demo") == written
    assert store.replace_keeping_previous("maya", "demo", written, f"{written}- {AWS} is public.\n")
    assert store.read("maya", "demo").endswith("- [redacted aws access key] is public.\n")


def test_the_location_names_the_persona_and_the_project(stores: Stores) -> None:
    where = stores.make().location("carlos", "night-watch")
    expected = {
        "files": "agents/carlos/memories/night-watch/main.md",
        "sqlite": "the database (memory_documents, owner carlos, project night-watch)",
        "postgres": "the database (memory_documents, owner carlos, project night-watch)",
    }
    assert where == expected[stores.kind]


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_slugs_are_refused_and_nothing_changes(store: MemoryStore, bad: str) -> None:
    now = datetime(2026, 11, 21, tzinfo=UTC)
    store.update("carlos", "p", lambda _: "safe\n")
    calls = [
        lambda: store.read(bad, "p"),
        lambda: store.read("carlos", bad),
        lambda: store.update(bad, "p", lambda _: "x"),
        lambda: store.update("carlos", bad, lambda _: "x"),
        lambda: store.replace_keeping_previous(bad, "p", "", "x"),
        lambda: store.replace_keeping_previous("carlos", bad, "safe\n", "x"),
        lambda: store.rollback(bad, "p"),
        lambda: store.projects(bad),
        lambda: store.location(bad, "p"),
        lambda: store.location("carlos", bad),
        lambda: store.read_vectors(bad, "p"),
        lambda: store.migrate(bad, "carlos", now),
        lambda: store.migrate("carlos", bad, now),
        lambda: store.archive(bad, now),
    ]
    for call in calls:
        with pytest.raises(InvalidNameError, match="not a valid slug"):
            call()
    assert store.read("carlos", "p") == "safe\n"
    assert store.projects("carlos") == ["p"]
