"""Light: the illuminance of each room (docs/dynamics.md).

A room's illuminance (lux) is the sum of

- **daylight**: the outdoor illuminance of the scenario clock
  (:meth:`World.clock_of_day`), a half sine between :data:`SUNRISE_S` and
  :data:`SUNSET_S` peaking at :data:`DAYLIGHT_PEAK_LUX`, times the room's
  average daylight factor, :data:`DAYLIGHT_FACTOR_PER_GLAZING` times the
  share of floor area that is glazing still uncovered. Each window to the
  outside counts its width × height, less what its roller blinds and
  curtains cover (their ``position`` field, % closed; homeloop/catalog/devices.yaml).
  Outdoor spaces get the outdoor illuminance itself.
- **lights that are on**: a light device in the room whose ``on`` field is
  set, or that a light switch bound to it (``controls``) has on, at its
  ``brightness`` (%), gives its fitting's lumens (:data:`LUMENS_BY_MOUNT`)
  times :data:`UTILISATION_FACTOR` over the floor area. A lamp on a piece of
  furniture a smart plug switches needs the plug on as well.
- **fire**: a burning pan in the room adds :data:`FIRE_LUMENS` the same way.

:meth:`Light.source_lux` gives each of these sources' part on its own: the
renderer spreads a room's light over its sources by it
(:mod:`homeloop.sim.render.lighting`).

A room is lit (:meth:`Light.lit`) at :data:`BRIGHTNESS_FLOOR_LUX` or more:
perception detects nothing in a room below it, so a person lying in a dark
room is not seen (docs/skills.md).

Everything is read from the world when asked, so the step costs nothing and
the module sleeps after it (:class:`~homeloop.sim.world.Rest`); the geometry
(glazing, floor areas, which devices light which room) is gathered once at set-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, cast

from homeloop.core.home import Home, polygon_from_rings
from homeloop.sim.world import Rest, World

#: Sunrise and sunset on the scenario clock (s after midnight): an equinox day.
SUNRISE_S = 6.5 * 3600.0
SUNSET_S = 18.5 * 3600.0
#: Outdoor illuminance at noon (lux): diffuse daylight under a bright overcast sky.
DAYLIGHT_PEAK_LUX = 10000.0
#: Average daylight factor per unit of glazing-to-floor ratio. The average daylight
#: factor DF = T A_w theta / (A (1 - R^2)) (BRE) gives 2-3 % for a room glazed over a
#: tenth of its floor, so DF ~ 0.2 x glazing / floor.
DAYLIGHT_FACTOR_PER_GLAZING = 0.2
#: Luminous flux of a light fitting at full brightness by how it is mounted (lm):
#: a ceiling fitting of about 15 W LED, a wall light or lamp of about 8 W LED.
LUMENS_BY_MOUNT: dict[str, float] = {"ceiling": 1600.0, "wall": 800.0, "on_furniture": 800.0}
#: Flux of a fitting whose mount the table does not name (lm).
DEFAULT_LUMENS = 800.0
#: Share of a fitting's flux reaching the working plane in a small room (utilisation factor).
UTILISATION_FACTOR = 0.5
#: Luminous flux of a pan of burning oil (lm; assumption: a 25 cm flame of a few kW).
FIRE_LUMENS = 4000.0
#: Least illuminance at which perception sees (lux): a dim night light is below it, one
#: ceiling fitting on in a 30 m² room is above it.
BRIGHTNESS_FLOOR_LUX = 20.0

_COVERINGS = ("roller_blind", "curtain")

#: The light's rest after any step: it changes nothing and answers to nothing.
ASLEEP = Rest()


@dataclass(frozen=True)
class _Window:
    area: float
    coverings: tuple[str, ...]  # roller blind and curtain device ids
    opening: str = ""


@dataclass(frozen=True)
class _Fitting:
    device: str
    lumens: float
    switches: tuple[str, ...]  # light switches bound to it
    plugs: tuple[str, ...]  # smart plugs switching the furniture it stands on


@dataclass(frozen=True)
class _Room:
    outdoor: bool
    floor_area: float
    windows: tuple[_Window, ...]
    fittings: tuple[_Fitting, ...]


def outdoor_lux(clock_s: float) -> float:
    """Outdoor illuminance at a time of day (s after midnight)."""
    if not SUNRISE_S < clock_s < SUNSET_S:
        return 0.0
    return DAYLIGHT_PEAK_LUX * math.sin(math.pi * (clock_s - SUNRISE_S) / (SUNSET_S - SUNRISE_S))


class Light:
    """Illuminance per room (see the module docstring)."""

    name = "light"

    def __init__(self) -> None:
        self._world: World | None = None
        self._rooms: dict[str, _Room] = {}

    def _set_up(self, world: World) -> None:
        self._rooms = _rooms(world.home)
        self._world = world

    def step(self, world: World, dt: float) -> None:
        if self._world is not world:
            self._set_up(world)

    def rest(self, world: World) -> Rest:
        """Always asleep: the illuminance is read when asked."""
        return ASLEEP

    def lux(self, room_id: str) -> float:
        """Illuminance of a room now (lux)."""
        world = self._bound()
        room = self._rooms[room_id]
        daylight = outdoor_lux(world.clock_of_day())
        if room.outdoor:
            total = daylight
        else:
            glazing = sum(w.area * _uncovered(world, w) for w in room.windows)
            total = daylight * DAYLIGHT_FACTOR_PER_GLAZING * glazing / room.floor_area
        lumens = sum(f.lumens * _output(world, f) for f in room.fittings)
        lumens += FIRE_LUMENS * sum(1 for fire_room, _, _ in _fires(world) if fire_room == room_id)
        return total + lumens * UTILISATION_FACTOR / room.floor_area

    def source_lux(self, room_id: str, kind: str, ident: str = "") -> float:
        """Illuminance one source gives a room now (lux), by the rules :meth:`lux` adds up: a
        ``fitting`` (``ident``: the light device) its flux at its present output, a ``window``
        (the opening) the daylight through its uncovered glazing, a ``fire`` (one burning pan in
        the room) its flux, each over the floor area; the ``sky`` the outdoor illuminance over an
        outdoor room. 0 for a source that does not light the room (a fitting of another room, a
        window it does not count)."""
        world = self._bound()
        room = self._rooms[room_id]
        if kind == "fitting":
            fitting = next((f for f in room.fittings if f.device == ident), None)
            return 0.0 if fitting is None else fitting.lumens * _output(world, fitting) * UTILISATION_FACTOR / \
                room.floor_area
        if kind == "window":
            window = next((w for w in room.windows if w.opening == ident), None)
            if window is None or room.outdoor:
                return 0.0
            glazing = window.area * _uncovered(world, window)
            return outdoor_lux(world.clock_of_day()) * DAYLIGHT_FACTOR_PER_GLAZING * glazing / room.floor_area
        if kind == "fire":
            return FIRE_LUMENS * UTILISATION_FACTOR / room.floor_area
        if kind == "sky":
            return outdoor_lux(world.clock_of_day()) if room.outdoor else 0.0
        raise ValueError(f"light: no source kind {kind!r} (fitting, window, fire or sky)")

    def lit(self, room_id: str) -> bool:
        """Whether a room is bright enough for perception (:data:`BRIGHTNESS_FLOOR_LUX`)."""
        return self.lux(room_id) >= BRIGHTNESS_FLOOR_LUX

    def lit_outside(self) -> bool:
        """Whether the open air beyond the plan (a doorstep no room of the plan covers) is bright
        enough for perception: daylight alone lights it."""
        return outdoor_lux(self._bound().clock_of_day()) >= BRIGHTNESS_FLOOR_LUX

    def _bound(self) -> World:
        if self._world is None:
            raise RuntimeError("light: read before the world's first step")
        return self._world

    def snapshot(self) -> dict[str, Any]:
        if self._world is None:
            return {"lux": {}}
        return {"lux": {rid: round(self.lux(rid), 2) for rid in sorted(self._rooms)}}


# --- reading the world ------------------------------------------------------------------------------


def _uncovered(world: World, window: _Window) -> float:
    share = 1.0
    for device in window.coverings:
        share *= 1.0 - float(world.devices[device].values["position"]) / 100.0
    return share


def _output(world: World, fitting: _Fitting) -> float:
    """Share of its full flux a fitting gives now."""
    values = world.devices[fitting.device].values
    on = bool(values["on"]) or any(world.devices[s].values["on"] for s in fitting.switches)
    powered = all(world.devices[p].values["on"] for p in fitting.plugs)
    return float(values.get("brightness", 100)) / 100.0 if on and powered else 0.0


class _FireSource(Protocol):
    """What the light reads of the cooking module; named by shape, since this module is imported
    for its constants by stages that must not reach the rest of the simulator."""

    def fires(self) -> list[tuple[str | None, float, float]]: ...


def _fires(world: World) -> list[tuple[str | None, float, float]]:
    """The cooking module's fires, where it offers them as a :class:`_FireSource` does (looked up by
    attribute: a protocol's isinstance check costs more, and :meth:`Light.lux` runs per room shown)."""
    for module in world.modules:
        if module.name == "cooking":
            fires = getattr(module, "fires", None)
            if callable(fires):
                return cast(_FireSource, module).fires()
    return []


