"""Furnishing's geometry shortcuts (docs/pipeline.md, furnish): each gives what the plain
measurement gives — candidate rectangles, the clear-zone overlap rule, the wall faces."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st

from homeloop.core import navigation
from homeloop.core.catalog import load_catalog
from homeloop.core.home import Pose
from homeloop.pipeline.furnish import FurnishContext, home_shell
from homeloop.pipeline.furnish.candidates import Candidates, aranges, rectangle_corners, rectangles, touched
from homeloop.pipeline.furnish.filters import drop_in_zones
from homeloop.pipeline.furnish.generators import WALL_STEP
from homeloop.pipeline.furnish.navigability import room_free
from homeloop.pipeline.furnish_geometry import (
    FACE_SAMPLE_STEP,
    MIN_FACE_LENGTH,
    PASSAGE_CONTACT,
    WALL_CONTACT,
    ZONE_OVERLAP_AREA,
    HomeGeometry,
    KeepOut,
    RoomGeometry,
)
from tests.conftest import load_fixture_plans

coordinate = st.floats(-20, 20, allow_nan=False)
size = st.floats(0.05, 2.5, allow_nan=False)
heading = st.floats(-math.pi, math.pi, allow_nan=False)
pose = st.tuples(coordinate, coordinate, heading)


def _poses(items: list[tuple[float, float, float]]) -> Candidates:
    cx, cy, yaw = (np.array(v, dtype=float) for v in zip(*items))
    return Candidates(cx, cy, yaw, np.zeros(len(items)))


@given(st.lists(pose, min_size=1, max_size=20), size, size)
def test_rectangles_are_the_polygons_of_their_corners(items, depth, width):
    corners = rectangle_corners(_poses(items), depth, width)
    made = rectangles(corners)
    assert shapely.get_coordinates(made).tolist() == shapely.get_coordinates(shapely.polygons(corners)).tolist()
    assert np.allclose(shapely.area(made), depth * width)


@given(st.lists(st.tuples(st.floats(-5, 25, allow_nan=False), st.floats(-1, 8, allow_nan=False)), max_size=12))
def test_steps_along_faces_are_numpys_aranges(rows):
    """The steps along every wall face at once are the values np.arange gives face by face."""
    start = np.array([a for a, _ in rows], dtype=float)
    stop = start + np.array([b for _, b in rows], dtype=float)
    row, values = aranges(start, stop, WALL_STEP)
    expected = [np.arange(a, b, WALL_STEP) for a, b in zip(start, stop)]
    assert values.tolist() == [v for e in expected for v in e.tolist()]
    assert row.tolist() == [i for i, e in enumerate(expected) for _ in e]


@given(st.lists(st.tuples(st.floats(-1.5, 1.5), st.floats(-1.5, 1.5), heading), min_size=1, max_size=30),
       size, size, st.floats(0.3, 1.5), st.floats(0.3, 1.5), heading)
def test_zone_overlap_shortcut_drops_exactly_the_measured_overlaps(items, depth, width, zone_depth, zone_width,
                                                                    zone_yaw):
    """A candidate is dropped when its footprint shares more than ZONE_OVERLAP_AREA with a
    clear zone, whether a deep corner settled it or the overlap was measured."""
    zone = rectangles(rectangle_corners(_poses([(0.0, 0.0, zone_yaw)]), zone_depth, zone_width))[0]
    poses = _poses(items)
    corners = rectangle_corners(poses, depth, width)
    fps = rectangles(corners)
    keep = np.ones(len(items), bool)
    drop_in_zones(keep, fps, corners, KeepOut.of([zone]))
    measured = shapely.area(shapely.intersection(fps, zone)) > ZONE_OVERLAP_AREA
    assert (~keep).tolist() == measured.tolist()


@given(size, size, st.floats(0.3, 1.5), st.floats(0.3, 1.5), heading, heading,
       st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_a_corner_deep_in_a_zone_overlaps_it_by_more_than_the_threshold(depth, width, zone_depth, zone_width,
                                                                       zone_yaw, yaw, fu, fv):
    zone = rectangles(rectangle_corners(_poses([(0.0, 0.0, zone_yaw)]), zone_depth, zone_width))[0]
    deep = KeepOut.of([zone]).deep
    # A point of the zone's core, and a footprint with a corner on it.
    lo_x, lo_y, hi_x, hi_y = deep.bounds if not deep.is_empty else (0, 0, 0, 0)
    x, y = lo_x + fu * (hi_x - lo_x), lo_y + fv * (hi_y - lo_y)
    if deep.is_empty or not shapely.contains_xy(deep, x, y):
        return
    c, s = math.cos(yaw), math.sin(yaw)
    cx, cy = x + c * depth / 2 - s * width / 2, y + s * depth / 2 + c * width / 2
    fp = rectangles(rectangle_corners(_poses([(cx, cy, yaw)]), depth, width))[0]
    assert np.allclose(shapely.get_coordinates(fp)[0], (x, y))
    assert fp.intersection(zone).area > ZONE_OVERLAP_AREA


@given(st.lists(pose, min_size=1, max_size=25), st.lists(pose, min_size=1, max_size=6), size, size)
def test_rectangles_touched_are_those_meeting_a_shape(items, others, depth, width):
    """Querying a tree of the rectangles with the shapes finds exactly the rectangles that
    meet (touch or overlap) one of the shapes."""
    boxes = rectangles(rectangle_corners(_poses(items), depth, width))
    shapes = list(rectangles(rectangle_corners(_poses(others), width, depth)))
    expected = [i for i, b in enumerate(boxes) if any(b.intersects(sh) for sh in shapes)]
    assert touched(boxes, shapes).tolist() == expected


@pytest.fixture(scope="module")
def shells(tmp_path_factory):
    from homeloop.pipeline.sources.synthetic import generate

    path = tmp_path_factory.mktemp("faces") / "plans.csv"
    generate(path, plans=6, sites=3, seed=3, defect_rate=0.0)
    return [home_shell(p) for p in load_fixture_plans(path)]


def test_wall_faces_run_along_walls_between_doors(shells):
    """Every wall face lies on its room's boundary, is long enough, and runs along a wall: its
    own samples were within WALL_CONTACT of one, so any point of it is within half a sample step more."""
    checked = 0
    for home in shells:
        geo = HomeGeometry(home)
        walls = shapely.union_all([shapely.Polygon(*w.polygon[:1]) for w in home.walls])
        for room in home.rooms:
            geom = RoomGeometry(home, geo, room, 0.3)
            f = geom.faces
            assert (f.s1 - f.s0 >= MIN_FACE_LENGTH).all()
            for a, t, n, s0, s1 in zip(f.a, f.t, f.n, f.s0, f.s1):
                s = np.linspace(s0, s1, max(int(math.ceil((s1 - s0) / FACE_SAMPLE_STEP)), 1) + 1)
                pts = shapely.points(a + s[:, None] * t + n * 0.001)
                assert shapely.dwithin(geom.poly.boundary, pts, 0.002).all()
                assert shapely.dwithin(walls, pts, WALL_CONTACT + FACE_SAMPLE_STEP / 2).all()
                assert np.allclose(np.hypot(*t), 1.0) and abs(float(t @ n)) < 1e-12
                checked += 1
    assert checked > 20


def test_points_far_from_every_door_box_are_far_from_every_door(shells):
    """The boundary samples passed over before measuring against the doors (outside every door's
    bounding box grown by PASSAGE_CONTACT) are all farther than that from every door."""
    rng = np.random.default_rng(0)
    checked = 0
    for home in shells:
        geo = HomeGeometry(home)
        if not geo.passages:
            continue
        lo, hi = geo.passage_bounds[:, :2].min(axis=0) - 1, geo.passage_bounds[:, 2:].max(axis=0) + 1
        xy = rng.uniform(lo, hi, (4000, 2))
        near = shapely.dwithin(shapely.union_all(geo.passage_polys), shapely.points(xy), PASSAGE_CONTACT)
        flagged = geo.by_passage(xy, PASSAGE_CONTACT)
        assert not (near & ~flagged).any()
        checked += int(near.sum())
    assert checked > 0


def test_extents_on_faces_are_each_outlines_reach(shells):
    """A room's extents of an outline on its wall faces are the least and greatest offset and
    position of the outline's corners, face by face."""
    checked = 0
    for home in shells:
        geo = HomeGeometry(home)
        for room in home.rooms:
            geom = RoomGeometry(home, geo, room, 0.3)
            outlines = [shapely.get_coordinates(p) for _, _, p in geom.features] + [
                np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 2.0], [0.0, 0.0]])]
            got = geom.extents_on_faces(outlines)
            f = geom.faces
            for k, corners in enumerate(outlines):
                for j in range(len(f)):
                    off = (corners - f.a[j]) @ f.n[j]
                    along = (corners - f.a[j]) @ f.t[j]
                    assert np.allclose(got[:, j, k], [off.min(), off.max(), along.min(), along.max()])
                    checked += 1
    assert checked > 50


