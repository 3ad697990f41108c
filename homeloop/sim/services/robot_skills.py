"""The robot service: what the body does, one skill each (docs/skills.md).

Sensing: ``status`` (pose, room, hands, battery), ``capture`` (a picture
from the head camera), ``look`` (point the head), ``scan`` (pictures all
round). Moving: ``turn``, ``move`` (straight, stopping at what is in the
way), ``approach`` (drive to stand within reach of something the robot's
camera detected) and ``navigate_to`` (drive to a room). Acting: ``pick``,
``place``, ``pour``, ``handoff``, ``open``, ``close`` and ``press``.

``navigate_to`` takes a room (its id from the list of rooms the agent starts
with, or its name); everything else the body drives to or acts on is named
by a detection of the robot's own camera (``robot_capture`` or
``robot_scan``, then perception), as physical skills need (docs/skills.md):
a detection of a house camera, an unknown one, or one gone stale because the
thing moved is refused with the reason.

Durations are what the body needs: driving at its catalog speed (capped
indoors), turning at its turn rate, stopping to open closed doors, plus the
arm work of :data:`ARM_S` and any torso lift. The world goes on meanwhile
(:mod:`homeloop.sim.dynamics.robot_motion`).

A failed action changes nothing, except where its error says otherwise:

- ``move``, ``approach`` and ``navigate_to`` stopped on the way leave the
  body where it stopped (the error gives the distance moved and the pose),
  and doors opened on the way stay open;
- ``place`` onto a surface with no free spot within reach drops the object
  on the floor beside it;
- every call that turned the body toward its target leaves it turned.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import shapely
import shapely.ops
from shapely import Point

from homeloop.core.geometry import ShapeMemo
from homeloop.core.home import Device, Furniture, polygon_from_rings
from homeloop.sim import devices
from homeloop.sim import robot as rb
from homeloop.sim.context import SkillContext
from homeloop.sim.dynamics.robot_motion import Motion, RobotMotion
from homeloop.sim.robot import Handle, Phase, ReachError, Target
from homeloop.sim.services import perception
from homeloop.sim.services.cameras import capture_view
from homeloop.sim.skills import REGISTRY, SkillError, skill
from homeloop.sim.world import STEP_S, ObjectState, Placement, RobotState, World

#: Seconds of arm work for each action (reach, grasp or let go, take the arm back), estimated for
#: today's household manipulators; turning toward the target and any torso lift come on top.
#: Opening or closing a door takes as long on request as on the way (DOOR_OPEN_S).
ARM_S = {"pick": 4.0, "place": 3.5, "pour": 3.0, "handoff": 4.0, "open": rb.DOOR_OPEN_S,
         "close": rb.DOOR_OPEN_S, "open_part": 4.0, "close_part": 3.5, "press": 2.0}

#: How fast a watering can pours (l/s): a rose spout gives about 6 l/min.
POUR_L_PER_S = 0.1

#: Volumetric moisture of potting soil at field capacity: a pot's soil holds its ``capacity_l``
#: litres at this moisture, and what is poured beyond drains out of the pot. A litre poured
#: raises the moisture by k = FIELD_CAPACITY / capacity_l (0.45 for a 1 l pot, so 0.5 l lifts a
#: dry plant from 0.15 to 0.375).
FIELD_CAPACITY = 0.45

#: The head: pan either way and tilt down and up from level (degrees), and its speed (rad/s).
HEAD_PAN_LIMIT_DEG = 90.0
HEAD_TILT_RANGE_DEG = (-60.0, 30.0)
HEAD_TURN_RATE = 2.0

#: Torso lift speed (m/s): bodies with a lifting torso raise it for places above the reach of the
#: lowest setting.
TORSO_LIFT_SPEED = 0.1

#: Longest straight move a call may ask for (m).
MAX_MOVE_M = 5.0

#: Share of the head camera's field of view a scan's neighbouring pictures keep in common: a scan
#: takes ceil(360° / (this share of the HFOV)) pictures, evenly spread over a full turn (six for a
#: 69° camera), so together they see all round.
SCAN_OVERLAP_SHARE = 0.9

#: Battery: hours on a charge standing by, and driving (estimates for mobile manipulators).
BATTERY_IDLE_H = 8.0
BATTERY_DRIVING_H = 2.0

#: The source name of the robot's head camera in the captures registry (docs/skills.md).
ROBOT_CAMERA = "robot"

#: Grid spacing (m) of the spots tried when putting something on a surface.
PLACE_GRID_M = 0.04


# --- the body and its motions ---------------------------------------------------------------------


def _robot(ctx: SkillContext) -> RobotState:
    robot = ctx.world.robot
    if robot is None:
        raise SkillError("this episode has no robot body")
    return robot


def _run(ctx: SkillContext, phases: list[Phase], *, goal: tuple[float, float] | None = None,
         final_yaw: float | None = None, exclude: tuple[str, ...] = ()) -> Motion:
    """Carry out a motion, letting simulated time pass step by step until it ends (so the call
    takes exactly what the motion needs, doors found open or closed on the way included)."""
    module = ctx.world.module(RobotMotion)
    motion = module.start(ctx.world, phases, goal=goal, final_yaw=final_yaw, avoid_exclude=exclude)
    ctx.advance_while(lambda: motion.active)
    if motion.active:
        module.stop("the episode's time ran out")
    return motion


def _wait(ctx: SkillContext, seconds: float) -> None:
    """Let the world go on for an action of ``seconds`` (whole steps, rounded up)."""
    if seconds > 0:
        ctx.advance(math.ceil(seconds / STEP_S - 1e-9) * STEP_S)


def _face(ctx: SkillContext, robot: RobotState, xy: tuple[float, float]) -> None:
    phase = rb.turn_phase(robot.body, robot.x, robot.y, robot.yaw, rb.heading_to(robot, xy))
    if phase is not None:
        _run(ctx, [phase])


def _centre(handle: Handle) -> tuple[float, float]:
    c = handle.shape.centroid
    return float(c.x), float(c.y)


def _lift_s(robot: RobotState, z: float) -> float:
    """Seconds to raise a lifting torso for a hand at height ``z``."""
    body = robot.body
    if not body.torso_lift or body.body.max_height is None:
        return 0.0
    lowest_top = body.reach.max_grasp_height - (body.body.max_height - body.body.height)
    return max(z - lowest_top, 0.0) / TORSO_LIFT_SPEED


def _arm(ctx: SkillContext, robot: RobotState, action: str, z: float, extra_s: float = 0.0) -> None:
    _wait(ctx, ARM_S[action] + _lift_s(robot, z) + extra_s)


def _pose(ctx: SkillContext, robot: RobotState) -> dict[str, Any]:
    return {"x": round(robot.x, 3), "y": round(robot.y, 3), "heading_deg": round(math.degrees(robot.yaw), 1),
            "room": robot.room, "room_name": ctx.world.home.room(robot.room).name if robot.room else None}


def _hands(ctx: SkillContext, robot: RobotState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for hand, oid in robot.held.items():
        obj = ctx.world.objects.get(oid) if oid else None
        out[hand] = None if obj is None else {"object": oid, "label": rb.object_label(ctx.world, obj)}
    return out


def _state(ctx: SkillContext, robot: RobotState) -> dict[str, Any]:
    return {"pose": _pose(ctx, robot), "hands": _hands(ctx, robot)}


def _held_object(ctx: SkillContext, robot: RobotState, hand: str | None) -> ObjectState:
    names = list(robot.held)
    if hand is not None and hand not in robot.held:
        raise SkillError(f"the {robot.body.name} has no hand {hand!r}; its hands: {', '.join(names)}")
    held = [o for h, o in robot.held.items() if o is not None and (hand is None or h == hand)]
    if not held:
        which = f"its {hand} hand holds" if hand else "its hands hold"
        raise SkillError(f"the robot holds nothing ({which} nothing); pick something up first")
    return ctx.world.objects[held[0]]


# --- targets from detections ----------------------------------------------------------------------


def _target(ctx: SkillContext, detection: str, *kinds: str, action: str, own_camera: bool = True) -> Target:
    """What a detection shows, as a target of ``kinds``; perception refuses unknown, stale and (for
    physical skills) other cameras' detections."""
    kind, eid = perception.resolve_detection(ctx, detection, own_camera=own_camera)
    if kinds and kind not in kinds:
        raise SkillError(f"{action} takes {' or '.join(kinds)} detections; {detection} shows a {kind} ({eid})")
    robot = ctx.world.robot
    if kind == "opening":
        return rb.opening_target(ctx.world, eid, near=(robot.x, robot.y) if robot else None)
    return rb.target_of(ctx.world, kind, eid)


