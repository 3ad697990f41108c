"""Visual meshes of furniture, by semantic class (see :mod:`homeloop.core.visuals`).

Each builder draws one class of ``homeloop/catalog/furniture.yaml`` in the item frame (origin at
the centre of the footprint on the floor, +x out of the front, +y to the left, z up), sized from
the entry and inside its bounds: x within ±depth/2, y within ±width/2, z within [0, height].

The solid of :mod:`homeloop.core.geometry_assets` leaves free space where things go, and a visual
keeps it free, so what the simulator puts there stays visible:

- no part enters a container's inner space (a drawer, a drum, a fridge compartment); what closes
  it (a door, a drawer front, a porthole) lies between the inner space and the front face, as a
  part of its own that names the catalog joint it moves with, drawn closed;
- no part enters the space above a support surface below the item's top (a shelf), except
  decorative books in the back :data:`BACK_BOOKS_DEPTH` of a shelf;
- what one sits, lies or puts things on has its top at the surface's height: a sofa's seat
  cushions, a bed's blanket and pillows (the mattress just under them), a table's top.

Roles name materials (``homeloop/catalog/materials.yaml``, one palette per class): ``wood``,
``upholstery``, ``blanket``, ``shell``, ``handle`` ... A builder reads sizes from the entry, so
a resized entry gets a resized visual; the few fixed sizes (a board's thickness, a handle's
reach) are the constants below.
"""

from __future__ import annotations

import hashlib
import math
from typing import Callable

import numpy as np
import trimesh
from shapely.geometry import Polygon
from shapely.geometry import box as rect

from homeloop.core.catalog import ArticulatedPart, Container, FurnitureEntry, SupportSurface
from homeloop.core.geometry_assets import SHELF_BOARD_THICKNESS, part_panel_bounds
from homeloop.core.visuals.part import Parts, VisualPart, registrar
from homeloop.core.visuals.shapes import (
    bevelled_box,
    box,
    cylinder,
    disc,
    ellipsoid,
    extruded,
    frustum,
    handle,
    lathe,
    merged,
    ring,
    rod,
    round_hole,
    spans,
)

FurnitureBuilder = Callable[[FurnitureEntry], list[VisualPart]]

#: The builder of each furniture class's visual.
FURNITURE_BUILDERS: dict[str, FurnitureBuilder] = {}

#: Depth (m) at the back of a shelf that decorative books may take (the rest stays free).
BACK_BOOKS_DEPTH = 0.06
#: Thickness (m) of a carcass's boards and of a table's top at most.
BOARD = 0.02
#: Gap (m) round a door or a drawer front.
GAP = 0.003
#: How far (m) a bed's mattress lies under the tops of its blanket and pillows (the surface's height).
TOP_BAND_BED = 0.03

Bounds = tuple[float, float, float, float, float, float]

_builds = registrar(FURNITURE_BUILDERS)


# --- what the entry says ---------------------------------------------------------------------------


def _half(entry: FurnitureEntry) -> tuple[float, float, float]:
    """Half the depth (x), half the width (y) and the height."""
    d = entry.dimensions
    return d.depth / 2, d.width / 2, d.height


def _surface(entry: FurnitureEntry) -> SupportSurface:
    """The entry's (first) support surface: a seat, a mattress, a top."""
    return entry.surfaces[0]


def _span(s: SupportSurface) -> tuple[float, float, float, float]:
    """A surface's footprint (x0, y0, x1, y1)."""
    return (s.offset.x - s.depth / 2, s.offset.y - s.width / 2, s.offset.x + s.depth / 2, s.offset.y + s.width / 2)


def _inner(c: Container) -> Bounds:
    """A container's inner space (x0, y0, z0, x1, y1, z1)."""
    o, i = c.offset, c.inner
    return (o.x - i.depth / 2, o.y - i.width / 2, o.z, o.x + i.depth / 2, o.y + i.width / 2, o.z + i.height)


def _opener(entry: FurnitureEntry, c: Container) -> ArticulatedPart | None:
    return next((p for p in entry.parts if p.name == c.opened_by), None)


def _panel(entry: FurnitureEntry, part: ArticulatedPart) -> Bounds:
    """The part's panel (:func:`part_panel_bounds`) in the item frame."""
    x0, y0, z0, x1, y1, z1 = part_panel_bounds(entry, part)
    h = part.hinge
    return (x0 + h.x, y0 + h.y, z0 + h.z, x1 + h.x, y1 + h.y, z1 + h.z)


def _front(inner_x1: float, hx: float) -> tuple[float, float]:
    """Where a door or a drawer front lies, between a container's inner space and the front face:
    its inner and outer faces, leaving the front of the gap for its handle."""
    gap = hx - inner_x1
    return inner_x1 + 0.15 * gap, inner_x1 + 0.65 * gap


