"""The console script's output streams: a closed pipe ends quietly, an ASCII-only terminal gets ASCII."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nightwatch.cli.streams import nearest_ascii

SCRIPT = Path(sys.executable).parent / "nightwatch"
LESSON = "The café’s deploy — always ★ review 🚀 first… naïve “quotes” ✅"
COMMANDS = [
    ["--help"],
    ["personas", "list"],
    ["personas", "show", "maya"],
    ["memory", "show", "maya", "--project", "demo"],
    ["memory", "search", "maya", "deploy review", "--project", "demo"],
    ["deliberate", "Should we add rate limiting to the login endpoint?", "--personas", "maya", "--project", "demo"],
    ["history"],
    ["context", "maya", "--project", "demo"],
]


def _env(home: Path, **more: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "NIGHTWATCH", "DATABASE", "LC_"))}
    return {**keep, "NIGHTWATCH_HOME": str(home), "LANG": "C.UTF-8", **more}


@pytest.fixture(scope="module")
def taught(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root where Maya knows one lesson full of non-ASCII characters."""
    home = tmp_path_factory.mktemp("streams") / "home"
    done = subprocess.run(
        [str(SCRIPT), "memory", "add", "maya", LESSON, "--project", "demo"],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return home


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv[:2]))
def test_a_closed_pipe_ends_the_command_quietly(taught: Path, argv: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the command writes a byte (`| head -0`)
    try:
        done = subprocess.run(
            [str(SCRIPT), *argv], env=_env(taught), stdout=write, stderr=subprocess.PIPE, timeout=120, check=False
        )
    finally:
        os.close(write)
    err = done.stderr.decode()
    assert done.returncode in (0, 141), err
    assert "Traceback" not in err
    assert "BrokenPipe" not in err
    assert "Exception ignored" not in err


@pytest.mark.parametrize("locale", [{"PYTHONIOENCODING": "ascii"}, {"LANG": "C"}, {"LC_ALL": "POSIX"}], ids=str)
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv[:2]))
def test_an_ascii_terminal_gets_ascii(taught: Path, argv: list[str], locale: dict[str, str]) -> None:
    done = subprocess.run(
        [str(SCRIPT), *argv], env=_env(taught, **locale), capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout.isascii(), done.stdout.decode(errors="replace")
    assert done.stderr.isascii(), done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr


def test_the_lesson_reads_sensibly_in_ascii(taught: Path) -> None:
    done = subprocess.run(
        [str(SCRIPT), "memory", "show", "maya", "--project", "demo"],
        env=_env(taught, PYTHONIOENCODING="ascii"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert 'The cafe\'s deploy -- always * review [launch] first... naive "quotes" [ok]' in done.stdout


def test_a_utf8_terminal_keeps_every_character(taught: Path) -> None:
    done = subprocess.run(
        [str(SCRIPT), "memory", "show", "maya", "--project", "demo"],
        env=_env(taught),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert LESSON in done.stdout.decode()


@pytest.mark.parametrize(
    ("char", "ascii"),
    [("é", "e"), ("—", "--"), ("’", "'"), ("🏗", "?"), ("\u200b", ""), ("\u00a0", " "), ("Å", "A"), ("ﬁ", "fi")],
)
def test_nearest_ascii(char: str, ascii: str) -> None:
    assert nearest_ascii(char) == ascii
