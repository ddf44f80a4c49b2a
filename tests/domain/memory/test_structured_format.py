"""Structured lessons on disk: a category in the metadata comment, an overview on `> ` lines under the bullet.

Old files (no category, no overview) read and round-trip as before; a new file round-trips byte for byte; a hand
edit of either is read, and what cannot be read is kept and reported; every rewrite keeps both.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from nightwatch.domain.memory.answers import Candidate
from nightwatch.domain.memory.compaction import compacted
from nightwatch.domain.memory.document import unread_lines
from nightwatch.domain.memory.format import (
    clean_overview,
    lesson_block,
    lesson_id,
    live_line_count,
    merge_imported,
    parse,
    render_lesson,
)
from nightwatch.domain.models import Lesson

OLD = """# Carlos · memory for night-watch

## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000
- The auth module couples to the session store; review changes to both together.
- 📌 Never merge a migration without a rollback script. <!-- seen:3 injected:12 -->

## Superseded
- ~~Release train runs on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-21 -->
"""

NEW = """# Carlos · memory for night-watch

## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000
- The auth module couples to the session store; review changes to both together. <!-- cat:patterns -->
  > PR #42 moved sessions to Redis while auth still read the old table in two places; both broke in staging.
- 📌 Never merge a migration without a rollback script. <!-- cat:cases seen:3 injected:12 -->
  > The March migration had none; restoring the billing tables by hand took an hour.
- Staging data is wiped every Monday. <!-- cat:entities by:U123ABC -->

## Superseded
- ~~Release train runs on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-21 cat:preferences -->
  > Agreed in the Q3 planning; it moved later.
