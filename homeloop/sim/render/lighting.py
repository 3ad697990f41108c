"""Direct light and shadows in a frame: each room's fittings, lamps, fires and windows (docs/dynamics.md).

The light model (:mod:`homeloop.sim.dynamics.light`) gives each room one
illuminance, the figure perception's light gate reads. The renderer keeps that
figure and spreads it over the room the way its sources would:

- **sources** (:class:`Emitter`): every light fitting (a ceiling fitting
  shines from just under its housing, mostly downward; a lamp from its shade,
  every way; a wall light from its face, outward and down), every window of a
  room (a rectangle on the wall's inner face, shining inward: the daylight of
  the overcast sky the model assumes), every burning pan (over its rim, every
  way), and the open sky over outdoor rooms and the ground round the home.
- **shares**: each source's part of its room's illuminance, as the light
  model gives it (:meth:`Light.source_lux`: a fitting's lumens by its mount
  and brightness when it is on; a window's uncovered glazing times the
  daylight; a fire's lumens), then scaled so the room's sources add up to
  exactly :meth:`Light.lux`. A room the model calls dark gets no more light
  here than it says.
- **direct light** at a surface point from a source: the cosine at the
  surface over the squared distance (softened by the source's size), times
  how strongly the source shines that way, divided by the same term's mean
  over the room's floor. So a source lights its room's floor, on average, with
  exactly its share; a wall beside a lamp gets more (up to :data:`PEAK_SHARE`
  times), the far corner less.
- **shadows**: one shadow ray per lit sampled pixel, to one point of one
  source, against the opaque scene (moving things included, less what the
  frame hides). The source is picked in proportion to what it would give the
  point unshadowed, and the point in one of :data:`STRATA` x :data:`STRATA`
  cells of the source's area, both from interleaved gradient noise over the
  pixel grid (its values in any small block of pixels spread evenly over
  [0, 1)), jittered and offset by a hash of the episode's seed and the camera
  pose: the same frame for the same seed, pose and moment. The pixel's direct
  light is its unshadowed total times the share of its block's rays (those
  from the same surface) that reached their sources: smooth over a penumbra,
  and exact wherever a surface sees all its sources or none.
- **ambient**: :data:`AMBIENT_SHARE` of the room's illuminance reaches every
  surface whatever faces it (light bounced off the walls), still shaded a
  little by its angle to the camera so shapes read; and every surface gets
  :data:`DARK_FLOOR_LUX` on top, so a room with every light off is dark but
  not black.

The work is done on a grid of sampled pixels (about :data:`LIGHT_COLUMNS`
columns: every second pixel each way at 640 wide) and spread to the others
from the nearest samples that see the same flat surface (the same code in the
same plane: :class:`~homeloop.sim.render.raycast.Faces`); a pixel none of its
neighbours matches (a thin edge) is worked out on its own. A dome camera
takes frame after frame from one pose, so the sampled pixels' work is kept
(:data:`LightCache`): a pixel that sees what it saw keeps its geometry and its
shadow ray, cast again only when its source changes or the moving things move.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import shapely

from homeloop.core.home import Home, polygon_from_rings
from homeloop.sim.dynamics.light import Light, outdoor_lux
from homeloop.sim.render.effects import flame_sites
from homeloop.sim.render.raycast import Caster, Geometry, Hits, PoseCache
from homeloop.sim.render.rooms import RoomGrid
from homeloop.sim.render.scene import FRAME_WIDTH_M, OpeningFrame
from homeloop.sim.visibility import Entity, Solid
from homeloop.sim.world import World

#: Share of a room's illuminance reaching every surface whatever faces it (bounced light).
AMBIENT_SHARE = 0.35
#: How much the ambient light still follows a surface's angle to the camera (so shapes read).
FORM_SHARE = 0.4
#: Illuminance every surface gets with every light off (lux): the glow of the night outside,
#: standby lights. Well under the perception's brightness floor: a dark room stays dark.
DARK_FLOOR_LUX = 1.5
#: Most a source's direct light at a point may exceed its share (a wall right beside a lamp).
PEAK_SHARE = 4.0
#: Shadow rays leave the surface this far along its normal (m), clear of the surface itself.
SHADOW_BIAS_M = 0.004
#: Shadow rays toward a window aim at the middle of its pane, this share of it each way: the
#: daylight is the sky seen through it, and a narrower source keeps penumbrae (and their grain) narrow.
WINDOW_SAMPLE_SHARE = 0.5
#: How far a shadow ray toward the sky reaches (m): past anything of the home.
SKY_REACH_M = 60.0
#: How far a hit point is stepped back toward the camera to find its room (m): past a wall's face.
ROOM_PROBE_M = 0.08
#: Floor points per room the sources' mean floor light is worked out on.
FLOOR_SAMPLES = 256
#: Light is worked out on about this many columns of pixels (every second pixel at 640 wide, every
#: fourth at 1280) and spread to the rest from the samples that see the same surface.
LIGHT_COLUMNS = 320
#: Strata per side of a source's area: shadow rays aim at points spread over as many cells of it,
#: and each pixel's verdict is averaged with its neighbours' over a block this many pixels wide.
STRATA = 3
#: Irrational steps of the jitter within a stratum, over the pixel grid's columns and lines: a
#: different, evenly spread sequence for each of a pixel's three numbers.
_STEPS = (0.7548776662466927, 0.5698402909980532, 0.6180339887498949, 0.4142135623730951, 0.3247179572447460)


@dataclass(frozen=True)
class Emitter:
    """A light source (see the module docstring). ``row``: the room it lights (its index in the
    room grid; the open air after the rooms). Points on it are ``centre + a * span_u + b * span_v``
    for a and b in [-1, 1]; a directional source (the sky) has its direction as ``centre``."""

    ident: str
    kind: str  # fitting | window | fire | sky
    row: int
    centre: tuple[float, float, float]
    axis: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the way it shines most (unit), or none
    spread: float = 1.0  # share of its light that goes every way (the rest follows the axis)
    span_u: tuple[float, float, float] = (0.0, 0.0, 0.0)
    span_v: tuple[float, float, float] = (0.0, 0.0, 0.0)
    clearance: float = 0.0  # shadow rays stop this short of it (m): its own housing
    soft: float = 0.05  # added to the squared distance (m²): a source's size
    directional: bool = False


@dataclass(frozen=True)
class _Fitting:
    emitter: Emitter
    device: str


@dataclass(frozen=True)
class _Window:
    emitter: Emitter
    opening: str


@dataclass
class Table:
    """The sources of every row with their light now (lux), padded to one count per row."""

    centre: np.ndarray  # (R, K, 3)
    axis: np.ndarray  # (R, K, 3)
    spread: np.ndarray  # (R, K)
    span_u: np.ndarray  # (R, K, 3)
    span_v: np.ndarray  # (R, K, 3)
    clearance: np.ndarray  # (R, K)
    soft: np.ndarray  # (R, K)
    directional: np.ndarray  # (R, K) bool
    norm: np.ndarray  # (R, K): the unnormalised term's mean over the row's floor
    weight: np.ndarray  # (R, K): lux the source gives its row now (0: padding)
    lux: np.ndarray  # (R,) the row's illuminance
    uniform: np.ndarray  # (R,) light of a row with light but no source to cast it (spread evenly)
    slots: tuple[tuple[str, ...], ...] = ()  # the sources of each row, slot by slot

    @classmethod
    def empty(cls, rows: int, k: int, lux: np.ndarray) -> "Table":
        """A table of ``rows`` rows of ``k`` sources each, all giving no light."""
        def vectors() -> np.ndarray:
            return np.zeros((rows, k, 3), dtype=np.float32)

        def scalars(value: float) -> np.ndarray:
            return np.full((rows, k), value, dtype=np.float32)

        return cls(vectors(), vectors(), scalars(1.0), vectors(), vectors(), scalars(0.0), scalars(0.05),
                   np.zeros((rows, k), dtype=bool), scalars(1.0), scalars(0.0), lux, np.zeros(rows, dtype=np.float32))


class LightRig:
    """The light sources of a home, gathered once per renderer (see the module docstring)."""

    def __init__(self, home: Home, rooms: RoomGrid, entities: Iterable[Entity]):
        self.rooms = rooms
        self.open_air = len(rooms.rooms)
        solids = {e.id: e.solid for e in entities if e.kind == "device"}
        by_id = {r.id: r for r in home.rooms}
        self.outdoor = np.array([by_id[r].outdoor for r in rooms.rooms] + [True])
        self._floors = [_floor_samples(rooms, i, by_id[r].floor_height) for i, r in enumerate(rooms.rooms)]
        self.fittings = _fittings(home, rooms, solids)
        self.windows = _windows(home, rooms)
        self._norms: dict[Emitter, float] = {}
        self._own: tuple[World, Light] | None = None

    def table(self, world: World, room_lux: np.ndarray, outside: float) -> Table:
        """Every row's sources and their light now: ``room_lux`` per room (the light model's),
        ``outside`` for the open air. Each source's light is the light model's
        (:meth:`Light.source_lux`): a fitting off, a window covered or at night gives none."""
        light = self._light(world)
        rooms = self.rooms.rooms
        rows: list[list[tuple[Emitter, float]]] = [[] for _ in range(self.open_air + 1)]
        for f in self.fittings:
            given = light.source_lux(rooms[f.emitter.row], "fitting", f.device)
            if given > 0:
                rows[f.emitter.row].append((f.emitter, given))
        for w in self.windows:
            given = light.source_lux(rooms[w.emitter.row], "window", w.opening)
            if given > 0:
                rows[w.emitter.row].append((w.emitter, given))
        for fire in self._fires(world):
            rows[fire.row].append((fire, light.source_lux(rooms[fire.row], "fire")))
        for row in np.flatnonzero(self.outdoor):
            given = light.source_lux(rooms[row], "sky") if row < self.open_air else outdoor_lux(world.clock_of_day())
            if given > 0:
                rows[row].append((sky(int(row)), given))
        lux = np.append(room_lux, outside).astype(np.float32)
        return self._pad(rows, lux)

    def _light(self, world: World) -> Light:
        """The world's light model; one of the rig's own, bound to the world, where it runs none."""
        light = world.running(Light)
        if light is not None:
            return light
        if self._own is None or self._own[0] is not world:
            own = Light()
            own.step(world, 0.0)  # binds it: it reads the world when asked
            self._own = (world, own)
        return self._own[1]

    def _fires(self, world: World) -> list[Emitter]:
        out = []
        for pan, x, y, rim, _ in flame_sites(world):
            row = int(self.rooms.lookup(np.array([x]), np.array([y]))[0])
            if row >= 0:
                out.append(Emitter(f"fire:{pan}", "fire", row, (x, y, rim + 0.15)))
        return out

    def _pad(self, rows: list[list[tuple[Emitter, float]]], lux: np.ndarray) -> Table:
        t = Table.empty(len(rows), max(1, max(len(r) for r in rows)), lux)
        t.slots = tuple(tuple(sorted(e.ident for e, _ in row)) for row in rows)
        for i, row in enumerate(rows):
            given = sum(w for _, w in row)
            if given <= 0:
                t.uniform[i] = lux[i]
                continue
            scale = lux[i] / given  # the light model's total is the room's light
            for j, (e, w) in enumerate(sorted(row, key=lambda ew: ew[0].ident)):
                t.centre[i, j], t.axis[i, j], t.spread[i, j] = e.centre, e.axis, e.spread
                t.span_u[i, j], t.span_v[i, j] = e.span_u, e.span_v
                t.clearance[i, j], t.soft[i, j], t.directional[i, j] = e.clearance, e.soft, e.directional
                t.norm[i, j] = self._norm(e)
                t.weight[i, j] = w * scale
        return t

    def _norm(self, e: Emitter) -> float:
        """The mean over the row's floor of the emitter's unnormalised term (1 for the sky)."""
        if e.directional or e.row >= len(self._floors):
            return 1.0
        if e not in self._norms:
            floor = self._floors[e.row]
            if not len(floor):
                self._norms[e] = 1.0
            else:
                up = np.broadcast_to(np.array([0.0, 0.0, 1.0]), floor.shape)
                term = _term(floor, up, np.array(e.centre), np.array(e.axis), e.spread, e.soft, False)
                self._norms[e] = max(float(term.mean()), 1e-9)
        return self._norms[e]


def sky(row: int) -> Emitter:
    """The sky over an outdoor row: light from above, over a wide cone (soft shadows)."""
    return Emitter("sky", "sky", row, (0.0, 0.0, 1.0), span_u=(0.7, 0.0, 0.0), span_v=(0.0, 0.7, 0.0), soft=0.0,
                   directional=True)


def _term(points: np.ndarray, normals: np.ndarray, centre: np.ndarray, axis: np.ndarray, spread: np.ndarray | float,
          soft: np.ndarray | float, directional: np.ndarray | bool) -> np.ndarray:
    """A source's unnormalised direct light at surface points (arrays of any matching leading shape,
    last axis 3): the cosine at the surface times how strongly the source shines that way, over the
    softened squared distance (a directional source: the cosine times its strength that way)."""
    sky = np.asarray(directional)
    towards = [np.where(sky, centre[..., i], centre[..., i] - points[..., i]) for i in range(3)]
    d2 = towards[0] * towards[0] + towards[1] * towards[1] + towards[2] * towards[2]
    inv = 1.0 / np.sqrt(np.maximum(d2, 1e-12))
    cos_at = np.maximum((normals[..., 0] * towards[0] + normals[..., 1] * towards[1] + normals[..., 2] * towards[2])
                        * inv, 0.0)
    cos_out = np.maximum(-(axis[..., 0] * towards[0] + axis[..., 1] * towards[1] + axis[..., 2] * towards[2]) * inv,
                         0.0)
    emit = spread + (1.0 - np.asarray(spread)) * cos_out
    out: np.ndarray = cos_at * emit / np.where(sky, 1.0, d2 + soft)
    return out


def _floor_samples(rooms: RoomGrid, index: int, z: float) -> np.ndarray:
    """Up to :data:`FLOOR_SAMPLES` points of a room's floor, evenly through its raster cells."""
    cells = np.argwhere(rooms.labels == index)
    if len(cells) > FLOOR_SAMPLES:
        cells = cells[np.linspace(0, len(cells) - 1, FLOOR_SAMPLES).astype(np.int64)]
    x = rooms.x0 + (cells[:, 1] + 0.5) * rooms.cell
    y = rooms.y0 + (cells[:, 0] + 0.5) * rooms.cell
    return np.column_stack([x, y, np.full(len(cells), z)])


