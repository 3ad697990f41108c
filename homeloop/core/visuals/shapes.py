"""Closed low-poly primitives the visual meshes are made of, in metres, z up.

Each returns a watertight :class:`trimesh.Trimesh` placed by its low corner or its base centre,
so a builder reads like a drawing: ``box(x0, y0, z0, x1, y1, z1)``, ``cylinder(x, y, z0, z1, r)``.
Facet counts stay small: a frame holds hundreds of these.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import trimesh
from shapely.geometry import Point, Polygon

#: Facets round a round part: smooth enough at 640x360, small enough for USD.
ROUND_SECTIONS = 20
#: A chamfer narrower than this (m) is none: its faces would have no area to speak of.
MIN_BEVEL = 1e-6


#: A unit cube's corners (centred on the origin) and its outward triangles, scaled by :func:`box`.
_CUBE = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
_CUBE_VERTICES = np.asarray(_CUBE.vertices, dtype=float)
_CUBE_FACES = np.asarray(_CUBE.faces, dtype=np.int64)


def plain_mesh(vertices: np.ndarray, faces: np.ndarray) -> trimesh.Trimesh:
    """A mesh of exactly these vertices and faces, not processed: a primitive made closed has
    nothing to merge, and its vertex order stays the one it was made in."""
    return trimesh.Trimesh(vertices, faces, process=False)


def box(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float) -> trimesh.Trimesh:
    """An axis-aligned box between two corners."""
    size = np.abs([x1 - x0, y1 - y0, z1 - z0])
    centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2])
    return plain_mesh(_CUBE_VERTICES * size + centre, _CUBE_FACES.copy())


def closed(vertices: np.ndarray, faces: np.ndarray) -> trimesh.Trimesh:
    """A closed mesh of consistently wound ``faces``, turned outward if they wind inward (a mirrored
    profile); made without trimesh's processing, which would only merge what is already distinct."""
    v = np.asarray(vertices, dtype=float)
    f = np.asarray(faces, dtype=np.int64)
    if _six_volumes(v, f) < 0:
        f = f[:, ::-1].copy()
    return plain_mesh(v, f)


def _six_volumes(v: np.ndarray, f: np.ndarray) -> float:
    """Six times the signed volume a closed mesh's faces enclose: a . (b x c) summed over its triangles
    (the cross product by its components, as ``np.cross`` forms them: it costs far more on a few faces)."""
    a, b, c = v[f[:, 0]].T, v[f[:, 1]].T, v[f[:, 2]].T
    cross = np.array([b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]])
    return float(np.einsum("ij,ij->", a, cross))


@functools.lru_cache(maxsize=64)
def _tube_faces(rings: int, sections: int) -> np.ndarray:
    """Faces of ``rings`` stacked rings of ``sections`` vertices (ring i at i * sections), the
    bottom pole next and the top pole last: fans at the ends, quads between the rings, wound
    outward for rings that climb and run counter-clockwise seen from above."""
    k = np.arange(sections)
    nxt = (k + 1) % sections
    bottom, top = rings * sections, rings * sections + 1
    faces = [np.column_stack([np.full(sections, bottom), nxt, k])]
    for i in range(rings - 1):
        a, b = i * sections + k, i * sections + nxt
        faces += [np.column_stack([a, b, b + sections]), np.column_stack([a, b + sections, a + sections])]
    last = (rings - 1) * sections
    faces.append(np.column_stack([np.full(sections, top), last + k, last + nxt]))
    out = np.vstack(faces)
    out.flags.writeable = False
    return out


