"""Reading the environment for config.py: each variable parsed and checked, and the settings file read.

A bad value raises ConfigError naming the variable and what it accepts; a complaint about a value the settings file
(`NIGHTWATCH_SETTINGS_FILE`) set names the file, and a name the file sets that no setting asks for is refused.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from nightwatch.domain.errors import ConfigError
from nightwatch.small_file import Problem, SmallFileError, read_small_text

SETTINGS_FILE = "NIGHTWATCH_SETTINGS_FILE"
SETTINGS_FILE_MAX_BYTES = 64 * 1024
_SETTING_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
T = TypeVar("T")


def settings_file_path(env: Mapping[str, str]) -> Path | None:
    """The settings file `NIGHTWATCH_SETTINGS_FILE` names, absolute; None when it names none."""
    raw = env.get(SETTINGS_FILE, "").strip()
    return Path(raw).expanduser().absolute() if raw else None


def read_settings_file(path: Path) -> dict[str, str]:
    """The `NAME=value` lines of a settings file, by name; raise ConfigError naming the file, the line and the fix.

    Blank lines and lines starting with `#` are skipped; `export ` before a name and quotes around a value are
    allowed (a shell can source the same file). The file itself is opened without following a symbolic link.
    """
    where = f"{SETTINGS_FILE} {path}"
    try:
        text = read_small_text(path, max_bytes=SETTINGS_FILE_MAX_BYTES)
    except SmallFileError as err:
        fix = {
            Problem.LINK: f"is a symbolic link; point {SETTINGS_FILE} at the file itself.",
            Problem.NOT_FILE: f"is not a file; point {SETTINGS_FILE} at a file of NAME=value lines.",
            Problem.TOO_LARGE: f"is over {SETTINGS_FILE_MAX_BYTES // 1024} KB; it holds only NAME=value lines.",
            Problem.NOT_UTF8: "is not UTF-8 text; save it as UTF-8.",
            Problem.UNREADABLE: f"could not be read ({err.strerror}); create it, or unset {SETTINGS_FILE}.",
        }
        raise ConfigError(f"{where} {fix[err.problem]}") from None
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _SETTING_LINE.match(stripped)
        if match is None:
            bom = (
                " (it starts with a UTF-8 byte-order mark; save the file as UTF-8 without a BOM)"
                if (number == 1 and line.startswith("\ufeff"))
                else ""
            )
            raise ConfigError(f"{where}, line {number}{bom}: write NAME=value (for example NIGHTWATCH_MAX_ROUNDS=3).")
        name, value = match.group(1), _unquoted(match.group(2).strip())
        if name == SETTINGS_FILE:
            raise ConfigError(f"{where}, line {number}: {SETTINGS_FILE} can only be set in the environment.")
        if name in lines:
            raise ConfigError(f"{where}, line {number}: {name} is set twice (line {lines[name]} too); keep one.")
        values[name], lines[name] = value, number
    return values


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


class Reader:
    """Reads and checks variables from `env`; a complaint about one the settings file set names the file."""

    def __init__(self, env: Mapping[str, str], *, file: Path | None = None, from_file: frozenset[str] = frozenset()):
        self._env = env
        self._file = file
        self._from_file = from_file
        self._asked: set[str] = set()

    def where(self, *names: str) -> str:
        """ " (set in FILE)" when the settings file set one of `names`; else nothing."""
        return f" (set in {self._file})" if self._from_file & set(names) else ""

    def refuse_unknown(self) -> None:
        """Refuse a settings file that sets a name no setting has (a typo would otherwise be ignored silently)."""
        unknown = sorted(self._from_file - self._asked)
        if unknown:
            raise ConfigError(
                f"{SETTINGS_FILE} {self._file} sets {unknown[0]}, which is not a Night Watch setting; fix the name "
                "(the README's Configuration table lists them) or remove the line."
            )

    def text(self, name: str) -> str | None:
        self._asked.add(name)
        value = self._env.get(name, "").strip()
        if "\x00" in value:
            raise ConfigError(f"{name} holds a NUL byte; remove it{self.where(name)}.")
        return value or None

    def _parse(self, name: str, default: T, parse: Callable[[str], T], accepts: str) -> T:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            return parse(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not valid; it accepts {accepts}{self.where(name)}.") from None

    def integer(self, name: str, default: int, *, minimum: int, maximum: int) -> int:
        accepts = f"a whole number from {minimum} to {maximum}"
        value = self._parse(name, default, int, accepts)
        if not minimum <= value <= maximum:
            raise ConfigError(f"{name}={value} is out of range; it accepts {accepts}{self.where(name)}.")
        return value

    def number(self, name: str, default: float, *, minimum: float, maximum: float) -> float:
        accepts = f"a number from {minimum:g} to {maximum:g}"
        value = self._parse(name, default, float, accepts)
        if not (math.isfinite(value) and minimum <= value <= maximum):
            raise ConfigError(f"{name}={value} is out of range; it accepts {accepts}{self.where(name)}.")
        return value

    def choice(self, name: str, options: tuple[str, ...], default: str, *, upper: bool = False) -> str:
        raw = self.text(name)
        if raw is None:
            return default
        value = raw.upper() if upper else raw.lower()
        if value not in options:
            raise ConfigError(
                f"{name}={raw!r} is not valid; it accepts one of: {', '.join(options)}{self.where(name)}."
            )
        return value

    def optional_choice(self, name: str, options: tuple[str, ...], *, upper: bool = False) -> str | None:
        """Like `choice`, but None when unset (the caller's default depends on more than settings)."""
        return self.choice(name, options, "", upper=upper) if self.text(name) is not None else None

    def folders(self, name: str) -> tuple[Path, ...]:
        """Absolute folders separated by os.pathsep (':' on Linux), normalised; none when unset."""
        raw = self.text(name) or ""
        folders = [part.strip() for part in raw.split(os.pathsep) if part.strip()]
        relative = [folder for folder in folders if not os.path.isabs(folder)]
        if relative:
            raise ConfigError(
                f"{name} holds {relative[0]!r}, which is not an absolute folder; it accepts absolute folders "
                f"separated by {os.pathsep!r}, e.g. /srv/docs{os.pathsep}/srv/runbooks."
            )
        return tuple(dict.fromkeys(Path(os.path.normpath(folder)) for folder in folders))

    def names(self, name: str) -> frozenset[str]:
        """Comma- or space-separated names, lower-cased; none when unset."""
        raw = (self.text(name) or "").replace(" ", ",")
        return frozenset(part.strip().lower() for part in raw.split(",") if part.strip())

    def token(self, name: str, prefix: str) -> str | None:
        value = self.text(name)
        if value is not None and not value.startswith(prefix):
            raise ConfigError(
                f"{name} is not valid; it accepts a Slack token starting with {prefix!r}{self.where(name)}."
            )
        return value

    def url(self, name: str, default: str) -> str:
        value = self.text(name) or default
        if not value.startswith(("http://", "https://")):
            raise ConfigError(
                f"{name}={value!r} is not valid; it accepts an http:// or https:// URL{self.where(name)}."
            )
        return value if value.endswith("/") else value + "/"

    def folder(self, name: str, accepts: str) -> Path | None:
        raw = self.text(name)
        if raw is None:
            return None
        path = Path(raw).expanduser().absolute()
        if not path.is_dir():
            raise ConfigError(f"{name}={raw!r} is not a folder; it accepts {accepts}{self.where(name)}.")
        return path

    def teachers(self, name: str) -> str:
        """Who may teach: `everyone` (the default), `admins`, or a Slack user group's id (S0123ABC)."""
        raw = self.text(name)
        if raw is None or raw.lower() in ("everyone", "admins"):
            return (raw or "everyone").lower()
        if re.fullmatch(r"S[A-Z0-9]{2,20}", raw):
            return raw
        raise ConfigError(
            f"{name}={raw!r} is not valid; it accepts everyone, admins, or a Slack user group's id such as "
            f"S0123ABC{self.where(name)}."
        )


def c_locale(env: Mapping[str, str] | None = None) -> bool:
    """Whether the locale asks for plain ASCII (C or POSIX), although Python itself then writes UTF-8 (PEP 538/540).

    The locale's name comes from LC_ALL, else LC_CTYPE, else LANG; an LC_CTYPE of C.UTF-8 beside a C `LANG` is the
    one Python's own locale coercion set, so it does not count. PYTHONIOENCODING or PYTHONUTF8 set by the person wins.
    """
    env = os.environ if env is None else env
    if env.get("PYTHONIOENCODING") or env.get("PYTHONUTF8"):
        return False
    lang = env.get("LANG", "")
    ctype = env.get("LC_CTYPE", "")
    if ctype == "C.UTF-8" and lang in ("C", "POSIX"):
        ctype = ""
    name = env.get("LC_ALL") or ctype or lang
    return name in ("C", "POSIX")
