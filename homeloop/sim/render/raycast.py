"""Primary rays through every pixel, cast with Embree (docs/skills.md, "Captures and perception").

One ray leaves the camera through the centre of each pixel (the pinhole of
:class:`homeloop.sim.visibility.Viewpoint`: pixel (u, v) sees the direction
whose projection is u + 0.5, v + 0.5). The ray directions are cached per
camera orientation and optics.

The scene's triangles sit in three Embree scenes (``embreex``, called
directly): the static architecture and furniture, the window glass, and the
movers. A frame

1. casts every ray against the static scene (with the doors and furniture
   parts as they stand); for a fixed camera pose (a dome camera) this result
   is cached until a door or a part moves;
2. casts the rays inside the projected boxes of the window panes against
   the glass, up to the static hit (glass is seen through: it is kept as a
   separate layer, not as what the pixel shows);
3. casts the rays inside the projected boxes of the movers (objects, people,
   the robot, the camera housings) against the moving scene, rebuilt only
   when something moved, up to the static hit; nearer hits win.

The result, :class:`Hits`, is per pixel: the distance along the ray to the
first opaque surface (inf where the ray leaves the home), that triangle's
code (-1: none) and how squarely the ray meets it, and the code of a window
pane in front of it. A cached static result keeps the last three too.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, TypeVar

import numpy as np
from embreex import rtcore, rtcore_scene
from embreex.mesh_construction import TriangleMesh

from homeloop.sim.render.scene import Mesh, Scene
from homeloop.sim.visibility import NEAR_M, Viewpoint

#: An Embree device and scene: embreex ships no type information.
EmbreeDevice = Any
EmbreeScene = Any

#: Cached static hits: one per camera pose (the dome cameras an episode captures from).
STATIC_CACHE_SIZE = 4
#: Cached ray directions: one per camera orientation and optics.
RAY_CACHE_SIZE = 8


@dataclass
class Hits:
    """What each pixel's ray meets (arrays of H x W entries, row-major from the top left)."""

    view: Viewpoint
    directions: np.ndarray  # (N, 3) unit vectors
    depth: np.ndarray  # (N,) distance to the first opaque surface; inf where none
    code: np.ndarray  # (N,) its code, -1 where none
    facing: np.ndarray  # (N,) |cos| of the angle between the ray and the surface's normal
    glass: np.ndarray  # (N,) code of a window pane in front of it, -1 where none

    def points(self, index: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Home coordinates of the hit points (rays that hit nothing give inf)."""
        points: np.ndarray = self.view.origin.astype(np.float32) + self.directions[index] * self.depth[index, None]
        return points


def pixel_bounds(view: Viewpoint, vertices: np.ndarray, faces: np.ndarray) -> tuple[int, int, int, int] | None:
    """The pixel rectangle (x0, y0, x1, y1; x1 and y1 exclusive) whose centres may see the triangles,
    clipped to the frame; None when none lies in front of the camera. Edges crossing the near
    plane are cut there, so a mesh beside or behind the camera gets a tight box."""
    return camera_bounds(view, view.camera_coords(np.asarray(vertices, dtype=float)), faces)


def camera_bounds(view: Viewpoint, cam: np.ndarray, faces: np.ndarray) -> tuple[int, int, int, int] | None:
    """:func:`pixel_bounds` of triangles whose vertices are given in camera coordinates."""
    if not len(faces):
        return None
    faces = np.asarray(faces)
    corners = cam[faces.ravel()]
    front = corners[:, 2] >= NEAR_M
    if not front.any():
        return None
    pts = [corners[front]]
    if not front.all():
        edges = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
        a, b = cam[edges[:, 0]], cam[edges[:, 1]]
        cross = (a[:, 2] >= NEAR_M) != (b[:, 2] >= NEAR_M)
        if cross.any():
            a, b = a[cross], b[cross]
            t = (NEAR_M - a[:, 2]) / (b[:, 2] - a[:, 2])
            pts.append(a + t[:, None] * (b - a))
    uv = view.to_pixels(np.vstack(pts))
    x0 = max(0, int(math.floor(uv[:, 0].min() - 0.5)))
    y0 = max(0, int(math.floor(uv[:, 1].min() - 0.5)))
    x1 = min(view.width, int(math.ceil(uv[:, 0].max() + 0.5)))
    y1 = min(view.height, int(math.ceil(uv[:, 1].max() + 0.5)))
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def ray_directions(view: Viewpoint) -> np.ndarray:
    """Unit ray directions through every pixel centre (N, 3) float32, row-major from the top left:
    the camera's own grid of directions (:func:`_camera_grid`) turned to its heading and tilt."""
    forward, right, up = view.axes()
    turn = np.array([right, up, forward], dtype=np.float32)  # rows: camera axes in home coordinates
    return _camera_grid(view.hfov_deg, view.width, view.height) @ turn


@functools.lru_cache(maxsize=RAY_CACHE_SIZE)
def _camera_grid(hfov_deg: float, width: int, height: int) -> np.ndarray:
    """Unit directions through the pixel centres in camera coordinates (right, up, forward)."""
    f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
    u = (np.arange(width) + 0.5 - width / 2) / f
    v = (height / 2 - np.arange(height) - 0.5) / f
    d = np.stack(np.broadcast_arrays(u[None, :], v[:, None], np.ones((height, width))), axis=-1)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    grid = np.ascontiguousarray(d.reshape(-1, 3), dtype=np.float32)
    grid.flags.writeable = False
    return grid


def new_device() -> EmbreeDevice:
    """An Embree device (scenes built on one device share its threads and memory)."""
    return rtcore.EmbreeDevice()


def _embree_scene(device: EmbreeDevice, mesh: Mesh) -> EmbreeScene:
    scene = rtcore_scene.EmbreeScene(device)
    if len(mesh.faces):
        TriangleMesh(scene, np.ascontiguousarray(mesh.vertices, dtype=np.float32),
                     np.ascontiguousarray(mesh.faces, dtype=np.int32))
    return scene


def face_normals(mesh: Mesh) -> np.ndarray:
    """Unit normal of each triangle (float32; degenerate triangles get +z)."""
    if not len(mesh.faces):
        return np.zeros((0, 3), dtype=np.float32)
    v = mesh.vertices[mesh.faces]
    n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 1e-12, n / np.maximum(length, 1e-12), [0.0, 0.0, 1.0])
    return n.astype(np.float32)


