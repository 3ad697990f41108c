"""The door steps: each room's door to the hall, the living section's and the entrance door;
doors between neighbours (:data:`~homeloop.pipeline.sources.apartments.variants.LINKS`: a
bathroom off a bedroom, a pantry off the kitchen ...), through which the inner room is often its
only way in; and now and then a door across the corridor, parting an entrance hall from an
inner hall.

A door between neighbours, or across the corridor, goes only where its clear zones lie in its
rooms, free of walls, fixtures, other openings and the floor kept for the fridge, and where no
other door's clear zone reaches it; one that finds no such place is not drawn, and the room it
would have served keeps its door to the hall.
"""

from __future__ import annotations

from typing import Iterator

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing, PartitionWall
from homeloop.pipeline.sources.apartments.rects import AREA, DOOR_CLEAR_DEPTH_MM, SEPARATOR, Rect, _mm, rotated
from homeloop.pipeline.sources.apartments.rooms import _Room
from homeloop.pipeline.sources.apartments.variants import LINKS, MIN_CORRIDOR_PART, SECOND_CORRIDOR_SHARE


def draw_doors(drawing: ApartmentDrawing) -> None:
    """Each room's door to the hall (the corridor, or the living room of a flat without one), the
    living section's door and the entrance door. A room to be reached through a neighbour
    (``via``) gets its hall door only if the door to that neighbour finds no place."""
    rng, ti, te = drawing.rng, drawing.ti, drawing.te
    for r in drawing.rooms:
        if r.kind == "corridor" or (r.kind == "living" and (drawing.lw or drawing.hall)) or not r.has_door:
            continue
        dw = _mm(rng, 800, min(900, r.w - 300))
        lo = 300 if r.w - dw - 300 >= 300 else 150
        off = _mm(rng, lo, min(500, r.w - dw - 150))
        r.door_u = (r.w - off - dw, r.w - off)
        r.door_rect = r.map(r.door_u[0], -ti, r.door_u[1], 0)
        if r.via is None:
            _hall_door(drawing, r)
    if drawing.lw:
        dw = _mm(rng, 800, 900)
        y0 = drawing.cy0 + _mm(rng, 150, drawing.c - 150 - dw)
        drawing.living.door_u = (y0, y0 + dw)
        drawing.living.door = drawing.add_door((drawing.lw, y0, drawing.lw + ti, y0 + dw),
                                               (drawing.living, drawing.corridor))
    de = _mm(rng, 900, 1000)
    if drawing.hall:  # into the living room, clear of its corners
        y0 = _mm(rng, 300, drawing.ds - 300 - de)
    else:
        y0 = drawing.cy0 + _mm(rng, 100, drawing.c - 100 - de)
    drawing.add_door((drawing.W, y0, drawing.W + te, y0 + de), (drawing.corridor or drawing.living, None),
                     "ENTRANCE_DOOR")


def _hall_door(drawing: ApartmentDrawing, room: _Room) -> None:
    room.door = drawing.add_door(room.door_rect, (room, drawing.corridor or drawing.living))  # type: ignore[arg-type]


def _neighbours(drawing: ApartmentDrawing) -> Iterator[tuple[_Room, _Room, PartitionWall]]:
    """(left, right, wall) of the rooms side by side with a partition between them."""
    spans = {"S": (0, drawing.ds, True), "N": (drawing.y_n, drawing.D, False)}
    for b in "SN":
        ya, yb, north = spans[b]
        rooms = drawing.bands[b]
        if drawing.lw and rooms and not rooms[0].open_to_living:
            yield drawing.living, rooms[0], (drawing.lw, ya, yb, north)
        for r, nxt in zip(rooms, rooms[1:]):
            if "notch" not in (r.kind, nxt.kind) and not drawing.open_pair(r, nxt):
                yield r, nxt, (r.rect[2], ya, yb, north)


def _link_kind(room: _Room) -> str:
    return "kitchen" if room.kind == "kitchen_dining" else room.kind


