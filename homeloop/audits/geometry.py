"""Geometry shared by the audit rules, computed once per plan.

Several rules need the same derived shapes: the clear zone in front of each
door face (defined once, in :mod:`homeloop.core.geometry`), the obstacles around
it, the spaces as arrays. :func:`plan_geometry`
builds them with vectorised shapely operations. While :func:`audit_plan` runs
the rules over a plan (inside :func:`auditing`), the result is cached so every
rule shares it; called on its own, it computes afresh.

Invalid polygons are repaired with ``shapely.make_valid`` here so the other
rules can still evaluate the plan; the ``invalid_geometry`` rule reports them.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property
from typing import Iterator

import numpy as np
import shapely

from homeloop.core.geometry import (  # noqa: F401  (oriented_boxes, rectangle_frames: used by the rules)
    DoorZone,
    door_clear_zones,
    fraction_over,
    oriented_boxes,
    rectangle_frames,
)
from homeloop.core.plan import COLUMN, ENTRANCE_DOOR, WALL, Plan

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
        """Clear zones of door faces that open into the plan's spaces
        (:func:`homeloop.core.geometry.door_clear_zones`); ``opening`` indexes plan.openings."""
        idx = self.passage_index
        zones = door_clear_zones(self.openings[idx], self.spaces, floor_tree=self.space_tree)
        return tuple(DoorZone(int(idx[z.opening]), z.side, z.polygon) for z in zones)

    # --- spaces --------------------------------------------------------------------

    @cached_property
    def space_tree(self) -> shapely.STRtree:
        return shapely.STRtree(self.spaces)

    def fraction_over_spaces(self, polygons: np.ndarray) -> np.ndarray:
        """For each polygon, the fraction of its area lying over the plan's spaces."""
        return fraction_over(polygons, self.spaces, self.space_tree)

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
