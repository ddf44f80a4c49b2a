"""The file watch on a real temporary folder: edits, atomic replaces, deletions, late folders, the polling fallback."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nightwatch.adapters.runtime.watch import FileWatch
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # real file notifications and polling, waited for in real time


class Recorder:
    """Collects what the watch reports, one batch at a time."""

    def __init__(self) -> None:
        self.batches: queue.Queue[frozenset[Path]] = queue.Queue()

    def __call__(self, changed: frozenset[Path]) -> None:
        self.batches.put(changed)

    def take(self, path: Path) -> frozenset[Path] | None:
        """The first batch reported so far that names `path`; the batches before it (set-up writes) are dropped."""
        while True:
            try:
                batch = self.batches.get_nowait()
            except queue.Empty:
                return None
            if path.absolute() in batch:
                return batch

    def next_with(self, path: Path) -> frozenset[Path]:
        """The first batch that names `path`, once the watch reports it."""
        return wait_until(lambda: self.take(path), f"the watch to report {path.name}")

    def poke(self, path: Path) -> frozenset[Path]:
        """Write `path` until the watch reports it, and return the batch that named it.

        The watch starts on its own thread, so an early write may land before it watches; and polling compares
        modification times, which a file system may keep to the second, so two writes in one second can look like one.
        """
        return self.until_reported(path, lambda count: path.write_text(f"poke {count}", encoding="utf-8"))

    def until_reported(self, path: Path, change: Callable[[int], object]) -> frozenset[Path]:
        """Make `change` (given a count) every second until the watch reports `path`."""
        return wait_until(lambda: self.take(path), f"the watch to report {path.name}", nudge=change)


@pytest.fixture(params=[False, True], ids=["notify", "polling"])
def watch(request: pytest.FixtureRequest) -> Iterator[tuple[FileWatch, Recorder]]:
    recorder = Recorder()
    file_watch = FileWatch("test-watch", recorder, debounce_ms=50, recheck_seconds=0.2, force_polling=request.param)
    file_watch.start()
    yield file_watch, recorder
    file_watch.stop()


def test_an_edit_to_a_watched_file_is_reported(watch: tuple[FileWatch, Recorder], tmp_path: Path) -> None:
    file_watch, recorder = watch
    doc = tmp_path / "ARCHITECTURE.md"
    doc.write_text("one", encoding="utf-8")
    file_watch.watch(files=[doc])
    assert doc.absolute() in recorder.poke(doc)


def test_an_atomic_replace_and_a_deletion_are_reported(watch: tuple[FileWatch, Recorder], tmp_path: Path) -> None:
    file_watch, recorder = watch
    doc = tmp_path / "runbook.md"
    doc.write_text("v1", encoding="utf-8")
    file_watch.watch(files=[doc])
    recorder.poke(doc)
    fresh = tmp_path / ".runbook.md.tmp"

    def replace(count: int) -> None:
        fresh.write_text(f"version {count}", encoding="utf-8")
        os.replace(fresh, doc)

    recorder.until_reported(doc, replace)
    assert doc.read_text(encoding="utf-8").startswith("version")
    doc.unlink()
    recorder.next_with(doc)
    assert not doc.exists()


def test_other_files_in_the_folder_are_not_reported(watch: tuple[FileWatch, Recorder], tmp_path: Path) -> None:
    file_watch, recorder = watch
    doc, other = tmp_path / "watched.md", tmp_path / "other.md"
    doc.write_text("a", encoding="utf-8")
    file_watch.watch(files=[doc])
    recorder.poke(doc)
    other.write_text("b", encoding="utf-8")
    batch = recorder.poke(doc)
    assert other.absolute() not in batch


def test_a_watched_folder_reports_its_files(watch: tuple[FileWatch, Recorder], tmp_path: Path) -> None:
    file_watch, recorder = watch
    file_watch.watch(folders=[tmp_path])
    persona = tmp_path / "maya.yml"
    assert persona.absolute() in recorder.poke(persona)


def test_a_folder_that_appears_later_is_watched(watch: tuple[FileWatch, Recorder], tmp_path: Path) -> None:
    file_watch, recorder = watch
    later = tmp_path / "later" / "notes.md"
    file_watch.watch(files=[later])
    time.sleep(0.5)  # the watch has looked for the folder and not found it
    later.parent.mkdir()
    assert later.absolute() in recorder.poke(later)


def test_changing_the_watched_set_takes_effect(watch: tuple[FileWatch, Recorder], tmp_path: Path) -> None:
    file_watch, recorder = watch
    first, second = tmp_path / "a" / "first.md", tmp_path / "b" / "second.md"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("0", encoding="utf-8")
    file_watch.watch(files=[first])
    recorder.poke(first)
    file_watch.watch(files=[second])
    recorder.poke(second)
    first.write_text("changed", encoding="utf-8")
    batch = recorder.poke(second)
    assert first.absolute() not in batch


def test_a_failing_callback_does_not_stop_the_watch(tmp_path: Path) -> None:
    recorder = Recorder()
    calls = 0

    def flaky(changed: frozenset[Path]) -> None:
        nonlocal calls
        calls += 1
        recorder(changed)
        if calls == 1:
            raise RuntimeError("first call fails")

    doc = tmp_path / "doc.md"
    file_watch = FileWatch("flaky", flaky, debounce_ms=50, force_polling=True)
    file_watch.watch(files=[doc])
    file_watch.start()
    try:
        recorder.poke(doc)
        assert calls == 1
        assert doc.absolute() in recorder.poke(doc)
        assert calls == 2
    finally:
        file_watch.stop()


def test_stop_ends_the_thread(tmp_path: Path) -> None:
    file_watch = FileWatch("stopper", lambda changed: None, force_polling=False)
    file_watch.watch(folders=[tmp_path])
    file_watch.start()
    time.sleep(0.3)
    file_watch.stop(timeout=5)
    assert not any(thread.name == "stopper" for thread in threading.enumerate())
