"""The memory file format: a person's edits survive, odd input never breaks parsing, ids follow the text."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, date, datetime

import pytest

from nightwatch.domain.memory.format import (
    UNDATED,
    clean_lesson_text,
    lesson_id,
    new_document,
    normalise,
    parse,
    render_lesson,
)
from nightwatch.domain.models import Lesson

EXAMPLE = """# Carlos · memory for night-watch

## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000
- The auth module couples to the session store; review changes to both together.
- 📌 Never merge a migration without a rollback script. <!-- seen:3 injected:12 -->

## Superseded
- ~~Release train runs on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-21 -->
"""


def test_example_parses_into_lessons_with_section_metadata() -> None:
    doc = parse(EXAMPLE)
    first, pinned = doc.live()
    assert first.text == "The auth module couples to the session store; review changes to both together."
    assert first.recorded_at == datetime(2026, 11, 21, tzinfo=UTC)
    assert first.kind == "deliberation"
    assert first.link == "https://example.slack.com/archives/C1/p1700000000"
    assert (pinned.pinned, pinned.seen, pinned.injected) == (True, 3, 12)
    assert pinned.text == "Never merge a migration without a rollback script."
    [stale] = doc.stale()
    assert stale.text == "Release train runs on Tuesdays."
    assert stale.superseded_by == "ab12cd34"


def test_unchanged_document_renders_byte_identical() -> None:
    assert parse(EXAMPLE).render() == EXAMPLE
    no_newline = EXAMPLE.rstrip("\n")
    assert parse(no_newline).render() == no_newline


def test_lesson_id_ignores_case_spacing_markers_and_trailing_punctuation() -> None:
    base = lesson_id("Never merge a migration without a rollback script")
    assert len(base) == 8
    assert int(base, 16) >= 0
    for variant in (
        "never  merge a MIGRATION without a rollback script.",
        "📌 Never merge a migration without a rollback script!",
        "[pinned] Never merge a migration without a rollback script. <!-- seen:4 -->",
        "~~Never merge a migration without a rollback script.~~",
    ):
        assert lesson_id(variant) == base
    assert lesson_id("Always merge a migration without a rollback script") != base
    assert normalise("  A   B. ") == "a b"


def test_ids_survive_hand_edits_of_other_lines() -> None:
    before = {lesson.id for lesson in parse(EXAMPLE).live()}
    edited = EXAMPLE.replace("## 2026-11-21 · deliberation", "## 2026-11-21 · pr_review").replace(
        "# Carlos", "# Carlos (edited by hand)\nSome notes a person wrote."
    )
    assert {lesson.id for lesson in parse(edited).live()} == before


def test_hand_edited_file_parses_and_keeps_every_line_that_is_not_a_lesson() -> None:
    text = (
        "Notes first, no title\n"
        "* a star bullet typed by a person\n"
        "## not a date · still a header\n"
        "- [pinned] Keep the staging DB snapshot for 7 days\n"
        "  continued on an indented line, kept verbatim\n"
        "### deeper heading\n"
        "## 2026-02-30 · bad date\n"
        "- a lesson under a bad date\n"
        "## 2026-03-01\n"
        "- dated lesson without kind\n"
        "-\n"
        "- <!-- seen:x -->\n"
        "\r\n"
    )
    doc = parse(text)
    texts = [lesson.text for lesson in doc.live()]
    assert texts == [
        "a star bullet typed by a person",
        "Keep the staging DB snapshot for 7 days",
        "a lesson under a bad date",
        "dated lesson without kind",
    ]
    star, pinned, bad_date, dated = doc.live()
    assert star.recorded_at == UNDATED
    assert pinned.pinned
    assert bad_date.recorded_at == UNDATED
    assert (dated.recorded_at, dated.kind) == (datetime(2026, 3, 1, tzinfo=UTC), "note")
    assert doc.render() == text
    changed = doc.map_lessons(lambda lesson: replace(lesson, seen=2) if lesson.id == dated.id else lesson).render()
    assert "  continued on an indented line, kept verbatim\n### deeper heading\n" in changed
    assert "- dated lesson without kind <!-- seen:2 -->" in changed
    assert changed.replace(" <!-- seen:2 -->", "") == text


def test_crossed_out_bullet_is_stale() -> None:
    doc = parse("## 2026-01-02 · note\n- ~~Deploys freeze on Fridays~~\n- Deploys freeze on Thursdays\n")
    assert [lesson.text for lesson in doc.stale()] == ["Deploys freeze on Fridays"]
    assert [lesson.text for lesson in doc.live()] == ["Deploys freeze on Thursdays"]


@pytest.mark.parametrize("seed", range(20))
def test_parsing_random_garbage_never_raises(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "-*#~<!>:· \n\t\r📌[]()abc123\x00é"
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
    doc = parse(text)
    assert doc.render() == text


def test_append_adds_dated_section_before_history_and_reuses_newest_same_header() -> None:
    doc = parse(EXAMPLE)
    day = date(2026, 11, 22)
    lesson = Lesson(id=lesson_id("New one"), text="New one", recorded_at=datetime(2026, 11, 22, tzinfo=UTC))
    once = doc.append([lesson], day, "pr_review", "https://x/1")
    again = once.append([replace(lesson, text="Another one")], day, "pr_review", "https://x/1")
    text = again.render()
    assert text.count("## 2026-11-22 · pr_review · https://x/1") == 1
    assert text.index("- New one\n- Another one\n") < text.index("## Superseded")
    assert "\n\n## 2026-11-22" in text
    assert "Another one\n\n## Superseded" in text


def test_supersede_moves_lesson_to_history_with_successor_and_date() -> None:
    doc = parse(EXAMPLE)
    old = doc.live()[0]
    text = doc.supersede(old.id, "deadbeef", date(2026, 12, 1)).render()
    assert f"- ~~{old.text}~~ <!-- superseded-by:deadbeef on:2026-12-01 -->" in text
    assert old.id not in {lesson.id for lesson in parse(text).live()}
    assert old.id in {lesson.id for lesson in parse(text).stale()}


def test_render_lesson_omits_default_metadata() -> None:
    lesson = Lesson(id="x", text="Plain", recorded_at=UNDATED)
    assert render_lesson(lesson) == "- Plain"
    assert render_lesson(replace(lesson, pinned=True, seen=2)) == "- 📌 Plain <!-- seen:2 -->"


def test_clean_lesson_text_removes_markup_that_could_break_the_file() -> None:
    assert clean_lesson_text("  - 📌 [pinned] keep <!-- seen:99 --> this\n  ~~now~~ ") == "keep seen:99 this now"
    assert clean_lesson_text("1. numbered") == "numbered"


def test_new_document_has_a_title_and_nothing_else() -> None:
    doc = new_document("Zed · memory for p")
    assert doc.render() == "# Zed · memory for p\n\n"
    assert doc.live() == []


def test_the_day_a_lesson_was_last_seen_again_is_kept_in_its_comment() -> None:
    lesson = Lesson("a", "Staging is wiped on Mondays.", datetime(2026, 3, 1, tzinfo=UTC), seen=4)
    again = replace(lesson, last_seen=date(2026, 11, 20))
    assert render_lesson(again) == "- Staging is wiped on Mondays. <!-- seen:4 last:2026-11-20 -->"
    text = f"# M\n\n## 2026-03-01 · deliberation\n{render_lesson(again)}\n"
    (read,) = parse(text).live()
    assert (read.seen, read.last_seen, read.recorded_at.date()) == (4, date(2026, 11, 20), date(2026, 3, 1))
    assert parse(text.replace("last:2026-11-20", "last:someday")).live() == []  # a malformed mark: not a lesson
