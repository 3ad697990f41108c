"""What a fixed camera sees of a home's static part, worked out once (docs/skills.md).

A house camera never moves, and most of what its frames show never moves
either: the walls, fixtures and opening pieces, the furniture and the device
bodies (:class:`homeloop.sim.visibility.GeometricVisibility`'s static
occluders), and the static entities themselves. So for each camera of a home
a :class:`StaticView` keeps, per sample point of every static entity in its
frame, whether the point is inside the frame and whether a static occluder
hides it. A capture then tests only the points still clear, and only against
what can change: the leaves of the doors shut now, and the objects and people.

A ray is hidden when any occluder hides it, and each (ray, occluder) pair is
tested with the same arithmetic whichever other occluders are tested with it
(:mod:`homeloop.sim.occlusion`), so the answer is the fixed computation's to
the last bit. The views are kept in memory with the home's prepared static
part (one per home object whose layout reads the same, see
:func:`homeloop.sim.visibility._prepared`); :data:`CACHED` = False works
every frame out in full (the tests and benchmarks compare the two).

**On disk.** Inside :func:`homeloop.core.keyed_file.kept_on_disk` (the verify
stage wraps its homes in it, with ``<build>/cache/visibility``), each view's
``clear`` is also kept in a file per home and camera,
``<folder>/<home>/<camera>-<hidden>.vis``: a header line (JSON:
:data:`FORMAT_VERSION`, the view's key, the point count, the payload's sha256),
then the bits (:mod:`homeloop.core.keyed_file`). The key (:func:`view_key`) hashes the
format, the home's hash (its file's content), the camera and what the frame
hides, and every array the answer is worked out from (the camera's origin,
the static occluders, the sample points and what each ray ignores). A file
whose header, key, count, length or checksum does not match (stale, cut
short, from another home, damaged) is never trusted: the view is worked out
again and the file written anew, atomically (a temporary name, then a
rename), so a reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable, Protocol

import numpy as np

from homeloop.core.keyed_file import read_keyed, write_keyed
from homeloop.sim.occlusion import Faces, Occlusion, Prisms

#: Whether house cameras' frames use their static views (see the module docstring).
CACHED = True

#: Rays tested at once (bounds the memory of the (rays x occluders) arrays).
RAY_CHUNK = 1024

#: The on-disk format of a kept view (a file of another format is worked out again).
FORMAT_VERSION = 1
#: Where a build keeps its cameras' views, under its folder (the verify stage's choice).
BUILD_FOLDER = Path("cache") / "visibility"
#: A kept view's file name ends so.
SUFFIX = ".vis"


class Blocks(Protocol):
    """Anything that says which rays from its camera are blocked (an :class:`Occlusion`, or several)."""

    def blocked(self, targets: np.ndarray, ex: np.ndarray) -> np.ndarray: ...


class Either:
    """Occluders in parts: a ray is blocked when any part blocks it."""

    def __init__(self, *parts: Blocks):
        self.parts = parts

    def blocked(self, targets: np.ndarray, ex: np.ndarray) -> np.ndarray:
        out = np.zeros(len(targets), dtype=bool)
        for part in self.parts:
            open_rays = np.flatnonzero(~out)
            if not len(open_rays):
                break
            out[open_rays] = part.blocked(targets[open_rays], ex[open_rays])
        return out


def blocked_in_chunks(occlusion: Blocks, points: np.ndarray, ex: np.ndarray, rays: np.ndarray) -> np.ndarray:
    """Whether each ray ``rays`` (indices into ``points``) is blocked, :data:`RAY_CHUNK` at a time."""
    out = np.zeros(len(rays), dtype=bool)
    for start in range(0, len(rays), RAY_CHUNK):
        chunk = rays[start:start + RAY_CHUNK]
        out[start:start + len(chunk)] = occlusion.blocked(points[chunk], ex[chunk])
    return out


class StaticView:
    """The static entities' sample points seen from one camera (see the module docstring): ``points``
    (M, 3), the owners each ray ignores ``ex`` (M, X), which lie ``inside`` the frame, and which of
    those are ``clear`` of every static occluder (``occlusion``), read from ``kept`` when it holds
    them under their key, else worked out (and written there)."""

    def __init__(self, origin: np.ndarray, faces: Faces, prisms: Prisms, points: np.ndarray, ex: np.ndarray,
                 inside: np.ndarray, kept: "KeptView | None" = None):
        self.origin, self.points, self.ex, self.inside = origin, points, ex, inside
        self.occlusion = Occlusion(origin, faces, prisms)
        clear = kept.read(len(points)) if kept is not None else None
        if clear is None:
            rays = np.flatnonzero(inside)
            clear = np.zeros(len(points), dtype=bool)
            clear[rays] = ~blocked_in_chunks(self.occlusion, points, ex, rays)
            if kept is not None:
                kept.write(clear)
        self.clear = clear

    def clear_now(self, changing: Blocks, more_ex: np.ndarray | None = None) -> np.ndarray:
        """Which points are seen now: clear of the static occluders and of ``changing`` (the doors shut
        now, the objects and people), but the owners ``more_ex`` names per point besides its own."""
        clear = self.clear.copy()
        rays = np.flatnonzero(clear)
        ex = self.ex if more_ex is None else np.concatenate([self.ex, more_ex], axis=1)
        clear[rays] = ~blocked_in_chunks(changing, self.points, ex, rays)
        return clear


# --- on disk -----------------------------------------------------------------------------------------


def view_key(home_hash: str, camera: str, hidden: Iterable[str], arrays: Iterable[np.ndarray]) -> str:
    """What a kept view was worked out from (see the module docstring), as a sha256."""
    digest = hashlib.sha256(json.dumps([FORMAT_VERSION, home_hash, camera, sorted(hidden)]).encode())
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def view_file(folder: Path, home_id: str, camera: str, hidden: Iterable[str]) -> Path:
    """The file a camera's view of a home is kept in (what the frame hides, hashed, tells views apart)."""
    leave = hashlib.sha256(json.dumps(sorted(hidden)).encode()).hexdigest()[:8]
    return folder / _name(home_id) / f"{_name(camera)}-{leave}{SUFFIX}"


def _name(text: str) -> str:
    """``text`` as a file name: itself when plain, else a hash of it."""
    plain = text and text[0] != "." and all(c.isalnum() or c in "-_." for c in text)
    return text if plain else hashlib.sha256(text.encode()).hexdigest()[:16]


class KeptView:
    """A view's ``clear`` bits in a file, under a key (see the module docstring)."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = path, key

    def read(self, count: int) -> np.ndarray | None:
        """The bits kept for ``count`` points under this key, or None when the file holds anything else."""
        payload = read_keyed(self.path, self._header(count))
        if payload is None or len(payload) != (count + 7) // 8:
            return None
        return np.unpackbits(np.frombuffer(payload, dtype=np.uint8), count=count).astype(bool)

    def write(self, clear: np.ndarray) -> None:
        """Keep ``clear`` under this key (atomically: a reader sees the old file or the new one)."""
        write_keyed(self.path, self._header(len(clear)), np.packbits(clear.astype(bool)).tobytes())

    def _header(self, count: int) -> dict[str, object]:
        return {"format": FORMAT_VERSION, "key": self.key, "points": count}
