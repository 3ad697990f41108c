"""The scripted reference agent (docs/agents.md): proof that every task can be solved with the tools.

It reads the simulator's ground truth to *decide* (where the glasses lie,
which camera sees the range, whether a room is dark), but it *acts* only
through tool calls, ``episode.call(tool, arguments)``, exactly as a model
would: its records show real call sequences, units and times. Each task has
one short plan (:data:`PLANS`) written from a few shared patterns in
:class:`Household` and its robot's :class:`RobotRoutines`:

- look at something with a house camera that sees it, or go and look with
  the robot (:meth:`Household.look_at`, :meth:`RobotRoutines.look`);
- switch a device found by type and room through the hub;
- fetch an object to a person, carry it in from the porch, put it somewhere;
- message a resident found by name in the contacts, or emergency services.

With a service withheld (``episode.withheld``) the plans take the routes
that stay solvable (docs/agents.md): the robot looks where no house camera
may, the hub unlocks a door the robot then opens, the hub switches the
stove off where no robot comes. Perception is used whether or not the
captures carry pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypedDict, TypeVarTuple

from homeloop.bench.agents.registry import register
from homeloop.sim.dynamics.light import Light
from homeloop.sim.services.robot_skills import HEAD_PAN_LIMIT_DEG, HEAD_TILT_RANGE_DEG, MAX_MOVE_M

if TYPE_CHECKING:
    from homeloop.core.home import Furniture, Opening
    from homeloop.sim.episode import Episode
    from homeloop.sim.robot import Route
    from homeloop.sim.world import ObjectState, PersonState, RobotState, World

#: Head pan (degrees) beyond which the plans turn the body instead, short of the head's limit.
HEAD_PAN_DEG = HEAD_PAN_LIMIT_DEG - 10.0

#: Height (m) to aim at on a person, by posture.
PERSON_AIM_Z = {"standing": 1.2, "sitting": 0.9, "lying": 0.2}

#: How near (m) to a point of its way a walking robot counts as there.
WALK_TOLERANCE_M = 0.05
#: How far (m) a walk's way keeps off the edge of the body's free floor where it can: a planned way
#: runs along that edge round furniture, and a straight move turned to a tenth of a degree along it
#: strays over it and is stopped at once.
WALK_MARGIN_M = 0.02
#: Shut doors the robot opens on one walk up to what it looks at (:meth:`RobotRoutines.look_closer`).
DOORS_OPENED_WALKING = 3

#: Pause (s) between looks while waiting for something to happen (a courier to leave the door).
WAIT_STEP_S = 5.0


class ActionFailed(RuntimeError):
    """A call came back with an error the plan cannot go on from."""


class ListedDevice(TypedDict):
    """A device as ``hub_list_devices`` lists it (the keys the plans read)."""

    id: str
    type: str
    room: str | None


class ListedCamera(TypedDict):
    """A house camera as ``cameras_list_cameras`` lists it (the keys the plans read)."""

    id: str
    room: str | None
    privacy_mode: str


class Contact(TypedDict):
    """A contact as ``messaging_list_contacts`` lists it (the keys the plans read)."""

    id: str
    name: str
    role: str


@dataclass(frozen=True)
class Thing:
    """Something to look at: a perception kind and entity id, the room it is in and where to aim."""

    kind: str  # object | furniture | opening | device | person | place
    id: str
    room: str | None
    x: float
    y: float
    z: float


# --- the tools at hand ----------------------------------------------------------------------------


class Household:
    """The episode's tools, wrapped in the patterns the plans share (see the module docstring); the
    robot's own are at :attr:`robot`."""

    def __init__(self, episode: Episode):
        self.ep = episode
        self.world: World = episode.world
        self.tools = set(episode.tool_names())
        self.robot = RobotRoutines(self)
        self._devices: list[ListedDevice] | None = None
        self._cameras: list[ListedCamera] | None = None
        self._contacts: list[Contact] | None = None
        self._found: dict[tuple[str, bool], dict[str, str]] = {}
        self.done: list[str] = []  # what was done, for the summary

    # -- plumbing

    def has(self, *services: str) -> bool:
        """Whether the episode's tools include those of every one of ``services``."""
        return all(any(t.startswith(f"{s}_") for t in self.tools) for s in services)

    def call(self, tool: str, **arguments: Any) -> Any:
        """Make a call; its data, or :class:`ActionFailed` with the call's error (or when the
        episode does not offer the tool: the call is not made)."""
        if tool not in self.tools:
            raise ActionFailed(f"{tool} is not offered here")
        result = self.ep.call(tool, arguments)
        if result.error is not None:
            raise ActionFailed(f"{tool}: {result.error}")
        return result.data

    def note(self, text: str) -> None:
        self.done.append(text)

    # -- ground truth, to decide

    def person(self, role: str = "resident") -> PersonState:
        return next(p for p in self.world.people.values() if p.role == role)

    def object_of(self, *classes: str) -> ObjectState:
        return next(o for o in self.world.objects.values() if o.semantic_class in classes or o.catalog_id in classes)

    def furniture_of(self, cls: str, room: str | None = None) -> Furniture:
        return next(f for f in self.world.home.furniture if f.semantic_class == cls and room in (None, f.room))

    def lit(self, room: str) -> bool:
        return self.world.module(Light).lit(room)

    def front_door(self) -> Opening:
        return next(o for o in self.world.home.openings if o.kind == "entrance_door")

    def indoor_side(self, opening: Opening) -> str:
        return next(r for r in opening.connects if self.world.home.room(r).indoor)

    # -- the hub

    def devices(self, type: str | None = None, room: str | None = None) -> list[ListedDevice]:
        """Devices of a type in a room: as the hub lists them (one hub_list_devices call, then
        kept), or as the home file has them where the hub is withheld (for the robot to press)."""
        if self._devices is None:
            if self.has("hub"):
                self._devices = self.call("hub_list_devices")["devices"]
            else:
                self._devices = [{"id": d.id, "type": d.type, "room": d.room}
                                 for d in self.world.home.devices if d.agent_visible]
        return [d for d in self._devices if type in (None, d["type"]) and room in (None, d["room"])]

    def device(self, type: str, room: str | None = None) -> str:
        """The id of the first device of a type (in a room)."""
        found = self.devices(type, room)
        if not found:
            raise ActionFailed(f"no {type}" + (f" in room {room}" if room else "") + " is listed")
        return found[0]["id"]

    def set_device(self, device_id: str, field: str, value: object) -> None:
        """Switch a device: through the hub, else by the robot pressing its switch (a ceiling light's
        wall switch, a lamp's own switch, the knobs of the range a stove is built into)."""
        if self.has("hub"):
            self.call("hub_set_state", device_id=device_id, field=field, value=value)
            return
        if self.world.devices[device_id].values.get(field) == value:
            return
        seen = self.robot.approach(self._switch_of(device_id), light=False)
        wall_switch = self.world.home.device(device_id).type == "light" and self._switch_of(device_id).id != device_id
        self.call("robot_press", target=seen, **({} if wall_switch else {"button": field}))

    def _switch_of(self, device_id: str) -> Thing:
        """What the robot presses to switch a device: a light's wall switch, the furniture a device
        is built into, else the device itself."""
        entry = self.world.home.device(device_id)
        if entry.mount == "built_in" and entry.mounted_on:
            return self.thing("furniture", entry.mounted_on)
        switch = next((d.id for d in self.world.home.devices if d.type == "light_switch" and device_id in d.controls),
                      device_id)
        return self.thing("device", switch)

    def light_up(self, room: str | None) -> None:
        """Switch a dark room's lights on, so perception can see there: the ceiling light, then the
        others while the room stays too dark (one ceiling light leaves a large room dim)."""
        if room is None or self.lit(room) or not (self.has("hub") or self.has("robot")):
            return
        ceiling = {d.id for d in self.world.home.devices if d.mount == "ceiling"}
        lights = sorted((d["id"] for d in self.devices("light", room)), key=lambda d: (d not in ceiling, d))
        for light in lights:
            try:
                self.set_device(light, "on", True)
                self.note(f"switched the light {light} on in room {room}")
            except ActionFailed:
                return  # a dark room's switch cannot be seen either: go on and look as well as may be
            if self.lit(room):
                return

    def stove_off(self) -> None:
        """Switch off every lit burner (the hub reads which; without it the ground truth says)."""
        for stove in [d["id"] for d in self.devices("stove")]:
            if self.has("hub"):
                readings = self.call("hub_get_state", device_id=stove)["readings"]
            else:
                readings = self.world.devices[stove].values
            for burner in [f for f, v in readings.items() if f.startswith("burner") and v is True]:
                self.set_device(stove, burner, False)
        self.note("switched the stove off")

    def lock_front_door(self, locked: bool) -> None:
        lock = next(d["id"] for d in self.devices("lock") if d["room"] in self.front_door().connects)
        self.set_device(lock, "lock_state", "locked" if locked else "unlocked")

    # -- messaging

    def contacts(self) -> list[Contact]:
        if self._contacts is None:
            self._contacts = self.call("messaging_list_contacts")["contacts"]
        return self._contacts

    def tell(self, person: PersonState, text: str) -> None:
        """Message a person, found by name among the contacts."""
        contact = next(c for c in self.contacts() if c["name"] == person.name)
        self.call("messaging_send", recipient=contact["id"], text=text)
        self.note(f"told {person.name}")

    def tell_resident(self, text: str) -> None:
        self.tell(self.person("resident"), text)

    def call_emergency(self, text: str) -> None:
        contact = next(c for c in self.contacts() if c["role"] == "emergency")
        self.call("messaging_send", recipient=contact["id"], text=text)
        self.note("called emergency services")

    def wait(self, seconds: float) -> None:
        self.call("clock_wait", seconds=seconds)

    # -- looking

    def thing(self, kind: str, entity_id: str) -> Thing:
        """Where to aim at an entity perception may report (from the ground truth)."""
        return THINGS[kind](self.world, entity_id)

    def detections(self, capture_id: str, people: bool = False) -> dict[str, str]:
        """What perception finds in a capture: entity id -> detection id (the detection registry
        says which entity each detection is). Asked once per capture."""
        key = (capture_id, people)
        if key not in self._found:
            if people:
                found = self.call("perception_identify_people", capture_id=capture_id)["people"]
            else:
                found = self.call("perception_detect_objects", capture_id=capture_id)["detections"]
            registry = self.ep.state["detections"]
            self._found[key] = {registry[d["id"]]["entity"]: d["id"] for d in found}
        return self._found[key]

    def detection(self, capture_id: str, thing: Thing) -> str | None:
        """Perception's detection of ``thing`` in a capture, if it reports it."""
        return self.detections(capture_id, people=thing.kind == "person").get(thing.id)

    def shows(self, capture_id: str, thing: Thing) -> bool:
        """Whether a capture shows ``thing``: perception reports it, or where perception is not
        offered, the capture's record of its frame says it could (what its pixels would show)."""
        if self.has("perception"):
            return self.detection(capture_id, thing) is not None
        from homeloop.sim.services.perception import detectable

        record = self.ep.state["captures"][capture_id]
        return any(e["id"] == thing.id and detectable(e) for e in record["entities"])

    def cameras(self) -> list[ListedCamera]:
        if self._cameras is None:
            self._cameras = self.call("cameras_list_cameras")["cameras"] if self.has("cameras") else []
        return self._cameras

    def camera_look(self, thing: Thing) -> str | None:
        """Capture ``thing`` with the house camera of its room, or failing that one next to it; the
        capture's id, or None when none shows it."""
        for camera in sorted(self.cameras(), key=lambda c: self._camera_rank(c, thing)):
            if self._camera_could_see(camera, thing):
                shot: str = self.call("cameras_capture", camera_id=camera["id"])["capture_id"]
                if self.shows(shot, thing):
                    return shot
        return None

    def _camera_rank(self, camera: ListedCamera, thing: Thing) -> tuple[bool, float]:
        """Cameras of the thing's room first, then the nearest."""
        pose = next(c for c in self.world.home.cameras if c.id == camera["id"]).pose
        return camera["room"] != thing.room, math.hypot(pose.x - thing.x, pose.y - thing.y)

    def _camera_could_see(self, camera: ListedCamera, thing: Thing) -> bool:
        """A camera worth a capture: in the thing's room or one joined to it, showing people."""
        home = self.world.home
        rooms = {thing.room} | {r for o in home.openings if thing.room in o.connects for r in o.connects}
        return camera["room"] in rooms and camera["privacy_mode"] == "none"

    def look_at(self, thing: Thing) -> str | None:
        """Look at ``thing`` with a house camera that sees it, or go and look with the robot (from
        closer, if it is hidden where the robot arrives); the id of a capture showing it, or None
        when neither can (the plans that only need a look go on)."""
        self.light_up(thing.room)
        shot = self.camera_look(thing)
        if shot is None and self.has("robot"):
            try:
                shot = self.robot.look(thing)
            except ActionFailed as exc:
                shot = self.robot.look_closer(thing)
                if shot is None:
                    self.note(f"could not look: {exc}")
        return shot

    def see_person(self, person: PersonState) -> str | None:
        """Look at a person with the robot's own camera (perception identifies them), lighting their
        room if dark; a house camera only where no robot is offered. The capture's id, or None."""
        thing = self.thing("person", person.id)
        if not self.has("robot"):
            return self.look_at(thing)
        try:
            return self.robot.look(thing)
        except ActionFailed as exc:
            shot = self.robot.look_closer(thing)
            if shot is None:
                self.note(f"could not look: {exc}")
            return shot