def _reach(ctx: SkillContext, robot: RobotState, target: Target) -> Handle:
    return rb.reach_from(robot.body, (robot.x, robot.y), target)


# --- sensing ----------------------------------------------------------------------------------------


def _battery_percent(ctx: SkillContext) -> float:
    driving = ctx.world.module(RobotMotion).driving_s
    idle_rate, drive_rate = 1 / (BATTERY_IDLE_H * 3600), 1 / (BATTERY_DRIVING_H * 3600)
    used = ctx.world.time * idle_rate + driving * (drive_rate - idle_rate)
    return round(max(100.0 * (1.0 - used), 0.0), 1)


@skill("robot", units=1, seconds=0.05)
def status(ctx: SkillContext) -> dict[str, Any]:
    """The robot's pose and room, what each hand holds, its head's aim and its battery."""
    robot = _robot(ctx)
    body = robot.body
    return {"body": body.name, **_state(ctx, robot),
            "free_hands": [h for h, o in robot.held.items() if o is None],
            "carrying_kg": round(rb.carried_mass(ctx.world, robot), 3), "payload_kg_per_hand": body.payload.kg,
            "head": {"pan_deg": round(math.degrees(robot.head_yaw), 1),
                     "tilt_deg": round(math.degrees(robot.head_pitch), 1)},
            "battery_percent": _battery_percent(ctx)}


def _capture(ctx: SkillContext, robot: RobotState) -> Any:
    return capture_view(ctx, rb.head_view(robot), ROBOT_CAMERA)


@skill("robot", units=1, seconds=0.2)
def capture(ctx: SkillContext) -> Any:
    """Take a picture with the robot's head camera; its detections (via perception) are what the
    robot's physical skills act on."""
    return _capture(ctx, _robot(ctx))


@skill("robot", units=1)
def look(ctx: SkillContext, pan_deg: float | None = None, tilt_deg: float | None = None,
         target: str | None = None) -> dict[str, Any]:
    """Point the head camera: pan and tilt relative to the body, or toward a detection.

    pan_deg: head pan from straight ahead, positive to the left (-90 to 90); omit to keep it.
    tilt_deg: head tilt from level, positive up (-60 to 30); omit to keep it.
    target: a detection id to look at (from any camera); overrides pan_deg and tilt_deg.
    """
    robot = _robot(ctx)
    pan = robot.head_yaw if pan_deg is None else math.radians(pan_deg)
    tilt = robot.head_pitch if tilt_deg is None else math.radians(tilt_deg)
    if target is not None:
        aim = _target(ctx, target, action="look", own_camera=False)
        handle = aim.handles[0]
        (x, y), view = aim.centre(), rb.head_view(robot)
        pan = rb.wrap_angle(math.atan2(y - robot.y, x - robot.x) - robot.yaw)
        tilt = math.atan2(handle.z - view["z"], max(math.hypot(x - robot.x, y - robot.y), 1e-6))
    if abs(math.degrees(pan)) > HEAD_PAN_LIMIT_DEG + 1e-6:
        raise SkillError(f"the head pans at most {HEAD_PAN_LIMIT_DEG:.0f}° either way; {math.degrees(pan):.0f}° "
                         f"needs the body turned first (robot_turn by {math.degrees(pan):.0f})")
    lo, hi = HEAD_TILT_RANGE_DEG
    tilt = min(max(tilt, math.radians(lo)), math.radians(hi)) if target is not None else tilt
    if not lo - 1e-6 <= math.degrees(tilt) <= hi + 1e-6:
        raise SkillError(f"the head tilts from {lo:.0f}° to {hi:.0f}°; {math.degrees(tilt):.0f}° is out of range")
    _wait(ctx, max(abs(pan - robot.head_yaw), abs(tilt - robot.head_pitch)) / HEAD_TURN_RATE)
    robot.head_yaw, robot.head_pitch = pan, tilt
    return {"pan_deg": round(math.degrees(pan), 1), "tilt_deg": round(math.degrees(tilt), 1),
            "camera_heading_deg": round(math.degrees(rb.wrap_angle(robot.yaw + pan)), 1)}


