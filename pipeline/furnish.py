"""Furnishing: a floor plan turned into a furnished :class:`~homeloop.home.Home`.

``furnish(plan, catalog, rng)`` builds the home's rooms, walls and openings
from the plan, then places furniture room by room as the catalog's room rules
say (``catalog/rooms.yaml``), then the carryable objects the tasks need
(docs/tasks.md: a pan on the range, a watering can in the kitchen, a mug, glasses,
red/blue/white pill boxes, garments in the dryer ...). What it measures of each room
before placing anything (wall faces, features, door and window zones, free floor) is
:mod:`homeloop.pipeline.furnish_geometry`.

What the household owns
-----------------------
First the home draws which of the catalog's household possessions it has
(houseplants, a dishwasher, a tumble dryer, a coffee table, reading glasses,
daily medication ...; ``possessions`` in ``catalog/rooms.yaml``, docs/catalog.md):
each with its ``share``, in catalog order, from the furnishing generator. The
items of a possession it lacks are left out: a room rule's item drops them from
its ``one_of`` (and is skipped when none is left, with every item placed
relative to it), and task objects among them are not placed. The house
(:func:`furnish_house`) lacks nothing.

How one item is placed
----------------------
Candidate poses come from generators, one per constraint kind of the item
(against a wall: every wall face of the room, walked at :data:`WALL_STEP`;
beside / in front of / around an earlier item; in the counter run; at a
feature ...). All candidates of an item are then tested at once with shapely's
vectorised predicates and an STRtree:

- the footprint lies inside the room; it hits no wall, no plan feature (the
  counter is no obstacle to an item built into it, a feature no obstacle to
  the item that takes its place), no other furniture, no door zone (each
  door's swing square plus its clear zone on both sides) and no other item's
  front clearance; a tall item never stands in front of a window;
- its own front clearance lies on the room's floor, clear of features and
  furniture (it may cross door zones: both are floor to walk on);
- every hard constraint (``place``) holds.

Survivors are ranked by how many soft constraints (``prefer``) hold, then by
a draw from the generator. The first that keeps the room navigable wins: the
widest robot body (:func:`homeloop.navigation.widest_body_width`) must still
pass between every pair of the room's doors it could pass between in the
empty room, and reach the front of every item the tasks use
(:data:`REACHED_CLASSES`) from a door.

Constraint kinds (:class:`homeloop.catalog.Constraint`), as interpreted here:

- ``against_wall``: the back lies on a wall face (the room boundary where a
  wall is, not at a door), within
  :data:`~homeloop.pipeline.furnish_geometry.FLUSH_TOLERANCE`.
- ``corner``: against a wall with one side also on a wall face.
- ``beside:<key>``: same heading as <key>, backs aligned, side gap between
  ``min_distance`` (0) and ``max_distance`` (0.10 m).
- ``in_front_of:<key>``: facing <key>, its front ``min_distance`` (0.3) to
  ``max_distance`` (0.6 m) from <key>'s front edge, centred on it.
- ``facing:<key>``: front turned to <key>'s centre (within 25°).
- ``around:<key>``: along a side of <key>, facing it, within 0.10 m.
- ``on:<key>``: furniture stands on <key>'s first support surface (z = its
  height); an object stands on any support surface of <key>.
- ``center``: near the pole of inaccessibility of the room's free floor,
  aligned with the room's main axis.
- ``in_counter``: a section of a KITCHEN counter run: front flush with the
  counter front (back flush with the wall when the counter is shallower).
- ``on_counter``: standing on the counter top (z = counter height).
- ``beside_counter``: touching an end of a counter run, back to a wall.
- ``at_feature:<KIND>``: covering at least half of a plan feature of that kind.
- ``near_feature:<KIND>``: footprint within ``max_distance`` (0.9 m) of one.

Counts draw from the generator; a required item placed fewer than its
minimum count times is a :class:`FurnishFailure`; optional items are skipped.
A room whose required items fail is tried again (up to :data:`ROOM_ATTEMPTS`
times, later attempts preferring the later ``one_of`` alternatives).

Determinism: every draw comes from the generator passed in; rooms, features,
openings and candidates are visited in fixed orders; the same plan and seed
give a byte-identical home file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import shapely
from pydantic import BaseModel, ConfigDict, Field
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop import navigation
from homeloop.catalog import Catalog, Constraint, FurnitureEntry, ItemRule, ObjectEntry
from homeloop.check import OBJECT_PENETRATION
from homeloop.geometry import opening_axes, rectangle_frames
from homeloop.geometry_assets import box_at, overlapping_pairs, placed_solids
from homeloop.home import (
    FIXTURE_KIND_OF_FEATURE,
    Fixture,
    Furniture,
    Home,
    HomeObject,
    NamedPoint,
    ObjectLocation,
    Pose,
    Room,
    Source,
    Wall,
    furniture_from_catalog,
    object_from_catalog,
    polygon_from_rings,
    rings_from_polygon,
)
from homeloop.home import Opening as HomeOpening
from homeloop.house import HOUSE_CSV, HOUSE_PLAN_KEY, load_house
from homeloop.io import load_yaml
from homeloop.pipeline.furnish_geometry import (
    ZONE_OVERLAP_AREA,
    HomeGeometry,
    KeepOut,
    RoomGeometry,
    along_axes,
    pieces_holding,
    valid_polygon,
)
from homeloop.plan import ENTRANCE_DOOR, RAILING, WINDOW, Plan, space_class

# --- constants ------------------------------------------------------------------------

#: Default opening heights (m), docs/data-format.md: doors 0–2.0, windows 0.5–2.4.
DOOR_SILL, DOOR_HEAD = 0.0, 2.0
WINDOW_SILL, WINDOW_HEAD = 0.5, 2.4
#: Default railing height (m), docs/data-format.md.
RAILING_HEIGHT = 1.0
#: Counter top height (m), docs/data-format.md (kitchen counter 0–0.9).
COUNTER_HEIGHT = 0.9
#: Default fixture heights (m) by plan feature subtype (docs/data-format.md), recorded
#: with the home's fixtures; built-in furniture reaches the ceiling, others the counter top.
FEATURE_HEIGHTS = {"KITCHEN": 0.9, "SINK": 0.85, "BATHTUB": 0.6, "WASHING_MACHINE": 1.3}
#: A plan DOOR into a GARAGE wider than this (m) is a garage door.
GARAGE_DOOR_MIN_WIDTH = 2.0

#: Step (m) of candidate positions along a wall face.
WALL_STEP = 0.1
#: Gap (m) left between an item's back and the wall face it stands against.
WALL_GAP = 0.003
#: Collision boxes are this much (m) larger than footprints on every side, so
#: touching counts as a collision and footprints rounded to the millimetre
#: never overlap.
COLLISION_MARGIN = 0.001
#: Candidates whose navigation is checked per item before giving up.
MAX_NAV_CHECKS = 24
#: Attempts per room before its required items are reported as failures: the
#: rule's order; items tied to plan features first; the same with the later
#: ``one_of`` alternatives first; the rule's order with them.
ROOM_ATTEMPTS = 4

#: Furniture classes whose front (any side, for free-standing items) must be
#: reachable from a door of the room by the widest robot (docs/tasks.md).
REACHED_CLASSES = frozenset({"fridge", "range", "dishwasher", "washer", "dryer", "coffee_table",
                             "plant_stand", "desk", "nightstand", "laundry_basket"})

#: Distance defaults (m) of relational constraints when the rule gives none.
BESIDE_MAX_GAP = 0.10
IN_FRONT_MIN, IN_FRONT_MAX = 0.3, 0.6
AROUND_MAX_GAP = 0.10
NEAR_FEATURE_MAX = 0.9
FACING_TOLERANCE = math.radians(25)

#: Room names the agent hears, by area subtype (others: the subtype in lower case).
ROOM_NAMES = {"ROOM": "bedroom", "LIVING_ROOM": "living room", "LIVING_DINING": "living room",
              "KITCHEN_DINING": "kitchen", "WASH_AND_DRY_ROOM": "laundry", "CORRIDOR": "hall",
              "STOREROOM": "storeroom"}


@dataclass(frozen=True)
class TaskObject:
    """A carryable object every home gets once (docs/tasks.md), and where it goes:
    the first host class present (furniture class, ``surface``/``container`` name);
    ``floor_in`` names room subtypes whose floor takes it when no host exists."""

    catalog_ids: tuple[str, ...]
    hosts: tuple[tuple[str, str, str], ...] = ()
    floor_in: tuple[str, ...] = ()
    required: bool = True


#: The objects the task set needs (docs/tasks.md), placed after the room rules.
TASK_OBJECTS: tuple[TaskObject, ...] = (
    TaskObject(("pan",), hosts=(("range", "surface", "cooktop"),)),
    TaskObject(("watering_can",), floor_in=("KITCHEN", "KITCHEN_DINING")),
    TaskObject(("mug",), hosts=(("coffee_table", "surface", "top"), ("desk", "surface", "top"),
                                ("dining_table", "surface", "top"))),
    TaskObject(("glasses",), hosts=(("nightstand", "surface", "top"), ("desk", "surface", "top"),
                                    ("tv_unit", "surface", "top"))),
    TaskObject(("pill_box_red", "pill_box_blue", "pill_box_white"),
               hosts=(("nightstand", "surface", "top"), ("desk", "surface", "top"),
                      ("dining_table", "surface", "top"), ("tv_unit", "surface", "top"))),
    TaskObject(("garment_shirt", "garment_towel"), hosts=(("dryer", "container", "drum"),)),
    TaskObject(("remote_control",), hosts=(("tv_unit", "surface", "top"),), required=False),
    TaskObject(("book",), hosts=(("bookshelf", "surface", "shelf_2"),), required=False),
    TaskObject(("keys",), hosts=(("shoe_cabinet", "surface", "top"),), required=False),
)


# --- results ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FurnishFailure:
    """A required item that could not be placed (or a plan that cannot become a home)."""

    room: str
    room_type: str
    item: str
    reason: str

    def __str__(self) -> str:
        return f"{self.room_type} {self.room}: {self.item}: {self.reason}"


@dataclass
class FurnishResult:
    """The furnished home (None when a required item failed) and the failures.

    ``partial`` holds the home as far as it got, for inspection, even on failure.
    """

    home: Home | None
    failures: list[FurnishFailure] = field(default_factory=list)
    partial: Home | None = None

    @property
    def ok(self) -> bool:
        return self.home is not None and not self.failures


# --- the house's hand-written furnishing -------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FixedFurniture(_Strict):
    """A piece of furniture at an explicit pose (x, y in m, yaw in degrees)."""

    id: str | None = None
    catalog_id: str
    room: str
    x: float
    y: float
    yaw_deg: float = 0.0
    z: float = 0.0
    note: str | None = None


class FixedObject(_Strict):
    """An object on a surface or in a container of a fixed piece of furniture, or on a
    room's floor. Without ``x``/``y`` it is centred on its surface or container."""

    id: str | None = None
    catalog_id: str
    furniture: str | None = None
    surface: str | None = None
    container: str | None = None
    room: str | None = None
    x: float | None = None
    y: float | None = None
    yaw_deg: float | None = None
    note: str | None = None


