"""The robot's motion: it drives, turns and opens doors step by step while the world goes on
(docs/dynamics.md, docs/skills.md).

A robot skill that moves the body (:mod:`homeloop.sim.services.robot_skills`) hands
this module a list of :class:`~homeloop.sim.robot.kinematics.Phase` (turn, drive, open a
door) with :meth:`RobotMotion.start` and lets simulated time pass; each step
the body advances along the current phase, so the pan keeps heating and
people keep walking while it drives. What it holds moves with it.

On the way:

- a door phase opens its door (``world.openings[id].open``) when it ends; a
  door found locked when the body gets there stops the motion;
- a person or an object lying on the floor within :data:`LOOKAHEAD_S` of
  driving ahead blocks the body: a motion with a goal plans again around
  them (at most :data:`MAX_REPLANS` times), a straight move stops.

The outcome (:class:`Motion`: done or blocked, why, metres driven) is what the
skill reports. With no motion under way a step does nothing, and the module
sleeps (:class:`~homeloop.sim.world.Rest`) until a skill starts one. While no
other module is due, the body coasts along a phase, many steps at once
(:meth:`RobotMotion.coast`; docs/dynamics.md, "Coasting").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import shapely
from shapely import Polygon

from homeloop.core.catalog import RobotEntry
from homeloop.core.geometry import ShapeMemo
from homeloop.core.home import Home, polygon_from_rings
from homeloop.sim import robot as body_rules
from homeloop.sim.robot.floor import NoPath
from homeloop.sim.robot.kinematics import Phase
from homeloop.sim.robot.obstacles import Obstacle
from homeloop.sim.world import NOTHING, STEP_S, Rest, RobotState, World

#: How far ahead (seconds of driving) the body watches for people and objects in its way.
LOOKAHEAD_S = 0.8

#: How often a motion may plan again around something in its way before it gives up.
MAX_REPLANS = 3

#: A point closer to its room's outline than this (m) is looked up in the room's polygon.
ROOM_DISC_MARGIN_M = 1e-6

#: Objects lying on the floor are looked up again this often while driving (steps).
OBJECT_REFRESH_STEPS = 10

#: What a step of a motion changes (:class:`~homeloop.sim.world.Rest`): the body and the motion, what
#: it holds, and the doors it opened.
MOVING = frozenset({"robot", "robot_motion"})
HOLDING = frozenset({"objects"})
DOORS = frozenset({"openings"})
#: What a step of a motion changed, by whether the body holds something and whether a door opened,
#: and the rests after a step, by what it changed and whether the motion goes on (made once: the
#: module rests after every step).
_STEP_CHANGES = {(holding, door): MOVING | (HOLDING if holding else NOTHING) | (DOORS if door else NOTHING)
                 for holding in (False, True) for door in (False, True)}
_RESTS = {(changed, moving): Rest(changed, -math.inf if moving else math.inf)
          for changed in (NOTHING, *_STEP_CHANGES.values()) for moving in (False, True)}


#: A body coasting along a phase after a step (:meth:`RobotMotion.coast`): the motion's steps and time
#: in the phase, the body's x, y, yaw and room, the metres the motion and the body drove, the seconds
#: driven, and the objects on the floor it watches.
_Coasted = tuple[int, float, float, float, float, str, float, float, float, list[Obstacle]]


@dataclass
class Motion:
    """A motion under way, and then its outcome."""

    phases: list[Phase]
    goal: tuple[float, float] | None = None  # where to plan again to if blocked; None: do not replan
    final_yaw: float | None = None
    avoid_exclude: tuple[str, ...] = ()  # obstacles that are the target itself
    index: int = 0
    t_in_phase: float = 0.0
    status: str = "moving"  # moving | done | blocked
    reason: str | None = None
    moved_m: float = 0.0
    replans: int = 0
    doors_opened: list[str] = field(default_factory=list)
    _steps: int = 0
    _floor_objects: list[Obstacle] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.status == "moving"


class RobotMotion:
    """Moves the robot along the active motion each step (see the module docstring)."""

    name = "robot_motion"

    def __init__(self) -> None:
        self.motion: Motion | None = None
        self.driven_m = 0.0
        self.driving_s = 0.0
        self.doors_opened: list[tuple[float, str]] = []
        self._rooms: _Rooms | None = None
        self._figures: tuple[RobotEntry, float, float] | None = None
        self._people: tuple[tuple[object, ...], list[Obstacle]] | None = None
        self._changed: frozenset[str] = NOTHING  # what the last step changed
        # the states after each of the next steps, as far as :meth:`coast` has worked them out, and the
        # motion and its steps they start from (a step of its own moves on from both)
        self._ahead: tuple[tuple[Motion | None, int], list[_Coasted]] = ((None, -1), [])

    # --- control ------------------------------------------------------------------------------------

    def start(self, world: World, phases: list[Phase], *, goal: tuple[float, float] | None = None,
              final_yaw: float | None = None, avoid_exclude: tuple[str, ...] = ()) -> Motion:
        """Begin a motion (replacing any under way); its first phase starts now."""
        self.motion = Motion(list(phases), goal=goal, final_yaw=final_yaw, avoid_exclude=tuple(avoid_exclude))
        self.motion._floor_objects = body_rules.floor_object_obstacles(world, avoid_exclude)
        self._enter(world, self.motion)
        return self.motion

    def stop(self, reason: str | None = None) -> None:
        m = self.motion
        if m is not None and m.active:
            m.status, m.reason = ("blocked", reason) if reason else ("done", None)

    # --- stepping -----------------------------------------------------------------------------------

    def step(self, world: World, dt: float) -> None:
        m = self.motion
        if m is None or m.status != "moving":
            self._changed = NOTHING
            return
        robot = _robot(world)
        doors = len(self.doors_opened)
        m._steps += 1
        m.t_in_phase += dt
        while m.active and m.t_in_phase >= m.phases[m.index].seconds - 1e-9:
            m.t_in_phase -= m.phases[m.index].seconds
            self._finish(world, m, m.phases[m.index])
            m.index += 1
            self._enter(world, m)
        if m.active:
            phase = m.phases[m.index]
            self._pose(world, phase, m.t_in_phase / phase.seconds if phase.seconds > 0 else 1.0, m)
            if phase.kind == "drive":
                self.driving_s += dt
                self._watch(world, m, phase)
        holding = any(o is not None for o in robot.held.values())
        if holding:
            body_rules.move_held(robot, world.objects)
        self._changed = _STEP_CHANGES[holding, len(self.doors_opened) != doors]

    def rest(self, world: World) -> Rest:
        """Moving: the next step; else asleep until a skill starts a motion (from outside the steps)."""
        m = self.motion
        return _RESTS[self._changed, m is not None and m.active]

    def coast(self, world: World, steps: int, take: bool) -> int:
        """Of the next ``steps`` steps, how many only move the body along the phase under way as the
        last one did (no phase ends, nothing comes in the way, no door opens); with ``take``, the body,
        what it holds and the distances as after them (:mod:`homeloop.sim.world`, "Coasting modules").
        Nothing else steps meanwhile, so the people and the objects on the floor stay where they are."""
        m = self.motion
        if m is None or not m.active:
            return 0
        holding = any(o is not None for o in _robot(world).held.values())
        if self._changed is not _STEP_CHANGES[holding, False]:  # the last step opened a door
            return 0
        (motion, at), ahead = self._ahead
        if motion is not m or at != m._steps:  # worked out from another state: start again
            ahead = []
            self._ahead = ((m, m._steps), ahead)
        if len(ahead) < steps:
            self._work_out(world, m, ahead, steps)
        taken = min(steps, len(ahead))
        if take and taken:
            self._take(world, m, ahead[taken - 1])
            self._ahead = ((None, -1), [])
        return taken

    def _work_out(self, world: World, m: Motion, ahead: list[_Coasted], steps: int) -> None:
        """Extend ``ahead`` (the states after each step coasted so far) towards ``steps`` steps, as
        :meth:`step` would take them, stopping before one that ends the phase or finds something in the way."""
        robot, phase = _robot(world), m.phases[m.index]
        n, t, x, y, yaw, room, moved, driven, driving, floor = ahead[-1] if ahead else (
            m._steps, m.t_in_phase, robot.x, robot.y, robot.yaw, robot.room, m.moved_m, self.driven_m,
            self.driving_s, m._floor_objects)
        drive, end = phase.kind == "drive", phase.seconds - 1e-9
        if drive:
            lookahead, radius = self._body_figures(robot)
            people = self._people_in_the_way(world, m.avoid_exclude) if world.people else []
        while len(ahead) < steps:
            n, t = n + 1, t + STEP_S
            if t >= end:
                return
            nx, ny, yaw = _along(phase, t / phase.seconds)
            step = math.hypot(nx - x, ny - y)
            moved, driven = moved + step, driven + step
            x, y = nx, ny
            if step > 0:
                room = self._room_at(world, x, y, room)
            if drive:
                driving += STEP_S
                if n % OBJECT_REFRESH_STEPS == 0 and floor is m._floor_objects:
                    floor = body_rules.floor_object_obstacles(world, m.avoid_exclude)
                if _blocker(phase, x, y, lookahead, radius, people + floor) is not None:
                    return
            ahead.append((n, t, x, y, yaw, room, moved, driven, driving, floor))

    def _take(self, world: World, m: Motion, state: _Coasted) -> None:
        """Put the body, its motion and what it holds as :meth:`_work_out` left them."""
        robot = _robot(world)
        (m._steps, m.t_in_phase, robot.x, robot.y, robot.yaw, robot.room, m.moved_m, self.driven_m, self.driving_s,
         m._floor_objects) = state
        if any(o is not None for o in robot.held.values()):
            body_rules.move_held(robot, world.objects)

    def _enter(self, world: World, m: Motion) -> None:
        """Start the phase at ``m.index`` (or finish the motion). A door found open costs nothing, a
        closed one :data:`~homeloop.sim.robot.kinematics.DOOR_OPEN_S`; one the body cannot open (locked, or a
        motorised garage door) blocks it."""
        while m.active and m.index < len(m.phases):
            phase = m.phases[m.index]
            if phase.kind != "door":
                return
            door_id = _door(phase)
            if not world.openings[door_id].open:
                if door_id in body_rules.closed_off(world):
                    why = body_rules.door_words(world, door_id)
                    self._blocked(world, m, f"{why}, {body_rules.why_closed(world, door_id)}")
                    return
                phase.seconds = max(phase.seconds, body_rules.DOOR_OPEN_S)
                return
            m.index += 1
        if m.active:
            m.status = "done"

    def _finish(self, world: World, m: Motion, phase: Phase) -> None:
        self._pose(world, phase, 1.0, m)
        if phase.kind == "door":
            door_id = _door(phase)
            world.openings[door_id].open = True
            m.doors_opened.append(door_id)
            self.doors_opened.append((world.time, door_id))

    def _pose(self, world: World, phase: Phase, f: float, m: Motion) -> None:
        robot = _robot(world)
        x, y, yaw = _along(phase, f)
        step = math.hypot(x - robot.x, y - robot.y)
        m.moved_m += step
        self.driven_m += step
        robot.x, robot.y, robot.yaw = x, y, yaw
        if step > 0:
            robot.room = self._room_at(world, x, y, robot.room)

    # --- rooms --------------------------------------------------------------------------------------

    def _room_at(self, world: World, x: float, y: float, current: str) -> str:
        if self._rooms is None or self._rooms.home is not world.home:
            self._rooms = _Rooms(world.home)
        return self._rooms.room_at(x, y, current)

    # --- people and objects in the way ----------------------------------------------------------------

    def _watch(self, world: World, m: Motion, phase: Phase) -> None:
        robot = _robot(world)
        if m._steps % OBJECT_REFRESH_STEPS == 0:
            m._floor_objects = body_rules.floor_object_obstacles(world, m.avoid_exclude)
        lookahead, radius = self._body_figures(robot)
        people = self._people_in_the_way(world, m.avoid_exclude) if world.people else []
        o = _blocker(phase, robot.x, robot.y, lookahead, radius, people + m._floor_objects)
        if o is not None:
            self._blocked(world, m, f"blocked by {o.label} at {body_rules.point_words((o.x, o.y))}")

    def _body_figures(self, robot: RobotState) -> tuple[float, float]:
        """How far ahead the body watches (m) and half its clearance width, for its body."""
        if self._figures is None or self._figures[0] is not robot.body:
            self._figures = (robot.body, body_rules.drive_speed(robot.body) * LOOKAHEAD_S,
                             robot.body.clearance_width / 2)
        return self._figures[1], self._figures[2]

    def _people_in_the_way(self, world: World, exclude: tuple[str, ...]) -> list[Obstacle]:
        """The people as obstacles (:func:`~homeloop.sim.robot.obstacles.people_obstacles`), made again
        only when someone moved."""
        where = (exclude, *((p.id, p.x, p.y, p.room, p.catalog_id, p.name) for p in world.people.values()))
        if self._people is None or self._people[0] != where:
            self._people = (where, body_rules.people_obstacles(world, exclude))
        return self._people[1]

    def _blocked(self, world: World, m: Motion, why: str) -> None:
        """Something is in the way: plan again around it (a motion with a goal), else stop."""
        robot = _robot(world)
        if m.goal is None or m.replans >= MAX_REPLANS:
            self.stop(why)
            return
        try:
            path = body_rules.drive_way(world, robot, m.goal, m.avoid_exclude)
        except NoPath as exc:
            self.stop(f"{why}; no way around: {exc}")
            return
        m.phases = body_rules.path_phases(world, robot.body, robot.yaw, path, m.final_yaw)
        m.index, m.t_in_phase = 0, 0.0
        m.replans += 1
        self._enter(world, m)

    # --- plain data ---------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        m = self.motion
        return {
            "moving": bool(m is not None and m.active),
            "phase": m.phases[m.index].kind if m is not None and m.active else None,
            "goal": list(m.goal) if m is not None and m.goal is not None else None,
            "last_status": m.status if m is not None else None,
            "last_reason": m.reason if m is not None else None,
            "driven_m": round(self.driven_m, 3),
            "driving_s": round(self.driving_s, 3),
            "doors_opened": [{"t": t, "door": d} for t, d in self.doors_opened],
        }


class _Rooms:
    """The room of a point, as the home's room polygons contain it (GEOS), answered without GEOS while
    the point stays inside a disc known to lie within the room it was last found in: a disc around
    where the room was last looked up, as wide as that point's distance to the room's outline (less
    :data:`ROOM_DISC_MARGIN_M`, far above rounding)."""

    def __init__(self, home: Home):
        self.home = home
        self.polygons = [(r.id, polygon_from_rings(r.polygon)) for r in home.rooms]
        shapes, ids = [poly for _, poly in self.polygons], tuple(rid for rid, _ in self.polygons)
        self.edges, self.boxed = _OUTLINES.get([shapes], ids, lambda: _outlines(self.polygons))
        self.disc: tuple[str, float, float, float] | None = None  # room, centre, radius

    def room_at(self, x: float, y: float, current: str) -> str:
        """The room at (x, y): ``current`` while it contains the point, else the first room that
        does, else ``current`` (a doorway between rooms)."""
        disc = self.disc
        if disc is not None and disc[0] == current and math.hypot(x - disc[1], y - disc[2]) < disc[3]:
            return current
        here = next((poly for rid, poly in self.polygons if rid == current), None)
        if here is not None and shapely.contains_xy(here, x, y):
            clear = _distance_to(self.edges[current], x, y) - ROOM_DISC_MARGIN_M
            self.disc = (current, x, y, clear) if clear > 0 else None
            return current
        for rid, poly, x0, y0, x1, y1 in self.boxed:
            if x0 <= x <= x1 and y0 <= y <= y1 and shapely.contains_xy(poly, x, y):
                return rid
        return current


#: Rooms' outlines by their shapes: every episode in a home drives through the same rooms.
_OUTLINES = ShapeMemo(16)


def _outlines(polygons: list[tuple[str, Polygon]]) -> tuple[dict[str, list[tuple[float, float, float, float]]],
                                                            list[tuple[str, Polygon, float, float, float, float]]]:
    """Each room's edges, and each room's polygon (prepared) with its bounds, which a point outside
    rules the room out without GEOS."""
    for _, poly in polygons:
        shapely.prepare(poly)
    return {rid: _edges(poly) for rid, poly in polygons}, [(rid, poly, *poly.bounds) for rid, poly in polygons]


def _edges(polygon: Polygon) -> list[tuple[float, float, float, float]]:
    """Every edge (x0, y0, x1, y1) of a polygon's rings."""
    out: list[tuple[float, float, float, float]] = []
    for part in getattr(polygon, "geoms", [polygon]):
        for ring in (part.exterior, *part.interiors):
            xy = list(ring.coords)
            out.extend((a[0], a[1], b[0], b[1]) for a, b in zip(xy, xy[1:]))
    return out


