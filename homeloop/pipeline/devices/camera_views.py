"""What a camera sees: corner places, poses, and the floor points each view covers.

A dome camera sits in a convex ceiling corner of its room (:data:`CAMERA_CORNER_INSET` in
along the corner's bisector, :data:`CAMERA_CEILING_DROP` below the ceiling), turned to the
room's centre and tilted down. A view is scored on a grid of the room's floor points: those
in its cone, in range, with no wall between. Sight lines are tested only in rooms where a
blocker comes near (a room clear of blockers sees every line), and every decision is the
one testing each line gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely import Point
from shapely.geometry.base import BaseGeometry

from homeloop.core.check import CAMERA_RANGE, sight_blockers
from homeloop.core.home import polygon_from_rings
from homeloop.pipeline.devices.context import EquipContext, memoized
from homeloop.pipeline.devices.mounting import Point2, centre, grid_points, outline
from homeloop.pipeline.devices_geometry import Shapes, heading

#: A camera sits this far (m) from its corner along the corner's bisector, ...
CAMERA_CORNER_INSET = 0.2
#: ... this far (m) below the ceiling ...
CAMERA_CEILING_DROP = 0.1
#: ... tilted down between these angles (degrees), aimed at a point this high (m) at the room's centre.
CAMERA_PITCH_RANGE = (-45.0, -30.0)
CAMERA_AIM_HEIGHT = 1.0
#: The entrance door is kept this far (degrees) inside the edge of the entrance camera's view.
CAMERA_EDGE_MARGIN = 10.0
#: Spacing (m) of floor points used to score what a camera sees.
COVERAGE_STEP = 0.5

#: A camera in a corner: yaw, height, pitch (rad), which coverage points it sees, whether it sees its target.
CornerView = tuple[float, float, float, np.ndarray, bool]


@dataclass(frozen=True)
class CameraView:
    """The best view of a room: the camera's corner and pose, what it sees, and whether it sees its target."""

    corner: Point2
    yaw: float
    z: float
    pitch: float
    #: Which of the room's coverage points it sees, and their share.
    seen: np.ndarray
    share: float
    sees_target: bool


def visible_mask(cam: tuple[float, float, float], hfov_deg: float, pts: np.ndarray, blocking: BaseGeometry,
                 max_range: float = CAMERA_RANGE) -> np.ndarray:
    """Which points a camera at (x, y, yaw) sees: in the cone, in range, no wall between."""
    seen: np.ndarray = visible_masks(np.array([cam], dtype=float), hfov_deg, pts, blocking, max_range)[0]
    return seen


def visible_masks(cams: np.ndarray, hfov_deg: float, pts: np.ndarray, blocking: BaseGeometry | None,
                  max_range: float = CAMERA_RANGE) -> np.ndarray:
    """:func:`visible_mask` of several cameras (rows x, y, yaw), shape (cameras, points)."""
    if len(pts) == 0 or len(cams) == 0:
        return np.zeros((len(cams), len(pts)), dtype=bool)
    d = pts[None, :, :] - cams[:, None, :2]
    dist = np.hypot(d[..., 0], d[..., 1])
    off = np.abs(np.remainder(np.arctan2(d[..., 1], d[..., 0]) - cams[:, 2, None] + math.pi, 2 * math.pi) - math.pi)
    ok: np.ndarray = (dist <= max_range) & (off <= math.radians(hfov_deg) / 2)
    if blocking is None or blocking.is_empty:
        return ok
    for (x, y, _), sees in zip(cams.tolist(), ok):
        if sees.any():
            idx = np.nonzero(sees)[0]
            coords = np.empty((len(idx), 2, 2))
            coords[:, 0, 0], coords[:, 0, 1] = x, y
            coords[:, 1, :] = np.asarray(pts[idx], dtype=float)
            sees[idx] = ~shapely.intersects(shapely.linestrings(coords), blocking)
    return ok


def corners(ctx: EquipContext, rid: str) -> list[Point2]:
    """Candidate camera points: each convex corner of the room, moved in along its bisector."""
    return list(room_corners(ctx)[rid])