def _revolved(profile: np.ndarray, sections: int) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of the body ``profile`` (radius, z) sweeps about the z axis: its first
    and last points are the poles on the axis, each point between them a ring."""
    angles = 2 * np.pi * np.arange(sections) / sections
    cos, sin = np.cos(angles), np.sin(angles)
    inner = profile[1:-1]
    rings = np.column_stack([np.outer(inner[:, 0], cos).ravel(), np.outer(inner[:, 0], sin).ravel(),
                             np.repeat(inner[:, 1], sections)])
    poles = np.array([[0.0, 0.0, profile[0, 1]], [0.0, 0.0, profile[-1, 1]]])
    return np.vstack([rings, poles]), _tube_faces(len(inner), sections)


def cylinder(x: float, y: float, z0: float, z1: float, radius: float,
             sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """An upright cylinder on (x, y) from ``z0`` to ``z1``."""
    lo, hi = min(z0, z1), max(z0, z1)
    vertices, faces = _revolved(np.array([[0.0, lo], [radius, lo], [radius, hi], [0.0, hi]]), sections)
    return closed(vertices + (x, y, 0.0), faces)


def _turn_from_z(direction: np.ndarray) -> np.ndarray:
    """A rotation taking +z to the unit vector ``direction``."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, direction)
    s, c = float(np.linalg.norm(axis)), float(direction[2])
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = axis / s
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * cross + (1 - c) * cross @ cross