# --- the robot's routines -------------------------------------------------------------------------


class RobotRoutines:
    """The robot's routines the plans share, each a few of its skills' calls: drive to a room, aim the
    head camera, look for something (from closer when furniture hides it), walk a planned way, pick,
    hand over, put down, and open or close a door or window."""

    def __init__(self, household: Household):
        self.h = household

    @property
    def state(self) -> RobotState:
        """Where the robot stands and what it holds (the ground truth)."""
        robot = self.h.world.robot
        if robot is None:
            raise ActionFailed("this episode has no robot body")
        return robot

    def go(self, room: str | None) -> None:
        """Drive to ``room``; a place outside every room of the plan (a parcel spot beyond a
        plan with no porch drawn) is reached from where the robot stands, at the door."""
        if room is not None and self.state.room != room:
            self.h.call("robot_navigate_to", room=room)

    def aim(self, thing: Thing) -> None:
        """Point the head camera at ``thing``, turning the body when the head cannot pan so far."""
        robot = self.state
        bearing = math.degrees(math.atan2(thing.y - robot.y, thing.x - robot.x) - robot.yaw)
        pan = (bearing + 180.0) % 360.0 - 180.0
        if abs(pan) > HEAD_PAN_DEG:
            self.h.call("robot_turn", degrees=round(pan, 1))
            pan = 0.0
        eye = robot.body.head_camera.height or robot.body.body.height * 0.9
        tilt = math.degrees(math.atan2(thing.z - eye, max(math.hypot(thing.x - robot.x, thing.y - robot.y), 0.1)))
        tilt = min(max(tilt, HEAD_TILT_RANGE_DEG[0]), HEAD_TILT_RANGE_DEG[1])
        self.h.call("robot_look", pan_deg=round(pan, 1), tilt_deg=round(tilt, 1))

    def capture(self, thing: Thing) -> str | None:
        """Aim and capture with the robot's camera; the capture's id if it shows ``thing``."""
        self.aim(thing)
        shot: str = self.h.call("robot_capture")["capture_id"]
        return shot if self.h.shows(shot, thing) else None

    def look(self, thing: Thing, room: str | None = None, light: bool = True) -> str:
        """A capture of the robot's camera showing ``thing``: switch the light on in its room if dark
        (unless ``light`` is False), go there (or to ``room``), aim and capture; if it stays hidden,
        go up to what it rests on and look again; then look all round."""
        if light:
            self.h.light_up(thing.room)
        self.go(room or thing.room)
        shot = self.capture(thing)
        host = self._host(thing)
        if shot is None and host is not None and self.h.has("perception"):
            self.h.call("robot_approach", target=self.find(host))
            shot = self.capture(thing)
        if shot is None:
            shots = [c["capture"]["capture_id"] for c in self.h.call("robot_scan")["captures"]]
            shot = next((c for c in shots if self.h.shows(c, thing)), None)
        if shot is None:
            raise ActionFailed(f"the robot could not see the {thing.kind} {thing.id}")
        return shot

    def find(self, thing: Thing, room: str | None = None, light: bool = True) -> str:
        """A detection of ``thing`` from the robot's own camera, as physical skills need: looked for
        from where the robot arrives, then, if furniture hides it there, from closer."""
        if not self.h.has("perception"):
            raise ActionFailed("physical skills need detections, and perception is not offered")
        shot: str | None
        try:
            shot = self.look(thing, room, light)
        except ActionFailed:
            shot = self.look_closer(thing)
            if shot is None:
                raise
        seen = self.h.detection(shot, thing)
        if seen is None:  # a capture shows a thing exactly when perception reports it there
            raise ActionFailed(f"perception does not report the {thing.kind} {thing.id}")
        return seen

    def look_closer(self, thing: Thing) -> str | None:
        """Walk to where the body could reach ``thing`` (the plans know where it is; the skills
        still need a detection) by turns and straight moves along a planned way (kept off the floor's
        edge where it can be, :meth:`_walking_way`), and capture from there; the capture's id if it
        shows ``thing``, None when there is no way or it stays hidden. Where the robot reaches it
        already and does not see it, it walks to the spot nearest it instead (to its other side).
        Straight moves open no door: where the walk stops short and the way passes a shut door, the
        robot opens it from its side and walks a way planned anew (not on its way up to a door or
        window itself, which opening a door would look closer at again)."""
        from homeloop.sim import robot as rb

        if thing.kind == "place" or not self.h.has("robot"):
            return None
        world, robot = self.h.world, self.state
        for doors_opened in range(DOORS_OPENED_WALKING + 1):
            try:
                aim = rb.target_of(world, thing.kind, thing.id)
                spot = rb.approach_spot(world, robot, aim)  # as robot_approach drives
                if not doors_opened and math.dist(spot, (robot.x, robot.y)) <= WALK_TOLERANCE_M:
                    # it reaches from here, yet does not see: from the spot nearest it, its other side
                    spot = rb.approach_spot(world, robot, aim, stay=False)
                way = self._walking_way(spot, aim.exclude)
            except (rb.ReachError, rb.NoPath, KeyError):
                if not doors_opened:
                    return None
                break  # no way on from the door opened: look from there
            if self.walk_along(way) or thing.kind == "opening" or not self._open_door_on(way.doors):
                break
        return self.capture(thing)

    def _walking_way(self, spot: tuple[float, float], exclude: Iterable[str]) -> "Route":
        """The way a walk to ``spot`` takes: planned for a body :data:`WALK_MARGIN_M` wider each side,
        so its legs keep that far off the floor's edge, where one is found; else the way the robot
        would drive (:func:`homeloop.sim.robot.drive_way`)."""
        from homeloop.sim import robot as rb

        try:
            return rb.drive_way(self.h.world, self.state, spot, exclude, margin=WALK_MARGIN_M)
        except rb.NoPath:
            return rb.drive_way(self.h.world, self.state, spot, exclude)

    def _open_door_on(self, doors: Iterable[str]) -> bool:
        """Open the first shut door of ``doors`` (a planned way's: it passes only doors the body can
        open, :func:`homeloop.sim.robot.closed_off`) from the robot's side; whether it did."""
        world = self.h.world
        shut = next((d for d in doors if not world.openings[d].open), None)
        if shut is None:
            return False
        try:
            self.swing(world.home.opening(shut), True, self.state.room)
        except ActionFailed:
            return False
        return world.openings[shut].open

    def walk_along(self, way: "Route") -> bool:
        """Walk ``way`` leg by leg (:meth:`walk_to`), stopping at the first leg that does not get
        there; whether every leg did."""
        return all(self.walk_to(x, y) for x, y in way.points[1:])

    def walk_to(self, x: float, y: float) -> bool:
        """Turn towards (x, y) and drive straight there; whether the robot got there, or within
        :data:`WALK_TOLERANCE_M` of it (a planned way may graze what a straight move stops short of)."""
        robot = self.state
        bearing = math.degrees(math.atan2(y - robot.y, x - robot.x) - robot.yaw)
        turn = round((bearing + 180.0) % 360.0 - 180.0, 1)
        try:
            if abs(turn) >= 0.1:
                self.h.call("robot_turn", degrees=turn)
            for _ in range(math.ceil(math.hypot(x - robot.x, y - robot.y) / MAX_MOVE_M)):
                left = math.hypot(x - robot.x, y - robot.y)
                if left > WALK_TOLERANCE_M:
                    self.h.call("robot_move", distance=round(min(left, MAX_MOVE_M), 3))
        except ActionFailed:
            pass
        return math.hypot(x - robot.x, y - robot.y) <= WALK_TOLERANCE_M

    def _host(self, thing: Thing) -> Thing | None:
        """The furniture an object rests on or in."""
        if thing.kind != "object":
            return None
        furniture = self.h.world.objects[thing.id].placement.furniture
        return self.h.thing("furniture", furniture) if furniture else None

    def approach(self, thing: Thing, room: str | None = None, light: bool = True) -> str:
        """Find ``thing`` with the robot's camera and drive up to it; the detection's id."""
        seen = self.find(thing, room, light)
        self.h.call("robot_approach", target=seen)
        return seen

    def within_reach_of_part(self, furniture: Furniture, part: str) -> None:
        """Walk on to where a hand reaches ``part`` of ``furniture`` (a dryer's door) where an approach
        left it out of reach: an approach stands by the nearest of the furniture's handles, which may
        be its top or its drum, away from the door. Where no spot or way reaches the part, the robot
        stays, and working the part says why."""
        from homeloop.sim import robot as rb

        world, robot = self.h.world, self.state
        target = rb.part_target(rb.target_of(world, "furniture", furniture.id), part)
        if target is None:  # a part without a hinge to work it by: nothing to walk to
            return
        try:
            rb.reach_from(robot.body, (robot.x, robot.y), target)
            return
        except rb.ReachError:
            pass
        try:
            way = self._walking_way(rb.approach_spot(world, robot, target), target.exclude)
        except (rb.ReachError, rb.NoPath):
            return
        self.walk_along(way)

    def pick(self, thing: Thing) -> None:
        seen = self.approach(thing)
        self.h.call("robot_pick", target=seen)

    def hand_to(self, person: PersonState) -> None:
        seen = self.approach(self.h.thing("person", person.id))
        self.h.call("robot_handoff", target=seen)
        self.h.note(f"handed it to {person.name}")

    def put_on(self, furniture: Furniture, surface: str | None = None) -> None:
        seen = self.approach(self.h.thing("furniture", furniture.id))
        self.h.call("robot_place", target=seen, **({"on": surface} if surface else {}))

    def swing(self, opening: Opening, open_it: bool, room: str) -> str:
        """Open or close a door or window from ``room``'s side."""
        seen = self.approach(self.h.thing("opening", opening.id), room)
        self.h.call("robot_open" if open_it else "robot_close", target=seen)
        return seen


