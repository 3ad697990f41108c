"""Outdoor space: mostly one off the living room (a garden, terrace, balcony or loggia, with its
door and windows beside it), and now and then one of a bedroom's or office's own
(:data:`~homeloop.pipeline.sources.apartments.variants.ROOM_OUTDOOR_SHARE`), each enclosed by
railings, walls or columns."""

from __future__ import annotations

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.rects import DOOR_CLEAR_DEPTH_MM, OPENING, SEPARATOR, _mm, rotated
from homeloop.pipeline.sources.apartments.rooms import _Room
from homeloop.pipeline.sources.apartments.variants import BUILT_IN_MIN_AREA, ROOM_OUTDOOR_SHARE
from homeloop.pipeline.sources.apartments.windows import windows


def living_outdoor(drawing: ApartmentDrawing) -> None:
    """The living room's outdoor space (most have one), with its door and windows beside it
    on the exterior wall; or just windows there."""
    rng = drawing.rng
    r = drawing.living
    if drawing.ground:
        kind = rng.choices(("GARDEN", "TERRACE", "BALCONY", ""), (0.45, 0.3, 0.15, 0.1))[0]
    else:
        kind = rng.choices(("BALCONY", "LOGGIA", "TERRACE", ""), (0.55, 0.2, 0.1, 0.15))[0]
    w = r.w
    if not kind:
        windows(drawing, r, [_mm(rng, 1200, 2500), _mm(rng, 1000, 2000)])
        return
    if kind == "GARDEN":
        ow, depth = w, _mm(rng, 4000, 8000, 100)
    elif kind == "TERRACE":
        ow, depth = _mm(rng, min(w, 4000), w), _mm(rng, 2500, 4000, 50)
    else:
        ow, depth = _mm(rng, 2800, min(w, 5000)), _mm(rng, 1500, 2400, 50)
    a = _mm(rng, 0, w - ow)
    dw = _mm(rng, 800, 900)
    du = _mm(rng, max(a + 200, 300), min(a + ow - 200, w - 300) - dw)
    _outdoor_space(drawing, r, kind, (a, ow, depth), (du, dw))


def room_outdoor(drawing: ApartmentDrawing, r: _Room) -> bool:
    """Sometimes a bedroom or office has an outdoor space of its own (:data:`ROOM_OUTDOOR_SHARE`),
    0.3 m in from the room's sides so it keeps clear of its neighbours'; its door goes where its
    clear zone is free. Whether it got one."""
    rng = drawing.rng
    w, d = r.w, r.d
    if w < 3000 or w * d < BUILT_IN_MIN_AREA or rng.random() >= ROOM_OUTDOOR_SHARE:
        return False
    kind = rng.choice(("TERRACE", "GARDEN")) if drawing.ground else rng.choices(("BALCONY", "LOGGIA"), (0.8, 0.2))[0]
    ow = _mm(rng, 2000, min(w - 600, 3500))
    depth = _mm(rng, 3000, 6000, 100) if kind == "GARDEN" else _mm(rng, 1200, 2000, 50)
    a = _mm(rng, 300, w - 300 - ow)
    dw = _mm(rng, 800, 900)
    te = drawing.te
    probe = _Room("outdoor", kind, rect=r.map(a, d + te, a + ow, d + te + depth))
    c = DOOR_CLEAR_DEPTH_MM
    near = drawing.near(r.map(a, d - c, a + ow, d + te + c))
    for du in rotated(list(range(a + 200, a + ow - 200 - dw + 1, 50)), rng):
        if near.door_fits(r.map(du, d, du + dw, d + te), (r, probe)):
            _outdoor_space(drawing, r, kind, (a, ow, depth), (du, dw))
            return True
    return False


def _outdoor_space(drawing: ApartmentDrawing, r: _Room, kind: str, span: tuple[int, int, int],
                   door: tuple[int, int]) -> None:
    """An outdoor space of ``kind`` beyond the room's exterior wall (``span`` = its start along
    the wall, width and depth), the door to it (start, width) and windows beside the door."""
    rng, te = drawing.rng, drawing.te
    a, ow, depth = span
    du, dw = door
    w, d = r.w, r.d
    v0, v1 = d + te, d + te + depth
    out = _Room("outdoor", kind, rect=r.map(a, v0, a + ow, v1))
    drawing.add_area(out)
    drawing.add_door(r.map(du, d, du + dw, d + te), (r, out))
    # windows beside the door, in whichever stretch of the wall has room
    left, right = du - 150, w - (du + dw + 150)
    for start, length in ((0, left), (du + dw + 150, right)):
        if length >= 1000 + 200 and rng.random() < 0.8:
            ww = _mm(rng, 1000, min(2500, length - 200))
            s = start + (200 if start == 0 else 0) + _mm(rng, 0, length - 200 - ww)
            s = min(s, start + length - ww - (200 if start else 0))
            drawing.add(OPENING, "WINDOW", r.map(s, d, s + ww, d + te))
    if kind != "GARDEN":
        _enclose(drawing, r, kind, a, ow, v0, v1)


def _enclose(drawing: ApartmentDrawing, r: _Room, kind: str, a: int, ow: int, v0: int, v1: int) -> None:
    """The railings, walls or columns round an outdoor space ``ow`` wide from ``v0`` to ``v1``."""
    t = 50
    drawing.add(SEPARATOR, "RAILING", r.map(a, v1, a + ow, v1 + t))
    if kind == "LOGGIA":
        drawing.add(SEPARATOR, "WALL", r.map(a - 200, v0, a, v1 + t))
        drawing.add(SEPARATOR, "WALL", r.map(a + ow, v0, a + ow + 200, v1 + t))
        return
    drawing.add(SEPARATOR, "RAILING", r.map(a - t, v0, a, v1))
    drawing.add(SEPARATOR, "RAILING", r.map(a + ow, v0, a + ow + t, v1))
    if kind == "TERRACE":
        drawing.add(SEPARATOR, "COLUMN", r.map(a - 250, v1, a, v1 + 250))
        drawing.add(SEPARATOR, "COLUMN", r.map(a + ow, v1, a + ow + 250, v1 + 250))
    else:
        drawing.add(SEPARATOR, "RAILING", r.map(a - t, v1, a, v1 + t))
        drawing.add(SEPARATOR, "RAILING", r.map(a + ow, v1, a + ow + t, v1 + t))
