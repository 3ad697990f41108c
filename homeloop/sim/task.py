"""Tasks (docs/tasks.md): the schema of a task file, the room roles and wake sources it names, and the loader.

The task files are the benchmark's data, one YAML file each under ``homeloop/bench/tasks/``;
the simulator runs a task, the benchmark scores it and the build screens homes for it.

A task file says what wakes the agent, how long and how much it may spend,
which checks score it and when, and what a home and a robot body must offer
for the task to apply there (docs/tasks.md: "a task applies to a home that has the
rooms, devices and objects it names, and where the robot can reach and carry
what it must")::

    id: water_leak_response
    family: hazards
    extension: false
    wake: {kind: leak_alarm}
    horizon_s: 600
    budget_units: 200
    scored_at: horizon
    alert_group: leak
    checks:
      - {id: water_shut_off, kind: final}
      - {id: spill_contained, kind: final, params: {max_litres: 60}}
    requires:
      residents: 1
      rooms: [kitchen]
      devices:
        - {type: leak_sensor, where: {attached_to: dishwasher}}
      furniture:
        - {class: dishwasher, room: kitchen}
      objects: []
      robot:
        pick: []
        reach: []
        pass: [kitchen]

Checks are listed by id and kind here; a check may later carry its
``definition`` (a mapping the monitor reads) and ``params`` in the same file,
so the schema already declares those optional fields. Every other key is an
error: the loader names the file and the field.

Requirements:

- ``rooms``: room roles (:data:`ROOM_ROLES`), e.g. ``kitchen`` is any room of
  type KITCHEN or KITCHEN_DINING; ``laundry`` a WASH_AND_DRY_ROOM or a
  bathroom holding a washer; ``entrance`` the spaces an entrance door opens into.
- ``devices``: device types (catalog ids), each optionally ``where``: in a
  room of a role (``room``, with ``or_adjacent`` for the rooms joined to it by
  a door; for a smoke sensor, the rooms the role's smoke reaches with the doors
  shut, homeloop/pipeline/applicability.py), and/or ``attached_to`` furniture of a class, an opening of a kind
  or an object of a class (mounted on, monitoring or controlling it, or within
  ``max_distance`` of it).
- ``furniture``: furniture classes, optionally in a room of a role.
- ``objects``: object classes (optionally ``catalog_ids``). ``source: home``
  objects must be in the home file (the furnishing places them, e.g. potted
  plants); ``source: scenario`` objects are brought by the task's scenario
  and are listed so the robot demands can name them.
- ``residents``: people living there (1, or 3 for the housemate tasks); a
  home houses as many as its beds sleep.
- ``robot``: ``pick`` (objects carried, by catalog id: their catalog mass
  against the body's payload), ``reach`` (a surface or container of furniture
  of a class, or the floor: heights against the body's grasp heights, a
  container's depth against its horizontal reach) and ``pass`` (room roles the
  body must be able to drive to from the entrance).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import (BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveInt, ValidationError, field_validator,
                      model_validator)

from homeloop.core.catalog import Catalog, load_catalog
from homeloop.core.errors import HomeLoopError
from homeloop.core.home import OpeningKind
from homeloop.core.io import read_yaml_file, validation_lines
from homeloop.sim.scenario_schema import ScenarioPieces

#: The folder holding one YAML file per task (the benchmark's data).
TASKS_DIR = Path(__file__).resolve().parent.parent / "bench" / "tasks"

#: Task families in docs/tasks.md order.
FAMILIES: tuple[str, ...] = ("hazards", "requests", "entry", "wellbeing", "chores")

#: The 20 core tasks in docs/tasks.md order.
CORE_TASK_IDS: tuple[str, ...] = (
    "handle_smoke_alarm", "kitchen_fire_emergency", "smoke_while_cooking", "smoke_sensor_fault",
    "water_leak_response", "watering_can_spill", "leak_sensor_fault",
    "bring_in_package", "fetch_medicine", "find_my_glasses", "medicine_missing", "put_away", "water_the_plants",
    "answer_delivery", "doorbell_false_alarm", "respond_to_intruder",
    "person_down_emergency", "fall_false_alarm",
    "close_up_after_leaving", "empty_the_dryer",
)

#: The 4 extension tasks in docs/tasks.md order.
EXTENSION_TASK_IDS: tuple[str, ...] = (
    "kitchen_fire_with_delivery", "smoke_fault_with_delivery",
    "housemate_down_emergency", "housemate_fall_false_alarm",
)

#: Every task id: the 20 core tasks, then the 4 extensions (docs/tasks.md order).
TASK_IDS: tuple[str, ...] = CORE_TASK_IDS + EXTENSION_TASK_IDS

WakeKind = Literal["smoke_alarm", "leak_alarm", "message", "doorbell", "front_door_opening",
                   "front_door_closing", "fall_alert", "dryer_finished"]
Family = Literal["hazards", "requests", "entry", "wellbeing", "chores"]
CheckKind = Literal["final", "always", "never", "ever"]
AlertGroup = Literal["smoke", "leak", "fall", "doorbell"]

#: The device type (and where it sits) that raises each wake event; a task's
#: ``requires.devices`` must include it. ``message`` comes from the resident's phone.
WAKE_SOURCES: dict[str, tuple[str, str | None] | None] = {
    "smoke_alarm": ("smoke_sensor", None),
    "leak_alarm": ("leak_sensor", None),
    "doorbell": ("doorbell", None),
    "front_door_opening": ("contact_sensor", "entrance_door"),
    "front_door_closing": ("contact_sensor", "entrance_door"),
    "fall_alert": ("fall_watch", None),
    "dryer_finished": ("dryer", None),
    "message": None,
}


class TaskFileError(HomeLoopError):
    """A task file that cannot be read; each line names the file and the field."""


class TaskModel(BaseModel):
    """Base of the task models: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True, validate_by_alias=True)