# --- where things are (ground truth) ----------------------------------------------------------------


def _object_thing(world: World, object_id: str) -> Thing:
    o = world.objects[object_id]
    entry = world.catalog.objects.get(o.catalog_id)
    height = entry.dimensions.height if entry is not None else 0.1
    room = o.placement.room if o.placement.kind != "held" else None
    return Thing("object", o.id, room, o.x, o.y, o.z + height / 2)


def _furniture_thing(world: World, furniture_id: str) -> Thing:
    f = world.home.furniture_item(furniture_id)
    return Thing("furniture", f.id, f.room, f.pose.x, f.pose.y, f.height / 2)


def _opening_thing(world: World, opening_id: str) -> Thing:
    from homeloop.core.home import polygon_from_rings

    o = world.home.opening(opening_id)
    c = polygon_from_rings(o.polygon).centroid
    return Thing("opening", o.id, o.connects[0], c.x, c.y, o.sill + o.height / 2)


def _device_thing(world: World, device_id: str) -> Thing:
    d = world.home.device(device_id)
    return Thing("device", d.id, d.room, d.pose.x, d.pose.y, d.pose.z)


def _person_thing(world: World, person_id: str) -> Thing:
    p = world.people[person_id]
    return Thing("person", p.id, p.room, p.x, p.y, PERSON_AIM_Z.get(p.posture, 1.0))


