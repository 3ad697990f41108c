"""Candidate poses for one item: one generator per constraint kind of the item.

Against a wall: every wall face of the room, walked at :data:`WALL_STEP`; beside, in front
of, around or facing an earlier item; in or beside the counter run; at the room's centre.
Each generator returns :class:`~homeloop.pipeline.furnish.candidates.Candidates` with its own
preference (``quality``); which of them fit is for the filters and constraints to say.
"""

from __future__ import annotations

import math

import numpy as np

from homeloop.core.catalog import Constraint, FurnitureEntry
from homeloop.core.geometry import opening_axes
from homeloop.pipeline.furnish.candidates import Candidates, aranges, from_local
from homeloop.pipeline.furnish.constraints import BESIDE_MAX_GAP, IN_FRONT_MAX, IN_FRONT_MIN
from homeloop.pipeline.furnish.context import PlacedItem
from homeloop.pipeline.furnish_geometry import RoomGeometry, along_axes

#: Step (m) of candidate positions along a wall face.
WALL_STEP = 0.1
#: Gap (m) left between an item's back and the wall face it stands against.
WALL_GAP = 0.003
#: Gap (m) left behind an item that stands near a wall without being asked to stand against it.
LOOSE_WALL_GAP = 0.02


def generate(geom: RoomGeometry, entry: FurnitureEntry, hard: list[Constraint], soft: list[Constraint],
             keyed: dict[str, PlacedItem], placed: list[PlacedItem], against: bool) -> Candidates:
    """Every candidate pose of ``entry`` that its constraints call for, generator by generator
    in the constraints' order (``placed``: the room's furniture so far)."""
    d = entry.dimensions
    parts: list[Candidates] = []
    kinds = {c.kind for c in [*hard, *soft]}
    hard_kinds = {c.kind for c in hard}
    extra_s: list[np.ndarray] = []
    for c in [*hard, *soft]:
        if c.kind in ("at_feature", "near_feature"):
            for _, k, p in geom.features:
                if k == c.target:
                    extra_s.append(np.asarray(p.centroid.coords[0]))
    wall_wanted = against or kinds & {"against_wall", "corner", "facing", "beside_counter", "at_feature",
                                     "near_feature"} or not hard_kinds & {
        "in_counter", "on_counter", "beside", "in_front_of", "around", "center"}
    gap = WALL_GAP if (against or entry.placement == "against_wall") else LOOSE_WALL_GAP
    if wall_wanted:
        parts.append(along_walls(geom, d.width, d.depth, gap, extra_s, placed))
    for c in [*hard, *soft]:
        tgt = keyed.get(c.target) if c.target else None
        if c.kind == "beside" and tgt is not None:
            parts.append(_beside(tgt, d.width, d.depth, c))
        elif c.kind == "in_front_of" and tgt is not None:
            parts.append(_in_front(tgt, d.width, d.depth, c))
        elif c.kind == "around" and tgt is not None:
            parts.append(_around(tgt, d.width, d.depth))
        elif c.kind == "facing" and tgt is not None and not against:
            parts.append(_facing_free(tgt, d.width, d.depth))
        elif c.kind == "center":
            parts.append(_center(geom, d.width, d.depth))
        elif c.kind in ("in_counter", "on_counter"):
            parts.append(_in_counter(geom, d.width, d.depth))
        elif c.kind == "beside_counter":
            parts.append(_beside_counter(geom, d.width, d.depth))
    if not parts and entry.placement == "free":
        parts.append(_center(geom, d.width, d.depth))
    return Candidates.concat(parts)


