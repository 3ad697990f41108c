"""Task applicability: which benchmark tasks apply to which homes, for which robot body.

docs/tasks.md: "a task applies to a home that has the rooms, devices and objects
it names, and where the robot can reach and carry what it must". Each task
file declares what it needs (:mod:`homeloop.sim.task`); :func:`screen`
checks one home, task and body against it and returns *every* reason the
task does not apply, each a short machine-friendly string with detail:

- ``missing_room:<role>`` (e.g. ``missing_room:laundry``)
- ``missing_device:<type>(<where>)`` (``missing_device:leak_sensor(beside dishwasher)``);
  a smoke sensor counts for a room only where that room's smoke reaches it
  with the doors shut, as the scenarios start (:data:`SPREAD_REACH`)
- ``missing_furniture:<class>(in <role>)``, ``missing_object:<class or ids>``
- ``residents:<n> need <n> sleeping places, home has <k>``
- ``carry:<object> <mass> kg > payload <kg> kg (<hands> hand(s))``
- ``reach:<what> height <h> m above max grasp height <m> m`` (or below the
  minimum; a pour at the height the robot's pour skill holds the can,
  :func:`homeloop.sim.robot.targets.pour_hand_heights`), ``reach:<what> depth <d> m > horizontal reach <r> m``
- ``approach:<what> not reachable for body width <w> m``: no free floor in
  front of any such furniture joins the entrance; ``approach:<what> out of
  reach: …``: no free floor joined to the entrance within the body's reach of
  an object lying on the floor, or of an opening's handle, found as the robot
  finds where to stand when it approaches
- ``passage:<role> not reachable for body width <w> m (<door> <width> m)``:
  the narrowest door into the role's rooms in brackets.

Room passage and approach use :mod:`homeloop.core.navigation` (the free-floor
check the furnishing verifier uses) from the entrance door's approach point,
with the body's clearance width (the wider of body and base). An entrance
door that opens onto nothing drawn in the plan (an apartment's door to the
stairwell) is passed when it is at least as wide as the body.

Payload is read per hand (the catalog's figures are per arm): an object a
task allows to be carried two-handed may weigh up to payload × hands.

:func:`screen_homes` screens many homes against many tasks and bodies. It
computes each home's facts once (room roles, devices, furniture and objects
by class, sleeping places) and its free-floor reachability once per distinct
body width, widest first: a wider body that reaches every room and every
piece of furniture a task needs implies a narrower one does too (its free
floor contains the wider body's), so narrower widths are often skipped.

Tables: ``applicability.parquet`` has one row per home, task and robot:
home, task, family, extension, robot, applicable, reasons (the reasons joined
with ``"; "``, empty when the task applies; a plain string column keeps the
file readable by every parquet tool), and ``applicability_summary.parquet``
one row per home and robot: applicable_count (of the 20 core tasks),
extension_count (of the 4 extensions), tasks_total. A build's verify stage
adds ``verified`` and ``verify_reason`` to the first and the verified counts
to the second (:mod:`homeloop.pipeline.verify_pairs`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import shapely
from shapely import Point

from homeloop.core import navigation
from homeloop.sim.task import (
    CORE_TASK_IDS,
    EXTENSION_TASK_IDS,
    ROOM_ROLES,
    DeviceWhere,
    ReachDemand,
    Task,
    load_tasks,
)
from homeloop.core.catalog import Catalog, RobotEntry, load_catalog
from homeloop.core.home import Device, Furniture, Home, polygon_from_rings
from homeloop.core.io import write_parquet
from homeloop.sim.dynamics.smoke import rooms_reached
from homeloop.sim.robot.body import reach_radius
from homeloop.sim.robot.reach import ReachError, Target, stand_spot
from homeloop.sim.robot.targets import object_target, opening_target, pour_hand_heights
from homeloop.sim.roles import Roles, ScenarioError, room_fills
from homeloop.sim.scenario import load_scenario
from homeloop.sim.world import World

#: Separator of reasons in the ``reasons`` column.
REASON_SEPARATOR = "; "

#: A bed at least this wide (m) sleeps two (a European double bed is 1.4-1.8 m).
DOUBLE_BED_MIN_WIDTH = 1.4

#: File names of the tables written by :func:`write_applicability`.
APPLICABILITY_FILE = "applicability.parquet"
SUMMARY_FILE = "applicability_summary.parquet"

COLUMNS = ["home", "task", "family", "extension", "robot", "applicable", "reasons"]

#: Device types that sense what spreads from a room through the air, with the rooms it
#: reaches from a given room (the simulator's own rule, docs/dynamics.md). Such a device
#: counts for a room, or for a room near it (``or_adjacent``), only where it is reached:
#: a sensor behind a closed door never sounds for the room, whatever it lists as monitored.
SPREAD_REACH: dict[str, Callable[[Home, str], set[str]]] = {"smoke_sensor": rooms_reached}


@dataclass(frozen=True)
class Screening:
    """Whether a task applies to a home for a body, and every reason it does not."""

    applicable: bool
    reasons: list[str] = field(default_factory=list)


def _m(value: float) -> str:
    return f"{value:.2f}"


# --- facts of one home ---------------------------------------------------------------------


class HomeFacts:
    """What screening needs to know about one home, computed once and reused
    across tasks and bodies; reachability is computed per body width on demand."""

    def __init__(self, home: Home, catalog: Catalog) -> None:
        self.home = home
        self.catalog = catalog
        self.rooms = {r.id: r for r in home.rooms}
        self.furniture = {f.id: f for f in home.furniture}
        self.furniture_by_class: dict[str, list[Furniture]] = defaultdict(list)
        for f in home.furniture:
            self.furniture_by_class[f.semantic_class].append(f)
        self.objects_by_class: dict[str, list[Any]] = defaultdict(list)
        for o in home.objects:
            self.objects_by_class[o.semantic_class].append(o)
        self.devices_by_type: dict[str, list[Device]] = defaultdict(list)
        for d in home.devices:
            self.devices_by_type[d.type].append(d)
        # What each element id is: a furniture class, an opening kind or an object class.
        self.kind_of: dict[str, str] = {f.id: f.semantic_class for f in home.furniture}
        self.kind_of.update({o.id: o.kind for o in home.openings})
        self.kind_of.update({o.id: o.semantic_class for o in home.objects})
        self.adjacent: dict[str, set[str]] = defaultdict(set)
        for o in home.openings:
            if o.kind != "window" and len(o.connects) == 2:
                a, b = o.connects
                self.adjacent[a].add(b)
                self.adjacent[b].add(a)
        self.role_rooms = {name: self._rooms_of_role(name) for name in ROOM_ROLES}
        self.sleeping_places = sum(self._sleeps(f) for f in self.furniture_by_class.get("bed", []))
        self.entrance_doors = [o for o in home.openings if o.kind == "entrance_door"]
        self._reachable: dict[float, set[str]] = {}
        self._approach: dict[tuple[str, float], bool] = {}
        self._start: dict[float, Point | None] = {}
        self._floor: dict[float, navigation.FreeFloor] = {}
        self._start_piece: dict[float, int | None] = {}
        self._static: dict[str, list[str]] = {}
        self._spread: dict[tuple[str, str], set[str]] = {}
        self._openings: dict[tuple[str, str], str | None] = {}
        self._moved: dict[str, frozenset[str]] = {}
        self._world: World | None = None
        self._stood: dict[str, list[tuple[float, float, bool]]] = {}

    # -- rooms

    def _rooms_of_role(self, role: str) -> set[str]:
        matches = ROOM_ROLES[role].any_of
        return {rid for rid in self.rooms if any(room_fills(self.home, rid, m) for m in matches)}

    def _sleeps(self, bed: Furniture) -> int:
        entry = self.catalog.furniture.get(bed.catalog_id)
        width = entry.dimensions.width if entry is not None else 0.0
        return 2 if width >= DOUBLE_BED_MIN_WIDTH else 1

    # -- devices

    def _near(self, device: Device, target_class: str, max_distance: float) -> bool:
        point = Point(device.pose.x, device.pose.y)
        for f in self.furniture_by_class.get(target_class, ()):
            if polygon_from_rings(f.footprint).distance(point) <= max_distance:
                return True
        for o in self.home.openings:
            if o.kind == target_class and polygon_from_rings(o.polygon).distance(point) <= max_distance:
                return True
        for o in self.objects_by_class.get(target_class, ()):
            if math.hypot(o.pose.x - device.pose.x, o.pose.y - device.pose.y) <= max_distance:
                return True
        return False

    def device_present(self, device_type: str, where: DeviceWhere | None) -> bool:
        for d in self.devices_by_type.get(device_type, ()):
            if where is None:
                return True
            if where.room is not None and not self._serves_role(d, where.room, where.or_adjacent):
                continue
            if where.attached_to is not None:
                refs = [d.mounted_on, *d.monitors, *d.controls]
                if not any(ref is not None and self.kind_of.get(ref) == where.attached_to for ref in refs) \
                        and not self._near(d, where.attached_to, where.max_distance):
                    continue
            return True
        return False

    def _serves_role(self, device: Device, role: str, or_adjacent: bool) -> bool:
        """Whether the device is in a room of the role (or near one, ``or_adjacent``: joined
        by a door, or reached by what it senses for :data:`SPREAD_REACH` types) or monitors one."""
        rooms = set(self.role_rooms[role])
        if device.type in SPREAD_REACH:
            if or_adjacent:
                rooms |= {n for r in list(rooms) for n in self.spread_from(device.type, r)}
            return device.room in rooms
        if or_adjacent:
            rooms |= {n for r in list(rooms) for n in self.adjacent.get(r, ())}
        return device.room in rooms or bool(rooms.intersection(device.monitors))

    def spread_from(self, device_type: str, room: str) -> set[str]:
        """The rooms reached from ``room`` by what a :data:`SPREAD_REACH` device senses (cached)."""
        key = (device_type, room)
        if key not in self._spread:
            self._spread[key] = SPREAD_REACH[device_type](self.home, room)
        return self._spread[key]

    # -- openings

    def opening_of_role(self, role: str, scenario: str) -> str | None:
        """The id of the opening filling ``role`` as ``scenario`` finds it (None: the home has
        none), cached."""
        key = (role, scenario)
        if key not in self._openings:
            try:
                self._openings[key] = Roles(self.home, scenario).opening(role).id
            except ScenarioError:
                self._openings[key] = None
        return self._openings[key]

    def moved_objects(self, task: Task) -> frozenset[str]:
        """The ids of the home's objects that ``task``'s scenario puts somewhere else (``at``, ``onto_any``):
        where the home has them is not where the robot finds them. Cached by task."""
        moved = self._moved.get(task.id)
        if moved is None:
            scenario = load_scenario(task.scenario).merged(task.scenario_additions)
            roles = Roles(self.home, task.scenario)
            ids: set[str] = set()
            for spec in scenario.objects:
                if spec.object is not None and (spec.at is not None or spec.onto_any):
                    try:
                        ids.update(o.id for o in roles.objects(spec.object))
                    except ScenarioError:
                        continue  # the home has none: reported as a missing object
            moved = self._moved[task.id] = frozenset(ids)
        return moved

    def world(self) -> World:
        """The home as an episode starts it (every opening shut), for the robot's own reach tests."""
        if self._world is None:
            self._world = World(self.home, self.catalog, seed=0)
        return self._world

    def stands_to_reach(self, target: Target, robot: RobotEntry) -> bool:
        """Whether the body finds somewhere to stand within reach of ``target``, as the robot
        looks when it approaches (:func:`stand_spot`), from the entrance (cached).

        A body no wider and reaching no shorter than one that stood there does too; one no
        narrower and reaching no farther than one that found no spot does not. Otherwise it
        looks first as the narrowest wider body already tried would stand, on the free floor
        made for that one (a spot found so suits it too), and only then on its own."""
        width, radius = robot.clearance_width, reach_radius(robot)
        tried = self._stood.setdefault(target.id, [])
        if any(ok and w >= width and r <= radius for w, r, ok in tried):
            return True
        if any(not ok and w <= width and r >= radius for w, r, ok in tried):
            return False
        wider = sorted({w for w, _, _ in tried if w > width})[:1]
        for clearance in (*wider, width):
            if self._stands(target, robot, clearance):
                tried.append((clearance, radius, True))
                return True
        tried.append((width, radius, False))  # only a body's own look rules it out
        return False

    def _stands(self, target: Target, robot: RobotEntry, clearance: float) -> bool:
        start = self.start_point(clearance)
        if start is None:
            return False
        try:
            stand_spot(self.world(), robot, target, (start.x, start.y), clearance=clearance)
        except ReachError:
            return False
        return True

    # -- navigation

    def start_point(self, width: float) -> Point | None:
        """The entrance door's approach point inside, where reachability starts."""
        if width not in self._start:
            room = navigation.entrance_room(self.home)
            point = None
            if room is not None:
                door = next(o for o in self.entrance_doors if room in o.connects)
                point = navigation.approach_point(door, polygon_from_rings(self.rooms[room].polygon), width)
            self._start[width] = point
        return self._start[width]

    def reachable(self, width: float) -> set[str]:
        """Rooms a body of this width reaches from the entrance (cached; reuses a
        wider body's result when that one already reaches every room)."""
        hit = self._reachable.get(width)
        if hit is not None:
            return hit
        for w, rooms in self._reachable.items():
            if w >= width and len(rooms) == len(self.rooms):
                self._reachable[width] = rooms
                return rooms
        rooms = navigation.reachable_rooms(self.home, width)
        self._reachable[width] = rooms
        return rooms

    def approachable(self, furniture: Furniture, width: float) -> bool:
        """Whether a body can stand in front of some side of the furniture, on
        free floor joined to the entrance (cached; a wider body's success counts)."""
        for (fid, w), ok in self._approach.items():
            if fid == furniture.id and ok and w >= width:
                return True
        key = (furniture.id, width)
        if key in self._approach:
            return self._approach[key]
        start = self.start_piece(width)
        ok = False
        if start is not None:
            floor = self.free_floor(width)
            ring = np.asarray(furniture.footprint[0], dtype=float)
            centre = ring.mean(axis=0)
            offset = width / 2 + navigation.APPROACH_MARGIN
            for a, b in zip(ring, np.roll(ring, -1, axis=0)):
                mid = (a + b) / 2
                edge = b - a
                normal = np.array([edge[1], -edge[0]]) / max(float(np.hypot(*edge)), 1e-12)
                if np.dot(normal, mid - centre) < 0:
                    normal = -normal
                p = mid + normal * offset
                # navigation.path_exists from the start, its free floor and start piece found once
                if floor.component_of((float(p[0]), float(p[1]))) == start:
                    ok = True
                    break
        self._approach[key] = ok
        return ok

    def free_floor(self, width: float) -> navigation.FreeFloor:
        """The free floor of a body of this width, split into pieces (cached)."""
        if width not in self._floor:
            self._floor[width] = navigation.free_floor_of(self.home, width)
        return self._floor[width]

    def start_piece(self, width: float) -> int | None:
        """The piece of free floor the :meth:`start_point` lies on, None when it lies on none."""
        if width not in self._start_piece:
            start = self.start_point(width)
            self._start_piece[width] = (None if start is None else
                                        self.free_floor(width).component_of((start.x, start.y)))
        return self._start_piece[width]


