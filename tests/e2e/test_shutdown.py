"""Shutdown end to end on PostgreSQL: two `nightwatch run` replicas; the one running a deliberation gets SIGTERM
while a turn's model call is held, exits 0 within 30 s and hands the deliberation over, and the other resumes it at
once (the lease is the default 90 s: nobody waits for it to expire) and finishes it in the same thread with no post
twice. And the health port of a real `nightwatch run`: /healthz, /readyz and /metrics.

The replicas are real processes against FakeSlack (Socket Mode and Web API) and FakeAnthropic, on a fresh PostgreSQL
database (DATABASE_URL), as in test_takeover.py.
"""

from __future__ import annotations

import contextlib
import random
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.schema import make_engine
from nightwatch.adapters.slack.lease_keeper import LOOK_EVERY_SECONDS
from nightwatch.domain.deliberation.models import DeliberationStatus
from tests.adapters.db.databases import empty_database
from tests.e2e.test_takeover import HELD, SCRIPT, distinct_answers, environment, nightwatch, only_running
from tests.fake_anthropic import FakeAnthropic, answer, slow
from tests.fake_slack import FakeSlack
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

EXIT_WITHIN = 30.0


@pytest.fixture
def database_url(home: Path) -> Iterator[str]:
    with empty_database("postgres", home) as url:
        yield url


def start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen([str(SCRIPT), "run"], env=env, stdout=out, stderr=subprocess.STDOUT)


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def free_port() -> int:
    """A free port below the kernel's range for outgoing connections: a port from that range, freed here before the
    child binds it, can meanwhile go to one of this test's own database connections ("Address already in use")."""
    floor = 32768
    with contextlib.suppress(OSError, ValueError):
        floor = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    below = range(20_000, floor)  # empty where that range starts lower
    for port in random.sample(below, min(200, len(below))):
        with socket.socket() as probe, contextlib.suppress(OSError):
            probe.bind(("127.0.0.1", port))
            return port
    with socket.socket() as probe:  # no port below that range is free: any free one
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_sigterm_hands_a_running_deliberation_over_and_the_other_replica_finishes_it(
    home: Path, database_url: str
) -> None:
    with FakeSlack() as slack, FakeAnthropic(distinct_answers()) as model:
        slack.add_channel("C1", "night-watch")
        env = environment(home, database_url, slack, model) | {"NIGHTWATCH_LEASE_SECONDS": "90"}
        nightwatch("personas", "list", env=env)  # the schema exists before two replicas race to create it
        model.plan(answer("point1word0 point1word1 point1word2 point1word3."), slow(HELD))  # turn 2 is held
        logs = [home / f"replica-{n}.log" for n in range(2)]
        processes = [start(env, log) for log in logs]
        replicas = {process.pid: process for process in processes}
        engine = make_engine(database_url)
        try:
            wait_until(lambda: slack.open_connections >= 2, "both replicas to connect", timeout=30)
            mention = slack.post_human_message("C1", "<@UBOT> should the login endpoint get a rate limiter?")
            wait_until(lambda: len(model.requests) >= 2, "the second turn's model call", timeout=20)
            running = only_running(engine)
            assert running is not None
            owner_pid = int((running.owner or "").split("/")[1])
            survivor = next(pid for pid in replicas if pid != owner_pid)

            def resumed() -> bool:
                now = SqlDeliberationLog(engine).get(running.id or 0)
                return now is not None and (now.owner or "").split("/")[1:2] == [str(survivor)]

            replicas[owner_pid].send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            wait_until(resumed, "the other replica to resume the deliberation", timeout=20)
            resumed_after = time.monotonic() - signalled  # while the stopping replica may still be exiting
            assert replicas[owner_pid].wait(EXIT_WITHIN) == 0
            exited_after = time.monotonic() - signalled
            wait_until(
                lambda: any("remembered" in str(m.get("text")) for m in slack.messages("C1", mention["ts"])),
                "the other replica to finish the deliberation",
                timeout=30,
            )

            stored = SqlDeliberationLog(engine).get(running.id or 0)
            assert stored is not None
            assert stored.status is DeliberationStatus.DONE
            assert stored.takeovers == 0  # handed over, not taken from a replica that vanished
            turns = SqlDeliberationLog(engine).turns(running.id or 0)
            assert len({t.persona for t in turns}) == len(turns) >= 3  # the contributors and the lead, once each
            posts = [m for m in slack.messages("C1", mention["ts"]) if m.get("username")]
            texts = [str(p["text"]) for p in posts]
            assert len(texts) == len(set(texts))  # no turn posted twice
            assert sum("point1word0" in t for t in texts) == 1  # the turn posted before SIGTERM, once
            assert not any("Slow answer" in t for t in texts)  # the held answer was never posted
            assert len(posts) == len(turns) + 1  # each stored turn once, and the lead's closing post
            assert replicas[survivor].poll() is None
        finally:
            stop_all(processes)
            engine.dispose()
        print(f"\nSIGTERM: exited 0 after {exited_after:.1f} s; resumed by the other after {resumed_after:.1f} s")
        assert exited_after < EXIT_WITHIN
        assert resumed_after < LOOK_EVERY_SECONDS + 5  # not the lease's 90 s
        owner_log = logs[processes.index(replicas[owner_pid])].read_text(errors="replace")
        assert "handed over" in owner_log
        assert "Traceback" not in owner_log
        assert all(process.returncode == 0 for process in processes)


def test_the_health_port_of_a_real_run_answers_health_readiness_and_metrics(home: Path, database_url: str) -> None:
    port = free_port()
    with FakeSlack() as slack, FakeAnthropic(distinct_answers()) as model:
        env = environment(home, database_url, slack, model) | {
            "NIGHTWATCH_HEALTH_PORT": str(port),
            "NIGHTWATCH_HEALTH_HOST": "127.0.0.1",
        }
        process = start(env, home / "run.log")
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: slack.open_connections >= 1, "the replica to connect", timeout=30)
            assert get(f"{base}/healthz")[0] == 200
            wait_until(lambda: get(f"{base}/readyz")[0] == 200, "/readyz to say ready", timeout=10)
            status, metrics = get(f"{base}/metrics")
            assert status == 200
            assert "# TYPE nightwatch_deliberations_total counter" in metrics
            assert "nightwatch_takeovers_total" in metrics
        finally:
            stop_all([process])
        assert process.returncode == 0
