"""Geometry of openings and passages, shared by the plan audit, furnishing,
navigation and the home check (docs/pipeline.md, "Door clear zones").

A door or window is drawn as a rectangle through its wall: the long side runs
along the wall (the opening's width), the short side through it (its depth).
Everything here starts from that rectangle:

- :func:`rectangle_frames` / :func:`opening_axes`: centre, direction along
  the wall, normal through it, width and depth;
- :func:`face_zones`: rectangles in front of both faces of openings. The
  *door clear zone* is the door-wide rectangle :data:`DOOR_CLEAR_DEPTH` deep
  in front of a face, shrunk by :data:`DOOR_ZONE_SIDE_INSET` at its sides
  and starting :data:`DOOR_ZONE_FACE_GAP` from the face, so flush jambs and
  the door's own wall are not in it; :func:`door_clear_zones` keeps the faces
  whose zone lies at least :data:`DOOR_FACE_INSIDE_FRACTION` over the floor
  (the outer face of an entrance door is not the home's to keep clear);
- :func:`face_side` / :func:`face_point`: which face of an opening looks into
  a room, and a point on its centre line in front of that face;
- :func:`open_connections`: pairs of spaces that touch with no wall (or
  window) between them over at least :data:`OPEN_PASSAGE_MIN_LENGTH`.

Functions take shapely geometries, so a :class:`~homeloop.core.plan.Plan` and a
:class:`~homeloop.core.home.Home` use the same code. Metres, the plan's frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
import shapely
from shapely import Point, Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core.kept import Kept

T = TypeVar("T")

#: How far (m) an opening may sit from a space and still open into it. Openings
#: are drawn through the wall, flush with its faces; digitised data leaves gaps
#: of a few centimetres, so 5 cm catches those without reaching across a wall
#: (the thinnest partitions are ~10 cm).
OPENING_CONTACT_TOLERANCE = 0.05
#: Depth (m) of the clear zone in front of each face of a door (SIA 500
#: manoeuvring zone): the plan audit, furnishing and the home check keep it free.
DOOR_CLEAR_DEPTH = 0.8
#: Two spaces with no wall between them along at least this length (m) are
#: openly connected (an open-plan passage), as if by a door. 0.6 m is the
#: narrowest passage a person walks through upright.
OPEN_PASSAGE_MIN_LENGTH = 0.6
#: The clear zone is shrunk by this much (m) at its sides, so flush jambs do not obstruct it.
DOOR_ZONE_SIDE_INSET = 0.02
#: The clear zone starts this far (m) from the door face, so the door's own wall does not count.
DOOR_ZONE_FACE_GAP = 0.05
#: Overlap (m²) of an obstacle with a clear zone above which the doorway is blocked (10 × 10 cm).
DOOR_OBSTRUCTION_MIN_AREA = 0.01
#: Share of a face's clear zone that must lie over the floor for the face to be kept clear.
DOOR_FACE_INSIDE_FRACTION = 0.5
#: Depth (m) in front of a window where no tall item (a wardrobe, a fridge) may stand:
#: furnishing keeps it free and the home check verifies it.
WINDOW_CLEAR_DEPTH = 0.5
#: How far (m) past an opening's face the side test looks for the room.
FACE_PROBE = 0.02
#: Grid (m) the passage overlay snaps to. In floating precision, a wall face that
#: runs along a strip edge to within rounding (a turned plan) can be noded wrongly
#: and the wall lost from the overlay; snap-rounding on a fixed grid is robust.
OVERLAY_GRID = 1e-6

__all__ = [
    "DOOR_CLEAR_DEPTH",
    "DOOR_FACE_INSIDE_FRACTION",
    "DOOR_OBSTRUCTION_MIN_AREA",
    "DOOR_ZONE_FACE_GAP",
    "DOOR_ZONE_SIDE_INSET",
    "OPENING_CONTACT_TOLERANCE",
    "OPEN_PASSAGE_MIN_LENGTH",
    "OVERLAY_GRID",
    "WINDOW_CLEAR_DEPTH",
    "DoorZone",
    "ShapeMemo",
    "door_clear_zones",
    "face_point",
    "face_side",
    "face_zones",
    "fraction_over",
    "open_connections",
    "opening_axes",
    "oriented_boxes",
    "rectangle_frames",
    "repaired",
]


def repaired(geoms: Sequence[BaseGeometry] | np.ndarray) -> np.ndarray:
    """The geometries as an array, invalid ones made valid.

    A self-intersecting polygon is an audit finding, not a reason to crash:
    overlay operations on it are undefined, so connectivity works on a repaired
    copy while the plan keeps the polygon as drawn.
    """
    arr = np.array(geoms, dtype=object)
    if len(arr):
        invalid = ~shapely.is_valid(arr)
        if invalid.any():
            arr[invalid] = shapely.make_valid(arr[invalid])
    return arr


# --- the frame of a rectangle ---------------------------------------------------------


def rectangle_frames(polygons: Sequence[BaseGeometry] | np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre, long-side unit vector, short-side unit vector, long and short side
    lengths of each geometry's minimum rotated rectangle (vectorised).

    A geometry with no rectangle (empty, a point) gets its centroid (or the
    origin), the x and y axes and zero lengths.
    """
    polygons = np.asarray(polygons, dtype=object)
    n = len(polygons)
    frames = _no_frames(n)
    if n == 0:
        return frames
    rects = shapely.oriented_envelope(polygons)
    idx = np.flatnonzero(shapely.get_type_id(rects) == 3)
    rings = shapely.get_exterior_ring(rects[idx])
    counts = shapely.get_num_coordinates(rings)
    ok = counts == 5
    flat = np.setdiff1d(np.arange(n), idx[ok])
    if len(flat):
        filled = flat[~shapely.is_empty(polygons[flat])]
        frames[0][filled] = shapely.get_coordinates(shapely.centroid(polygons[filled]))
    if ok.any():
        coords = shapely.get_coordinates(rings)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[ok]
        _fill_frames(frames, idx[ok], coords[starts], coords[starts + 1], coords[starts + 2])
    return frames


