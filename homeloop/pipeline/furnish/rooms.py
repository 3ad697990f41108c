"""Each room's furniture by the catalog's room rule for its kind (``homeloop/catalog/rooms.yaml``);
a room with a kitchen counter gets the KITCHEN rule's items first.

The items are placed in the rule's order. Counts draw from the generator; a required item
placed fewer than its minimum count times is a failure, optional items are skipped. A room
whose required items fail is tried again from scratch (up to :data:`ROOM_ATTEMPTS` times,
later attempts placing the items tied to plan features first, then preferring the later
``one_of`` alternatives); the attempt with fewest failures stands.
"""

from __future__ import annotations

from homeloop.core.catalog import ItemRule
from homeloop.core.home import Room
from homeloop.pipeline.furnish.constraints import RELATIVE_KINDS
from homeloop.pipeline.furnish.context import FurnishContext, PlacedItem, Snapshot
from homeloop.pipeline.furnish.objects import rule_objects
from homeloop.pipeline.furnish.placement import place_furniture
from homeloop.pipeline.furnish.results import FurnishFailure
from homeloop.pipeline.furnish_geometry import RoomGeometry

#: Attempts per room before its required items are reported as failures: the
#: rule's order; items tied to plan features first; the same with the later
#: ``one_of`` alternatives first; the rule's order with them.
ROOM_ATTEMPTS = 4


def furnish_rooms(ctx: FurnishContext) -> None:
    """Every room, in the home's order, by its room rule (rooms without one, and without a
    counter, stay empty)."""
    for room in ctx.home.rooms:
        geom = ctx.room_geometry(room)
        if ctx.catalog.rule_for(room.type) is not None or _has_counter(ctx, room):
            furnish_room(ctx, room, geom)


def _has_counter(ctx: FurnishContext, room: Room) -> bool:
    return room.space_class == "indoor" and any(x.kind == "counter" for x in ctx.home.fixtures_in(room.id))


def room_items(ctx: FurnishContext, room: Room, geom: RoomGeometry) -> list[ItemRule]:
    """The items of the room's rule, after the KITCHEN rule's when the room has a kitchen counter
    and its own rule holds none of them."""
    rule = ctx.catalog.rule_for(room.type)
    items: list[ItemRule] = list(rule.items) if rule is not None else []
    if room.space_class == "indoor" and any(k == "KITCHEN" for _, k, _ in geom.features):
        kitchen = ctx.catalog.rule_for("KITCHEN")
        if kitchen is not None and (rule is None or rule.id != kitchen.id) and not any(
                i.key in {k.key for k in kitchen.items} for i in items):
            items = list(kitchen.items) + items
    return items


def furnish_room(ctx: FurnishContext, room: Room, geom: RoomGeometry) -> None:
    """The room's items, attempt after attempt until one places every required item; the
    attempt with fewest failures stands and its failures are recorded."""
    items = room_items(ctx, room, geom)
    if not items:
        return
    fixed = list(ctx.placed.get(room.id, []))
    start = ctx.snapshot()
    best: tuple[list[PlacedItem], list[FurnishFailure], Snapshot] | None = None
    for attempt in range(ROOM_ATTEMPTS):
        # Each attempt starts afresh: no furniture, ids or objects of the attempt before.
        ctx.restore(start)
        ctx.placed[room.id] = list(fixed)
        failures = furnish_items(ctx, geom, items, attempt)
        if best is None or len(failures) < len(best[1]):
            best = (list(ctx.placed[room.id]), failures, ctx.snapshot())
        if not failures:
            break
    assert best is not None
    ctx.placed[room.id] = best[0]
    ctx.restore(best[2])
    ctx.failures.extend(best[1])


