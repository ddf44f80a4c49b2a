"""Three `nightwatch run` replicas on one PostgreSQL database share persona memory (NIGHTWATCH_MEMORY_STORE defaults
to `database` there): a lesson recorded by one is listed by another, a Forget on one is gone for all, a rename on
one moves the memory for all, and concurrent writes spread over the three lose nothing.

The replicas are real processes (each its own NIGHTWATCH_HOME, as if on its own machine; one DATABASE_URL to a fresh
database, dropped afterwards) against FakeSlack, which sends each envelope to the replica the test names
(`FakeSlack.routed_to`). They start once for the module, one after another, so connection n is replica n. The model
is the offline one; dense recall (the encoder) and proactive messages are off.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from nightwatch.adapters.db.schema import make_engine
from nightwatch.adapters.slack.views import LESSON_FORGET, ForgetTarget
from nightwatch.domain.memory.format import lesson_id
from tests import payloads
from tests.adapters.db.databases import empty_database
from tests.adapters.slack.stack import ADMIN, APP_TOKEN, BOT_TOKEN
from tests.fake_slack import FakeSlack
from tests.fake_slack_rules import Json
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SCRIPT = Path(sys.executable).parent / "nightwatch"
REPLICAS = 3
CHANNEL, PROJECT = "C1", "night-watch"
BURST_CHANNEL, BURST_PROJECT = "C3", "burst"
BURST = 60  # lessons written at once, BURST // REPLICAS through each replica


@dataclass
class Replica:
    number: int  # its Socket Mode connection, in the order they opened
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@dataclass
class Cluster:
    """The replicas, the fake Slack they share, and an engine on their database."""

    fake: FakeSlack
    replicas: list[Replica]
    engine: Engine

    def send(self, replica: int, deliver: Callable[[], str]) -> str:
        """Delivers an envelope (from `deliver`) to one replica; its envelope id."""
        process = self.replicas[replica].process
        assert process.poll() is None, f"replica {replica} exited:\n{self.replicas[replica].tail()}"
        with self.fake.routed_to(replica):
            return deliver()

    def command(self, replica: int, words: str, *, channel: str = CHANNEL, user: str = ADMIN) -> Json:
        """`/nightwatch <words>` answered by one replica: the reply it posted to the command's response_url."""
        before = len(self.fake.ephemerals(channel, user))
        envelope = self.send(replica, lambda: self.fake.send_slash_command(words, user_id=user, channel_id=channel))
        self.fake.ack_for(envelope, timeout=10)
        self.fake.wait_for(lambda: len(self.fake.ephemerals(channel, user)) > before, timeout=15)
        [reply] = self.fake.ephemerals(channel, user)[before:]
        return reply

    def listed(self, replica: int, persona: str, project: str = PROJECT) -> dict[str, str]:
        """The lessons `/nightwatch memory <persona> <project>` answered by one replica lists: id -> text."""
        reply = self.command(replica, f"memory {persona} {project}")
        lessons = {}
        for block in reply.get("blocks") or []:
            [target] = forget_targets([block]) or [None]
            if target is not None:
                assert target.project == project
                shown = block["text"]["text"].split("\n", 1)[0].removeprefix("📌 ")  # the abstract's line
                lessons[target.lesson] = shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        assert all(lesson_id(text) == lesson for lesson, text in lessons.items())  # read back right
        return lessons

    def document(self, persona_slug: str, project: str) -> str | None:
        """The memory document's text in the database (None: no row)."""
        with self.engine.connect() as conn:
            return conn.execute(
                text("SELECT text FROM memory_documents WHERE owner = :owner AND project = :project"),
                {"owner": persona_slug, "project": project},
            ).scalar_one_or_none()


@dataclass(frozen=True)
class Note:
    """A '★ <persona> remembered: …' note in a thread: the message and what its Forget button points at."""

    message: Json
    target: ForgetTarget


