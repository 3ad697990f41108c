"""The catalog: furniture, carryable objects, networked device types, robot
bodies, people and furnishing rules, loaded from the YAML files of ``homeloop/catalog/``.

Data lives in YAML; this module only says what a valid entry looks like
(pydantic models, unknown keys rejected everywhere) and loads it.

Each YAML file is a mapping of one or more *sections* to a list of entries::

    furniture: [...]   objects: [...]   devices: [...]
    robots: [...]      people: [...]    room_rules: [...]
    possessions: [...]

so a section may be split over several files. Every entry has an ``id``,
unique within its section.

Item frame (furniture and objects): origin at the centre of the footprint on
the floor (or on the surface the object stands on); **+x points out of the
item's front** (the side a person uses: a bed's foot end, a fridge's door, a
sofa's seat), +y to the item's left, +z up. ``width`` is the extent along y,
``depth`` along x, ``height`` along z. "Against a wall" means the back (-x
side) touches the wall. Offsets, axes and grasp points are in this frame;
lengths in metres, angles in radians, masses in kilograms.

Lookups: ``catalog.furniture[id]``, ``catalog.objects[id]``,
``catalog.devices[type]``, ``catalog.robots[id]``, ``catalog.people[id]``,
``catalog.room_rules[area_subtype]``, ``catalog.possessions[id]``.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    ValidationError,
    field_validator,
    model_validator,
)

from homeloop.core.errors import HomeLoopError
from homeloop.core.ids import DEFAULT_ROBOT as DEFAULT_ROBOT
from homeloop.core.io import load_yaml

#: Environment variable naming a catalog folder to use instead of the repository's.
CATALOG_ENV = "HOMELOOP_CATALOG"

#: The catalog shipped with the package: the YAML files of ``homeloop/catalog/`` (package data).
DEFAULT_CATALOG_DIR = Path(__file__).resolve().parent.parent / "catalog"

#: Feature kinds Swiss Dwellings draws (docs/data-format.md); furnishing rules may target them.
FEATURE_KINDS = frozenset({"SINK", "WASHING_MACHINE", "BUILT_IN_FURNITURE", "KITCHEN", "SHOWER",
                           "BATHTUB", "STAIRS", "RAMP", "TOILET", "ELEVATOR"})

SECTIONS = ("furniture", "objects", "devices", "robots", "people", "room_rules", "possessions", "materials",
            "palettes")


class CatalogError(HomeLoopError, ValueError):
    """A catalog file that cannot be read or an entry that is not valid.

    Each line of the message names the file, the entry id and the field.
    """


class CatalogModel(BaseModel):
    """Base of every catalog model: unknown keys are errors, entries are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True, validate_by_alias=True)


def _unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ValueError(f"duplicate {what} {n!r}")
        seen.add(n)


# --- geometry building blocks ------------------------------------------------------


class Dimensions(CatalogModel):
    """Outer size (m): ``width`` along the item's y axis, ``depth`` along x, ``height`` along z."""

    width: PositiveFloat
    depth: PositiveFloat
    height: PositiveFloat


