"""The robot body in the simulated home: where it stands, how it drives, what it reaches (docs/skills.md).

The body is kinematic. Its centre moves over the *free floor* of
:mod:`homeloop.navigation` for its clearance width (rooms and passable
openings, minus walls, fixtures and furniture, eroded by half the width), so a
path keeps the whole body clear of walls, fixtures and furniture.

Paths (:func:`plan_path`) are near-shortest paths over a navigation mesh: the
free floor is cut into triangles (a constrained Delaunay triangulation), A*
(networkx) finds the corridor of triangles from start to goal, and the funnel
algorithm pulls the path taut inside that corridor, so it bends only at
corners of the free floor; a second corridor avoiding the first is tried too
and the shorter path kept (:data:`ALTERNATIVE_PENALTY`). A mesh is built once per home, body width and set
of closed-off doorways and kept in a small cache; a query then costs a few
milliseconds. Doors on the way:

- a closed, unlocked door is opened on the way: the body stops in front of
  it for :data:`DOOR_OPEN_S` and the door is open from then on;
- a locked door, a closed motorised garage door, or (for callers that cannot
  open doors) any closed door is cut out of the free floor; a goal behind it
  is unreachable and the error names the door;
- people and objects on the floor are discs (:class:`Obstacle`); a path
  planned around them avoids them, and a body meeting one on its way plans
  again (:mod:`homeloop.sim.dynamics.robot_motion`).

Durations follow the catalog: driving at the body's ``motion.max_speed``
capped at :data:`INDOOR_MAX_SPEED`, turning on the spot at
``motion.max_turn_rate`` (or :data:`DEFAULT_TURN_RATE`).

Reaching (:func:`reach_from`, :func:`stand_spot`): a hand reaches a point
when the point lies within ``reach.horizontal_reach`` of the body's front
edge (half the base length ahead of its centre) and its height lies between
``reach.min_grasp_height`` and ``reach.max_grasp_height`` (the catalog's
highest grasp is with the torso raised, for bodies with a torso lift). The
body stands in the room of what it reaches, so it never reaches through a
wall. A body carries at most ``payload.kg`` in its hands, one object a hand.

The people module walks residents, couriers and intruders along
:func:`plan_path` too, with their shoulder width as the body width.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import networkx as nx
import numpy as np
import shapely
import shapely.ops
from shapely import LineString, Point
from shapely.geometry.base import BaseGeometry

from homeloop.catalog import RobotEntry
from homeloop.home import Furniture, Home, HomeObject, polygon_from_rings
from homeloop.navigation import APPROACH_MARGIN, PASSABLE_KINDS, SNAP_TOLERANCE, free_floor_of
from homeloop.sim.dynamics.people import PERSON_REACH_M
from homeloop.sim.skills import SkillError
from homeloop.sim.world import ObjectState, Placement, RobotState, World

#: Highest driving speed indoors (m/s). Vendor top speeds are open-floor figures (2.0 m/s for
#: the G1, 1.6 m/s for Spot); among furniture and people a body drives at most at a walking
#: pace, as indoor service robots are commonly limited to about 1 m/s.
INDOOR_MAX_SPEED = 1.0

#: Turn rate on the spot (rad/s) of a body whose catalog entry publishes none (about 57°/s).
DEFAULT_TURN_RATE = 1.0

#: Seconds a body needs to open a closed, unlocked door on its way: reach the handle, unlatch,
#: swing the leaf clear and take the hand back (estimated from teleoperated door opening).
DOOR_OPEN_S = 6.0

#: Height of a door handle above the floor (m); lever handles sit at 0.85–1.1 m.
DOOR_HANDLE_HEIGHT = 1.0

#: How far a start or goal may lie off the free floor and still be moved onto it (m): a person
#: getting up from a sofa or a body standing against an obstacle steps out this far at most.
SNAP_DISTANCE = 0.75

#: Kept between a standing spot and the edge of where the body could reach or stand (m), so a
#: spot computed on an edge is still inside after rounding.
REACH_MARGIN = 0.03

#: Extra clearance (m) kept from people and objects on the floor when planning around them.
OBSTACLE_MARGIN = 0.05

#: Where a hand holds what the body carries, as a share of the body's height above the floor.
CARRY_HEIGHT_SHARE = 0.6

#: Height of a person's hand taking something from the robot, by posture (m).
HAND_HEIGHT_BY_POSTURE = {"standing": 1.0, "sitting": 0.7, "lying": 0.3}

#: Mass of a litre of what a container holds (kg/l), for the weight of a can as it empties.
DENSITY_KG_PER_L = {"water": 1.0, "oil": 0.92}

#: Hand names by the number of hands a body has.
HAND_NAMES = {1: ("hand",), 2: ("left", "right")}

#: A* over triangle centroids can pick a corridor a few per cent longer than the best one (up to
#: 11 % in the house). So a second corridor is searched with the first one's crossings this many
#: times as costly, both are pulled taut, and the shorter is kept: over 100 random pairs of points
#: in the house the paths then came within 2.1 % of the exact shortest (0.02 % on average;
#: ``benchmarks/sim_robot.py --exact 100`` compares with a visibility graph of every corner).
ALTERNATIVE_PENALTY = 2.0

_MESH_CACHE_SIZE = 32


class NoPath(SkillError):
    """No way over the free floor; the message names why (a locked door, a person in the way)."""


class ReachError(SkillError):
    """The body cannot reach, hold or carry something; the message names the numbers."""


# --- the body -------------------------------------------------------------------------------------


def body_of(world: World, body_id: str) -> RobotEntry:
    """The catalog's robot body ``body_id``; ValueError naming the bodies if unknown."""
    robots = world.catalog.robots
    if body_id not in robots:
        raise ValueError(f"unknown robot body {body_id!r}; bodies: {', '.join(robots)}")
    return robots[body_id]


def drive_speed(body: RobotEntry) -> float:
    """Driving speed indoors (m/s): the catalog's top speed, capped at :data:`INDOOR_MAX_SPEED`."""
    return min(body.motion.max_speed, INDOOR_MAX_SPEED)