def scan_headings(robot: RobotState) -> int:
    """How many pictures a scan takes (see :data:`SCAN_OVERLAP_SHARE`)."""
    return math.ceil(360.0 / (robot.body.head_camera.hfov_deg * SCAN_OVERLAP_SHARE) - 1e-9)


@skill("robot", units=6)
def scan(ctx: SkillContext) -> dict[str, Any]:
    """Look all round: pictures from the head camera at headings spread over a full turn (turning
    left), ending facing where it began."""
    robot = _robot(ctx)
    captures = []
    start = robot.yaw
    n = scan_headings(robot)
    for i in range(n):
        step = rb.turn_phase(robot.body, robot.x, robot.y, robot.yaw, robot.yaw + 2 * math.pi / n) if i else None
        if step is not None:
            _run(ctx, [step])
        captures.append({"heading_deg": round(math.degrees(robot.yaw), 1), "capture": _capture(ctx, robot)})
        _wait(ctx, REGISTRY["robot_capture"].seconds or 0.0)
    back = rb.turn_phase(robot.body, robot.x, robot.y, robot.yaw, start)
    if back is not None:
        _run(ctx, [back])
    return {"captures": captures, "pose": _pose(ctx, robot)}


# --- moving -----------------------------------------------------------------------------------------


@skill("robot", units=1)
def turn(ctx: SkillContext, degrees: float) -> dict[str, Any]:
    """Turn the body on the spot.

    degrees: how far; positive turns left (counter-clockwise), negative right; at most 360 either way.
    """
    robot = _robot(ctx)
    if abs(degrees) > 360:
        raise SkillError(f"turn at most 360 degrees either way, not {degrees:g}")
    delta = math.radians(degrees)
    if abs(delta) > 1e-9:
        _run(ctx, [Phase("turn", abs(delta) / rb.turn_rate(robot.body), robot.x, robot.y, robot.yaw,
                         robot.x, robot.y, robot.yaw + delta)])
    return {"pose": _pose(ctx, robot)}


@skill("robot", units=2)
def move(ctx: SkillContext, distance: float) -> dict[str, Any]:
    """Drive straight ahead or back, stopping short of walls, furniture, closed doors, people and
    objects on the floor.

    distance: metres; positive forward, negative backward; at most 5 either way.
    """
    robot = _robot(ctx)
    if abs(distance) > MAX_MOVE_M:
        raise SkillError(f"move at most {MAX_MOVE_M:g} m either way, not {distance:g}; "
                         "robot_navigate_to goes further")
    allowed, blocker = rb.straight_run(ctx.world, robot, distance, rb.obstacles(ctx.world))
    sign = 1.0 if distance >= 0 else -1.0
    end = (robot.x + math.cos(robot.yaw) * allowed * sign, robot.y + math.sin(robot.yaw) * allowed * sign)
    motion = None
    if allowed > 1e-3:
        motion = _run(ctx, [rb.drive_phase(robot.body, (robot.x, robot.y), end, robot.yaw, backward=sign < 0)])
    moved = motion.moved_m if motion is not None else 0.0
    if motion is not None and motion.status == "blocked":
        blocker = motion.reason
    if blocker is not None and moved < abs(distance) - 1e-3:
        raise SkillError(f"moved {moved:.2f} of {abs(distance):.2f} m: stopped by {blocker.removeprefix('blocked by ')}; "
                         f"now at {rb.point_words((robot.x, robot.y))} in {rb.room_name(ctx.world.home, robot.room)}")
    return {"moved_m": round(moved, 3), "pose": _pose(ctx, robot)}


def _drive(ctx: SkillContext, robot: RobotState, goal: tuple[float, float], final_yaw: float | None,
           exclude: tuple[str, ...] = ()) -> tuple[Motion, rb.Route]:
    """Plan a path to ``goal`` around people and objects and drive it."""
    path = rb.drive_way(ctx.world, robot, goal, exclude)
    phases = rb.path_phases(ctx.world, robot.body, robot.yaw, path, final_yaw)
    return _run(ctx, phases, goal=path.goal, final_yaw=final_yaw, exclude=exclude), path


def _drive_report(ctx: SkillContext, robot: RobotState, motion: Motion, path: rb.Route, where: str) -> dict[str, Any]:
    if motion.status == "blocked":
        raise SkillError(f"stopped on the way to {where} after {motion.moved_m:.2f} of {path.length:.2f} m: "
                         f"{motion.reason}; now at {rb.point_words((robot.x, robot.y))} in "
                         f"{rb.room_name(ctx.world.home, robot.room)}")
    return {"pose": _pose(ctx, robot), "driven_m": round(motion.moved_m, 3),
            "doors_opened": list(motion.doors_opened)}


