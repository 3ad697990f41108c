"""The water main: one per home, on the wall beside the kitchen sink.

It goes on the wall nearest the sink (the home's sink and counter fixtures the catalog's
``near`` names, small ones first), else beside the washer, in a room of the catalog's
``rooms``, within its ``max_distance`` and with its body clear; else on a garage wall; else
on a wall of such a room. (Leak sensors are the appliances' devices:
:mod:`homeloop.pipeline.devices.appliances`.)
"""

from __future__ import annotations

from shapely import Point

from homeloop.core.check import WATER_MAIN
from homeloop.core.home import Pose, polygon_from_rings
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices.walls import wall_candidates, wall_point_near, wall_spot_clear


@step("water_main", "The water main beside the kitchen sink, else the washer, else in the garage.")
def water_main(ctx: EquipContext) -> None:
    if beside_sink_or_washer(ctx):
        return
    h = ctx.height(WATER_MAIN)
    garage = next((r for r in ctx.home.rooms if r.type == "GARAGE"), None)
    if garage is not None:
        walls = wall_candidates(ctx, garage.id)
        if walls:
            x, y, yaw = walls[0]
            ctx.add("water_main", garage.id, Pose(x=x, y=y, z=ctx.floor(garage.id) + h, yaw=yaw))
            ctx.notes.append("no kitchen sink or washer with a wall beside it: the water main is in the garage")
            return
    for t in ctx.entry(WATER_MAIN).placement.rooms:
        for r in ctx.home.rooms:
            walls = wall_candidates(ctx, r.id) if r.type == t else []
            if walls:
                x, y, yaw = walls[0]
                ctx.add("water_main", r.id, Pose(x=x, y=y, z=ctx.floor(r.id) + h, yaw=yaw))
                ctx.notes.append(f"no sink or washer with a wall beside it: the water main is on a wall "
                                 f"of room {r.id}")
                return
    ctx.failures.append("no place for the water main (no sink, washer, garage or wet room)")


def beside_sink_or_washer(ctx: EquipContext) -> bool:
    """Place the water main on the wall beside a sink or washer of a room the catalog lists; whether it did."""
    placement = ctx.entry(WATER_MAIN).placement
    h = ctx.height(WATER_MAIN)
    limit = ctx.catalog.placement_number(WATER_MAIN, "max_distance")
    for t in placement.rooms:
        for r in ctx.home.rooms:
            if r.type != t:
                continue
            fixtures = [(x.room, polygon_from_rings(x.polygon)) for x in ctx.home.fixtures
                        if x.feature_subtype in placement.near]
            anchors = [g for room, g in fixtures if room == r.id or ctx.polys[r.id].contains(g.centroid)]
            anchors.sort(key=lambda g: (0 if g.area < 1.0 else 1, g.centroid.x, g.centroid.y))
            anchors += [ctx.footprints[f.id] for f in ctx.home.furniture_in(r.id) if f.semantic_class == "washer"]
            for g in anchors:
                spot = wall_point_near(ctx, r.id, g.centroid)
                if spot is not None and g.distance(Point(spot[0], spot[1])) <= limit \
                        and wall_spot_clear(ctx, r.id, spot[:2], WATER_MAIN, h):
                    x, y, yaw = spot
                    ctx.add("water_main", r.id, Pose(x=x, y=y, z=ctx.floor(r.id) + h, yaw=yaw))
                    return True
    return False
