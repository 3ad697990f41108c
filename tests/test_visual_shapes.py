"""The primitives visual meshes are made of (homeloop/core/visuals/shapes.py): closed, wound
outward, and exactly the solid they are asked for, whatever their sizes and orientation."""

from __future__ import annotations

import math

import numpy as np
import trimesh
from hypothesis import given
from hypothesis import strategies as st
from shapely.geometry import Point
from shapely.geometry import box as rect

from homeloop.core.visuals.shapes import MIN_BEVEL, bevelled_box, cylinder, extruded, frustum, lathe, rod

size = st.floats(0.01, 2.0)
coord = st.floats(-3.0, 3.0)
SECTIONS = 12


def _closed_outward(mesh: trimesh.Trimesh) -> None:
    """Every edge shared by two faces wound oppositely (watertight and consistent, after welding
    the vertices a primitive may repeat), and a positive volume: the faces look outward."""
    welded = mesh.copy()
    welded.merge_vertices()
    assert welded.is_watertight and welded.is_winding_consistent
    assert mesh.volume > 0


def _polygon_area(sides: int, radius: float) -> float:
    return 0.5 * sides * radius * radius * math.sin(2 * math.pi / sides)


@given(coord, coord, coord, size, size)
def test_a_cylinder_is_the_prism_of_its_polygon(x, y, z0, height, radius):
    mesh = cylinder(x, y, z0, z0 + height, radius, sections=SECTIONS)
    _closed_outward(mesh)
    assert math.isclose(mesh.volume, _polygon_area(SECTIONS, radius) * height, rel_tol=1e-9)
    assert np.allclose(mesh.bounds[:, 2], [z0, z0 + height])
    assert np.allclose(np.hypot(*(mesh.vertices[:, :2] - (x, y)).T).max(), radius)


@given(st.tuples(coord, coord, coord), st.tuples(coord, coord, coord), size)
def test_a_rod_runs_from_start_to_end(start, end, radius):
    a, b = np.array(start), np.array(end)
    length = float(np.linalg.norm(b - a))
    if length < 1e-3:
        return
    mesh = rod(start, end, radius, sections=SECTIONS)
    _closed_outward(mesh)
    assert math.isclose(mesh.volume, _polygon_area(SECTIONS, radius) * length, rel_tol=1e-6)
    axis = (b - a) / length
    along = (mesh.vertices - a) @ axis
    assert math.isclose(along.min(), 0.0, abs_tol=1e-9) and math.isclose(along.max(), length, rel_tol=1e-9)
    across = np.linalg.norm((mesh.vertices - a) - np.outer(along, axis), axis=1)
    assert across.max() <= radius * (1 + 1e-9)


@given(size, size, size, st.one_of(st.just(0.0), st.floats(0.0, 0.2)), st.floats(-0.3, 0.3))
def test_a_bevelled_box_is_the_hull_of_its_corners(dx, dy, dz, bevel, lean):
    mesh = bevelled_box(0.0, 0.0, 0.0, dx, dy, dz, bevel, lean=lean)
    _closed_outward(mesh)
    hull = trimesh.convex.convex_hull(mesh.vertices)
    assert math.isclose(mesh.volume, hull.volume, rel_tol=1e-6)
    assert np.allclose(mesh.bounds[:, 2], [0.0, dz])
    if lean == 0.0:
        assert np.allclose(mesh.bounds, [[0.0, 0.0, 0.0], [dx, dy, dz]])
        assert len(mesh.faces) == (44 if bevel >= MIN_BEVEL else 12)


@given(st.sampled_from("xyz"), size, size, st.floats(0.0, 0.9), coord, size)
def test_an_extruded_profile_keeps_its_area_and_hole(axis, du, dv, hole, a0, depth):
    outer = rect(0.0, 0.0, du, dv)
    radius = hole * min(du, dv) / 2
    profile = outer.difference(Point(du / 2, dv / 2).buffer(radius, quad_segs=4)) if radius > 1e-3 else outer
    mesh = extruded(profile, axis, a0, a0 + depth)
    _closed_outward(mesh)
    assert math.isclose(mesh.volume, profile.area * depth, rel_tol=1e-6)
    w = "xyz".index(axis)
    assert np.allclose(mesh.bounds[:, w], [a0, a0 + depth])


@given(coord, coord, st.lists(st.tuples(size, size), min_size=1, max_size=4), size)
def test_a_lathe_body_is_closed_at_its_poles(x, y, rings, top):
    profile = [(0.0, 0.0)]
    z = 0.0
    for r, rise in rings:
        z += rise
        profile.append((r, z))
    profile.append((0.0, z + top))
    mesh = lathe(x, y, profile, sections=SECTIONS)
    _closed_outward(mesh)
    assert np.allclose(mesh.bounds[:, 2], [0.0, z + top])


def test_a_frustum_is_a_lathe_of_two_radii():
    mesh = frustum(0.0, 0.0, 0.0, 1.0, 0.3, 0.1, sections=SECTIONS)
    _closed_outward(mesh)
    radii = np.hypot(mesh.vertices[:, 0], mesh.vertices[:, 1])
    assert np.isclose(radii[mesh.vertices[:, 2] == 0.0].max(), 0.3)
    assert np.isclose(radii[mesh.vertices[:, 2] == 1.0].max(), 0.1)
