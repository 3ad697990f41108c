"""Climate: room temperatures under the thermostat, and air quality from smoke (docs/dynamics.md).

The home's thermostat (homeloop/catalog/devices.yaml: ``setpoint``, ``mode`` in
off/heat/cool/auto, ``local_temperature``) serves its indoor rooms: each
follows the setpoint as a first-order lag with time constant
:data:`HEATING_TIME_CONSTANT_S` when the mode drives it that way (heat only
raises, cool only lowers, auto both, off neither). Other spaces keep
:data:`ROOM_TEMPERATURE_C`. The thermostat's ``local_temperature`` reads its
own room, to :data:`READING_DECIMALS` decimals (as the devices module reads it).

Air quality per room is a band of the room's smoke density
(:mod:`homeloop.sim.dynamics.smoke`), named as Matter's Air Quality cluster
names them. Settled, the module sleeps (:class:`~homeloop.sim.world.Rest`)
until a device changes (the thermostat's setpoint or mode).

**Settling without a step per step.** While the rooms settle, the lag is
worked out step by step, as the fixed step does, but the module steps only
at the steps where what others read of it changes: the thermostat's reading
or a room's temperature as the snapshot rounds it (:data:`READING_DECIMALS`),
or the rooms settling. After each step it works the lag out ahead to find
that step and sleeps until it; woken before (a device changed), it first
works out the steps it slept through as they were driven, then the step of
now; read in between (a skill, the snapshot), it works them out up to now.
The rooms' temperatures are the same numbers, bit for bit, as stepping every
step gives. A module that reads the temperatures unrounded during the steps
(the cooking's pans, :data:`UNROUNDED_READERS`) keeps the climate stepping
every step while it has something to read them for.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from homeloop.sim.dynamics.smoke import SMOKE_ALARM_DENSITY, Smoke
from homeloop.sim.world import NOTHING, STEP_S, DeviceState, Rest, World

#: Air temperature of a home before any heating acts, and of the spaces no thermostat
#: serves (°C; the thermostat's catalog default).
ROOM_TEMPERATURE_C = 21.0
#: Time constant of a room's approach to the setpoint (s). Assumption: radiator heating
#: closes 63 % of a step in the setpoint in half an hour.
HEATING_TIME_CONSTANT_S = 1800.0
#: Closer than this to where the thermostat drives it, a room has settled (°C).
SETTLED_C = 0.01
#: Decimals of the thermostat's ``local_temperature`` and of the temperatures in the snapshot: the
#: devices module reads the thermostat to as many (homeloop/sim/devices.py).
READING_DECIMALS = 2
#: Air-quality bands: (upper smoke density, Matter AirQualityEnum name), in order; above the
#: last band the air is "extremely_poor". The alarm density ends the "poor" band.
AIR_QUALITY_BANDS: tuple[tuple[float, str], ...] = (
    (0.0, "good"), (0.05, "fair"), (0.15, "moderate"), (SMOKE_ALARM_DENSITY, "poor"), (0.7, "very_poor"))
#: Within this share of a reading's last digit of the reading, a temperature surely reads the same (the
#: rounding changes half a digit away): the search ahead rounds only the values beyond it.
_SAME_READING = 0.4
#: Modules that read the rooms' temperatures unrounded, each while its ``pans()`` holds any: the
#: climate then steps every step.
UNROUNDED_READERS = ("cooking",)

#: What a settling step changes (the thermostat's reading too), and what wakes a settled climate
#: (:class:`~homeloop.sim.world.Rest`).
CHANGES = frozenset({"climate", "devices"})
READS = frozenset({"devices"})

#: What drives the rooms: the thermostat's setpoint and mode.
Drive = tuple[Any, Any]


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
        self._settled_for: Drive | None = None
        self._stepped = False  # whether the last step moved the temperatures
        self._step = 0  # the world step the temperatures are worked out to
        self._drive: Drive | None = None  # what drove that step
        self._ahead: _Ahead | None = None  # the last search ahead, kept for the step it woke the climate for

    def _set_up(self, world: World) -> None:
        thermostats = world.devices_of_type("thermostat")
        self._thermostat = thermostats[0] if thermostats else None
        start = ROOM_TEMPERATURE_C
        if self._thermostat is not None:
            start = float(self._thermostat.values.get("local_temperature", ROOM_TEMPERATURE_C))
            self._served = [r.id for r in world.home.rooms if r.indoor]
        self._temperature = {r.id: start if r.id in self._served else ROOM_TEMPERATURE_C for r in world.home.rooms}
        self._step = _step_of(world.time) - 1
        self._world = world

    def step(self, world: World, dt: float) -> None:
        self._stepped = False
        if self._world is not world:
            self._set_up(world)
        stat = self._thermostat
        if stat is None:
            return
        now = _step_of(world.time)
        drive = (stat.values["setpoint"], stat.values["mode"])
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead.start == self._step and now == ahead.start + ahead.steps \
                and ahead.drive == self._drive == drive and dt == STEP_S:  # woken as planned: worked out then
            self._move(ahead.levels, ahead.settled, drive)
            self._stepped = True
        else:
            if self._drive is not None and now - 1 > self._step:  # the steps slept through, as they were driven
                self._work_out(now - 1 - self._step, self._drive, dt)
            self._stepped = self._work_out(1, drive, dt) if now > self._step else False
        self._step, self._drive = now, drive
        if self._stepped and stat.room in self._temperature:
            stat.values["local_temperature"] = round(self._temperature[stat.room], READING_DECIMALS)

    def _work_out(self, steps: int, drive: Drive, dt: float) -> bool:
        """Work the lag out over ``steps`` steps under ``drive`` (a step once settled changes nothing);
        whether any moved the temperatures."""
        if self._settled_for == drive:
            return False
        levels = self._levels()
        after, _, settled = _lag(levels, drive, dt, steps, stop_at_reading=False)
        self._move(dict(zip(levels, after)), settled, drive)
        return True

    def _levels(self) -> list[float]:
        """The served rooms' temperatures, each once: rooms at one temperature move as one."""
        served = self._temperature
        return sorted({served[rid] for rid in self._served})

    def _move(self, moved: dict[float, float], settled: bool, drive: Drive) -> None:
        """Each served room from its temperature to where ``moved`` takes it."""
        served = self._temperature
        for rid in self._served:
            served[rid] = moved[served[rid]]
        self._settled_for = drive if settled else None

    def rest(self, world: World) -> Rest:
        """Settled (or no thermostat): asleep until a device changes. Settling: asleep until the step where
        a reading changes or the rooms settle, or the next step while a module reads it unrounded."""
        changed = CHANGES if self._stepped else NOTHING
        if self._thermostat is None or self._settled_for is not None or self._drive is None:
            return Rest(changed, math.inf, READS)
        if _read_unrounded(world):
            return Rest(changed, -math.inf, READS)
        levels = self._levels()
        after, steps, settled = _lag(levels, self._drive, STEP_S, None, stop_at_reading=True)
        self._ahead = _Ahead(self._step, self._drive, steps, dict(zip(levels, after)), settled)
        return Rest(changed, round((self._step + steps) * STEP_S, 6), READS)

    def temperature(self, room_id: str) -> float:
        """Air temperature of a room (°C), worked out to the world's step now."""
        self._catch_up()
        return self._temperature.get(room_id, ROOM_TEMPERATURE_C)

    def _catch_up(self) -> None:
        """Work out the steps slept through up to the world's step now, for a read between the climate's
        own steps (a module that reads during the steps before the climate's turn keeps it stepping)."""
        world = self._world
        if world is None or self._drive is None or self._settled_for is not None or self._ahead is None:
            return  # settled, or stepping every step: worked out already
        now = _step_of(world.time)
        if now > self._step:
            self._work_out(now - self._step, self._drive, STEP_S)
            self._step = now

    def air_quality(self, room_id: str) -> str:
        """Air-quality band of a room from its smoke density ("good" without a smoke module)."""
        world = self._world
        smoke = world.running(Smoke) if world is not None else None
        return air_quality_of(smoke.room_density(room_id) if smoke is not None else 0.0)

    def snapshot(self) -> dict[str, Any]:
        self._catch_up()
        return {"temperature_c": {rid: round(t, READING_DECIMALS) for rid, t in sorted(self._temperature.items())},
                "air_quality": {rid: self.air_quality(rid) for rid in sorted(self._temperature)}}


