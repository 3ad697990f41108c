"""People: what the residents and visitors do, where they are and what their wearables sense
(docs/dynamics.md).

Each person (:class:`~homeloop.sim.world.PersonState`) has an activity from
:data:`ACTIVITIES`, which sets their posture and the heart rate their fall
watch reads. People walk at :data:`WALKING_SPEED_M_S` (by age group) along a
path of straight legs planned over the free floor (``homeloop.sim.robot.routes.plan_path``,
:data:`PATH_WIDTH` wide); where it finds none (from the street outside the
plan, or from a seat) they walk straight between the approach points of the
doors joining the rooms (:class:`Router`). Paths are planned when a walk
starts, never per step. The timeline (:mod:`homeloop.sim.dynamics.timeline`)
starts what they do; longer behaviours run as scripts, resumed when a wait
ends:

- **courier** (:meth:`People.deliver`): comes to the front door, puts the
  parcel down at the parcel spot, rings the doorbell and goes;
  :meth:`People.ring_and_leave`: someone rings and runs off, leaving nothing;
- **intruder** (:meth:`People.break_in`): forces the front door, heads for a
  room (the living room), and flees back out :data:`INTRUDER_REACTION_S`
  after noticing a light on there, or :data:`INTRUDER_LINGER_S` after arriving
  anyway;
- **leaving home** (:meth:`People.leave_home`): walks out of the front door and
  closes it behind them, leaving it unlocked;
- **cooking** (:meth:`People.cook`): a resident at the range relights the
  burner :data:`RELIGHT_S` after it goes out while they cook;
- **falls** (:meth:`People.fall`): the person collapses (lying) and their
  fall watch reports the fall; :meth:`People.misfire_fall_alert`: the watch
  reports a fall its wearer did not have (asleep in bed, in the false fall
  alarms).

A worn watch reads what a real one would: worn, a heart rate, the fall flag.
At rest (asleep, lying after a fall, away) it reads the wearer's resting rate,
drawn per person from the episode's seed within :data:`RESTING_HEART_RATE_BPM`
(:meth:`People.resting_heart_rate`), so no reading tells a fall from a
misfire: only seeing the person does.

People take handoffs (:meth:`People.receive`): the object joins
``PersonState.holding`` and moves with them.

Per step the module costs a dictionary check when nobody walks and no script
waits; walking is a few arithmetic operations per walker. With nobody walking
it sleeps (:class:`~homeloop.sim.world.Rest`) until the first time a script
waits for, woken by any change while a script waits for a condition.
"""

from __future__ import annotations

import math
import weakref
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Iterable

import networkx as nx
import numpy as np
import shapely
from shapely import Polygon

from homeloop.core import navigation
from homeloop.core.geometry import face_point
from homeloop.core.home import Home, Opening, polygon_from_rings
from homeloop.sim.errors import SkillError
from homeloop.sim.world import EVERYTHING, NOTHING, Placement, PersonState, Rest, World

#: How far (m) from a person an object is within their reach: a handoff's range, and where a
#: delivered item must lie (an adult's arm reach standing or sitting, rounded).
PERSON_REACH_M = 0.8

#: Walking speed (m/s) by age group: older adults walk about 0.9 m/s indoors, adults 1.3, children 1.1.
WALKING_SPEED_M_S: dict[str, float] = {"older_adult": 0.9, "adult": 1.3, "child": 1.1}


@dataclass(frozen=True)
class Activity:
    """What a person is doing: their posture and the heart rate a worn watch reads (bpm; None: the
    wearer's resting rate)."""

    posture: str
    heart_rate_bpm: int | None
    description: str


#: Activities (docs/dynamics.md): posture and the heart rate while doing them (None: at rest).
ACTIVITIES: dict[str, Activity] = {a[0]: Activity(*a[1:]) for a in (
    ("standing", "standing", 76, "standing"),
    ("walking", "standing", 92, "walking somewhere"),
    ("desk_work", "sitting", 70, "working at a desk"),
    ("watching_tv", "sitting", 66, "watching television"),
    ("sleeping", "lying", None, "asleep in bed"),
    ("cooking", "standing", 84, "cooking at the range"),
    ("collapsed", "lying", None, "collapsed on the floor after a fall"),
    ("leaving_home", "standing", 92, "walking out of the front door"),
    ("away", "standing", None, "not at home"),
    ("delivering", "standing", 95, "delivering a parcel at the front door"),
    ("breaking_in", "standing", 125, "breaking in"),
)}

