"""Memory is private on disk: after a CLI session every file under NIGHTWATCH_HOME is 0600 and every folder 0700."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from tests.adapters.secrets.secret_corpus import ALNUM, fake
from tests.e2e.cli import clean_env, run

GITHUB = f"ghp_{fake(ALNUM, 36)}"


@pytest.fixture
def private_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A home Night Watch creates itself, in a parent folder it creates too."""
    home = tmp_path / "parent" / "nightwatch-home"
    clean_env(monkeypatch, home)
    return home


def editor(tmp_path: Path, body: str) -> str:
    """An EDITOR command: a small Python script that edits the file it is given."""
    script = tmp_path / "editor.py"
    script.write_text("import pathlib, subprocess, sys\npath = pathlib.Path(sys.argv[1])\n" + body, encoding="utf-8")
    return f"{sys.executable} {script}"


def modes(home: Path) -> dict[str, str]:
    """Each path under `home` (itself included) whose mode is not the private one, with its mode."""
    wrong = {}
    for path in [home, *home.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_symlink():
            wrong[str(path)] = "a link"
        elif mode != (0o700 if path.is_dir() else 0o600):
            wrong[str(path.relative_to(home.parent))] = oct(mode)
    return wrong


def test_every_file_is_0600_and_every_folder_0700_after_a_session(
    capsys: pytest.CaptureFixture[str], private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = private_home
    commands = [
        ("personas", "create", "Ada", "--role", "Database Reviewer"),
        ("memory", "add", "maya", "Rotate webhook secrets every quarter.", "--project", "demo"),
        ("memory", "add", "maya", "Admin endpoints need an audit trail.", "--project", "demo"),
        ("memory", "add", "ada", "Every migration ships with its rollback.", "--project", "demo"),
        ("memory", "search", "maya", "webhook", "--project", "demo"),
        ("memory", "compact", "maya", "--project", "demo"),
        ("pin", "add", "maya", "--text", "The admin API is VPN-only.", "--project", "demo"),
        ("deliberate", "Should the admin API get an audit log?", "--project", "demo"),
        ("personas", "delete", "ada", "--yes"),
    ]
    for argv in commands:
        code, _, err = run(capsys, *argv)
        assert code == 0, (argv, err)
    meanwhile = (
        "subprocess.run([sys.executable, '-m', 'nightwatch.cli', 'memory', 'add', 'maya', "
        "'Written by a teammate meanwhile.', '--project', 'demo'], check=True, capture_output=True)\n"
        f"path.write_text(path.read_text() + '- Mine: the deploy key is {GITHUB}\\n')\n"
    )
    monkeypatch.setenv("EDITOR", editor(tmp_path, meanwhile))
    code, out, _ = run(capsys, "memory", "edit", "maya", "--project", "demo")
    assert code == 1, out

    (kept,) = (home / "edits").iterdir()
    assert kept.read_text(encoding="utf-8").endswith("- Mine: the deploy key is [redacted github token]\n")
    names = {path.name for path in home.rglob("*")}
    assert {"nightwatch.db", "main.md", "edits", ".archived"} <= names, sorted(names)
    assert any(name.endswith(".lock") for name in names), sorted(names)
    assert modes(home) == {}
    assert GITHUB.encode() not in b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
