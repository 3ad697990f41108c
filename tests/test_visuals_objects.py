"""The visuals of carryable objects and device bodies (homeloop/core/visuals/objects.py and
devices.py): closed parts inside the entry's or the body's bounds, handles where the catalog's
grasp points are, devices on the face they are fixed to, the same bytes every time, and a
material for every role from the catalog's palettes."""

from __future__ import annotations


import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

from homeloop.core.catalog import Dimensions, ObjectEntry, load_catalog
from homeloop.core.geometry_assets import (DEVICE_BODIES, DEVICE_BODIES_BY_TYPE, STANDING_MOUNTS, WALL_MOUNTS,
                                           BodySize, device_body_size)
from homeloop.core.visuals import VisualPart, device_visual, material_of, object_visual
from homeloop.core.visuals.devices import DEVICE_BUILDERS
from homeloop.core.visuals.objects import OBJECT_BUILDERS

from visual_checks import digest, open_parts

CATALOG = load_catalog()
OBJECTS = sorted(CATALOG.objects)
#: Every mount a body has: each builder must fill any body's box the right way round.
MOUNTS = sorted(DEVICE_BODIES)
DEVICE_TYPES = sorted(t for t in CATALOG.devices if t in DEVICE_BUILDERS)
#: Lengths closer than this (m) are the same.
EPS = 1e-9
#: How far (m) past the visual a grasp point may lie beyond its own distance to the entry's
#: bounds: about half a hand's width.
GRASP_REACH = 0.03


def _entry_bounds(entry: ObjectEntry) -> tuple[np.ndarray, np.ndarray]:
    d = entry.dimensions
    return np.array([-d.depth / 2, -d.width / 2, 0.0]), np.array([d.depth / 2, d.width / 2, d.height])


def _outside_entry(entry: ObjectEntry, parts: list[VisualPart]) -> list[str]:
    """The parts with a vertex outside the entry's box (and, for a cylinder, its circle)."""
    lo, hi = _entry_bounds(entry)
    radius = min(entry.dimensions.width, entry.dimensions.depth) / 2
    out = []
    for p in parts:
        v = p.mesh.vertices
        if (v < lo - EPS).any() or (v > hi + EPS).any():
            out.append(p.name)
        elif entry.shape == "cylinder" and np.hypot(v[:, 0], v[:, 1]).max() > radius + EPS:
            out.append(p.name)
    return out


def _outside_body(size: BodySize, parts: list[VisualPart]) -> list[str]:
    lo = np.array([-size.depth / 2, -size.width / 2, 0.0])
    hi = np.array([size.depth / 2, size.width / 2, size.height])
    return [p.name for p in parts if (p.mesh.vertices < lo - EPS).any() or (p.mesh.vertices > hi + EPS).any()]






def _unresolved_roles(semantic_class: str, parts: list[VisualPart]) -> list[str]:
    """Roles neither the class's palette nor the default palette names (they would fall back
    to the default body's material)."""
    own = CATALOG.palettes.get(semantic_class)
    named = set(CATALOG.palettes["default"].roles) | (set(own.roles) if own is not None else set())
    return sorted({p.role for p in parts} - named)


def _distance_to(parts: list[VisualPart], point: np.ndarray) -> float:
    """How far ``point`` is from the visual: 0 inside a part, else to its nearest surface."""
    if any(p.mesh.contains(point[None])[0] for p in parts):
        return 0.0
    triangles = np.concatenate([p.mesh.triangles for p in parts])
    nearest = trimesh.triangles.closest_point(triangles, np.repeat(point[None], len(triangles), axis=0))
    return float(np.linalg.norm(nearest - point, axis=1).min())


# --- objects --------------------------------------------------------------------------------------------


def test_every_object_class_and_device_body_has_a_builder():
    assert {e.semantic_class for e in CATALOG.objects.values()} <= set(OBJECT_BUILDERS)
    with_body = {t for t, d in CATALOG.devices.items() if device_body_size(t, d.placement.mount) is not None}
    with_body |= {t for t, _ in DEVICE_BODIES_BY_TYPE}
    assert with_body <= set(DEVICE_BUILDERS)


@pytest.mark.parametrize("object_id", OBJECTS)
def test_an_object_is_closed_parts_inside_its_bounds(object_id):
    entry = CATALOG.objects[object_id]
    parts = object_visual(entry)
    assert len(parts) > 1
    assert len({p.name for p in parts}) == len(parts)
    assert open_parts(parts) == []
    assert _outside_entry(entry, parts) == []


@pytest.mark.parametrize("object_id", OBJECTS)
def test_grasp_points_are_on_the_visual(object_id):
    """A hand reaching a grasp point finds the visual there: a grasp point inside the entry's
    bounds is within a hand's reach of a part, and one the catalog sets outside them no farther
    than that beyond the bounds."""
    entry = CATALOG.objects[object_id]
    parts = object_visual(entry)
    lo, hi = _entry_bounds(entry)
    for grasp in entry.grasp_points:
        point = np.array([grasp.offset.x, grasp.offset.y, grasp.offset.z])
        beyond = float(np.linalg.norm(point - np.clip(point, lo, hi)))
        assert _distance_to(parts, point) <= beyond + GRASP_REACH, grasp.name


@pytest.mark.parametrize("object_id", OBJECTS)
def test_an_object_visual_is_the_same_bytes_every_time(object_id):
    entry = CATALOG.objects[object_id]
    assert digest(object_visual(entry)) == digest(object_visual(entry))


@pytest.mark.parametrize("object_id", OBJECTS)
def test_every_object_role_has_materials(object_id):
    entry = CATALOG.objects[object_id]
    parts = object_visual(entry)
    assert _unresolved_roles(entry.semantic_class, parts) == []
    for p in parts:
        for variant in range(4):
            assert material_of(CATALOG, entry.semantic_class, p.role, variant).id in CATALOG.materials


