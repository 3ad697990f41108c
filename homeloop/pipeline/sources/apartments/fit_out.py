"""The fit-out step: each room's fixtures and windows by its kind: a bedroom's built-in cupboard,
the bathroom's tub or shower, toilet, basin and maybe washing machine, the kitchen's counter
with its sink and the fridge's place, a laundry's washing machine, a storeroom's shelving.
Living rooms get their windows with their outdoor space."""

from __future__ import annotations

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.outdoor import room_outdoor
from homeloop.pipeline.sources.apartments.rects import COUNTER_DEPTH, DOOR_CLEAR_DEPTH_MM, _mm, fridge_mm
from homeloop.pipeline.sources.apartments.rooms import _Room
from homeloop.pipeline.sources.apartments.variants import BUILT_IN_MIN_AREA
from homeloop.pipeline.sources.apartments.windows import windows


def fit_out(drawing: ApartmentDrawing) -> None:
    """Every room drawn so far, in the order drawn."""
    for room in list(drawing.rooms):
        _fit_room(drawing, room)


def _fit_room(drawing: ApartmentDrawing, r: _Room) -> None:
    rng = drawing.rng
    k = r.kind
    w, d = r.w, r.d
    if k == "bed":
        _fit_bedroom(drawing, r)
    elif k == "office" and room_outdoor(drawing, r):
        pass
    elif k in ("office", "dining"):
        windows(drawing, r, [_mm(rng, 1000, min(2000, w - 700))])
    elif k == "bath":
        _fit_bathroom(drawing, r)
    elif k == "wc":
        drawing.feature(r, "TOILET", 0, d - 500, 700, d - 100)
        drawing.feature(r, "SINK", 0, d - 1250, 450, d - 650)
        if rng.random() < 0.5:
            windows(drawing, r, [_mm(rng, 1000, max(1000, w - 400))])
    elif k in ("kitchen", "kitchen_dining"):
        _fit_kitchen(drawing, r)
    elif k == "laundry":
        drawing.feature(r, "WASHING_MACHINE", 100, d - 600, 700, d)
        if rng.random() < 0.5:
            windows(drawing, r, [_mm(rng, 1000, min(1400, w - 400))])
    elif k == "store":
        if rng.random() < 0.5:
            drawing.feature(r, "BUILT_IN_FURNITURE", 0, d - 400, w, d)


def _fit_bedroom(drawing: ApartmentDrawing, r: _Room) -> None:
    """Sometimes a built-in cupboard (a large enough room); one or two windows, unless the room
    has an outdoor space of its own."""
    rng = drawing.rng
    w, d = r.w, r.d
    if w * d >= BUILT_IN_MIN_AREA and rng.random() < 0.4:
        length = _mm(rng, 1200, min(2400, d - 1000))
        drawing.feature(r, "BUILT_IN_FURNITURE", 0, 900, COUNTER_DEPTH, 900 + length)
    n = 2 if w >= 4200 and rng.random() < 0.4 else 1
    if not room_outdoor(drawing, r):
        windows(drawing, r, [_mm(rng, 1000, min(2500, (w - 550) // n - 150)) for _ in range(n)])


def _fit_bathroom(drawing: ApartmentDrawing, r: _Room) -> None:
    """A tub (mostly in the first bathroom) or a shower, or both in a wide one; toilet and basin
    along the same wall; in the first bathroom of a flat without a laundry sometimes a washing
    machine; often a window."""
    rng = drawing.rng
    w, d = r.w, r.d
    first = not any(x.kind == "bath" and x.features for x in drawing.rooms)
    tub = rng.random() < (0.6 if first else 0.2)
    shower = not tub or (w >= 2600 and rng.random() < 0.5)
    left_depth = 900
    right_depth = 0
    if tub:
        drawing.feature(r, "BATHTUB", 0, d - 750, 1700, d)
        left_depth = 750
        right_depth = 750 if w - 600 < 1700 else 0
        if shower:
            drawing.feature(r, "SHOWER", w - 900, d - 900, w, d)
            right_depth = 900
    else:
        drawing.feature(r, "SHOWER", 0, d - 900, 900, d)
        right_depth = 900 if w - 600 < 900 else 0
    vt = d - left_depth - 100 - 400
    drawing.feature(r, "TOILET", 0, vt, 700, vt + 400)
    vs = vt - 150 - 600
    drawing.feature(r, "SINK", 0, vs, 450, vs + 600)
    if first and not drawing.laundry and rng.random() < 0.35:
        vw = d - max(right_depth, 0) - 100 - 600 if right_depth else d - 600
        if vw >= DOOR_CLEAR_DEPTH_MM:
            drawing.feature(r, "WASHING_MACHINE", w - 600, vw, w, vw + 600)
    if rng.random() < 0.6:
        windows(drawing, r, [_mm(rng, 1000, min(1400, w - 400))])


def _fit_kitchen(drawing: ApartmentDrawing, r: _Room) -> None:
    """A counter along the exterior wall with the sink on it (and sometimes a second leg), the
    window over the counter, and beside it the fridge's place with its floor kept free."""
    rng = drawing.rng
    w, d = r.w, r.d
    fw, fd, front = fridge_mm()
    lx = _mm(rng, 1800, min(3600, w - fw - 300))
    drawing.feature(r, "KITCHEN", 0, d - COUNTER_DEPTH, lx, d)
    if not r.open_to_living and rng.random() < 0.4:
        ly = _mm(rng, 1200, min(2000, d - COUNTER_DEPTH - 1000))
        drawing.feature(r, "KITCHEN", 0, d - COUNTER_DEPTH - ly, COUNTER_DEPTH, d - COUNTER_DEPTH)
    s = _mm(rng, 100, lx - 700)
    drawing.feature(r, "SINK", s, d - 550, s + 600, d - 50)
    drawing.reserved.append(r.map(lx, d - fd - front, min(w, lx + fw + 200), d))
    windows(drawing, r, [_mm(rng, 1000, min(1800, lx - 400))], 0, lx)