def turn_rate(body: RobotEntry) -> float:
    """Turn rate on the spot (rad/s): the catalog's, else :data:`DEFAULT_TURN_RATE`."""
    return body.motion.max_turn_rate or DEFAULT_TURN_RATE


def front_offset(body: RobotEntry) -> float:
    """Distance from the body's centre to its front edge (m)."""
    return body.base.length / 2


def reach_radius(body: RobotEntry) -> float:
    """How far from its centre a hand reaches horizontally (m)."""
    return front_offset(body) + body.reach.horizontal_reach


def hand_names(body: RobotEntry) -> tuple[str, ...]:
    return HAND_NAMES.get(body.hands.count, tuple(f"hand_{i + 1}" for i in range(body.hands.count)))


def carry_point(robot: RobotState, hand: str) -> tuple[float, float, float]:
    """Where an object held in ``hand`` is: just ahead of the front edge, beside the centre line."""
    body = robot.body
    names = hand_names(body)
    side = 0.0 if len(names) == 1 else (0.5 - names.index(hand) / (len(names) - 1)) * body.body.width / 2
    ahead = front_offset(body) + 0.1
    c, s = math.cos(robot.yaw), math.sin(robot.yaw)
    return (robot.x + c * ahead - s * side, robot.y + s * ahead + c * side, body.body.height * CARRY_HEIGHT_SHARE)


#: Height of the head camera of a body whose catalog entry gives none, as a share of its height.
HEAD_CAMERA_SHARE = 0.9


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
    from homeloop.navigation import entrance_room

    body = body_of(world, body_id)
    home = world.home
    if point is None:
        room_id = room_id or entrance_room(home) or home.rooms[0].id
        x, y = room_spot(world, room_id, body.clearance_width)
    else:
        x, y = snap_to_floor(world, point, body.clearance_width, what=f"the robot's start {_xy(point)}")
        room_id = room_of(home, x, y) or room_id
    if room_id is None:
        raise ValueError(f"the point {_xy((x, y))} lies in no room of home {home.home_id}")
    cx, cy = _room_centre(home, room_id)
    yaw = math.atan2(cy - y, cx - x) if math.hypot(cx - x, cy - y) > 0.05 else 0.0
    world.robot = RobotState(body=body, room=room_id, x=x, y=y, yaw=yaw, held={h: None for h in hand_names(body)})
    return world.robot


# --- rooms and spots -------------------------------------------------------------------------------


def room_of(home: Home, x: float, y: float) -> str | None:
    """The room holding the point; a point in a doorway belongs to the nearest room."""
    rid = home.room_at(x, y)
    if rid is not None:
        return rid
    p = Point(x, y)
    near = [(poly.distance(p), r) for r, poly in home.room_polygons().items()]
    d, rid = min(near) if near else (math.inf, None)
    return rid if d <= 0.5 else None


def _room_centre(home: Home, room_id: str) -> tuple[float, float]:
    poly = home.room_polygon(room_id)
    c = poly.centroid if poly.covers(poly.centroid) else poly.point_on_surface()
    return float(c.x), float(c.y)


def room_spot(world: World, room_id: str, width: float, near: tuple[float, float] | None = None) -> tuple[float, float]:
    """Where a body of ``width`` stands in a room: the point of the room's largest piece of free
    floor (reachable from ``near``, if given) nearest the room's centre."""
    home = world.home
    if room_id not in {r.id for r in home.rooms}:
        raise NoPath(f"no room {room_id!r} in this home; rooms: {', '.join(r.id for r in home.rooms)}")
    floor = free_floor_of(home, width)
    piece: BaseGeometry = floor.geometry
    if near is not None:
        idx = floor.component_of(near, tolerance=SNAP_DISTANCE)
        piece = floor.parts[idx] if idx is not None else shapely.Polygon()
    parts = [g for g in shapely.get_parts(piece.intersection(home.room_polygon(room_id))) if g.area > 1e-4]
    if not parts:
        whence = " reachable from where the robot stands" if near is not None else ""
        raise NoPath(f"{room_name(home, room_id)} has no free floor{whence} for a body {width:.2f} m wide")
    largest = max(parts, key=lambda g: (round(g.area, 6), g.centroid.x, g.centroid.y))
    spot = shapely.ops.nearest_points(largest, Point(_room_centre(home, room_id)))[0]
    return float(spot.x), float(spot.y)


def room_name(home: Home, room_id: str | None) -> str:
    if room_id is None:
        return "outside the rooms"
    room = next((r for r in home.rooms if r.id == room_id), None)
    return f"the {room.name} ({room_id})" if room is not None else repr(room_id)


def _xy(p: Sequence[float]) -> str:
    return f"({p[0]:.2f}, {p[1]:.2f})"


# --- obstacles and doors ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Obstacle:
    """A disc on the floor a body must keep clear of: a person, an object lying on the floor."""

    x: float
    y: float
    radius: float
    label: str


def people_obstacles(world: World, exclude: Iterable[str] = ()) -> list[Obstacle]:
    """People at home as discs of their shoulder width."""
    skip = set(exclude)
    out = []
    for p in world.people.values():
        if p.room is None or p.id in skip:
            continue
        entry = world.catalog.people.get(p.catalog_id)
        width = entry.shoulder_width if entry is not None else 0.45
        out.append(Obstacle(p.x, p.y, width / 2, f"{p.name} ({p.id})"))
    return out


def floor_object_obstacles(world: World, exclude: Iterable[str] = ()) -> list[Obstacle]:
    """Objects lying on the floor as discs around their footprint."""
    skip = set(exclude)
    out = []
    for o in world.objects.values():
        if o.placement.kind != "floor" or o.id in skip:
            continue
        w, d = _object_size(world, o)[:2]
        out.append(Obstacle(o.x, o.y, math.hypot(w, d) / 2, f"the {_object_label(world, o)} ({o.id})"))
    return out


def obstacles(world: World, exclude: Iterable[str] = ()) -> list[Obstacle]:
    """Everything a robot plans around: people and objects on the floor (but those in ``exclude``)."""
    skip = list(exclude)
    return people_obstacles(world, skip) + floor_object_obstacles(world, skip)


