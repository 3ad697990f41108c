"""The smoke sensor's search: ceiling points far enough from walls and from the cooking appliances.

A smoke sensor's candidate places are a grid of ceiling points (:data:`SMOKE_GRID_STEP`) at
least the catalog's ``min_wall_distance`` from the room's walls, rounded as the home file
stores poses so the distance measured here is the one the home check measures on the
file. The search takes the point nearest a target (the room's centre, or a door smoke
comes through) among those at least a distance from every cooking appliance (horizontal,
to the nearest point of the footprint: NFPA 72), looking near the target first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core.catalog import CatalogError, KeepAway
from homeloop.core.check import SMOKE_SENSOR, smoke_distance_rule
from homeloop.core.home import Furniture
from homeloop.pipeline.devices.context import EquipContext, memoized
from homeloop.pipeline.devices.mounting import centre_xy, grid_points
from homeloop.pipeline.devices_geometry import clear_of, ring_segments

#: Spacing (m) of the candidate ceiling points searched for a smoke sensor.
SMOKE_GRID_STEP = 0.1
#: The search for a smoke sensor's place looks this far (m) about its target first, then twice as far ...
SMOKE_SEARCH_RADIUS = 0.5

#: A box: (minx, miny, maxx, maxy).
Window = tuple[float, float, float, float]


@dataclass(frozen=True)
class SmokeRule:
    """The catalog's smoke-sensor rules: the distance from cooking appliances and from walls."""

    keep_away: KeepAway
    #: The catalog's ``min_wall_distance`` (m).
    wall_distance: float

    @property
    def id(self) -> str:
        return self.keep_away.id

    @property
    def min_distance(self) -> float:
        return self.keep_away.min_distance

    @property
    def fallback(self) -> float:
        """The fallback distance; a rule without one allows none (the main distance again)."""
        return self.keep_away.fallback_distance or self.keep_away.min_distance


@memoized
def smoke_rule(ctx: EquipContext) -> SmokeRule:
    """The catalog's smoke-sensor rules; a catalog without the distance rule cannot equip homes."""
    keep_away = smoke_distance_rule(ctx.catalog)
    if keep_away is None:
        raise CatalogError(f"{ctx.catalog.source_of('devices', SMOKE_SENSOR)}: devices entry {SMOKE_SENSOR!r}: "
                           "field placement.keep_away: needs a rule away from cooking_appliance (NFPA 72)")
    return SmokeRule(keep_away, ctx.catalog.placement_number(SMOKE_SENSOR, "min_wall_distance"))


@dataclass(frozen=True)
class Cooking:
    """The home's cooking appliances, and their footprints measured together."""

    appliances: list[Furniture]
    #: The union of their footprints (None: the home has none) and its ring segments.
    union: BaseGeometry | None
    segments: np.ndarray


@memoized
def cooking(ctx: EquipContext) -> Cooking:
    """The home's :class:`Cooking`."""
    cookers = [f for f in ctx.home.furniture if f.cooking_appliance]
    if not cookers:
        return Cooking(cookers, None, np.zeros((0, 4)))
    union = shapely.union_all([ctx.footprints[f.id] for f in cookers])
    return Cooking(cookers, union, ring_segments(union))


@memoized
def smoke_ceiling(ctx: EquipContext, rid: str) -> Polygon:
    """The room's ceiling at least the rule's ``min_wall_distance`` from its walls."""
    return ctx.polys[rid].buffer(-smoke_rule(ctx).wall_distance, join_style="mitre")


def smoke_candidates(ctx: EquipContext, rid: str, window: Window | None = None) -> np.ndarray:
    """Ceiling candidate points of a room (those of the grid in ``window``, a box)."""
    # Rounded as the home file stores poses, so the distance measured here is the
    # one the home check measures on the file.
    return np.round(grid_points(smoke_ceiling(ctx, rid), SMOKE_GRID_STEP, window), 3) + 0.0


