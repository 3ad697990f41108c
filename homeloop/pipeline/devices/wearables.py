"""Wearables: the fall watch and the help button, worn by the home's resident.

Where the home places no resident, the wearables are the scenario's resident's: they wait at
the centre of the entrance room, worn by no one drawn.
"""

from __future__ import annotations

from homeloop.core import navigation
from homeloop.core.home import Pose
from homeloop.pipeline.devices.catalog_devices import new_device
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.mounting import room_centre
from homeloop.pipeline.devices.registry import step

#: The device types the resident wears.
WEARABLES = ("fall_watch", "help_button")


@step("wearables", "The fall watch and the help button, on the resident.")
def wearables(ctx: EquipContext) -> None:
    home = ctx.home
    residents = [p for p in home.people if p.role == "resident"]
    if residents:
        person = residents[0]
        pose, owner = person.pose.model_copy(update={"z": 1.0}), person.id
    else:
        start = navigation.entrance_room(home) or home.rooms[0].id
        c = room_centre(ctx.polys[start])
        pose, owner = Pose(x=c.x, y=c.y, z=1.0), None
        ctx.notes.append("no resident in the home: the wearables are worn by the scenario's resident")
    ids = []
    for t in WEARABLES:
        d = new_device(ctx.entry(t), ctx.new_id(t, owner or "resident"), None, pose, mounted_on=owner)
        ctx.devices.append(d)
        ids.append(d.id)
    if residents:
        ctx.people = [p.model_copy(update={"wears": sorted(set(p.wears) | set(ids))}) if p.id == owner else p
                      for p in home.people]
