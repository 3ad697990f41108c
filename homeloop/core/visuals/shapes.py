"""Closed low-poly primitives the visual meshes are made of, in metres, z up.

Each returns a watertight :class:`trimesh.Trimesh` placed by its low corner or its base centre,
so a builder reads like a drawing: ``box(x0, y0, z0, x1, y1, z1)``, ``cylinder(x, y, z0, z1, r)``.
Facet counts stay small: a frame holds hundreds of these.
"""

from __future__ import annotations

import math

import numpy as np
import trimesh
from shapely.geometry import Point, Polygon

#: Facets round a round part: smooth enough at 640x360, small enough for USD.
ROUND_SECTIONS = 20


#: A unit cube's corners (centred on the origin) and its outward triangles, scaled by :func:`box`.
_CUBE = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
_CUBE_VERTICES = np.asarray(_CUBE.vertices, dtype=float)
_CUBE_FACES = np.asarray(_CUBE.faces, dtype=np.int64)


def box(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float) -> trimesh.Trimesh:
    """An axis-aligned box between two corners."""
    size = np.abs([x1 - x0, y1 - y0, z1 - z0])
    centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2])
    return trimesh.Trimesh(_CUBE_VERTICES * size + centre, _CUBE_FACES.copy(), process=False)


def cylinder(x: float, y: float, z0: float, z1: float, radius: float,
             sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """An upright cylinder on (x, y) from ``z0`` to ``z1``."""
    mesh: trimesh.Trimesh = trimesh.creation.cylinder(radius=radius, height=z1 - z0, sections=sections)
    mesh.apply_translation((x, y, (z0 + z1) / 2))
    return mesh


def rod(start: tuple[float, float, float], end: tuple[float, float, float], radius: float,
        sections: int = 8) -> trimesh.Trimesh:
    """A cylinder from ``start`` to ``end`` (a leg, a handle bar, a spout)."""
    mesh: trimesh.Trimesh = trimesh.creation.cylinder(radius=radius, segment=np.array([start, end], dtype=float),
                                                      sections=sections)
    return mesh


def disc(x: float, y: float, z: float, radius: float, thickness: float, axis: str = "z",
         sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """A flat cylinder centred at (x, y, z) whose faces look along ``axis`` (a burner, a drum door)."""
    half = thickness / 2
    offset = {"x": (half, 0.0, 0.0), "y": (0.0, half, 0.0), "z": (0.0, 0.0, half)}[axis]
    start = (x - offset[0], y - offset[1], z - offset[2])
    end = (x + offset[0], y + offset[1], z + offset[2])
    return rod(start, end, radius, sections)


def ellipsoid(x: float, y: float, z: float, rx: float, ry: float, rz: float,
              subdivisions: int = 2) -> trimesh.Trimesh:
    """An ellipsoid centred at (x, y, z) with semi-axes ``rx``, ``ry``, ``rz``."""
    mesh: trimesh.Trimesh = trimesh.creation.icosphere(subdivisions=subdivisions, radius=1.0)
    mesh.apply_scale((rx, ry, rz))  # type: ignore[no-untyped-call]
    mesh.apply_translation((x, y, z))
    return mesh


def cone(x: float, y: float, z0: float, z1: float, radius: float, sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """An upright cone with its base on (x, y, z0) and its tip at ``z1``."""
    mesh: trimesh.Trimesh = trimesh.creation.cone(radius=radius, height=z1 - z0, sections=sections)
    mesh.apply_translation((x, y, z0))
    return mesh


def frustum(x: float, y: float, z0: float, z1: float, r0: float, r1: float,
            sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """An upright truncated cone: radius ``r0`` at ``z0``, ``r1`` at ``z1`` (a pot, a vase, a lampshade)."""
    profile = np.array([[0.0, z0], [r0, z0], [r1, z1], [0.0, z1]])
    mesh: trimesh.Trimesh = trimesh.creation.revolve(profile, sections=sections)
    mesh.apply_translation((x, y, 0.0))
    if mesh.volume < 0:
        mesh.invert()
    return mesh


def torus_arc(centre: tuple[float, float, float], major: float, minor: float, normal: str = "y",
              sections: int = 16, tube_sections: int = 6) -> trimesh.Trimesh:
    """A ring (a mug's or a can's handle) round ``centre``, in the plane across ``normal``."""
    mesh: trimesh.Trimesh = trimesh.creation.torus(major_radius=major, minor_radius=minor,
                                                   major_sections=sections, minor_sections=tube_sections)
    if normal != "z":
        axis = {"x": (0.0, 1.0, 0.0), "y": (1.0, 0.0, 0.0)}[normal]
        mesh.apply_transform(trimesh.transformations.rotation_matrix(math.pi / 2, axis))
    mesh.apply_translation(centre)
    return mesh


def rotated_z(mesh: trimesh.Trimesh, angle: float, about: tuple[float, float] = (0.0, 0.0)) -> trimesh.Trimesh:
    """``mesh`` turned by ``angle`` (rad) about the vertical line through ``about`` (a copy)."""
    out = mesh.copy()
    out.apply_transform(trimesh.transformations.rotation_matrix(angle, (0.0, 0.0, 1.0), (about[0], about[1], 0.0)))
    return out


def bevelled_box(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float, bevel: float,
                 lean: float = 0.0) -> trimesh.Trimesh:
    """A box between two corners with its edges chamfered by ``bevel`` (a cushion, a mattress, a
    pillow), its top shifted ``lean`` along x from its bottom (a back cushion leaning back): the
    convex hull of the three boxes each cut back by ``bevel`` across two axes."""
    lo, hi = np.array([x0, y0, z0]), np.array([x1, y1, z1])
    b = min(bevel, *((hi - lo) / 2.01))
    points = []
    for cut in ((0.0, b, b), (b, 0.0, b), (b, b, 0.0)):
        c = np.array(cut)
        a, z = lo + c, hi - c
        points += [(x, y, zz) for x in (a[0], z[0]) for y in (a[1], z[1]) for zz in (a[2], z[2])]
    pts = np.array(points, dtype=float)
    pts[:, 0] += lean * (pts[:, 2] - z0) / (z1 - z0)
    mesh: trimesh.Trimesh = trimesh.convex.convex_hull(pts)
    return mesh


#: The coordinates a profile's (u, v) name, for each axis it is extruded along.
_PROFILE_AXES = {"x": (1, 2, 0), "y": (0, 2, 1), "z": (0, 1, 2)}


def extruded(profile: Polygon, axis: str, a0: float, a1: float) -> trimesh.Trimesh:
    """A polygon (holes allowed) extruded along ``axis`` from ``a0`` to ``a1``; the profile's (u, v)
    are (y, z) across x, (x, z) across y and (x, y) across z (a blanket's drape, a plate with a
    porthole, a rug's border)."""
    flat: trimesh.Trimesh = trimesh.creation.extrude_polygon(profile, a1 - a0, engine="earcut")
    uvw = np.asarray(flat.vertices, dtype=float) + (0.0, 0.0, a0)
    u, v, w = _PROFILE_AXES[axis]
    xyz = np.zeros_like(uvw)
    xyz[:, u], xyz[:, v], xyz[:, w] = uvw[:, 0], uvw[:, 1], uvw[:, 2]
    mesh = trimesh.Trimesh(xyz, np.asarray(flat.faces), process=False)
    if mesh.volume < 0:
        mesh.invert()
    return mesh


def round_hole(u: float, v: float, radius: float) -> Polygon:
    """A circle of :data:`ROUND_SECTIONS` facets, to cut from a profile."""
    return Point(u, v).buffer(radius, quad_segs=ROUND_SECTIONS // 4)


def ring(x: float, y: float, z: float, inner: float, outer: float, thickness: float, axis: str = "z",
         sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """A flat ring centred at (x, y, z) whose faces look along ``axis`` (a porthole's frame, a coil)."""
    half = thickness / 2
    offset = {"x": (half, 0.0, 0.0), "y": (0.0, half, 0.0), "z": (0.0, 0.0, half)}[axis]
    segment = np.array([(x - offset[0], y - offset[1], z - offset[2]), (x + offset[0], y + offset[1], z + offset[2])])
    mesh: trimesh.Trimesh = trimesh.creation.annulus(r_min=inner, r_max=outer, segment=segment, sections=sections)
    return mesh


def lathe(x: float, y: float, profile: list[tuple[float, float]], sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """A body of revolution about the vertical through (x, y): ``profile`` lists (radius, z) from the
    bottom of the axis up to its top, both ends on the axis (a vase, a lampshade)."""
    mesh: trimesh.Trimesh = trimesh.creation.revolve(np.asarray(profile, dtype=float), sections=sections)
    mesh.apply_translation((x, y, 0.0))
    if mesh.volume < 0:
        mesh.invert()
    return mesh


def merged(meshes: list[trimesh.Trimesh]) -> trimesh.Trimesh:
    """Closed meshes (four legs, a row of books) as one, each keeping its own vertices."""
    if len(meshes) == 1:
        return meshes[0]
    offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
    vertices = np.vstack([np.asarray(m.vertices, dtype=float) for m in meshes])
    faces = np.vstack([np.asarray(m.faces, dtype=np.int64) + o for m, o in zip(meshes, offsets)])
    return trimesh.Trimesh(vertices, faces, process=False)


def handle(x_face: float, x_out: float, y: float, z: float, length: float, along: str) -> trimesh.Trimesh:
    """A bar handle along ``along`` (y or z) centred at (y, z), standing from the face it is fixed
    to (``x_face``) out to ``x_out`` on two posts."""
    r = min(0.008, (x_out - x_face) / 3)
    bar_x = x_out - r
    half = length / 2
    end = half - 2 * r
    if along == "z":
        bar = rod((bar_x, y, z - half), (bar_x, y, z + half), r)
        posts = [box(x_face, y - r, z + s * end - r, bar_x, y + r, z + s * end + r) for s in (-1, 1)]
    else:
        bar = rod((bar_x, y - half, z), (bar_x, y + half, z), r)
        posts = [box(x_face, y + s * end - r, z - r, bar_x, y + s * end + r, z + r) for s in (-1, 1)]
    return merged([bar, *posts])


def spans(y0: float, y1: float, count: int, gap: float) -> list[tuple[float, float]]:
    """``count`` equal spans from ``y0`` to ``y1`` with ``gap`` between them."""
    width = (y1 - y0 - gap * (count - 1)) / count
    return [(y0 + i * (width + gap), y0 + i * (width + gap) + width) for i in range(count)]
