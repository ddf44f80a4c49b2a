"""Hot reload on real folders: persona files (yours over the defaults, bad files refused, the last good kept), the
settings file, the file watch, and SIGHUP handled in this process."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from nightwatch.adapters.persona_files import PersonaFolders
from nightwatch.adapters.runtime.hot_reload import HotReload
from nightwatch.config import Settings
from nightwatch.domain.deliberation import DeliberationEngine
from nightwatch.domain.llm import Purpose
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.soul import SoulCompiler
from nightwatch.live_settings import LiveSettings
from nightwatch.serve import reload_on_hangup
from nightwatch.wiring import deliberation_policy
from tests.domain.deliberation.cast import FakeMemory, ask
from tests.fakes import (
    FakeClock,
    FakeLiveness,
    InMemoryDeliberationLog,
    InMemoryMemoryStore,
    InMemoryPersonaRepository,
    RecordingPoster,
    ScriptedLLM,
)
from tests.waiting import wait_until

WAIT = 15.0  # seconds: notifications are slow on a loaded machine


def persona_yaml(name: str, role: str, who: str = "") -> str:
    soul = f"soul:\n  who_i_am: {who}\n" if who else ""
    return f"name: {name}\nrole: {role}\n{soul}"


def write(folder: Path, file: str, text: str) -> Path:
    path = folder / file
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def defaults(tmp_path: Path) -> Path:
    folder = tmp_path / "defaults"
    folder.mkdir()
    write(folder, "maya.yml", persona_yaml("Maya", "Security Reviewer"))
    write(folder, "carlos.yml", persona_yaml("Carlos", "Tech Lead"))
    return folder


@pytest.fixture
def ours(tmp_path: Path) -> Path:
    folder = tmp_path / "ours"
    folder.mkdir()
    return folder


def names(folders: PersonaFolders) -> dict[str, str]:
    return {file.persona.name: file.persona.role for file in folders.scan().files}


# --- reading the folders -------------------------------------------------------------------------------------------


def test_a_file_in_your_folder_replaces_the_default_of_the_same_persona(defaults: Path, ours: Path) -> None:
    write(ours, "my-maya.yml", persona_yaml("maya", "Our Security Lead"))
    write(ours, "ines.yml", persona_yaml("Ines", "Data Engineer"))
    scan = PersonaFolders(defaults, ours).scan()
    assert {f.persona.name: f.persona.role for f in scan.files} == {
        "maya": "Our Security Lead",
        "Carlos": "Tech Lead",
        "Ines": "Data Engineer",
    }
    assert [f.source for f in scan.overridden] == [str(defaults / "maya.yml")]
    assert scan.refused == ()


def test_a_broken_file_is_refused_and_its_last_good_persona_is_kept(defaults: Path, ours: Path) -> None:
    folders = PersonaFolders(defaults, ours)
    ines = write(ours, "ines.yml", persona_yaml("Ines", "Data Engineer"))
    folders.scan()
    ines.write_text("name: Ines\nrole: [half saved\n", encoding="utf-8")
    scan = folders.scan()
    assert {f.persona.name: f.persona.role for f in scan.files}["Ines"] == "Data Engineer"
    [refused] = scan.refused
    assert (refused.path, refused.kept.name if refused.kept else None) == (ines, "Ines")
    assert f"{ines}: is not valid YAML" in refused.why


def test_a_broken_override_keeps_the_override_not_the_default(defaults: Path, ours: Path) -> None:
    folders = PersonaFolders(defaults, ours)
    mine = write(ours, "maya.yml", persona_yaml("Maya", "Our Security Lead"))
    folders.scan()
    mine.write_text("name: Maya\nrole: 5\nsoul: nope\n", encoding="utf-8")
    assert names(folders)["Maya"] == "Our Security Lead"


def test_a_new_file_for_a_persona_another_file_defines_is_refused(defaults: Path, ours: Path) -> None:
    folders = PersonaFolders(defaults, ours)
    write(ours, "ines.yml", persona_yaml("Ines", "Data Engineer"))
    folders.scan()
    copy = write(ours, "ines-copy.yml", persona_yaml("Ines", "Someone else"))
    scan = folders.scan()
    assert {f.persona.name: f.persona.role for f in scan.files}["Ines"] == "Data Engineer"
    [refused] = scan.refused
    assert refused.path == copy
    assert "defines Ines, as ines.yml in" in refused.why


def test_a_removed_file_is_reported_and_a_symlink_is_refused(defaults: Path, ours: Path, tmp_path: Path) -> None:
    folders = PersonaFolders(defaults, ours)
    ines = write(ours, "ines.yml", persona_yaml("Ines", "Data Engineer"))
    folders.scan()
    ines.unlink()
    outside = write(tmp_path, "outside.yml", persona_yaml("Eve", "Intruder"))
    (ours / "eve.yml").symlink_to(outside)
    scan = folders.scan()
    assert [f.persona.name for f in scan.removed] == ["Ines"]
    assert "Eve" not in {f.persona.name for f in scan.files}
    [refused] = scan.refused
    assert "is a symbolic link" in refused.why


# --- applying them -------------------------------------------------------------------------------------------------


class Running:
    """What `nightwatch run` holds for a reload: live settings, the persona service, the folders, the hot reload."""

    def __init__(self, tmp_path: Path, defaults: Path, ours: Path) -> None:
        self.settings_file = tmp_path / "nightwatch.env"
        self.settings_file.write_text("NIGHTWATCH_MAX_ROUNDS=1\n", encoding="utf-8")
        env = {"NIGHTWATCH_HOME": str(tmp_path), "NIGHTWATCH_SETTINGS_FILE": str(self.settings_file)}
        self.live = LiveSettings(Settings.from_env(env), load=lambda: Settings.from_env(env))
        self.repo = InMemoryPersonaRepository()
        self.personas = PersonaService(repo=self.repo, store=InMemoryMemoryStore(), clock=FakeClock())
        self.folders = PersonaFolders(defaults, ours)
        self.personas.apply_files(self.folders.scan().files)  # what start-up does
        self.reload = HotReload(
            live=self.live, personas=self.personas, folders=self.folders, debounce_ms=50, recheck_seconds=0.2
        )

    def role(self, name: str) -> str | None:
        found = self.repo.find(name)
        return found.role if found else None


@pytest.fixture
def running(tmp_path: Path, defaults: Path, ours: Path) -> Running:
    return Running(tmp_path, defaults, ours)


def reload_logs(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "nightwatch.adapters.runtime.hot_reload"]


def test_a_changed_persona_file_updates_the_persona(
    running: Running, defaults: Path, caplog: pytest.LogCaptureFixture
) -> None:
    maya = write(defaults, "maya.yml", persona_yaml("Maya", "Security Lead"))
    with caplog.at_level(logging.INFO):
        running.reload.changed(frozenset({maya}))
    assert running.role("Maya") == "Security Lead"
    assert f"Reloaded persona Maya from {maya}" in reload_logs(caplog)


def test_a_new_file_adds_a_persona_and_a_removed_one_changes_nothing(
    running: Running, ours: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ines = write(ours, "ines.yml", persona_yaml("Ines", "Data Engineer"))
    with caplog.at_level(logging.INFO):
        running.reload.changed(frozenset({ines}))
        ines.unlink()
        running.reload.changed(frozenset({ines}))
    assert running.role("Ines") == "Data Engineer"
    logs = reload_logs(caplog)
    assert f"Added persona Ines from {ines}" in logs
    assert any(line.startswith(f"{ines} was removed; Ines stays") for line in logs)


def test_a_bad_yaml_is_refused_with_a_log_line_and_the_old_persona_stays(
    running: Running, defaults: Path, caplog: pytest.LogCaptureFixture
) -> None:
    maya = write(defaults, "maya.yml", "name: Maya\nrole: [oops\n")
    with caplog.at_level(logging.INFO):
        running.reload.changed(frozenset({maya}))
    assert running.role("Maya") == "Security Reviewer"
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert error.getMessage().startswith(f"Persona file refused; Maya stays as it was: {maya}: is not valid YAML")


def test_a_persona_edited_in_slack_is_not_overwritten_and_the_log_says_so(
    running: Running, defaults: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from nightwatch.domain.personas import PersonaDraft

    running.personas.update("Maya", PersonaDraft(role="Our reviewer"))
    maya = write(defaults, "maya.yml", persona_yaml("Maya", "Security Lead"))
    with caplog.at_level(logging.INFO):
        running.reload.changed(frozenset({maya}))
    assert running.role("Maya") == "Our reviewer"
    assert any("Persona Maya is not what a file last set" in line for line in reload_logs(caplog))


def test_a_change_to_the_settings_file_reloads_the_settings_and_nothing_else(running: Running) -> None:
    running.settings_file.write_text("NIGHTWATCH_MAX_ROUNDS=3\n", encoding="utf-8")
    running.reload.changed(frozenset({running.settings_file}))
    assert running.live.current().deliberation.max_rounds == 3
    running.reload.changed(frozenset({running.settings_file.parent / "other.txt"}))  # not ours: nothing to do
    assert running.live.current().deliberation.max_rounds == 3


def test_the_database_failing_leaves_the_personas_and_logs_one_line(
    running: Running, defaults: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from nightwatch.domain.errors import StorageError

    def broken() -> dict[str, str | None]:
        raise StorageError("The database could not read which personas came from files; check DATABASE_URL.")

    running.repo.file_marks = broken  # type: ignore[method-assign]
    maya = write(defaults, "maya.yml", persona_yaml("Maya", "Security Lead"))
    with caplog.at_level(logging.INFO):
        running.reload.changed(frozenset({maya}))
    assert running.role("Maya") == "Security Reviewer"
    assert any(line.startswith("Persona files not applied, the personas stay") for line in reload_logs(caplog))


# --- the watch and SIGHUP, for real --------------------------------------------------------------------------------


@pytest.fixture
def watched(tmp_path: Path, defaults: Path, ours: Path) -> Iterator[Running]:
    running = Running(tmp_path, defaults, ours)
    running.reload.start()
    yield running
    running.reload.stop()


@pytest.mark.slow
def test_a_persona_file_change_reaches_the_next_deliberation_through_the_watch(
    watched: Running, defaults: Path
) -> None:
    llm = ScriptedLLM({Purpose.TURN: "Rotate the key.", Purpose.CONSENSUS: '{"decision": "APPROVE", "summary": "Ok."}'})
    engine = DeliberationEngine(
        personas=watched.personas,
        memory=FakeMemory(),
        compiler=SoulCompiler(),
        llm=llm,
        log=InMemoryDeliberationLog(),
        clock=FakeClock(),
        policy=lambda: deliberation_policy(watched.live.current()),
        liveness=FakeLiveness(),
    )
    engine.run(ask("Maya: rotate the keys?"), RecordingPoster())
    assert "I watch the gates" not in llm.calls(Purpose.TURN)[0].system.text

    wait_until(  # the change is made again every second: the watch may start after the first write
        lambda: (watched.role("Maya") or "").startswith("Gatekeeper"),
        "the watch to apply maya.yml",
        nudge=lambda n: write(defaults, "maya.yml", persona_yaml("Maya", f"Gatekeeper {n}", "I watch the gates.")),
        timeout=WAIT,
    )
    engine.run(ask("Maya: and now?", thread="C1:2"), RecordingPoster())
    maya = [r for r in llm.calls(Purpose.TURN) if r.persona and r.persona.name == "Maya"][-1]
    assert "I watch the gates." in maya.system.text
    assert isinstance(maya.persona, Persona)
    assert maya.persona.role.startswith("Gatekeeper")


@pytest.mark.slow
def test_the_settings_file_is_watched(watched: Running) -> None:
    wait_until(
        lambda: watched.live.current().deliberation.max_rounds == 3,
        "the watch to reload the settings",
        nudge=lambda n: watched.settings_file.write_text(f"# edit {n}\nNIGHTWATCH_MAX_ROUNDS=3\n", encoding="utf-8"),
        timeout=WAIT,
    )


def test_sighup_reloads_the_settings_in_this_process(running: Running) -> None:
    previous = signal.getsignal(signal.SIGHUP)
    try:
        reload_on_hangup(running.reload)
        running.settings_file.write_text("NIGHTWATCH_MAX_ROUNDS=4\n", encoding="utf-8")
        os.kill(os.getpid(), signal.SIGHUP)
        wait_until(lambda: running.live.current().deliberation.max_rounds == 4, "SIGHUP to reload", timeout=WAIT)
    finally:
        signal.signal(signal.SIGHUP, previous)
