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
        catalog_id: resident_margaret   # required; homeloop/catalog/people.yaml (role and name come from there)
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
    withheld_cameras: [camera in kitchen, camera seeing range]   # offline: the robot must go and look.
                                        # `in`: every camera in the room (a room with none: nothing to
                                        # withhold; no such room: an error); `seeing` a person, furniture
                                        # or object: every camera of the agent's that would show it as set
                                        # up, through a door or a window too (light and privacy aside)
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
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import numpy as np
import shapely
from shapely import Polygon
from shapely.geometry.base import BaseGeometry
from pydantic import Field

from homeloop.core.catalog import Catalog
from homeloop.core.geometry import ShapeMemo
from homeloop.core.home import Furniture, Home, HomeObject, polygon_from_rings
from homeloop.core.io import read_yaml_file
from homeloop.sim.dynamics.appliances import Appliances
from homeloop.sim.dynamics.cooking import Cooking
from homeloop.sim.dynamics.people import STREET_DISTANCE, DoorWay, People
from homeloop.sim.dynamics.timeline import Action, Timeline
from homeloop.sim.dynamics.water import Water
from homeloop.sim.roles import ALIASES, BurnerRef, Roles, RoomThing, ScenarioError, Spot
from homeloop.sim.scenario_schema import (
    ACTION_NEEDS,
    CycleHazard,
    DeviceSpec,
    FaultSpec,
    Hazard,
    LeakHazard,
    ObjectSpec,
    OpeningSpec,
    PanHazard,
    PersonSpec,
    ScenarioFileError,
    ScenarioPieces,
    TimelineSpec,
)
from homeloop.sim.services.cameras import cameras_showing
from homeloop.sim.world import Dynamics, ObjectState, PersonState, Placement, World

if TYPE_CHECKING:
    from homeloop.sim.task import Task

#: The folder holding one YAML file per scenario.
SCENARIOS_DIR = Path(__file__).resolve().parent.parent / "bench" / "scenarios"

__all__ = ["Scenario", "ScenarioError", "ScenarioFileError", "ScenarioPieces", "load_scenario", "SCENARIOS_DIR"]


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


_Piece = TypeVar("_Piece")


