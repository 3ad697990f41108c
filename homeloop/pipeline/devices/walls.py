"""Places on walls: candidate wall points and what a wall device keeps clear of.

Plugs, switches, the thermostat and the water main go on a room's walls,
:data:`WALL_INSET` inside the wall face, :data:`WALL_OPENING_CLEARANCE` from the edge of
any door or window, and with their body (at the catalog's height) clear of the furniture
and of the objects on the floor that reach it, as the home check measures it.
"""

from __future__ import annotations

import math

import numpy as np
import shapely
from shapely import Point

from homeloop.core.check import OBJECT_PENETRATION
from homeloop.core.geometry_assets import device_solid, overlapping, placed_solids
from homeloop.core.home import Device, Pose
from homeloop.pipeline.devices.context import EquipContext, memoized
from homeloop.pipeline.devices.mounting import DEVICE_GAP, body_size, floor_objects, footprint_of, outline
from homeloop.pipeline.devices_geometry import Shapes, ccw, heading, wall_point_array

#: Wall-mounted devices sit this far (m) inside the room, on the wall face.
WALL_INSET = 0.01
#: Spacing (m) of candidate wall points for plugs and the thermostat.
WALL_STEP = 0.3
#: Wall devices keep this distance (m) from the edge of any door or window.
WALL_OPENING_CLEARANCE = 0.3
#: Furniture whose footprint comes this close (m) to a wall device's centre may reach its body:
#: the device's half-width plus, with room to spare, what a closed part (a wardrobe's door) stands
#: proud of a footprint (furnishing leaves every part closed).
WALL_BODY_NEAR = 0.3

#: A wall point: x, y and the yaw facing into the room.
WallSpot = tuple[float, float, float]


@memoized
def wall_point_rows(ctx: EquipContext, rid: str, step: float = WALL_STEP, end_gap: float = 0.2) -> np.ndarray:
    """:func:`wall_point_array` of a room's :func:`outline`: points ``WALL_INSET`` inside its walls."""
    return wall_point_array(outline(ctx, rid), step, end_gap, WALL_INSET)


@memoized
def all_openings(ctx: EquipContext) -> Shapes:
    """Every opening of the home, to measure against at once."""
    return Shapes.of(list(ctx.opening_polys.values()))


@memoized
def wall_neighbours(ctx: EquipContext, rid: str, body: tuple[str, float] | None
                    ) -> tuple[Shapes, int, int, float]:
    """What wall devices keep clear of: the room's doors and windows and any other opening
    within 5 cm of it, then its furniture, then with ``body`` (a wall device type and its
    height) what that device's body keeps clear of (:func:`wall_body_obstacles`); how many
    openings and pieces of furniture, and how far the body keeps."""
    close = shapely.distance(all_openings(ctx).geoms, ctx.polys[rid]) < 0.05
    openings = [g for (oid, g), near in zip(ctx.opening_polys.items(), close.tolist())
                if rid in ctx.openings[oid].connects or near]
    furniture = [ctx.footprints[f.id] for f in ctx.room_furniture[rid]]
    reach, obstacles = wall_body_obstacles(ctx, rid, *body) if body else (0.0, Shapes.of([]))
    return Shapes.of(openings + furniture + list(obstacles.geoms)), len(openings), len(furniture), reach


def wall_candidates(ctx: EquipContext, rid: str, *, avoid_furniture: float | None = 0.05,
                    clear_for: tuple[str, float] | None = None) -> list[WallSpot]:
    """Wall points of the room clear of its openings, and of its furniture by ``avoid_furniture``;
    with ``clear_for`` (a wall device type and its height) where its body stays clear too
    (:func:`wall_spot_clear`). One pass measures them all."""
    rows = wall_point_rows(ctx, rid)
    near, n_open, n_furniture, body_reach = wall_neighbours(ctx, rid, clear_for)
    gaps = near.distances(rows[:, :2], max(WALL_OPENING_CLEARANCE, avoid_furniture or 0.0, body_reach))
    keep = ~(gaps[:n_open] < WALL_OPENING_CLEARANCE).any(axis=0)
    if avoid_furniture is not None:
        keep &= ~(gaps[n_open:n_open + n_furniture] < avoid_furniture).any(axis=0)
    if clear_for is not None:
        keep &= (gaps[n_open + n_furniture:] >= body_reach).all(axis=0)
    return [(x, y, yaw) for x, y, yaw in rows[keep].tolist()]


def wall_body_clear(ctx: EquipContext, rid: str, device_type: str, x: float, y: float, yaw: float) -> bool:
    """Whether the body of a wall device at (x, y), at its catalog height, stays out of the
    room's furniture as the home check measures it (rule device_overlaps_object: solids with
    their parts, which stand proud of a footprint, as a wardrobe's doors do)."""
    here = Point(x, y)
    near = [f for f in ctx.room_furniture[rid] if ctx.footprints[f.id].distance(here) < WALL_BODY_NEAR]
    if not near:
        return True
    probe = Device.model_construct(id=f"{device_type}_probe", type=device_type, mount="wall", room=rid,
                                   pose=Pose(x=x, y=y, z=ctx.floor(rid) + ctx.height(device_type), yaw=yaw))
    body = device_solid(ctx.home, probe)
    solids, _ = placed_solids([ctx.catalog.furniture[f.catalog_id] for f in near], near)
    return body is None or not overlapping(body, solids, OBJECT_PENETRATION).any()


def wall_spot_clear(ctx: EquipContext, rid: str, p: tuple[float, float], device_type: str, height: float) -> bool:
    """Whether a wall device's body at ``p``, ``height`` above the floor, stays clear of the room's
    furniture and of the objects on its floor that reach up to it: a plug beside the TV unit is
    neither behind it nor inside the bookshelf next to it, nor in the watering can by the wall."""
    reach, near = wall_body_obstacles(ctx, rid, device_type, height)
    return bool(near.clear(np.array([p], dtype=float), reach)[0])


@memoized
def wall_body_obstacles(ctx: EquipContext, rid: str, device_type: str, height: float) -> tuple[float, Shapes]:
    """How far a wall device's centre keeps from things, and the things of the room that
    reach its body's height band."""
    body = body_size(device_type, "wall")
    reach, low, high = body.width / 2 + DEVICE_GAP, height - body.height / 2, height + body.height / 2
    near = [ctx.footprints[f.id] for f in ctx.room_furniture[rid] if f.pose.z < high and f.pose.z + f.height > low]
    near += [footprint_of(ctx, o) for o in floor_objects(ctx, rid) if o.pose.z + o.size[2] > low]
    return reach, Shapes.of(near)


def wall_point_near(ctx: EquipContext, rid: str, p: Point) -> WallSpot | None:
    """The point of the room's wall nearest ``p``, :data:`WALL_INSET` inside, facing in."""
    poly = ccw(ctx.polys[rid])
    ring = poly.exterior
    d = ring.project(p)
    a = ring.interpolate(d)
    b = ring.interpolate(min(d + 0.01, ring.length))
    if a.distance(b) < 1e-9:
        b = ring.interpolate(max(d - 0.01, 0.0))
        a, b = b, a
    ux, uy = b.x - a.x, b.y - a.y
    n = math.hypot(ux, uy) or 1.0
    inward = (-uy / n, ux / n)
    x, y = a.x + inward[0] * WALL_INSET, a.y + inward[1] * WALL_INSET
    return (x, y, heading(*inward)) if poly.covers(Point(x, y)) else None
