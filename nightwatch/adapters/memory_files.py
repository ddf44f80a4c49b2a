"""Memory files on disk: `<root>/agents/<persona>/memories/<project>/main.md`, written atomically under a lock.

Every slug passes `check_slug` and every path is resolved (symlinks followed) and must stay inside the root, so no
name can reach outside NIGHTWATCH_HOME. A write takes `fcntl.flock` on a sibling lock file (it excludes threads and
processes alike), writes a temp file in the same folder, fsyncs it, `os.replace`s it over the file and fsyncs the
folder: a crash leaves either the old file or the new one, never part of one. Each new or changed line is redacted
before it is written: a backstop, as secrets are redacted where they enter (a lesson's id hashes its clean text).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TypeVar

from nightwatch.adapters import vector_file
from nightwatch.adapters.redaction import redact_new_lines
from nightwatch.domain.errors import InvalidNameError, StorageError
from nightwatch.domain.personas import check_slug
from nightwatch.domain.ports import FolderMove
from nightwatch.domain.vectors import VectorTable

AGENTS = "agents"
ARCHIVED = ".archived"
FILE = "main.md"
VECTORS = "main.vectors"  # the lessons' vectors, keyed by text (see vector_file.py)
PREVIOUS = "main.md.prev"
LOCK = "main.md.lock"
_TMP_PREFIX = ".main.md."
_TMP_SUFFIX = ".tmp"
MOVES_LOCK = ".lock"  # in agents/: serialises folder moves (no slug starts with a dot)

T = TypeVar("T")


class FileMemoryStore:
    """The MemoryStore port over a folder tree under `root` (NIGHTWATCH_HOME)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # --- files --------------------------------------------------------------------------------------------------

    def read(self, persona_slug: str, project_slug: str) -> str:
        """The file's text, or '' when there is none."""
        path = self._file(persona_slug, project_slug)
        return self._read(path)

    def update(self, persona_slug: str, project_slug: str, change: Callable[[str], str]) -> str:
        """Under the file's lock, read the text, write `change(text)` atomically, return the new text."""
        path = self._file(persona_slug, project_slug)
        if not path.parent.exists() and change("") == "":
            return ""  # nothing to write: do not create folders for it
        self._make_folder(path.parent)
        with self._locked(path.parent):
            old = self._read(path)
            new = change(old)
            if new != old:
                new = redact_new_lines(old, new, "a memory file")
                self._write(path, new)
            return new

    def replace_keeping_previous(self, persona_slug: str, project_slug: str, expected: str, text: str) -> bool:
        """If the file still holds `expected`, keep it as main.md.prev and write `text`; else write nothing."""
        path = self._file(persona_slug, project_slug)
        self._make_folder(path.parent)
        with self._locked(path.parent):
            if self._read(path) != expected:
                return False
            self._write(path.parent / PREVIOUS, expected)
            self._write(path, redact_new_lines(expected, text, "a memory file"))
            return True

    def rollback(self, persona_slug: str, project_slug: str) -> bool:
        """Restore main.md.prev over main.md; False when there is no previous version."""
        path = self._file(persona_slug, project_slug)
        previous = path.parent / PREVIOUS
        if not previous.is_file():
            return False
        with self._locked(path.parent):
            if not previous.is_file():
                return False
            self._io(lambda: os.replace(previous, path), f"restore {self._rel(previous)}")
            self._sync_folder(path.parent)
            return True

    def projects(self, persona_slug: str) -> list[str]:
        """Project slugs that have a memory file for this persona."""
        folder = self._inside(self.root / AGENTS / check_slug(persona_slug) / "memories")
        if not folder.is_dir():
            return []
        entries = self._io(lambda: sorted(os.listdir(folder)), f"list {self._rel(folder)}")
        return [name for name in entries if _is_slug(name) and self._inside(folder / name / FILE).is_file()]

    # --- vectors ------------------------------------------------------------------------------------------------

    def read_vectors(self, persona_slug: str, project_slug: str) -> VectorTable:
        """The vectors in main.vectors beside main.md; empty when there is no such file."""
        return vector_file.decode(self._read_bytes(self._vectors_file(persona_slug, project_slug)))

    def save_vectors(
        self, persona_slug: str, project_slug: str, table: VectorTable, *, keep: frozenset[str] | None = None
    ) -> None:
        """Append the rows not stored yet; rewrite the file instead when `keep` drops keys or the format changed."""
        path = self._vectors_file(persona_slug, project_slug)
        if not len(table) and keep is None:
            return
        self._make_folder(path.parent)
        with self._locked(path.parent):
            data = self._read_bytes(path)
            stored = vector_file.decode(data)
            same_shape = vector_file.dimensions_of(data) == table.dimensions
            new = [key for key in table.keys if key not in stored]
            dropped = keep is not None and any(key not in keep for key in stored.keys)
            if dropped or not same_shape:
                kept = stored.only(keep if keep is not None else stored.keys) if same_shape else VectorTable.empty()
                merged = kept.with_rows(table.only(new)) if new else kept
                if len(merged):
                    self._write_bytes(path, vector_file.encode(merged))
                else:
                    self._io(lambda: path.unlink(missing_ok=True), f"remove {self._rel_text(path)}")
            elif new:
                self._append(path, vector_file.complete_length(data), vector_file.encode_records(table, new))

    # --- folders ------------------------------------------------------------------------------------------------

    def migrate(self, old_slug: str, new_slug: str, now: datetime) -> FolderMove:
        """Move agents/<old>/ to agents/<new>/; a stray target is set aside into agents/.archived/ first."""
        source, target = self._agent(old_slug), self._agent(new_slug)
        if source == target or not os.path.lexists(source):
            return FolderMove(moved=False)
        with self._locked(self._make_folder(self.root / AGENTS), MOVES_LOCK):
            if not os.path.lexists(source):
                return FolderMove(moved=False)
            set_aside = None
            if os.path.lexists(target):
                set_aside = self._free_archive_name(new_slug, now)
                self._move(target, set_aside)
            try:
                self._move(source, target)
            except StorageError:
                if set_aside is not None:
                    self._move(set_aside, target)  # put the stray back where it was
                raise
            aside = self._rel(set_aside) if set_aside is not None else None
            return FolderMove(True, self._rel(source), self._rel(target), aside)

    def archive(self, slug: str, now: datetime) -> FolderMove:
        """Move agents/<slug>/ to agents/.archived/<slug>-<UTC timestamp>/; a missing folder is a no-op."""
        source = self._agent(slug)
        if not os.path.lexists(source):
            return FolderMove(moved=False)
        with self._locked(self._make_folder(self.root / AGENTS), MOVES_LOCK):
            if not os.path.lexists(source):
                return FolderMove(moved=False)
            target = self._free_archive_name(slug, now)
            self._move(source, target)
            return FolderMove(True, self._rel(source), self._rel(target))

    def restore(self, move: FolderMove) -> None:
        """Undo a migrate or archive: move the folder back, then return any stray that was set aside."""
        if not move.moved or move.source is None or move.target is None:
            return
        source, target = self._from_rel(move.source), self._from_rel(move.target)
        with self._locked(self._make_folder(self.root / AGENTS), MOVES_LOCK):
            self._move(target, source)
            if move.set_aside is not None:
                self._move(self._from_rel(move.set_aside), target)

    # --- paths --------------------------------------------------------------------------------------------------

    def _vectors_file(self, persona_slug: str, project_slug: str) -> Path:
        return self._inside(self._file(persona_slug, project_slug).parent / VECTORS)

    def _file(self, persona_slug: str, project_slug: str) -> Path:
        agent = self._agent(persona_slug)
        return self._inside(agent / "memories" / check_slug(project_slug) / FILE)

    def _agent(self, slug: str) -> Path:
        return self._inside(self.root / AGENTS / check_slug(slug))

    def _inside(self, path: Path) -> Path:
        """Return `path` if, with every symlink resolved, it stays inside the root; else raise StorageError."""
        root = Path(os.path.realpath(self.root))
        real = Path(os.path.realpath(path))
        if real != root and root not in real.parents:
            raise StorageError(
                f"{self._rel_text(path)} leads outside NIGHTWATCH_HOME ({self.root}) through a symbolic link; "
                "remove that link and try again."
            )
        return path

    def _free_archive_name(self, slug: str, now: datetime) -> Path:
        stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        folder = self._make_folder(self.root / AGENTS / ARCHIVED)
        candidate = folder / f"{slug}-{stamp}"
        counter = 2
        while os.path.lexists(candidate):
            candidate = folder / f"{slug}-{stamp}-{counter}"
            counter += 1
        return self._inside(candidate)

    def _from_rel(self, rel: PurePosixPath) -> Path:
        if rel.is_absolute() or ".." in rel.parts or not rel.parts or rel.parts[0] != AGENTS:
            raise StorageError(f"Refusing to move {rel}: it is not a folder under {AGENTS}/ in NIGHTWATCH_HOME.")
        return self._inside(self.root.joinpath(*rel.parts))

    def _rel(self, path: Path) -> PurePosixPath:
        return PurePosixPath(path.relative_to(self.root).as_posix())

    def _rel_text(self, path: Path) -> str:
        try:
            return str(self._rel(path))
        except ValueError:
            return str(path)

    # --- disk ---------------------------------------------------------------------------------------------------

    def _make_folder(self, folder: Path) -> Path:
        self._inside(folder)
        self._io(lambda: folder.mkdir(parents=True, exist_ok=True), f"create {self._rel_text(folder)}")
        return self._inside(folder)

    @contextlib.contextmanager
    def _locked(self, folder: Path, name: str = LOCK) -> Iterator[None]:
        lock = folder / name
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = self._io(lambda: os.open(lock, flags, 0o600), f"lock {self._rel_text(lock)}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._sweep(folder)
            yield
        finally:
            os.close(fd)  # closing releases the lock; so does a crash

    def _sweep(self, folder: Path) -> None:
        """Remove temp files a crashed writer left: under the lock, no live writer can own one."""
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if name.startswith(_TMP_PREFIX) and name.endswith(_TMP_SUFFIX):
                    os.unlink(folder / name)

    def _read(self, path: Path) -> str:
        return self._read_bytes(path).decode("utf-8", errors="replace")

    def _read_bytes(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as err:
            raise StorageError(
                f"Could not read {self._rel_text(path)}: {err.strerror}. Check the file's permissions and try again."
            ) from err

    def _write_bytes(self, path: Path, data: bytes) -> None:
        """Write atomically: temp file in the same folder, fsync, replace, fsync the folder."""
        folder = path.parent
        fd, tmp = self._io(
            lambda: tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX, dir=folder), f"write in {folder}"
        )
        replaced = False
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
            replaced = True
        except OSError as err:
            raise StorageError(
                f"Could not write {self._rel_text(path)}: {err.strerror}. "
                "Check free disk space and that NIGHTWATCH_HOME is writable; the file was left as it was."
            ) from err
        finally:
            if not replaced:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        self._sync_folder(folder)

    def _append(self, path: Path, keep_bytes: int, data: bytes) -> None:
        """Cut the file to its whole records (a crash may have left part of one), then append `data`."""

        def append() -> None:
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(path, flags, 0o644)
            try:
                os.ftruncate(fd, keep_bytes)
                os.lseek(fd, keep_bytes, os.SEEK_SET)
                with os.fdopen(os.dup(fd), "ab") as handle:
                    handle.write(data)
                    handle.flush()
                os.fsync(fd)
            finally:
                os.close(fd)

        self._io(append, f"append to {self._rel_text(path)}")

    def _write(self, path: Path, text: str) -> None:
        self._write_bytes(path, text.encode("utf-8"))

    def _sync_folder(self, folder: Path) -> None:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        except OSError as err:  # some file systems cannot fsync a folder; the replace itself is still atomic
            if err.errno not in (errno.EINVAL, errno.ENOTSUP):
                raise
        finally:
            os.close(fd)

    def _move(self, source: Path, target: Path) -> None:
        if os.path.lexists(target):
            raise StorageError(
                f"Could not move {self._rel_text(source)}: {self._rel_text(target)} already exists. "
                "Move it away by hand and try again."
            )
        self._make_folder(target.parent)
        self._io(lambda: os.rename(source, target), f"move {self._rel_text(source)} to {self._rel_text(target)}")
        self._sync_folder(target.parent)

    def _io(self, action: Callable[[], T], what: str) -> T:
        try:
            return action()
        except OSError as err:
            raise StorageError(
                f"Could not {what} under NIGHTWATCH_HOME ({self.root}): {err.strerror or err}. "
                "Check that the folder exists and is writable, then try again."
            ) from err


def _is_slug(name: str) -> bool:
    try:
        check_slug(name)
    except InvalidNameError:
        return False
    return True