def along_walls(geom: RoomGeometry, width: float, depth: float, gap: float, extra: list[np.ndarray],
                placed: list[PlacedItem]) -> Candidates:
    """Poses with the back ``gap`` off a wall face, facing into the room: every
    :data:`WALL_STEP` along each face that fits the width, at its far end, level with the
    ``extra`` points, and just past the ends of the features and floor furniture near the
    face (so an item can stand flush beside them). All faces are measured at once."""
    f = geom.faces
    lo, hi = f.s0 + width / 2, f.s1 - width / 2
    fit = np.flatnonzero(~(hi < lo - 1e-9))
    if not len(fit):
        return Candidates.empty()
    a, t, n, lo, hi = f.a[fit], f.t[fit], f.n[fit], lo[fit], hi[fit]
    levels = [hi[:, None], along_axes(np.asarray(extra).reshape(-1, 2), a, t)]
    valid = [np.ones((len(fit), 1 + len(extra)), bool)]
    # Things an item may stand flush beside: features and furniture on the floor.
    extents = [geom.feature_extents] + [p.extents_on(geom) for p in placed if p.on_floor]
    off_lo, off_hi, along_lo, along_hi = np.concatenate(extents, axis=2)[:, fit]
    if off_lo.shape[1]:
        near = ~((off_lo > depth + 0.1) | (off_hi < -0.01))
        ends = np.stack([along_lo - width / 2 - 0.005, along_hi + width / 2 + 0.005], axis=2)
        levels.append(ends.reshape(len(fit), -1))
        valid.append(np.repeat(near, 2, axis=1))
    level, ok = np.concatenate(levels, axis=1), np.concatenate(valid, axis=1)
    ok &= (level >= lo[:, None] - 1e-9) & (level <= hi[:, None] + 1e-9)
    # Face by face: the steps along it, then its levels in order.
    step_face, steps = aranges(lo, hi + 1e-9, WALL_STEP)
    level_face = np.nonzero(ok)[0]
    order = np.argsort(np.concatenate([2 * step_face, 2 * level_face + 1]), kind="stable")
    face = np.concatenate([step_face, level_face])[order]
    s = np.concatenate([steps, level[ok]])[order]
    centre = a[face] + s[:, None] * t[face] + n[face] * (depth / 2 + gap)
    return Candidates(centre[:, 0], centre[:, 1], f.heading[fit][face], np.zeros(len(s)))


def _center(geom: RoomGeometry, width: float, depth: float) -> Candidates:
    """A grid round the pole of the room's free floor, the item's width along the room's main
    axis first, then across it; nearer the pole is better."""
    pole = geom.pole()
    _, u, _, _, _ = opening_axes(geom.poly)
    axis = math.atan2(u[1], u[0])
    off = np.arange(-0.6, 0.61, 0.15)
    gx, gy = np.meshgrid(off, off)
    gx, gy = gx.ravel(), gy.ravel()
    cx = np.concatenate([pole.x + gx, pole.x + gx])
    cy = np.concatenate([pole.y + gy, pole.y + gy])
    yaw = np.concatenate([np.full(len(gx), axis + math.pi / 2), np.full(len(gx), axis)])
    q = -np.hypot(np.concatenate([gx, gx]), np.concatenate([gy, gy])) - np.concatenate(
        [np.zeros(len(gx)), np.full(len(gx), 0.05)])
    return Candidates(cx, cy, yaw, q)


def _beside(tgt: PlacedItem, width: float, depth: float, c: Constraint) -> Candidates:
    """Side by side with ``tgt``, backs aligned, at gaps up to the constraint's; smaller gaps first."""
    td = tgt.entry.dimensions
    lo = c.min_distance or 0.0
    hi = c.max_distance if c.max_distance is not None else BESIDE_MAX_GAP
    gaps = np.unique(np.clip(np.concatenate([[lo + 0.005], np.arange(lo, hi + 1e-9, 0.02)[1:], [hi]]), lo, hi))
    us, vs, qs = [], [], []
    for side in (1.0, -1.0):
        us.append(np.full(len(gaps), -td.depth / 2 + depth / 2))
        vs.append(side * (td.width / 2 + width / 2 + gaps))
        qs.append(-gaps)
    u, v, q = np.concatenate(us), np.concatenate(vs), np.concatenate(qs)
    return from_local(tgt.model.pose, u, v, np.zeros(len(u)), q)


def _in_front(tgt: PlacedItem, width: float, depth: float, c: Constraint) -> Candidates:
    """Facing ``tgt`` across the constraint's distances, centred or shifted a little along it;
    the middle distance, centred, is best."""
    td = tgt.entry.dimensions
    lo = c.min_distance if c.min_distance is not None else IN_FRONT_MIN
    hi = c.max_distance if c.max_distance is not None else IN_FRONT_MAX
    gaps = np.linspace(lo, hi, 5)
    slack = max(td.width - width, 0.0) / 2
    offs = np.unique(np.clip(np.array([0.0, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3]), -slack, slack))
    g, o = np.meshgrid(gaps, offs)
    g, o = g.ravel(), o.ravel()
    u = td.depth / 2 + np.maximum(g, 0.005) + depth / 2
    mid = (lo + hi) / 2
    return from_local(tgt.model.pose, u, o, np.full(len(u), math.pi), -np.abs(g - mid) - np.abs(o))


