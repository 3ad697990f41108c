"""Measuring many points at once for placing devices (docs/pipeline.md, the equip stage).

Equipping a home tries hundreds of candidate points per room (wall points for plugs
and switches, ceiling points for smoke sensors, floor points for lamps) against a
few polygons (furniture footprints, openings, the cooking appliances). The helpers
here measure them in arrays: :class:`Shapes` measures (shapely) only the pairs whose
bounds come near the distance a decision turns on; :func:`clear_of` computes the
distances with numpy from a polygon's ring segments and measures with shapely only
the points so near the distance that rounding could tell otherwise. Every decision
is the one shapely's distance of each pair gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely import Point, Polygon
from shapely.geometry.base import BaseGeometry

#: Distances computed with numpy lie this close (m) to shapely's: a pair this close to the
#: distance a decision turns on is measured with shapely.
DISTANCE_ROUNDING = 1e-7


def heading(dx: float, dy: float) -> float:
    """The heading (rad) of the direction (dx, dy)."""
    return math.atan2(dy, dx)


def ccw(poly: Polygon) -> Polygon:
    """The polygon with its outer ring counter-clockwise."""
    return shapely.geometry.polygon.orient(poly, sign=1.0)


def ring_segments(geom: BaseGeometry) -> np.ndarray:
    """The segments of a polygonal geometry's rings, rows (x0, y0, x1, y1)."""
    coords, ring = shapely.get_coordinates(shapely.get_rings(shapely.get_parts(geom)), return_index=True)
    same = ring[1:] == ring[:-1]
    return np.column_stack([coords[:-1][same], coords[1:][same]])


def polygon_distances(geom: BaseGeometry, segments: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """The distance from each point (rows of ``xy``) to a polygonal geometry (its
    :func:`ring_segments` given), 0 inside it, computed with numpy: within
    :data:`DISTANCE_ROUNDING` of shapely's."""
    ax, ay, bx, by = segments.T
    ux, uy = bx - ax, by - ay
    length2 = ux * ux + uy * uy
    px, py = xy[:, 0, None] - ax, xy[:, 1, None] - ay
    t = np.clip((px * ux + py * uy) / np.where(length2 > 0, length2, 1.0), 0.0, 1.0)
    dx, dy = px - t * ux, py - t * uy
    out = np.sqrt((dx * dx + dy * dy).min(axis=1))
    out[shapely.intersects_xy(geom, xy[:, 0], xy[:, 1])] = 0.0
    return out


def clear_of(geom: BaseGeometry, segments: np.ndarray, xy: np.ndarray, gap: float) -> np.ndarray:
    """Which points lie at least ``gap`` from a polygonal geometry (:func:`polygon_distances`,
    measured with shapely where rounding could tell otherwise)."""
    dist = polygon_distances(geom, segments, xy)
    unsure = np.abs(dist - gap) <= DISTANCE_ROUNDING
    if unsure.any():
        dist[unsure] = shapely.distance(geom, shapely.points(xy[unsure]))
    return dist >= gap


@dataclass(frozen=True)
class Shapes:
    """Geometries and their bounds, to measure many points against them at once: only the pairs
    whose bounds come within the distance a decision turns on are measured (shapely)."""

    geoms: np.ndarray
    bounds: np.ndarray

    @classmethod
    def of(cls, geoms: list[BaseGeometry]) -> Shapes:
        arr = np.empty(len(geoms), dtype=object)
        arr[:] = geoms
        return cls(arr, shapely.bounds(arr).reshape(-1, 4))

    def distances(self, xy: np.ndarray, reach: float) -> np.ndarray:
        """The distance (shapely's) of each geometry (rows) to each point (columns, rows of
        ``xy``) where their bounds come within ``reach``; +inf where they do not (farther)."""
        out = np.full((len(self.geoms), len(xy)), np.inf)
        if len(self.geoms) == 0 or len(xy) == 0:
            return out
        x0, y0, x1, y1 = (self.bounds[:, k, None] for k in range(4))
        x, y = xy[:, 0], xy[:, 1]
        gap = np.hypot(np.maximum(np.maximum(x0 - x, x - x1), 0.0), np.maximum(np.maximum(y0 - y, y - y1), 0.0))
        gi, pi = np.nonzero(~(gap >= reach + DISTANCE_ROUNDING))  # NaN bounds (empty): measured
        if len(gi):
            out[gi, pi] = shapely.distance(self.geoms[gi], shapely.points(xy[pi]))
        return out

    def near(self, xy: np.ndarray, distance: float) -> np.ndarray:
        """Which points lie closer than ``distance`` to one of the geometries."""
        return (self.distances(xy, distance) < distance).any(axis=0)

    def clear(self, xy: np.ndarray, gap: float) -> np.ndarray:
        """Which points lie at least ``gap`` from every geometry."""
        return (self.distances(xy, gap) >= gap).all(axis=0)


def wall_point_array(outline: Polygon, step: float, end_gap: float, inset: float) -> np.ndarray:
    """Points along a polygon's outer ring (counter-clockwise: :func:`ccw`), evenly ``step``
    apart on each edge at least twice ``end_gap`` long, the spare length split between its
    ends, ``inset`` inside; rows (x, y, yaw facing inside), shape (n, 3)."""
    ring = shapely.get_coordinates(outline.exterior)
    edge = ring[1:] - ring[:-1]
    length = np.hypot(edge[:, 0], edge[:, 1])
    keep = ~(length < 2 * end_gap)
    a, u, length = ring[:-1][keep], edge[keep] / length[keep, None], length[keep].tolist()
    count = [int((n - 2 * end_gap) // step) + 1 for n in length]
    which = np.repeat(np.arange(len(count)), count)
    k = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
    along = np.repeat([(n - (c - 1) * step) / 2 for n, c in zip(length, count)], count) + k * step
    inward = np.column_stack([-u[:, 1], u[:, 0]])
    out = np.empty((len(which), 3))
    out[:, :2] = a[which] + u[which] * along[:, None] + (inward * inset)[which]
    out[:, 2] = np.repeat([heading(dx, dy) for dx, dy in inward.tolist()], count)
    return out


def holds(poly: BaseGeometry, p: Point, depth: float) -> bool:
    """Whether ``poly.buffer(-depth)`` contains ``p``: told by the point's distance to the
    boundary, unless that lies within a centimetre of ``depth`` (the buffer's arcs are
    polygons and its input is simplified, by millimetres), where the buffer tells."""
    if not poly.contains(p):
        return False
    edge = poly.boundary.distance(p)
    if abs(edge - depth) > 0.01:
        return edge > depth
    return poly.buffer(-depth).contains(p)
