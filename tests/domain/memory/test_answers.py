"""A model's answer read as structured lessons: category, abstract, overview; the older one-line form still works."""

from __future__ import annotations

import pytest

from nightwatch.domain.memory.answers import Candidate, category_of, parse_candidates
from nightwatch.domain.memory.lesson_text import OVERVIEW_MAX


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            "- [cases] Retries reused no idempotency key; always send one.\n  > Found in the March review.",
            [Candidate("Retries reused no idempotency key; always send one.", "cases", "Found in the March review.")],
        ),
        (
            "- (Events) The 2026-03-02 deploy was rolled back.\n    The canary caught it.\n    Nobody paged.",
            [Candidate("The 2026-03-02 deploy was rolled back.", "events", "The canary caught it. Nobody paged.")],
        ),
        (
            "- preferences: We squash merges.\n  Overview: decided in the Q3 retro.",
            [Candidate("We squash merges.", "preferences", "decided in the Q3 retro.")],
        ),
        (
            "Here are my lessons:\n- **entities**: Redis 7.2 holds the sessions.\n  > In staging and prod.\nDone.",
            [Candidate("Redis 7.2 holds the sessions.", "entities", "In staging and prod.")],
        ),
        ("- one lesson here\n- two lesson here", [Candidate("one lesson here"), Candidate("two lesson here")]),
        ("- [misc] Unknown category stays text.", [Candidate("[misc] Unknown category stays text.")]),
        ("- [patterns] Same words.\n  > Same words.", [Candidate("Same words.", "patterns")]),  # no echo overview
        (
            '[{"category": "Profile", "abstract": "Ana owns billing.", "overview": "Since May."}, "plain", 3]',
            [Candidate("Ana owns billing.", "profile", "Since May."), Candidate("plain")],
        ),
        ('{"lessons": [{"text": "From text.", "category": "nope"}]}', [Candidate("From text.")]),
        ("```\n- [cases] fenced\n  > fence overview\n```", [Candidate("fenced", "cases", "fence overview")]),
        ("NONE", []),
        ("- [events]", []),
    ],
)
def test_every_form_a_model_may_answer_in_is_read(answer: str, expected: list[Candidate]) -> None:
    assert parse_candidates(answer, max_chars=400) == expected


def test_an_overview_is_one_line_without_markup_and_capped() -> None:
    long = "word " * 400
    [candidate] = parse_candidates(f"- [cases] A lesson.\n  > {long}<!-- seen:9 -->", max_chars=400)
    assert candidate.overview is not None
    assert len(candidate.overview) <= OVERVIEW_MAX
    assert candidate.overview.endswith("…")
    assert "<!--" not in candidate.overview


def test_the_overview_belongs_to_the_bullet_right_above_it() -> None:
    answer = "- [events] First.\n  > about the first\n- [cases] Second.\n  > about the second\n  > and more"
    first, second = parse_candidates(answer, max_chars=400)
    assert first.overview == "about the first"
    assert second.overview == "about the second and more"


def test_a_category_is_a_guess_never_an_error() -> None:
    assert category_of(" Events ") == "events"
    assert category_of("incident") is None
    assert category_of(7) is None
