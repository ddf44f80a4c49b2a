"""Issue 19 through the real CLI: compaction keeps what matters, and `memory add` says what happened."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


def test_a_lesson_remembered_in_a_deliberation_survives_the_compaction_it_causes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(1, 13):
        lesson = f"Lesson {n}: the billing job{n} needs its own review for component{n}."
        assert run(capsys, "memory", "add", "carlos", lesson, "--project", "p")[0] == 0
    monkeypatch.setenv("NIGHTWATCH_MEMORY_MAX_LINES", "10")
    monkeypatch.setenv("NIGHTWATCH_MEMORY_COMPACTION_TARGET", "5")
    topic = "Should we split the billing module into its own service?"
    code, out, err = run(capsys, "deliberate", topic, "--project", "p", "--personas", "carlos")
    assert code == 0, err
    ids = re.findall(r"Carlos remembered: .*\(([0-9a-f]{8})\)", out)
    assert ids, out
    code, shown, _ = run(capsys, "memory", "show", "carlos", "--project", "p")
    for lesson_id in ids:
        assert lesson_id in shown  # the note names a lesson that exists
    assert "Lesson 12:" in shown  # the newest were kept, not the first in the file
    assert "Lesson 1:" not in shown
    assert "5 lessons" in shown


def test_memory_add_says_created_merged_into_or_superseded(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "memory", "add", "maya", "The release train runs on Tuesdays.", "--project", "p")
    assert code == 0
    first = out.split()[1].rstrip(":")
    assert out.startswith(f"Remembered {first} — created: ")
    code, out, _ = run(capsys, "memory", "add", "maya", "the release train runs on tuesdays", "--project", "p")
    assert out.startswith(f"Remembered {first} — merged into {first}, seen 2×: The release train runs on Tuesdays.")
    update = "The release train now runs on Thursdays, no longer on Tuesdays."
    code, out, _ = run(capsys, "memory", "add", "maya", update, "--project", "p", "--json")
    row = json.loads(out)
    assert (row["outcome"], row["superseded"], row["said"]) == ("superseded", first, f"superseded {first}")
    assert row["text"] == update
    code, shown, _ = run(capsys, "memory", "show", "maya", "--project", "p")
    assert f"supersedes {first}: The release train runs on Tuesdays." in shown
