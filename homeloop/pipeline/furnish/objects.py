"""Carryable objects: on a surface or in a container of a piece of furniture, or on a room's
floor by a wall. The room rules place some (a plant on its stand); then every home gets the
objects the tasks need (:data:`TASK_OBJECTS`, docs/tasks.md: a pan on the range, a watering
can in the kitchen, a mug, glasses, red/blue/white pill boxes, garments in the dryer ...)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely

from homeloop.core.catalog import ItemRule, ObjectEntry
from homeloop.core.check import OBJECT_PENETRATION
from homeloop.core.geometry_assets import box_at, overlapping_pairs, placed_solids
from homeloop.core.home import Furniture, HomeObject, ObjectLocation, Pose, object_from_catalog
from homeloop.pipeline.furnish.candidates import boxes, to_local, touched
from homeloop.pipeline.furnish.context import FurnishContext, PlacedItem
from homeloop.pipeline.furnish.generators import LOOSE_WALL_GAP, along_walls
from homeloop.pipeline.furnish_geometry import RoomGeometry


@dataclass(frozen=True)
class TaskObject:
    """A carryable object every home gets once (docs/tasks.md), and where it goes:
    the first host class present (furniture class, ``surface``/``container`` name);
    ``floor_in`` names room subtypes whose floor takes it when no host exists."""

    catalog_ids: tuple[str, ...]
    hosts: tuple[tuple[str, str, str], ...] = ()
    floor_in: tuple[str, ...] = ()
    required: bool = True


#: The objects the task set needs (docs/tasks.md), placed after the room rules.
TASK_OBJECTS: tuple[TaskObject, ...] = (
    TaskObject(("pan",), hosts=(("range", "surface", "cooktop"),)),
    TaskObject(("watering_can",), floor_in=("KITCHEN", "KITCHEN_DINING")),
    # put_away asks for the mug on the coffee table, so it is left elsewhere (the house leaves it on a desk)
    TaskObject(("mug",), hosts=(("desk", "surface", "top"), ("dining_table", "surface", "top"),
                                ("nightstand", "surface", "top"), ("side_table", "surface", "top"))),
    TaskObject(("glasses",), hosts=(("nightstand", "surface", "top"), ("desk", "surface", "top"),
                                    ("tv_unit", "surface", "top"))),
    TaskObject(("pill_box_red", "pill_box_blue", "pill_box_white"),
               hosts=(("nightstand", "surface", "top"), ("desk", "surface", "top"),
                      ("dining_table", "surface", "top"), ("tv_unit", "surface", "top"))),
    TaskObject(("garment_shirt", "garment_towel"), hosts=(("dryer", "container", "drum"),)),
    TaskObject(("remote_control",), hosts=(("tv_unit", "surface", "top"),), required=False),
    TaskObject(("book",), hosts=(("bookshelf", "surface", "shelf_2"),), required=False),
    TaskObject(("keys",), hosts=(("shoe_cabinet", "surface", "top"),), required=False),
)

#: Where on a surface or container an object goes: its centre, a point in the host's frame,
#: or (None) a place drawn from a grid over it.
Spot = tuple[float, float] | str | None
#: A surface or container in its furniture's frame: centre x, y, depth, width and the height
#: an object rests at.
Space = tuple[float, float, float, float, float]


def add_object(ctx: FurnishContext, entry: ObjectEntry, location: ObjectLocation, pose: Pose,
               oid: str | None = None) -> HomeObject:
    """Record an object at ``pose`` (a fresh id unless ``oid`` is given)."""
    oid = oid or ctx.next_id(entry.id, ctx.object_counts)
    obj = object_from_catalog(entry, oid, location, pose)
    ctx.objects.append(obj)
    return obj


def rule_objects(ctx: FurnishContext, geom: RoomGeometry, item: ItemRule, keyed: dict[str, PlacedItem],
                 need: int) -> tuple[int, str]:
    """A room rule's item that is an object: ``need`` of them in the room, on the floor or
    ``on`` the item it names. How many there are, and why not more."""
    on = next((c for c in item.place if c.kind == "on"), None)
    already = sum(1 for o in ctx.objects if o.catalog_id in item.one_of and o.location.room == geom.id)
    if need - already <= 0:
        return need, ""
    need -= already
    if on is None:
        placed = already
        for _ in range(need):
            if object_on_floor(ctx, geom, ctx.catalog.objects[item.one_of[0]]) is None:
                return placed, "no free floor by a wall"
            placed += 1
        return placed, ""
    host = keyed.get(on.target)  # type: ignore[arg-type]
    if host is None:
        return 0, f"needs {on.target!r}, which could not be placed"
    placed = already
    for _ in range(need):
        if not _on_any_surface(ctx, host, item):
            return placed, f"no room on {host.model.id}"
        placed += 1
    return placed, ""


def _on_any_surface(ctx: FurnishContext, host: PlacedItem, item: ItemRule) -> bool:
    """One of the item's objects on the first of the host's surfaces it fits on."""
    for cid in item.one_of:
        obj = ctx.catalog.objects[cid]
        for s in host.model.surfaces:
            if object_on(ctx, host.model, "surface", s.name, obj) is not None:
                return True
    return False


def object_on(ctx: FurnishContext, host: Furniture, kind: str, name: str, entry: ObjectEntry,
              yaw_offset: float = 0.0, at: Spot = None) -> HomeObject | None:
    """Put an object on a surface (or in a container) of a piece of furniture, clear of
    the objects already there; positions are in the host's frame."""
    space = _space_of(ctx, host, kind, name)
    if space is None:
        return None
    od, ow = entry.dimensions.depth, entry.dimensions.width
    if abs(math.sin(yaw_offset)) > 0.5:
        od, ow = ow, od
    use = ctx.surface_use.setdefault((host.id, name), [])
    stack = kind == "container"
    positions = _positions(ctx, space, od, ow, stack, at)
    for u, v in positions:
        box = (u - od / 2, u + od / 2, v - ow / 2, v + ow / 2)
        under = [b for b in use if box[0] < b[1] - 1e-6 and b[0] < box[1] - 1e-6 and box[2] < b[3] - 1e-6
                 and b[2] < box[3] - 1e-6]
        if under and not stack:
            continue
        # In a container an object rests on the floor of the space or on the top of what lies under it.
        z = max((b[4] for b in under), default=space[4])
        x, y, _ = host.pose.to_world(u, v)
        use.append((*box, z + entry.dimensions.height))
        pose = Pose(x=x, y=y, z=host.pose.z + z, yaw=host.pose.yaw + yaw_offset)
        loc = ObjectLocation(kind=kind, room=host.room, furniture=host.id, name=name)  # type: ignore[arg-type]
        return add_object(ctx, entry, loc, pose)
    return None


