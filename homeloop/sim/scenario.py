"""Scenarios: who is home, what they do, what is wrong, and when (docs/episodes.md, docs/dynamics.md).

A scenario file (``homeloop/bench/scenarios/<name>.yaml``) is written against
roles, never ids (:mod:`homeloop.sim.roles`: ``kitchen``, ``range``,
``front_left_burner``, ``camera in kitchen``, ``bedroom of resident_1`` ...),
so one file runs in the house and in every home that has the roles. A task
names its scenario and may add to it (``scenario_additions`` in the task file,
the same pieces). Format, every key optional unless marked::

    name: kitchen_smoke                 # required; the file's stem
    description: ...                    # required
    clock_start_s: 66600                # seconds after midnight at the start (daylight follows it)
    robot_start: living                 # room role the robot starts in (default living)
    people:                             # everyone in (or coming to) the home
      - id: resident_1                  # required; residents are resident_1, resident_2 ... in order
        catalog_id: resident_margaret   # required; catalog/people.yaml (role and name come from there)
        at: living                      # role of where they are; none: away from home at the start
        activity: watching_tv           # homeloop.sim.dynamics.people.ACTIVITIES (posture, heart rate)
        burner: front_left_burner       # for activity cooking: the burner they keep lit
    objects:                            # scenario objects, and changes to the home's
      - {id: parcel_1, catalog_id: parcel, held_by: courier}     # new, carried by a person
      - {id: bag_1, catalog_id: grocery_bag, at: parcel_spot}    # new, on the floor at a role
      - {object: glasses, onto_any: [nightstand of resident_1, desk, tv_unit]}  # the seed picks one
      - {object: watering_can, at: leak_sensor at dishwasher, tipped: true}      # moved, knocked over: its
                                        # water runs out at the role's spot (the water dynamics' spill)
      - {object: pill_box_red, remove: true}
      - {object: plant, soil_moisture: [0.1, 0.7]}   # every object of the role: the seed picks the one
                                        # taking the first value, the rest take the next (the last repeats)
    hazards:                            # set up through the dynamics modules
      - {kind: pan, pan: pan, burner: front_left_burner, recipe: oil}   # cooking.RECIPES: oil, frying, on_fire
      - {kind: leak, at: leak_sensor at dishwasher, valve: water_main}  # a burst hose, fed while the main is open
      - {kind: appliance_cycle, device: dryer, seconds: 30}
    faults:                             # a reading replaced from from_s (until until_s)
      - {device: smoke_sensor near range, field: smoke_detected, value: true, from_s: 20}
    withheld_cameras: [camera in kitchen]   # every camera in the room offline: the robot must go and
                                        # look (a room with none: nothing to withhold; no such room: an error)
    openings:                           # initial states
      - {opening: front_door, open: false, locked: true}
    devices:                            # initial field values
      - {device: light in office, values: {"on": false}}
    timeline:                           # homeloop.sim.dynamics.timeline lists the actions
      - {at_s: 5, action: message, person: resident_1, text: "My mug is in the {room of mug}."}
                                        # {room of <role>}: the name of that thing's room

Additions merge onto the scenario: a person or object entry with the key of
a shared one (``id``, or ``object`` for home objects) replaces it, an opening
entry replaces the shared one for the same opening, everything else is
appended. A bad file raises :class:`ScenarioFileError` naming the file and
field; a role the home lacks raises :class:`~homeloop.sim.roles.ScenarioError`.

Stochastic choices (which surface the glasses lie on) draw from
``world.rng``, so the episode's seed decides them.

The robot starts in the living room in every scenario: it docks where the
household spends its day, respond_to_intruder needs it there (the intruder
heads for that room, docs/tasks.md), and every other task then starts with
the same drive to the kitchen, the entrance, the bathroom or the laundry.
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import numpy as np
import shapely
from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, model_validator

from homeloop.catalog import Catalog
from homeloop.errors import HomeLoopError
from homeloop.home import Furniture, HomeObject, polygon_from_rings
from homeloop.io import read_yaml_file
from homeloop.sim.dynamics.cooking import RECIPES
from homeloop.sim.dynamics.people import ACTIVITIES, STREET_DISTANCE, DoorWay
from homeloop.sim.dynamics.timeline import HANDLERS, Action
from homeloop.sim.roles import BurnerRef, Roles, RoomThing, ScenarioError, Spot
from homeloop.sim.world import ObjectState, PersonState, Placement, World

if TYPE_CHECKING:
    from homeloop.bench.tasks import Task

#: The folder holding one YAML file per scenario.
SCENARIOS_DIR = Path(__file__).resolve().parent.parent / "bench" / "scenarios"

__all__ = ["Scenario", "ScenarioError", "ScenarioFileError", "ScenarioPieces", "load_scenario", "SCENARIOS_DIR"]


class ScenarioFileError(HomeLoopError):
    """A scenario file that cannot be read; each line names the file and the field."""


class ScenarioModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


FieldValue = Union[bool, int, float, str, None]


class PersonSpec(ScenarioModel):
    id: str
    catalog_id: str
    at: str | None = None
    activity: str = "standing"
    burner: str | None = None

    @model_validator(mode="after")
    def _known_activity(self) -> "PersonSpec":
        if self.activity not in ACTIVITIES:
            raise ValueError(f"unknown activity {self.activity!r}; activities: {', '.join(ACTIVITIES)}")
        return self


class ObjectSpec(ScenarioModel):
    id: str | None = None
    catalog_id: str | None = None
    object: str | None = Field(None, description="role of a home object to move, tip or remove")
    at: str | None = None
    onto_any: tuple[str, ...] = ()
    held_by: str | None = None
    remove: bool = False
    tipped: bool = False
    soil_moisture: tuple[Annotated[float, Field(ge=0.0, le=1.0)], ...] = Field(
        (), description="home objects of the role: the seed picks one for the first value (see the module docstring)")

    @model_validator(mode="after")
    def _one_kind(self) -> "ObjectSpec":
        new = self.id is not None or self.catalog_id is not None
        if new == (self.object is not None) or (new and (self.id is None or self.catalog_id is None)):
            raise ValueError("give either id and catalog_id (a new object) or object (a role of a home object)")
        places = (self.at is not None) + bool(self.onto_any) + (self.held_by is not None) + self.remove
        if places > 1 or (new and places == 0):
            raise ValueError("give at most one of at, onto_any, held_by and remove (a new object needs one)")
        if self.soil_moisture and (new or places):
            raise ValueError("soil_moisture sets the home's objects of a role: give it with object alone")
        return self

    @property
    def key(self) -> str:
        return self.id if self.id is not None else f"object:{self.object}"


class PanHazard(ScenarioModel):
    kind: Literal["pan"]
    pan: str = "pan"
    burner: str = "front_left_burner"
    recipe: str = Field(description="what is in the pan: a recipe of homeloop.sim.dynamics.cooking.RECIPES")

    @model_validator(mode="after")
    def _known_recipe(self) -> "PanHazard":
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}; recipes: {', '.join(RECIPES)}")
        return self


class LeakHazard(ScenarioModel):
    kind: Literal["leak"]
    at: str
    valve: str = "water_main"


class CycleHazard(ScenarioModel):
    kind: Literal["appliance_cycle"]
    device: str
    seconds: PositiveFloat


Hazard = Annotated[Union[PanHazard, LeakHazard, CycleHazard], Field(discriminator="kind")]


class FaultSpec(ScenarioModel):
    device: str
    field: str
    value: FieldValue
    from_s: NonNegativeFloat = 0.0
    until_s: NonNegativeFloat | None = None


class OpeningSpec(ScenarioModel):
    opening: str
    open: bool | None = None
    locked: bool | None = None


class DeviceSpec(ScenarioModel):
    device: str
    values: dict[str, FieldValue] = Field(min_length=1)


#: Fields each timeline action needs.
ACTION_NEEDS: dict[str, tuple[str, ...]] = {
    "message": ("person", "text"), "activity": ("person", "activity"), "walk": ("person", "to"),
    "deliver": ("person",), "ring_and_leave": ("person",), "break_in": ("person", "to"),
    "leave_home": ("person",), "cook": ("person",), "fall": ("person",), "fall_alert_misfire": ("person",),
    "press_help": ("person",), "ring": (), "fault": ("device", "field", "value"),
    "clear_fault": ("device", "field"), "set_device": ("device", "field", "value"),
    "open": ("opening",), "close": ("opening",), "lock": ("opening",), "unlock": ("opening",),
}
assert set(ACTION_NEEDS) == set(HANDLERS), "every timeline action needs its fields listed"


class TimelineSpec(ScenarioModel):
    at_s: NonNegativeFloat
    action: str
    person: str | None = None
    text: str | None = None
    activity: str | None = None
    to: str | None = None
    object: str | None = None
    device: str | None = None
    field: str | None = None
    value: FieldValue = None
    opening: str | None = None
    burner: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> "TimelineSpec":
        if self.action not in ACTION_NEEDS:
            raise ValueError(f"unknown action {self.action!r}; actions: {', '.join(ACTION_NEEDS)}")
        missing = [f for f in ACTION_NEEDS[self.action] if f not in self.model_fields_set]
        if missing:
            raise ValueError(f"action {self.action!r} needs {', '.join(missing)}")
        if self.activity is not None and self.activity not in ACTIVITIES:
            raise ValueError(f"unknown activity {self.activity!r}; activities: {', '.join(ACTIVITIES)}")
        return self


class ScenarioPieces(ScenarioModel):
    """What a scenario sets up; a task's ``scenario_additions`` has the same pieces."""

    people: tuple[PersonSpec, ...] = ()
    objects: tuple[ObjectSpec, ...] = ()
    hazards: tuple[Hazard, ...] = ()
    faults: tuple[FaultSpec, ...] = ()
    withheld_cameras: tuple[str, ...] = ()
    openings: tuple[OpeningSpec, ...] = ()
    devices: tuple[DeviceSpec, ...] = ()
    timeline: tuple[TimelineSpec, ...] = ()


