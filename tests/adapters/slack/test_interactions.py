"""Buttons and the persona modal: admin checks on the action itself, inline errors, rename and delete with memory."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nightwatch.adapters.slack.memory_words import MEMORY_CLEAR
from nightwatch.adapters.slack.views import ForgetTarget
from nightwatch.domain.errors import NotFoundError
from nightwatch.domain.personas import PersonaDraft
from tests import payloads
from tests.adapters.slack.stack import ADMIN, Stack
from tests.fake_slack import FakeSlack

FORM = {
    "name": "Rita",
    "role": "Release Manager",
    "avatar": ":rocket:",
    "who_i_am": "I ship things calmly.",
    "worldview": "Small releases\nRollbacks are features",
    "opinions": "releases: ship on Tuesdays",
}


def submit(stack: Stack, values: dict[str, Any], *, user: str = ADMIN, persona_id: int | None = None) -> Any:
    """Submit the persona modal; returns the ack's JSON body ({} for a plain close)."""
    response = stack.dispatch(payloads.view_submission(values, user=user, persona_id=persona_id))
    assert response.status == 200
    return json.loads(response.body) if response.body else {}


@pytest.mark.parametrize(
    ("fields", "block", "words"),
    [
        ({"name": "R!ta"}, "name", "not allowed"),
        ({"name": "R" * 41}, "name", "at most 40"),
        ({"name": "maya"}, "name", "already exists"),
        ({"avatar": "not an emoji"}, "avatar", "not usable"),
        ({"opinions": "no colon here"}, "opinions", "domain: opinion"),
        ({"role": "x" * 201}, "role", "at most 200"),
    ],
)
def test_invalid_submissions_get_inline_errors(stack: Stack, fields: dict[str, str], block: str, words: str) -> None:
    answer = submit(stack, payloads.persona_form(**{**FORM, **fields}))
    assert answer["response_action"] == "errors"
    assert words in answer["errors"][block]
    assert "Rita" not in {p.name for p in stack.personas.list()}


def test_a_valid_submission_creates_the_persona_and_refreshes_home(stack: Stack, fake: FakeSlack) -> None:
    answer = submit(stack, payloads.persona_form(**FORM))
    assert answer["response_action"] == "update"
    assert "Created Rita" in str(answer["view"])
    rita = stack.personas.get("Rita")
    assert rita.role == "Release Manager"
    assert rita.soul.worldview == ("Small releases", "Rollbacks are features")
    assert dict(rita.soul.opinions) == {"releases": ("ship on Tuesdays",)}
    fake.wait_for(lambda: fake.home_view(ADMIN) is not None)
    assert "Rita" in str(fake.home_view(ADMIN))


def test_a_member_cannot_create_a_persona_even_with_a_crafted_submission(stack: Stack) -> None:
    answer = submit(stack, payloads.persona_form(**FORM), user="U1")
    assert answer["response_action"] == "update"
    assert "Only Night Watch admins" in str(answer["view"])
    with pytest.raises(NotFoundError):
        stack.personas.get("Rita")


def test_renaming_through_edit_keeps_the_memory_and_hidden_fields(stack: Stack) -> None:
    maya = stack.personas.get("Maya")
    stack.memory.remember(maya, "general", "Tokens in URLs leak through referrer headers.")
    form = payloads.persona_form(name="Maia", role=maya.role, avatar=maya.avatar, who_i_am="Still me.")
    answer = submit(stack, form, persona_id=maya.id)
    assert "Renamed Maya to Maia" in str(answer["view"])
    maia = stack.personas.get("Maia")
    assert maia.id == maya.id
    assert maia.soul.pet_peeves == maya.soul.pet_peeves
    assert [lesson.text for lesson in stack.memory.lessons(maia, "general")] == [
        "Tokens in URLs leak through referrer headers."
    ]