class Offset(CatalogModel):
    """A point in the item frame (m)."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0


Shape = Literal["box", "cylinder"]
"""Simple geometry for meshes: a box of the dimensions, or an upright cylinder
whose diameter is the smaller of width and depth."""


# --- furniture ------------------------------------------------------------------------


class SupportSurface(CatalogModel):
    """A horizontal surface objects can be put on (a table top, a shelf)."""

    name: str
    height: PositiveFloat = Field(description="height of the surface above the floor (m)")
    width: PositiveFloat = Field(description="extent along the item's y axis (m)")
    depth: PositiveFloat = Field(description="extent along the item's x axis (m)")
    offset: Offset = Field(default_factory=Offset, description="centre of the surface in the item frame (z ignored)")


class Container(CatalogModel):
    """An enclosed space that holds objects (a drawer, a drum, a fridge compartment)."""

    name: str
    inner: Dimensions = Field(description="inner size of the space (m)")
    offset: Offset = Field(default_factory=Offset, description="centre of the inner floor in the item frame")
    fits: list[str] = Field(min_length=1, description="object classes that may be put inside")
    opened_by: str | None = Field(None, description="articulated part that must be open to reach inside")


class ArticulatedPart(CatalogModel):
    """A part that moves: a door (revolute) or a drawer (prismatic).

    ``axis`` is the joint axis in the item frame; ``range`` is [closed, open]
    in radians (revolute) or metres (prismatic); the part starts closed.
    """

    name: str
    kind: Literal["revolute", "prismatic"]
    axis: Literal["x", "y", "z"]
    range: tuple[float, float]
    hinge: Offset = Field(default_factory=Offset, description="a point on the joint axis in the item frame")
    opens: str | None = Field(None, description="container this part gives access to")
    note: str | None = None

    @model_validator(mode="after")
    def _range_is_sane(self) -> "ArticulatedPart":
        lo, hi = self.range
        if lo == hi:
            raise ValueError("range must not be empty")
        limit = 2 * math.pi if self.kind == "revolute" else 2.0
        if max(abs(lo), abs(hi)) > limit:
            unit = "rad" if self.kind == "revolute" else "m"
            raise ValueError(f"range {self.range} exceeds {limit:.3f} {unit} for a {self.kind} part")
        return self


class Burner(CatalogModel):
    """A cooking zone on a cooktop; ``offset`` is its centre on the top surface."""

    name: str
    offset: Offset
    diameter: PositiveFloat


Affordance = Literal["sit", "lie", "work", "eat", "watch_tv", "store", "cook", "wash_dishes",
                     "wash_clothes", "dry_clothes", "cool_food", "display"]


class FurnitureEntry(CatalogModel):
    """A piece of furniture, an appliance or decor: something that is placed, not carried."""

    id: str
    name: str
    semantic_class: str = Field(alias="class", description="semantic class (bed, sofa, fridge ...)")
    category: Literal["furniture", "appliance", "decor"] = "furniture"
    dimensions: Dimensions
    shape: Shape = "box"
    clearance_front: NonNegativeFloat = Field(0.0, description="free floor needed in front of the item to use it (m)")
    placement: Literal["against_wall", "free"] = Field(description="whether the item's back goes to a wall")
    tall: bool = Field(False, description="tall enough to block a window: never place it in front of one")
    mass: PositiveFloat
    surfaces: list[SupportSurface] = []
    containers: list[Container] = []
    parts: list[ArticulatedPart] = []
    burners: list[Burner] = []
    cooking_appliance: bool = Field(False, description="counts as a cooking appliance for smoke-sensor spacing")
    device: str | None = Field(None, description="networked device type built into the item (catalog devices id)")
    affordances: list[Affordance] = []
    note: str | None = None

    @model_validator(mode="after")
    def _parts_fit(self) -> "FurnitureEntry":
        _unique([s.name for s in self.surfaces], "surface")
        _unique([c.name for c in self.containers], "container")
        _unique([p.name for p in self.parts], "part")
        parts = {p.name for p in self.parts}
        containers = {c.name for c in self.containers}
        for c in self.containers:
            if c.opened_by is not None and c.opened_by not in parts:
                raise ValueError(f"container {c.name!r} is opened by unknown part {c.opened_by!r}")
        for p in self.parts:
            if p.opens is not None and p.opens not in containers:
                raise ValueError(f"part {p.name!r} opens unknown container {p.opens!r}")
        for s in self.surfaces:
            if s.height > self.dimensions.height + 1e-9:
                raise ValueError(f"surface {s.name!r} is higher than the item")
        if self.cooking_appliance and not self.burners:
            raise ValueError("a cooking appliance needs burners")
        return self

    @property
    def cls(self) -> str:
        return self.semantic_class


# --- carryable objects ----------------------------------------------------------------


class GraspPoint(CatalogModel):
    """Where a hand takes the object: a point in the object frame and the
    direction the hand moves along to reach it (need not be normalised)."""

    name: str
    offset: Offset
    approach: tuple[float, float, float]

    @field_validator("approach")
    @classmethod
    def _non_zero(cls, v: tuple[float, float, float]) -> tuple[float, float, float]:
        if math.hypot(*v) < 1e-9:
            raise ValueError("approach direction must not be zero")
        return v


class Contents(CatalogModel):
    """What an object holds when a scenario places it."""

    substance: Literal["water", "oil", "soil", "pills", "food", "paper"]
    amount: NonNegativeFloat
    unit: Literal["l", "kg", "count"]


class ObjectEntry(CatalogModel):
    """A carryable object."""

    id: str
    name: str
    semantic_class: str = Field(alias="class")
    label: str = Field(description="the label perception returns for it")
    dimensions: Dimensions
    shape: Shape = "box"
    mass: PositiveFloat
    grasp_points: list[GraspPoint] = Field(min_length=1)
    colour: str | None = None
    capacity_l: PositiveFloat | None = Field(None, description="volume it can hold (litres)")
    contents: Contents | None = None
    soil_moisture: float | None = Field(None, ge=0.0, le=1.0, description="initial volumetric soil moisture (0-1)")
    note: str | None = None

    @model_validator(mode="after")
    def _grasps_unique(self) -> "ObjectEntry":
        _unique([g.name for g in self.grasp_points], "grasp point")
        return self

    @property
    def cls(self) -> str:
        return self.semantic_class


# --- networked devices ----------------------------------------------------------------

FieldValue = Union[bool, int, float, str, None]


class FieldSpec(CatalogModel):
    """A readable (and perhaps settable) field of a device, and the values it accepts.

    ``type``: bool, int, float, enum (one of ``values``), string, or timestamp
    (simulated seconds since the episode started). Numbers may carry ``min`` /
    ``max`` (inclusive) and a ``unit``. ``matter`` names the Matter cluster
    attribute the field follows, where one exists.
    """

    type: Literal["bool", "int", "float", "enum", "string", "timestamp"]
    values: list[str] | None = None
    min: float | None = None
    max: float | None = None
    unit: str | None = None
    default: FieldValue = None
    nullable: bool = False
    settable: bool = False
    matter: str | None = None
    description: str

    @model_validator(mode="after")
    def _consistent(self) -> "FieldSpec":
        if self.type == "enum" and not self.values:
            raise ValueError("an enum field needs values")
        if self.type != "enum" and self.values is not None:
            raise ValueError("values are only for enum fields")
        if (self.min is not None or self.max is not None) and self.type not in ("int", "float", "timestamp"):
            raise ValueError("min/max are only for numeric fields")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("min is above max")
        self.check(self.default)
        return self

    def check(self, value: FieldValue) -> FieldValue:
        """``value`` if this field accepts it, else ``ValueError`` saying why."""
        if value is None:
            if self.nullable:
                return None
            raise ValueError("value must not be null")
        t = self.type
        if t == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"expected true or false, got {value!r}")
            return value
        if t in ("int", "float", "timestamp"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"expected a number, got {value!r}")
            if t == "int" and not float(value).is_integer():
                raise ValueError(f"expected an integer, got {value!r}")
            if self.min is not None and value < self.min:
                raise ValueError(f"{value!r} is below the minimum {self.min}")
            if self.max is not None and value > self.max:
                raise ValueError(f"{value!r} is above the maximum {self.max}")
            return int(value) if t == "int" else value
        if t == "enum":
            if value not in (self.values or []):
                raise ValueError(f"expected one of {self.values}, got {value!r}")
            return value
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        return value


class MatterRef(CatalogModel):
    """The Matter device type and clusters a device type follows (null where none exists)."""

    device_type: str | None
    clusters: list[str] = []
    note: str | None = None


class KeepAway(CatalogModel):
    """A minimum horizontal distance from other things, with its source.

    ``id`` names the rule in home check findings and in the placement
    exceptions a home records. ``away_from`` is a furniture class or
    ``cooking_appliance`` (any furniture flagged so). Where no position in the
    room satisfies ``min_distance``, ``fallback_distance`` may be used instead,
    and the home records it (docs/catalog.md).
    """

    id: str
    away_from: str
    min_distance: PositiveFloat
    fallback_distance: PositiveFloat | None = None
    source: str

    @model_validator(mode="after")
    def _fallback_below_min(self) -> "KeepAway":
        if self.fallback_distance is not None and self.fallback_distance >= self.min_distance:
            raise ValueError("fallback_distance must be below min_distance")
        return self


MountKind = Literal["ceiling", "wall", "floor", "on_furniture", "built_in", "at_door", "on_window",
                    "on_opening", "in_plant_pot", "worn"]


class DevicePlacement(CatalogModel):
    """Where devices of a type go in a home.

    - ``mount``: ceiling; wall (at ``height`` above the floor); floor;
      on_furniture (standing on a support surface of furniture of a class in
      ``attached_to``); built_in (part of furniture of a class in
      ``attached_to``); at_door / on_window / on_opening (on the frame of an
      opening of a kind in ``attached_to``: door, entrance_door, window,
      garage_door); in_plant_pot (an object of a class in ``attached_to``);
      worn (by a person of a role in ``attached_to``).
    - ``per``: one device per room (of the area subtypes in ``rooms``; an
      empty list means every indoor room), per matching opening, per matching
      furniture (classes in ``attached_to``), per matching object, per person, or one
      per home (in a room of a subtype in ``rooms``, the first that exists).
    - ``required``: a home without it is incomplete (False: placed where it fits).
    - ``near`` / ``max_distance``: must lie within ``max_distance`` (m) of
      furniture of these classes or plan features (SINK, KITCHEN ...).
    - ``keep_away``: minimum distances; ``min_wall_distance``: from any wall.
    """

    mount: MountKind
    height: PositiveFloat | None = Field(None, description="mounting height above the floor (m), wall mounts")
    attached_to: list[str] = []
    per: Literal["room", "opening", "furniture", "object", "person", "home"]
    rooms: list[str] = []
    exterior_only: bool = Field(False, description="openings: only those between indoors and outdoors")
    near: list[str] = []
    max_distance: PositiveFloat | None = None
    keep_away: list[KeepAway] = []
    min_wall_distance: NonNegativeFloat | None = None
    required: bool = True
    note: str | None = None

    def keep_away_from(self, away_from: str) -> KeepAway | None:
        """The distance rule from ``away_from`` (``cooking_appliance``, a furniture class), if any."""
        return next((k for k in self.keep_away if k.away_from == away_from), None)


class CameraOptics(CatalogModel):
    """Default optics of a camera device type."""

    hfov_deg: float = Field(gt=0, lt=180)
    resolution: tuple[PositiveInt, PositiveInt]
    pitch_deg: float = Field(0.0, ge=-90, le=90, description="default tilt; negative looks down")


class DeviceEntry(CatalogModel):
    """A networked device type: its fields, the events it raises, where it goes."""

    id: str
    name: str
    category: Literal["sensor", "actuator", "appliance", "camera", "wearable"]
    matter: MatterRef
    fields: dict[str, FieldSpec] = Field(min_length=1)
    events: list[str] = Field([], description="events the device raises (wake events for tasks)")
    placement: DevicePlacement
    camera: CameraOptics | None = None
    description: str

    @model_validator(mode="after")
    def _camera_for_cameras(self) -> "DeviceEntry":
        if (self.category == "camera") != (self.camera is not None):
            raise ValueError("camera optics are given exactly for camera devices")
        return self

    @property
    def readable_fields(self) -> tuple[str, ...]:
        return tuple(self.fields)

    @property
    def settable_fields(self) -> tuple[str, ...]:
        return tuple(n for n, f in self.fields.items() if f.settable)


# --- robot bodies ---------------------------------------------------------------------


class SpecGroup(CatalogModel):
    """A group of specification values; ``estimated`` marks values not published by the vendor."""

    estimated: bool = False
    note: str | None = None


class RobotBody(SpecGroup):
    width: PositiveFloat = Field(description="widest part of the body, arms at rest (m)")
    height: PositiveFloat = Field(description="standing height (m); the lowest setting for adjustable bodies")
    max_height: PositiveFloat | None = Field(None, description="highest setting of a lifting torso (m)")
    mass: PositiveFloat


class RobotBase(SpecGroup):
    kind: Literal["legged", "wheeled"]
    length: PositiveFloat = Field(description="footprint along the driving direction (m)")
    width: PositiveFloat = Field(description="footprint across (m)")


class RobotSpeeds(SpecGroup):
    """How fast the body drives and turns on the spot (the catalog's ``motion`` group)."""

    max_speed: PositiveFloat = Field(description="m/s")
    max_turn_rate: PositiveFloat | None = Field(None, description="rad/s")


class RobotReach(SpecGroup):
    min_grasp_height: NonNegativeFloat
    max_grasp_height: PositiveFloat
    horizontal_reach: PositiveFloat = Field(description="from the body's front edge (m)")

    @model_validator(mode="after")
    def _ordered(self) -> "RobotReach":
        if self.min_grasp_height >= self.max_grasp_height:
            raise ValueError("min_grasp_height must be below max_grasp_height")
        return self


class RobotPayload(SpecGroup):
    kg: PositiveFloat = Field(description="mass the robot can carry in its hand(s)")


class RobotHands(SpecGroup):
    count: PositiveInt
    kind: str
    fingers: PositiveInt


class RobotCamera(SpecGroup):
    model: str
    hfov_deg: float = Field(gt=0, lt=180)
    resolution: tuple[PositiveInt, PositiveInt]
    height: PositiveFloat | None = Field(None, description="above the floor (m)")


class RobotEntry(CatalogModel):
    """A robot body: size, speed, reach, payload, hands and head camera."""

    id: str
    name: str
    vendor: str
    form: Literal["humanoid", "quadruped", "mobile_manipulator"]
    source: str = Field(description="where the values come from (vendor specification pages)")
    body: RobotBody
    base: RobotBase
    motion: RobotSpeeds
    reach: RobotReach
    payload: RobotPayload
    hands: RobotHands
    head_camera: RobotCamera
    torso_lift: bool = False
    note: str | None = None

    @property
    def clearance_width(self) -> float:
        """Width the path planner must keep free: the wider of body and base."""
        return max(self.body.width, self.base.width)


# --- people ------------------------------------------------------------------------------


class PersonEntry(CatalogModel):
    """A character model."""

    id: str
    name: str
    role: Literal["resident", "visitor", "caregiver", "delivery", "intruder"]
    enrolled: bool = Field(description="face known to identify_people")
    age_group: Literal["child", "adult", "older_adult"]
    height: float = Field(gt=0.5, lt=2.3)
    shoulder_width: PositiveFloat
    mass: PositiveFloat
    appearance: str


# --- furnishing rules ---------------------------------------------------------------

PlacementKind = Literal[
    "against_wall", "beside", "in_front_of", "facing", "around", "on",
    "center", "corner", "in_counter", "on_counter", "beside_counter",
    "at_feature", "near_feature",
]

#: Kinds whose target is another item of the same rule (its ``key``).
ITEM_TARGET_KINDS = frozenset({"beside", "in_front_of", "facing", "around", "on"})
#: Kinds whose target is a plan feature kind (SINK, WASHING_MACHINE ...).
FEATURE_TARGET_KINDS = frozenset({"at_feature", "near_feature"})


class Constraint(CatalogModel):
    """One placement constraint of a furnishing rule item.

    Written in YAML as ``kind`` or ``kind:target`` (e.g. ``against_wall``,
    ``beside:bed``, ``near_feature:SINK``), or as a mapping with distances.

    - against_wall: back (-x side) flush to a wall, clear of doors and windows' swing/sill.
    - beside:<key>: side by side with item <key>, same facing, gap up to ``max_distance``.
    - in_front_of:<key>: in the free floor in front of <key>, ``min_distance`` to
      ``max_distance`` from its front edge, facing it (coffee table before a sofa).
    - facing:<key>: front turned toward <key> (TV unit toward the sofa); combine with against_wall.
    - around:<key>: arranged around the sides of <key>, each facing it (chairs round a table).
    - on:<key>: standing on a support surface of <key> (a plant on a plant stand).
    - center: middle of the room's free floor.  corner: back and one side touching two walls.
    - in_counter: built into the plan's KITCHEN counter run, front flush with the counter front.
    - on_counter: standing on the KITCHEN counter top.
    - beside_counter: at an end of the KITCHEN counter run, back to the same wall.
    - at_feature:<KIND>: occupying the footprint of a plan feature of that kind.
    - near_feature:<KIND>: within ``max_distance`` of a plan feature of that kind.
    """

    kind: PlacementKind
    target: str | None = None
    min_distance: NonNegativeFloat | None = None
    max_distance: PositiveFloat | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            kind, _, target = data.partition(":")
            return {"kind": kind.strip(), "target": target.strip() or None}
        return data

    @model_validator(mode="after")
    def _target_as_kind_needs(self) -> "Constraint":
        needs = self.kind in ITEM_TARGET_KINDS or self.kind in FEATURE_TARGET_KINDS
        if needs and not self.target:
            raise ValueError(f"{self.kind} needs a target ({self.kind}:<target>)")
        if not needs and self.target:
            raise ValueError(f"{self.kind} takes no target")
        if self.min_distance is not None and self.max_distance is not None and self.min_distance > self.max_distance:
            raise ValueError("min_distance is above max_distance")
        return self

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}" if self.target else self.kind