# --- the home's sources --------------------------------------------------------------------------


def _fittings(home: Home, rooms: RoomGrid, solids: dict[str, Solid]) -> list[_Fitting]:
    """Every light device with a room, where it shines from (its light: :meth:`Light.source_lux`)."""
    out = []
    for d in sorted(home.devices, key=lambda d: d.id):
        if d.type != "light" or d.room is None or d.room not in rooms.index:
            continue
        row = rooms.index[d.room]
        solid = solids.get(d.id)
        if solid is not None:
            (x0, y0), (x1, y1) = solid.ring.min(axis=0), solid.ring.max(axis=0)
            z0, z1 = solid.z0, solid.z1
        else:
            x0, y0, x1, y1 = d.pose.x - 0.05, d.pose.y - 0.05, d.pose.x + 0.05, d.pose.y + 0.05
            z0 = z1 = d.pose.z
        out.append(_Fitting(_fitting_emitter(d.id, d.mount, row, (x0, y0, z0, x1, y1, z1), d.pose.yaw), d.id))
    return out


def _fitting_emitter(ident: str, mount: str, row: int, box: tuple[float, ...], yaw: float) -> Emitter:
    """Where a fitting shines from, by its mount: under a ceiling fitting's housing, off a wall
    light's face, in a lamp's shade."""
    x0, y0, z0, x1, y1, z1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    hx, hy = (x1 - x0) / 2 + 0.05, (y1 - y0) / 2 + 0.05
    if mount == "ceiling":
        return Emitter(ident, "fitting", row, (cx, cy, z0 - 0.02), (0.0, 0.0, -1.0), 0.3, (hx, 0.0, 0.0),
                       (0.0, hy, 0.0))
    if mount == "wall":
        c, s = math.cos(yaw), math.sin(yaw)
        down = np.array([c, s, -0.6]) / math.sqrt(1.36)
        return Emitter(ident, "fitting", row, (cx + 0.06 * c, cy + 0.06 * s, (z0 + z1) / 2),
                       (float(down[0]), float(down[1]), float(down[2])), 0.5, (0.03, 0.0, 0.0), (0.0, 0.03, 0.0))
    shade = max(z0, z1 - 0.08)
    reach = math.sqrt(hx * hx + hy * hy + (z1 - shade) ** 2)
    return Emitter(ident, "fitting", row, (cx, cy, shade), span_u=(0.03, 0.0, 0.0), span_v=(0.0, 0.03, 0.0),
                   clearance=reach)