@memoized
def room_corners(ctx: EquipContext) -> dict[str, list[Point2]]:
    """:func:`corners` of every room (its :func:`outline`'s), found for all at once."""
    rids = list(ctx.polys)
    outlines = np.empty(len(rids), dtype=object)
    outlines[:] = [outline(ctx, rid) for rid in rids]
    coords, ring = shapely.get_coordinates(shapely.get_exterior_ring(outlines), return_index=True)
    vertex = np.nonzero(ring[1:] == ring[:-1])[0]  # each ring's points but its closing one
    owner, edge = ring[vertex], coords[vertex + 1] - coords[vertex]  # the edge out of each vertex
    count = np.bincount(owner, minlength=len(rids))
    first = (np.cumsum(count) - count)[owner]
    into = first + (np.arange(len(vertex)) - first - 1) % count[owner]  # the edge into each vertex
    length = np.hypot(edge[:, 0], edge[:, 1])
    a, b, la, lb = edge[into], edge, length[into], length
    # A corner to look out of: convex (not reflex, not straight), between edges of some length.
    ok = (la >= 1e-6) & (lb >= 1e-6) & (a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0] > 1e-9)
    at, a, b, la, lb, owner = coords[vertex][ok], a[ok], b[ok], la[ok], lb[ok], owner[ok]
    bis = -a / la[:, None] + b / lb[:, None]
    nb = np.hypot(bis[:, 0], bis[:, 1])
    ok = nb >= 1e-9
    p, owner = at[ok] + bis[ok] / nb[ok, None] * CAMERA_CORNER_INSET, owner[ok]
    shapely.prepare(outlines)
    inside = shapely.contains_xy(outlines[owner], p[:, 0], p[:, 1])
    out: dict[str, list[Point2]] = {rid: [] for rid in rids}
    for k, (x, y) in zip(owner[inside].tolist(), p[inside].tolist()):
        out[rids[k]].append((x, y))
    return out


@memoized
def coverage_floor(ctx: EquipContext, rid: str) -> BaseGeometry:
    """The room's floor whose points score what a camera sees."""
    return ctx.polys[rid].buffer(-0.1)


@memoized
def coverage_points(ctx: EquipContext, rid: str) -> np.ndarray:
    """The floor points a camera's view of the room is scored on."""
    poly = coverage_floor(ctx, rid)
    step = max(COVERAGE_STEP, math.sqrt(max(poly.area, 0.0) / 300.0))
    return grid_points(poly, step)


@memoized
def sight_clear(ctx: EquipContext, rid: str) -> bool:
    """Whether nothing blocks sight between any of the room's camera corners and coverage
    points: no blocker meets the convex hull of the corners and the floor the points lie
    on, which holds every line between them."""
    pts = np.concatenate([shapely.get_coordinates(coverage_floor(ctx, rid)),
                          np.reshape(room_corners(ctx)[rid], (-1, 2))])
    if len(pts) == 0 or not walls_near_box(ctx, (*pts.min(axis=0), *pts.max(axis=0))):
        return True
    hull = shapely.multipoints(pts).convex_hull
    blocking = blockers_near(ctx, hull)
    return blocking is None or not blocking.intersects(hull)


@memoized
def sight_blocking(ctx: EquipContext) -> BaseGeometry:
    """What blocks sight (:func:`sight_blockers`), prepared."""
    blocking = sight_blockers(ctx.home)
    shapely.prepare(blocking)
    return blocking


@memoized
def wall_shapes(ctx: EquipContext) -> Shapes:
    """The home's walls, to measure against at once."""
    return Shapes.of([polygon_from_rings(w.polygon) for w in ctx.home.walls])


@memoized
def wall_tree(ctx: EquipContext) -> shapely.STRtree:
    return shapely.STRtree(wall_shapes(ctx).geoms)


def blockers_near(ctx: EquipContext, geom: BaseGeometry) -> BaseGeometry | None:
    """:func:`sight_blocking`, or None where no wall comes within a micrometre of ``geom`` (then
    nothing that blocks sight, the walls shrunk, meets it)."""
    if not walls_near_box(ctx, geom.bounds):
        return None
    near = wall_tree(ctx).query(geom, predicate="dwithin", distance=1e-6)
    return sight_blocking(ctx) if len(near) else None


def walls_near_box(ctx: EquipContext, bounds: tuple[float, float, float, float]) -> bool:
    """Whether the bounds of a wall come within a micrometre of the box ``bounds``."""
    walls = wall_shapes(ctx).bounds
    gap = np.hypot(np.maximum(np.maximum(walls[:, 0] - bounds[2], bounds[0] - walls[:, 2]), 0.0),
                   np.maximum(np.maximum(walls[:, 1] - bounds[3], bounds[1] - walls[:, 3]), 0.0))
    return bool(np.any(~(gap > 1e-6)))


