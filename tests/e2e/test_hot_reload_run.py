"""Hot reload in a real `nightwatch run` process against FakeSlack: the settings file and a persona folder are
watched, SIGHUP reloads both, a bad file is refused in the log, and a setting only a restart applies is said so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nightwatch.adapters.db import SqlPersonaRepository, make_engine
from tests.adapters.slack.stack import ADMIN, APP_TOKEN, BOT_TOKEN
from tests.fake_slack import FakeSlack
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

SCRIPT = Path(sys.executable).parent / "nightwatch"
WAIT = 30.0
NEWCOMER = "U7NEW"


@dataclass
class Running:
    process: subprocess.Popen[bytes]
    log: Path
    settings: Path
    personas: Path
    fake: FakeSlack

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for_log(self, line: str, *, after: int = 0) -> int:
        """Wait until the log holds `line` past offset `after`; the offset just past it."""

        def past_it() -> int:
            text = self.text()
            found = text.find(line, after)
            assert found >= 0 or self.process.poll() is None, f"nightwatch run exited:\n{text[-3000:]}"
            return found + len(line) if found >= 0 else 0

        return wait_until(past_it, lambda: f"{line!r} in the log:\n{self.text()[-3000:]}", timeout=WAIT)

    def command(self, words: str, user: str) -> None:
        envelope = self.fake.send_slash_command(words, user_id=user, channel_id="C1")
        self.fake.ack_for(envelope, timeout=10)


def edit(path: Path, text: str) -> None:
    """Save as an editor does: a new file renamed over the old one."""
    fresh = path.with_name(f".{path.name}.tmp")
    fresh.write_text(text, encoding="utf-8")
    os.replace(fresh, path)


@pytest.fixture
def running(home: Path) -> Iterator[Running]:
    settings, personas = home / "nightwatch.env", home / "personas"
    personas.mkdir()
    settings.write_text(f"NIGHTWATCH_ADMINS={ADMIN}\n", encoding="utf-8")
    with FakeSlack() as fake:
        fake.add_user(ADMIN, name="ada")
        fake.add_user(NEWCOMER, name="newcomer")
        fake.add_channel("C1", "night-watch")
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "NIGHTWATCH", "DATABASE", "SLACK"))
        }
        env |= {
            "NIGHTWATCH_HOME": str(home),
            "NIGHTWATCH_LLM": "offline",
            "NIGHTWATCH_RECALL_DENSE": "off",
            "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES": "0",
            "NIGHTWATCH_SETTINGS_FILE": str(settings),
            "NIGHTWATCH_PERSONAS_DIR": str(personas),
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_APP_TOKEN": APP_TOKEN,
            "SLACK_API_URL": fake.api_url,
        }
        log = home / "run.log"
        with log.open("wb") as out:
            process = subprocess.Popen([str(SCRIPT), "run"], env=env, stdout=out, stderr=subprocess.STDOUT)
        run = Running(process, log, settings, personas, fake)
        try:
            run.wait_for_log("Night Watch is connected to Slack")
            yield run
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_settings_and_personas_reload_without_a_restart(running: Running, home: Path) -> None:
    fake = running.fake
    running.command("persona new", NEWCOMER)
    wait_until(lambda: bool(fake.ephemerals("C1", NEWCOMER)), "the refusal", timeout=WAIT)
    assert "Only Night Watch admins can create personas" in str(fake.ephemerals("C1", NEWCOMER)[0]["text"])

    # The settings file is watched: the newcomer is an admin from the next click on.
    edit(running.settings, f"NIGHTWATCH_ADMINS={ADMIN},{NEWCOMER}\n")
    mark = running.wait_for_log(f"Reloaded settings: admins {ADMIN} → {NEWCOMER}, {ADMIN}")
    running.command("persona new", NEWCOMER)
    wait_until(lambda: bool(fake.calls_to("views.open")), "the modal for the new admin", timeout=WAIT)

    # A persona file dropped into NIGHTWATCH_PERSONAS_DIR adds the persona.
    ines = running.personas / "ines.yml"
    edit(ines, "name: Ines\nrole: Data Engineer\n")
    mark = running.wait_for_log(f"Added persona Ines from {ines}", after=mark)
    engine = make_engine(f"sqlite:///{home / 'nightwatch.db'}")
    try:
        found = SqlPersonaRepository(engine).find("ines")
        assert found is not None
        assert found.role == "Data Engineer"

        # A broken edit is refused, and Ines stays as she was.
        edit(ines, "name: Ines\nrole: [half saved\n")
        mark = running.wait_for_log("Persona file refused; Ines stays as it was", after=mark)
        assert (SqlPersonaRepository(engine).find("ines") or found).role == "Data Engineer"
    finally:
        engine.dispose()

    # A bad settings file is refused, one line, and a setting only a restart applies is said so.
    edit(running.settings, "NIGHTWATCH_MAX_ROUNDS=9\n")
    mark = running.wait_for_log("Settings not reloaded, the old ones stay: NIGHTWATCH_MAX_ROUNDS=9", after=mark)
    edit(running.settings, f"NIGHTWATCH_ADMINS={ADMIN},{NEWCOMER}\nNIGHTWATCH_WORKERS=2\n")
    mark = running.wait_for_log("NIGHTWATCH_WORKERS changed; it takes effect only after a restart", after=mark)

    # SIGHUP reloads both.
    running.process.send_signal(signal.SIGHUP)
    mark = running.wait_for_log("received SIGHUP", after=mark)
    running.wait_for_log("Reloading settings and persona files", after=mark)

    running.process.send_signal(signal.SIGTERM)
    assert running.process.wait(30) == 0
    assert "Traceback" not in running.text()