def _space_of(ctx: FurnishContext, host: Furniture, kind: str, name: str) -> Space | None:
    """A surface's or container's centre, depth, width and floor height (x, y, depth, width, z)
    in the host's frame, or None when the host has none of that name."""
    cat = ctx.catalog.furniture[host.catalog_id]
    if kind == "surface":
        spec = next((s for s in cat.surfaces if s.name == name), None)
        if spec is None:
            return None
        return spec.offset.x, spec.offset.y, spec.depth, spec.width, spec.height
    box = next((c for c in cat.containers if c.name == name), None)
    if box is None:
        return None
    return box.offset.x, box.offset.y, box.inner.depth, box.inner.width, box.offset.z


def _positions(ctx: FurnishContext, space: Space, od: float, ow: float, stack: bool,
               at: Spot) -> list[tuple[float, float]]:
    """Where to try an object ``od`` deep and ``ow`` wide on ``space``, in order: the spot asked
    for, else a 5 × 7 grid over the space in an order drawn from the generator; an object a
    little larger than the space (or any, in a container) goes at its centre."""
    sx, sy, sd, sw, _ = space
    if at == "centre":
        return [(sx, sy)]
    if at is not None:
        return [at]  # type: ignore[list-item]
    if od <= sd + 1e-9 and ow <= sw + 1e-9:
        us = np.linspace(sx - (sd - od) / 2, sx + (sd - od) / 2, 5) if sd > od else np.array([sx])
        vs = np.linspace(sy - (sw - ow) / 2, sy + (sw - ow) / 2, 7) if sw > ow else np.array([sy])
        grid = [(float(u), float(v)) for u in us for v in vs]
        order = ctx.rng.permutation(len(grid))
        return [grid[i] for i in order]
    if stack or (od <= sd + 0.1 and ow <= sw + 0.1):
        return [(sx, sy)]
    return []


