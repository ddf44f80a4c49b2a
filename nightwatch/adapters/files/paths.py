"""The paths of memory files under the data root, each checked before use: no link is ever followed.

`<root>/agents/<persona>/memories/<project>/main.md` and its neighbours (`main.md.lock`, `main.md.prev`,
`main.vectors`, `main.index`) are built only from checked slugs, and every part of such a path below the root is
looked at with `lstat` before it is used: a symbolic link anywhere below the root is refused, and so is a file where
a folder should be or a folder where a file should be. Each refusal is a StorageError naming the path and what to
do. The root itself may be a link (NIGHTWATCH_HOME pointing at another disk is fine); nothing below it may. Files
are then opened with O_NOFOLLOW, so a link put in place between the check and the open is refused too.
"""

from __future__ import annotations

import os
import stat
from enum import Enum
from pathlib import Path, PurePosixPath

from nightwatch.domain.errors import StorageError
from nightwatch.domain.personas import check_slug

AGENTS = "agents"
ARCHIVED = ".archived"
MEMORIES = "memories"
FILE = "main.md"

NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Kind(Enum):
    """What a checked path must be when it exists."""

    FILE = "file"
    FOLDER = "folder"


class MemoryPaths:
    """Builds and checks the paths of memory folders and files under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def memory_file(self, persona_slug: str, project_slug: str) -> Path:
        """`agents/<persona>/memories/<project>/main.md`, checked."""
        folder = self.root / AGENTS / check_slug(persona_slug) / MEMORIES / check_slug(project_slug)
        return self.checked(folder / FILE, Kind.FILE)

    def beside(self, memory_file: Path, name: str) -> Path:
        """A file in the memory file's folder (lock, previous version, vectors, read index), checked."""
        return self.checked(memory_file.parent / name, Kind.FILE)

    def agent(self, slug: str) -> Path:
        """`agents/<slug>/`, checked."""
        return self.checked(self.root / AGENTS / check_slug(slug), Kind.FOLDER)

    def from_rel(self, rel: PurePosixPath) -> Path:
        """A folder under agents/ given relative to the root (as a FolderMove records it), checked."""
        if rel.is_absolute() or ".." in rel.parts or not rel.parts or rel.parts[0] != AGENTS:
            raise StorageError(f"Refusing to move {rel}: it is not a folder under {AGENTS}/ in NIGHTWATCH_HOME.")
        return self.checked(self.root.joinpath(*rel.parts), Kind.FOLDER)

    def checked(self, path: Path, kind: Kind) -> Path:
        """Return `path` when no part of it below the root is a link and each existing part has the right kind."""
        parts = self._parts(path)
        current = self.root
        for index, part in enumerate(parts):
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                return path  # the rest does not exist yet; creating it checks again
            except OSError as err:
                raise StorageError(
                    f"Could not look at {self.rel_text(current)}: {err.strerror or err}. "
                    "Check the permissions of NIGHTWATCH_HOME and its folders, then try again."
                ) from err
            last = index == len(parts) - 1
            self._refuse_wrong_kind(current, mode, kind if last else Kind.FOLDER)
        return path

    def rel(self, path: Path) -> PurePosixPath:
        return PurePosixPath(path.relative_to(self.root).as_posix())

    def rel_text(self, path: Path) -> str:
        try:
            return str(self.rel(path))
        except ValueError:
            return str(path)

    def refuse_link(self, path: Path) -> StorageError:
        """The error for a link found at `path` (also when O_NOFOLLOW found it)."""
        return StorageError(
            f"{self.rel_text(path)} in NIGHTWATCH_HOME ({self.root}) is a symbolic link; Night Watch never follows "
            "links there, so no memory path can lead outside it. Replace the link with the real file or folder "
            "(or remove it), then try again."
        )

    def _parts(self, path: Path) -> tuple[str, ...]:
        try:
            parts = path.relative_to(self.root).parts
        except ValueError:
            raise StorageError(f"Refusing {path}: it is not under NIGHTWATCH_HOME ({self.root}).") from None
        if ".." in parts:
            raise StorageError(f"Refusing {path}: it leads outside NIGHTWATCH_HOME ({self.root}).")
        return parts

    def _refuse_wrong_kind(self, path: Path, mode: int, kind: Kind) -> None:
        if stat.S_ISLNK(mode):
            raise self.refuse_link(path)
        if kind is Kind.FOLDER and not stat.S_ISDIR(mode):
            raise StorageError(
                f"{self.rel_text(path)} in NIGHTWATCH_HOME is a file where a folder should be; "
                "move it out of the way, then try again."
            )
        if kind is Kind.FILE and stat.S_ISDIR(mode):
            raise StorageError(
                f"{self.rel_text(path)} in NIGHTWATCH_HOME is a folder where a file should be; "
                "move it out of the way, then try again."
            )
        if kind is Kind.FILE and not stat.S_ISREG(mode):
            raise StorageError(
                f"{self.rel_text(path)} in NIGHTWATCH_HOME is not a regular file; remove it, then try again."
            )
