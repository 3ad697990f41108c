"""Free-floor navigation on small hand-built homes and on the furnished house."""

from __future__ import annotations

import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import box

from homeloop.core import navigation
from homeloop.core.catalog import load_catalog
from homeloop.core.home import (Fixture, Home, Opening, Pose, Room, Source, Wall, furniture_from_catalog,
                           polygon_from_rings, rings_from_polygon)

WIDE, NARROW = 0.54, 0.33


def _rings(geom):
    return rings_from_polygon(geom)


def _three_rooms(with_sofa: bool) -> Home:
    """West room B, middle room A (4 x 2.4 m), east room C; a 0.9 m door between each pair.

    The optional sofa stands across A from its south wall, leaving a 0.4 m gap to the north wall.
    """
    rooms = [
        Room(id="B", name="b", type="ROOM", polygon=_rings(box(-3.1, 0, -0.1, 2.4))),
        Room(id="A", name="a", type="LIVING_ROOM", polygon=_rings(box(0, 0, 4, 2.4))),
        Room(id="C", name="c", type="ROOM", polygon=_rings(box(4.1, 0, 7.1, 2.4))),
    ]
    outer = box(-3.2, -0.1, 7.2, 2.5).difference(box(-3.1, 0, 7.1, 2.4))
    walls = [Wall(id="wall_outer", polygon=_rings(outer)),
             Wall(id="wall_west", polygon=_rings(box(-0.1, 0, 0, 2.4))),
             Wall(id="wall_east", polygon=_rings(box(4, 0, 4.1, 2.4)))]
    openings = [
        Opening(id="door_1", kind="door", polygon=_rings(box(-0.1, 0.8, 0, 1.7)), connects=["B", "A"],
                width=0.9, height=2.0),
        Opening(id="door_2", kind="door", polygon=_rings(box(4, 0.8, 4.1, 1.7)), connects=["A", "C"],
                width=0.9, height=2.0),
        Opening(id="entrance_1", kind="entrance_door", polygon=_rings(box(-2.0, -0.1, -1.0, 0)),
                connects=["B"], width=1.0, height=2.0),
    ]
    furniture = []
    if with_sofa:
        sofa = load_catalog().furniture["sofa"]  # 2.0 m wide, 0.9 m deep
        furniture.append(furniture_from_catalog(sofa, "sofa_1", "A", Pose(x=2.0, y=1.0, yaw=0.0)))
    return Home(home_id="test", source=Source(kind="synthetic", plan="test"), rooms=rooms, walls=walls,
                openings=openings, furniture=furniture)


def _dumbbell(neck: float) -> Home:
    """One room: two 2 x 2 m halves joined by a 1 m long neck ``neck`` wide."""
    shape = shapely.union_all([box(0, 0, 2, 2), box(2, 1 - neck / 2, 3, 1 + neck / 2), box(3, 0, 5, 2)])
    return Home(home_id=f"neck{neck}", source=Source(kind="synthetic", plan="t"),
                rooms=[Room(id="R", name="r", type="CORRIDOR", polygon=_rings(shape))])


def test_sofa_blocking_the_way_between_doors_is_reported():
    assert navigation.doors_connected_within_room(_three_rooms(False), "A", WIDE) == []
    blocked = _three_rooms(True)
    assert navigation.doors_connected_within_room(blocked, "A", WIDE) == [("door_1", "door_2")]
    # a small body still slips through the 0.4 m gap
    assert navigation.doors_connected_within_room(blocked, "A", NARROW) == []


def test_narrow_corridor_passes_small_body_only():
    home = _dumbbell(0.45)
    assert navigation.path_exists(home, (1, 1), (4, 1), NARROW)
    assert not navigation.path_exists(home, (1, 1), (4, 1), WIDE)
    assert navigation.path_exists(home, (0.5, 0.5), (1.5, 1.5), WIDE)
    assert not navigation.path_exists(home, (1, 1), (10, 10), NARROW)  # off the floor


def test_reachable_rooms():
    open_home, blocked = _three_rooms(False), _three_rooms(True)
    assert navigation.entrance_room(open_home) == "B"
    assert navigation.reachable_rooms(open_home, WIDE) == {"A", "B", "C"}
    assert navigation.reachable_rooms(blocked, WIDE) == {"A", "B"}
    assert navigation.reachable_rooms(blocked, NARROW) == {"A", "B", "C"}
    assert navigation.reachable_rooms(blocked, WIDE, start_room="C") == {"A", "C"}


def test_door_approach_points_lie_in_front_of_the_door():
    home = _three_rooms(False)
    points = dict(navigation.door_approach_points(home, "door_1", WIDE))
    assert set(points) == {"A", "B"}
    assert points["A"].x == pytest.approx(0.0 + WIDE / 2 + 0.1, abs=1e-6)
    assert points["B"].x == pytest.approx(-0.1 - WIDE / 2 - 0.1, abs=1e-6)
    assert points["A"].y == pytest.approx(1.25) and points["B"].y == pytest.approx(1.25)
    assert home.room_polygon("A").contains(points["A"]) and home.room_polygon("B").contains(points["B"])