# --- the checks ---------------------------------------------------------------------------------


def _static_reasons(facts: HomeFacts, task: Task) -> list[str]:
    """Reasons that do not depend on the robot body (cached per home and task)."""
    hit = facts._static.get(task.id)
    if hit is not None:
        return hit
    req = task.requires
    reasons: list[str] = []
    for role in req.rooms:
        if not facts.role_rooms[role]:
            reasons.append(f"missing_room:{role}")
    for d in req.devices:
        if not facts.device_present(d.type, d.where):
            reasons.append(f"missing_device:{d.describe()}")
    for f in req.furniture:
        items = facts.furniture_by_class.get(f.semantic_class, [])
        if f.room is not None:
            items = [i for i in items if i.room in facts.role_rooms[f.room]]
        if not items:
            reasons.append(f"missing_furniture:{f.describe()}")
    for o in req.objects:
        if o.source != "home":
            continue
        items = facts.objects_by_class.get(o.semantic_class, [])
        if o.room is not None:
            items = [i for i in items if i.location.room in facts.role_rooms[o.room]]
        if o.not_on is not None:
            items = [i for i in items if facts.kind_of.get(i.location.furniture or "") != o.not_on]
        present = {i.catalog_id for i in items}
        if not items or any(cid not in present for cid in o.catalog_ids):
            reasons.append(f"missing_object:{o.describe()}")
    if req.residents > facts.sleeping_places:
        reasons.append(f"residents:{req.residents} need {req.residents} sleeping places, "
                       f"home has {facts.sleeping_places}")
    facts._static[task.id] = reasons
    return reasons


