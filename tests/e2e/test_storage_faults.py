"""Storage faults through `nightwatch` end to end: real folders, links and SQLite; nothing is lost, nothing followed.

Each fault is a real one the file system enforces even for root (a folder or a link where main.md should be, a file
where the project folder should be); taking away permissions is added only when the tests do not run as root, since
root ignores them.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run

TOPIC = "Should we rotate the signing key this week?"


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


def memory_folder(home: Path, persona: str = "maya", project: str = "demo") -> Path:
    return home / "agents" / persona / "memories" / project


@dataclass(frozen=True)
class Fault:
    """A real fault under the data root: `make` breaks Maya's memory of demo, `fix` repairs it."""

    name: str
    names: str  # the path the message must name
    make: Callable[[Path, Path], None]
    fix: Callable[[Path], None]


def _folder_as_file(home: Path, _outside: Path) -> None:
    (memory_folder(home) / "main.md").mkdir(parents=True)


def _link_as_file(home: Path, outside: Path) -> None:
    memory_folder(home).mkdir(parents=True)
    (memory_folder(home) / "main.md").symlink_to(outside)


def _file_as_folder(home: Path, _outside: Path) -> None:
    memory_folder(home).parent.mkdir(parents=True)
    memory_folder(home).write_text("not a folder")


def _no_permission(home: Path, _outside: Path) -> None:
    memory_folder(home).mkdir(parents=True)
    memory_folder(home).chmod(0)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path)


FAULTS = [
    Fault(
        "folder-where-main.md-is",
        "agents/maya/memories/demo/main.md",
        _folder_as_file,
        lambda h: _remove(memory_folder(h) / "main.md"),
    ),
    Fault(
        "link-where-main.md-is",
        "agents/maya/memories/demo/main.md",
        _link_as_file,
        lambda h: _remove(memory_folder(h) / "main.md"),
    ),
    Fault(
        "file-where-the-project-folder-is",
        "agents/maya/memories/demo",
        _file_as_folder,
        lambda h: _remove(memory_folder(h)),
    ),
]
if os.geteuid() != 0:  # root reads and writes through any permission bits
    FAULTS.append(
        Fault("no-permission", "agents/maya/memories/demo", _no_permission, lambda h: memory_folder(h).chmod(0o755))
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside.md"
    target.write_text("not Night Watch's to change\n")
    return target


@pytest.mark.parametrize("fault", FAULTS, ids=lambda fault: fault.name)
def test_a_deliberation_whose_lessons_cannot_be_saved_says_so_exits_1_and_keeps_them(
    capsys: pytest.CaptureFixture[str], home: Path, outside: Path, fault: Fault
) -> None:
    fault.make(home, outside)
    code, out, err = run(capsys, "deliberate", TOPIC, "--project", "demo", "--personas", "maya")
    assert code == 1
    assert f"error: Maya's lessons could not be saved ({fault.names}" in err
    assert "they are kept and will be retried: `nightwatch memory retry`" in err
    assert "Maya's lessons could not be saved" in out  # the transcript says so where it happened
    assert "Carlos remembered:" in out  # the lead's memory was fine

    code, out, _ = run(capsys, "memory", "retry")
    assert code == 1
    assert "Maya · demo: 3 lessons still waiting:" in out
    assert fault.names in out

    fault.fix(home)
    code, out, _ = run(capsys, "memory", "retry", "maya", "--project", "demo")
    assert (code, out.strip()) == (0, "Maya · demo: recorded 3 lessons.")
    code, out, _ = run(capsys, "memory", "show", "maya", "--project", "demo")
    assert "signing key" in out
    assert run(capsys, "memory", "retry")[1].strip() == "Nothing to retry: no lessons are waiting to be saved."
    assert outside.read_text() == "not Night Watch's to change\n"


def test_the_json_result_lists_what_was_not_saved(
    capsys: pytest.CaptureFixture[str], home: Path, outside: Path
) -> None:
    _link_as_file(home, outside)
    code, out, err = run(capsys, "deliberate", TOPIC, "--project", "demo", "--personas", "maya", "--json")
    assert code == 1
    [unsaved] = json.loads(out)["unsaved"]
    assert "agents/maya/memories/demo/main.md in NIGHTWATCH_HOME" in unsaved
    assert "is a symbolic link" in unsaved
    assert f"error: {unsaved}" in err


def test_a_lesson_added_by_hand_is_kept_and_written_first_by_the_next_add(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    _folder_as_file(home, home)
    code, _, err = run(capsys, "memory", "add", "maya", "Never log the session token.", "--project", "demo")
    assert code == 1
    assert "Maya's lesson could not be saved" in err
    assert "it is kept and will be retried" in err
    _remove(memory_folder(home) / "main.md")
    assert run(capsys, "memory", "add", "maya", "Admin endpoints need an audit trail.", "--project", "demo")[0] == 0
    text = (memory_folder(home) / "main.md").read_text()
    assert text.index("Never log the session token.") < text.index("Admin endpoints need an audit trail.")
    assert "- Never log the session token. <!-- by:cli -->" in text  # the kept lesson keeps its author
    assert "Nothing to retry" in run(capsys, "memory", "retry")[1]


def test_kept_lessons_follow_a_rename_and_go_with_a_delete(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    _folder_as_file(home, home)
    assert run(capsys, "memory", "add", "maya", "Never log the session token.", "--project", "demo")[0] == 1
    assert run(capsys, "personas", "rename", "maya", "Maya Sec")[0] == 0
    _remove(memory_folder(home, "maya-sec") / "main.md")  # the broken folder moved with the persona
    code, out, _ = run(capsys, "memory", "retry", "Maya Sec")
    assert (code, out.strip()) == (0, "Maya Sec · demo: recorded 1 lesson.")
    assert "Never log the session token." in (memory_folder(home, "maya-sec") / "main.md").read_text()

    (memory_folder(home, "dev") / "main.md").mkdir(parents=True)
    assert run(capsys, "memory", "add", "dev", "Profile before optimising.", "--project", "demo")[0] == 1
    code, out, _ = run(capsys, "personas", "delete", "dev", "--yes")
    assert code == 0
    assert "1 lesson waiting to be saved went with it" in out
    assert "Nothing to retry" in run(capsys, "memory", "retry")[1]
