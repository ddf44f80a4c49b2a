"""Mentions, thread replies and the Home tab, dispatched into the real Bolt app (Web API: FakeSlack)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from nightwatch.adapters.slack.pool import WorkerPool
from nightwatch.adapters.slack.threads import ChannelDirectory, Deliberations
from nightwatch.domain.deliberation.engine import DeliberationEngine
from nightwatch.domain.llm import LLMRequest, Purpose
from nightwatch.domain.ports import Clock
from tests import payloads
from tests.adapters.slack.stack import ADMIN, GatedLLM, Stack, running_stack
from tests.fake_slack import FakeSlack

PERSONAS = {"Maya", "Carlos", "Priya", "Dev"}


def human_says(fake: FakeSlack, text: str, *, thread_ts: str | None = None, user: str = "U1") -> dict[str, Any]:
    """Store a person's message in the fake channel C1 and return the app_mention event for it."""
    message: dict[str, Any] = {"type": "message", "user": user, "text": text}
    if thread_ts:
        message["thread_ts"] = thread_ts
    stored = fake.workspace.store_message("C1", message)
    return payloads.app_mention(text, ts=stored["ts"], thread_ts=thread_ts, user=user)


def request_text(request: LLMRequest) -> str:
    """Everything a model call shows the model: the system prompt and the messages."""
    return request.system.text + "\n".join(m.content for m in request.messages)


def persona_posts(fake: FakeSlack, thread_ts: str) -> list[dict[str, Any]]:
    return [m for m in fake.messages("C1", thread_ts) if m.get("username")]


def test_a_mention_is_acked_and_personas_post_in_its_thread_under_their_names(stack: Stack, fake: FakeSlack) -> None:
    event = human_says(fake, "<@UBOT> should we add rate limiting to the login endpoint?")
    started = time.monotonic()
    response = stack.dispatch(payloads.event_callback(event))
    assert response.status == 200
    assert time.monotonic() - started < 1.0
    stack.drain()
    posts = persona_posts(fake, event["ts"])
    assert {p["username"] for p in posts} <= PERSONAS
    assert len(posts) >= 3
    assert all(p["thread_ts"] == event["ts"] for p in posts)
    assert all(p.get("icon_emoji", "").startswith(":") for p in posts)  # each under its own icon
    [deliberation] = stack.log.recent()
    assert (deliberation.project, deliberation.thread) == ("general", f"C1:{event['ts']}")


def test_a_redelivered_event_starts_no_second_deliberation_even_after_a_restart(home: Path, fake: FakeSlack) -> None:
    event = human_says(fake, "<@UBOT> is our session cookie secure?")
    body = payloads.event_callback(event, event_id="EvDUP1")
    with running_stack(home, fake) as first:
        assert first.dispatch(body).status == 200
        fake.wait_for(lambda: any(d.status.value == "done" for d in first.log.recent()))
        assert first.dispatch(body).status == 200  # Slack's retry, after the first one finished
        first.drain()
        assert len(first.log.recent()) == 1
    with running_stack(home, fake) as restarted:  # same database: a restart, or another replica
        assert restarted.dispatch(body).status == 200
        restarted.drain()
        assert len(restarted.log.recent()) == 1


def test_a_mention_in_a_thread_deliberates_in_that_thread_with_the_mapped_project(
    stack: Stack, fake: FakeSlack
) -> None:
    stack.command(fake, "project Night Watch", user=ADMIN)
    root = fake.workspace.store_message("C1", {"type": "message", "user": "U1", "text": "the deploy plan"})
    event = human_says(fake, "<@UBOT> Maya, what could go wrong here?", thread_ts=root["ts"])
    stack.dispatch(payloads.event_callback(event))
    stack.drain()
    [deliberation] = stack.log.recent()
    assert deliberation.thread == f"C1:{root['ts']}"
    assert deliberation.project == "night-watch"
    assert "Maya" in {p["username"] for p in persona_posts(fake, root["ts"])}


def test_a_mention_without_a_topic_gets_a_hint_not_a_deliberation(stack: Stack, fake: FakeSlack) -> None:
    event = human_says(fake, "<@UBOT>")
    stack.dispatch(payloads.event_callback(event))
    fake.wait_for(lambda: len(fake.messages("C1", event["ts"])) == 2)
    assert "topic" in fake.messages("C1", event["ts"])[1]["text"]
    assert stack.log.recent() == []


