"""Devices of the appliances: stove, washer and dryer devices on them, leak sensors beside the wet ones.

A stove device sits on each range whose burners are the device's fields; washer and dryer
devices on their appliances. A leak sensor stands on the floor beside each dishwasher and
washer, on free floor (not in the counter run the appliance stands in: then in front of it),
within the catalog's distance of it.
"""

from __future__ import annotations

import math

import numpy as np
from shapely import Point

from homeloop.core.check import LEAK_SENSOR
from homeloop.core.geometry_assets import BodySize
from homeloop.core.home import Furniture, Pose
from homeloop.pipeline.devices.context import EquipContext, memoized
from homeloop.pipeline.devices.mounting import DEVICE_GAP, body_size, local_depth, local_width
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices_geometry import Shapes, holds

#: A leak sensor's puck sits this far (m) from the appliance's side (within 0.3 m, catalog).
LEAK_SIDE_GAP = 0.08


@step("appliance_devices", "A stove device on each range, washer and dryer devices on their appliances.")
def appliance_devices(ctx: EquipContext) -> None:
    stove_fields = {n for n in ctx.entry("stove").fields if n.startswith("burner_")}
    for f in ctx.home.furniture:
        if f.semantic_class == "range":
            names = {b.name for b in f.burners}
            if names != stove_fields:
                ctx.failures.append(f"range {f.id}: burners {sorted(names)} do not match the stove device's "
                                    f"fields {sorted(stove_fields)}")
                continue
            ctx.add("stove", f.room, _on_top(f), mounted_on=f.id, controls=[f.id])
        elif f.semantic_class in ("washer", "dryer"):
            ctx.add(f.semantic_class, f.room, _on_top(f), mounted_on=f.id, controls=[f.id])


def _on_top(f: Furniture) -> Pose:
    """The pose of a device built into an appliance: on its top, turned with it."""
    return Pose(x=f.pose.x, y=f.pose.y, z=f.pose.z + f.height, yaw=f.pose.yaw)


@step("leak_sensors", "A leak sensor on free floor beside each dishwasher and washer.")
def leak_sensors(ctx: EquipContext) -> None:
    for f in ctx.home.furniture:
        if f.semantic_class in ("dishwasher", "washer"):
            leak_sensor(ctx, f)


def leak_sensor(ctx: EquipContext, f: Furniture) -> None:
    """Beside the appliance (either side), else in front of it, where the floor is free."""
    depth = local_depth(f)
    width = local_width(f)
    options = [(0.0, s * (width / 2 + LEAK_SIDE_GAP)) for s in (1, -1)]
    options += [(depth / 2 + LEAK_SIDE_GAP, s * (width / 2 - 0.1)) for s in (1, -1)]
    body = body_size(LEAK_SENSOR, "floor")
    for dx, dy in options:
        x, y, _ = f.pose.to_world(dx, dy)
        if free_floor_point(ctx, f.room, (x, y), f.id, body):
            ctx.add("leak_sensor", f.room, Pose(x=x, y=y, z=ctx.floor(f.room), yaw=f.pose.yaw),
                    monitors=[f.id], label=f"{ctx.room_name(f.room)} {f.semantic_class}")
            return
    (ctx.failures if f.semantic_class == "dishwasher" else ctx.notes).append(
        f"no free floor beside {f.semantic_class} {f.id} for a leak sensor")


def free_floor_point(ctx: EquipContext, rid: str, p: tuple[float, float], own: str, body: BodySize) -> bool:
    """Whether a floor device with this body stands at ``p`` clear of the room's walls, of
    furniture other than ``own`` and of the plan's fixtures (a counter run is solid to the floor)."""
    if not holds(ctx.polys[rid], Point(p), 0.03):
        return False
    reach = math.hypot(body.width, body.depth) / 2 + DEVICE_GAP
    owners, solids = floor_solids(ctx)
    gaps = solids.distances(np.array([p], dtype=float), reach)[:, 0]
    return all(gap >= reach for owner, gap in zip(owners, gaps.tolist()) if owner != own)


@memoized
def floor_solids(ctx: EquipContext) -> tuple[list[str | None], Shapes]:
    """What stands on the floor: the furniture (by id) and the plan's fixtures (no id)."""
    return [*ctx.footprints, *[None] * len(ctx.fixture_polys)], \
        Shapes.of([*ctx.footprints.values(), *ctx.fixture_polys])
