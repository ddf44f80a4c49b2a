"""Files to pin, read safely (the PinFiles port): a regular file of UTF-8 text, under a root, reached without a link.

The roots are NIGHTWATCH_PIN_ROOTS. A root itself may be reached through links (an operator chose it); below it, the
file is opened one folder at a time with O_NOFOLLOW relative to the folder before (openat), so no symbolic link,
no `..` and no swap of a folder for a link between a check and the open can lead outside the root. The last step
opens the file itself without following a link and without blocking (a FIFO would otherwise hang the read), and
what was opened must be a regular file, the very one that was checked. With no roots configured, a person at the
machine (the CLI) may pin any file they can read; the root is then `/` and the same rules hold for every folder of
the path. Slack may never pin a file without roots.

What is read is capped (MAX_BYTES), must be UTF-8 text without NUL bytes, and is redacted before it leaves here.
A stamp (device, inode, size, modification and change times) identifies the version read; `stamp` gives today's,
so a turn can tell with one walk of the path whether to read the file again.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from nightwatch.adapters.secrets import redact
from nightwatch.domain.errors import InvalidInputError, NotFoundError
from nightwatch.domain.inputs import shown
from nightwatch.domain.pins.ports import PinSnapshot
from nightwatch.small_file import FLAGS, read_at_most

MAX_BYTES = 256 * 1024
ROOTS_SETTING = "NIGHTWATCH_PIN_ROOTS"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_GLOB = frozenset("*?[")
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC


class SafePinFiles:
    """Reads files to pin under `roots` (absolute folders), or anywhere when there are none and a person asks."""

    def __init__(self, roots: Sequence[Path] = (), *, max_bytes: int = MAX_BYTES) -> None:
        self._roots = tuple(Path(os.path.normpath(root)) for root in roots)
        self._max = max_bytes
        if any(not root.is_absolute() for root in self._roots):
            raise ValueError(f"{ROOTS_SETTING} holds a relative folder; config.py accepts only absolute ones")

    @property
    def roots(self) -> tuple[Path, ...]:
        return self._roots

    def read(self, path: str, *, anywhere: bool) -> PinSnapshot:
        """Read the file at `path` (absolute, or relative to the first root that has it); see the module."""
        root, parts = self._locate(path, anywhere=anywhere)
        with _opened(root, parts) as fd:
            info = os.fstat(fd)
            self._check_size(info, root, parts)
            data = read_at_most(fd, self._max + 1)
        full = _joined(root, parts)
        if len(data) > self._max:  # it grew between the check and the read
            raise InvalidInputError(_too_large(full, len(data), self._max))
        return PinSnapshot(source=full, text=redact(_text(data, full)), stamp=_stamp(info))

    def expand(self, path: str, *, anywhere: bool, recursive: bool, limit: int) -> list[str]:
        """The files a folder or glob names (see PinFiles.expand); each is read through `read` afterwards."""
        raw = path.strip()
        parts = PurePosixPath(raw).parts
        cut = next((at for at, part in enumerate(parts) if not _GLOB.isdisjoint(part)), len(parts))
        root, below = self._locate(str(PurePosixPath(*parts[:cut])) if cut else ".", anywhere=anywhere)
        base = _joined(root, below)
        pattern = "/".join(parts[cut:])
        if not pattern and not os.path.isdir(base):
            return [raw]
        real = os.path.realpath(base)
        inside = real == os.path.realpath(root) or real.startswith(os.path.join(os.path.realpath(root), ""))
        if os.path.islink(base) or not os.path.isdir(base) or not inside:
            raise InvalidInputError(
                f"{shown(base, 80)} is not a folder to pin from; give a folder, a file or a pattern."
            )
        deep = recursive or "**" in pattern or "/" in pattern
        found = sorted(_files_below(base, deep, pattern))
        if len(found) > limit:
            raise InvalidInputError(
                f"{shown(raw, 80)} names {len(found)} files; at most {limit} can be pinned at once. "
                "Pin a smaller folder or a narrower pattern (docs/*.md)."
            )
        if not found:
            raise NotFoundError(f"{shown(raw, 80)} names no file to pin.")
        return found

    def stamp(self, path: str) -> str | None:
        """The stamp of the file at `path` now, or None when it is missing; raises when it may not be pinned."""
        root, parts = self._locate(path, anywhere=True)
        try:
            with _opened(root, parts) as fd:
                info = os.fstat(fd)
        except NotFoundError:
            return None
        self._check_size(info, root, parts)
        return _stamp(info)

    # --- where the file is ------------------------------------------------------------------------------------

    def _locate(self, raw: str, *, anywhere: bool) -> tuple[Path, tuple[str, ...]]:
        """The root the file is under and the path's parts below it; refuses a path that is not under one."""
        path = raw.strip()
        if not path or "\x00" in path or ".." in PurePosixPath(path).parts:
            raise InvalidInputError(f"The path {shown(path)} is not usable; give a file's path without '..'.")
        if not self._roots and not anywhere:
            raise InvalidInputError(
                f"Files can be pinned from Slack only under the folders {ROOTS_SETTING} names, and it is not set. "
                "Ask an operator to set it, or pin the text or a URL instead."
            )
        if os.path.isabs(path):
            absolute = Path(os.path.normpath(path))
            for root in self._roots or (Path(os.sep),):
                if absolute == root or root in absolute.parents:
                    return root, absolute.relative_to(root).parts
            raise InvalidInputError(self._outside(path))
        if not self._roots:
            return self._locate(os.path.abspath(path), anywhere=anywhere)
        parts = Path(os.path.normpath(path)).parts
        for root in self._roots:
            if _present(root, parts):
                return root, parts
        return self._roots[0], parts  # not found under any root: opening it says so

    def _outside(self, path: str) -> str:
        roots = ", ".join(str(root) for root in self._roots)
        return (
            f"{shown(path, 80)} is outside the folders {ROOTS_SETTING} allows ({roots}); "
            "pin a file under one of them, or give its path relative to one."
        )

    def _check_size(self, info: os.stat_result, root: Path, parts: tuple[str, ...]) -> None:
        if info.st_size > self._max:
            raise InvalidInputError(_too_large(_joined(root, parts), info.st_size, self._max))


