"""LiveSettings: what a reload changes, what waits for a restart, what a bad file leaves alone; and the snapshot a
deliberation takes when it starts (a reload reaches the next deliberation, never the running one)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from nightwatch.config import Settings
from nightwatch.domain.deliberation import DeliberationEngine
from nightwatch.domain.llm import LLMRequest, Purpose
from nightwatch.domain.models import Persona
from nightwatch.domain.sharing import SharedBlock
from nightwatch.domain.soul import SoulCompiler
from nightwatch.live_settings import RELOADABLE, LiveSettings
from nightwatch.wiring import deliberation_policy
from tests.domain.deliberation.cast import TEAM, FakeMemory, Voices, ask, verdict_json
from tests.domain.knowing import reading
from tests.fakes import (
    FakeClock,
    FakeLiveness,
    InMemoryDeliberationLog,
    InMemoryPersonaRepository,
    RecordingPoster,
    ScriptedLLM,
)


class Files:
    """A settings file and the environment naming it, as a process started with them would read them."""

    def __init__(self, folder: Path, **env: str) -> None:
        self.path = folder / "nightwatch.env"
        self.env = {"NIGHTWATCH_HOME": str(folder), "NIGHTWATCH_SETTINGS_FILE": str(self.path), **env}

    def write(self, text: str) -> None:
        self.path.write_text(text, encoding="utf-8")

    def load(self) -> Settings:
        return Settings.from_env(self.env)

    def live(self, text: str) -> LiveSettings:
        self.write(text)
        return LiveSettings(self.load(), load=self.load)


@pytest.fixture
def files(tmp_path: Path) -> Files:
    return Files(tmp_path, NIGHTWATCH_MAX_REPLIES="20")


@pytest.fixture(autouse=True)
def root_level() -> Iterator[None]:
    level = logging.getLogger().level
    yield
    logging.getLogger().setLevel(level)


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "nightwatch.live_settings"]


def test_every_reloadable_setting_changes_and_each_change_is_logged(
    files: Files, caplog: pytest.LogCaptureFixture
) -> None:
    live = files.live("NIGHTWATCH_MAX_ROUNDS=2\n")
    started = live.current()
    files.write(
        "NIGHTWATCH_MAX_ROUNDS=3\nNIGHTWATCH_MAX_REPLIES=8\nNIGHTWATCH_MEMORY_TOKEN_BUDGET=900\nNIGHTWATCH_LEAD=priya\n"
        "NIGHTWATCH_SHARED_TOKEN_BUDGET=0\nNIGHTWATCH_PIN_TOKEN_BUDGET=400\n"
        "NIGHTWATCH_ADMINS=U2,U1\nNIGHTWATCH_TEACHERS=S0TEACH\n"
        "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES=0\nNIGHTWATCH_PROACTIVE_QUIET_MINUTES=5\n"
        "NIGHTWATCH_LOG_LEVEL=warning\nNIGHTWATCH_LESSON_NOTES=ephemeral\nNIGHTWATCH_TURN_WORDS=60\n"
        "NIGHTWATCH_TURN_RETRIES=3\n"
    )
    with caplog.at_level(logging.INFO, logger="nightwatch.live_settings"):
        reloaded = live.reload()
    now = live.current()
    assert (now.slack.lesson_notes, now.deliberation.turn_words) == ("ephemeral", 60)
    assert now is reloaded.settings
    assert (now.deliberation.max_rounds, now.deliberation.max_replies, now.deliberation.lead) == (3, 8, "priya")
    assert now.deliberation.turn_retries == 3
    assert (now.memory.token_budget, now.memory.shared_token_budget) == (900, 0)
    assert now.pins.token_budget == 400
    assert now.slack.admins == {"U1", "U2"}
    assert now.slack.teachers == "S0TEACH"
    assert (now.slack.proactive_interval_minutes, now.slack.proactive_quiet_minutes) == (0, 5)
    assert now.log_level == "WARNING"
    assert logging.getLogger().level == logging.WARNING  # applied to the running process
    assert started.deliberation.max_rounds == 2  # what was handed out before stays as it was
    assert len(reloaded.changes) == len(RELOADABLE)
    assert messages(caplog)[0] == "Reloaded settings: " + "; ".join(
        [
            "memory token budget 2000 → 900",
            "shared token budget 600 → 0",
            "pin token budget 1500 → 400",
            "max rounds 2 → 3",
            "max replies 20 → 8",
            "lead (default) → priya",
            "turn retries 1 → 3",
            "admins (none) → U1, U2",
            "teachers everyone → S0TEACH",
            "proactive interval (minutes) 180 → 0",
            "proactive quiet time (minutes) 60 → 5",
            "lesson notes thread → ephemeral",
            "turn words 120 → 60",
            "log level INFO → WARNING",
        ]
    )


def test_a_line_removed_from_the_file_falls_back_to_the_environment(files: Files) -> None:
    live = files.live("NIGHTWATCH_MAX_REPLIES=8\n")
    assert live.current().deliberation.max_replies == 8
    files.write("# nothing\n")
    assert live.reload().changes == ("max replies 8 → 20",)
    assert live.current().deliberation.max_replies == 20


def test_a_setting_only_a_restart_applies_is_logged_and_left_as_it_was(
    files: Files, caplog: pytest.LogCaptureFixture
) -> None:
    live = files.live("NIGHTWATCH_WORKERS=4\n")
    files.write("NIGHTWATCH_WORKERS=8\nNIGHTWATCH_MAX_ROUNDS=3\nDATABASE_URL=sqlite:////tmp/elsewhere.db\n")
    with caplog.at_level(logging.INFO, logger="nightwatch.live_settings"):
        reloaded = live.reload()
    assert reloaded.restart_needed == ("DATABASE_URL", "NIGHTWATCH_WORKERS")
    assert live.current().slack.workers == 4
    assert live.current().database_url.endswith("nightwatch.db")
    assert live.current().deliberation.max_rounds == 3  # the reloadable part still applies
    assert (
        "NIGHTWATCH_WORKERS changed; it takes effect only after a restart, so the running app keeps the old value"
        in messages(caplog)
    )


def test_a_restart_only_line_that_changes_nothing_needs_no_restart(tmp_path: Path) -> None:
    files = Files(tmp_path, NIGHTWATCH_WORKERS="4")
    live = files.live("")
    files.write("NIGHTWATCH_WORKERS=4\n")  # what the environment says already
    assert live.reload().restart_needed == ()


@pytest.mark.parametrize(
    ("text", "logged"),
    [
        ("NIGHTWATCH_MAX_ROUNDS=9\n", "NIGHTWATCH_MAX_ROUNDS=9 is out of range; it accepts a whole number from 1 to 5"),
        ("NIGHTWATCH_MAX_ROUNDS=3\nNIGHTWATCH_MAX_ROUND=4\n", "sets NIGHTWATCH_MAX_ROUND, which is not a Night Watch"),
        ("NIGHTWATCH_MAX_ROUNDS: 3\n", "line 1: write NAME=value"),
        ("NIGHTWATCH_WORKERS=lots\nNIGHTWATCH_MAX_ROUNDS=3\n", "NIGHTWATCH_WORKERS='lots' is not valid"),
    ],
)
def test_a_bad_file_is_refused_with_one_log_line_and_the_old_settings_stay(
    files: Files, caplog: pytest.LogCaptureFixture, text: str, logged: str
) -> None:
    live = files.live("NIGHTWATCH_MAX_ROUNDS=2\n")
    before = live.current()
    files.write(text)
    with caplog.at_level(logging.INFO, logger="nightwatch.live_settings"):
        reloaded = live.reload()
    assert live.current() is before
    assert reloaded.refused is not None
    [line] = [r for r in caplog.records if r.name == "nightwatch.live_settings"]
    assert line.levelno == logging.ERROR
    assert line.getMessage().startswith("Settings not reloaded, the old ones stay: ")
    assert logged in line.getMessage()
    assert str(files.path) in line.getMessage()


def test_a_deleted_settings_file_is_refused_too(files: Files) -> None:
    live = files.live("NIGHTWATCH_MAX_ROUNDS=3\n")
    files.path.unlink()
    assert live.reload().refused is not None
    assert live.current().deliberation.max_rounds == 3


def test_nothing_changed_says_so(files: Files, caplog: pytest.LogCaptureFixture) -> None:
    live = files.live("NIGHTWATCH_MAX_ROUNDS=3\n")
    with caplog.at_level(logging.INFO, logger="nightwatch.live_settings"):
        assert live.reload().changes == ()
    assert messages(caplog) == ["Settings reloaded: nothing changed"]


# --- a deliberation keeps the settings it started with -----------------------------------------------------------


def test_a_deliberation_started_before_a_reload_keeps_its_settings_and_the_next_one_gets_the_new(
    files: Files,
) -> None:
    live = files.live(
        "NIGHTWATCH_MAX_ROUNDS=1\nNIGHTWATCH_MEMORY_TOKEN_BUDGET=1500\nNIGHTWATCH_SHARED_TOKEN_BUDGET=400\n"
    )
    voices = Voices()
    reloads: list[str] = []

    def reply_then_reload(request: LLMRequest) -> str:
        if not reloads:  # the settings change during the first deliberation's first turn
            files.write(
                "NIGHTWATCH_MAX_ROUNDS=2\nNIGHTWATCH_MEMORY_TOKEN_BUDGET=600\nNIGHTWATCH_SHARED_TOKEN_BUDGET=0\n"
            )
            reloads.extend(live.reload().changes)
        return voices(request)

    llm = ScriptedLLM({Purpose.TURN: reply_then_reload, Purpose.CONSENSUS: verdict_json("CHANGES", "More.")})
    memory = FakeMemory()
    shared = RecordingShared()
    engine = DeliberationEngine(
        personas=InMemoryPersonaRepository(TEAM),
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=InMemoryDeliberationLog(),
        clock=FakeClock(),
        policy=lambda: deliberation_policy(live.current()),
        liveness=FakeLiveness(),
        context=reading(memory, shared=shared),
    )
    first = engine.run(ask("Maya: rotate the keys?"), RecordingPoster())
    assert reloads == ["memory token budget 1500 → 600", "shared token budget 400 → 0", "max rounds 1 → 2"]
    assert {turn.round for turn in first.turns} == {1}  # one round, as it started with
    assert set(memory.budgets) == {1500}  # every read of the first deliberation, even after the reload
    assert set(shared.budgets) == {400}
    reads, shared_reads = len(memory.budgets), len(shared.budgets)

    second = engine.run(ask("Maya: and the tokens?", thread="C1:2"), RecordingPoster())
    assert {turn.round for turn in second.turns} == {1, 2}
    assert set(memory.budgets[reads:]) == {600}
    assert set(shared.budgets[shared_reads:]) == {0}


class RecordingShared:
    """SharedKnowledge that shares nothing and notes the budget of each read."""

    def __init__(self) -> None:
        self.budgets: list[int | None] = []

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> SharedBlock:
        self.budgets.append(budget)
        return SharedBlock()