def test_the_delete_button_is_refused_for_a_member(stack: Stack, fake: FakeSlack) -> None:
    maya = stack.personas.get("Maya")
    url = f"{fake.http_url}/response/del"
    stack.dispatch(payloads.block_action("persona_delete", str(maya.id), user="U1", response_url=url))
    fake.wait_for(lambda: bool(fake.calls_to("response_url")))
    refusal = fake.calls_to("response_url")[0].args
    assert "Only Night Watch admins can delete personas" in refusal["text"]
    assert refusal["response_type"] == "ephemeral"
    assert stack.personas.get("Maya").id == maya.id


def test_an_admin_deletes_a_persona_and_its_memory_is_archived(stack: Stack, fake: FakeSlack) -> None:
    dev = stack.personas.get("Dev")
    stack.memory.remember(dev, "general", "The CI cache hides flaky tests.")
    stack.dispatch(payloads.block_action("persona_delete", str(dev.id), user=ADMIN, channel="C1"))
    fake.wait_for(lambda: bool(fake.ephemerals("C1", ADMIN)))
    assert "archived" in fake.ephemerals("C1", ADMIN)[0]["text"]
    assert "Dev" not in {p.name for p in stack.personas.list()}
    assert any(path.name.startswith("dev-") for path in (stack.settings.home / "agents" / ".archived").iterdir())


def test_a_refusal_from_the_home_tab_opens_a_small_modal(stack: Stack, fake: FakeSlack) -> None:
    trigger = fake.new_trigger_id()
    stack.dispatch(payloads.block_action("persona_new", "new", user="U3", container="view", trigger_id=trigger))
    fake.wait_for(lambda: bool(fake.calls_to("views.open")))
    view = fake.calls_to("views.open")[0].args["view"]
    assert "Only Night Watch admins can create personas" in str(view["blocks"])


def _lesson_button(stack: Stack, source: str) -> tuple[str, str]:
    carlos = stack.personas.get("Carlos")
    lesson = stack.memory.remember(carlos, "general", "Write the ADR before the migration, not after.")
    return lesson.id, ForgetTarget("carlos", "general", lesson.id, source).encode()


def test_forget_from_a_thread_note_strikes_the_note_through(stack: Stack, fake: FakeSlack) -> None:
    _lesson_id, value = _lesson_button(stack, "note")
    note = fake.workspace.store_message("C1", {"type": "message", "user": "UBOT", "bot_id": "B1", "text": "★"})
    stack.dispatch(payloads.block_action("lesson_forget", value, user=ADMIN, message_ts=note["ts"]))
    fake.wait_for(lambda: bool(fake.calls_to("chat.update")))
    assert "~Write the ADR" in str(fake.messages("C1")[0]["blocks"])
    assert stack.memory.lessons(stack.personas.get("Carlos"), "general") == []


def test_forget_from_home_republishes_home_and_members_are_refused(stack: Stack, fake: FakeSlack) -> None:
    _, value = _lesson_button(stack, "home")
    stack.dispatch(
        payloads.block_action("lesson_forget", value, user="U3", container="view", trigger_id=fake.new_trigger_id())
    )
    fake.wait_for(lambda: bool(fake.calls_to("views.open")))
    assert "Only Night Watch admins can forget lessons" in str(fake.calls_to("views.open")[0].args["view"])
    assert stack.memory.lessons(stack.personas.get("Carlos"), "general")
    stack.dispatch(payloads.block_action("lesson_forget", value, user=ADMIN, container="view"))
    fake.wait_for(lambda: fake.home_view(ADMIN) is not None)
    assert stack.memory.lessons(stack.personas.get("Carlos"), "general") == []
    assert "Write the ADR" not in str(fake.home_view(ADMIN))


