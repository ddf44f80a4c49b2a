"""ProcessLiveness against real processes: a live one is not gone, an exited, zombie or recycled one is."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nightwatch.adapters.runtime.liveness import ProcessLiveness
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process start times from /proc")


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_this_process_is_alive() -> None:
    liveness = ProcessLiveness()
    me = liveness.owner()
    assert me.split("/")[1] == str(os.getpid())
    assert not liveness.gone(me)


def test_a_process_is_gone_once_it_exited_and_was_reaped(child: subprocess.Popen[bytes]) -> None:
    liveness = ProcessLiveness()
    owner = liveness.owner(child.pid)
    assert not liveness.gone(owner)
    child.kill()
    child.wait()
    assert liveness.gone(owner)


def test_a_killed_process_not_reaped_yet_is_gone_too(child: subprocess.Popen[bytes]) -> None:
    liveness = ProcessLiveness()
    owner = liveness.owner(child.pid)
    child.kill()
    stat = Path(f"/proc/{child.pid}/stat")

    def zombie() -> bool:  # dead, its pid still taken
        return stat.read_text().rpartition(")")[2].split()[0] == "Z"

    wait_until(zombie, "the killed child to become a zombie", interval=0.01)
    assert liveness.gone(owner)


def test_a_recycled_pid_is_another_process(child: subprocess.Popen[bytes]) -> None:
    liveness = ProcessLiveness()
    machine, pid, start = liveness.owner(child.pid).split("/")
    assert not liveness.gone(f"{machine}/{pid}/{start}")
    assert liveness.gone(f"{machine}/{pid}/{int(start) - 1}")


@pytest.mark.parametrize("owner", ["another-host#00000000/1/1", "", "garbage", "x/y/z", "a/b"])
def test_an_owner_elsewhere_or_unreadable_is_never_gone(owner: str) -> None:
    assert not ProcessLiveness().gone(owner)


def test_another_pid_namespace_is_another_machine(tmp_path: Path) -> None:
    here = ProcessLiveness()
    proc = tmp_path / "proc"  # a /proc that shows no pid namespace: the machine name differs
    (proc / "sys" / "kernel" / "random").mkdir(parents=True)
    (proc / "sys" / "kernel" / "random" / "boot_id").write_text("another boot\n")
    there = ProcessLiveness(proc=proc)
    assert there.owner().split("/")[0] != here.owner().split("/")[0]
    assert not here.gone(there.owner().rsplit("/", 2)[0] + "/999999/1")
