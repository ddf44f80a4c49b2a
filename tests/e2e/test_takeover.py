"""Takeover end to end: two `nightwatch run` replicas on one database; the one running a deliberation is killed with
SIGKILL while a turn's model call is held, and the other finishes it in the same thread, posting no turn twice.

The replicas are real processes against FakeSlack (Socket Mode and Web API) and FakeAnthropic, on one SQLite file,
or on a fresh PostgreSQL database when DATABASE_URL points at PostgreSQL (that run is marked `postgres`). The lease is
shortened to 3 seconds (renewed every second).
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.schema import make_engine
from nightwatch.domain.deliberation.models import Deliberation, DeliberationStatus
from tests.adapters.db.databases import empty_database
from tests.adapters.slack.stack import APP_TOKEN, BOT_TOKEN
from tests.fake_anthropic import FakeAnthropic, answer, default_responder, slow
from tests.fake_slack import FakeSlack
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="tells live processes apart through /proc"),
]

SCRIPT = Path(sys.executable).parent / "nightwatch"
HELD = 600.0  # the held call never returns while its replica lives; stopping the server ends the wait
LEASE_SECONDS = 3


def distinct_answers() -> Any:
    """The fake model, with every persona reply in words of its own (so none is dropped as a near-duplicate)."""
    counter = itertools.count(2)

    def respond(body: dict[str, Any]) -> str:
        reply = default_responder(body)
        if not reply.startswith("Fake answer"):
            return reply
        n = next(counter)
        return " ".join(f"point{n}word{i}" for i in range(6)) + "."

    return respond


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, home: Path) -> Iterator[str]:
    """One SQLite file, or a fresh PostgreSQL database dropped afterwards."""
    with empty_database(request.param, home) as url:
        yield url


def environment(home: Path, database_url: str, slack: FakeSlack, model: FakeAnthropic) -> dict[str, str]:
    prefixes = ("ANTHROPIC", "NIGHTWATCH", "DATABASE", "SLACK")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return env | {
        "NIGHTWATCH_HOME": str(home),
        "DATABASE_URL": database_url,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": model.url,
        "NIGHTWATCH_LLM_TIMEOUT": str(HELD),
        "NIGHTWATCH_MAX_ROUNDS": "1",
        "NIGHTWATCH_RECALL_DENSE": "off",
        "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES": "0",
        "NIGHTWATCH_LEASE_SECONDS": str(LEASE_SECONDS),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_URL": slack.api_url,
    }


def only_running(engine: Engine) -> Deliberation | None:
    running = SqlDeliberationLog(engine).running()
    return running[0] if len(running) == 1 else None


def nightwatch(*argv: str, env: dict[str, str]) -> str:
    """Run a `nightwatch` command in its own process (as a person would); its output."""
    done = subprocess.run([str(SCRIPT), *argv], env=env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def test_a_replica_killed_mid_deliberation_is_taken_over_in_the_same_thread(home: Path, database_url: str) -> None:
    with FakeSlack() as slack, FakeAnthropic(distinct_answers()) as model:
        slack.add_channel("C1", "night-watch")
        env = environment(home, database_url, slack, model)
        nightwatch("personas", "list", env=env)  # the schema exists before two replicas race to create it
        model.plan(answer("point1word0 point1word1 point1word2 point1word3."), slow(HELD))  # turn 2 is held
        replicas = {
            p.pid: p
            for p in (
                subprocess.Popen([str(SCRIPT), "run"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for _ in range(2)
            )
        }
        engine = make_engine(database_url)
        try:
            wait_until(lambda: slack.open_connections >= 2, "both replicas to connect", timeout=30)
            mention = slack.post_human_message("C1", "<@UBOT> should the login endpoint get a rate limiter?")
            wait_until(lambda: len(model.requests) >= 2, "the second turn's model call", timeout=20)
            running = only_running(engine)
            assert running is not None
            assert running.heartbeat_at is not None
            owner_pid = int((running.owner or "").split("/")[1])
            survivor = next(pid for pid in replicas if pid != owner_pid)

            replicas[owner_pid].send_signal(signal.SIGKILL)  # no handler runs: the row stays running
            replicas[owner_pid].wait()
            killed_at = time.monotonic()
            wait_until(
                lambda: only_running(engine) is None or only_running(engine).takeovers > 0, "a takeover", timeout=10
            )  # type: ignore[union-attr]
            assert time.monotonic() - killed_at < LEASE_SECONDS + 1
            wait_until(
                lambda: any("remembered" in str(m.get("text")) for m in slack.messages("C1", mention["ts"])),
                "the survivor to finish the deliberation",
                timeout=20,
            )

            stored = SqlDeliberationLog(engine).get(running.id or 0)
            assert stored is not None
            assert stored.status is DeliberationStatus.DONE
            assert stored.takeovers == 1
            assert stored.owner is not None
            assert stored.owner.split("/")[1] == str(survivor)
            turns = SqlDeliberationLog(engine).turns(running.id or 0)
            assert len({t.persona for t in turns}) == len(turns) >= 3  # the contributors and the lead, once each
            assert not any(t.skipped for t in turns)

            posts = [m for m in slack.messages("C1", mention["ts"]) if m.get("username")]
            assert all(p["thread_ts"] == mention["ts"] for p in posts)
            texts = [str(p["text"]) for p in posts]
            assert len(texts) == len(set(texts))  # no turn posted twice
            assert sum("point1word0" in t for t in texts) == 1  # the turn stored before the kill, posted once
            assert len(posts) == len(turns) + 1  # each stored turn once, and the lead's closing post
            assert replicas[survivor].poll() is None
        finally:
            for process in replicas.values():
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in replicas.values():
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                if process.stderr is not None:
                    process.stderr.close()
            engine.dispose()
        [line] = nightwatch("history", env=env).splitlines()
        assert line.split()[3:5] == ["APPROVE", "night-watch"]  # done, with the lead's verdict
