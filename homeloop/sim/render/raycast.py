"""Primary rays through every pixel, cast with Embree (docs/skills.md, "Captures and perception").

One ray leaves the camera through the centre of each pixel (the pinhole of
:class:`homeloop.sim.visibility.Viewpoint`: pixel (u, v) sees the direction
whose projection is u + 0.5, v + 0.5). The ray directions are cached per
camera orientation and optics.

The scene's triangles sit in three Embree scenes (``embreex``, called
directly): the static architecture and furniture, the window glass, and the
movers. A frame

1. casts every ray against the static scene (with the doors and furniture
   parts as they stand): first only as far as the box around the camera's
   room, then in full for the rays that meet nothing there (Embree skips the
   rest of the home for most rays); for a fixed camera pose (a dome camera)
   this result is cached until a door or a part moves;
2. casts the rays inside the projected boxes of the window panes against
   the glass, up to the static hit (glass is seen through: it is kept as a
   separate layer, not as what the pixel shows);
3. casts the rays inside the projected boxes of the movers (objects, people,
   the robot, the camera housings) against the moving scene, rebuilt only
   when something moved, up to the static hit; nearer hits win.

The result, :class:`Hits`, is per pixel: the distance along the ray to the
first opaque surface (inf where the ray leaves the home), that triangle's
code (-1: none), how squarely the ray meets it and the triangle itself (its
normal is read only where shading asks), and the code of a window pane in
front of it. A cached static result keeps all but the last.

Embree gives each ray only the triangle it hits; the distance comes from that
triangle's plane (the ray meets the plane where it meets the triangle), which
costs less than having Embree write out its full hit record.

:class:`PoseCache` keeps what later stages work out per camera pose (light,
surface colours) for the next frame from that pose.

What a caster works out from the home alone is kept with the scene's home part
(:class:`_HomeCasts`): the static scene per state of the doors and parts, the
static hits by that state and the camera pose (the last few whole; the faces
the rays meet of many more, compressed, from which the rest is worked out
again), the rays and the panes' pixels. The next episode in the home starts
with them. Inside :func:`homeloop.core.keyed_file.kept_on_disk` (a run's pool
workers share one folder) the faces a pose's rays meet are also kept in a file
under ``casts/``, keyed by the static triangles as Embree holds them and the
pose, and read by a caster that has not cast them; a file that is not whole,
or not of that key, is cast again and written anew.

The caster also answers the questions shading asks of the scene: whether
anything opaque lies along a segment (:meth:`Geometry.occluded` of the
static and the moving scenes, shadow rays) and what a ray from a surface sees
first (:meth:`Caster.bounce`, the reflection in water on the floor).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Iterable, TypeVar

import numpy as np
import shapely
from embreex import rtcore, rtcore_scene
from embreex.mesh_construction import TriangleMesh

from homeloop.core.home import polygon_from_rings
from homeloop.core.kept import Kept
from homeloop.core.keyed_file import disk_folder, read_keyed, write_keyed
from homeloop.sim.render.scene import Mesh, Scene
from homeloop.sim.visibility import NEAR_M, Viewpoint

#: An Embree device and scene: embreex ships no type information.
EmbreeDevice = Any
EmbreeScene = Any

#: Cached static hits: one per camera pose (the dome cameras an episode captures from).
STATIC_CACHE_SIZE = 4
#: Static faces kept per home part (compressed): one per state of the doors and parts and camera pose.
STATIC_FACES_KEPT = 256
#: Static faces kept on disk inside :func:`homeloop.core.keyed_file.kept_on_disk`: their format (a
#: file of another is cast again), and where under its folder.
FACES_FORMAT = 1
FACES_FOLDER = "casts"
FACES_SUFFIX = ".faces"
#: Static scenes kept per home part: one per state of the doors and parts met lately.
STATIC_SCENES_KEPT = 4
#: Cached ray directions: one per camera orientation and optics.
RAY_CACHE_SIZE = 8
#: How far past its walls' lines (m) the box around a camera's room reaches: the walls themselves,
#: their door and window frames.
ROOM_BOX_MARGIN_M = 0.4


@dataclass
class Hits:
    """What each pixel's ray meets (arrays of H x W entries, row-major from the top left)."""

    view: Viewpoint
    directions: np.ndarray  # (N, 3) unit vectors
    depth: np.ndarray  # (N,) distance to the first opaque surface; inf where none
    code: np.ndarray  # (N,) its code, -1 where none
    facing: np.ndarray  # (N,) |cos| of the angle between the ray and the surface's normal
    glass: np.ndarray  # (N,) code of a window pane in front of it, -1 where none
    face: np.ndarray  # (N,) the triangle hit, as a row of ``faces``; -1 where none
    surface: np.ndarray  # (N,) the flat surface hit (``Faces.plane``); -1 where none
    faces: "Faces"  # the frame's triangles (static, then moving)

    def points(self, index: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Home coordinates of the hit points (rays that hit nothing give inf)."""
        d, depth = _pick(self.directions, index), self.depth[index]
        origin = self.view.origin.astype(np.float32)
        points = np.empty_like(d)
        for k in range(3):  # column by column: a row of three times one number is slow in numpy
            column = points[:, k]
            np.multiply(d[:, k], depth, out=column)
            column += origin[k]
        return points

    def normal(self, index: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Unit normals of the surfaces hit, turned toward the camera (rays that hit nothing give 0)."""
        face = self.face[index]
        n = np.take(self.faces.normals, np.maximum(face, 0), axis=0) if len(self.faces.normals) else \
            np.zeros((len(face), 3), np.float32)
        d = _pick(self.directions, index)
        away = (n[:, 0] * d[:, 0] + n[:, 1] * d[:, 1] + n[:, 2] * d[:, 2]) > 0
        out: np.ndarray = np.array(n, dtype=np.float32)
        sign = np.where(away, np.float32(-1.0), np.float32(1.0))
        for k in range(3):
            out[:, k] *= sign
        out[face < 0] = 0.0
        return out

    def axis(self, index: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The home axis (0, 1, 2: x, y, z) the normal of each surface hit is nearest to."""
        out: np.ndarray = self.faces.axis[np.maximum(self.face[index], 0)] if len(self.faces.axis) else \
            np.full(len(self.face[index]), 2, np.int8)
        return out


def _pick(rows: np.ndarray, index: np.ndarray | slice) -> np.ndarray:
    """``rows[index]``; by :func:`numpy.take` for an index array, which is quicker for rows."""
    out: np.ndarray = np.take(rows, index, axis=0) if isinstance(index, np.ndarray) else rows[index]
    return out


@dataclass(frozen=True)
class Faces:
    """Per triangle of a frame: its unit normal, the home axis nearest to it, and the flat surface
    it lies in (triangles of one code in one plane share a number)."""

    normals: np.ndarray  # (F, 3) float32
    axis: np.ndarray  # (F,) int8
    plane: np.ndarray  # (F,) int64, >= 0

    @classmethod
    def of(cls, codes: np.ndarray, normals: np.ndarray, offsets: np.ndarray) -> "Faces":
        """The faces of codes, normals and plane offsets (n . p). A surface's number is a hash of
        its code, its normal to a thousandth and its offset to a millimetre (made with no sort:
        movers' faces are numbered anew whenever one moves)."""
        if not len(codes):
            return cls(np.zeros((0, 3), np.float32), np.zeros(0, np.int8), np.zeros(0, np.int64))
        parts = [codes.astype(np.int64), *(np.round(normals[:, i] * 1000).astype(np.int64) for i in range(3)),
                 np.round(offsets * 1000).astype(np.int64)]
        key = np.zeros(len(codes), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for part, mix in zip(parts, _PLANE_MIX):
                key = (key ^ part.astype(np.uint64)) * np.uint64(mix)
        plane = (key >> np.uint64(1)).astype(np.int64)
        return cls(normals, np.argmax(np.abs(normals), axis=1).astype(np.int8), plane)

    def then(self, other: "Faces") -> "Faces":
        """These faces, then ``other``'s."""
        return Faces(np.vstack([self.normals, other.normals]), np.concatenate([self.axis, other.axis]),
                     np.concatenate([self.plane, other.plane]))


#: Odd multipliers that mix a surface's code, normal and offset into its number (64-bit).
_PLANE_MIX = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93, 0xA0761D6478BD642F)


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
    return _stack(_direction_columns(view))


def _direction_columns(view: Viewpoint) -> list[np.ndarray]:
    """The x, y and z columns of :func:`ray_directions`, each contiguous."""
    forward, right, up = view.axes()
    turn = np.array([right, up, forward], dtype=np.float32)  # rows: camera axes in home coordinates
    gx, gy, gz = _camera_columns(view.hfov_deg, view.width, view.height)
    scratch = np.empty_like(gx)
    out = []
    for k in range(3):  # column by column, on contiguous columns: a matrix product with three columns is slow
        column = np.multiply(gx, turn[0, k])
        column += np.multiply(gy, turn[1, k], out=scratch)
        column += np.multiply(gz, turn[2, k], out=scratch)
        out.append(column)
    return out


def _rays(view: Viewpoint) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A view's ray directions, their :func:`near_distances` and where they leave the near plane."""
    columns = _direction_columns(view)  # worked on contiguous columns, then stacked
    near = near_distances(view, columns)
    return _stack(columns), near, _stack([column * near for column in columns])


def _stack(columns: list[np.ndarray]) -> np.ndarray:
    """Three columns side by side (N, 3)."""
    out = np.empty((len(columns[0]), 3), dtype=columns[0].dtype)
    for k, column in enumerate(columns):
        out[:, k] = column
    return out


def near_distances(view: Viewpoint, directions: np.ndarray | list[np.ndarray]) -> np.ndarray:
    """How far along each ray the camera's near plane lies (:data:`NEAR_M` in depth): where a ray
    starts, as the geometric backend clips (``directions``: (N, 3), or its three columns)."""
    forward = view.axes()[0].astype(np.float32)
    dx, dy, dz = directions if isinstance(directions, list) else (directions[:, k] for k in range(3))
    along = dx * forward[0] + dy * forward[1] + dz * forward[2]
    near: np.ndarray = np.float32(NEAR_M) / np.maximum(along, np.float32(1e-6))
    return near


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


@functools.lru_cache(maxsize=RAY_CACHE_SIZE)
def _camera_columns(hfov_deg: float, width: int, height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The columns of :func:`_camera_grid`, each contiguous (read-only)."""
    grid = _camera_grid(hfov_deg, width, height)
    columns = tuple(np.ascontiguousarray(grid[:, k]) for k in range(3))
    for c in columns:
        c.flags.writeable = False
    return columns[0], columns[1], columns[2]


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
    """A mesh with its Embree scene, face codes, normals and planes."""

    def __init__(self, device: EmbreeDevice, mesh: Mesh):
        self.mesh = mesh
        self.scene = _embree_scene(device, mesh)
        self.codes = mesh.codes.astype(np.int32)
        self.normals = face_normals(mesh)
        corner = np.asarray(mesh.vertices, dtype=np.float64)[mesh.faces[:, 0]] if len(mesh.faces) else np.zeros((0, 3))
        self.planes = np.einsum("ij,ij->i", self.normals.astype(np.float64), corner)  # n . p of each face's plane
        self.faces = Faces.of(self.codes, self.normals, self.planes)
        self._columns = tuple(np.ascontiguousarray(self.normals[:, k]) for k in range(3))
        self._digest: str | None = None

    def digest(self) -> str:
        """A sha256 of the triangles as Embree holds them (float32 corners, int32 faces)."""
        if self._digest is None:
            h = hashlib.sha256(np.ascontiguousarray(self.mesh.vertices, dtype=np.float32).tobytes())
            h.update(np.ascontiguousarray(self.mesh.faces, dtype=np.int32).tobytes())
            self._digest = h.hexdigest()
        return self._digest

    def trace(self, view: Viewpoint, directions: np.ndarray, tfar: np.ndarray | None = None,
              near: np.ndarray | None = None, start: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distance along each ray, face index and the cosine between the ray and that face's
        normal (signed) of its first hit beyond the camera's near plane (:data:`NEAR_M` in depth,
        as the geometric backend clips; ``near``: :func:`near_distances` of the rays, and
        ``start``: ``directions * near``, where the ray leaves the near plane as seen from the
        camera, where the caller has them); face -1 (distance ``tfar`` or inf, cosine 0) where none
        before ``tfar``."""
        if near is None:
            near = near_distances(view, directions)
        face = self.faces_hit(view, directions, tfar, near, start)
        depth, n = self.resolve(view, directions, face, near, tfar)
        return depth, face, n

    def faces_hit(self, view: Viewpoint, directions: np.ndarray, tfar: np.ndarray | None, near: np.ndarray,
                  start: np.ndarray | None = None) -> np.ndarray:
        """The face index of each ray's first hit beyond the near plane (-1: none before ``tfar``):
        Embree's part of :meth:`trace`."""
        if not len(self.mesh.faces) or not len(directions):
            return np.full(len(directions), -1, dtype=np.int32)
        if start is None:
            start = directions * near[:, None]
        origins = np.empty_like(start)
        for k, o in enumerate(view.origin.astype(np.float32)):  # column by column: adding a row of three is slow
            np.add(start[:, k], o, out=origins[:, k])
        kwargs: dict[str, np.ndarray] = {}
        if tfar is not None:
            kwargs["dists"] = np.ascontiguousarray(np.clip(tfar - near, 0, 1e30), dtype=np.float32)
        return np.asarray(self.scene.run(origins, directions, **kwargs), dtype=np.int32)

    def resolve(self, view: Viewpoint, directions: np.ndarray, face: np.ndarray, near: np.ndarray,
                tfar: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Distance along each ray to the face it hits, and the signed cosine between the ray and
        that face's normal (``tfar`` or inf, and 0, where it hits none): the rest of :meth:`trace`,
        worked out from the faces alone."""
        if not len(self.mesh.faces) or not len(directions):
            far = np.full(len(directions), np.inf, dtype=np.float32) if tfar is None else tfar
            return far, np.zeros(len(directions), dtype=np.float32)
        miss = face < 0
        f = face.copy()
        f[miss] = 0  # whole arrays, misses masked after: cheaper than picking the hits out
        nx, ny, nz = self._columns
        n = np.take(nx, f)
        n *= directions[:, 0]
        n += np.take(ny, f) * directions[:, 1]
        n += np.take(nz, f) * directions[:, 2]
        # the ray from the camera meets the face's plane where it meets the face
        height = (self.planes - self.normals.astype(np.float64) @ view.origin).astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            depth = np.take(height, f)
            depth /= n
        np.maximum(depth, near, out=depth)
        if tfar is None:
            depth[miss] = np.inf
        else:
            np.copyto(depth, tfar, where=miss, casting="same_kind")
        n[miss] = 0.0
        return depth, n

    def cast(self, view: Viewpoint, directions: np.ndarray, tfar: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """Distance along each ray and face index of its first hit beyond the camera's near plane
        (:data:`NEAR_M` in depth, as the geometric backend clips), face -1 where none before ``tfar``."""
        depth, face, _ = self.trace(view, directions, tfar)
        return np.where(face >= 0, depth, np.float32(np.inf)).astype(np.float32), face

    def occluded(self, origins: np.ndarray, directions: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Whether a triangle lies on each segment from ``origins`` along ``directions`` (unit)
        within ``lengths``."""
        if not len(self.mesh.faces) or not len(origins):
            return np.zeros(len(origins), dtype=bool)
        hit = self.scene.run(np.ascontiguousarray(origins, dtype=np.float32),
                             np.ascontiguousarray(directions, dtype=np.float32),
                             dists=np.ascontiguousarray(np.maximum(lengths, 0.0), dtype=np.float32), query="OCCLUDED")
        blocked: np.ndarray = np.asarray(hit) >= 0
        return blocked


class _HomeCasts:
    """What casters work out from a scene's home part alone (:class:`homeloop.sim.render.scene.Scene`
    begins every scene of a home from the same part), shared by every caster of that part: the Embree
    device, the glass, the static scene per state of the doors and parts, the static rays' hits by that
    state and the view (whole, and as the faces met, compressed), the rays of each orientation and the
    panes' pixels of each view. The second episode in a home casts nothing its first cast already."""

    def __init__(self, glass: Mesh):
        self.device = new_device()
        self.glass = Geometry(self.device, glass)
        self.panes = [(glass, _parts(glass))]  # one part per pane
        self.rays: Kept[tuple[np.ndarray, ...]] = Kept(RAY_CACHE_SIZE)
        self.hits: Kept[tuple[np.ndarray, ...]] = Kept(STATIC_CACHE_SIZE)
        self.faces: Kept[bytes] = Kept(STATIC_FACES_KEPT)
        self.pane_pixels: Kept[np.ndarray] = Kept(STATIC_CACHE_SIZE)
        self._static: Kept[Geometry] = Kept(STATIC_SCENES_KEPT)

    def static(self, state: Hashable, scene: Scene) -> Geometry:
        """The Embree scene of the static triangles with the doors and parts in ``state`` (the scene's now)."""
        return self._static.get_or_make(state, lambda: Geometry(self.device, scene.opaque()))


#: Held while a home part's casts are looked up or made (episodes may run in threads of one process).
_CASTS_LOCK = threading.Lock()


def _home_casts(scene: Scene) -> _HomeCasts:
    """The casts kept with the scene's home part (made with it the first time)."""
    with _CASTS_LOCK:
        casts: _HomeCasts | None = scene.part.kept.get("casts")
        if casts is None:
            casts = scene.part.kept["casts"] = _HomeCasts(scene.glass)
        return casts


class Caster:
    """Embree scenes of one :class:`Scene`, and the caches of the module docstring."""

    def __init__(self, scene: Scene):
        self.scene = scene
        kept = self._kept = _home_casts(scene)
        self.device, self.glass, self._panes = kept.device, kept.glass, kept.panes
        self._settled = scene.settled_version
        self._state = scene.settled_state()
        self.static = kept.static(self._state, scene)
        self._dynamic: tuple[Hashable, Geometry] | None = None
        self._alone: dict[tuple[str, str | None], tuple[tuple[object, ...], Geometry]] = {}
        self._frame_faces: tuple[Geometry, Geometry, Faces] | None = None
        self._mesh_parts: tuple[Mesh, Parts] | None = None
        self._last_pixels: tuple[Viewpoint, Mesh, np.ndarray] | None = None
        self._room_boxes: list[tuple[shapely.Polygon, np.ndarray, np.ndarray]] | None = None

    # -- rays

    def directions(self, view: Viewpoint) -> np.ndarray:
        """:func:`ray_directions`, cached per camera orientation and optics."""
        return self._rays_of(view)[0]

    def _rays_of(self, view: Viewpoint) -> tuple[np.ndarray, ...]:
        """The rays of a view, their :func:`near_distances` and where they leave the near plane
        (relative to the camera: ``start`` of :meth:`Geometry.trace`), cached per orientation and
        optics."""
        key = (view.yaw, view.pitch, view.hfov_deg, view.width, view.height)
        return self._kept.rays.get_or_make(key, lambda: _rays(view))

    # -- a frame

    def hits(self, view: Viewpoint, hide: Iterable[str] = ()) -> Hits:
        """What every pixel of ``view`` sees now (the scene must be up to date)."""
        rays, near, start = self._rays_of(view)
        if self._settled != self.scene.settled_version:  # a door or a part moved: the static rays are others
            self._settled, self._state = self.scene.settled_version, self.scene.settled_state()
            self.static = self._kept.static(self._state, self.scene)
        static = self._kept.hits.get_or_make((self._state, view), lambda: self._static(view, rays, near, start))
        depth, code, facing, face, surface = (a.copy() for a in static)
        dynamic = self._moving(hide)
        faces = self._faces(dynamic)
        pixels = self._moving_pixels(view, dynamic.mesh)
        if len(pixels):
            t, f, cos = dynamic.trace(view, rays[pixels], depth[pixels], near[pixels], start[pixels])
            near_hit = f >= 0
            idx, f = pixels[near_hit], f[near_hit] + len(self.static.codes)
            depth[idx] = t[near_hit]
            code[idx] = dynamic.codes[f - len(self.static.codes)]
            facing[idx] = np.abs(cos[near_hit])
            face[idx] = f
            surface[idx] = faces.plane[f]
        glass = np.full(len(rays), -1, dtype=np.int32)
        panes = self._kept.pane_pixels.get_or_make(view, lambda: self._pixels(view, self._panes))
        if len(panes):
            t, f = self.glass.cast(view, rays[panes], depth[panes])
            glass[panes[f >= 0]] = self.glass.codes[f[f >= 0]]
        return Hits(view, rays, depth, code, facing, glass, face, surface, faces)

    def _static(self, view: Viewpoint, rays: np.ndarray, near: np.ndarray, start: np.ndarray
                ) -> tuple[np.ndarray, ...]:
        """Depth, code, facing, face and surface of every ray against the static scene, worked out
        from the face each ray meets (:meth:`Geometry.resolve`). The faces are kept with the home
        part by the doors' and parts' state and the pose, compressed (:func:`_static_faces`), so a
        pose met again, later in the episode or in another, casts nothing."""
        key = (self._state, view)
        packed = self._kept.faces.get(key)
        if packed is not None:
            face = _unpacked(packed)
        else:
            where = self._faces_file(view)  # None outside kept_on_disk
            kept = self._kept_faces(where, len(rays)) if where is not None else None
            if kept is not None:
                packed, face = kept
            else:  # cast now: the faces just cast serve, not their packed copy unpacked
                face = self._static_faces(view, rays, near, start)
                packed = _packed(face)
                if where is not None:
                    write_keyed(where[0], _faces_header(where[1], len(face)), packed)
            self._kept.faces.put(key, packed)
        depth, cos = self.static.resolve(view, rays, face, near)
        # the tables end in the entry of a miss: face -1 picks it
        code = np.take(np.append(self.static.codes, np.int32(-1)), face)
        surface = np.take(np.append(self.static.faces.plane, np.int64(-1)), face)
        facing = np.abs(cos)
        facing[face < 0] = 1.0
        return depth, code, facing, face, surface

    def _kept_faces(self, where: tuple[Path, str], rays: int) -> tuple[bytes, np.ndarray] | None:
        """The static faces a file keeps under a key (:meth:`_faces_file`), packed and unpacked;
        None when the file holds anything else: not ``rays`` faces, or faces this scene has not."""
        packed = read_keyed(where[0], _faces_header(where[1], rays))
        if packed is None:
            return None
        try:
            face = _unpacked(packed)
        except (zlib.error, ValueError):  # not a compressed whole number of faces
            return None
        if len(face) != rays or int(face.min(initial=-1)) < -1 or int(face.max(initial=-1)) >= len(self.static.codes):
            return None
        return packed, face

    def _faces_file(self, view: Viewpoint) -> tuple[Path, str] | None:
        """The file the static faces of ``view`` are kept in on disk, and their key: what the faces
        are worked out from, the static triangles as Embree holds them and the pose (None outside
        :func:`kept_on_disk`)."""
        folder = disk_folder()
        if folder is None:
            return None
        digest = hashlib.sha256(json.dumps([FACES_FORMAT, NEAR_M, self.static.digest(),
                                            [float(v).hex() for v in dataclasses.astuple(view)]]).encode())
        key = digest.hexdigest()
        return folder / FACES_FOLDER / f"{key}{FACES_SUFFIX}", key

    def _static_faces(self, view: Viewpoint, rays: np.ndarray, near: np.ndarray, start: np.ndarray) -> np.ndarray:
        """The static face each ray meets first (-1: none). Each ray is first cast only as far as it
        stays in the box of the camera's room, which spares Embree the rest of the home; the rays
        that meet nothing there (through a door or a window) are cast again in full. The first hit
        within the box is the first hit."""
        reach = self._room_reach(view, rays)
        face = self.static.faces_hit(view, rays, reach, near, start)
        if reach is not None:
            out = np.flatnonzero(face < 0)
            if len(out):
                face[out] = self.static.faces_hit(view, rays[out], None, near[out], start[out])
        return face

    def _room_reach(self, view: Viewpoint, rays: np.ndarray) -> np.ndarray | None:
        """How far each ray goes before it leaves the box around the camera's room (its walls
        with :data:`ROOM_BOX_MARGIN_M` to spare, floor to ceiling); None where the camera is in
        no room."""
        box = self._room_box(view)
        if box is None:
            return None
        lo, hi = box
        reach = np.full(len(rays), np.inf, dtype=np.float32)
        back, ahead = np.empty_like(reach), np.empty_like(reach)
        with np.errstate(divide="ignore"):
            for k, o in enumerate(view.origin):
                d = np.ascontiguousarray(rays[:, k])
                # the camera is strictly inside: one side is behind the ray (negative, or -inf
                # along a ray level with it), the other ahead
                np.divide(np.float32(lo[k] - o), d, out=back)
                np.divide(np.float32(hi[k] - o), d, out=ahead)
                np.maximum(back, ahead, out=back)
                np.minimum(reach, back, out=reach)
        return reach

    def _room_box(self, view: Viewpoint) -> tuple[np.ndarray, np.ndarray] | None:
        """The box (low and high corners) around the room the camera stands in, if any."""
        if self._room_boxes is None:
            self._room_boxes = []
            for room in self.scene.home.rooms:
                shape = polygon_from_rings(room.polygon)
                x0, y0, x1, y1 = shape.bounds
                m = ROOM_BOX_MARGIN_M
                self._room_boxes.append((shape, np.array([x0 - m, y0 - m, room.floor_height - m]),
                                         np.array([x1 + m, y1 + m, room.floor_height + room.ceiling_height + m])))
        point = shapely.Point(view.x, view.y)
        for shape, lo, hi in self._room_boxes:
            if shape.covers(point) and lo[2] < view.z < hi[2]:
                return lo, hi
        return None

    def _faces(self, dynamic: Geometry) -> Faces:
        """The static faces then the moving ones (the rows of a frame's ``Hits.face``)."""
        cached = self._frame_faces
        if cached is None or cached[0] is not self.static or cached[1] is not dynamic:
            cached = self._frame_faces = (self.static, dynamic, self.static.faces.then(dynamic.faces))
        return cached[2]

    # -- questions shading asks

    def bounce(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance and code of the first static surface each ray from ``origins`` meets (inf and -1
        where none): what a reflection shows."""
        if not len(self.static.codes) or not len(origins):
            return np.full(len(origins), np.inf, np.float32), np.full(len(origins), -1, np.int32)
        out = self.static.scene.run(np.ascontiguousarray(origins, dtype=np.float32),
                                    np.ascontiguousarray(directions, dtype=np.float32), output=1)
        face = np.asarray(out["primID"], dtype=np.int32)
        code = np.where(face >= 0, self.static.codes[np.maximum(face, 0)], -1).astype(np.int32)
        return np.where(face >= 0, out["tfar"], np.float32(np.inf)).astype(np.float32), code

    def moving(self, hide: Iterable[str] = ()) -> Geometry:
        """The moving scene now, less what ``hide`` names (rebuilt only when something moved)."""
        return self._moving(hide)

    def _moving(self, hide: Iterable[str]) -> Geometry:
        """The moving scene less ``hide``, rebuilt only when one of the movers it holds has moved
        (the robot stepping does not rebuild its own camera's scene, which leaves it out)."""
        hide = frozenset(hide)
        key = (hide, tuple((name, id(m), m.shape, m.key) for name, m in self.scene.movers.items()
                           if not m.settled and m.hide_as not in hide))
        if self._dynamic is None or self._dynamic[0] != key:
            self._dynamic = (key, Geometry(self.device, self.scene.dynamic(hide)))
        return self._dynamic[1]

    def _moving_pixels(self, view: Viewpoint, mesh: Mesh) -> np.ndarray:
        """:meth:`_pixels` of the moving scene's mesh, kept while the view and the mesh are the same
        (a dome camera's frames while nothing moves)."""
        last = self._last_pixels
        if last is not None and last[0] == view and last[1] is mesh:
            return last[2]
        if self._mesh_parts is None or self._mesh_parts[0] is not mesh:
            self._mesh_parts = (mesh, _parts(mesh))  # the same until the mesh is made anew
        pixels = self._pixels(view, [self._mesh_parts])
        self._last_pixels = (view, mesh, pixels)
        return pixels

    def _pixels(self, view: Viewpoint, meshes: list[tuple[Mesh, Parts]]) -> np.ndarray:
        """Indices of the pixels inside the projected boxes of the meshes' parts (each mesh with its
        faces grouped by part, :func:`_parts`)."""
        mask = np.zeros((view.height, view.width), dtype=bool)
        for mesh, parts in meshes:
            if not len(mesh.faces):
                continue
            for x0, y0, x1, y1 in part_boxes(view, view.camera_coords(mesh.vertices), parts):
                mask[y0:y1, x0:x1] = True
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


@dataclass(frozen=True)
class Parts:
    """A mesh's faces grouped by code (one group per entity part), so boxes stay tight: the faces
    sorted by code, and the first row of each group; and where no vertex serves two groups, each
    group's vertices (the same points as its faces' corners, each once), and the first of each."""

    faces: np.ndarray  # (F, 3)
    starts: np.ndarray  # (P,)
    vertices: np.ndarray | None = None  # (V,) vertex rows, grouped as the faces are
    vertex_starts: np.ndarray | None = None  # (P,)

    def group(self, k: int) -> np.ndarray:
        """The faces of group ``k``."""
        end = self.starts[k + 1] if k + 1 < len(self.starts) else len(self.faces)
        out: np.ndarray = self.faces[self.starts[k]:end]
        return out


def _parts(mesh: Mesh) -> Parts:
    """The mesh's faces grouped by code (see :class:`Parts`)."""
    if not len(mesh.faces):
        return Parts(np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64))
    order = np.argsort(mesh.codes, kind="stable")
    codes = mesh.codes[order]
    starts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1])
    faces = mesh.faces[order]
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(faces))))
    owner = np.full(len(mesh.vertices), -1, dtype=np.int64)
    owner[faces.ravel()] = np.repeat(group, 3)
    if not (owner[faces] == group[:, None]).all():  # a vertex shared between groups: corners it is
        return Parts(faces, starts)
    vertices = np.flatnonzero(owner >= 0)
    vertices = vertices[np.argsort(owner[vertices], kind="stable")]
    vertex_starts = np.searchsorted(owner[vertices], np.arange(len(starts)))
    return Parts(faces, starts, vertices, vertex_starts)


def part_boxes(view: Viewpoint, cam: np.ndarray, parts: Parts) -> list[tuple[int, int, int, int]]:
    """:func:`camera_bounds` of every group of ``parts`` (vertices ``cam`` in camera coordinates)
    that has one: worked out for all at once where a group lies wholly in front of the near plane,
    one by one where the plane cuts it."""
    if not len(parts.faces):
        return []
    if parts.vertices is not None and parts.vertex_starts is not None:  # each point once
        corners, starts = cam[parts.vertices], parts.vertex_starts
    else:
        corners, starts = cam[parts.faces.ravel()], parts.starts * 3  # three rows per face
    front = corners[:, 2] >= NEAR_M
    every = np.logical_and.reduceat(front, starts)
    some = np.logical_or.reduceat(front, starts)
    depth = np.where(front, corners[:, 2], 1.0)  # the cut groups are done apart
    f = view.focal_px
    u = view.width / 2 + f * corners[:, 0] / depth
    v = view.height / 2 - f * corners[:, 1] / depth
    lo = np.floor(np.column_stack([np.minimum.reduceat(u, starts), np.minimum.reduceat(v, starts)]) - 0.5)
    hi = np.ceil(np.column_stack([np.maximum.reduceat(u, starts), np.maximum.reduceat(v, starts)]) + 0.5)
    out = []
    for k in np.flatnonzero(some):
        if every[k]:
            x0, y0 = max(0, int(lo[k, 0])), max(0, int(lo[k, 1]))
            x1, y1 = min(view.width, int(hi[k, 0])), min(view.height, int(hi[k, 1]))
            box = (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None
        else:
            box = camera_bounds(view, cam, parts.group(int(k)))
        if box is not None:
            out.append(box)
    return out


def _faces_header(key: str, rays: int) -> dict[str, object]:
    """The header a file of static faces is kept under (:mod:`homeloop.core.keyed_file`)."""
    return {"format": FACES_FORMAT, "key": key, "rays": rays}


def _packed(face: np.ndarray) -> bytes:
    """Face indices, compressed: a view's faces come in large patches of one face, so they pack
    many times smaller, and a home part keeps the faces of many poses."""
    return zlib.compress(np.ascontiguousarray(face, dtype=np.int32).tobytes(), 1)


def _unpacked(packed: bytes) -> np.ndarray:
    """:func:`_packed`'s faces again (read-only: every reader takes its own copy or indexes them)."""
    return np.frombuffer(zlib.decompress(packed), dtype=np.int32)


_Value = TypeVar("_Value")


class PoseCache(Kept[_Value]):
    """What the last frames from a few camera poses worked out, by pose (a dome camera's frames
    reuse it where a pixel sees what it saw before)."""

    def __init__(self, size: int = STATIC_CACHE_SIZE):
        super().__init__(size)