_pick_cache: dict[tuple[str, str, int], list[str]] = {}


def _carry_reasons(task: Task, robot: RobotEntry, catalog: Catalog) -> list[str]:
    key = (task.id, robot.id, robot.payload.kg, robot.hands.count, id(catalog))
    hit = _pick_cache.get(key)
    if hit is not None:
        return hit
    reasons = []
    for p in task.requires.robot.pick:
        mass = catalog.objects[p.object].mass
        hands = robot.hands.count if p.two_handed else 1
        capacity = robot.payload.kg * hands
        if mass > capacity + 1e-9:
            reasons.append(f"carry:{p.object} {mass:.1f} kg > payload {capacity:.1f} kg "
                           f"({hands} hand{'s' if hands > 1 else ''})")
    _pick_cache[key] = reasons
    return reasons


def _grasp_offsets(catalog: Catalog, object_id: str | None) -> list[float]:
    if object_id is None:
        return [0.0]
    return [g.offset.z for g in catalog.objects[object_id].grasp_points]


def _height_reason(label: str, heights: Sequence[float], robot: RobotEntry) -> str | None:
    lo, hi = robot.reach.min_grasp_height, robot.reach.max_grasp_height
    if any(lo - 1e-9 <= h <= hi + 1e-9 for h in heights):
        return None
    if min(heights) > hi:
        return f"reach:{label} height {_m(min(heights))} m above max grasp height {_m(hi)} m"
    if max(heights) < lo:
        return f"reach:{label} height {_m(max(heights))} m below min grasp height {_m(lo)} m"
    return f"reach:{label} heights {[round(h, 2) for h in heights]} m outside grasp heights {_m(lo)}-{_m(hi)} m"


