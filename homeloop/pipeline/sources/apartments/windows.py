"""Windows: on a room's exterior wall, and the extra windows a plain rectangle would not have
(in the gable of a corner unit, in the corridor's facade of a long unit or along a recess, in a
recess's faces). An extra window goes only where no opening is, no door's clear zone reaches
and nothing stands before it."""

from __future__ import annotations

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.rects import OPENING, Rect, _mm, front_strip, overlaps, place_along, rotated
from homeloop.pipeline.sources.apartments.rooms import _Room
from homeloop.pipeline.sources.apartments.variants import GABLE_WINDOW_SHARE, WINDOWED

#: Depth (mm) of the floor kept clear before an extra window.
WINDOW_FRONT_MM = 600


def windows(drawing: ApartmentDrawing, r: _Room, widths: list[int], lo: int = 0, hi: int | None = None) -> None:
    """Windows of ``widths`` on the room's exterior (far) wall, between ``lo`` and ``hi`` along
    it (default: all of it), dropping the widest-last ones that do not fit."""
    hi = r.w if hi is None else hi
    while widths:
        starts = place_along(drawing.rng, hi - lo, widths)
        if starts is not None:
            for s, w in zip(starts, widths):
                drawing.add(OPENING, "WINDOW", r.map(lo + s, r.d, lo + s + w, r.d + drawing.te))
            return
        widths = widths[:-1]


def _wall_window(drawing: ApartmentDrawing, room: _Room, wall: Rect) -> None:
    """One window in ``wall`` (a stretch of the room's exterior wall) where no opening is, no
    door's clear zone reaches and nothing stands in the :data:`WINDOW_FRONT_MM` before it; none
    if none fits."""
    rng = drawing.rng
    x0, y0, x1, y1 = wall
    along_x = x1 - x0 >= y1 - y0
    r = room.rect
    lo, hi = (max(x0, r[0]), min(x1, r[2])) if along_x else (max(y0, r[1]), min(y1, r[3]))
    lo, hi = lo + 200, hi - 200
    if hi - lo < 1000:
        return
    width = _mm(rng, 1000, min(1600, hi - lo))
    f = WINDOW_FRONT_MM
    near = drawing.near((x0 - f, y0 - f, x1 + f, y1 + f))
    for s in rotated(list(range(lo, hi - width + 1, 50)), rng):
        rect = (s, y0, s + width, y1) if along_x else (x0, s, x1, s + width)
        if any(overlaps(rect, o) for o in near.openings):
            continue
        if not near.in_door_zone(rect) and not near.blocked(front_strip(rect, r, f)):
            drawing.add(OPENING, "WINDOW", rect)
            return


def extra_windows(drawing: ApartmentDrawing) -> None:
    """Windows a plain rectangle would not have: in the gable of a corner unit, in the
    corridor's facade (a long unit, or along a recess), in a recess's faces."""
    te, ti, D = drawing.te, drawing.ti, drawing.D
    rng = drawing.rng
    if drawing.corner:
        for r in drawing.rooms:
            if r.kind in WINDOWED and r.rect[0] == 0 and rng.random() < GABLE_WINDOW_SHARE:
                _wall_window(drawing, r, (-te, r.rect[1], 0, r.rect[3]))
    halls = [r for r in drawing.rooms if r.kind == "corridor"]
    if drawing.shape == "long":
        for r in halls:
            _wall_window(drawing, r, (r.rect[0], D, r.rect[2], D + te))
    notch = drawing.notch_span()
    if notch is None:
        return
    x_l, x_r = notch
    top = drawing.y_n - ti
    for r in halls:
        _wall_window(drawing, r, (x_l, top, x_r if x_r is not None else drawing.W, top + te))
    for r in drawing.bands["N"]:
        if r.kind in WINDOWED and rng.random() < GABLE_WINDOW_SHARE:
            if r.rect[2] == x_l:
                _wall_window(drawing, r, (x_l, top + te, x_l + te, D))
            elif x_r is not None and r.rect[0] == x_r:
                _wall_window(drawing, r, (x_r - te, top + te, x_r, D))