@skill("robot", units=5)
def navigate_to(ctx: SkillContext, room: str) -> dict[str, Any]:
    """Drive to a room (to the free spot nearest its middle), opening closed doors on the way; a locked
    door stops it (unlock it first). The body ends facing the way it drove.

    room: the room's id from the list of rooms (its name is accepted when no other room has it).
    """
    robot = _robot(ctx)
    room_id = _room_id(ctx, room)
    goal = rb.room_spot(ctx.world, room_id, robot.body.clearance_width, near=(robot.x, robot.y))
    try:
        motion, path = _drive(ctx, robot, goal, None)
    except rb.NoPath:  # people or objects on the floor stand on the spot or cut it off: the one they leave
        clear = rb.clear_room_spot(ctx.world, robot, room_id)
        if clear is None or clear == goal:
            raise
        motion, path = _drive(ctx, robot, clear, None)
    return _drive_report(ctx, robot, motion, path, rb.room_name(ctx.world.home, room_id))


def _room_id(ctx: SkillContext, text: str) -> str:
    rooms = ctx.world.home.rooms
    if any(r.id == text for r in rooms):
        return text
    named = [r.id for r in rooms if r.name.lower() == text.strip().lower()]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(f"{r.id} ({r.name})" for r in rooms)
    many = f"{len(named)} rooms are called {text!r}; " if named else f"unknown room {text!r}; "
    raise SkillError(f"{many}rooms: {listed}")


@skill("robot", units=3)
def approach(ctx: SkillContext, target: str) -> dict[str, Any]:
    """Drive to stand within reach of something the robot's camera detected, facing it.

    target: a detection id from the robot's own camera (robot_capture or robot_scan, then perception).
    """
    robot = _robot(ctx)
    aim = _target(ctx, target, action="approach")
    spot = rb.approach_spot(ctx.world, robot, aim)
    facing = _facing(aim, spot, robot)
    if math.dist(spot, (robot.x, robot.y)) <= 1e-6:
        _face(ctx, robot, facing)
        data = {"pose": _pose(ctx, robot), "driven_m": 0.0, "doors_opened": []}
    else:
        final = math.atan2(facing[1] - spot[1], facing[0] - spot[0])
        motion, path = _drive(ctx, robot, spot, final, aim.exclude)
        data = _drive_report(ctx, robot, motion, path, aim.name)
    _aim_head(robot, aim)
    reachable = [h.what for h in aim.handles if _reaches(robot, h)]
    return {**data, "target": aim.name, "within_reach": reachable,
            "head": {"pan_deg": round(math.degrees(robot.head_yaw), 1),
                     "tilt_deg": round(math.degrees(robot.head_pitch), 1)}}


def _aim_head(robot: RobotState, aim: Target) -> None:
    """Point the head at the nearest handle of what the body drove up to (tilt within its range),
    which it does on the way, so it takes no time of its own."""
    p = Point(robot.x, robot.y)
    handle = min(aim.handles, key=lambda h: h.shape.distance(p))
    near = shapely.ops.nearest_points(handle.shape, p)[0]
    view = rb.head_view(robot)
    lo, hi = (math.radians(a) for a in HEAD_TILT_RANGE_DEG)
    robot.head_yaw = 0.0
    robot.head_pitch = min(max(math.atan2(handle.z - view["z"], max(near.distance(p), 1e-6)), lo), hi)


def _facing(aim: Target, spot: tuple[float, float], robot: RobotState) -> tuple[float, float]:
    near = shapely.ops.nearest_points(shapely.union_all([h.shape for h in aim.handles]), Point(spot))[0]
    return (near.x, near.y) if math.dist((near.x, near.y), spot) > 1e-6 else aim.centre()


def _reaches(robot: RobotState, handle: Handle) -> bool:
    return (rb.height_problem(robot.body, handle) is None
            and handle.shape.distance(Point(robot.x, robot.y)) <= rb.reach_radius(robot.body) + 1e-6)


# --- acting: objects --------------------------------------------------------------------------------


@skill("robot", units=2)
def pick(ctx: SkillContext, target: str, hand: str | None = None) -> dict[str, Any]:
    """Pick up a carryable object within reach, with a free hand (every hand for one heavier than a
    hand carries).

    target: a detection id of the object from the robot's own camera.
    hand: the hand to use (left or right on a two-handed body); omit for any free hand.
    """
    world, robot = ctx.world, _robot(ctx)
    aim = _target(ctx, target, "object", action="pick")
    obj = world.objects[aim.id]
    if obj.placement.kind == "held":
        holder_id = obj.placement.holder
        holder = "the robot" if holder_id == "robot" else world.people[holder_id].name if holder_id else "someone"
        raise SkillError(f"{aim.name} is held by {holder}")
    _check_container_open(world, obj)
    hands = _hands_for(world, robot, obj, hand)
    handle = _reach(ctx, robot, aim)
    _face(ctx, robot, _centre(handle))
    _arm(ctx, robot, "pick", handle.z)
    rb.hold(world, robot, obj, hands, handle.key)
    return {"picked": aim.name, "hands": hands, "mass_kg": rb.object_mass(world, obj), **_state(ctx, robot)}


def _hands_for(world: World, robot: RobotState, obj: ObjectState, hand: str | None) -> list[str]:
    if hand is not None:
        if hand not in robot.held:
            raise SkillError(f"the {robot.body.name} has no hand {hand!r}; its hands: {', '.join(robot.held)}")
        if robot.held[hand] is not None:
            raise SkillError(f"the {hand} hand holds {robot.held[hand]}; free hands: "
                             f"{', '.join(h for h, o in robot.held.items() if o is None) or 'none'}")
    hands = rb.hands_for(world, robot, obj)
    if hand is not None and len(hands) == 1:
        return [hand]
    return hands


