"""The thread-noise bench measures what it says: with the fake Anthropic server answering at full length, every
persona's turn is posted (its filler answers are not near-duplicates the engine rightly drops), and a deliberation
still posts at most its turns plus two messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.thread_noise import full_length, measure
from nightwatch.domain.deliberation.replies import near_duplicate
from tests.fake_anthropic import FakeAnthropic


def turn_body(persona: str) -> dict[str, object]:
    return {
        "system": f"You are {persona}. Say what you think in at most 120 words.",
        "messages": [{"role": "user", "content": "Should we put the login endpoint behind a rate limiter?"}],
        "max_tokens": 200,
    }


def test_two_personas_full_length_answers_are_not_near_duplicates() -> None:
    maya, carlos = full_length(turn_body("Maya")), full_length(turn_body("Carlos"))
    assert min(len(maya.split()), len(carlos.split())) >= 150  # as long as max_tokens allows
    assert not near_duplicate(maya, carlos)


def test_with_the_fake_anthropic_server_every_speaker_posts_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic(full_length) as anthropic:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)  # the SDK reads it
        env = {"NIGHTWATCH_LLM": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-bench"}
        rows = measure(tmp_path, env, 1)
    assert [(row.named, row.turns) for row in rows] == [(2, 2), (4, 4), (6, 4)]  # at most 3 speakers and the lead
    assert all(row.messages <= row.turns + 2 for row in rows)
