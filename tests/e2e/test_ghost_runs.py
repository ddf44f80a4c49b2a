"""No ghost runs: a `nightwatch deliberate` killed with SIGKILL mid-run shows as interrupted at the next command,
while one that another live process is still running stays `running`.

Both deliberations run as real `nightwatch` processes against the fake Anthropic server, which holds their first model
call open, so each is mid-run (stored as running, waiting on the model) when the test looks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nightwatch.cli import main
from tests.fake_anthropic import FakeAnthropic, slow
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="tells live processes apart through /proc"),
]

SCRIPT = Path(sys.executable).parent / "nightwatch"
HELD = 600.0  # seconds the fake model holds each first call open; stopping the server ends the wait


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        server.plan(slow(HELD), slow(HELD))
        yield server


def environment(home: Path, fake: FakeAnthropic) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "NIGHTWATCH", "DATABASE"))}
    return env | {
        "NIGHTWATCH_HOME": str(home),
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": fake.url,
        "NIGHTWATCH_LLM_TIMEOUT": str(HELD),
    }


def deliberation(topic: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    argv = [str(SCRIPT), "deliberate", topic, "--personas", "maya", "--project", "demo"]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for_calls(fake: FakeAnthropic, count: int, process: subprocess.Popen[bytes]) -> None:
    def reached() -> bool:
        if len(fake.requests) >= count:
            return True
        assert process.poll() is None, "the deliberation ended before it reached the model"
        return False

    wait_until(reached, "the deliberation to reach the model", timeout=90)


def history(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """`nightwatch history` as {topic: how it ended}."""
    assert main(["history"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    return {" ".join(row[6:]): row[3] for row in rows}


def test_a_killed_deliberation_shows_as_interrupted_and_a_live_one_stays_running(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path, fake: FakeAnthropic
) -> None:
    env = environment(home, fake)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "NIGHTWATCH_LLM", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NIGHTWATCH_HOME", str(home))
    assert main(["personas", "list"]) == 0  # the database exists before two processes race to create it
    killed = deliberation("Rotate the signing key", env)
    live = deliberation("Add rate limiting", env)
    try:
        wait_for_calls(fake, 1, killed)
        wait_for_calls(fake, 2, live)
        capsys.readouterr()
        assert history(capsys) == {"Rotate the signing key": "running", "Add rate limiting": "running"}

        killed.kill()  # SIGKILL: no handler runs, nothing closes the record
        killed.wait()
        assert history(capsys) == {"Rotate the signing key": "interrupted", "Add rate limiting": "running"}
        assert history(capsys) == {"Rotate the signing key": "interrupted", "Add rate limiting": "running"}
        assert live.poll() is None
    finally:
        for process in (killed, live):
            process.kill()
            process.wait()
