"""Fire, smoke and water in the pixels (docs/dynamics.md; docs/skills.md: no label names them).

What the dynamics report becomes per-pixel layers over the opaque hits:

- **flames** (:func:`flames`): over each burning pan
  (:meth:`Cooking.pans`), a few emissive cones about :data:`FLAME_HEIGHT_M`
  tall on the pan's rim, cast like any geometry inside their projected box;
  a pixel shows flame where a cone lies in front of the opaque surface. The
  cones flicker: their heights and the tongues' lean follow sines of the
  world's time at frequencies and phases drawn from a hash of the episode's
  seed and the pan, and so does the flame's brightness, up its height.
- **smoke** (:func:`smoke`): the layer under each ceiling, :data:`SMOKE_LAYER_M`
  deep, with the density :meth:`Smoke.density_at` gives at each point (the
  front included), rasterised on a coarse grid of the rooms. Each ray's
  segment through the layer, cut at the opaque depth, is sampled at
  :data:`SMOKE_SAMPLES` points; its optical depth is sigma times the density
  integrated along it, and its alpha ``1 - exp(-optical depth)``
  (:data:`SMOKE_EXTINCTION_PER_M` is sigma at density 1). Smoke is smooth, so
  it is worked out on a grid of about :data:`SMOKE_COLUMNS` columns of pixels
  and spread to the rest.
- **water** (:func:`water`): a floor pixel of a leak's or spill's room
  within the wet disc's radius (:class:`Water` sources) is under the film.

Each layer also says, per hazard, how many pixels show it and how many
would if nothing stood in front (the flame cones, the layer and the wet
floor cast with no occluders): the share seen, as the geometric backend's
``seen_fraction``. Smoke counts only in rooms where it is thick enough to
see (:data:`homeloop.sim.visibility.SMOKE_SEEN_DENSITY`), as there.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import trimesh

from homeloop.core.home import Home
from homeloop.sim.dynamics.cooking import Cooking
from homeloop.sim.dynamics.smoke import Smoke
from homeloop.sim.dynamics.water import Water, WaterSource
from homeloop.sim.render.raycast import Caster, Geometry, Hits, pixel_bounds
from homeloop.sim.render.rooms import RoomGrid
from homeloop.sim.render.scene import Mesh
from homeloop.sim.visibility import SMOKE_LAYER_DEPTH_M, SMOKE_SEEN_DENSITY, Viewpoint
from homeloop.sim.world import World

#: Flames over a burning pan: the main cone's height (m) and its radius as a share of the pan's.
FLAME_HEIGHT_M = 0.45
FLAME_RADIUS_SHARE = 0.8
#: Flicker: how far the main cone's and the tongues' heights swing (share), the tongues' lean
#: (share of their height), the brightness swing (share), and the range of frequencies (Hz).
FLAME_MAIN_FLICKER = 0.08
FLAME_TONGUE_FLICKER = 0.3
FLAME_LEAN_SWAY = 0.25
FLAME_GLOW_FLICKER = 0.2
FLAME_HZ = (2.0, 6.0)
#: Opacity of the flames at their base and at their tip.
FLAME_ALPHA = (0.95, 0.7)
#: Flame radiance at the base (orange) and at the tip (red), linear RGB in units of a white
#: surface under full exposure: flames outshine the room, so they glow through smoke.
FLAME_BASE_RGB = (5.0, 1.5, 0.15)
FLAME_TIP_RGB = (4.0, 0.6, 0.06)

#: Depth of the smoke layer under the ceiling (m): the geometric backend samples its middle.
SMOKE_LAYER_M = 2 * SMOKE_LAYER_DEPTH_M
#: Extinction per metre of smoke at density 1 (the layer's optical depth is this times the
#: density integrated along the ray): at density 1 a metre of smoke hides 63 % of what is behind,
#: and a camera under the ceiling still sees the room through the layer, darkly.
SMOKE_EXTINCTION_PER_M = 1.0
#: Samples along each ray's segment through the layer, and the number of columns of the coarse
#: grid of pixels smoke is worked out on (its stride follows from the image's width).
SMOKE_SAMPLES = 10
SMOKE_COLUMNS = 320
#: Coarse raster of smoke density: this many room-raster cells per side (0.1 m cells).
SMOKE_CELL_FACTOR = 2
#: Longest ray segment through smoke considered (m): beyond any room.
SMOKE_MAX_RAY_M = 25.0
#: A pixel shows smoke at or above this opacity.
SMOKE_SEEN_ALPHA = 0.2
#: Smoke colour (linear RGB), lit by its room's light: sooty grey.
SMOKE_RGB = (0.25, 0.25, 0.26)

#: The water film: its colour (linear RGB), how much of the floor it covers, and its sheen.
WATER_RGB = (0.24, 0.36, 0.52)
WATER_ALPHA = 0.6
WATER_SHEEN = 0.5


@dataclass
class Layers:
    """Per-pixel hazard layers of one frame, and the pixels each hazard shows in (see the module
    docstring). Arrays have one entry per pixel; None where the layer is empty."""

    flame_alpha: np.ndarray | None = None
    flame_rgb: np.ndarray | None = None
    smoke_alpha: np.ndarray | None = None
    smoke_rooms: np.ndarray | None = None  # the room index whose smoke dominates each pixel
    wet: np.ndarray | None = None
    hazards: list[dict[str, Any]] = field(default_factory=list)


# --- flames ---------------------------------------------------------------------------------------------


def flame_mesh(x: float, y: float, rim: float, radius: float, seed: str, t: float = 0.0) -> trimesh.Trimesh:
    """A main cone and three smaller tongues leaning out, placed by a hash of ``seed`` and flickering
    with the time ``t`` (s): the same seed and time give the same flames."""
    digest = hashlib.sha256(seed.encode("utf-8")).digest()

    def swing(k: int) -> float:  # a sine of the time, its frequency and phase drawn from the digest
        hz = FLAME_HZ[0] + (FLAME_HZ[1] - FLAME_HZ[0]) * digest[8 + k] / 255
        return math.sin(2 * math.pi * hz * t + 2 * math.pi * digest[16 + k] / 255)

    height = FLAME_HEIGHT_M * (1 + FLAME_MAIN_FLICKER * swing(0))
    cones = [trimesh.creation.cone(radius=radius, height=height, sections=12)]
    for k in range(3):
        angle = 2 * math.pi * (k / 3 + digest[k] / 255 / 3)
        c, s = math.cos(angle), math.sin(angle)
        tall = FLAME_HEIGHT_M * (0.55 + 0.25 * digest[k + 3] / 255) * (1 + FLAME_TONGUE_FLICKER * swing(k + 1))
        tongue = trimesh.creation.cone(radius=radius * 0.5, height=tall, sections=8)
        lean = np.eye(4)
        sway = 0.6 + FLAME_LEAN_SWAY * swing(k + 4)
        lean[:2, 2] = (sway * c, sway * s)  # the tongue's tip leans outward
        tongue.apply_transform(lean)
        tongue.apply_translation((0.6 * radius * c, 0.6 * radius * s, 0.0))
        cones.append(tongue)
    mesh = trimesh.util.concatenate(cones)
    if not isinstance(mesh, trimesh.Trimesh):  # trimesh types the join of any geometry; meshes give a mesh
        raise TypeError(f"flames of {seed}: the cones joined into a {type(mesh).__name__}")
    mesh.apply_translation((x, y, rim))
    return mesh


def flame_sites(world: World) -> list[tuple[str, float, float, float, float]]:
    """Each burning pan's id, position, rim height and flame radius (m)."""
    cooking = world.running(Cooking)
    if cooking is None:
        return []
    out = []
    for pan in cooking.pans():
        obj = world.objects.get(pan.id)
        if not pan.burning or obj is None:
            continue
        entry = world.catalog.objects.get(obj.catalog_id)
        dims = entry.dimensions if entry is not None else None
        rim = obj.z + (dims.height if dims is not None else 0.0)
        radius = FLAME_RADIUS_SHARE * (min(dims.width, dims.depth) / 2 if dims is not None else 0.12)
        out.append((pan.id, obj.x, obj.y, rim, radius))
    return out


