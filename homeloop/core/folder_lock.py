"""One writer per folder: the lock a build folder and a run folder hold while they are written.

The lock is the operating system's (``flock`` on POSIX, ``LockFileEx`` on Windows), taken
through ``filelock`` without waiting. The OS gives it back when its holder ends however it
ends, even killed with SIGKILL, so a lock never outlives its process and two processes can
never both hold it. The lock file holds the holder's pid, host and start time, written once
the lock is taken, so that the one turned away is told whom to wait for; its holder removes it
on release (while still holding the lock, so no one can take the old file after that).

A lock file left by a holder that died (its OS lock went with it) still names that holder:
the next one takes the lock at once and ``warn`` says whose it was (its partial files may be
there). A file naming another host is left alone: on a network file system the OS lock may not
reach across hosts, so from here there is no telling whether that holder still runs.
See docs/pipeline.md and docs/episodes.md.
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

from filelock import FileLock, Timeout

from homeloop.core.errors import HomeLoopError

#: How the refusal of a held lock is worded: given the holder (None when unknown), the error to raise.
Busy = Callable[[dict | None], HomeLoopError]

# Folders this process holds, with their lock and how many nested holds: a command takes the
# lock before it starts its work, and the work (a flow, runner.run) takes it again.
_held: dict[Path, tuple[FileLock, int]] = {}
_held_guard = threading.Lock()


def read_holder(path: Path) -> dict | None:
    """What a lock file says about its holder; None when it is gone, empty or unreadable."""
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


def _this_process() -> dict:
    return {"pid": os.getpid(), "host": socket.gethostname(), "started": round(time.time(), 1)}


def _claim(folder: Path, kind: str, busy: Busy, warn: Callable[[str], None]) -> Callable[[int], None]:
    """The callback run with the lock's descriptor once the OS lock is taken: judge the holder the
    file names (another host's: refuse; a dead one's: warn) and write this process in its place."""
    def claim(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        left = _parse(os.read(fd, 4096))
        if left and left.get("host") != socket.gethostname():
            raise busy(left)
        if left and left.get("pid") != os.getpid():
            warn(f"warning: taking over the lock of {folder} from a {kind} that is no longer running "
                 f"({holder_line(left)})")
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(_this_process()) + "\n").encode())
    return claim


def _parse(data: bytes) -> dict | None:
    try:
        holder = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def acquire(path: Path, kind: str, busy: Busy, warn: Callable[[str], None]) -> FileLock:
    """Take the lock at ``path`` now (for a ``kind`` of writer: build, run) or raise ``busy(holder)``."""
    lock = FileLock(path, timeout=0, on_acquired=_claim(path.parent, kind, busy, warn))
    try:
        lock.acquire()
    except Timeout:
        raise busy(read_holder(path)) from None
    return lock


def release(lock: FileLock) -> None:
    """Remove the lock file, then give the OS lock back (in that order: see the module docstring)."""
    try:
        Path(lock.lock_file).unlink(missing_ok=True)
    finally:
        lock.release()


@contextlib.contextmanager
def folder_lock(path: Path, kind: str, busy: Busy, warn: Callable[[str], None]) -> Iterator[Path]:
    """Hold the lock file ``path`` (its folder must exist) for the block; nested holds in one process share it."""
    key = Path(path).resolve()
    with _held_guard:
        lock, nested = _held.get(key, (None, 0))
        if lock is None:
            lock = acquire(key, kind, busy, warn)
        _held[key] = (lock, nested + 1)
    try:
        yield key
    finally:
        with _held_guard:
            lock, nested = _held.pop(key)
            if nested > 1:
                _held[key] = (lock, nested - 1)
            else:
                release(lock)