def forget_targets(blocks: list[Json]) -> list[ForgetTarget]:
    """What every Forget button in a message's blocks points at (a section's accessory or an actions block)."""
    buttons = [block.get("accessory") or {} for block in blocks]
    buttons += [element for block in blocks for element in block.get("elements") or [] if isinstance(element, dict)]
    return [ForgetTarget.decode(b["value"]) for b in buttons if b.get("action_id") == LESSON_FORGET]


def settled(read: Callable[[], list[Note]], *, quiet: float, timeout: float) -> list[Note]:
    """What `read` returns once it is not empty and has not grown for `quiet` seconds."""
    last, since = read(), time.monotonic()

    def still() -> list[Note]:
        nonlocal last, since
        now = read()
        if len(now) != len(last):
            last, since = now, time.monotonic()
        return last if last and time.monotonic() - since >= quiet else []

    return wait_until(still, lambda: f"the notes to stop changing: {last}", timeout=timeout, interval=0.1)


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A fresh PostgreSQL database for the module, dropped afterwards (skipped without DATABASE_URL)."""
    with empty_database("postgres", Path()) as url:
        yield url


def environment(home: Path, database_url: str, fake: FakeSlack) -> dict[str, str]:
    prefixes = ("ANTHROPIC", "NIGHTWATCH", "DATABASE", "SLACK")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return env | {
        "NIGHTWATCH_HOME": str(home),
        "DATABASE_URL": database_url,
        "NIGHTWATCH_LLM": "offline",
        "NIGHTWATCH_ADMINS": ADMIN,
        "NIGHTWATCH_MAX_ROUNDS": "1",
        "NIGHTWATCH_RECALL_DENSE": "off",
        "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES": "0",
        "NIGHTWATCH_MEMORY_MAX_LINES": "1000",  # no compaction (a model's rewrite) in the middle of the burst
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_URL": fake.api_url,
    }


@pytest.fixture(scope="module")
def cluster(database: str) -> Iterator[Cluster]:
    with tempfile.TemporaryDirectory() as tmp, FakeSlack(listen_backlog=128) as fake:
        fake.add_user(ADMIN, name="ada")
        fake.add_channel(CHANNEL, PROJECT)
        fake.add_channel(BURST_CHANNEL, BURST_PROJECT)
        folder = Path(tmp)
        first = environment(folder / "setup", database, fake)
        (folder / "setup").mkdir()
        # The schema and the default personas exist before the replicas start.
        subprocess.run([str(SCRIPT), "personas", "list"], env=first, capture_output=True, timeout=60, check=True)
        replicas: list[Replica] = []
        engine = make_engine(database)
        try:
            for number in range(REPLICAS):  # one at a time, so the n-th connection is replica n
                home = folder / f"replica-{number}"
                home.mkdir()
                log = folder / f"replica-{number}.log"
                with log.open("wb") as out:
                    process = subprocess.Popen(
                        [str(SCRIPT), "run"],
                        env=environment(home, database, fake),
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                replica = Replica(number, process, log)
                replicas.append(replica)
                wait_until(
                    lambda: fake.open_connections >= len(replicas) or replicas[-1].process.poll() is not None,
                    f"replica {number} to connect",
                    timeout=60,
                )
                assert process.poll() is None, f"replica {number} exited:\n{replica.tail()}"
            yield Cluster(fake, replicas, engine)
        finally:
            for replica in replicas:
                if replica.process.poll() is None:
                    replica.process.send_signal(signal.SIGTERM)
            for replica in replicas:
                try:
                    replica.process.wait(15)
                except subprocess.TimeoutExpired:
                    replica.process.kill()
                    replica.process.wait()
            engine.dispose()
        errors = [
            line
            for replica in replicas
            for line in replica.log.read_text(errors="replace").splitlines()
            if line.startswith(("ERROR", "CRITICAL", "Traceback"))
        ]
        assert not errors, errors


@pytest.fixture(scope="module")
def notes(cluster: Cluster) -> list[Note]:
    """A mention handled by replica 0, run to its end: the lesson notes it posted (two personas at least)."""
    fake = cluster.fake
    mention_text = "<@UBOT> should the login endpoint get a rate limiter of 10 requests per minute?"
    stored = fake.workspace.store_message(CHANNEL, {"type": "message", "user": "U1", "text": mention_text})
    cluster.send(0, lambda: fake.send_event(payloads.app_mention(mention_text, channel=CHANNEL, ts=stored["ts"])))

    def done() -> bool:
        with cluster.engine.connect() as conn:
            status = conn.execute(
                text("SELECT status FROM deliberations WHERE thread = :thread"), {"thread": f"{CHANNEL}:{stored['ts']}"}
            ).scalar_one_or_none()
        return status == "done"

    wait_until(done, "the deliberation to finish", timeout=30)
    with cluster.engine.connect() as conn:
        owner = conn.execute(
            text("SELECT owner FROM deliberations WHERE thread = :thread"), {"thread": f"{CHANNEL}:{stored['ts']}"}
        ).scalar_one()
    assert owner.rsplit("/", 2)[1] == str(cluster.replicas[0].process.pid)  # replica 0 ran it

    def posted() -> list[Note]:
        return [
            Note(message, target)
            for message in fake.messages(CHANNEL, stored["ts"])
            for target in forget_targets(message.get("blocks") or [])
        ]

    found = settled(posted, quiet=2.0, timeout=20)  # everyone reflects after the row says done; nothing marks the end
    assert len({note.target.persona for note in found}) >= 2, found  # two personas at least: one per scenario
    return found


def by_persona(notes: list[Note]) -> dict[str, list[Note]]:
    grouped: dict[str, list[Note]] = {}
    for note in notes:
        grouped.setdefault(note.target.persona, []).append(note)
    return grouped


def test_lessons_recorded_through_one_replica_are_listed_by_another(cluster: Cluster, notes: list[Note]) -> None:
    for slug, recorded in by_persona(notes).items():
        listed = cluster.listed(1, slug)
        assert {note.target.lesson for note in recorded} <= set(listed)
        document = cluster.document(slug, PROJECT)
        assert document is not None
        assert all(text in document for text in listed.values())


def test_a_forget_clicked_on_one_replica_is_gone_for_all(cluster: Cluster, notes: list[Note]) -> None:
    slug, recorded = sorted(by_persona(notes).items())[0]
    note = recorded[0]
    before = cluster.listed(0, slug)
    forgotten = before[note.target.lesson]
    shown = cluster.fake.workspace.find_message(CHANNEL, note.message["ts"])
    click = payloads.block_action(  # Slack sends the clicked message's blocks with the click
        LESSON_FORGET,
        note.target.encode(),
        user=ADMIN,
        channel=CHANNEL,
        message_ts=note.message["ts"],
        message_blocks=shown["blocks"],
    )
    envelope = cluster.send(2, lambda: cluster.fake.send_interactive(click))
    cluster.fake.ack_for(envelope, timeout=10)
    # The lessons message is updated as lessons arrive too: wait for the struck-through line the Forget leaves.
    cluster.fake.wait_for(
        lambda: "forgotten" in str(cluster.fake.workspace.find_message(CHANNEL, note.message["ts"])), 15
    )

    for replica in (0, 1):
        after = cluster.listed(replica, slug)
        assert note.target.lesson not in after
        assert after == {k: v for k, v in before.items() if k != note.target.lesson}  # only that one went
    document = cluster.document(slug, PROJECT)
    assert document is not None
    assert forgotten not in document
    assert all(text in document for lesson, text in before.items() if lesson != note.target.lesson)


def modal_state(view: Json) -> Json:
    """The `state.values` Slack sends when a modal is submitted as opened (each input's initial value)."""
    values: Json = {}
    for block in view["blocks"]:
        element = block["element"]
        if element["type"] == "checkboxes":
            chosen = element.get("initial_options") or []
            values[block["block_id"]] = {element["action_id"]: {"type": "checkboxes", "selected_options": chosen}}
        else:
            value = element.get("initial_value")
            values[block["block_id"]] = {element["action_id"]: {"type": "plain_text_input", "value": value}}
    return values


def test_a_rename_through_the_modal_on_one_replica_moves_the_memory_for_all(
    cluster: Cluster, notes: list[Note]
) -> None:
    slug, recorded = sorted(by_persona(notes).items())[-1]  # not the persona a lesson was forgotten from
    before = cluster.listed(2, slug)
    assert {note.target.lesson for note in recorded} <= set(before)
    opened = len(cluster.fake.calls_to("views.open"))
    cluster.fake.ack_for(
        cluster.send(2, lambda: cluster.fake.send_slash_command(f"persona edit {slug}", user_id=ADMIN))
    )
    cluster.fake.wait_for(lambda: len(cluster.fake.calls_to("views.open")) > opened, 15)
    view = cluster.fake.calls_to("views.open")[opened].args["view"]
    values = modal_state(view)
    old_name = values["name"]["name"]["value"]
    values["name"]["name"]["value"] = "Night Owl"
    persona_id = json.loads(view["private_metadata"])["id"]
    submission = payloads.view_submission(values, user=ADMIN, persona_id=persona_id)
    ack = cluster.fake.ack_for(cluster.send(1, lambda: cluster.fake.send_interactive(submission)), timeout=10)
    assert ack["response_action"] == "update"
    assert ack["view"]["title"]["text"] == "Saved", ack

    assert cluster.listed(0, "Night Owl") == before
    unknown = cluster.command(2, f"memory {old_name} {PROJECT}")
    assert f"No persona is called '{old_name}'." in unknown["text"]
    assert not forget_targets(unknown.get("blocks") or [])
    assert cluster.document(slug, PROJECT) is None
    moved = cluster.document("night-owl", PROJECT)
    assert moved is not None
    assert all(text in moved for text in before.values())


def test_concurrent_lesson_writes_through_three_replicas_lose_nothing(cluster: Cluster, notes: list[Note]) -> None:
    slug = sorted(by_persona(notes))[0]
    lessons = [
        f"Queue shard {n} drains through worker pool {n * 7 + 3}, so alert on backlog above {n * 11 + 5} jobs."
        for n in range(BURST)
    ]
    fake = cluster.fake
    before = len(fake.ephemerals(BURST_CHANNEL, ADMIN))
    commands = [f"remember {slug} {lesson}" for lesson in lessons]
    send = functools.partial(fake.send_slash_command, user_id=ADMIN, channel_id=BURST_CHANNEL)
    envelopes = [cluster.send(n % REPLICAS, functools.partial(send, words)) for n, words in enumerate(commands)]
    for envelope in envelopes:
        fake.ack_for(envelope, timeout=15)
    fake.wait_for(lambda: len(fake.ephemerals(BURST_CHANNEL, ADMIN)) >= before + BURST, 30)
    replies = [str(m["text"]) for m in fake.ephemerals(BURST_CHANNEL, ADMIN)[before:]]
    assert all(" remembers `" in reply for reply in replies), [r for r in replies if " remembers `" not in r]

    document = cluster.document(slug, BURST_PROJECT)
    assert document is not None
    missing = [lesson for lesson in lessons if lesson not in document]
    assert not missing
    with cluster.engine.connect() as conn:
        version = conn.execute(
            text("SELECT version FROM memory_documents WHERE owner = :owner AND project = :project"),
            {"owner": slug, "project": BURST_PROJECT},
        ).scalar_one()
    assert version >= BURST  # one write each, none overwriting another
