"""What a hand reaches: the handles of a target, the heights a hand works at, and where the body
stands to reach a target.

A hand reaches a point when the point lies within ``reach.horizontal_reach`` of
the body's front edge (half the base length ahead of its centre) and its height
lies between ``reach.min_grasp_height`` and ``reach.max_grasp_height`` (the
catalog's highest grasp is with the torso raised, for bodies with a torso lift).
The body stands in the room of what it reaches, so it never reaches through a
wall.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

import shapely
import shapely.ops
from shapely import Point
from shapely.geometry.base import BaseGeometry

from homeloop.core.catalog import RobotEntry
from homeloop.core.home import Opening, polygon_from_rings
from homeloop.core.navigation import APPROACH_MARGIN, PASSABLE_KINDS, FreeFloor, free_floor_of
import homeloop.sim.robot.floor as floor_module
from homeloop.sim.robot.body import reach_radius
from homeloop.sim.robot.floor import SNAP_DISTANCE, room_name
from homeloop.sim.robot.obstacles import Obstacle, obstacles
from homeloop.sim.errors import SkillError
from homeloop.sim.world import RobotState, World

#: Kept between a standing spot and the edge of where the body could reach or stand (m), so a
#: spot computed on an edge is still inside after rounding.
REACH_MARGIN = 0.03

#: What :func:`stand_spot` works out from the home alone, per free floor (a home's, for a body width):
#: the piece of floor joined to a point within a room, by the piece and the room; where the body
#: cannot stand for an opening, by the opening and the margin; and where on such a piece a hand
#: reaches handles, by the piece, the room, the reach and the handles' shapes (docs/dynamics.md,
#: "Kept ways").
_shapes: "weakref.WeakKeyDictionary[FreeFloor, dict[tuple[object, ...], Any]]" = weakref.WeakKeyDictionary()


_Shape = TypeVar("_Shape")


class ReachError(SkillError):
    """The body cannot reach, hold or carry something; the message names the numbers."""


@dataclass(frozen=True)
class Handle:
    """A place a hand goes to act on something: a point or an area (x, y) at a height."""

    what: str
    shape: BaseGeometry
    z: float
    key: str | None = None  # the grasp point, surface, container or part it stands for


@dataclass(frozen=True)
class Target:
    """Something the robot acts on, with the handles a hand may use and the room to stand in."""

    kind: str  # object | furniture | opening | device | person
    id: str
    name: str
    room: str | None
    handles: tuple[Handle, ...]
    exclude: tuple[str, ...] = ()  # obstacles that are the target itself

    def centre(self) -> tuple[float, float]:
        c = shapely.union_all([h.shape for h in self.handles]).centroid
        return float(c.x), float(c.y)


def height_problem(body: RobotEntry, handle: Handle) -> str | None:
    """Why a hand of ``body`` cannot be at the handle's height, or None if it can."""
    reach = body.reach
    if handle.z < reach.min_grasp_height - 1e-9:
        return (f"{handle.what} at {handle.z:.2f} m is below the {body.name}'s lowest grasp "
                f"{reach.min_grasp_height:.2f} m")
    if handle.z > reach.max_grasp_height + 1e-9:
        lift = " with its torso raised" if body.torso_lift else ""
        return (f"{handle.what} at {handle.z:.2f} m is above the {body.name}'s highest grasp "
                f"{reach.max_grasp_height:.2f} m{lift}")
    return None


def handles_in_height(body: RobotEntry, target: Target) -> list[Handle]:
    """The handles of ``target`` at heights a hand of ``body`` works at; :class:`ReachError` naming
    the lowest handle's height when there are none."""
    ok = [h for h in target.handles if height_problem(body, h) is None]
    if not ok:
        raise ReachError(height_problem(body, min(target.handles, key=lambda h: h.z)) or target.name)
    return ok


def reach_from(body: RobotEntry, xy: tuple[float, float], target: Target) -> Handle:
    """The handle of ``target`` a hand reaches from the body's centre at ``xy``; :class:`ReachError`
    naming the height or the distance otherwise."""
    ok = handles_in_height(body, target)
    p = Point(xy)
    dist = [(h.shape.distance(p), i) for i, h in enumerate(ok)]
    d, i = min(dist)
    if d > reach_radius(body) + 1e-6:
        raise ReachError(f"{target.name} is {d:.2f} m away; the {body.name} reaches "
                         f"{body.reach.horizontal_reach:.2f} m past its front edge ({reach_radius(body):.2f} m "
                         f"from its centre): approach it first")
    return ok[i]


