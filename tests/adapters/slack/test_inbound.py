"""Secrets people type in Slack are redacted where they enter: mentions, thread replies, commands and modals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nightwatch.adapters.slack.inbound import redact_payload
from nightwatch.domain.llm import LLMRequest
from tests import payloads
from tests.adapters.secrets.secret_corpus import ALNUM, UPPER_DIGITS, digits, fake
from tests.adapters.slack.stack import ADMIN, GatedLLM, Stack, running_stack
from tests.fake_slack import FakeSlack

SLACK = f"xoxb-{digits(12)}-{digits(13)}-{fake(ALNUM, 24)}"
GITHUB = f"ghp_{fake(ALNUM, 36)}"
AWS = f"AKIA{fake(UPPER_DIGITS, 16)}"


def request_text(request: LLMRequest) -> str:
    return request.system.text + "\n".join(m.content for m in request.messages)


def test_a_payload_is_redacted_in_what_people_typed_and_nowhere_else() -> None:
    mention = payloads.event_callback(payloads.app_mention(f"<@UBOT> we leaked {SLACK}"))
    command = payloads.slash_command(f"remember Maya rotate {GITHUB}")
    modal = payloads.view_submission(payloads.persona_form(name="Rita", who_i_am=f"I hold {AWS}."))
    for body in (mention, command, modal):
        redact_payload(body)
    assert mention["event"]["text"] == "<@UBOT> we leaked [redacted slack token]"
    assert command["text"] == "remember Maya rotate [redacted github token]"
    values = modal["view"]["state"]["values"]
    assert values["who_i_am"]["who_i_am"]["value"] == "I hold [redacted aws access key]."
    assert values["name"]["name"]["value"] == "Rita"
    assert mention["event"]["ts"] == payloads.app_mention("x")["ts"]


def test_tokens_in_a_mention_and_a_thread_reply_never_reach_the_model_the_thread_or_the_log(
    home: Path, fake: FakeSlack
) -> None:
    gated = GatedLLM()
    with running_stack(home, fake, overrides=(gated.module(),)) as stack:
        text = f"<@UBOT> our bot token {SLACK} leaked, rotate?"
        event = payloads.app_mention(text, ts=fake.workspace.store_message("C1", {"user": "U1", "text": text})["ts"])
        stack.dispatch(payloads.event_callback(event))
        fake.wait_for(lambda: len(gated.requests) == 1)
        reply = {"type": "message", "user": "U3", "text": f"also {GITHUB}", "thread_ts": event["ts"], "channel": "C1"}
        stack.dispatch(payloads.event_callback(fake.workspace.store_message("C1", reply)))
        gated.gate.set()
        stack.drain()
        seen_by_model = "\n".join(request_text(r) for r in gated.requests)
        posted = json.dumps([m for m in fake.messages("C1", event["ts"]) if m.get("username")])
        [deliberation] = stack.log.recent()
        stored = json.dumps([deliberation.topic, *(t.text for t in stack.log.turns(deliberation.id or 0))])
    assert "[redacted slack token]" in seen_by_model
    assert "[redacted github token]" in seen_by_model  # the reply was read back from the thread, redacted
    for secret in (SLACK, GITHUB):
        assert secret not in seen_by_model
        assert secret not in posted
        assert secret not in stored


def test_a_lesson_remembered_by_command_is_stored_redacted_and_forgotten_by_its_id(
    stack: Stack, fake: FakeSlack
) -> None:
    answer = stack.command(fake, f"remember Maya The deploy job printed {AWS}; mask cloud keys in CI logs.")
    assert AWS not in json.dumps(answer)
    [lesson] = stack.memory.lessons(stack.personas.get("Maya"), "general")
    assert lesson.text == "The deploy job printed [redacted aws access key]; mask cloud keys in CI logs."
    done = stack.command(fake, f"forget Maya {lesson.id}", user=ADMIN)
    assert f"forgot `{lesson.id}`" in f"{done.get('text', '')} {done.get('blocks', '')}"


def test_a_persona_made_in_the_modal_keeps_no_secret(stack: Stack) -> None:
    form = payloads.persona_form(name="Rita", role="Release Manager", who_i_am=f"I deploy with {GITHUB}.")
    answer: dict[str, Any] = json.loads(stack.dispatch(payloads.view_submission(form, user=ADMIN)).body)
    assert answer["response_action"] == "update"
    assert stack.personas.get("Rita").soul.who_i_am == "I deploy with [redacted github token]."