def flames(world: World, caster: Caster, rooms: RoomGrid, hits: Hits, layers: Layers) -> None:
    """The flames of every burning pan (see the module docstring)."""
    view, n = hits.view, len(hits.depth)
    for pan, x, y, rim, radius in flame_sites(world):
        seed = f"{world.seed}:{pan}"
        mesh = flame_mesh(x, y, rim, radius, seed, world.time)
        box = pixel_bounds(view, mesh.vertices, mesh.faces)
        if box is None:
            continue
        idx = _box_pixels(view, box)
        cones = Geometry(caster.device, Mesh.of(mesh, -1))
        t_any, f_any = cones.cast(view, hits.directions[idx])
        shown = (f_any >= 0) & (t_any < hits.depth[idx])
        projected = int((f_any >= 0).sum())
        if not projected:
            continue
        alpha, rgb = layers.flame_alpha, layers.flame_rgb
        if alpha is None or rgb is None:
            alpha = layers.flame_alpha = np.zeros(n, dtype=np.float32)
            rgb = layers.flame_rgb = np.zeros((n, 3), dtype=np.float32)
        height = (view.z + hits.directions[idx[shown], 2] * t_any[shown] - rim) / FLAME_HEIGHT_M
        h = np.clip(height, 0.0, 1.0)[:, None]
        alpha[idx[shown]] = FLAME_ALPHA[0] + (FLAME_ALPHA[1] - FLAME_ALPHA[0]) * h[:, 0]
        rgb[idx[shown]] = ((1 - h) * np.array(FLAME_BASE_RGB) + h * np.array(FLAME_TIP_RGB)) * \
            _glow(seed, world.time, h)
        obj = world.objects[pan]
        room = obj.placement.room or _room_at(rooms, x, y)
        _note(layers, "fire", pan, [room] if room else [], int(shown.sum()), projected)