def cooker_distances(ctx: EquipContext, pts: np.ndarray) -> np.ndarray:
    """Each point's distance to the nearest cooking appliance, as shapely measures it."""
    union = cooking(ctx).union
    if union is None:
        return np.full(len(pts), np.inf)
    distances: np.ndarray = shapely.distance(union, shapely.points(pts))
    return distances


def cooker_clear(ctx: EquipContext, pts: np.ndarray, limit: float) -> np.ndarray:
    """Which points lie at least ``limit`` from every cooking appliance (shapely's distance):
    computed with numpy, measured where rounding could tell otherwise."""
    cookers = cooking(ctx)
    if cookers.union is None or len(pts) == 0:
        return np.ones(len(pts), dtype=bool)
    return clear_of(cookers.union, cookers.segments, pts, limit)


def cooker_beyond(ctx: EquipContext, window: Window, limit: float) -> bool:
    """Whether every point of ``window`` (a box; and rounding's half millimetre about it) lies
    ``limit`` or more from the cooking appliances' bounds, and so from them."""
    union = cooking(ctx).union
    if union is None:
        return True
    a0, b0, a1, b1 = union.bounds
    gap = math.hypot(max(a0 - window[2], window[0] - a1, 0.0), max(b0 - window[3], window[1] - b1, 0.0))
    return gap >= limit + 0.001


def pick_smoke_point(ctx: EquipContext, rid: str, minimum: float, towards: tuple[float, float] | None = None
                     ) -> tuple[float, float] | None:
    """The candidate point at least ``minimum`` from cooking appliances nearest ``towards``
    (the room's centre, or a door smoke comes through), ties by position."""
    target = towards if towards is not None else centre_xy(ctx, rid)
    limit = minimum - 1e-9
    x0, y0, x1, y1 = smoke_ceiling(ctx, rid).bounds
    radius = SMOKE_SEARCH_RADIUS
    while True:
        # The points within ``radius`` of the target (rounding moves a point 0.5 mm at most);
        # one nearer than ``radius`` is nearer than any other. At last the whole grid, and at
        # once where the search comes near the cooking appliances (measured in one go).
        pad = radius + 0.001
        window = (target[0] - pad, target[1] - pad, target[0] + pad, target[1] + pad)
        beyond = cooker_beyond(ctx, window, limit)
        last = not beyond or (window[0] <= x0 and window[1] <= y0 and window[2] >= x1 and window[3] >= y1)
        pts = smoke_candidates(ctx, rid, None if last else window)
        to_target = np.round(np.hypot(pts[:, 0] - target[0], pts[:, 1] - target[1]), 3)
        if not last:
            pts, to_target = pts[to_target <= radius], to_target[to_target <= radius]
        if not beyond:
            ok = cooker_clear(ctx, pts, limit)
            pts, to_target = pts[ok], to_target[ok]
        if len(pts):
            i = int(np.lexsort((pts[:, 1], pts[:, 0], to_target))[0])
            if last or to_target[i] < radius:
                return float(pts[i, 0]), float(pts[i, 1])
        elif last:
            return None
        radius *= 2


def pick_farthest_smoke_point(ctx: EquipContext, rid: str, minimum: float
                              ) -> tuple[tuple[float, float], float] | None:
    """The candidate point at least ``minimum`` from cooking appliances farthest from them (to
    the decimetre), then nearest the room's centre, ties by position; with its distance."""
    target = centre_xy(ctx, rid)
    pts = smoke_candidates(ctx, rid)
    dist = cooker_distances(ctx, pts)
    ok = dist >= minimum - 1e-9
    if not ok.any():
        return None
    pts, dist = pts[ok], dist[ok]
    to_target = np.hypot(pts[:, 0] - target[0], pts[:, 1] - target[1])
    i = int(np.lexsort((pts[:, 1], pts[:, 0], np.round(to_target, 3), -np.round(dist, 1)))[0])
    return (float(pts[i, 0]), float(pts[i, 1])), float(dist[i])