def test_pill_boxes_keep_their_colour():
    """Every pill box's body plays ``tinted`` (the renderer colours it from the box's colour
    word), the colour words differ, and the palette still has a material for it."""
    boxes = [e for e in CATALOG.objects.values() if e.semantic_class == "pill_box"]
    assert len({e.colour for e in boxes}) == len(boxes) > 1
    for entry in boxes:
        tinted = [p for p in object_visual(entry) if p.role == "tinted"]
        assert tinted
        assert sum(p.mesh.volume for p in tinted) > 0.5 * np.prod(_entry_bounds(entry)[1] - _entry_bounds(entry)[0])
    assert "tinted" in CATALOG.palettes["pill_box"].roles


def test_the_pan_is_centred_on_its_burner_with_its_rim_at_the_top():
    """The fire effects put flames at the object's origin, at its height: the pan's bowl is
    centred there and its rim is the visual's top."""
    for entry in (e for e in CATALOG.objects.values() if e.semantic_class == "pan"):
        parts = {p.name: p for p in object_visual(entry)}
        bowl = parts["pan"].mesh.bounds
        assert np.allclose((bowl[0][:2] + bowl[1][:2]) / 2, 0.0, atol=1e-6)
        assert bowl[1][2] == pytest.approx(entry.dimensions.height)
        assert max(p.mesh.bounds[1][2] for p in parts.values()) == pytest.approx(entry.dimensions.height)


@settings(max_examples=40)
@given(st.sampled_from(OBJECTS), st.tuples(*[st.floats(0.7, 1.4)] * 3))
def test_resized_objects_stay_inside_their_bounds(object_id, scale):
    entry = CATALOG.objects[object_id]
    d = entry.dimensions
    resized = entry.model_copy(update={"dimensions": Dimensions(width=d.width * scale[0], depth=d.depth * scale[1],
                                                                height=d.height * scale[2])})
    parts = object_visual(resized)
    assert _outside_entry(resized, parts) == []
    assert open_parts(parts) == []


# --- devices --------------------------------------------------------------------------------------------


def _size(device_type: str, mount: str) -> BodySize:
    size = device_body_size(device_type, mount)
    assert size is not None
    return size


@pytest.mark.parametrize("mount", MOUNTS)
@pytest.mark.parametrize("device_type", DEVICE_TYPES)
def test_a_device_is_closed_parts_inside_its_body(device_type, mount):
    size = _size(device_type, mount)
    parts = device_visual(device_type, size, mount)
    assert len(parts) > 1
    assert len({p.name for p in parts}) == len(parts)
    assert open_parts(parts) == []
    assert _outside_body(size, parts) == []


@pytest.mark.parametrize("mount", MOUNTS)
@pytest.mark.parametrize("device_type", DEVICE_TYPES)
def test_a_device_rests_on_what_it_is_fixed_to(device_type, mount):
    """The visual touches the face of its body's box that its mount is: the wall side (-x) for a
    wall mount, the top for a ceiling, the bottom for the rest."""
    size = _size(device_type, mount)
    vertices = np.concatenate([p.mesh.vertices for p in device_visual(device_type, size, mount)])
    if mount in WALL_MOUNTS:
        assert vertices[:, 0].min() == pytest.approx(-size.depth / 2, abs=1e-6)
    elif mount == "ceiling":
        assert vertices[:, 2].max() == pytest.approx(size.height, abs=1e-6)
    else:
        assert vertices[:, 2].min() == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("device_type", DEVICE_TYPES)
def test_a_device_visual_is_the_same_bytes_every_time(device_type):
    mount = CATALOG.devices[device_type].placement.mount
    size = _size(device_type, mount)
    assert digest(device_visual(device_type, size, mount)) == digest(device_visual(device_type, size, mount))


@pytest.mark.parametrize("mount", MOUNTS)
@pytest.mark.parametrize("device_type", DEVICE_TYPES)
def test_every_device_role_has_materials(device_type, mount):
    parts = device_visual(device_type, _size(device_type, mount), mount)
    assert _unresolved_roles(device_type, parts) == []
    for p in parts:
        for variant in range(4):
            assert material_of(CATALOG, device_type, p.role, variant).id in CATALOG.materials


def test_lamps_stand_and_fittings_hang():
    """A light on furniture or the floor is a lamp whose shade is its top; on a ceiling it is a
    fitting whose diffuser faces down (its lowest part)."""
    for mount in sorted(STANDING_MOUNTS):
        parts = {p.name: p.mesh for p in device_visual("light", _size("light", mount), mount)}
        assert {"base", "stem", "shade"} <= set(parts)
        assert parts["shade"].bounds[1][2] == pytest.approx(_size("light", mount).height)
        assert parts["base"].bounds[0][2] == pytest.approx(0.0, abs=1e-9)
    parts = {p.name: p.mesh for p in device_visual("light", _size("light", "ceiling"), "ceiling")}
    assert parts["diffuser"].bounds[0][2] == pytest.approx(0.0, abs=1e-6)


@settings(max_examples=40)
@given(st.sampled_from(DEVICE_TYPES), st.sampled_from(MOUNTS), st.tuples(*[st.floats(0.7, 1.4)] * 3))
def test_resized_bodies_stay_filled_from_inside(device_type, mount, scale):
    base = _size(device_type, mount)
    size = BodySize(base.width * scale[0], base.depth * scale[1], base.height * scale[2])
    parts = device_visual(device_type, size, mount)
    assert _outside_body(size, parts) == []
    assert open_parts(parts) == []