def _glow(seed: str, t: float, height: np.ndarray) -> np.ndarray:
    """The flame's brightness up its height (shares of the base brightness, (M, 1)), flickering with
    the time: a wave running up the flame."""
    digest = hashlib.sha256(f"glow:{seed}".encode("utf-8")).digest()
    hz = FLAME_HZ[0] + (FLAME_HZ[1] - FLAME_HZ[0]) * digest[0] / 255
    phase = 2 * np.pi * (hz * t + digest[1] / 255) - 6.0 * height
    out: np.ndarray = 1.0 + FLAME_GLOW_FLICKER * np.sin(phase)
    return out


def _room_at(rooms: RoomGrid, x: float, y: float) -> str | None:
    i = int(rooms.lookup(np.array([x]), np.array([y]))[0])
    return rooms.rooms[i] if i >= 0 else None


def _box_pixels(view: Viewpoint, box: tuple[int, int, int, int]) -> np.ndarray:
    x0, y0, x1, y1 = box
    return (np.arange(y0, y1)[:, None] * view.width + np.arange(x0, x1)[None, :]).ravel()


def _note(layers: Layers, kind: str, source: str, rooms: Iterable[str], shown: int, projected: int) -> None:
    if shown > 0:
        layers.hazards.append({"kind": kind, "source": source, "rooms": list(rooms), "pixels": shown,
                               "seen_fraction": round(min(shown / max(projected, 1), 1.0), 4)})


# --- smoke ----------------------------------------------------------------------------------------------


