"""Placement constraints of the catalog's room rules, tested over all candidates at once.

Constraint kinds (:class:`homeloop.core.catalog.Constraint`), as interpreted here:

- ``against_wall``: the back lies on a wall face (the room boundary where a
  wall is, not at a door), within
  :data:`~homeloop.pipeline.furnish_geometry.FLUSH_TOLERANCE`.
- ``corner``: against a wall with one side also on a wall face.
- ``beside:<key>``: same heading as <key>, backs aligned, side gap between
  ``min_distance`` (0) and ``max_distance`` (:data:`BESIDE_MAX_GAP`).
- ``in_front_of:<key>``: facing <key>, its front ``min_distance`` (:data:`IN_FRONT_MIN`)
  to ``max_distance`` (:data:`IN_FRONT_MAX`) from <key>'s front edge, centred on it.
- ``facing:<key>``: front turned to <key>'s centre (within :data:`FACING_TOLERANCE`).
- ``around:<key>``: along a side of <key>, facing it, within :data:`AROUND_MAX_GAP`.
- ``on:<key>``: furniture stands on <key>'s first support surface (z = its
  height); an object stands on any support surface of <key>.
- ``center``: near the pole of inaccessibility of the room's free floor,
  aligned with the room's main axis.
- ``in_counter``: a section of a KITCHEN counter run: front flush with the
  counter front (back flush with the wall when the counter is shallower).
- ``on_counter``: standing on the counter top (z = counter height).
- ``beside_counter``: touching an end of a counter run, back to a wall.
- ``at_feature:<KIND>``: covering at least half of a plan feature of that kind.
- ``near_feature:<KIND>``: footprint within ``max_distance`` (:data:`NEAR_FEATURE_MAX`) of one.
"""

from __future__ import annotations

import math

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from homeloop.core.catalog import Constraint, Dimensions, FurnitureEntry
from homeloop.pipeline.furnish.candidates import Candidates, overlap_area, segments, to_local, wrap
from homeloop.pipeline.furnish.context import PlacedItem
from homeloop.pipeline.furnish_geometry import RoomGeometry

#: Distance defaults (m) of relational constraints when the rule gives none.
BESIDE_MAX_GAP = 0.10
IN_FRONT_MIN, IN_FRONT_MAX = 0.3, 0.6
AROUND_MAX_GAP = 0.10
NEAR_FEATURE_MAX = 0.9
FACING_TOLERANCE = math.radians(25)

#: Constraint kinds that place an item relative to another item of the rule (by its key).
RELATIVE_KINDS = ("beside", "in_front_of", "facing", "around", "on")


def against_wall(entry: FurnitureEntry, hard: list[Constraint]) -> bool:
    """Whether an item stands with its back to a wall: asked so, or the catalog's way of
    placing it where no constraint puts it elsewhere."""
    kinds = {c.kind for c in hard}
    return "against_wall" in kinds or "corner" in kinds or (
        entry.placement == "against_wall" and not kinds & {"in_counter", "on_counter", "on", "at_feature",
                                                            "around", "in_front_of", "center"})


def holds(geom: RoomGeometry, c: Constraint, cands: Candidates, fps: np.ndarray,
          entry: FurnitureEntry, keyed: dict[str, PlacedItem]) -> np.ndarray:
    """Which candidates meet one placement constraint (docs/catalog.md, room rules)."""
    d = entry.dimensions
    n = len(cands)
    kind = c.kind
    if kind in ("against_wall", "corner"):
        return _against_walls(geom, kind, cands, d)
    if kind in ("beside", "in_front_of", "facing", "around"):
        target = keyed.get(c.target) if c.target else None
        return np.zeros(n, bool) if target is None else _relative_to(c, cands, fps, d, target)
    if kind == "center":
        pole = geom.pole()
        limit = max(0.6, 0.25 * math.sqrt(geom.area))
        return np.hypot(cands.cx - pole.x, cands.cy - pole.y) <= limit
    if kind in ("in_counter", "on_counter", "beside_counter"):
        return _at_counters(geom, kind, fps, d) if geom.counters else np.zeros(n, bool)
    if kind in ("at_feature", "near_feature"):
        feats = [p for _, k, p in geom.features if k == c.target]
        return _at_features(c, feats, fps, d) if feats else np.zeros(n, bool)
    return np.ones(n, bool)


