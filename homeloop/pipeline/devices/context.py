"""The equip context: one home being equipped, its indexes, and what the steps placed so far.

Every equip step reads and extends one :class:`EquipContext`. It holds the input home
(never changed), the catalog, the generator and the profile; the indexes of the home the
steps look things up in (rooms, polygons, footprints, what stands in each room); and the
outputs the steps add to: devices and cameras in placement order, notes, failures,
placement exceptions, doors to open, and the people with what they wear.

Measurements a step asks for more than once (a room's centre, its wall points, what a
camera sees from a corner) are computed once per home: :func:`memoized` keeps them on
the context, by function and arguments.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Concatenate, ParamSpec, TypeVar, cast

import numpy as np
from shapely import Polygon

from homeloop.core.catalog import Catalog, DeviceEntry
from homeloop.core.check import room_adjacency
from homeloop.core.home import (
    Camera,
    Device,
    Furniture,
    Home,
    Opening,
    Person,
    PlacementException,
    Pose,
    Room,
    polygon_from_rings,
)
from homeloop.pipeline.devices.catalog_devices import new_device
from homeloop.pipeline.devices.profile import EquipProfile

#: Room kinds several device families name.
LIVING_SUBTYPES = frozenset({"LIVING_ROOM", "LIVING_DINING"})
BATHROOM_SUBTYPES = frozenset({"BATHROOM"})

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class EquipContext:
    """One home being equipped: the inputs, their indexes, and the steps' outputs so far."""

    home: Home
    catalog: Catalog
    rng: np.random.Generator
    profile: EquipProfile
    # -- indexes of the home
    rooms: dict[str, Room] = field(init=False)
    polys: dict[str, Polygon] = field(init=False)
    openings: dict[str, Opening] = field(init=False)
    opening_polys: dict[str, Polygon] = field(init=False)
    footprints: dict[str, Polygon] = field(init=False)
    fixture_polys: list[Polygon] = field(init=False)
    adjacency: dict[str, list[str]] = field(init=False)
    room_furniture: dict[str, list[Furniture]] = field(init=False)
    room_openings: dict[str, list[Opening]] = field(init=False)
    # -- what the steps placed and decided
    devices: list[Device] = field(default_factory=list)
    cameras: list[Camera] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    exceptions: list[PlacementException] = field(default_factory=list)
    #: Doors the equipped home has open (a kitchen's smoke must reach its sensor).
    open_doors: set[str] = field(default_factory=set)
    #: The home's people with the wearables they wear (None: the home's people as they are).
    people: list[Person] | None = None
    #: Devices numbered so far, by (type, room or what they are mounted on).
    counters: dict[tuple[str, str], int] = field(default_factory=dict)
    memo: dict[Callable[..., Any], dict[Any, Any]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        home = self.home
        self.rooms = {r.id: r for r in home.rooms}
        self.polys = home.room_polygons()
        self.openings = {o.id: o for o in home.openings}
        self.opening_polys = home.opening_polygons()
        self.footprints = home.furniture_footprints()
        self.fixture_polys = [polygon_from_rings(x.polygon) for x in home.fixtures]
        self.adjacency = room_adjacency(home)
        self.room_furniture = {rid: [] for rid in self.rooms}
        for f in home.furniture:
            self.room_furniture.setdefault(f.room, []).append(f)
        self.room_openings = {rid: [] for rid in self.rooms}
        for o in home.openings:
            for rid in dict.fromkeys(o.connects):
                self.room_openings.setdefault(rid, []).append(o)

    # -- the catalog

    def entry(self, device_type: str) -> DeviceEntry:
        return self.catalog.devices[device_type]

    def height(self, device_type: str) -> float:
        """The catalog's mounting height (m) of a device type."""
        return self.catalog.placement_number(device_type, "height")

    # -- rooms

    def room_name(self, rid: str) -> str:
        return self.rooms[rid].name

    def ceiling(self, rid: str) -> float:
        r = self.rooms[rid]
        return r.floor_height + r.ceiling_height

    def floor(self, rid: str) -> float:
        return self.rooms[rid].floor_height

    def room_index(self, rid: str) -> int:
        """The room's place in the home's list of rooms."""
        return next(i for i, r in enumerate(self.home.rooms) if r.id == rid)

    # -- placing devices

    def new_id(self, device_type: str, where: str | None) -> str:
        """The next id ``<type>_<where>_<n>`` (``where`` is a room or what the device is on)."""
        key = (device_type, where or "home")
        n = self.counters.get(key, 0) + 1
        self.counters[key] = n
        return f"{device_type}_{where or 'home'}_{n}"

    def add(self, device_type: str, room: str | None, pose: Pose, *, label: str | None = None,
            **kwargs: Any) -> Device:
        """Place a device of a catalog type, named after ``label`` (else its room)."""
        entry = self.entry(device_type)
        where = label or (self.rooms[room].name if room else None)
        device = new_device(entry, self.new_id(device_type, room or kwargs.get("mounted_on")), room, pose,
                            name=f"{where} {entry.name}" if where else None, **kwargs)
        self.devices.append(device)
        return device


def memoized(measure: Callable[Concatenate[EquipContext, P], R]) -> Callable[Concatenate[EquipContext, P], R]:
    """A measurement of one home computed once for each set of arguments (kept on the context)."""

    @functools.wraps(measure)
    def cached(ctx: EquipContext, *args: P.args, **kwargs: P.kwargs) -> R:
        memo = ctx.memo.setdefault(measure, {})
        key = (args, tuple(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = measure(ctx, *args, **kwargs)
        return cast(R, memo[key])

    return cast(Callable[Concatenate[EquipContext, P], R], cached)