def _container_depth(furniture: Furniture, container_polygon: list[list[tuple[float, float]]]) -> float:
    """Horizontal distance from the furniture's front face to the far end of a container."""
    c, s = math.cos(furniture.pose.yaw), math.sin(furniture.pose.yaw)

    def along(points: Iterable[tuple[float, float]]) -> np.ndarray:
        pts = np.asarray(list(points), dtype=float)
        return (pts[:, 0] - furniture.pose.x) * c + (pts[:, 1] - furniture.pose.y) * s

    front = float(along(furniture.footprint[0]).max())
    far = float(along(container_polygon[0]).min())
    return front - far


def _reach_candidate_reasons(facts: HomeFacts, demand: ReachDemand, furniture: Furniture,
                             robot: RobotEntry, catalog: Catalog) -> list[str]:
    if demand.surface is not None:
        base, depth = furniture.surface(demand.surface).height, None
    else:
        space = furniture.container(demand.container)  # type: ignore[arg-type]
        base, depth = space.bottom, _container_depth(furniture, space.polygon)
    reasons = _grasp_reasons(demand, base, depth, robot, catalog)
    if not facts.approachable(furniture, robot.clearance_width):
        reasons.append(_approach_reason(demand, robot))
    return reasons


def _hand_heights(demand: ReachDemand, base: float, catalog: Catalog) -> list[float]:
    """The hand heights that do for the demand at a place ``base`` m above the floor: by each grasp
    of its object, or, pouring, as the robot's pour skill holds the object over the rim."""
    if demand.pour is not None:
        return [h + demand.above for h in pour_hand_heights(catalog, demand.pour, demand.object, base)]  # type: ignore[arg-type]
    return [base + z + demand.above for z in _grasp_offsets(catalog, demand.object)]