class Count(CatalogModel):
    """How many to place: exactly ``min`` when ``min == max``; YAML ``2`` or ``[2, 4]``."""

    min: int = Field(ge=0)
    max: int = Field(ge=1)

    @model_validator(mode="before")
    @classmethod
    def _from_scalar(cls, data: Any) -> Any:
        if isinstance(data, int) and not isinstance(data, bool):
            return {"min": data, "max": data}
        if isinstance(data, (list, tuple)) and len(data) == 2:
            return {"min": data[0], "max": data[1]}
        return data

    @model_validator(mode="after")
    def _ordered(self) -> "Count":
        if self.min > self.max:
            raise ValueError("min is above max")
        return self


class ItemRule(CatalogModel):
    """One thing to place in a room.

    - ``one_of``: catalog ids (furniture or objects) that can fill this slot, in
      order of preference; the furnisher tries them in order (the first that
      fits), or draws among those that fit with the build's generator.
    - ``key``: the name other items of the rule use to refer to this one
      (``beside:<key>``); defaults to the first id of ``one_of``.
    - ``place``: hard constraints, all must hold. ``prefer``: soft ones, tried
      first and dropped if nothing fits.
    - ``required``: the room fails to furnish without it (``False`` = optional).
    - ``count``: how many; ``min_room_area``: only in rooms at least this big (m²);
      ``requires_feature``: only where the room has a plan feature of that kind.
    - ``tall``: overrides the catalog's tall flag (tall items never stand in
      front of a window).
    Items are placed in the order listed; a constraint may only target an item
    listed earlier.
    """

    key: str
    one_of: list[str] = Field(min_length=1)
    place: list[Constraint] = []
    prefer: list[Constraint] = []
    required: bool = True
    count: Count = Field(default_factory=lambda: Count(min=1, max=1))
    min_room_area: PositiveFloat | None = None
    requires_feature: str | None = None
    tall: bool | None = None
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and "key" not in data and data.get("one_of"):
            return {**data, "key": data["one_of"][0]}
        return data


