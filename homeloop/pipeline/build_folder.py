"""A build owns its folder (docs/pipeline.md, "The build folder").

``--out`` must be missing, empty, or a HomeLoop build: a folder holding the marker a build writes
there first, once it holds the lock (:data:`homeloop.core.io.OWNER_FILE`, with the folder's token), or the
``manifest.json`` of a finished build. Anything else stops with one line naming the folder and what
is in it. Inside its folder a build deletes only files it wrote itself, still as it wrote them:
outputs a stage recorded that its rerun no longer makes, the home files its homes work recorded,
and temporary files named with the folder's token. Whatever no recorded stage wrote is not the
build's: ``homeloop verify`` reports it (:func:`homeloop.pipeline.verify.foreign_files`).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Callable, Iterable

from homeloop.core.errors import HomeLoopError
from homeloop.core.io import OWNER_FILE, owner_token, partial_file_pattern, sha256_file

MANIFEST = "manifest.json"
#: Names of another folder shown in the refusal.
SHOWN_NAMES = 3


class NotABuildFolder(HomeLoopError):
    """``--out`` holds files that no HomeLoop build wrote."""


def marker(out: Path) -> Path:
    return Path(out) / OWNER_FILE


def is_build(out: Path) -> bool:
    """Whether ``out`` holds a build's marker or a finished build's manifest."""
    if marker(out).is_file():
        return True
    try:
        manifest = json.loads((Path(out) / MANIFEST).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(manifest, dict) and "build" in manifest and isinstance(manifest.get("outputs"), dict)


def _contents(out: Path, ignore: Iterable[str]) -> list[str]:
    try:
        return sorted(name for name in os.listdir(out) if name not in set(ignore))
    except NotADirectoryError:
        raise NotABuildFolder(f"--out {out} is a file; give a folder (missing, empty, or an earlier build's)") from None
    except OSError as exc:  # a link to nothing, a folder that cannot be listed
        raise NotABuildFolder(f"--out {out} cannot be read ({exc.strerror}); choose another --out") from None


def check_owned(out: Path, ignore: Iterable[str] = ()) -> None:
    """Stop with one line unless ``out`` is missing, empty (but for ``ignore``: the build lock) or
    a HomeLoop build. Reads only: a folder another program owns is left as it is."""
    out = Path(out)
    if not out.exists() and not out.is_symlink():
        return
    names = _contents(out, ignore)
    if not names or is_build(out):
        return
    shown = ", ".join(names[:SHOWN_NAMES]) + (f" and {len(names) - SHOWN_NAMES:,} more" if len(names) > SHOWN_NAMES
                                              else "")
    raise NotABuildFolder(f"--out {out} is neither empty nor a HomeLoop build (it holds {shown}); a build "
                          "writes and deletes files in its folder, so give a new or empty folder, or an earlier "
                          "build's")


def claim(out: Path) -> str:
    """Make ``out`` (checked by :func:`check_owned`, and there) a build folder: its marker holds the
    folder's token, kept by every later build into it. Returns the token."""
    out = Path(out)
    if not marker(out).is_file():
        tmp = out / f".{OWNER_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        tmp.write_text(json.dumps({"token": secrets.token_hex(6), "created_unix": round(time.time(), 1)}) + "\n")
        try:
            os.link(tmp, marker(out))  # never over the marker of a build that wrote it this instant
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: a rename (a second build stops at the lock)
            os.replace(tmp, marker(out))
        finally:
            tmp.unlink(missing_ok=True)
    token = owner_token(out)
    if token is None:
        raise HomeLoopError(f"{marker(out)} cannot be read; delete it and rerun")
    return token


def remove_partial_files(out: Path) -> list[Path]:
    """Delete the temporary files writes cut short left behind (a build killed before a rename)
    under ``out``: those named with its token only; the rerun writes those files again."""
    token = owner_token(out) if marker(out).is_file() else None
    if token is None:
        return []
    pattern = partial_file_pattern(token)
    removed = []
    for path in sorted(Path(out).rglob(".*")):
        if path.is_file() and pattern.match(path.name):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def inside(out: Path, rel: str) -> Path | None:
    """``out / rel`` when ``rel`` names a file inside ``out`` (no ``..``, no absolute path, no link
    out of it); None otherwise: a record that says otherwise is not followed."""
    path = Path(out) / rel
    if Path(rel).is_absolute() or ".." in Path(rel).parts:
        return None
    try:
        path.resolve().relative_to(Path(out).resolve())
    except (OSError, ValueError):
        return None
    return path


def remove_written(out: Path, files: dict[str, str], digest: Callable[[Path], str] = sha256_file) -> list[str]:
    """Delete the files ``files`` names (path relative to ``out`` → sha256 as written) that are still
    as written, then the folders that leaves empty; an edited file stays (verify reports it)."""
    removed = []
    for rel, written in sorted(files.items()):
        path = inside(out, rel)
        if path is None or not path.is_file() or path.is_symlink() or digest(path) != written:
            continue
        path.unlink()
        removed.append(rel)
        _prune_empty(Path(out), path.parent)
    return removed


def _prune_empty(out: Path, folder: Path) -> None:
    while folder != out and out in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (or not ours to remove)
            return
        folder = folder.parent
