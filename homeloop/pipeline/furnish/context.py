"""What furnishing one home works on: :class:`FurnishContext`, shared by every step.

It holds the home's shell, the catalog, the furnishing generator and what the steps have
placed so far (furniture per room, objects, the room objects take on surfaces, failures),
and keeps the ids of furniture and objects unique in the home.

What the household owns
-----------------------
Before anything is placed the home draws which of the catalog's household possessions it
has (houseplants, a dishwasher, a tumble dryer, a coffee table, reading glasses, daily
medication ...; ``possessions`` in ``homeloop/catalog/rooms.yaml``, docs/catalog.md): each
with its ``share``, in catalog order, from the furnishing generator (:func:`lacking_items`).
The items of a possession it lacks are left out: a room rule's item drops them from its
``one_of`` (and is skipped when none is left, with every item placed relative to it), and
task objects among them are not placed. The house lacks nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core import navigation
from homeloop.core.catalog import Catalog, FurnitureEntry
from homeloop.core.home import Furniture, Home, HomeObject, Pose, Room, furniture_from_catalog, polygon_from_rings
from homeloop.pipeline.furnish.candidates import Candidates, boxes
from homeloop.pipeline.furnish.house_file import HouseFurnishing
from homeloop.pipeline.furnish.results import FurnishFailure
from homeloop.pipeline.furnish_geometry import HomeGeometry, RoomGeometry

#: Furniture classes whose front (any side, for free-standing items) must be
#: reachable from a door of the room by the widest robot (docs/tasks.md).
REACHED_CLASSES = frozenset({"fridge", "range", "dishwasher", "washer", "dryer", "coffee_table",
                             "plant_stand", "desk", "nightstand", "laundry_basket"})

#: A box an object takes on a surface or in a container, in its furniture's frame:
#: (u0, u1, v0, v1, top).
SurfaceBox = tuple[float, float, float, float, float]


def lacking_items(catalog: Catalog, rng: np.random.Generator) -> frozenset[str]:
    """The catalog ids a home lacks: the items of each possession it does not draw (each
    drawn with its ``share``, in catalog order)."""
    draws = rng.random(len(catalog.possessions))
    return frozenset(cid for p, u in zip(catalog.possessions.values(), draws) if u >= p.share for cid in p.items)


@dataclass
class PlacedItem:
    """A piece of furniture placed in a room: its home-file model, the room rule's item key it
    was placed for, its footprint, the free floor its front needs and where a robot stands to
    use it (``probes``)."""

    model: Furniture
    key: str
    entry: FurnitureEntry
    footprint: Polygon
    clearance: Polygon | None
    on_floor: bool
    probes: list[tuple[float, float]]

    #: Its outline's extents on its room's wall faces (:meth:`RoomGeometry.extents_on_faces`).
    face_extents: np.ndarray | None = None

    def extents_on(self, geom: RoomGeometry) -> np.ndarray:
        """The footprint's extents on the wall faces of its room (measured once)."""
        if self.face_extents is None:
            self.face_extents = geom.extents_on_faces([shapely.get_coordinates(self.footprint)])
        return self.face_extents


@dataclass(frozen=True)
class Snapshot:
    """What furnishing a room changes besides its furniture: ids counted, objects placed and
    the room they take on surfaces."""

    counts: dict[str, int]
    objects: list[HomeObject]
    object_counts: dict[str, int]
    surface_use: dict[tuple[str, str], list[SurfaceBox]]