class FixedPoint(_Strict):
    """A named spot on a room's floor (the parcel spot on the porch), written to the
    home file's ``points``."""

    name: str
    room: str
    x: float
    y: float
    note: str | None = None


class HouseFurnishing(_Strict):
    """Items placed verbatim before the room rules complete the home."""

    plan: str = HOUSE_PLAN_KEY
    furniture: list[FixedFurniture] = []
    objects: list[FixedObject] = []
    points: list[FixedPoint] = []
    openable_windows: list[str] | None = Field(
        None, description="if given, only these windows can be opened; the others are fixed glazing")
    note: str | None = None


#: The house's furnishing file (package data beside the house's plan).
HOUSE_FURNISHING_YAML: Path = HOUSE_CSV.with_name("house_furnishing.yaml")


def load_house_furnishing(path: str | Path | None = None) -> HouseFurnishing:
    """The hand-written furnishing of the house (``homeloop/data/house_furnishing.yaml``)."""
    path = Path(path) if path is not None else HOUSE_FURNISHING_YAML
    data = load_yaml(path.read_text(encoding="utf-8")) or {}
    return HouseFurnishing.model_validate(data)


def furnish_house(catalog: Catalog, seed: int = 0) -> Home:
    """The house, furnished: its hand-written items first, the room rules after.

    Raises ``ValueError`` listing the failures if it cannot be furnished.
    """
    plan = load_house()
    rng = np.random.default_rng(seed)
    result = furnish(plan, catalog, rng, fixed=load_house_furnishing(), source_kind="house", seed=seed,
                     lacking=frozenset())
    if not result.ok:
        raise ValueError("the house does not furnish: " + "; ".join(str(f) for f in result.failures))
    return result.home  # type: ignore[return-value]


# --- geometry helpers ---------------------------------------------------------------------


def _corners(poses: _Cands, depth: float, width: float, ox: float = 0.0, oy: float = 0.0) -> np.ndarray:
    """The corners (poses, 4, 2) of rectangles given in each item's frame (centre ox, oy;
    extent depth along x, width along y), in home coordinates; vectorised over poses."""
    lx = np.array([ox - depth / 2, ox + depth / 2, ox + depth / 2, ox - depth / 2])
    ly = np.array([oy - width / 2, oy - width / 2, oy + width / 2, oy + width / 2])
    return _in_home(poses, lx, ly)


def _in_home(poses: _Cands, lx: np.ndarray, ly: np.ndarray) -> np.ndarray:
    """Points given in each item's frame (``lx``, ``ly``), in home coordinates: (poses, points, 2)."""
    c, s = poses.cos[:, None], poses.sin[:, None]
    out = np.empty((len(poses), len(lx), 2))
    out[..., 0] = poses.cx[:, None] + c * lx - s * ly
    out[..., 1] = poses.cy[:, None] + s * lx + c * ly
    return out


def _rectangles(corners: np.ndarray) -> np.ndarray:
    """Polygons from corners (n, 4, 2), each ring closed on its first corner; built from one
    flat coordinate array, which is the cheapest way to make many small polygons."""
    n = len(corners)
    rings = np.concatenate([corners, corners[:, :1]], axis=1).reshape(-1, 2)
    return shapely.from_ragged_array(shapely.GeometryType.POLYGON, rings, (np.arange(0, 5 * n + 1, 5), np.arange(n + 1)))


def _boxes(poses: _Cands, depth: float, width: float, ox: float = 0.0, oy: float = 0.0) -> np.ndarray:
    """The rectangles of :func:`_corners` as polygons."""
    return _rectangles(_corners(poses, depth, width, ox, oy))


def _segments(poses: _Cands, p: tuple[float, float], q: tuple[float, float]) -> np.ndarray:
    """Segments from p to q given in each item's frame, in home coordinates."""
    return shapely.linestrings(_in_home(poses, np.array([p[0], q[0]]), np.array([p[1], q[1]])))


def _to_local(x: np.ndarray, y: np.ndarray, pose: Pose) -> tuple[np.ndarray, np.ndarray]:
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    dx, dy = x - pose.x, y - pose.y
    return c * dx + s * dy, -s * dx + c * dy


def _wrap(a: np.ndarray | float) -> np.ndarray | float:
    return (np.asarray(a) + math.pi) % (2 * math.pi) - math.pi


# --- the home's fixed parts ----------------------------------------------------------------


def _room_names(plan: Plan) -> dict[str, str]:
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for s in plan.spaces:
        base = ROOM_NAMES.get(s.subtype, s.subtype.lower().replace("_", " "))
        counts[base] = counts.get(base, 0) + 1
        names[s.id] = base if counts[base] == 1 else f"{base} {counts[base]}"
    return names


def opening_kind(plan: Plan, opening) -> str:
    """The home opening kind of a plan opening (a wide DOOR into a GARAGE is a garage door)."""
    if opening.kind == WINDOW:
        return "window"
    if opening.kind == ENTRANCE_DOOR:
        return "entrance_door"
    garage = any(plan.has_space(s) and plan.space(s).subtype == "GARAGE" for s in opening.connects)
    return "garage_door" if garage and opening.width > GARAGE_DOOR_MIN_WIDTH else "door"


def home_shell(plan: Plan, *, source_kind: str = "swiss_dwellings", seed: int | None = None,
               catalog_hash: str | None = None) -> Home:
    """The home's rooms, walls, openings and fixtures (no furniture yet)."""
    rooms = _shell_rooms(plan)
    return Home(home_id=plan.key,
                source=Source(kind=source_kind, plan=plan.key, seed=seed, catalog_hash=catalog_hash),
                rooms=rooms, walls=_shell_walls(plan), openings=_shell_openings(plan, {r.id for r in rooms}),
                fixtures=_shell_fixtures(plan, rooms))


def _shell_rooms(plan: Plan) -> list[Room]:
    names = _room_names(plan)
    rooms = []
    for s in plan.spaces:
        poly = valid_polygon(s.polygon)
        if poly is None:
            continue
        rooms.append(Room(id=s.id, name=names[s.id], type=s.subtype, space_class=space_class(s.subtype),
                          polygon=rings_from_polygon(poly), floor_height=0.0, ceiling_height=plan.height))
    return rooms


def _shell_walls(plan: Plan) -> list[Wall]:
    walls = []
    for sep in plan.separators:
        parts = [g for g in shapely.get_parts(shapely.make_valid(sep.polygon) if not sep.polygon.is_valid
                                              else sep.polygon) if g.geom_type == "Polygon" and g.area > 1e-6]
        height = RAILING_HEIGHT if sep.kind == RAILING else plan.height
        for k, part in enumerate(parts):
            wid = sep.id if len(parts) == 1 else f"{sep.id}_{k + 1}"
            walls.append(Wall(id=wid, kind=sep.kind, polygon=rings_from_polygon(part), height=height))
    return walls


def _shell_openings(plan: Plan, room_ids: set[str]) -> list[HomeOpening]:
    openings = []
    # Each opening's width (the plan's ``Opening.width``), all measured in one pass.
    widths = rectangle_frames([o.polygon for o in plan.openings])[3].tolist()
    for o, width in zip(plan.openings, widths):
        poly = valid_polygon(o.polygon)
        if poly is None:
            continue
        kind = opening_kind(plan, o)
        connects = [c for c in o.connects if c in room_ids]
        exterior = len(connects) < 2 or any(space_class(plan.space(c).subtype) == "outdoor" for c in connects)
        sill, head = (WINDOW_SILL, WINDOW_HEAD) if kind == "window" else (DOOR_SILL, DOOR_HEAD)
        openings.append(HomeOpening(id=o.id, kind=kind, polygon=rings_from_polygon(poly), connects=connects,
                                    width=max(width, 0.01), sill=sill, height=head - sill,
                                    lockable=kind in ("entrance_door", "garage_door"), exterior=exterior))
    return openings