def _windows(home: Home, rooms: RoomGrid) -> list[_Window]:
    """Every window with one indoor room, as a rectangle on the inner face of its wall, shining into
    the room (its light: :meth:`Light.source_lux`, which counts only the light model's glazing)."""
    outdoor = {r.id for r in home.rooms if r.outdoor}
    floor = {r.id: r.floor_height for r in home.rooms}
    out = []
    for o in sorted(home.openings, key=lambda o: o.id):
        inside = [rid for rid in o.connects if rid not in outdoor]
        if o.kind != "window" or len(inside) != 1 or inside[0] not in rooms.index:
            continue
        row = rooms.index[inside[0]]
        frame = OpeningFrame.of(shapely.make_valid(polygon_from_rings(o.polygon)).buffer(0))
        inward = _inward(rooms, row, frame)
        centre = frame.centre + inward * (frame.depth / 2 + 0.03)
        z = floor[inside[0]] + o.sill + o.height / 2
        half_w = WINDOW_SAMPLE_SHARE * max(frame.width / 2 - FRAME_WIDTH_M - 0.01, 0.02)
        half_h = WINDOW_SAMPLE_SHARE * max(o.height / 2 - FRAME_WIDTH_M - 0.01, 0.02)
        area = o.width * o.height
        emitter = Emitter(o.id, "window", row, (float(centre[0]), float(centre[1]), z),
                          (float(inward[0]), float(inward[1]), 0.0), 0.0,
                          (float(frame.along[0] * half_w), float(frame.along[1] * half_w), 0.0), (0.0, 0.0, half_h),
                          soft=area / math.pi)
        out.append(_Window(emitter, o.id))
    return out


