"""/nightwatch share and unshare of one lesson or one pin, dispatched into the real Bolt app against the fake Slack."""

from __future__ import annotations

import pytest

from nightwatch.adapters.slack.share_commands import ShareWords, parse_share
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.pins.models import PinKind
from nightwatch.domain.sharing import Item, ItemKind
from tests.adapters.slack.stack import ADMIN, Stack
from tests.fake_slack import FakeSlack

COOKIE = "The session cookie lacks the SameSite attribute on the admin console."
THREAT = "The admin API is reachable only from the VPN."


def text_of(answer: dict[str, object]) -> str:
    return f"{answer.get('text', '')} {answer.get('blocks', '')}"


def listed(stack: Stack) -> list[tuple[str, str, str, str]]:
    return [(v.sharer.name, v.audience, v.project, v.shown) for v in stack.sharing.shares()]


def mayas_cookie_lesson(stack: Stack, project: str = "general") -> str:
    return stack.memory.remember(stack.personas.get("Maya"), project, COOKIE).id


def mayas_threat_pin(stack: Stack, project: str = "night-watch") -> str:
    return str(stack.pins.add("Maya", project, PinKind.TEXT, THREAT, added_by=ADMIN).pin.id)


@pytest.mark.parametrize(
    ("words", "with_what", "expected"),
    [
        ("Maya with Dev lesson 0401DC1D", True, ShareWords("Maya", "Dev", item=Item(ItemKind.LESSON, "0401dc1d"))),
        (
            "Maya with Dev Ops pin #12 project night-watch",
            False,
            ShareWords("Maya", "Dev Ops", "night-watch", item=Item(ItemKind.PIN, "12")),
        ),
        ("Maya with all Pin 3", True, ShareWords("Maya", "all", item=Item(ItemKind.PIN, "3"))),
        ("Maya with Dev pins", True, ShareWords("Maya", "Dev", None, "pins")),  # all her pins, not one
    ],
)
def test_an_item_after_the_receiver_is_read_as_one_lesson_or_one_pin(
    words: str, with_what: bool, expected: ShareWords
) -> None:
    assert parse_share(words, command="share", with_what=with_what) == expected


@pytest.mark.parametrize(
    ("words", "message"),
    [("Maya with Dev lesson nope", "A lesson id is 8 characters"), ("Maya with Dev pin x", "A pin's id")],
)
def test_a_malformed_item_says_what_an_id_is(words: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        parse_share(words, command="share", with_what=True)


def test_an_admin_shares_one_lesson_of_the_channels_project_and_anyone_sees_which(
    stack: Stack, fake: FakeSlack
) -> None:
    cookie = mayas_cookie_lesson(stack)
    answer = stack.command(fake, f"share Maya with Dev lesson {cookie}", user=ADMIN)
    assert answer["response_type"] == "ephemeral"
    assert answer["text"] == f"Maya now shares lesson {cookie} on project general with Dev: {COOKIE}"
    assert listed(stack) == [("Maya", "Dev", "general", f"lesson {cookie}: {COOKIE}")]
    assert f"*Maya* → *Dev* · general · lesson {cookie}: {COOKIE}" in text_of(stack.command(fake, "shares", user="U1"))
    [item] = stack.sharing.read(stack.personas.get("Dev"), "general", "cookies").items
    assert (item.source, item.text) == ("Maya", COOKIE)


def test_an_admin_shares_one_pin_on_its_own_project_and_a_member_may_not(stack: Stack, fake: FakeSlack) -> None:
    threat = mayas_threat_pin(stack)
    refused = stack.command(fake, f"share Maya with Dev pin {threat}", user="U1")
    assert "Only Night Watch admins can share a persona's knowledge" in text_of(refused)
    assert listed(stack) == []
    answer = stack.command(fake, f"share Maya with Dev pin {threat}", user=ADMIN)  # asked in #general
    assert answer["text"] == f'Maya now shares pin #{threat} on project night-watch with Dev: note "{THREAT}"'
    refused = stack.command(fake, f"unshare Maya with Dev pin {threat}", user="U1")
    assert "Only Night Watch admins can stop a persona's sharing" in text_of(refused)
    stack.pins.remove(int(threat))
    assert listed(stack) == [("Maya", "Dev", "night-watch", f"pin #{threat} (gone: unpinned)")]
    done = stack.command(fake, f"unshare Maya with Dev pin {threat}", user=ADMIN)
    assert done["text"] == f"Maya no longer shares pin #{threat} on project night-watch with Dev."
    assert listed(stack) == []


def test_a_forgotten_lesson_is_listed_as_gone_and_unsharing_it_is_one_answer(stack: Stack, fake: FakeSlack) -> None:
    cookie = mayas_cookie_lesson(stack)
    stack.command(fake, f"share Maya with Dev lesson {cookie}", user=ADMIN)
    stack.memory.forget(stack.personas.get("Maya"), "general", cookie)
    assert f"lesson {cookie} (gone: forgotten)" in text_of(stack.command(fake, "shares"))
    assert stack.sharing.read(stack.personas.get("Dev"), "general", "cookies").empty
    done = stack.command(fake, f"unshare Maya with Dev lesson {cookie}", user=ADMIN)
    assert done["text"] == f"Maya no longer shares lesson {cookie} on project general with Dev."


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        ("share Maya with Dev lesson deadbeef", "Maya has no lesson deadbeef on project general"),
        ("share Maya with Dev pin 99", "There is no pin #99"),
        ("share Maya with Maya lesson deadbeef", "Maya cannot share with itself"),
        ("share Nobody with Dev lesson deadbeef", "No persona is called 'Nobody'"),
        ("unshare Maya with Dev lesson deadbeef", "Maya does not share lesson deadbeef on project general with Dev"),
    ],
)
def test_what_cannot_be_shared_is_answered_with_why(stack: Stack, fake: FakeSlack, words: str, problem: str) -> None:
    assert problem in text_of(stack.command(fake, words, user=ADMIN))
    assert listed(stack) == []