def _grasp_reasons(demand: ReachDemand, base: float, depth: float | None, robot: RobotEntry,
                   catalog: Catalog) -> list[str]:
    """Why the body cannot grasp the demanded object resting at height ``base`` (m above the
    floor), ``depth`` (m) behind a front face where it lies in a container."""
    reasons = [r for r in (_height_reason(demand.label, _hand_heights(demand, base, catalog), robot),) if r]
    if depth is not None and depth > robot.reach.horizontal_reach + 1e-9:
        reasons.append(f"reach:{demand.label} depth {_m(depth)} m > horizontal reach "
                       f"{_m(robot.reach.horizontal_reach)} m")
    return reasons


def _approach_reason(demand: ReachDemand, robot: RobotEntry) -> str:
    return f"approach:{demand.label} not reachable for body width {_m(robot.clearance_width)} m"


def _object_place_reasons(facts: HomeFacts, demand: ReachDemand, task: Task, robot: RobotEntry,
                          catalog: Catalog) -> list[str]:
    """Reach to wherever the home's object lies (on a surface, in a container, on the floor). An object
    on the floor, or one the task picks where the scenario leaves it, needs somewhere to stand within
    hand's reach of it; otherwise its host approached is enough (the scenario's seed picks where a
    moved one lies; one only looked at is seen from beside its host)."""
    best: list[str] | None = None
    picked = any(p.object == demand.object for p in task.requires.robot.pick)
    moved = facts.moved_objects(task)
    for obj in sorted((o for o in facts.home.objects if o.catalog_id == demand.at_object), key=lambda o: o.id):
        loc = obj.location
        host = facts.furniture.get(loc.furniture or "")
        if loc.kind == "surface" and host is not None:
            base, depth = host.surface(loc.name).height, None  # type: ignore[arg-type]
        elif loc.kind == "container" and host is not None:
            space = host.container(loc.name)  # type: ignore[arg-type]
            base, depth = space.bottom, _container_depth(host, space.polygon)
        else:
            base, depth = obj.pose.z, None
        found = _grasp_reasons(demand, base, depth, robot, catalog)
        if host is not None and not facts.approachable(host, robot.clearance_width):
            found.append(_approach_reason(demand, robot))
        elif (not found and (host is None or (picked and obj.id not in moved))
              and not facts.stands_to_reach(object_target(facts.world(), obj.id), robot)):
            # a room reached, or a host approached, is not enough: furniture may wall off the corner
            # the object lies in, or the hand fall short of it from the host's free side
            found.append(_out_of_reach_reason(demand, robot))
        if best is None or len(found) < len(best):
            best = found
        if not found:
            break
    return best or []  # no such object: reported as a missing object


