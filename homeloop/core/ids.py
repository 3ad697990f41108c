"""Ids that name files: the one check every id passes before it becomes part of a path.

Home, task, robot, episode and capture ids name folders and files (``BUILD/homes/<home>/``,
``RUN/homes/<home>.json``, ``RUN/episodes/<episode>.json``, ``RUN/episodes/<episode>/<capture>.png``).
They come from files a user may hand in (a source CSV, a build folder, a home file), so each is
checked here where it is turned into a path, for reading and for writing alike: a safe id is one
file name, never a path. See docs/episodes.md.

Two ids are fixed by the project and read by every floor, the command line's options included (this
module imports nothing heavy): :data:`HOUSE_ID` and :data:`DEFAULT_ROBOT`.
"""

from __future__ import annotations

import re
from pathlib import Path

from homeloop.core.errors import HomeLoopError

#: Letters, digits and ``_ - . +``, starting with a letter, digit or ``_`` (never a hidden file or an
#: option), with no ``..`` (never a way up) and no separator of any OS.
SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
#: Longest safe id: a file name's limit (255 bytes on common file systems) less room for a suffix.
MAX_ID_LENGTH = 200

#: The house's home id in builds, benchmark runs and score tables (``--homes house``).
HOUSE_ID = "house"
#: Robot body used when none is named: the one the benchmark's experiments use (docs/catalog.md).
DEFAULT_ROBOT = "unitree_g1_d_ultimate"
#: The tasks and seeds a benchmark run plays when none are named (``bench run``, the Inspect task).
DEFAULT_TASKS = "all"
DEFAULT_SEEDS = "0,1"


class UnsafeId(HomeLoopError):
    """An id that cannot name a file: it would leave its folder, or names no file at all."""


def safe_id(value: object, kind: str, where: str | Path | None = None) -> str:
    """``value`` when it is a safe id (:data:`SAFE_ID`, no ``..``, at most :data:`MAX_ID_LENGTH`
    characters), else :class:`UnsafeId` naming the id, its kind and where it came from."""
    text = value if isinstance(value, str) else ""
    if SAFE_ID.fullmatch(text) and ".." not in text and len(text) <= MAX_ID_LENGTH:
        return text
    origin = f" (in {where})" if where is not None else ""
    raise UnsafeId(f"{kind} id {value!r}{origin} cannot name a file: an id is 1 to {MAX_ID_LENGTH} letters, "
                   "digits and marks _ - . +, holds no '..' and starts with a letter, digit or underscore")
