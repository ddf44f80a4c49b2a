"""Memory files on disk: `<root>/agents/<persona>/memories/<project>/main.md`, written atomically under a lock.

Every slug passes `check_slug` and every path is checked part by part (memory_paths.py): a symbolic link below the
root is refused, never followed, and so is a folder where a file should be, so no path leaves NIGHTWATCH_HOME. Every
failure is a StorageError that names the file and says what to do. Writes take the folder's lock and replace the
file atomically (memory_disk.py): a crash leaves either the old file or the new one, never part of one.
Each new or changed line is redacted before it is written: a backstop, as secrets are redacted where they enter
(a lesson's id hashes its clean text).

A write also shares its persona's lock (`agents/.locks/<slug>.lock`), which a rename or delete holds alone from its
folder move to its database change (`moving`): a move waits for the writes under way, and a write waits for the
move. Built with the persona repository, the store then refuses a write to a slug no persona holds
(MemoryMovedError), so a write that raced a rename never re-creates `agents/<old slug>/`, and a persona created
later with the old name starts empty.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from nightwatch.adapters.files import index_file, vector_file
from nightwatch.adapters.files.disk import LOCK, MemoryDisk
from nightwatch.adapters.files.entries import held_by_a_persona, is_file, is_folder, is_slug
from nightwatch.adapters.files.paths import AGENTS, ARCHIVED, FILE, MEMORIES, Kind, MemoryPaths
from nightwatch.adapters.secrets import redact_new_lines
from nightwatch.domain.arrays import Arrays
from nightwatch.domain.errors import MemoryMovedError, StorageError
from nightwatch.domain.memory.ports import FolderMove
from nightwatch.domain.personas import check_slug
from nightwatch.domain.personas.ports import PersonaRepository
from nightwatch.domain.vectors import VectorTable

__all__ = ["AGENTS", "ARCHIVED", "FILE", "INDEX", "LOCK", "PREVIOUS", "VECTORS", "FileMemoryStore"]

VECTORS = "main.vectors"  # the lessons' vectors, keyed by text (see vector_file.py)
INDEX = "main.index"  # what a read derives from main.md, made again whenever it does not fit (see index_file.py)
PREVIOUS = "main.md.prev"
MOVES_LOCK = ".lock"  # in agents/: serialises folder moves (no slug starts with a dot)
PERSONA_LOCKS = ".locks"  # in agents/: a lock per persona, shared by its writes, held alone by its moves (+ a gate)


class FileMemoryStore:
    """The MemoryStore port over a folder tree under `root` (NIGHTWATCH_HOME).

    With `personas`, a write to a slug no persona holds is refused (see the module doc); without (tools and tests
    that keep memory for no persona), any valid slug may be written.
    """

    def __init__(self, root: Path, *, personas: PersonaRepository | None = None) -> None:
        self.root = Path(root)
        self._paths = MemoryPaths(self.root)
        self._disk = MemoryDisk(self._paths)
        self._personas = personas
        self._moving = threading.local()  # the slugs this thread holds alone (`moving`): its own writes pass

    # --- files --------------------------------------------------------------------------------------------------

    def read(self, persona_slug: str, project_slug: str) -> str:
        """The file's text, or '' when there is none."""
        path = self._file(persona_slug, project_slug)
        return self._disk.read(path)

    def update(self, persona_slug: str, project_slug: str, change: Callable[[str], str]) -> str:
        """Under the file's lock, read the text, write `change(text)` atomically, return the new text."""
        path = self._file(persona_slug, project_slug)
        if not path.parent.exists() and change("") == "":
            return ""  # nothing to write: do not create folders for it
        with self._writing(persona_slug):
            self._disk.make_folder(path.parent)
            with self._disk.locked(path.parent):
                return self._change(path, change)

    def _change(self, path: Path, change: Callable[[str], str]) -> str:
        old = self._disk.read(path)
        new = change(old)
        if new != old:
            new = redact_new_lines(old, new, "a memory file")
            self._disk.write(path, new)
        return new

    def replace_keeping_previous(self, persona_slug: str, project_slug: str, expected: str, text: str) -> bool:
        """If the file still holds `expected`, keep it as main.md.prev and write `text`; else write nothing."""
        path = self._file(persona_slug, project_slug)
        with self._writing(persona_slug), self._disk.locked(self._disk.make_folder(path.parent)):
            if self._disk.read(path) != expected:
                return False
            self._disk.write(self._paths.beside(path, PREVIOUS), expected)
            self._disk.write(path, redact_new_lines(expected, text, "a memory file"))
            return True

    def rollback(self, persona_slug: str, project_slug: str) -> bool:
        """Restore main.md.prev over main.md; False when there is no previous version."""
        path = self._file(persona_slug, project_slug)
        previous = self._paths.beside(path, PREVIOUS)
        if not is_file(previous):
            return False
        with self._writing(persona_slug), self._disk.locked(path.parent):
            if not is_file(self._paths.beside(path, PREVIOUS)):
                return False
            self._disk.io(lambda: os.replace(previous, path), f"restore {self._rel(previous)}")
            self._disk.sync_folder(path.parent)
            return True

    def projects(self, persona_slug: str) -> list[str]:
        """Project slugs that have a memory file for this persona (links and odd entries are not projects)."""
        folder = self._paths.checked(self._paths.agent(persona_slug) / MEMORIES, Kind.FOLDER)
        if not is_folder(folder):
            return []
        entries = self._disk.io(lambda: sorted(os.listdir(folder)), f"list {self._rel(folder)}")
        return [
            name for name in entries if is_slug(name) and is_file(folder / name / FILE) and is_folder(folder / name)
        ]

    def location(self, persona_slug: str, project_slug: str) -> str:
        """`agents/<persona>/memories/<project>/main.md`, relative to NIGHTWATCH_HOME (nothing on disk is touched)."""
        return f"{AGENTS}/{check_slug(persona_slug)}/{MEMORIES}/{check_slug(project_slug)}/{FILE}"

    # --- vectors ------------------------------------------------------------------------------------------------

    def read_vectors(self, persona_slug: str, project_slug: str) -> VectorTable:
        """The vectors in main.vectors beside main.md; empty when there is no such file."""
        return vector_file.decode(self._disk.read_bytes(self._vectors_file(persona_slug, project_slug)))

    def save_vectors(
        self, persona_slug: str, project_slug: str, table: VectorTable, *, keep: frozenset[str] | None = None
    ) -> None:
        """Append the rows not stored yet; rewrite the file instead when `keep` drops keys or the format changed."""
        path = self._vectors_file(persona_slug, project_slug)
        if not len(table) and keep is None:
            return
        with self._writing(persona_slug), self._disk.locked(self._disk.make_folder(path.parent)):
            data = self._disk.read_bytes(path)
            stored = vector_file.decode(data)
            same_shape = vector_file.dimensions_of(data) == table.dimensions
            new = [key for key in table.keys if key not in stored]
            dropped = keep is not None and any(key not in keep for key in stored.keys)
            if dropped or not same_shape:
                kept = stored.only(keep if keep is not None else stored.keys) if same_shape else VectorTable.empty()
                merged = kept.with_rows(table.only(new)) if new else kept
                if len(merged):
                    self._disk.write_bytes(path, vector_file.encode(merged))
                else:
                    self._disk.io(lambda: path.unlink(missing_ok=True), f"remove {self._rel_text(path)}")
            elif new:
                self._disk.append(path, vector_file.complete_length(data), vector_file.encode_records(table, new))

    # --- read index ---------------------------------------------------------------------------------------------

    def read_index(self, persona_slug: str, project_slug: str) -> Arrays:
        """The arrays in main.index beside main.md (empty when there is no such file or it is damaged; see the port)."""
        return index_file.decode(self._disk.read_bytes(self._index_file(persona_slug, project_slug)))

    def save_index(self, persona_slug: str, project_slug: str, arrays: Callable[[], Arrays]) -> None:
        """Replace main.index with `arrays()`, without the lock and without fsync: it only saves work, and whoever
        finds it damaged or stale makes it again. A memory folder that does not exist (moved meanwhile) gets none."""
        path = self._index_file(persona_slug, project_slug)
        if is_folder(path.parent):
            self._disk.write_cache(path, index_file.encode(arrays()))

    # --- folders ------------------------------------------------------------------------------------------------

    def migrate(self, old_slug: str, new_slug: str, now: datetime) -> FolderMove:
        """Move agents/<old>/ to agents/<new>/; a stray target is set aside into agents/.archived/ first."""
        source, target = self._paths.agent(old_slug), self._paths.agent(new_slug)
        if source == target or not os.path.lexists(source):
            return FolderMove(moved=False)
        with self.moving(old_slug, new_slug), self._moves_lock():
            if not os.path.lexists(source):
                return FolderMove(moved=False)
            set_aside = None
            if os.path.lexists(target):
                set_aside = self._free_archive_name(new_slug, now)
                self._disk.move(target, set_aside)
            try:
                self._disk.move(source, target)
            except StorageError:
                if set_aside is not None:
                    self._disk.move(set_aside, target)  # put the stray back where it was
                raise
            aside = self._rel(set_aside) if set_aside is not None else None
            return FolderMove(True, self._rel(source), self._rel(target), aside)

    def archive(self, slug: str, now: datetime) -> FolderMove:
        """Move agents/<slug>/ to agents/.archived/<slug>-<UTC timestamp>/; a missing folder is a no-op."""
        source = self._paths.agent(slug)
        if not os.path.lexists(source):
            return FolderMove(moved=False)
        with self.moving(slug), self._moves_lock():
            if not os.path.lexists(source):
                return FolderMove(moved=False)
            target = self._free_archive_name(slug, now)
            self._disk.move(source, target)
            return FolderMove(True, self._rel(source), self._rel(target))

    def restore(self, move: FolderMove) -> None:
        """Undo a migrate or archive: move the folder back, then return any stray that was set aside."""
        if not move.moved or move.source is None or move.target is None:
            return
        source, target = self._paths.from_rel(move.source), self._paths.from_rel(move.target)
        slugs = [rel.name for rel in (move.source, move.target) if rel.parent == PurePosixPath(AGENTS)]
        with self.moving(*slugs), self._moves_lock():
            self._disk.move(target, source)
            if move.set_aside is not None:
                self._disk.move(self._paths.from_rel(move.set_aside), target)

    @contextlib.contextmanager
    def moving(self, *persona_slugs: str) -> Iterator[None]:
        """Hold these personas' locks alone for the block, once the writes under way are done (see the port)."""
        held: set[str] = self._held()
        wanted = sorted({check_slug(slug) for slug in persona_slugs} - held)  # one order: two moves never deadlock
        with contextlib.ExitStack() as stack:
            for slug in wanted:
                self._take(stack, slug, shared=False)
                held.add(slug)
                stack.callback(held.discard, slug)
            yield

    @contextlib.contextmanager
    def _writing(self, persona_slug: str) -> Iterator[None]:
        """Share the persona's lock for a write, and refuse the write when no persona holds the slug any more."""
        slug = check_slug(persona_slug)
        if slug in self._held():  # this thread is moving it (restoring a folder, say): the move is the writer
            yield
            return
        with contextlib.ExitStack() as stack:
            self._take(stack, slug, shared=True)
            if self._personas is not None and not held_by_a_persona(self._personas, slug):
                raise MemoryMovedError(
                    f"No persona holds agents/{slug}/ any more: it was renamed or deleted while this was being "
                    "written, so nothing was written there. Run the command again with the persona's current name."
                )
            yield

    def _held(self) -> set[str]:
        held: set[str] | None = getattr(self._moving, "slugs", None)
        if held is None:
            held = self._moving.slugs = set()
        return held

    def _take(self, stack: contextlib.ExitStack, slug: str, *, shared: bool) -> None:
        """Take the persona's lock into `stack`, through its gate: a move waiting for the writes under way holds the
        gate, so writes that come later queue behind it instead of sharing the lock on and on (flock alone would let
        a steady stream of writes starve a rename)."""
        folder = self._disk.make_folder(self.root / AGENTS / PERSONA_LOCKS)
        with self._disk.flocked(folder / f"{slug}.gate"):
            stack.enter_context(self._disk.flocked(folder / f"{slug}.lock", shared=shared))

    def _moves_lock(self) -> contextlib.AbstractContextManager[None]:
        return self._disk.locked(self._disk.make_folder(self.root / AGENTS), MOVES_LOCK)

    # --- paths --------------------------------------------------------------------------------------------------

    def _vectors_file(self, persona_slug: str, project_slug: str) -> Path:
        return self._paths.beside(self._file(persona_slug, project_slug), VECTORS)

    def _index_file(self, persona_slug: str, project_slug: str) -> Path:
        return self._paths.beside(self._file(persona_slug, project_slug), INDEX)

    def _file(self, persona_slug: str, project_slug: str) -> Path:
        return self._paths.memory_file(persona_slug, project_slug)

    def _free_archive_name(self, slug: str, now: datetime) -> Path:
        stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        folder = self._disk.make_folder(self.root / AGENTS / ARCHIVED)
        candidate = folder / f"{slug}-{stamp}"
        counter = 2
        while os.path.lexists(candidate):
            candidate = folder / f"{slug}-{stamp}-{counter}"
            counter += 1
        return self._paths.checked(candidate, Kind.FOLDER)

    def _rel(self, path: Path) -> PurePosixPath:
        return self._paths.rel(path)

    def _rel_text(self, path: Path) -> str:
        return self._paths.rel_text(path)