#: Seconds an intruder takes to force the front door's lock.
INTRUDER_FORCE_S = 4.0
#: Seconds from an intruder noticing a lit room to turning back: long enough for a robot in
#: that room to turn and capture them (docs/tasks.md, respond_to_intruder).
INTRUDER_REACTION_S = 8.0
#: Seconds an intruder stays in the room they head for before leaving anyway.
INTRUDER_LINGER_S = 120.0
#: A courier's pauses (s): putting the parcel down, and waiting at the door after ringing.
PUT_DOWN_S = 2.0
WAIT_AFTER_RING_S = 3.0
#: A prankster rings and runs off at this speed (m/s): gone from the porch within seconds.
RUNNING_SPEED_M_S = 3.0
#: How far (m) from the front door's outer face people come from and go to (the street side).
STREET_DISTANCE = 4.0
#: Seconds a cook takes to relight a burner that went out under their pan.
RELIGHT_S = 5.0
#: Objects a person can hold at once (one per hand).
HANDS = 2
#: Resting heart rates (bpm, inclusive) a watch reads at rest; each wearer's is drawn from the seed.
#: Adults rest at 60-100 bpm awake, lower asleep (American Heart Association).
RESTING_HEART_RATE_BPM = (52, 72)
#: Width (m) people's paths keep clear (shoulders and a little room).
PATH_WIDTH = 0.5
#: The router's node for everywhere outside the plan's rooms.
OUTSIDE = "(outside)"
#: What a step of walking changes: the walkers, and what they carry.
WALKING = frozenset({"people"})
CARRYING = frozenset({"people", "objects"})
#: What the cook's and the intruder's waits read: the burner or the lights, and where people are.
COOK_READS = INTRUDER_READS = frozenset({"devices", "people"})


class PersonError(ValueError):
    """A person cannot do what was asked (asleep, collapsed, away, hands full)."""


# --- walking --------------------------------------------------------------------------------------


#: The rooms one leg of a walk passes through: (the fraction of the leg from which on, the room),
#: in order along the leg, the first from 0 (None: outside every room).
LegRooms = tuple[tuple[float, "str | None"], ...]


@dataclass
class Walk:
    """A person walking a polyline; ``legs[i]``: the rooms leg i passes through, each from where the
    leg crosses into it (:meth:`Router.legs`), so a walker's room is the one they stand in."""

    points: list[tuple[float, float]]
    legs: list[LegRooms]
    speed: float
    leg: int = 0
    along: float = 0.0
    arrived: bool = False
    lengths: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lengths = [math.dist(a, b) for a, b in zip(self.points, self.points[1:])]
        self.arrived = not self.lengths

    def advance(self, person: PersonState, distance: float) -> None:
        while distance > 0 and self.leg < len(self.lengths):
            length = self.lengths[self.leg]
            step = min(distance, length - self.along)
            self.along += step
            distance -= step
            if self.along >= length - 1e-9:
                self.leg += 1
                self.along = 0.0
        if self.leg >= len(self.lengths):
            self.arrived = True
            person.x, person.y = self.points[-1]
            person.room = self.legs[-1][-1][1]
            return
        (ax, ay), (bx, by) = self.points[self.leg], self.points[self.leg + 1]
        f = self.along / self.lengths[self.leg] if self.lengths[self.leg] else 1.0
        person.x, person.y = ax + (bx - ax) * f, ay + (by - ay) * f
        person.yaw = math.atan2(by - ay, bx - ax)
        person.room = _room_along(self.legs[self.leg], f)


def _room_along(rooms: LegRooms, f: float) -> str | None:
    """The room at fraction ``f`` of a leg passing through ``rooms``."""
    room = rooms[0][1]
    for start, then in rooms[1:]:
        if f < start:
            break
        room = then
    return room


@dataclass(frozen=True)
class Until:
    """What a script waits for: a time, a condition, the end of its person's walk (any one);
    ``reads``: what the condition reads (:data:`~homeloop.sim.world.ASPECTS`), whose change wakes it."""

    time: float | None = None
    condition: Callable[[], bool] | None = None
    arrival: bool = False
    reads: frozenset[str] = EVERYTHING


Script = Generator[Until, None, None]


