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
- **shadows**: one shadow ray per lit sampled pixel to each source of its
  room that lights it, aimed at the source's centre, against the opaque
  scene (moving things included, less what the frame hides). The pixel's
  direct light is each source's unshadowed light times whether its ray got
  through. Those verdicts, as the share of the pixel's direct light that got
  through, are then averaged over a small box of neighbouring samples that
  see the same flat surface (:data:`SHADOW_REACH`, twice over: a tent), so a
  shadow's edge is a penumbra that rises steadily from shadow to light, and
  an edge between surfaces stays sharp. There is no noise: the same pose and
  moment give the same light, and a flat surface in full light or full shadow
  is as smooth as its unshadowed light. (One ray per pixel to a random point
  of a random source, as before, left grain that read as soot or smoke.)
- **ambient**: :data:`AMBIENT_SHARE` of the room's illuminance reaches every
  surface whatever faces it (light bounced off the walls), still shaded a
  little by its angle to the camera so shapes read; and every surface gets
  :data:`DARK_FLOOR_LUX` on top, so a room with every light off is dark but
  not black.

The work is done on a grid of sampled pixels (about :data:`LIGHT_COLUMNS`
columns: every fourth pixel each way at 640 wide) and spread to the others
from the nearest samples that see the same flat surface (the same code in the
same plane: :class:`~homeloop.sim.render.raycast.Faces`); a pixel none of its
neighbours matches (a thin edge) is worked out on its own. A dome camera
takes frame after frame from one pose, so the sampled pixels' work is kept
(:data:`LightCache`): a pixel that sees what it saw keeps its geometry and its
shadow rays, cast again against the moving things only when they move.
"""

from __future__ import annotations

import functools
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
from homeloop.sim.render.scene import OpeningFrame
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
#: How far a shadow ray toward the sky reaches (m): past anything of the home.
SKY_REACH_M = 60.0
#: How far a hit point is stepped back toward the camera to find its room (m): past a wall's face.
ROOM_PROBE_M = 0.08
#: Floor points per room the sources' mean floor light is worked out on.
FLOOR_SAMPLES = 256
#: Light is worked out on about this many columns of pixels (every fourth pixel at 640 wide, every
#: eighth at 1280) and spread to the rest from the samples that see the same surface.
LIGHT_COLUMNS = 160
#: Shadow verdicts are averaged over a box this many sampled pixels each way (twice: a tent), among
#: those that see the same surface: the width of a penumbra, in samples.
SHADOW_REACH = 1


@dataclass(frozen=True)
class Emitter:
    """A light source (see the module docstring). ``row``: the room it lights (its index in the
    room grid; the open air after the rooms). Shadow rays aim at its ``centre``; a directional
    source (the sky) has its direction as ``centre``."""

    ident: str
    kind: str  # fitting | window | fire | sky
    row: int
    centre: tuple[float, float, float]
    axis: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the way it shines most (unit), or none
    spread: float = 1.0  # share of its light that goes every way (the rest follows the axis)
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

        return cls(vectors(), vectors(), scalars(1.0), scalars(0.0), scalars(0.05),
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
    """The sky over an outdoor row: light from straight above."""
    return Emitter("sky", "sky", row, (0.0, 0.0, 1.0), soft=0.0, directional=True)


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
        return Emitter(ident, "fitting", row, (cx, cy, z0 - 0.02), (0.0, 0.0, -1.0), 0.3)
    if mount == "wall":
        c, s = math.cos(yaw), math.sin(yaw)
        down = np.array([c, s, -0.6]) / math.sqrt(1.36)
        return Emitter(ident, "fitting", row, (cx + 0.06 * c, cy + 0.06 * s, (z0 + z1) / 2),
                       (float(down[0]), float(down[1]), float(down[2])), 0.5)
    shade = max(z0, z1 - 0.08)
    reach = math.sqrt(hx * hx + hy * hy + (z1 - shade) ** 2)
    return Emitter(ident, "fitting", row, (cx, cy, shade), clearance=reach)


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
        area = o.width * o.height
        emitter = Emitter(o.id, "window", row, (float(centre[0]), float(centre[1]), z),
                          (float(inward[0]), float(inward[1]), 0.0), 0.0, soft=area / math.pi)
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
    pixel that sees the same thing again keeps its geometry, its shadow rays and their verdicts
    against the static scene, and against the moving things while they have not moved. A pixel
    casts one shadow ray to each source of its row that lights it (``cast``); the rays do not
    depend on how bright the sources are, so a light dimmed keeps them."""

    code: np.ndarray  # (M,) what each pixel saw, and how far: to tell which pixels changed
    depth: np.ndarray
    slots: tuple[tuple[str, ...], ...]  # the table's sources, row by row
    static: Geometry  # the caster's static geometry the verdicts were cast against
    row: np.ndarray  # (M,)
    form: np.ndarray  # (M,) the ambient's shading by the angle to the camera
    share: np.ndarray  # (M, K) each slot's direct light over its share (0 where unlit)
    cast: np.ndarray  # (M, K) a shadow ray goes from the pixel to the slot
    origins: np.ndarray  # (M, 3) where the pixel's shadow rays leave its surface
    directions: np.ndarray  # (M, K, 3) toward each slot's point (unit)
    reach: np.ndarray  # (M, K)
    blocked: np.ndarray  # (M, K) by the static scene
    moving: Geometry | None = None  # the moving scene ``held`` was cast against
    held: np.ndarray | None = None  # (M, K) blocked by it
    fresh: np.ndarray | None = None  # (M,) pixels worked out anew this frame


