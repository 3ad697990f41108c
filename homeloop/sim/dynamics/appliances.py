"""Appliances: washer and dryer cycles and their doors (docs/dynamics.md).

:meth:`Appliances.start_cycle` sets a washer's or dryer's ``cycle_state`` to
"running" with ``remaining_s`` to go (homeloop/catalog/devices.yaml); the step counts
it down while the door is shut (opening the door pauses a cycle, as real
machines do) and sets "finished" at 0. A cycle a scenario starts by writing
the fields itself runs the same way. The devices module reports
``cycle_finished`` when it sees the change; this module emits nothing.

The ``door_open`` field and the door part of the appliance's furniture (the
part that opens its drum) are kept in step: when the robot opens or closes
the part the field follows, and when the field is written the part follows.
With no cycle counting down the module sleeps (:class:`~homeloop.sim.world.Rest`)
until a device or a furniture part changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from homeloop.core.home import Home
from homeloop.sim.world import NOTHING, DeviceState, Rest, World

#: Device types whose cycles run here (homeloop/catalog/devices.yaml, appliances).
CYCLE_DEVICE_TYPES = ("washer", "dryer")
#: A part further than this from its closed state is open (rad or m).
PART_OPEN_TOLERANCE = 1e-6

#: What a step changes, and what wakes the module asleep (:class:`~homeloop.sim.world.Rest`).
CHANGES = frozenset({"devices", "parts", "appliances"})
READS = frozenset({"devices", "parts"})


@dataclass
class _Appliance:
    device: DeviceState
    part: tuple[str, str] | None  # (furniture id, part name) of its door
    closed: float = 0.0
    opened: float = 0.0
    remaining: float = 0.0  # s, unrounded
    last_part_open: bool = False
    last_field_open: bool = False


class Appliances:
    """Washer and dryer cycles (see the module docstring)."""

    name = "appliances"

    def __init__(self) -> None:
        self._world: World | None = None
        self._appliances: dict[str, _Appliance] = {}
        self._changed = False  # whether the last step changed a field or a part
        self._counting = False  # whether a cycle counted down in the last step

    def _set_up(self, world: World) -> None:
        self._appliances = {}
        for d in world.devices.values():
            if d.type in CYCLE_DEVICE_TYPES:
                self._appliances[d.id] = _appliance(world.home, d)
        for app in self._appliances.values():
            app.last_field_open = bool(app.device.values.get("door_open", False))
            app.last_part_open = self._part_open(world, app)
        self._world = world

    def start_cycle(self, world: World, device_id: str, seconds: float) -> None:
        """Start a cycle of ``seconds`` on the washer or dryer ``device_id``."""
        if self._world is not world:
            self._set_up(world)
        app = self._appliances.get(device_id)
        if app is None:
            raise KeyError(f"appliances: {device_id!r} is not a washer or dryer; these are: "
                           f"{', '.join(sorted(self._appliances)) or 'none'}")
        if seconds <= 0:
            raise ValueError(f"appliances: a cycle of {seconds} s on {device_id!r}: seconds must be positive")
        app.remaining = float(seconds)
        app.device.values["cycle_state"] = "running"
        app.device.values["remaining_s"] = math.ceil(app.remaining)

    # --- stepping ---------------------------------------------------------------------------------

    def step(self, world: World, dt: float) -> None:
        if self._world is not world:
            self._set_up(world)
        self._changed, self._counting = False, False
        for app in self._appliances.values():
            door_open = self._sync_door(world, app)
            values = app.device.values
            if values["cycle_state"] != "running" or door_open:
                continue
            self._changed = self._counting = True
            if app.remaining <= 0.0:  # started by writing the fields
                app.remaining = float(values["remaining_s"])
            app.remaining = max(app.remaining - dt, 0.0)
            values["remaining_s"] = math.ceil(app.remaining - 1e-9)
            if values["remaining_s"] == 0:
                app.remaining = 0.0
                values["cycle_state"] = "finished"

    def rest(self, world: World) -> Rest:
        """A cycle counting down: the next step. Else asleep until a device or a part changes."""
        counting = self._counting and any(a.device.values["cycle_state"] == "running" for a in self._appliances.values())
        return Rest(CHANGES if self._changed else NOTHING, -math.inf if counting else math.inf, READS)

    def _sync_door(self, world: World, app: _Appliance) -> bool:
        """Bring the door field and the door part into agreement; whichever changed wins."""
        values = app.device.values
        field_open = bool(values.get("door_open", False))
        part_open = self._part_open(world, app)
        if part_open != app.last_part_open or field_open != app.last_field_open:
            self._changed = True
        if part_open != app.last_part_open:
            field_open = part_open
            if "door_open" in values:
                values["door_open"] = part_open
        elif field_open != app.last_field_open and app.part is not None:
            world.parts[app.part] = app.opened if field_open else app.closed
            part_open = field_open
        app.last_part_open, app.last_field_open = part_open, field_open
        return field_open

    def _part_open(self, world: World, app: _Appliance) -> bool:
        if app.part is None:
            return bool(app.device.values.get("door_open", False))
        return abs(world.parts[app.part] - app.closed) > PART_OPEN_TOLERANCE

    def snapshot(self) -> dict[str, Any]:
        return {"appliances": {i: {"cycle_state": a.device.values["cycle_state"], "remaining_s": round(a.remaining, 1),
                                   "door_open": bool(a.device.values.get("door_open", False))}
                               for i, a in sorted(self._appliances.items())}}


def _appliance(home: Home, device: DeviceState) -> _Appliance:
    """The appliance's door: the part of its furniture that opens a container (or one named door)."""
    spec = next((d for d in home.devices if d.id == device.id), None)
    hosts = [spec.mounted_on, *spec.controls] if spec is not None else []
    for furniture in home.furniture:
        if furniture.id in hosts:
            door = next((p for p in furniture.parts if p.opens), None) or next(
                (p for p in furniture.parts if p.name == "door"), None)
            if door is not None:
                return _Appliance(device, (furniture.id, door.name), closed=door.range[0], opened=door.range[1])
    return _Appliance(device, None)
