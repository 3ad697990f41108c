"""Water: a burst hose and tipped containers wetting the floor (docs/dynamics.md).

- A **leak** (:meth:`Water.add_leak`) is a burst supply hose: it runs
  :data:`LEAK_RATE_L_PER_MIN` while the water main's ``state`` field is
  "open" and stops while it is "closed".
- A **spill** (:meth:`Water.add_spill`) is a tipped container: a fixed volume
  on the floor at once.

The water of each source spreads as a film :data:`FILM_THICKNESS_M` thick,
so its wetted area is volume / thickness, limited by the floor of its room
(thresholds keep it there). The wet patch is the disc around the source
whose part inside the room has that area: at set-up the clipped area is
tabulated against the radius (:data:`RADIUS_SAMPLES` radii), and each step
the radius is read back from the table, with no geometry in the step.
:meth:`Water.wet_at` says whether a floor point is under water; the leak
sensor reads it each step, so it trips the step the water reaches it.

Milestones: "leak_started" when a leak first runs, "spill" when a container
tips, and "litres_60" when the total first reaches :data:`CONTAINED_LIMIT_L`
(the most spill_contained allows, docs/tasks.md).

With no leak running the module sleeps (:class:`~homeloop.sim.world.Rest`)
until a device changes (a water main opened).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from shapely import Polygon

from homeloop.core.geometry import ShapeMemo
from homeloop.sim.world import NOTHING, Rest, World

#: Flow of a burst supply hose while the main is open (L/min): docs/dynamics.md.
LEAK_RATE_L_PER_MIN = 40.0
#: Depth of the water film spreading on a smooth floor (m). Assumption: spilt water on
#: tiles or sealed wood settles to a film of a few millimetres; 1 L wets a third of a m².
FILM_THICKNESS_M = 0.003
#: The most water a leak may spill and count as contained (L): docs/tasks.md, spill_contained.
CONTAINED_LIMIT_L = 60.0
#: Radii at which the wetted area inside the room is tabulated, from 0 to the farthest corner.
RADIUS_SAMPLES = 128

_LEAK_RATE_L_PER_S = LEAK_RATE_L_PER_MIN / 60.0

#: What a step of a running leak changes, and what wakes a dry one (:class:`~homeloop.sim.world.Rest`).
CHANGES = frozenset({"water", "events"})
READS = frozenset({"devices"})


@dataclass
class WaterSource:
    """A leak or a spill and the water it has put on the floor."""

    name: str
    kind: str  # "leak" | "spill"
    room: str
    x: float
    y: float
    valve: str | None = None
    litres: float = 0.0
    started_at: float | None = None
    radius: float = 0.0
    _radii: tuple[float, ...] = field(default=(), repr=False)
    _areas: tuple[float, ...] = field(default=(), repr=False)

    @property
    def wetted_area_m2(self) -> float:
        return min(self.litres / 1000.0 / FILM_THICKNESS_M, self._areas[-1])

    def spread(self) -> None:
        """The wet disc's radius for the present volume (from the set-up table)."""
        area = self.wetted_area_m2
        k = bisect.bisect_left(self._areas, area)
        if k == 0:
            self.radius = 0.0 if area <= 0.0 else self._radii[0]
        elif k >= len(self._areas):
            self.radius = math.inf
        else:
            a0, a1, r0, r1 = self._areas[k - 1], self._areas[k], self._radii[k - 1], self._radii[k]
            self.radius = r1 if a1 <= a0 else r0 + (r1 - r0) * (area - a0) / (a1 - a0)
        if area >= self._areas[-1]:
            self.radius = math.inf  # the whole floor of the room

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "room": self.room, "x": self.x, "y": self.y, "valve": self.valve,
                "litres": round(self.litres, 3), "wetted_area_m2": round(self.wetted_area_m2, 3),
                "started_at": self.started_at}