def door_words(world: World, opening_id: str) -> str:
    """'the entrance door o7 (corridor – porch)': an opening as messages name it."""
    o = world.home.opening(opening_id)
    rooms = " – ".join(room_name(world.home, r).split(" (")[0].removeprefix("the ") for r in o.connects)
    return f"the {o.kind.replace('_', ' ')} {o.id} ({rooms})"


def closed_off(world: World, *, through_closed_doors: bool = True) -> frozenset[str]:
    """Passable openings a body cannot pass now: locked doors, closed garage doors, and every
    closed door for a body that does not open doors."""
    out = set()
    for o in world.home.openings:
        if o.kind not in PASSABLE_KINDS:
            continue
        state = world.openings.get(o.id)
        if state is None or state.open:
            continue
        if state.locked or o.kind == "garage_door" or not o.openable or not through_closed_doors:
            out.add(o.id)
    return frozenset(out)


def _why_closed(world: World, opening_id: str) -> str:
    state = world.openings[opening_id]
    if state.locked:
        return "which is locked"
    if world.home.opening(opening_id).kind == "garage_door":
        return "which is closed (a motorised door, opened through the hub)"
    return "which is closed"


# --- the navigation mesh ----------------------------------------------------------------------------


def _cross(a: Sequence[float], b: Sequence[float], c: Sequence[float]) -> float:
    """Twice the signed area of a, b, c: positive when c lies left of the ray a→b."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


class NavMesh:
    """A free-floor geometry cut into triangles joined across their shared edges."""

    def __init__(self, floor: BaseGeometry) -> None:
        self.floor = floor
        shapely.prepare(floor)
        parts = shapely.get_parts(shapely.constrained_delaunay_triangles(floor)) if not floor.is_empty else []
        tris = [t for t in parts if t.area > 1e-12]
        self.triangles = np.asarray(tris, dtype=object)
        self.coords = np.array([np.asarray(t.exterior.coords)[:3] for t in tris]).reshape(-1, 3, 2)
        self.centroids = self.coords.mean(axis=1)
        self._centres = [tuple(c) for c in self.centroids.tolist()]  # plain floats: A* reads them a lot
        self.tree = shapely.STRtree(self.triangles)
        self.graph = self._join()
        self.component = np.zeros(len(tris), dtype=int)
        for c, nodes in enumerate(sorted(nx.connected_components(self.graph), key=min)):
            self.component[list(nodes)] = c

    def _join(self) -> nx.Graph:
        graph = nx.Graph()
        graph.add_nodes_from(range(len(self.coords)))
        first: dict[tuple, int] = {}
        cent = self.centroids
        for i, tri in enumerate(self.coords.tolist()):
            for a, b in ((0, 1), (1, 2), (2, 0)):
                p, q = tuple(tri[a]), tuple(tri[b])
                key = (p, q) if p < q else (q, p)
                j = first.setdefault(key, i)
                if j != i:
                    w = float(math.hypot(*(cent[i] - cent[j])))
                    graph.add_edge(j, i, weight=w, portal=key)
        return graph

    def locate(self, xy: tuple[float, float], snap: float) -> tuple[int, tuple[float, float], float] | None:
        """(triangle, the point moved onto the mesh, how far it moved), or None beyond ``snap``."""
        p = Point(xy)
        hits = self.tree.query(p, predicate="intersects")
        if len(hits):
            return int(min(hits)), (float(xy[0]), float(xy[1])), 0.0
        idx, dist = self.tree.query_nearest(p, max_distance=snap, return_distance=True, all_matches=True)
        if not len(idx):
            return None
        i = int(idx[np.lexsort((idx, dist))[0]])
        q = shapely.ops.nearest_points(self.triangles[i], p)[0]
        return i, (float(q.x), float(q.y)), float(dist.min())

    def corridor(self, a: int, b: int, avoid: list[int] | None = None) -> list[int] | None:
        """Triangles from ``a`` to ``b`` (A* over centroid distances), or None if not joined.
        ``avoid``: a corridor whose crossings cost :data:`ALTERNATIVE_PENALTY` times as much."""
        if self.component[a] != self.component[b]:
            return None
        cent = self._centres

        def h(u: int, v: int) -> float:
            return math.dist(cent[u], cent[v])

        if not avoid:
            return nx.astar_path(self.graph, a, b, heuristic=h, weight="weight")
        used = set(zip(avoid, avoid[1:])) | set(zip(avoid[1:], avoid))

        def weight(u: int, v: int, d: dict) -> float:
            return d["weight"] * ALTERNATIVE_PENALTY if (u, v) in used else d["weight"]

        return nx.astar_path(self.graph, a, b, heuristic=h, weight=weight)

    def _portals(self, corridor: list[int], start: tuple, goal: tuple) -> list[tuple[tuple, tuple]]:
        """(left, right) edge ends crossed going along the corridor, start and goal as end portals."""
        portals = [(start, start)]
        for i, j in zip(corridor, corridor[1:]):
            p, q = self.graph.edges[i, j]["portal"]
            apex = next(v for v in map(tuple, self.coords[i].tolist()) if v != p and v != q)
            portals.append((q, p) if _cross(apex, p, q) > 0 else (p, q))
        portals.append((goal, goal))
        return portals

    def funnel(self, corridor: list[int], start: tuple, goal: tuple) -> list[tuple[float, float]]:
        """The taut path through the corridor (the simple stupid funnel algorithm)."""
        portals = self._portals(corridor, start, goal)
        points = [start]
        apex = left = right = start
        apex_i = left_i = right_i = 0
        i = 1
        while i < len(portals):
            pl, pr = portals[i]
            if _cross(apex, right, pr) >= 0:
                if apex == right or _cross(apex, left, pr) < 0:
                    right, right_i = pr, i
                else:
                    points.append(left)
                    apex, apex_i = left, left_i
                    left = right = apex
                    left_i = right_i = apex_i
                    i = apex_i + 1
                    continue
            if _cross(apex, left, pl) <= 0:
                if apex == left or _cross(apex, right, pl) > 0:
                    left, left_i = pl, i
                else:
                    points.append(right)
                    apex, apex_i = right, right_i
                    left = right = apex
                    left_i = right_i = apex_i
                    i = apex_i + 1
                    continue
            i += 1
        if points[-1] != goal:
            points.append(goal)
        return points


_meshes: OrderedDict[tuple, tuple[Home, NavMesh]] = OrderedDict()


def navmesh(home: Home, width: float, closed: frozenset[str] = frozenset(),
            avoid: Sequence[Obstacle] = ()) -> NavMesh:
    """The mesh of the free floor for a body of ``width``, with the ``closed`` doorways cut out and
    discs around ``avoid`` removed (cached)."""
    radius = width / 2
    discs = tuple(sorted((round(o.x, 2), round(o.y, 2), round(o.radius + radius + OBSTACLE_MARGIN, 2))
                         for o in avoid))
    key = (id(home), round(width, 4), closed, discs)
    hit = _meshes.get(key)
    if hit is not None and hit[0] is home:
        _meshes.move_to_end(key)
        return hit[1]
    floor = free_floor_of(home, width).geometry
    cuts = [polygon_from_rings(home.opening(o).polygon).buffer(radius + 0.01) for o in sorted(closed)]
    cuts += [Point(x, y).buffer(r, quad_segs=4) for x, y, r in discs]
    if cuts:
        floor = floor.difference(shapely.union_all(cuts))
    mesh = NavMesh(floor)
    _meshes[key] = (home, mesh)
    while len(_meshes) > _MESH_CACHE_SIZE:
        _meshes.popitem(last=False)
    return mesh


# --- paths ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Path:
    """A way over the free floor: its corner points, length, and the doors it passes.

    ``door_at[i]`` is the distance along the path (m) at which the body stands in front of
    ``doors[i]`` (half its width plus :data:`~homeloop.navigation.APPROACH_MARGIN` from the face).
    """

    points: tuple[tuple[float, float], ...]
    length: float
    doors: tuple[str, ...] = ()
    door_at: tuple[float, ...] = ()

    @property
    def start(self) -> tuple[float, float]:
        return self.points[0]

    @property
    def goal(self) -> tuple[float, float]:
        return self.points[-1]

    def line(self) -> LineString:
        pts = self.points if len(self.points) > 1 else self.points * 2
        return LineString(pts)

    def __iter__(self):
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)


def plan_path(world: World, start_xy: tuple[float, float], goal_xy: tuple[float, float], width: float, *,
              through_closed_doors: bool = True, avoid: Sequence[Obstacle] = ()) -> Path:
    """The near-shortest way for a body of ``width`` from ``start_xy`` to ``goal_xy``.

    Closed doors are passed (and listed in ``Path.doors``) unless ``through_closed_doors`` is
    False; locked doors and closed garage doors never are. ``avoid``: discs to keep clear of.
    A start or goal up to :data:`SNAP_DISTANCE` off the free floor is moved onto it (the path
    starts at the given start all the same). :class:`NoPath` names why there is no way.
    """
    closed = closed_off(world, through_closed_doors=through_closed_doors)
    found = _search(navmesh(world.home, width, closed), start_xy, goal_xy) if avoid else "apart"
    if isinstance(found, str) or _comes_near(found, avoid, width):
        found = _search(navmesh(world.home, width, closed, avoid), start_xy, goal_xy)
    if isinstance(found, str):
        raise NoPath(_no_path_reason(world, start_xy, goal_xy, width, closed, avoid, found))
    points = found
    if math.dist(points[0], start_xy) > 1e-9:
        points = [(float(start_xy[0]), float(start_xy[1])), *points]
    return _make_path(world, points, width)


def drive_way(world: World, robot: RobotState, goal_xy: tuple[float, float], exclude: Iterable[str] = ()) -> Path:
    """The way ``robot`` drives to ``goal_xy``: :func:`plan_path` for its clearance width, round
    people and floor objects but those in ``exclude`` (what it drives up to)."""
    return plan_path(world, (robot.x, robot.y), goal_xy, robot.body.clearance_width,
                     avoid=obstacles(world, exclude))


def _search(mesh: NavMesh, start_xy, goal_xy) -> list[tuple[float, float]] | str:
    """The funnelled path, or a word for what failed: 'start', 'goal' or 'apart'."""
    a = mesh.locate(start_xy, SNAP_DISTANCE)
    if a is None:
        return "start"
    b = mesh.locate(goal_xy, SNAP_DISTANCE)
    if b is None:
        return "goal"
    corridor = mesh.corridor(a[0], b[0])
    if corridor is None:
        return "apart"
    points = mesh.funnel(corridor, a[1], b[1])
    if len(corridor) > 2 and _length(points) > math.dist(a[1], b[1]) + 1e-9:  # a straight path is the shortest
        other = mesh.funnel(mesh.corridor(a[0], b[0], avoid=corridor), a[1], b[1])
        if _length(other) < _length(points) - 1e-9:
            points = other
    out = [points[0]]
    for p in points[1:]:
        if math.dist(p, out[-1]) > 1e-9:
            out.append(p)
    return out


def _comes_near(points: list[tuple[float, float]], avoid: Sequence[Obstacle], width: float) -> bool:
    """Whether a path passes closer to an obstacle than planning around it keeps (a path that does
    not is the shortest around them too, and needs no mesh of its own)."""
    line = LineString(points if len(points) > 1 else points * 2)
    return any(line.distance(Point(o.x, o.y)) < o.radius + width / 2 + OBSTACLE_MARGIN for o in avoid)


def _length(points: Sequence[tuple[float, float]]) -> float:
    return sum(math.dist(p, q) for p, q in zip(points, points[1:]))


def _make_path(world: World, points: list[tuple[float, float]], width: float) -> Path:
    line = LineString(points if len(points) > 1 else points * 2)
    passed = []
    for o in world.home.openings:
        if o.kind not in PASSABLE_KINDS:
            continue
        poly = polygon_from_rings(o.polygon)
        if not line.intersects(poly):
            continue
        entry = line.intersection(poly.buffer(width / 2 + APPROACH_MARGIN))
        at = min((line.project(Point(c)) for g in shapely.get_parts(entry) for c in g.coords), default=0.0)
        passed.append((at, o.id))
    passed.sort()
    return Path(tuple((float(x), float(y)) for x, y in points), float(line.length),
                tuple(d for _, d in passed), tuple(float(a) for a, _ in passed))


def _no_path_reason(world: World, start, goal, width, closed, avoid, failed: str) -> str:
    home = world.home
    where = {"start": start, "goal": goal}
    if failed in where:
        p = where[failed]
        floor = free_floor_of(home, width).geometry
        d = floor.distance(Point(p)) if not floor.is_empty else math.inf
        if d <= SNAP_DISTANCE:
            person = _blocking(avoid, p, width)
            return f"the {failed} {_xy(p)} is taken: {person}" if person else f"no free floor at the {failed} {_xy(p)}"
        return (f"the {failed} {_xy(p)} in {room_name(home, room_of(home, *p))} is {d:.2f} m from the free floor "
                f"for a body {width:.2f} m wide")
    trip = f"from {room_name(home, room_of(home, *start))} to {room_name(home, room_of(home, *goal))}"
    through_doors = _search(navmesh(home, width, frozenset(), avoid), start, goal) if closed else "apart"
    if not isinstance(through_doors, str):
        way = _make_path(world, through_doors, width)
        doors = [d for d in way.doors if d in closed] or sorted(closed)
        return f"no way {trip}: it passes " + "; ".join(f"{door_words(world, d)}, {_why_closed(world, d)}"
                                                      for d in doors)
    around = _search(navmesh(home, width, closed), start, goal) if avoid else "apart"
    if not isinstance(around, str):
        line = LineString(around if len(around) > 1 else around * 2)
        near = [o.label for o in avoid if line.distance(Point(o.x, o.y)) < o.radius + width / 2 + OBSTACLE_MARGIN]
        return f"no way {trip} for a body {width:.2f} m wide: blocked by " + ", ".join(near or [o.label for o in avoid])
    return f"no way over the free floor {trip} for a body {width:.2f} m wide"


def _blocking(avoid: Sequence[Obstacle], p, width: float) -> str:
    near = [o.label for o in avoid if math.dist((o.x, o.y), p) < o.radius + width / 2 + OBSTACLE_MARGIN]
    return ", ".join(near)


def snap_to_floor(world: World, xy: tuple[float, float], width: float, *, what: str = "the point") -> tuple[float, float]:
    """``xy`` moved onto the free floor (at most :data:`SNAP_DISTANCE`), or :class:`NoPath`."""
    found = navmesh(world.home, width).locate(xy, SNAP_DISTANCE)
    if found is None:
        raise NoPath(f"{what} is not on the free floor for a body {width:.2f} m wide")
    return found[1]


def straight_run(world: World, robot: RobotState, distance: float,
                 avoid: Sequence[Obstacle] = ()) -> tuple[float, str | None]:
    """How far (m) the body drives straight ahead (backward if ``distance`` < 0) before something
    is in the way, and what: a wall, a fixture, furniture, a closed door, a person or an object on the floor."""
    width = robot.body.clearance_width
    heading = robot.yaw if distance >= 0 else robot.yaw + math.pi
    ux, uy = math.cos(heading), math.sin(heading)
    length = abs(distance)
    start = (robot.x, robot.y)
    line = LineString([start, (robot.x + ux * length, robot.y + uy * length)])
    floor = navmesh(world.home, width, closed_off(world, through_closed_doors=False)).floor.buffer(1e-6)
    off_floor = not floor.covers(Point(start))
    allowed = length
    for part in shapely.get_parts(line.difference(floor)):
        if part.is_empty or part.length < 1e-6:
            continue
        at = min(line.project(Point(c)) for c in part.coords)
        if off_floor and at <= 1e-3 and part.length <= SNAP_TOLERANCE:
            continue  # a body standing a hair off the free floor steps back onto it
        allowed = min(allowed, at)
    what = None if allowed >= length else _what_is_at(world, robot, heading, allowed)
    for o in avoid:
        at = _disc_hit(start, (ux, uy), o, width / 2)
        if at is not None and at < allowed:
            allowed, what = at, o.label
    return max(allowed, 0.0), what


def _disc_hit(start, u, o: Obstacle, radius: float) -> float | None:
    """Distance along ``u`` from ``start`` at which a body of ``radius`` touches the disc ``o``,
    if it comes closer than it is now."""
    dx, dy = o.x - start[0], o.y - start[1]
    along = dx * u[0] + dy * u[1]
    if along <= 1e-3:
        return None
    reach = o.radius + radius
    off2 = dx * dx + dy * dy - along * along
    if off2 >= reach * reach:
        return None
    return max(along - math.sqrt(reach * reach - off2), 0.0)


def _what_is_at(world: World, robot: RobotState, heading: float, at: float) -> str:
    """What stops a straight drive ``at`` metres along ``heading``."""
    r = robot.body.clearance_width / 2 + 0.05
    p = Point(robot.x + math.cos(heading) * at, robot.y + math.sin(heading) * at).buffer(r)
    for o in world.home.openings:
        state = world.openings.get(o.id)
        if o.kind in PASSABLE_KINDS and state is not None and not state.open and p.intersects(
                polygon_from_rings(o.polygon)):
            return f"{door_words(world, o.id)}, {_why_closed(world, o.id)}"
    for f in world.home.furniture:
        if p.intersects(polygon_from_rings(f.footprint)):
            return f"the {f.semantic_class.replace('_', ' ')} ({f.id})"
    for x in world.home.fixtures:
        if p.intersects(polygon_from_rings(x.polygon)):
            return f"the {x.kind.replace('_', ' ')} ({x.id})"
    return "a wall"


# --- timing -----------------------------------------------------------------------------------------


def wrap_angle(a: float) -> float:
    """An angle in (-pi, pi]."""
    w = math.remainder(a, 2 * math.pi)
    return math.pi if w <= -math.pi else w


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
    delta = wrap_angle(yaw1 - yaw0)
    if abs(delta) < 1e-6:
        return None
    return Phase("turn", abs(delta) / turn_rate(body), x, y, yaw0, x, y, yaw0 + delta)


def drive_phase(body: RobotEntry, a: tuple[float, float], b: tuple[float, float], yaw: float,
                backward: bool = False) -> Phase:
    return Phase("drive", math.dist(a, b) / drive_speed(body), a[0], a[1], yaw, b[0], b[1], yaw, backward=backward)


def path_phases(world: World, body: RobotEntry, yaw: float, path: Path, final_yaw: float | None = None) -> list[Phase]:
    """Turn, drive and door phases that take the body along ``path`` from heading ``yaw``.

    Each door on the path has a door phase in front of it: :data:`DOOR_OPEN_S` for a door closed
    now, none for an open one (unless it is closed by the time the body gets there); the body turns
    on the spot at each corner, and to ``final_yaw`` at the end.
    """
    marks = [(at, d) for at, d in zip(path.door_at, path.doors)]
    phases: list[Phase] = []
    s = 0.0
    for a, b in zip(path.points, path.points[1:]):
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
    end = path.points[-1]
    if final_yaw is not None and (t := turn_phase(body, end[0], end[1], yaw, final_yaw)) is not None:
        phases.append(t)
    return phases


# --- what a hand reaches ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Handle:
    """A place a hand goes to act on something: a point or an area (x, y) at a height."""

    what: str
    shape: BaseGeometry
    z: float
    key: str | None = None  # the grasp point, surface, container or part it stands for


@dataclass(frozen=True)
class Target:
    """Something the robot acts on, with the handles a hand may use and the room to stand in."""

    kind: str  # object | furniture | opening | device | person
    id: str
    name: str
    room: str | None
    handles: tuple[Handle, ...]
    exclude: tuple[str, ...] = ()  # obstacles that are the target itself

    def centre(self) -> tuple[float, float]:
        c = shapely.union_all([h.shape for h in self.handles]).centroid
        return float(c.x), float(c.y)


def height_problem(body: RobotEntry, handle: Handle) -> str | None:
    """Why a hand of ``body`` cannot be at the handle's height, or None if it can."""
    reach = body.reach
    if handle.z < reach.min_grasp_height - 1e-9:
        return (f"{handle.what} at {handle.z:.2f} m is below the {body.name}'s lowest grasp "
                f"{reach.min_grasp_height:.2f} m")
    if handle.z > reach.max_grasp_height + 1e-9:
        lift = " with its torso raised" if body.torso_lift else ""
        return (f"{handle.what} at {handle.z:.2f} m is above the {body.name}'s highest grasp "
                f"{reach.max_grasp_height:.2f} m{lift}")
    return None