def object_on_floor(ctx: FurnishContext, geom: RoomGeometry, entry: ObjectEntry) -> HomeObject | None:
    """An object on the floor, its long side along a wall, clear of furniture and door zones."""
    d = entry.dimensions
    along, across = max(d.depth, d.width), min(d.depth, d.width)
    cands = along_walls(geom, along, across, LOOSE_WALL_GAP, [], ctx.placed.get(geom.id, [])).rounded()
    if not len(cands):
        return None
    fps = boxes(cands, across, along)
    keep = shapely.contains(geom.ok, fps)
    obstacles = [p for _, _, p in geom.features] + list(geom.door_zones)
    for p in ctx.placed.get(geom.id, []):
        obstacles.append(p.footprint)
        if p.clearance is not None:
            obstacles.append(p.clearance)
    keep[touched(fps, obstacles)] = False
    idx = np.flatnonzero(keep)
    if not len(idx):
        return None
    i = idx[int(ctx.rng.integers(len(idx)))]
    # The object's depth axis runs along the wall when it is the longer side.
    yaw = float(cands.yaw[i]) + (math.pi / 2 if d.depth >= d.width else 0.0)
    pose = Pose(x=float(cands.cx[i]), y=float(cands.cy[i]), yaw=yaw)
    return add_object(ctx, entry, ObjectLocation(kind="floor", room=geom.id), pose)


def place_task_objects(ctx: FurnishContext) -> None:
    """Each of :data:`TASK_OBJECTS` the home does not hold yet, on its first host present, else on
    the floor of a room it may stand in. A home without a host for a task object simply lacks
    it: the tasks that need it do not apply there (the applicability screen says so)."""
    present = {o.catalog_id for o in ctx.objects}
    furniture = ctx.furniture()
    for spec in TASK_OBJECTS:
        todo = [cid for cid in spec.catalog_ids
                if cid not in present and cid in ctx.catalog.objects and cid not in ctx.lacking]
        if not todo:
            continue
        if not _on_a_host(ctx, spec, todo, furniture) and spec.floor_in:
            _on_a_floor(ctx, spec, todo)


def _on_a_host(ctx: FurnishContext, spec: TaskObject, todo: list[str], furniture: list[Furniture]) -> bool:
    """The objects on the first piece of the first host class present that takes them all."""
    for cls, kind, name in spec.hosts:
        hosts = [f for f in furniture if f.semantic_class == cls]
        if not hosts:
            continue
        host = hosts[0]
        ok = True
        for cid in todo:
            entry = ctx.catalog.objects[cid]
            if cls == "range" and host.burners:
                got = _pan_on_range(ctx, host, kind, name, entry, furniture)
            else:
                got = object_on(ctx, host, kind, name, entry)
            ok = ok and got is not None
        if ok:
            return True
    return False


def _on_a_floor(ctx: FurnishContext, spec: TaskObject, todo: list[str]) -> None:
    """The objects on the floor of the first room of a kind in ``spec.floor_in`` that takes them all."""
    for rid in ctx.room_order():
        room = ctx.home.room(rid)
        if room.type in spec.floor_in and rid in ctx.geoms:
            done = all(object_on_floor(ctx, ctx.geoms[rid], ctx.catalog.objects[cid]) is not None for cid in todo)
            if done:
                break


def _pan_on_range(ctx: FurnishContext, host: Furniture, kind: str, name: str, entry: ObjectEntry,
                  furniture: list[Furniture]) -> HomeObject | None:
    """A pan on a burner, its handle toward the front: the first burner (front-left) unless
    the pan, handle included, would reach into the furniture beside the range (a fridge's
    door at its corner), else the next burner clear of it, as the home check measures it
    (:data:`homeloop.core.check.OBJECT_PENETRATION`); the first when none is (the check then says why)."""
    us, vs = to_local(np.array([b.position[0] for b in host.burners]),
                      np.array([b.position[1] for b in host.burners]), host.pose)
    spots = [(float(u), float(v)) for u, v in zip(us, vs)]
    surface = next((s for s in ctx.catalog.furniture[host.catalog_id].surfaces if s.name == name), None)
    if surface is None:  # a range without that surface: object_on says no, as for any host
        return object_on(ctx, host, kind, name, entry, yaw_offset=math.pi, at=spots[0])
    near = [f for f in furniture if f.room == host.room and f.id != host.id and f.catalog_id in ctx.catalog.furniture]
    solids, _ = placed_solids([ctx.catalog.furniture[f.catalog_id] for f in near], near)
    width, depth = entry.dimensions.width, entry.dimensions.depth
    for u, v in spots:
        x, y, _ = host.pose.to_world(u, v)
        pan = box_at(width, depth, entry.dimensions.height,
                     Pose(x=x, y=y, z=host.pose.z + surface.height, yaw=host.pose.yaw + math.pi))
        if not len(overlapping_pairs(pan, solids, OBJECT_PENETRATION)[0]):
            return object_on(ctx, host, kind, name, entry, yaw_offset=math.pi, at=(u, v))
    return object_on(ctx, host, kind, name, entry, yaw_offset=math.pi, at=spots[0])
