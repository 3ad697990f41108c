"""What a simulator or viewer meets in an exported home, measured on the USD stage.

These probes read a home's stage (pxr, numpy and trimesh, nothing of the
exporter) the way a user's tool would, and report where it would trip
(docs/pipeline.md, "USD homes"):

- :func:`floor_gaps`: openings at floor level (doors) over which a ray cast
  down finds no floor collider: a robot crossing the threshold would fall
  into a slot;
- :func:`cameras_in_solids`: cameras whose near plane lies inside a closed
  mesh (their own housing, a wall): a renderer that draws back faces sees
  only the inside of it;
- :func:`objects_in_furniture`: carryable objects whose box reaches into a
  furniture collider: hidden in a render, interpenetrating when the physics
  starts;
- :func:`things_without_visuals`: furniture, objects and devices that a
  renderer would draw as nothing (no mesh of render purpose) or a simulator
  would not hold (no guide mesh, their solid): what each should have of both
  purposes.

Each returns the offenders, so an empty list is a clean home. Cameras are tested
against every closed mesh, drawn or guide (a renderer sees the one, a ray cast
in the physics scene meets the other); objects against the furniture colliders.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
import trimesh
from pxr import Usd, UsdGeom, UsdPhysics

from homeloop.core.home import Home, polygon_from_rings
from homeloop.pipeline.usd.validate import thing_labels

#: Rays start this high (m) above an opening's floor level and count hits this close (m) to it.
RAY_START = 0.5
FLOOR_LEVEL_TOLERANCE = 0.002
#: Spacing (m) of the points cast down over an opening, and how far (m) inside its edges they start.
FLOOR_SAMPLE_STEP = 0.05
FLOOR_SAMPLE_INSET = 0.01
#: How far (m) into each room the line cast down across an opening reaches.
FLOOR_CROSSING_REACH = 0.1
#: An object's box may reach this far (m) into furniture (poses are rounded to the millimetre).
OBJECT_TOLERANCE = 0.002
#: A carryable object's geometry under its prim.
OBJECT_GEOMETRY = "geom"


@dataclass
class WorldMesh:
    """A mesh prim (or a cube) in home coordinates: triangles, its path, labels, whether it
    collides, and its purpose (``default``, ``render``: drawn; ``guide``: the solids)."""

    path: str
    vertices: np.ndarray
    faces: np.ndarray
    collider: bool
    classes: tuple[str, ...]
    purpose: str = "default"

    @property
    def drawn(self) -> bool:
        """Whether a renderer draws it (not a guide, nor a proxy)."""
        return self.purpose in (UsdGeom.Tokens.default_, UsdGeom.Tokens.render)

    @property
    def bounds(self) -> np.ndarray:
        return np.array([self.vertices.min(axis=0), self.vertices.max(axis=0)])


def _triangulate(counts: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Fan triangles of polygon faces."""
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    tris = [np.column_stack([np.full(n - 2, indices[s]), indices[s + 1:s + n - 1], indices[s + 2:s + n]])
            for s, n in zip(starts, counts) if n >= 3]
    return np.concatenate(tris) if tris else np.zeros((0, 3), dtype=int)


_CUBE = trimesh.creation.box(extents=(1.0, 1.0, 1.0))


def _local_geometry(prim: Usd.Prim) -> tuple[np.ndarray, np.ndarray] | None:
    if prim.IsA(UsdGeom.Mesh):
        mesh = UsdGeom.Mesh(prim)
        points, counts = mesh.GetPointsAttr().Get(), mesh.GetFaceVertexCountsAttr().Get()
        if not points or not counts:
            return None
        faces = _triangulate(np.asarray(counts), np.asarray(mesh.GetFaceVertexIndicesAttr().Get()))
        return np.asarray(points, dtype=float), faces
    if prim.IsA(UsdGeom.Cube):
        size = UsdGeom.Cube(prim).GetSizeAttr().Get() or 2.0
        return np.asarray(_CUBE.vertices) * size, np.asarray(_CUBE.faces)
    return None


def world_meshes(stage: Usd.Stage) -> list[WorldMesh]:
    """Every mesh and cube of the stage in home coordinates."""
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    out = []
    for prim in stage.Traverse():
        local = _local_geometry(prim)
        if local is None:
            continue
        m = np.array(cache.GetLocalToWorldTransform(prim))  # row vectors: p' = p M
        points = np.column_stack([local[0], np.ones(len(local[0]))]) @ m
        classes = tuple(thing_labels(prim))
        out.append(WorldMesh(str(prim.GetPath()), points[:, :3], local[1], prim.HasAPI(UsdPhysics.CollisionAPI),
                             classes, str(UsdGeom.Imageable(prim).ComputePurpose())))
    return out


# --- floors under openings ---------------------------------------------------------------------------