class People:
    """The people dynamics (see the module docstring)."""

    name = "people"

    def __init__(self) -> None:
        self.walks: dict[str, Walk] = {}
        self.scripts: list[tuple[str, Script, Until]] = []
        self.router: Router | None = None
        self.watches: dict[str, str] = {}  # person id -> fall watch device id
        self.help_buttons: dict[str, str] = {}  # person id -> help button device id
        self._changed: frozenset[str] = NOTHING  # what the last step changed

    # --- the dynamics step ---------------------------------------------------------------------------

    def step(self, world: World, dt: float) -> None:
        if not self.walks and not self.scripts:
            self._changed = NOTHING
            return
        self._changed = NOTHING
        for pid, walk in list(self.walks.items()):
            person = world.people[pid]
            walk.advance(person, walk.speed * dt)
            _carry(world, person)
            self._changed |= CARRYING if person.holding else WALKING
            if walk.arrived:
                del self.walks[pid]
        if self.scripts and self._resume(world):
            self._changed = EVERYTHING  # a script went on: it may do anything

    def _resume(self, world: World) -> bool:
        """Resume the scripts whose wait is over; whether any went on."""
        current, self.scripts = self.scripts, []
        resumed = False
        for pid, script, first in current:
            until: Until | None = first
            while until is not None and self._ready(pid, until, world):
                until = next(script, None)
                resumed = True
            if until is not None:
                self.scripts.append((pid, script, until))
        return resumed

    def rest(self, world: World) -> Rest:
        """Walking (or a script ready): the next step. Else asleep until the first time a script waits
        for, woken by a change of what a condition it waits for reads."""
        if self.walks or any(self._ready(pid, u, world) for pid, _, u in self.scripts):
            return Rest(self._changed, -math.inf, EVERYTHING)
        times = [u.time for _, _, u in self.scripts if u.time is not None]
        reads = frozenset().union(*(u.reads for _, _, u in self.scripts if u.condition is not None))
        return Rest(self._changed, min(times, default=math.inf), EVERYTHING if "*" in reads else reads)

    def _ready(self, pid: str, until: Until, world: World) -> bool:
        if until.time is not None and world.time >= until.time - 1e-9:
            return True
        if until.arrival and pid not in self.walks:
            return True
        return until.condition is not None and until.condition()

    def run(self, world: World, person_id: str, script: Script) -> None:
        """Start a script for a person (stops any script the person was running)."""
        self.scripts = [s for s in self.scripts if s[0] != person_id]
        first = next(script, None)
        if first is not None:
            self.scripts.append((person_id, script, first))

    def snapshot(self) -> dict[str, Any]:
        return {"walking": sorted(self.walks), "scripted": sorted(pid for pid, _, _ in self.scripts)}

    # --- activities ------------------------------------------------------------------------------------

    def set_activity(self, world: World, person_id: str, activity: str) -> None:
        """Start an activity where the person is: posture and watch heart rate follow."""
        if activity not in ACTIVITIES:
            raise PersonError(f"unknown activity {activity!r}; activities: {', '.join(ACTIVITIES)}")
        person = world.people[person_id]
        person.activity = activity
        person.posture = ACTIVITIES[activity].posture
        watch = self.watches.get(person_id)
        if watch is not None:
            rate = ACTIVITIES[activity].heart_rate_bpm
            world.devices[watch].values["heart_rate_bpm"] = (
                rate if rate is not None else self.resting_heart_rate(world, person_id))

    def resting_heart_rate(self, world: World, person_id: str) -> int:
        """The person's resting heart rate: drawn from the episode's seed and their id, apart from
        ``world.rng`` so the draw changes no other choice the seed makes."""
        low, high = RESTING_HEART_RATE_BPM
        rng = np.random.default_rng([world.seed, zlib.crc32(person_id.encode())])
        return int(rng.integers(low, high + 1))

    def walk_to(self, world: World, person_id: str, goal: tuple[float, float], room: str | None,
                speed: float | None = None) -> Walk:
        """Set the person walking to ``goal`` in ``room`` (None: outside every room), at their
        walking speed unless ``speed`` is given."""
        person = world.people[person_id]
        if self.router is None or self.router.home is not world.home:
            self.router = _router(world.home)
        points, rooms = self.router.route(world, (person.x, person.y), person.room, goal, room)
        speed = speed or WALKING_SPEED_M_S[world.catalog.people[person.catalog_id].age_group]
        walk = Walk(points, self.router.legs(points, rooms) or [((0.0, room),)], speed)
        if walk.arrived:
            person.x, person.y, person.room = goal[0], goal[1], room
            self.walks.pop(person_id, None)
        else:
            self.walks[person_id] = walk
        return walk

    def go(self, world: World, person_id: str, goal: tuple[float, float], room: str | None,
           activity: str, yaw: float | None = None) -> None:
        """Walk to a place, then take up an activity there."""
        self.run(world, person_id, self._go(world, person_id, goal, room, activity, yaw))

    def _go(self, world: World, pid: str, goal: tuple[float, float], room: str | None, activity: str,
            yaw: float | None) -> Script:
        self.set_activity(world, pid, "walking")
        self.walk_to(world, pid, goal, room)
        yield Until(arrival=True)
        if yaw is not None:
            world.people[pid].yaw = yaw
        self.set_activity(world, pid, activity)

    # --- falls and wearables ---------------------------------------------------------------------------

    def fall(self, world: World, person_id: str) -> None:
        """The person collapses where they are; what they hold drops; their watch reports the fall."""
        self._stop(person_id)
        person = world.people[person_id]
        for obj in list(person.holding):
            _drop(world, person, obj)
        self.set_activity(world, person_id, "collapsed")
        world.note("fall", person_id, room=person.room, x=person.x, y=person.y)
        watch = self.watches.get(person_id)
        if watch is not None:
            world.devices[watch].values["fall_detected"] = True

    def misfire_fall_alert(self, world: World, person_id: str) -> None:
        """The watch's fall detection misfires: it reports a fall, read as a real one would be
        (still worn, the wearer's heart rate); the wearer goes on as they were."""
        watch = self.watches.get(person_id)
        if watch is None:
            raise PersonError(f"{person_id} wears no fall watch")
        world.devices[watch].values["fall_detected"] = True
        world.note("fall_alert_misfire", person_id, device=watch)

    def press_help(self, world: World, person_id: str) -> None:
        """The person presses their help pendant."""
        from homeloop.sim.devices import press

        button = self.help_buttons.get(person_id)
        if button is None:
            raise PersonError(f"{person_id} wears no help button")
        press(world, button)

    # --- handoffs -------------------------------------------------------------------------------------

    def receive(self, world: World, person_id: str, object_id: str, giver: str = "robot") -> None:
        """The person takes an object handed to them (PersonError when they cannot)."""
        person = world.people.get(person_id)
        if person is None:
            raise PersonError(f"no person {person_id!r}; people: {', '.join(world.people)}")
        if person.room is None:
            raise PersonError(f"{person.name} is not at home")
        if person.activity in ("sleeping", "collapsed"):
            raise PersonError(f"{person.name} is {ACTIVITIES[person.activity].description} and cannot take it")
        if len(person.holding) >= HANDS:
            raise PersonError(f"{person.name}'s hands are full")
        obj = world.objects[object_id]
        obj.placement = Placement(kind="held", room=person.room, holder=person_id)
        person.holding.append(object_id)
        _carry(world, person)
        world.note("handoff", giver, person=person_id, object=object_id)

    # --- scripted behaviours ---------------------------------------------------------------------------

    def cook(self, world: World, person_id: str, stove: str, burner_field: str) -> None:
        """The person cooks at the range: the burner is lit, and relit if it goes out while they cook."""
        world.devices[stove].values[burner_field] = True
        self.set_activity(world, person_id, "cooking")
        self.run(world, person_id, self._keep_lit(world, person_id, stove, burner_field))

    def _keep_lit(self, world: World, pid: str, stove: str, burner: str) -> Script:
        values, person = world.devices[stove].values, world.people[pid]
        while person.activity == "cooking":
            yield Until(condition=lambda: not values[burner] or person.activity != "cooking", reads=COOK_READS)
            if person.activity != "cooking":
                return
            yield Until(time=world.time + RELIGHT_S)
            if person.activity == "cooking" and not values[burner]:
                values[burner] = True
                world.note("burner_relit", pid, device=stove, field=burner)

    def deliver(self, world: World, person_id: str, door: "DoorWay", spot: tuple[float, float, str | None],
                doorbell: str | None, parcel: str | None) -> None:
        """A courier comes to the door, leaves ``parcel`` at ``spot`` (or nothing), rings and goes."""
        self.run(world, person_id, self._deliver(world, person_id, door, spot, doorbell, parcel))

    def _deliver(self, world: World, pid: str, door: "DoorWay", spot: tuple[float, float, str | None],
                 doorbell: str | None, parcel: str | None, prank: bool = False) -> Script:
        from homeloop.sim.devices import press

        person = world.people[pid]
        person.x, person.y, person.room = door.street[0], door.street[1], door.street_room
        self.set_activity(world, pid, "delivering")
        self.walk_to(world, pid, spot[:2], spot[2])
        yield Until(arrival=True)
        if parcel is not None and parcel in person.holding:
            yield Until(time=world.time + PUT_DOWN_S)
            _drop(world, person, parcel)
        if doorbell is not None:
            press(world, doorbell)
        if not prank:
            yield Until(time=world.time + WAIT_AFTER_RING_S)
        yield from self._go_away(world, pid, door, RUNNING_SPEED_M_S if prank else None)

    def ring_and_leave(self, world: World, person_id: str, door: "DoorWay", doorbell: str) -> None:
        """Someone rings the doorbell and runs off before anyone answers (leaves nothing)."""
        spot = (*door.outside, door.outside_room)
        self.run(world, person_id, self._deliver(world, person_id, door, spot, doorbell, None, prank=True))

    def _go_away(self, world: World, pid: str, door: "DoorWay", speed: float | None = None) -> Script:
        self.walk_to(world, pid, door.street, door.street_room, speed)
        yield Until(arrival=True)
        self._leave(world, pid)

    def _leave(self, world: World, pid: str) -> None:
        person = world.people[pid]
        person.room = None
        self.set_activity(world, pid, "away")
        world.note("left", pid)

    def break_in(self, world: World, person_id: str, door: "DoorWay", target: tuple[float, float, str],
                 lights: Iterable[str]) -> None:
        """An intruder forces the front door and heads for ``target`` (see the module docstring);
        ``lights`` are the lights of the target room whose switching on they notice."""
        self.run(world, person_id, self._break_in(world, person_id, door, target, list(lights)))

    def _break_in(self, world: World, pid: str, door: "DoorWay", target: tuple[float, float, str],
                  lights: list[str]) -> Script:
        person, opening = world.people[pid], world.openings[door.opening]
        person.x, person.y, person.room = door.outside[0], door.outside[1], door.outside_room
        self.set_activity(world, pid, "breaking_in")
        yield Until(time=world.time + INTRUDER_FORCE_S)
        opening.locked, opening.open = False, True
        world.note("break_in", pid, opening=door.opening)
        light_values = [world.devices[d].values for d in lights]

        def seen() -> bool:
            return person.room == target[2] and any(v.get("on") for v in light_values)

        self.walk_to(world, pid, target[:2], target[2])
        yield Until(condition=lambda: pid not in self.walks or seen(), reads=INTRUDER_READS)
        yield Until(condition=seen, time=world.time + INTRUDER_LINGER_S, reads=INTRUDER_READS)
        if seen():
            world.note("intruder_noticed_light", pid, room=target[2])
            yield Until(time=world.time + INTRUDER_REACTION_S)
        self.walk_to(world, pid, door.inside, door.inside_room)
        yield Until(arrival=True)
        yield from self._go_away(world, pid, door)

    def leave_home(self, world: World, person_id: str, door: "DoorWay") -> None:
        """The person walks out of the front door, shuts it behind them (unlocked) and goes."""
        self.run(world, person_id, self._leave_home(world, person_id, door))

    def _leave_home(self, world: World, pid: str, door: "DoorWay") -> Script:
        opening = world.openings[door.opening]
        self.set_activity(world, pid, "leaving_home")
        self.walk_to(world, pid, door.inside, door.inside_room)
        yield Until(arrival=True)
        opening.locked, opening.open = False, True
        self.walk_to(world, pid, door.outside, door.outside_room)
        yield Until(arrival=True)
        opening.open = False
        yield from self._go_away(world, pid, door)

    def _stop(self, person_id: str) -> None:
        self.walks.pop(person_id, None)
        self.scripts = [s for s in self.scripts if s[0] != person_id]