def test_when_the_pool_is_full_the_user_is_told_in_the_thread(home: Path, fake: FakeSlack) -> None:
    gated = GatedLLM()
    with running_stack(home, fake, overrides=(gated.module(),), workers=1) as stack:
        first = human_says(fake, "<@UBOT> first topic about caching")
        second = human_says(fake, "<@UBOT> second topic about logging")
        stack.dispatch(payloads.event_callback(first))
        fake.wait_for(lambda: stack.slack.pool.running == 1)
        stack.dispatch(payloads.event_callback(second))
        fake.wait_for(lambda: len(fake.messages("C1", second["ts"])) == 2)
        busy = fake.messages("C1", second["ts"])[1]["text"]
        assert "busy" in busy
        assert "1 deliberations are running" in busy
        gated.gate.set()
        stack.drain()
        assert [d.topic for d in stack.log.recent()] == ["first topic about caching"]


def test_a_human_reply_during_a_deliberation_is_seen_by_the_next_turns(home: Path, fake: FakeSlack) -> None:
    gated = GatedLLM()
    with running_stack(home, fake, overrides=(gated.module(),)) as stack:
        event = human_says(fake, "<@UBOT> should we move sessions to Redis?")
        stack.dispatch(payloads.event_callback(event))
        fake.wait_for(lambda: len(gated.requests) == 1)  # the first turn is waiting for the model
        reply = "Keep in mind the Redis cluster has no persistence configured."
        said = {"type": "message", "user": "U3", "text": reply, "thread_ts": event["ts"], "channel": "C1"}
        stack.dispatch(payloads.event_callback(fake.workspace.store_message("C1", said)))  # the reply's event
        poster = stack.slack.deliberations.poster_for(f"C1:{event['ts']}")
        assert poster is not None
        fake.wait_for(lambda: any(m.text == reply for m in poster.messages()))  # its listener has run
        gated.gate.set()
        stack.drain()
        turns = [r for r in gated.requests if r.purpose is Purpose.TURN]
        assert len(turns) >= 2
        assert reply not in request_text(turns[0])
        assert all(reply in request_text(r) for r in turns[1:])


def test_a_thread_with_a_running_deliberation_gets_no_second_one(home: Path, fake: FakeSlack) -> None:
    gated = GatedLLM()
    with running_stack(home, fake, overrides=(gated.module(),)) as stack:
        pool = WorkerPool(size=4)
        clock = stack.container.get(Clock)
        client = stack.slack.client
        channels = ChannelDirectory(client=client, state=stack.state, clock=clock)
        deliberations = Deliberations(
            engine=stack.container.get(DeliberationEngine),
            log=stack.log,
            client=client,
            pool=pool,
            channels=channels,
            clock=clock,
        )
        first = human_says(fake, "<@UBOT> should we shard the database?")
        assert deliberations.start(channel="C1", thread_ts=first["ts"], topic="shard the database?").started
        again = deliberations.start(channel="C1", thread_ts=first["ts"], topic="Priya, how would we test it?")
        assert not again.started
        assert "already running" in again.reason
        gated.gate.set()
        assert pool.shutdown(10)
        assert len(stack.log.recent()) == 1
        later = deliberations.start(channel="C1", thread_ts=first["ts"], topic="and now?")
        assert "busy" in later.reason  # the thread was freed; only the closed pool refuses now


def test_human_messages_mark_a_mapped_channel_active_and_bot_messages_do_not(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, "project nw", user=ADMIN)
    [before] = stack.state.channels()
    stack.dispatch(payloads.event_callback(payloads.message("beep", bot_id="B9", ts="1795000001.000100")))
    assert stack.state.channels()[0].last_activity_at == before.last_activity_at
    stack.dispatch(payloads.event_callback(payloads.message("hello", ts="1795000001.000200")))
    fake.wait_for(lambda: stack.state.channels()[0].last_activity_at != before.last_activity_at)


def test_opening_the_home_tab_publishes_personas_and_their_memory(stack: Stack, fake: FakeSlack) -> None:
    maya = stack.personas.get("Maya")
    lesson = stack.memory.remember(maya, "night-watch", "Rotate the signing key when a maintainer leaves.")
    stack.dispatch(payloads.event_callback(payloads.app_home_opened("U1")))
    fake.wait_for(lambda: fake.home_view("U1") is not None)
    view = fake.home_view("U1")
    assert view is not None
    assert view["type"] == "home"
    text = str(view["blocks"])
    assert all(name in text for name in PERSONAS)
    assert "night-watch" in text
    assert lesson.text in text
    assert "lesson_forget" in text
    assert "persona_delete" not in text  # admin buttons only for admins


def test_an_admin_home_tab_has_the_persona_admin_buttons(stack: Stack, fake: FakeSlack) -> None:
    stack.dispatch(payloads.event_callback(payloads.app_home_opened("UADMIN")))
    fake.wait_for(lambda: fake.home_view("UADMIN") is not None)
    text = str(fake.home_view("UADMIN"))
    assert "persona_new" in text
    assert "persona_edit" in text
    assert "persona_delete" in text