def _around(tgt: PlacedItem, width: float, depth: float) -> Candidates:
    """Along the sides of ``tgt``, each facing it, as many to a side as fit; the long sides first."""
    td = tgt.entry.dimensions
    us, vs, yaws, qs = [], [], [], []
    # Long sides (along the table's y axis), then the ends.
    for axis, length, reach in (("y", td.width, td.depth), ("x", td.depth, td.width)):
        k = int(max(length // (width + 0.1), 0))
        if k == 0:
            continue
        pos = (np.arange(k) - (k - 1) / 2) * (length / k)
        for side in (1.0, -1.0):
            off = side * (reach / 2 + depth / 2 + 0.01)
            if axis == "y":
                us.append(np.full(k, off))
                vs.append(pos)
                yaws.append(np.full(k, math.pi if side > 0 else 0.0))
                qs.append(np.full(k, 1.0))
            else:
                us.append(pos)
                vs.append(np.full(k, off))
                yaws.append(np.full(k, -math.pi / 2 if side > 0 else math.pi / 2))
                qs.append(np.zeros(k))
    if not us:
        return Candidates.empty()
    return from_local(tgt.model.pose, np.concatenate(us), np.concatenate(vs), np.concatenate(yaws),
                      np.concatenate(qs))


def _facing_free(tgt: PlacedItem, width: float, depth: float) -> Candidates:
    """On rings round ``tgt``, facing its centre; the nearest ring first."""
    td = tgt.entry.dimensions
    angles = np.arange(16) * (2 * math.pi / 16)
    rs = np.array([0.3, 0.5, 0.8])
    a, r = np.meshgrid(angles, rs)
    a, r = a.ravel(), r.ravel()
    radius = np.hypot(td.depth, td.width) / 2 + depth / 2 + r
    u, v = radius * np.cos(a), radius * np.sin(a)
    yaw = a + math.pi
    return from_local(tgt.model.pose, u, v, yaw, -r)


def _in_counter(geom: RoomGeometry, width: float, depth: float) -> Candidates:
    """Sections of each counter run, every 5 cm along it."""
    parts: list[Candidates] = []
    for ctr in geom.counters:
        lo, hi = -ctr.length / 2 + width / 2, ctr.length / 2 - width / 2
        if hi < lo - 1e-9:
            continue
        s = np.concatenate([np.arange(lo, hi + 1e-9, 0.05), [hi]])
        # Front flush with the counter front; back flush with the wall if the counter is shallower.
        off = ctr.depth / 2 - depth / 2 if ctr.depth >= depth else -ctr.depth / 2 + depth / 2 + WALL_GAP
        centre = ctr.centre[None, :] + s[:, None] * ctr.u[None, :] + ctr.front[None, :] * off
        parts.append(Candidates(centre[:, 0], centre[:, 1], np.full(len(s), math.atan2(ctr.front[1], ctr.front[0])),
                                np.zeros(len(s))))
    return Candidates.concat(parts)


def _beside_counter(geom: RoomGeometry, width: float, depth: float) -> Candidates:
    """Just past either end of each counter run, back to its wall; the smallest gap first."""
    xs, ys, yaws, qs = [], [], [], []
    for ctr in geom.counters:
        for end in (1.0, -1.0):
            for gap in (0.005, 0.03, 0.06):
                s = end * (ctr.length / 2 + width / 2 + gap)
                off = -ctr.depth / 2 + depth / 2 + WALL_GAP
                centre = ctr.centre + ctr.u * s + ctr.front * off
                xs.append(centre[0])
                ys.append(centre[1])
                yaws.append(math.atan2(ctr.front[1], ctr.front[0]))
                qs.append(1.0 - gap)
    if not xs:
        return Candidates.empty()
    return Candidates(np.array(xs), np.array(ys), np.array(yaws), np.array(qs))
