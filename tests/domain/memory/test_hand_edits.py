"""Hand edits: bullets in the forms people write are lessons; lines that cannot be read are reported, never lost."""

from __future__ import annotations

from datetime import date

import pytest

from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService, unread_summary
from nightwatch.domain.memory.document import unread_lines
from nightwatch.domain.memory.format import lesson_id, parse
from nightwatch.domain.memory.models import ReflectionContext, UnreadLine
from nightwatch.domain.memory.tools import settle_appended
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer")
KEY = ("priya", "p")
LESSON = "Flaky tests are quarantined within a day"


@pytest.mark.parametrize(
    "line",
    [
        f"- {LESSON}",
        f"* {LESSON}",
        f"+ {LESSON}",
        f"• {LESSON}",
        f"1. {LESSON}",
        f"2) {LESSON}",
        f"10. {LESSON}",
        f"  - {LESSON}",
        f"    * {LESSON}",
        f"\t- {LESSON}",
        f"-\t{LESSON}",
        f"\t3.\t{LESSON}",
        f"- {LESSON}  \r",
    ],
)
def test_the_bullet_forms_people_write_are_lessons(line: str) -> None:
    doc = parse(f"## 2026-11-20 · manual\n{line}\n")
    [lesson] = doc.live()
    assert (lesson.text, lesson.id) == (LESSON, lesson_id(LESSON))
    assert unread_lines(doc) == []
    assert doc.render() == f"## 2026-11-20 · manual\n{line}\n"


@pytest.mark.parametrize(
    "line",
    ["1.5 seconds is the budget", "-not a bullet", "2026 was a long year", "*emphasis* on a line", "+1 from me"],
)
def test_prose_that_merely_starts_like_a_bullet_is_not_a_lesson(line: str) -> None:
    assert parse(f"# Priya\n{line}\n").live() == []


HAND_EDITED = """# Priya · memory for p
A note the person keeps under the title.

## 2026-11-20 · manual
- Releases are cut on Thursdays.
-
- 📌
an explanation typed without a bullet
- Staging is wiped on Mondays. <!-- seen:x -->
- The cache is warmed at boot. <!-- seen:3
- Logs rotate daily. <!-- colour:blue -->
- Review <!-- aside --> the schema. <!-- seen:2 -->
- Deploys need a rollback plan. <!-- seen:2 injected:1 by:U123ABC -->
### a heading the person added
<!-- a comment the person left -->
---
{BLANK}
## Hand-written notes
Some thoughts, not lessons.
*
- Backups are restored every quarter.

## Superseded
- ~~Releases were cut on Tuesdays.~~ <!-- superseded-by:ab12cd34 on:2026-11-20 -->
an aside in the history
""".replace("{BLANK}", " \t")  # a line of only white space is blank
UNREAD = [
    (6, "-"),
    (7, "- 📌"),
    (8, "an explanation typed without a bullet"),
    (9, "- Staging is wiped on Mondays. <!-- seen:x -->"),
    (10, "- The cache is warmed at boot. <!-- seen:3"),
    (11, "- Logs rotate daily. <!-- colour:blue -->"),
    (12, "- Review <!-- aside --> the schema. <!-- seen:2 -->"),
    (20, "*"),
]


def test_lines_that_cannot_be_read_are_reported_with_their_numbers() -> None:
    doc = parse(HAND_EDITED)
    assert [(line.number, line.text) for line in unread_lines(doc)] == UNREAD
    assert [lesson.text for lesson in doc.live()] == [
        "Releases are cut on Thursdays.",
        "Deploys need a rollback plan.",
        "Backups are restored every quarter.",
    ]
    assert HAND_EDITED.split("\n")[UNREAD[2][0] - 1] == UNREAD[2][1]  # numbered as an editor counts


def test_the_summary_names_each_line_briefly() -> None:
    lines = [UnreadLine(14, "an explanation"), UnreadLine(20, "- " + "word " * 30)]
    summary = unread_summary(lines, width=20)
    assert summary == '2 lines not understood: line 14 "an explanation", line 20 "- word word word wo…"'
    assert unread_summary([UnreadLine(3, "-")]) == '1 line not understood: line 3 "-"'
    assert unread_summary([]) == ""