class Scenario(ScenarioPieces):
    """A scenario file (see the module docstring)."""

    name: str
    description: str
    clock_start_s: float = Field(12 * 3600.0, ge=0, lt=86400)
    robot_start: str = "living"

    def merged(self, additions: ScenarioPieces | None) -> "Scenario":
        """This scenario with a task's additions merged on (see the module docstring)."""
        if additions is None:
            return self
        return self.model_copy(update={
            "people": _by_key(self.people, additions.people, lambda p: p.id),
            "objects": _by_key(self.objects, additions.objects, lambda o: o.key),
            "openings": _by_key(self.openings, additions.openings, lambda o: o.opening),
            "hazards": self.hazards + additions.hazards,
            "faults": self.faults + additions.faults,
            "withheld_cameras": tuple(dict.fromkeys(self.withheld_cameras + additions.withheld_cameras)),
            "devices": self.devices + additions.devices,
            "timeline": self.timeline + additions.timeline,
        })

    def residents(self, catalog: Catalog) -> list[str]:
        """Ids of the people who live here (catalog role ``resident``), in file order."""
        people = catalog.people
        return [p.id for p in self.people if p.catalog_id in people and people[p.catalog_id].role == "resident"]

    def apply(self, world: World, task: "Task | None" = None, robot: str | None = None) -> "Scenario":
        """Set the scenario (with ``task``'s additions) up in ``world``; place the robot body
        ``robot`` (a catalog robot id) in the start room. Returns the merged scenario."""
        scenario = self.merged(task.scenario_additions if task is not None else None)
        _Setup(scenario, world).run(task, robot)
        return scenario