@dataclass(frozen=True)
class DoorWay:
    """The front door as people use it: the opening, a point in front of it inside and outside,
    and the street point (STREET_DISTANCE out) where visitors come from and go to."""

    opening: str
    inside: tuple[float, float]
    inside_room: str
    outside: tuple[float, float]
    outside_room: str | None
    street: tuple[float, float]
    street_room: str | None


def _carry(world: World, person: PersonState) -> None:
    """Objects a person holds go where they go."""
    for oid in person.holding:
        obj = world.objects[oid]
        obj.x, obj.y = person.x, person.y
        obj.placement.room = person.room


def _drop(world: World, person: PersonState, object_id: str) -> None:
    """Put a held object down on the floor where the person stands."""
    person.holding.remove(object_id)
    obj = world.objects[object_id]
    obj.placement = Placement(kind="floor", room=person.room)
    obj.x, obj.y, obj.z = person.x, person.y, 0.0
    world.note("put_down", person.id, object=object_id, room=person.room)


# --- paths ------------------------------------------------------------------------------------------


class Router:
    """Paths for people: ``homeloop.sim.robot.routes.plan_path`` over the free floor; where it finds
    none (a start outside the plan, on a seat), through the doors between rooms, straight from
    door approach point to door approach point."""

    def __init__(self, home: Home, width: float = PATH_WIDTH):
        self.home = home
        self.width = width
        self.graph: nx.Graph[str] = nx.Graph()
        self._sides: dict[tuple[str, str], tuple[float, float]] = {}
        polys = home.room_polygons()
        self._rooms = _Places(polys)
        self._openings = _Places(home.opening_polygons())
        self._legs: dict[tuple[tuple[tuple[float, float], ...], tuple[str | None, ...]], list[LegRooms]] = {}
        centres = {rid: (p.centroid.x, p.centroid.y) for rid, p in polys.items()}
        for opening in navigation.passable_openings(home):
            self._add_door(opening, polys, centres)

    def _add_door(self, opening: Opening, polys: dict[str, Polygon], centres: dict[str, tuple[float, float]]) -> None:
        sides = dict((rid, (float(p.x), float(p.y)))
                     for rid, p in navigation.door_approach_points(self.home, opening.id, self.width))
        rooms: list[str] = list(sides)
        if len(rooms) == 1:  # an exterior door with nothing drawn outside
            (x, y), _ = face_point(polygon_from_rings(opening.polygon), polys[rooms[0]],
                                   self.width / 2 + navigation.APPROACH_MARGIN, far_side=True)
            sides[OUTSIDE] = (float(x), float(y))
            rooms.append(OUTSIDE)
        if len(rooms) != 2:
            return
        a, b = rooms
        for rid in rooms:
            self._sides[(opening.id, rid)] = sides[rid]
        ca, cb = centres.get(a, sides[a]), centres.get(b, sides[b])
        weight = math.dist(ca, sides[a]) + math.dist(sides[a], sides[b]) + math.dist(sides[b], cb)
        if not self.graph.has_edge(a, b) or self.graph[a][b]["weight"] > weight:
            self.graph.add_edge(a, b, weight=weight, door=opening.id)

    def route(self, world: World, start: tuple[float, float], start_room: str | None,
              goal: tuple[float, float], goal_room: str | None) -> tuple[list[tuple[float, float]], list[str | None]]:
        """Points from ``start`` to ``goal`` and the room of each point."""
        planned = _planned(world, start, goal, self.width)
        if planned is not None:
            return planned, [self.home.room_at(x, y) for x, y in planned]
        points, rooms = [start], [start_room]
        try:
            hops = nx.shortest_path(self.graph, start_room or OUTSIDE, goal_room or OUTSIDE, weight="weight")
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            hops = []
        for a, b in zip(hops, hops[1:]):
            door = self.graph[a][b]["door"]
            points += [self._sides[(door, a)], self._sides[(door, b)]]
            rooms += [None if a == OUTSIDE else a, None if b == OUTSIDE else b]
        return points + [goal], rooms + [goal_room]

    def legs(self, points: list[tuple[float, float]], rooms: list[str | None]) -> list[LegRooms]:
        """The rooms each leg of a walk through ``points`` (standing in ``rooms``) passes through. A
        walker is in a room from where the leg enters its floor; across a wall's thickness, from the
        middle of the opening the leg passes there (of the gap, where it passes none). A point in a
        doorway, in no room, names none of its own: the rooms either side meet in the opening."""
        key = (tuple(points), tuple(rooms))
        legs = self._legs.get(key)
        if legs is None:
            if len(self._legs) >= LEGS_KEPT:
                self._legs.clear()
            legs = self._legs[key] = [self._leg(a, b, ra, rb)
                                      for a, b, ra, rb in zip(points, points[1:], rooms, rooms[1:])]
        return list(legs)

    def _leg(self, a: tuple[float, float], b: tuple[float, float], room_a: str | None,
             room_b: str | None) -> LegRooms:
        line = shapely.LineString([a, b]) if a != b else None
        spans = [] if line is None else sorted(self._rooms.spans(line), key=lambda s: (s[0], s[1], s[2]))
        start = [(0.0, 0.0, room_a)] if room_a is not None or not self._openings.cover(a) else []
        end = [(1.0, 1.0, room_b)] if room_b is not None or not self._openings.cover(b) else []
        merged: list[list[Any]] = []
        for t0, t1, room in [*start, *spans, *end]:
            if merged and merged[-1][2] == room:
                merged[-1][1] = max(merged[-1][1], t1)
            else:
                merged.append([t0, t1, room])
        if not merged:
            return ((0.0, room_a), (0.5, room_b))
        doors = [] if line is None or len(merged) < 2 else [(t0, t1) for t0, t1, _ in self._openings.spans(line)]
        out: list[tuple[float, str | None]] = [(0.0, merged[0][2])]
        for (_, left, _), (entered, _, room) in zip(merged, merged[1:]):
            out.append((max(out[-1][0], _crossing(left, entered, doors)), room))
        return tuple(out)