def rod(start: tuple[float, float, float], end: tuple[float, float, float], radius: float,
        sections: int = 8) -> trimesh.Trimesh:
    """A cylinder from ``start`` to ``end`` (a leg, a handle bar, a spout)."""
    a, b = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    length = float(np.linalg.norm(b - a))
    vertices, faces = _revolved(np.array([[0.0, 0.0], [radius, 0.0], [radius, length], [0.0, length]]), sections)
    turn = _turn_from_z((b - a) / length) if length > 0 else np.eye(3)
    return closed(vertices @ turn.T + a, faces)


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
    return lathe(x, y, [(0.0, z0), (r0, z0), (r1, z1), (0.0, z1)], sections)


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
    convex hull of the three boxes each cut back by ``bevel`` across two axes, whose faces are
    always the same (:func:`_bevel_topology`)."""
    lo, hi = np.array([x0, y0, z0]), np.array([x1, y1, z1])
    b = min(bevel, *((hi - lo) / 2.01))
    if b >= MIN_BEVEL:
        cut = np.where(np.arange(3) == _BEVEL_CORNERS[:, 3:], 0.0, b)
        pts, faces = np.where(_BEVEL_CORNERS[:, :3] > 0, hi - cut, lo + cut), _BEVEL_FACES
    else:
        pts, faces = lo + (_CUBE_VERTICES + 0.5) * (hi - lo), _CUBE_FACES
    pts[:, 0] += lean * (pts[:, 2] - z0) / (z1 - z0)
    return closed(pts, faces)


def _bevel_topology() -> tuple[np.ndarray, np.ndarray]:
    """The chamfered box's 24 vertices, as (side x, side y, side z, uncut axis) with sides 0 (low)
    or 1 (high): the vertex lies on the box's face across the uncut axis, cut back along the other
    two. Its 44 faces are wound outward: six faces, twelve edge strips, eight corner triangles."""
    corners = [(i, j, k, a) for i in (0, 1) for j in (0, 1) for k in (0, 1) for a in range(3)]
    index = {c: n for n, c in enumerate(corners)}
    faces: list[tuple[int, ...]] = []

    def vertex(sides: dict[int, int], uncut: int) -> int:
        return index[(sides[0], sides[1], sides[2], uncut)]

    for axis in range(3):
        u, v = (a for a in range(3) if a != axis)
        for side in (0, 1):  # the face across ``axis``
            faces += _outward([vertex({axis: side, u: su, v: sv}, axis)
                               for su, sv in ((0, 0), (1, 0), (1, 1), (0, 1))], corners)
        for su in (0, 1):  # the strip along ``axis`` where the faces across u and v meet
            for sv in (0, 1):
                ends = [{axis: s, u: su, v: sv} for s in (0, 1)]
                faces += _outward([vertex(ends[0], u), vertex(ends[1], u), vertex(ends[1], v), vertex(ends[0], v)],
                                  corners)
    for i, j, k in ((i, j, k) for i in (0, 1) for j in (0, 1) for k in (0, 1)):
        faces += _outward([index[(i, j, k, a)] for a in range(3)], corners)
    return np.array(corners, dtype=float), np.array(faces, dtype=np.int64)


def _outward(loop: list[int], corners: list[tuple[int, int, int, int]]) -> list[tuple[int, ...]]:
    """A convex loop of the chamfered box's vertices as triangles facing away from its centre
    (judged on a unit box chamfered by a quarter)."""
    unit = np.array([[(1.0 - 0.25 * (a != c[3])) if c[a] else 0.25 * (a != c[3]) for a in range(3)]
                     for c in (corners[n] for n in loop)])
    normal = np.cross(unit[1] - unit[0], unit[2] - unit[0])
    if float(normal @ (unit.mean(axis=0) - 0.5)) < 0:
        loop = loop[::-1]
    return [(loop[0], loop[k], loop[k + 1]) for k in range(1, len(loop) - 1)]


_BEVEL_CORNERS, _BEVEL_FACES = _bevel_topology()


#: The coordinates a profile's (u, v) name, for each axis it is extruded along.
_PROFILE_AXES = {"x": (1, 2, 0), "y": (0, 2, 1), "z": (0, 1, 2)}


def extruded(profile: Polygon, axis: str, a0: float, a1: float) -> trimesh.Trimesh:
    """A polygon (holes allowed) extruded along ``axis`` from ``a0`` to ``a1``; the profile's (u, v)
    are (y, z) across x, (x, z) across y and (x, y) across z (a blanket's drape, a plate with a
    porthole, a rug's border)."""
    flat, caps = trimesh.creation.triangulate_polygon(profile, engine="earcut")
    flat = np.asarray(flat, dtype=float)
    caps = np.asarray(caps, dtype=np.int64)
    p, q, r = flat[caps[:, 0]], flat[caps[:, 1]], flat[caps[:, 2]]
    area = (q[:, 0] - p[:, 0]) * (r[:, 1] - p[:, 1]) - (q[:, 1] - p[:, 1]) * (r[:, 0] - p[:, 0])
    caps = np.where((area < 0)[:, None], caps[:, ::-1], caps)  # counter-clockwise seen from +w
    n = len(flat)
    edges = caps[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)  # directed, the inside on their left
    key = np.minimum(edges[:, 0], edges[:, 1]) * n + np.maximum(edges[:, 0], edges[:, 1])  # one number an edge
    _, first, count = np.unique(key, return_index=True, return_counts=True)
    rim = edges[np.sort(first[count == 1])]
    a, b = rim[:, 0], rim[:, 1]
    faces = np.vstack([caps[:, ::-1], caps + n, np.column_stack([a, b, b + n]), np.column_stack([a, b + n, a + n])])
    uvw = np.vstack([np.column_stack([flat, np.full(n, a0)]), np.column_stack([flat, np.full(n, a1)])])
    u, v, w = _PROFILE_AXES[axis]
    xyz = np.zeros_like(uvw)
    xyz[:, u], xyz[:, v], xyz[:, w] = uvw[:, 0], uvw[:, 1], uvw[:, 2]
    return closed(xyz, faces)


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
    vertices, faces = _revolved(np.asarray(profile, dtype=float), sections)
    return closed(vertices + (x, y, 0.0), faces)


def merged(meshes: list[trimesh.Trimesh]) -> trimesh.Trimesh:
    """Closed meshes (four legs, a row of books) as one, each keeping its own vertices."""
    if len(meshes) == 1:
        return meshes[0]
    offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
    vertices = np.vstack([np.asarray(m.vertices, dtype=float) for m in meshes])
    faces = np.vstack([np.asarray(m.faces, dtype=np.int64) + o for m, o in zip(meshes, offsets)])
    return plain_mesh(vertices, faces)


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