def _opening_samples(home: Home, opening) -> np.ndarray:
    """Points over an opening's footprint (a grid inside its edges) and along the line across it
    into the rooms it connects (an apartment's entrance door opens onto a stair hall the home
    does not hold: no point is cast there)."""
    poly = polygon_from_rings(opening.polygon)
    inner = poly.buffer(-FLOOR_SAMPLE_INSET, join_style="mitre")
    x0, y0, x1, y1 = inner.bounds if not inner.is_empty else poly.bounds
    xs = np.arange(x0, x1 + 1e-9, FLOOR_SAMPLE_STEP)
    ys = np.arange(y0, y1 + 1e-9, FLOOR_SAMPLE_STEP)
    grid = np.array([(x, y) for x in xs for y in ys])
    keep = shapely.contains_xy(inner, grid[:, 0], grid[:, 1]) if not inner.is_empty else np.zeros(len(grid), bool)
    rect = poly.minimum_rotated_rectangle
    corners = np.asarray(rect.exterior.coords)[:4]
    edges = corners[1:] - corners[:-1]
    short = int(np.argmin(np.linalg.norm(edges[:2], axis=1)))  # the edge across the wall
    across = edges[short] / max(np.linalg.norm(edges[short]), 1e-9)
    centre = np.asarray(poly.centroid.coords[0])
    depth = float(np.linalg.norm(edges[short]))
    reach = depth / 2 + FLOOR_CROSSING_REACH
    line = centre + np.outer(np.linspace(-reach, reach, 21), across)
    rooms = {r.id: r for r in home.rooms}
    ground = shapely.union_all([poly] + [polygon_from_rings(rooms[r].polygon) for r in opening.connects if r in rooms])
    return np.concatenate([grid[keep], line[shapely.covers(ground.buffer(1e-6), shapely.points(line))]])


def _hits_floor(points: np.ndarray, level: float, floors: list[WorldMesh]) -> np.ndarray:
    """Whether a ray cast straight down from above each point meets a floor triangle at ``level``."""
    hit = np.zeros(len(points), dtype=bool)
    for mesh in floors:
        tri = mesh.vertices[mesh.faces]
        a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
        det = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
        ok = np.abs(det) > 1e-12
        a, b, c, det = a[ok], b[ok], c[ok], det[ok]
        px, py = points[:, 0][:, None], points[:, 1][:, None]
        u = ((b[:, 0] - px) * (c[:, 1] - py) - (c[:, 0] - px) * (b[:, 1] - py)) / det
        v = ((c[:, 0] - px) * (a[:, 1] - py) - (a[:, 0] - px) * (c[:, 1] - py)) / det
        w = 1.0 - u - v
        inside = (u >= -1e-9) & (v >= -1e-9) & (w >= -1e-9)
        z = u * a[:, 2] + v * b[:, 2] + w * c[:, 2]
        hit |= np.any(inside & (np.abs(z - level) <= FLOOR_LEVEL_TOLERANCE), axis=1)
    return hit


def floor_gaps(stage: Usd.Stage, home: Home, meshes: list[WorldMesh] | None = None) -> list[str]:
    """The openings at floor level (sill 0) of ``home`` under which a ray cast down through the
    stage finds no floor collider at the lower connected room's floor height."""
    meshes = world_meshes(stage) if meshes is None else meshes
    floors = [m for m in meshes if m.collider and "floor" in m.classes]
    rooms = {r.id: r for r in home.rooms}
    out = []
    for o in home.openings:
        if o.sill > 1e-6:
            continue
        level = min((rooms[r].floor_height for r in o.connects if r in rooms), default=0.0)
        samples = _opening_samples(home, o)
        if not _hits_floor(samples, level, floors).all():
            out.append(o.id)
    return out


# --- cameras in closed meshes ----------------------------------------------------------------------------


def near_plane_points(camera: Usd.Prim) -> np.ndarray:
    """A camera's centre and its near plane's centre and corners, in home coordinates."""
    gf = UsdGeom.Camera(camera).GetCamera(Usd.TimeCode.Default())
    near = gf.clippingRange.min
    hx = near * gf.horizontalAperture / 2 / gf.focalLength
    hy = near * gf.verticalAperture / 2 / gf.focalLength
    local = np.array([[0, 0, 0], [0, 0, -near]] + [[sx * hx, sy * hy, -near] for sx in (-1, 1) for sy in (-1, 1)],
                     dtype=float)
    m = np.array(gf.transform)
    return (np.column_stack([local, np.ones(len(local))]) @ m)[:, :3]


def _closed_pieces(mesh: WorldMesh) -> list[trimesh.Trimesh]:
    tm = trimesh.Trimesh(mesh.vertices, mesh.faces, process=True)
    return [p for p in tm.split(only_watertight=False) if p.is_watertight]


