"""The one base class for problems a user can fix: bad input, a missing file,
an unwritable folder. The command line prints these as one line, no traceback.

File-system failures a user can act on (a full disk, a folder where a file
should go, a path through a file, no permission) arrive as :class:`OSError`
from wherever the write happened; :func:`user_error` turns them into a
:class:`HomeLoopError` naming the path, in one place for every command.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

#: What an interrupted command prints (Ctrl-C); its exit code is 130 (128 + SIGINT).
INTERRUPTED = "interrupted; rerun the same command to resume"
INTERRUPTED_EXIT_CODE = 130


class HomeLoopError(Exception):
    """An input or environment problem, with a message that says what and how to fix."""


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _blocking_file(path: Path) -> Path | None:
    """The first component of ``path`` that is a file where a folder is needed."""
    for candidate in reversed((path, *path.parents)):
        if candidate.exists() and not candidate.is_dir():
            return candidate
    return None


def _human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


def _partial(name: str) -> bool:
    """A temporary name of an atomic write (``.<file>.<random>.tmp``): not worth naming."""
    return name.startswith(".") and name.endswith((".tmp", ".usda", ".usdc"))


def _error_path(exc: OSError, where: Path | None) -> Path | None:
    """The path an error is about: a rename's destination over its temporary source."""
    for name in (exc.filename2, exc.filename):
        if name is not None and not _partial(Path(os.fsdecode(name)).name):
            return Path(os.fsdecode(name))
    if exc.filename is not None:  # a temporary file: name its folder
        return Path(os.fsdecode(exc.filename)).parent
    return where


def os_error_line(exc: OSError, where: Path | None = None) -> str | None:
    """One line for a file-system error a user can fix, or None for any other.

    ``where`` names the folder a command writes to, for errors that carry no path
    (a write that fills the disk raises ENOSPC without a file name)."""
    where = Path(where) if where is not None else None
    path = _error_path(exc, where)
    # A failed mkdir names a parent folder: show the output that needed it.
    target = where if where is not None and path is not None and path in (where, *where.parents) else path
    shown = str(target) if target is not None else "the output folder"
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        folder = _existing_ancestor(path.parent if path is not None and not path.is_dir() else (path or Path.cwd()))
        free = shutil.disk_usage(folder).free
        return (f"no space left on the disk of {folder} ({_human_bytes(free)} free, and the write needed more); "
                "free some space or choose another --out")
    if code == errno.EISDIR:
        return f"{shown} is a folder; give a file name"
    if code in (errno.ENOTDIR, errno.EEXIST) and path is not None:
        blocker = _blocking_file(path)
        if blocker is not None:
            return f"cannot write {shown}: {blocker} is a file, not a folder; choose another path"
        return None
    if code in (errno.EACCES, errno.EPERM):
        return f"permission denied on {shown}; fix its permissions or choose another path"
    if code == errno.EROFS:
        return f"{shown} is on a read-only file system; choose another path"
    return None


def user_error(exc: BaseException, where: Path | None = None) -> HomeLoopError | None:
    """``exc`` as a :class:`HomeLoopError` when the user can fix it, else None."""
    if isinstance(exc, HomeLoopError):
        return exc
    if isinstance(exc, OSError):
        line = os_error_line(exc, where)
        if line is not None:
            return HomeLoopError(line)
    return None
