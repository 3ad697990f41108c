"""Filters over an item's candidates, all candidates at once with shapely's vectorised
predicates and an STRtree. Each takes the mask ``keep`` and clears the candidates it drops:

- the footprint lies inside the room (:func:`inside`);
- it hits no wall, no plan feature (the counter is no obstacle to an item built into it, a
  feature no obstacle to the item that takes its place), no other furniture and no other
  item's front clearance (:func:`drop_collisions`);
- it stands in no door zone (each door's swing square plus its clear zone on both sides),
  and a tall item not in front of a window (:func:`drop_in_zones`);
- its own front clearance lies on the room's floor, clear of features and furniture (it may
  cross door zones: both are floor to walk on) (:func:`drop_blocked_fronts`).
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from homeloop.core.catalog import Dimensions, FurnitureEntry
from homeloop.pipeline.furnish.candidates import Candidates, boxes, overlap_area, rectangle_corners, rectangles, touched
from homeloop.pipeline.furnish_geometry import ZONE_OVERLAP_AREA, KeepOut, RoomGeometry

#: Collision boxes are this much (m) larger than footprints on every side, so
#: touching counts as a collision and footprints rounded to the millimetre
#: never overlap.
COLLISION_MARGIN = 0.001


def inside(geom: RoomGeometry, boxes: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Which rectangles (polygons and their corners,
    :func:`~homeloop.pipeline.furnish.candidates.rectangle_corners`) lie inside the room (2 mm tolerance)."""
    if not len(boxes):
        return np.zeros(0, bool)
    ok = shapely.contains_xy(geom.ok, corners[..., 0], corners[..., 1]).all(axis=1)
    if geom.convex:
        return ok
    idx = np.flatnonzero(ok)
    ok[idx] = shapely.contains(geom.ok, boxes[idx])  # the room outline is prepared: asked first, it answers faster
    return ok


def drop_collisions(keep: np.ndarray, cands: Candidates, fps: np.ndarray, d: Dimensions,
                    obstacles: list[BaseGeometry], exempt: list[BaseGeometry]) -> None:
    """Drop candidates whose footprint (grown by :data:`COLLISION_MARGIN`) touches an obstacle,
    or that stand over only part of a feature they may stand over."""
    idx = np.flatnonzero(keep)
    if len(idx) and obstacles:
        col = boxes(cands.take(idx), d.depth + 2 * COLLISION_MARGIN, d.width + 2 * COLLISION_MARGIN)
        keep[idx[touched(col, obstacles)]] = False
    idx = np.flatnonzero(keep)
    for fpoly in exempt:
        if not len(idx):
            break
        inter = overlap_area(fps[idx], fpoly)
        full = min(fpoly.area, d.width * d.depth)
        bad = (inter > 1e-4) & (inter < 0.5 * full)
        keep[idx[bad]] = False


def drop_in_zones(keep: np.ndarray, fps: np.ndarray, corners: np.ndarray, zones: KeepOut) -> None:
    """Drop candidates overlapping a clear zone by more than :data:`ZONE_OVERLAP_AREA`
    (touching its edge is fine). A corner deep in a zone settles it without measuring."""
    idx = np.flatnonzero(keep)
    if not len(idx) or not len(zones.zones):
        return
    deep = shapely.contains_xy(zones.deep, corners[idx, :, 0], corners[idx, :, 1]).any(axis=1)
    keep[idx[deep]] = False
    idx = idx[~deep]
    zi, ci = shapely.STRtree(fps[idx]).query(zones.zones, predicate="intersects")
    if len(ci):
        inter = shapely.area(shapely.intersection(fps[idx[ci]], zones.zones[zi]))
        keep[idx[np.unique(ci[inter > ZONE_OVERLAP_AREA])]] = False


def drop_blocked_fronts(keep: np.ndarray, geom: RoomGeometry, cands: Candidates, entry: FurnitureEntry,
                        solid: list[BaseGeometry]) -> None:
    """Drop candidates without the catalog's ``clearance_front`` of free floor in front."""
    idx = np.flatnonzero(keep)
    if not len(idx):
        return
    d, cf = entry.dimensions, entry.clearance_front
    front = rectangle_corners(cands.take(idx), cf - 0.004, d.width - 0.004, ox=d.depth / 2 + cf / 2)
    zone = rectangles(front)
    ok = inside(geom, zone, front)
    if solid:
        ok[touched(zone, solid)] = False
    keep[idx[~ok]] = False