def _check_container_open(world: World, obj: ObjectState) -> None:
    p = obj.placement
    if p.kind != "container" or p.furniture is None or p.name is None:
        return
    f = world.home.furniture_item(p.furniture)
    space = f.container(p.name)
    if space.opened_by and not _part_open(world, f, space.opened_by):
        raise SkillError(f"the {f.semantic_class.replace('_', ' ')}'s {space.opened_by.replace('_', ' ')} is "
                         f"closed: open it first (robot_open on the {f.semantic_class.replace('_', ' ')})")


def _part_open(world: World, f: Furniture, part: str) -> bool:
    closed = f.part(part).range[0]
    return abs(world.parts[(f.id, part)] - closed) > 1e-6


@skill("robot", units=2)
def place(ctx: SkillContext, target: str | None = None, on: str | None = None, hand: str | None = None) -> dict[str, Any]:
    """Put down what a hand holds: on or in furniture the robot's camera detected, or on the floor.

    target: a detection id of the furniture from the robot's own camera; omit to put it on the floor in front of the robot.
    on: which surface or container of that furniture (top, seat, shelf_2, basket, drum ...); omit for the first within reach that takes it.
    hand: the hand whose object to put down; omit for the first hand holding something.
    """
    world, robot = ctx.world, _robot(ctx)
    obj = _held_object(ctx, robot, hand)
    if target is None:
        return _place_on_floor(ctx, robot, obj)
    aim = _target(ctx, target, "furniture", action="place")
    f = world.home.furniture_item(aim.id)
    return _place_on_furniture(ctx, robot, obj, f, on)


def _grasp_height(world: World, obj: ObjectState) -> float:
    """Height of the hand above the object's base: the grasp it was picked by."""
    entry = world.catalog.objects.get(obj.catalog_id)
    grasps = {g.name: g.offset.z for g in entry.grasp_points} if entry is not None else {}
    grasp = obj.props.get("grasp")
    return grasps[grasp] if grasp in grasps else min(grasps.values(), default=0.0)


def _footprint_radius(world: World, obj: ObjectState) -> float:
    w, d, _ = rb.object_size(world, obj)
    return math.hypot(w, d) / 2


#: Rooms' floors clear of furniture and walls, shrunk for a footprint, by the shapes (a home's never move).
_FLOOR_SPACES = ShapeMemo(256)


def _floor_space(world: World, room: str, shrink: float) -> Any:
    """The room's floor not covered by furniture or walls (where things can lie), less ``shrink`` (m)
    all round."""
    home = world.home
    floor = home.room_polygon(room)
    taken = [polygon_from_rings(f.footprint) for f in home.furniture if f.room == room]
    taken += [polygon_from_rings(w.polygon) for w in home.walls]
    return _FLOOR_SPACES.get(([floor], taken), (shrink,), lambda: (
        floor.difference(shapely.union_all(taken)) if taken else floor).buffer(-shrink))


def _floor_point_near(world: World, robot: RobotState, obj: ObjectState, xy: tuple[float, float]) -> tuple[float, float] | None:
    """The floor point nearest ``xy`` where the object lies clear of furniture and walls."""
    room = robot.room if robot.room is not None else rb.room_of(world.home, *xy)
    space = _floor_space(world, room, _footprint_radius(world, obj) * 0.7)
    if space.is_empty:
        return None
    p = shapely.ops.nearest_points(space, Point(xy))[0]
    return float(p.x), float(p.y)


def _place_on_floor(ctx: SkillContext, robot: RobotState, obj: ObjectState) -> dict[str, Any]:
    world = ctx.world
    ahead = rb.front_offset(robot.body) + _footprint_radius(world, obj) + 0.1
    wanted = (robot.x + math.cos(robot.yaw) * ahead, robot.y + math.sin(robot.yaw) * ahead)
    spot = _floor_point_near(world, robot, obj, wanted)
    label = rb.object_label(world, obj)
    if spot is None or math.dist(spot, (robot.x, robot.y)) > rb.reach_radius(robot.body):
        raise SkillError(f"no floor in reach in front of the robot to put the {label} on: turn or move first")
    floor = Target("floor", "floor", "the floor", robot.room,
                   (Handle(f"the floor in front of the robot (the {label} held by its grasp)", Point(spot),
                           _grasp_height(world, obj)),))
    handle = _reach(ctx, robot, floor)
    _arm(ctx, robot, "place", handle.z)
    _put(world, robot, obj, Placement(kind="floor", room=robot.room), spot, 0.0)
    return {"placed": f"the {label} ({obj.id})", "on": "floor", "at": _xyz(obj), **_state(ctx, robot)}


def _put(world: World, robot: RobotState, obj: ObjectState, placement: Placement, xy: tuple[float, float],
         z: float) -> None:
    rb.release(robot, obj)
    obj.placement = placement
    obj.x, obj.y, obj.z = float(xy[0]), float(xy[1]), float(z)
    obj.props["yaw"] = robot.yaw


def _xyz(obj: ObjectState) -> list[float]:
    return [round(obj.x, 3), round(obj.y, 3), round(obj.z, 3)]


def _places(f: Furniture) -> list[tuple[str, str]]:
    """(kind, name) of each surface and container of the furniture, surfaces first."""
    return [("surface", s.name) for s in f.surfaces] + [("container", c.name) for c in f.containers]


def _place_on_furniture(ctx: SkillContext, robot: RobotState, obj: ObjectState, f: Furniture, on: str | None) -> dict[str, Any]:
    world = ctx.world
    places = _places(f)
    name = f.semantic_class.replace("_", " ")
    if not places:
        raise SkillError(f"nothing can be put on or in the {name} ({f.id}): it has no surface or container")
    if on is not None and on not in {n for _, n in places}:
        raise SkillError(f"the {name} has no surface or container {on!r}; it has: {', '.join(n for _, n in places)}")
    problems = []
    for kind, place_name in places:
        if on is not None and place_name != on:
            continue
        problem = _place_problem(world, robot, obj, f, kind, place_name)
        if problem is None:
            return _place_into(ctx, robot, obj, f, kind, place_name)
        problems.append(f"{place_name}: {problem}")
    raise SkillError(f"cannot put the {rb.object_label(world, obj)} on or in the {name}: " + "; ".join(problems))


