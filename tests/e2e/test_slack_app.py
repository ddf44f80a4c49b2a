"""End to end: `run_socket_mode` with the real SocketModeHandler and WebClient against FakeSlack, offline model."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from nightwatch.domain.deliberation.models import DeliberationStatus
from tests import payloads
from tests.adapters.slack.stack import ADMIN, APP_TOKEN, BOT_TOKEN, GatedLLM
from tests.e2e.slack_live import LiveApp, live_app
from tests.fake_slack import FakeSlack

pytestmark = pytest.mark.slow

PERSONAS = {"Maya", "Carlos", "Priya", "Dev"}


def thread_of(fake: FakeSlack, ts: str) -> list[dict[str, Any]]:
    return fake.messages("C1", ts)


def finished(fake: FakeSlack, ts: str) -> bool:
    """The lead's closing post and at least one lesson note are in the thread."""
    texts = [str(m.get("text", "")) for m in thread_of(fake, ts)]
    return any("remembered" in t for t in texts)


def test_a_mention_leads_to_persona_posts_in_its_thread(live: LiveApp, fake: FakeSlack) -> None:
    mention = fake.post_human_message("C1", "<@UBOT> should we put the login endpoint behind a rate limiter?")
    fake.wait_for(lambda: finished(fake, mention["ts"]), timeout=15)
    posts = [m for m in thread_of(fake, mention["ts"]) if m.get("username")]
    assert {p["username"] for p in posts} <= PERSONAS
    assert len({p["username"] for p in posts}) >= 3
    assert all(p["thread_ts"] == mention["ts"] and p.get("icon_emoji") for p in posts)
    assert any("remembered" in str(m.get("text")) for m in thread_of(fake, mention["ts"]))
    assert fake.calls_to("auth.test")  # the real single-workspace authorization ran


def test_a_slash_command_is_acked_and_opens_the_modal(live: LiveApp, fake: FakeSlack) -> None:
    envelope = fake.send_slash_command("persona new", user_id=ADMIN)
    assert fake.ack_for(envelope) == {}
    assert fake.ack_times[envelope] < 3.0
    fake.wait_for(lambda: bool(fake.calls_to("views.open")))
    assert fake.calls_to("views.open")[0].args["view"]["callback_id"] == "persona_save"


def test_an_invalid_modal_submission_gets_inline_errors(live: LiveApp, fake: FakeSlack) -> None:
    form = payloads.persona_form(name="Carlos", role="x" * 201, avatar=":ok:")
    envelope = fake.send_interactive(payloads.view_submission(form, user=ADMIN))
    ack = fake.ack_for(envelope)
    assert ack["response_action"] == "errors"
    assert "already exists" in ack["errors"]["name"]
    assert "at most 200" in ack["errors"]["role"]


def test_opening_the_home_tab_publishes_it(live: LiveApp, fake: FakeSlack) -> None:
    fake.send_event(payloads.app_home_opened("U1"))
    fake.wait_for(lambda: fake.home_view("U1") is not None)
    view = fake.home_view("U1")
    assert view is not None
    assert all(name in str(view["blocks"]) for name in PERSONAS)


def test_a_duplicate_delivery_leads_to_one_deliberation(live: LiveApp, fake: FakeSlack) -> None:
    text = "<@UBOT> is the session cookie secure enough?"
    stored = fake.workspace.store_message("C2", {"type": "message", "user": "U1", "text": text})
    event = payloads.app_mention(text, channel="C2", ts=stored["ts"])
    fake.send_event(event, event_id="EvSAME")
    fake.send_event(event, event_id="EvSAME", retry_num=1)  # while the first is running
    fake.wait_for(lambda: any("remembered" in str(m.get("text")) for m in fake.messages("C2", stored["ts"])), 15)
    fake.wait_for(lambda: live.stack.slack.pool.running == 0)
    fake.send_event(event, event_id="EvSAME", retry_num=2)  # after it finished: only the record stops this one
    assert live.stop() is True  # drains every listener first, so a late duplicate would show below
    [deliberation] = live.stack.log.recent()
    assert deliberation.project == "night-watch"  # the channel's name, as a project slug


def test_a_429_is_retried(live: LiveApp, fake: FakeSlack) -> None:
    fake.plan_429("chat.postMessage", retry_after=1, times=1)
    mention = fake.post_human_message("C1", "<@UBOT> do we need a staging database?")
    fake.wait_for(lambda: finished(fake, mention["ts"]), timeout=15)
    statuses = [c.status for c in fake.calls_to("chat.postMessage")]
    assert statuses[0] == 429
    assert statuses[1] == 200
    assert len([m for m in thread_of(fake, mention["ts"]) if m.get("username")]) >= 3


def test_a_disconnect_leads_to_a_reconnect(live: LiveApp, fake: FakeSlack) -> None:
    fake.disconnect()
    fake.wait_for(lambda: fake.connections >= 2 and fake.open_connections >= 1, timeout=10)
    fake.send_event(payloads.app_home_opened("U1"))
    fake.wait_for(lambda: fake.home_view("U1") is not None)


def test_a_non_admins_delete_is_refused(live: LiveApp, fake: FakeSlack) -> None:
    maya = live.stack.personas.get("Maya")
    click = payloads.block_action("persona_delete", str(maya.id), user="U1", channel="C1")
    del click["trigger_id"]
    fake.send_interactive(click)
    fake.wait_for(lambda: bool(fake.ephemerals("C1", "U1")))
    assert "Only Night Watch admins can delete personas" in fake.ephemerals("C1", "U1")[0]["text"]
    assert live.stack.personas.get("Maya").id == maya.id


def test_tokens_never_reach_the_logs(live: LiveApp, fake: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    logging.getLogger("nightwatch.test").warning("connecting with %s and %s", APP_TOKEN, BOT_TOKEN)
    fake.send_event(payloads.app_home_opened("U1"))
    fake.wait_for(lambda: fake.home_view("U1") is not None)
    assert "test-token" not in caplog.text
    assert "connecting with [redacted slack token] and [redacted slack token]" in caplog.text


def test_stopping_hands_over_a_deliberation_still_waiting_for_the_model(home: Path, fake: FakeSlack) -> None:
    gated = GatedLLM()
    with live_app(home, fake, hand_over_seconds=0.2, overrides=(gated.module(),)) as live:
        mention = fake.post_human_message("C1", "<@UBOT> should we rewrite the billing service?")
        fake.wait_for(lambda: bool(gated.requests))  # the first turn waits for the model
        assert live.stop() is False  # still waiting after the hand-over wait: its lease is released for it
        [deliberation] = live.stack.log.recent()
        assert deliberation.status is DeliberationStatus.RUNNING  # left running, for another replica
        assert deliberation.owner is None  # handed over: another replica claims it at once (takeover.py)
        assert deliberation.takeovers == 0
        pool = live.stack.slack.pool
        gated.gate.set()  # the model answers at last: the turn is neither stored nor posted
        fake.wait_for(lambda: pool.running == 0)
        assert live.stack.log.turns(deliberation.id or 0) == []
        assert [m for m in fake.messages("C1", mention["ts"]) if m.get("username") or m.get("bot_id")] == []