def test_a_rooms_free_floor_kept_as_furniture_is_added_is_the_floor_left(shells):
    """The free floor kept room by room (only what was placed since taken off) covers the same
    floor as the empty room's free floor less every placed footprint grown by the body's radius,
    also after the room starts afresh with fewer pieces."""
    catalog = load_catalog()
    entry = catalog.furniture["nightstand"]
    home = shells[0]
    f = FurnishContext(catalog, np.random.default_rng(0), home)
    room = max(home.rooms, key=lambda r: shapely.Polygon(*r.polygon[:1]).area)
    geom = RoomGeometry(home, f.geo, room, f.radius)
    centre = geom.pole()

    def left_by_all_placed():
        grown = navigation.dilate([p.footprint for p in f.placed[room.id]], f.radius)
        return geom.base_free().difference(shapely.union_all(grown))

    for k in range(3):
        f.record(entry, geom, Pose(x=centre.x + 0.4 * k, y=centre.y - 0.3 * k, yaw=0.3 * k), "item")
        free = room_free(f, geom)
        assert free.area < geom.base_free().area - 0.1 * (k + 1)
        assert free.symmetric_difference(left_by_all_placed()).area < 1e-9
    f.placed[room.id] = f.placed[room.id][:1]  # the room started afresh
    assert room_free(f, geom).symmetric_difference(left_by_all_placed()).area < 1e-9