# --- room roles --------------------------------------------------------------------------


class RoomMatch(TaskModel):
    """One way a room fills a role: its type, the furniture it holds, the opening it touches."""

    types: tuple[str, ...] = ()
    holds: tuple[str, ...] = Field(default=(), description="furniture classes the room must hold")
    at_opening: str | None = Field(default=None, description="an opening kind the room is connected by")
    indoor: bool | None = None


class RoomRole(TaskModel):
    """A kind of room a task names; a room fills it when it meets any of ``any_of``."""

    name: str
    any_of: tuple[RoomMatch, ...] = Field(min_length=1)
    description: str


#: Openings a task or scenario names by role rather than by kind (homeloop/sim/roles.py finds them):
#: the first entrance door, and a window that opens (one a contact sensor watches first).
OPENING_ROLES = ("front_door", "openable_window")

#: Room roles task files may name (types are Swiss Dwellings area subtypes, docs/data-format.md).
ROOM_ROLES: dict[str, RoomRole] = {r.name: r for r in (
    RoomRole(name="kitchen", any_of=(RoomMatch(types=("KITCHEN", "KITCHEN_DINING")),),
             description="a kitchen or kitchen-dining room"),
    RoomRole(name="living", any_of=(RoomMatch(types=("LIVING_ROOM", "LIVING_DINING")),),
             description="a living room or living-dining room"),
    RoomRole(name="bedroom", any_of=(RoomMatch(types=("BEDROOM", "ROOM")),),
             description="a bedroom (Swiss Dwellings labels most bedrooms ROOM)"),
    RoomRole(name="bathroom", any_of=(RoomMatch(types=("BATHROOM",)),), description="a bathroom"),
    RoomRole(name="laundry",
             any_of=(RoomMatch(types=("WASH_AND_DRY_ROOM",)), RoomMatch(types=("BATHROOM",), holds=("washer",))),
             description="a wash-and-dry room, or a bathroom with a washer"),
    RoomRole(name="entrance", any_of=(RoomMatch(at_opening="entrance_door"),),
             description="the spaces an entrance door opens into (the hall, and the porch where one is drawn)"),
)}


# --- requirements ------------------------------------------------------------------------


class DeviceWhere(TaskModel):
    """Where a required device must be."""

    room: str | None = Field(default=None, description="a room role the device must be in")
    or_adjacent: bool = Field(default=False,
                              description="a room joined to a room of the role by a door also counts "
                                          "(a smoke sensor: one the role's smoke reaches with the doors shut)")
    attached_to: str | None = Field(
        default=None,
        description="furniture class, opening kind or object class it is mounted on, monitors or controls")
    max_distance: NonNegativeFloat = Field(default=0.5, description="or lies within this distance (m) of it")

    def describe(self) -> str:
        parts = []
        if self.attached_to:
            parts.append(f"beside {self.attached_to}")
        if self.room:
            parts.append(f"{'in/near' if self.or_adjacent else 'in'} {self.room}")
        return ", ".join(parts)


