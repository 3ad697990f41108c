"""Plugs: one to three on the walls of each habitable room, the first at the TV unit or desk.

A room gets one plug, two from 10 m² and three from 18 m². The first powers the TV unit or
the desk (the catalog's ``attached_to``), on the wall just beside its back within the
catalog's ``max_distance``; the others go on free wall: the first of them drawn at random,
each next one the wall point farthest from the plugs placed, while that is a metre or more.
"""

from __future__ import annotations

import math

from shapely import Point

from homeloop.core.check import PLUG
from homeloop.core.home import Furniture, Pose
from homeloop.core.plan import BEDROOM_SUBTYPES, KITCHEN_SUBTYPES
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.mounting import local_depth, local_width
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices.walls import WALL_INSET, WallSpot, wall_candidates, wall_spot_clear
from homeloop.pipeline.devices_geometry import ccw, heading

#: Rooms with plugs (habitable rooms).
PLUG_ROOMS = frozenset(BEDROOM_SUBTYPES | KITCHEN_SUBTYPES | {"LIVING_ROOM", "LIVING_DINING", "DINING", "OFFICE"})
#: Furniture classes a plug serves, in order of preference (catalog plug.attached_to).
PLUG_FURNITURE = ("tv_unit", "desk")


@step("plugs", "Plugs in each habitable room: one at the TV unit or desk, the others spread on free wall.")
def plugs(ctx: EquipContext) -> None:
    height = ctx.height("plug")
    for r in ctx.home.rooms:
        if r.type not in PLUG_ROOMS or not r.indoor:
            continue
        area = ctx.polys[r.id].area
        wanted = min(3, 1 + int(area >= 10) + int(area >= 18))
        placed: list[tuple[float, float]] = []
        served = [f for c in PLUG_FURNITURE for f in ctx.room_furniture[r.id] if f.semantic_class == c]
        for f in served[:1]:
            spot = plug_at(ctx, r.id, f)
            if spot is not None:
                x, y, yaw = spot
                ctx.add("plug", r.id, Pose(x=x, y=y, z=ctx.floor(r.id) + height, yaw=yaw), controls=[f.id],
                        label=f"{r.name} {f.semantic_class.replace('_', ' ')}")
                placed.append((x, y))
        walls = wall_candidates(ctx, r.id, clear_for=(PLUG, height))
        while len(placed) < wanted and walls:
            if not placed:
                pick = walls[int(ctx.rng.integers(len(walls)))]
            else:
                pick = max(walls, key=lambda w: min(math.hypot(w[0] - p[0], w[1] - p[1]) for p in placed))
                if min(math.hypot(pick[0] - p[0], pick[1] - p[1]) for p in placed) < 1.0:
                    break
            x, y, yaw = pick
            ctx.add("plug", r.id, Pose(x=x, y=y, z=ctx.floor(r.id) + height, yaw=yaw))
            placed.append((x, y))


def plug_at(ctx: EquipContext, rid: str, f: Furniture) -> WallSpot | None:
    """A wall point just beside the back of a piece of furniture, within the catalog's
    ``max_distance`` of it."""
    poly = ctx.polys[rid]
    ring = ccw(poly).exterior
    width = local_width(f)
    reach = ctx.catalog.placement_number(PLUG, "max_distance")
    for side in (1.0, -1.0):
        bx, by, _ = f.pose.to_world(-local_depth(f) / 2, side * (width / 2 + 0.15))
        d = ring.project(Point(bx, by))
        p = ring.interpolate(d)
        if p.distance(Point(bx, by)) > 0.3:
            continue
        q = ring.interpolate(min(d + 0.01, ring.length))
        ux, uy = q.x - p.x, q.y - p.y
        n = math.hypot(ux, uy) or 1.0
        inward = (-uy / n, ux / n)
        x, y = p.x + inward[0] * WALL_INSET, p.y + inward[1] * WALL_INSET
        if poly.covers(Point(x, y)) and ctx.footprints[f.id].distance(Point(x, y)) <= reach \
                and wall_spot_clear(ctx, rid, (x, y), PLUG, ctx.height(PLUG)):
            return x, y, heading(*inward)
    return None