class Geometry:
    """A mesh with its Embree scene, face codes and normals."""

    def __init__(self, device: EmbreeDevice, mesh: Mesh):
        self.mesh = mesh
        self.scene = _embree_scene(device, mesh)
        self.codes = mesh.codes.astype(np.int32)
        self.normals = face_normals(mesh)

    def cast(self, view: Viewpoint, directions: np.ndarray, tfar: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """Distance along each ray and face index of its first hit beyond the camera's near plane
        (:data:`NEAR_M` in depth, as the geometric backend clips), face -1 where none before ``tfar``."""
        if not len(self.mesh.faces) or not len(directions):
            far = np.full(len(directions), np.inf, dtype=np.float32) if tfar is None else tfar
            return far, np.full(len(directions), -1, dtype=np.int32)
        forward = view.axes()[0].astype(np.float32)
        near = np.float32(NEAR_M) / np.maximum(directions @ forward, np.float32(1e-6))
        origins = view.origin.astype(np.float32) + directions * near[:, None]
        kwargs: dict[str, np.ndarray] = {}
        if tfar is not None:
            kwargs["dists"] = np.ascontiguousarray(np.clip(tfar - near, 0, 1e30), dtype=np.float32)
        out = self.scene.run(origins, directions, output=1, **kwargs)
        face = out["primID"].astype(np.int32)
        return np.where(face >= 0, out["tfar"] + near, np.inf).astype(np.float32), face


class Caster:
    """Embree scenes of one :class:`Scene`, and the caches of the module docstring."""

    def __init__(self, scene: Scene):
        self.scene = scene
        self.device = new_device()
        self.static = Geometry(self.device, scene.opaque())
        self._settled = scene.settled_version
        self.glass = Geometry(self.device, scene.glass)
        self._panes = [(scene.glass.subset(idx)) for idx in scene.entity_faces["glass"].values()]
        self._dynamic: tuple[tuple[int, frozenset[str]], Geometry] | None = None
        self._rays: OrderedDict[tuple[float, float, float, int, int], np.ndarray] = OrderedDict()
        self._static_hits: OrderedDict[Viewpoint, tuple[np.ndarray, np.ndarray, np.ndarray]] = OrderedDict()
        self._alone: dict[tuple[str, str | None], tuple[tuple[object, ...], Geometry]] = {}

    # -- rays

    def directions(self, view: Viewpoint) -> np.ndarray:
        """:func:`ray_directions`, cached per camera orientation and optics."""
        key = (view.yaw, view.pitch, view.hfov_deg, view.width, view.height)
        rays = _lru_get(self._rays, key)
        if rays is None:
            rays = ray_directions(view)
            _lru_put(self._rays, key, rays, RAY_CACHE_SIZE)
        return rays

    # -- a frame

    def hits(self, view: Viewpoint, hide: Iterable[str] = ()) -> Hits:
        """What every pixel of ``view`` sees now (the scene must be up to date)."""
        rays = self.directions(view)
        if self._settled != self.scene.settled_version:  # a door or a part moved: the static rays are stale
            self.static = Geometry(self.device, self.scene.opaque())
            self._settled = self.scene.settled_version
            self._static_hits.clear()
        static = _lru_get(self._static_hits, view)
        if static is None:
            static = self._static(view, rays)
            _lru_put(self._static_hits, view, static, STATIC_CACHE_SIZE)
        depth, code, facing = (a.copy() for a in static)
        dynamic = self._moving(hide)
        pixels = self._pixels(view, [dynamic.mesh])
        if len(pixels):
            t, f = dynamic.cast(view, rays[pixels], depth[pixels])
            near = f >= 0
            idx, f = pixels[near], f[near]
            depth[idx] = t[near]
            code[idx] = dynamic.codes[f]
            facing[idx] = np.abs(np.einsum("ij,ij->i", dynamic.normals[f], rays[idx]))
        glass = np.full(len(rays), -1, dtype=np.int32)
        pixels = self._pixels(view, self._panes)
        if len(pixels):
            t, f = self.glass.cast(view, rays[pixels], depth[pixels])
            glass[pixels[f >= 0]] = self.glass.codes[f[f >= 0]]
        return Hits(view, rays, depth, code, facing, glass)

    def _static(self, view: Viewpoint, rays: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Depth, code and facing of every ray against the static scene."""
        depth, face = self.static.cast(view, rays)
        hit = np.maximum(face, 0)
        code = np.where(face >= 0, self.static.codes[hit], -1).astype(np.int32)
        facing = np.abs(np.einsum("ij,ij->i", self.static.normals[hit], rays)) if len(self.static.codes) else \
            np.ones(len(rays), dtype=np.float32)
        return depth, code, facing.astype(np.float32)

    def _moving(self, hide: Iterable[str]) -> Geometry:
        hide = frozenset(hide)
        key = (self.scene.version, hide)
        if self._dynamic is None or self._dynamic[0] != key:
            self._dynamic = (key, Geometry(self.device, self.scene.dynamic(hide)))
        return self._dynamic[1]

    def _pixels(self, view: Viewpoint, meshes: list[Mesh]) -> np.ndarray:
        """Indices of the pixels inside the projected boxes of the meshes' connected parts."""
        mask = np.zeros((view.height, view.width), dtype=bool)
        for mesh in meshes:
            if not len(mesh.faces):
                continue
            cam = view.camera_coords(mesh.vertices)
            for part in _parts(mesh):
                box = camera_bounds(view, cam, part)
                if box is not None:
                    mask[box[1]:box[3], box[0]:box[2]] = True
        return np.flatnonzero(mask.ravel())

    # -- one entity alone

    def alone(self, entity: str, part: str | None = None) -> Geometry:
        """An Embree scene of one entity's triangles, or of one part of them (cached until it moves)."""
        key = self.scene.entity_key(entity)
        cached = self._alone.get((entity, part))
        if cached is None or cached[0] != key:
            cached = (key, Geometry(self.device, self.scene.entity_mesh(entity, part)))
            self._alone[(entity, part)] = cached
        return cached[1]


def _parts(mesh: Mesh) -> list[np.ndarray]:
    """The mesh's faces grouped by code (one group per entity part), so boxes stay tight."""
    if not len(mesh.faces):
        return []
    order = np.argsort(mesh.codes, kind="stable")
    codes = mesh.codes[order]
    cuts = np.flatnonzero(np.diff(codes)) + 1
    return [mesh.faces[idx] for idx in np.split(order, cuts)]


_Key = TypeVar("_Key", bound=Hashable)
_Value = TypeVar("_Value")


def _lru_get(cache: OrderedDict[_Key, _Value], key: _Key) -> _Value | None:
    value = cache.get(key)
    if value is not None:
        cache.move_to_end(key)
    return value


def _lru_put(cache: OrderedDict[_Key, _Value], key: _Key, value: _Value, size: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)
