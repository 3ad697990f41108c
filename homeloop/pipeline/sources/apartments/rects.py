"""The apartment frame's building blocks: integer-millimetre rectangles, the element tuple a
drawing is made of, door clear zones, and the random lengths and spacings the steps draw."""

from __future__ import annotations

import functools
import random
from typing import Any, Sequence, TypeVar

from homeloop.core.geometry import DOOR_CLEAR_DEPTH

AREA, SEPARATOR, OPENING, FEATURE = "area", "separator", "opening", "feature"

# An element: (entity_type, subtype, geometry, area index or -1). In a layout the geometry is
# a rectangle (x0, y0, x1, y1) with x0 < x1, y0 < y1; a defect may turn an area's into a list
# of (x, y) ring vertices without the closing vertex.
Element = tuple[str, str, Any, int]
Rect = tuple[int, int, int, int]

#: Depth (mm) of a door's clear zone on each face, kept free in valid plans.
DOOR_CLEAR_DEPTH_MM = round(DOOR_CLEAR_DEPTH * 1000)
#: Kitchen counter depth (mm).
COUNTER_DEPTH = 600

T = TypeVar("T")


def fridge_mm() -> tuple[int, int, int]:
    """Width, depth and front clearance (mm) of the catalog's fridge, which a valid
    kitchen leaves room for (homeloop/catalog/furniture.yaml)."""
    from homeloop.core.catalog import catalog_dir

    return _fridge_mm(str(catalog_dir()))


@functools.lru_cache(maxsize=8)
def _fridge_mm(folder: str) -> tuple[int, int, int]:
    from homeloop.core.catalog import load_catalog

    fridge = load_catalog(folder).fridge
    return tuple(round(v * 1000) for v in (fridge.dimensions.width, fridge.dimensions.depth,
                                           fridge.clearance_front))  # type: ignore[return-value]


def overlaps(a: Rect, b: Rect) -> bool:
    """Whether two rectangles share some area (touching is not overlapping)."""
    return max(a[0], b[0]) < min(a[2], b[2]) and max(a[1], b[1]) < min(a[3], b[3])


def inside(a: Rect, b: Rect) -> bool:
    """Whether rectangle ``a`` lies within ``b``."""
    return b[0] <= a[0] and b[1] <= a[1] and a[2] <= b[2] and a[3] <= b[3]


def minus(span: tuple[int, int], gaps: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the interval ``span`` outside every interval of ``gaps``."""
    parts = [span]
    for g0, g1 in gaps:
        parts = [p for a, b in parts for p in ((a, min(b, g0)), (max(a, g1), b)) if p[0] < p[1]]
    return parts


def clear_zones(rect: Rect) -> tuple[Rect, Rect]:
    """The clear zones of a door: as wide as the door, :data:`DOOR_CLEAR_DEPTH_MM` deep, on both faces."""
    x0, y0, x1, y1 = rect
    c = DOOR_CLEAR_DEPTH_MM
    if x1 - x0 >= y1 - y0:
        return (x0, y0 - c, x1, y0), (x0, y1, x1, y1 + c)
    return (x0 - c, y0, x0, y1), (x1, y0, x1 + c, y1)


def front_strip(rect: Rect, room: Rect, depth: int) -> Rect:
    """The strip ``depth`` deep in front of an opening in a wall, on the side of ``room``."""
    x0, y0, x1, y1 = rect
    if x1 - x0 >= y1 - y0:
        return (x0, y1, x1, y1 + depth) if room[1] >= y1 else (x0, y0 - depth, x1, y0)
    return (x1, y0, x1 + depth, y1) if room[0] >= x1 else (x0 - depth, y0, x0, y1)


def _mm(rng: random.Random, lo: int, hi: int, step: int = 10) -> int:
    """A random length in [lo, hi] mm on a ``step`` grid."""
    if hi <= lo:
        return lo
    return lo + step * rng.randint(0, (hi - lo) // step)


def place_along(
    rng: random.Random, length: int, widths: list[int], margin: int = 200, gap: int = 150
) -> list[int] | None:
    """Start positions of openings of ``widths`` along a wall of ``length``,
    at least ``margin`` from its ends and ``gap`` apart; None if they do not fit."""
    free = length - 2 * margin - sum(widths) - gap * (len(widths) - 1)
    if free < 0:
        return None
    cuts = sorted(rng.randint(0, free // 10) * 10 for _ in range(len(widths)))
    starts, pos, prev = [], margin, 0
    for w, c in zip(widths, cuts):
        pos += c - prev
        prev = c
        starts.append(pos)
        pos += w + gap
    return starts


def rotated(items: list[T], rng: random.Random, first: int | None = None) -> list[T]:
    """``items`` starting at a random place (among the first ``first``), wrapping round."""
    if not items:
        return items
    k = rng.randrange(min(len(items), first or len(items)))
    return items[k:] + items[:k]
