"""Devices on doors and windows: contact sensors, locks and doorbells, garage door openers, window coverings.

Contact sensors go on exterior doors and openable exterior windows; a lock (inside) and a
doorbell (outside) at each entrance door; a garage door opener at each garage door; roller
blinds on bedroom and office windows, curtains on living-room windows (where the catalog
lists the room type). Each sits on the opening's face, on the side of the room it serves.
"""

from __future__ import annotations

from homeloop.core.check import inner_room, needs_contact_sensor
from homeloop.core.home import Opening, Pose
from homeloop.core.plan import BEDROOM_SUBTYPES
from homeloop.pipeline.devices.context import LIVING_SUBTYPES, EquipContext
from homeloop.pipeline.devices.mounting import face
from homeloop.pipeline.devices.registry import step

#: Height (m) of a lock (door handle height).
LOCK_HEIGHT = 1.0


@step("opening_devices", "Contact sensors, locks, doorbells, garage door openers, blinds and curtains.")
def opening_devices(ctx: EquipContext) -> None:
    for o in ctx.home.openings:
        inner = inner_room(ctx.home, o)
        if inner is None:
            continue
        if needs_contact_sensor(ctx.home, o):
            contact_sensor(ctx, o, inner)
        if o.kind == "entrance_door":
            lock_and_doorbell(ctx, o, inner)
        if o.kind == "garage_door":
            x, y, yaw = face(ctx, o, inner, depth=0.1)
            ctx.add("garage_door", inner, Pose(x=x, y=y, z=ctx.floor(inner) + o.sill + o.height, yaw=yaw),
                    mounted_on=o.id, controls=[o.id], label=ctx.room_name(inner))
        if o.kind == "window":
            window_covering(ctx, o, inner)


def contact_sensor(ctx: EquipContext, o: Opening, inner: str) -> None:
    """On the inside face, near the top of the opening's free edge."""
    x, y, yaw = face(ctx, o, inner, along=max(o.width / 2 - 0.1, 0.0))
    ctx.add("contact_sensor", inner, Pose(x=x, y=y, z=ctx.floor(inner) + o.sill + o.height - 0.1, yaw=yaw),
            mounted_on=o.id, monitors=[o.id], label=f"{ctx.room_name(inner)} {_opening_word(o)}")


def lock_and_doorbell(ctx: EquipContext, o: Opening, inner: str) -> None:
    """The lock inside at handle height; the doorbell outside, beside the door (on the face of
    the room outside, else on the door's far side)."""
    width = o.width
    x, y, yaw = face(ctx, o, inner, along=-max(width / 2 - 0.1, 0.0))
    ctx.add("lock", inner, Pose(x=x, y=y, z=ctx.floor(inner) + LOCK_HEIGHT, yaw=yaw),
            mounted_on=o.id, monitors=[o.id], label="front door")
    outer = next((r for r in o.connects if r != inner and r in ctx.rooms), None)
    height = ctx.height("doorbell")
    if outer is not None:
        x, y, yaw = face(ctx, o, outer, along=width / 2 + 0.2)
        ctx.add("doorbell", outer, Pose(x=x, y=y, z=ctx.floor(outer) + height, yaw=yaw),
                mounted_on=o.id, label="front door")
    else:
        x, y, yaw = face(ctx, o, inner, along=width / 2 + 0.2, outside=True)
        ctx.add("doorbell", inner, Pose(x=x, y=y, z=ctx.floor(inner) + height, yaw=yaw),
                mounted_on=o.id, label="front door")


def window_covering(ctx: EquipContext, o: Opening, inner: str) -> None:
    """Roller blinds in bedrooms and offices, curtains in living rooms, at the window's top."""
    rtype = ctx.rooms[inner].type
    kind = ("roller_blind" if rtype in BEDROOM_SUBTYPES or rtype == "OFFICE"
            else "curtain" if rtype in LIVING_SUBTYPES else None)
    if kind is not None and rtype in ctx.entry(kind).placement.rooms:
        x, y, yaw = face(ctx, o, inner, depth=0.05)
        ctx.add(kind, inner, Pose(x=x, y=y, z=ctx.floor(inner) + o.sill + o.height, yaw=yaw),
                mounted_on=o.id, controls=[o.id])


def _opening_word(o: Opening) -> str:
    return {"entrance_door": "front door", "garage_door": "garage door", "door": "door"}.get(o.kind, "window")