# --- set-up -----------------------------------------------------------------------------------------


def _rooms(home: Home) -> dict[str, _Room]:
    outdoor = {r.id for r in home.rooms if r.outdoor}
    coverings: dict[str, list[str]] = {}
    for d in home.devices:
        if d.type in _COVERINGS:
            for window in {d.mounted_on, *d.controls}:
                if window is not None:
                    coverings.setdefault(window, []).append(d.id)
    windows: dict[str, list[_Window]] = {r.id: [] for r in home.rooms}
    for o in home.openings:
        inside = [rid for rid in o.connects if rid not in outdoor]
        if o.kind == "window" and len(inside) == 1 and (o.exterior or len(o.connects) == 2):
            windows[inside[0]].append(_Window(o.width * o.height, tuple(sorted(coverings.get(o.id, []))), o.id))
    fittings = _fittings(home)
    return {r.id: _Room(r.id in outdoor, polygon_from_rings(r.polygon).area, tuple(windows[r.id]),
                        tuple(fittings.get(r.id, []))) for r in home.rooms}


def _fittings(home: Home) -> dict[str, list[_Fitting]]:
    switches: dict[str, list[str]] = {}
    plugs: dict[str, list[str]] = {}
    for d in home.devices:
        for target in d.controls:
            if d.type == "light_switch":
                switches.setdefault(target, []).append(d.id)
            elif d.type == "plug":
                plugs.setdefault(target, []).append(d.id)
    out: dict[str, list[_Fitting]] = {}
    for d in home.devices:
        if d.type == "light" and d.room is not None:
            lumens = LUMENS_BY_MOUNT.get(d.mount, DEFAULT_LUMENS)
            out.setdefault(d.room, []).append(_Fitting(
                d.id, lumens, tuple(sorted(switches.get(d.id, []))), tuple(sorted(plugs.get(d.mounted_on or "", [])))))
    return out
