from __future__ import annotations

from pathlib import Path

import pytest

from nightwatch.config import Settings


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "nw-home"
    path.mkdir()
    return path


@pytest.fixture
def settings(home: Path) -> Settings:
    """Settings for tests: offline model, SQLite under a temporary NIGHTWATCH_HOME, no Slack tokens."""
    return Settings.from_env({"NIGHTWATCH_HOME": str(home), "NIGHTWATCH_LLM": "offline"})
