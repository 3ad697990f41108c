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
"""

from __future__ import annotations

from typing import Iterable, Protocol

import numpy as np

from homeloop.sim.occlusion import Faces, Occlusion, Prisms

#: Whether house cameras' frames use their static views (see the module docstring).
CACHED = True

#: Rays tested at once (bounds the memory of the (rays x occluders) arrays).
RAY_CHUNK = 1024


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
    those are ``clear`` of every static occluder (``occlusion``)."""

    def __init__(self, origin: np.ndarray, faces: Faces, prisms: Prisms, points: np.ndarray, ex: np.ndarray,
                 inside: np.ndarray):
        self.origin, self.points, self.ex, self.inside = origin, points, ex, inside
        self.occlusion = Occlusion(origin, faces, prisms)
        rays = np.flatnonzero(inside)
        self.clear = np.zeros(len(points), dtype=bool)
        self.clear[rays] = ~blocked_in_chunks(self.occlusion, points, ex, rays)

    def clear_now(self, changing: Blocks) -> np.ndarray:
        """Which points are seen now: clear of the static occluders and of ``changing`` (the doors shut
        now, the objects and people)."""
        clear = self.clear.copy()
        rays = np.flatnonzero(clear)
        clear[rays] = ~blocked_in_chunks(changing, self.points, self.ex, rays)
        return clear
