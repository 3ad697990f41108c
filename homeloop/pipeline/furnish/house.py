"""Placing the house's hand-written furnishing (homeloop.pipeline.furnish.house_file reads it):
furniture at explicit poses, objects on it or on the floor, named points and which windows
open. It is placed verbatim before the room rules complete the house."""

from __future__ import annotations

import math
import numpy as np

from homeloop.core.catalog import Catalog
from homeloop.core.home import ObjectLocation, Pose
from homeloop.pipeline.furnish.candidates import to_local
from homeloop.pipeline.furnish.context import FurnishContext
from homeloop.pipeline.furnish.objects import Spot, add_object, object_on
from homeloop.pipeline.furnish.results import FurnishFailure


def place_fixed_furniture(ctx: FurnishContext) -> None:
    """The hand-written furniture at its poses, each recorded under the room rule's item that
    names its catalog id (so the rules count it)."""
    if ctx.fixed is None:
        return
    rooms = {r.id: r for r in ctx.home.rooms}
    for item in ctx.fixed.furniture:
        room = rooms.get(item.room)
        if room is None or item.catalog_id not in ctx.catalog.furniture:
            ctx.failures.append(FurnishFailure(item.room, room.type if room else "", item.catalog_id,
                                               "fixed item names an unknown room or catalog id"))
            continue
        geom = ctx.room_geometry(room)
        entry = ctx.catalog.furniture[item.catalog_id]
        pose = Pose(x=item.x, y=item.y, z=item.z, yaw=math.radians(item.yaw_deg))
        key = _rule_key(ctx.catalog, room.type, item.catalog_id)
        ctx.record(entry, geom, pose, key, fid=item.id, on_floor=item.z <= 1e-9)


def _rule_key(catalog: Catalog, subtype: str, catalog_id: str) -> str:
    """The key of the room rule's item (or the KITCHEN rule's) that names ``catalog_id``."""
    for r in (catalog.rule_for(subtype), catalog.rule_for("KITCHEN")):
        for it in r.items if r is not None else ():
            if catalog_id in it.one_of:
                return it.key
    return catalog_id


def place_fixed_objects(ctx: FurnishContext) -> None:
    """The hand-written objects: on the floor at their place, or on (in) the fixed furniture
    they name, at their place or centred."""
    if ctx.fixed is None:
        return
    models = {p.model.id: p.model for lst in ctx.placed.values() for p in lst}
    for item in ctx.fixed.objects:
        entry = ctx.catalog.objects.get(item.catalog_id)
        if entry is None:
            ctx.failures.append(FurnishFailure(item.room or "", "", item.catalog_id, "unknown catalog object"))
            continue
        if item.furniture is None:
            if item.room is None or item.x is None or item.y is None:
                ctx.failures.append(FurnishFailure("", "", item.catalog_id, "a floor object needs room, x and y"))
                continue
            pose = Pose(x=item.x, y=item.y, yaw=math.radians(item.yaw_deg or 0.0))
            add_object(ctx, entry, ObjectLocation(kind="floor", room=item.room), pose, oid=item.id)
            continue
        host = models.get(item.furniture)
        if host is None:
            ctx.failures.append(FurnishFailure(item.room or "", "", item.catalog_id,
                                               f"names unknown furniture {item.furniture!r}"))
            continue
        kind, name = ("surface", item.surface) if item.surface else ("container", item.container)
        if name is None:
            ctx.failures.append(FurnishFailure(host.room, "", item.catalog_id, "names no surface or container"))
            continue
        yaw_off = math.radians(item.yaw_deg) - host.pose.yaw if item.yaw_deg is not None else 0.0
        at: Spot = "centre"
        if item.x is not None and item.y is not None:
            u, v = to_local(np.array([item.x]), np.array([item.y]), host.pose)
            at = (float(u[0]), float(v[0]))
        got = object_on(ctx, host, kind, name, entry, yaw_offset=yaw_off, at=at)
        if got is None:
            ctx.failures.append(FurnishFailure(host.room, "", item.catalog_id, f"does not fit on {host.id} {name}"))
        elif item.id is not None and got.id != item.id:
            ctx.objects[-1] = got.model_copy(update={"id": item.id})