@contextmanager
def _opened(root: Path, parts: tuple[str, ...]) -> Iterator[int]:
    """A descriptor of the regular file at root/parts, each folder below the root opened without following links."""
    if not parts:
        raise InvalidInputError(f"{root} is a folder; pin a file in it.")
    where = _joined(root, parts)
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except OSError as err:
        raise _refusal(err, str(root), where) from err
    try:
        for index, part in enumerate(parts[:-1]):
            step = _joined(root, parts[: index + 1])
            try:
                inner = os.open(part, _FOLDER, dir_fd=folder)
            except OSError as err:
                raise _refusal(err, step, where, folder=folder, name=part) from err
            os.close(folder)
            folder = inner
        fd = _open_file(folder, parts[-1], where)
    finally:
        os.close(folder)
    try:
        yield fd
    finally:
        os.close(fd)


def _open_file(folder: int, name: str, where: str) -> int:
    """Open the file `name` in `folder`: a regular file, not a link, and the same one that was looked at first."""
    try:
        seen = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError as err:
        raise _refusal(err, where, where) from err
    if not stat.S_ISREG(seen.st_mode):
        raise InvalidInputError(_not_regular(where, seen.st_mode))
    try:
        fd = os.open(name, FLAGS, dir_fd=folder)
    except OSError as err:
        raise _refusal(err, where, where, folder=folder, name=name) from err
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino):
        os.close(fd)
        raise InvalidInputError(f"{where} changed while it was being opened; try again.")
    return fd


def _refusal(err: OSError, step: str, where: str, *, folder: int | None = None, name: str = "") -> Exception:
    """The error a person sees for a path that could not be opened at `step`."""
    if err.errno == errno.ENOENT:
        return NotFoundError(f"There is no file at {where}; check the path (pin list shows what is pinned).")
    if err.errno in (errno.ELOOP, errno.EMLINK) or (folder is not None and _is_link(folder, name)):
        return InvalidInputError(
            f"{step} is a symbolic link; pins never follow links. Pin the file by its real path (realpath prints it)."
        )
    if err.errno == errno.ENOTDIR:
        return InvalidInputError(f"{step} is not a folder, so {where} cannot be a file in it; check the path.")
    if err.errno in (errno.EACCES, errno.EPERM):
        return InvalidInputError(f"{step} cannot be read (permission denied); make it readable, or pin another file.")
    return InvalidInputError(f"{where} cannot be opened ({err.strerror or err}); pin a regular text file.")


def _is_link(folder: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _present(root: Path, parts: tuple[str, ...]) -> bool:
    """Whether root/parts names something (a file, a link, anything): the root a relative path resolves against."""
    return os.path.lexists(os.path.join(root, *parts))


def _files_below(base: str, deep: bool, pattern: str) -> Iterator[str]:
    """The regular files in `base` (and below it when `deep`) whose path below it matches `pattern` (any when "").

    Hidden files and folders are left out, and links are not followed: a folder reached through one is not entered.
    """
    for folder, folders, names in os.walk(base, followlinks=False):
        folders[:] = [name for name in folders if not name.startswith(".")] if deep else []
        for name in names:
            full = os.path.join(folder, name)
            below = os.path.relpath(full, base)
            if name.startswith(".") or os.path.islink(full) or not os.path.isfile(full):
                continue
            if (
                not pattern
                or fnmatch.fnmatchcase(below, pattern)
                or fnmatch.fnmatchcase(below, pattern.replace("**/", ""))
            ):
                yield full


def _not_regular(where: str, mode: int) -> str:
    if stat.S_ISDIR(mode):
        return f"{where} is a folder; pin a file in it."
    if stat.S_ISLNK(mode):
        return f"{where} is a symbolic link; pins never follow links. Pin the file by its real path."
    kind = "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device or socket"
    return f"{where} is {kind}, not a regular file; pin a text file."


def _text(data: bytes, where: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InvalidInputError(
            f"{where} is not UTF-8 text (byte {err.start:,} is not); pin a text file, saved as UTF-8."
        ) from err
    if "\x00" in text:
        raise InvalidInputError(f"{where} holds NUL bytes, so it looks like a binary file; pin a text file.")
    return text.replace("\r\n", "\n")


def _too_large(where: str, size: int, limit: int) -> str:
    return (
        f"{where} is {_size(size)}; a pinned file may be at most {_size(limit)} (the prompt shows only what fits "
        "NIGHTWATCH_PIN_TOKEN_BUDGET anyway). Pin a smaller file, or the part that matters as a text pin."
    )


def _size(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MiB" if count >= 1024 * 1024 else f"{count / 1024:,.0f} KiB"


def _stamp(info: os.stat_result) -> str:
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def _joined(root: Path, parts: tuple[str, ...]) -> str:
    return str(root.joinpath(*parts))