class RoomRule(CatalogModel):
    """How to furnish rooms of some Swiss Dwellings area subtypes.

    ``extends`` names rules whose items come before this rule's own (a
    kitchen-dining room is a kitchen plus a dining area). The loaded catalog
    holds every rule resolved: items of the extended rules included and
    ``extends`` emptied.
    """

    id: str
    subtypes: list[str] = Field(min_length=1)
    extends: list[str] = []
    items: list[ItemRule] = []
    note: str | None = None

    @model_validator(mode="after")
    def _targets_listed_earlier(self) -> "RoomRule":
        if self.extends:  # checked once the extended items are in place
            return self
        keys: list[str] = []
        for item in self.items:
            for c in [*item.place, *item.prefer]:
                if c.kind in ITEM_TARGET_KINDS and c.target not in keys:
                    raise ValueError(f"item {item.key!r}: {c} targets no earlier item of this rule")
            if item.key in keys:
                raise ValueError(f"duplicate item key {item.key!r}")
            keys.append(item.key)
        return self


class Possession(CatalogModel):
    """Something a household has or lacks, drawn per home (docs/catalog.md, "Household
    possessions"): a home has it with probability ``share``, and furnishing places its ``items``
    (catalog ids, furniture or objects) only in homes that have it.

    ``basis`` says where the share comes from: ``survey`` (a household or population survey,
    named with its year and figure in ``source``) or ``assumption`` (no survey counts it; ``source``
    names the assumption and why).
    """

    id: str
    share: float = Field(ge=0.0, le=1.0)
    items: list[str] = Field(min_length=1)
    basis: Literal["survey", "assumption"]
    source: str = Field(min_length=20)
    note: str | None = None


