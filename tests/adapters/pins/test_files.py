"""Reading files to pin on a real temporary folder: roots, hostile paths, links, special files, size and encoding."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nightwatch.adapters.pins.files import MAX_BYTES, SafePinFiles
from nightwatch.domain.errors import InvalidInputError, NotFoundError

SECRET = "xoxb-1234567890-abcdefghijklmnop"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/docs/ARCHITECTURE.md, a second root, and a private folder outside both."""
    (tmp_path / "root" / "docs").mkdir(parents=True)
    (tmp_path / "root" / "docs" / "ARCHITECTURE.md").write_text("# Architecture\nTLS ends at the gateway.\n")
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / "runbook.md").write_text("Restart workers one by one.\n")
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "secret.txt").write_text("the crown jewels\n")
    return tmp_path


@pytest.fixture
def files(tree: Path) -> SafePinFiles:
    return SafePinFiles([tree / "root", tree / "second"])


def test_a_file_under_a_root_is_read_with_its_absolute_path_and_a_stamp(files: SafePinFiles, tree: Path) -> None:
    snapshot = files.read(str(tree / "root" / "docs" / "ARCHITECTURE.md"), anywhere=False)
    assert snapshot.source == str(tree / "root" / "docs" / "ARCHITECTURE.md")
    assert snapshot.text == "# Architecture\nTLS ends at the gateway.\n"
    assert snapshot.stamp == files.stamp(snapshot.source)


def test_a_relative_path_is_looked_for_under_the_roots_in_order(files: SafePinFiles, tree: Path) -> None:
    assert files.read("docs/ARCHITECTURE.md", anywhere=False).source == str(tree / "root" / "docs" / "ARCHITECTURE.md")
    assert files.read("runbook.md", anywhere=False).source == str(tree / "second" / "runbook.md")
    (tree / "root" / "runbook.md").write_text("the first root wins\n")
    assert files.read("runbook.md", anywhere=False).text == "the first root wins\n"
    with pytest.raises(NotFoundError, match="There is no file at"):
        files.read("docs/nothing.md", anywhere=False)