def _opening_reach_reasons(facts: HomeFacts, demand: ReachDemand, scenario: str, robot: RobotEntry) -> list[str]:
    """Reach to the handle of the opening the scenario gives the role: at a height the body
    grasps, and with somewhere to stand within reach of it on free floor joined to the
    entrance, found as the robot finds it when it approaches (:func:`stand_spot`)."""
    opening = facts.opening_of_role(demand.opening, scenario)  # type: ignore[arg-type]
    if opening is None:
        return [f"missing_opening:{demand.opening}"]
    target = opening_target(facts.world(), opening)
    height = _height_reason(demand.label, [h.z for h in target.handles], robot)
    if height is not None:
        return [height]
    if facts.stands_to_reach(target, robot):
        return []
    return [_out_of_reach_reason(demand, robot)]


def _out_of_reach_reason(demand: ReachDemand, robot: RobotEntry) -> str:
    return (f"approach:{demand.label} out of reach: no free floor joined to the entrance within "
            f"{_m(reach_radius(robot))} m of it for body width {_m(robot.clearance_width)} m")


def _reach_reasons(facts: HomeFacts, task: Task, robot: RobotEntry, catalog: Catalog) -> list[str]:
    reasons: list[str] = []
    rooms_of_class = {f.semantic_class: f.room for f in task.requires.furniture}
    for demand in task.requires.robot.reach:
        if demand.floor:
            reasons.extend(_grasp_reasons(demand, 0.0, None, robot, catalog))
            continue
        if demand.at_object is not None:
            reasons.extend(_object_place_reasons(facts, demand, task, robot, catalog))
            continue
        if demand.opening is not None:
            reasons.extend(_opening_reach_reasons(facts, demand, task.scenario, robot))
            continue
        items = facts.furniture_by_class.get(demand.furniture or "", [])
        role = rooms_of_class.get(demand.furniture or "")
        if role is not None:
            items = [i for i in items if i.room in facts.role_rooms[role]]
        if not items:
            continue  # reported as missing furniture
        best: list[str] | None = None
        for f in sorted(items, key=lambda i: i.id):
            found = _reach_candidate_reasons(facts, demand, f, robot, catalog)
            if best is None or len(found) < len(best):
                best = found
            if not found:
                break
        reasons.extend(best or [])
    return reasons


