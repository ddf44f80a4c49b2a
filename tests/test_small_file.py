"""The one hardened small-file reader: no links, regular files only, a size cap, UTF-8."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nightwatch.small_file import Problem, SmallFileError, read_small_text


def problem(path: Path, max_bytes: int = 100) -> Problem:
    with pytest.raises(SmallFileError) as caught:
        read_small_text(path, max_bytes=max_bytes)
    return caught.value.problem


def test_a_small_utf8_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("héllo\n", encoding="utf-8")
    assert read_small_text(path, max_bytes=100) == "héllo\n"


def test_a_link_a_folder_a_fifo_a_big_file_and_bytes_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("x", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big.txt").write_text("x" * 101, encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("é".encode("latin-1"))
    assert problem(tmp_path / "link.txt") is Problem.LINK
    assert problem(tmp_path) is Problem.NOT_FILE
    assert problem(tmp_path / "fifo") is Problem.NOT_FILE  # opened without blocking, then refused
    assert problem(tmp_path / "big.txt") is Problem.TOO_LARGE
    assert problem(tmp_path / "latin1.txt") is Problem.NOT_UTF8


def test_a_missing_file_is_unreadable_with_the_systems_reason(tmp_path: Path) -> None:
    with pytest.raises(SmallFileError) as caught:
        read_small_text(tmp_path / "absent.txt", max_bytes=100)
    assert caught.value.problem is Problem.UNREADABLE
    assert isinstance(caught.value.cause, FileNotFoundError)
    assert caught.value.strerror == "No such file or directory"