def _by_key(base: tuple[_Piece, ...], extra: tuple[_Piece, ...], key: Callable[[_Piece], str]) -> tuple[_Piece, ...]:
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
#: Activities done lying on a seat: the person lies with their head (at +x of their heading,
#: homeloop/sim/visibility.py person_solids) at the item's back, where a bed's head board and pillows
#: are (the catalog's frame: the foot end of a bed is its front).
LIES_ON_SEAT = frozenset({"sleeping"})
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
        for device in self.s.devices:
            self.set_device(device)
        for opening in self.s.openings:
            self.set_opening(opening)
        for person in self.s.people:
            self.place_person(person)
        for obj in self.s.objects:
            self.place_object(obj)
        for hazard in self.s.hazards:
            _set_up_hazard(self, hazard)
        actions = [self.action(t) for t in self.s.timeline]
        for fault in self.s.faults:
            actions += self.fault(fault)
        for role in self.s.withheld_cameras:
            for camera_id in self.withheld(role):  # none there: nothing to withhold
                self.world.devices[camera_id].online = False
        if robot is not None:
            self.place_robot(robot)
        self.world.module(Timeline).load(actions)

    def withheld(self, role: str) -> list[str]:
        """The cameras ``camera in <room role>`` names (:meth:`Roles.cameras_in`), or ``camera seeing
        <role>``: those that would show the person, furniture or object filling the role, everyone
        and everything set up before them (:func:`~homeloop.sim.services.cameras.cameras_showing`)."""
        name, _, seen = role.partition(" seeing ")
        if not seen or ALIASES.get(name, name) != "dome_camera":
            return [c.id for c in self.roles.cameras_in(role)]
        if seen in self.world.people:
            return cameras_showing(self.world, seen)
        try:
            thing = self.roles.thing(seen)
        except ScenarioError:
            thing = None
        if not isinstance(thing, (Furniture, HomeObject)):
            raise self.roles.camera_error(role, "sees no person, furniture or object")
        return cameras_showing(self.world, thing.id)

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
        people = self.world.module(People)
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
                return _surface_centre(thing, head_to_back=activity in LIES_ON_SEAT)
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
                    return (_surface_centre(f, head_to_back=activity in LIES_ON_SEAT) if seated
                            else self.roles.front_of(f))
        return None

    # --- objects ------------------------------------------------------------------------------

    def place_object(self, spec: ObjectSpec) -> None:
        if spec.object is None:
            obj = self.new_object(spec)
            self.world.objects[obj.id] = obj
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
        object_id = spec.id
        if object_id is None:
            raise ScenarioError(f"scenario {self.s.name!r}: a new object needs an id")
        entry = self.catalog.objects.get(spec.catalog_id or "")
        if entry is None:
            raise ScenarioError(f"scenario {self.s.name!r}: object {spec.id}: unknown catalog object "
                                f"{spec.catalog_id!r}")
        props: dict[str, Any] = {k: v for k, v in (("capacity_l", entry.capacity_l),
                                                    ("soil_moisture", entry.soil_moisture)) if v is not None}
        if entry.contents is not None:
            props["contents"] = entry.contents.model_dump()
        obj = ObjectState(object_id, entry.id, entry.semantic_class, Placement(kind="floor"), 0.0, 0.0, 0.0, props)
        if spec.held_by is not None:
            person = self.world.people.get(spec.held_by)
            if person is None:
                raise ScenarioError(f"scenario {self.s.name!r}: object {spec.id}: held_by {spec.held_by!r} "
                                    f"is not one of its people")
            obj.placement = Placement(kind="held", room=person.room, holder=person.id)
            obj.x, obj.y = person.x, person.y
            person.holding.append(object_id)
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
            room = _in_a_room(self, spot, f"{obj.id}'s water")
            _module(self, Water).add_spill(self.world, f"{obj.id} tipped", room, spot.x, spot.y,
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
        top = polygon_from_rings(surface.polygon)
        blockers = [polygon_from_rings(f.footprint) for f in self.home.furniture if f.id != host.id]
        size = max(home_obj.size[:2])
        others = tuple((o.x, o.y) for o in self.world.objects.values()
                       if o.placement.furniture == host.id and o.id != home_obj.id)
        front = (host.pose.x, host.pose.y, host.pose.yaw)
        spot = _SURFACE_SPOTS.get(([top], blockers), (front, size, others),
                                  lambda: _surface_spot(top, blockers, front, size, others))
        if spot is None:
            raise self.roles.missing(host.semantic_class, f"no room for {home_obj.id} on {host.id}")
        return spot[0], spot[1], surface.height, surface.name

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
        from homeloop.sim.robot.body import place_robot

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


ACTIONS: dict[str, Callable[[_Setup, TimelineSpec], dict[str, Any]]] = {
    "message": _message_args, "walk": lambda s, t: {"person": t.person, "place": _place(s, t.to or "")},
    "activity": _activity_args, "deliver": _deliver_args, "ring_and_leave": _ring_and_leave_args,
    "break_in": _break_in_args, "leave_home": lambda s, t: {"person": t.person, "door": s.door()},
    "cook": _cook_args, "ring": lambda s, t: {"device": _doorbell(s, t.device)},
    "fault": _device_args, "clear_fault": _device_args, "set_device": _device_args,
    "open": _opening_args, "close": _opening_args, "lock": _opening_args, "unlock": _opening_args,
}


#: Front doors' ways in and out, by the door's and the rooms' shapes (a home's never move): every
#: scenario with a visitor in a home asks for the same door.
_DOORWAYS = ShapeMemo(64)


def _doorway(roles: Roles) -> DoorWay:
    """Points before the front door inside and outside, and the street point visitors come from."""
    home = roles.home
    door = roles.opening("front_door")
    inside = next((r for r in door.connects if home.room(r).indoor), door.connects[0])
    poly, rooms = polygon_from_rings(door.polygon), home.room_polygons()  # what the points are found from
    return _DOORWAYS.get(([poly], list(rooms.values())), (door.id, inside, tuple(rooms)),
                         lambda: _find_doorway(home, door.id, poly, inside))


def _find_doorway(home: Home, door: str, poly: BaseGeometry, inside: str) -> DoorWay:
    from homeloop.core import navigation
    from homeloop.core.geometry import face_point
    from homeloop.sim.dynamics.people import PATH_WIDTH

    room_poly = home.room_polygon(inside)
    depth = PATH_WIDTH / 2 + navigation.APPROACH_MARGIN
    (ix, iy), _ = face_point(poly, room_poly, depth)
    (ox, oy), _ = face_point(poly, room_poly, depth, far_side=True)
    (sx, sy), _ = face_point(poly, room_poly, STREET_DISTANCE, far_side=True)
    return DoorWay(door, (float(ix), float(iy)), inside, (float(ox), float(oy)), home.room_at(float(ox), float(oy)),
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
    _module(setup, Cooking).add_pan(setup.world, pan.id, burner.stove.id, burner.field, h.recipe)


def _leak(setup: _Setup, h: LeakHazard) -> None:
    spot = setup.roles.spot(h.at)
    spot = setup.roles.floor_spot(spot.room, near=(spot.x, spot.y)) if spot.room else spot
    valve = setup.roles.device(h.valve).id
    room = _in_a_room(setup, spot, f"the leak at {h.at!r}")
    _module(setup, Water).add_leak(setup.world, f"leak at {h.at}", room, spot.x, spot.y, valve)


def _cycle(setup: _Setup, h: CycleHazard) -> None:
    device = setup.roles.device(h.device)
    _module(setup, Appliances).start_cycle(setup.world, device.id, h.seconds)


def _set_up_hazard(setup: _Setup, hazard: Hazard) -> None:
    """Hand a hazard to the dynamics module that runs it."""
    if isinstance(hazard, PanHazard):
        _pan(setup, hazard)
    elif isinstance(hazard, LeakHazard):
        _leak(setup, hazard)
    else:
        _cycle(setup, hazard)


_Module = TypeVar("_Module", bound=Dynamics)


def _module(setup: _Setup, kind: type[_Module]) -> _Module:
    try:
        return setup.world.module(kind)
    except KeyError:
        raise ScenarioError(f"scenario {setup.s.name!r}: its hazards need the dynamics module {kind.name!r}, "
                            f"which this world does not run") from None


def _in_a_room(setup: _Setup, spot: Spot, what: str) -> str:
    """The room of a spot where water runs out (water spreads over a room's floor)."""
    if spot.room is None:
        raise ScenarioError(f"scenario {setup.s.name!r}: {what} lies outside every room of home "
                            f"{setup.home.home_id}")
    return spot.room


# --- geometry helpers ------------------------------------------------------------------------------


#: Spots found on surfaces, by the surface's and the other furniture's shapes (a home's never move),
#: the host's pose, the object's size and where the objects already on it lie.
_SURFACE_SPOTS = ShapeMemo(256)


def _surface_spot(top: Polygon, blockers: list[Polygon], front: tuple[float, float, float], size: float,
                  others: tuple[tuple[float, float], ...]) -> tuple[float, float] | None:
    """:meth:`_Setup.surface_spot` on the surface ``top``, for the host standing at ``front`` (x, y,
    yaw); None where no spot is found."""
    area = top.buffer(-(size / 2 + SURFACE_MARGIN))
    taken = [shapely.Point(x, y).buffer(size + SURFACE_MARGIN) for x, y in others]
    free = area.difference(shapely.union_all(taken)) if taken else area
    if free.is_empty:
        free = area
    hx, hy, yaw = front
    c, s = math.cos(yaw), math.sin(yaw)
    grid = _grid(free, 0.04)
    xy = np.array(grid).reshape(-1, 2)
    ahead_x, ahead_y = xy[:, 0] + c * REACH_APPROACH, xy[:, 1] + s * REACH_APPROACH
    blocked = np.zeros(len(xy), dtype=bool)
    for b in blockers:  # every spot at once, as containing a point of each one by one would
        blocked |= shapely.contains_xy(b, ahead_x, ahead_y) | shapely.contains_xy(b, xy[:, 0], xy[:, 1])
    best = None
    for (x, y), in_way in zip(grid, blocked.tolist()):
        score = (in_way, -round(c * (x - hx) + s * (y - hy), 3), round(x, 3), round(y, 3))
        best = min(best, (score, x, y)) if best else (score, x, y)
    return (round(best[1], 3), round(best[2], 3)) if best is not None else None


def _surface_centre(f: Furniture, head_to_back: bool = False) -> Spot:
    """The middle of the item's first surface, facing out of its front (or, ``head_to_back``, into
    its back: a person lying there has their head at the back)."""
    surface = f.surfaces[0]
    c = polygon_from_rings(surface.polygon).centroid
    yaw = math.remainder(f.pose.yaw + math.pi, math.tau) if head_to_back else f.pose.yaw
    return Spot(f.room, round(float(c.x), 3), round(float(c.y), 3), surface.height, yaw)


def _grid(poly: BaseGeometry, step: float) -> list[tuple[float, float]]:
    """Points of a regular grid inside a polygon (its representative point when none)."""
    if poly.is_empty:
        return []
    x0, y0, x1, y1 = poly.bounds
    xs, ys = np.meshgrid(np.arange(x0, x1 + 1e-9, step), np.arange(y0, y1 + 1e-9, step))
    pts = shapely.points(xs.ravel(), ys.ravel())
    inside = shapely.covers(poly, pts)
    found = list(zip(xs.ravel()[inside].tolist(), ys.ravel()[inside].tolist()))
    if not found:
        p = poly.representative_point()
        found = [(float(p.x), float(p.y))]
    return found


# --- files -----------------------------------------------------------------------------------------


def read_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file; :class:`ScenarioFileError` names the file and each bad field."""
    path = Path(path)
    scenario: Scenario = read_yaml_file(path, Scenario, "scenario", ScenarioFileError)
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