def _by_key(base: tuple[Any, ...], extra: tuple[Any, ...], key: Any) -> tuple[Any, ...]:
    replaced = {key(e): e for e in extra}
    kept = tuple(replaced.pop(key(b), b) for b in base)
    return kept + tuple(e for e in extra if key(e) in replaced)


# --- setting a scenario up in a world --------------------------------------------------------------


#: Furniture a person sits or lies on for an activity in a room (the first class the room has).
SEATS: dict[str, tuple[str, ...]] = {
    "watching_tv": ("sofa", "armchair"), "desk_work": ("office_chair", "chair"), "sleeping": ("bed",),
}
#: Furniture a person stands in front of for an activity in a room: an intruder goes for the
#: valuables (the television, the computer), not the middle of the room.
USES: dict[str, tuple[str, ...]] = {"breaking_in": ("tv_unit", "desk", "bookshelf"), "cooking": ("range",)}
#: How far (m) from a spot a moved floor object is put so it does not cover what is there.
BESIDE = 0.3
#: Margin (m) kept from a surface's edges and between objects on it.
SURFACE_MARGIN = 0.06
#: Free floor (m) a robot needs in front of a surface spot to reach it.
REACH_APPROACH = 0.5


class _Setup:
    """One scenario being set up in one world."""

    def __init__(self, scenario: Scenario, world: World):
        self.s = scenario
        self.world = world
        self.home = world.home
        self.catalog = world.catalog
        self.roles = Roles(world.home, scenario.name, scenario.residents(world.catalog))
        self._door: DoorWay | None = None

    def run(self, task: "Task | None", robot: str | None) -> None:
        if task is not None and len(self.roles.residents) < task.requires.residents:
            raise ScenarioError(f"scenario {self.s.name!r}: task {task.id} needs {task.requires.residents} "
                                f"residents, the scenario has {len(self.roles.residents)}")
        for spec in self.s.devices:
            self.set_device(spec)
        for spec in self.s.openings:
            self.set_opening(spec)
        for spec in self.s.people:
            self.place_person(spec)
        for spec in self.s.objects:
            self.place_object(spec)
        for hazard in self.s.hazards:
            HAZARDS[hazard.kind](self, hazard)
        actions = [self.action(t) for t in self.s.timeline]
        for spec in self.s.faults:
            actions += self.fault(spec)
        for role in self.s.withheld_cameras:
            for camera in self.roles.cameras_in(role):  # none there: nothing to withhold
                self.world.devices[camera.id].online = False
        if robot is not None:
            self.place_robot(robot)
        self.world.module("timeline").load(actions)

    # --- devices and openings ----------------------------------------------------------------

    def set_device(self, spec: DeviceSpec) -> None:
        device = self.roles.device(spec.device)
        values = self.world.devices[device.id].values
        for name, value in spec.values.items():
            if name not in values:
                raise ScenarioError(f"scenario {self.s.name!r}: device {spec.device!r} ({device.id}) has no field "
                                    f"{name!r}; fields: {', '.join(values)}")
            values[name] = value

    def set_opening(self, spec: OpeningSpec) -> None:
        opening = self.roles.opening(spec.opening)
        state = self.world.openings[opening.id]
        if spec.open is not None:
            state.open = spec.open
        if spec.locked is not None:
            state.locked = spec.locked
            for d in self.home.devices:  # the lock's bolt is the door's
                if d.type == "lock" and opening.id in (d.mounted_on, *d.monitors, *d.controls):
                    self.world.devices[d.id].values["lock_state"] = "locked" if spec.locked else "unlocked"

    # --- people -------------------------------------------------------------------------------

    def place_person(self, spec: PersonSpec) -> None:
        entry = self.catalog.people.get(spec.catalog_id)
        if entry is None:
            raise ScenarioError(f"scenario {self.s.name!r}: person {spec.id}: unknown catalog person "
                                f"{spec.catalog_id!r}; people: {', '.join(self.catalog.people)}")
        spot = self.person_spot(spec.at, spec.activity) if spec.at is not None else None
        wears = self.roles.worn_by(spec.id) if spec.id in self.roles.residents else []
        person = PersonState(spec.id, spec.catalog_id, entry.role, entry.name, spot.room if spot else None,
                             spot.x if spot else 0.0, spot.y if spot else 0.0, spot.yaw if spot else 0.0,
                             wears=wears)
        self.world.people[spec.id] = person
        people = self.world.module("people")
        for device_id in wears:
            kind = self.world.devices[device_id].type
            {"fall_watch": people.watches, "help_button": people.help_buttons}.get(kind, {})[spec.id] = device_id
        activity = spec.activity if spot is not None else "away"
        if activity == "cooking":
            burner = self.roles.burner(spec.burner or "front_left_burner")
            people.cook(self.world, spec.id, burner.stove.id, burner.field)
        else:
            people.set_activity(self.world, spec.id, activity)

    def person_spot(self, role: str, activity: str) -> Spot:
        """Where a person doing ``activity`` at ``role`` is: on the seat or bed the activity uses,
        in front of furniture they use, or on free floor."""
        thing = self.roles.thing(role)
        if isinstance(thing, RoomThing):
            used = self._used_in(thing.id, activity)
            return used if used is not None else self.roles.floor_spot(thing.id)
        if isinstance(thing, Furniture):
            if activity in SEATS and thing.semantic_class in SEATS[activity] and thing.surfaces:
                return _surface_centre(thing)
            return self.roles.front_of(thing)
        if isinstance(thing, BurnerRef):
            return self.roles.front_of(thing.range)
        spot = self.roles.spot_of(thing)
        if isinstance(thing, Spot) or spot.room is None:
            return spot  # a named point is a spot on the floor already
        return self.roles.floor_spot(spot.room, near=(spot.x, spot.y))

    def _used_in(self, room: str, activity: str) -> Spot | None:
        """On the room's seat for the activity, or in front of the furniture it uses; None: neither."""
        for classes, seated in ((SEATS.get(activity, ()), True), (USES.get(activity, ()), False)):
            for cls in classes:
                f = next((f for f in self.home.furniture if f.room == room and f.semantic_class == cls
                          and (f.surfaces or not seated)), None)
                if f is not None:
                    return _surface_centre(f) if seated else self.roles.front_of(f)
        return None

    # --- objects ------------------------------------------------------------------------------

    def place_object(self, spec: ObjectSpec) -> None:
        if spec.object is None:
            self.world.objects[spec.id] = self.new_object(spec)
            return
        if spec.soil_moisture:
            self.moisten(spec.object, spec.soil_moisture)
            return
        home_obj = self.roles.object(spec.object)
        if spec.remove:
            del self.world.objects[home_obj.id]
            return
        obj = self.world.objects[home_obj.id]
        if spec.onto_any:
            self.onto_any(home_obj, spec.onto_any)
        elif spec.at is not None:
            self.put_on_floor(obj, spec.at, beside=True)
        if spec.tipped:
            self.tip(obj, spec.at)

    def moisten(self, role: str, values: tuple[float, ...]) -> None:
        """Set the soil moisture of every object of ``role``: the world's rng picks the one taking
        the first value; the others take the next in home order, the last repeating."""
        pots = self.roles.objects(role)
        first = pots.pop(int(self.world.rng.integers(len(pots))))
        for i, pot in enumerate([first, *pots]):
            props = self.world.objects[pot.id].props
            if "soil_moisture" not in props:
                raise ScenarioError(f"scenario {self.s.name!r}: {role!r} ({pot.id}) has no soil to moisten")
            props["soil_moisture"] = values[min(i, len(values) - 1)]

    def new_object(self, spec: ObjectSpec) -> ObjectState:
        entry = self.catalog.objects.get(spec.catalog_id or "")
        if entry is None:
            raise ScenarioError(f"scenario {self.s.name!r}: object {spec.id}: unknown catalog object "
                                f"{spec.catalog_id!r}")
        props: dict[str, Any] = {k: v for k, v in (("capacity_l", entry.capacity_l),
                                                    ("soil_moisture", entry.soil_moisture)) if v is not None}
        if entry.contents is not None:
            props["contents"] = entry.contents.model_dump()
        obj = ObjectState(spec.id, entry.id, entry.semantic_class, Placement(kind="floor"), 0.0, 0.0, 0.0, props)
        if spec.held_by is not None:
            person = self.world.people.get(spec.held_by)
            if person is None:
                raise ScenarioError(f"scenario {self.s.name!r}: object {spec.id}: held_by {spec.held_by!r} "
                                    f"is not one of its people")
            obj.placement = Placement(kind="held", room=person.room, holder=person.id)
            obj.x, obj.y = person.x, person.y
            person.holding.append(spec.id)
        else:
            self.put_on_floor(obj, spec.at or "", beside=False)
        if spec.tipped:
            self.tip(obj, spec.at)
        return obj

    def put_on_floor(self, obj: ObjectState, role: str, beside: bool) -> None:
        """On the floor at a role's spot (``beside`` it, on free floor, when the spot is a thing's)."""
        spot = self.roles.spot(role)
        if beside and spot.room is not None:
            spot = self.roles.floor_spot(spot.room, near=(spot.x, spot.y))
        obj.placement = Placement(kind="floor", room=spot.room)
        obj.x, obj.y, obj.z = spot.x, spot.y, 0.0

    def tip(self, obj: ObjectState, at: str | None) -> None:
        """Knocked over: lying on its side, its contents spilled; water runs out at the ``at``
        role's spot (the object lies beside it), through the water dynamics."""
        obj.props["tipped"] = True
        contents = obj.props.get("contents")
        if not isinstance(contents, dict) or not contents.get("amount"):
            return
        obj.props["contents"] = {**contents, "amount": 0.0}
        if contents.get("substance") == "water" and contents.get("unit") == "l":
            spot = self.roles.spot(at) if at is not None else Spot(obj.placement.room, obj.x, obj.y)
            _module(self, "water").add_spill(self.world, f"{obj.id} tipped", spot.room, spot.x, spot.y,
                                             float(contents["amount"]))

    def onto_any(self, home_obj: HomeObject, roles: tuple[str, ...]) -> None:
        """Put a home object on one of the furniture roles the home has; the world's rng picks which."""
        hosts: list[Furniture] = []
        for role in roles:
            try:
                hosts.append(self.roles.furniture(role))
            except ScenarioError:
                continue
        if not hosts:
            raise self.roles.missing(" | ".join(roles), f"no surface for {home_obj.id}")
        host = hosts[int(self.world.rng.integers(len(hosts)))]
        x, y, z, surface = self.surface_spot(host, home_obj)
        obj = self.world.objects[home_obj.id]
        obj.placement = Placement(kind="surface", room=host.room, furniture=host.id, name=surface)
        obj.x, obj.y, obj.z = x, y, z

    def surface_spot(self, host: Furniture, home_obj: HomeObject) -> tuple[float, float, float, str]:
        """A free spot on the host's top surface nearest its front edge, with free floor in front
        of it for a robot to reach from."""
        surface = next((s for s in host.surfaces if s.name == "top"), host.surfaces[0] if host.surfaces else None)
        if surface is None:
            raise self.roles.missing(host.semantic_class, f"{host.id} has no surface")
        area = polygon_from_rings(surface.polygon).buffer(-(max(home_obj.size[:2]) / 2 + SURFACE_MARGIN))
        others = [shapely.Point(o.x, o.y).buffer(max(home_obj.size[:2]) + SURFACE_MARGIN)
                  for o in self.world.objects.values()
                  if o.placement.furniture == host.id and o.id != home_obj.id]
        blockers = [polygon_from_rings(f.footprint) for f in self.home.furniture if f.id != host.id]
        free = area.difference(shapely.union_all(others)) if others else area
        if free.is_empty:
            free = area
        c, s = math.cos(host.pose.yaw), math.sin(host.pose.yaw)
        best = None
        for x, y in _grid(free, 0.04):
            ahead = shapely.Point(x + c * REACH_APPROACH, y + s * REACH_APPROACH)
            blocked = any(b.contains(ahead) or b.contains(shapely.Point(x, y)) for b in blockers)
            score = (blocked, -round(c * (x - host.pose.x) + s * (y - host.pose.y), 3), round(x, 3), round(y, 3))
            best = min(best, (score, x, y)) if best else (score, x, y)
        if best is None:
            raise self.roles.missing(host.semantic_class, f"no room for {home_obj.id} on {host.id}")
        return round(best[1], 3), round(best[2], 3), surface.height, surface.name

    # --- faults, the timeline and the robot --------------------------------------------------------

    def fault(self, spec: FaultSpec) -> list[Action]:
        device = self.roles.device(spec.device).id
        if spec.field not in self.world.devices[device].values:
            raise ScenarioError(f"scenario {self.s.name!r}: device {spec.device!r} ({device}) has no field "
                                f"{spec.field!r}")
        actions = [Action(spec.from_s, "fault", {"device": device, "field": spec.field, "value": spec.value})]
        if spec.until_s is not None:
            actions.append(Action(spec.until_s, "clear_fault", {"device": device, "field": spec.field}))
        return actions

    def action(self, spec: TimelineSpec) -> Action:
        """A timeline entry with its roles resolved."""
        return Action(spec.at_s, spec.action, ACTIONS.get(spec.action, _plain_args)(self, spec))

    def door(self) -> DoorWay:
        """The front door as people use it."""
        if self._door is None:
            self._door = _doorway(self.roles)
        return self._door

    def place_robot(self, robot: str) -> None:
        from homeloop.sim.robot import place_robot

        place_robot(self.world, robot, self.roles.room(self.s.robot_start))


