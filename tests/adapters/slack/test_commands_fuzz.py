"""Fuzzing /nightwatch: whatever text follows the command, the user gets one proper ephemeral answer and nothing raises.

`SlashCommands.handle` runs against the real stack (SQLite, memory files, the offline model) with its Slack client
pointed at FakeSlack, which applies Slack's own content rules. Its worker pool is closed, so `ask` posts the question
and is told the app is busy instead of running a deliberation per example.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nightwatch.adapters.pins import SafePinFiles
from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.commands import Invocation, SlashCommands
from nightwatch.adapters.slack.held import HeldReview
from nightwatch.adapters.slack.home import HomeTab
from nightwatch.adapters.slack.pin_commands import PinCommands
from nightwatch.adapters.slack.pool import WorkerPool
from nightwatch.adapters.slack.share_commands import ShareCommands
from nightwatch.adapters.slack.threads import ChannelDirectory, Deliberations
from nightwatch.domain.deliberation import DeliberationEngine
from nightwatch.domain.ports import Clock
from tests.adapters.slack.stack import ADMIN, running_stack
from tests.fake_slack import FakeSlack
from tests.fake_slack_rules import check_content
from tests.fuzzing import TracebackCatcher, catching_tracebacks

pytestmark = pytest.mark.slow  # hundreds of generated commands through the Slack stack

SUBCOMMANDS = ["help", "ask", "personas", "persona", "memory", "remember", "forget", "context", "project", "history"]
SUBCOMMANDS += ["share", "unshare", "shares"]
PIN_SUBCOMMANDS = ["pin", "pins", "unpin", "PIN"]  # fuzzed on their own below, so the mix above stays as it was
WORDS = ["Maya", "maya", "CARLOS", "Priya", "dev", "new", "edit", "search", "night-watch", "#general", "3f9a2c1d"]
PIN_WORDS = ["all", "file", "remove", "refresh", "list", "#1", "2", "docs/ARCHITECTURE.md", "/etc/passwd", "../x"]
PIN_WORDS += ["<http://127.0.0.1:9/x>", "<http://localhost:9/|a page>", "http://10.0.0.1/", "ftp://x"]
WORDS += ["Rotate the signing key when a maintainer leaves.", "rate limit", "Should we cache session lookups?"]
WORDS += ["with", "WITH", "all", "lessons", "pins", "project"]
HOSTILE = ["", "-5", "0", "99999999999999999999", "\x00", "a\x00b", "\x1b[31m", "\udcff", "\u202e", "../../etc"]
HOSTILE += ["<!channel>", "<@U3>", "&amp;", "*bold*", "`code`", "x" * 401, "y" * 4001, "日本語", "🔒" * 30, "zz"]
SEPARATORS = [" ", "  ", "\t", "\n", " \u3000 "]

controls = st.text(st.characters(categories=["Cc", "Cs", "Zs", "Lu", "Nd", "So", "Po"]), max_size=12)
long_text = st.tuples(st.sampled_from("xé🔒\x00 "), st.integers(40, 6000)).map(lambda pair: pair[0] * pair[1])
words = st.one_of(st.sampled_from(WORDS), st.sampled_from(WORDS), st.sampled_from(HOSTILE), controls, long_text)
subcommands = st.one_of(st.sampled_from(SUBCOMMANDS), st.sampled_from(SUBCOMMANDS).map(str.upper), words)


@st.composite
def command_texts(draw: st.DrawFn) -> str:
    """What a person might type after /nightwatch: a subcommand or not, then real and hostile words."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=200))
    parts = [draw(subcommands), *draw(st.lists(words, max_size=4))]
    text = ""
    for part in parts:
        text += part + draw(st.sampled_from(SEPARATORS))
    return text


