"""Fixtures every tier shares, and the fast lane: `pytest -m "not slow"` leaves out what is marked slow.

Every test under tests/e2e/ is end to end (the real command or `nightwatch run`, often in processes of its own), so
the whole folder is marked slow here; elsewhere a test that takes more than about a second is marked on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nightwatch.config import Settings

END_TO_END = Path(__file__).parent / "e2e"


@pytest.hookimpl(tryfirst=True)  # before `-m` selects, so the mark counts
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(END_TO_END):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "nw-home"
    path.mkdir()
    return path


@pytest.fixture
def settings(home: Path) -> Settings:
    """Settings for tests: offline model, SQLite under a temporary NIGHTWATCH_HOME, no Slack tokens."""
    return Settings.from_env({"NIGHTWATCH_HOME": str(home), "NIGHTWATCH_LLM": "offline"})
