"""Humidity: each indoor room's relative humidity, driven additively (docs/dynamics.md, "Humidity").

Every :data:`TICK_S` of world time each indoor room's relative humidity
(percent) moves by what acts on it, in this order:

1. **air exchange** toward the outdoor humidity :data:`OUTDOOR_PERCENT`: the
   infiltration every room has (:data:`INFILTRATION_PER_S`), plus each open
   exterior window, :data:`WINDOW_EXCHANGE_M_S` per metre of its width over
   the room's floor area (doubled, :data:`FAN_EXCHANGE_FACTOR`, while a fan in
   the room runs); exact exponential decay, so it never overshoots;
2. **moisture sources**, in grams of water a second over the room's air
   (floor area × ceiling height × :data:`SATURATION_G_PER_M3`, the grams one
   cubic metre holds saturated at room temperature): each person in the room
   (:data:`PERSON_G_PER_S`), water on its floor (:data:`EVAPORATION_G_PER_S_M2`
   per wetted square metre), a pan hotter than boiling on a burner there
   (:data:`STEAM_G_PER_S`);
3. **devices** where the home has them (``humidifier``, ``dehumidifier``:
   :data:`DEVICE_G_PER_S`, while on, only toward their ``target_humidity``
   and never past it).

The result is held between 0 and 100. Rooms start at :data:`START_PERCENT`.
Nothing is random, and the module acts only at whole ticks whenever it is
woken, so its trace is the same with sleeping modules or without
(:data:`homeloop.sim.world.SLEEPING`). A world runs it after the climate in a
home with a device of :data:`HUMIDITY_DEVICE_TYPES` (:mod:`homeloop.sim.step_order`),
and only there. Each tick changes :data:`CHANGES`, what the humidifier's and
dehumidifier's ``humidity_percent`` readings come from (:mod:`homeloop.sim.devices`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from homeloop.core.home import polygon_from_rings
from homeloop.sim.dynamics.air_devices import running
from homeloop.sim.dynamics.cooking import Cooking
from homeloop.sim.dynamics.water import Water
from homeloop.sim.world import NOTHING, DeviceState, Rest, World

#: Device types that read or drive a room's humidity: the optional air devices (homeloop/catalog/air_devices.yaml,
#: ``homeloop build --air-devices``; docs/dynamics.md). A fan only speeds an open window's exchange; an air
#: purifier does not touch the humidity.
HUMIDITY_DEVICE_TYPES = ("humidifier", "dehumidifier", "fan", "air_purifier")
#: What a tick changes: the aspect the humidity readings come from (homeloop.sim.devices).
CHANGES = frozenset({"humidity"})
#: How often the humidity moves (s of world time): it changes over many minutes, not seconds.
TICK_S = 10.0
#: Relative humidity of the rooms at the start, and of the air outdoors (%). Assumptions: a
#: comfortable home (ASHRAE 55 recommends 30-60 %) and a mild, damp day.
START_PERCENT = 45.0
OUTDOOR_PERCENT = 70.0
#: Air changes a second through a closed home's leaks: half an air change an hour (a typical home).
INFILTRATION_PER_S = 0.5 / 3600.0
#: Exchange through an open window (m/s per metre of its width, over the room's floor area), as the
#: smoke's exchange through openings (docs/dynamics.md, "Smoke"); a running fan doubles it.
WINDOW_EXCHANGE_M_S = 0.1
FAN_EXCHANGE_FACTOR = 2.0
#: Water vapour a cubic metre of air holds saturated at 21 °C (g/m³).
SATURATION_G_PER_M3 = 18.3
#: Moisture a person at rest gives off, breath and skin (g/s: about 45 g an hour).
PERSON_G_PER_S = 45.0 / 3600.0
#: Evaporation from water on the floor (g/s per wetted m²: about 100 g an hour per m²).
EVAPORATION_G_PER_S_M2 = 100.0 / 3600.0
#: Steam from a pan above boiling (g/s: about 500 g an hour), and the boiling point (°C).
STEAM_G_PER_S = 500.0 / 3600.0
BOILING_C = 100.0
#: What a humidifier adds, or a dehumidifier takes, while on (g/s: 300 g an hour, a room unit).
DEVICE_G_PER_S = 300.0 / 3600.0


@dataclass(frozen=True)
class RoomAir:
    """What acts on one room's humidity in a tick (see the module docstring)."""

    air_g_per_percent: float  # grams of vapour that move the room's humidity by one percent
    exchange_per_s: float  # air changes a second toward the outdoors
    moisture_g_per_s: float = 0.0  # people, water on the floor, steam
    device_g_per_s: float = 0.0  # > 0 a humidifier, < 0 a dehumidifier, on
    device_target: float | None = None  # the target humidity the device stops at


