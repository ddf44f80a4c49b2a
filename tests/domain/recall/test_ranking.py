"""Ranking and packing of lessons: relevance first, then recency and use; pins stay; budgets hold; stale never."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from nightwatch.domain.models import Lesson
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.tokens import estimate_tokens

NOW = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)


def lesson(
    lesson_id: str,
    text: str,
    *,
    days_ago: float = 1.0,
    link: str | None = None,
    **fields: object,
) -> Lesson:
    return Lesson(id=lesson_id, text=text, recorded_at=NOW - timedelta(days=days_ago), link=link, **fields)  # type: ignore[arg-type]


def cost(item: Lesson) -> int:
    return estimate_tokens(f"- {item.text}\n")


def ids(found: Sequence[object]) -> list[str]:
    return [getattr(item, "lesson", item).id for item in found]  # Scored or Lesson


FILLER = [
    lesson(f"f{i}", text, days_ago=40 + i, link=f"t{i}")
    for i, text in enumerate(
        [
            "Release notes go out on Thursdays after the freeze.",
            "The staging cluster is reset every Monday morning.",
            "Product wants dark mode before the conference.",
            "Flaky login test blamed on the clock in CI.",
            "Keep pull requests under four hundred lines.",
        ]
    )
]


def test_a_fresh_lesson_beats_an_equally_relevant_old_one() -> None:
    old = lesson("old", "Rotate the signing key after each incident.", days_ago=200, link="a")
    fresh = lesson("new", "Rotate the signing key after each incident!", days_ago=2, link="b")
    ranked = Recall(half_life_days=30).rank([old, *FILLER, fresh], "signing key rotation", NOW)
    assert ids(ranked)[:2] == ["new", "old"]


def test_relevance_dominates_recency() -> None:
    relevant_old = lesson("old", "Database migrations need a rollback script.", days_ago=365, link="a")
    fresh_unrelated = lesson("new", "The team lunch moved to Friday.", days_ago=0, link="b")
    ranked = Recall().rank([relevant_old, fresh_unrelated, *FILLER], "migration rollback", NOW)
    assert ids(ranked)[0] == "old"


def test_a_pinned_lesson_stays_when_irrelevant_and_the_budget_is_tight() -> None:
    pinned = lesson("pin", "Always page the on-call before a rollback.", days_ago=400, pinned=True, link="p")
    relevant = [
        lesson(f"r{i}", f"Cache invalidation bug number {i} in the cache layer.", link=f"r{i}") for i in range(5)
    ]
    budget = cost(pinned) + cost(relevant[0])
    chosen = Recall().select([*relevant, pinned, *FILLER], "cache invalidation", NOW, budget, cost)
    assert ids(chosen)[0] == "pin"
    assert len(chosen) == 2
    assert sum(cost(item) for item in chosen) <= budget


def test_the_budget_is_never_exceeded() -> None:
    rng = random.Random(20261121)
    words = "auth cache deploy rollback token session index review flaky queue retry alert".split()
    recall = Recall()
    for _ in range(150):
        lessons = [
            lesson(
                f"l{i}",
                " ".join(rng.choices(words, k=rng.randint(1, 40))),
                days_ago=rng.uniform(0, 300),
                pinned=rng.random() < 0.1,
                seen=rng.randint(1, 5),
            )
            for i in range(rng.randint(0, 60))
        ]
        budget = rng.randint(0, 400)
        chosen = recall.select(lessons, " ".join(rng.choices(words, k=3)), NOW, budget, cost)
        assert sum(cost(item) for item in chosen) <= budget
        assert len(set(ids(chosen))) == len(chosen)


def test_packing_fills_the_budget_past_a_lesson_too_big_to_fit() -> None:
    big = lesson("big", "Deploy " + "word " * 300, link="x")
    small = lesson("small", "Deploy on Tuesdays only.", days_ago=5, link="y")
    chosen = Recall().select([big, small], "deploy", NOW, 50, cost)
    assert ids(chosen) == ["small"]


def test_stale_lessons_are_never_returned() -> None:
    stale = lesson("old", "Release train runs on Tuesdays.", superseded_by="new", link="a")
    current = lesson("new", "Release train runs on Wednesdays.", link="b")
    recall = Recall()
    assert "old" not in ids(recall.rank([stale, current], "release train Tuesdays", NOW))
    assert "old" not in ids(recall.select([stale, current], "release train Tuesdays", NOW, 1000, cost))
    pinned_stale = lesson("pin", "Tuesdays are release days.", superseded_by="new", pinned=True)
    assert "pin" not in ids(recall.select([pinned_stale, current], "", NOW, 1000, cost))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("auth_service.py", "exact"),
        ("what changed in auth_service.py?", "exact"),
        ("v2.3.1", "version"),
        ("upgrade to 2.3.1", "version"),
        ("CVE-2024-3094", "cve"),
    ],
)
def test_identifiers_and_versions_match_whole(query: str, expected: str) -> None:
    lessons = [
        lesson("exact", "auth_service.py swallows token errors; log them.", link="1"),
        lesson("near1", "auth_service.ts mirrors the python service.", link="2"),
        lesson("near2", "The auth service in service.py retries twice.", link="3"),
        lesson("near3", "auth_service_test.py is slow.", link="4"),
        lesson("version", "v2.3.1 broke the session cookie.", link="5"),
        lesson("vnear1", "v2.3.0 was fine.", link="6"),
        lesson("vnear2", "v3.2.1 renamed the flags, and 2.1 dropped the cache.", link="7"),
        lesson("cve", "CVE-2024-3094 affects xz; pin the old package.", link="8"),
        lesson("cvenear", "CVE-2024-3095 is a false positive for us; 3094 tests pass.", link="9"),
        *FILLER,
    ]
    assert ids(Recall().rank(lessons, query, NOW))[0] == expected


def test_a_part_of_an_identifier_still_finds_it() -> None:
    lessons = [lesson("file", "auth_service.py swallows token errors.", link="1"), *FILLER]
    assert ids(Recall().rank(lessons, "the auth service", NOW))[0] == "file"


def test_stemming_matches_other_forms_of_a_word() -> None:
    lessons = [
        lesson("mig", "A migration without a rollback script is never merged.", link="1"),
        lesson("other", "Migrants from the old billing system need new accounts.", link="2"),
        *FILLER,
    ]
    assert ids(Recall().rank(lessons, "migrations", NOW))[0] == "mig"


def test_seen_and_injected_counts_break_ties() -> None:
    plain = lesson("plain", "Check the cache headers on every deploy.", link="1")
    repeated = lesson("seen", "Check the cache headers on every deploy!", link="2", seen=4)
    injected = lesson("inj", "Check the cache headers on every deploy.", link="3", injected=6)
    ranked = ids(Recall().rank([plain, repeated, injected, *FILLER], "cache headers", NOW))
    assert ranked[:3] == ["seen", "inj", "plain"]


def test_an_empty_query_falls_back_to_recency_and_use() -> None:
    lessons = [
        lesson("oldest", "One thing.", days_ago=90, link="1"),
        lesson("newest", "Another thing.", days_ago=1, link="2"),
        lesson("middle", "A third thing.", days_ago=30, link="3"),
    ]
    assert ids(Recall().rank(lessons, "", NOW)) == ["newest", "middle", "oldest"]
    assert ids(Recall().rank(lessons, "zzz unknown words", NOW)) == ["newest", "middle", "oldest"]


def test_nothing_in_nothing_out() -> None:
    recall = Recall()
    assert recall.rank([], "anything", NOW) == []
    assert recall.select([], "anything", NOW, 100, cost) == []
    assert recall.select(FILLER, "anything", NOW, 0, cost) == []


def test_neighbours_from_the_same_interaction_lend_context() -> None:
    when = NOW - timedelta(days=3)
    question = Lesson(id="q", text="Why did the nightly backup job fail?", recorded_at=when, link="t1")
    answer = Lesson(id="a", text="It ran out of disk on the replica.", recorded_at=when, link="t1")
    other = Lesson(id="o", text="Disk alerts page the on-call at ninety percent.", recorded_at=when, link="t2")
    together = {s.lesson.id: s.score for s in Recall().rank([question, answer, other, *FILLER], "backup disk", NOW)}
    assert together["a"] > together["o"]
    apart = replace(answer, link="t3")  # another interaction: the question no longer lends its words
    split = {s.lesson.id: s.score for s in Recall().rank([question, apart, other, *FILLER], "backup disk", NOW)}
    assert split["a"] < together["a"]


@pytest.mark.parametrize("container", [list, tuple])
def test_counts_and_pins_changed_in_place_are_honoured_on_the_next_read(container: type) -> None:
    recall = Recall()
    first = [lesson("a", "Deploy freeze on Fridays.", link="1"), lesson("b", "Deploy with two reviewers.", link="2")]
    room_for_one = max(cost(item) for item in first)
    assert ids(recall.select(container(first), "", NOW, room_for_one, cost)) == ["b"]
    pinned = container([replace(first[0], pinned=True), first[1]])
    assert ids(recall.select(pinned, "", NOW, room_for_one, cost)) == ["a"]
    assert ids(recall.select(pinned, "", NOW, room_for_one, cost)) == ["a"]  # the same tuple again
    seen = container([first[0], replace(first[1], superseded_by="a")])
    assert ids(recall.rank(seen, "", NOW)) == ["a"]


def test_a_lesson_dated_after_now_counts_as_fresh_not_fresher() -> None:
    ahead = lesson("ahead", "Pin the base image digest.", days_ago=-3, link="1")
    today = lesson("today", "Pin the base image digest!", days_ago=0, link="2")
    scores = {s.lesson.id: s.score for s in Recall().rank([ahead, today], "base image", NOW)}
    assert scores["ahead"] == pytest.approx(scores["today"])


def test_a_changed_lesson_set_is_indexed_again() -> None:
    recall = Recall()
    before = [*FILLER]
    assert ids(recall.rank(before, "kubernetes", NOW))[0] != "k8s"
    after = [*FILLER, lesson("k8s", "Kubernetes upgrades need a drain first.", link="k")]
    assert ids(recall.rank(after, "kubernetes", NOW))[0] == "k8s"


def test_a_long_thread_as_query_still_finds_the_lesson() -> None:
    chatter = " ".join(f"word{i} filler{i % 7} talk" for i in range(400))
    lessons = [lesson("hit", "The payments webhook must be idempotent.", link="1"), *FILLER]
    assert ids(Recall().rank(lessons, f"payments webhook {chatter}", NOW))[0] == "hit"


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_lessons_of_one_interaction_lend_each_other_words_whatever_their_number(count: int) -> None:
    same = [lesson(f"s{i}", text, days_ago=3, link="t") for i, text in enumerate(
        ["The deploy failed on Friday.", "It was the migration again.", "Roll back first.", "Page the DBA.",
         "Check the lock table.", "Write the postmortem.", "Add a canary."][:count])]  # fmt: skip
    ranked = Recall().rank([*FILLER, *same], "deploy failed friday", NOW)
    assert ids(ranked)[0] == "s0"
    if count > 1:  # "It was the migration again" says nothing of the deploy itself; its neighbour does
        assert ranked[ids(ranked).index("s1")].parts.keyword > 0