#: The sampled-pixel work of the last frames from a few camera poses.
LightCache = PoseCache[_Even]


class FrameLight:
    """The illuminance (lux) at every pixel's surface in one frame (see the module docstring)."""

    def __init__(self, rig: LightRig, table: Table, hits: Hits, caster: Caster, hide: Iterable[str],
                 ground: np.ndarray, seed: int):
        self.rig, self.table, self.hits, self.caster = rig, table, hits, caster
        self.hide = frozenset(hide)
        self.ground = ground  # per code: the ground outside
        self.seed = seed  # the light has no noise: the same pose and moment give the same light
        view = hits.view
        camera = int(rig.rooms.lookup(np.array([view.x]), np.array([view.y]))[0])
        self.camera_row = camera if camera >= 0 else rig.open_air
        self.stride = max(2, round(view.width / LIGHT_COLUMNS))

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
            return self._fresh(index, code, depth)
        changed = np.flatnonzero((code != last.code) | (depth != last.depth))
        if not len(changed):
            last.fresh = np.zeros(len(index), dtype=bool)
            return last
        return _merge(last, changed, self._fresh(index[changed], code[changed], depth[changed]), code, depth)

    def _fresh(self, index: np.ndarray, code: np.ndarray, depth: np.ndarray) -> _Even:
        """The geometry of the pixels ``index`` worked out anew, and their shadow rays cast against
        the static scene."""
        hits, t = self.hits, self.table
        row = self.rows(index)
        form = ((1.0 - FORM_SHARE) + FORM_SHARE * hits.facing[index]).astype(np.float32)
        n, k = len(index), t.weight.shape[1]
        weight = np.take(t.weight, row, axis=0)
        lit = np.flatnonzero((code >= 0) & (weight.sum(axis=1) > 0))
        if len(lit) == n:  # every pixel lit (the usual case): no picking out
            points, normals = hits.points(index), hits.normal(index)
            share = self._shares(points, normals, row)
        else:
            share = np.zeros((n, k), dtype=np.float32)
            points, normals = np.zeros((n, 3), np.float32), np.zeros((n, 3), np.float32)
            if len(lit):
                points[lit], normals[lit] = hits.points(index[lit]), hits.normal(index[lit])
                share[lit] = self._shares(points[lit], normals[lit], row[lit])
        origins = normals * np.float32(SHADOW_BIAS_M)
        origins += points
        cast = (share > 0) & (weight > 0)
        directions, reach = self._aim(origins, row)
        blocked = np.zeros((n, k), dtype=bool)
        rays = np.flatnonzero(cast.ravel())
        if len(rays):
            blocked.ravel()[rays] = self.caster.static.occluded(
                np.take(origins, rays // k, axis=0), np.take(directions.reshape(-1, 3), rays, axis=0),
                reach.ravel()[rays])
        return _Even(code, depth, t.slots, self.caster.static, row, form, share, cast, origins, directions, reach,
                     blocked, fresh=np.ones(n, dtype=bool))

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

    def _aim(self, origins: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The unit direction (M, K, 3) from each origin to each slot of its row, and how far a
        shadow ray goes that way (M, K): to the source's point, less its housing; up to
        :data:`SKY_REACH_M` toward the sky."""
        t = self.table
        towards = np.take(t.centre, row, axis=0)  # (M, K, 3): the sample point (the sky: its direction)
        sky = np.take(t.directional, row, axis=0)
        if not sky.all():
            towards -= np.where(sky[..., None], np.float32(0.0), origins[:, None, :])
        length = np.sqrt(np.einsum("ijk,ijk->ij", towards, towards))
        towards /= np.maximum(length, np.float32(1e-9))[..., None]
        clearance = np.take(t.clearance, row, axis=0)
        reach = np.where(sky, np.float32(SKY_REACH_M), length - clearance - np.float32(SHADOW_BIAS_M))
        return towards, reach.astype(np.float32)

    def _light(self, state: _Even) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The light that needs no ray (dark floor and ambient, lux), the unshadowed direct light
        (lux), and the share of it whose shadow rays found their sources (1 where none was cast):
        their verdicts against the static scene, and against the moving things as they stand now."""
        t = self.table
        lux = t.lux[state.row]
        seen = state.code >= 0
        even = (1 - AMBIENT_SHARE) * t.uniform[state.row] / np.maximum(lux, 1e-9)  # a row without sources
        base = DARK_FLOOR_LUX + lux * np.where(seen, AMBIENT_SHARE * state.form + even, 1.0)
        moving = self.caster.moving(self.hide)
        open_ = state.cast & ~state.blocked
        if state.held is None or state.moving is not moving or state.fresh is None:
            state.held, check = np.zeros(open_.shape, dtype=bool), np.flatnonzero(open_.ravel())
        else:  # the moving things stood still: only the rays of the pixels worked out anew are cast again
            state.held[state.fresh] = False
            check = np.flatnonzero((open_ & state.fresh[:, None]).ravel())
        if len(check):
            k = open_.shape[1]
            state.held.ravel()[check] = moving.occluded(
                np.take(state.origins, check // k, axis=0), np.take(state.directions.reshape(-1, 3), check, axis=0),
                state.reach.ravel()[check])
        state.moving = moving
        given = np.take(t.weight, state.row, axis=0) * state.share
        direct = given.sum(axis=1)
        reached = np.where(state.blocked | state.held, np.float32(0.0), given).sum(axis=1)
        free = np.where(direct > 0, reached / np.maximum(direct, 1e-12), 1.0)
        return base, direct, free


def _merge(last: _Even, changed: np.ndarray, part: _Even, code: np.ndarray, depth: np.ndarray) -> _Even:
    """``last`` with the pixels ``changed`` replaced by ``part`` (worked out anew)."""
    out = _Even(code, depth, last.slots, last.static, last.row.copy(), last.form.copy(), last.share.copy(),
                last.cast.copy(), last.origins.copy(), last.directions.copy(), last.reach.copy(), last.blocked.copy(),
                moving=last.moving, held=None if last.held is None else last.held.copy())
    out.row[changed], out.form[changed], out.share[changed], out.cast[changed] = part.row, part.form, part.share, part.cast
    out.origins[changed], out.directions[changed] = part.origins, part.directions
    out.reach[changed], out.blocked[changed] = part.reach, part.blocked
    out.fresh = np.zeros(len(code), dtype=bool)
    out.fresh[changed] = True
    return out


def _blur_same_surface(free: np.ndarray, lit: np.ndarray, surface: np.ndarray) -> np.ndarray:
    """The share of direct light that reached each sampled pixel, averaged over a box
    :data:`SHADOW_REACH` samples each way among the neighbours that are lit and see the same flat
    surface: along the lines, then along the columns, twice (a tent). A shadow's edge on a surface
    comes out as a smooth penumbra that rises steadily from shadow to light; an edge between two
    surfaces stays sharp."""
    out = free.astype(np.float32)
    for _ in range(2):
        for axis in (1, 0):
            out = _box_along(out, lit, surface, axis)
    return out


def _box_along(value: np.ndarray, lit: np.ndarray, surface: np.ndarray, axis: int) -> np.ndarray:
    """``value`` averaged along one axis over :data:`SHADOW_REACH` samples each way, among the lit
    samples of the same surface (a sample with none keeps its value)."""
    reach = SHADOW_REACH
    pad = [(0, 0), (0, 0)]
    pad[axis] = (reach, reach)
    surfaces = np.pad(surface, pad, constant_values=-2)  # beyond the frame: no surface
    lits = np.pad(lit, pad)
    values = np.pad(value, pad)
    n = value.shape[axis]
    total = np.zeros(value.shape, dtype=np.float32)
    count = np.zeros(value.shape, dtype=np.float32)
    same = np.empty(value.shape, dtype=bool)
    for d in range(2 * reach + 1):
        window = (slice(None), slice(d, d + n)) if axis == 1 else (slice(d, d + n), slice(None))
        np.equal(surfaces[window], surface, out=same)
        same &= lits[window]
        np.add(total, values[window], out=total, where=same)
        count += same
    out: np.ndarray = np.where(count > 0, total / np.maximum(count, np.float32(1)), value).astype(np.float32)
    return out


def _spread(coarse: np.ndarray, surface: np.ndarray, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """A value worked out every ``stride`` pixels each way (``coarse``, finite), spread to every pixel
    (flat, H*W): blended between its nearest sampled neighbours, of those that see the same flat
    surface (``surface``, H x W); and the pixels none of them matches.

    The whole frame at once: each of the four neighbours (the sample above-left of a pixel, and the
    next one right, down, and both) is the coarse grid blown up ``stride`` times and shifted by a
    sample, its weight a fixed plane per frame size (:func:`_spread_weights`); a neighbour on
    another surface adds nothing."""
    h, w = surface.shape
    s = stride
    surfaces = np.pad(surface[::s, ::s], ((0, 1), (0, 1)), mode="edge")
    values = np.pad(coarse, ((0, 1), (0, 1)), mode="edge")
    big_surfaces = np.repeat(np.repeat(surfaces, s, axis=0), s, axis=1)
    big_values = np.repeat(np.repeat(values, s, axis=0), s, axis=1)
    total = np.zeros((h, w), dtype=np.float32)
    count = np.zeros((h, w), dtype=np.float32)
    same = np.empty((h, w), dtype=bool)
    share = np.empty((h, w), dtype=np.float32)
    for dy, dx, weight in _spread_weights(h, w, s):
        window = (slice(dy * s, dy * s + h), slice(dx * s, dx * s + w))
        np.equal(big_surfaces[window], surface, out=same)
        np.multiply(weight, same, out=share)  # 0 off the surface: adds nothing below
        count += share
        share *= big_values[window]
        total += share
    out = total / np.maximum(count, np.float32(1e-6))
    return out.ravel(), np.flatnonzero((count == 0).ravel())


@functools.lru_cache(maxsize=8)
def _spread_weights(h: int, w: int, stride: int) -> tuple[tuple[int, int, np.ndarray], ...]:
    """For each neighbour (dy, dx) of :func:`_spread`, its bilinear weight at every pixel (H x W,
    float32, read-only): a pixel ``py`` rows and ``px`` columns past its sample weighs the next
    sample down by ``py / stride`` and the next one right by ``px / stride``."""
    fy = np.arange(h) % stride / stride
    fx = np.arange(w) % stride / stride
    out = []
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            weight = (wy[:, None] * wx[None, :]).astype(np.float32)
            weight.flags.writeable = False
            out.append((dy, dx, weight))
    return tuple(out)
