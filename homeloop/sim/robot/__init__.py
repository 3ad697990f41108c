"""The robot body in the simulated home: where it stands, how it drives, what it reaches (docs/skills.md).

The body is kinematic. Its centre moves over the *free floor* of
:mod:`homeloop.core.navigation` for its clearance width, so a route keeps the
whole body clear of walls, fixtures and furniture. One module per concern:

- :mod:`~homeloop.sim.robot.body`: the catalog's body, its reach radius, hands and head camera, and
  where it starts;
- :mod:`~homeloop.sim.robot.floor`: the room of a point and where a body stands in a room;
- :mod:`~homeloop.sim.robot.obstacles`: people, floor objects and doors in a body's way;
- :mod:`~homeloop.sim.robot.navmesh` and :mod:`~homeloop.sim.robot.routes`: near-shortest routes
  over the free floor and the doors they pass;
- :mod:`~homeloop.sim.robot.kinematics`: speeds and the timed phases (turn, drive, open a door)
  along a route, which :mod:`homeloop.sim.dynamics.robot_motion` plays out;
- :mod:`~homeloop.sim.robot.reach` and :mod:`~homeloop.sim.robot.targets`: what a hand reaches
  and where the body stands to reach it;
- :mod:`~homeloop.sim.robot.objects` and :mod:`~homeloop.sim.robot.hands`: objects as the body
  handles them, and what it carries.

The names below are the body's rules as the robot's skills, the motion module
and the agents use them; each is defined in one of those modules.
"""

from __future__ import annotations

from homeloop.sim.robot.body import (
    body_of,
    carry_point,
    front_offset,
    hand_names,
    head_view,
    place_robot,
    reach_radius,
)
from homeloop.sim.robot.floor import SNAP_DISTANCE, NoPath, point_words, room_name, room_of, room_spot
from homeloop.sim.robot.hands import carried_mass, hands_for, held_point, hold, move_held, release
from homeloop.sim.robot.kinematics import (
    DEFAULT_TURN_RATE,
    DOOR_OPEN_S,
    INDOOR_MAX_SPEED,
    Phase,
    drive_phase,
    drive_speed,
    heading_to,
    path_phases,
    turn_phase,
    turn_rate,
    wrap_angle,
)
from homeloop.sim.robot.navmesh import NavMesh, navmesh
from homeloop.sim.robot.objects import grasp_points, object_label, object_mass, object_size, object_yaw
from homeloop.sim.robot.obstacles import (
    Obstacle,
    closed_off,
    door_words,
    floor_object_obstacles,
    obstacles,
    people_obstacles,
    why_closed,
)
from homeloop.sim.robot.reach import Handle, ReachError, Target, approach_spot, height_problem, reach_from, stand_spot
from homeloop.sim.robot.routes import Route, clear_room_spot, drive_way, plan_path, snap_to_floor, straight_run
from homeloop.sim.robot.targets import (
    POUR_CLEARANCE,
    container_height,
    opening_target,
    part_target,
    pour_hand_height,
    pour_hand_heights,
    target_of,
)

__all__ = [
    "DEFAULT_TURN_RATE", "DOOR_OPEN_S", "INDOOR_MAX_SPEED", "POUR_CLEARANCE", "SNAP_DISTANCE", "Handle", "NavMesh",
    "NoPath", "Obstacle", "Phase", "ReachError", "Route", "Target", "approach_spot", "body_of", "carried_mass",
    "carry_point", "clear_room_spot", "closed_off", "container_height", "door_words", "drive_phase", "drive_speed",
    "drive_way", "floor_object_obstacles", "front_offset", "grasp_points", "hand_names", "hands_for", "head_view",
    "heading_to",
    "height_problem", "held_point", "hold", "move_held", "navmesh", "object_label", "object_mass", "object_size",
    "object_yaw", "obstacles", "opening_target", "part_target", "path_phases", "people_obstacles", "place_robot", "plan_path",
    "point_words", "pour_hand_height", "pour_hand_heights", "reach_from", "reach_radius", "release", "room_name",
    "room_of", "room_spot", "snap_to_floor", "stand_spot", "straight_run", "target_of", "turn_phase", "turn_rate",
    "why_closed", "wrap_angle",
]