def _shell_fixtures(plan: Plan, rooms: list[Room]) -> list[Fixture]:
    """The plan's features as fixtures, each in the room the plan names, else the room
    it overlaps most; a feature over no room (or of an unknown subtype) is left out."""
    polys = {r.id: polygon_from_rings(r.polygon) for r in rooms}
    fixtures = []
    for f in plan.features:
        poly = valid_polygon(f.polygon)
        if poly is None or f.kind not in FIXTURE_KIND_OF_FEATURE:
            continue
        room = f.space_id if f.space_id in polys else max(
            polys, key=lambda rid: (polys[rid].intersection(poly).area, rid), default=None)
        if room is None or polys[room].intersection(poly).area <= 0:
            continue
        height = FEATURE_HEIGHTS.get(f.kind, plan.height if f.kind == "BUILT_IN_FURNITURE" else 0.9)
        fixtures.append(Fixture(id=f.id, kind=FIXTURE_KIND_OF_FEATURE[f.kind], room=room,
                                polygon=rings_from_polygon(poly), height=height))
    return fixtures


# --- placement state ------------------------------------------------------------------------


@dataclass
class _Placed:
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


@dataclass
class _Cands:
    """Candidate poses of an item (centre, heading) and their generator's own preference."""

    cx: np.ndarray
    cy: np.ndarray
    yaw: np.ndarray
    quality: np.ndarray  # generator's own preference, higher first

    @staticmethod
    def at(pose: Pose) -> "_Cands":
        return _Cands(np.array([pose.x]), np.array([pose.y]), np.array([pose.yaw]), np.zeros(1))

    @cached_property
    def cos(self) -> np.ndarray:
        return np.cos(self.yaw)

    @cached_property
    def sin(self) -> np.ndarray:
        return np.sin(self.yaw)

    @staticmethod
    def empty() -> "_Cands":
        z = np.zeros(0)
        return _Cands(z, z, z, z)

    @staticmethod
    def concat(parts: Sequence["_Cands"]) -> "_Cands":
        parts = [p for p in parts if len(p.cx)]
        if not parts:
            return _Cands.empty()
        return _Cands(*(np.concatenate([getattr(p, a) for p in parts]) for a in ("cx", "cy", "yaw", "quality")))

    def __len__(self) -> int:
        return len(self.cx)

    def take(self, idx: np.ndarray) -> "_Cands":
        """The candidates at ``idx`` (with their cosines and sines, where measured)."""
        sub = _Cands(self.cx[idx], self.cy[idx], self.yaw[idx], self.quality[idx])
        for trig in ("cos", "sin"):
            if trig in self.__dict__:
                sub.__dict__[trig] = self.__dict__[trig][idx]
        return sub

    def rounded(self) -> "_Cands":
        """Poses as the home file stores them (mm, 1e-4 rad)."""
        return _Cands(np.round(self.cx, 3), np.round(self.cy, 3), np.round(_wrap(self.yaw), 4), self.quality)


class _Stats:
    """Why candidates of an item were dropped, for failure messages."""

    def __init__(self) -> None:
        self.generated = self.inside = self.clear = self.zoned = self.cleared = self.constrained = 0
        self.nav_tried = 0

    def reason(self, entry: FurnitureEntry, tall: bool, against: bool) -> str:
        d = entry.dimensions
        size = f"{d.width:.2f} m wide × {d.depth:.2f} m deep"
        if self.generated == 0:
            if against:
                return f"no wall stretch of {d.width:.2f} m free of doors (room has no usable wall face)"
            return f"no candidate position for a {size} item"
        if self.inside == 0:
            return f"no position inside the room fits a {size} item ({self.generated} tried)"
        if self.clear == 0:
            what = "wall stretch" if against else "position"
            return (f"no {what} of {d.width:.2f} m free of features and other furniture "
                    f"({self.inside} positions inside the room)")
        if self.zoned == 0:
            return (f"no {'wall stretch' if against else 'position'} of {d.width:.2f} m free of doors"
                    + (", windows (tall)" if tall else "") + " and other furniture"
                    + f" ({self.clear} clear of furniture, all in door zones"
                    + (" or in front of windows)" if tall else ")"))
        if self.cleared == 0:
            return f"no position leaves {entry.clearance_front:.2f} m of free floor in front ({self.zoned} tried)"
        if self.constrained == 0:
            return f"no position satisfies the placement constraints ({self.cleared} free positions)"
        return (f"every position ({self.constrained}) blocks the path of the widest robot between the "
                "room's doors or to an appliance or table")


def lacking_items(catalog: Catalog, rng: np.random.Generator) -> frozenset[str]:
    """The catalog ids a home lacks: the items of each possession it does not draw (each
    drawn with its ``share``, in catalog order)."""
    draws = rng.random(len(catalog.possessions))
    return frozenset(cid for p, u in zip(catalog.possessions.values(), draws) if u >= p.share for cid in p.items)