#: Walks whose legs' rooms a router keeps (people walk the same ways in every episode in a home).
LEGS_KEPT = 256


class _Places:
    """Polygons by id (a home's rooms or openings), looked up by a line or a point."""

    def __init__(self, polygons: dict[str, Polygon]):
        self.ids = list(polygons)
        self.shapes = np.array(list(polygons.values()), dtype=object)
        self.tree = shapely.STRtree(self.shapes)

    def spans(self, line: shapely.LineString) -> list[tuple[float, float, str]]:
        """Where ``line`` runs over each polygon: (from, to, id), as fractions of its length."""
        out = []
        hits = self.tree.query(line, predicate="intersects")
        for i, hit in zip(hits.tolist(), shapely.intersection(line, self.shapes[hits]).tolist()):
            for part in shapely.get_parts(hit).tolist():
                if part.geom_type == "LineString":
                    ends = shapely.points([part.coords[0], part.coords[-1]])
                    t0, t1 = sorted(shapely.line_locate_point(line, ends, normalized=True).tolist())
                    if t1 > t0:
                        out.append((t0, t1, self.ids[i]))
        return out

    def cover(self, xy: tuple[float, float]) -> bool:
        """Whether a polygon covers the point."""
        return len(self.tree.query(shapely.Point(xy), predicate="intersects")) > 0