def _against_walls(geom: RoomGeometry, kind: str, cands: Candidates, d: Dimensions) -> np.ndarray:
    """Back against a wall face; for ``corner`` also one side against a wall."""
    back = segments(cands, (-d.depth / 2, -d.width / 2 + 0.02), (-d.depth / 2, d.width / 2 - 0.02))
    ok = shapely.covers(geom.face_band, back)
    if kind == "corner":
        reach = min(d.depth, 0.3)
        sides = [segments(cands, (-d.depth / 2 + 0.02, sgn * d.width / 2), (-d.depth / 2 + reach, sgn * d.width / 2))
                 for sgn in (1, -1)]
        ok &= shapely.covers(geom.face_band, sides[0]) | shapely.covers(geom.face_band, sides[1])
    return ok


def _relative_to(c: Constraint, cands: Candidates, fps: np.ndarray, d: Dimensions, target: PlacedItem) -> np.ndarray:
    """``beside``, ``in_front_of``, ``facing`` or ``around`` a placed item, in its frame."""
    tp = target.model.pose
    td = target.entry.dimensions
    u, v = to_local(cands.cx, cands.cy, tp)
    rel = wrap(cands.yaw - tp.yaw)
    if c.kind == "beside":
        lo = c.min_distance or 0.0
        hi = c.max_distance if c.max_distance is not None else BESIDE_MAX_GAP
        gapv = np.abs(v) - (td.width / 2 + d.width / 2)
        backs = np.abs((u - d.depth / 2) - (-td.depth / 2))
        return (np.abs(rel) < 1e-2) & (gapv >= lo - 0.01) & (gapv <= hi + 0.01) & (backs <= 0.05)
    if c.kind == "in_front_of":
        lo = c.min_distance if c.min_distance is not None else IN_FRONT_MIN
        hi = c.max_distance if c.max_distance is not None else IN_FRONT_MAX
        gapu = u - d.depth / 2 - td.depth / 2
        facing = np.abs(wrap(rel - math.pi)) < 1e-2
        return facing & (gapu >= lo - 0.01) & (gapu <= hi + 0.01) & (np.abs(v) <= max(td.width - d.width, 0) / 2 + 0.05)
    ang = np.arctan2(tp.y - cands.cy, tp.x - cands.cx)
    if c.kind == "facing":
        return np.abs(wrap(ang - cands.yaw)) <= FACING_TOLERANCE
    facing = np.abs(wrap(ang - cands.yaw)) <= math.radians(5)
    dist = shapely.distance(fps, target.footprint)
    return facing & (dist <= AROUND_MAX_GAP + 0.01)


def _at_counters(geom: RoomGeometry, kind: str, fps: np.ndarray, d: Dimensions) -> np.ndarray:
    """``in_counter`` / ``on_counter``: the share of the footprint over a counter run;
    ``beside_counter``: touching one."""
    n = len(fps)
    if kind == "beside_counter":
        dist = np.full(n, np.inf)
        for ctr in geom.counters:
            dist = np.minimum(dist, shapely.distance(fps, ctr.polygon))
        return dist <= 0.06
    area = d.width * d.depth
    best = np.zeros(n)
    for ctr in geom.counters:
        best = np.maximum(best, overlap_area(fps, ctr.polygon) / area)
    return best >= (0.8 if kind == "in_counter" else 0.98)


def _at_features(c: Constraint, feats: list[BaseGeometry], fps: np.ndarray, d: Dimensions) -> np.ndarray:
    """``at_feature``: over half of the feature (or of the item); ``near_feature``: within the
    constraint's distances of one."""
    n = len(fps)
    if c.kind == "at_feature":
        best = np.zeros(n)
        for p in feats:
            best = np.maximum(best, overlap_area(fps, p) / max(min(p.area, d.width * d.depth), 1e-9))
        return best >= 0.5
    lo = c.min_distance or 0.0
    hi = c.max_distance if c.max_distance is not None else NEAR_FEATURE_MAX
    dist = np.full(n, np.inf)
    for p in feats:
        dist = np.minimum(dist, shapely.distance(fps, p))
    return (dist >= lo) & (dist <= hi)