def reach_from(body: RobotEntry, xy: tuple[float, float], target: Target) -> Handle:
    """The handle of ``target`` a hand reaches from the body's centre at ``xy``; :class:`ReachError`
    naming the height or the distance otherwise."""
    ok = [h for h in target.handles if height_problem(body, h) is None]
    if not ok:
        raise ReachError(height_problem(body, min(target.handles, key=lambda h: h.z)) or target.name)
    p = Point(xy)
    dist = [(h.shape.distance(p), i) for i, h in enumerate(ok)]
    d, i = min(dist)
    if d > reach_radius(body) + 1e-6:
        raise ReachError(f"{target.name} is {d:.2f} m away; the {body.name} reaches "
                         f"{body.reach.horizontal_reach:.2f} m past its front edge ({reach_radius(body):.2f} m "
                         f"from its centre): approach it first")
    return ok[i]


def stand_spot(world: World, body: RobotEntry, target: Target, from_xy: tuple[float, float],
               avoid: Sequence[Obstacle] = (), clearance: float | None = None) -> tuple[float, float]:
    """Where the body stands to reach ``target``: where it is if it reaches from there, else the
    spot nearest the target, in the target's room, on free floor joined to ``from_xy``, clear of
    ``avoid``. :class:`ReachError` names the height or distance that rules every spot out.

    ``clearance`` (m, at least the body's own width) looks for a spot as a body that wide would
    stand: one found so suits this body too (its free floor holds the wider body's)."""
    ok = [h for h in target.handles if height_problem(body, h) is None]
    if not ok:
        return reach_from(body, from_xy, target)  # raises the height problem
    width = max(body.clearance_width, clearance or 0.0)
    free = free_floor_of(world.home, width)
    idx = free.component_of(from_xy, tolerance=SNAP_DISTANCE)
    piece = free.parts[idx] if idx is not None else shapely.Polygon()
    if target.room is not None:
        piece = piece.intersection(world.home.room_polygon(target.room))
    handles = shapely.union_all([h.shape for h in ok])
    radius = reach_radius(body) - REACH_MARGIN
    region = piece.intersection(handles.buffer(radius))
    keep_clear = [Point(o.x, o.y).buffer(o.radius + width / 2 + OBSTACLE_MARGIN, quad_segs=4) for o in avoid]
    keep_clear += _closed_doorways(world, width, target)
    if keep_clear:
        region = region.difference(shapely.union_all(keep_clear))
    if region.is_empty:
        d = piece.distance(handles) if not piece.is_empty else math.inf
        where = "" if target.room is None else f" in {room_name(world.home, target.room)}"
        raise ReachError(f"the {body.name} cannot stand close enough to {target.name}: the nearest free floor"
                         f"{where} is {d:.2f} m from it and a hand reaches {reach_radius(body):.2f} m from the "
                         f"body's centre")
    if region.buffer(1e-6).covers(Point(from_xy)):
        return float(from_xy[0]), float(from_xy[1])
    spot = shapely.ops.nearest_points(region, handles)[0]
    return float(spot.x), float(spot.y)


