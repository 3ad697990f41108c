"""The spaces step: the corridor (none in a flat whose living room is the hall), the living
section, and the rooms of each band at their places along it."""

from __future__ import annotations

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.rooms import _Room


def draw_spaces(drawing: ApartmentDrawing) -> None:
    """The spaces: the corridor (none in a flat whose living room is the hall), the living
    section, the rooms of each band; a kitchen open to the hall reaches to the corridor."""
    ti, ds, c, W, D = drawing.ti, drawing.ds, drawing.c, drawing.W, drawing.D
    drawing.cy0, drawing.cy1 = ds + ti, ds + ti + c
    if drawing.hall:
        drawing.y_n = ds + ti
    else:
        drawing.y_n = drawing.cy1 if drawing.shape == "long" else ds + 2 * ti + c
    drawing.corridor = None
    if not drawing.hall:
        x0 = drawing.lw + ti if drawing.lw else 0
        drawing.corridor = _Room("corridor", "CORRIDOR", rect=(x0, drawing.cy0, W, drawing.cy1), side="S")
    if drawing.lw:
        drawing.living.rect = (0, 0, drawing.lw, D)
        drawing.living.side = "E"
        drawing.living.flip = False
        drawing.add_area(drawing.living)
    for b in "SN":
        _band_spaces(drawing, b)
    if drawing.corridor is not None:
        drawing.add_area(drawing.corridor)


def _band_spaces(drawing: ApartmentDrawing, b: str) -> None:
    """The rooms of band ``b`` from west to east, each turned to face the corridor (its door
    wall on the corridor side) and mirrored at random."""
    ti = drawing.ti
    rooms = drawing.bands[b]
    x = drawing.band_start(b, rooms) if rooms else 0
    y0, y1 = (0, drawing.ds) if b == "S" else (drawing.y_n, drawing.D)
    for i, r in enumerate(rooms):
        r.rect = (x, y0, x + r.width, y1)
        if r.open_to_hall:
            r.rect = (x, y0, x + r.width, y1 + ti) if b == "S" else (x, y0 - ti, x + r.width, y1)
        r.side = "N" if b == "S" else "S"
        r.flip = drawing.rng.random() < 0.5
        x += r.width
        if i + 1 < len(rooms) and not drawing.open_pair(r, rooms[i + 1]):
            x += ti
        if r.kind != "notch":
            drawing.add_area(r)