def _inward(rooms: RoomGrid, row: int, frame: OpeningFrame) -> np.ndarray:
    """The unit vector across an opening pointing into room ``row``."""
    probe = frame.centre + frame.across * (frame.depth / 2 + 0.1)
    ahead = int(rooms.lookup(np.array([probe[0]]), np.array([probe[1]]))[0])
    across: np.ndarray = frame.across if ahead == row else -frame.across
    return across


# --- a frame's light -------------------------------------------------------------------------------


def room_lux(world: World, rooms: RoomGrid) -> tuple[np.ndarray, float]:
    """Illuminance of each room (indexed as the grid's rooms) and outdoors, now."""
    outside = outdoor_lux(world.clock_of_day())
    light = world.running(Light)
    if light is None:
        return np.full(len(rooms.rooms), 500.0, dtype=np.float32), outside
    return np.array([light.lux(r) for r in rooms.rooms], dtype=np.float32), outside


@dataclass
class _Even:
    """What a frame worked out on its sampled pixels, kept for the next frame from the same pose: a
    pixel that sees the same thing again keeps its geometry, its shadow ray and the ray's verdict
    against the static scene while it picks the same source, and against the moving things while
    they have not moved."""

    code: np.ndarray  # (M,) what each pixel saw, and how far: to tell which pixels changed
    depth: np.ndarray
    slots: tuple[tuple[str, ...], ...]  # the table's sources, row by row
    static: Geometry  # the caster's static geometry the verdicts were cast against
    row: np.ndarray  # (M,)
    form: np.ndarray  # (M,) the ambient's shading by the angle to the camera
    share: np.ndarray  # (M, K) each slot's direct light over its share (0 where unlit)
    points: np.ndarray  # (M, 3) the surface points, and their normals toward the camera (where lit)
    normals: np.ndarray
    samples: tuple[np.ndarray, np.ndarray, np.ndarray]  # which source, and where on it (_samples)
    pick: np.ndarray  # (M,) the slot the shadow ray went to (-1: none)
    origins: np.ndarray  # (M, 3) the shadow rays
    directions: np.ndarray  # (M, 3)
    reach: np.ndarray  # (M,)
    blocked: np.ndarray  # (M,) by the static scene
    weight: np.ndarray | None = None  # the table's weights the picks and ``direct`` were made with
    direct: np.ndarray | None = None  # (M,) unshadowed direct light (lux)
    moving: Geometry | None = None  # the moving scene ``held`` was cast against
    held: np.ndarray | None = None  # (M,) blocked by it
    aimed: np.ndarray | None = None  # (M,) shadow rays aimed anew this frame