def _place_thing(world: World, place: str) -> Thing:
    """The place perception reports, the doormat, lies on the parcel spot outside the entrance door."""
    from homeloop.sim.roles import Roles

    spot = Roles(world.home, place).point("parcel_spot")
    return Thing("place", place, spot.room, spot.x, spot.y, 0.0)


THINGS: dict[str, Callable[[World, str], Thing]] = {
    "object": _object_thing, "furniture": _furniture_thing, "opening": _opening_thing,
    "device": _device_thing, "person": _person_thing, "place": _place_thing,
}


# --- shared patterns ----------------------------------------------------------------------------------


#: The arguments of a step :func:`attempt` makes.
Args = TypeVarTuple("Args")


def attempt(h: Household, step: Callable[[*Args], object], *args: *Args) -> bool:
    """Do a step the rest of the plan does not depend on; a failure is noted and the plan goes on."""
    try:
        step(*args)
        return True
    except ActionFailed as exc:
        h.note(f"could not finish a step: {exc}")
        return False


def fetch_to(h: Household, obj: ObjectState, person: PersonState) -> None:
    """Fetch an object to a person and hand it over."""
    h.robot.pick(h.thing("object", obj.id))
    h.robot.hand_to(person)
    h.note(f"brought the {label(obj)}")


def carry_in(h: Household, obj: ObjectState) -> None:
    """Bring an object in from outside the front door: unlock it, open it with the robot, pick the
    object up, put it down inside, shut the door and lock it again."""
    door = h.front_door()
    inside = h.indoor_side(door)
    h.lock_front_door(False)
    h.robot.swing(door, True, inside)
    h.robot.pick(h.thing("object", obj.id))
    h.robot.go(inside)
    back_away_from(h, door)
    h.call("robot_place")
    try:
        h.robot.swing(door, False, inside)
    except ActionFailed as exc:  # in a narrow hall, what it put down bars the way back to the door
        h.note(str(exc))
        h.robot.pick(h.thing("object", obj.id))
        h.robot.swing(door, False, inside)  # shut it with the object in hand, then put it down
        h.call("robot_place")
    h.lock_front_door(True)
    h.note(f"brought the {label(obj)} in and locked the door")


