"""/nightwatch share, unshare and shares, dispatched into the real Bolt app against the fake Slack."""

from __future__ import annotations

import pytest

from nightwatch.adapters.slack.share_commands import ShareWords, parse_share
from nightwatch.domain.errors import InvalidInputError
from tests.adapters.slack.stack import ADMIN, Stack
from tests.fake_slack import FakeSlack

CVE = "Lodash 4.17.20 has a prototype pollution CVE; pin 4.17.21 in every service."


def text_of(answer: dict[str, object]) -> str:
    return f"{answer.get('text', '')} {answer.get('blocks', '')}"


def shared(stack: Stack) -> list[tuple[str, str, str, str]]:
    return [(v.sharer.name, v.audience, v.project, v.what.value) for v in stack.sharing.shares()]


@pytest.mark.parametrize(
    ("words", "with_what", "expected"),
    [
        ("Maya with Dev", True, ShareWords("Maya", "Dev")),
        ("maya WITH all", True, ShareWords("maya", "all")),
        ("Maya with all lessons", True, ShareWords("Maya", "all", None, "lessons")),
        ("Maya with Dev all", True, ShareWords("Maya", "Dev", None, "all")),
        (
            "Code Reviewer with Dev Ops project Night Watch pins",
            True,
            ShareWords("Code Reviewer", "Dev Ops", "Night Watch", "pins"),
        ),
        ("Maya with Dev project night-watch", False, ShareWords("Maya", "Dev", "night-watch")),
        ("Maya with Dev pins", False, ShareWords("Maya", "Dev pins")),  # unshare takes no what: a name, refused later
        ("With with Dev", True, ShareWords("With", "Dev")),
    ],
)
def test_the_words_are_read_as_sharer_receiver_project_and_what(
    words: str, with_what: bool, expected: ShareWords
) -> None:
    assert parse_share(words, command="share", with_what=with_what) == expected


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("", "Say whose knowledge and with whom"),
        ("Maya", "Say whose knowledge and with whom"),
        ("with Dev", "Say whose knowledge and with whom"),
        ("Maya with Dev project", "Name the project after `project`"),
    ],
)
def test_words_missing_a_part_say_what_is_needed(words: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        parse_share(words, command="share", with_what=True)


def test_an_admin_shares_for_the_channels_project_by_default(stack: Stack, fake: FakeSlack) -> None:
    answer = stack.command(fake, "share Maya with Dev", user=ADMIN)
    assert answer["response_type"] == "ephemeral"
    assert answer["text"] == "Maya now shares lessons on project general with Dev."
    answer = stack.command(fake, "share maya with ALL project Night Watch pins", user=ADMIN)
    assert answer["text"] == (
        "Maya now shares pinned documents on project night-watch with every persona (ones created later too)."
    )
    assert shared(stack) == [("Maya", "Dev", "general", "lessons"), ("Maya", "all", "night-watch", "pins")]


def test_members_may_list_but_not_share_or_unshare(stack: Stack, fake: FakeSlack) -> None:
    refused = stack.command(fake, "share Maya with Dev", user="U1")
    assert "Only Night Watch admins can share a persona's knowledge" in text_of(refused)
    stack.command(fake, "share Maya with Dev", user=ADMIN)
    refused = stack.command(fake, "unshare Maya with Dev", user="U1")
    assert "Only Night Watch admins can stop a persona's sharing" in text_of(refused)
    assert shared(stack) == [("Maya", "Dev", "general", "lessons")]
    listed = text_of(stack.command(fake, "shares", user="U1"))
    assert "*Maya* → *Dev* · general · lessons" in listed


def test_shares_lists_all_or_one_personas_and_says_when_there_are_none(stack: Stack, fake: FakeSlack) -> None:
    assert "Nothing is shared yet" in text_of(stack.command(fake, "shares"))
    stack.command(fake, "share Maya with Dev", user=ADMIN)
    stack.command(fake, "share Priya with all project qa", user=ADMIN)
    every = text_of(stack.command(fake, "shares"))
    assert "*Maya* → *Dev*" in every
    assert "*Priya* → *all* · qa · lessons" in every
    carlos = text_of(stack.command(fake, "shares Carlos"))
    assert "*Priya* → *all*" in carlos  # what Carlos receives through a share with all
    assert "*Maya*" not in carlos
    assert "No persona is called 'Nobody'" in text_of(stack.command(fake, "shares Nobody"))


def test_unshare_removes_it_and_an_absent_share_is_a_plain_answer(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, "share Maya with Dev", user=ADMIN)
    done = stack.command(fake, "unshare Maya with Dev", user=ADMIN)
    assert done["text"] == "Maya no longer shares lessons on project general with Dev."
    assert shared(stack) == []
    again = stack.command(fake, "unshare Maya with Dev", user=ADMIN)
    assert again["text"].startswith("Maya shares nothing on project general with Dev")
    assert "/nightwatch ask" not in text_of(again)  # not a usage problem: no help attached


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        ("share Maya", "Say whose knowledge and with whom"),
        ("share Maya with Maya", "Maya cannot share with itself"),
        ("share Maya with Dev memories", "No persona is called 'Dev memories'"),
        ("share Maya with Dev project ../etc", "is not usable"),
        ("unshare Maya with", "Say whom to share with: a persona's name, or all"),
    ],
)
def test_what_cannot_be_shared_is_answered_with_what_is_accepted(
    stack: Stack, fake: FakeSlack, words: str, problem: str
) -> None:
    answer = text_of(stack.command(fake, words, user=ADMIN))
    assert problem in answer
    assert shared(stack) == []


def test_the_help_lists_the_share_commands(stack: Stack, fake: FakeSlack) -> None:
    help_text = text_of(stack.command(fake, "help"))
    assert "`/nightwatch share <persona> with <persona|all> [project <p>] [lessons|pins|all]`" in help_text
    assert "/nightwatch shares [persona]" in help_text


def test_context_shows_what_a_teammate_shares(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, f"remember Maya {CVE}")
    stack.command(fake, "share Maya with Dev", user=ADMIN)
    report = text_of(stack.command(fake, "context Dev"))
    assert "shared by teammates" in report
    assert "1 of 1 shared lessons and pinned documents injected, from Maya" in report
