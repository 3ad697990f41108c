"""Routes over the free floor: the near-shortest way for a body of a given width between two
points, the doors it passes, and how far a straight drive gets.

A route is planned over the :mod:`~homeloop.sim.robot.navmesh`: the corridor of
triangles A* finds is pulled taut, and a second corridor avoiding the first is
tried too and the shorter path kept (:data:`~homeloop.sim.robot.navmesh.ALTERNATIVE_PENALTY`).
Doors on the way:

- a closed, unlocked door is passed (the motion stops in front of it to open it);
- a locked door, a closed motorised garage door, or (for callers that cannot
  open doors) any closed door is cut out of the free floor; a goal behind it
  is unreachable and the error names the door;
- people and objects on the floor are discs (:class:`~homeloop.sim.robot.obstacles.Obstacle`);
  a route planned around them avoids them.

The people module walks residents, couriers and intruders along
:func:`plan_path` too, with their shoulder width as the body width.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import shapely
from shapely import LineString, Point
from shapely.geometry.base import BaseGeometry

from homeloop.core.geometry import ShapeMemo
from homeloop.core.kept import Kept
from homeloop.core.home import polygon_from_rings
from homeloop.core.navigation import APPROACH_MARGIN, PASSABLE_KINDS, SNAP_TOLERANCE, free_floor_of
import homeloop.sim.robot.floor as floor_module
from homeloop.sim.robot.floor import SNAP_DISTANCE, NoPath, point_words, room_name, room_of, room_spot_on
from homeloop.sim.robot.navmesh import XY, NavMesh, nav_floor, navmesh
from homeloop.sim.robot.obstacles import Obstacle, closed_off, door_words, obstacles, why_closed
from homeloop.sim.world import RobotState, World


@dataclass(frozen=True)
class Route:
    """A way over the free floor: its corner points, length, and the doors it passes.

    ``door_at[i]`` is the distance along the route (m) at which the body stands in front of
    ``doors[i]`` (half its width plus :data:`~homeloop.core.navigation.APPROACH_MARGIN` from the face).
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

    def __iter__(self) -> Iterator[tuple[float, float]]:
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)


def plan_path(world: World, start_xy: tuple[float, float], goal_xy: tuple[float, float], width: float, *,
              through_closed_doors: bool = True, avoid: Sequence[Obstacle] = ()) -> Route:
    """The near-shortest way for a body of ``width`` from ``start_xy`` to ``goal_xy``.

    Closed doors are passed (and listed in ``Route.doors``) unless ``through_closed_doors`` is
    False; locked doors and closed garage doors never are. ``avoid``: discs to keep clear of.
    A start or goal up to :data:`SNAP_DISTANCE` off the free floor is moved onto it (the path
    starts at the given start all the same). :class:`NoPath` names why there is no way.
    """
    closed = closed_off(world, through_closed_doors=through_closed_doors)
    found = _search(navmesh(world.home, width, closed), start_xy, goal_xy) if avoid else "apart"
    if isinstance(found, str) or _comes_near(found, avoid, width):
        mesh = navmesh(world.home, width, closed, avoid)
        found = _search(mesh, start_xy, goal_xy)
    else:
        mesh = navmesh(world.home, width, closed)
    if isinstance(found, str):
        raise NoPath(_no_path_reason(world, start_xy, goal_xy, width, closed, avoid, found))
    points = found
    if math.dist(points[0], start_xy) > 1e-9:
        points = [(float(start_xy[0]), float(start_xy[1])), *points]
    key = (_exactly(points), width)
    kept = _ways(mesh)
    route = kept.routes.get(key) if floor_module.KEPT else None
    if route is None:
        route = kept.routes.put(key, _make_route(world, points, width))
    return route


def clear_room_spot(world: World, robot: RobotState, room_id: str) -> tuple[float, float] | None:
    """Where a drive to a room ends when people or objects on the floor stand on the room's spot
    (:func:`room_spot`) or cut it off from the robot: the spot nearest the room's centre on the floor
    they leave joined to where the robot stands; None where they leave none of the room."""
    width, here = robot.body.clearance_width, Point(robot.x, robot.y)
    floor = nav_floor(world.home, width, closed_off(world, through_closed_doors=True), obstacles(world))
    joined = min(shapely.get_parts(floor), key=lambda g: g.distance(here), default=None)
    if joined is None or joined.distance(here) > SNAP_DISTANCE:
        return None
    try:
        return room_spot_on(world.home, room_id, width, joined, True)
    except NoPath:
        return None


def drive_way(world: World, robot: RobotState, goal_xy: tuple[float, float], exclude: Iterable[str] = (),
              margin: float = 0.0) -> Route:
    """The way ``robot`` drives to ``goal_xy``: :func:`plan_path` for its clearance width, round
    people and floor objects but those in ``exclude`` (what it drives up to). ``margin`` (m) plans
    it for a body that much wider each side, so the way keeps that far off the free floor's edge."""
    return plan_path(world, (robot.x, robot.y), goal_xy, robot.body.clearance_width + 2 * margin,
                     avoid=obstacles(world, exclude))


class _Ways:
    """What the routes over one mesh have found: paths by their ends, and routes by their points and
    body width (the mesh is the home's, so the doors a route passes are the same each time). The
    episodes in a home plan many of the same ways again; each is found as the first time found it."""

    def __init__(self) -> None:
        self.paths: Kept[list[XY] | str] = Kept(ROUTES_KEPT)
        self.routes: Kept[Route] = Kept(ROUTES_KEPT)


