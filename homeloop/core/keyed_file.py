"""A file that keeps a payload under a header: read back only whole, undamaged and under that header.

What is worked out once and kept on disk (a camera's static view, the faces a pose's rays meet)
is written as one header line, JSON with sorted keys (the caller's fields: the format, the key of
what the payload was worked out from, and whatever else tells payloads apart), with the payload's
sha256 added, then the payload's bytes. A file whose header does not match the one asked for, or
whose payload is cut short or changed, reads as nothing: the caller works its payload out again
and writes it anew. Files are written atomically (a temporary name, then a rename), so a reader,
in this process or another, sees the old file or the new one, never half of one.

**Where.** Inside :func:`kept_on_disk` such files are kept in its folder, and read from there
(:func:`disk_folder`): the verify stage keeps its homes' camera views under the build's
``cache/visibility``; a run's pool workers share one temporary folder while the run lasts. Outside
it nothing is kept on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

from homeloop.core.io import write_bytes


#: The folders what is worked out is kept in, innermost last (see :func:`kept_on_disk`).
_folders: list[Path] = []


@contextlib.contextmanager
def kept_on_disk(folder: str | Path) -> Iterator[Path]:
    """Keep what is worked out inside the ``with`` in files under ``folder`` too, and read it from there."""
    _folders.append(Path(folder))
    try:
        yield _folders[-1]
    finally:
        _folders.pop()


def disk_folder() -> Path | None:
    """The folder things are kept in now (the innermost :func:`kept_on_disk`), or None."""
    return _folders[-1] if _folders else None


def read_keyed(path: Path, header: dict[str, Any]) -> bytes | None:
    """The payload kept in ``path`` under ``header``, or None when the file holds anything else
    (or cannot be read)."""
    try:
        data = path.read_bytes()
        end = data.index(b"\n")
        found = json.loads(data[:end])
    except (OSError, ValueError):
        return None
    payload = data[end + 1:]
    if found != {**header, "sha256": hashlib.sha256(payload).hexdigest()}:
        return None
    return payload


def write_keyed(path: Path, header: dict[str, Any], payload: bytes) -> None:
    """Keep ``payload`` in ``path`` under ``header`` (atomically); a folder that cannot be written
    keeps nothing, and the payload is worked out again next time."""
    head = json.dumps({**header, "sha256": hashlib.sha256(payload).hexdigest()}, sort_keys=True).encode()
    try:
        write_bytes(path, head + b"\n" + payload)
    except OSError:
        pass