class SmokeField:
    """The coarse raster smoke is read from: per cell its room and the top of the layer (the
    room's ceiling); densities are filled in per frame for the rooms that have smoke."""

    def __init__(self, home: Home, rooms: RoomGrid):
        self.rooms = rooms
        self.labels = rooms.coarse(SMOKE_CELL_FACTOR)
        self.cell = rooms.cell * SMOKE_CELL_FACTOR
        self.x0 = rooms.x0 + (SMOKE_CELL_FACTOR // 2 + 0.5) * rooms.cell - self.cell / 2
        self.y0 = rooms.y0 + (SMOKE_CELL_FACTOR // 2 + 0.5) * rooms.cell - self.cell / 2
        by_id = {r.id: r for r in home.rooms}
        tops = np.array([by_id[r].floor_height + by_id[r].ceiling_height for r in rooms.rooms] + [0.0])
        self.top = tops[self.labels].astype(np.float32)  # label -1 picks the trailing 0
        self.cells = {i: np.argwhere(self.labels == i) for i in range(len(rooms.rooms))}
        self._last: tuple[float, Smoke, tuple[np.ndarray, list[int]]] | None = None

    def box(self, rooms: list[int]) -> tuple[float, float, float, float]:
        """The bounds (x0, y0, x1, y1) of the cells of the rooms (by index), a cell wider each way."""
        cells = np.vstack([self.cells[i] for i in rooms if len(self.cells[i])] or [np.zeros((1, 2), np.int64)])
        (r0, c0), (r1, c1) = cells.min(axis=0) - 1, cells.max(axis=0) + 2
        return (self.x0 + c0 * self.cell, self.y0 + r0 * self.cell, self.x0 + c1 * self.cell, self.y0 + r1 * self.cell)

    def densities(self, smoke: Smoke, time: float) -> tuple[np.ndarray, list[int]]:
        """Density per cell at ``time`` (now), and the indices of the rooms holding any: worked out
        once per moment, however many frames are taken at it (a robot's scan)."""
        if self._last is not None and self._last[0] == time and self._last[1] is smoke:
            return self._last[2]
        out = self._densities(smoke)
        self._last = (time, smoke, out)
        return out

    def _densities(self, smoke: Smoke) -> tuple[np.ndarray, list[int]]:
        dens = np.zeros(self.labels.shape, dtype=np.float32)
        smoky = []
        for i, room in enumerate(self.rooms.rooms):
            if smoke.room_density(room) <= 0.0:
                continue
            smoky.append(i)
            cells = self.cells[i]
            points = np.column_stack([self.x0 + (cells[:, 1] + 0.5) * self.cell,
                                      self.y0 + (cells[:, 0] + 0.5) * self.cell])
            dens[cells[:, 0], cells[:, 1]] = smoke.densities_at(room, points)
        return dens, smoky


def smoke(world: World, field_: SmokeField, hits: Hits, layers: Layers) -> None:
    """The smoke layer's opacity per pixel (see the module docstring)."""
    module_ = world.running(Smoke)
    if module_ is None:
        return
    dens, smoky = field_.densities(module_, world.time)
    if not smoky:
        return
    view = hits.view
    stride = max(1, round(view.width / SMOKE_COLUMNS))
    rows = np.arange(stride // 2, view.height, stride)
    cols = np.arange(stride // 2, view.width, stride)
    idx = (rows[:, None] * view.width + cols[None, :]).ravel()
    d = hits.directions[idx]
    seen = _optical_depths(field_, dens, smoky, view, d, np.minimum(hits.depth[idx], SMOKE_MAX_RAY_M))
    every_other = np.zeros((len(rows), len(cols)), dtype=bool)
    every_other[::2, ::2] = True  # the unoccluded layer only sizes the share seen: every other ray will do
    sparse = every_other.ravel()
    whole = _optical_depths(field_, dens, smoky, view, d[sparse], np.full(int(sparse.sum()), SMOKE_MAX_RAY_M,
                                                                          np.float32))
    total = sum(seen.values())
    shape = (len(rows), len(cols))
    alpha = 1.0 - np.exp(-SMOKE_EXTINCTION_PER_M * total)
    layers.smoke_alpha = _spread(alpha.reshape(shape), view, stride).astype(np.float32, copy=False)
    if len(smoky) == 1:  # one smoky room dominates everywhere
        layers.smoke_rooms = np.full(view.width * view.height, smoky[0], dtype=np.int16)
    else:
        stacked = np.stack([seen[i] for i in smoky])
        layers.smoke_rooms = _spread(np.array(smoky)[stacked.argmax(axis=0)].reshape(shape), view, stride,
                                     smooth=False).astype(np.int16)
    block = stride * stride
    for i in smoky:
        room = field_.rooms.rooms[i]
        if module_.room_density(room) < SMOKE_SEEN_DENSITY:
            continue
        shown = int((1.0 - np.exp(-SMOKE_EXTINCTION_PER_M * seen[i]) >= SMOKE_SEEN_ALPHA).sum()) * block
        projected = int((1.0 - np.exp(-SMOKE_EXTINCTION_PER_M * whole[i]) >= SMOKE_SEEN_ALPHA).sum()) * block * \
            len(idx) / max(int(sparse.sum()), 1)
        _note(layers, "smoke", room, [room], shown, round(projected))


def _optical_depths(field_: SmokeField, dens: np.ndarray, smoky: list[int], view: Viewpoint, d: np.ndarray,
                    t_max: np.ndarray) -> dict[int, np.ndarray]:
    """Density integrated along each ray from the camera to ``t_max``, per smoky room."""
    tops = [float(field_.top[field_.labels == i].max()) for i in smoky]
    z_lo, z_hi = min(tops) - SMOKE_LAYER_M, max(tops)
    oz = view.z
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (z_lo - oz) / d[:, 2], (z_hi - oz) / d[:, 2]
    level = np.abs(d[:, 2]) < 1e-9
    inside = z_lo <= oz <= z_hi
    ta = np.where(level, 0.0 if inside else np.inf, np.maximum(np.minimum(t1, t2), 0.0))
    tb = np.where(level, t_max if inside else 0.0, np.minimum(np.maximum(t1, t2), t_max))
    span = np.clip(tb - ta, 0.0, None)
    step = span / SMOKE_SAMPLES
    out = {i: np.zeros(len(d), dtype=np.float32) for i in smoky}
    ok = (span > 0) & _crosses(field_.box(smoky), view, d, ta, tb)
    # each ray's samples start at its own fraction of a step (a fixed low-discrepancy sequence),
    # so the layer's edges come out as fine grain, not as bands
    jitter = np.modf(np.arange(len(d)) * 0.6180339887)[0][ok]
    ta, step, dd = ta[ok], step[ok], d[ok]
    dx, dy, dz = (np.ascontiguousarray(dd[:, k]) for k in range(3))
    rows, cols = dens.shape
    sums = {i: np.zeros(len(ta), dtype=np.float32) for i in smoky}  # summed over the crossing rays alone
    for k in range(SMOKE_SAMPLES):
        t = ta + (k + jitter) * step
        col = np.floor((view.x + dx * t - field_.x0) / field_.cell).astype(np.int64)
        row = np.floor((view.y + dy * t - field_.y0) / field_.cell).astype(np.int64)
        z = oz + dz * t
        on = (col >= 0) & (col < cols) & (row >= 0) & (row < rows)
        cell = np.where(on, row * cols + col, 0)
        top = np.take(field_.top, cell)
        inside_layer = on & (z <= top) & (z >= top - SMOKE_LAYER_M)
        rho = np.where(inside_layer, np.take(dens, cell), 0.0) * step
        label = np.take(field_.labels, cell)
        for i in smoky:
            sums[i] += np.where(label == i, rho, 0.0)
    for i in smoky:
        out[i][ok] = sums[i]
    return out


def _crosses(box: tuple[float, float, float, float], view: Viewpoint, d: np.ndarray, ta: np.ndarray,
             tb: np.ndarray) -> np.ndarray:
    """Whether each ray's stretch from ``ta`` to ``tb`` passes over the box (x0, y0, x1, y1): a ray
    that does not meets no smoke, and is not sampled."""
    lo, hi = ta.copy(), tb.copy()
    for axis, origin in ((0, view.x), (1, view.y)):
        step = d[:, axis]
        flat = np.abs(step) < 1e-9
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (box[axis] - origin) / step, (box[axis + 2] - origin) / step
        within = box[axis] <= origin <= box[axis + 2]
        lo = np.where(flat, lo if within else np.inf, np.maximum(lo, np.minimum(t1, t2)))
        hi = np.where(flat, hi, np.minimum(hi, np.maximum(t1, t2)))
    out: np.ndarray = lo <= hi
    return out


def _spread(coarse: np.ndarray, view: Viewpoint, stride: int, smooth: bool = True) -> np.ndarray:
    """A value worked out every ``stride`` pixels (from ``stride // 2``), spread to every pixel
    (flat): interpolated between its neighbours, or the nearest one's (``smooth`` False)."""
    def axis(n: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        at = (np.arange(n) - stride // 2) / stride
        lo = np.clip(np.floor(at), 0, size - 1).astype(np.int64)
        return lo, np.minimum(lo + 1, size - 1), np.clip(at - lo, 0.0, 1.0).astype(np.float32)

    r0, r1, fr = axis(view.height, coarse.shape[0])
    c0, c1, fc = axis(view.width, coarse.shape[1])
    if not smooth:
        nearest: np.ndarray = coarse[np.where(fr < 0.5, r0, r1)][:, np.where(fc < 0.5, c0, c1)].ravel()
        return nearest
    across = coarse[:, c0] * (1 - fc) + coarse[:, c1] * fc  # along the coarse rows first: fewer of them
    top, bottom = across[r0], across[r1]
    top *= (1 - fr)[:, None]
    bottom *= fr[:, None]
    top += bottom
    blended: np.ndarray = top.ravel()
    return blended


# --- water ----------------------------------------------------------------------------------------------


def water(world: World, scene_floors: dict[str, np.ndarray], rooms: RoomGrid, hits: Hits, layers: Layers) -> None:
    """The floor pixels under each leak's or spill's film (see the module docstring).
    ``scene_floors``: the floor codes of each room."""
    module_ = world.running(Water)
    if module_ is None:
        return
    view = hits.view
    for source in module_.sources():
        if source.litres <= 0.0 or source.radius <= 0.0:
            continue
        room = world.home.room(source.room)
        floor_z = room.floor_height
        box = _disc_box(view, rooms, source, floor_z)
        if box is None:
            continue
        idx = _box_pixels(view, box)
        d = hits.directions[idx]
        visible = np.isin(hits.code[idx], scene_floors.get(source.room, np.zeros(0)))
        p = hits.points(idx[visible])
        visible[visible] = np.hypot(p[:, 0] - source.x, p[:, 1] - source.y) <= source.radius
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (floor_z - view.z) / d[:, 2]
        ahead = t > 0
        px, py = view.x + d[:, 0] * np.where(ahead, t, 0), view.y + d[:, 1] * np.where(ahead, t, 0)
        under = ahead & (np.hypot(px - source.x, py - source.y) <= source.radius)
        under &= rooms.lookup(px, py) == rooms.index[source.room]
        if layers.wet is None:
            layers.wet = np.zeros(len(hits.depth), dtype=bool)
        layers.wet[idx[visible]] = True
        _note(layers, "water", source.name, [source.room], int(visible.sum()), int(under.sum()))


def _disc_box(view: Viewpoint, rooms: RoomGrid, source: WaterSource, z: float) -> tuple[int, int, int, int] | None:
    """The pixel box of the wet disc on the floor (the whole room's floor once it is covered)."""
    if math.isinf(source.radius):
        rid = rooms.index[source.room]
        rows, cols = np.nonzero(rooms.labels == rid)
        x0, x1 = rooms.x0 + cols.min() * rooms.cell, rooms.x0 + (cols.max() + 1) * rooms.cell
        y0, y1 = rooms.y0 + rows.min() * rooms.cell, rooms.y0 + (rows.max() + 1) * rooms.cell
    else:
        r = source.radius
        x0, x1, y0, y1 = source.x - r, source.x + r, source.y - r, source.y + r
    quad = np.array([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]])
    return pixel_bounds(view, quad, np.array([[0, 1, 2], [0, 2, 3]]))