#: How far (m) the robot keeps from a doorway when it puts something down, so the door still shuts.
DOORWAY_CLEARANCE_M = 1.5


def back_away_from(h: Household, opening: Opening) -> None:
    """Back away from a doorway the robot stands in (having reached out of it for something), so what
    it puts down in front of it does not block the door."""
    from homeloop.core.home import polygon_from_rings
    from shapely import Point

    robot = h.robot.state
    gap = polygon_from_rings(opening.polygon).distance(Point(robot.x, robot.y))
    if gap >= DOORWAY_CLEARANCE_M:
        return
    try:
        h.call("robot_move", distance=-round(DOORWAY_CLEARANCE_M - gap, 2))
    except ActionFailed as exc:  # stopped short by furniture: as far as it goes is fine
        h.note(str(exc))
    h.call("robot_turn", degrees=90.0)  # put it down beside the way to the door, not on it


def wait_until(h: Household, condition: Callable[[], bool], limit_s: float, step_s: float = WAIT_STEP_S) -> bool:
    """Let time pass in short waits until ``condition`` holds (read from the ground truth); False
    when it does not within ``limit_s``, or there is no clock to wait with."""
    start = h.ep.now()
    while not condition():
        if h.ep.now() - start >= limit_s or h.ep.done or not h.has("clock"):
            return False
        h.wait(step_s)
    return True