def _place_handle(world: World, obj: ObjectState, f: Furniture, kind: str, place_name: str) -> Handle:
    name = f"the {f.semantic_class.replace('_', ' ')}'s {place_name.replace('_', ' ')}"
    if kind == "surface":
        s = f.surface(place_name)
        return Handle(name, polygon_from_rings(s.polygon), s.height + _grasp_height(world, obj))
    c = f.container(place_name)
    return Handle(name, polygon_from_rings(c.polygon), rb.container_height(c))


def _place_problem(world: World, robot: RobotState, obj: ObjectState, f: Furniture, kind: str,
                   place_name: str) -> str | None:
    """Why the object cannot go there (size, fit, a closed door, height, distance), or None."""
    if kind == "container":
        c = f.container(place_name)
        if obj.semantic_class not in c.fits:
            return f"it takes {', '.join(c.fits)}, not a {obj.semantic_class.replace('_', ' ')}"
        if c.opened_by and not _part_open(world, f, c.opened_by):
            return f"the {c.opened_by.replace('_', ' ')} is closed"
    handle = _place_handle(world, obj, f, kind, place_name)
    target = Target("furniture", f.id, handle.what, f.room, (handle,))
    try:
        rb.reach_from(robot.body, (robot.x, robot.y), target)
    except ReachError as exc:
        return str(exc)
    if kind == "surface" and _surface_candidates(world, obj, f, place_name)[0].size == 0:
        w, d, _ = rb.object_size(world, obj)
        return f"the {rb.object_label(world, obj)} ({w:.2f} x {d:.2f} m) does not fit on it"
    return None