# --- the catalog ------------------------------------------------------------------------

#: The procedural textures the renderer can lay over a material's albedo ("": a plain colour).
Texture = Literal["", "wood", "tile", "fabric"]


class MaterialEntry(CatalogModel):
    """A surface a visual part is made of: its linear-RGB albedo, an optional procedural texture
    (the CPU renderer's), and the roughness and metalness the USD export writes."""

    id: str
    albedo: tuple[float, float, float] = Field(description="linear RGB reflectance, each 0-1")
    texture: Texture = ""
    roughness: float = Field(0.6, ge=0.0, le=1.0)
    metallic: float = Field(0.0, ge=0.0, le=1.0)

    @field_validator("albedo")
    @classmethod
    def _unit_albedo(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        if not all(0.0 <= c <= 1.0 for c in value):
            raise ValueError("each channel must lie in 0-1")
        return value


class PaletteEntry(CatalogModel):
    """The materials of one semantic class's visual (its id), or of every class (``default``): for
    each role a part plays, the materials a home may give it (one per home, by its id)."""

    id: str
    roles: dict[str, list[str]] = Field(description="role -> material ids to choose from")

    @field_validator("roles")
    @classmethod
    def _some_choice(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        empty = sorted(role for role, choices in value.items() if not choices)
        if empty:
            raise ValueError(f"roles {', '.join(empty)} have no material to choose from")
        return value


_SECTION_MODELS: dict[str, type[CatalogModel]] = {
    "furniture": FurnitureEntry,
    "objects": ObjectEntry,
    "devices": DeviceEntry,
    "robots": RobotEntry,
    "people": PersonEntry,
    "room_rules": RoomRule,
    "possessions": Possession,
    "materials": MaterialEntry,
    "palettes": PaletteEntry,
}


@dataclass(frozen=True)
class Catalog:
    """Every catalog entry, by section and id, in file order."""

    path: Path
    version_hash: str
    files: tuple[str, ...]
    furniture: dict[str, FurnitureEntry]
    objects: dict[str, ObjectEntry]
    devices: dict[str, DeviceEntry]
    robots: dict[str, RobotEntry]
    people: dict[str, PersonEntry]
    rules: dict[str, RoomRule]
    room_rules: dict[str, RoomRule] = field(default_factory=dict)
    #: The file (relative to ``path``) each entry comes from, by (section, id).
    origins: dict[tuple[str, str], str] = field(default_factory=dict)
    #: What a household has or lacks, drawn per home, in file order.
    possessions: dict[str, Possession] = field(default_factory=dict)
    #: The surfaces visual parts are made of, and each class's choice of them (homeloop/core/visuals).
    materials: dict[str, MaterialEntry] = field(default_factory=dict)
    palettes: dict[str, PaletteEntry] = field(default_factory=dict)
    #: The optional parts read besides the always-read files (:data:`OPTIONAL_FILES`), sorted.
    optional: tuple[str, ...] = ()

    @property
    def device_types(self) -> tuple[str, ...]:
        return tuple(self.devices)

    def item(self, item_id: str) -> FurnitureEntry | ObjectEntry:
        """A furniture or object entry by id."""
        if item_id in self.furniture:
            return self.furniture[item_id]
        return self.objects[item_id]

    def furniture_of_class(self, semantic_class: str) -> tuple[FurnitureEntry, ...]:
        return tuple(f for f in self.furniture.values() if f.semantic_class == semantic_class)

    def cooking_appliances(self) -> tuple[FurnitureEntry, ...]:
        return tuple(f for f in self.furniture.values() if f.cooking_appliance)

    def rule_for(self, subtype: str) -> RoomRule | None:
        return self.room_rules.get(subtype)

    def source_of(self, section: str, entry_id: str) -> Path:
        """The YAML file an entry is written in (to name it in messages)."""
        return self.path / self.origins.get((section, entry_id), "?")

    def placement_number(self, device_type: str, name: str) -> float:
        """A number of a device type's placement (``height``, ``max_distance`` ...) that a
        stage needs; :class:`CatalogError` naming the file and field when it is not given."""
        value = getattr(self.devices[device_type].placement, name)
        if value is None:
            raise CatalogError(f"{self.source_of('devices', device_type)}: devices entry {device_type!r}: "
                               f"field placement.{name}: needed to place and check this device; give a number")
        return float(value)

    @property
    def fridge(self) -> FurnitureEntry:
        """The fridge the kitchens get: its footprint and ``clearance_front`` are the fridge
        rule of the plan audit, the generator, furnishing and the home check (docs/catalog.md)."""
        found = self.furniture_of_class("fridge")
        if not found:
            raise CatalogError(f"{self.path}: no furniture entry of class 'fridge'; kitchens need one")
        return found[0]


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(entry)"


def _entry_errors(file: str, section: str, entry_id: str, err: ValidationError) -> list[str]:
    lines = []
    for e in err.errors():
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown field"
        lines.append(f"{file}: {section} entry {entry_id!r}: field {_format_loc(tuple(e['loc']))}: {msg}")
    return lines


#: Files of the catalog folder that hold no catalog sections: model prices, read by
#: homeloop.bench.agents.pricing (and kept out of the catalog's hash, so a price change
#: rebuilds nothing).
NOT_SECTIONS = frozenset({"pricing.yaml"})


#: Catalog files read only where a build asks for them by name (``homeloop build --air-devices``), and
#: kept out of the catalog otherwise: its hash, and so every home built without them, stays as it was.
OPTIONAL_FILES: dict[str, str] = {"air_devices": "air_devices.yaml"}


def _catalog_files(root: Path, optional: tuple[str, ...] = ()) -> list[Path]:
    """The catalog's YAML files in name order, the optional parts asked for last (their entries follow)."""
    skip = NOT_SECTIONS | {f for name, f in OPTIONAL_FILES.items() if name not in optional}
    extra = set(OPTIONAL_FILES.values())
    found = [p for p in root.rglob("*")
             if p.suffix in (".yaml", ".yml") and p.is_file() and p.relative_to(root).as_posix() not in skip]
    return sorted(found, key=lambda p: (p.relative_to(root).as_posix() in extra, p))


def _parse(root: Path, optional: tuple[str, ...] = ()) -> Catalog:
    if not root.is_dir():
        raise CatalogError(f"{root}: catalog folder not found")
    unknown = sorted(set(optional) - set(OPTIONAL_FILES))
    if unknown:
        raise CatalogError(f"{root}: unknown optional catalog part {unknown[0]!r} "
                           f"(known: {', '.join(OPTIONAL_FILES)})")
    absent = [OPTIONAL_FILES[name] for name in optional if not (root / OPTIONAL_FILES[name]).is_file()]
    if absent:
        raise CatalogError(f"{root / absent[0]}: optional catalog file not found")
    files = _catalog_files(root, optional)
    if not files:
        raise CatalogError(f"{root}: no catalog YAML files")
    digest = hashlib.sha256()
    sections: dict[str, dict[str, Any]] = {s: {} for s in SECTIONS}
    origin: dict[tuple[str, str], str] = {}
    errors: list[str] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        digest.update(rel.encode() + b"\0" + data + b"\0")
        errors += _read_file(rel, data, sections, origin)
    if errors:
        raise CatalogError("\n".join(errors))
    errors.extend(_cross_check(sections, origin))
    if errors:
        raise CatalogError("\n".join(errors))
    by_subtype = {st: rule for rule in sections["room_rules"].values() for st in rule.subtypes}
    return Catalog(
        path=root,
        version_hash=digest.hexdigest(),
        files=tuple(p.relative_to(root).as_posix() for p in files),
        furniture=sections["furniture"],
        objects=sections["objects"],
        devices=sections["devices"],
        robots=sections["robots"],
        people=sections["people"],
        rules=sections["room_rules"],
        room_rules=by_subtype,
        origins=origin,
        possessions=sections["possessions"],
        materials=sections["materials"],
        palettes=sections["palettes"],
        optional=optional,
    )


def _read_file(rel: str, data: bytes, sections: dict[str, dict[str, Any]],
               origin: dict[tuple[str, str], str]) -> list[str]:
    """Add the entries of one catalog file to ``sections`` (and where each is written to
    ``origin``); return what is wrong with the file."""
    try:
        doc = load_yaml(data) or {}
    except yaml.YAMLError as exc:
        return [f"{rel}: not valid YAML: {' '.join(str(exc).split())}"]
    if not isinstance(doc, dict):
        return [f"{rel}: expected a mapping of sections ({', '.join(SECTIONS)})"]
    errors: list[str] = []
    for section, entries in doc.items():
        if section not in _SECTION_MODELS:
            errors.append(f"{rel}: unknown section {section!r} (expected one of {', '.join(SECTIONS)})")
        elif not isinstance(entries, list):
            errors.append(f"{rel}: section {section!r} must be a list of entries")
        else:
            errors += _read_entries(rel, section, entries, sections[section], origin)
    return errors


def _read_entries(rel: str, section: str, entries: list[Any], known: dict[str, Any],
                  origin: dict[tuple[str, str], str]) -> list[str]:
    """Validate the entries of one section of one file into ``known``; return the errors."""
    errors: list[str] = []
    model = _SECTION_MODELS[section]
    for i, raw in enumerate(entries):
        entry_id = str(raw.get("id")) if isinstance(raw, dict) and raw.get("id") else f"#{i}"
        try:
            entry = model.model_validate(raw)
        except ValidationError as exc:
            errors.extend(_entry_errors(rel, section, entry_id, exc))
            continue
        if entry.id in known:
            errors.append(f"{rel}: {section} entry {entry.id!r}: field id: duplicate of the entry in "
                          f"{origin[(section, entry.id)]}")
            continue
        known[entry.id] = entry
        origin[(section, entry.id)] = rel
    return errors


def _cross_check(sections: dict[str, dict[str, Any]], origin: dict[tuple[str, str], str]) -> list[str]:
    """References between entries: rule items, built-in devices, subtypes claimed twice."""
    errors = (_device_references(sections, origin) + _furniture_references(sections, origin)
              + _possession_references(sections, origin) + _palette_references(sections, origin))
    rules = sections["room_rules"]
    for rule_id in list(rules):
        try:
            rules[rule_id] = _resolve_rule(rule_id, rules, ())
        except (ValueError, KeyError) as exc:
            errors.append(f"{origin[('room_rules', rule_id)]}: room_rules entry {rule_id!r}: field extends: {exc}")
    if errors:
        return errors
    claimed: dict[str, str] = {}
    for rule in rules.values():
        where = f"{origin[('room_rules', rule.id)]}: room_rules entry {rule.id!r}"
        for st in rule.subtypes:
            if st in claimed:
                errors.append(f"{where}: field subtypes: {st!r} is already furnished by rule {claimed[st]!r}")
            claimed[st] = rule.id
        errors += _rule_item_references(where, rule, sections["furniture"], sections["objects"])
    return errors


def _device_references(sections: dict[str, dict[str, Any]], origin: dict[tuple[str, str], str]) -> list[str]:
    """Device placements naming furniture and object classes the catalog has."""
    errors: list[str] = []
    object_classes = {o.semantic_class for o in sections["objects"].values()}
    furniture_classes = {f.semantic_class for f in sections["furniture"].values()}
    for d in sections["devices"].values():
        where = f"{origin[('devices', d.id)]}: devices entry {d.id!r}"
        pl = d.placement
        if pl.mount == "built_in" or pl.per == "furniture":
            for i, cls in enumerate(pl.attached_to):
                if cls not in furniture_classes:
                    errors.append(f"{where}: field placement.attached_to[{i}]: unknown furniture class {cls!r}")
        if pl.per == "object":
            for i, cls in enumerate(pl.attached_to):
                if cls not in object_classes:
                    errors.append(f"{where}: field placement.attached_to[{i}]: unknown object class {cls!r}")
        for i, k in enumerate(pl.keep_away):
            if k.away_from != "cooking_appliance" and k.away_from not in furniture_classes:
                errors.append(f"{where}: field placement.keep_away[{i}].away_from: unknown {k.away_from!r}")
    return errors


def _furniture_references(sections: dict[str, dict[str, Any]], origin: dict[tuple[str, str], str]) -> list[str]:
    """Furniture naming device types and object classes the catalog has."""
    errors: list[str] = []
    object_classes = {o.semantic_class for o in sections["objects"].values()}
    for f in sections["furniture"].values():
        where = f"{origin[('furniture', f.id)]}: furniture entry {f.id!r}"
        if f.device is not None and f.device not in sections["devices"]:
            errors.append(f"{where}: field device: unknown device type {f.device!r}")
        for i, c in enumerate(f.containers):
            for cls in c.fits:
                if cls not in object_classes:
                    errors.append(f"{where}: field containers[{i}].fits: unknown object class {cls!r}")
    return errors


def _possession_references(sections: dict[str, dict[str, Any]], origin: dict[tuple[str, str], str]) -> list[str]:
    """Possessions naming catalog ids the catalog has, each id in one possession at most."""
    errors: list[str] = []
    owner: dict[str, str] = {}
    for p in sections["possessions"].values():
        where = f"{origin[('possessions', p.id)]}: possessions entry {p.id!r}"
        for i, cid in enumerate(p.items):
            if cid not in sections["furniture"] and cid not in sections["objects"]:
                errors.append(f"{where}: field items[{i}]: unknown catalog id {cid!r}")
            elif cid in owner:
                errors.append(f"{where}: field items[{i}]: {cid!r} is already an item of possession {owner[cid]!r}")
            owner.setdefault(cid, p.id)
    return errors


def _palette_references(sections: dict[str, dict[str, Any]], origin: dict[tuple[str, str], str]) -> list[str]:
    """Palettes naming materials the catalog has, and a ``default`` palette with a ``body`` role
    (what a part of a role no palette names is made of)."""
    errors: list[str] = []
    for p in sections["palettes"].values():
        where = f"{origin[('palettes', p.id)]}: palettes entry {p.id!r}"
        for role, choices in p.roles.items():
            errors += [f"{where}: field roles.{role}[{i}]: unknown material {m!r}"
                       for i, m in enumerate(choices) if m not in sections["materials"]]
    default = sections["palettes"].get("default")
    if sections["palettes"] and (default is None or "body" not in default.roles):
        errors.append("palettes: no 'default' palette with a 'body' role (what unnamed roles are made of)")
    return errors


def _rule_item_references(where: str, rule: RoomRule, furniture: dict[str, Any], objects: dict[str, Any]
                          ) -> list[str]:
    """A room rule's items naming catalog ids, feature kinds and, for ``on:``, furniture with a surface."""
    errors: list[str] = []
    keys: dict[str, ItemRule] = {}
    for i, item in enumerate(rule.items):
        for j, cid in enumerate(item.one_of):
            if cid not in furniture and cid not in objects:
                errors.append(f"{where}: field items[{i}].one_of[{j}]: unknown catalog id {cid!r}")
        if item.requires_feature is not None and item.requires_feature not in FEATURE_KINDS:
            errors.append(f"{where}: field items[{i}].requires_feature: unknown feature kind "
                          f"{item.requires_feature!r}")
        for c in [*item.place, *item.prefer]:
            if c.kind in FEATURE_TARGET_KINDS and c.target not in FEATURE_KINDS:
                errors.append(f"{where}: field items[{i}]: {c}: unknown feature kind {c.target!r}")
            if c.kind == "on":
                target = keys[c.target]  # type: ignore[index]
                if not all(cid in furniture and furniture[cid].surfaces for cid in target.one_of):
                    errors.append(f"{where}: field items[{i}].place: on:{c.target} needs furniture "
                                  "with a support surface")
        keys[item.key] = item
    return errors


def _resolve_rule(rule_id: str, rules: dict[str, RoomRule], seen: tuple[str, ...]) -> RoomRule:
    """A rule with the items of the rules it extends put first."""
    if rule_id in seen:
        raise ValueError(f"rules extend each other in a cycle: {' -> '.join([*seen, rule_id])}")
    if rule_id not in rules:
        raise ValueError(f"unknown rule {rule_id!r}")
    rule = rules[rule_id]
    if not rule.extends:
        return rule
    items: list[dict[str, Any]] = []
    for parent in rule.extends:
        items += [i.model_dump(exclude_none=True) for i in _resolve_rule(parent, rules, (*seen, rule_id)).items]
    items += [i.model_dump(exclude_none=True) for i in rule.items]
    data = rule.model_dump(exclude_none=True) | {"extends": [], "items": items}
    try:
        return RoomRule.model_validate(data)
    except ValidationError as exc:
        raise ValueError("; ".join(f"{_format_loc(tuple(e['loc']))}: {e['msg']}" for e in exc.errors())) from None


@functools.lru_cache(maxsize=8)
def _load_cached(root: str, optional: tuple[str, ...] = ()) -> Catalog:
    return _parse(Path(root), optional)


def catalog_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The catalog folder: ``path``, else ``$HOMELOOP_CATALOG``, else the repository's."""
    if path is None:
        path = os.environ.get(CATALOG_ENV) or DEFAULT_CATALOG_DIR
    return _resolved(os.fspath(path))


@functools.lru_cache(maxsize=64)
def _resolved(path: str) -> Path:
    # every episode loads the catalog: resolving the same folder again asks the file system each time
    return Path(path).expanduser().resolve()


def load_catalog(path: str | os.PathLike[str] | None = None, optional: tuple[str, ...] = ()) -> Catalog:
    """Load (once per folder and optional parts; cached) and validate the catalog; ``optional`` names
    parts of :data:`OPTIONAL_FILES` to read too.

    Raises :class:`CatalogError` with one line per problem, each naming the
    file, the entry id and the field.
    """
    return _load_cached(str(catalog_dir(path)), tuple(sorted(set(optional))))


load_catalog.cache_clear = _load_cached.cache_clear  # type: ignore[attr-defined]
