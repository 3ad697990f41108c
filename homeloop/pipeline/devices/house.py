"""The house's equipment: :func:`equip_house` and the list it is checked against (docs/pipeline.md)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from homeloop.core.catalog import Catalog
from homeloop.core.home import Device, Home
from homeloop.pipeline.devices.profile import HOUSE_PROFILE
from homeloop.pipeline.devices.stage import EquipResult, equip

#: The house's equipment (docs/pipeline.md), checked by :func:`house_problems`.
HOUSE_CAMERAS = 14
HOUSE_AGENT_CAMERAS = 8


def equip_house(home: Home, catalog: Catalog, seed: int = 0) -> EquipResult:
    """Equip the furnished house with :data:`HOUSE_PROFILE`; anything the house's
    list (:func:`house_problems`) has that is missing becomes a failure."""
    result = equip(home, catalog, np.random.default_rng(seed), HOUSE_PROFILE)
    return replace(result, failures=result.failures + house_problems(result.home))


def house_problems(home: Home) -> list[str]:
    """What the equipped house lacks of docs/pipeline.md's list (empty when complete)."""
    problems: list[str] = []
    by_type = {r.type: r.id for r in home.rooms}

    def devices_in(t: str, room_type: str | None = None) -> list[Device]:
        return [d for d in home.devices_of_type(t)
                if room_type is None or (d.room is not None and home.room(d.room).type == room_type)]

    if len(home.cameras) != HOUSE_CAMERAS or home.agent_camera_count != HOUSE_AGENT_CAMERAS:
        problems.append(f"{len(home.cameras)} cameras ({home.agent_camera_count} for the agent); the house has "
                        f"{HOUSE_CAMERAS} ({HOUSE_AGENT_CAMERAS} for the agent)")
    kitchen = by_type.get("KITCHEN")
    if not any(kitchen in d.monitors or d.room == kitchen for d in home.devices_of_type("smoke_sensor")):
        problems.append("no smoke sensor for the kitchen")
    if not devices_in("stove", "KITCHEN"):
        problems.append("no stove device on the kitchen range")
    if not any(home.furniture_item(m).semantic_class == "dishwasher"
               for d in home.devices_of_type("leak_sensor") for m in d.monitors):
        problems.append("no leak sensor beside the dishwasher")
    for t in ("water_main", "lock", "doorbell", "thermostat"):
        if not home.devices_of_type(t):
            problems.append(f"no {t}")
    if not any(home.room(c.room).type == "PORCH" for c in home.cameras):
        problems.append("no porch camera")
    for room_type in ("OFFICE", "LIVING_ROOM"):
        plants = [o for o in home.objects if o.semantic_class == "potted_plant"
                  and home.room(o.location.room).type == room_type]
        sensed = {m for d in home.devices_of_type("soil_moisture_sensor") for m in d.monitors}
        if not plants or any(p.id not in sensed for p in plants):
            problems.append(f"no plant with a soil sensor in the {room_type.lower()}")
    if not [d for d in devices_in("light", "LIVING_ROOM") if d.mount in ("on_furniture", "floor")]:
        problems.append("no lamp in the living room")
    for t in ("washer", "dryer"):
        if not devices_in(t, "WASH_AND_DRY_ROOM"):
            problems.append(f"no {t} in the laundry")
    living = by_type.get("LIVING_ROOM")
    windows = {o.id for o in home.openings if o.kind == "window" and o.openable and living in o.connects}
    if not any(d.mounted_on in windows for d in home.devices_of_type("contact_sensor")):
        problems.append("no openable living-room window with a contact sensor")
    return problems