#: Frames already measured, by geometry: shapely geometries are immutable and hash by value,
#: and the same opening is measured again by every room, rule and device that looks at it.
_AXES: Kept[tuple[np.ndarray, np.ndarray, np.ndarray, float, float]] = Kept(20000)


def opening_axes(polygon: BaseGeometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Centre, unit direction along the wall, unit normal through the wall,
    width (along the wall) and depth (through it) of one opening rectangle
    (:func:`rectangle_frames` of one geometry, without the array overhead; the arrays are
    shared, so read-only)."""
    return _AXES.get_or_make(polygon, lambda: _read_only(_opening_axes(polygon)))


def _read_only(axes: tuple[np.ndarray, np.ndarray, np.ndarray, float, float]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    for vector in axes[:3]:
        vector.flags.writeable = False
    return axes


def _opening_axes(polygon: BaseGeometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    rect = shapely.oriented_envelope(polygon)
    frames = _no_frames(1)
    if rect.geom_type == "Polygon" and len(rect.exterior.coords) == 5:
        c = np.asarray(rect.exterior.coords)
        _fill_frames(frames, np.array([0]), c[None, 0], c[None, 1], c[None, 2])
    elif not polygon.is_empty:
        frames[0][0] = polygon.centroid.coords[0]
    centre, along, across, width, depth = frames
    return centre[0], along[0], across[0], float(width[0]), float(depth[0])


def _no_frames(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (np.zeros((n, 2)), np.tile([1.0, 0.0], (n, 1)), np.tile([0.0, 1.0], (n, 1)), np.zeros(n), np.zeros(n))


def _fill_frames(frames, idx: np.ndarray, p0: np.ndarray, p1: np.ndarray, p2: np.ndarray) -> None:
    """Write into ``frames[.][idx]`` the frames of rectangles with consecutive corners p0, p1, p2."""
    centre, along, across, long_side, short_side = frames
    e1, e2 = p1 - p0, p2 - p1
    l1, l2 = np.hypot(e1[:, 0], e1[:, 1]), np.hypot(e2[:, 0], e2[:, 1])
    first_long = (l1 >= l2)[:, None]
    lv, sv = np.where(first_long, e1, e2), np.where(first_long, e2, e1)
    ll, sl = np.maximum(l1, l2), np.minimum(l1, l2)
    with np.errstate(invalid="ignore", divide="ignore"):
        lu = np.where(ll[:, None] > 0, lv / ll[:, None], [1.0, 0.0])
        su = np.where(sl[:, None] > 0, sv / sl[:, None], np.stack([-lu[:, 1], lu[:, 0]], axis=1))
    centre[idx] = (p0 + p2) / 2
    along[idx] = lu
    across[idx] = su
    long_side[idx] = ll
    short_side[idx] = sl


def oriented_boxes(origin: np.ndarray, u: np.ndarray, v: np.ndarray, u0, u1, v0, v1) -> np.ndarray:
    """Rectangles ``origin + a*u + b*v`` for a in [u0, u1], b in [v0, v1] (vectorised;
    the bounds are numbers or one per rectangle)."""
    n = len(origin)
    if n == 0:
        return np.empty(0, dtype=object)
    u0, u1, v0, v1 = (np.asarray(x, dtype=float).reshape(-1, 1) for x in (u0, u1, v0, v1))
    a0, a1, b0, b1 = u0 * u, u1 * u, v0 * v, v1 * v
    corners = np.empty((n, 5, 2))
    corners[:, 0] = origin + a0 + b0
    corners[:, 1] = origin + a1 + b0
    corners[:, 2] = origin + a1 + b1
    corners[:, 3] = origin + a0 + b1
    corners[:, 4] = corners[:, 0]
    offsets = (np.arange(0, 5 * n + 1, 5), np.arange(n + 1))
    return shapely.from_ragged_array(shapely.GeometryType.POLYGON, corners.reshape(-1, 2), offsets)


# --- zones in front of faces ----------------------------------------------------------------


@dataclass(frozen=True)
class DoorZone:
    """The zone in front of one face of an opening."""

    opening: int  # index into the openings given
    side: int  # +1 or -1 along the opening's normal
    polygon: Polygon


def face_zones(polygons: Sequence[BaseGeometry] | np.ndarray, depth: float | np.ndarray, *,
               side_inset: float = DOOR_ZONE_SIDE_INSET, face_gap: float = DOOR_ZONE_FACE_GAP
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rectangles in front of both faces of each opening: its width less ``side_inset``
    at each side, from ``face_gap`` to ``depth`` beyond the face (``depth`` one number or
    one per opening).

    Returns the zones (first every opening's +normal face, then every -normal
    face), the index of each zone's opening and its side (+1 or -1). A zone of
    an opening narrower than twice the inset is empty.
    """
    polygons = np.asarray(polygons, dtype=object)
    n = len(polygons)
    if n == 0:
        return np.empty(0, dtype=object), np.zeros(0, int), np.zeros(0, int)
    centre, along, across, width, thickness = rectangle_frames(polygons)
    reach = np.broadcast_to(np.asarray(depth, dtype=float), (n,))
    half = np.concatenate([width, width]) / 2 - side_inset
    face = np.concatenate([thickness, thickness]) / 2
    zones = oriented_boxes(np.concatenate([centre, centre]), np.concatenate([along, along]),
                           np.concatenate([across, -across]), -half, half, face + face_gap,
                           face + np.concatenate([reach, reach]))
    zones[half <= 0] = Polygon()
    owners = np.concatenate([np.arange(n), np.arange(n)])
    sides = np.concatenate([np.ones(n, int), -np.ones(n, int)])
    return zones, owners, sides


def fraction_over(polygons: np.ndarray, floor: Sequence[BaseGeometry] | np.ndarray,
                  tree: shapely.STRtree | None = None) -> np.ndarray:
    """For each polygon, the share of its area lying over the ``floor`` polygons."""
    polygons = np.asarray(polygons, dtype=object)
    floor = np.asarray(floor, dtype=object)
    out = np.zeros(len(polygons))
    if len(polygons) == 0 or len(floor) == 0:
        return out
    tree = tree if tree is not None else shapely.STRtree(floor)
    pi, fi = tree.query(polygons, predicate="intersects")
    if len(pi):
        areas = shapely.area(shapely.intersection(polygons[pi], floor[fi]))
        out = np.bincount(pi, weights=areas, minlength=len(polygons))
    total = shapely.area(polygons)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, out / total, 0.0)