def label(obj: ObjectState) -> str:
    return obj.semantic_class.replace("_", " ")


def furniture(h: Household, cls: str) -> Thing:
    return h.thing("furniture", h.furniture_of(cls).id)


def fall_wearer(h: Household) -> PersonState:
    """Whose watch raised the fall alert: the wearables service names the wearer, else the ground truth."""
    source = h.ep.wake["event"]["source"]
    if h.has("wearables"):
        worn = next(w for w in h.call("wearables_list_wearables")["wearables"] if w["id"] == source)
        return next(p for p in h.world.people.values() if p.name == worn["wearer"])
    return next(p for p in h.world.people.values() if source in p.wears)


def room_of_role(h: Household, role: str) -> str:
    """The room filling a scenario's room role (``living``, ``kitchen`` ...) in this home."""
    from homeloop.sim.roles import Roles

    return Roles(h.world.home, h.ep.scenario.name).room(role)


# --- one plan per task (docs/tasks.md) ------------------------------------------------------------------


def handle_smoke_alarm(h: Household) -> None:
    h.look_at(furniture(h, "range"))
    attempt(h, h.stove_off)
    h.tell_resident("The kitchen smoke alarm went off: a pan of oil was overheating on the stove. "
                    "I switched the stove off; please check the kitchen.")


def kitchen_fire_emergency(h: Household) -> None:
    attempt(h, h.stove_off)
    h.call_emergency("Fire at home: a pan is burning on the kitchen stove. The stove is switched off.")
    h.tell_resident("A pan is burning in the kitchen. I switched the stove off and called emergency "
                    "services. Please keep away from the kitchen and leave the house.")


def smoke_while_cooking(h: Household) -> None:
    h.look_at(h.thing("person", h.person().id))
    h.tell_resident("The kitchen smoke alarm went off while you are frying. I left the stove on; "
                    "opening a window or switching the hood on will clear the smoke.")


def smoke_sensor_fault(h: Household) -> None:
    if h.look_at(furniture(h, "range")) is not None:
        h.note("saw the range: nothing on it burns or smokes, so the alarm is faulty")


def water_leak_response(h: Household) -> None:
    if attempt(h, h.set_device, h.device("water_main"), "state", "closed"):
        h.note("closed the water main")
    h.look_at(furniture(h, "dishwasher"))
    h.tell_resident("Water leaked by the dishwasher: its supply hose burst. I closed the water main; "
                    "the hose needs a plumber.")