class Water:
    """Leaks and spills (see the module docstring)."""

    name = "water"

    def __init__(self) -> None:
        self._sources: dict[str, WaterSource] = {}
        self._leaks: list[tuple[WaterSource, str]] = []  # each leak and the water main feeding it
        self._total_noted = False
        self._ran = False  # whether a leak ran in the last step

    def add_leak(self, world: World, name: str, room: str, x: float, y: float, valve_device: str) -> WaterSource:
        """A burst hose at (x, y) in ``room``, fed through the water main ``valve_device``."""
        valve = world.devices.get(valve_device)
        if valve is None or "state" not in valve.values:
            raise KeyError(f"water: no water main {valve_device!r} with a state field")
        source = self._add(world, WaterSource(name, "leak", room, x, y, valve=valve_device))
        self._leaks.append((source, valve_device))
        if valve.values["state"] == "open":
            self._start(world, source)
        return source

    def add_spill(self, world: World, name: str, room: str, x: float, y: float, litres: float) -> WaterSource:
        """``litres`` of water tipped onto the floor at (x, y) in ``room`` now."""
        if litres < 0:
            raise ValueError(f"water: spill {name!r} of {litres} L: litres must not be negative")
        source = self._add(world, WaterSource(name, "spill", room, x, y, litres=float(litres),
                                              started_at=world.time))
        source.spread()
        world.note("spill", name, litres=float(litres))
        self._note_total(world)
        return source

    def _add(self, world: World, source: WaterSource) -> WaterSource:
        if source.name in self._sources:
            raise ValueError(f"water: a source named {source.name!r} exists already")
        source._radii, source._areas = _area_table(world, source.room, source.x, source.y)
        self._sources[source.name] = source
        return source

    # --- stepping ---------------------------------------------------------------------------------

    def step(self, world: World, dt: float) -> None:
        self._ran = False
        for leak, valve in self._leaks:
            if world.devices[valve].values["state"] != "open":
                continue
            self._ran = True
            if leak.started_at is None:
                self._start(world, leak)
            leak.litres += _LEAK_RATE_L_PER_S * dt
            leak.spread()
            self._note_total(world)

    def rest(self, world: World) -> Rest:
        """A leak running: the next step. Else asleep until a device changes (its water main)."""
        running = any(world.devices[valve].values["state"] == "open" for _, valve in self._leaks)
        return Rest(CHANGES if self._ran else NOTHING, -math.inf if running else math.inf, READS)

    def _start(self, world: World, leak: WaterSource) -> None:
        leak.started_at = world.time
        world.note("leak_started", leak.name, room=leak.room)

    def _note_total(self, world: World) -> None:
        if not self._total_noted and self.total_litres() >= CONTAINED_LIMIT_L - 1e-9:
            self._total_noted = True
            world.note(f"litres_{CONTAINED_LIMIT_L:g}", "water", litres=round(self.total_litres(), 3))

    # --- reading ----------------------------------------------------------------------------------

    def source(self, name: str) -> WaterSource:
        return self._sources[name]

    def sources(self) -> list[WaterSource]:
        return list(self._sources.values())

    def litres(self, name: str) -> float:
        return self._sources[name].litres

    def total_litres(self) -> float:
        return sum(s.litres for s in self._sources.values())

    def wet_at(self, room: str, x: float, y: float) -> bool:
        """Whether the floor at (x, y) in ``room`` is under water."""
        for s in self._sources.values():
            if s.room == room and s.litres > 0.0 and math.hypot(x - s.x, y - s.y) <= s.radius:
                return True
        return False

    def snapshot(self) -> dict[str, Any]:
        return {"total_litres": round(self.total_litres(), 3),
                "sources": {n: s.state() for n, s in sorted(self._sources.items())}}


#: The wetted areas around points of a room, by the room's shape (a home's never move): a scenario's
#: leak or spill starts at the same spot in every episode of a home.
_AREA_TABLES = ShapeMemo(64)


def _area_table(world: World, room: str, x: float, y: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Wetted floor area inside ``room`` of discs around (x, y), at radii up to the room's
    farthest corner (the last area is the whole floor)."""
    floor = world.home.room_polygon(room)
    return _AREA_TABLES.get(([floor],), (x, y), lambda: _wetted_areas(floor, x, y))


def _wetted_areas(floor: Polygon, x: float, y: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    corners = np.asarray(floor.exterior.coords)
    reach = float(np.hypot(corners[:, 0] - x, corners[:, 1] - y).max())
    radii = np.linspace(0.0, reach, RADIUS_SAMPLES)
    discs = shapely.buffer(shapely.points(np.full(len(radii), x), np.full(len(radii), y)), radii, quad_segs=16)
    areas = shapely.area(shapely.intersection(discs, floor))
    areas[-1] = floor.area
    return tuple(radii.tolist()), tuple(np.maximum.accumulate(areas).tolist())
