"""One build per folder: ``<build>/.build.lock``.

A build takes the lock before it touches the folder (it removes the partial
files of killed runs first, which would be another build's files in flight)
and gives it back however it ends. The lock is the operating system's, taken
through :mod:`homeloop.core.folder_lock`: a second build into the same folder stops
at once, naming the pid the lock file gives, and a build that dies (even
killed with SIGKILL) loses its lock with its process, so there is no stale
lock to take over; the next build says whose lock file it found. A lock file
naming another host is never taken over. See docs/pipeline.md.
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path
from typing import Callable, Iterator

from homeloop.core.errors import HomeLoopError
from homeloop.core.folder_lock import folder_lock, holder_line, pid_running, read_holder

__all__ = ["LOCK_FILE", "BuildFolderBusy", "build_lock", "lock_path", "pid_running", "read_holder"]

LOCK_FILE = ".build.lock"


class BuildFolderBusy(HomeLoopError):
    """Another build holds the folder."""


def lock_path(out: Path) -> Path:
    return Path(out) / LOCK_FILE


def _busy(out: Path) -> Callable[[dict | None], BuildFolderBusy]:
    def busy(holder: dict | None) -> BuildFolderBusy:
        pid = holder.get("pid") if holder else "…"
        return BuildFolderBusy(f"build folder {out} is in use by another build ({holder_line(holder)}); "
                               f"wait for it to finish, or stop it (kill {pid}) and rerun"
                               + (f"; if it no longer runs on {holder.get('host')}, delete {lock_path(out)}"
                                  if holder and holder.get("host") != socket.gethostname() else ""))
    return busy


@contextlib.contextmanager
def build_lock(out: Path, warn: Callable[[str], None] = print) -> Iterator[Path]:
    """Hold the lock of build folder ``out`` (which must exist) for the block."""
    out = Path(out).resolve()
    with folder_lock(lock_path(out), "build", _busy(out), warn) as path:
        yield path
