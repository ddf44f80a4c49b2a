"""A thread people want to read (issue 23), through the real Bolt app and the fake Slack server: a deliberation posts
its turns, its verdict and one lessons message; later lessons update that message; Forget strikes its line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from nightwatch.adapters.slack.lesson_notes import MAX_LINES, LessonLine, folded, lessons_blocks
from nightwatch.adapters.slack.views import LESSON_FORGET
from tests import payloads
from tests.adapters.slack.stack import Stack, running_stack
from tests.adapters.slack.test_thread_listeners import human_says
from tests.fake_slack import FakeSlack


def app_posts(fake: FakeSlack, ts: str) -> list[dict[str, Any]]:
    return [m for m in fake.messages("C1", ts) if m.get("ts") != ts and m.get("user") != "U1"]


def deliberate(stack: Stack, fake: FakeSlack, text: str) -> str:
    event = human_says(fake, f"<@UBOT> {text}")
    stack.dispatch(payloads.event_callback(event))
    done = ("done", "failed", "interrupted")
    fake.wait_for(lambda: [d.status.value for d in stack.log.recent()][:1] in [[s] for s in done], timeout=30)
    fake.wait_for(lambda: stack.slack.pool.running == 0, timeout=30)  # its lessons told: the worker is idle
    return str(event["ts"])


def lessons_message(fake: FakeSlack, ts: str) -> dict[str, Any]:
    [message] = [m for m in app_posts(fake, ts) if not m.get("username")]
    return message


def test_a_deliberation_posts_its_turns_its_verdict_and_one_lessons_message(stack: Stack, fake: FakeSlack) -> None:
    ts = deliberate(stack, fake, "Maya and Priya: should we add rate limiting to the login endpoint?")
    posts = app_posts(fake, ts)
    [deliberation] = stack.log.recent()
    assert deliberation.id is not None
    turns = [t for t in stack.log.turns(deliberation.id) if not t.skipped]
    assert len(posts) <= len(turns) + 2  # the turns, the verdict, one lessons message: nothing else
    note = lessons_message(fake, ts)
    lines = note["text"].splitlines()
    assert len(lines) >= 2
    assert all(" remembered: " in line for line in lines)
    sections = [b for b in note["blocks"] if b["type"] == "section"]
    assert len(sections) == len(lines)
    assert all(b["accessory"]["action_id"] == LESSON_FORGET for b in sections)  # a Forget button per line
    assert all(re.search(r" · (created|merged into \w{8}|superseded \w{8}): ", b["text"]["text"]) for b in sections)


def test_lessons_taught_later_in_the_thread_update_the_message_in_place(stack: Stack, fake: FakeSlack) -> None:
    ts = deliberate(stack, fake, "Maya and Priya: should we add rate limiting to the login endpoint?")
    before = lessons_message(fake, ts)
    count = len(app_posts(fake, ts))
    event = human_says(fake, "<@UBOT> Maya, remember that we deploy on Thursdays now", thread_ts=ts)
    stack.dispatch(payloads.event_callback(event))
    fake.wait_for(lambda: "We deploy on Thursdays now." in str(lessons_message(fake, ts)["text"]))
    assert len(app_posts(fake, ts)) == count  # updated with chat.update, nothing new posted
    after = lessons_message(fake, ts)
    assert after["ts"] == before["ts"]
    assert after["text"].splitlines()[:-1] == before["text"].splitlines()
    assert after["text"].splitlines()[-1] == "★ Maya remembered: We deploy on Thursdays now."


def test_forget_strikes_its_line_through_and_leaves_the_others(stack: Stack, fake: FakeSlack) -> None:
    ts = deliberate(stack, fake, "Maya and Priya: should we add rate limiting to the login endpoint?")
    note = lessons_message(fake, ts)
    first = next(b for b in note["blocks"] if b["type"] == "section")
    value = first["accessory"]["value"]
    click = payloads.block_action(
        LESSON_FORGET, value, user="UADMIN", message_ts=note["ts"], message_blocks=note["blocks"]
    )
    stack.dispatch(click)
    fake.wait_for(lambda: "forgotten" in str(lessons_message(fake, ts)["blocks"]))
    updated = lessons_message(fake, ts)
    sections = [b for b in updated["blocks"] if b["type"] == "section"]
    assert sections[0]["text"]["text"].startswith("~")
    assert "forgotten" in sections[0]["text"]["text"]
    assert "accessory" not in sections[0]
    # every line of that lesson is struck (a restatement's line names the lesson it merged into); the others stay
    before = [b for b in note["blocks"] if b["type"] == "section"]
    same = [b["accessory"]["value"] == value for b in before]
    assert [("accessory" not in b) for b in sections] == same
    assert not all(same)


@pytest.fixture
def quiet(home: Path, fake: FakeSlack) -> Iterator[Stack]:
    with running_stack(home, fake, env={"NIGHTWATCH_LESSON_NOTES": "off"}) as running:
        yield running


def test_with_lesson_notes_off_the_thread_has_only_turns_and_the_verdict(quiet: Stack, fake: FakeSlack) -> None:
    ts = deliberate(quiet, fake, "Maya and Priya: should we add rate limiting to the login endpoint?")
    assert all(m.get("username") for m in app_posts(fake, ts))
    [deliberation] = quiet.log.recent()
    assert deliberation.id is not None
    assert any(quiet.memory.lessons(quiet.personas.get(name), "general") for name in ("Maya", "Priya", "Carlos"))


def test_beyond_the_block_limit_the_message_says_how_many_more() -> None:
    lines = [LessonLine("Maya", "maya", "p", f"{n:08x}", f"Lesson {n}.") for n in range(MAX_LINES + 7)]
    blocks = lessons_blocks(lines)
    assert len(blocks) <= 50
    assert "…and 7 more" in blocks[-1]["elements"][0]["text"]
    assert "App Home" in blocks[-1]["elements"][0]["text"]


def test_a_lesson_restated_in_the_same_thread_marks_its_line_instead_of_repeating_it() -> None:
    first = LessonLine("Maya", "maya", "demo", "ab12cd34", "Walk the attack path first.", change="created")
    again = replace(first, change="merged into ab12cd34")
    other = LessonLine("Priya", "priya", "demo", "ef56ab78", "Test the lockout.", change="created")
    lines = folded([first], [again, other, again])
    assert [(line.persona, line.change) for line in lines] == [("Maya", "created · seen again"), ("Priya", "created")]
    elsewhere = replace(again, lesson_id="99999999", change="merged into 99999999")  # merged into an older lesson
    assert folded([first], [elsewhere]) == [first, elsewhere]
    assert folded([replace(first, forgotten_by="U1")], [again])[-1] == again  # a struck line is not marked again
