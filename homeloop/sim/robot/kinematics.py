"""How the kinematic body moves: its speeds, and the phases (turn on the spot, drive straight,
stand to open a door) that take it along a route, each with its duration.

Durations follow the catalog: driving at the body's ``motion.max_speed`` capped
at :data:`INDOOR_MAX_SPEED`, turning on the spot at ``motion.max_turn_rate`` (or
:data:`DEFAULT_TURN_RATE`), and :data:`DOOR_OPEN_S` in front of a closed door.
:mod:`homeloop.sim.dynamics.robot_motion` plays the phases out step by step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from homeloop.core.catalog import RobotEntry
from homeloop.sim.robot.routes import Route
from homeloop.sim.world import RobotState, World

#: Highest driving speed indoors (m/s). Vendor top speeds are open-floor figures (2.0 m/s for
#: the G1, 1.6 m/s for Spot); among furniture and people a body drives at most at a walking
#: pace, as indoor service robots are commonly limited to about 1 m/s.
INDOOR_MAX_SPEED = 1.0

#: Turn rate on the spot (rad/s) of a body whose catalog entry publishes none (about 57°/s).
DEFAULT_TURN_RATE = 1.0

#: Seconds a body needs to open a closed, unlocked door on its way: reach the handle, unlatch,
#: swing the leaf clear and take the hand back (estimated from teleoperated door opening).
DOOR_OPEN_S = 6.0


def drive_speed(body: RobotEntry) -> float:
    """Driving speed indoors (m/s): the catalog's top speed, capped at :data:`INDOOR_MAX_SPEED`."""
    return min(body.motion.max_speed, INDOOR_MAX_SPEED)


def turn_rate(body: RobotEntry) -> float:
    """Turn rate on the spot (rad/s): the catalog's, else :data:`DEFAULT_TURN_RATE`."""
    return body.motion.max_turn_rate or DEFAULT_TURN_RATE


def wrap_angle(a: float) -> float:
    """An angle in (-pi, pi]."""
    w = math.remainder(a, 2 * math.pi)
    return math.pi if w <= -math.pi else w


def heading_to(robot: RobotState, xy: tuple[float, float]) -> float:
    """The heading from the robot to ``xy``; its own heading when it stands there."""
    if math.hypot(xy[0] - robot.x, xy[1] - robot.y) < 1e-6:
        return robot.yaw
    return math.atan2(xy[1] - robot.y, xy[0] - robot.x)


@dataclass
class Phase:
    """One piece of a motion: turn on the spot, drive straight, or open a door (stand still)."""

    kind: str  # "turn" | "drive" | "door"
    seconds: float
    x0: float
    y0: float
    yaw0: float
    x1: float
    y1: float
    yaw1: float
    door: str | None = None
    backward: bool = False

    @property
    def length(self) -> float:
        return math.hypot(self.x1 - self.x0, self.y1 - self.y0)


def turn_phase(body: RobotEntry, x: float, y: float, yaw0: float, yaw1: float) -> Phase | None:
    """Turning on the spot at (x, y) from ``yaw0`` to ``yaw1`` the short way; None if it faces there."""
    delta = wrap_angle(yaw1 - yaw0)
    if abs(delta) < 1e-6:
        return None
    return Phase("turn", abs(delta) / turn_rate(body), x, y, yaw0, x, y, yaw0 + delta)


def drive_phase(body: RobotEntry, a: tuple[float, float], b: tuple[float, float], yaw: float,
                backward: bool = False) -> Phase:
    """Driving straight from ``a`` to ``b`` facing ``yaw`` (reversing when ``backward``)."""
    return Phase("drive", math.dist(a, b) / drive_speed(body), a[0], a[1], yaw, b[0], b[1], yaw, backward=backward)


def path_phases(world: World, body: RobotEntry, yaw: float, route: Route,
                final_yaw: float | None = None) -> list[Phase]:
    """Turn, drive and door phases that take the body along ``route`` from heading ``yaw``.

    Each door on the route has a door phase in front of it: :data:`DOOR_OPEN_S` for a door closed
    now, none for an open one (unless it is closed by the time the body gets there); the body turns
    on the spot at each corner, and to ``final_yaw`` at the end.
    """
    marks = [(at, d) for at, d in zip(route.door_at, route.doors)]
    phases: list[Phase] = []
    s = 0.0
    for a, b in zip(route.points, route.points[1:]):
        heading = math.atan2(b[1] - a[1], b[0] - a[0])
        if (t := turn_phase(body, a[0], a[1], yaw, heading)) is not None:
            phases.append(t)
        yaw = heading
        seg = math.dist(a, b)
        here = a
        while marks and marks[0][0] <= s + seg + 1e-9:
            at, door = marks.pop(0)
            f = min(max((at - s) / seg, 0.0), 1.0) if seg > 0 else 0.0
            stop = (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f)
            if math.dist(here, stop) > 1e-9:
                phases.append(drive_phase(body, here, stop, yaw))
            seconds = 0.0 if world.openings[door].open else DOOR_OPEN_S
            phases.append(Phase("door", seconds, *stop, yaw, *stop, yaw, door=door))
            here = stop
        if math.dist(here, b) > 1e-9:
            phases.append(drive_phase(body, here, b, yaw))
        s += seg
    end = route.points[-1]
    if final_yaw is not None and (t := turn_phase(body, end[0], end[1], yaw, final_yaw)) is not None:
        phases.append(t)
    return phases