def next_humidity(percent: float, air: RoomAir, dt: float, outdoor: float = OUTDOOR_PERCENT) -> float:
    """A room's humidity after ``dt`` seconds of what acts on it (exchange, sources, devices; see the
    module docstring), held between 0 and 100."""
    h = outdoor + (percent - outdoor) * math.exp(-air.exchange_per_s * dt)
    h += air.moisture_g_per_s * dt / air.air_g_per_percent
    if air.device_g_per_s and air.device_target is not None:
        step = air.device_g_per_s * dt / air.air_g_per_percent
        h = min(h + step, max(h, air.device_target)) if step > 0 else max(h + step, min(h, air.device_target))
    return min(max(h, 0.0), 100.0)


class Humidity:
    """Each indoor room's relative humidity (see the module docstring)."""

    name = "humidity"

    def __init__(self) -> None:
        self._world: World | None = None
        self.percent: dict[str, float] = {}
        self._air: dict[str, float] = {}  # grams per percent, by room
        self._area: dict[str, float] = {}
        self._windows: list[tuple[str, str, float]] = []  # (opening, room, width) of exterior windows
        self._fans: list[DeviceState] = []
        self._units: dict[str, DeviceState] = {}  # the humidifier or dehumidifier of a room, the first
        self._next = 0.0
        self._ticked = False  # whether the last step moved the rooms' humidity

    def _set_up(self, world: World) -> None:
        self._world = world
        for room in world.home.rooms:
            if not room.indoor:
                continue
            area = max(polygon_from_rings(room.polygon).area, 1.0)
            self._area[room.id] = area
            self._air[room.id] = area * room.ceiling_height * SATURATION_G_PER_M3 / 100.0
            self.percent[room.id] = START_PERCENT
        self._windows = [(o.id, r, o.width) for o in world.home.openings
                         if o.kind == "window" and o.exterior for r in o.connects if r in self._air]
        self._fans = [d for d in world.devices.values() if d.type == "fan" and d.room in self._air]
        for d in world.devices.values():
            if d.type in ("humidifier", "dehumidifier") and d.room in self._air:
                self._units.setdefault(d.room, d)
        self._next = math.floor(world.time / TICK_S) * TICK_S + TICK_S

    def step(self, world: World, dt: float) -> None:
        if self._world is not world:
            self._set_up(world)
        self._ticked = world.time >= self._next - 1e-6
        if not self._ticked:
            return
        for room, air in self.air(world).items():
            self.percent[room] = next_humidity(self.percent[room], air, TICK_S)
        self._next = round(self._next + TICK_S, 6)

    def air(self, world: World) -> dict[str, RoomAir]:
        """What acts on each indoor room's humidity now."""
        exchange = {room: INFILTRATION_PER_S for room in self._air}
        blowing = {d.room for d in self._fans if running(d.values)}
        for opening, room, width in self._windows:
            if world.openings[opening].open:
                factor = FAN_EXCHANGE_FACTOR if room in blowing else 1.0
                exchange[room] += WINDOW_EXCHANGE_M_S * width / self._area[room] * factor
        moisture = {room: 0.0 for room in self._air}
        for person in world.people.values():
            if person.room in moisture:
                moisture[person.room] += PERSON_G_PER_S
        water, cooking = world.running(Water), world.running(Cooking)
        for source in water.sources() if water is not None else []:
            if source.room in moisture:
                moisture[source.room] += EVAPORATION_G_PER_S_M2 * source.wetted_area_m2
        for pan in cooking.pans() if cooking is not None else []:
            kitchen = world.devices[pan.stove].room if pan.stove in world.devices else None
            if kitchen is not None and kitchen in moisture and pan.temperature > BOILING_C:
                moisture[kitchen] += STEAM_G_PER_S
        out: dict[str, RoomAir] = {}
        for room, grams in self._air.items():
            rate, target = _device(self._units.get(room))
            out[room] = RoomAir(grams, exchange[room], moisture[room], rate, target)
        return out

    def rest(self, world: World) -> Rest:
        """Asleep until the next tick; it reads the world only then. A tick changes the humidity the
        devices read (:data:`CHANGES`)."""
        return Rest(CHANGES if self._ticked else NOTHING, self._next, NOTHING)

    def room_percent(self, room_id: str) -> float | None:
        """A room's relative humidity (%), None for a room it does not follow (outdoors)."""
        return self.percent.get(room_id)

    def snapshot(self) -> dict[str, Any]:
        return {"humidity_percent": {room: round(h, 2) for room, h in sorted(self.percent.items())}}


def _device(state: DeviceState | None) -> tuple[float, float | None]:
    """The grams a second a humidifier (+) or dehumidifier (-) adds while on, and its target."""
    if state is None or not running(state.values):
        return 0.0, None
    sign = 1.0 if state.type == "humidifier" else -1.0
    target = state.values.get("target_humidity")
    return sign * DEVICE_G_PER_S, float(target) if target is not None else None


