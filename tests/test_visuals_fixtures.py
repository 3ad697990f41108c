"""Visual meshes of the plan's fixtures (homeloop/core/visuals/fixtures.py).

Every fixture kind, on rectangles of any size, turn and height: closed parts inside the prism the
geometric backend holds (footprint x [0, height]), several parts where the kind has them, the same
bytes every time, a material for every role in the kind's palette. The house's fixtures all build,
each with its back toward its room's wall; an L-shaped footprint and one a range cuts stay inside.
"""

from __future__ import annotations

import math
import typing

import numpy as np
import pytest
import shapely
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely import affinity
from shapely.geometry import Point, Polygon
from shapely.geometry import box as rect

from homeloop.core.catalog import load_catalog
from homeloop.core.home import FixtureKind, polygon_from_rings
from homeloop.core.visuals import VisualPart, material_of
from homeloop.core.visuals.fixtures import (
    FIXTURE_BUILDERS,
    PRISM_KINDS,
    fixture_back,
    fixture_visual,
    fixture_visuals,
    visual_footprints,
)

from visual_checks import digest, open_parts

CATALOG = load_catalog()
KINDS = sorted(typing.get_args(FixtureKind))
#: How far (m) a vertex may lie outside the prism: float noise of the turn, nothing more.
TOUCH = 1e-5


def outside_prism(parts: list[VisualPart], footprint: Polygon, height: float) -> list[str]:
    """The parts with a vertex outside the footprint (grown by :data:`TOUCH`) or outside [0, height]."""
    grown = footprint.buffer(TOUCH)
    out = []
    for p in parts:
        v = np.asarray(p.mesh.vertices, dtype=float)
        if v[:, 2].min() < -TOUCH or v[:, 2].max() > height + TOUCH:
            out.append(p.name)
        elif not shapely.contains_xy(grown, v[:, 0], v[:, 1]).all():
            out.append(p.name)
    return out






def rectangle(cx: float, cy: float, length: float, width: float, turn: float) -> Polygon:
    poly: Polygon = affinity.rotate(rect(-length / 2, -width / 2, length / 2, width / 2), turn, origin=(0, 0),
                                    use_radians=True)
    return affinity.translate(poly, cx, cy)


def unresolved_roles(kind: str, parts: list[VisualPart]) -> list[str]:
    palette = CATALOG.palettes.get(kind)
    return sorted({p.role for p in parts} - (set(palette.roles) if palette is not None else set()))


# --- every kind on random rectangles -------------------------------------------------------------------


def test_every_kind_has_a_builder_or_is_a_prism():
    assert set(KINDS) == set(FIXTURE_BUILDERS) | PRISM_KINDS
    assert not set(FIXTURE_BUILDERS) & PRISM_KINDS


@settings(max_examples=120, deadline=None)
@given(kind=st.sampled_from(KINDS), length=st.floats(0.2, 3.5), width=st.floats(0.2, 3.5),
       height=st.floats(0.3, 2.8), turn=st.floats(-math.pi, math.pi), cx=st.floats(-20, 20), cy=st.floats(-20, 20),
       back_turn=st.one_of(st.none(), st.floats(-math.pi, math.pi)))
def test_a_rectangle_of_any_kind_gives_closed_parts_inside_its_prism(kind, length, width, height, turn, cx, cy,
                                                                     back_turn):
    footprint = rectangle(cx, cy, length, width, turn)
    back = None if back_turn is None else (math.cos(back_turn), math.sin(back_turn))
    parts = fixture_visual(kind, footprint, height, back)
    assert parts
    assert open_parts(parts, wound=True) == []
    assert outside_prism(parts, footprint, height) == []
    assert len({p.name for p in parts}) == len(parts)
    assert (len(parts) > 1) == (kind not in PRISM_KINDS)
    assert unresolved_roles(kind, parts) == []
    assert digest(fixture_visual(kind, footprint, height, back)) == digest(parts)