def hostile(tree: Path) -> list[tuple[str, str]]:
    """(path, what the refusal says) for paths that must never be read."""
    root = tree / "root"
    os.symlink(tree / "private" / "secret.txt", root / "link-out.txt")
    os.symlink(tree / "private", root / "linked-folder")
    os.symlink(root / "docs" / "ARCHITECTURE.md", root / "link-in.md")  # even a link that stays inside
    os.mkfifo(root / "pipe")
    (root / "big.md").write_bytes(b"x" * (MAX_BYTES + 1))
    (root / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    (root / "binary.bin").write_bytes(b"text\x00more")
    return [
        ("../../etc/passwd", "'..'"),
        (str(root / ".." / "private" / "secret.txt"), "'..'"),
        ("/etc/passwd", "outside the folders NIGHTWATCH_PIN_ROOTS allows"),
        (str(tree / "private" / "secret.txt"), "outside the folders"),
        (str(tree / "rootless" / "x.md"), "outside the folders"),  # a prefix of a root's name is not under it
        ("link-out.txt", "symbolic link"),
        ("linked-folder/secret.txt", "symbolic link"),
        ("link-in.md", "symbolic link"),
        ("pipe", "named pipe"),
        ("docs", "is a folder"),
        (str(root), "is a folder"),
        ("big.md", "a pinned file may be at most 256 KiB"),
        ("latin1.md", "not UTF-8 text"),
        ("binary.bin", "NUL bytes"),
        ("docs/ARCHITECTURE.md/inner", "is not a folder"),
    ]


def test_hostile_paths_are_refused_saying_why(files: SafePinFiles, tree: Path) -> None:
    wrong: list[tuple[str, str]] = []
    for path, says in hostile(tree):
        for anywhere in (False, True):
            try:
                files.read(path, anywhere=anywhere)
            except InvalidInputError as err:
                if says not in str(err):
                    wrong.append((path, str(err)))
            else:
                wrong.append((path, "was read"))
    assert wrong == []


def test_a_link_swapped_in_for_a_folder_after_pinning_is_refused_on_the_next_read(
    files: SafePinFiles, tree: Path
) -> None:
    doc = tree / "root" / "docs" / "ARCHITECTURE.md"
    files.read(str(doc), anywhere=False)
    (tree / "root" / "docs").rename(tree / "root" / "old-docs")
    os.symlink(tree / "private", tree / "root" / "docs")
    (tree / "private" / "ARCHITECTURE.md").write_text("attacker's copy\n")
    with pytest.raises(InvalidInputError, match="symbolic link"):
        files.stamp(str(doc))
    with pytest.raises(InvalidInputError, match="symbolic link"):
        files.read(str(doc), anywhere=True)


def test_slack_may_not_pin_files_without_roots_but_the_cli_may_pin_any_readable_file(tree: Path) -> None:
    files = SafePinFiles()
    with pytest.raises(InvalidInputError, match="NIGHTWATCH_PIN_ROOTS"):
        files.read(str(tree / "private" / "secret.txt"), anywhere=False)
    assert files.read(str(tree / "private" / "secret.txt"), anywhere=True).text == "the crown jewels\n"


def test_without_roots_the_same_rules_hold_for_every_folder_of_the_path(tree: Path) -> None:
    files = SafePinFiles()
    os.symlink(tree / "private", tree / "alias")
    with pytest.raises(InvalidInputError, match="symbolic link"):
        files.read(str(tree / "alias" / "secret.txt"), anywhere=True)
    with pytest.raises(InvalidInputError, match="device or socket"):
        files.read("/dev/null", anywhere=True)


def test_with_roots_the_cli_is_held_to_them_too(files: SafePinFiles, tree: Path) -> None:
    with pytest.raises(InvalidInputError, match="outside the folders"):
        files.read(str(tree / "private" / "secret.txt"), anywhere=True)


def test_the_stamp_changes_with_an_edit_and_an_atomic_replace_and_is_none_once_deleted(
    files: SafePinFiles, tree: Path
) -> None:
    doc = tree / "root" / "docs" / "ARCHITECTURE.md"
    first = files.stamp(str(doc))
    doc.write_text("# Architecture\nTLS ends at the mesh.\n")
    edited = files.stamp(str(doc))
    fresh = tree / "root" / "docs" / ".tmp"
    fresh.write_text("# Architecture\nTLS ends at the mesh.\n")  # same size and, maybe, the same mtime
    os.replace(fresh, doc)
    replaced = files.stamp(str(doc))
    assert len({first, edited, replaced}) == 3
    doc.unlink()
    assert files.stamp(str(doc)) is None
    assert files.stamp(str(tree / "root" / "gone" / "x.md")) is None


def test_what_is_read_is_redacted(files: SafePinFiles, tree: Path) -> None:
    (tree / "root" / "env.md").write_text(f"SLACK_BOT_TOKEN={SECRET}\n")
    text = files.read("env.md", anywhere=False).text
    assert SECRET not in text
    assert "[redacted" in text


def test_a_bom_and_windows_line_ends_are_read_as_plain_text(files: SafePinFiles, tree: Path) -> None:
    (tree / "root" / "win.md").write_bytes("\ufeffline one\r\nline two\r\n".encode())
    assert files.read("win.md", anywhere=False).text == "line one\nline two\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_is_refused_saying_so(files: SafePinFiles, tree: Path) -> None:
    doc = tree / "root" / "docs" / "ARCHITECTURE.md"
    doc.chmod(0)
    with pytest.raises(InvalidInputError, match="permission denied"):
        files.read(str(doc), anywhere=False)


def test_relative_roots_are_refused() -> None:
    with pytest.raises(ValueError, match="relative"):
        SafePinFiles([Path("docs")])
