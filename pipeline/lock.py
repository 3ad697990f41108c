"""One build per folder: ``<build>/.build.lock``.

A build takes the lock before it touches the folder (it removes the partial
files of killed runs first, which would be another build's files in flight)
and gives it back however it ends. The lock file is created atomically
(``O_CREAT | O_EXCL``) and holds the holder's pid, host and start time; a
second build into the same folder stops at once, naming that pid. A lock left
by a build that died without giving it back (killed with SIGKILL, a power cut)
names a process that no longer runs on this host: the next build takes it over
and says so. A lock from another host is never taken over: from here there is
no telling whether its holder still runs. See docs/pipeline.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

from homeloop.errors import HomeLoopError

LOCK_FILE = ".build.lock"

# Folders this process holds, with how many nested holds: the command line takes
# the lock before it starts Prefect, and the flow it runs takes it again.
_held: dict[Path, int] = {}
_held_guard = threading.Lock()


class BuildFolderBusy(HomeLoopError):
    """Another build holds the folder."""


def lock_path(out: Path) -> Path:
    return Path(out) / LOCK_FILE


def read_holder(path: Path) -> dict | None:
    """What a lock file says about its holder; None when it is gone or unreadable."""
    try:
        holder = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def pid_running(pid: int) -> bool:
    """Whether ``pid`` is a live process on this host (a zombie, dead but not yet
    reaped by its parent, counts as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it runs
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (not Linux): kill(0) is all there is to go on
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def holder_line(holder: dict | None) -> str:
    if not holder:
        return "a holder that left no pid"
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder.get("started", 0)))
    return f"pid {holder.get('pid')} on {holder.get('host')}, since {since}"


def _create(path: Path) -> bool:
    """Create the lock file naming this process; False when it already exists."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as fh:
        json.dump({"pid": os.getpid(), "host": socket.gethostname(), "started": round(time.time(), 1)}, fh)
        fh.write("\n")
    return True


def _is_stale(holder: dict | None) -> bool:
    if holder is None:
        return False  # being written this instant, or not ours to judge
    pid = holder.get("pid")
    return holder.get("host") == socket.gethostname() and isinstance(pid, int) and not pid_running(pid)


def acquire(out: Path, warn: Callable[[str], None]) -> None:
    """Take the lock of build folder ``out`` or raise :class:`BuildFolderBusy`."""
    path = lock_path(out)
    for _ in range(3):
        if _create(path):
            return
        holder = read_holder(path)
        if not _is_stale(holder):
            if holder is not None and holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
                return  # left by this very process (a flow run twice in one interpreter)
            raise BuildFolderBusy(
                f"build folder {out} is in use by another build ({holder_line(holder)}); "
                f"wait for it to finish, or stop it (kill {holder.get('pid') if holder else '…'}) and rerun"
            )
        warn(f"warning: taking over the lock of {out} from a build that is no longer running ({holder_line(holder)})")
        path.unlink(missing_ok=True)
    raise BuildFolderBusy(f"build folder {out} is being locked by several builds at once; rerun one of them")


def release(out: Path) -> None:
    """Remove the lock file if it still names this process."""
    path = lock_path(out)
    holder = read_holder(path)
    if holder is not None and holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def build_lock(out: Path, warn: Callable[[str], None] = print) -> Iterator[Path]:
    """Hold the lock of build folder ``out`` (which must exist) for the block."""
    key = Path(out).resolve()
    with _held_guard:
        nested = _held.get(key, 0)
        if not nested:
            acquire(key, warn)
        _held[key] = nested + 1
    try:
        yield lock_path(key)
    finally:
        with _held_guard:
            _held[key] -= 1
            if not _held[key]:
                del _held[key]
                release(key)