def door_clear_zones(polygons: Sequence[BaseGeometry] | np.ndarray, floor: Sequence[BaseGeometry] | np.ndarray,
                     depth: float = DOOR_CLEAR_DEPTH, *, floor_tree: shapely.STRtree | None = None
                     ) -> tuple[DoorZone, ...]:
    """The clear zones of the openings' faces that open over the ``floor`` (rooms or
    spaces): each face's zone when at least :data:`DOOR_FACE_INSIDE_FRACTION` of it
    lies over the floor. Zones in the order of :func:`face_zones`."""
    zones, owners, sides = face_zones(polygons, depth)
    if len(zones) == 0:
        return ()
    keep = (fraction_over(zones, floor, floor_tree) >= DOOR_FACE_INSIDE_FRACTION) & ~shapely.is_empty(zones)
    return tuple(DoorZone(int(o), int(s), z) for o, s, z in zip(owners[keep], sides[keep], zones[keep]))


# --- the faces of one opening -------------------------------------------------------------


def face_side(polygon: BaseGeometry, room: BaseGeometry) -> float:
    """+1 or -1: the side of the opening's normal (see :func:`opening_axes`) that faces ``room``.

    The room is the one nearer to a point just past each face; where both are as
    near (a room wrapping round the opening), the nearer of points farther out.
    """
    return _side(opening_axes(polygon), room)


