"""Air devices: a humidifier, a dehumidifier, a fan and an air purifier on the floor of the rooms the catalog names.

They come only from the optional catalog part ``air_devices`` (``homeloop build --air-devices``;
homeloop/catalog/air_devices.yaml): with the default catalog this step places nothing and draws
nothing, so the homes are those of the paper's home set. For each type in :data:`AIR_DEVICE_TYPES`
the catalog's ``placement.rooms`` lists the room types; each such indoor room gets one, standing
against a wall: the wall point whose body (the type's floor body, homeloop/core/geometry_assets.py)
lies inside the room, :data:`WALL_GAP` off the wall, clear of furniture, fixtures, the objects on the
floor and the devices placed before it by :data:`CLEARANCE`, and :data:`DOOR_CLEARANCE` from every
door of the room (its swing and the way through). Of those it takes the one farthest from the
room's doors, then the lowest x and y: nothing is drawn. A room with no such place gets none, and
a note says so.
"""

from __future__ import annotations

import math

import shapely
from shapely import Polygon

from homeloop.core.geometry_assets import device_body_size
from homeloop.core.home import Pose
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.mounting import body_size, floor_objects, footprint_of
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices.walls import WALL_INSET, wall_candidates

#: The air devices, in the order they are placed (the catalog's order in air_devices.yaml).
AIR_DEVICE_TYPES = ("humidifier", "dehumidifier", "fan", "air_purifier")
#: A standing device's back keeps this far (m) from the wall face: clear of plugs and switches on it.
WALL_GAP = 0.06
#: Its footprint keeps this far (m) from furniture, fixtures, objects and other devices.
CLEARANCE = 0.05
#: ... and this far (m) from a door of its room: a door's swing and the way through stay free.
DOOR_CLEARANCE = 1.0
#: Its footprint lies this far (m) inside the room's outline, clear of the wall faces.
ROOM_INSET = 0.01
#: Opening kinds that are doors.
DOOR_KINDS = frozenset({"door", "entrance_door", "garage_door"})


@step("air_devices", "With the optional air devices: a humidifier, dehumidifier, fan or air purifier on the "
                     "floor against a wall of each room the catalog names, away from its doors.")
def air_devices(ctx: EquipContext) -> None:
    for device_type in AIR_DEVICE_TYPES:
        if device_type not in ctx.catalog.devices:
            continue
        rooms = ctx.entry(device_type).placement.rooms
        for room in ctx.home.rooms:
            if room.indoor and room.type in rooms:
                place(ctx, device_type, room.id)


def place(ctx: EquipContext, device_type: str, rid: str) -> bool:
    """Stand one device of the type in the room (see the module docstring); whether it found a place."""
    size = body_size(device_type, ctx.entry(device_type).placement.mount)
    back = size.depth / 2 + WALL_GAP - WALL_INSET
    inside = ctx.polys[rid].buffer(-ROOM_INSET)
    doors = [ctx.opening_polys[o.id] for o in ctx.room_openings[rid] if o.kind in DOOR_KINDS]
    things = obstacles(ctx, rid)
    best: tuple[float, float, float, float] | None = None
    for wx, wy, yaw in wall_candidates(ctx, rid, avoid_furniture=None):
        x, y = round(wx + math.cos(yaw) * back, 3), round(wy + math.sin(yaw) * back, 3)
        body = footprint(x, y, yaw, size.width, size.depth)
        if not inside.contains(body) or any(body.distance(t) < CLEARANCE for t in things):
            continue
        to_door = min((body.distance(d) for d in doors), default=math.inf)
        if to_door < DOOR_CLEARANCE:
            continue
        rank = (-round(min(to_door, 1e6), 3), x, y, yaw)
        if best is None or rank < best:
            best = rank
    if best is None:
        ctx.notes.append(f"room {rid}: no free floor against a wall for a {device_type.replace('_', ' ')}")
        return False
    _, x, y, yaw = best
    ctx.add(device_type, rid, Pose(x=x, y=y, z=ctx.floor(rid), yaw=yaw))
    return True


def obstacles(ctx: EquipContext, rid: str) -> list[Polygon]:
    """What a standing device keeps clear of in a room: furniture, fixtures, objects on the floor, and
    the bodies of the devices on its floor placed so far."""
    room = ctx.polys[rid]
    out = [ctx.footprints[f.id] for f in ctx.room_furniture[rid]]
    out += [p for p in ctx.fixture_polys if p.intersects(room)]
    out += [footprint_of(ctx, o) for o in floor_objects(ctx, rid)]
    for d in ctx.devices:
        size = device_body_size(d.type, d.mount) if d.room == rid and d.mount == "floor" else None
        if size is not None:
            out.append(footprint(d.pose.x, d.pose.y, d.pose.yaw, size.width, size.depth))
    return out


def footprint(x: float, y: float, yaw: float, width: float, depth: float) -> Polygon:
    """A standing body's footprint: ``depth`` along its heading ``yaw``, ``width`` across, centred on (x, y)."""
    c, s = math.cos(yaw), math.sin(yaw)
    corners = ((depth / 2, width / 2), (-depth / 2, width / 2), (-depth / 2, -width / 2), (depth / 2, -width / 2))
    return shapely.Polygon([(x + u * c - v * s, y + u * s + v * c) for u, v in corners])