def _inside_any(points: np.ndarray, meshes: list[WorldMesh]) -> list[str]:
    """Paths of the closed meshes (or closed pieces of them) holding any of the points."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    out = []
    for mesh in meshes:
        b = mesh.bounds
        if np.any(b[0] > hi) or np.any(b[1] < lo):
            continue
        if any(piece.contains(points).any() for piece in _closed_pieces(mesh)):
            out.append(mesh.path)
    return out


def cameras_in_solids(stage: Usd.Stage, meshes: list[WorldMesh] | None = None) -> dict[str, list[str]]:
    """For each camera whose centre or near plane lies inside a closed mesh, those meshes' paths."""
    meshes = world_meshes(stage) if meshes is None else meshes
    out = {}
    for prim in stage.Traverse():
        if prim.IsA(UsdGeom.Camera):
            inside = _inside_any(near_plane_points(prim), meshes)
            if inside:
                out[str(prim.GetPath())] = inside
    return out


# --- objects in furniture -------------------------------------------------------------------------------


def _triangles_meet_box(tris: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Which triangles (n x 3 x 3, in the box's frame) meet the box [-half, half]: the separating
    axis test of a triangle and a box (the box's axes, the triangle's normal, their 9 edge crosses)."""
    edges = [tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 1], tris[:, 0] - tris[:, 2]]
    axes = [np.broadcast_to(np.eye(3)[k], (len(tris), 3)) for k in range(3)]
    axes.append(np.cross(edges[0], edges[1]))
    axes += [np.cross(np.eye(3)[k], e) for k in range(3) for e in edges]
    apart = np.zeros(len(tris), dtype=bool)
    for axis in axes:
        proj = np.einsum("nij,nj->ni", tris, axis)
        radius = np.abs(axis) @ half
        usable = np.linalg.norm(axis, axis=1) > 1e-12
        apart |= usable & ((proj.min(axis=1) > radius) | (proj.max(axis=1) < -radius))
    return ~apart


def _object_box(stage: Usd.Stage, prim: Usd.Prim, cache: UsdGeom.XformCache) -> tuple[np.ndarray, np.ndarray]:
    """An object's box: the world transform of its geometry's extent centre (4 x 4, row vectors)
    and its half extents."""
    geom = prim.GetChild(OBJECT_GEOMETRY)
    lo, hi = (np.asarray(v, dtype=float) for v in UsdGeom.Mesh(geom).GetExtentAttr().Get())
    m = np.array(cache.GetLocalToWorldTransform(geom))
    centre = np.eye(4)
    centre[3, :3] = (lo + hi) / 2
    return centre @ m, (hi - lo) / 2


def objects_in_furniture(stage: Usd.Stage, meshes: list[WorldMesh] | None = None,
                         tolerance: float = OBJECT_TOLERANCE) -> list[tuple[str, str]]:
    """(object prim, furniture collider prim) pairs where the object's box, shrunk by
    ``tolerance``, meets the collider's triangles or lies inside it."""
    meshes = world_meshes(stage) if meshes is None else meshes
    furniture = [m for m in meshes if m.collider and m.path.startswith("/Home/Furniture/")]
    group = stage.GetPrimAtPath("/Home/Objects")
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    out = []
    for prim in group.GetChildren() if group else []:
        if not prim.GetChild(OBJECT_GEOMETRY):
            continue
        to_world, half = _object_box(stage, prim, cache)
        half = np.maximum(half - tolerance, 1e-4)
        to_box = np.linalg.inv(to_world)
        centre = to_world[3, :3]
        for mesh in furniture:
            local = (np.column_stack([mesh.vertices, np.ones(len(mesh.vertices))]) @ to_box)[:, :3]
            met = _triangles_meet_box(local[mesh.faces], half).any()
            if met or _inside_any(centre[None], [mesh]):
                out.append((str(prim.GetPath()), mesh.path))
    return out


# --- visuals and solids ----------------------------------------------------------------------------------

#: The groups whose children are things with a visual and a solid.
THING_GROUPS = ("/Home/Furniture", "/Home/Objects", "/Home/Devices")


def things_without_visuals(stage: Usd.Stage) -> dict[str, list[str]]:
    """For each furniture, object and device prim lacking a drawn mesh (render or default
    purpose) or a guide mesh below it, which of the two it lacks (``render``, ``guide``). A
    device without a body (a built-in or worn one: no children) has neither and is left out."""
    out: dict[str, list[str]] = {}
    for group in (stage.GetPrimAtPath(g) for g in THING_GROUPS):
        for thing in group.GetChildren() if group else []:
            if not thing.GetChildren():
                continue
            purposes = {str(UsdGeom.Imageable(p).ComputePurpose()) for p in Usd.PrimRange(thing)
                        if p.IsA(UsdGeom.Mesh)}
            drawn = bool(purposes & {UsdGeom.Tokens.default_, UsdGeom.Tokens.render})
            lacking = [name for name, has in (("render", drawn), ("guide", UsdGeom.Tokens.guide in purposes))
                       if not has]
            if lacking:
                out[str(thing.GetPath())] = lacking
    return out
