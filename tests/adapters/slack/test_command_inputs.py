"""Malformed /nightwatch input: an ephemeral answer saying what is accepted, then the help, and nothing changed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from injector import Module, provider, singleton

from nightwatch.adapters.slack.commands import UNEXPECTED
from nightwatch.domain.deliberation.models import Deliberation
from nightwatch.domain.deliberation.ports import DeliberationLog
from tests.adapters.slack.stack import ADMIN, Stack, running_stack
from tests.fake_slack import FakeSlack
from tests.fake_slack_rules import check_content
from tests.fakes import InMemoryDeliberationLog

MALFORMED = [
    ("ask", "The topic cannot be empty: give 1-4,000 characters"),
    ("ask " + "x" * 4001, "The topic is 4,001 characters long; shorten it to at most 4,000."),
    ("ask rate \x00 limits", "The topic contains the control character"),
    ("memory", "Name a persona first"),
    ("memory search", "Name a persona first"),
    ("memory search Maya", "Give words to search for"),
    ("memory search Maya " + "q" * 501, "The search query is 501 characters long; shorten it to at most 500."),
    ("memory Maya ../../etc", "The project name '../../etc' is not usable"),
    ("remember Maya", "A lesson cannot be empty"),
    ("remember Maya Keys \x1b[2J rotate monthly.", "The lesson contains the control character"),
    ("remember Maya " + "x" * 401, "shorten it to at most 400"),
    ("remember Maya event: the deploy failed", "'event' is not a lesson category: use one of profile, preferences"),
    ("remember Maya events:", "A lesson cannot be empty"),
    ("forget Maya zz", "A lesson id is 8 characters from 0-9 and a-f, such as 3f9a2c1d (got zz)"),
    ("project ../../etc", "The project name '../../etc' is not usable"),
    ("persona dance", "Use `/nightwatch persona new` or `/nightwatch persona edit &lt;name&gt;`."),
    ("dance wildly", "/nightwatch dance is not a command; these are the ones I know."),
    ("<!channel> \x00", "/nightwatch &lt;!channel&gt; is not a command"),
]


@pytest.mark.parametrize(("text", "says"), MALFORMED, ids=[t[:30] for t, _ in MALFORMED])
def test_malformed_input_gets_what_is_accepted_and_the_help(
    stack: Stack, fake: FakeSlack, text: str, says: str
) -> None:
    answer = stack.command(fake, text, user=ADMIN)
    assert answer["response_type"] == "ephemeral"
    assert check_content(answer) is None
    first, *rest = answer["blocks"]
    assert says in first["text"]["text"]
    assert says in answer["text"]
    assert "/nightwatch ask" in str(rest)  # the help follows
    assert stack.memory.projects(stack.personas.get("Maya")) == []
    assert stack.state.channels() == []
    assert fake.messages("C1") == []


def test_a_subcommand_may_be_followed_by_any_white_space(stack: Stack, fake: FakeSlack) -> None:
    answer = stack.command(fake, "remember\tMaya\nRotate the signing key when a maintainer leaves.")
    assert "Maya remembers" in answer["text"]


class BrokenLog(InMemoryDeliberationLog):
    """A deliberation log whose history lookup hits a bug."""

    def recent(self, limit: int = 10, thread_prefix: str | None = None) -> list[Deliberation]:
        raise RuntimeError("the history index is corrupt")


class WithBrokenLog(Module):
    @singleton
    @provider
    def log(self) -> DeliberationLog:
        return BrokenLog()


def test_a_bug_still_gets_an_answer_and_is_logged_once_with_its_traceback(
    home: Path, fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    with running_stack(home, fake, overrides=(WithBrokenLog(),)) as stack:
        answer = stack.command(fake, "history")
    assert answer["text"] == UNEXPECTED
    assert answer["response_type"] == "ephemeral"
    logged = [r for r in caplog.records if r.exc_info and r.levelno == logging.ERROR]
    assert [r.getMessage() for r in logged] == ["/nightwatch history failed"]
