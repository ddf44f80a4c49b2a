"""The pin watch on real files: an edit or a deletion updates the stored pin without a turn; new pins get watched."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from nightwatch.adapters.pins.files import SafePinFiles
from nightwatch.adapters.pins.watch import PinWatch
from nightwatch.domain.personas import PersonaDraft, PersonaService
from nightwatch.domain.pins import PinService
from nightwatch.domain.pins.models import Pin, PinKind, PinStatus
from tests.fakes import FakeClock, FakePinPages, InMemoryMemoryStore, InMemoryPersonaRepository, InMemoryPinRepository
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # real file notifications and polling, waited for in real time
WAIT = 30.0  # generous: on a loaded 2-core machine a notification or a poll can come late; a pass returns at once


class World:
    def __init__(self, root: Path) -> None:
        personas_repo = InMemoryPersonaRepository()
        self.pins = InMemoryPinRepository(personas_repo)
        personas = PersonaService(repo=personas_repo, store=InMemoryMemoryStore(), clock=FakeClock(), pins=self.pins)
        personas.create(PersonaDraft(name="Maya", role="Security reviewer"))
        self.service = PinService(
            pins=self.pins, personas=personas, files=SafePinFiles([root]), pages=FakePinPages(), clock=FakeClock()
        )

    def stored(self, source: Path) -> Pin:
        return next(pin for pin in self.pins.list() if pin.source == str(source))


def edit_until_stored(world: World, path: Path, prefix: str) -> None:
    """Write `path` until the stored pin shows the edit: the watch (re)starts on its own thread, so a write made
    before it watches is missed, and polling compares times a file system may keep to the second."""
    wait_until(
        lambda: world.stored(path).content.startswith(prefix),
        f"an edit of {path.name} to reach the stored pin",
        nudge=lambda count: write_whole(path, f"{prefix} ({count})\n"),
        nudge_every=0.3,
    )


def write_whole(path: Path, text: str) -> None:
    """Replace `path` in one step, as editors save: a watch that reads it mid-write (truncated, empty) would store
    that and race the test's next step."""
    part = path.with_name(path.name + ".part")
    part.write_text(text)
    os.replace(part, path)


@pytest.fixture(params=[False, True], ids=["notify", "polling"])
def watched(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[World, PinWatch, Path]]:
    doc = tmp_path / "ARCHITECTURE.md"
    doc.write_text("v1: TLS ends at the gateway.\n")
    world = World(tmp_path)
    world.service.add("maya", "nw", PinKind.FILE, str(doc), added_by="cli")
    watch = PinWatch(pins=world.service, sync_seconds=0.3, debounce_ms=50, force_polling=request.param)
    watch.start()
    wait_until(lambda: watch.watched == {str(doc)}, "the first sync", timeout=WAIT)
    edit_until_stored(world, doc, "v1: TLS ends at the gateway")  # the watch is live from here on
    yield world, watch, doc
    watch.stop()


def test_an_edit_updates_the_stored_snapshot_without_a_turn(watched: tuple[World, PinWatch, Path]) -> None:
    world, _, doc = watched
    edit_until_stored(world, doc, "v2: TLS ends at the mesh")
    assert world.stored(doc).status is PinStatus.OK


def test_a_deletion_flags_the_pin_missing(watched: tuple[World, PinWatch, Path]) -> None:
    world, _, doc = watched
    doc.unlink()
    wait_until(lambda: world.stored(doc).status is PinStatus.MISSING, "the pin being flagged", timeout=WAIT)
    assert world.stored(doc).content.startswith("v1"), "its last content is kept"


def test_a_file_pinned_later_is_watched_after_the_next_sync(
    watched: tuple[World, PinWatch, Path], tmp_path: Path
) -> None:
    world, watch, _ = watched
    later = tmp_path / "sub" / "runbook.md"
    later.parent.mkdir()
    later.write_text("r1\n")
    world.service.add("maya", "nw", PinKind.FILE, str(later), added_by="cli")
    wait_until(lambda: str(later) in watch.watched, "the new pin being watched", timeout=WAIT)
    edit_until_stored(world, later, "r2: restart one by one")


def test_a_file_edited_while_nothing_watched_is_read_at_start(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("before\n")
    world = World(tmp_path)
    world.service.add("maya", "nw", PinKind.FILE, str(doc), added_by="cli")
    doc.write_text("edited while the app was down\n")
    watch = PinWatch(pins=world.service, sync_seconds=60, force_polling=True)
    watch.start()
    try:
        wait_until(lambda: world.stored(doc).content.startswith("edited"), "the start-up check")
    finally:
        watch.stop()


def test_a_sync_that_fails_is_logged_and_raises_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    world = World(tmp_path)
    world.pins.broken = True
    PinWatch(pins=world.service).sync()
    assert "could not update the watch of pinned files" in caplog.text