def stand_spot(world: World, body: RobotEntry, target: Target, from_xy: tuple[float, float],
               avoid: Sequence[Obstacle] = (), clearance: float | None = None,
               stay: bool = True) -> tuple[float, float]:
    """Where the body stands to reach ``target``: where it is if it reaches from there (unless not
    ``stay``), else the spot nearest the target, in the target's room, on free floor joined to
    ``from_xy``, clear of ``avoid``. :class:`ReachError` names the height or distance that rules every
    spot out.

    ``clearance`` (m, at least the body's own width) looks for a spot as a body that wide would
    stand: one found so suits this body too (its free floor holds the wider body's)."""
    ok = handles_in_height(body, target)
    width = max(body.clearance_width, clearance or 0.0)
    free = free_floor_of(world.home, width)
    kept = _shapes.setdefault(free, {}) if floor_module.KEPT else {}
    idx = free.component_of(from_xy, tolerance=SNAP_DISTANCE)
    joined = free.parts[idx] if idx is not None else shapely.Polygon()
    piece = joined
    if target.room is not None:
        room = target.room
        piece = _kept_shape(kept, ("room", idx, room), lambda: joined.intersection(world.home.room_polygon(room)))
    radius = reach_radius(body) - REACH_MARGIN
    shapes = [h.shape for h in ok]
    handles, region = _kept_shape(kept, ("reach", idx, target.room, radius, *shapely.to_wkb(shapes)),
                                  lambda: _reached_from(piece, shapes, radius))
    keep_clear = [Point(o.x, o.y).buffer(o.clearance(width), quad_segs=4) for o in avoid]
    keep_clear += _closed_doorways(world, width, target, kept)
    keep_clear = _touching(keep_clear, region)
    if keep_clear:
        region = region.difference(shapely.union_all(keep_clear))
    if region.is_empty:
        d = piece.distance(handles) if not piece.is_empty else math.inf
        where = "" if target.room is None else f" in {room_name(world.home, target.room)}"
        raise ReachError(f"the {body.name} cannot stand close enough to {target.name}: the nearest free floor"
                         f"{where} is {d:.2f} m from it and a hand reaches {reach_radius(body):.2f} m from the "
                         f"body's centre")
    if stay and region.buffer(1e-6).covers(Point(from_xy)):
        return float(from_xy[0]), float(from_xy[1])
    spot = shapely.ops.nearest_points(region, handles)[0]
    return float(spot.x), float(spot.y)


def _touching(shapes: list[BaseGeometry], region: BaseGeometry) -> list[BaseGeometry]:
    """The ``shapes`` whose bounding boxes meet ``region``'s, in order: a shape clear of the region
    takes nothing from it."""
    if not shapes:
        return shapes
    x0, y0, x1, y1 = region.bounds
    b = shapely.bounds(shapes)
    near = (b[:, 0] <= x1) & (b[:, 2] >= x0) & (b[:, 1] <= y1) & (b[:, 3] >= y0)
    return [s for s, n in zip(shapes, near.tolist()) if n]


def _reached_from(piece: BaseGeometry, shapes: list[BaseGeometry], radius: float) -> tuple[BaseGeometry, BaseGeometry]:
    """The handles as one shape, and the part of ``piece`` within ``radius`` of them."""
    handles = shapely.union_all(shapes)
    return handles, piece.intersection(handles.buffer(radius))


def approach_spot(world: World, robot: RobotState, target: Target, stay: bool = True) -> tuple[float, float]:
    """Where ``robot`` drives to reach ``target``: :func:`stand_spot` from where it is, clear of
    every person and floor object (not ``stay``: the spot nearest the target, even where the robot
    reaches it already)."""
    return stand_spot(world, robot.body, target, (robot.x, robot.y), obstacles(world), stay=stay)


def _closed_doorways(world: World, width: float, target: Target,
                     kept: dict[tuple[object, ...], BaseGeometry]) -> list[BaseGeometry]:
    """Where a body cannot stand for openings: clear of the leaf of every closed door, and in
    front of (not in) the door or window it is to work, as closing one asks."""
    out = []
    for o in world.home.openings:
        if target.kind == "opening" and target.id == o.id:
            out.append(_around(o, width / 2 + APPROACH_MARGIN, kept))
        elif o.kind in PASSABLE_KINDS and not world.openings[o.id].open:
            out.append(_around(o, width / 2 + 0.01, kept))
    return out


def _around(opening: Opening, margin: float, kept: dict[tuple[object, ...], BaseGeometry]) -> BaseGeometry:
    """The opening's outline grown by ``margin``."""
    return _kept_shape(kept, ("opening", opening.id, margin),
                       lambda: polygon_from_rings(opening.polygon).buffer(margin))


def _kept_shape(kept: dict[tuple[object, ...], Any], key: tuple[object, ...], make: Callable[[], _Shape]) -> _Shape:
    """``kept[key]``, made first when missing (a shape is never changed, so one is shared)."""
    shape = kept.get(key)
    if shape is None:
        shape = kept[key] = make()
    return shape
