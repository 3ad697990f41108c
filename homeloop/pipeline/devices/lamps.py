"""Lamps: on a living room's side table and a bedroom's nightstand, or on a living room's floor.

A lamp stands at a free spot of its host's top (:func:`lamp_spot`: clear of what lies there,
a back corner where that is free); a living room whose side tables have no room for one
gets a floor lamp, near the seats, clear of furniture and of the objects on the floor.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely import Polygon, affinity

from homeloop.core.geometry_assets import BodySize
from homeloop.core.home import Furniture, Pose, Room, Surface, polygon_from_rings
from homeloop.core.plan import BEDROOM_SUBTYPES
from homeloop.pipeline.devices.context import LIVING_SUBTYPES, EquipContext
from homeloop.pipeline.devices.mounting import body_size, floor_objects, footprint_of, grid_points, objects_on
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices_geometry import Shapes

#: A lamp on a top keeps this far (m) from the things on it; a floor lamp's centre this far (m)
#: from furniture and objects on the floor.
LAMP_GAP = 0.005
FLOOR_LAMP_CLEARANCE = 0.25


@step("lamps", "A lamp on a living room's side table and a bedroom's nightstand; else a living room's "
               "floor lamp.")
def lamps(ctx: EquipContext) -> None:
    """A lamp on a living room's side table or a bedroom's nightstand, at a free spot of its top
    (:func:`lamp_spot`); a living room where no side table has one gets a floor lamp."""
    size = body_size("light", "on_furniture")
    for r in ctx.home.rooms:
        host_class = "side_table" if r.type in LIVING_SUBTYPES else "nightstand" if r.type in BEDROOM_SUBTYPES \
            else None
        if host_class is None:
            continue
        hosts = [f for f in ctx.home.furniture_in(r.id) if f.semantic_class == host_class and f.surfaces]
        if not any(lamp_on(ctx, r, host, size) for host in hosts):
            if hosts:
                ctx.notes.append(f"room {r.id}: no free spot for a lamp on {', '.join(f.id for f in hosts)}")
            if r.type in LIVING_SUBTYPES:
                floor_lamp(ctx, r)


def lamp_on(ctx: EquipContext, r: Room, host: Furniture, size: BodySize) -> bool:
    """Stand a lamp on the host's top where :func:`lamp_spot` finds room; whether it did."""
    top = host.surfaces[0]
    spot = lamp_spot(host, top, things_on(ctx, host, top), size)
    if spot is None:
        return False
    ctx.add("light", r.id, Pose(x=spot[0], y=spot[1], z=top.height, yaw=host.pose.yaw),
            mount="on_furniture", mounted_on=host.id, label=f"{r.name} lamp on the {host.semantic_class}")
    return True


def things_on(ctx: EquipContext, host: Furniture, top: Surface) -> list[Polygon]:
    """The footprints of what is on a top: the objects lying on it and furniture standing on it."""
    things = [footprint_of(ctx, o) for o in objects_on(ctx).get((host.id, top.name), [])]
    base = ctx.footprints[host.id]
    stacked = [f for f in ctx.home.furniture if f.id != host.id and f.pose.z >= top.height - 0.02]
    things += [g for f in stacked if (g := ctx.footprints[f.id]).intersects(base)]
    return things


def floor_lamp(ctx: EquipContext, r: Room) -> None:
    """A floor lamp on free floor nearest the room's seats (else its walls)."""
    seats = [f for f in ctx.room_furniture[r.id] if f.semantic_class in ("sofa", "armchair")]
    pts = grid_points(ctx.polys[r.id].buffer(-FLOOR_LAMP_CLEARANCE), 0.2)
    if len(pts) == 0:
        return
    anchor = ctx.footprints[seats[0].id] if seats else ctx.polys[r.id].exterior
    obstacles = Shapes.of([*ctx.footprints.values(), *(footprint_of(ctx, o) for o in floor_objects(ctx, r.id))])
    pts = pts[~obstacles.near(pts, FLOOR_LAMP_CLEARANCE)]
    to_anchor = shapely.distance(anchor, shapely.points(pts)) if len(pts) else []
    best = min(((round(d, 3), x, y) for d, (x, y) in zip(np.asarray(to_anchor).tolist(), pts.tolist())), default=None)
    if best is None:
        ctx.notes.append(f"room {r.id}: no free floor for a lamp")
        return
    ctx.add("light", r.id, Pose(x=best[1], y=best[2], z=ctx.floor(r.id)), mount="floor",
            label=f"{r.name} floor lamp")


def lamp_spot(host: Furniture, top: Surface, things: list[Polygon], size: BodySize) -> tuple[float, float] | None:
    """Where a lamp with a base of ``size`` stands on a top, clear of ``things`` by :data:`LAMP_GAP`;
    None where it does not fit.

    In the host's frame (+x its front) the base is a square along the axes: its centre may go
    anywhere on the top shrunk by half the base, less each thing's box grown by half the base
    and the gap. Of the corners of that free region it takes the one that hides least of the
    things behind it from someone in front, then the one farthest back, then the one farthest
    to a side: a back corner where that is free.
    """
    # The top and the things in the host's frame, moved and turned at once.
    moved = affinity.translate(shapely.GeometryCollection([polygon_from_rings(top.polygon), *things]),
                               -host.pose.x, -host.pose.y)
    local = shapely.get_parts(affinity.rotate(moved, -host.pose.yaw, origin=(0, 0), use_radians=True))
    (x0, y0, x1, y1), *boxes = [tuple(b) for b in shapely.bounds(local).tolist()]
    half_d, half_w = size.depth / 2, size.width / 2
    if x1 - x0 < size.depth or y1 - y0 < size.width:
        return None
    taken = [shapely.box(a - half_d - LAMP_GAP, b - half_w - LAMP_GAP, c + half_d + LAMP_GAP, d + half_w + LAMP_GAP)
             for a, b, c, d in boxes]
    free = shapely.box(x0 + half_d, y0 + half_w, x1 - half_d, y1 - half_w)
    if taken:
        free = free.difference(shapely.union_all(taken))
    rings = [r for g in shapely.get_parts(free) if g.geom_type == "Polygon" and g.area > 0
             for r in (g.exterior, *g.interiors)]
    corners = sorted({(round(x, 4), round(y, 4)) for r in rings for x, y in r.coords})
    if not corners:
        return None

    def hidden(u: float, v: float) -> float:
        """The width of the things behind a lamp at (u, v) that it covers seen from the front."""
        width: float = sum(max(0.0, min(v + half_w, b1) - max(v - half_w, b0)) for a0, b0, a1, b1 in boxes
                           if (a0 + a1) / 2 < u)
        return width

    u, v = min(corners, key=lambda c: (round(hidden(*c), 3), c[0], -abs(c[1]), c[1]))
    x, y, _ = host.pose.to_world(u, v)
    return round(x, 3), round(y, 3)