def _rng(entry: FurnitureEntry) -> np.random.Generator:
    """A generator seeded from the entry's id (the books on a shelf, the stems in a vase)."""
    digest = hashlib.sha256(f"visual/{entry.id}".encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


# --- pieces many builders share ------------------------------------------------------------------------


def _legs(x: float, y: float, z0: float, z1: float, size: float, shape: str = "square",
          taper: float = 1.0) -> list[trimesh.Trimesh]:
    """Four legs centred on (±x, ±y): square, round, or round and tapered to ``taper`` of
    their radius at the floor."""
    out = []
    for cx, cy in ((x, y), (x, -y), (-x, y), (-x, -y)):
        if shape == "square":
            out.append(box(cx - size / 2, cy - size / 2, z0, cx + size / 2, cy + size / 2, z1))
        else:
            out.append(frustum(cx, cy, z0, z1, taper * size / 2, size / 2, sections=12))
    return out


def _knob(x_face: float, x_out: float, y: float, z: float, radius: float) -> trimesh.Trimesh:
    """A round knob on a front face."""
    return disc((x_face + x_out) / 2, y, z, radius, x_out - x_face, axis="x", sections=12)


def _pieces(name: str, count: int) -> list[str]:
    """Names of ``count`` like pieces: ``name`` alone, else ``name_1`` ..."""
    return [name] if count == 1 else [f"{name}_{i + 1}" for i in range(count)]


# --- beds and seats -------------------------------------------------------------------------------------


@_builds("bed")
def _bed(entry: FurnitureEntry) -> list[VisualPart]:
    """Legs, a frame, a headboard, a mattress, pillows at the head and a blanket over the rest,
    the blanket and the pillows up to the mattress surface's height."""
    hx, hy, _ = _half(entry)
    s = _surface(entry)
    top, head = s.height, _span(s)[0]
    leg_top, frame_top, mattress_top = 0.24 * top, 0.5 * top, top - TOP_BAND_BED
    board = min(0.05, max(head + hx, 0.04))
    v = Parts()
    v.add("legs", "wood", _legs(hx - 0.06, hy - 0.06, 0.0, leg_top, 0.05))
    v.add("frame", "wood", bevelled_box(-hx + board, -hy, leg_top, hx, hy, frame_top, 0.01))
    v.add("headboard", "wood", bevelled_box(-hx, -hy, leg_top, -hx + board, hy, top, 0.01))
    v.add("mattress", "mattress", bevelled_box(-hx + board + 0.005, -hy + 0.02, frame_top, hx - 0.005, hy - 0.02,
                                               mattress_top, 0.03))
    pillow_x0 = max(head, -hx + board) + 0.03
    pillow_x1 = pillow_x0 + min(0.45, 0.22 * 2 * hx)
    count = 1 if hy < 0.6 else 2
    for name, (y0, y1) in zip(_pieces("pillow", count), spans(-hy + 0.06, hy - 0.06, count, 0.06)):
        v.add(name, "pillow", bevelled_box(pillow_x0, y0, mattress_top - 0.03, pillow_x1, y1, top, 0.03))
    v.add("blanket", "blanket", _blanket(pillow_x1 + 0.08, hx, hy, frame_top + 0.02, top))
    return v.parts


def _blanket(x0: float, x1: float, hy: float, z0: float, top: float, thick: float = 0.025) -> trimesh.Trimesh:
    """A blanket from ``x0`` to the foot ``x1``: over the top at ``top``, down both sides and the foot."""
    drape = Polygon([(-hy, z0), (-hy, top), (hy, top), (hy, z0), (hy - thick, z0), (hy - thick, top - thick),
                     (-hy + thick, top - thick), (-hy + thick, z0)])
    return merged([extruded(drape, "x", x0, x1 - thick), box(x1 - thick, -hy, z0, x1, hy, top)])


@_builds("sofa", "armchair")
def _upholstered(entry: FurnitureEntry) -> list[VisualPart]:
    """Legs, a base, a back frame with leaning back cushions, arms with rolled tops, and seat
    cushions whose tops are the seat's height: all clear of the space over the seat."""
    hx, hy, h = _half(entry)
    s = _surface(entry)
    seat, (sx0, sy0, _, sy1) = s.height, _span(s)
    arm = max(0.0, min(hy - sy1, sy0 + hy))
    back = min(0.12, 0.45 * (sx0 + hx))
    leg_top, cushion = 0.16 * seat, min(0.14, 0.33 * seat)
    count = max(1, round((sy1 - sy0) / 0.6))
    v = Parts()
    v.add("legs", "legs", _legs(hx - 0.06, hy - 0.06, 0.0, leg_top, 0.04, "round", 0.7))
    v.add("base", "upholstery", box(-hx + back, -hy + arm, leg_top, hx - 0.02, hy - arm, seat - cushion))
    v.add("back", "upholstery", bevelled_box(-hx, -hy, leg_top, -hx + back, hy, h, 0.02))
    for name, (y0, y1) in zip(_pieces("back_cushion", count), spans(-hy + arm, hy - arm, count, 0.01)):
        v.add(name, "cushion", bevelled_box(-hx + back, y0, seat, sx0 - 0.003, y1, h - 0.05, 0.04,
                                             lean=-min(0.05, 0.3 * (sx0 + hx - back))))
    for name, (y0, y1) in zip(_pieces("seat_cushion", count), spans(-hy + arm, hy - arm, count, 0.01)):
        v.add(name, "cushion", bevelled_box(sx0, y0, seat - cushion, hx - 0.005, y1, seat, 0.025))
    if arm >= 0.04:
        top = min(seat + 0.18, h - 0.02)
        for name, side in (("arm_left", 1), ("arm_right", -1)):
            yc, r = side * (hy - arm / 2), arm / 2
            v.add(name, "upholstery", [box(-hx + back, yc - r, leg_top, hx, yc + r, top - r),
                                       rod((-hx + back, yc, top - r), (hx - 0.002, yc, top - r), r, sections=16)])
    return v.parts


@_builds("chair")
def _dining_chair(entry: FurnitureEntry) -> list[VisualPart]:
    """Four legs (the back ones rising into the back's posts), a seat board with a pad whose top
    is the seat's height, and back rails between the posts."""
    hx, hy, h = _half(entry)
    s = _surface(entry)
    seat, (sx0, _, _, _) = s.height, _span(s)
    post = min(0.035, 0.6 * (sx0 + hx))
    board, pad = seat - 0.02, seat - 0.045
    v = Parts()
    xs = (hx - post / 2 - 0.005, -hx + post / 2)
    sides = (hy - post / 2, -hy + post / 2)
    front = [box(xs[0] - post / 2, y - post / 2, 0.0, xs[0] + post / 2, y + post / 2, pad) for y in sides]
    rear = [box(xs[1] - post / 2, y - post / 2, 0.0, xs[1] + post / 2, y + post / 2, h) for y in sides]
    v.add("legs", "wood", front + rear)
    v.add("seat", "wood", box(-hx + post, -hy, pad, hx, hy, board))
    v.add("seat_pad", "upholstery", bevelled_box(-hx + post + 0.005, -hy + 0.01, board, hx - 0.01, hy - 0.01, seat,
                                                 0.012))
    rails = [box(-hx, -hy + post, z - 0.03, -hx + post, hy - post, z + 0.03) for z in (h - 0.05, seat + 0.2)]
    v.add("back_rails", "wood", rails)
    v.add("stretchers", "wood", [box(-hx + post, y - 0.01, 0.15, xs[0] - post / 2, y + 0.01, 0.18) for y in sides])
    return v.parts


@_builds("office_chair")
def _office_chair(entry: FurnitureEntry) -> list[VisualPart]:
    """Five castored legs round a gas column, a seat cushion whose top is the seat's height,
    a backrest on a bar behind the seat, and two armrests beside it."""
    hx, hy, h = _half(entry)
    s = _surface(entry)
    seat, (sx0, sy0, sx1, sy1) = s.height, _span(s)
    reach = min(hx, hy) - 0.03
    v = Parts()
    spokes, casters = [], []
    for k in range(5):
        a = 2 * math.pi * k / 5
        tip = (reach * math.cos(a), reach * math.sin(a))
        spokes.append(rod((0.0, 0.0, 0.06), (tip[0], tip[1], 0.05), 0.014))
        casters.append(ellipsoid(tip[0], tip[1], 0.025, 0.025, 0.012, 0.025, subdivisions=1))
    v.add("star_base", "frame", spokes)
    v.add("casters", "dark_plastic", casters)
    v.add("column", "metal", cylinder(0.0, 0.0, 0.06, seat - 0.07, 0.022, sections=12))
    v.add("seat_cushion", "upholstery", bevelled_box(max(sx0, -hx + 0.075), max(sy0, -hy), seat - 0.07,
                                                     min(sx1 + 0.04, hx - 0.01), min(sy1, hy), seat, 0.025))
    back_x0, back_x1 = -hx + 0.005, min(sx0, -hx + 0.075) - 0.005
    v.add("back_bar", "frame", [rod((-0.06, 0.0, seat - 0.06), (back_x0 + 0.02, 0.0, seat - 0.04), 0.015),
                                rod((back_x0 + 0.02, 0.0, seat - 0.04), (back_x0 + 0.02, 0.0, seat + 0.12), 0.015)])
    v.add("backrest", "upholstery", bevelled_box(back_x0, -0.85 * hy, seat + 0.08, back_x1, 0.85 * hy, h, 0.025))
    arm_y = (sy1 + hy) / 2 if hy - sy1 >= 0.025 else None
    if arm_y is not None:
        w = min(0.02, (hy - sy1) / 2 - 0.002)
        arms = []
        for side in (1, -1):
            y = side * arm_y
            arms += [box(-0.03, y - w, seat - 0.06, 0.01, y + w, seat + 0.17),
                     box(-0.12, y - w, seat + 0.17, 0.12, y + w, seat + 0.2)]
        v.add("armrests", "frame", arms)
    return v.parts


@_builds("bench")
def _bench(entry: FurnitureEntry) -> list[VisualPart]:
    """A top of three slats at the seat's height on two panel ends, with a shelf between them."""
    hx, hy, h = _half(entry)
    top = _surface(entry).height if entry.surfaces else h
    v = Parts()
    slats = [box(x0, -hy, top - 0.035, x1, hy, top) for x0, x1 in spans(-hx, hx, 3, 0.008)]
    v.add("slats", "wood", slats)
    ends = [box(-hx + 0.02, y - 0.02, 0.0, hx - 0.02, y + 0.02, top - 0.035) for y in (hy - 0.08, -hy + 0.08)]
    v.add("ends", "frame", ends)
    v.add("shelf", "wood", box(-hx + 0.04, -hy + 0.1, 0.12, hx - 0.04, hy - 0.1, 0.14))
    return v.parts


# --- tables and desks ------------------------------------------------------------------------------------


#: Tables by class: leg size (m), leg shape, and what joins the legs (an apron under the top or
#: a shelf low down).
_TABLES: dict[str, tuple[float, str, str]] = {
    "dining_table": (0.06, "square", "apron"),
    "coffee_table": (0.05, "round", "shelf"),
    "side_table": (0.035, "round", "shelf"),
}


@_builds(*_TABLES)
def _table(entry: FurnitureEntry) -> list[VisualPart]:
    """A top whose upper face is the surface's height, on four legs joined by an apron or a shelf."""
    hx, hy, h = _half(entry)
    size, shape, joins = _TABLES[entry.semantic_class]
    top = _surface(entry).height if entry.surfaces else h
    t = min(0.035, 0.08 * top)
    lx, ly = hx - size / 2 - 0.04, hy - size / 2 - 0.04
    v = Parts()
    v.add("top", "top", bevelled_box(-hx, -hy, top - t, hx, hy, top, 0.004))
    v.add("legs", "legs", _legs(lx, ly, 0.0, top - t, size, shape, 0.7))
    if joins == "apron":
        rails = [box(-lx, y - 0.01, top - t - 0.08, lx, y + 0.01, top - t) for y in (ly, -ly)]
        rails += [box(x - 0.01, -ly + size / 2, top - t - 0.08, x + 0.01, ly - size / 2, top - t) for x in (lx, -lx)]
        v.add("apron", "top", rails)
    else:
        z = 0.22 * top
        v.add("shelf", "top", box(-lx, -ly, z, lx, ly, z + 0.018))
    return v.parts


@_builds("desk")
def _desk(entry: FurnitureEntry) -> list[VisualPart]:
    """A top on two panel ends, a modesty panel at the back, and a drawer under the top in a
    housing round the drawer's space, its front closed."""
    hx, hy, h = _half(entry)
    top = _surface(entry).height if entry.surfaces else h
    t = min(0.03, 0.08 * top)
    v = Parts()
    v.add("top", "top", bevelled_box(-hx, -hy, top - t, hx, hy, top, 0.004))
    v.add("ends", "frame", [box(-hx + 0.02, y - 0.0125, 0.0, hx - 0.02, y + 0.0125, top - t)
                            for y in (hy - 0.0125, -hy + 0.0125)])
    v.add("modesty_panel", "frame", box(-hx + 0.03, -hy + 0.025, 0.35 * top, -hx + 0.045, hy - 0.025, top - t))
    for c in entry.containers:
        x0, y0, z0, x1, y1, z1 = _inner(c)
        face, out = _front(x1, hx)
        sides = [box(-hx + 0.045, y - 0.01, z0 - 0.02, face, y + 0.01, top - t) for y in (y0 - 0.01, y1 + 0.01)
                 if -hy + 0.025 < y - 0.01 and y + 0.01 < hy - 0.025]
        floor = box(-hx + 0.045, max(y0 - 0.02, -hy + 0.025), z0 - 0.02, face, min(y1 + 0.02, hy - 0.025), z0)
        v.add(f"{c.name}_housing", "top", [floor, *sides])
        part = _opener(entry, c)
        joint = part.name if part is not None else None
        v.add(f"{c.name}_front", "top", box(face, y0 + GAP, z0 - 0.015, out, y1 - GAP, min(z1 + 0.01, top - t - GAP)),
              joint)
        v.add(f"{c.name}_knob", "handle", _knob(out, hx, (y0 + y1) / 2, (z0 + z1) / 2, 0.012), joint)
    return v.parts


# --- cabinets ------------------------------------------------------------------------------------------


@_builds("nightstand")
def _nightstand(entry: FurnitureEntry) -> list[VisualPart]:
    """A carcass on short legs with an open shelf low down and a drawer under the top, its front
    closed and knobbed."""
    hx, hy, h = _half(entry)
    c = entry.containers[0]
    x0, y0, z0, x1, y1, z1 = _inner(c)
    face, out = _front(x1, hx)
    foot, lid = 0.1 * h, max(min(0.03, h - z1 - GAP), 0.005)
    v = Parts()
    v.add("legs", "wood", _legs(hx - 0.03, hy - 0.03, 0.0, foot, 0.03))
    v.add("top", "wood", bevelled_box(-hx, -hy, h - lid, hx, hy, h, 0.003))
    v.add("sides", "wood", [box(-hx, y1, foot, face, hy, h - lid), box(-hx, -hy, foot, face, y0, h - lid)])
    v.add("back", "wood", box(-hx, y0, foot, x0, y1, h - lid))
    v.add("shelves", "wood", [box(x0, y0, foot, face, y1, foot + BOARD), box(x0, y0, z0 - BOARD, face, y1, z0)])
    joint = c.opened_by
    v.add("drawer_front", "front", box(face, -hy + GAP, z0 - 0.015, out, hy - GAP, h - lid - GAP), joint)
    v.add("drawer_knob", "handle", _knob(out, hx, 0.0, (z0 + h - lid) / 2, 0.015), joint)
    return v.parts


@_builds("tv_unit")
def _tv_unit(entry: FurnitureEntry) -> list[VisualPart]:
    """A low cabinet on legs: a drawer in the middle under the top (its front closed), an open
    niche under it and open shelves at both ends."""
    hx, hy, h = _half(entry)
    c = entry.containers[0]
    x0, y0, z0, x1, y1, z1 = _inner(c)
    face, out = _front(x1, hx)
    foot, lid = 0.16 * h, max(min(0.03, h - z1 - GAP), 0.005)
    floor = foot + BOARD
    v = Parts()
    v.add("legs", "legs", _legs(hx - 0.04, hy - 0.05, 0.0, foot, 0.03, "round", 0.7))
    v.add("top", "board", bevelled_box(-hx, -hy, h - lid, hx, hy, h, 0.003))
    walls = [box(-hx, y - BOARD / 2, foot, face, y + BOARD / 2, h - lid) for y in (hy - BOARD / 2, -hy + BOARD / 2)]
    walls += [box(x0, y - BOARD / 2, floor, face, y + BOARD / 2, h - lid) for y in (y1 + BOARD / 2, y0 - BOARD / 2)]
    v.add("walls", "board", walls)
    v.add("back", "board", box(-hx, -hy + BOARD, foot, x0, hy - BOARD, h - lid))
    shelves = [box(x0, -hy + BOARD, foot, face, hy - BOARD, floor), box(x0, y0, z0 - BOARD, face, y1, z0)]
    mid = (floor + h - lid) / 2
    shelves += [box(x0, a, mid - BOARD / 2, face, b, mid + BOARD / 2) for a, b in ((y1 + BOARD, hy - BOARD),
                                                                                  (-hy + BOARD, y0 - BOARD))]
    v.add("shelves", "board", shelves)
    joint = c.opened_by
    v.add("drawer_front", "front", box(face, y0 + GAP, z0 - 0.015, out, y1 - GAP, h - lid - GAP), joint)
    v.add("drawer_handle", "handle", handle(out, hx, 0.0, (z0 + h - lid) / 2, min(0.3, y1 - y0 - 0.1), "y"), joint)
    return v.parts


@_builds("wardrobe")
def _wardrobe(entry: FurnitureEntry) -> list[VisualPart]:
    """A carcass on a plinth round its spaces, a divider between side-by-side spaces, a board
    under a space that starts higher, and a door with a bar handle for each hinged part."""
    hx, hy, h = _half(entry)
    inner = [_inner(c) for c in entry.containers]
    x0 = min(b[0] for b in inner)
    x1 = max(b[3] for b in inner)
    base, roof = min(b[2] for b in inner), max(b[5] for b in inner)
    side = hy - max(max(b[4] for b in inner), -min(b[1] for b in inner))
    face, out = _front(x1, hx)
    v = Parts()
    v.add("sides", "carcass", [box(-hx, hy - side, 0.0, face, hy, roof), box(-hx, -hy, 0.0, face, -hy + side, roof)])
    v.add("top", "carcass", box(-hx, -hy, roof, face, hy, h))
    v.add("plinth", "carcass", box(-hx, -hy + side, 0.0, face - 0.02, hy - side, base))
    v.add("back", "carcass", box(-hx, -hy + side, base, x0, hy - side, roof))
    boards = [box(x0, b[1], b[2] - BOARD, face, b[4], b[2]) for b in inner if b[2] - BOARD > base + 1e-6]
    ys = sorted(inner, key=lambda b: b[1])
    boards += [box(x0, a[4], base, face, b[1], roof) for a, b in zip(ys, ys[1:]) if b[1] - a[4] > 1e-6]
    if boards:
        v.add("boards", "carcass", boards)
    _doors(v, entry, face, out, hx, (base + GAP, h - 0.005))
    return v.parts


def _doors(v: Parts, entry: FurnitureEntry, face: float, out: float, hx: float, zs: tuple[float, float]) -> None:
    """A door for each part hinged about z, over its panel's width, from ``zs[0]`` to ``zs[1]``,
    with a bar handle near the edge away from the hinge."""
    for part in entry.parts:
        if part.kind != "revolute" or part.axis != "z":
            continue
        _, y0, _, _, y1, _ = _panel(entry, part)
        v.add(part.name, "front", box(face, y0 + GAP, zs[0], out, y1 - GAP, zs[1]), part.name)
        free = y0 + 0.05 if abs(part.hinge.y - y1) < abs(part.hinge.y - y0) else y1 - 0.05
        z = min(1.05, (zs[0] + zs[1]) / 2)
        v.add(f"{part.name}handle", "handle", handle(out, hx, free, z, min(0.35, 0.3 * (zs[1] - zs[0])), "z"),
              part.name)


@_builds("shoe_cabinet")
def _shoe_cabinet(entry: FurnitureEntry) -> list[VisualPart]:
    """A slim carcass on a plinth round its compartment, closed by a tilting flap with a bar handle."""
    hx, hy, h = _half(entry)
    c = entry.containers[0]
    x0, y0, z0, x1, y1, z1 = _inner(c)
    face, out = _front(x1, hx)
    v = Parts()
    v.add("sides", "carcass", [box(-hx, y1, 0.0, face, hy, z1 + BOARD), box(-hx, -hy, 0.0, face, y0, z1 + BOARD)])
    v.add("top", "top", bevelled_box(-hx, -hy, z1 + BOARD, hx, hy, h, 0.003))
    v.add("plinth", "carcass", box(-hx, y0, 0.0, face - 0.02, y1, z0))
    v.add("back", "carcass", box(-hx, y0, z0, x0, y1, z1 + BOARD))
    v.add("lid", "carcass", box(x0, y0, z1, face, y1, z1 + BOARD))
    joint = c.opened_by
    flap_top = z1 + BOARD - GAP
    v.add("flap", "front", box(face, -hy + GAP, z0 + GAP, out, hy - GAP, flap_top), joint)
    v.add("flap_handle", "handle", handle(out, hx, 0.0, flap_top - 0.06, min(0.3, hy), "y"), joint)
    return v.parts


# --- shelving ----------------------------------------------------------------------------------------------


def _space_top(entry: FurnitureEntry, s: SupportSurface) -> float:
    """The top of the free space over a shelf: the board under the next shelf up, or the top's."""
    _, sy0, _, sy1 = _span(s)
    above = [t.height for t in entry.surfaces if t.height > s.height + 1e-6
             and _span(t)[1] < sy1 and sy0 < _span(t)[3]]
    return min(above, default=entry.dimensions.height) - SHELF_BOARD_THICKNESS


def _books(rng: np.random.Generator, x0: float, depth: float, y0: float, y1: float, z0: float, z1: float,
           share: float) -> list[trimesh.Trimesh]:
    """Books standing spine out in a row from ``y0`` towards ``y1`` over ``share`` of the span,
    ``depth`` deep from ``x0``, each shorter than the space from ``z0`` to ``z1``."""
    out, y, end = [], y0, y0 + share * (y1 - y0)
    room = z1 - z0
    while y < end - 0.02 and room > 0.06:
        width = float(rng.uniform(0.018, 0.045))
        tall = float(min(0.32, room - 0.02) * rng.uniform(0.6, 0.98))
        out.append(box(x0, y, z0, x0 + depth, min(y + width, y1), z0 + tall))
        y += width + 0.002
    return out


def _book_parts(v: Parts, books: list[trimesh.Trimesh], rng: np.random.Generator) -> None:
    """Books as three parts, one per cover colour, each book's drawn at random."""
    colour = rng.integers(0, 3, len(books))
    for k, name in enumerate(("books_a", "books_b", "books_c")):
        group = [b for b, c in zip(books, colour) if c == k]
        if group:
            v.add(name, name.replace("books", "book"), group)


@_builds("bookshelf")
def _bookshelf(entry: FurnitureEntry) -> list[VisualPart]:
    """Two sides, a back, a board under every shelf and over the top, a plinth, a row of books at
    the back of every other shelf and of the top one, and larger books on the plinth's board
    under the lowest shelf (no surface: nothing is put there)."""
    hx, hy, h = _half(entry)
    rng = _rng(entry)
    shelves = sorted(entry.surfaces, key=lambda s: s.height)
    sx0 = min(_span(s)[0] for s in shelves)
    sy0, sy1 = min(_span(s)[1] for s in shelves), max(_span(s)[3] for s in shelves)
    low = shelves[0].height - BOARD
    v = Parts()
    v.add("sides", "carcass", [box(-hx, sy1, 0.0, hx, hy, h), box(-hx, -hy, 0.0, hx, sy0, h)])
    v.add("back", "carcass", box(-hx, sy0, 0.0, sx0, sy1, h - BOARD))
    boards = [box(sx0, sy0, s.height - BOARD, hx, sy1, s.height) for s in shelves]
    v.add("boards", "carcass", [*boards, box(-hx, sy0, h - BOARD, hx, sy1, h)])
    v.add("base", "carcass", [box(sx0, sy0, 0.0, hx - 0.02, sy1, 0.06), box(sx0, sy0, 0.06, hx, sy1, 0.06 + BOARD)])
    books = _books(rng, sx0, min(0.2, hx - sx0 - 0.02), sy0 + 0.01, sy1, 0.06 + BOARD, low, 0.8)
    for k, s in enumerate(shelves):
        x0, y0, _, y1 = _span(s)
        if k % 2 == 0 or k == len(shelves) - 1:
            row = _books(rng, x0, BACK_BOOKS_DEPTH - 0.002, y0 + 0.01, y1 - 0.01, s.height, _space_top(entry, s), 0.55)
            books += row if k % 4 == 0 else _mirrored(row, (y0 + y1) / 2)
    _book_parts(v, books, rng)
    return v.parts


def _mirrored(meshes: list[trimesh.Trimesh], y: float) -> list[trimesh.Trimesh]:
    """Meshes mirrored across the plane at ``y`` (a row of books started from the other end)."""
    out = []
    for m in meshes:
        lo, hi = m.bounds
        out.append(box(lo[0], 2 * y - hi[1], lo[2], hi[0], 2 * y - lo[1], hi[2]))
    return out


@_builds("shelf")
def _storage_shelf(entry: FurnitureEntry) -> list[VisualPart]:
    """Open shelving: four corner posts, a board under every shelf and a bottom board, storage
    bins on the bottom board and a few binders at the back of the middle shelves."""
    hx, hy, h = _half(entry)
    rng = _rng(entry)
    shelves = sorted(entry.surfaces, key=lambda s: s.height)
    sy0, sy1 = min(_span(s)[1] for s in shelves), max(_span(s)[3] for s in shelves)
    post = min(0.03, hy - sy1, sy0 + hy)
    v = Parts()
    posts = [box(x - post / 2, y - post / 2, 0.0, x + post / 2, y + post / 2, h)
             for x in (hx - post / 2, -hx + post / 2) for y in (hy - post / 2, -hy + post / 2)]
    v.add("posts", "frame", posts)
    boards = [box(-hx, -hy + post, s.height - BOARD, hx, hy - post, s.height) for s in shelves]
    v.add("boards", "board", [box(-hx, -hy + post, 0.04, hx, hy - post, 0.04 + BOARD), *boards])
    room = shelves[0].height - BOARD - (0.04 + BOARD)
    if room > 0.1:
        bins = [box(-hx + 0.02, y0, 0.04 + BOARD, hx - 0.02, y1, 0.04 + BOARD + 0.85 * room)
                for y0, y1 in spans(-hy + post + 0.02, hy - post - 0.02, 2, 0.04)]
        v.add("bins", "bin", bins)
    books: list[trimesh.Trimesh] = []
    for s in shelves[1:-1]:
        x0, y0, _, y1 = _span(s)
        books += _books(rng, x0, BACK_BOOKS_DEPTH - 0.002, y0 + 0.02, y1, s.height, _space_top(entry, s), 0.35)
    _book_parts(v, books, rng)
    return v.parts


# --- kitchen and laundry appliances ------------------------------------------------------------------------


def _shell(v: Parts, hx: float, hy: float, h: float, inner: Bounds, face: float, role: str = "shell") -> None:
    """An appliance's body round one inner space: sides, back, the block under it and the block
    over it, all behind ``face`` (where its door closes)."""
    x0, y0, z0, x1, y1, z1 = inner
    v.add("sides", role, [box(-hx, y1, 0.0, face, hy, h), box(-hx, -hy, 0.0, face, y0, h)])
    v.add("back", role, box(-hx, y0, z0, x0, y1, z1))
    v.add("bottom", role, box(-hx, y0, 0.0, face, y1, z0))
    v.add("top", role, box(-hx, y0, z1, face, y1, h))


@_builds("fridge")
def _fridge(entry: FurnitureEntry) -> list[VisualPart]:
    """A tall body, the fridge door over the compartment (the catalog's door) and a freezer door
    under it, each with a long bar handle on the side away from the hinge."""
    hx, hy, h = _half(entry)
    c = entry.containers[0]
    inner = _inner(c)
    face, out = _front(inner[3], hx)
    v = Parts()
    _shell(v, hx, hy, h, inner, face)
    v.add("kick", "dark_plastic", box(face, -hy + 0.01, 0.0, out - 0.01, hy - 0.01, 0.03))
    part = _opener(entry, c)
    split = inner[2] - 0.01
    free = hy - 0.045 if part is None or part.hinge.y < 0 else -hy + 0.045
    joint = part.name if part is not None else None
    v.add("door", "shell", bevelled_box(face, -hy + GAP, split + 0.01, out, hy - GAP, h - 0.02, 0.008), joint)
    v.add("door_handle", "handle", handle(out, hx, free, split + 0.45, min(0.5, 0.4 * (h - split)), "z"), joint)
    v.add("freezer_door", "shell", bevelled_box(face, -hy + GAP, 0.03 + GAP, out, hy - GAP, split - 0.01, 0.008))
    v.add("freezer_handle", "handle", handle(out, hx, free, split - 0.15, min(0.25, 0.4 * split), "z"))
    return v.parts


@_builds("range")
def _range(entry: FurnitureEntry) -> list[VisualPart]:
    """A cooker: a body round the oven, a cooktop at the surface's height with a coil burner at
    each catalog burner, a control strip of knobs, and the oven door with its window and handle."""
    hx, hy, h = _half(entry)
    c = entry.containers[0]
    inner = _inner(c)
    face, out = _front(inner[3], hx)
    top = _surface(entry).height if entry.surfaces else h
    v = Parts()
    _shell(v, hx, hy, top - 0.03, inner, face)
    v.add("cooktop", "cooktop", box(-hx, -hy, top - 0.03, hx, hy, top - 0.005))
    _burners(v, entry, top)
    part = _opener(entry, c)
    door_top = inner[5] + 0.6 * (top - 0.03 - inner[5])
    strip = (door_top + GAP, top - 0.03)
    v.add("control_strip", "panel", box(face, -hy + GAP, strip[0], out, hy - GAP, strip[1]))
    knob_z = (strip[0] + strip[1]) / 2
    spots = np.linspace(-hy + 0.08, hy - 0.08, len(entry.burners) + 1) if entry.burners else np.zeros(1)
    v.add("knobs", "knob", [_knob(out, hx, float(y), knob_z, min(0.022, (strip[1] - strip[0]) / 3)) for y in spots])
    lo = (part.hinge.z if part is not None else inner[2]) + GAP
    v.add("kick", "dark_plastic", box(face, -hy + GAP, 0.0, out - 0.01, hy - GAP, lo - GAP))
    if part is not None:
        v.add("oven_door", "shell", box(face, -hy + GAP, lo, out, hy - GAP, door_top), part.name)
        window = box(out - 0.004, -0.6 * hy, lo + 0.25 * (door_top - lo), out + 0.003, 0.6 * hy,
                     lo + 0.75 * (door_top - lo))
        v.add("oven_window", "oven_glass", window, part.name)
        v.add("oven_handle", "handle", handle(out, hx, 0.0, door_top - 0.04, 1.4 * hy, "y"), part.name)
    return v.parts


def _burners(v: Parts, entry: FurnitureEntry, top: float) -> None:
    """A coil burner at each catalog burner: three coil rings out to the burner's diameter, their
    tops the cooktop's surface, over a chrome drip pan a little wider sunk in the cooktop."""
    pans, coils = [], []
    for b in entry.burners:
        r = b.diameter / 2
        pans.append(disc(b.offset.x, b.offset.y, top - 0.006, r + 0.012, 0.004))
        coils += [ring(b.offset.x, b.offset.y, top - 0.0025, f * r - 0.006, f * r, 0.005)
                  for f in (0.35, 0.68, 1.0)]
    if pans:
        v.add("burner_pans", "drip_pan", pans)
        v.add("burners", "burner", coils)


@_builds("dishwasher")
def _dishwasher(entry: FurnitureEntry) -> list[VisualPart]:
    """A body round the racks and a full-height door (the catalog's) with a control strip and a
    bar handle along its top, over a dark kick plate."""
    hx, hy, h = _half(entry)
    c = entry.containers[0]
    inner = _inner(c)
    face, out = _front(inner[3], hx)
    part = _opener(entry, c)
    v = Parts()
    _shell(v, hx, hy, h, inner, face)
    low = part.hinge.z if part is not None else inner[2]
    v.add("kick", "dark_plastic", box(face, -hy + GAP, 0.0, out - 0.01, hy - GAP, low))
    joint = part.name if part is not None else None
    v.add("door", "shell", box(face, -hy + GAP, low + GAP, out, hy - GAP, h - GAP), joint)
    strip_lo = inner[5] + 0.2 * (h - inner[5])
    v.add("control_strip", "panel", box(out, -hy + 0.01, strip_lo, out + 0.002, hy - 0.01, h - 0.01), joint)
    v.add("door_handle", "handle", handle(out, hx, 0.0, strip_lo - 0.035, 1.2 * hy, "y"), joint)
    return v.parts


@_builds("washer", "dryer")
def _front_loader(entry: FurnitureEntry) -> list[VisualPart]:
    """A washing machine or a tumble dryer: a body round the drum, a front plate with a round
    opening where the drum's mouth is, a round door over it (a ring round a glass, with a grip),
    and a control panel over the door (a detergent drawer, a dial, a display)."""
    hx, hy, h = _half(entry)
    c = entry.containers[0]
    inner = _inner(c)
    part = _opener(entry, c)
    gap = hx - inner[3]
    plate, door_out = inner[3] + 0.02 * gap, inner[3] + 0.5 * gap
    v = Parts()
    _shell(v, hx, hy, h, inner, inner[3])
    if part is not None:
        _, py0, pz0, _, py1, pz1 = _panel(entry, part)
        centre, radius = ((py0 + py1) / 2, (pz0 + pz1) / 2), min(py1 - py0, pz1 - pz0) / 2 - 0.01
    else:
        centre, radius = ((inner[1] + inner[4]) / 2, (inner[2] + inner[5]) / 2), 0.4 * (inner[4] - inner[1])
    opening = 0.8 * radius
    front = rect(-hy, 0.0, hy, h).difference(round_hole(centre[0], centre[1], opening))
    v.add("front_plate", "shell", extruded(front, "x", plate, door_out))
    joint = part.name if part is not None else None
    v.add("door_ring", "door_ring", ring(door_out + (hx - door_out) / 2 - 0.002, centre[0], centre[1], 0.7 * radius,
                                          radius, hx - door_out - 0.004, "x"), joint)
    v.add("door_glass", "door_glass", disc((plate + hx) / 2 - 0.003, centre[0], centre[1], 0.75 * radius,
                                           hx - plate - 0.01, "x"), joint)
    grip_y = centre[0] - radius if part is None or part.hinge.y > centre[0] else centre[0] + radius
    v.add("door_grip", "door_ring", box(hx - 0.012, grip_y - 0.012, centre[1] - 0.035, hx - 0.001, grip_y + 0.012,
                                        centre[1] + 0.035), joint)
    _controls(v, hx, hy, door_out, (inner[5] + h) / 2)
    return v.parts


def _controls(v: Parts, hx: float, hy: float, x_face: float, z: float) -> None:
    """A front loader's controls at height ``z``: a detergent drawer, a dial and a display."""
    v.add("detergent_drawer", "shell", box(x_face, 0.25 * hy, z - 0.035, hx - 0.004, 0.9 * hy, z + 0.035))
    v.add("dial", "knob", _knob(x_face, hx - 0.002, -0.05 * hy, z, 0.035))
    v.add("display", "screen", box(x_face, -0.85 * hy, z - 0.02, x_face + 0.004, -0.4 * hy, z + 0.02))


@_builds("laundry_basket")
def _laundry_basket(entry: FurnitureEntry) -> list[VisualPart]:
    """A wicker basket: walls round the basket's space up to the top, woven in bands of two
    shades, with a hand hole near the top of each short end, on a base under the space."""
    hx, hy, h = _half(entry)
    if entry.containers:
        x0, y0, z0, x1, y1, _ = _inner(entry.containers[0])
    else:
        x0, y0, z0, x1, y1 = -hx + 0.02, -hy + 0.02, 0.03, hx - 0.02, hy - 0.02
    slot = 0.06 * h
    hole = Polygon([(-0.3 * hx, h - 2.5 * slot), (0.3 * hx, h - 2.5 * slot), (0.3 * hx, h - 1.5 * slot),
                    (-0.3 * hx, h - 1.5 * slot)]).buffer(0.4 * slot, quad_segs=3)
    end = rect(x0, 0.0, x1, h).difference(hole)
    bands = spans(0.0, h, 11, 0.0)
    v = Parts()
    v.add("base", "weave", box(x0, y0, 0.0, x1, y1, z0))
    for k, role in ((0, "weave"), (1, "band")):
        pieces = []
        for z_lo, z_hi in bands[k::2]:
            strip = rect(-hx - hy, z_lo, hx + hy, z_hi)
            if strip.intersects(hole):
                pieces += [extruded(p, "y", a, b) for a, b in ((y1, hy), (-hy, y0)) for p in _parts_of(end & strip)]
            else:
                pieces += [box(x0, a, z_lo, x1, b, z_hi) for a, b in ((y1, hy), (-hy, y0))]
            pieces += [box(a, -hy, z_lo, b, hy, z_hi) for a, b in ((x1, hx), (-hx, x0))]
        v.add(f"walls_{role}", role, pieces)
    return v.parts


def _parts_of(shape: object) -> list[Polygon]:
    """The polygons of a shapely result (a band of a wall a hole cuts in two)."""
    return [g for g in getattr(shape, "geoms", [shape]) if isinstance(g, Polygon) and g.area > 1e-9]


# --- living-room decor --------------------------------------------------------------------------------------


@_builds("television")
def _television(entry: FurnitureEntry) -> list[VisualPart]:
    """A flat screen on two feet (the solid's stand): a thin bezel round a dark screen, the feet
    at the panel's ends reaching across the whole depth."""
    from homeloop.core.geometry_assets import SCREEN_STANDS

    hx, hy, h = _half(entry)
    stand = SCREEN_STANDS.get(entry.semantic_class)
    half = stand.panel_depth / 2 if stand is not None else min(0.03, hx)
    clear = stand.clearance if stand is not None else 0.0
    foot = stand.foot_width if stand is not None else 0.04
    bezel = min(0.015, 0.05 * (h - clear))
    v = Parts()
    v.add("panel", "frame", bevelled_box(-half, -hy, clear, half - 0.004, hy, h, 0.004))
    v.add("screen", "screen", box(half - 0.005, -hy + bezel, clear + bezel, half, hy - bezel, h - bezel))
    feet = []
    for y in (hy - foot / 2, -hy + foot / 2):
        feet += [box(-hx, y - foot / 2, 0.0, hx, y + foot / 2, 0.012),
                 box(-half, y - foot / 2 + 0.005, 0.012, half, y + foot / 2 - 0.005, clear + 0.01)]
    v.add("feet", "frame", feet)
    return v.parts


@_builds("rug")
def _rug(entry: FurnitureEntry) -> list[VisualPart]:
    """A flat rug: a field, a border round it a hair higher, and a diamond in the middle."""
    hx, hy, h = _half(entry)
    band = min(0.12, 0.15 * min(hx, hy))
    border = Polygon(rect(-hx, -hy, hx, hy).exterior.coords, [rect(-hx + band, -hy + band, hx - band,
                                                                      hy - band).exterior.coords])
    diamond = Polygon([(0.5 * hx, 0.0), (0.0, 0.5 * hy), (-0.5 * hx, 0.0), (0.0, -0.5 * hy)])
    v = Parts()
    v.add("field", "field", box(-hx + band, -hy + band, 0.0, hx - band, hy - band, 0.9 * h))
    v.add("border", "border", extruded(border, "z", 0.0, h))
    v.add("pattern", "pattern", extruded(diamond, "z", 0.0, 0.95 * h))
    return v.parts


@_builds("plant_stand")
def _plant_stand(entry: FurnitureEntry) -> list[VisualPart]:
    """A round top at the surface's height on three splayed legs joined by a ring shelf."""
    hx, hy, h = _half(entry)
    top = _surface(entry).height if entry.surfaces else h
    radius = min(hx, hy)
    r_leg = 0.012
    v = Parts()
    v.add("top", "wood", cylinder(0.0, 0.0, top - 0.03, top, radius - 0.005))
    legs = []
    for k in range(3):
        a = math.pi / 2 + 2 * math.pi * k / 3
        c, s = math.cos(a), math.sin(a)
        foot = ((radius - r_leg - 0.005) * c, (radius - r_leg - 0.005) * s)
        legs += [rod((0.7 * radius * c, 0.7 * radius * s, top - 0.03), (foot[0], foot[1], 2 * r_leg), r_leg),
                 cylinder(foot[0], foot[1], 0.0, 2 * r_leg, r_leg, sections=8)]
    v.add("legs", "wood", legs)
    shelf = 0.3 * top
    along = (top - 0.03 - shelf - 0.01) / (top - 0.03)  # how far down the legs the shelf meets them
    reach = 0.7 * radius + along * (0.3 * radius - r_leg - 0.005)
    v.add("shelf", "wood", cylinder(0.0, 0.0, shelf, shelf + 0.02, reach))
    return v.parts


@_builds("vase")
def _vase(entry: FurnitureEntry) -> list[VisualPart]:
    """A bellied floor vase with a narrow neck and a bunch of dried grass stems with seed heads
    fanning out of it, all inside the entry's round footprint."""
    hx, hy, h = _half(entry)
    radius = min(hx, hy)
    neck = 0.6 * h
    profile = [(0.0, 0.0), (0.6 * radius, 0.0), (0.9 * radius, 0.1 * h), (0.95 * radius, 0.25 * h),
               (0.75 * radius, 0.45 * h), (0.35 * radius, neck - 0.04), (0.42 * radius, neck), (0.0, neck)]
    v = Parts()
    v.add("vase", "ceramic", lathe(0.0, 0.0, profile))
    rng = _rng(entry)
    stems, heads = [], []
    for k in range(11):
        a = 2 * math.pi * k / 11 + float(rng.uniform(-0.2, 0.2))
        spread = float(rng.uniform(0.25, 0.75)) * (radius - 0.03)
        tip_z = h - float(rng.uniform(0.04, 0.16)) * h
        tip = (spread * math.cos(a), spread * math.sin(a), tip_z - 0.05)
        stems.append(rod((0.15 * tip[0], 0.15 * tip[1], neck - 0.1), tip, 0.003, sections=5))
        heads.append(ellipsoid(tip[0], tip[1], tip_z - 0.025, 0.012, 0.012, 0.025, subdivisions=1))
    v.add("stems", "stem", stems)
    v.add("seed_heads", "seed_head", heads)
    return v.parts
