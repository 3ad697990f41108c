"""The wall steps: exterior walls (the facades, the end walls, the faces of a recess), the
corridor's walls (or the wall between the bands of a flat without one), the partitions between
rooms and the living section's inner wall; and, last, long walls split in segments as drawn
plans split them."""

from __future__ import annotations

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.rects import OPENING, SEPARATOR, Rect, minus

#: Walls at least this long (mm) may be split in two.
SPLIT_MIN_LENGTH = 3000


def draw_walls(drawing: ApartmentDrawing) -> None:
    """Exterior walls (the facades, the end walls, the faces of a recess), the corridor's walls
    (or the wall between the bands of a flat without one), the partitions between rooms and
    the living section's inner wall."""
    for g in (_facades(drawing) + _end_walls(drawing) + _spines(drawing) + _partitions(drawing)
              + _section_walls(drawing)):
        drawing.add(SEPARATOR, "WALL", g)


def _facades(drawing: ApartmentDrawing) -> list[Rect]:
    """The south and north facades, split at the rooms' boundaries, open over a recess."""
    te, W, D = drawing.te, drawing.W, drawing.D
    notch = drawing.notch_span()
    out = []
    for b, (ya, yb) in (("S", (-te, 0)), ("N", (D, D + te))):
        cuts = [r.rect[2] for r in drawing.bands[b][:-1]]
        if drawing.lw:
            cuts.insert(0, drawing.lw)
        xs = [-te] + sorted(set(cuts)) + [W + te]
        gaps = []
        if b == "N" and notch:
            gaps = [(notch[0] + te, notch[1] - te if notch[1] is not None else W + 2 * te)]
        for xa, xb in zip(xs, xs[1:]):
            out += [(a, ya, z, yb) for a, z in minus((xa, xb), gaps)]
    return out


def _end_walls(drawing: ApartmentDrawing) -> list[Rect]:
    """The west and east end walls, in a piece per band and one across the corridor; an L
    has none east of its north band."""
    te, ds, W, D, y_n = drawing.te, drawing.ds, drawing.W, drawing.D, drawing.y_n
    notch = drawing.notch_span()
    out = []
    for xa, xb, east in ((-te, 0, False), (W, W + te, True)):
        if east and notch and notch[1] is None:
            pieces: tuple[tuple[int, int], ...] = ((0, ds), (ds, y_n - drawing.ti))
        else:
            pieces = ((0, ds), (ds, y_n), (y_n, D))
        out += [(xa, a, xb, b) for a, b in pieces if a < b]
    return out


def _spines(drawing: ApartmentDrawing) -> list[Rect]:
    """The corridor's walls (the wall between the bands in a flat without a corridor), split at
    the rooms' boundaries, open where a kitchen opens to the hall; along a recess the north
    one is a facade."""
    ds, ti, te, W, y_n = drawing.ds, drawing.ti, drawing.te, drawing.W, drawing.y_n
    x_c = drawing.corridor.rect[0] if drawing.corridor else 0
    if drawing.hall:
        spines: tuple[tuple[str, tuple[int, int]], ...] = (("N", (ds, ds + ti)),)
    elif drawing.shape == "long":
        spines = (("S", (ds, ds + ti)),)
    else:
        spines = (("S", (ds, ds + ti)), ("N", (y_n - ti, y_n)))
    notch = drawing.notch_span()
    out = []
    for b, (ya, yb) in spines:
        gaps = [(r.rect[0], r.rect[2]) for r in drawing.bands[b] if r.open_to_hall]
        if b == "N" and notch:
            gaps.append((notch[0], notch[1] if notch[1] is not None else W + te))
        cuts = sorted({r.rect[2] for r in drawing.bands[b][:-1] if x_c < r.rect[2] < W})
        xs = [x_c] + cuts + [W]
        for xa, xb in zip(xs, xs[1:]):
            out += [(a, ya, z, yb) for a, z in minus((xa, xb), gaps)]
    if notch:
        out.append((notch[0], y_n - ti, notch[1] if notch[1] is not None else W + te, y_n - ti + te))
    return out


def _partitions(drawing: ApartmentDrawing) -> list[Rect]:
    """The walls between the rooms of a band, and the faces of a recess."""
    ti, te, ds, D, y_n = drawing.ti, drawing.te, drawing.ds, drawing.D, drawing.y_n
    out = []
    for b, (ya, yb) in (("S", (0, ds)), ("N", (y_n, D))):
        rooms = drawing.bands[b]
        for r, nxt in zip(rooms, rooms[1:]):
            if "notch" not in (r.kind, nxt.kind) and not drawing.open_pair(r, nxt):
                out.append((r.rect[2], ya, r.rect[2] + ti, yb))
    notch = drawing.notch_span()
    if notch:
        top = y_n - ti + te
        out.append((notch[0], top, notch[0] + te, D))
        if notch[1] is not None:
            out.append((notch[1] - te, top, notch[1], D))
    return out


def _section_walls(drawing: ApartmentDrawing) -> list[Rect]:
    """The living section's inner wall, open to a kitchen open to it."""
    if not drawing.lw:
        return []
    ds, ti, c, y_n, D = drawing.ds, drawing.ti, drawing.c, drawing.y_n, drawing.D
    pieces = [(0, ds, "S"), (ds, ds + ti, ""), (ds + ti, ds + ti + c, ""), (ds + ti + c, y_n, ""), (y_n, D, "N")]
    return [(drawing.lw, ya, drawing.lw + ti, yb) for ya, yb, b in pieces
            if ya < yb and not (b and drawing.bands[b][0].open_to_living)]


def split_long_walls(drawing: ApartmentDrawing) -> None:
    """Split walls longer than :data:`SPLIT_MIN_LENGTH` in two where no opening crosses them,
    as drawn plans split walls into segments."""
    openings = [g for e, _, g, _ in drawing.elements if e == OPENING]
    for i, (etype, sub, g, area) in enumerate(list(drawing.elements)):
        if etype != SEPARATOR or sub != "WALL":
            continue
        x0, y0, x1, y1 = g
        along_x = x1 - x0 >= y1 - y0
        lo, hi = (x0, x1) if along_x else (y0, y1)
        if hi - lo < SPLIT_MIN_LENGTH or drawing.rng.random() < 0.5:
            continue
        spans = [(o[0], o[2]) if along_x else (o[1], o[3]) for o in openings
                 if o[0] < x1 and x0 < o[2] and o[1] < y1 and y0 < o[3]]
        for p in (lo + (hi - lo) // 2, lo + (hi - lo) // 3, lo + 2 * (hi - lo) // 3):
            if all(not (a - 50 <= p <= b + 50) for a, b in spans):
                break
        else:
            continue
        first, second = ((x0, y0, p, y1), (p, y0, x1, y1)) if along_x else ((x0, y0, x1, p), (x0, p, x1, y1))
        drawing.elements[i] = (etype, sub, first, area)
        drawing.elements.append((etype, sub, second, area))