# --- timeline arguments ----------------------------------------------------------------------------


def _place(setup: _Setup, role: str, activity: str = "standing") -> tuple[float, float, str | None]:
    spot = setup.person_spot(role, activity)
    return (spot.x, spot.y, spot.room)


def _plain_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    return {f: getattr(t, f) for f in ACTION_NEEDS[t.action]}


#: A placeholder in a message's text: ``{room of <role>}`` becomes the name of that thing's room.
ROOM_PLACEHOLDER = re.compile(r"\{room of ([^}]+)\}")


def _message_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    def room_name(match: re.Match[str]) -> str:
        room = setup.roles.spot(match.group(1)).room
        return setup.home.room(room).name if room is not None else "outside"

    return {"person": t.person, "text": ROOM_PLACEHOLDER.sub(room_name, t.text or "")}


def _device_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    args = _plain_args(setup, t)
    args["device"] = setup.roles.device(t.device or "").id
    return args


def _opening_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    return {"opening": setup.roles.opening(t.opening or "").id}


def _activity_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    args: dict[str, Any] = {"person": t.person, "activity": t.activity}
    if t.to is not None:
        args["place"] = _place(setup, t.to, t.activity or "standing")
    return args


def _doorbell(setup: _Setup, role: str | None) -> str | None:
    if role is not None:
        return setup.roles.device(role).id
    bells = [d.id for d in setup.home.devices if d.type == "doorbell"]
    return bells[0] if bells else None


