"""Rooms and spots on the free floor: the room of a point, where a body stands in a room, and how
messages name rooms and points.

The free floor is :mod:`homeloop.core.navigation`'s for the body's clearance
width: rooms and passable openings, minus walls, fixtures and furniture, eroded
by half the width, so a body whose centre is on it is clear of them all.
"""

from __future__ import annotations

import math
import weakref
from typing import Sequence

import shapely
import shapely.ops
from shapely import Point
from shapely.geometry.base import BaseGeometry

from homeloop.core.home import Home
from homeloop.core.navigation import FreeFloor, free_floor_of
from homeloop.sim.errors import SkillError
from homeloop.sim.world import World

#: How far a start or goal may lie off the free floor and still be moved onto it (m): a person
#: getting up from a sofa or a body standing against an obstacle steps out this far at most.
SNAP_DISTANCE = 0.75


#: Whether the spots :func:`room_spot` found are kept per free floor, and the ways
#: :mod:`homeloop.sim.robot.routes` found per mesh (docs/dynamics.md, "Kept ways"); False works each out
#: anew, for the tests and benchmarks that compare the two.
KEPT = True

#: The spots found, per free floor (a home's, for a body width), by room, whether a start was given and
#: the piece of floor it lies on.
_spots: "weakref.WeakKeyDictionary[FreeFloor, dict[tuple[str, bool, int | None], tuple[float, float]]]" = \
    weakref.WeakKeyDictionary()


class NoPath(SkillError):
    """No way over the free floor; the message names why (a locked door, a person in the way)."""


def room_of(home: Home, x: float, y: float) -> str | None:
    """The room holding the point; a point in a doorway belongs to the nearest room."""
    rid = home.room_at(x, y)
    if rid is not None:
        return rid
    p = Point(x, y)
    near = [(poly.distance(p), r) for r, poly in home.room_polygons().items()]
    d, rid = min(near) if near else (math.inf, None)
    return rid if d <= 0.5 else None


def room_centre(home: Home, room_id: str) -> tuple[float, float]:
    """The room's centroid, or a point inside the room where the centroid lies outside it."""
    poly = home.room_polygon(room_id)
    c = poly.centroid if poly.covers(poly.centroid) else poly.point_on_surface()
    return float(c.x), float(c.y)


def room_spot(world: World, room_id: str, width: float, near: tuple[float, float] | None = None) -> tuple[float, float]:
    """Where a body of ``width`` stands in a room: the point of the room's largest piece of free
    floor (reachable from ``near``, if given) nearest the room's centre."""
    home = world.home
    if room_id not in {r.id for r in home.rooms}:
        raise NoPath(f"no room {room_id!r} in this home; rooms: {', '.join(r.id for r in home.rooms)}")
    floor = free_floor_of(home, width)
    piece: BaseGeometry = floor.geometry
    idx = None
    if near is not None:
        idx = floor.component_of(near, tolerance=SNAP_DISTANCE)
        piece = floor.parts[idx] if idx is not None else shapely.Polygon()
    kept = _spots.setdefault(floor, {}) if KEPT else {}
    key = (room_id, near is not None, idx)
    if key not in kept:
        kept[key] = room_spot_on(home, room_id, width, piece, near is not None)
    return kept[key]


def room_spot_on(home: Home, room_id: str, width: float, piece: BaseGeometry, near: bool) -> tuple[float, float]:
    """:func:`room_spot` on the floor ``piece`` (the part joined to where the body stands, when ``near``)."""
    parts = [g for g in shapely.get_parts(piece.intersection(home.room_polygon(room_id))) if g.area > 1e-4]
    if not parts:
        whence = " reachable from where the robot stands" if near else ""
        raise NoPath(f"{room_name(home, room_id)} has no free floor{whence} for a body {width:.2f} m wide")
    largest = max(parts, key=lambda g: (round(g.area, 6), g.centroid.x, g.centroid.y))
    spot = shapely.ops.nearest_points(largest, Point(room_centre(home, room_id)))[0]
    return float(spot.x), float(spot.y)


def room_name(home: Home, room_id: str | None) -> str:
    """'the kitchen (r3)': a room as messages name it."""
    if room_id is None:
        return "outside the rooms"
    room = next((r for r in home.rooms if r.id == room_id), None)
    return f"the {room.name} ({room_id})" if room is not None else repr(room_id)


def point_words(p: Sequence[float]) -> str:
    """'(1.20, 3.45)': a point as messages name it."""
    return f"({p[0]:.2f}, {p[1]:.2f})"
