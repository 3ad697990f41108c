"""The robot body: its catalog entry, its front edge and reach radius, its hands, its head
camera, and where it starts in the home.
"""

from __future__ import annotations

import math
from typing import Any

from homeloop.core.catalog import RobotEntry
from homeloop.sim.robot.floor import point_words, room_centre, room_of, room_spot
from homeloop.sim.robot.kinematics import wrap_angle
from homeloop.sim.robot.routes import snap_to_floor
from homeloop.sim.world import RobotState, World

#: Where a hand holds what the body carries, as a share of the body's height above the floor.
CARRY_HEIGHT_SHARE = 0.6

#: Hand names by the number of hands a body has.
HAND_NAMES = {1: ("hand",), 2: ("left", "right")}

#: Height of the head camera of a body whose catalog entry gives none, as a share of its height.
HEAD_CAMERA_SHARE = 0.9


def body_of(world: World, body_id: str) -> RobotEntry:
    """The catalog's robot body ``body_id``; ValueError naming the bodies if unknown."""
    robots = world.catalog.robots
    if body_id not in robots:
        raise ValueError(f"unknown robot body {body_id!r}; bodies: {', '.join(robots)}")
    return robots[body_id]


def front_offset(body: RobotEntry) -> float:
    """Distance from the body's centre to its front edge (m)."""
    return body.base.length / 2


def reach_radius(body: RobotEntry) -> float:
    """How far from its centre a hand reaches horizontally (m)."""
    return front_offset(body) + body.reach.horizontal_reach


def hand_names(body: RobotEntry) -> tuple[str, ...]:
    """The body's hands by name: 'hand', or 'left' and 'right', or numbered."""
    return HAND_NAMES.get(body.hands.count, tuple(f"hand_{i + 1}" for i in range(body.hands.count)))


def carry_point(robot: RobotState, hand: str) -> tuple[float, float, float]:
    """Where an object held in ``hand`` is: just ahead of the front edge, beside the centre line."""
    body = robot.body
    names = hand_names(body)
    side = 0.0 if len(names) == 1 else (0.5 - names.index(hand) / (len(names) - 1)) * body.body.width / 2
    ahead = front_offset(body) + 0.1
    c, s = math.cos(robot.yaw), math.sin(robot.yaw)
    return (robot.x + c * ahead - s * side, robot.y + s * ahead + c * side, body.body.height * CARRY_HEIGHT_SHARE)


def head_view(robot: RobotState) -> dict[str, Any]:
    """The head camera's viewpoint: position, heading (body plus head pan), tilt, optics."""
    cam = robot.body.head_camera
    return {"x": robot.x, "y": robot.y, "z": cam.height or robot.body.body.height * HEAD_CAMERA_SHARE,
            "yaw": wrap_angle(robot.yaw + robot.head_yaw), "pitch": robot.head_pitch, "hfov_deg": cam.hfov_deg,
            "resolution": list(cam.resolution)}


def place_robot(world: World, body_id: str, room_id: str | None = None,
                point: tuple[float, float] | None = None) -> RobotState:
    """Stand the body ``body_id`` at ``point`` or at a free spot of ``room_id`` (default: the room
    the entrance door opens into), facing into the room, hands empty; sets ``world.robot``."""
    from homeloop.core.navigation import entrance_room

    body = body_of(world, body_id)
    home = world.home
    if point is None:
        room_id = room_id or entrance_room(home) or home.rooms[0].id
        x, y = room_spot(world, room_id, body.clearance_width)
    else:
        x, y = snap_to_floor(world, point, body.clearance_width, what=f"the robot's start {point_words(point)}")
        room_id = room_of(home, x, y) or room_id
    if room_id is None:
        raise ValueError(f"the point {point_words((x, y))} lies in no room of home {home.home_id}")
    cx, cy = room_centre(home, room_id)
    yaw = math.atan2(cy - y, cx - x) if math.hypot(cx - x, cy - y) > 0.05 else 0.0
    world.robot = RobotState(body=body, room=room_id, x=x, y=y, yaw=yaw, held={h: None for h in hand_names(body)})
    return world.robot