def _narrowest_door(facts: HomeFacts, rooms: set[str]) -> str:
    doors = [o for o in facts.home.openings if o.kind in navigation.PASSABLE_KINDS and set(o.connects) & rooms]
    if not doors:
        return "no door"
    door = min(doors, key=lambda o: (o.width, o.id))
    return f"{door.id} {_m(door.width)} m"


def _passage_reasons(facts: HomeFacts, task: Task, robot: RobotEntry) -> list[str]:
    width = robot.clearance_width
    reasons: list[str] = []
    for role in task.requires.robot.passage:
        rooms = facts.role_rooms[role]
        if not rooms:
            continue  # reported as a missing room
        reached = facts.reachable(width)
        if role == "entrance":
            if not facts.entrance_doors:
                reasons.append(f"passage:entrance no entrance door for body width {_m(width)} m")
                continue
            ok = False
            for door in facts.entrance_doors:
                sides = [r for r in door.connects if r in facts.rooms]
                if len(sides) == 2:
                    ok = ok or all(r in reached for r in sides)
                else:
                    ok = ok or (bool(sides) and sides[0] in reached and door.width >= width)
            if not ok:
                door = min(facts.entrance_doors, key=lambda o: (o.width, o.id))
                reasons.append(f"passage:entrance not passable for body width {_m(width)} m "
                               f"({door.id} {_m(door.width)} m)")
            continue
        if not rooms & reached:
            reasons.append(f"passage:{role} not reachable for body width {_m(width)} m "
                           f"({_narrowest_door(facts, rooms)})")
    return reasons


def _screen_facts(facts: HomeFacts, task: Task, robot: RobotEntry, catalog: Catalog) -> Screening:
    reasons = [*_static_reasons(facts, task), *_carry_reasons(task, robot, catalog),
               *_reach_reasons(facts, task, robot, catalog), *_passage_reasons(facts, task, robot)]
    return Screening(applicable=not reasons, reasons=reasons)


def screen(home: Home, task: Task, robot: RobotEntry, catalog: Catalog) -> Screening:
    """Whether ``task`` applies to ``home`` for ``robot``, with every reason it does not."""
    return _screen_facts(HomeFacts(home, catalog), task, robot, catalog)


# --- many homes ----------------------------------------------------------------------------------


def _robots(robots: Iterable[RobotEntry | str] | None, catalog: Catalog) -> list[RobotEntry]:
    if robots is None:
        return list(catalog.robots.values())
    return [catalog.robots[r] if isinstance(r, str) else r for r in robots]