def _step_of(time: float) -> int:
    """The world step a world time is the end of."""
    return int(round(time / STEP_S))


def _read_unrounded(world: World) -> bool:
    """Whether a module of :data:`UNROUNDED_READERS` has something to read the temperatures for."""
    for module in world.modules:
        pans = getattr(module, "pans", None) if module.name in UNROUNDED_READERS else None
        if callable(pans) and pans():
            return True
    return False


class _Ahead(NamedTuple):
    """A search ahead: from world step ``start`` under ``drive``, the step count to the next change of
    what others read, and the temperatures then (each from its value at ``start``), settled or not."""

    start: int
    drive: Drive
    steps: int
    levels: dict[float, float]
    settled: bool


def _lag(levels: list[float], drive: Drive, dt: float, steps: int | None, *,
         stop_at_reading: bool) -> tuple[list[float], int, bool]:
    """The temperatures ``levels`` after the thermostat drove them for ``steps`` steps of ``dt`` (None:
    until they settle), each step as the fixed step works it out; with ``stop_at_reading``, stopping
    after the first step that changes one of them at :data:`READING_DECIMALS`. Returns the temperatures,
    the steps taken and whether the last one settled the rooms (then the steps after it change nothing)."""
    setpoint, mode = float(drive[0]), drive[1]
    gain = 1.0 - math.exp(-dt / HEATING_TIME_CONSTANT_S)
    read = [round(t, READING_DECIMALS) for t in levels] if stop_at_reading else []
    sure = _SAME_READING * 10.0 ** -READING_DECIMALS  # nearer its reading than this, a value reads the same
    taken = 0
    while steps is None or taken < steps:
        taken += 1
        settled, after = True, []
        for t in levels:
            target = _target(t, setpoint, mode)
            if abs(target - t) < SETTLED_C:
                after.append(target)
                continue
            settled = False
            after.append(t + (target - t) * gain)
        levels = after
        if settled:
            return levels, taken, True
        if stop_at_reading and any(abs(t - r) >= sure and round(t, READING_DECIMALS) != r
                                   for t, r in zip(levels, read)):
            return levels, taken, False
    return levels, taken, False


def _target(temperature: float, setpoint: float, mode: str) -> float:
    """Where the thermostat drives a room now: heating only raises, cooling only lowers."""
    if mode == "auto" or (mode == "heat" and temperature < setpoint) or (mode == "cool" and temperature > setpoint):
        return setpoint
    return temperature
