"""Ways and spots kept per home give what planning them anew gives (homeloop/sim/robot/floor.py ``KEPT``,
docs/dynamics.md "Kept ways"): corridors per navigation mesh, paths and routes per mesh, the spot a
body stands at in a room per free floor, the shapes a standing spot to reach something is found
from (homeloop/sim/robot/reach.py), and the people's router (homeloop/sim/dynamics/people.py). Whole
episodes with and without them are compared in
tests/sim/test_episode_cost.py; here single plans, asked twice, in the house.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from homeloop.core.catalog import DEFAULT_ROBOT
from homeloop.core.home import polygon_from_rings
from homeloop.core.navigation import free_floor_of
from homeloop.sim.dynamics.people import Router, _router
from homeloop.sim.robot import floor
from homeloop.sim.robot.floor import NoPath, room_spot
from homeloop.sim.robot.obstacles import Obstacle
from homeloop.sim.robot.reach import ReachError, stand_spot
from homeloop.sim.robot.routes import Route, plan_path
from homeloop.sim.robot.targets import target_of
from homeloop.sim.world import World


class kept:
    """:data:`floor.KEPT` on or off for the time of a ``with``."""

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self) -> None:
        self.saved, floor.KEPT = floor.KEPT, self.on

    def __exit__(self, *_: Any) -> None:
        floor.KEPT = self.saved


@pytest.fixture(scope="module")
def world(house_home: Any, catalog: Any) -> World:
    return World(house_home, catalog, seed=0)


def width_of(catalog: Any) -> float:
    return float(catalog.robots[DEFAULT_ROBOT].clearance_width)


def floor_points(world: World, width: float) -> list[tuple[float, float]]:
    """Points spread over the house's free floor for the body: the representative point of each
    piece of every room."""
    free = free_floor_of(world.home, width).geometry
    out = []
    for room in world.home.rooms:
        for part in shapely.get_parts(free.intersection(world.home.room_polygon(room.id))):
            if part.area > 0.05:
                p = part.representative_point()
                out.append((float(p.x), float(p.y)))
    return out


def planned(world: World, start: tuple[float, float], goal: tuple[float, float], width: float,
            avoid: tuple[Obstacle, ...]) -> Route | str:
    try:
        return plan_path(world, start, goal, width, avoid=avoid)
    except NoPath as exc:
        return f"no path: {exc}"


def test_the_house_has_points_to_plan_between(world, catalog):
    points = floor_points(world, width_of(catalog))
    assert len(points) >= len(world.home.rooms) // 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_way_planned_again_is_the_way_planned_anew(world, catalog, data):
    width = width_of(catalog)
    points = floor_points(world, width)
    start = data.draw(st.sampled_from(points))
    goal = data.draw(st.sampled_from(points))
    nudge = data.draw(st.tuples(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3)))
    goal = (goal[0] + nudge[0], goal[1] + nudge[1])
    people = data.draw(st.lists(st.sampled_from(points), max_size=2))
    avoid = tuple(Obstacle(x + 0.05, y, 0.25, f"person {i}") for i, (x, y) in enumerate(people))
    with kept(False):
        anew = planned(world, start, goal, width, avoid)
    with kept(True):
        first, again = planned(world, start, goal, width, avoid), planned(world, start, goal, width, avoid)
    assert first == anew and again == anew
    if isinstance(anew, Route):  # from where it was asked, even a start moved onto the floor
        assert anew.start == (float(start[0]), float(start[1])) and anew.length >= 0


def rooms_and_starts(world: World, width: float) -> Iterator[tuple[str, tuple[float, float] | None]]:
    starts: list[tuple[float, float] | None] = [None, *floor_points(world, width)[:3]]
    for room in world.home.rooms:
        for near in starts:
            yield room.id, near


def spot_or_why(world: World, room: str, width: float, near: tuple[float, float] | None) -> Any:
    try:
        return room_spot(world, room, width, near=near)
    except NoPath as exc:
        return str(exc)


def test_a_rooms_spot_found_again_is_the_spot_found_anew(world, catalog):
    width = width_of(catalog)
    pairs = list(rooms_and_starts(world, width))
    with kept(False):
        anew = [spot_or_why(world, room, width, near) for room, near in pairs]
    with kept(True):
        first = [spot_or_why(world, room, width, near) for room, near in pairs]
        again = [spot_or_why(world, room, width, near) for room, near in pairs]
    assert first == anew and again == anew
    spots = [s for s in anew if isinstance(s, tuple)]
    assert len(spots) >= len(world.home.rooms)  # every room has a spot from nowhere in particular
    free = free_floor_of(world.home, width).geometry
    assert all(free.buffer(1e-6).covers(shapely.Point(s)) for s in spots)


def stand_or_why(world: World, body: Any, target: Any, start: tuple[float, float],
                 avoid: tuple[Obstacle, ...]) -> Any:
    try:
        return stand_spot(world, body, target, start, avoid)
    except ReachError as exc:
        return str(exc)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_standing_spot_found_again_is_the_spot_found_anew(world, catalog, data):
    """Every door shut or not, the body reaching for furniture, a door or a device, from a point on
    the floor, people in the way or not."""
    body = catalog.robots[DEFAULT_ROBOT]
    points = floor_points(world, width_of(catalog))
    kind, pool = data.draw(st.sampled_from([("furniture", [f.id for f in world.home.furniture]),
                                            ("opening", [o.id for o in world.home.openings]),
                                            ("device", [d.id for d in world.home.devices if d.room])]))
    target = target_of(world, kind, data.draw(st.sampled_from(pool)))
    start = data.draw(st.sampled_from(points))
    people = data.draw(st.lists(st.sampled_from(points), max_size=2))
    avoid = tuple(Obstacle(x + 0.05, y, 0.25, f"person {i}") for i, (x, y) in enumerate(people))
    shut = data.draw(st.sets(st.sampled_from([o.id for o in world.home.openings])))
    saved = {oid: state.open for oid, state in world.openings.items()}
    try:
        for oid in shut:
            world.openings[oid].open = False
        with kept(False):
            anew = stand_or_why(world, body, target, start, avoid)
        with kept(True):
            first = stand_or_why(world, body, target, start, avoid)
            again = stand_or_why(world, body, target, start, avoid)
    finally:
        for oid, was in saved.items():
            world.openings[oid].open = was
    assert first == anew and again == anew
    if isinstance(anew, tuple):  # a spot on the free floor joined to the start
        free = free_floor_of(world.home, width_of(catalog))
        assert free.component_of(anew) == free.component_of(start)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_spots_on_a_surface_are_blocked_as_point_by_point(house_home, data):
    """Where a scenario puts an object on furniture (homeloop/sim/scenario.py ``surface_spot``), the
    spots under or before other furniture are found for all spots at once: the same answer as asking
    each footprint about each point, corners and edges included."""
    footprints = [polygon_from_rings(f.footprint) for f in house_home.furniture]
    poly = data.draw(st.sampled_from(footprints))
    corners = list(poly.exterior.coords)
    i = data.draw(st.integers(0, len(corners) - 2))
    (ax, ay), (bx, by) = corners[i], corners[i + 1]
    t = data.draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0))
    off = data.draw(st.sampled_from([0.0]) | st.floats(-0.05, 0.05))
    x, y = ax + (bx - ax) * t + off, ay + (by - ay) * t - off
    xs, ys = [x, poly.centroid.x], [y, poly.centroid.y]
    at_once = (shapely.contains_xy(poly, xs, ys)).tolist()
    assert at_once == [poly.contains(shapely.Point(px, py)) for px, py in zip(xs, ys)]
    assert at_once[1]  # a footprint (convex) holds its centroid


def test_the_people_s_router_kept_for_a_home_routes_as_a_new_one(world):
    """From each room to each other (and from outside), the same points and rooms."""
    with kept(True):
        router = _router(world.home)
        assert _router(world.home) is router
    with kept(False):
        assert _router(world.home) is not router
    anew = Router(world.home)
    rooms = [r for r in world.home.rooms if r.indoor]
    centres = {r.id: world.home.room_polygon(r.id).representative_point() for r in rooms}
    ends = [((float(c.x), float(c.y)), rid) for rid, c in centres.items()] + [((-5.0, -5.0), None)]
    for start, start_room in ends:
        for goal, goal_room in ends:
            ours = router.route(world, start, start_room, goal, goal_room)
            assert ours == anew.route(world, start, start_room, goal, goal_room)
            assert ours[0] and len(ours[0]) == len(ours[1])
