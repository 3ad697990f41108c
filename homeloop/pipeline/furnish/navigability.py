"""Whether a room stays navigable with one more item: the widest robot body
(:func:`homeloop.core.navigation.widest_body_width`) must still pass between every pair of the
room's doors it could pass between in the empty room, and reach the front of every item the
tasks use (:data:`~homeloop.pipeline.furnish.context.REACHED_CLASSES`) from a door."""

from __future__ import annotations

from typing import Callable

import numpy as np
import shapely
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core import navigation
from homeloop.pipeline.furnish.context import FurnishContext
from homeloop.pipeline.furnish_geometry import RoomGeometry, pieces_holding


def room_free(ctx: FurnishContext, geom: RoomGeometry) -> BaseGeometry:
    """The room's free floor for the widest body with everything placed so far: the free
    floor last made for the room, less what was placed since (furniture is only ever
    added to a room, or the room started afresh)."""
    solid = [p for p in ctx.placed.get(geom.id, []) if p.on_floor]
    made, free = ctx.free_floor.get(geom.id, ([], geom.base_free()))
    if len(made) > len(solid) or any(a is not b for a, b in zip(made, solid)):
        made, free = [], geom.base_free()
    new = solid[len(made):]
    if new and not free.is_empty:
        free = free.difference(shapely.union_all(navigation.dilate([p.footprint for p in new], ctx.radius)))
    ctx.free_floor[geom.id] = (solid, free)
    return free


def navigable(ctx: FurnishContext, geom: RoomGeometry, free_now: Callable[[], BaseGeometry], footprint: Polygon,
              probes: list[tuple[float, float]]) -> bool:
    """Whether the room stays navigable with ``footprint`` placed as well: doors joined by
    the empty room's free floor stay joined, and every used item's front (its probes, these
    ``probes`` too) lies on a piece of free floor a door opens onto. The doors and all probes
    are looked up in one pass."""
    groups = [p.probes for p in ctx.placed.get(geom.id, []) if p.probes] + ([probes] if probes else [])
    on_floor = sum(b is not None for b in geom.door_pieces())
    if on_floor < 2 and not (groups and on_floor):
        return True  # no two doors to keep joined, no door to reach a front from
    free = free_now().difference(navigation.dilate([footprint], ctx.radius)[0])
    spots = np.asarray(geom.door_points, dtype=object)
    if groups:
        spots = np.concatenate([spots, shapely.points([xy for pts in groups for xy in pts])])
    pieces = pieces_holding(free, spots)
    base_comp, now_comp = geom.door_pieces(), pieces[:len(geom.door_points)]
    if not _doors_stay_joined(base_comp, now_comp):
        return False
    ref = {c for c, b in zip(now_comp, base_comp) if c is not None and b is not None}
    if not ref:
        return True
    start = len(now_comp)
    for pts in groups:
        if not any(c in ref for c in pieces[start:start + len(pts)] if c is not None):
            return False
        start += len(pts)
    return True


def _doors_stay_joined(base_comp: list[int | None], now_comp: list[int | None]) -> bool:
    """Whether every two doors on one piece of the empty room's free floor (``base_comp``) are
    still on one piece now (``now_comp``)."""
    for i in range(len(now_comp)):
        for j in range(i + 1, len(now_comp)):
            if base_comp[i] is not None and base_comp[i] == base_comp[j]:
                if now_comp[i] is None or now_comp[i] != now_comp[j]:
                    return False
    return True