def _side(axes: tuple, room: BaseGeometry) -> float:
    centre, _, normal, _, depth = axes
    for reach in (depth / 2 + FACE_PROBE, depth / 2 + 0.5):
        plus = room.distance(Point(*(centre + normal * reach)))
        minus = room.distance(Point(*(centre - normal * reach)))
        if abs(plus - minus) >= 1e-9:
            break
    return 1.0 if plus <= minus else -1.0


def face_point(polygon: BaseGeometry, room: BaseGeometry, depth: float, *, along: float = 0.0,
               far_side: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A point ``depth`` in front of the opening's face on ``room``'s side (the other
    side with ``far_side``), ``along`` from the centre line; and the unit normal
    pointing away from the opening there."""
    axes = opening_axes(polygon)
    centre, u, normal, _, thickness = axes
    outward = _side(axes, room) * (-1.0 if far_side else 1.0) * normal
    return centre + outward * (thickness / 2 + depth) + u * along, outward


# --- open passages ------------------------------------------------------------------------------


class ShapeMemo:
    """Results computed from lists of shapes, kept by the shapes' identity (:class:`Kept`: each
    entry holds its shapes). The same rings give the same shapes
    (:func:`homeloop.core.home.polygon_from_rings`), and identities are much cheaper to look up
    than shapes hashed by value."""

    def __init__(self, size: int) -> None:
        self._kept: Kept[Any] = Kept(size)

    def get(self, shapes: Sequence[Sequence[BaseGeometry] | np.ndarray], extra: tuple,
            compute: Callable[[], T]) -> T:
        """The result for these shapes and ``extra`` (hashable), computed once by ``compute()``."""
        groups = [tuple(group) for group in shapes]
        held = tuple(chain.from_iterable(groups))
        result: T = self._kept.get_or_make((tuple(map(len, groups)), extra), compute, held)
        return result


#: Passages already found: a home's are asked for by equipping, by the home check and by the
#: smoke spread of every scenario.
_OPEN_CACHE = ShapeMemo(512)


def open_connections(spaces: Sequence[BaseGeometry] | np.ndarray, blockers: Sequence[BaseGeometry] | np.ndarray,
                     *, tolerance: float = OPENING_CONTACT_TOLERANCE,
                     min_length: float = OPEN_PASSAGE_MIN_LENGTH) -> list[tuple[int, int]]:
    """Index pairs (i < j) of spaces that touch with nothing of ``blockers`` between
    them over at least ``min_length``: open-plan passages, walkable like a door.

    The shared edge is found as the overlap of the two spaces grown by
    ``tolerance``; it is about ``2 * tolerance`` wide, so its area over that
    width is its length once the blockers are cut out. A wall as thick as that
    strip has faces along its long edges, so the overlay snaps to
    :data:`OVERLAY_GRID` (the open passage of docs/pipeline.md, `unreachable_space`).
    Results are remembered for the same shapes (a bounded cache).
    """
    return list(_OPEN_CACHE.get((spaces, blockers), (tolerance, min_length),
                                lambda: tuple(_open_connections(spaces, blockers, tolerance, min_length))))


def _open_connections(spaces: Sequence[BaseGeometry] | np.ndarray, blockers: Sequence[BaseGeometry] | np.ndarray,
                      tolerance: float, min_length: float) -> list[tuple[int, int]]:
    polys = repaired(spaces)
    if len(polys) < 2:
        return []
    a, b = shapely.STRtree(polys).query(polys, predicate="dwithin", distance=tolerance)
    upper = a < b
    a, b = a[upper], b[upper]
    if len(a) == 0:
        return []
    strips = shapely.intersection(shapely.buffer(polys[a], tolerance, join_style="mitre"),
                                  shapely.buffer(polys[b], tolerance, join_style="mitre"), grid_size=OVERLAY_GRID)
    open_part = shapely.difference(strips, _blockers_meeting(repaired(blockers), strips), grid_size=OVERLAY_GRID)
    lengths = shapely.area(open_part) / (2 * tolerance)
    return [(int(i), int(j)) for i, j, length in zip(a, b, lengths) if length >= min_length]


def _blockers_meeting(blockers: np.ndarray, strips: np.ndarray) -> BaseGeometry:
    """The union of the blockers that meet some strip: only those can cut one, and a home's
    other walls would make most of the union's work."""
    if not len(blockers):
        return Polygon()
    _, near = shapely.STRtree(blockers).query(strips, predicate="intersects")
    return shapely.union_all(blockers[np.unique(near)]) if len(near) else Polygon()