def near_walls(ctx: EquipContext, points: list[Point2], distance: float) -> list[bool]:
    """Which points lie closer than ``distance`` to the home's walls (their union), measured to
    each wall; the union is built only for a point as far as ``distance`` within rounding."""
    walls = wall_shapes(ctx)
    if not points:
        return []
    nearest = walls.distances(np.asarray(points, dtype=float), distance).min(axis=0)
    if np.any(~(np.abs(nearest - distance) > 1e-9)):
        union = shapely.union_all(walls.geoms)
        return [union.distance(Point(p)) < distance for p in points]
    return [bool(b) for b in (nearest < distance).tolist()]


@memoized
def corner_views(ctx: EquipContext, rid: str, must_see: Point2 | None, hfov: float) -> dict[Point2, CornerView]:
    """Cameras in the room's corners (:func:`camera_pose`), by corner: the yaw, height and
    pitch, which of the room's coverage points it sees, and whether it sees ``must_see``."""
    at = room_corners(ctx)[rid]
    poses = [camera_pose(ctx, rid, c, must_see=must_see, hfov=hfov) for c in at]
    cams = np.array([(c[0], c[1], pose[0]) for c, pose in zip(at, poses)], dtype=float).reshape(-1, 3)
    # Nothing blocks the lines to the coverage points of a room clear of blockers.
    seen = visible_masks(cams, hfov, coverage_points(ctx, rid), None if sight_clear(ctx, rid) else sight_blocking(ctx))
    sees = np.ones(len(at), dtype=bool)
    if must_see is not None:
        sees = visible_masks(cams, hfov, np.array([must_see]), None)[:, 0]
        for k in np.nonzero(sees)[0].tolist():  # in sight where no wall comes near the line to it
            blocking = blockers_near(ctx, shapely.linestrings([at[k], must_see]))
            sees[k] = blocking is None or blocking.is_empty or not blocking.intersects(
                shapely.linestrings([cams[k, :2], must_see]))
    return {c: (*pose, seen[k], target) for k, (c, pose, target) in enumerate(zip(at, poses, sees.tolist()))}


def camera_pose(ctx: EquipContext, rid: str, corner: Point2, must_see: Point2 | None = None,
                hfov: float = 100.0) -> tuple[float, float, float]:
    """The yaw (to the room's centre, turned so ``must_see`` stays in view), height and pitch
    of a camera in a corner."""
    c = centre(ctx, rid)
    aim = (c.x, c.y)
    yaw = heading(aim[0] - corner[0], aim[1] - corner[1])
    if must_see is not None:
        to_door = heading(must_see[0] - corner[0], must_see[1] - corner[1])
        off = math.remainder(to_door - yaw, 2 * math.pi)
        limit = math.radians(hfov / 2 - CAMERA_EDGE_MARGIN)
        if abs(off) > limit:
            yaw = to_door - math.copysign(limit, off)
    z = ctx.ceiling(rid) - CAMERA_CEILING_DROP
    dist = max(math.hypot(aim[0] - corner[0], aim[1] - corner[1]), 0.5)
    pitch = -math.degrees(math.atan2(z - ctx.floor(rid) - CAMERA_AIM_HEIGHT, dist))
    pitch = min(max(pitch, CAMERA_PITCH_RANGE[0]), CAMERA_PITCH_RANGE[1])
    return yaw, z, math.radians(pitch)


def best_camera(ctx: EquipContext, rid: str, hfov: float, *, must_see: Point2 | None = None,
                exclude: np.ndarray | None = None, prefer_walls: bool = False) -> CameraView | None:
    """The corner, yaw and what it sees that shows most of the room (and ``must_see``)."""
    candidates = corners(ctx, rid)
    if prefer_walls and ctx.home.walls:
        near = [c for c, ok in zip(candidates, near_walls(ctx, candidates, 0.6)) if ok]
        candidates = near or candidates
    views = corner_views(ctx, rid, must_see, hfov)
    best = None
    for i, corner in enumerate(candidates):
        yaw, z, pitch, seen, sees_target = views[corner]
        fresh = seen & ~exclude if exclude is not None else seen
        key = (sees_target, int(fresh.sum()), -i)
        if best is None or key > best[0]:
            best = (key, corner, yaw, z, pitch, seen)
    if best is None:
        return None
    (sees_target, _, _), corner, yaw, z, pitch, seen = best
    share = float(seen.mean()) if len(seen) else 1.0
    return CameraView(corner, yaw, z, pitch, seen, share, sees_target)