#: The sampled-pixel work of the last frames from a few camera poses.
LightCache = PoseCache[_Even]


class FrameLight:
    """The illuminance (lux) at every pixel's surface in one frame (see the module docstring)."""

    def __init__(self, rig: LightRig, table: Table, hits: Hits, caster: Caster, hide: Iterable[str],
                 ground: np.ndarray, seed: int):
        self.rig, self.table, self.hits, self.caster = rig, table, hits, caster
        self.hide = frozenset(hide)
        self.ground = ground  # per code: the ground outside
        view = hits.view
        camera = int(rig.rooms.lookup(np.array([view.x]), np.array([view.y]))[0])
        self.camera_row = camera if camera >= 0 else rig.open_air
        self.stride = max(2, round(view.width / LIGHT_COLUMNS))
        pose = repr((seed, view.x, view.y, view.z, view.yaw, view.pitch, view.hfov_deg, view.width, view.height))
        digest = hashlib.sha256(pose.encode("utf-8")).digest()
        self.salt = int.from_bytes(digest[:4], "little")  # the frame's own samples

    def illuminance(self, cache: LightCache | None = None) -> np.ndarray:
        """Lux at every pixel's surface (the open air's for rays that leave the home); ``cache``
        keeps the sampled pixels' work for the next frame from the same pose."""
        hits, s = self.hits, self.stride
        h, w = hits.view.height, hits.view.width
        rows, cols = np.arange(0, h, s), np.arange(0, w, s)
        shape = (len(rows), len(cols))
        sampled = (rows[:, None] * w + cols[None, :]).ravel()
        state = self._even(sampled, cache.get(hits.view) if cache is not None else None)
        if cache is not None:
            cache.put(hits.view, state)
        base, direct, free = self._light(state)
        surface = hits.surface.reshape(h, w)
        free = _blur_same_surface(free.reshape(shape), direct.reshape(shape) > 0, surface[::s, ::s])
        lux = base.reshape(shape) + (1 - AMBIENT_SHARE) * direct.reshape(shape) * free
        out, missing = _spread(lux.astype(np.float32), surface, s)
        if len(missing):
            base, direct, free = self._light(self._even(missing, None))
            out[missing] = base + (1 - AMBIENT_SHARE) * direct * free
        return out

    def rows(self, index: np.ndarray) -> np.ndarray:
        """The row (room, or the open air) lighting each pixel's surface: its hit point's room,
        stepped back toward the camera; the camera's own where that is in no room; the open air for
        the ground and the sky."""
        hits = self.hits
        depth = hits.depth[index]
        reach = np.where(np.isfinite(depth), depth - ROOM_PROBE_M, 0.0).astype(np.float32)
        d = np.take(hits.directions, index, axis=0)
        room = self.rig.rooms.lookup(hits.view.x + d[:, 0] * reach, hits.view.y + d[:, 1] * reach).astype(np.int64)
        row = np.where(room >= 0, room, self.camera_row)
        outside = np.append(self.ground, True)[hits.code[index]]  # code -1 (the sky) counts as outside
        out: np.ndarray = np.where(outside, self.rig.open_air, row)
        return out

    def _even(self, index: np.ndarray, last: _Even | None) -> _Even:
        """The geometry and shadow rays of the pixels ``index``, reusing ``last`` (the same pixels in
        the last frame from this pose) where a pixel sees what it saw then."""
        hits, t = self.hits, self.table
        code, depth = hits.code[index], hits.depth[index]
        if last is None or last.slots != t.slots or last.static is not self.caster.static:
            state = self._fresh(index, code, depth)
        else:
            state = last
            changed = np.flatnonzero((code != last.code) | (depth != last.depth))
            if len(changed):
                state = _merge(last, changed, self._fresh(index[changed], code[changed], depth[changed]), code, depth)
        state.aimed = np.zeros(len(index), dtype=bool)
        if state.weight is not None and np.array_equal(state.weight, t.weight) and (state.pick != -2).all():
            return state  # the same light as last time: the same picks and the same direct light
        given = np.take(t.weight, state.row, axis=0) * state.share
        state.weight, state.direct = t.weight.copy(), given.sum(axis=1)
        u, a, b = state.samples
        pick = self._pick(u, given)
        moved = np.flatnonzero(pick != state.pick)  # another source: another ray
        if len(moved):
            self._aim(state, moved, pick[moved], a[moved], b[moved])
        return state

    def _fresh(self, index: np.ndarray, code: np.ndarray, depth: np.ndarray) -> _Even:
        """The geometry of the pixels ``index`` worked out anew (shadow rays not aimed yet)."""
        hits, t = self.hits, self.table
        row = self.rows(index)
        form = ((1.0 - FORM_SHARE) + FORM_SHARE * hits.facing[index]).astype(np.float32)
        n, k = len(index), t.weight.shape[1]
        lit = np.flatnonzero((code >= 0) & (np.take(t.weight, row, axis=0).sum(axis=1) > 0))
        if len(lit) == n:  # every pixel lit (the usual case): no picking out
            points, normals = hits.points(index), hits.normal(index)
            share = self._shares(points, normals, row)
        else:
            share = np.zeros((n, k), dtype=np.float32)
            points, normals = np.zeros((n, 3), np.float32), np.zeros((n, 3), np.float32)
            if len(lit):
                points[lit], normals[lit] = hits.points(index[lit]), hits.normal(index[lit])
                share[lit] = self._shares(points[lit], normals[lit], row[lit])
        return _Even(code, depth, t.slots, self.caster.static, row, form, share, points, normals,
                     self._samples(index), np.full(n, -1), np.zeros((n, 3), np.float32),
                     np.zeros((n, 3), np.float32), np.zeros(n, np.float32), np.zeros(n, dtype=bool))

    def _shares(self, points: np.ndarray, normals: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Each slot's unshadowed direct light at surface points over its share of the room's light."""
        t = self.table

        def take(a: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.take(a, row, axis=0)
            return out

        term = _term(points[:, None, :], normals[:, None, :], take(t.centre), take(t.axis), take(t.spread),
                     take(t.soft), take(t.directional))
        out: np.ndarray = np.minimum(term / take(t.norm), PEAK_SHARE).astype(np.float32)
        return out

    @staticmethod
    def _pick(u: np.ndarray, given: np.ndarray) -> np.ndarray:
        """The slot each pixel's shadow ray goes to (``u`` in [0, 1) per pixel), in proportion to
        what it gives (-1: none gives)."""
        total = given.sum(axis=1)
        if given.shape[1] == 1:
            one: np.ndarray = np.where(total > 0, 0, -1)
            return one
        pick = np.minimum((np.cumsum(given, axis=1) <= (u * total)[:, None]).sum(axis=1), given.shape[1] - 1)
        out: np.ndarray = np.where(total > 0, pick, -1)
        return out

    def _aim(self, state: _Even, which: np.ndarray, pick: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Aim the shadow rays of the pixels ``which`` (positions in ``state``) at their picked slots,
        at the points ``a``, ``b`` (in [0, 1) each way) on them, and cast them against the static scene."""
        state.pick[which] = pick
        state.blocked[which] = False
        if state.aimed is not None:
            state.aimed[which] = True
        lit = pick >= 0
        on, a, b = which[lit], a[lit], b[lit]
        if not len(on):
            return
        t = self.table
        every = len(on) == len(state.pick)  # all of them (a new pose): no picking out

        def mine(a: np.ndarray) -> np.ndarray:
            return a if every else a[on]

        flat = mine(state.row) * t.weight.shape[1] + mine(state.pick)
        towards = np.take(t.centre.reshape(-1, 3), flat, axis=0)  # the sample point (the sky: its direction)
        u, v = (2 * a - 1).astype(np.float32), (2 * b - 1).astype(np.float32)
        span_u, span_v = np.take(t.span_u.reshape(-1, 3), flat, axis=0), np.take(t.span_v.reshape(-1, 3), flat, axis=0)
        origins = mine(state.normals) * np.float32(SHADOW_BIAS_M)
        origins += mine(state.points)
        sky = t.directional.ravel()[flat]
        for k in range(3):  # column by column: a row of three times one number is slow in numpy
            column = towards[:, k]
            column += u * span_u[:, k]
            column += v * span_v[:, k]
            if not sky.all():
                column -= np.where(sky, np.float32(0.0), origins[:, k])
        length = np.sqrt(np.einsum("ij,ij->i", towards, towards))
        scale = np.maximum(length, np.float32(1e-9))
        for k in range(3):
            towards[:, k] /= scale
        reach = np.where(sky, np.float32(SKY_REACH_M), length - t.clearance.ravel()[flat] - np.float32(SHADOW_BIAS_M))
        if every:
            state.blocked = self.caster.static.occluded(origins, towards, reach)
            state.origins, state.directions, state.reach = origins, towards, reach
        else:
            state.blocked[on] = self.caster.static.occluded(origins, towards, reach)
            state.origins[on], state.directions[on], state.reach[on] = origins, towards, reach

    def _light(self, state: _Even) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The light that needs no ray (dark floor and ambient, lux), the unshadowed direct light
        (lux), and whether the shadow ray found its source (1) or not (0; 1 where none was cast):
        its verdict against the static scene, and against the moving things as they stand now."""
        t = self.table
        lux = t.lux[state.row]
        seen = state.code >= 0
        even = (1 - AMBIENT_SHARE) * t.uniform[state.row] / np.maximum(lux, 1e-9)  # a row without sources
        base = DARK_FLOOR_LUX + lux * np.where(seen, AMBIENT_SHARE * state.form + even, 1.0)
        moving = self.caster.moving(self.hide)
        cast = (state.pick >= 0) & ~state.blocked
        if state.held is None or state.moving is not moving or state.aimed is None:
            state.held, check = np.zeros(len(cast), dtype=bool), np.flatnonzero(cast)
        else:  # the moving things stood still: only the rays aimed anew are cast again
            check = np.flatnonzero(cast & state.aimed)
            state.held[state.aimed] = False
        if len(check):
            state.held[check] = moving.occluded(state.origins[check], state.directions[check], state.reach[check])
        state.moving = moving
        free = np.where(state.blocked | state.held, 0.0, 1.0)
        direct = state.direct if state.direct is not None else np.zeros(len(state.row))
        return base, direct, free

    def _samples(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Three numbers in [0, 1) per pixel: which source, and where on it. The point on the source
        is in one of :data:`STRATA` x :data:`STRATA` strata of it (jittered within), chosen by
        interleaved gradient noise over the sampled pixels, whose values in any small block of
        pixels spread evenly over [0, 1): the rays of a block together cover all of each source, so
        their average (:func:`_blur_same_surface`) is smooth, and no regular pattern shows. The pick
        of the source takes the same noise, shifted."""
        w = self.hits.view.width
        col = (index % w) // self.stride + self.salt % 64
        line = (index // w) // self.stride + (self.salt // 64) % 64
        cells = STRATA * STRATA
        stratum = np.minimum((_gradient_noise(col, line) * cells).astype(np.int64), cells - 1)
        jitter = [np.modf(col * _STEPS[j] + line * _STEPS[j + 1] + (self.salt % 65521) * _STEPS[j + 2])[0]
                  for j in range(3)]
        pick = np.modf(_gradient_noise(col + 37, line + 17) + jitter[0] / cells)[0]
        a = (stratum % STRATA + jitter[1]) / STRATA
        b = (stratum // STRATA + jitter[2]) / STRATA
        return pick, a, b


def _gradient_noise(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Interleaved gradient noise (Jimenez, 2014) at integer pixel coordinates: values in [0, 1)
    whose every few neighbours spread evenly over the range."""
    out: np.ndarray = np.modf(52.9829189 * np.modf(0.06711056 * x + 0.00583715 * y)[0])[0]
    return out


def _merge(last: _Even, changed: np.ndarray, part: _Even, code: np.ndarray, depth: np.ndarray) -> _Even:
    """``last`` with the pixels ``changed`` replaced by ``part`` (their shadow rays to aim again)."""
    out = _Even(code, depth, last.slots, last.static, last.row.copy(), last.form.copy(), last.share.copy(),
                last.points.copy(), last.normals.copy(), last.samples, last.pick.copy(), last.origins.copy(),
                last.directions.copy(), last.reach.copy(), last.blocked.copy(), moving=last.moving,
                held=None if last.held is None else last.held.copy())
    out.row[changed], out.form[changed], out.share[changed] = part.row, part.form, part.share
    out.points[changed], out.normals[changed] = part.points, part.normals
    out.pick[changed] = -2  # never a pick: aimed again
    return out


def _blur_same_surface(free: np.ndarray, lit: np.ndarray, surface: np.ndarray) -> np.ndarray:
    """The shadow rays' verdicts (on the grid of sampled pixels: 1 where the ray found its source,
    0 where not) averaged over each one's :data:`STRATA` x :data:`STRATA` neighbourhood, among the
    neighbours that are lit and see the same flat surface: a penumbra comes out smooth, a shadow's
    edge on another surface stays sharp. The verdicts are counted, so small integers will do."""
    h, w = free.shape
    reach = STRATA // 2
    pad = ((reach, reach), (reach, reach))
    surfaces = np.pad(surface, pad, constant_values=-2)  # beyond the frame: no surface
    lits = np.pad(lit, pad)
    frees = np.pad(free > 0.5, pad)
    total = np.zeros((h, w), dtype=np.uint8)
    count = np.zeros((h, w), dtype=np.uint8)
    same = np.empty((h, w), dtype=bool)
    for dy in range(2 * reach + 1):
        for dx in range(2 * reach + 1):
            np.equal(surfaces[dy:dy + h, dx:dx + w], surface, out=same)
            same &= lits[dy:dy + h, dx:dx + w]
            count += same
            same &= frees[dy:dy + h, dx:dx + w]
            total += same
    out: np.ndarray = np.where(count > 0, total / np.maximum(count, 1), free)
    return out


def _spread(coarse: np.ndarray, surface: np.ndarray, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """A value worked out every ``stride`` pixels each way (``coarse``), spread to every pixel (flat,
    H*W): blended between its nearest sampled neighbours, of those that see the same flat surface
    (``surface``, H x W); and the pixels none of them matches."""
    h, w = surface.shape
    surfaces = np.pad(surface[::stride, ::stride], ((0, 1), (0, 1)), mode="edge")
    values = np.pad(coarse, ((0, 1), (0, 1)), mode="edge")
    out = np.empty((h, w), dtype=np.float32)
    alone = np.zeros((h, w), dtype=bool)
    for py in range(min(stride, h)):
        for px in range(min(stride, w)):
            mine = surface[py::stride, px::stride]
            rows, cols = mine.shape
            if py == px == 0:
                out[::stride, ::stride] = coarse
                continue
            total = np.zeros((rows, cols), dtype=np.float32)
            count = np.zeros((rows, cols), dtype=np.float32)
            for dy, wy in ((0, 1 - py / stride), (1, py / stride)):
                for dx, wx in ((0, 1 - px / stride), (1, px / stride)):
                    if wy * wx <= 0:
                        continue
                    same = surfaces[dy:dy + rows, dx:dx + cols] == mine
                    np.add(total, np.float32(wy * wx) * values[dy:dy + rows, dx:dx + cols], out=total, where=same)
                    np.add(count, np.float32(wy * wx), out=count, where=same)
            out[py::stride, px::stride] = total / np.maximum(count, np.float32(1e-6))
            alone[py::stride, px::stride] = count == 0
    return out.ravel(), np.flatnonzero(alone.ravel())