def watering_can_spill(h: Household) -> None:
    h.look_at(h.thing("object", h.object_of("watering_can").id))
    h.tell_resident("The leak alarm went off because the watering can tipped over by the dishwasher. "
                    "The water supply is fine; the floor needs a wipe.")


def leak_sensor_fault(h: Household) -> None:
    if h.look_at(furniture(h, "dishwasher")) is not None:
        h.note("saw the dishwasher: the floor is dry, so the leak sensor is faulty")


def bring_in_package(h: Household) -> None:
    carry_in(h, h.object_of("parcel"))


def answer_delivery(h: Household) -> None:
    parcel = h.object_of("parcel")
    h.camera_look(h.thing("object", parcel.id))  # the courier is gone by the time the robot is at the door
    carry_in(h, parcel)


def doorbell_false_alarm(h: Household) -> None:
    mat = h.thing("place", "doormat")
    if h.camera_look(mat) is not None:
        h.note("the porch camera shows nobody and nothing at the door; the door stays locked")
        return
    door = h.front_door()
    inside = h.indoor_side(door)
    h.lock_front_door(False)
    h.robot.swing(door, True, inside)
    h.robot.look(mat, inside)
    h.robot.swing(door, False, inside)
    h.lock_front_door(True)
    h.note("looked out at the porch: nobody and nothing there; locked the door again")


def respond_to_intruder(h: Household) -> None:
    intruder = h.person("intruder")
    living = room_of_role(h, "living")
    h.light_up(living)  # the intruder heads there, and turns back once they notice the light
    wait_until(h, lambda: intruder.room == living, 120.0, step_s=1.0)
    thing = h.thing("person", intruder.id)
    # the robot stands in that room: one look with its camera first, as they soon turn back
    if not (h.has("robot") and h.robot.capture(thing)):
        h.look_at(thing)
    h.call_emergency("A stranger has broken in through the front door and is in the house now.")
    h.tell_resident("Someone broke in through the front door. I called emergency services; "
                    "stay in your bedroom and keep the door shut.")


def fetch_medicine(h: Household) -> None:
    fetch_to(h, h.object_of("pill_box_red"), h.person())


def find_my_glasses(h: Household) -> None:
    fetch_to(h, h.object_of("glasses"), h.person())


def medicine_missing(h: Household) -> None:
    for box in (h.object_of("pill_box_blue"), h.object_of("pill_box_white")):
        h.look_at(h.thing("object", box.id))
    h.tell_resident("I could not find your red pill box: only the blue and the white ones are on the "
                    "nightstand, and I left them there.")


def put_away(h: Household) -> None:
    mug = h.object_of("mug")
    h.light_up(mug.placement.room)
    h.robot.pick(h.thing("object", mug.id))
    h.robot.put_on(h.furniture_of("coffee_table"), "top")
    h.note("put the mug on the coffee table")


#: Soil moisture the plan waters a dry plant up to, a margin above what the task asks (docs/tasks.md).
WANTED_MOISTURE = 0.35


def water_the_plants(h: Household) -> None:
    """Water the plants whose soil sensors read drier than :data:`WANTED_MOISTURE`; leave the wet ones."""
    plants = [o for o in h.world.objects.values() if o.semantic_class == "potted_plant"]
    dry = [p for p in plants if soil_moisture(h, p) < WANTED_MOISTURE]
    h.robot.pick(h.thing("object", h.object_of("watering_can").id))
    for plant in dry:
        seen = h.robot.approach(h.thing("object", plant.id))
        h.call("robot_pour", target=seen, litres=litres_to_water(plant))
    h.call("robot_place")
    h.note(f"watered the {len(dry)} dry plant(s), left {len(plants) - len(dry)} wet one(s) and put the can down")


def soil_moisture(h: Household, plant: ObjectState) -> float:
    """A plant's soil moisture as its sensor reads it through the hub, else the ground truth."""
    sensor = next((d.id for d in h.world.home.devices if d.type == "soil_moisture_sensor"
                   and plant.id in (d.mounted_on, *d.monitors)), None)
    if sensor is not None and h.has("hub"):
        return float(h.call("hub_get_state", device_id=sensor)["readings"]["moisture"])
    return float(plant.props["soil_moisture"])


def litres_to_water(plant: ObjectState, wanted: float = WANTED_MOISTURE) -> float:
    """Litres that bring a pot's soil up to ``wanted`` moisture (docs/skills.md: a litre raises it by
    the field capacity over the pot's capacity)."""
    from homeloop.sim.services.robot_skills import FIELD_CAPACITY

    capacity = float(plant.props.get("capacity_l") or 1.0)
    need = (wanted - float(plant.props["soil_moisture"])) * capacity / FIELD_CAPACITY
    return round(min(max(need, 0.1), 2.0), 2)