@pytest.mark.parametrize(
    ("action", "value", "answer"),
    [
        ("persona_delete", "not-a-number", "no longer points at a persona"),
        ("persona_delete", "9" * 40, "no longer points at a persona"),
        ("persona_delete", "", "no longer points at a persona"),
        ("persona_edit", "١٢", "no longer points at a persona"),  # Arabic-Indic digits: int() would take them
        ("lesson_forget", "{not json", "no longer points at a lesson"),
        ("lesson_forget", '{"p": "maya"}', "no longer points at a lesson"),
        ("lesson_forget", "[1, 2]", "no longer points at a lesson"),
    ],
)
def test_a_button_with_a_malformed_value_gets_a_clear_answer(
    stack: Stack, fake: FakeSlack, action: str, value: str, answer: str
) -> None:
    url = f"{fake.http_url}/response/bad"
    stack.dispatch(payloads.block_action(action, value, user=ADMIN, response_url=url, trigger_id=fake.new_trigger_id()))
    fake.wait_for(lambda: bool(fake.calls_to("response_url")))
    reply = fake.calls_to("response_url")[0].args
    assert answer in reply["text"]
    assert reply["response_type"] == "ephemeral"
    assert len(stack.personas.list()) == 4  # nothing was deleted


def test_memory_clear_asks_with_a_confirm_dialog_then_the_button_clears_and_rollback_restores(
    stack: Stack, fake: FakeSlack
) -> None:
    carlos = stack.personas.get("Carlos")
    stack.memory.remember(carlos, "general", "Write the ADR before the migration, not after.")
    refused = stack.command(fake, "memory clear Carlos", user="U3")
    assert "Only Night Watch admins or whoever created Carlos can clear its memory" in str(refused)

    asked = stack.command(fake, "memory clear Carlos", user=ADMIN)
    [button] = [e for b in asked["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert button["action_id"] == MEMORY_CLEAR
    assert button["confirm"]["confirm"]["text"] == "Clear"
    assert stack.memory.lessons(carlos, "general")  # nothing cleared before the click

    stack.dispatch(payloads.block_action(MEMORY_CLEAR, button["value"], user="U3", channel="C1"))
    fake.wait_for(lambda: bool(fake.ephemerals("C1", "U3")))
    assert "Only Night Watch admins or whoever created Carlos" in fake.ephemerals("C1", "U3")[0]["text"]
    assert stack.memory.lessons(carlos, "general")

    stack.dispatch(payloads.block_action(MEMORY_CLEAR, button["value"], user=ADMIN, channel="C1"))
    fake.wait_for(lambda: bool(fake.ephemerals("C1", ADMIN)))
    assert "Cleared Carlos's memory (1 lesson)" in fake.ephemerals("C1", ADMIN)[0]["text"]
    assert stack.memory.lessons(carlos, "general") == []
    assert stack.memory.rollback(carlos, "general")
    assert [lesson.text for lesson in stack.memory.lessons(carlos, "general")] == [
        "Write the ADR before the migration, not after."
    ]


def test_the_persona_modal_records_who_created_the_persona(stack: Stack) -> None:
    submit(stack, payloads.persona_form(**FORM))
    assert stack.personas.get("Rita").created_by == ADMIN
    assert stack.personas.get("Carlos").created_by is None  # a default persona, from its file


def test_a_personas_creator_may_clear_its_memory_and_nobody_else_but_admins(stack: Stack, fake: FakeSlack) -> None:
    rita = stack.personas.create(PersonaDraft(name="Rita", role="Release Manager"), created_by="U3").persona
    assert rita is not None
    stack.memory.remember(rita, "general", "Releases go out on Tuesdays.")

    refused = stack.command(fake, "memory clear Rita", user="U1")
    assert "Only Night Watch admins or whoever created Rita can clear its memory" in str(refused)
    asked = stack.command(fake, "memory clear Rita", user="U3")
    [button] = [e for b in asked["blocks"] if b["type"] == "actions" for e in b["elements"]]

    stack.dispatch(payloads.block_action(MEMORY_CLEAR, button["value"], user="U1", channel="C1"))
    fake.wait_for(lambda: bool(fake.ephemerals("C1", "U1")))
    assert "whoever created Rita" in fake.ephemerals("C1", "U1")[0]["text"]
    assert stack.memory.lessons(rita, "general")

    stack.dispatch(payloads.block_action(MEMORY_CLEAR, button["value"], user="U3", channel="C1"))
    fake.wait_for(lambda: bool(fake.ephemerals("C1", "U3")))
    assert "Cleared Rita's memory (1 lesson)" in fake.ephemerals("C1", "U3")[0]["text"]
    assert stack.memory.lessons(rita, "general") == []
