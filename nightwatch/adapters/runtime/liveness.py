"""The Liveness port on the operating system: which process runs a deliberation, and whether it has exited.

An owner is `<machine>/<pid>/<start>`. The machine is the host name and a short hash of the kernel's boot id and this
process's pid namespace, so two containers that share a host name are two machines and a reboot is a new one; the
start is the process's start time from /proc, so a recycled pid is another process. `gone(owner)` is True only for
an owner on this machine whose process has exited (or is a zombie, or is a newer process with the same pid). An owner
on another machine, or one this platform cannot check, is never gone: its deliberations close only once they show no
sign of life for a while (see domain/deliberation/abandoned.py).
"""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

PROC = Path("/proc")
_UNKNOWN = "-"
_HOST_CHARS = 120  # the owner column holds 200


class ProcessLiveness:
    """Owners are processes on machines; a process on this machine is checked through /proc (else the kernel)."""

    def __init__(self, *, proc: Path = PROC) -> None:
        self._proc = proc
        self._machine = _machine(proc)

    def owner(self, pid: int | None = None) -> str:
        """This process (or the process `pid` on this machine) as a deliberation's owner."""
        pid = os.getpid() if pid is None else pid
        state = _stat(self._proc, pid)
        return f"{self._machine}/{pid}/{state[1] if state else _UNKNOWN}"

    def gone(self, owner: str) -> bool:
        """True only when `owner` ran on this machine and that process no longer runs."""
        parts = owner.rsplit("/", 2)
        if len(parts) != 3 or parts[0] != self._machine or not parts[1].isdigit():
            return False
        pid, start = int(parts[1]), parts[2]
        state = _stat(self._proc, pid)
        if state is not None:
            status, started = state
            return status in ("Z", "X") or start not in (_UNKNOWN, started)  # a zombie, or a recycled pid
        if _stat(self._proc, os.getpid()) is not None:
            return True  # /proc works here and has no such process: it exited
        return not _exists(pid)


def _machine(proc: Path) -> str:
    """This machine as processes on it see each other: host name, boot and pid namespace."""
    boot = _read(proc / "sys" / "kernel" / "random" / "boot_id")
    try:
        namespace = os.readlink(proc / "self" / "ns" / "pid")
    except OSError:
        namespace = ""
    digest = hashlib.sha256(f"{boot}|{namespace}".encode()).hexdigest()[:8]
    return f"{socket.gethostname()[:_HOST_CHARS]}#{digest}"


def _stat(proc: Path, pid: int) -> tuple[str, str] | None:
    """The process's state letter and start time (clock ticks since boot), or None when /proc has no such process."""
    text = _read(proc / str(pid) / "stat")
    fields = text.rpartition(")")[2].split()  # the name before ")" may hold spaces
    return (fields[0], fields[19]) if len(fields) > 19 else None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""


def _exists(pid: int) -> bool:
    """Whether the kernel knows the pid (where there is no /proc to read)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists and belongs to someone else
    return True
