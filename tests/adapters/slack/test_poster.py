"""SlackPoster against FakeSlack: names and icons, sanitising, splitting, reading the thread back, retries."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient

from nightwatch.adapters.slack.app import retry_handlers
from nightwatch.adapters.slack.poster import SlackPoster, persona_identity, shortcode
from nightwatch.domain.deliberation.models import Decision, Verdict
from nightwatch.domain.models import Persona
from tests.fake_slack import FakeSlack

CARLOS = Persona(name="Carlos", slug="carlos", role="Tech Lead", avatar="🏗️")
MAYA = Persona(name="Maya", slug="maya", role="Security Reviewer", avatar="https://example.test/maya.png")


def poster_in_thread(
    fake: FakeSlack, *, retries: bool = False, refresh_seconds: float = 0.0
) -> tuple[SlackPoster, str]:
    """A poster in a new thread; by default it reads the thread from Slack on every messages() call."""
    root = fake.workspace.store_message("C1", {"type": "message", "user": "U1", "text": "<@UBOT> review the login"})
    client = WebClient(token="xoxb-test", base_url=fake.api_url, retry_handlers=retry_handlers() if retries else [])
    poster = SlackPoster(
        client=client, channel="C1", thread_ts=root["ts"], bot_user_id="UBOT", refresh_seconds=refresh_seconds
    )
    return poster, root["ts"]


def test_identity_uses_the_avatar_as_icon() -> None:
    assert persona_identity(CARLOS) == {"username": "Carlos", "icon_emoji": ":building_construction:"}
    assert persona_identity(MAYA) == {"username": "Maya", "icon_url": "https://example.test/maya.png"}
    assert shortcode("👍🏽") == ""  # a sequence has no shortcode; it leads the text instead


def test_turns_and_verdicts_post_in_the_thread_under_the_persona(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake)
    poster.post_turn(MAYA, "Tokens must expire.")
    poster.post_verdict(CARLOS, Verdict(Decision.APPROVE, "Ship it."), "APPROVE: ship it with a TTL.")
    replies = fake.messages("C1", ts)[1:]
    assert [(m["username"], m["thread_ts"]) for m in replies] == [("Maya", ts), ("Carlos", ts)]
    assert replies[0]["icon_url"] == "https://example.test/maya.png"
    assert replies[1]["blocks"][0]["text"]["text"] == "APPROVE: ship it with a TTL."


def test_model_text_is_sanitised_before_posting(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake)
    poster.post_turn(MAYA, "<!channel> ping <!subteam^S1|@oncall>, <@U1> and <@U999>: look")
    text = fake.messages("C1", ts)[-1]["text"]
    assert "<!channel>" not in text
    assert "<!subteam" not in text
    assert "<@U999>" not in text
    assert "<@U1>" in text  # U1 is already in the thread


def test_long_text_is_split_into_sections_and_messages(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake)
    paragraph = "Check the rate limiter. " * 120  # ~2,900 characters
    poster.post_turn(CARLOS, "\n\n".join([paragraph] * 60))
    replies = fake.messages("C1", ts)[1:]
    assert len(replies) >= 2  # 60 sections do not fit the 50-block limit of one message
    assert all(len(b["text"]["text"]) <= 3000 for m in replies for b in m["blocks"])
    assert sum(len(m["blocks"]) for m in replies) >= 60


def test_messages_reads_people_and_personas_and_leaves_app_notes_out(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake)
    poster.post_turn(MAYA, "Tokens must expire.")
    poster.post_lesson(MAYA, "general", "abc123", "Expiry is tested with a frozen clock.")
    fake.workspace.store_message(
        "C1", {"type": "message", "user": "U1", "text": "<@U1> Maya, and refresh tokens?", "thread_ts": ts}
    )
    seen = poster.messages()
    assert [(m.author, m.persona) for m in seen] == [("alice", None), ("Maya", "Maya"), ("alice", None)]
    assert seen[0].text == "review the login"  # the app's own mention is dropped
    assert seen[2].text == "@alice Maya, and refresh tokens?"


def test_the_thread_is_read_once_per_refresh_and_kept_current_locally(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake, refresh_seconds=60)
    poster.post_turn(MAYA, "Tokens must expire.")
    poster.post_turn(CARLOS, "Agreed; add it to the checklist.")
    reply = {"type": "message", "user": "U1", "text": "And refresh tokens?", "thread_ts": ts, "ts": "1800000000.5"}
    poster.observe(reply)  # the `message` event of a person's reply
    poster.observe(reply)  # a redelivery adds nothing
    seen = poster.messages()
    assert [(m.author, m.text) for m in seen] == [
        ("alice", "review the login"),
        ("Maya", "Tokens must expire."),
        ("Carlos", "Agreed; add it to the checklist."),
        ("alice", "And refresh tokens?"),
    ]
    assert len(fake.calls_to("conversations.replies")) == 1


def test_a_reply_that_reached_another_replica_is_seen_at_the_next_refresh(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake, refresh_seconds=0.2)
    assert len(poster.messages()) == 1
    fake.workspace.store_message("C1", {"type": "message", "user": "U1", "text": "One more thing", "thread_ts": ts})
    assert len(poster.messages()) == 1  # within the refresh interval: served locally
    fake.wait_for(lambda: len(poster.messages()) == 2, timeout=2.0)


def test_a_lesson_note_is_a_context_block_with_a_forget_button(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake)
    poster.post_lesson(CARLOS, "general", "abc123", "Write the ADR first.")
    note = fake.messages("C1", ts)[-1]
    assert note["blocks"][0]["type"] == "context"
    assert note["blocks"][0]["elements"][0]["text"] == "★ *Carlos* remembered: Write the ADR first."
    button = note["blocks"][1]["elements"][0]
    assert button["action_id"] == "lesson_forget"
    assert '"l": "abc123"' in button["value"]


def test_a_recall_posts_nothing_to_spare_the_thread_and_the_rate_limit(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake)
    poster.post_recall(CARLOS, "rate limiting", 3)
    assert len(fake.messages("C1", ts)) == 1  # the root only


def test_without_a_thread_the_first_post_starts_one(fake: FakeSlack) -> None:
    client = WebClient(token="xoxb-test", base_url=fake.api_url)
    poster = SlackPoster(client=client, channel="C1", thread_ts=None)
    assert poster.messages() == []
    poster.post_turn(MAYA, "The signing key was not rotated after the maintainer change.")
    poster.post_lesson(MAYA, "general", "abc", "Rotate keys on maintainer changes.")
    root, note = fake.messages("C1")
    assert "thread_ts" not in root or root["thread_ts"] == root["ts"]
    assert note["thread_ts"] == root["ts"] == poster.thread_ts


@pytest.mark.slow
def test_a_rate_limited_post_is_retried(fake: FakeSlack) -> None:
    poster, ts = poster_in_thread(fake, retries=True)
    fake.plan_429("chat.postMessage", retry_after=1)
    poster.post_turn(MAYA, "Tokens must expire.")
    assert [c.status for c in fake.calls_to("chat.postMessage")] == [429, 200]
    assert fake.messages("C1", ts)[-1]["username"] == "Maya"