def approach_spot(world: World, robot: RobotState, target: Target) -> tuple[float, float]:
    """Where ``robot`` drives to reach ``target``: :func:`stand_spot` from where it is, clear of
    every person and floor object."""
    return stand_spot(world, robot.body, target, (robot.x, robot.y), obstacles(world))


def _closed_doorways(world: World, width: float, target: Target) -> list[BaseGeometry]:
    """Where a body cannot stand for openings: clear of the leaf of every closed door, and in
    front of (not in) the door or window it is to work, as closing one asks."""
    out = []
    for o in world.home.openings:
        if target.kind == "opening" and target.id == o.id:
            out.append(polygon_from_rings(o.polygon).buffer(width / 2 + APPROACH_MARGIN))
        elif o.kind in PASSABLE_KINDS and not world.openings[o.id].open:
            out.append(polygon_from_rings(o.polygon).buffer(width / 2 + 0.01))
    return out


def heading_to(robot: RobotState, xy: tuple[float, float]) -> float:
    if math.hypot(xy[0] - robot.x, xy[1] - robot.y) < 1e-6:
        return robot.yaw
    return math.atan2(xy[1] - robot.y, xy[0] - robot.x)


# --- targets: what each kind of thing offers a hand ------------------------------------------------


def _home_object(world: World, object_id: str) -> HomeObject | None:
    return next((o for o in world.home.objects if o.id == object_id), None)