def _deliver_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    return {"person": t.person, "door": setup.door(), "place": _place(setup, t.to or "parcel_spot"),
            "doorbell": _doorbell(setup, t.device), "object": t.object}


def _ring_and_leave_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    bell = _doorbell(setup, t.device)
    if bell is None:
        raise setup.roles.missing(t.device or "doorbell", "no doorbell")
    return {"person": t.person, "door": setup.door(), "doorbell": bell}


def _break_in_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    room = setup.roles.room(t.to or "")
    lights = [d.id for d in setup.home.devices if d.type == "light" and d.room == room]
    return {"person": t.person, "door": setup.door(), "place": _place(setup, t.to or "", "breaking_in"),
            "lights": lights}


def _cook_args(setup: _Setup, t: TimelineSpec) -> dict[str, Any]:
    burner = setup.roles.burner(t.burner or "front_left_burner")
    return {"person": t.person, "device": burner.stove.id, "field": burner.field}


ACTIONS = {
    "message": _message_args, "walk": lambda s, t: {"person": t.person, "place": _place(s, t.to or "")},
    "activity": _activity_args, "deliver": _deliver_args, "ring_and_leave": _ring_and_leave_args,
    "break_in": _break_in_args, "leave_home": lambda s, t: {"person": t.person, "door": s.door()},
    "cook": _cook_args, "ring": lambda s, t: {"device": _doorbell(s, t.device)},
    "fault": _device_args, "clear_fault": _device_args, "set_device": _device_args,
    "open": _opening_args, "close": _opening_args, "lock": _opening_args, "unlock": _opening_args,
}


