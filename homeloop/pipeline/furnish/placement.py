"""How one piece of furniture is placed (:func:`place_furniture`).

Candidate poses come from the generators (:mod:`homeloop.pipeline.furnish.generators`), one
per constraint kind of the item. All candidates are then tested at once
(:mod:`homeloop.pipeline.furnish.filters`): inside the room, clear of walls, features,
furniture and other items' front clearances, out of door zones (and a tall item out of window
zones), with its own front clearance on free floor; then every hard constraint (``place``,
:mod:`homeloop.pipeline.furnish.constraints`) must hold.

Survivors are ranked by how many soft constraints (``prefer``) hold, then by their
generator's preference, then by a draw from the generator. The first that keeps the room
navigable (:mod:`homeloop.pipeline.furnish.navigability`) wins; at most
:data:`MAX_NAV_CHECKS` are tried. An item ``on`` another stands centred on its first surface.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from shapely.geometry.base import BaseGeometry

from homeloop.core.catalog import Constraint, FurnitureEntry, ItemRule
from homeloop.core.home import Pose
from homeloop.pipeline.furnish.candidates import Candidates, rectangle_corners, rectangles
from homeloop.pipeline.furnish.constraints import against_wall, holds
from homeloop.pipeline.furnish.context import REACHED_CLASSES, FurnishContext, PlacedItem
from homeloop.pipeline.furnish.filters import drop_blocked_fronts, drop_collisions, drop_in_zones, inside
from homeloop.pipeline.furnish.generators import generate
from homeloop.pipeline.furnish.navigability import navigable, room_free
from homeloop.pipeline.furnish_geometry import RoomGeometry

#: Candidates whose navigation is checked per item before giving up.
MAX_NAV_CHECKS = 24


class PlacementStats:
    """How many candidates of an item each filter left, for failure messages."""

    def __init__(self) -> None:
        self.generated = self.inside = self.clear = self.zoned = self.cleared = self.constrained = 0

    def reason(self, entry: FurnitureEntry, tall: bool, against: bool) -> str:
        """Why no candidate was placed: the first filter that left none."""
        d = entry.dimensions
        size = f"{d.width:.2f} m wide × {d.depth:.2f} m deep"
        if self.generated == 0:
            if against:
                return f"no wall stretch of {d.width:.2f} m free of doors (room has no usable wall face)"
            return f"no candidate position for a {size} item"
        if self.inside == 0:
            return f"no position inside the room fits a {size} item ({self.generated} tried)"
        if self.clear == 0:
            what = "wall stretch" if against else "position"
            return (f"no {what} of {d.width:.2f} m free of features and other furniture "
                    f"({self.inside} positions inside the room)")
        if self.zoned == 0:
            return (f"no {'wall stretch' if against else 'position'} of {d.width:.2f} m free of doors"
                    + (", windows (tall)" if tall else "") + " and other furniture"
                    + f" ({self.clear} clear of furniture, all in door zones"
                    + (" or in front of windows)" if tall else ")"))
        if self.cleared == 0:
            return f"no position leaves {entry.clearance_front:.2f} m of free floor in front ({self.zoned} tried)"
        if self.constrained == 0:
            return f"no position satisfies the placement constraints ({self.cleared} free positions)"
        return (f"every position ({self.constrained}) blocks the path of the widest robot between the "
                "room's doors or to an appliance or table")


def place_furniture(ctx: FurnishContext, geom: RoomGeometry, item: ItemRule, entry: FurnitureEntry,
                    keyed: dict[str, PlacedItem]) -> tuple[PlacedItem | None, str]:
    """Candidates generated, then filtered step by step (inside the room, clear of
    obstacles, out of door and window zones, with free floor in front, meeting the
    item's constraints), the best scored by its preferences that the robot can reach;
    it is recorded. Else None and why."""
    tall = entry.tall if item.tall is None else item.tall
    hard, soft = list(item.place), list(item.prefer)
    against = against_wall(entry, hard)
    on = next((c for c in hard if c.kind == "on"), None)
    if on is not None:
        return _place_on(ctx, geom, item, entry, keyed[on.target])  # type: ignore[index]
    d = entry.dimensions
    stats = PlacementStats()
    cands = generate(geom, entry, hard, soft, keyed, ctx.placed.get(geom.id, []), against).rounded()
    stats.generated = len(cands)
    if not len(cands):
        return None, stats.reason(entry, tall, against)
    fcorners = rectangle_corners(cands, d.depth, d.width)
    fps = rectangles(fcorners)
    keep = inside(geom, fps, fcorners)
    stats.inside = int(keep.sum())
    solid, clearances, exempt = _obstacles(ctx, geom, hard, soft, keyed)
    drop_collisions(keep, cands, fps, d, solid + clearances, exempt)
    stats.clear = int(keep.sum())
    drop_in_zones(keep, fps, fcorners, geom.keep_out(tall))
    stats.zoned = int(keep.sum())
    if entry.clearance_front > 0:
        drop_blocked_fronts(keep, geom, cands, entry, solid + exempt)
    stats.cleared = int(keep.sum())
    idx = np.flatnonzero(keep)
    if len(idx):
        good = np.ones(len(idx), bool)
        sub = cands.take(idx)
        for c in hard:
            good &= holds(geom, c, sub, fps[idx], entry, keyed)
        keep[idx[~good]] = False
    stats.constrained = int(keep.sum())
    placed = _pick(ctx, geom, item, entry, cands, fps, np.flatnonzero(keep), soft, keyed)
    return (placed, "") if placed is not None else (None, stats.reason(entry, tall, against))


def _obstacles(ctx: FurnishContext, geom: RoomGeometry, hard: list[Constraint], soft: list[Constraint],
               keyed: dict[str, PlacedItem]) -> tuple[list[BaseGeometry], list[BaseGeometry], list[BaseGeometry]]:
    """What an item must not touch in the room: solid things (features, furniture on the
    floor), the clearances of items it is not placed relative to; and the features it
    may stand over (the one it stands at, the counter it is built into)."""
    exempt_kinds = {c.target for c in [*hard, *soft] if c.kind == "at_feature"}
    if {c.kind for c in [*hard, *soft]} & {"in_counter", "on_counter"}:
        exempt_kinds.add("KITCHEN")
    targets = {c.target for c in [*hard, *soft] if c.kind in ("beside", "in_front_of", "facing", "around")}
    target_ids = {keyed[t].model.id for t in targets if t in keyed}
    solid: list[BaseGeometry] = []
    exempt: list[BaseGeometry] = []
    for _, kind, poly in geom.features:
        (exempt if kind in exempt_kinds else solid).append(poly)
    placed = ctx.placed.get(geom.id, [])
    solid += [p.footprint for p in placed if p.on_floor]
    clearances = [p.clearance for p in placed if p.clearance is not None and p.model.id not in target_ids]
    return solid, clearances, exempt


def _pick(ctx: FurnishContext, geom: RoomGeometry, item: ItemRule, entry: FurnitureEntry, cands: Candidates,
          fps: np.ndarray, idx: np.ndarray, soft: list[Constraint], keyed: dict[str, PlacedItem]) -> PlacedItem | None:
    """The candidate (of those at ``idx``) meeting most preferences, then of best quality,
    ties drawn at random, that leaves the room navigable; it is recorded."""
    if not len(idx):
        return None
    sub = cands.take(idx)
    score = np.zeros(len(idx))
    for c in soft:
        score += holds(geom, c, sub, fps[idx], entry, keyed).astype(float)
    draw = ctx.rng.random(len(idx))
    order = np.lexsort((draw, -sub.quality, -score))
    reach_entry = entry.semantic_class in REACHED_CLASSES
    # The free floor with what stands so far, made when a candidate first needs it.
    free_now = cache(lambda: room_free(ctx, geom))
    for j in order[:MAX_NAV_CHECKS]:
        i = idx[j]
        pose = Pose(x=float(cands.cx[i]), y=float(cands.cy[i]), yaw=float(cands.yaw[i]))
        probes = ctx.probes(entry, pose) if reach_entry else []
        if navigable(ctx, geom, free_now, fps[i], probes):
            return ctx.record(entry, geom, pose, item.key)
    return None


def _place_on(ctx: FurnishContext, geom: RoomGeometry, item: ItemRule, entry: FurnitureEntry,
              host: PlacedItem) -> tuple[PlacedItem | None, str]:
    """The item centred on the host's first surface, its back toward the host's back."""
    surfaces = host.entry.surfaces
    if not surfaces:
        return None, f"{host.model.id} has no surface to stand on"
    s = surfaces[0]
    d = entry.dimensions
    if d.width > s.width + 0.1 or d.depth > s.depth + 0.1:
        return None, f"does not fit on {host.model.id} ({s.width:.2f} × {s.depth:.2f} m surface)"
    dx = s.offset.x - (s.depth - d.depth) / 2 if d.depth < s.depth else s.offset.x
    x, y, _ = host.model.pose.to_world(dx, s.offset.y)
    pose = Pose(x=x, y=y, z=host.model.pose.z + s.height, yaw=host.model.pose.yaw)
    return ctx.record(entry, geom, pose, item.key, on_floor=False), ""