def _object_size(world: World, obj: ObjectState) -> tuple[float, float, float]:
    entry = world.catalog.objects.get(obj.catalog_id)
    if entry is not None:
        d = entry.dimensions
        return d.width, d.depth, d.height
    home = _home_object(world, obj.id)
    return tuple(home.size) if home is not None else (0.2, 0.2, 0.2)


def _object_label(world: World, obj: ObjectState) -> str:
    entry = world.catalog.objects.get(obj.catalog_id)
    return entry.label if entry is not None else obj.semantic_class.replace("_", " ")


def object_yaw(world: World, obj: ObjectState) -> float:
    """The object's heading: where it was last put down (``props['yaw']``), else the home file's."""
    if "yaw" in obj.props:
        return float(obj.props["yaw"])
    home = _home_object(world, obj.id)
    return home.pose.yaw if home is not None else 0.0


#: While pouring, the can's base clears the rim of what it pours into by this much (m); the rim is
#: where a pot is held (its highest grasp point).
POUR_CLEARANCE = 0.05


def pour_hand_height(rim_z: float, grasp_z: float) -> float:
    """Height (m) of the hand that pours over a rim at ``rim_z``, holding the can by a grasp
    ``grasp_z`` above its base: the one rule of the ``pour`` skill and of task screening."""
    return rim_z + POUR_CLEARANCE + grasp_z


