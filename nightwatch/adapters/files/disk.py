"""Bytes on disk under the data root: atomic replaces, appends, folder locks and moves, on checked paths only.

A write goes to a temp file in the same folder, is fsynced, `os.replace`d over the file, and the folder is fsynced:
a crash leaves either the old file or the new one, never part of one. A lock is `fcntl.flock` on a lock file beside
the data (it excludes threads and processes alike; closing it or a crash releases it). Every path passes
`MemoryPaths.checked` first and every file is opened with O_NOFOLLOW; every OSError becomes a StorageError that
names the file and says what to do.

Memory is private: every file written here is 0600 and every folder created here 0700 (FILE_MODE, FOLDER_MODE), so
another account on the machine reads no lesson, index, lock or archive.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from nightwatch.adapters.files.paths import NO_FOLLOW, Kind, MemoryPaths
from nightwatch.domain.errors import StorageError

LOCK = "main.md.lock"
FILE_MODE = 0o600
FOLDER_MODE = 0o700
_TMP_PREFIX = ".main.md."
_CACHE_PREFIX = ".main.cache."  # temp files of write_cache, which takes no lock
_TMP_SUFFIX = ".tmp"
_CACHE_TMP_AGE = 60.0  # seconds after which a write_cache temp file is a crashed writer's

T = TypeVar("T")


class MemoryDisk:
    """Atomic reads and writes of files under `paths.root`, each path checked before it is used."""

    def __init__(self, paths: MemoryPaths) -> None:
        self._paths = paths
        self.root = paths.root

    def make_folder(self, folder: Path) -> Path:
        """Create `folder` and its parents as needed; return it, checked again once it exists."""
        self._paths.checked(folder, Kind.FOLDER)
        self.io(lambda: make_private_folder(folder), f"create {self._paths.rel_text(folder)}")
        return self._paths.checked(folder, Kind.FOLDER)

    @contextlib.contextmanager
    def locked(self, folder: Path, name: str = LOCK) -> Iterator[None]:
        """Hold the folder's lock file `name` for the block, after removing temp files a crashed writer left."""
        with self.flocked(folder / name):
            self._sweep(folder)
            yield

    @contextlib.contextmanager
    def flocked(self, path: Path, *, shared: bool = False) -> Iterator[None]:
        """Hold the lock file at `path` for the block: alone, or `shared` with others who share it."""
        lock = self._paths.checked(path, Kind.FILE)
        fd = self._open(lock, os.O_RDWR | os.O_CREAT, FILE_MODE, f"lock {self._paths.rel_text(lock)}")
        try:
            mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
            self.io(lambda: fcntl.flock(fd, mode), f"lock {self._paths.rel_text(lock)}")
            yield
        finally:
            os.close(fd)  # closing releases the lock; so does a crash

    def _sweep(self, folder: Path) -> None:
        """Remove temp files a crashed writer left: under the lock, no live writer can own one.

        write_cache takes no lock, so its temp files are removed only once they are old enough to be a crashed one's.
        """
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if not name.endswith(_TMP_SUFFIX):
                    continue
                if name.startswith(_TMP_PREFIX) or (name.startswith(_CACHE_PREFIX) and self._stale(folder / name)):
                    os.unlink(folder / name)

    def _stale(self, path: Path) -> bool:
        try:
            return time.time() - os.lstat(path).st_mtime > _CACHE_TMP_AGE
        except OSError:
            return False

    def read(self, path: Path) -> str:
        """The file's text ('' when it is missing); bytes that are not UTF-8 are replaced, never an error."""
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def read_bytes(self, path: Path) -> bytes:
        """The file's bytes, b'' when it is missing; a link or anything but a regular file is refused."""
        try:
            fd = os.open(path, os.O_RDONLY | NO_FOLLOW)
        except FileNotFoundError:
            return b""
        except OSError as err:
            raise self._unreadable(path, err) from err
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self._paths.checked(path, Kind.FILE)  # raises, naming what it is
            with os.fdopen(os.dup(fd), "rb") as handle:
                return handle.read()
        except OSError as err:
            raise self._unreadable(path, err) from err
        finally:
            os.close(fd)

    def _unreadable(self, path: Path, err: OSError) -> StorageError:
        if err.errno == errno.ELOOP:
            return self._paths.refuse_link(path)
        return StorageError(
            f"Could not read {self._paths.rel_text(path)}: {err.strerror or err}. "
            "Check the file's permissions and try again."
        )

    def _open(self, path: Path, flags: int, mode: int, what: str) -> int:
        """os.open without following a link at `path` (a link found there is refused by name)."""
        try:
            return os.open(path, flags | NO_FOLLOW, mode)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise self._paths.refuse_link(path) from err
            raise self._failed(what, err) from err

    def write_bytes(self, path: Path, data: bytes) -> None:
        """Write atomically: temp file in the same folder, fsync, replace, fsync the folder."""
        self._replace(path, data, _TMP_PREFIX, durable=True)
        self.sync_folder(path.parent)

    def write_cache(self, path: Path, data: bytes) -> None:
        """Write a file that only saves work (it can be made again) atomically, but without fsync and without a lock.

        A crash may leave it empty or cut off; whoever reads it must treat that as no file.
        """
        self._replace(path, data, _CACHE_PREFIX, durable=False)

    def _replace(self, path: Path, data: bytes, prefix: str, *, durable: bool) -> None:
        """Write `data` to a temp file in the path's folder, then replace the path with it."""
        folder = path.parent
        fd, tmp = self.io(
            lambda: tempfile.mkstemp(prefix=prefix, suffix=_TMP_SUFFIX, dir=folder),
            f"write in {self._paths.rel_text(folder)}",
        )
        replaced = False
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
            os.chmod(tmp, FILE_MODE)
            os.replace(tmp, path)
            replaced = True
        except OSError as err:
            raise StorageError(
                f"Could not write {self._paths.rel_text(path)}: {err.strerror or err}. "
                "Check free disk space and that NIGHTWATCH_HOME is writable; the file was left as it was."
            ) from err
        finally:
            if not replaced:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def append(self, path: Path, keep_bytes: int, data: bytes) -> None:
        """Cut the file to its whole records (a crash may have left part of one), then append `data`."""
        what = f"append to {self._paths.rel_text(path)}"
        fd = self._open(path, os.O_RDWR | os.O_CREAT, FILE_MODE, what)

        def append() -> None:
            try:
                os.ftruncate(fd, keep_bytes)
                os.lseek(fd, keep_bytes, os.SEEK_SET)
                with os.fdopen(os.dup(fd), "ab") as handle:
                    handle.write(data)
                    handle.flush()
                os.fsync(fd)
            finally:
                os.close(fd)

        self.io(append, what)

    def write(self, path: Path, text: str) -> None:
        """Write text atomically, as UTF-8."""
        self.write_bytes(path, text.encode("utf-8"))

    def sync_folder(self, folder: Path) -> None:
        """Make a replace or rename in `folder` durable."""
        fd = self._open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0), 0, f"sync {self._paths.rel_text(folder)}")
        try:
            os.fsync(fd)
        except OSError as err:  # some file systems cannot fsync a folder; the replace itself is still atomic
            if err.errno not in (errno.EINVAL, errno.ENOTSUP):
                raise self._failed(f"sync {self._paths.rel_text(folder)}", err) from err
        finally:
            os.close(fd)

    def move(self, source: Path, target: Path) -> None:
        """Rename `source` to `target` (which must not exist yet), creating the target's parent as needed."""
        if os.path.lexists(target):
            raise StorageError(
                f"Could not move {self._paths.rel_text(source)}: {self._paths.rel_text(target)} already exists. "
                "Move it away by hand and try again."
            )
        self.make_folder(target.parent)
        what = f"move {self._paths.rel_text(source)} to {self._paths.rel_text(target)}"
        self.io(lambda: os.rename(source, target), what)
        self.sync_folder(target.parent)

    def io(self, action: Callable[[], T], what: str) -> T:
        """Run `action`; an OSError becomes a StorageError saying what could not be done."""
        try:
            return action()
        except OSError as err:
            raise self._failed(what, err) from err

    def _failed(self, what: str, err: OSError) -> StorageError:
        return StorageError(
            f"Could not {what} under NIGHTWATCH_HOME ({self.root}): {err.strerror or err}. "
            "Check that the folder exists and is writable, then try again."
        )


def make_private_folder(folder: Path) -> None:
    """Create `folder` and each missing parent as 0700 (`mkdir(parents=True)` gives parents the umask's mode)."""
    missing = []
    for path in (folder, *folder.parents):
        if os.path.lexists(path):
            break
        missing.append(path)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another writer made it first
            path.mkdir(mode=FOLDER_MODE)
            os.chmod(path, FOLDER_MODE)  # mkdir's mode is masked by the umask; only ever tighter, but be exact
    if not os.path.isdir(folder):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))


def write_private_text(path: Path, text: str) -> None:
    """Write `text` to the file at `path` as 0600 (its folder made 0700 if missing), never through a link."""
    make_private_folder(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NO_FOLLOW, FILE_MODE)
    os.fchmod(fd, FILE_MODE)  # a file that was there keeps its mode otherwise
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