def test_free_floor_erodes_walls_and_furniture_and_caches():
    home = _three_rooms(True)
    floor = navigation.free_floor(home, WIDE)
    assert not floor.contains(shapely.Point(2.0, 1.0))  # under the sofa
    assert not floor.contains(shapely.Point(0.1, 2.2))  # too close to the walls
    assert floor.contains(shapely.Point(0.5, 1.25))
    assert navigation.free_floor(home, WIDE) is floor  # cached
    home.furniture = []
    assert navigation.free_floor(home, WIDE) is not floor  # an edit is seen
    assert navigation.free_floor(home, WIDE).contains(shapely.Point(2.0, 1.0))


def test_widest_body_width():
    catalog = load_catalog()
    assert navigation.widest_body_width(catalog) == pytest.approx(
        max(r.clearance_width for r in catalog.robots.values()))
    assert navigation.widest_body_width(catalog) == pytest.approx(0.54)


def test_free_floor_is_made_once_per_home_and_width_and_again_after_an_edit():
    """The cache answers an unchanged home (its furniture list rebuilt with the same content)
    and sees furniture taken away."""
    from homeloop.pipeline.furnish import furnish_house

    home = furnish_house(load_catalog())
    assert len(home.furniture) >= 25
    navigation.clear_cache()
    wide = navigation.free_floor_of(home, WIDE)
    home.furniture = list(home.furniture)  # same content: the cache still answers
    assert navigation.free_floor_of(home, WIDE) is wide
    narrow = navigation.free_floor_of(home, 0.45)
    assert narrow.geometry.covers(wide.geometry)  # a narrower body stands wherever a wider one does
    largest = max(home.furniture, key=lambda f: polygon_from_rings(f.footprint).area)
    home.furniture = [f for f in home.furniture if f is not largest]
    cleared = navigation.free_floor_of(home, WIDE)
    assert cleared.geometry.area > wide.geometry.area
    indoor = {r.id for r in home.rooms if r.indoor}
    assert indoor <= navigation.reachable_rooms(home, WIDE)


def test_doors_not_joined_answers_each_room_as_asked_alone():
    # The sofa leaves 0.4 m in room A: a wide body cannot join A's two doors, a narrow one can.
    home = _three_rooms(with_sofa=True)
    rooms = [r.id for r in home.rooms]
    for width in (WIDE, NARROW):
        together = navigation.doors_not_joined(home, rooms, width)
        assert list(together) == rooms
        assert together == {rid: navigation.doors_connected_within_room(home, rid, width) for rid in rooms}
    assert navigation.doors_not_joined(home, rooms, WIDE)["A"] == [("door_1", "door_2")]
    assert navigation.doors_not_joined(home, rooms, NARROW)["A"] == []


def test_the_union_of_walls_is_shared_by_the_same_walls():
    home = _three_rooms(with_sofa=False)
    walls = [shapely.Polygon(w.polygon[0]) for w in home.walls]
    union = navigation.union_of_walls(walls)
    assert navigation.union_of_walls(list(walls)) is union
    assert union.equals(shapely.union_all(walls))


@settings(max_examples=30, deadline=None)
@given(x0=st.floats(0.3, 2.5), y0=st.floats(0.0, 1.6), w=st.floats(0.3, 1.2), d=st.floats(0.3, 0.8),
       body=st.sampled_from([NARROW, WIDE]), kind=st.sampled_from(["counter", "built_in_furniture", "shower"]))
def test_no_body_stands_on_or_against_a_fixture(x0, y0, w, d, body, kind):
    """A fixture (a counter run, a built-in wardrobe) is an obstacle: the body's centre keeps half
    its width from it, as from a wall."""
    home = _three_rooms(False)
    counter = box(x0, y0, min(x0 + w, 4.0), min(y0 + d, 2.4))
    home.fixtures = [Fixture(id="fixture_1", kind=kind, room="A", polygon=_rings(counter), height=0.9)]
    floor = navigation.free_floor(home, body)
    assert floor.is_empty or floor.distance(counter) >= body / 2 - 0.01
    assert navigation.free_floor_of(home, body).geometry is floor  # cached with its fixtures


def test_a_counter_across_a_room_cuts_the_way_a_sofa_would():
    home = _three_rooms(False)
    home.fixtures = [Fixture(id="kitchen_1", kind="counter", room="A", polygon=_rings(box(1.5, 0.0, 2.1, 2.4)),
                             height=0.9)]
    assert navigation.doors_connected_within_room(home, "A", NARROW) == [("door_1", "door_2")]
    assert navigation.reachable_rooms(home, NARROW) == {"B", "A"}
    home.fixtures = []  # the edit is seen
    assert navigation.reachable_rooms(home, NARROW) == {"B", "A", "C"}


def test_navigation_meshes_follow_an_edit_of_the_home():
    """A mesh is kept for a home while its layout reads the same, and made again after an edit in
    place: with the largest piece of furniture taken away, the mesh covers its floor too."""
    from homeloop.pipeline.furnish import furnish_house
    from homeloop.sim.robot.navmesh import navmesh

    home = furnish_house(load_catalog())
    mesh = navmesh(home, WIDE)
    home.furniture = list(home.furniture)  # same content: the same mesh
    assert navmesh(home, WIDE) is mesh
    largest = max(home.furniture, key=lambda f: polygon_from_rings(f.footprint).area)
    home.furniture = [f for f in home.furniture if f is not largest]
    after = navmesh(home, WIDE)
    footprint = polygon_from_rings(largest.footprint)
    assert after.floor.area > mesh.floor.area
    assert after.floor.intersection(footprint).area > mesh.floor.intersection(footprint).area
