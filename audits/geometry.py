"""Geometry shared by the audit rules, computed once per plan.

Several rules need the same derived shapes: the clear zone in front of each
door face, the obstacles around it, the spaces as arrays. :func:`plan_geometry`
builds them with vectorised shapely operations. While :func:`audit_plan` runs
the rules over a plan (inside :func:`auditing`), the result is cached so every
rule shares it; called on its own, it computes afresh.

Invalid polygons are repaired with ``shapely.make_valid`` here so the other
rules can still evaluate the plan; the ``invalid_geometry`` rule reports them.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator

import numpy as np
import shapely

from homeloop.plan import COLUMN, ENTRANCE_DOOR, WALL, Plan

from homeloop.audits.thresholds import (
    DOOR_CLEAR_DEPTH,
    DOOR_FACE_INSIDE_FRACTION,
    DOOR_ZONE_FACE_GAP,
    DOOR_ZONE_SIDE_INSET,
)

_current: ContextVar[tuple[Plan, dict] | None] = ContextVar("audited_plan", default=None)


@contextmanager
def auditing(plan: Plan) -> Iterator[None]:
    """Share one :class:`PlanGeometry` between the rules run inside this block."""
    token = _current.set((plan, {}))
    try:
        yield
    finally:
        _current.reset(token)


def plan_geometry(plan: Plan) -> "PlanGeometry":
    """The derived geometry of ``plan`` (cached while the plan is being audited)."""
    current = _current.get()
    if current is not None and current[0] is plan:
        cache = current[1]
        if "geometry" not in cache:
            cache["geometry"] = PlanGeometry(plan)
        return cache["geometry"]
    return PlanGeometry(plan)


def usable(geoms: np.ndarray) -> np.ndarray:
    """Geometries fit for computation: invalid ones repaired, ``None`` made empty."""
    geoms = np.asarray(geoms, dtype=object)
    if len(geoms) == 0:
        return geoms
    missing = shapely.is_missing(geoms)
    if missing.any():
        geoms = geoms.copy()
        geoms[missing] = shapely.Polygon()
    bad = ~shapely.is_valid(geoms)
    if bad.any():
        geoms = geoms.copy()
        geoms[bad] = shapely.make_valid(geoms[bad])
    return geoms


def rectangle_frames(polygons: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre, long-side unit vector, short-side unit vector, long and short side
    lengths of each polygon's minimum rotated rectangle (vectorised)."""
    n = len(polygons)
    centre = np.zeros((n, 2))
    along = np.tile([1.0, 0.0], (n, 1))
    across = np.tile([0.0, 1.0], (n, 1))
    long_side = np.zeros(n)
    short_side = np.zeros(n)
    if n == 0:
        return centre, along, across, long_side, short_side
    rects = shapely.oriented_envelope(polygons)
    is_poly = shapely.get_type_id(rects) == 3
    idx = np.flatnonzero(is_poly)
    if len(idx):
        rings = shapely.get_exterior_ring(rects[idx])
        coords = shapely.get_coordinates(rings)
        counts = shapely.get_num_coordinates(rings)
        ok = counts == 5
        idx = idx[ok]
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[ok]
        p0 = coords[starts]
        p1 = coords[starts + 1]
        p2 = coords[starts + 2]
        e1 = p1 - p0
        e2 = p2 - p1
        l1 = np.hypot(*e1.T)
        l2 = np.hypot(*e2.T)
        first_long = l1 >= l2
        lv = np.where(first_long[:, None], e1, e2)
        sv = np.where(first_long[:, None], e2, e1)
        ll = np.maximum(l1, l2)
        sl = np.minimum(l1, l2)
        with np.errstate(invalid="ignore", divide="ignore"):
            lu = np.where(ll[:, None] > 0, lv / ll[:, None], [1.0, 0.0])
            su = np.where(sl[:, None] > 0, sv / sl[:, None], np.stack([-lu[:, 1], lu[:, 0]], axis=1))
        centre[idx] = (p0 + p2) / 2
        along[idx] = lu
        across[idx] = su
        long_side[idx] = ll
        short_side[idx] = sl
    return centre, along, across, long_side, short_side


def oriented_boxes(origin: np.ndarray, u: np.ndarray, v: np.ndarray, u0, u1, v0, v1) -> np.ndarray:
    """Rectangles ``origin + a*u + b*v`` for a in [u0, u1], b in [v0, v1] (vectorised;
    the bounds are numbers or one per rectangle)."""
    n = len(origin)
    if n == 0:
        return np.empty(0, dtype=object)
    u0, u1, v0, v1 = (np.asarray(x, dtype=float).reshape(-1, 1) for x in (u0, u1, v0, v1))
    a0, a1, b0, b1 = u0 * u, u1 * u, v0 * v, v1 * v
    corners = np.empty((n, 5, 2))
    corners[:, 0] = origin + a0 + b0
    corners[:, 1] = origin + a1 + b0
    corners[:, 2] = origin + a1 + b1
    corners[:, 3] = origin + a0 + b1
    corners[:, 4] = corners[:, 0]
    offsets = (np.arange(0, 5 * n + 1, 5), np.arange(n + 1))
    return shapely.from_ragged_array(shapely.GeometryType.POLYGON, corners.reshape(-1, 2), offsets)


def describe_space(plan: Plan, space_id: str) -> str:
    """``KITCHEN 12``: a space's subtype and id, as messages name it."""
    if plan.has_space(space_id):
        return f"{plan.space(space_id).subtype} {space_id}"
    return f"space {space_id}"