def _exactly(points: Iterable[Sequence[float]]) -> tuple[float, ...]:
    """Points as a key that tells apart every pair of floats a route could tell apart (0.0 and -0.0)."""
    return tuple(v for p in points for c in p[:2] for v in (float(c), math.copysign(1.0, c)))


#: Paths and routes kept per mesh (:class:`_Ways`).
ROUTES_KEPT = 1024
_found: "weakref.WeakKeyDictionary[NavMesh, _Ways]" = weakref.WeakKeyDictionary()


def _ways(mesh: NavMesh) -> _Ways:
    kept = _found.get(mesh)
    if kept is None:
        kept = _found[mesh] = _Ways()
    return kept


def _search(mesh: NavMesh, start_xy: XY, goal_xy: XY) -> list[XY] | str:
    """The funnelled path, or a word for what failed: 'start', 'goal' or 'apart'."""
    key = _exactly((start_xy, goal_xy))
    kept = _ways(mesh)
    found = kept.paths.get(key) if floor_module.KEPT else None
    if found is None:
        found = kept.paths.put(key, _search_anew(mesh, start_xy, goal_xy))
    return found if isinstance(found, str) else list(found)


def _search_anew(mesh: NavMesh, start_xy: XY, goal_xy: XY) -> list[XY] | str:
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
        detour = mesh.corridor(a[0], b[0], avoid=corridor)  # never None: the first corridor joins them
        other = mesh.funnel(detour, a[1], b[1]) if detour is not None else points
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
    return any(line.distance(Point(o.x, o.y)) < o.clearance(width) for o in avoid)


def _length(points: Sequence[tuple[float, float]]) -> float:
    return sum(math.dist(p, q) for p, q in zip(points, points[1:]))


def _make_route(world: World, points: list[tuple[float, float]], width: float) -> Route:
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
    return Route(tuple((float(x), float(y)) for x, y in points), float(line.length),
                tuple(d for _, d in passed), tuple(float(a) for a, _ in passed))


def _no_path_reason(world: World, start: XY, goal: XY, width: float, closed: frozenset[str],
                    avoid: Sequence[Obstacle], failed: str) -> str:
    home = world.home
    where = {"start": start, "goal": goal}
    if failed in where:
        p = where[failed]
        floor = free_floor_of(home, width).geometry
        d = floor.distance(Point(p)) if not floor.is_empty else math.inf
        if d <= SNAP_DISTANCE:
            person = _blocking(avoid, p, width)
            return (f"the {failed} {point_words(p)} is taken: {person}" if person
                    else f"no free floor at the {failed} {point_words(p)}")
        return (f"the {failed} {point_words(p)} in {room_name(home, room_of(home, *p))} is {d:.2f} m from the "
                f"free floor for a body {width:.2f} m wide")
    trip = f"from {room_name(home, room_of(home, *start))} to {room_name(home, room_of(home, *goal))}"
    through_doors = _search(navmesh(home, width, frozenset(), avoid), start, goal) if closed else "apart"
    if not isinstance(through_doors, str):
        way = _make_route(world, through_doors, width)
        doors = [d for d in way.doors if d in closed] or sorted(closed)
        return f"no way {trip}: it passes " + "; ".join(f"{door_words(world, d)}, {why_closed(world, d)}"
                                                      for d in doors)
    around = _search(navmesh(home, width, closed), start, goal) if avoid else "apart"
    if not isinstance(around, str):
        line = LineString(around if len(around) > 1 else around * 2)
        near = [o.label for o in avoid if line.distance(Point(o.x, o.y)) < o.clearance(width)]
        return f"no way {trip} for a body {width:.2f} m wide: blocked by " + ", ".join(near or [o.label for o in avoid])
    return f"no way over the free floor {trip} for a body {width:.2f} m wide"


def _blocking(avoid: Sequence[Obstacle], p: XY, width: float) -> str:
    near = [o.label for o in avoid if math.dist((o.x, o.y), p) < o.clearance(width)]
    return ", ".join(near)


def snap_to_floor(world: World, xy: XY, width: float, *, what: str = "the point") -> XY:
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
    floor = _covering(nav_floor(world.home, width, closed_off(world, through_closed_doors=False)))
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


#: Each floor :func:`straight_run` read lately, widened by a hair (so a line along its edge stays on it).
_WIDENED = ShapeMemo(32)


def _covering(floor: BaseGeometry) -> BaseGeometry:
    return _WIDENED.get([[floor]], (), lambda: _prepared(floor.buffer(1e-6)))


def _prepared(shape: BaseGeometry) -> BaseGeometry:
    shapely.prepare(shape)
    return shape


def _disc_hit(start: XY, u: XY, o: Obstacle, radius: float) -> float | None:
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
            return f"{door_words(world, o.id)}, {why_closed(world, o.id)}"
    for f in world.home.furniture:
        if p.intersects(polygon_from_rings(f.footprint)):
            return f"the {f.semantic_class.replace('_', ' ')} ({f.id})"
    for x in world.home.fixtures:
        if p.intersects(polygon_from_rings(x.polygon)):
            return f"the {x.kind.replace('_', ' ')} ({x.id})"
    return "a wall"