@pytest.mark.parametrize("kind", KINDS)
def test_every_role_has_materials_in_its_kind_palette(kind):
    palette = CATALOG.palettes[kind]
    roles = {p.role for p in fixture_visual(kind, rect(0, 0, 1.6, 0.8), 0.9, (0.0, 1.0))}
    roles |= {"body"} | ({"top"} if kind not in PRISM_KINDS else set())  # the prism fallback's
    assert roles <= set(palette.roles)
    for role in roles:
        assert {material_of(CATALOG, kind, role, v).id for v in range(12)} == set(palette.roles[role])


@pytest.mark.parametrize("kind", sorted(FIXTURE_BUILDERS))
def test_the_back_decides_where_the_front_looks(kind):
    """Turning ``back`` with the footprint turns the visual with it: the same parts, moved alike."""
    base = rect(-0.4, -0.3, 0.4, 0.3)
    turn = 0.7
    one = fixture_visual(kind, base, 0.9, (0.0, 1.0))
    turned = fixture_visual(kind, affinity.rotate(base, turn, origin=(0, 0), use_radians=True), 0.9,
                            (-math.sin(turn), math.cos(turn)))
    c, s = math.cos(turn), math.sin(turn)
    spin = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    assert [p.name for p in one] == [p.name for p in turned]
    for a, b in zip(one, turned):
        assert np.allclose(np.asarray(a.mesh.vertices) @ spin.T, b.mesh.vertices, atol=1e-6), a.name


def test_a_sink_and_a_bath_are_hollow_and_a_toilet_bowl_is_a_recess():
    """Looking down the middle of the basin, the tub and the bowl: the first face met lies well under
    the rim round it."""
    for kind, size, height in (("sink", (0.6, 0.5), 0.85), ("bathtub", (1.7, 0.75), 0.6), ("toilet", (0.7, 0.4), 0.9)):
        footprint = rect(0, 0, *size)
        back = (0.0, 1.0) if kind != "toilet" else (-1.0, 0.0)
        parts = [p for p in fixture_visual(kind, footprint, height, back) if p.role not in ("fitting", "seat")]
        hollow = next(p for p in parts if p.name in ("basin", "tub", "bowl")).mesh
        rim = float(hollow.vertices[:, 2].max())
        inside = Point(*hollow.bounds.mean(axis=0)[:2])  # the bowl's middle
        mesh = trimesh.util.concatenate([p.mesh for p in parts])
        xy = [(inside.x + dx, inside.y + dy) for dx in (-0.05, 0.0, 0.05) for dy in (-0.05, 0.0, 0.05)]
        if kind == "sink":
            xy = [(x, y - 0.02) for x, y in xy]  # the tap stands at the back
        hits, rays, _ = mesh.ray.intersects_location(np.array([(x, y, 3.0) for x, y in xy]),
                                                     np.tile([0.0, 0.0, -1.0], (len(xy), 1)), multiple_hits=False)
        assert len(rays) == len(xy)
        assert (hits[:, 2] < rim - 0.06).all(), (kind, rim, hits[:, 2])


def test_stairs_rise_along_the_long_side_toward_the_back():
    footprint = rect(-1.5, -0.5, 1.5, 0.5)
    parts = fixture_visual("stairs", footprint, 2.6, (1.0, 0.0))
    treads = next(p for p in parts if p.name == "treads").mesh.vertices
    low, high = treads[treads[:, 0] < -1.3], treads[treads[:, 0] > 1.3]
    assert high[:, 2].max() == pytest.approx(2.6) and low[:, 2].max() < 0.5


# --- footprints that are no rectangle ---------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(KINDS), arm=st.floats(0.5, 2.5), depth=st.floats(0.3, 0.8),
       turn=st.floats(-math.pi, math.pi), height=st.floats(0.5, 2.6))
