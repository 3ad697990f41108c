"""Free-floor navigation: where a robot body can stand and which places join.

A body of width ``w`` is modelled as a disc of radius ``w / 2`` moving over
the floor. Its centre may stand anywhere on the *free floor*: the union of
every room's floor (indoor and outdoor) and the passable openings (doors,
entrance doors, garage doors, so doors join the rooms they connect), minus
walls, the plan's fixtures (counter runs, built-in wardrobes, showers: what
the renderer draws as solids from the floor up) and furniture footprints,
eroded by the body's radius. Windows are not passable; carryable objects
never block.

Erosion commutes with subtracting obstacles (a point is at least ``r`` from
the complement of ``floor - obstacles`` exactly when it is at least ``r`` from
the complement of ``floor`` and from every obstacle), so the free floor is
computed as ``erode(floor - walls - fixtures) - dilate(furniture)``; the eroded floor is
cached per home's fixed geometry (rooms, walls, openings, fixtures) and body width, the dilated
footprints per footprint.

Used by furnishing (paths between doors and to the things tasks reach), by the
home verifier, by task screening and by the simulated robot's paths.
:func:`fixture_solids` is the one account of what the fixtures fill, read here,
by the geometric visibility backend and by the renderer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import shapely
from shapely import Point
from shapely.geometry.base import BaseGeometry

from homeloop.core.geometry import ShapeMemo, face_point
from homeloop.core.home import Fixture, Home, Opening, polygon_from_rings
from homeloop.core.kept import Kept

if TYPE_CHECKING:
    from homeloop.core.catalog import Catalog

#: Opening kinds a body can pass through.
PASSABLE_KINDS = frozenset({"door", "entrance_door", "garage_door"})

#: Gap (m) kept between a body and the face of a door it stands in front of,
#: beyond its radius: door approach points are ``r + APPROACH_MARGIN`` from the face.
APPROACH_MARGIN = 0.1

#: How far (m) a query point may lie outside the free floor and still be
#: snapped onto it (rounding of poses and rings to the millimetre).
SNAP_TOLERANCE = 0.05

#: Smallest area (m²) of free floor inside a room for the room to count as
#: reached; screens out slivers where free floor only pokes through a door.
MIN_REACHED_AREA = 0.02

#: Arc segments per quarter circle when eroding and dilating: four keeps the
#: error under 2 % of the radius (a few millimetres) and the polygons small.
QUAD_SEGS = 4

#: Homes (by body width) whose fixed geometry and free floor are kept: a worker works on one home
#: at a time, and an entry holds its home.
_CACHE_SIZE = 16


# --- geometry of one home ------------------------------------------------------------


class _FixedGeometry:
    """The fixed geometry of a home: rooms, walls, fixtures, passable openings."""

    def __init__(self, home: Home) -> None:
        self.room_ids = [r.id for r in home.rooms]
        self.rooms = {r.id: polygon_from_rings(r.polygon) for r in home.rooms}
        self.openings = {o.id: o for o in home.openings}
        self.opening_polys = {o.id: polygon_from_rings(o.polygon) for o in home.openings}
        passages = [self.opening_polys[o.id] for o in home.openings if o.kind in PASSABLE_KINDS]
        walls = [polygon_from_rings(w.polygon) for w in home.walls]
        floor = shapely.union_all([*self.rooms.values(), *passages])
        if walls:
            wall_union = union_of_walls(walls)
            if passages:
                wall_union = wall_union.difference(shapely.union_all(passages))
            floor = floor.difference(wall_union)
        fixtures = [polygon_from_rings(x.polygon).buffer(0) for x in home.fixtures]
        if fixtures:
            floor = floor.difference(shapely.union_all(fixtures))
        self.floor = floor
        self._eroded: dict[float, BaseGeometry] = {}

    def eroded(self, radius: float) -> BaseGeometry:
        key = round(radius, 6)
        if key not in self._eroded:
            self._eroded[key] = self.floor.buffer(-radius, quad_segs=QUAD_SEGS)
        return self._eroded[key]


#: :func:`union_of_walls` by wall shapes: the home check's sight blockers are made of the same walls.
_WALL_UNIONS = ShapeMemo(64)


def union_of_walls(walls: Sequence[BaseGeometry]) -> BaseGeometry:
    """The union of these wall shapes (one shared geometry per list of walls: never change it)."""
    return _WALL_UNIONS.get((walls,), (), lambda: shapely.union_all(walls))


def _fixed_signature(home: Home) -> tuple:
    # read on every free_floor_of call: list displays and unpacked first corners build it quickest
    return (home.home_id,
            [(r.id, *r.polygon[0][0], len(r.polygon[0])) for r in home.rooms],
            [(w.id, *w.polygon[0][0]) for w in home.walls],
            [(o.id, o.kind, *o.polygon[0][0]) for o in home.openings],
            [(x.id, *x.polygon[0][0], len(x.polygon[0])) for x in home.fixtures])


def _furniture_signature(home: Home) -> list[tuple]:
    return [(f.id, f.pose.x, f.pose.y, f.pose.yaw, f.catalog_id) for f in home.furniture]


#: Each home's fixed geometry, and its free floor by body width, kept while the home reads the same.
_FIXED: Kept[_FixedGeometry] = Kept(_CACHE_SIZE)
_FREE: Kept[FreeFloor] = Kept(_CACHE_SIZE)


def _fixed_geometry(home: Home) -> _FixedGeometry:
    return _FIXED.get_or_make((), lambda: _FixedGeometry(home), (home,), _fixed_signature(home))


def dilate(footprints: Sequence[BaseGeometry] | np.ndarray, radius: float) -> np.ndarray:
    """Footprints grown by ``radius`` (round corners), vectorised."""
    arr = np.asarray(footprints, dtype=object)
    if len(arr) == 0:
        return arr
    return shapely.buffer(arr, radius, quad_segs=QUAD_SEGS)


class FreeFloor:
    """The free floor of one home for one body width, split into connected pieces."""

    def __init__(self, geometry: BaseGeometry) -> None:
        self.geometry = geometry
        parts = [g for g in shapely.get_parts(geometry) if not g.is_empty and g.area > 0]
        self.parts: list[BaseGeometry] = parts
        self.tree = shapely.STRtree(parts) if parts else None

    def component_of(self, point: tuple[float, float] | Point, tolerance: float = SNAP_TOLERANCE) -> int | None:
        """Index of the piece holding ``point`` (or the nearest within ``tolerance``), else None."""
        if self.tree is None:
            return None
        p = point if isinstance(point, Point) else Point(float(point[0]), float(point[1]))
        hits = self.tree.query(p, predicate="dwithin", distance=tolerance)
        if len(hits) == 0:
            return None
        if len(hits) == 1:
            return int(hits[0])
        d = shapely.distance(np.asarray(self.parts, dtype=object)[hits], p)
        return int(hits[int(np.argmin(d))])


def free_floor_of(home: Home, body_width: float) -> FreeFloor:
    """The free floor with its connected pieces (cached per home and body width)."""
    return _FREE.get_or_make(round(float(body_width), 6), lambda: _free_floor(home, body_width), (home,),
                             (_fixed_signature(home), _furniture_signature(home)))


def _free_floor(home: Home, body_width: float) -> FreeFloor:
    radius = body_width / 2
    geom = _fixed_geometry(home).eroded(radius)
    footprints = [polygon_from_rings(f.footprint) for f in home.furniture]
    if footprints and not geom.is_empty:
        geom = geom.difference(shapely.union_all(dilate(footprints, radius)))
    return FreeFloor(geom)


# --- the API ---------------------------------------------------------------------------


def fixture_solids(home: Home) -> list[tuple[Fixture, BaseGeometry]]:
    """Each fixture with the footprint it fills from the floor up to its height: its polygon less
    the footprints of furniture standing in it (a range in the counter run), so the two never
    overlap. Fixtures block bodies (the free floor) and sight (both visibility backends)."""
    standing = [polygon_from_rings(f.footprint) for f in home.furniture if f.pose.z <= 1e-6]
    tree = shapely.STRtree(standing) if standing else None
    out = []
    for x in home.fixtures:
        poly = polygon_from_rings(x.polygon).buffer(0)
        inside = [standing[i] for i in tree.query(poly, predicate="intersects")] if tree is not None else []
        if inside:
            poly = poly.difference(shapely.union_all(inside))
        out.append((x, poly))
    return out


def free_floor(home: Home, body_width: float) -> BaseGeometry:
    """Where the centre of a body of this width can stand.

    The union of room floors (all rooms, indoor and outdoor) and the door,
    entrance-door and garage-door rectangles, minus walls, fixtures and furniture
    footprints, eroded by ``body_width / 2``. Windows are not passable;
    objects do not block.
    """
    return free_floor_of(home, body_width).geometry


def approach_point(opening: Opening | BaseGeometry, room_polygon: BaseGeometry, body_width: float,
                   margin: float = APPROACH_MARGIN) -> Point:
    """The point on an opening's centre line, ``body_width / 2 + margin`` in front
    of its face, on the side of ``room_polygon``."""
    poly = polygon_from_rings(opening.polygon) if isinstance(opening, Opening) else opening
    p, _ = face_point(poly, room_polygon, body_width / 2 + margin)
    return Point(*p)


def door_approach_points(home: Home, opening_id: str, body_width: float) -> list[tuple[str, Point]]:
    """For a door: one point on each side, in each room it connects.

    Each point lies on the door's centre line, ``body_width / 2 + 0.1`` m in
    front of the door's face; listed in the order of ``connects``.
    """
    fixed = _fixed_geometry(home)
    opening = fixed.openings[opening_id]
    poly = fixed.opening_polys[opening_id]
    return [(rid, approach_point(poly, fixed.rooms[rid], body_width)) for rid in opening.connects
            if rid in fixed.rooms]


def passable_openings(home: Home, room_id: str | None = None) -> list[Opening]:
    """Doors, entrance doors and garage doors (of one room, if given), in home order."""
    return [o for o in home.openings if o.kind in PASSABLE_KINDS and (room_id is None or room_id in o.connects)]


def entrance_room(home: Home) -> str | None:
    """The room the first entrance door opens into, indoor side first."""
    for o in home.openings:
        if o.kind != "entrance_door" or not o.connects:
            continue
        rooms = {r.id: r for r in home.rooms}
        inside = [rid for rid in o.connects if rid in rooms and rooms[rid].indoor]
        return (inside or list(o.connects))[0]
    return None


def _start_component(home: Home, floor: FreeFloor, fixed: _FixedGeometry, start_room: str,
                     seed: Point | None) -> int | None:
    if seed is not None:
        idx = floor.component_of(seed)
        if idx is not None:
            return idx
    if floor.tree is None:
        return None
    room = fixed.rooms[start_room]
    hits = floor.tree.query(room, predicate="intersects")
    best, best_area = None, MIN_REACHED_AREA
    for i in sorted(int(h) for h in hits):
        a = floor.parts[i].intersection(room).area
        if a > best_area:
            best, best_area = i, a
    return best


def reachable_rooms(home: Home, body_width: float, start_room: str | None = None) -> set[str]:
    """Ids of rooms whose free floor is in the same piece of free floor as the start room's.

    The start room defaults to the room the entrance door opens into (indoor
    side), starting from the door's approach point there; an empty set when
    there is no start room or the start has no free floor.
    """
    fixed = _fixed_geometry(home)
    floor = free_floor_of(home, body_width)
    seed = None
    if start_room is None:
        start_room = entrance_room(home)
        if start_room is None:
            return set()
        door = next(o for o in home.openings if o.kind == "entrance_door" and start_room in o.connects)
        seed = approach_point(fixed.opening_polys[door.id], fixed.rooms[start_room], body_width)
    if start_room not in fixed.rooms:
        raise KeyError(f"no room {start_room!r}")
    idx = _start_component(home, floor, fixed, start_room, seed)
    if idx is None:
        return set()
    piece = floor.parts[idx]
    ids = fixed.room_ids
    polys = np.asarray([fixed.rooms[r] for r in ids], dtype=object)
    areas = shapely.area(shapely.intersection(polys, piece))
    reached = {rid for rid, a in zip(ids, areas) if a >= MIN_REACHED_AREA}
    reached.add(start_room)
    return reached


def doors_connected_within_room(home: Home, room_id: str, body_width: float) -> list[tuple[str, str]]:
    """Pairs of the room's doors that free floor inside the room does not join.

    Each door is represented by its approach point in the room; paths may not
    leave the room. An empty list means every pair of doors is joined.
    """
    return doors_not_joined(home, [room_id], body_width)[room_id]


def doors_not_joined(home: Home, room_ids: Sequence[str], body_width: float) -> dict[str, list[tuple[str, str]]]:
    """:func:`doors_connected_within_room` for each of these rooms, the home's fixed geometry
    and free floor looked up once."""
    fixed = _fixed_geometry(home)
    out: dict[str, list[tuple[str, str]]] = {}
    free: BaseGeometry | None = None
    for room_id in room_ids:
        doors = passable_openings(home, room_id)
        out[room_id] = []
        if len(doors) < 2:
            continue
        if free is None:
            free = free_floor(home, body_width)
        room = fixed.rooms[room_id]
        local = FreeFloor(free.intersection(room))
        comps = [local.component_of(approach_point(fixed.opening_polys[d.id], room, body_width)) for d in doors]
        out[room_id] = [(doors[i].id, doors[j].id) for i in range(len(doors)) for j in range(i + 1, len(doors))
                        if comps[i] is None or comps[i] != comps[j]]
    return out


def path_exists(home: Home, a: tuple[float, float], b: tuple[float, float], body_width: float) -> bool:
    """Whether a body of this width can move from ``a`` to ``b`` over the free floor."""
    floor = free_floor_of(home, body_width)
    ia = floor.component_of(a)
    return ia is not None and ia == floor.component_of(b)


def widest_body_width(catalog: "Catalog") -> float:
    """The largest clearance width (m) over the catalog's robot bodies."""
    return max((r.clearance_width for r in catalog.robots.values()), default=0.0)


def clear_cache() -> None:
    """Forget cached fixed geometries and free floors."""
    _FIXED.clear()
    _FREE.clear()


__all__ = [
    "APPROACH_MARGIN",
    "PASSABLE_KINDS",
    "FreeFloor",
    "approach_point",
    "clear_cache",
    "dilate",
    "door_approach_points",
    "doors_connected_within_room",
    "doors_not_joined",
    "entrance_room",
    "fixture_solids",
    "free_floor",
    "free_floor_of",
    "passable_openings",
    "path_exists",
    "reachable_rooms",
    "union_of_walls",
    "widest_body_width",
]