class _Furnisher:
    def __init__(self, catalog: Catalog, rng: np.random.Generator, home: Home,
                 lacking: frozenset[str] = frozenset()) -> None:
        self.catalog = catalog
        self.rng = rng
        self.home = home
        self.lacking = lacking
        self.body = navigation.widest_body_width(catalog)
        self.radius = self.body / 2
        self.geo = HomeGeometry(home)
        self.placed: dict[str, list[_Placed]] = {}  # room id -> placed furniture
        self.counts: dict[str, int] = {}
        self.objects: list[HomeObject] = []
        self.object_counts: dict[str, int] = {}
        #: Per (furniture, surface or container): the boxes taken, (u0, u1, v0, v1, top) in its frame.
        self.surface_use: dict[tuple[str, str], list[tuple[float, float, float, float, float]]] = {}
        self.failures: list[FurnishFailure] = []
        #: Per room: the furniture on the floor its free floor leaves out, and that floor.
        self.free_floor: dict[str, tuple[list[_Placed], BaseGeometry]] = {}
        #: The ids of the home's rooms, walls, openings and fixtures, which furniture and objects must not reuse.
        self.shell_ids = frozenset(x.id for x in [*home.rooms, *home.walls, *home.openings, *home.fixtures])

    # -- ids

    def _next_id(self, catalog_id: str, counts: dict[str, int], taken: set[str]) -> str:
        n = counts.get(catalog_id, 0)
        while True:
            n += 1
            fid = f"{catalog_id}_{n}"
            if fid not in taken and fid not in self.shell_ids:
                counts[catalog_id] = n
                return fid

    def _taken_ids(self) -> set[str]:
        """The ids of the furniture and objects placed so far (the shell's are :attr:`shell_ids`)."""
        ids = {p.model.id for lst in self.placed.values() for p in lst}
        ids.update(o.id for o in self.objects)
        return ids

    # -- furniture records

    def _record(self, entry: FurnitureEntry, room: RoomGeometry, pose: Pose, key: str,
                fid: str | None = None, on_floor: bool = True) -> _Placed:
        fid = fid or self._next_id(entry.id, self.counts, self._taken_ids())
        model = furniture_from_catalog(entry, fid, room.id, pose)
        fp = polygon_from_rings(model.footprint)
        clearance = None
        if entry.clearance_front > 0 and on_floor:
            d = entry.dimensions
            clearance = _boxes(_Cands.at(pose), entry.clearance_front, d.width, ox=d.depth / 2 + entry.clearance_front / 2)[0]
        probes = self._probes(entry, pose) if on_floor and entry.semantic_class in REACHED_CLASSES else []
        placed = _Placed(model, key, entry, fp, clearance, on_floor, probes)
        self.placed.setdefault(room.id, []).append(placed)
        return placed

    def _probes(self, entry: FurnitureEntry, pose: Pose) -> list[tuple[float, float]]:
        """Where a robot stands to use the item: before its front (any side if free-standing)."""
        d = entry.dimensions
        gap = self.radius + 0.05
        sides = [(d.depth / 2 + gap, 0.0)]
        if d.width >= 0.9:  # wide fronts (a desk with its chair) are also used off-centre
            sides += [(d.depth / 2 + gap, d.width / 2 - 0.15), (d.depth / 2 + gap, -d.width / 2 + 0.15)]
        if entry.placement == "free":
            sides += [(-d.depth / 2 - gap, 0.0), (0.0, d.width / 2 + gap), (0.0, -d.width / 2 - gap)]
        return [pose.to_world(x, y)[:2] for x, y in sides]

    # -- rooms

    def furnish_room(self, room: Room, geom: RoomGeometry) -> None:
        rule = self.catalog.rule_for(room.type)
        items: list[ItemRule] = list(rule.items) if rule is not None else []
        if room.space_class == "indoor" and any(k == "KITCHEN" for _, k, _ in geom.features):
            kitchen = self.catalog.rule_for("KITCHEN")
            if kitchen is not None and (rule is None or rule.id != kitchen.id) and not any(
                    i.key in {k.key for k in kitchen.items} for i in items):
                items = list(kitchen.items) + items
        if not items:
            return
        fixed = list(self.placed.get(room.id, []))
        start = self._snapshot()
        best: tuple[list[_Placed], list[FurnishFailure], tuple] | None = None
        for attempt in range(ROOM_ATTEMPTS):
            # Each attempt starts afresh: no furniture, ids or objects of the attempt before.
            self._restore(start)
            self.placed[room.id] = list(fixed)
            failures = self._furnish_items(geom, items, attempt)
            if best is None or len(failures) < len(best[1]):
                best = (list(self.placed[room.id]), failures, self._snapshot())
            if not failures:
                break
        assert best is not None
        self.placed[room.id] = best[0]
        self._restore(best[2])
        self.failures.extend(best[1])

    def _snapshot(self) -> tuple:
        """What furnishing a room changes besides its furniture: ids counted, objects placed and
        the room they take on surfaces."""
        return (dict(self.counts), list(self.objects), dict(self.object_counts),
                {k: list(v) for k, v in self.surface_use.items()})

    def _restore(self, state: tuple) -> None:
        counts, objects, object_counts, surface_use = state
        self.counts, self.objects, self.object_counts = dict(counts), list(objects), dict(object_counts)
        self.surface_use = {k: list(v) for k, v in surface_use.items()}

    def _furnish_items(self, geom: RoomGeometry, items: list[ItemRule], attempt: int) -> list[FurnishFailure]:
        failures: list[FurnishFailure] = []
        if attempt in (1, 2):
            items = _anchored_first(items)
        keyed: dict[str, _Placed] = {}
        feature_kinds = {k for _, k, _ in geom.features}
        for p in self.placed.get(geom.id, []):
            for item in items:
                if p.entry.id in item.one_of and item.key not in keyed:
                    keyed[item.key] = p
        skipped: set[str] = set()  # keys of items the household lacks
        for item in items:
            item = self._owned(item, skipped)
            if item is None:
                continue
            if item.min_room_area is not None and geom.area < item.min_room_area:
                continue
            if item.requires_feature is not None and item.requires_feature not in feature_kinds:
                continue
            already = [p for p in self.placed.get(geom.id, []) if p.entry.id in item.one_of and p.key == item.key]
            n = item.count.min if item.count.min == item.count.max else int(
                self.rng.integers(item.count.min, item.count.max + 1))
            n = max(n, 1) if item.required else n
            need = n - len(already)
            if all(cid in self.catalog.objects for cid in item.one_of):
                placed_n, reason = self._rule_objects(geom, item, keyed, max(need, 0))
                if item.required and placed_n < need:
                    failures.append(FurnishFailure(geom.id, geom.subtype, item.key, reason))
                continue
            missing = [c.target for c in [*item.place] if c.kind in ("beside", "in_front_of", "facing", "around", "on")
                       and c.target not in keyed]
            if missing:
                if item.required:
                    failures.append(FurnishFailure(geom.id, geom.subtype, item.key,
                                                   f"needs {missing[0]!r}, which could not be placed"))
                continue
            order = list(item.one_of)
            if attempt >= 2:
                order = order[::-1]  # smaller alternatives last in the catalog's order come first
            placed_here = 0
            last_reason = ""
            for k in range(max(need, 0)):
                got = None
                for cid in order:
                    if cid not in self.catalog.furniture:
                        continue
                    got, last_reason = self._place_furniture(geom, item, self.catalog.furniture[cid], keyed, attempt)
                    if got is not None:
                        break
                if got is None:
                    break
                placed_here += 1
                keyed.setdefault(item.key, got)
            if item.required and placed_here < min(need, item.count.min - len(already)):
                failures.append(FurnishFailure(geom.id, geom.subtype, _failure_name(item), last_reason))
        return failures

    def _owned(self, item: ItemRule, skipped: set[str]) -> ItemRule | None:
        """The item with the ids the household lacks left out of ``one_of``; None (its key
        added to ``skipped``) when none is left or it is placed relative to a skipped item."""
        ids = [cid for cid in item.one_of if cid not in self.lacking]
        targets = {c.target for c in item.place if c.kind in ("beside", "in_front_of", "facing", "around", "on")}
        if not ids or targets & skipped:
            skipped.add(item.key)
            return None
        return item if len(ids) == len(item.one_of) else item.model_copy(update={"one_of": ids})

    # -- one furniture item

    def _place_furniture(self, geom: RoomGeometry, item: ItemRule, entry: FurnitureEntry,
                         keyed: dict[str, _Placed], attempt: int) -> tuple[_Placed | None, str]:
        """Candidates generated, then filtered step by step (inside the room, clear of
        obstacles, out of door and window zones, with free floor in front, meeting the
        item's constraints), the best scored by its preferences that the robot can reach."""
        tall = entry.tall if item.tall is None else item.tall
        hard, soft = list(item.place), list(item.prefer)
        against = _against_wall(entry, hard)
        on = next((c for c in hard if c.kind == "on"), None)
        if on is not None:
            return self._place_on(geom, item, entry, keyed[on.target])  # type: ignore[index]
        d = entry.dimensions
        stats = _Stats()
        cands = self._generate(geom, entry, hard, soft, keyed, against).rounded()
        stats.generated = len(cands)
        if not len(cands):
            return None, stats.reason(entry, tall, against)
        corners = _corners(cands, d.depth, d.width)
        fps = _rectangles(corners)
        keep = _inside(geom, fps, corners)
        stats.inside = int(keep.sum())
        solid, clearances, exempt = self._obstacles(geom, hard, soft, keyed)
        _drop_collisions(keep, cands, fps, d, solid + clearances, exempt)
        stats.clear = int(keep.sum())
        _drop_in_zones(keep, fps, corners, geom.keep_out(tall))
        stats.zoned = int(keep.sum())
        if entry.clearance_front > 0:
            _drop_blocked_fronts(keep, geom, cands, entry, solid + exempt)
        stats.cleared = int(keep.sum())
        idx = np.flatnonzero(keep)
        if len(idx):
            good = np.ones(len(idx), bool)
            sub = cands.take(idx)
            for c in hard:
                good &= self._holds(geom, c, sub, fps[idx], entry, keyed)
            keep[idx[~good]] = False
        stats.constrained = int(keep.sum())
        placed = self._pick(geom, item, entry, cands, fps, np.flatnonzero(keep), soft, keyed)
        return (placed, "") if placed is not None else (None, stats.reason(entry, tall, against))

    def _obstacles(self, geom: RoomGeometry, hard: list[Constraint], soft: list[Constraint],
                   keyed: dict[str, _Placed]) -> tuple[list[BaseGeometry], list[BaseGeometry], list[BaseGeometry]]:
        """What an item must not touch in the room: solid things (features, furniture on the
        floor), the clearances of items it is not placed relative to; and the features it
        may stand over (the one it stands at, the counter it is built into)."""
        exempt_kinds = {c.target for c in [*hard, *soft] if c.kind == "at_feature"}
        if {c.kind for c in [*hard, *soft]} & {"in_counter", "on_counter"}:
            exempt_kinds.add("KITCHEN")
        targets = {c.target for c in [*hard, *soft] if c.kind in ("beside", "in_front_of", "facing", "around")}
        target_ids = {keyed[t].model.id for t in targets if t in keyed}
        solid: list[BaseGeometry] = []
        exempt: list[BaseGeometry] = []
        for _, kind, poly in geom.features:
            (exempt if kind in exempt_kinds else solid).append(poly)
        placed = self.placed.get(geom.id, [])
        solid += [p.footprint for p in placed if p.on_floor]
        clearances = [p.clearance for p in placed if p.clearance is not None and p.model.id not in target_ids]
        return solid, clearances, exempt

    def _pick(self, geom: RoomGeometry, item: ItemRule, entry: FurnitureEntry, cands: _Cands, fps: np.ndarray,
              idx: np.ndarray, soft: list[Constraint], keyed: dict[str, _Placed]) -> _Placed | None:
        """The candidate (of those at ``idx``) meeting most preferences, then of best quality,
        ties drawn at random, that leaves the room navigable; it is recorded."""
        if not len(idx):
            return None
        sub = cands.take(idx)
        score = np.zeros(len(idx))
        for c in soft:
            score += self._holds(geom, c, sub, fps[idx], entry, keyed).astype(float)
        draw = self.rng.random(len(idx))
        order = np.lexsort((draw, -sub.quality, -score))
        reach_entry = entry.semantic_class in REACHED_CLASSES
        # The free floor with what stands so far, made when a candidate first needs it.
        free_now = cache(lambda: self._room_free(geom))
        for j in order[:MAX_NAV_CHECKS]:
            i = idx[j]
            pose = Pose(x=float(cands.cx[i]), y=float(cands.cy[i]), yaw=float(cands.yaw[i]))
            probes = self._probes(entry, pose) if reach_entry else []
            if self._navigable(geom, free_now, fps[i], probes):
                return self._record(entry, geom, pose, item.key)
        return None

    def _place_on(self, geom: RoomGeometry, item: ItemRule, entry: FurnitureEntry,
                  host: _Placed) -> tuple[_Placed | None, str]:
        surfaces = host.entry.surfaces
        if not surfaces:
            return None, f"{host.model.id} has no surface to stand on"
        s = surfaces[0]
        d = entry.dimensions
        if d.width > s.width + 0.1 or d.depth > s.depth + 0.1:
            return None, f"does not fit on {host.model.id} ({s.width:.2f} × {s.depth:.2f} m surface)"
        # Centred on the surface, its back toward the host's back.
        dx = s.offset.x - (s.depth - d.depth) / 2 if d.depth < s.depth else s.offset.x
        x, y, _ = host.model.pose.to_world(dx, s.offset.y)
        pose = Pose(x=x, y=y, z=host.model.pose.z + s.height, yaw=host.model.pose.yaw)
        return self._record(entry, geom, pose, item.key, on_floor=False), ""

    # -- candidate generation

    def _generate(self, geom: RoomGeometry, entry: FurnitureEntry, hard: list[Constraint],
                  soft: list[Constraint], keyed: dict[str, _Placed], against: bool) -> _Cands:
        d = entry.dimensions
        parts: list[_Cands] = []
        kinds = {c.kind for c in [*hard, *soft]}
        hard_kinds = {c.kind for c in hard}
        extra_s: list[np.ndarray] = []
        for c in [*hard, *soft]:
            if c.kind in ("at_feature", "near_feature"):
                for _, k, p in geom.features:
                    if k == c.target:
                        extra_s.append(np.asarray(p.centroid.coords[0]))
        wall_wanted = against or kinds & {"against_wall", "corner", "facing", "beside_counter", "at_feature",
                                         "near_feature"} or not hard_kinds & {
            "in_counter", "on_counter", "beside", "in_front_of", "around", "center"}
        gap = WALL_GAP if (against or entry.placement == "against_wall") else 0.02
        if wall_wanted:
            parts.append(self._gen_wall(geom, d.width, d.depth, gap, extra_s))
        for c in [*hard, *soft]:
            tgt = keyed.get(c.target) if c.target else None
            if c.kind == "beside" and tgt is not None:
                parts.append(_gen_beside(tgt, d.width, d.depth, c))
            elif c.kind == "in_front_of" and tgt is not None:
                parts.append(_gen_in_front(tgt, d.width, d.depth, c))
            elif c.kind == "around" and tgt is not None:
                parts.append(_gen_around(tgt, d.width, d.depth))
            elif c.kind == "facing" and tgt is not None and not against:
                parts.append(_gen_facing_free(tgt, d.width, d.depth))
            elif c.kind == "center":
                parts.append(self._gen_center(geom, d.width, d.depth))
            elif c.kind in ("in_counter", "on_counter"):
                parts.append(_gen_in_counter(geom, d.width, d.depth))
            elif c.kind == "beside_counter":
                parts.append(_gen_beside_counter(geom, d.width, d.depth))
        if not parts and entry.placement == "free":
            parts.append(self._gen_center(geom, d.width, d.depth))
        return _Cands.concat(parts)

    def _gen_wall(self, geom: RoomGeometry, width: float, depth: float, gap: float,
                  extra: list[np.ndarray]) -> _Cands:
        """Poses with the back ``gap`` off a wall face, facing into the room: every
        :data:`WALL_STEP` along each face that fits the width, at its far end, level with the
        ``extra`` points, and just past the ends of the features and floor furniture near the
        face (so an item can stand flush beside them). All faces are measured at once."""
        f = geom.faces
        lo, hi = f.s0 + width / 2, f.s1 - width / 2
        fit = np.flatnonzero(~(hi < lo - 1e-9))
        if not len(fit):
            return _Cands.empty()
        a, t, n, lo, hi = f.a[fit], f.t[fit], f.n[fit], lo[fit], hi[fit]
        levels = [hi[:, None], along_axes(np.asarray(extra).reshape(-1, 2), a, t)]
        valid = [np.ones((len(fit), 1 + len(extra)), bool)]
        # Things an item may stand flush beside: features and furniture on the floor.
        extents = [geom.feature_extents] + [p.extents_on(geom) for p in self.placed.get(geom.id, []) if p.on_floor]
        off_lo, off_hi, along_lo, along_hi = np.concatenate(extents, axis=2)[:, fit]
        if off_lo.shape[1]:
            near = ~((off_lo > depth + 0.1) | (off_hi < -0.01))
            ends = np.stack([along_lo - width / 2 - 0.005, along_hi + width / 2 + 0.005], axis=2)
            levels.append(ends.reshape(len(fit), -1))
            valid.append(np.repeat(near, 2, axis=1))
        level, ok = np.concatenate(levels, axis=1), np.concatenate(valid, axis=1)
        ok &= (level >= lo[:, None] - 1e-9) & (level <= hi[:, None] + 1e-9)
        # Face by face: the steps along it, then its levels in order.
        step_face, steps = _aranges(lo, hi + 1e-9, WALL_STEP)
        level_face = np.nonzero(ok)[0]
        order = np.argsort(np.concatenate([2 * step_face, 2 * level_face + 1]), kind="stable")
        face = np.concatenate([step_face, level_face])[order]
        s = np.concatenate([steps, level[ok]])[order]
        centre = a[face] + s[:, None] * t[face] + n[face] * (depth / 2 + gap)
        return _Cands(centre[:, 0], centre[:, 1], f.heading[fit][face], np.zeros(len(s)))

    def _gen_center(self, geom: RoomGeometry, width: float, depth: float) -> _Cands:
        pole = geom.pole()
        _, u, _, _, _ = opening_axes(geom.poly)
        axis = math.atan2(u[1], u[0])
        off = np.arange(-0.6, 0.61, 0.15)
        gx, gy = np.meshgrid(off, off)
        gx, gy = gx.ravel(), gy.ravel()
        cx = np.concatenate([pole.x + gx, pole.x + gx])
        cy = np.concatenate([pole.y + gy, pole.y + gy])
        # The item's width (y) along the room's main axis first.
        yaw = np.concatenate([np.full(len(gx), axis + math.pi / 2), np.full(len(gx), axis)])
        q = -np.hypot(np.concatenate([gx, gx]), np.concatenate([gy, gy])) - np.concatenate(
            [np.zeros(len(gx)), np.full(len(gx), 0.05)])
        return _Cands(cx, cy, yaw, q)

    # -- constraint predicates

    def _holds(self, geom: RoomGeometry, c: Constraint, cands: _Cands, fps: np.ndarray,
               entry: FurnitureEntry, keyed: dict[str, _Placed]) -> np.ndarray:
        """Which candidates meet one placement constraint (docs/catalog.md, room rules)."""
        d = entry.dimensions
        n = len(cands)
        kind = c.kind
        if kind in ("against_wall", "corner"):
            return _against_walls(geom, kind, cands, d)
        if kind in ("beside", "in_front_of", "facing", "around"):
            target = keyed.get(c.target) if c.target else None
            return np.zeros(n, bool) if target is None else _relative_to(c, cands, fps, d, target)
        if kind == "center":
            pole = geom.pole()
            limit = max(0.6, 0.25 * math.sqrt(geom.area))
            return np.hypot(cands.cx - pole.x, cands.cy - pole.y) <= limit
        if kind in ("in_counter", "on_counter", "beside_counter"):
            return _at_counters(geom, kind, fps, d) if geom.counters else np.zeros(n, bool)
        if kind in ("at_feature", "near_feature"):
            feats = [p for _, k, p in geom.features if k == c.target]
            return _at_features(c, feats, fps, d) if feats else np.zeros(n, bool)
        return np.ones(n, bool)

    # -- navigation within a room

    def _room_free(self, geom: RoomGeometry) -> BaseGeometry:
        """The room's free floor for the widest body with everything placed so far: the free
        floor last made for the room, less what was placed since (furniture is only ever
        added to a room, or the room started afresh)."""
        solid = [p for p in self.placed.get(geom.id, []) if p.on_floor]
        made, free = self.free_floor.get(geom.id, ([], geom.base_free()))
        if len(made) > len(solid) or any(a is not b for a, b in zip(made, solid)):
            made, free = [], geom.base_free()
        new = solid[len(made):]
        if new and not free.is_empty:
            free = free.difference(shapely.union_all(navigation.dilate([p.footprint for p in new], self.radius)))
        self.free_floor[geom.id] = (solid, free)
        return free

    def _navigable(self, geom: RoomGeometry, free_now: Callable[[], BaseGeometry], footprint: Polygon,
                   probes: list[tuple[float, float]]) -> bool:
        """Whether the room stays navigable with ``footprint`` placed as well: doors joined by
        the empty room's free floor stay joined, and every used item's front (its probes, these
        ``probes`` too) lies on a piece of free floor a door opens onto. The doors and all probes
        are looked up in one pass."""
        groups = [p.probes for p in self.placed.get(geom.id, []) if p.probes] + ([probes] if probes else [])
        on_floor = sum(b is not None for b in geom.door_pieces())
        if on_floor < 2 and not (groups and on_floor):
            return True  # no two doors to keep joined, no door to reach a front from
        free = free_now().difference(navigation.dilate([footprint], self.radius)[0])
        spots = np.asarray(geom.door_points, dtype=object)
        if groups:
            spots = np.concatenate([spots, shapely.points([xy for pts in groups for xy in pts])])
        pieces = pieces_holding(free, spots)
        base_comp, now_comp = geom.door_pieces(), pieces[:len(geom.door_points)]
        for i in range(len(now_comp)):
            for j in range(i + 1, len(now_comp)):
                if base_comp[i] is not None and base_comp[i] == base_comp[j]:
                    if now_comp[i] is None or now_comp[i] != now_comp[j]:
                        return False
        ref = {c for c, b in zip(now_comp, base_comp) if c is not None and b is not None}
        if not ref:
            return True
        start = len(now_comp)
        for pts in groups:
            if not any(c in ref for c in pieces[start:start + len(pts)] if c is not None):
                return False
            start += len(pts)
        return True

    # -- objects

    def _rule_objects(self, geom: RoomGeometry, item: ItemRule, keyed: dict[str, _Placed],
                      need: int) -> tuple[int, str]:
        on = next((c for c in item.place if c.kind == "on"), None)
        already = sum(1 for o in self.objects if o.catalog_id in item.one_of and o.location.room == geom.id)
        if need - already <= 0:
            return need, ""
        need -= already
        if on is None:
            placed = already
            for _ in range(need):
                if self._object_on_floor(geom, self.catalog.objects[item.one_of[0]]) is None:
                    return placed, "no free floor by a wall"
                placed += 1
            return placed, ""
        host = keyed.get(on.target)  # type: ignore[arg-type]
        if host is None:
            return 0, f"needs {on.target!r}, which could not be placed"
        placed = already
        for _ in range(need):
            ok = False
            for cid in item.one_of:
                obj = self.catalog.objects[cid]
                for s in host.model.surfaces:
                    if self._object_on(host.model, "surface", s.name, obj) is not None:
                        ok = True
                        break
                if ok:
                    break
            if not ok:
                return placed, f"no room on {host.model.id}"
            placed += 1
        return placed, ""

    def _add_object(self, entry: ObjectEntry, location: ObjectLocation, pose: Pose,
                    oid: str | None = None) -> HomeObject:
        oid = oid or self._next_id(entry.id, self.object_counts, self._taken_ids())
        obj = object_from_catalog(entry, oid, location, pose)
        self.objects.append(obj)
        return obj

    def _object_on(self, host: Furniture, kind: str, name: str, entry: ObjectEntry,
                   yaw_offset: float = 0.0, at: tuple[float, float] | str | None = None) -> HomeObject | None:
        """Put an object on a surface (or in a container) of a piece of furniture, clear of
        the objects already there; positions are in the host's frame."""
        cat = self.catalog.furniture[host.catalog_id]
        if kind == "surface":
            spec = next((s for s in cat.surfaces if s.name == name), None)
            if spec is None:
                return None
            sx, sy, sd, sw, height = spec.offset.x, spec.offset.y, spec.depth, spec.width, spec.height
        else:
            spec = next((c for c in cat.containers if c.name == name), None)
            if spec is None:
                return None
            sx, sy, sd, sw, height = spec.offset.x, spec.offset.y, spec.inner.depth, spec.inner.width, spec.offset.z
        od, ow = entry.dimensions.depth, entry.dimensions.width
        if abs(math.sin(yaw_offset)) > 0.5:
            od, ow = ow, od
        use = self.surface_use.setdefault((host.id, name), [])
        stack = kind == "container"
        if at == "centre":
            positions = [(sx, sy)]
        elif at is not None:
            positions = [at]  # type: ignore[list-item]
        elif od <= sd + 1e-9 and ow <= sw + 1e-9:
            us = np.linspace(sx - (sd - od) / 2, sx + (sd - od) / 2, 5) if sd > od else np.array([sx])
            vs = np.linspace(sy - (sw - ow) / 2, sy + (sw - ow) / 2, 7) if sw > ow else np.array([sy])
            grid = [(float(u), float(v)) for u in us for v in vs]
            order = self.rng.permutation(len(grid))
            positions = [grid[i] for i in order]
        elif stack or (od <= sd + 0.1 and ow <= sw + 0.1):
            positions = [(sx, sy)]
        else:
            return None
        for u, v in positions:
            box = (u - od / 2, u + od / 2, v - ow / 2, v + ow / 2)
            under = [b for b in use if box[0] < b[1] - 1e-6 and b[0] < box[1] - 1e-6 and box[2] < b[3] - 1e-6
                     and b[2] < box[3] - 1e-6]
            if under and not stack:
                continue
            # In a container an object rests on the floor of the space or on the top of what lies under it.
            z = max((b[4] for b in under), default=height)
            x, y, _ = host.pose.to_world(u, v)
            use.append((*box, z + entry.dimensions.height))
            pose = Pose(x=x, y=y, z=host.pose.z + z, yaw=host.pose.yaw + yaw_offset)
            loc = ObjectLocation(kind=kind, room=host.room, furniture=host.id, name=name)  # type: ignore[arg-type]
            return self._add_object(entry, loc, pose)
        return None

    def _object_on_floor(self, geom: RoomGeometry, entry: ObjectEntry) -> HomeObject | None:
        """An object on the floor, its long side along a wall, clear of furniture and door zones."""
        d = entry.dimensions
        along, across = max(d.depth, d.width), min(d.depth, d.width)
        cands = self._gen_wall(geom, along, across, 0.02, []).rounded()
        if not len(cands):
            return None
        fps = _boxes(cands, across, along)
        keep = shapely.contains(geom.ok, fps)
        obstacles = [p for _, _, p in geom.features] + list(geom.door_zones)
        for p in self.placed.get(geom.id, []):
            obstacles.append(p.footprint)
            if p.clearance is not None:
                obstacles.append(p.clearance)
        keep[_touched(fps, obstacles)] = False
        idx = np.flatnonzero(keep)
        if not len(idx):
            return None
        i = idx[int(self.rng.integers(len(idx)))]
        # The object's depth axis runs along the wall when it is the longer side.
        yaw = float(cands.yaw[i]) + (math.pi / 2 if d.depth >= d.width else 0.0)
        pose = Pose(x=float(cands.cx[i]), y=float(cands.cy[i]), yaw=yaw)
        return self._add_object(entry, ObjectLocation(kind="floor", room=geom.id), pose)

    def place_task_objects(self, room_geoms: dict[str, RoomGeometry]) -> None:
        present = {o.catalog_id for o in self.objects}
        furniture = [p.model for rid in self._room_order() for p in self.placed.get(rid, [])]
        for spec in TASK_OBJECTS:
            todo = [cid for cid in spec.catalog_ids
                    if cid not in present and cid in self.catalog.objects and cid not in self.lacking]
            if not todo:
                continue
            done = False
            for cls, kind, name in spec.hosts:
                hosts = [f for f in furniture if f.semantic_class == cls]
                if not hosts:
                    continue
                host = hosts[0]
                ok = True
                for cid in todo:
                    entry = self.catalog.objects[cid]
                    if cls == "range" and host.burners:
                        got = self._pan_on_range(host, kind, name, entry, furniture)
                    else:
                        got = self._object_on(host, kind, name, entry)
                    ok = ok and got is not None
                if ok:
                    done = True
                    break
            if not done and spec.floor_in:
                for rid in self._room_order():
                    room = self.home.room(rid)
                    if room.type in spec.floor_in and rid in room_geoms:
                        done = all(self._object_on_floor(room_geoms[rid], self.catalog.objects[cid]) is not None
                                   for cid in todo)
                        if done:
                            break
            # A home without a host for a task object simply lacks it: the tasks that
            # need it do not apply there (the applicability screen says so).

    def _pan_on_range(self, host: Furniture, kind: str, name: str, entry: ObjectEntry,
                      furniture: list[Furniture]) -> HomeObject | None:
        """A pan on a burner, its handle toward the front: the first burner (front-left) unless
        the pan, handle included, would reach into the furniture beside the range (a fridge's
        door at its corner), else the next burner clear of it, as the home check measures it
        (:data:`homeloop.check.OBJECT_PENETRATION`); the first when none is (the check then says why)."""
        us, vs = _to_local(np.array([b.position[0] for b in host.burners]),
                           np.array([b.position[1] for b in host.burners]), host.pose)
        spots = [(float(u), float(v)) for u, v in zip(us, vs)]
        surface = next((s for s in self.catalog.furniture[host.catalog_id].surfaces if s.name == name), None)
        if surface is None:  # a range without that surface: _object_on says no, as for any host
            return self._object_on(host, kind, name, entry, yaw_offset=math.pi, at=spots[0])
        near = [f for f in furniture if f.room == host.room and f.id != host.id and f.catalog_id in self.catalog.furniture]
        solids, _ = placed_solids([self.catalog.furniture[f.catalog_id] for f in near], near)
        width, depth = entry.dimensions.width, entry.dimensions.depth
        for u, v in spots:
            x, y, _ = host.pose.to_world(u, v)
            pan = box_at(width, depth, entry.dimensions.height,
                         Pose(x=x, y=y, z=host.pose.z + surface.height, yaw=host.pose.yaw + math.pi))
            if not len(overlapping_pairs(pan, solids, OBJECT_PENETRATION)[0]):
                return self._object_on(host, kind, name, entry, yaw_offset=math.pi, at=(u, v))
        return self._object_on(host, kind, name, entry, yaw_offset=math.pi, at=spots[0])

    def _room_order(self) -> list[str]:
        return [r.id for r in self.home.rooms]