def _crossing(end: float, start: float, doors: list[tuple[float, float]]) -> float:
    """Where a leg leaving one room at ``end`` and entering the next at ``start`` (fractions) changes
    room: the middle of the openings it passes between them, else of the gap."""
    within = [(max(t0, end), min(t1, start)) for t0, t1 in doors if t1 >= end and t0 <= start]
    if within:
        return (min(w[0] for w in within) + max(w[1] for w in within)) / 2
    return (end + start) / 2


#: The routers made, per free floor (a home's, for :data:`PATH_WIDTH`): a router is worked out from the
#: home alone, so one serves every episode in the home (docs/dynamics.md, "Kept ways").
_ROUTERS: "weakref.WeakKeyDictionary[navigation.FreeFloor, Router]" = weakref.WeakKeyDictionary()


def _router(home: Home) -> Router:
    """The people's router in ``home``: the one kept for its free floor, or a new one."""
    from homeloop.sim.robot import floor

    if not floor.KEPT:
        return Router(home)
    free = navigation.free_floor_of(home, PATH_WIDTH)  # the paths people walk are planned over it anyway
    router = _ROUTERS.get(free)
    if router is None or router.home is not home:
        router = _ROUTERS[free] = Router(home)
    return router


def _planned(world: World, start: tuple[float, float], goal: tuple[float, float],
             width: float) -> list[tuple[float, float]] | None:
    """The robot's path planner's path for a person, or None when it finds none."""
    from homeloop.sim.robot.routes import plan_path

    try:
        path = plan_path(world, start, goal, width)
    except SkillError:  # no way over the free floor (a start outside the plan, a seat): walk the doors
        return None
    return [(float(x), float(y)) for x, y in path.points]