def screen_homes(homes: Iterable[Home], tasks: Iterable[Task] | dict[str, Task], robots: Iterable[RobotEntry | str] | None,
                 catalog: Catalog, progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """One row per home, task and robot (homes, tasks and robots in the given order).

    Columns: home, task, family, extension, robot, applicable (bool), reasons
    (str: every reason joined with ``"; "``, empty when applicable).
    ``robots`` may be entries or catalog ids (None: every catalog body);
    ``progress(n)`` is called after each home.
    """
    task_list = list(tasks.values()) if isinstance(tasks, dict) else list(tasks)
    bodies = _robots(robots, catalog)
    # Widest body first, so narrower bodies can reuse its reachability.
    order = sorted(range(len(bodies)), key=lambda i: -bodies[i].clearance_width)
    cols: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    for home in homes:
        facts = HomeFacts(home, catalog)
        results: dict[tuple[int, int], Screening] = {}
        for bi in order:
            for ti, task in enumerate(task_list):
                results[(ti, bi)] = _screen_facts(facts, task, bodies[bi], catalog)
        for ti, task in enumerate(task_list):
            for bi, body in enumerate(bodies):
                s = results[(ti, bi)]
                cols["home"].append(home.home_id)
                cols["task"].append(task.id)
                cols["family"].append(task.family)
                cols["extension"].append(task.extension)
                cols["robot"].append(body.id)
                cols["applicable"].append(s.applicable)
                cols["reasons"].append(REASON_SEPARATOR.join(s.reasons))
        if progress is not None:
            progress(1)
    table = pd.DataFrame(cols, columns=COLUMNS)
    for c in ("home", "task", "family", "robot", "reasons"):
        table[c] = table[c].astype(str)
    table["applicable"] = table["applicable"].astype(bool)
    table["extension"] = table["extension"].astype(bool)
    return table


def reasons_of(cell: str) -> list[str]:
    """The reasons of one ``reasons`` cell as a list."""
    return [r for r in cell.split(REASON_SEPARATOR) if r] if cell else []


def summary_per_home(table: pd.DataFrame) -> pd.DataFrame:
    """Per home and robot: applicable_count (core tasks that apply, of 20),
    extension_count (extension tasks that apply, of 4), tasks_total; and, for a
    table with a ``verified`` column (the verify stage's), verified_count and
    verified_extension_count (core and extension tasks the scripted reference
    agent passed there)."""
    counted = {"applicable_count": ("applicable", False), "extension_count": ("applicable", True)}
    if "verified" in table.columns:
        counted |= {"verified_count": ("verified", False), "verified_extension_count": ("verified", True)}
    columns = ["applicable_count", "extension_count", "tasks_total", *(c for c in counted if c.startswith("verified"))]
    if table.empty:
        return pd.DataFrame({"home": pd.Series(dtype=str), "robot": pd.Series(dtype=str),
                             **{c: pd.Series(dtype="int64") for c in columns}})
    t = table.assign(**{c: table[flag] & (table["extension"] == ext) for c, (flag, ext) in counted.items()})
    out = (t.groupby(["home", "robot"], sort=False)
           .agg(**{c: (c, "sum") for c in counted}, tasks_total=("task", "size"))
           .reset_index())
    for c in columns:
        out[c] = out[c].astype("int64")
    return out[["home", "robot", *columns]]


def write_applicability(table: pd.DataFrame, out_dir: str | Path) -> tuple[Path, Path]:
    """Write applicability.parquet and applicability_summary.parquet atomically."""
    out = Path(out_dir)
    a = write_parquet(out / APPLICABILITY_FILE, table)
    b = write_parquet(out / SUMMARY_FILE, summary_per_home(table))
    return a, b


#: Task ids counted by ``applicable_count`` and ``extension_count``.
CORE_TASKS = CORE_TASK_IDS
EXTENSION_TASKS = EXTENSION_TASK_IDS


def screen_homes_partition(home_ids: list[str], build_dir: str, catalog_dir: str | None = None) -> list[dict[str, Any]]:
    """Applicability rows of the homes (a partition of the build's applicability stage): every
    task for every robot body."""
    from homeloop.pipeline.homes import home_dir

    build = Path(build_dir)
    catalog = load_catalog(catalog_dir)
    homes = [Home.read(home_dir(build / "homes", h) / "home.json") for h in home_ids]
    table = screen_homes(homes, load_tasks(), None, catalog)
    return table.to_dict("records")