def describe_door(plan: Plan, opening_id: str, kind: str, width: float, connects: tuple[str, ...]) -> str:
    """``door_87 (0.85 m) between KITCHEN 12 and CORRIDOR 9``."""
    names = [describe_space(plan, s) for s in connects]
    if kind == ENTRANCE_DOOR:
        where = f"into {names[0]}" if names else "into no space"
    elif len(names) == 2:
        where = f"between {names[0]} and {names[1]}"
    elif len(names) == 1:
        where = f"into {names[0]} only"
    else:
        where = "into no space"
    return f"{opening_id} ({width:.2f} m) {where}"


@dataclass(frozen=True)
class DoorZone:
    """The clear zone in front of one face of a door or entrance door."""

    opening: int  # index into plan.openings
    side: int  # +1 or -1 along the door's short axis
    polygon: shapely.Polygon


class PlanGeometry:
    """Arrays of a plan's geometry and the shapes several rules share."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        blocking = [i for i, s in enumerate(plan.separators) if s.kind in (WALL, COLUMN)]
        self.blocking_index = np.array(blocking, dtype=int)
        groups = (
            [s.polygon for s in plan.spaces],
            [o.polygon for o in plan.openings],
            [f.polygon for f in plan.features],
            [plan.separators[i].polygon for i in blocking],
        )
        every = usable(np.array([g for group in groups for g in group], dtype=object))
        cuts = np.cumsum([len(group) for group in groups])[:-1]
        self.spaces, self.openings, self.features, self.blocking = np.split(every, cuts)
        self.space_ids = [s.id for s in plan.spaces]

    # --- doors ---------------------------------------------------------------------

    @cached_property
    def opening_frames(self):
        """(centre, along, across, width, depth) of every opening's rectangle."""
        return rectangle_frames(self.openings)

    @property
    def opening_widths(self) -> np.ndarray:
        return self.opening_frames[3]

    @cached_property
    def passage_index(self) -> np.ndarray:
        """Indices (into plan.openings) of doors and entrance doors."""
        return np.array([i for i, o in enumerate(self.plan.openings) if o.is_passage], dtype=int)

    @cached_property
    def door_zones(self) -> tuple[DoorZone, ...]:
        """Clear zones of door faces that open into the plan's spaces.

        Each is the door width × :data:`DOOR_CLEAR_DEPTH` rectangle in front of a
        face, shrunk by :data:`DOOR_ZONE_SIDE_INSET` at its sides and started
        :data:`DOOR_ZONE_FACE_GAP` from the face. A face counts when at least
        :data:`DOOR_FACE_INSIDE_FRACTION` of its zone lies over the plan's spaces.
        """
        idx = self.passage_index
        if len(idx) == 0:
            return ()
        centre, along, across, width, depth = (a[idx] for a in self.opening_frames)
        origin = np.concatenate([centre, centre])
        u = np.concatenate([along, along])
        v = np.concatenate([across, -across])
        w = np.concatenate([width, width]) / 2 - DOOR_ZONE_SIDE_INSET
        d = np.concatenate([depth, depth]) / 2
        zones = oriented_boxes(origin, u, v, -w, w, d + DOOR_ZONE_FACE_GAP, d + DOOR_CLEAR_DEPTH)
        sides = np.concatenate([np.ones(len(idx), int), -np.ones(len(idx), int)])
        owners = np.concatenate([idx, idx])
        inside = self.fraction_over_spaces(zones) >= DOOR_FACE_INSIDE_FRACTION
        usable_width = w > 0
        keep = inside & usable_width
        return tuple(
            DoorZone(int(o), int(s), z) for o, s, z in zip(owners[keep], sides[keep], zones[keep])
        )

    # --- spaces --------------------------------------------------------------------

    @cached_property
    def space_tree(self) -> shapely.STRtree:
        return shapely.STRtree(self.spaces)

    def fraction_over_spaces(self, polygons: np.ndarray) -> np.ndarray:
        """For each polygon, the fraction of its area lying over the plan's spaces."""
        out = np.zeros(len(polygons))
        if len(polygons) == 0 or len(self.spaces) == 0:
            return out
        pi, si = self.space_tree.query(polygons, predicate="intersects")
        if len(pi):
            areas = shapely.area(shapely.intersection(polygons[pi], self.spaces[si]))
            out = np.bincount(pi, weights=areas, minlength=len(polygons))
        total = shapely.area(polygons)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, out / total, 0.0)

    @cached_property
    def feature_space(self) -> list[str | None]:
        """The space holding each feature: its area_id, else the space under its centre."""
        out: list[str | None] = []
        points = shapely.point_on_surface(self.features) if len(self.features) else []
        for f, point in zip(self.plan.features, points):
            if f.space_id and self.plan.has_space(f.space_id):
                out.append(f.space_id)
                continue
            hits = self.space_tree.query(point, predicate="intersects") if point is not None else []
            out.append(self.space_ids[int(hits[0])] if len(hits) else None)
        return out

    # --- obstacle names --------------------------------------------------------------

    def feature_name(self, i: int) -> str:
        f = self.plan.features[i]
        return f"{f.kind} feature {f.id}"

    def opening_name(self, i: int) -> str:
        o = self.plan.openings[i]
        return element_name(o.kind, o.id)

    def blocking_name(self, j: int) -> str:
        s = self.plan.separators[int(self.blocking_index[j])]
        return element_name(s.kind, s.id)


def element_name(kind: str, element: str) -> str:
    """How messages name a wall or opening: ``WALL w_91``, or just ``wall_11``
    when the id already says its kind."""
    if element.lower().startswith(kind.lower()):
        return element
    return f"{kind} {element}"