def pour_hand_heights(catalog: Any, into: str, container: str, base_z: float) -> list[float]:
    """The hand heights of pouring from ``container`` (a catalog object id), held by each of its
    grasps, into ``into`` (one) standing at ``base_z``: its rim is its highest grasp point."""
    rim = base_z + max(g.offset.z for g in catalog.objects[into].grasp_points)
    return [pour_hand_height(rim, g.offset.z) for g in catalog.objects[container].grasp_points]


def grasp_points(world: World, obj: ObjectState) -> list[tuple[str, tuple[float, float, float]]]:
    """(name, position) of each grasp point of the object where it is now."""
    entry = world.catalog.objects.get(obj.catalog_id)
    home = _home_object(world, obj.id)
    points = ([(g.name, (g.offset.x, g.offset.y, g.offset.z)) for g in entry.grasp_points] if entry is not None
              else [(g.name, tuple(g.offset)) for g in home.grasp_points] if home is not None else [("body", (0, 0, 0))])
    c, s = math.cos(object_yaw(world, obj)), math.sin(object_yaw(world, obj))
    return [(n, (obj.x + c * dx - s * dy, obj.y + s * dx + c * dy, obj.z + dz)) for n, (dx, dy, dz) in points]


def object_target(world: World, object_id: str) -> Target:
    obj = world.objects[object_id]
    label = _object_label(world, obj)
    handles = tuple(Handle(f"the {label}'s {name.replace('_', ' ')}", Point(p[0], p[1]), p[2], name)
                    for name, p in grasp_points(world, obj))
    room = obj.placement.room if obj.placement.kind != "held" else None
    return Target("object", object_id, f"the {label} ({object_id})", room or room_of(world.home, obj.x, obj.y),
                  handles, exclude=(object_id,))


def container_height(container: Any) -> float:
    """Where a hand puts something into a container: at the rim of an open-topped one, halfway up
    one closed by a door (a drum, a cupboard)."""
    return container.bottom + (container.height if container.opened_by is None else container.height / 2)


def furniture_target(world: World, furniture_id: str) -> Target:
    f: Furniture = world.home.furniture_item(furniture_id)
    name = f.semantic_class.replace("_", " ")
    handles = [Handle(f"the {name}'s {s.name.replace('_', ' ')}", polygon_from_rings(s.polygon), s.height, s.name)
               for s in f.surfaces]
    handles += [Handle(f"the {name}'s {c.name.replace('_', ' ')}", polygon_from_rings(c.polygon),
                       container_height(c), c.name) for c in f.containers]
    handles += [Handle(f"the {name}'s {p.name.replace('_', ' ')}", Point(p.hinge[0], p.hinge[1]), p.hinge[2], p.name)
                for p in f.parts if p.hinge is not None]
    if not handles:
        handles = [Handle(f"the {name}", polygon_from_rings(f.footprint), f.height)]
    return Target("furniture", f.id, f"the {name} ({f.id})", f.room, tuple(handles))


def opening_target(world: World, opening_id: str, near: tuple[float, float] | None = None) -> Target:
    o = world.home.opening(opening_id)
    poly = polygon_from_rings(o.polygon)
    z = DOOR_HANDLE_HEIGHT if o.kind in PASSABLE_KINDS else o.sill + o.height / 2
    rooms = [r for r in o.connects if world.home.room(r).indoor] or list(o.connects)
    if near is not None and len(o.connects) > 1:
        here = room_of(world.home, *near)
        rooms = [here] if here in o.connects else rooms
    what = "handle" if o.kind in PASSABLE_KINDS else "window handle"
    words = door_words(world, opening_id)
    return Target("opening", o.id, words, rooms[0] if rooms else None,
                  (Handle(f"{words.split(' (')[0]}'s {what}", poly.centroid, z),))


