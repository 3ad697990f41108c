"""Lights and their switches.

A ceiling light at the centre of each indoor room and the garage, with a switch beside the
room's door controlling it (within the catalog's ``max_distance`` of the door, clear of
openings and of furniture that rises to the switch); an outdoor wall light for each outdoor
space entered by a door, switched from inside.
"""

from __future__ import annotations

import shapely
from shapely import Point

from homeloop.core.check import LIGHT_SWITCH
from homeloop.core.home import Opening, Pose
from homeloop.pipeline.devices.context import EquipContext, memoized
from homeloop.pipeline.devices.mounting import centre, face
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices.walls import WALL_INSET, WallSpot, wall_body_clear, wall_candidates, wall_point_rows
from homeloop.pipeline.devices_geometry import Shapes

#: A light switch's centre lies this far (m) beyond the door's edge (within the catalog's max_distance).
SWITCH_DOOR_OFFSET = 0.15
#: Where the door's own wall has no place: spacing (m) of the wall points searched near the door,
#: and how far (m) a switch keeps from the edge of any opening.
SWITCH_SEARCH_STEP = 0.05
SWITCH_OPENING_GAP = 0.1
#: Height (m) of outdoor wall lights beside the door.
OUTDOOR_LIGHT_HEIGHT = 2.2


@memoized
def switch_reach(ctx: EquipContext) -> float:
    """The catalog's ``max_distance`` (m) of a light switch from its room's door."""
    return ctx.catalog.placement_number(LIGHT_SWITCH, "max_distance")


@step("ceiling_lights", "A ceiling light in each indoor room and the garage, with a switch by the door.")
def ceiling_lights(ctx: EquipContext) -> None:
    switch_h = ctx.height("light_switch")
    for r in ctx.home.rooms:
        if not (r.indoor or r.type == "GARAGE"):
            continue
        c = centre(ctx, r.id)
        light = ctx.add("light", r.id, Pose(x=c.x, y=c.y, z=ctx.ceiling(r.id)), mount="ceiling")
        doors = room_doors(ctx, r.id)
        spot = next((s for s in (switch_point(ctx, r.id, o) for o in doors) if s is not None), None)
        if spot is None and doors:
            ctx.failures.append(f"room {r.id}: no wall place within {switch_reach(ctx)} m of its doors "
                                f"({', '.join(o.id for o in doors)}) for a light switch")
            continue
        if spot is None:  # a room open to the next has no door to be beside
            walls = wall_candidates(ctx, r.id)
            spot = walls[0] if walls else None
        if spot is None:
            ctx.notes.append(f"room {r.id}: no wall place for a light switch")
            continue
        x, y, yaw = spot
        ctx.add("light_switch", r.id, Pose(x=x, y=y, z=ctx.floor(r.id) + switch_h, yaw=yaw),
                controls=[light.id])


@step("outdoor_lights", "A wall light by the door of each outdoor space entered by one, switched from inside.")
def outdoor_lights(ctx: EquipContext) -> None:
    switch_h = ctx.height("light_switch")
    for r in ctx.home.rooms:
        if not r.outdoor:
            continue
        door = next((o for o in ctx.home.openings if o.kind in ("door", "entrance_door") and r.id in o.connects
                     and any(x in ctx.rooms and ctx.rooms[x].space_class in ("indoor", "ancillary")
                             for x in o.connects if x != r.id)), None)
        if door is None:
            continue
        inside = next(x for x in door.connects if x != r.id)
        x, y, yaw = face(ctx, door, r.id, along=-(door.width / 2 + 0.3))
        light = ctx.add("light", r.id, Pose(x=x, y=y, z=ctx.floor(r.id) + OUTDOOR_LIGHT_HEIGHT, yaw=yaw),
                        mount="wall", mounted_on=door.id)
        spot = switch_point(ctx, inside, door)
        if spot is not None:
            x, y, yaw = spot
            ctx.add("light_switch", inside, Pose(x=x, y=y, z=ctx.floor(inside) + switch_h, yaw=yaw),
                    controls=[light.id], label=f"{r.name} light")


def room_doors(ctx: EquipContext, rid: str) -> list[Opening]:
    """The doors of a room, the one its switch goes beside first: the entrance door, a door
    to a corridor, other doors by id; then garage doors in home order."""

    def rank(o: Opening) -> tuple[int, int, str]:
        other = [r for r in o.connects if r != rid]
        other_type = ctx.rooms[other[0]].type if other and other[0] in ctx.rooms else ""
        return (0 if o.kind == "entrance_door" else 1, 0 if other_type == "CORRIDOR" else 1, o.id)

    doors = [o for o in ctx.room_openings[rid] if o.kind in ("door", "entrance_door")]
    return sorted(doors, key=rank) + [o for o in ctx.room_openings[rid] if o.kind == "garage_door"]


def switch_point(ctx: EquipContext, rid: str, door: Opening) -> WallSpot | None:
    """Beside the door on its wall, :data:`SWITCH_DOOR_OFFSET` past its edge (farther where
    furniture stands there); else the wall point nearest the door within the catalog's
    ``max_distance`` (a door in a room's corner: the switch goes round the corner)."""
    poly = ctx.polys[rid]
    tall = [ctx.footprints[f.id] for f in ctx.room_furniture[rid]]
    for extra in (0.0, 0.1, 0.2):
        for s in (1.0, -1.0):
            x, y, yaw = face(ctx, door, rid, depth=WALL_INSET,
                             along=s * (door.width / 2 + SWITCH_DOOR_OFFSET + extra))
            p = Point(x, y)
            if poly.distance(p) > 0.005 or any(g.distance(p) < 0.05 for g in tall):
                continue
            if ctx.opening_polys[door.id].distance(p) <= switch_reach(ctx) \
                    and wall_body_clear(ctx, rid, LIGHT_SWITCH, x, y, yaw):
                return x, y, yaw
    return switch_near_door(ctx, rid, door)


def switch_near_door(ctx: EquipContext, rid: str, door: Opening) -> WallSpot | None:
    """The wall point of the room nearest the door within the catalog's ``max_distance``,
    :data:`SWITCH_OPENING_GAP` clear of every opening and clear of furniture that rises to
    the switch's height."""
    reach, switch_h = switch_reach(ctx), ctx.height("light_switch")
    rows = wall_point_rows(ctx, rid, SWITCH_SEARCH_STEP, SWITCH_SEARCH_STEP)
    d = Shapes.of([ctx.opening_polys[door.id]]).distances(rows[:, :2], reach)[0]
    rows, d = rows[d <= reach], d[d <= reach]
    openings = Shapes.of([ctx.opening_polys[o.id] for o in ctx.room_openings[rid]])
    high = Shapes.of([ctx.footprints[f.id] for f in ctx.room_furniture[rid] if f.pose.z + f.height >= switch_h])
    keep = ~openings.near(rows[:, :2], SWITCH_OPENING_GAP) & ~high.near(rows[:, :2], 0.05)
    keep &= shapely.intersects_xy(ctx.polys[rid], rows[:, 0], rows[:, 1])  # covered: in or on the room
    spots = sorted((round(dk, 3), x, y, yaw) for dk, (x, y, yaw) in zip(d[keep].tolist(), rows[keep].tolist()))
    # nearest the door, then by position; its body clear of furniture as the home check measures it
    return next(((x, y, yaw) for _, x, y, yaw in spots if wall_body_clear(ctx, rid, LIGHT_SWITCH, x, y, yaw)), None)