def _doorway(roles: Roles) -> DoorWay:
    """Points before the front door inside and outside, and the street point visitors come from."""
    from homeloop import navigation
    from homeloop.geometry import face_point
    from homeloop.sim.dynamics.people import PATH_WIDTH

    door = roles.opening("front_door")
    inside = next((r for r in door.connects if roles.home.room(r).indoor), door.connects[0])
    poly, room_poly = polygon_from_rings(door.polygon), roles.home.room_polygon(inside)
    depth = PATH_WIDTH / 2 + navigation.APPROACH_MARGIN
    (ix, iy), _ = face_point(poly, room_poly, depth)
    (ox, oy), _ = face_point(poly, room_poly, depth, far_side=True)
    (sx, sy), _ = face_point(poly, room_poly, STREET_DISTANCE, far_side=True)
    home = roles.home
    return DoorWay(door.id, (float(ix), float(iy)), inside, (float(ox), float(oy)), home.room_at(float(ox), float(oy)),
                   (float(sx), float(sy)), home.room_at(float(sx), float(sy)))


# --- hazards (set up through the dynamics modules) -------------------------------------------------


def _pan(setup: _Setup, h: PanHazard) -> None:
    burner = setup.roles.burner(h.burner)
    pan = setup.world.objects[setup.roles.object(h.pan).id]
    cooktop = next((s for s in burner.range.surfaces if s.name == "cooktop"), None)
    pan.x, pan.y = burner.burner.position[0], burner.burner.position[1]
    pan.z = cooktop.height if cooktop is not None else burner.burner.position[2]
    pan.placement = Placement(kind="surface", room=burner.range.room, furniture=burner.range.id,
                              name=cooktop.name if cooktop is not None else None)
    setup.world.devices[burner.stove.id].values[burner.field] = True
    _module(setup, "cooking").add_pan(setup.world, pan.id, burner.stove.id, burner.field, h.recipe)