@dataclass
class FurnishContext:
    """One home being furnished: its shell, the catalog and generator, and what is placed so far."""

    catalog: Catalog
    rng: np.random.Generator
    home: Home
    lacking: frozenset[str] = frozenset()
    #: The house's hand-written furnishing, placed before the room rules (None for a plan).
    fixed: HouseFurnishing | None = None
    #: Room id -> placed furniture, in the order placed.
    placed: dict[str, list[PlacedItem]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    objects: list[HomeObject] = field(default_factory=list)
    object_counts: dict[str, int] = field(default_factory=dict)
    #: Per (furniture, surface or container): the boxes taken.
    surface_use: dict[tuple[str, str], list[SurfaceBox]] = field(default_factory=dict)
    failures: list[FurnishFailure] = field(default_factory=list)
    #: Per room: the furniture on the floor its free floor leaves out, and that floor.
    free_floor: dict[str, tuple[list[PlacedItem], BaseGeometry]] = field(default_factory=dict)
    #: Room id -> its measured geometry, made when a step first needs it.
    geoms: dict[str, RoomGeometry] = field(default_factory=dict)
    #: The widest robot body's width (m) and half of it: the room must stay navigable for it.
    body: float = field(init=False)
    radius: float = field(init=False)
    #: What is measured once per home (:class:`HomeGeometry`).
    geo: HomeGeometry = field(init=False)
    #: The ids of the home's rooms, walls, openings and fixtures, which furniture and objects must not reuse.
    shell_ids: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.body = navigation.widest_body_width(self.catalog)
        self.radius = self.body / 2
        self.geo = HomeGeometry(self.home)
        home = self.home
        self.shell_ids = frozenset(x.id for parts in (home.rooms, home.walls, home.openings, home.fixtures)
                                   for x in parts)

    def room_geometry(self, room: Room) -> RoomGeometry:
        """The room's geometry, measured the first time it is asked for."""
        if room.id not in self.geoms:
            self.geoms[room.id] = RoomGeometry(self.home, self.geo, room, self.radius)
        return self.geoms[room.id]

    def room_order(self) -> list[str]:
        """The home's room ids in the home file's order."""
        return [r.id for r in self.home.rooms]

    def furniture(self) -> list[Furniture]:
        """Every piece placed so far, room by room in the home's order."""
        return [p.model for rid in self.room_order() for p in self.placed.get(rid, [])]

    # -- ids

    def next_id(self, catalog_id: str, counts: dict[str, int]) -> str:
        """The next free ``<catalog_id>_<n>``, counted in ``counts``."""
        taken = self.taken_ids()
        n = counts.get(catalog_id, 0)
        while True:
            n += 1
            fid = f"{catalog_id}_{n}"
            if fid not in taken and fid not in self.shell_ids:
                counts[catalog_id] = n
                return fid

    def taken_ids(self) -> set[str]:
        """The ids of the furniture and objects placed so far (the shell's are :attr:`shell_ids`)."""
        ids = {p.model.id for lst in self.placed.values() for p in lst}
        ids.update(o.id for o in self.objects)
        return ids

    # -- furniture records

    def record(self, entry: FurnitureEntry, room: RoomGeometry, pose: Pose, key: str,
               fid: str | None = None, on_floor: bool = True) -> PlacedItem:
        """Place a piece of furniture at ``pose`` in the room, for the rule item ``key``."""
        fid = fid or self.next_id(entry.id, self.counts)
        model = furniture_from_catalog(entry, fid, room.id, pose)
        fp = polygon_from_rings(model.footprint)
        clearance = None
        if entry.clearance_front > 0 and on_floor:
            d = entry.dimensions
            clearance = boxes(Candidates.at(pose), entry.clearance_front, d.width,
                              ox=d.depth / 2 + entry.clearance_front / 2)[0]
        probes = self.probes(entry, pose) if on_floor and entry.semantic_class in REACHED_CLASSES else []
        placed = PlacedItem(model, key, entry, fp, clearance, on_floor, probes)
        self.placed.setdefault(room.id, []).append(placed)
        return placed

    def probes(self, entry: FurnitureEntry, pose: Pose) -> list[tuple[float, float]]:
        """Where a robot stands to use the item: before its front (any side if free-standing)."""
        d = entry.dimensions
        gap = self.radius + 0.05
        sides = [(d.depth / 2 + gap, 0.0)]
        if d.width >= 0.9:  # wide fronts (a desk with its chair) are also used off-centre
            sides += [(d.depth / 2 + gap, d.width / 2 - 0.15), (d.depth / 2 + gap, -d.width / 2 + 0.15)]
        if entry.placement == "free":
            sides += [(-d.depth / 2 - gap, 0.0), (0.0, d.width / 2 + gap), (0.0, -d.width / 2 - gap)]
        return [pose.to_world(x, y)[:2] for x, y in sides]

    # -- starting a room afresh

    def snapshot(self) -> Snapshot:
        """A copy of what furnishing a room changes besides its furniture."""
        return Snapshot(dict(self.counts), list(self.objects), dict(self.object_counts),
                        {k: list(v) for k, v in self.surface_use.items()})

    def restore(self, state: Snapshot) -> None:
        """Go back to ``state`` (which stays as it was, to be restored again)."""
        self.counts, self.objects, self.object_counts = dict(state.counts), list(state.objects), \
            dict(state.object_counts)
        self.surface_use = {k: list(v) for k, v in state.surface_use.items()}