class DeviceRequirement(TaskModel):
    type: str
    where: DeviceWhere | None = None

    def describe(self) -> str:
        where = self.where.describe() if self.where else ""
        return f"{self.type}({where})" if where else self.type


class FurnitureRequirement(TaskModel):
    semantic_class: str = Field(alias="class")
    room: str | None = Field(default=None, description="a room role it must stand in")

    def describe(self) -> str:
        return f"{self.semantic_class}(in {self.room})" if self.room else self.semantic_class


class ObjectRequirement(TaskModel):
    semantic_class: str = Field(alias="class")
    catalog_ids: tuple[str, ...] = Field(default=(), description="specific catalog entries (e.g. the red pill box)")
    source: Literal["home", "scenario"] = Field(
        description="home: the home file must hold it; scenario: the task's scenario brings it")
    room: str | None = Field(default=None, description="home objects: a room role it must be in")
    not_on: str | None = Field(default=None, description=(
        "home objects: a furniture class it must not lie on (where the task asks it put: there, doing "
        "nothing would pass)"))
    note: str | None = None

    def describe(self) -> str:
        what = "/".join(self.catalog_ids) if self.catalog_ids else self.semantic_class
        where = [f"in {self.room}"] * bool(self.room) + [f"not on {self.not_on}"] * bool(self.not_on)
        return f"{what}({', '.join(where)})" if where else what


class PickDemand(TaskModel):
    """An object the robot must carry: its catalog mass against the body's payload."""

    object: str = Field(description="catalog object id")
    two_handed: bool = Field(default=True, description="may be carried with every hand (payload is per hand)")


class ReachDemand(TaskModel):
    """A place the robot's hand must get to.

    ``furniture`` + ``surface`` or ``container``: the place on furniture of that
    class (the home's own height and footprint); ``at_object``: wherever the
    home's object of that catalog id lies (the furnishing chooses its host);
    ``floor``: an object standing on the floor; ``opening``: the handle of the
    opening filling that role as the task's scenario finds it
    (``openable_window``, ``front_door``: homeloop/sim/roles.py). The hand
    height is the place's height plus the grasp height of ``object`` (its
    lowest grasp point within reach) plus ``above``; with ``pour``, the height
    the robot's ``pour`` skill holds the ``object`` at over the rim of a ``pour``
    standing on the place (:func:`homeloop.sim.robot.targets.pour_hand_heights`). A
    container's depth, from the furniture's front face to the far end of the
    container, must be within the body's horizontal reach.
    """

    label: str = Field(description="what is reached, for reasons (e.g. 'dryer drum')")
    at_object: str | None = Field(default=None, description="where the home's object of this catalog id lies")
    opening: str | None = Field(default=None, description="the opening of this role, as the task's scenario finds it")
    furniture: str | None = None
    surface: str | None = None
    container: str | None = None
    floor: bool = False
    object: str | None = Field(default=None, description="catalog object id taken or put there")
    above: NonNegativeFloat = Field(default=0.0, description="extra hand height above the place (m)")
    pour: str | None = Field(default=None, description="catalog object id the held ``object`` pours into, on the place")

    @field_validator("opening")
    @classmethod
    def _opening_role(cls, role: str | None) -> str | None:
        name = role.split()[0] if role and role.split() else role
        if role is not None and name not in OPENING_ROLES and name not in get_args(OpeningKind):
            raise ValueError(f"unknown opening role {role!r}; roles: {', '.join(OPENING_ROLES)} or an opening kind "
                             f"({', '.join(get_args(OpeningKind))}), with an optional 'in <room role>'")
        return role

    @model_validator(mode="after")
    def _one_place(self) -> "ReachDemand":
        on_furniture = self.furniture is not None
        if on_furniture + self.floor + (self.at_object is not None) + (self.opening is not None) != 1:
            raise ValueError("give one of furniture (with a surface or a container), at_object, opening and "
                             "floor: true")
        if on_furniture and (self.surface is None) == (self.container is None):
            raise ValueError("give exactly one of surface and container")
        if self.floor and self.object is None:
            raise ValueError("a floor reach names the object")
        if self.pour is not None and (self.object is None or self.surface is None):
            raise ValueError("a pour names the object poured from and a surface")
        return self


class RobotDemands(TaskModel):
    pick: tuple[PickDemand, ...] = ()
    reach: tuple[ReachDemand, ...] = ()
    passage: tuple[str, ...] = Field(default=(), alias="pass", description="room roles to drive to from the entrance")


