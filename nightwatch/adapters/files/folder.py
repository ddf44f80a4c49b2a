"""A folder of memory files in the files store's layout, for `nightwatch memory export DIR` and `import DIR`.

`DIR/agents/<persona-slug>/memories/<project-slug>/main.md`, as under NIGHTWATCH_HOME, so a person can read and edit
the files, copy them between installations, or import a files-store home into the database store. Export writes
into a new or empty folder only (it never overwrites). Import reads only names that are valid slugs, never follows
a symbolic link, and refuses a file too big to be a memory; whatever it skips comes back with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nightwatch.domain.errors import InvalidInputError, NightWatchError, StorageError
from nightwatch.domain.personas import check_slug
from nightwatch.small_file import Problem, SmallFileError, read_small_text

AGENTS = "agents"
MEMORIES = "memories"
FILE = "main.md"
MAX_FILE_BYTES = 16 * 1024 * 1024  # far above any memory compaction keeps; a bigger file is not a memory


@dataclass(frozen=True)
class FolderDocument:
    """One memory file of the folder: whose, which project, and its text."""

    persona: str
    project: str
    text: str


@dataclass(frozen=True)
class FolderContents:
    """The memory files read from a folder, and each path skipped with why."""

    documents: list[FolderDocument] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def write_folder(root: Path, documents: Iterable[FolderDocument]) -> list[Path]:
    """Write each document as `root/agents/<persona>/memories/<project>/main.md`; returns the files written."""
    if root.is_symlink() or (root.exists() and (not root.is_dir() or any(root.iterdir()))):
        raise InvalidInputError(f"{root} is not an empty folder; export into a new or empty folder.")
    written = []
    for document in documents:
        path = root / AGENTS / check_slug(document.persona) / MEMORIES / check_slug(document.project) / FILE
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(document.text, encoding="utf-8")
        except OSError as err:
            raise StorageError(f"Cannot write {path} ({err.strerror}); choose a folder you can write to.") from err
        written.append(path)
    return written


def read_folder(root: Path) -> FolderContents:
    """Every memory file under `root/agents/`, in name order; the archive (`agents/.archived`) is not memory."""
    agents = root / AGENTS
    if not agents.is_dir() or agents.is_symlink():
        raise InvalidInputError(
            f"{root} holds no {AGENTS}/ folder; import a folder made by `nightwatch memory export`, "
            "or a NIGHTWATCH_HOME."
        )
    contents = FolderContents()
    for persona in _children(agents):
        for project in _children(persona / MEMORIES) if (persona / MEMORIES).is_dir() else []:
            try:
                contents.documents.append(_document(persona.name, project))
            except (NightWatchError, OSError, SmallFileError) as err:
                contents.skipped.append(f"{project / FILE}: {_why(err)}")
    return contents


def _children(folder: Path) -> list[Path]:
    """The sub-folders of `folder` whose names are not hidden (`.archived`), sorted, links included (refused later)."""
    return sorted(child for child in folder.iterdir() if not child.name.startswith(".") and child.is_dir())


def _document(persona: str, project: Path) -> FolderDocument:
    path = project / FILE
    for part in (project.parent.parent, project.parent, project):
        if part.is_symlink():
            raise StorageError(f"{part} is a symbolic link; import never follows links")
    return FolderDocument(
        check_slug(persona), check_slug(project.name), read_small_text(path, max_bytes=MAX_FILE_BYTES)
    )


def _why(err: BaseException) -> str:
    if not isinstance(err, SmallFileError):
        return err.strerror if isinstance(err, OSError) and err.strerror else str(err)
    if isinstance(err.cause, FileNotFoundError):
        return "no main.md there"
    return {
        Problem.LINK: f"{err.path} is a symbolic link; import never follows links",
        Problem.NOT_FILE: f"{err.path} is not a regular file",
        Problem.TOO_LARGE: f"{err.size or 0:,} bytes is more than a memory file holds ({MAX_FILE_BYTES:,})",
        Problem.NOT_UTF8: "not UTF-8 text",
        Problem.UNREADABLE: err.strerror,
    }[err.problem]