def service(store: InMemoryMemoryStore, llm: ScriptedLLM | None = None) -> MemoryService:
    policy = MemoryPolicy(use_model_for_curation=False, compaction_target=2)
    return MemoryService(store=store, llm=llm or ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy)


def unread_texts(text: str) -> list[str]:
    return [line.text for line in unread_lines(parse(text))]


def test_every_kind_of_write_after_a_hand_edit_keeps_the_unread_lines_as_written() -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = HAND_EDITED
    llm = ScriptedLLM().script(Purpose.REFLECTION, "- The payments suite needs its own database fixture.")
    memory = service(store, llm)
    kept = [text for _, text in UNREAD]

    memory.remember(PRIYA, "p", "Nightly builds run the slow suite.", author="cli")
    memory.remember(PRIYA, "p", "Releases are cut on Thursdays")  # a restatement: its seen count changes
    memory.note_injected(PRIYA, "p", [lesson_id("Deploys need a rollback plan.")])
    memory.reflect(PRIYA, "p", ReflectionContext(kind="deliberation", topic="payments", summary="fixtures"))
    memory.forget(PRIYA, "p", lesson_id("Backups are restored every quarter."))
    text = store.files[KEY]
    assert "- Releases are cut on Thursdays. <!-- seen:2 last:2026-11-21 -->" in text
    assert unread_texts(text) == kept
    assert [line.text for line in memory.unread_lines(PRIYA, "p")] == kept
    for line in ("A note the person keeps under the title.", "Some thoughts, not lessons.", "an aside in the history"):
        assert f"\n{line}\n" in text


def test_compaction_keeps_the_unread_lines_even_where_it_drops_every_lesson_around_them() -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = HAND_EDITED
    answer = "- Backups are restored every quarter.\n- Releases go out on Thursdays with a rollback plan."
    memory = service(store, ScriptedLLM().script(Purpose.COMPACTION, answer))
    result = memory.compact(PRIYA, "p")
    assert result.compacted, result.message
    text = store.files[KEY]
    assert "Deploys need a rollback plan." not in text
    assert "## 2026-11-20 · manual\n" in text
    assert unread_texts(text) == [text for _, text in UNREAD]


@pytest.mark.parametrize("count", ["²", "٣", "1" * 12, "-1", ""])
def test_a_count_that_is_not_plain_ascii_digits_is_unread_not_a_crash(count: str) -> None:
    text = f"## 2026-11-20 · manual\n- Releases are cut on Thursdays. <!-- seen:{count} -->\n"
    doc = parse(text)
    assert doc.live() == []
    assert [line.number for line in unread_lines(doc)] == [2]


# --- a line appended at the end of the file (memory edit) ----------------------------------------------------------

EDITED = (
    "# Maya\n\n## 2026-11-20 · note\n- Keep tokens short-lived.\n\n"
    "## Superseded\n- ~~Old rule.~~ <!-- superseded-by:manual -->\n"
)


def test_a_plain_line_appended_after_the_history_is_a_live_lesson_of_its_own() -> None:
    settled = settle_appended(EDITED, EDITED + "- Rotate keys monthly.\n", date(2026, 11, 22))
    assert [lesson.text for lesson in parse(settled).live()] == ["Keep tokens short-lived.", "Rotate keys monthly."]
    assert "## 2026-11-22 · edit\n- Rotate keys monthly.\n\n## Superseded" in settled
    assert settled.endswith("- ~~Old rule.~~ <!-- superseded-by:manual -->\n")


def test_struck_lines_and_lines_among_the_history_stay_history() -> None:
    struck = EDITED + "- ~~Crossed out by hand.~~\n"
    assert settle_appended(EDITED, struck, date(2026, 11, 22)) == struck
    among = EDITED.replace("## Superseded\n", "## Superseded\n- Put among them.\n")
    assert settle_appended(EDITED, among, date(2026, 11, 22)) == among
    assert settle_appended(EDITED, EDITED, date(2026, 11, 22)) == EDITED