@pytest.fixture(scope="module")
def commands(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SlashCommands, FakeSlack]]:
    """SlashCommands wired as the Slack app wires them, with a closed worker pool."""
    home = tmp_path_factory.mktemp("fuzz-slack")
    with FakeSlack() as fake:
        fake.add_user(ADMIN, name="ada")
        fake.add_user("U3", name="mo")
        with running_stack(home, fake) as stack:
            client, clock = stack.slack.client, stack.container.get(Clock)
            admins = AdminCheck(admins=stack.settings.slack.admins, client=client, clock=clock)
            channels = ChannelDirectory(client=client, state=stack.state, clock=clock)
            engine = stack.container.get(DeliberationEngine)
            held = stack.container.get(HeldReview)
            pool = WorkerPool(size=1)
            pool.shutdown(1)
            yield (
                SlashCommands(
                    personas=stack.personas,
                    memory=stack.memory,
                    engine=engine,
                    log=stack.log,
                    state=stack.state,
                    clock=clock,
                    client=client,
                    admins=admins,
                    home=HomeTab(client=client, personas=stack.personas, memory=stack.memory, admins=admins, held=held),
                    deliberations=Deliberations(
                        engine=engine, log=stack.log, client=client, pool=pool, channels=channels, clock=clock
                    ),
                    channels=channels,
                    held=held,
                    more={
                        **ShareCommands(sharing=stack.sharing, admins=admins, channels=channels).handlers(),
                        **PinCommands(
                            pins=stack.pins,
                            personas=stack.personas,
                            admins=admins,
                            channels=channels,
                            files=SafePinFiles(stack.settings.pins.roots),
                        ).handlers(),
                    },
                ),
                fake,
            )


@pytest.fixture(scope="module")
def tracebacks() -> Iterator[TracebackCatcher]:
    with catching_tracebacks() as catcher:
        yield catcher


@st.composite
def pin_texts(draw: st.DrawFn) -> str:
    """What a person might type for pinned context: pin, pins or unpin, then pin words, real and hostile ones."""
    pin_words = st.one_of(st.sampled_from(PIN_WORDS), st.sampled_from(PIN_WORDS), words)
    parts = [draw(st.sampled_from(PIN_SUBCOMMANDS)), *draw(st.lists(pin_words, max_size=4))]
    return "".join(part + draw(st.sampled_from(SEPARATORS)) for part in parts)


def test_every_command_text_gets_a_proper_answer(
    commands: tuple[SlashCommands, FakeSlack], tracebacks: TracebackCatcher
) -> None:
    kinds = fuzz_commands(commands, tracebacks, command_texts(), examples=500)
    assert sum(kinds.values()) >= 400
    # every path is exercised (help is the rarest: which texts read as help depends on the state earlier tests left)
    assert min(kinds["refused"], kinds["answered"]) >= 10, kinds
    assert kinds["help"] >= 5, kinds


def test_every_pin_command_text_gets_a_proper_answer(
    commands: tuple[SlashCommands, FakeSlack], tracebacks: TracebackCatcher
) -> None:
    kinds = fuzz_commands(commands, tracebacks, pin_texts(), examples=150)
    assert min(kinds["refused"], kinds["answered"]) >= 10, kinds


def fuzz_commands(
    commands: tuple[SlashCommands, FakeSlack],
    tracebacks: TracebackCatcher,
    texts: st.SearchStrategy[str],
    *,
    examples: int,
) -> Counter[str]:
    """Run `examples` command texts through SlashCommands; each gets one proper answer; what kinds they got."""
    handler, fake = commands
    kinds: Counter[str] = Counter()

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None)
    @given(text=texts, user=st.sampled_from([ADMIN, "U3"]))
    def fuzz(text: str, user: str) -> None:
        replies: list[dict[str, Any]] = []
        body = {"user_id": user, "channel_id": "C1", "text": text, "trigger_id": fake.new_trigger_id()}
        call = Invocation.of(body, bot_user_id="UBOT")
        handler.handle(call, lambda **reply: replies.append(reply))
        assert not tracebacks.caught, (text, tracebacks.caught[0].getMessage())
        assert len(replies) <= 1, (text, replies)
        if not replies:  # ask posted the question; persona new / edit opened a modal
            assert call.text.split()[0].lower() in ("ask", "persona"), text
            return
        [reply] = replies
        assert reply["response_type"] == "ephemeral"
        assert isinstance(reply["text"], str)
        assert reply["text"].strip()
        assert check_content(reply) is None, (text, check_content(reply))
        assert "Slack refused" not in reply["text"], (text, reply["text"])
        kinds[_kind(reply)] += 1

    fuzz()
    return kinds


def _kind(reply: dict[str, Any]) -> str:
    if reply["text"] == "Night Watch help":
        return "help"
    first = (reply.get("blocks") or [{}])[0]
    return "refused" if str(first.get("text", {}).get("text", "")).startswith(":warning:") else "answered"
