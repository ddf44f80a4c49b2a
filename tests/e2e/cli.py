"""Running the `nightwatch` command in-process for end-to-end tests: a clean environment, and one command's answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from nightwatch.cli import main

# Variables a developer's shell may hold that would change what a command does.
OUTSIDE = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "NIGHTWATCH_LLM",
    "DATABASE_URL",
    "SLACK_BOT_TOKEN",
    "NIGHTWATCH_MEMORY_STORE",
    "NIGHTWATCH_PIN_ROOTS",
    "NIGHTWATCH_PIN_URL_HOSTS",
    "NIGHTWATCH_PIN_TOKEN_BUDGET",
    "VISUAL",
    "EDITOR",
)


def clean_env(monkeypatch: pytest.MonkeyPatch, home: Path, *, keep: tuple[str, ...] = ()) -> Path:
    """Unset the variables of OUTSIDE (but `keep`) and point NIGHTWATCH_HOME at `home`."""
    for name in OUTSIDE:
        if name not in keep:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NIGHTWATCH_HOME", str(home))
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run one command line; its exit code, standard output and standard error."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