"""


def test_an_old_file_reads_without_categories_or_overviews_and_round_trips() -> None:
    doc = parse(OLD)
    assert [(lesson.category, lesson.overview) for lesson in doc.all_lessons()] == [(None, None)] * 3
    first = doc.live()[0]
    assert first.abstract == first.text
    assert first.detail == first.text  # a missing overview reads as the abstract
    assert doc.render() == OLD
    bumped = doc.map_lessons(lambda lesson: replace(lesson, seen=2) if lesson.id == first.id else lesson).render()
    assert bumped == OLD.replace("both together.\n", "both together. <!-- seen:2 -->\n")


def test_a_new_file_reads_category_and_overview_and_round_trips_byte_for_byte() -> None:
    doc = parse(NEW)
    auth, migration, staging = doc.live()
    assert (auth.category, auth.overview) == (
        "patterns",
        "PR #42 moved sessions to Redis while auth still read the old table in two places; both broke in staging.",
    )
    assert auth.text == "The auth module couples to the session store; review changes to both together."
    assert auth.id == lesson_id(auth.text)  # the id is the abstract's, whatever the overview says
    assert (migration.category, migration.pinned, migration.seen, migration.injected) == ("cases", True, 3, 12)
    assert (staging.category, staging.overview, staging.author) == ("entities", None, "U123ABC")
    [old] = doc.stale()
    assert (old.category, old.overview) == ("preferences", "Agreed in the Q3 planning; it moved later.")
    assert doc.render() == NEW
    assert unread_lines(doc) == []


def test_a_rewritten_lesson_keeps_its_category_and_overview() -> None:
    doc = parse(NEW)
    auth = doc.live()[0]
    text = doc.map_lessons(lambda lesson: replace(lesson, seen=5) if lesson.id == auth.id else lesson).render()
    assert (
        "- The auth module couples to the session store; review changes to both together. "
        "<!-- cat:patterns seen:5 -->\n  > PR #42 moved sessions to Redis"
    ) in text
    again = parse(text).live()[0]
    assert (again.category, again.overview, again.seen) == (auth.category, auth.overview, 5)


def test_render_writes_the_category_in_the_comment_and_the_overview_under_the_bullet() -> None:
    lesson = Lesson(
        id="x", text="Deploys freeze on Fridays.", recorded_at=parse(NEW).live()[0].recorded_at, category="events"
    )
    assert render_lesson(lesson) == "- Deploys freeze on Fridays. <!-- cat:events -->"
    assert render_lesson(replace(lesson, overview="Since the 2026-03 outage.")) == (
        "- Deploys freeze on Fridays. <!-- cat:events -->\n  > Since the 2026-03 outage."
    )


def test_a_hand_wrapped_overview_is_one_overview_and_kept_as_typed_until_rewritten() -> None:
    text = (
        "## 2026-03-01 · note\n"
        "* Pin freezegun to 1.5 in the login suite. <!-- CAT:Cases -->\n"
        "    > The suite failed twice on CI\n"
        "\t>when the clock crossed midnight;\n"
        "  >   1.6 broke tz handling.\n"
        "- next lesson\n"
    )
    doc = parse(text)
    pinned, nxt = doc.live()
    assert pinned.category == "cases"
    assert pinned.overview == "The suite failed twice on CI when the clock crossed midnight; 1.6 broke tz handling."
    assert nxt.overview is None
    assert doc.render() == text
    assert unread_lines(doc) == []
    moved = doc.map_lessons(lambda lesson: replace(lesson, seen=2) if lesson.id == pinned.id else lesson).render()
    assert moved == (
        "## 2026-03-01 · note\n"
        "- Pin freezegun to 1.5 in the login suite. <!-- cat:cases seen:2 -->\n"
        "  > The suite failed twice on CI when the clock crossed midnight; 1.6 broke tz handling.\n"
        "- next lesson\n"
    )


@pytest.mark.parametrize(
    ("lines", "reported"),
    [
        (["- A lesson. <!-- cat:incident -->", "  > its overview"], [4, 5]),  # an unknown category: neither is read
        (["- A lesson.", "", "  > an overview after a blank line"], [6]),
        (["- A lesson.", "  >"], [5]),  # an overview line with no words
        (["- A lesson.", "  > an overview <!-- seen:2 -->"], [5]),  # a comment inside an overview
        (["Some prose a person wrote.", "  > quoting it"], [4, 5]),
        (["- A lesson.", "> not indented: a quote after the list"], [5]),
    ],
)
def test_an_overview_line_that_cannot_be_read_is_kept_byte_for_byte_and_reported(
    lines: list[str], reported: list[int]
) -> None:
    text = "# Dev · memory for demo\n\n## 2026-03-01 · note\n" + "\n".join(lines) + "\n- Last lesson.\n"
    doc = parse(text)
    assert doc.render() == text
    assert [line.number for line in unread_lines(doc)] == reported
    assert doc.live()[-1].text == "Last lesson."
    rewritten = doc.map_lessons(lambda lesson: replace(lesson, seen=2)).render()
    for line in lines:
        if line in [u.text for u in unread_lines(doc)]:
            assert f"\n{line}\n" in rewritten


def test_line_numbers_of_unread_lines_count_the_overview_lines_above_them() -> None:
    text = "## 2026-03-01 · note\n- First. <!-- cat:events -->\n  > Its overview\n  > wraps.\nprose\n"
    doc = parse(text)
    assert [(line.number, line.text) for line in unread_lines(doc)] == [(5, "prose")]
    changed = doc.map_lessons(lambda lesson: replace(lesson, seen=2))
    assert [(line.number, line.text) for line in unread_lines(changed)] == [(4, "prose")]  # rewritten as one line
    assert changed.render().splitlines()[3] == "prose"


def test_overview_lines_do_not_count_towards_the_line_limit() -> None:
    # Outside the history: the title, a blank, the header, three lessons and a blank; their two overviews ride along.
    assert live_line_count(NEW) == 7


def test_lesson_block_reads_one_lesson_with_its_overview_as_parse_does() -> None:
    doc = parse(NEW)
    section = doc.sections[1]
    first = section.lines[0]
    assert first.raw is not None
    assert "\n" in first.raw
    assert lesson_block(first.raw, section) == first.lesson
    assert lesson_block(first.raw + "\nprose", section) is None
    assert lesson_block("prose", section) is None


def test_clean_overview_keeps_one_line_without_comment_markup() -> None:
    assert clean_overview("  Two\nlines <!-- seen:9 --> here ") == "Two lines seen:9 here"
    assert clean_overview(" - ") == ""


def test_supersession_and_forgetting_move_or_drop_the_overview_with_its_lesson() -> None:
    doc = parse(NEW)
    auth, migration, _ = doc.live()
    moved = doc.supersede(auth.id, "feedbeef", date(2026, 11, 22)).render()
    assert "- ~~The auth module couples" in moved
    assert moved.count("  > PR #42 moved sessions") == 1
    history = moved[moved.index("## Superseded") :]
    assert "cat:patterns" in history
    assert "  > PR #42 moved sessions" in history
    dropped = doc.map_lessons(lambda lesson: None if lesson.id == migration.id else lesson).render()
    assert "billing tables" not in dropped
    assert "rollback script" not in dropped
    assert parse(dropped).render() == dropped


def test_import_takes_the_files_category_and_overview_for_a_lesson_both_have() -> None:
    mine = parse(OLD)
    auth = mine.live()[0]
    theirs = OLD.replace(
        "both together.\n", "both together. <!-- cat:patterns -->\n  > Seen again in PR #51, edited by hand.\n"
    )
    merged = merge_imported(OLD, theirs)
    assert merged.updated == 1
    [again] = [lesson for lesson in parse(merged.text).live() if lesson.id == auth.id]
    assert (again.category, again.overview) == ("patterns", "Seen again in PR #51, edited by hand.")


def test_compaction_keeps_a_kept_lessons_overview_and_gives_a_condensed_one_the_models_category() -> None:
    doc = parse(NEW)
    auth, migration, staging = doc.live()
    answer = [
        Candidate(migration.text, "cases"),
        Candidate(auth.text),
        Candidate("Staging and its data reset weekly.", "entities"),
    ]
    result = compacted(doc, answer, target=3, day=date(2026, 11, 22))
    assert result.document is not None
    kept = {lesson.id: lesson for lesson in result.document.live()}
    assert kept[auth.id].overview == auth.overview
    assert kept[migration.id].overview == migration.overview
    assert staging.id not in kept
    assert kept[lesson_id("Staging and its data reset weekly.")].category == "entities"
