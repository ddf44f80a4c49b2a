"""Small files read safely: opened without following a link or blocking, a regular file, capped in size, UTF-8.

The settings file, persona files, memory files being imported and pinned files are all read this way. What went
wrong comes back as a `SmallFileError` naming the problem; each caller says it in its own words (a ConfigError for
the settings file, an InvalidInputError for a persona file, ...), since only it knows what the person should do.
"""

from __future__ import annotations

import errno
import os
import stat
from enum import Enum
from pathlib import Path

# O_NONBLOCK: a FIFO would otherwise hang the open; O_NOCTTY: a terminal never becomes ours.
FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class Problem(Enum):
    """Why a small file could not be read."""

    LINK = "a symbolic link"
    NOT_FILE = "not a regular file"
    TOO_LARGE = "too large"
    NOT_UTF8 = "not UTF-8 text"
    UNREADABLE = "could not be read"  # missing, no permission, ...: `cause` says which


class SmallFileError(Exception):
    """A small file that could not be read, and why; `cause` is the OSError when the system refused it."""

    def __init__(
        self, problem: Problem, path: Path | str, *, size: int | None = None, cause: OSError | None = None
    ) -> None:
        super().__init__(f"{path} is {problem.value}" + (f" ({cause.strerror})" if cause is not None else ""))
        self.problem = problem
        self.path = path
        self.size = size
        self.cause = cause

    @property
    def strerror(self) -> str:
        """The system's word for an UNREADABLE file (e.g. "No such file or directory")."""
        return (self.cause.strerror or str(self.cause)) if self.cause is not None else self.problem.value


def open_no_follow(path: Path | str, *, dir_fd: int | None = None) -> int:
    """A descriptor of the regular file at `path` (relative to `dir_fd` when given), opened without following a link."""
    try:
        fd = os.open(path, FLAGS, dir_fd=dir_fd)
    except OSError as err:
        problem = Problem.LINK if err.errno in (errno.ELOOP, errno.EMLINK) else Problem.UNREADABLE
        raise SmallFileError(problem, path, cause=err) from err
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SmallFileError(Problem.NOT_FILE, path)
    return fd


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd` (fewer at the end of the file)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_small_bytes(path: Path | str, *, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` of them; SmallFileError says what was wrong."""
    fd = open_no_follow(path)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise SmallFileError(Problem.TOO_LARGE, path, size=size)
        data = read_at_most(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew between the check and the read
        raise SmallFileError(Problem.TOO_LARGE, path, size=len(data))
    return data


def read_small_text(path: Path | str, *, max_bytes: int) -> str:
    """`read_small_bytes` decoded as UTF-8."""
    try:
        return read_small_bytes(path, max_bytes=max_bytes).decode("utf-8")
    except UnicodeDecodeError:
        raise SmallFileError(Problem.NOT_UTF8, path) from None