def _distance_to(edges: list[tuple[float, float, float, float]], x: float, y: float) -> float:
    """The distance from (x, y) to the nearest edge."""
    best = math.inf
    for x0, y0, x1, y1 in edges:
        dx, dy = x1 - x0, y1 - y0
        length2 = dx * dx + dy * dy
        t = 0.0 if length2 == 0.0 else min(max(((x - x0) * dx + (y - y0) * dy) / length2, 0.0), 1.0)
        best = min(best, math.hypot(x - x0 - t * dx, y - y0 - t * dy))
    return best


def _robot(world: World) -> RobotState:
    """The body a motion moves: a motion starts only in a world with a robot."""
    if world.robot is None:
        raise RuntimeError("robot_motion: a motion under way in a world without a robot")
    return world.robot


def _door(phase: Phase) -> str:
    """The opening a door phase passes (every door phase names one)."""
    if phase.door is None:
        raise ValueError(f"a {phase.kind} phase names no door")
    return phase.door


def _along(phase: Phase, f: float) -> tuple[float, float, float]:
    """The body's x, y and yaw a share ``f`` (clamped to 0-1) of the way through ``phase``: what a step
    and a coast both read."""
    f = min(max(f, 0.0), 1.0)
    x = phase.x0 + (phase.x1 - phase.x0) * f
    y = phase.y0 + (phase.y1 - phase.y0) * f
    return x, y, body_rules.wrap_angle(phase.yaw0 + (phase.yaw1 - phase.yaw0) * f)


def _blocker(phase: Phase, x: float, y: float, lookahead: float, radius: float,
             obstacles: list[Obstacle]) -> Obstacle | None:
    """The first of ``obstacles`` in the way of the body at (x, y) driving ``phase``, within
    ``lookahead`` metres and the rest of the phase, or None: what a step and a coast both read."""
    ahead = min(lookahead, math.hypot(phase.x1 - x, phase.y1 - y))
    if ahead <= 1e-6:
        return None
    ux, uy = (phase.x1 - phase.x0) / phase.length, (phase.y1 - phase.y0) / phase.length
    return next((o for o in obstacles if _in_the_way(x, y, ux, uy, ahead, o, radius)), None)


def _in_the_way(x: float, y: float, ux: float, uy: float, ahead: float, o: Obstacle, radius: float) -> bool:
    """Whether the disc ``o`` comes within the body's radius of the stretch ``ahead`` metres along
    (ux, uy) from (x, y), closer than it is now (a body already touching something may back off)."""
    dx, dy = o.x - x, o.y - y
    along = dx * ux + dy * uy
    if along <= 1e-3:
        return False
    t = min(along, ahead)
    cx, cy = dx - ux * t, dy - uy * t
    return cx * cx + cy * cy < (o.radius + radius) ** 2
