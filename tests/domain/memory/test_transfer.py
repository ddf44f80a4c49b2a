"""Merging an imported memory file by lesson id: nothing only one side has is lost."""

from __future__ import annotations

from nightwatch.domain.memory import merge_imported
from nightwatch.domain.memory.format import parse

KEPT = """# Maya · memory for demo

## 2026-11-20 · deliberation
- Never log session tokens.
- Review CORS settings before launch.
"""


def texts(document: str) -> list[str]:
    return [lesson.text for lesson in parse(document).all_lessons()]


def test_into_an_empty_memory_the_file_goes_in_verbatim() -> None:
    merged = merge_imported("", KEPT + "odd line\n")
    assert merged.text == KEPT + "odd line\n"
    assert merged.added == 2


def test_importing_the_same_file_again_changes_nothing() -> None:
    merged = merge_imported(KEPT, KEPT)
    assert merged.text is KEPT
    assert (merged.added, merged.updated, merged.kept) == (0, 0, 0)


def test_lessons_only_the_file_has_go_where_they_were() -> None:
    imported = """# Maya

- Undated, under the title.

## 2026-11-21 · manual
- Pin the base image digest.

## Superseded
- ~~Rotate the webhook secret yearly.~~ <!-- superseded-by:manual on:2026-11-21 -->
"""
    merged = merge_imported(KEPT, imported)
    assert merged.added == 3
    assert merged.kept == 2
    document = parse(merged.text)
    assert [lesson.text for lesson in document.live()] == [
        "Undated, under the title.",
        "Never log session tokens.",
        "Review CORS settings before launch.",
        "Pin the base image digest.",
    ]
    assert [lesson.text for lesson in document.stale()] == ["Rotate the webhook secret yearly."]
    assert "## 2026-11-21 · manual" in merged.text


def test_a_lesson_both_have_takes_the_files_marks() -> None:
    imported = KEPT.replace("- Never log session tokens.", "- 📌 ~~Never log session tokens.~~ <!-- seen:4 by:cli -->")
    merged = merge_imported(KEPT, imported)
    assert merged.updated == 1
    (lesson,) = [lesson for lesson in parse(merged.text).all_lessons() if lesson.text == "Never log session tokens."]
    assert (lesson.pinned, lesson.seen, lesson.stale, lesson.author) == (True, 4, True, "cli")
    assert texts(merged.text).count("Never log session tokens.") == 1