class Requirements(TaskModel):
    residents: PositiveInt = 1
    rooms: tuple[str, ...] = ()
    devices: tuple[DeviceRequirement, ...] = ()
    furniture: tuple[FurnitureRequirement, ...] = ()
    objects: tuple[ObjectRequirement, ...] = ()
    robot: RobotDemands = Field(default_factory=RobotDemands)


# --- the task ----------------------------------------------------------------------------


class Wake(TaskModel):
    kind: WakeKind
    note: str | None = None


class CheckRef(TaskModel):
    """A check of the task: its id and kind; ``params`` and ``definition`` are
    optional (thresholds such as 60 L; the monitor's definition of the check)."""

    id: str
    kind: CheckKind
    params: dict[str, float | int | str | bool] = {}
    description: str | None = None
    definition: dict[str, object] | None = None


class Task(TaskModel):
    id: str
    family: Family
    extension: bool
    description: str
    wake: Wake
    horizon_s: PositiveInt
    budget_units: PositiveInt
    scored_at: Literal["horizon", "stop"]
    alert_group: AlertGroup | None
    alert_cause: Literal["real", "benign", "faulty"] | None = Field(
        default=None,
        description="what is behind a hazard alarm: a real fire or leak, a benign cause (cooking, a "
                    "tipped watering can) or a faulty sensor; time to act is split by it (docs/scores.md)")
    scenario: str | None = Field(default=None, description="the scenario the task runs in")
    scenario_additions: ScenarioPieces | None = Field(
        default=None,
        description="people, objects, hazards, faults, timeline, withheld cameras and door states added "
                    "to the scenario (homeloop.sim.scenario_schema.ScenarioPieces)")
    checks: tuple[CheckRef, ...] = Field(min_length=1)
    requires: Requirements

    @field_validator("scenario_additions", mode="before")
    @classmethod
    def _additions(cls, value: Any) -> Any:
        """Validated with the scenario files' own schema."""
        if value is None or isinstance(value, ScenarioPieces):
            return value
        try:
            return ScenarioPieces.model_validate(value)
        except ValidationError as exc:
            raise ValueError("; ".join(line.removeprefix("scenario_additions: field ")
                                       for line in validation_lines("scenario_additions", exc))) from None

    @model_validator(mode="after")
    def _consistent(self) -> "Task":
        ids = [c.id for c in self.checks]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate check ids")
        if (self.family == "hazards") != (self.alert_cause is not None):
            raise ValueError("alert_cause: a hazard task says what is behind its alarm (real, benign or faulty); "
                             "other tasks leave it out")
        source = WAKE_SOURCES[self.wake.kind]
        if source is not None:
            dtype, attached = source
            if not any(d.type == dtype and (attached is None or (d.where and d.where.attached_to == attached))
                       for d in self.requires.devices):
                where = f" attached to {attached}" if attached else ""
                raise ValueError(f"wake {self.wake.kind} needs a {dtype}{where} in requires.devices")
        named = {f.semantic_class for f in self.requires.furniture}
        for r in self.requires.robot.reach:
            if r.furniture is not None and r.furniture not in named:
                raise ValueError(f"reach {r.label!r}: furniture {r.furniture!r} is not in requires.furniture")
        return self

    @property
    def core(self) -> bool:
        return not self.extension


# --- loading -------------------------------------------------------------------------------