def _leak(setup: _Setup, h: LeakHazard) -> None:
    spot = setup.roles.spot(h.at)
    spot = setup.roles.floor_spot(spot.room, near=(spot.x, spot.y)) if spot.room else spot
    valve = setup.roles.device(h.valve).id
    _module(setup, "water").add_leak(setup.world, f"leak at {h.at}", spot.room, spot.x, spot.y, valve)


def _cycle(setup: _Setup, h: CycleHazard) -> None:
    device = setup.roles.device(h.device)
    _module(setup, "appliances").start_cycle(setup.world, device.id, h.seconds)


HAZARDS = {"pan": _pan, "leak": _leak, "appliance_cycle": _cycle}


def _module(setup: _Setup, name: str) -> Any:
    try:
        return setup.world.module(name)
    except KeyError:
        raise ScenarioError(f"scenario {setup.s.name!r}: its hazards need the dynamics module {name!r}, "
                            f"which this world does not run") from None


# --- geometry helpers ------------------------------------------------------------------------------


def _surface_centre(f: Furniture) -> Spot:
    surface = f.surfaces[0]
    c = polygon_from_rings(surface.polygon).centroid
    return Spot(f.room, round(float(c.x), 3), round(float(c.y), 3), surface.height, f.pose.yaw)


def _grid(poly: Any, step: float) -> list[tuple[float, float]]:
    """Points of a regular grid inside a polygon (its representative point when none)."""
    if poly.is_empty:
        return []
    x0, y0, x1, y1 = poly.bounds
    xs, ys = np.meshgrid(np.arange(x0, x1 + 1e-9, step), np.arange(y0, y1 + 1e-9, step))
    pts = shapely.points(xs.ravel(), ys.ravel())
    inside = shapely.covers(poly, pts)
    found = [(float(p.x), float(p.y)) for p in pts[inside]]
    if not found:
        p = poly.representative_point()
        found = [(float(p.x), float(p.y))]
    return found


# --- files -----------------------------------------------------------------------------------------


def read_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file; :class:`ScenarioFileError` names the file and each bad field."""
    path = Path(path)
    scenario = read_yaml_file(path, Scenario, "scenario", ScenarioFileError)
    if scenario.name != path.stem:
        raise ScenarioFileError(f"{path.name}: field name: {scenario.name!r} differs from the file name")
    return scenario


@functools.lru_cache(maxsize=64)
def load_scenario(name: str, folder: str | None = None) -> Scenario:
    """The scenario ``name`` (``homeloop/bench/scenarios/<name>.yaml``, or under ``folder``)."""
    root = Path(folder) if folder is not None else SCENARIOS_DIR
    path = root / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in root.glob("*.yaml")))
        raise ScenarioFileError(f"no scenario {name!r} in {root} (scenarios: {known or 'none'})")
    return read_scenario(path)


def scenario_names(folder: str | Path | None = None) -> list[str]:
    """Names of every scenario file."""
    return sorted(p.stem for p in Path(folder or SCENARIOS_DIR).glob("*.yaml"))
