"""The thermostat: one per home, on an interior wall of the first room of the catalog's list.

It goes in the first room, by the catalog's order of room types, that the home has (else
the first indoor room), on a wall clear of furniture by 0.3 m where there is one; interior
walls first (a probe through the wall lands in another indoor room), then nearest the room's
centre.
"""

from __future__ import annotations

import math

import numpy as np
import shapely

from homeloop.core.home import Pose
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.mounting import centre
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices.walls import wall_candidates


@step("thermostat", "One thermostat, on an interior wall of the catalog's first room type the home has.")
def thermostat(ctx: EquipContext) -> None:
    order = ctx.entry("thermostat").placement.rooms
    room = next((r for t in order for r in ctx.home.rooms if r.type == t and r.indoor), None)
    if room is None:
        room = next((r for r in ctx.home.rooms if r.indoor), None)
    if room is None:
        return
    walls = wall_candidates(ctx, room.id, avoid_furniture=0.3) or wall_candidates(ctx, room.id)
    if not walls:
        ctx.failures.append(f"room {room.id}: no wall place for the thermostat")
        return
    c = centre(ctx, room.id)
    # Interior walls first (a probe through the wall lands in another indoor room).
    probes = np.array([(x - math.cos(yaw) * 0.4, y - math.sin(yaw) * 0.4) for x, y, yaw in walls])
    interior = [other is not None and ctx.rooms[other].indoor for other in rooms_at(ctx, probes)]

    def rank(k: int) -> tuple[int, float, float, float]:
        w = walls[k]
        return (0 if interior[k] else 1, round(math.hypot(w[0] - c.x, w[1] - c.y), 3), w[0], w[1])

    x, y, yaw = walls[min(range(len(walls)), key=rank)]
    h = ctx.height("thermostat")
    ctx.add("thermostat", room.id, Pose(x=x, y=y, z=ctx.floor(room.id) + h, yaw=yaw))


def rooms_at(ctx: EquipContext, xy: np.ndarray) -> list[str | None]:
    """:meth:`Home.room_at` of many points: the first room (in the home's order) covering each."""
    found: list[str | None] = [None] * len(xy)
    left = np.arange(len(xy))
    pts = shapely.points(xy)
    for rid, poly in ctx.polys.items():
        if len(left) == 0:
            break
        hit = shapely.covers(poly, pts[left])
        for k in left[hit].tolist():
            found[k] = rid
        left = left[~hit]
    return found