def _link_roles(a: _Room, b: _Room) -> tuple[_Room, _Room] | None:
    """(host, inner) of two neighbours that :data:`LINKS` may join, else None."""
    if (_link_kind(a), _link_kind(b)) in LINKS:
        return a, b
    if (_link_kind(b), _link_kind(a)) in LINKS:
        return b, a
    return None


def plan_links(drawing: ApartmentDrawing) -> None:
    """Which neighbours get a door between them (:data:`LINKS`), and which inner rooms are then
    reached through their host only (never round in a circle)."""
    rng = drawing.rng
    for left, right, wall in _neighbours(drawing):
        roles = _link_roles(left, right)
        if roles is None:
            continue
        host, inner = roles
        chance, alone = LINKS[(_link_kind(host), _link_kind(inner))]
        if rng.random() >= chance:
            continue
        if inner.has_door and inner.via is None and rng.random() < alone and not _reached_through(host, inner):
            inner.via = host
        drawing.links.append((host, inner, left, right, wall))


def _reached_through(room: _Room | None, other: _Room) -> bool:
    """Whether ``room`` is reached through ``other`` (directly or along a chain)."""
    while room is not None:
        if room is other:
            return True
        room = room.via
    return False


def through_doors(drawing: ApartmentDrawing) -> None:
    """Draw the doors between neighbours; a room to be reached through a neighbour whose door
    finds no place gets its hall door back."""
    for host, inner, left, right, wall in drawing.links:
        rect = _partition_door(drawing, left, right, wall)
        if rect is not None:
            drawing.add_door(rect, (left, right))
        elif inner.via is host:
            inner.via = None
            _hall_door(drawing, inner)


def _partition_door(drawing: ApartmentDrawing, left: _Room, right: _Room, wall: PartitionWall) -> Rect | None:
    """A place for a door in the partition between two neighbours: the one nearest the hall
    (after a small random offset) whose clear zones are free, or None."""
    x_p, ya, yb, north = wall
    rng, ti = drawing.rng, drawing.ti
    dw = _mm(rng, 800, 900)
    offsets = rotated(list(range(0, (yb - ya) - 300 - dw + 1, 50)), rng, first=6)
    near = drawing.near((x_p - DOOR_CLEAR_DEPTH_MM, ya, x_p + ti + DOOR_CLEAR_DEPTH_MM, yb))
    for off in offsets:
        y = yb - 150 - dw - off if north else ya + 150 + off
        rect = (x_p, y, x_p + ti, y + dw)
        if near.door_fits(rect, (left, right)):
            return rect
    return None


def split_corridor(drawing: ApartmentDrawing) -> None:
    """Now and then part the corridor with a door across it, an entrance hall and an inner hall,
    where the cross wall meets no door's clear zone and each part is long enough."""
    if drawing.corridor is None or drawing.rng.random() >= SECOND_CORRIDOR_SHARE:
        return
    rng, ti = drawing.rng, drawing.ti
    x0, y0, x1, y1 = drawing.corridor.rect
    dw = _mm(rng, 800, min(900, y1 - y0 - 300))
    p = _mm(rng, 150, y1 - y0 - 150 - dw)
    near = drawing.near(drawing.corridor.rect)  # the cross wall and its door's clear zones lie in it
    for x in rotated(list(range(x0 + MIN_CORRIDOR_PART, x1 - MIN_CORRIDOR_PART - ti + 1, 50)), rng):
        cross, door = (x, y0, x + ti, y1), (x, y0 + p, x + ti, y0 + p + dw)
        if not near.in_door_zone(cross) and not near.blocked(cross) and near.door_fits(door, (drawing.corridor,)):
            inner = drawing.corridor
            i = next(i for i, e in enumerate(drawing.elements) if e[0] == AREA and e[3] == inner.area)
            inner.rect = (x0, y0, x, y1)
            drawing.elements[i] = (AREA, inner.subtype, inner.rect, inner.area)
            hall = _Room("corridor", "CORRIDOR", rect=(x + ti, y0, x1, y1), side="S")
            drawing.add_area(hall)
            drawing.add(SEPARATOR, "WALL", cross)
            drawing.add_door(door, (inner, hall))
            return
