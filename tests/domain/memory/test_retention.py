"""Compaction keeps what matters: newest, most used, pinned and just-recorded lessons; restatements merged; a model's
compaction that drops one of them is refused and the rules compact instead. Recording says what it did; lessons the
offline model recorded stay out of a real model's prompts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.format import lesson_id, parse
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.memory.retention import recent, retain
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.recall.ranking import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer")
KEY = ("priya", "p")
AREAS = [f"area{n}" for n in range(12)]


def _file(sections: dict[str, list[str]]) -> str:
    body = "".join(
        f"## {header}\n" + "".join(f"- {line}\n" for line in lines) + "\n" for header, lines in sections.items()
    )
    return "# Priya · memory for p\n\n" + body


def setup(
    text: str, llm: ScriptedLLM | None = None, *, target: int = 5, max_lines: int = 150, model: bool = False
) -> tuple[MemoryService, InMemoryMemoryStore]:
    store = InMemoryMemoryStore()
    store.files[KEY] = text
    policy = MemoryPolicy(
        compaction_target=target, max_lines=max_lines, use_model_for_curation=False, use_model_for_compaction=model
    )
    memory = MemoryService(store=store, llm=llm or ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy)
    return memory, store


def monthly(count: int) -> str:
    """One lesson a month (January to ...), oldest first, each on its own area."""
    return _file(
        {f"2026-{m + 1:02d}-01 · deliberation": [f"The {AREAS[m]} suite needs fixture{m}."] for m in range(count)}
    )


def texts(memory: MemoryService) -> list[str]:
    return [lesson.text for lesson in memory.lessons(PRIYA, "p")]


def test_the_rules_keep_the_newest_lessons_not_the_first_in_the_file() -> None:
    memory, store = setup(monthly(10), target=5)
    result = memory.compact(PRIYA, "p")
    assert result.compacted, result.message
    assert texts(memory) == [f"The {AREAS[m]} suite needs fixture{m}." for m in range(5, 10)]
    assert store.previous[KEY] == monthly(10)


def test_the_rules_keep_pinned_and_much_used_lessons_however_old() -> None:
    text = monthly(10).replace("- The area0 suite", "- 📌 The area0 suite")
    text = text.replace("needs fixture1.", "needs fixture1. <!-- seen:3 injected:40 -->")
    memory, _ = setup(text, target=5)
    assert memory.compact(PRIYA, "p").compacted
    kept = texts(memory)
    assert "The area0 suite needs fixture0." in kept  # pinned
    assert "The area1 suite needs fixture1." in kept  # the most used, on top of the target
    assert [lesson for lesson in kept if lesson not in kept[:2]] == [
        f"The {AREAS[m]} suite needs fixture{m}." for m in range(6, 10)
    ]  # the newest take every place the pinned lesson leaves: the most used one takes none of them
    assert len(kept) == 6


def test_the_rules_merge_restatements_into_the_newer_wording_with_their_counts() -> None:
    text = _file(
        {
            "2026-01-01 · deliberation": ["Releases are cut on Thursdays. <!-- seen:2 -->", "Backups run nightly."],
            "2026-02-01 · deliberation": ["Logs rotate daily.", "Staging is wiped on Mondays."],
            "2026-03-01 · deliberation": ["We cut releases on Thursdays.", "Alerts page the on-call engineer."],
        }
    )
    memory, _ = setup(text, target=5)
    result = memory.compact(PRIYA, "p")
    assert "1 restatement(s) merged" in result.message
    live = {lesson.text: lesson for lesson in memory.lessons(PRIYA, "p")}
    assert "Releases are cut on Thursdays." not in live
    assert live["We cut releases on Thursdays."].seen == 3
    assert len(live) == 5


def test_lessons_recorded_in_the_current_interaction_survive_the_compaction_they_cause() -> None:
    reflection = "- Snapshot tests break when fixture dates roll over.\n- The login suite needs a frozen clock."
    llm = ScriptedLLM().script(Purpose.REFLECTION, reflection)
    memory, _ = setup(monthly(12), llm, target=5, max_lines=12)
    context = ReflectionContext(kind="deliberation", topic="nightly failure", summary="fixtures", link="https://x/9")
    recorded = memory.reflect(PRIYA, "p", context)
    assert len(recorded) == 2
    kept = {lesson.id for lesson in memory.lessons(PRIYA, "p")}
    assert {found.lesson.id for found in recorded} <= kept  # the thread's notes name lessons that exist
    assert len(kept) == 5


def test_a_remembered_lesson_outlives_a_compaction_even_with_a_tiny_target() -> None:
    memory, _ = setup(monthly(12), target=5, max_lines=10)
    for n in range(8):
        found = memory.record(PRIYA, "p", f"The export{n} job retries {n + 2} times before paging.")
        assert found.lesson.id in {lesson.id for lesson in memory.lessons(PRIYA, "p")}


def test_a_model_compaction_that_drops_a_just_recorded_lesson_is_refused_for_the_rules() -> None:
    llm = ScriptedLLM().script(Purpose.REFLECTION, "- Snapshot tests break when fixture dates roll over.")
    llm.script(Purpose.COMPACTION, "\n".join(f"- Condensed lesson {n} about topic{n}." for n in range(5)))
    memory, _ = setup(monthly(12), llm, target=5, max_lines=12, model=True)
    [recorded] = memory.reflect(PRIYA, "p", ReflectionContext(kind="incident", topic="nightly", summary="dates"))
    assert len(llm.calls(Purpose.COMPACTION)) == 1
    kept = texts(memory)
    assert recorded.lesson.text in kept
    assert len(kept) == 5


def test_a_model_compaction_that_drops_a_recent_lesson_is_refused_and_the_rules_compact(
    caplog: pytest.LogCaptureFixture,
) -> None:
    today = "2026-11-21 · manual"  # the fake clock's day: a lesson recorded today is recent
    text = monthly(9)[:-1] + f"\n## {today}\n- The payments suite needs its own database.\n"
    llm = ScriptedLLM().script(Purpose.COMPACTION, "- One condensed lesson about every suite.")
    memory, _ = setup(text, llm, target=5, model=True)
    result = memory.compact(PRIYA, "p")
    assert result.compacted
    assert "the rules compact instead" in caplog.text
    kept = texts(memory)
    assert "One condensed lesson about every suite." not in kept
    assert kept[-1] == "The payments suite needs its own database."
    assert len(kept) == 5


def test_a_model_compaction_that_keeps_the_recent_lessons_is_accepted() -> None:
    today = "2026-11-21 · manual"
    text = monthly(9)[:-1] + f"\n## {today}\n- The payments suite needs its own database.\n"
    answer = "- One condensed lesson about every suite.\n- The payments suite needs its own database."
    memory, _ = setup(text, ScriptedLLM().script(Purpose.COMPACTION, answer), target=5, model=True)
    assert memory.compact(PRIYA, "p").compacted
    assert sorted(texts(memory)) == sorted(answer.replace("- ", "").split("\n"))


def test_recent_lessons_are_the_newest_few_of_the_day() -> None:
    day = datetime(2026, 11, 21, tzinfo=UTC)
    old = [Lesson(id=f"o{n}", text=f"old {n}", recorded_at=datetime(2026, 1, 1, tzinfo=UTC)) for n in range(5)]
    new = [Lesson(id=f"n{n}", text=f"new {n}", recorded_at=day) for n in range(5)]
    assert recent(old + new, 10, day.date()) == {"n4", "n3"}  # a fifth of the target
    assert recent(old, 10, day.date()) == frozenset()


def test_retain_never_drops_what_must_stay_even_past_the_target() -> None:
    day = datetime(2026, 1, 1, tzinfo=UTC)
    live = [Lesson(id=f"l{n}", text=f"The job{n} needs owner{n}.", recorded_at=day, pinned=n < 3) for n in range(8)]
    kept = retain(live, 2, protect={"l4"}).keep
    assert {"l0", "l1", "l2", "l4"} <= kept
    assert len(kept) == 4


# --- what happened --------------------------------------------------------------------------------------------


def test_record_says_created_merged_into_or_superseded() -> None:
    memory, _ = setup("")
    first = memory.record(PRIYA, "p", "The release train runs on Tuesdays.")
    assert (first.outcome, first.said) == ("created", "created")
    again = memory.record(PRIYA, "p", "the release train runs on tuesdays")
    assert (again.outcome, again.said) == ("merged", f"merged into {first.lesson.id}")
    assert again.lesson.seen == 2
    moved = memory.record(PRIYA, "p", "The release train now runs on Thursdays, no longer on Tuesdays.")
    assert (moved.outcome, moved.replaced) == ("superseded", first.lesson.id)
    assert moved.said == f"superseded {first.lesson.id}"
    assert [old.superseded_by for old in memory.history(PRIYA, "p")] == [moved.lesson.id]


# --- offline lessons ------------------------------------------------------------------------------------------


OFFLINE_FILE = _file(
    {
        "2026-11-01 · deliberation": [
            "[offline] The billing module split is decided fast, in one small PR with an owner.",
            "The billing module keeps its own database migrations in billing/migrations.",
        ]
    }
)


@pytest.mark.parametrize("inject", [False, True])
def test_lessons_the_offline_model_recorded_reach_a_prompt_only_when_allowed(inject: bool) -> None:
    store = InMemoryMemoryStore()
    store.files[KEY] = OFFLINE_FILE
    policy = MemoryPolicy(use_model_for_curation=False, inject_offline_lessons=inject)
    memory = MemoryService(store=store, llm=ScriptedLLM(), clock=FakeClock(), recall=Recall(), policy=policy)
    block = memory.read(PRIYA, "p", "billing module split")
    offline = lesson_id("[offline] The billing module split is decided fast, in one small PR with an owner.")
    assert (offline in {lesson.id for lesson in block.lessons}) is inject
    assert ("[offline]" in block.text) is inject
    assert "billing/migrations" in block.text
    assert len(memory.lessons(PRIYA, "p")) == 2  # still remembered, and listed
    assert offline in {hit.lesson.id for hit in memory.search(PRIYA, "p", "billing")}
    assert len(parse(store.files[KEY]).live()) == 2


def test_a_lesson_a_memory_tool_recorded_in_the_thread_survives_the_reflection_compaction() -> None:
    llm = ScriptedLLM().script(Purpose.REFLECTION, "- Snapshot tests break when fixture dates roll over.")
    memory, _ = setup(monthly(12), llm, target=5, max_lines=40)
    thread = "https://x/thread/7"
    tool = memory.record(PRIYA, "p", "The login suite needs a frozen clock.", kind="tool", link=thread)
    for n in range(6):
        memory.record(PRIYA, "p", f"The export{n} job retries {n + 2} times before paging.", kind="tool", link=thread)
    memory.policy = MemoryPolicy(compaction_target=5, max_lines=12, use_model_for_curation=False)
    memory.reflect(PRIYA, "p", ReflectionContext(kind="deliberation", topic="t", summary="s", link=thread))
    assert tool.lesson.id in {lesson.id for lesson in memory.lessons(PRIYA, "p")}


def test_a_lesson_seen_again_is_as_new_as_the_day_it_was_seen_again() -> None:
    text = monthly(10).replace("needs fixture1.", "needs fixture1. <!-- seen:5 -->")  # the most used
    memory, store = setup(text, target=5)
    again = memory.record(PRIYA, "p", "The area0 suite needs fixture0.")  # January's lesson, said again today
    assert again.outcome == "merged"
    day = FakeClock().now().date().isoformat()
    assert f"- The area0 suite needs fixture0. <!-- seen:2 last:{day} -->" in store.files[KEY]
    assert memory.compact(PRIYA, "p").compacted
    kept = texts(memory)
    assert "The area0 suite needs fixture0." in kept  # seen again today: as new as today's lessons
    assert "The area1 suite needs fixture1." in kept  # the most used, on top of the target
    assert "The area6 suite needs fixture6." in kept  # the fifth newest: today's restatement took May's place
    assert "The area5 suite needs fixture5." not in kept  # recorded in May, never seen again
    assert len(kept) == 6
