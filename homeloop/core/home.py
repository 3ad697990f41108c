"""The home file: a floor plan furnished, with objects, devices and cameras.

A :class:`Home` is everything the simulator and the USD export need to know
about one home, in one versioned JSON file (``homes/<home_id>/home.json``):
rooms, walls, openings, furniture, carryable objects, networked devices (with
their fields and accepted values copied from the catalog, so the simulator
needs only this file), cameras and, optionally, people. Since format
``homeloop.home/2`` it also holds the plan's built-in fixtures (sinks,
counters, showers ...), named points scenarios refer to (the parcel spot) and
the placement rules met only by their fallback, so equipping, checking,
drawing and exporting a home need nothing but its file (docs/data-format.md).

Conventions: metres, z up, radians (camera FOV in degrees, as camera
datasheets give it); x/y in the plan's site-local frame (+x east, +y north).
A pose's ``yaw`` is the heading of the thing's front (its +x axis), wrapped
to [-pi, pi]; ``z`` is the height of its origin above the home's floor level.
Polygons are lists of rings of [x, y] points: the outer ring first, then any
holes; rings are not closed (the first point is not repeated).

Lengths are rounded to the millimetre and angles to 1e-4 rad when a home is
built or read, so a home written and read back is equal to itself and
:meth:`Home.to_json` gives the same bytes for the same home.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from itertools import chain
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import orjson
import shapely
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core.catalog import (
    FEATURE_KINDS,
    Contents,
    DeviceEntry,
    FieldSpec,
    FieldValue,
    FurnitureEntry,
    MountKind,
    ObjectEntry,
)
from homeloop.core.errors import HomeLoopError
from homeloop.core.geometry import OPEN_PASSAGE_MIN_LENGTH
from homeloop.core.io import write_text
from homeloop.core.kept import Kept
from homeloop.core.plan import ANCILLARY, INDOOR, OUTDOOR, SERVICE
from homeloop.core.plan import space_class as plan_space_class

#: Version of the home file format; a reader refuses any other.
SCHEMA_VERSION = "homeloop.home/2"
#: Earlier versions, named in the message that refuses them.
RETIRED_VERSIONS = ("homeloop.home/1",)

LENGTH_DECIMALS = 3  # millimetres
ANGLE_DECIMALS = 4  # 1e-4 rad

#: Largest coordinate or length (m) a home file may hold, either sign. A site-local frame spans one
#: site, far less than 100 km; within it floats keep millimetres exact and areas finite.
MAX_EXTENT = 100_000.0

#: Smallest floor area (m²) of a room, by space class (homeloop.core.plan). A space people enter must hold
#: one person standing: a square as wide as the narrowest passage a person walks through upright
#: (OPEN_PASSAGE_MIN_LENGTH). A service space (a shaft, a void) is never entered: any area will do.
MIN_ROOM_AREA: dict[str, float] = {INDOOR: OPEN_PASSAGE_MIN_LENGTH**2, OUTDOOR: OPEN_PASSAGE_MIN_LENGTH**2,
                                   ANCILLARY: OPEN_PASSAGE_MIN_LENGTH**2, SERVICE: 0.0}


class HomeFileError(HomeLoopError, ValueError):
    """A home file that cannot be read: not JSON, another schema version, or invalid."""


class HomeLookupError(KeyError):
    """A name or id a home does not have; the message names the home and what it has."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_HOME_JSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def _round(value: float, decimals: int) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return round(float(value), decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def _metres(value: float) -> float:
    # One comparison refuses NaN, infinities and what lies beyond the extent: a home file holds
    # thousands of lengths, and reading one is on the applicability stage's path.
    if -MAX_EXTENT <= value <= MAX_EXTENT:
        return round(value, LENGTH_DECIMALS) + 0.0  # + 0.0 turns -0.0 (and an int) into a float
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    raise ValueError(f"{value:g} m is beyond the {MAX_EXTENT:,.0f} m a home's coordinates and lengths stay within")


def _kilograms(value: float) -> float:
    return _round(value, 3)


def _angle(value: float) -> float:
    return _round(value, ANGLE_DECIMALS)