def furnish_items(ctx: FurnishContext, geom: RoomGeometry, items: list[ItemRule],
                  attempt: int) -> list[FurnishFailure]:
    """One attempt at the room's items (attempt 1 and 2: the items tied to plan features
    first); the failures of its required items."""
    failures: list[FurnishFailure] = []
    if attempt in (1, 2):
        items = _anchored_first(items)
    keyed: dict[str, PlacedItem] = {}
    feature_kinds = {k for _, k, _ in geom.features}
    for p in ctx.placed.get(geom.id, []):
        for item in items:
            if p.entry.id in item.one_of and item.key not in keyed:
                keyed[item.key] = p
    skipped: set[str] = set()  # keys of items the household lacks
    for item in items:
        owned = _owned(ctx, item, skipped)
        if owned is None:
            continue
        if owned.min_room_area is not None and geom.area < owned.min_room_area:
            continue
        if owned.requires_feature is not None and owned.requires_feature not in feature_kinds:
            continue
        failure = _furnish_item(ctx, geom, owned, keyed, attempt)
        if failure is not None:
            failures.append(failure)
    return failures


def _furnish_item(ctx: FurnishContext, geom: RoomGeometry, item: ItemRule, keyed: dict[str, PlacedItem],
                  attempt: int) -> FurnishFailure | None:
    """The item's count drawn and that many placed (fewer if some are there already); the
    failure, if it is required and too few are."""
    already = [p for p in ctx.placed.get(geom.id, []) if p.entry.id in item.one_of and p.key == item.key]
    n = item.count.min if item.count.min == item.count.max else int(
        ctx.rng.integers(item.count.min, item.count.max + 1))
    n = max(n, 1) if item.required else n
    need = n - len(already)
    if all(cid in ctx.catalog.objects for cid in item.one_of):
        placed_n, reason = rule_objects(ctx, geom, item, keyed, max(need, 0))
        if item.required and placed_n < need:
            return FurnishFailure(geom.id, geom.subtype, item.key, reason)
        return None
    missing = [c.target for c in [*item.place] if c.kind in RELATIVE_KINDS and c.target not in keyed]
    if missing:
        if item.required:
            return FurnishFailure(geom.id, geom.subtype, item.key, f"needs {missing[0]!r}, which could not be placed")
        return None
    placed_here, last_reason = _place_pieces(ctx, geom, item, keyed, attempt, need)
    if item.required and placed_here < min(need, item.count.min - len(already)):
        return FurnishFailure(geom.id, geom.subtype, _failure_name(item), last_reason)
    return None


def _place_pieces(ctx: FurnishContext, geom: RoomGeometry, item: ItemRule, keyed: dict[str, PlacedItem],
                  attempt: int, need: int) -> tuple[int, str]:
    """Up to ``need`` pieces of the item, each the first of its alternatives that finds a place
    (from attempt 2 on, the later alternatives first); how many, and why the last did not."""
    order = list(item.one_of)
    if attempt >= 2:
        order = order[::-1]  # smaller alternatives last in the catalog's order come first
    placed_here = 0
    last_reason = ""
    for _ in range(max(need, 0)):
        got = None
        for cid in order:
            if cid not in ctx.catalog.furniture:
                continue
            got, last_reason = place_furniture(ctx, geom, item, ctx.catalog.furniture[cid], keyed)
            if got is not None:
                break
        if got is None:
            break
        placed_here += 1
        keyed.setdefault(item.key, got)
    return placed_here, last_reason


def _owned(ctx: FurnishContext, item: ItemRule, skipped: set[str]) -> ItemRule | None:
    """The item with the ids the household lacks left out of ``one_of``; None (its key
    added to ``skipped``) when none is left or it is placed relative to a skipped item."""
    ids = [cid for cid in item.one_of if cid not in ctx.lacking]
    targets = {c.target for c in item.place if c.kind in RELATIVE_KINDS}
    if not ids or targets & skipped:
        skipped.add(item.key)
        return None
    return item if len(ids) == len(item.one_of) else item.model_copy(update={"one_of": ids})


def _anchored_first(items: list[ItemRule]) -> list[ItemRule]:
    """Items tied to plan features (in the counter, at a feature) first, the rest after,
    each group in rule order; an item stays after the items it refers to."""
    anchored = {i.key for i in items if any(c.kind in ("in_counter", "at_feature") for c in i.place)
                and not any(c.target for c in i.place if c.kind not in ("at_feature", "near_feature"))}
    return [i for i in items if i.key in anchored] + [i for i in items if i.key not in anchored]


def _failure_name(item: ItemRule) -> str:
    return item.one_of[0] if len(item.one_of) == 1 else item.key
