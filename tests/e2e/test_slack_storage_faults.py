"""A storage fault in Slack: the thread hears the lessons could not be saved and are kept; nothing is lost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.slack_live import LiveApp
from tests.fake_slack import FakeSlack

pytestmark = pytest.mark.slow

PERSONAS = ("maya", "carlos", "priya", "dev")


def test_the_thread_is_told_when_lessons_cannot_be_saved_and_a_later_write_saves_them(
    live: LiveApp, fake: FakeSlack, home: Path
) -> None:
    for slug in PERSONAS:  # a folder where each persona's memory of #general should be
        (home / "agents" / slug / "memories" / "general" / "main.md").mkdir(parents=True)
    mention = fake.post_human_message("C1", "<@UBOT> should we rotate the signing key this week?")

    def told() -> list[str]:
        texts = [str(m.get("text", "")) for m in fake.messages("C1", mention["ts"])]
        return [t for t in texts if "could not be saved" in t]

    fake.wait_for(lambda: bool(told()), timeout=15)
    fake.wait_for(lambda: live.stack.slack.pool.running == 0, timeout=15)
    notice = told()[0]
    assert "main.md in NIGHTWATCH_HOME is a folder where a file should be" in notice
    assert "kept and will be retried" in notice
    assert "nightwatch memory retry" in notice
    kept = live.stack.memory.waiting()
    assert kept
    assert {lesson.project for lesson in kept} == {"general"}

    for slug in PERSONAS:
        shutil.rmtree(home / "agents" / slug / "memories" / "general" / "main.md")
    persona = live.stack.personas.get(kept[0].persona)
    live.stack.memory.remember(persona, "general", "Secrets never go into thread replies.")
    written = (home / "agents" / persona.slug / "memories" / "general" / "main.md").read_text()
    assert kept[0].text in written
    assert written.index(kept[0].text) < written.index("Secrets never go into thread replies.")
    assert live.stack.memory.waiting(persona.slug) == []