def _references(task: Task, catalog: Catalog | None) -> list[str]:
    """Room roles, and (given a catalog) device types, classes and ids the task names."""
    errors: list[str] = []
    req = task.requires

    def role(name: str | None, field: str) -> None:
        if name is not None and name not in ROOM_ROLES:
            errors.append(f"field {field}: unknown room role {name!r} (valid: {', '.join(ROOM_ROLES)})")

    for i, r in enumerate(req.rooms):
        role(r, f"requires.rooms[{i}]")
    for i, d in enumerate(req.devices):
        role(d.where.room if d.where else None, f"requires.devices[{i}].where.room")
    for i, f in enumerate(req.furniture):
        role(f.room, f"requires.furniture[{i}].room")
    for i, o in enumerate(req.objects):
        role(o.room, f"requires.objects[{i}].room")
    for i, room_role in enumerate(req.robot.passage):
        role(room_role, f"requires.robot.pass[{i}]")
    if catalog is None:
        return errors
    furniture_classes = {f.semantic_class for f in catalog.furniture.values()}
    object_classes = {o.semantic_class for o in catalog.objects.values()}
    attachable = furniture_classes | object_classes | set(get_args(OpeningKind))
    for i, d in enumerate(req.devices):
        if d.type not in catalog.devices:
            errors.append(f"field requires.devices[{i}].type: unknown device type {d.type!r}")
        if d.where and d.where.attached_to and d.where.attached_to not in attachable:
            errors.append(f"field requires.devices[{i}].where.attached_to: unknown class {d.where.attached_to!r}")
    for i, f in enumerate(req.furniture):
        if f.semantic_class not in furniture_classes:
            errors.append(f"field requires.furniture[{i}].class: unknown furniture class {f.semantic_class!r}")
    for i, o in enumerate(req.objects):
        if o.semantic_class not in object_classes:
            errors.append(f"field requires.objects[{i}].class: unknown object class {o.semantic_class!r}")
        for j, cid in enumerate(o.catalog_ids):
            if cid not in catalog.objects or catalog.objects[cid].semantic_class != o.semantic_class:
                errors.append(f"field requires.objects[{i}].catalog_ids[{j}]: no {o.semantic_class} {cid!r}")
    for i, p in enumerate(req.robot.pick):
        if p.object not in catalog.objects:
            errors.append(f"field requires.robot.pick[{i}].object: unknown object {p.object!r}")
    for i, reach in enumerate(req.robot.reach):
        where = f"requires.robot.reach[{i}]"
        if reach.at_object is not None and reach.at_object not in catalog.objects:
            errors.append(f"field {where}.at_object: unknown object {reach.at_object!r}")
        if reach.object is not None and reach.object not in catalog.objects:
            errors.append(f"field {where}.object: unknown object {reach.object!r}")
        if reach.furniture is None:
            continue
        entries = catalog.furniture_of_class(reach.furniture)
        if not entries:
            errors.append(f"field {where}.furniture: unknown furniture class {reach.furniture!r}")
        elif reach.surface and not all(any(s.name == reach.surface for s in e.surfaces) for e in entries):
            errors.append(f"field {where}.surface: not every {reach.furniture} has a surface {reach.surface!r}")
        elif reach.container and not all(any(c.name == reach.container for c in e.containers) for e in entries):
            errors.append(f"field {where}.container: not every {reach.furniture} has a container {reach.container!r}")
    return errors


def read_task(path: str | os.PathLike[str], catalog: Catalog | None = None) -> Task:
    """Read and validate one task file; :class:`TaskFileError` names the file and each bad field."""
    file = Path(path)
    name = file.name
    task: Task = read_yaml_file(file, Task, "task", TaskFileError)
    errors = [f"{name}: {e}" for e in _references(task, catalog)]
    if task.id != file.stem:
        errors.append(f"{name}: field id: {task.id!r} differs from the file name")
    if errors:
        raise TaskFileError("\n".join(errors))
    return task


@functools.lru_cache(maxsize=4)
def _load_cached(folder: str) -> tuple[Task, ...]:
    root = Path(folder)
    catalog = load_catalog()
    files = sorted(root.glob("*.yaml"))
    tasks: dict[str, Task] = {}
    errors: list[str] = []
    for path in files:
        try:
            task = read_task(path, catalog)
        except TaskFileError as exc:
            errors.append(str(exc))
            continue
        tasks[task.id] = task
    if errors:
        raise TaskFileError("\n".join(errors))
    if root == TASKS_DIR:
        missing = [t for t in TASK_IDS if t not in tasks]
        extra = [t for t in tasks if t not in TASK_IDS]
        if missing or extra:
            raise TaskFileError(f"{root}: task files missing {missing}, unexpected {extra}")
    order = {t: i for i, t in enumerate(TASK_IDS)}
    return tuple(sorted(tasks.values(), key=lambda t: (order.get(t.id, len(order)), t.id)))


def load_tasks(folder: str | os.PathLike[str] | None = None) -> dict[str, Task]:
    """Every task, by id, in docs/tasks.md order (cached per folder)."""
    root = Path(folder).resolve() if folder is not None else TASKS_DIR
    return {t.id: t for t in _load_cached(str(root))}


load_tasks.cache_clear = _load_cached.cache_clear  # type: ignore[attr-defined]


def tasks_of_family(family: str) -> tuple[str, ...]:
    """Ids of the tasks of a family, in docs/tasks.md order."""
    return tuple(t.id for t in load_tasks().values() if t.family == family)