def test_an_l_shaped_footprint_stays_inside(kind, arm, depth, turn, height):
    l_shape = rect(0, 0, arm + depth, depth).union(rect(0, 0, depth, arm + depth))
    footprint = affinity.rotate(l_shape, turn, origin=(0, 0), use_radians=True)
    parts = fixture_visual(kind, footprint, height, (math.sin(turn), -math.cos(turn)))
    assert parts and open_parts(parts, wound=True) == []
    assert outside_prism(parts, footprint, height) == []
    assert unresolved_roles(kind, parts) == []
    if kind in FIXTURE_BUILDERS:
        assert len({p.name.split("_")[0] for p in parts}) == 2  # one set of parts per rectangle


@pytest.mark.parametrize("kind", ["counter", "built_in_furniture", "sink"])
def test_a_run_cut_by_a_range_and_a_round_footprint_stay_inside(kind):
    run = rectangle(5.0, 2.0, 3.2, 0.6, 0.3)
    cut = run.difference(rectangle(5.0, 2.0, 0.6, 0.8, 0.3))  # a range standing in the run
    sliver = run.difference(rectangle(5.0, 2.0, 3.17, 0.8, 0.3))  # what a range leaves at the ends
    round_ = Point(1.0, 1.0).buffer(0.6)  # no rectangles: its prism under a top slab
    for footprint in (cut, sliver, round_, cut.union(round_)):
        parts = fixture_visual(kind, footprint, 0.9, (0.0, 1.0))
        assert parts and open_parts(parts, wound=True) == []
        assert outside_prism(parts, footprint, 0.9) == []
        assert unresolved_roles(kind, parts) == []
    assert {p.role for p in fixture_visual(kind, round_, 0.9, None)} == {"body", "top"}


# --- the house --------------------------------------------------------------------------------------------


def test_the_house_fixtures_all_build_inside_their_solids_with_their_backs_to_a_wall(house_home):
    from homeloop.core.navigation import fixture_solids

    solids = {x.id: poly for x, poly in fixture_solids(house_home)}
    footprints = {x.id: poly for x, poly in visual_footprints(house_home)}
    rooms = {r.id: polygon_from_rings(r.polygon) for r in house_home.rooms}
    built = fixture_visuals(house_home)
    assert [x.id for x, _ in built] == [x.id for x in house_home.fixtures]
    for x, parts in built:
        assert parts and open_parts(parts, wound=True) == [], x.id
        assert footprints[x.id].difference(solids[x.id]).area <= 1e-9
        assert outside_prism(parts, footprints[x.id], x.height) == [], x.id
        assert unresolved_roles(x.kind, parts) == [], x.id
        assert (len(parts) > 1) == (x.kind not in PRISM_KINDS), x.id
        own = polygon_from_rings(x.polygon)
        back = np.array(fixture_back(own, rooms[x.room], x.kind))
        assert np.hypot(*back) == pytest.approx(1.0)
        centre = np.array(own.centroid.coords[0])
        reach = max(float((np.array(c) - centre) @ back) for c in own.exterior.coords)
        assert rooms[x.room].boundary.distance(Point(*(centre + back * reach))) <= 0.1, (x.id, back)
    again = fixture_visuals(house_home)
    assert digest([p for _, ps in built for p in ps]) == digest([p for _, ps in again for p in ps])


def test_a_toilet_in_a_corner_turns_its_tank_to_the_short_wall_and_a_counter_its_back_to_the_long():
    room = rect(0, 0, 3.0, 2.0)
    toilet = rect(0, 0, 0.4, 0.7)  # in the corner: both the wall at x = 0 and the one at y = 0 touch it
    assert fixture_back(toilet, room, "toilet") == pytest.approx((0.0, -1.0))
    counter = rect(0, 1.4, 2.4, 2.0)
    assert fixture_back(counter, room, "counter") == pytest.approx((0.0, 1.0))
    assert fixture_back(rect(1.0, 0.8, 1.6, 2.0), room) == pytest.approx((0.0, 1.0))