def device_target(world: World, device_id: str) -> Target:
    d = world.home.device(device_id)
    name = d.name or d.type.replace("_", " ")
    if d.room is None:  # worn: on its wearer
        wearer = next((p for p in world.people.values() if device_id in p.wears), None)
        if wearer is not None:
            return person_target(world, wearer.id)
    return Target("device", d.id, f"the {name} ({d.id})", d.room,
                  (Handle(f"the {name}", Point(d.pose.x, d.pose.y), d.pose.z),))


def person_target(world: World, person_id: str) -> Target:
    p = world.people[person_id]
    z = HAND_HEIGHT_BY_POSTURE.get(p.posture, 1.0)
    reach = Point(p.x, p.y).buffer(PERSON_REACH_M, quad_segs=8)
    return Target("person", p.id, f"{p.name} ({p.id})", p.room,
                  (Handle(f"{p.name}'s hand", reach, z),), exclude=(p.id,))


TARGETS = {"object": object_target, "furniture": furniture_target, "opening": opening_target,
           "device": device_target, "person": person_target}


def target_of(world: World, kind: str, entity_id: str) -> Target:
    """The :class:`Target` of an entity (kind: object, furniture, opening, device, person)."""
    if kind not in TARGETS:
        raise SkillError(f"cannot act on a {kind}; the robot acts on: {', '.join(TARGETS)}")
    return TARGETS[kind](world, entity_id)


# --- carrying ---------------------------------------------------------------------------------------


def object_mass(world: World, obj: ObjectState) -> float:
    """The object's mass now (kg): as placed, less what was poured out of it."""
    home = _home_object(world, obj.id)
    entry = world.catalog.objects.get(obj.catalog_id)
    mass = home.mass if home is not None else entry.mass if entry is not None else 0.0
    initial = home.contents if home is not None else entry.contents if entry is not None else None
    now = obj.props.get("contents")
    if initial is not None and isinstance(now, dict) and initial.unit == "l":
        mass += (float(now.get("amount", 0.0)) - initial.amount) * DENSITY_KG_PER_L.get(initial.substance, 1.0)
    return round(mass, 3)


def carried_mass(world: World, robot: RobotState) -> float:
    return sum(object_mass(world, world.objects[o]) for o in set(robot.holding()))


def hands_for(world: World, robot: RobotState, obj: ObjectState) -> list[str]:
    """The hands that will take ``obj``: one free hand, or every hand when it weighs more than one
    hand carries (the catalog's payload is per hand; docs/catalog.md). :class:`ReachError` names
    the masses when no hand is free or it is too heavy; nothing changes then."""
    body = robot.body
    label = _object_label(world, obj)
    free = [h for h, o in robot.held.items() if o is None]
    if not free:
        held = ", ".join(f"{h}: {o}" for h, o in robot.held.items())
        raise ReachError(f"no free hand to take the {label}; the {body.name}'s hands hold {held}: place one first")
    mass, per_hand, n = object_mass(world, obj), body.payload.kg, len(robot.held)
    if mass <= per_hand + 1e-9:
        return free[:1]
    full = _fullness(world, obj)
    if mass > per_hand * n + 1e-9:
        both = f" a hand, {per_hand * n:.2f} kg with all {n} hands" if n > 1 else ""
        raise ReachError(f"the {full}{label} weighs {mass:.2f} kg; the {body.name} carries {per_hand:.2f} kg{both}")
    if len(free) < n:
        raise ReachError(f"the {full}{label} weighs {mass:.2f} kg, more than one hand carries ({per_hand:.2f} kg): "
                         f"all {n} hands must be free; place what the robot holds first")
    return free


def _fullness(world: World, obj: ObjectState) -> str:
    contents, cap = obj.props.get("contents"), obj.props.get("capacity_l")
    if isinstance(contents, dict) and cap and contents.get("unit") == "l" and contents.get("amount", 0) > 0:
        return "full " if contents["amount"] >= 0.75 * cap else ""
    return ""


def hold(world: World, robot: RobotState, obj: ObjectState, hands: Sequence[str], grasp: str | None = None) -> None:
    """Put ``obj`` in ``hands``: it moves with the robot from now on."""
    for hand in hands:
        robot.held[hand] = obj.id
    obj.placement = Placement(kind="held", room=robot.room, holder="robot")
    if grasp is not None:
        obj.props["grasp"] = grasp
    obj.x, obj.y, obj.z = held_point(robot, hands)


def release(robot: RobotState, obj: ObjectState) -> list[str]:
    """Take ``obj`` out of the robot's hands; returns the hands that held it."""
    hands = [h for h, o in robot.held.items() if o == obj.id]
    for hand in hands:
        robot.held[hand] = None
    obj.props.pop("grasp", None)
    return hands


def held_point(robot: RobotState, hands: Sequence[str]) -> tuple[float, float, float]:
    """Where an object held in ``hands`` is (between them when several hold it)."""
    pts = [carry_point(robot, h) for h in hands]
    return tuple(sum(p[i] for p in pts) / len(pts) for i in range(3))  # type: ignore[return-value]


def move_held(robot: RobotState, objects: dict[str, ObjectState]) -> None:
    """Held objects follow the robot's hands."""
    for oid in set(robot.holding()):
        if oid in objects:
            o = objects[oid]
            o.x, o.y, o.z = held_point(robot, [h for h, held in robot.held.items() if held == oid])
            o.placement.room = robot.room


__all__ = [
    "DEFAULT_TURN_RATE", "DOOR_OPEN_S", "INDOOR_MAX_SPEED", "Handle", "NavMesh", "NoPath", "Obstacle", "Path",
    "Phase", "ReachError", "Target", "body_of", "closed_off", "drive_speed", "obstacles", "path_phases",
    "people_obstacles", "place_robot", "plan_path", "reach_from", "room_spot", "stand_spot", "target_of",
    "turn_rate",
]
