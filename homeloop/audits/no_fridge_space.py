"""Rule ``no_fridge_space``: no kitchen has room for a fridge.

The data draws no appliances (docs/data-format.md); furnishing later places a fridge,
so the audit checks there is room for one. Kitchens are KITCHEN and
KITCHEN_DINING spaces, and any other indoor space holding a KITCHEN feature
(the counter block of an open kitchen in a LIVING_DINING or LIVING_ROOM).

A fridge position is the footprint of the catalog's fridge (homeloop/catalog/furniture.yaml:
0.60 m along the wall × 0.65 m deep) flush with an edge of the kitchen's
boundary, with the fridge's ``clearance_front`` (1.0 m) of free floor in front
of it: the fridge furnishing places and the home check verifies
(:func:`~homeloop.audits.thresholds.fridge_size`). Candidates are taken every
:data:`~homeloop.audits.thresholds.FRIDGE_SEARCH_STEP` (0.1 m) along every edge (and at
each edge's far end). A candidate is good when

* the fridge lies inside the kitchen and its front clearance lies on the
  plan's floor (the kitchen, or a space it opens onto);
* the fridge overlaps no feature (the counter included), no wall or column and
  no door's clear zone (door width × 0.8 m, see ``blocked_doorway``);
* the front clearance overlaps no feature, wall or column (it may cross a
  door's clear zone: both are floor to walk on);
* the fridge does not stand in front of a window or door in its wall.

Candidates are shrunk by :data:`~homeloop.audits.thresholds.FRIDGE_WALL_TOLERANCE` (2 cm)
before testing, so touching is not overlapping. All candidates of a kitchen
are tested at once with shapely's vectorised predicates and STRtrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import shapely

from homeloop.core.plan import KITCHEN_SUBTYPES, Plan

from homeloop.audits.findings import Finding
from homeloop.audits.geometry import PlanGeometry, oriented_boxes, plan_geometry
from homeloop.audits.registry import rule
from homeloop.audits.thresholds import (
    FRIDGE_SEARCH_STEP,
    FRIDGE_WALL_PROBE_DEPTH,
    FRIDGE_WALL_TOLERANCE,
    WALL_SIMPLIFY_TOLERANCE,
    below,
    fridge_size,
)

RULE_ID = "no_fridge_space"
KITCHEN_FEATURE = "KITCHEN"


@dataclass(frozen=True)
class FridgeSearch:
    """The outcome of searching one kitchen for a fridge position."""

    space_id: str
    candidates: int  # positions tried
    fitting: int  # positions where the fridge and its clearance fit the floor
    free: int  # fitting positions nothing blocks
    blockers: tuple[str, ...]  # names of what blocks the fitting positions, most often first
    position: shapely.Polygon | None  # the first free fridge footprint, if any


def kitchen_spaces(plan: Plan, geo: PlanGeometry | None = None) -> list[int]:
    """Indices (into plan.spaces) of the spaces a fridge may go in."""
    geo = geo or plan_geometry(plan)
    with_counter = {
        sid for f, sid in zip(plan.features, geo.feature_space) if f.kind == KITCHEN_FEATURE and sid
    }
    return [
        i
        for i, s in enumerate(plan.spaces)
        if s.subtype in KITCHEN_SUBTYPES or (s.id in with_counter and s.is_indoor)
    ]


@rule(
    RULE_ID,
    description=(
        "No kitchen can host the catalog's fridge against a wall with its clearance_front of "
        "free floor in front, clear of features and door zones."
    ),
)
def no_fridge_space(plan: Plan) -> Iterator[Finding]:
    geo = plan_geometry(plan)
    kitchens = kitchen_spaces(plan, geo)
    if not kitchens:
        return  # no_kitchen reports it
    searches = [search_fridge_position(plan, i, geo) for i in kitchens]
    if any(s.free for s in searches):
        return
    width, depth, clearance = fridge_size()
    reasons = []
    for s in searches:
        space = plan.space(s.space_id)
        head = f"{space.subtype} {space.id} ({space.area:.1f} m²)"
        if s.fitting == 0:
            reasons.append(
                f"{head} is too small: no wall takes a {width:.2f} × {depth:.2f} m fridge with "
                f"{clearance} m free floor in front"
            )
        else:
            reasons.append(
                f"{head} has every wall taken: all {s.fitting} positions that fit are blocked by "
                + ", ".join(s.blockers[:4])
            )
    yield Finding(
        RULE_ID,
        plan.key,
        tuple(s.space_id for s in searches),
        "no room for a fridge: " + "; ".join(reasons),
    )


def search_fridge_position(plan: Plan, space_index: int, geo: PlanGeometry | None = None) -> FridgeSearch:
    """Try every fridge position along the walls of one space (vectorised)."""
    geo = geo or plan_geometry(plan)
    space = geo.spaces[space_index]
    space_id = plan.spaces[space_index].id
    width, depth, clearance = fridge_size()
    tol = FRIDGE_WALL_TOLERANCE
    origin, u, n = _wall_positions(space, width)
    if len(origin) == 0:
        return FridgeSearch(space_id, 0, 0, 0, (), None)
    lo, hi = tol, width - tol
    fridge = oriented_boxes(origin, u, n, lo, hi, tol, depth - tol)
    front = oriented_boxes(origin, u, n, lo, hi, depth + tol, depth + clearance - tol)
    behind = oriented_boxes(origin, u, n, lo, hi, -FRIDGE_WALL_PROBE_DEPTH, 0.0)

    # Does it fit the floor? The fridge in the kitchen, its clearance on the
    # plan's floor: the kitchen, or (tested only where needed) the spaces it opens onto.
    room = shapely.buffer(space, tol, join_style="mitre")
    shapely.prepare(room)
    in_room = shapely.covered_by(fridge, room)
    fits = in_room.copy()
    fits[in_room] = shapely.covered_by(front[in_room], room)
    retry = np.flatnonzero(in_room & ~fits)
    if len(retry):
        floor = _floor_around(geo, space_index, room)
        if floor is not room:
            shapely.prepare(floor)
            fits[retry] = shapely.covered_by(front[retry], floor)

    # What blocks it. Each obstacle blocks the fridge, its clearance, and/or
    # the wall behind it (a window or door in that wall).
    obstacles: list[tuple[object, str, tuple[bool, bool, bool]]] = []
    for j, g in enumerate(geo.blocking):
        obstacles.append((g, geo.blocking_name(j), (True, True, False)))
    for j, g in enumerate(geo.features):
        obstacles.append((g, geo.feature_name(j), (True, True, False)))
    for z in geo.door_zones:
        obstacles.append((z.polygon, f"the clear zone of {plan.openings[z.opening].id}", (True, False, False)))
    for j, g in enumerate(geo.openings):
        obstacles.append((g, geo.opening_name(j), (False, False, True)))
    names = [name for _, name, _ in obstacles]
    blocked = np.zeros(len(origin), dtype=bool)
    hits: list[np.ndarray] = []
    if obstacles:
        tree = shapely.STRtree(np.array([g for g, _, _ in obstacles], dtype=object))
        applies = np.array([b for _, _, b in obstacles], dtype=bool)
        for column, probe in enumerate((fridge, front, behind)):
            ci, oi = tree.query(probe, predicate="intersects")
            keep = applies[oi, column]
            ci, oi = ci[keep], oi[keep]
            blocked[ci] = True
            hits.append(oi[fits[ci]])
    counted = np.bincount(np.concatenate(hits), minlength=len(obstacles)) if hits else np.zeros(0, int)
    counts: dict[str, int] = {}
    for k in np.flatnonzero(counted):
        counts[names[k]] = counts.get(names[k], 0) + int(counted[k])
    free = fits & ~blocked
    first = int(np.flatnonzero(free)[0]) if free.any() else None
    blockers = tuple(sorted(counts, key=lambda name: (-counts[name], name)))
    return FridgeSearch(
        space_id,
        len(origin),
        int(fits.sum()),
        int(free.sum()),
        blockers,
        fridge[first] if first is not None else None,
    )


def _wall_positions(space, width: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start points, along-wall unit vectors and inward normals of the candidate
    positions along every exterior edge of ``space`` long enough for ``width``."""
    parts = shapely.get_parts(space)
    polys = [p for p in parts if p.geom_type == "Polygon" and not p.is_empty]
    origins, alongs, normals = [], [], []
    for poly in polys:
        poly = shapely.simplify(poly, WALL_SIMPLIFY_TOLERANCE, preserve_topology=True)
        ring = shapely.orient_polygons(poly).exterior  # counter-clockwise
        coords = np.asarray(ring.coords)
        p0, p1 = coords[:-1], coords[1:]
        edge = p1 - p0
        length = np.hypot(edge[:, 0], edge[:, 1])
        keep = ~below(length, width)
        if not keep.any():
            continue
        p0, edge, length = p0[keep], edge[keep], length[keep]
        u = edge / length[:, None]
        inward = np.stack([-u[:, 1], u[:, 0]], axis=1)  # left of a counter-clockwise ring
        free_run = length - width
        counts = np.floor(free_run / FRIDGE_SEARCH_STEP + 1e-9).astype(int) + 1
        edge_of = np.repeat(np.arange(len(p0)), counts)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        offset = (np.arange(counts.sum()) - np.repeat(starts, counts)) * FRIDGE_SEARCH_STEP
        # Also the far end of each edge, so a fridge can stand in either corner.
        edge_of = np.concatenate([edge_of, np.arange(len(p0))])
        offset = np.concatenate([offset, free_run])
        origins.append(p0[edge_of] + offset[:, None] * u[edge_of])
        alongs.append(u[edge_of])
        normals.append(inward[edge_of])
    if not origins:
        empty = np.zeros((0, 2))
        return empty, empty, empty
    return np.concatenate(origins), np.concatenate(alongs), np.concatenate(normals)


def _floor_around(geo: PlanGeometry, space_index: int, room):
    """The floor a fridge's clearance may use: the kitchen and the spaces touching it."""
    near = [int(j) for j in geo.space_tree.query(room, predicate="intersects") if j != space_index]
    if not near:
        return room
    parts = shapely.buffer(geo.spaces[near], FRIDGE_WALL_TOLERANCE, join_style="mitre")
    return shapely.union_all(np.append(parts, room))
