"""Climate: room temperatures under the thermostat, and air quality from smoke (docs/dynamics.md).

The home's thermostat (homeloop/catalog/devices.yaml: ``setpoint``, ``mode`` in
off/heat/cool/auto, ``local_temperature``) serves its indoor rooms: each
follows the setpoint as a first-order lag with time constant
:data:`HEATING_TIME_CONSTANT_S` when the mode drives it that way (heat only
raises, cool only lowers, auto both, off neither). Other spaces keep
:data:`ROOM_TEMPERATURE_C`. The thermostat's ``local_temperature`` reads its
own room, to a tenth of a degree.

Air quality per room is a band of the room's smoke density
(:mod:`homeloop.sim.dynamics.smoke`), named as Matter's Air Quality cluster
names them. Settled, the module sleeps (:class:`~homeloop.sim.world.Rest`)
until a device changes (the thermostat's setpoint or mode).
"""

from __future__ import annotations

import math
from typing import Any

from homeloop.sim.dynamics.smoke import SMOKE_ALARM_DENSITY, Smoke
from homeloop.sim.world import NOTHING, DeviceState, Rest, World

#: Air temperature of a home before any heating acts, and of the spaces no thermostat
#: serves (°C; the thermostat's catalog default).
ROOM_TEMPERATURE_C = 21.0
#: Time constant of a room's approach to the setpoint (s). Assumption: radiator heating
#: closes 63 % of a step in the setpoint in half an hour.
HEATING_TIME_CONSTANT_S = 1800.0
#: Closer than this to where the thermostat drives it, a room has settled (°C).
SETTLED_C = 0.01
#: Air-quality bands: (upper smoke density, Matter AirQualityEnum name), in order; above the
#: last band the air is "extremely_poor". The alarm density ends the "poor" band.
AIR_QUALITY_BANDS: tuple[tuple[float, str], ...] = (
    (0.0, "good"), (0.05, "fair"), (0.15, "moderate"), (SMOKE_ALARM_DENSITY, "poor"), (0.7, "very_poor"))

#: What a settling step changes (the thermostat's reading too), and what wakes a settled climate
#: (:class:`~homeloop.sim.world.Rest`).
CHANGES = frozenset({"climate", "devices"})
READS = frozenset({"devices"})


def air_quality_of(density: float) -> str:
    """The air-quality band of a smoke density."""
    for upper, band in AIR_QUALITY_BANDS:
        if density <= upper:
            return band
    return "extremely_poor"


class Climate:
    """Room temperatures and air quality (see the module docstring)."""

    name = "climate"

    def __init__(self) -> None:
        self._world: World | None = None
        self._thermostat: DeviceState | None = None
        self._served: list[str] = []
        self._temperature: dict[str, float] = {}
        self._settled_for: tuple[float, str] | None = None
        self._stepped = False  # whether the last step moved the temperatures

    def _set_up(self, world: World) -> None:
        thermostats = world.devices_of_type("thermostat")
        self._thermostat = thermostats[0] if thermostats else None
        start = ROOM_TEMPERATURE_C
        if self._thermostat is not None:
            start = float(self._thermostat.values.get("local_temperature", ROOM_TEMPERATURE_C))
            self._served = [r.id for r in world.home.rooms if r.indoor]
        self._temperature = {r.id: start if r.id in self._served else ROOM_TEMPERATURE_C for r in world.home.rooms}
        self._world = world

    def step(self, world: World, dt: float) -> None:
        self._stepped = False
        if self._world is not world:
            self._set_up(world)
        stat = self._thermostat
        if stat is None:
            return
        setpoint, mode = stat.values["setpoint"], stat.values["mode"]
        if self._settled_for == (setpoint, mode):
            return
        self._stepped = True
        gain = 1.0 - math.exp(-dt / HEATING_TIME_CONSTANT_S)
        settled = True
        for rid in self._served:
            t = self._temperature[rid]
            target = _target(t, float(setpoint), mode)
            if abs(target - t) < SETTLED_C:
                self._temperature[rid] = target
                continue
            settled = False
            self._temperature[rid] = t + (target - t) * gain
        self._settled_for = (setpoint, mode) if settled else None
        if stat.room in self._temperature:
            stat.values["local_temperature"] = round(self._temperature[stat.room], 1)

    def rest(self, world: World) -> Rest:
        """Settling: the next step. Settled (or no thermostat): asleep until a device changes."""
        settled = self._thermostat is None or self._settled_for is not None
        return Rest(CHANGES if self._stepped else NOTHING, math.inf if settled else -math.inf, READS)

    def temperature(self, room_id: str) -> float:
        """Air temperature of a room (°C)."""
        return self._temperature.get(room_id, ROOM_TEMPERATURE_C)

    def air_quality(self, room_id: str) -> str:
        """Air-quality band of a room from its smoke density ("good" without a smoke module)."""
        world = self._world
        smoke = world.running(Smoke) if world is not None else None
        return air_quality_of(smoke.room_density(room_id) if smoke is not None else 0.0)

    def snapshot(self) -> dict[str, Any]:
        return {"temperature_c": {rid: round(t, 2) for rid, t in sorted(self._temperature.items())},
                "air_quality": {rid: self.air_quality(rid) for rid in sorted(self._temperature)}}


def _target(temperature: float, setpoint: float, mode: str) -> float:
    """Where the thermostat drives a room now: heating only raises, cooling only lowers."""
    if mode == "auto" or (mode == "heat" and temperature < setpoint) or (mode == "cool" and temperature > setpoint):
        return setpoint
    return temperature
