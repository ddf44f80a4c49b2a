"""A writer killed between writing its temp file and the replace leaves main.md whole, and the next write sweeps up.

Concurrent writers (threads and processes) and writers killed at any moment are the contract suite's
(tests/adapters/memory_contract/test_concurrency.py), which runs on this store too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nightwatch.adapters.files.store import FileMemoryStore
from nightwatch.domain.memory.format import parse
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # a writer in a process of its own, killed mid-write

REPO = Path(__file__).resolve().parents[3]

KILLED = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from nightwatch.adapters.files.store import FileMemoryStore

    home, marker = Path(sys.argv[1]), Path(sys.argv[2])

    def stuck_fsync(fd):
        marker.write_text("writing")  # the temp file is written; the replace has not happened yet
        time.sleep(60)

    os.fsync = stuck_fsync
    FileMemoryStore(home).update("dev", "p", lambda text: text + "- half-written lesson\\n" * 50_000)
    """
)


def test_a_writer_killed_mid_write_leaves_the_file_intact(home: Path, tmp_path: Path) -> None:
    store = FileMemoryStore(home)
    original = "# Dev · memory for p\n\n## 2026-11-21 · manual\n- Keep this lesson.\n"
    store.update("dev", "p", lambda _: original)
    marker = tmp_path / "marker"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(home), str(marker)], env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO
    )
    try:
        wait_until(marker.exists, "the writer to reach the write", timeout=30, interval=0.01)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert store.read("dev", "p") == original
    folder = home / "agents" / "dev" / "memories" / "p"
    assert any(name.endswith(".tmp") for name in os.listdir(folder))  # the crash left its temp file behind
    # The lock died with the writer: the next write goes through, sweeps the orphan, and keeps the old lesson.
    store.update("dev", "p", lambda text: text + "- Next lesson.\n")
    assert [item.text for item in parse(store.read("dev", "p")).live()] == ["Keep this lesson.", "Next lesson."]
    assert sorted(os.listdir(folder)) == ["main.md", "main.md.lock"]