# --- filtering placement candidates ------------------------------------------------------------------


def _aranges(start: np.ndarray, stop: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """``np.arange(start[i], stop[i], step)`` for every row at once, value for value as
    numpy makes it (the second value is start + step, the others start + i * (that - start)),
    with the row of each value."""
    count = np.maximum(np.ceil((stop - start) / step), 0).astype(int)
    row = np.repeat(np.arange(len(start)), count)
    i = np.arange(len(row)) - np.repeat(np.cumsum(count) - count, count)
    second = start + step
    values = start[row] + i * (second - start)[row]
    values[i == 1] = second[row[i == 1]]
    return row, values


def _touched(boxes: np.ndarray, shapes: Sequence[BaseGeometry]) -> np.ndarray:
    """The indices of the ``boxes`` that meet any of the ``shapes``. The many boxes go into the
    STRtree and the few shapes query it, each shape prepared once rather than every box."""
    if not len(boxes) or not len(shapes):
        return np.zeros(0, int)
    return np.unique(shapely.STRtree(boxes).query(shapes, predicate="intersects")[1])


def _against_wall(entry: FurnitureEntry, hard: list[Constraint]) -> bool:
    """Whether an item stands with its back to a wall: asked so, or the catalog's way of
    placing it where no constraint puts it elsewhere."""
    kinds = {c.kind for c in hard}
    return "against_wall" in kinds or "corner" in kinds or (
        entry.placement == "against_wall" and not kinds & {"in_counter", "on_counter", "on", "at_feature",
                                                            "around", "in_front_of", "center"})


def _drop_collisions(keep: np.ndarray, cands: _Cands, fps: np.ndarray, d, obstacles: list[BaseGeometry],
                     exempt: list[BaseGeometry]) -> None:
    """Drop candidates whose footprint (grown by :data:`COLLISION_MARGIN`) touches an obstacle,
    or that stand over only part of a feature they may stand over."""
    idx = np.flatnonzero(keep)
    if len(idx) and obstacles:
        col = _boxes(cands.take(idx), d.depth + 2 * COLLISION_MARGIN, d.width + 2 * COLLISION_MARGIN)
        keep[idx[_touched(col, obstacles)]] = False
    idx = np.flatnonzero(keep)
    for fpoly in exempt:
        if not len(idx):
            break
        inter = _overlap_area(fps[idx], fpoly)
        full = min(fpoly.area, d.width * d.depth)
        bad = (inter > 1e-4) & (inter < 0.5 * full)
        keep[idx[bad]] = False


def _drop_in_zones(keep: np.ndarray, fps: np.ndarray, corners: np.ndarray, zones: KeepOut) -> None:
    """Drop candidates overlapping a clear zone by more than :data:`ZONE_OVERLAP_AREA`
    (touching its edge is fine). A corner deep in a zone settles it without measuring."""
    idx = np.flatnonzero(keep)
    if not len(idx) or not len(zones.zones):
        return
    deep = shapely.contains_xy(zones.deep, corners[idx, :, 0], corners[idx, :, 1]).any(axis=1)
    keep[idx[deep]] = False
    idx = idx[~deep]
    zi, ci = shapely.STRtree(fps[idx]).query(zones.zones, predicate="intersects")
    if len(ci):
        inter = shapely.area(shapely.intersection(fps[idx[ci]], zones.zones[zi]))
        keep[idx[np.unique(ci[inter > ZONE_OVERLAP_AREA])]] = False


def _drop_blocked_fronts(keep: np.ndarray, geom: RoomGeometry, cands: _Cands, entry: FurnitureEntry,
                         solid: list[BaseGeometry]) -> None:
    """Drop candidates without the catalog's ``clearance_front`` of free floor in front."""
    idx = np.flatnonzero(keep)
    if not len(idx):
        return
    d, cf = entry.dimensions, entry.clearance_front
    corners = _corners(cands.take(idx), cf - 0.004, d.width - 0.004, ox=d.depth / 2 + cf / 2)
    zone = _rectangles(corners)
    ok = _inside(geom, zone, corners)
    if solid:
        ok[_touched(zone, solid)] = False
    keep[idx[~ok]] = False


# --- placement constraints, vectorised over candidates ------------------------------------------------


def _against_walls(geom: RoomGeometry, kind: str, cands: _Cands, d) -> np.ndarray:
    """Back against a wall face; for ``corner`` also one side against a wall."""
    back = _segments(cands, (-d.depth / 2, -d.width / 2 + 0.02), (-d.depth / 2, d.width / 2 - 0.02))
    ok = shapely.covers(geom.face_band, back)
    if kind == "corner":
        reach = min(d.depth, 0.3)
        sides = [_segments(cands, (-d.depth / 2 + 0.02, sgn * d.width / 2), (-d.depth / 2 + reach, sgn * d.width / 2))
                 for sgn in (1, -1)]
        ok &= shapely.covers(geom.face_band, sides[0]) | shapely.covers(geom.face_band, sides[1])
    return ok


def _relative_to(c: Constraint, cands: _Cands, fps: np.ndarray, d, target: _Placed) -> np.ndarray:
    """``beside``, ``in_front_of``, ``facing`` or ``around`` a placed item, in its frame."""
    tp = target.model.pose
    td = target.entry.dimensions
    u, v = _to_local(cands.cx, cands.cy, tp)
    rel = _wrap(cands.yaw - tp.yaw)
    if c.kind == "beside":
        lo = c.min_distance or 0.0
        hi = c.max_distance if c.max_distance is not None else BESIDE_MAX_GAP
        gapv = np.abs(v) - (td.width / 2 + d.width / 2)
        backs = np.abs((u - d.depth / 2) - (-td.depth / 2))
        return (np.abs(rel) < 1e-2) & (gapv >= lo - 0.01) & (gapv <= hi + 0.01) & (backs <= 0.05)
    if c.kind == "in_front_of":
        lo = c.min_distance if c.min_distance is not None else IN_FRONT_MIN
        hi = c.max_distance if c.max_distance is not None else IN_FRONT_MAX
        gapu = u - d.depth / 2 - td.depth / 2
        facing = np.abs(_wrap(rel - math.pi)) < 1e-2
        return facing & (gapu >= lo - 0.01) & (gapu <= hi + 0.01) & (np.abs(v) <= max(td.width - d.width, 0) / 2 + 0.05)
    ang = np.arctan2(tp.y - cands.cy, tp.x - cands.cx)
    if c.kind == "facing":
        return np.abs(_wrap(ang - cands.yaw)) <= FACING_TOLERANCE
    facing = np.abs(_wrap(ang - cands.yaw)) <= math.radians(5)
    dist = shapely.distance(fps, target.footprint)
    return facing & (dist <= AROUND_MAX_GAP + 0.01)


def _at_counters(geom: RoomGeometry, kind: str, fps: np.ndarray, d) -> np.ndarray:
    """``in_counter`` / ``on_counter``: the share of the footprint over a counter run;
    ``beside_counter``: touching one."""
    n = len(fps)
    if kind == "beside_counter":
        dist = np.full(n, np.inf)
        for ctr in geom.counters:
            dist = np.minimum(dist, shapely.distance(fps, ctr.polygon))
        return dist <= 0.06
    area = d.width * d.depth
    best = np.zeros(n)
    for ctr in geom.counters:
        best = np.maximum(best, _overlap_area(fps, ctr.polygon) / area)
    return best >= (0.8 if kind == "in_counter" else 0.98)


def _at_features(c: Constraint, feats: list[BaseGeometry], fps: np.ndarray, d) -> np.ndarray:
    """``at_feature``: over half of the feature (or of the item); ``near_feature``: within the
    constraint's distances of one."""
    n = len(fps)
    if c.kind == "at_feature":
        best = np.zeros(n)
        for p in feats:
            best = np.maximum(best, _overlap_area(fps, p) / max(min(p.area, d.width * d.depth), 1e-9))
        return best >= 0.5
    lo = c.min_distance or 0.0
    hi = c.max_distance if c.max_distance is not None else NEAR_FEATURE_MAX
    dist = np.full(n, np.inf)
    for p in feats:
        dist = np.minimum(dist, shapely.distance(fps, p))
    return (dist >= lo) & (dist <= hi)


def _overlap_area(boxes: np.ndarray, poly: BaseGeometry) -> np.ndarray:
    """The area each rectangle shares with ``poly`` (0 where they do not meet)."""
    out = np.zeros(len(boxes))
    if not len(boxes):
        return out
    meet = np.flatnonzero(shapely.intersects(boxes, poly))
    if len(meet):
        out[meet] = shapely.area(shapely.intersection(boxes[meet], poly))
    return out


def _inside(geom: RoomGeometry, boxes: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Which rectangles (polygons and their :func:`_corners`) lie inside the room (2 mm tolerance)."""
    if not len(boxes):
        return np.zeros(0, bool)
    ok = shapely.contains_xy(geom.ok, corners[..., 0], corners[..., 1]).all(axis=1)
    if geom.convex:
        return ok
    idx = np.flatnonzero(ok)
    ok[idx] = shapely.contains(geom.ok, boxes[idx])  # the room outline is prepared: asked first, it answers faster
    return ok


def _anchored_first(items: list[ItemRule]) -> list[ItemRule]:
    """Items tied to plan features (in the counter, at a feature) first, the rest after,
    each group in rule order; an item stays after the items it refers to."""
    anchored = {i.key for i in items if any(c.kind in ("in_counter", "at_feature") for c in i.place)
                and not any(c.target for c in i.place if c.kind not in ("at_feature", "near_feature"))}
    return [i for i in items if i.key in anchored] + [i for i in items if i.key not in anchored]


def _failure_name(item: ItemRule) -> str:
    return item.one_of[0] if len(item.one_of) == 1 else item.key


# --- generators relative to other items and to the counter -----------------------------------


def _from_local(tp: Pose, u: np.ndarray, v: np.ndarray, yaw: np.ndarray, q: np.ndarray) -> _Cands:
    c, s = math.cos(tp.yaw), math.sin(tp.yaw)
    return _Cands(tp.x + c * u - s * v, tp.y + s * u + c * v, tp.yaw + yaw, q)


def _gen_beside(tgt: _Placed, width: float, depth: float, c: Constraint) -> _Cands:
    td = tgt.entry.dimensions
    lo = c.min_distance or 0.0
    hi = c.max_distance if c.max_distance is not None else BESIDE_MAX_GAP
    gaps = np.unique(np.clip(np.concatenate([[lo + 0.005], np.arange(lo, hi + 1e-9, 0.02)[1:], [hi]]), lo, hi))
    us, vs, qs = [], [], []
    for side in (1.0, -1.0):
        us.append(np.full(len(gaps), -td.depth / 2 + depth / 2))
        vs.append(side * (td.width / 2 + width / 2 + gaps))
        qs.append(-gaps)
    u, v, q = np.concatenate(us), np.concatenate(vs), np.concatenate(qs)
    return _from_local(tgt.model.pose, u, v, np.zeros(len(u)), q)


def _gen_in_front(tgt: _Placed, width: float, depth: float, c: Constraint) -> _Cands:
    td = tgt.entry.dimensions
    lo = c.min_distance if c.min_distance is not None else IN_FRONT_MIN
    hi = c.max_distance if c.max_distance is not None else IN_FRONT_MAX
    gaps = np.linspace(lo, hi, 5)
    slack = max(td.width - width, 0.0) / 2
    offs = np.unique(np.clip(np.array([0.0, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3]), -slack, slack))
    g, o = np.meshgrid(gaps, offs)
    g, o = g.ravel(), o.ravel()
    u = td.depth / 2 + np.maximum(g, 0.005) + depth / 2
    mid = (lo + hi) / 2
    return _from_local(tgt.model.pose, u, o, np.full(len(u), math.pi), -np.abs(g - mid) - np.abs(o))


def _gen_around(tgt: _Placed, width: float, depth: float) -> _Cands:
    td = tgt.entry.dimensions
    us, vs, yaws, qs = [], [], [], []
    # Long sides (along the table's y axis), then the ends.
    for axis, length, reach in (("y", td.width, td.depth), ("x", td.depth, td.width)):
        k = int(max(length // (width + 0.1), 0))
        if k == 0:
            continue
        pos = (np.arange(k) - (k - 1) / 2) * (length / k)
        for side in (1.0, -1.0):
            off = side * (reach / 2 + depth / 2 + 0.01)
            if axis == "y":
                us.append(np.full(k, off))
                vs.append(pos)
                yaws.append(np.full(k, math.pi if side > 0 else 0.0))
                qs.append(np.full(k, 1.0))
            else:
                us.append(pos)
                vs.append(np.full(k, off))
                yaws.append(np.full(k, -math.pi / 2 if side > 0 else math.pi / 2))
                qs.append(np.zeros(k))
    if not us:
        return _Cands.empty()
    return _from_local(tgt.model.pose, np.concatenate(us), np.concatenate(vs), np.concatenate(yaws),
                       np.concatenate(qs))


def _gen_facing_free(tgt: _Placed, width: float, depth: float) -> _Cands:
    td = tgt.entry.dimensions
    angles = np.arange(16) * (2 * math.pi / 16)
    rs = np.array([0.3, 0.5, 0.8])
    a, r = np.meshgrid(angles, rs)
    a, r = a.ravel(), r.ravel()
    radius = np.hypot(td.depth, td.width) / 2 + depth / 2 + r
    u, v = radius * np.cos(a), radius * np.sin(a)
    yaw = a + math.pi
    return _from_local(tgt.model.pose, u, v, yaw, -r)


def _gen_in_counter(geom: RoomGeometry, width: float, depth: float) -> _Cands:
    parts: list[_Cands] = []
    for ctr in geom.counters:
        lo, hi = -ctr.length / 2 + width / 2, ctr.length / 2 - width / 2
        if hi < lo - 1e-9:
            continue
        s = np.concatenate([np.arange(lo, hi + 1e-9, 0.05), [hi]])
        # Front flush with the counter front; back flush with the wall if the counter is shallower.
        off = ctr.depth / 2 - depth / 2 if ctr.depth >= depth else -ctr.depth / 2 + depth / 2 + WALL_GAP
        centre = ctr.centre[None, :] + s[:, None] * ctr.u[None, :] + ctr.front[None, :] * off
        parts.append(_Cands(centre[:, 0], centre[:, 1], np.full(len(s), math.atan2(ctr.front[1], ctr.front[0])),
                            np.zeros(len(s))))
    return _Cands.concat(parts)


def _gen_beside_counter(geom: RoomGeometry, width: float, depth: float) -> _Cands:
    xs, ys, yaws, qs = [], [], [], []
    for ctr in geom.counters:
        for end in (1.0, -1.0):
            for gap in (0.005, 0.03, 0.06):
                s = end * (ctr.length / 2 + width / 2 + gap)
                off = -ctr.depth / 2 + depth / 2 + WALL_GAP
                centre = ctr.centre + ctr.u * s + ctr.front * off
                xs.append(centre[0])
                ys.append(centre[1])
                yaws.append(math.atan2(ctr.front[1], ctr.front[0]))
                qs.append(1.0 - gap)
    if not xs:
        return _Cands.empty()
    return _Cands(np.array(xs), np.array(ys), np.array(yaws), np.array(qs))


# --- the stage ---------------------------------------------------------------------------------


def furnish(plan: Plan, catalog: Catalog, rng: np.random.Generator, *, fixed: HouseFurnishing | None = None,
            source_kind: str = "swiss_dwellings", seed: int | None = None,
            lacking: frozenset[str] | None = None) -> FurnishResult:
    """Furnish a plan: rooms, walls and openings from the plan, furniture by the
    catalog's room rules, then the objects the tasks need.

    ``rng`` is the only source of randomness (seed it from the build seed, the
    plan key and "furnish"); its first draws say what the household lacks
    (:func:`lacking_items`), unless ``lacking`` names the catalog ids to leave out.
    ``fixed`` items are placed first, verbatim; the rules complete the rest.
    ``source_kind`` and ``seed`` are recorded in the home's ``source``.
    """
    try:
        home = home_shell(plan, source_kind=source_kind, seed=seed, catalog_hash=catalog.version_hash)
    except ValueError as exc:
        return FurnishResult(None, [FurnishFailure("", "", "", f"plan cannot become a home: {exc}")])
    f = _Furnisher(catalog, rng, home, lacking_items(catalog, rng) if lacking is None else lacking)
    geoms: dict[str, RoomGeometry] = {}
    rooms = {r.id: r for r in home.rooms}
    failures: list[FurnishFailure] = []
    if fixed is not None:
        failures += _place_fixed_furniture(f, fixed, rooms, geoms)
        failures += _place_fixed_objects(f, fixed)
    for room in home.rooms:
        if room.id not in geoms:
            geoms[room.id] = RoomGeometry(home, f.geo, room, f.radius)
        if catalog.rule_for(room.type) is not None or _has_counter(home, room):
            f.furnish_room(room, geoms[room.id])
    f.place_task_objects(geoms)
    failures += f.failures
    furniture = [p.model for rid in f._room_order() for p in f.placed.get(rid, [])]
    points = [NamedPoint(name=p.name, room=p.room, x=p.x, y=p.y) for p in fixed.points] if fixed else []
    openings = home.openings
    if fixed is not None and fixed.openable_windows is not None:
        openings = [o.model_copy(update={"openable": o.id in fixed.openable_windows}) if o.kind == "window" else o
                    for o in openings]
    try:
        # The parts are validated models already: the home checks how they refer to each other.
        built = Home(**{**dict(home), "furniture": furniture, "objects": list(f.objects), "points": points,
                        "openings": openings})
    except ValueError as exc:
        return FurnishResult(None, failures + [FurnishFailure("", "", "", f"home does not validate: {exc}")])
    if failures:
        return FurnishResult(None, failures, partial=built)
    return FurnishResult(built, [], partial=built)


def _has_counter(home: Home, room: Room) -> bool:
    return room.space_class == "indoor" and any(x.kind == "counter" for x in home.fixtures_in(room.id))


def _place_fixed_furniture(f: _Furnisher, fixed: HouseFurnishing, rooms: dict[str, Room],
                           geoms: dict[str, RoomGeometry]) -> list[FurnishFailure]:
    failures = []
    for item in fixed.furniture:
        room = rooms.get(item.room)
        if room is None or item.catalog_id not in f.catalog.furniture:
            failures.append(FurnishFailure(item.room, room.type if room else "", item.catalog_id,
                                           "fixed item names an unknown room or catalog id"))
            continue
        if room.id not in geoms:
            geoms[room.id] = RoomGeometry(f.home, f.geo, room, f.radius)
        entry = f.catalog.furniture[item.catalog_id]
        pose = Pose(x=item.x, y=item.y, z=item.z, yaw=math.radians(item.yaw_deg))
        key = _rule_key(f.catalog, room.type, item.catalog_id)
        f._record(entry, geoms[room.id], pose, key, fid=item.id, on_floor=item.z <= 1e-9)
    return failures


def _rule_key(catalog: Catalog, subtype: str, catalog_id: str) -> str:
    rule = catalog.rule_for(subtype)
    for r in ([rule] if rule else []) + ([catalog.rule_for("KITCHEN")] if catalog.rule_for("KITCHEN") else []):
        for it in r.items:
            if catalog_id in it.one_of:
                return it.key
    return catalog_id


def _place_fixed_objects(f: _Furnisher, fixed: HouseFurnishing) -> list[FurnishFailure]:
    failures = []
    models = {p.model.id: p.model for lst in f.placed.values() for p in lst}
    for item in fixed.objects:
        entry = f.catalog.objects.get(item.catalog_id)
        if entry is None:
            failures.append(FurnishFailure(item.room or "", "", item.catalog_id, "unknown catalog object"))
            continue
        if item.furniture is None:
            if item.room is None or item.x is None or item.y is None:
                failures.append(FurnishFailure("", "", item.catalog_id, "a floor object needs room, x and y"))
                continue
            pose = Pose(x=item.x, y=item.y, yaw=math.radians(item.yaw_deg or 0.0))
            f._add_object(entry, ObjectLocation(kind="floor", room=item.room), pose, oid=item.id)
            continue
        host = models.get(item.furniture)
        if host is None:
            failures.append(FurnishFailure(item.room or "", "", item.catalog_id,
                                           f"names unknown furniture {item.furniture!r}"))
            continue
        kind, name = ("surface", item.surface) if item.surface else ("container", item.container)
        if name is None:
            failures.append(FurnishFailure(host.room, "", item.catalog_id, "names no surface or container"))
            continue
        yaw_off = math.radians(item.yaw_deg) - host.pose.yaw if item.yaw_deg is not None else 0.0
        at: tuple[float, float] | str = "centre"
        if item.x is not None and item.y is not None:
            u, v = _to_local(np.array([item.x]), np.array([item.y]), host.pose)
            at = (float(u[0]), float(v[0]))
        got = f._object_on(host, kind, name, entry, yaw_offset=yaw_off, at=at)
        if got is None:
            failures.append(FurnishFailure(host.room, "", item.catalog_id, f"does not fit on {host.id} {name}"))
        elif item.id is not None and got.id != item.id:
            f.objects[-1] = got.model_copy(update={"id": item.id})
    return failures


__all__ = [
    "FixedFurniture",
    "FixedObject",
    "FurnishFailure",
    "FurnishResult",
    "FixedPoint",
    "HouseFurnishing",
    "TASK_OBJECTS",
    "furnish",
    "furnish_house",
    "home_shell",
    "lacking_items",
    "load_house_furnishing",
    "opening_kind",
]

