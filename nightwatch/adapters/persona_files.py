"""Persona YAML files: the packaged defaults (personas/*.yml) and a folder of your own (NIGHTWATCH_PERSONAS_DIR).

`PersonaFolders.scan()` reads both. A file in your folder whose persona has the slug of a default replaces that
default (the packaged file is then not read into anything). A file that cannot be used (not YAML, not a valid
persona, a symbolic link, a second file for a persona another file of its folder already defines) is refused with a
message naming the file and what to fix; when the same path gave a good persona at the last scan, that persona is
kept, so a half-saved or broken edit never changes a persona. A file gone since the last scan is reported as removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

import nightwatch
from nightwatch.domain.errors import ConfigError, InvalidInputError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import FilePersona, persona_from_dict
from nightwatch.small_file import Problem, SmallFileError, read_small_text

MAX_FILE_BYTES = 256 * 1024  # a rich persona is about 10 KB


def default_persona_dir() -> Path:
    """Where the default persona files are: inside an installed package, else the source checkout's personas/."""
    package = Path(nightwatch.__file__).resolve().parent
    for candidate in (package / "default_personas", package.parent / "personas"):
        if any(candidate.glob("*.yml")):
            return candidate
    raise ConfigError(
        f"The default persona files were not found beside {package}; reinstall Night Watch (pip install .)."
    )


def load_default_personas(folder: Path | None = None) -> list[Persona]:
    """Read every *.yml file in `folder` (default: default_persona_dir()) as a persona, in file-name order.

    A file that is not valid YAML or not a valid persona raises InvalidInputError naming the file and the field.
    """
    scan = PersonaFolders(default_persona_dir() if folder is None else folder).scan()
    scan.raise_refused()
    return [file.persona for file in scan.files]


def read_persona_file(path: Path) -> Persona:
    """One persona file, opened without following a symbolic link; InvalidInputError names the file and the fix."""
    try:
        text = read_small_text(path, max_bytes=MAX_FILE_BYTES)
    except SmallFileError as err:
        fix = {
            Problem.LINK: "is a symbolic link; copy the file itself into the folder.",
            Problem.NOT_FILE: "is not a file; a persona is a YAML file.",
            Problem.TOO_LARGE: f"is over {MAX_FILE_BYTES // 1024} KB; a persona file is much smaller.",
            Problem.NOT_UTF8: "is not UTF-8 text; save it as UTF-8.",
            Problem.UNREADABLE: f"could not be read ({err.strerror}).",
        }
        raise InvalidInputError(f"{path}: {fix[err.problem]}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise InvalidInputError(f"{path}: is not valid YAML ({_yaml_problem(err)}); fix the file.") from err
    try:
        return persona_from_dict(data)
    except InvalidInputError as err:
        raise InvalidInputError(f"{path}: {err}") from err


def _yaml_problem(error: yaml.YAMLError) -> str:
    """What the YAML parser found wrong, on one line (it spans several, with the source quoted, by itself)."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        return f"{error.problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(error).split())


@dataclass(frozen=True)
class Refused:
    path: Path
    why: str  # names the file and what to fix
    kept: Persona | None = None  # the persona this path gave at the last good scan, kept instead


@dataclass(frozen=True)
class FolderScan:
    """What a scan found: one file per persona (yours over a default's), refusals, and files gone since last time."""

    files: tuple[FilePersona, ...]
    refused: tuple[Refused, ...] = ()
    removed: tuple[FilePersona, ...] = ()
    overridden: tuple[FilePersona, ...] = field(default=())  # defaults replaced by a file in your folder

    def raise_refused(self) -> None:
        """At start-up a refused file stops the command: InvalidInputError with the first refusal."""
        if self.refused:
            more = f" ({len(self.refused) - 1} more file(s) refused too)" if len(self.refused) > 1 else ""
            raise InvalidInputError(self.refused[0].why + more)


class PersonaFolders:
    """The persona folders, read as a whole each time; remembers the last good persona of every path."""

    def __init__(self, defaults: Path | None = None, extra: Path | None = None) -> None:
        self._defaults = defaults
        self._extra = extra
        self._last: dict[Path, Persona] = {}

    @property
    def folders(self) -> tuple[Path, ...]:
        """The folders read (and watched by `nightwatch run`): the defaults', then yours."""
        defaults = self._defaults if self._defaults is not None else default_persona_dir()
        return (defaults,) if self._extra is None else (defaults, self._extra)

    def scan(self) -> FolderScan:
        """Read every *.yml file of every folder; see the module docstring for what wins and what is kept."""
        good: dict[Path, Persona] = {}
        refused: list[Refused] = []
        by_folder: list[list[tuple[Path, Persona]]] = []
        for folder in self.folders:
            read, bad = self._read_folder(folder)
            refused += bad
            by_folder.append(read)
            good.update(read)
        chosen: dict[str, FilePersona] = {}
        overridden: list[FilePersona] = []
        for read in by_folder:  # the defaults first: a later folder's persona with the same slug replaces it
            for path, persona in read:
                if persona.slug in chosen:
                    overridden.append(chosen[persona.slug])
                chosen[persona.slug] = FilePersona(persona, str(path))
        removed = [FilePersona(persona, str(path)) for path, persona in self._last.items() if not path.exists()]
        self._last = good
        return FolderScan(tuple(chosen.values()), tuple(refused), tuple(removed), tuple(overridden))

    def _read_folder(self, folder: Path) -> tuple[list[tuple[Path, Persona]], list[Refused]]:
        """The good personas of one folder in file-name order (a refused path keeps its last good one)."""
        read: list[tuple[Path, Persona]] = []
        refused: list[Refused] = []
        for path in sorted(folder.glob("*.yml")):
            try:
                read.append((path, read_persona_file(path)))
            except InvalidInputError as err:
                kept = self._last.get(path)
                refused.append(Refused(path, str(err), kept))
                if kept is not None:
                    read.append((path, kept))
        return _without_duplicates(folder, read, refused, self._last)


def _without_duplicates(
    folder: Path, read: list[tuple[Path, Persona]], refused: list[Refused], last: dict[Path, Persona]
) -> tuple[list[tuple[Path, Persona]], list[Refused]]:
    """Refuse the files that define a persona another file of the folder defines; the path that had it keeps it."""
    slugs = [persona.slug for _, persona in read]
    clashes = {slug for slug in slugs if slugs.count(slug) > 1}
    if not clashes:
        return read, refused
    owners = {
        slug: next((path for path, q in read if q.slug == slug and path in last and last[path].slug == slug), None)
        for slug in clashes
    }
    kept: list[tuple[Path, Persona]] = []
    for path, persona in read:
        if persona.slug not in clashes or owners[persona.slug] == path:
            kept.append((path, persona))
            continue
        others = ", ".join(p.name for p, q in read if q.slug == persona.slug and p != path)
        before = last.get(path)
        before = before if before is not None and before.slug not in clashes else None
        why = f"{path}: defines {persona.name}, as {others} in {folder} does; rename or remove one of them."
        refused.append(Refused(path, why, before))
        if before is not None:
            kept.append((path, before))
    return kept, refused