def _heading(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    wrapped = _angle(math.remainder(value, 2 * math.pi))
    half_turn = _angle(math.pi)
    return half_turn if wrapped <= -half_turn else wrapped


def _fine(value: float) -> float:
    return _round(value, 4)


Metres = Annotated[float, AfterValidator(_metres)]
"""A length or coordinate (m), rounded to the millimetre, at most :data:`MAX_EXTENT` either sign."""
Angle = Annotated[float, AfterValidator(_angle)]
"""An angle (rad), rounded to 1e-4."""
Heading = Annotated[float, AfterValidator(_heading)]
"""A heading (rad) wrapped to [-pi, pi] (pi, not -pi), rounded to 1e-4."""
Fine = Annotated[float, AfterValidator(_fine)]
"""A unitless or other quantity (directions, fractions, degrees), rounded to 1e-4."""
Kilograms = Annotated[float, AfterValidator(_kilograms), Field(gt=0)]
"""A mass (kg), rounded to the gram."""
Point2 = tuple[Metres, Metres]
Point3 = tuple[Metres, Metres, Metres]
Ring = Annotated[list[Point2], Field(min_length=3)]
Rings = Annotated[list[Ring], Field(min_length=1)]
Vector3 = tuple[Fine, Fine, Fine]
"""A polygon: outer ring, then holes."""


class HomeModel(BaseModel):
    """Base of every home model: unknown keys are errors; assignments are validated."""

    model_config = ConfigDict(
        extra="forbid",
        validate_assignment=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


# --- geometry helpers ----------------------------------------------------------------


#: Shapely polygons already built from home file polygons, by their rings' coordinates.
#: Shapely geometries are immutable, so equal rings can share one polygon.
_POLYGONS: Kept[Polygon] = Kept(20000)


def polygon_from_rings(rings: list[list[tuple[float, float]]]) -> Polygon:
    """A shapely polygon from a home file polygon (outer ring, then holes)."""
    try:
        key = tuple(map(tuple, rings))
        hit = _POLYGONS.get(key)
    except TypeError:  # points given as lists (rings read as plain JSON)
        key = tuple(tuple(map(tuple, ring)) for ring in rings)
        hit = _POLYGONS.get(key)
    if hit is None:
        # One ring (the common case) goes straight to shapely's array constructor.
        hit = _POLYGONS.put(key, shapely.polygons(rings[0]) if len(rings) == 1 else Polygon(rings[0], rings[1:]))
    return hit


def polygon_array(outlines: list[list[list[tuple[float, float]]]]) -> np.ndarray:
    """Shapely polygons of many home file polygons, those of one ring built in one call (reading a
    home checks every polygon it holds, and the applicability stage reads thousands of homes)."""
    out = np.empty(len(outlines), dtype=object)
    single = [i for i, rings in enumerate(outlines) if len(rings) == 1]
    if single:
        counts = [len(outlines[i][0]) for i in single]
        flat = chain.from_iterable(chain.from_iterable(outlines[i][0] for i in single))
        coords = np.fromiter(flat, dtype=float, count=2 * sum(counts)).reshape(-1, 2)
        out[single] = shapely.polygons(shapely.linearrings(coords, indices=np.repeat(np.arange(len(single)), counts)))
    for i in sorted(set(range(len(outlines))) - set(single)):
        out[i] = Polygon(outlines[i][0], outlines[i][1:])
    return out


def rings_from_polygon(geom: BaseGeometry) -> list[list[tuple[float, float]]]:
    """A home file polygon from a shapely polygon: outer ring counter-clockwise,
    holes clockwise, closing points dropped."""
    if geom.geom_type != "Polygon" or geom.is_empty:
        raise ValueError(f"expected a non-empty Polygon, got {geom.geom_type}")
    poly = shapely.geometry.polygon.orient(geom, sign=1.0)
    holes = poly.interiors
    rings = [poly.exterior, *holes] if len(holes) else [poly]
    return [list(map(tuple, shapely.get_coordinates(r)[:-1].tolist())) for r in rings]


class Pose(HomeModel):
    """Where a thing stands: position (m) and the heading of its front (rad)."""

    x: Metres
    y: Metres
    z: Metres = 0.0
    yaw: Heading = 0.0

    def to_world(self, dx: float, dy: float, dz: float = 0.0) -> tuple[float, float, float]:
        """A point given in the thing's own frame (+x front, +y left), in home coordinates."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return (self.x + c * dx - s * dy, self.y + s * dx + c * dy, self.z + dz)

    def direction_to_world(self, dx: float, dy: float, dz: float = 0.0) -> tuple[float, float, float]:
        """A direction given in the thing's own frame, in home coordinates."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return (c * dx - s * dy, s * dx + c * dy, dz)


class CameraPose(Pose):
    """A camera's pose; ``pitch`` tilts the optical axis, negative looks down."""

    pitch: Angle = Field(0.0, ge=-math.pi / 2, le=math.pi / 2)


# --- the parts of a home ----------------------------------------------------------------

SpaceClass = Literal["indoor", "outdoor", "ancillary", "service"]
OpeningKind = Literal["door", "entrance_door", "window", "garage_door"]

#: Home opening kinds of the Swiss Dwellings opening subtypes.
OPENING_KIND_OF_SUBTYPE: dict[str, str] = {"DOOR": "door", "ENTRANCE_DOOR": "entrance_door", "WINDOW": "window"}


class Source(HomeModel):
    """Where the home comes from."""

    kind: Literal["swiss_dwellings", "synthetic", "house"]
    plan: str = Field(description="the plan key (site-floor-apartment)")
    file_sha256: str | None = Field(None, description="sha256 of the source file")
    seed: int | None = Field(None, description="build seed the furnishing drew from")
    catalog_hash: str | None = Field(None, description="Catalog.version_hash used to build the home")


class Units(HomeModel):
    """Fixed units of the file, stated so a reader need not guess."""

    length: Literal["m"] = "m"
    angle: Literal["rad"] = "rad"
    up_axis: Literal["z"] = "z"
    frame: Literal["site-local, +x east, +y north"] = "site-local, +x east, +y north"


class Room(HomeModel):
    """A space of the plan: ``type`` is its Swiss Dwellings area subtype."""

    id: str
    name: str = Field(description="what the agent calls it (kitchen, bedroom 2 ...)")
    type: str
    space_class: SpaceClass
    polygon: Rings
    floor_height: Metres = 0.0
    ceiling_height: Metres = Field(2.6, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _default_class(cls, data: Any) -> Any:
        if isinstance(data, dict) and "space_class" not in data and "type" in data:
            return {**data, "space_class": plan_space_class(str(data["type"]))}
        return data

    @property
    def outdoor(self) -> bool:
        return self.space_class == "outdoor"

    @property
    def indoor(self) -> bool:
        return self.space_class == "indoor"


class Wall(HomeModel):
    """A wall, column or railing: a footprint extruded from the floor."""

    id: str
    kind: Literal["WALL", "COLUMN", "RAILING"] = "WALL"
    polygon: Rings
    height: Metres = Field(2.6, gt=0)


class Opening(HomeModel):
    """A door, entrance door, window or garage door.

    ``sill`` is the bottom of the opening above the floor and ``height`` its
    clear height (the head is at sill + height); ``connects`` names the one or
    two rooms it opens into; ``exterior`` marks openings to the outside.
    """

    id: str
    kind: OpeningKind
    polygon: Rings
    connects: list[str] = Field(max_length=2)
    width: Metres = Field(gt=0)
    sill: Metres = Field(0.0, ge=0)
    height: Metres = Field(gt=0)
    lockable: bool = False
    openable: bool = True
    exterior: bool = False
    is_open: bool = False


class Surface(HomeModel):
    """A support surface of a piece of furniture, in home coordinates."""

    name: str
    height: Metres = Field(gt=0, description="above the room's floor")
    polygon: Rings


class ContainerSpace(HomeModel):
    """An enclosed space of a piece of furniture (a drawer, a drum)."""

    name: str
    polygon: Rings = Field(description="inner footprint, home coordinates")
    bottom: Metres = Field(ge=0, description="inner floor above the room's floor")
    height: Metres = Field(gt=0, description="inner height")
    fits: list[str]
    opened_by: str | None = None


class Part(HomeModel):
    """An articulated part; ``range`` is [closed, open] (rad or m), ``state`` its present value."""

    name: str
    kind: Literal["revolute", "prismatic"]
    axis: Vector3 = Field(description="joint axis, home coordinates (unit vector)")
    hinge: Point3 | None = Field(None, description="a point on the joint axis, home coordinates")
    range: tuple[Angle, Angle]
    state: Angle = 0.0
    opens: str | None = None

    @model_validator(mode="after")
    def _state_in_range(self) -> "Part":
        lo, hi = sorted(self.range)
        if not lo - 1e-9 <= self.state <= hi + 1e-9:
            raise ValueError(f"state {self.state} is outside the range {list(self.range)}")
        return self

    @property
    def is_open(self) -> bool:
        return abs(self.state - self.range[0]) > 1e-6


class Burner(HomeModel):
    """A cooking zone: its centre on the cooktop, home coordinates."""

    name: str
    position: Point3
    diameter: Metres = Field(gt=0)


class Furniture(HomeModel):
    """A placed catalog furniture entry."""

    id: str
    catalog_id: str
    semantic_class: str = Field(alias="class")
    room: str
    pose: Pose
    footprint: Rings
    height: Metres = Field(gt=0)
    mass: Kilograms
    tall: bool = False
    cooking_appliance: bool = False
    surfaces: list[Surface] = []
    containers: list[ContainerSpace] = []
    parts: list[Part] = []
    burners: list[Burner] = []

    @model_validator(mode="after")
    def _names_unique(self) -> "Furniture":
        for what, names in (("surface", [s.name for s in self.surfaces]),
                            ("container", [c.name for c in self.containers]),
                            ("part", [p.name for p in self.parts])):
            if len(set(names)) != len(names):
                raise ValueError(f"duplicate {what} names in {self.id!r}")
        return self

    def surface(self, name: str) -> Surface:
        return next(s for s in self.surfaces if s.name == name)

    def container(self, name: str) -> ContainerSpace:
        return next(c for c in self.containers if c.name == name)

    def part(self, name: str) -> Part:
        return next(p for p in self.parts if p.name == name)


class ObjectLocation(HomeModel):
    """Where an object is: on a surface or in a container of a piece of furniture, or on a room's floor."""

    kind: Literal["surface", "container", "floor"]
    room: str
    furniture: str | None = None
    name: str | None = Field(None, description="the surface or container name")

    @model_validator(mode="after")
    def _complete(self) -> "ObjectLocation":
        on_furniture = self.kind in ("surface", "container")
        if on_furniture and (self.furniture is None or self.name is None):
            raise ValueError(f"a {self.kind} location names the furniture and the {self.kind}")
        if not on_furniture and (self.furniture is not None or self.name is not None):
            raise ValueError("a floor location names no furniture")
        return self


class GraspPoint(HomeModel):
    """A grasp point in the object's frame (see :class:`homeloop.core.catalog.GraspPoint`)."""

    name: str
    offset: Point3
    approach: Vector3


class HomeObject(HomeModel):
    """A placed carryable object."""

    id: str
    catalog_id: str
    semantic_class: str = Field(alias="class")
    label: str
    location: ObjectLocation
    pose: Pose
    size: Point3 = Field(description="width, depth, height (m)")
    mass: Kilograms
    grasp_points: list[GraspPoint] = Field(min_length=1)
    colour: str | None = None
    capacity_l: Fine | None = None
    contents: Contents | None = None
    soil_moisture: Fine | None = Field(None, ge=0, le=1)

    def grasp_points_world(self) -> dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]]:
        """Each grasp point's position and approach direction in home coordinates."""
        return {g.name: (self.pose.to_world(*g.offset), self.pose.direction_to_world(*g.approach))
                for g in self.grasp_points}


class DeviceField(FieldSpec):
    """A device field: its catalog specification and its present value."""

    model_config = ConfigDict(frozen=False, validate_assignment=True)

    value: FieldValue

    @model_validator(mode="after")
    def _value_accepted(self) -> "DeviceField":
        self.check(self.value)
        return self

    @classmethod
    def from_spec(cls, spec: FieldSpec, value: FieldValue = None, *, use_default: bool = True) -> "DeviceField":
        """A field with ``spec``'s accepted values and ``value`` (the spec's default if None)."""
        data = spec.model_dump()
        data["value"] = spec.default if value is None and use_default else value
        return cls.model_validate(data)


class Device(HomeModel):
    """A networked device.

    ``mount`` says how it is fixed (catalog MountKind); ``mounted_on`` names
    the furniture, opening, wall, object or person it is on (None for ceiling
    and floor mounts). ``controls`` lists what it switches (a light switch's
    lights, a plug's furniture), ``monitors`` what it watches (a contact
    sensor's opening, a soil sensor's plant, a leak sensor's dishwasher).
    """

    id: str
    type: str
    category: Literal["sensor", "actuator", "appliance", "camera", "wearable"]
    name: str
    room: str | None = Field(description="None only for worn devices")
    pose: Pose
    mount: MountKind
    mounted_on: str | None = None
    controls: list[str] = []
    monitors: list[str] = []
    agent_visible: bool = True
    matter_device_type: str | None = None
    fields: dict[str, DeviceField] = Field(min_length=1)
    events: list[str] = []

    def value(self, field: str) -> FieldValue:
        return self.fields[field].value

    @property
    def settable_fields(self) -> tuple[str, ...]:
        return tuple(n for n, f in self.fields.items() if f.settable)


class Camera(HomeModel):
    """A house camera. A dome_camera device shares the camera's id."""

    id: str
    room: str
    pose: CameraPose
    hfov_deg: Fine = Field(gt=0, lt=180)
    resolution: tuple[int, int]
    privacy_mode: Literal["none", "people_masked", "image_blocked"] = "none"
    agent_visible: bool = Field(description="listed to the agent; False = records only for evaluation")


class Person(HomeModel):
    """A person placed in the home (scenarios usually place people instead)."""

    id: str
    catalog_id: str
    role: str
    room: str
    pose: Pose
    wears: list[str] = []


FixtureKind = Literal["sink", "counter", "shower", "bathtub", "toilet", "washing_machine_place",
                      "built_in_furniture", "stairs", "ramp", "elevator"]

#: Fixture kind of each Swiss Dwellings feature subtype (the catalog's furnishing
#: rules name the subtypes: ``at_feature:SINK``, ``requires_feature:WASHING_MACHINE``).
FIXTURE_KIND_OF_FEATURE: dict[str, str] = {
    "SINK": "sink", "KITCHEN": "counter", "SHOWER": "shower", "BATHTUB": "bathtub", "TOILET": "toilet",
    "WASHING_MACHINE": "washing_machine_place", "BUILT_IN_FURNITURE": "built_in_furniture",
    "STAIRS": "stairs", "RAMP": "ramp", "ELEVATOR": "elevator",
}
#: The feature subtype of each fixture kind (the inverse of :data:`FIXTURE_KIND_OF_FEATURE`).
FEATURE_OF_FIXTURE_KIND: dict[str, str] = {kind: feature for feature, kind in FIXTURE_KIND_OF_FEATURE.items()}
assert set(FIXTURE_KIND_OF_FEATURE) == set(FEATURE_KINDS) and set(FEATURE_OF_FIXTURE_KIND) == set(
    FixtureKind.__args__), "fixture kinds and feature subtypes must match one to one"


class Fixture(HomeModel):
    """A built-in feature of the plan (a sink, a counter run, a shower ...): it stays
    where the plan draws it, from the room's floor up to ``height``."""

    id: str = Field(description="the plan's feature id")
    kind: FixtureKind
    room: str = Field(description="id of the room holding it")
    polygon: Rings
    height: Metres = Field(gt=0, description="top height above the room's floor")

    @property
    def feature_subtype(self) -> str:
        """The Swiss Dwellings subtype the catalog's furnishing rules name (SINK, KITCHEN ...)."""
        return FEATURE_OF_FIXTURE_KIND[self.kind]


class NamedPoint(HomeModel):
    """A named spot on a room's floor that scenarios refer to (``parcel_spot``, ``porch``)."""

    name: str = Field(description="unique in the home")
    room: str
    x: Metres
    y: Metres


class PlacementException(HomeModel):
    """A device placed where a placement rule is met only by its stated fallback
    (NFPA 72: a smoke alarm 1.8 m from the range where the room has no place 3.0 m away).

    ``rule`` is the rule id of the catalog (``smoke_sensor_cooking_distance``);
    ``value`` is what the placement achieved, ``required`` what the main rule asks
    and ``fallback`` what the fallback allows, all in the rule's unit (m).
    """

    device: str = Field(description="device id")
    rule: str
    value: Metres
    required: Metres
    fallback: Metres

    @model_validator(mode="after")
    def _fallback_below_required(self) -> "PlacementException":
        if self.fallback >= self.required:
            raise ValueError(f"fallback {self.fallback} must be below required {self.required}")
        return self


# --- the home ----------------------------------------------------------------------------------


class Home(HomeModel):
    """One furnished, device-equipped home (the home file, docs/data-format.md)."""

    schema_version: Literal["homeloop.home/2"] = SCHEMA_VERSION
    home_id: str
    source: Source
    units: Units = Field(default_factory=Units)
    rooms: list[Room] = Field(min_length=1)
    walls: list[Wall] = []
    openings: list[Opening] = []
    fixtures: list[Fixture] = []
    furniture: list[Furniture] = []
    objects: list[HomeObject] = []
    devices: list[Device] = []
    cameras: list[Camera] = []
    people: list[Person] = []
    points: list[NamedPoint] = []
    placement_exceptions: list[PlacementException] = []
    equip_profile: str | None = Field(None, description="the equipping policy that placed the devices")

    # -- validation of references between parts

    @model_validator(mode="after")
    def _references(self) -> "Home":
        owners = self._owners()
        rooms = {r.id for r in self.rooms}

        def need_room(rid: str | None, where: str) -> None:
            if rid not in rooms:
                raise ValueError(f"{where}: unknown room {rid!r}")

        for o in self.openings:
            for rid in o.connects:
                need_room(rid, f"opening {o.id!r}")
        for group, items in (("fixture", self.fixtures), ("furniture", self.furniture), ("camera", self.cameras),
                             ("person", self.people)):
            for item in items:
                need_room(item.room, f"{group} {item.id!r}")
        for p in self.points:
            need_room(p.room, f"point {p.name!r}")
        self._check_objects(need_room)
        self._check_devices(owners, need_room)
        self._check_exceptions()
        self._check_geometry()
        return self

    def _outlines(self) -> list[tuple[str, list]]:
        """Every polygon of the home, rooms first, each with the words that name it in a message."""
        named = [(f"room {r.id!r} ({r.name})", r.polygon) for r in self.rooms]
        for what, items in (("wall", self.walls), ("opening", self.openings), ("fixture", self.fixtures)):
            named += [(f"{what} {item.id!r}", item.polygon) for item in items]
        for f in self.furniture:
            named.append((f"furniture {f.id!r}", f.footprint))
            named += [(f"furniture {f.id!r} surface {s.name!r}", s.polygon) for s in f.surfaces]
            named += [(f"furniture {f.id!r} container {c.name!r}", c.polygon) for c in f.containers]
        return named

    def _check_geometry(self) -> None:
        """Every polygon is simple (no crossing edges, e.g. a bow-tie) and every room is as large as
        its space class needs (:data:`MIN_ROOM_AREA`)."""
        named = self._outlines()
        polygons = polygon_array([rings for _, rings in named])
        bad = np.flatnonzero(~shapely.is_valid(polygons))
        if len(bad):
            reason = shapely.is_valid_reason(polygons[bad[0]])
            raise ValueError(f"{named[bad[0]][0]}: the polygon is not a simple polygon ({reason}); "
                             "redraw it without crossing or repeated edges")
        for room, area in zip(self.rooms, shapely.area(polygons[:len(self.rooms)])):
            least = MIN_ROOM_AREA[room.space_class]
            if area < least:
                raise ValueError(f"room {room.id!r} ({room.name}): {area:.3g} m² of floor, less than the "
                                 f"{least:g} m² a room of type {room.type} ({room.space_class}) needs")

    def _owners(self) -> dict[str, str]:
        """Which part owns each id; ids are unique across parts (cameras share a dome camera's)."""
        owners: dict[str, str] = {}
        groups = (("rooms", self.rooms), ("walls", self.walls), ("openings", self.openings),
                  ("fixtures", self.fixtures), ("furniture", self.furniture), ("objects", self.objects),
                  ("devices", self.devices), ("people", self.people))
        for group, items in groups:
            for item in items:
                if item.id in owners:
                    raise ValueError(f"id {item.id!r} of {group} is already used in {owners[item.id]}")
                owners[item.id] = group
        camera_ids = [c.id for c in self.cameras]
        if len(set(camera_ids)) != len(camera_ids):
            raise ValueError("duplicate camera ids")
        for c in self.cameras:
            if c.id in owners and not (owners[c.id] == "devices" and self.device(c.id).type == "dome_camera"):
                raise ValueError(f"camera {c.id!r}: id is used by {owners[c.id]}")
        names = [p.name for p in self.points]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate point names in {sorted(n for n in names if names.count(n) > 1)}")
        return owners

    def _check_objects(self, need_room) -> None:
        furniture = {f.id: f for f in self.furniture}
        for obj in self.objects:
            loc = obj.location
            need_room(loc.room, f"object {obj.id!r}")
            if loc.furniture is None:
                continue
            host = furniture.get(loc.furniture)
            if host is None:
                raise ValueError(f"object {obj.id!r}: unknown furniture {loc.furniture!r}")
            names = [s.name for s in host.surfaces] if loc.kind == "surface" else [c.name for c in host.containers]
            if loc.name not in names:
                raise ValueError(f"object {obj.id!r}: furniture {host.id!r} has no {loc.kind} {loc.name!r}")

    def _check_devices(self, owners: dict[str, str], need_room) -> None:
        camera_ids = {c.id for c in self.cameras}
        for d in self.devices:
            if d.room is not None:
                need_room(d.room, f"device {d.id!r}")
            elif d.mount != "worn":
                raise ValueError(f"device {d.id!r}: only worn devices may have no room")
            for ref in [d.mounted_on, *d.controls, *d.monitors]:
                if ref is not None and ref not in owners:
                    raise ValueError(f"device {d.id!r}: unknown id {ref!r}")
            if d.type == "dome_camera" and d.id not in camera_ids:
                raise ValueError(f"device {d.id!r}: a dome camera needs a camera with the same id")

    def _check_exceptions(self) -> None:
        devices = {d.id for d in self.devices}
        seen: set[tuple[str, str]] = set()
        for e in self.placement_exceptions:
            if e.device not in devices:
                raise ValueError(f"placement exception of rule {e.rule!r}: unknown device {e.device!r}")
            if (e.device, e.rule) in seen:
                raise ValueError(f"device {e.device!r}: rule {e.rule!r} has two placement exceptions")
            seen.add((e.device, e.rule))

    # -- lookups

    def room(self, room_id: str) -> Room:
        return _find(self.rooms, room_id, "room")

    def opening(self, opening_id: str) -> Opening:
        return _find(self.openings, opening_id, "opening")

    def furniture_item(self, furniture_id: str) -> Furniture:
        return _find(self.furniture, furniture_id, "furniture")

    def object(self, object_id: str) -> HomeObject:
        return _find(self.objects, object_id, "object")

    def device(self, device_id: str) -> Device:
        return _find(self.devices, device_id, "device")

    def camera(self, camera_id: str) -> Camera:
        return _find(self.cameras, camera_id, "camera")

    def rooms_of_type(self, *types: str) -> list[Room]:
        return [r for r in self.rooms if r.type in types]

    def furniture_in(self, room_id: str) -> list[Furniture]:
        return [f for f in self.furniture if f.room == room_id]

    def devices_of_type(self, device_type: str) -> list[Device]:
        return [d for d in self.devices if d.type == device_type]

    def fixtures_of_kind(self, *kinds: str) -> list[Fixture]:
        """The fixtures of these kinds (``"sink"``, ``"counter"`` ...), in file order."""
        unknown = sorted(set(kinds) - set(FEATURE_OF_FIXTURE_KIND))
        if unknown:
            raise ValueError(f"no fixture kind {', '.join(map(repr, unknown))}; "
                             f"the kinds are {', '.join(FEATURE_OF_FIXTURE_KIND)}")
        return [f for f in self.fixtures if f.kind in kinds]

    def fixtures_in(self, room_id: str) -> list[Fixture]:
        return [f for f in self.fixtures if f.room == room_id]

    def point(self, name: str) -> NamedPoint:
        """The named point ``name``; :class:`HomeLookupError` names the home and its points if absent."""
        for p in self.points:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.points) or "none"
        raise HomeLookupError(f"home {self.home_id} has no point {name!r}; its points: {known}")

    def placement_exception(self, device_id: str, rule: str) -> PlacementException | None:
        """The recorded exception of ``rule`` for a device, if the device was placed by its fallback."""
        return next((e for e in self.placement_exceptions if e.device == device_id and e.rule == rule), None)

    # -- geometry (shapely)

    def room_polygon(self, room_id: str) -> Polygon:
        return polygon_from_rings(self.room(room_id).polygon)

    def room_polygons(self) -> dict[str, Polygon]:
        return {r.id: polygon_from_rings(r.polygon) for r in self.rooms}

    def wall_polygons(self) -> dict[str, Polygon]:
        return {w.id: polygon_from_rings(w.polygon) for w in self.walls}

    def opening_polygons(self) -> dict[str, Polygon]:
        return {o.id: polygon_from_rings(o.polygon) for o in self.openings}

    def furniture_footprints(self) -> dict[str, Polygon]:
        return {f.id: polygon_from_rings(f.footprint) for f in self.furniture}

    def room_at(self, x: float, y: float) -> str | None:
        """The id of the room containing the point, if any."""
        point = shapely.Point(x, y)
        for rid, poly in self.room_polygons().items():
            if poly.covers(point):
                return rid
        return None

    @property
    def indoor_area(self) -> float:
        """Indoor floor area (m²)."""
        return float(sum(polygon_from_rings(r.polygon).area for r in self.rooms if r.indoor))

    # -- counts

    def device_counts(self, agent_visible_only: bool = False) -> dict[str, int]:
        """Number of devices of each type, types in sorted order."""
        counts = Counter(d.type for d in self.devices if d.agent_visible or not agent_visible_only)
        return dict(sorted(counts.items()))

    @property
    def agent_camera_count(self) -> int:
        return sum(1 for c in self.cameras if c.agent_visible)

    @property
    def evaluation_camera_count(self) -> int:
        return sum(1 for c in self.cameras if not c.agent_visible)

    # -- files

    def content_digest(self) -> str:
        """The sha256 of what the home holds now (its JSON, not validated again): what is kept of a home
        by its content is keyed by it, so a home edited in place reads otherwise."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()

    def to_json(self) -> str:
        """The home file text: sorted keys, two-space indent, trailing newline.

        The home is validated again first, so changes made to nested lists
        after construction are checked and rounded too.
        """
        checked = type(self).model_validate(self.model_dump())
        # orjson writes the text json.dumps(indent=2, sort_keys=True, ensure_ascii=False) does, much
        # faster: json's indenting encoder is pure Python (tests/test_home.py holds them equal).
        return orjson.dumps(checked.model_dump(mode="json"), option=_HOME_JSON_OPTIONS).decode()

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the home file atomically."""
        return write_text(path, self.to_json())

    @classmethod
    def from_json(cls, text: str, where: str = "<home file>") -> "Home":
        """A home from home file text; :class:`HomeFileError` names ``where`` on failure."""
        try:
            # A valid file, the usual case: pydantic parses and validates in one pass, faster than
            # parsing first. Whatever fails is explained by the checks below.
            return cls.model_validate_json(text)
        except ValidationError:
            pass
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise HomeFileError(f"{where}: not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise HomeFileError(f"{where}: a home file is a JSON object")
        version = data.get("schema_version")
        if version in RETIRED_VERSIONS:
            raise HomeFileError(f"{where}: home file format {version} is no longer read; "
                                "rebuild the home set (homeloop build …)")
        if version != SCHEMA_VERSION:
            raise HomeFileError(
                f"{where}: home file schema_version {version!r} is not supported; "
                f"this version of HomeLoop reads {SCHEMA_VERSION!r}"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors()
            more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
            raise HomeFileError(f"{where}: {_problem(data, errors[0])}{more}") from None

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> "Home":
        """Read and validate a home file."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"), str(path))


def _find(items: list[Any], item_id: str, what: str) -> Any:
    for item in items:
        if item.id == item_id:
            return item
    raise KeyError(f"no {what} {item_id!r}")


#: The word naming one item of each list of a home file, in messages.
_ITEM_WORDS = {"rooms": "room", "walls": "wall", "openings": "opening", "fixtures": "fixture",
               "furniture": "furniture", "objects": "object", "devices": "device", "cameras": "camera",
               "people": "person", "points": "point", "placement_exceptions": "placement exception"}


def _problem(data: dict[str, Any], error: Any) -> str:
    """One validation error in words: the item it is about (by its id or name), the field, the reason."""
    loc, message = error["loc"], error["msg"].removeprefix("Value error, ")
    if not loc:
        return message
    item = ""
    if len(loc) > 1 and loc[0] in _ITEM_WORDS and isinstance(loc[1], int):
        entries = data.get(loc[0])
        entry = entries[loc[1]] if isinstance(entries, list) and loc[1] < len(entries) else None
        key = (entry.get("id") or entry.get("name") or entry.get("device")) if isinstance(entry, dict) else None
        item = f"{_ITEM_WORDS[loc[0]]} {key!r} " if isinstance(key, str) else ""
    return f"{item}({_loc(loc)}): {message}"


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return f"field {out}" if out else "home"


# --- building parts of a home from catalog entries --------------------------------------------


def _rect_rings(pose: Pose, cx: float, cy: float, depth: float, width: float) -> list[list[tuple[float, float]]]:
    """A rectangle given in a thing's frame (centre, extent along x and y), in home coordinates."""
    hx, hy = depth / 2, width / 2
    corners = [(cx - hx, cy - hy), (cx + hx, cy - hy), (cx + hx, cy + hy), (cx - hx, cy + hy)]
    return [[pose.to_world(x, y)[:2] for x, y in corners]]


_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def furniture_from_catalog(entry: FurnitureEntry, furniture_id: str, room: str, pose: Pose) -> Furniture:
    """A catalog furniture entry placed at ``pose``: footprint, surfaces, containers,
    parts (closed) and burners computed in home coordinates."""
    d = entry.dimensions
    surfaces = [
        Surface(name=s.name, height=pose.z + s.height,
                polygon=_rect_rings(pose, s.offset.x, s.offset.y, s.depth, s.width))
        for s in entry.surfaces
    ]
    containers = [
        ContainerSpace(name=c.name, polygon=_rect_rings(pose, c.offset.x, c.offset.y, c.inner.depth, c.inner.width),
                       bottom=pose.z + c.offset.z, height=c.inner.height, fits=list(c.fits), opened_by=c.opened_by)
        for c in entry.containers
    ]
    parts = [
        Part(name=p.name, kind=p.kind, axis=pose.direction_to_world(*_AXES[p.axis]),
             hinge=pose.to_world(p.hinge.x, p.hinge.y, p.hinge.z), range=p.range, state=p.range[0], opens=p.opens)
        for p in entry.parts
    ]
    burners = [
        Burner(name=b.name, position=pose.to_world(b.offset.x, b.offset.y, b.offset.z), diameter=b.diameter)
        for b in entry.burners
    ]
    return Furniture(
        id=furniture_id, catalog_id=entry.id, semantic_class=entry.semantic_class, room=room, pose=pose,
        footprint=_rect_rings(pose, 0.0, 0.0, d.depth, d.width), height=d.height, mass=entry.mass,
        tall=entry.tall, cooking_appliance=entry.cooking_appliance, surfaces=surfaces, containers=containers,
        parts=parts, burners=burners,
    )


def object_from_catalog(entry: ObjectEntry, object_id: str, location: ObjectLocation, pose: Pose) -> HomeObject:
    """A catalog object placed at ``pose`` (its base centre) and ``location``."""
    d = entry.dimensions
    return HomeObject(
        id=object_id, catalog_id=entry.id, semantic_class=entry.semantic_class, label=entry.label,
        location=location, pose=pose, size=(d.width, d.depth, d.height), mass=entry.mass,
        grasp_points=[GraspPoint(name=g.name, offset=(g.offset.x, g.offset.y, g.offset.z), approach=g.approach)
                      for g in entry.grasp_points],
        colour=entry.colour, capacity_l=entry.capacity_l, contents=entry.contents, soil_moisture=entry.soil_moisture,
    )


def device_from_catalog(
    entry: DeviceEntry,
    device_id: str,
    room: str | None,
    pose: Pose,
    *,
    mount: MountKind | None = None,
    mounted_on: str | None = None,
    controls: list[str] | None = None,
    monitors: list[str] | None = None,
    agent_visible: bool = True,
    values: dict[str, FieldValue] | None = None,
) -> Device:
    """A device of a catalog type: fields and accepted values copied from the
    catalog, present values from ``values`` or the catalog defaults."""
    values = values or {}
    unknown = set(values) - set(entry.fields)
    if unknown:
        raise ValueError(f"{entry.id} has no fields {sorted(unknown)}")
    fields = {name: DeviceField.from_spec(spec, values.get(name, spec.default), use_default=False)
              for name, spec in entry.fields.items()}
    return Device(
        id=device_id, type=entry.id, category=entry.category, name=entry.name, room=room, pose=pose,
        mount=mount or entry.placement.mount, mounted_on=mounted_on, controls=list(controls or []),
        monitors=list(monitors or []), agent_visible=agent_visible, matter_device_type=entry.matter.device_type,
        fields=fields, events=list(entry.events),
    )


def camera_from_catalog(entry: DeviceEntry, camera_id: str, room: str, pose: CameraPose, *,
                        agent_visible: bool, privacy_mode: str = "none") -> Camera:
    """A camera with a camera device type's default optics."""
    if entry.camera is None:
        raise ValueError(f"{entry.id} is not a camera device type")
    return Camera(id=camera_id, room=room, pose=pose, hfov_deg=entry.camera.hfov_deg,
                  resolution=entry.camera.resolution, privacy_mode=privacy_mode,  # type: ignore[arg-type]
                  agent_visible=agent_visible)