def _surface_candidates(world: World, obj: ObjectState, f: Furniture, place_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Grid spots (x, y arrays) on the surface where the object's centre may stand."""
    poly = polygon_from_rings(f.surface(place_name).polygon)
    w, d, _ = rb.object_size(world, obj)
    inner = poly.buffer(-min(w, d) / 2)
    if inner.is_empty:
        return np.empty(0), np.empty(0)
    x0, y0, x1, y1 = inner.bounds
    grid_x, grid_y = np.meshgrid(np.arange(x0, x1 + 1e-9, PLACE_GRID_M), np.arange(y0, y1 + 1e-9, PLACE_GRID_M))
    xs, ys = grid_x.ravel(), grid_y.ravel()
    keep = shapely.intersects_xy(inner, xs, ys)
    if not keep.any():
        c = inner.representative_point()
        return np.array([c.x]), np.array([c.y])
    return xs[keep], ys[keep]


def _place_into(ctx: SkillContext, robot: RobotState, obj: ObjectState, f: Furniture, kind: str,
                place_name: str) -> dict[str, Any]:
    world = ctx.world
    handle = _place_handle(world, obj, f, kind, place_name)
    label = rb.object_label(world, obj)
    if kind == "container":
        c = f.container(place_name)
        spot = polygon_from_rings(c.polygon).centroid
        _face(ctx, robot, (spot.x, spot.y))
        _arm(ctx, robot, "place", handle.z)
        _put(world, robot, obj, Placement(kind="container", room=f.room, furniture=f.id, name=place_name),
             (spot.x, spot.y), c.bottom)
        return {"placed": f"the {label} ({obj.id})", "in": {"furniture": f.id, "container": place_name},
                "at": _xyz(obj), **_state(ctx, robot)}
    free, near = _free_spot(world, robot, obj, f, place_name)
    _face(ctx, robot, near)
    _arm(ctx, robot, "place", handle.z)
    if free is None:
        drop = _floor_point_near(world, robot, obj, near) or (robot.x, robot.y)
        _put(world, robot, obj, Placement(kind="floor", room=robot.room), drop, 0.0)
        raise SkillError(f"no free spot on the {f.semantic_class.replace('_', ' ')}'s {place_name} within reach: "
                         f"the {label} fell to the floor at {rb.point_words(drop)}")
    surface = f.surface(place_name)
    _put(world, robot, obj, Placement(kind="surface", room=f.room, furniture=f.id, name=place_name), free,
         surface.height)
    return {"placed": f"the {label} ({obj.id})", "on": {"furniture": f.id, "surface": place_name},
            "at": _xyz(obj), **_state(ctx, robot)}


def _free_spot(world: World, robot: RobotState, obj: ObjectState, f: Furniture,
               place_name: str) -> tuple[tuple[float, float] | None, tuple[float, float]]:
    """(the free spot on the surface nearest the robot within reach or None when every spot in reach is
    taken, the nearest spot in reach)."""
    xs, ys = _surface_candidates(world, obj, f, place_name)
    dist = np.hypot(xs - robot.x, ys - robot.y)
    in_reach = dist <= rb.reach_radius(robot.body)
    if not in_reach.any():
        in_reach = dist <= dist.min() + 1e-9
    xs, ys, dist = xs[in_reach], ys[in_reach], dist[in_reach]
    order = np.lexsort((ys, xs, np.round(dist, 6)))
    nearest = (float(xs[order[0]]), float(ys[order[0]]))
    r = _footprint_radius(world, obj)
    free = np.ones(len(xs), dtype=bool)
    for other in world.objects.values():
        on_it = other.placement.kind == "surface" and other.placement.furniture == f.id and other.placement.name == place_name
        if on_it and other.id != obj.id:
            gap = (r + _footprint_radius(world, other)) * 0.8
            free &= np.hypot(xs - other.x, ys - other.y) >= gap
    ok = order[free[order]]
    return ((float(xs[ok[0]]), float(ys[ok[0]])) if len(ok) else None), nearest


@skill("robot", units=2)
def pour(ctx: SkillContext, target: str, litres: float = 0.5) -> dict[str, Any]:
    """Water a plant from the watering can the robot holds.

    target: a detection id of the potted plant from the robot's own camera.
    litres: how much to pour (0.1 to 2); the can gives at most what it holds.
    """
    world, robot = ctx.world, _robot(ctx)
    if not 0.1 - 1e-9 <= litres <= 2.0 + 1e-9:
        raise SkillError(f"pour from 0.1 to 2 litres, not {litres:g}")
    can = _held_water(ctx, robot)
    aim = _target(ctx, target, "object", action="pour")
    plant = world.objects[aim.id]
    if "soil_moisture" not in plant.props:
        raise SkillError(f"pour waters potted plants; {aim.name} has no soil")
    rim = max(p[2] for _, p in rb.grasp_points(world, plant))
    spout = Handle(f"the can's handle above the rim of {aim.name}", Point(plant.x, plant.y),
                   rb.pour_hand_height(rim, _grasp_height(world, can)))
    handle = _reach(ctx, robot, Target("object", aim.id, aim.name, aim.room, (spout,)))
    contents = can.props["contents"]
    poured = round(min(litres, float(contents["amount"])), 4)
    _face(ctx, robot, (plant.x, plant.y))
    _arm(ctx, robot, "pour", handle.z, poured / POUR_L_PER_S)
    contents["amount"] = round(float(contents["amount"]) - poured, 4)
    capacity = float(plant.props.get("capacity_l") or 1.0)
    before = float(plant.props["soil_moisture"])
    after = min(before + poured * FIELD_CAPACITY / capacity, FIELD_CAPACITY)
    plant.props["soil_moisture"] = round(after, 4)
    drained = poured - (after - before) * capacity / FIELD_CAPACITY
    return {"poured_l": poured, "plant": aim.name, "soil_moisture": round(after, 3),
            "drained_l": round(max(drained, 0.0), 3), "can_left_l": contents["amount"], **_state(ctx, robot)}


def _held_water(ctx: SkillContext, robot: RobotState) -> ObjectState:
    for oid in dict.fromkeys(robot.holding()):
        obj = ctx.world.objects[oid]
        contents = obj.props.get("contents")
        if isinstance(contents, dict) and contents.get("substance") == "water" and contents.get("unit") == "l":
            if float(contents.get("amount", 0.0)) <= 1e-9:
                raise SkillError(f"the {rb.object_label(ctx.world, obj)} is empty")
            return obj
    held = ", ".join(robot.holding()) or "nothing"
    raise SkillError(f"pour needs a held container of water (a watering can); the robot holds {held}")


@skill("robot", units=2)
def handoff(ctx: SkillContext, target: str, hand: str | None = None) -> dict[str, Any]:
    """Hand what the robot holds to a person within reach.

    target: a detection id of the person from the robot's own camera.
    hand: the hand whose object to give; omit for the first hand holding something.
    """
    world, robot = ctx.world, _robot(ctx)
    obj = _held_object(ctx, robot, hand)
    aim = _target(ctx, target, "person", action="handoff")
    handle = _reach(ctx, robot, aim)
    _face(ctx, robot, _centre(handle))
    _arm(ctx, robot, "handoff", handle.z)
    _give(world, robot, obj, aim.id)
    return {"given": f"the {rb.object_label(world, obj)} ({obj.id})", "to": aim.name,
            "person_holds": list(world.people[aim.id].holding), **_state(ctx, robot)}


def _give(world: World, robot: RobotState, obj: ObjectState, person_id: str) -> None:
    people = next((m for m in world.modules if m.name == "people"), None)
    if people is not None and hasattr(people, "receive"):
        try:
            people.receive(world, person_id, obj.id, giver="robot")
        except ValueError as exc:
            raise SkillError(str(exc)) from None
        rb.release(robot, obj)
        return
    rb.release(robot, obj)
    obj.placement = Placement(kind="held", room=world.people[person_id].room, holder=person_id)
    world.people[person_id].holding.append(obj.id)


# --- acting: doors, parts and buttons ---------------------------------------------------------------


@skill("robot", units=2, name="open")
def open_(ctx: SkillContext, target: str, part: str | None = None) -> dict[str, Any]:
    """Open a door or window within reach, or a part of furniture (a dryer's door, a drawer).

    target: a detection id of the door, window or furniture from the robot's own camera.
    part: which part of the furniture (door, left_door, drawer_front ...); omit when it has one.
    """
    return _swing(ctx, target, part, opening=True)


@skill("robot", units=2, name="close")
def close_(ctx: SkillContext, target: str, part: str | None = None) -> dict[str, Any]:
    """Close a door or window within reach, or a part of furniture.

    target: a detection id of the door, window or furniture from the robot's own camera.
    part: which part of the furniture (door, left_door, drawer_front ...); omit when it has one.
    """
    return _swing(ctx, target, part, opening=False)


def _swing(ctx: SkillContext, target: str, part: str | None, *, opening: bool) -> dict[str, Any]:
    robot = _robot(ctx)
    aim = _target(ctx, target, "opening", "furniture", action="open" if opening else "close")
    if aim.kind == "opening":
        if part is not None:
            raise SkillError(f"{aim.name} has no parts; omit part")
        return _swing_opening(ctx, robot, aim, opening)
    return _swing_part(ctx, robot, aim, part, opening)


def _swing_opening(ctx: SkillContext, robot: RobotState, aim: Target, opening: bool) -> dict[str, Any]:
    world = ctx.world
    o, state = world.home.opening(aim.id), world.openings[aim.id]
    verb = "open" if opening else "close"
    if state.open == opening:
        return {"opening": aim.id, "open": state.open, "changed": False, **_state(ctx, robot)}
    if o.kind == "garage_door":
        raise SkillError(f"{aim.name} is motorised: {verb} it through the hub")
    if not o.openable:
        raise SkillError(f"{aim.name} does not open")
    if state.locked:
        lock = next((d.id for d in world.home.devices if d.type == "lock" and aim.id in (d.mounted_on, *d.monitors)), None)
        how = f" (hub_set_state {lock} lock_state unlocked)" if lock else ""
        raise SkillError(f"{aim.name} is locked: unlock it through the hub first{how}")
    if not opening:
        _check_doorway_clear(world, robot, aim)
    handle = _reach(ctx, robot, aim)
    _face(ctx, robot, _centre(handle))
    _arm(ctx, robot, "open" if opening else "close", handle.z)
    state.open = opening
    return {"opening": aim.id, "open": state.open, "changed": True, **_state(ctx, robot)}


def _check_doorway_clear(world: World, robot: RobotState, aim: Target) -> None:
    doorway = polygon_from_rings(world.home.opening(aim.id).polygon)
    if doorway.distance(Point(robot.x, robot.y)) < robot.body.clearance_width / 2:
        raise SkillError(f"the robot stands in the doorway of {aim.name}: move out of it first")
    for o in rb.people_obstacles(world) + rb.floor_object_obstacles(world):
        if doorway.distance(Point(o.x, o.y)) < o.radius:
            raise SkillError(f"{o.label} is in the doorway of {aim.name}")


def _swing_part(ctx: SkillContext, robot: RobotState, aim: Target, part: str | None, opening: bool) -> dict[str, Any]:
    world = ctx.world
    f = world.home.furniture_item(aim.id)
    names = [p.name for p in f.parts]
    name = f.semantic_class.replace("_", " ")
    if not names:
        raise SkillError(f"the {name} has nothing that opens")
    if part is None and len(names) > 1:
        raise SkillError(f"the {name} has several parts that open; name one: {', '.join(names)}")
    part = part or names[0]
    if part not in names:
        raise SkillError(f"the {name} has no part {part!r}; its parts: {', '.join(names)}")
    p = f.part(part)
    value = p.range[1] if opening else p.range[0]
    if abs(world.parts[(f.id, part)] - value) <= 1e-6:
        return {"furniture": f.id, "part": part, "open": opening, "changed": False, **_state(ctx, robot)}
    target = rb.part_target(aim, part)
    if target is None:
        raise SkillError(f"the {name}'s {part} has no hinge point in the home file, so no hand can work it")
    handle = target.handles[0]
    rb.reach_from(robot.body, (robot.x, robot.y), target)
    _face(ctx, robot, _centre(handle))
    _arm(ctx, robot, "open_part" if opening else "close_part", handle.z)
    world.parts[(f.id, part)] = float(value)
    return {"furniture": f.id, "part": part, "open": opening, "changed": True, **_state(ctx, robot)}


def _built_in_device(ctx: SkillContext, furniture: Target) -> Target:
    """The device built into a piece of furniture (a stove in a range), as a target of its own:
    built-in devices are no solids of their own, so the robot's camera detects the furniture."""
    built_in = [d for d in ctx.world.home.devices if d.mount == "built_in" and d.mounted_on == furniture.id]
    if not built_in:
        raise SkillError(f"{furniture.name} has no built-in appliance with switches; press takes a device "
                         "detection (a light switch, a lamp, a doorbell) or the furniture of a built-in appliance")
    return rb.target_of(ctx.world, "device", built_in[0].id)


def _toggles(entry: Device) -> list[str]:
    """Settable fields a button or switch flips: on/off, or a choice of two."""
    return [n for n, spec in entry.fields.items() if spec.settable and (
        spec.type == "bool" or (spec.type == "enum" and len(spec.values or []) == 2))]


@skill("robot", units=2)
def press(ctx: SkillContext, target: str, button: str | None = None) -> dict[str, Any]:
    """Press a device's button within reach: a light switch toggles its lights, the doorbell rings,
    an appliance's switch flips (a built-in appliance's on the furniture it is built into: the stove's
    knobs on the range).

    target: a detection id of the device (or of the furniture a device is built into) from the robot's own camera.
    button: which of the device's switches (its field name, e.g. burner_1 on a stove); omit when it has one.
    """
    world, robot = ctx.world, _robot(ctx)
    aim = _target(ctx, target, "device", "furniture", action="press")
    if aim.kind == "furniture":
        aim = _built_in_device(ctx, aim)
    entry = devices.home_device(world, aim.id)
    if entry.type == "lock":
        raise SkillError(f"{aim.name} is a motorised lock: lock or unlock it through the hub")
    fields = [] if entry.type in devices.BUTTONS else _toggles(entry)
    if entry.type not in devices.BUTTONS and not fields:
        raise SkillError(f"{aim.name} has no button the robot can press")
    if len(fields) > 1 and button is None:
        raise SkillError(f"{aim.name} has several switches; name one as button: {', '.join(fields)}")
    if button is not None and button not in fields:
        raise SkillError(f"{aim.name} has no switch {button!r}; its switches: {', '.join(fields) or 'none'}")
    handle = _reach(ctx, robot, aim)
    _face(ctx, robot, _centre(handle))
    _arm(ctx, robot, "press", handle.z)
    if not fields:
        devices.press(world, aim.id)
        return {"pressed": aim.name, **_state(ctx, robot)}
    field = button or fields[0]
    spec = entry.fields[field]
    now = world.devices[aim.id].values[field]
    new = (not now) if spec.type == "bool" else next(v for v in spec.values or [] if v != now)
    try:
        readings = devices.set_state(world, aim.id, field, new)
    except devices.DeviceError as exc:
        raise SkillError(str(exc)) from None
    return {"pressed": aim.name, "switch": field, "now": readings.get(field), **_state(ctx, robot)}