def answer_fall_alert(h: Household) -> None:
    """Every fall alert reads alike (docs/dynamics.md): send the robot to the wearer and look. What
    the capture shows decides (read from the ground truth, as this agent decides): on the floor,
    call for help and tell a housemate if there is one; asleep in bed, let them sleep."""
    wearer = fall_wearer(h)
    h.see_person(wearer)
    if wearer.activity != "collapsed":
        h.note(f"saw {wearer.name} asleep in bed: the watch's fall alert was false; let them sleep")
        return
    h.call_emergency(f"{wearer.name} has fallen at home and lies on the floor; their watch reported "
                     "the fall. Please send help.")
    housemate = next((p for p in h.world.residents() if p.id != wearer.id), None)
    if housemate is not None:
        h.tell(housemate, f"{wearer.name} has fallen and lies on the floor; I called emergency services. "
                          "Please go to them.")


def person_down_emergency(h: Household) -> None:
    answer_fall_alert(h)


def fall_false_alarm(h: Household) -> None:
    answer_fall_alert(h)


def housemate_down_emergency(h: Household) -> None:
    answer_fall_alert(h)


def housemate_fall_false_alarm(h: Household) -> None:
    answer_fall_alert(h)


def close_up_after_leaving(h: Household) -> None:
    for window in [o for o in h.world.home.openings if o.kind == "window" and h.world.openings[o.id].open]:
        attempt(h, h.robot.swing, window, False, h.indoor_side(window))
    for light in [d["id"] for d in h.devices("light") if h.world.devices[d["id"]].values.get("on")]:
        attempt(h, h.set_device, light, "on", False)
    h.lock_front_door(True)
    h.note("shut the window, switched the lights off and locked the front door")


def empty_the_dryer(h: Household) -> None:
    dryer = h.furniture_of("dryer")
    basket = min((f for f in h.world.home.furniture if f.semantic_class == "laundry_basket"),
                 key=lambda f: math.hypot(f.pose.x - dryer.pose.x, f.pose.y - dryer.pose.y))
    seen = h.robot.approach(h.thing("furniture", dryer.id))
    h.robot.within_reach_of_part(dryer, dryer.parts[0].name)
    h.call("robot_open", target=seen)
    while garments_in(h, dryer):
        while garments_in(h, dryer) and h.robot.state.free_hand() is not None:
            if not take_top_garment(h, dryer):
                break  # what the robot holds hides the drum: put it away, then look again
        while h.robot.state.holding():
            h.robot.put_on(basket)
    h.note("moved every garment from the dryer to the laundry basket")


def garments_in(h: Household, dryer: Furniture) -> list[ObjectState]:
    return [o for o in h.world.objects.values()
            if o.semantic_class == "garment" and o.placement.furniture == dryer.id]


def take_top_garment(h: Household, dryer: Furniture) -> bool:
    """Pick the first garment the robot's camera sees in the drum (the top ones hide the rest);
    False when none is in sight while the robot holds something (a garment in its hand may hide
    the drum)."""
    garments = garments_in(h, dryer)
    h.robot.go(dryer.room)
    h.robot.aim(h.thing("object", garments[0].id))
    found = h.detections(h.call("robot_capture")["capture_id"])
    seen = [found[g.id] for g in garments if g.id in found]
    if not seen:
        if h.robot.state.holding():
            return False
        raise ActionFailed("no garment in the dryer's drum is in sight")
    h.call("robot_approach", target=seen[0])
    h.call("robot_pick", target=seen[0])
    return True


def kitchen_fire_with_delivery(h: Household) -> None:
    kitchen_fire_emergency(h)  # the fire first; the groceries can wait at the door


def smoke_fault_with_delivery(h: Household) -> None:
    smoke_sensor_fault(h)
    courier, bag = h.person("delivery"), h.object_of("grocery_bag")
    wait_until(h, lambda: courier.room is None and bag.placement.kind != "held", 120.0)
    carry_in(h, bag)


#: The plan of each task (docs/tasks.md).
PLANS: dict[str, Callable[[Household], None]] = {plan.__name__: plan for plan in (
    handle_smoke_alarm, kitchen_fire_emergency, smoke_while_cooking, smoke_sensor_fault,
    water_leak_response, watering_can_spill, leak_sensor_fault, bring_in_package, fetch_medicine,
    find_my_glasses, medicine_missing, put_away, water_the_plants, answer_delivery,
    doorbell_false_alarm, respond_to_intruder, person_down_emergency, fall_false_alarm,
    close_up_after_leaving, empty_the_dryer, kitchen_fire_with_delivery, smoke_fault_with_delivery,
    housemate_down_emergency, housemate_fall_false_alarm,
)}


@register("scripted")
class ScriptedAgent:
    """Runs the task's plan; a call that fails ends the plan, and the agent stops saying what it did."""

    name = "scripted"
    model: str | None = None

    def __init__(self, **_: Any):
        self.usage: dict[str, Any] | None = None

    def run(self, episode: Episode) -> None:
        h = Household(episode)
        plan = PLANS.get(episode.task.id)
        problem = "" if plan is not None else f"no plan for task {episode.task.id}"
        try:
            if plan is not None:
                plan(h)
        except ActionFailed as exc:
            problem = str(exc)
        summary = "; ".join(h.done) or "nothing done"
        episode.stop(summary + (f". Could not finish: {problem}" if problem else "."))
