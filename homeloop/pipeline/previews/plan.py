"""Top-down previews of floor plans (matplotlib, Agg, no screen).

:func:`draw_plan` draws one plan on a given Axes and returns it, so later
stages can draw furniture, devices and cameras on top (use the ``Z_*`` layers
below to stack them). :func:`render_plan` writes one PNG per plan and
:func:`render_sheet` a contact sheet of many; both write atomically and
deterministically (the same plan gives the same bytes).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple, Sequence

import numpy as np
import shapely
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.path import Path as MplPath
from shapely.geometry.base import BaseGeometry

from homeloop.core.geometry import opening_axes
from homeloop.core.io import atomic_path
from homeloop.core.plan import (
    ANCILLARY,
    BEDROOM_SUBTYPES,
    COLUMN,
    ENTRANCE_DOOR,
    INDOOR,
    OUTDOOR,
    RAILING,
    SERVICE,
    WINDOW,
    Opening,
    Plan,
    Space,
)

# --- look ------------------------------------------------------------------------

#: Fill colour per space class of the preview.
PALETTE: dict[str, str] = {
    "bedroom": "#c6dbef",
    "living": "#fdd9a0",
    "kitchen": "#f4a582",
    "bathroom": "#a6dcd0",
    "corridor": "#ebe6dc",
    "storage": "#d9cbe6",
    "outdoor": "#cfe8b8",
    "ancillary": "#d4d4d4",
    "service": "#9e9e9e",
    "other": "#f2f2f2",
}

#: Indoor subtypes per palette class; other indoor subtypes are matched by
#: keyword in :func:`colour_class`, and the rest are "other".
_CLASS_OF_SUBTYPE: dict[str, str] = {
    **{s: "bedroom" for s in BEDROOM_SUBTYPES},
    "LIVING_ROOM": "living",
    "LIVING_DINING": "living",
    "DINING": "living",
    "OFFICE": "living",
    "KITCHEN": "kitchen",
    "KITCHEN_DINING": "kitchen",
    "BATHROOM": "bathroom",
    "CORRIDOR": "corridor",
    "STOREROOM": "storage",
    "WASH_AND_DRY_ROOM": "storage",
}
_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("KITCHEN", "kitchen"),
    ("BATH", "bathroom"),
    ("TOILET", "bathroom"),
    ("SHOWER", "bathroom"),
    ("CORRIDOR", "corridor"),
    ("HALL", "corridor"),
    ("LOBBY", "corridor"),
    ("ENTRANCE", "corridor"),
    ("STORE", "storage"),
    ("STORAGE", "storage"),
    ("WASH", "storage"),
    ("CLOSET", "storage"),
    ("WARDROBE", "storage"),
    ("LIVING", "living"),
    ("DINING", "living"),
    ("OFFICE", "living"),
    ("STUDIO", "living"),
    ("BEDROOM", "bedroom"),
)

#: Short labels of area subtypes; others are title-cased.
SHORT_SPACE_NAMES: dict[str, str] = {
    "LIVING_ROOM": "Living",
    "LIVING_DINING": "Living/Dining",
    "KITCHEN_DINING": "Kitchen/Dining",
    "WASH_AND_DRY_ROOM": "Laundry",
    "BATHROOM": "Bath",
    "STOREROOM": "Store",
    "CORRIDOR": "Hall",
    "WINTERGARTEN": "Winter garden",
    "NOT_DEFINED": "?",
}
#: Short labels of feature subtypes.
SHORT_FEATURE_NAMES: dict[str, str] = {
    "SINK": "sink",
    "KITCHEN": "counter",
    "SHOWER": "shower",
    "BATHTUB": "tub",
    "TOILET": "WC",
    "WASHING_MACHINE": "washer",
    "BUILT_IN_FURNITURE": "built-in",
    "STAIRS": "stairs",
    "RAMP": "ramp",
    "ELEVATOR": "lift",
}

WALL_COLOUR = "#4a4a4a"
COLUMN_COLOUR = "#000000"
RAILING_COLOUR = "#6b6b6b"
DOOR_COLOUR = "#c8742c"
ENTRANCE_DOOR_COLOUR = "#1b7837"
WINDOW_COLOUR = "#9ecae1"
WINDOW_EDGE = "#3b7ab0"
FEATURE_FACE = "#ffffff"
FEATURE_EDGE = "#555555"
LABEL_COLOUR = "#222222"
HIGHLIGHT_COLOUR = "#e31a1c"

# Drawing layers (matplotlib zorder). Later stages stack on these, e.g.
# furniture at Z_FURNITURE, devices and cameras at Z_DEVICES.
Z_SPACES = 1.0
Z_FEATURES = 2.0
Z_WALLS = 3.0
Z_OPENINGS = 3.5
Z_FURNITURE = 4.0
Z_LABELS = 5.0
Z_DEVICES = 6.0
Z_HIGHLIGHT = 7.0
Z_SCALE_BAR = 8.0

#: Door swing arcs are hinted only for doors up to this width (m); wider ones
#: (garage doors, double doors) get none.
MAX_SWING_WIDTH = 1.3
#: Margin (m) around the plan inside the Axes.
MARGIN = 0.6

#: Line width (points) of the scale bar.
SCALE_BAR_WIDTH = 1.2

DEFAULT_DPI = 150
#: Fixed PNG metadata: no software version or timestamp, so bytes are stable.
PNG_METADATA = {"Software": None}


def colour_class(space: Space) -> str:
    """The palette class of a space (a key of :data:`PALETTE`)."""
    cls = space.space_class
    if cls == OUTDOOR:
        return "outdoor"
    if cls == ANCILLARY:
        return "ancillary"
    if cls == SERVICE:
        return "service"
    if space.subtype in _CLASS_OF_SUBTYPE:
        return _CLASS_OF_SUBTYPE[space.subtype]
    for word, name in _KEYWORDS:
        if word in space.subtype:
            return name
    return "other"


def short_space_name(subtype: str) -> str:
    return SHORT_SPACE_NAMES.get(subtype) or subtype.replace("_", " ").capitalize()


def short_feature_name(subtype: str) -> str:
    return SHORT_FEATURE_NAMES.get(subtype) or subtype.replace("_", " ").lower()


# --- geometry to matplotlib -------------------------------------------------------


def geometry_path(geom: BaseGeometry) -> MplPath:
    """A matplotlib Path of a (multi)polygon, holes included."""
    verts: list[np.ndarray] = []
    codes: list[np.ndarray] = []
    for poly in getattr(geom, "geoms", [geom]):
        if poly.is_empty or poly.geom_type != "Polygon":
            continue
        for ring in (poly.exterior, *poly.interiors):
            xy = np.asarray(ring.coords)[:, :2]
            c = np.full(len(xy), MplPath.LINETO, dtype=MplPath.code_type)
            c[0] = MplPath.MOVETO
            c[-1] = MplPath.CLOSEPOLY
            verts.append(xy)
            codes.append(c)
    if not verts:
        return MplPath(np.zeros((1, 2)), [MplPath.MOVETO])
    return MplPath(np.concatenate(verts), np.concatenate(codes))


def _add_polygons(ax: Axes, geoms: Sequence[BaseGeometry], *, zorder: float, **style) -> PathCollection | None:
    if not geoms:
        return None
    coll = PathCollection([geometry_path(g) for g in geoms], zorder=zorder, **style)
    ax.add_collection(coll)
    return coll


def _axes_frame(geom: BaseGeometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float] | None:
    """:func:`homeloop.core.geometry.opening_axes` of a rectangle-ish shape; None for an
    empty or degenerate one (nothing to draw along it)."""
    frame = opening_axes(geom)
    return frame if frame[3] > 1e-9 and frame[4] > 1e-9 else None


# --- the drawing -----------------------------------------------------------------


def _element_ids(plan: Plan) -> set[str]:
    ids = {s.id for s in plan.spaces}
    ids.update(e.id for e in plan.separators)
    ids.update(e.id for e in plan.openings)
    ids.update(e.id for e in plan.features)
    return ids


def _check_highlight(plan: Plan, highlight: Iterable[str]) -> set[str]:
    wanted = {str(h) for h in highlight}
    unknown = sorted(wanted - _element_ids(plan))
    if unknown:
        raise ValueError(f"plan {plan.key} has no element with id {', '.join(map(repr, unknown))}")
    return wanted


def plan_extent(plan: Plan) -> tuple[float, float, float, float]:
    """Bounds (minx, miny, maxx, maxy) of everything drawn."""
    geoms = [s.polygon for s in plan.spaces] + [e.polygon for e in plan.separators]
    geoms += [e.polygon for e in plan.openings] + [e.polygon for e in plan.features]
    if not geoms:
        return (0.0, 0.0, 1.0, 1.0)
    b = shapely.total_bounds(np.array(geoms, dtype=object))
    return tuple(float(v) for v in b)  # type: ignore[return-value]


def _points_per_metre(ax: Axes, extent: tuple[float, float, float, float]) -> float:
    """Screen points per plan metre once the Axes is drawn with equal aspect."""
    fig = ax.figure
    pos = ax.get_position()
    w_pt = pos.width * fig.get_figwidth() * 72.0
    h_pt = pos.height * fig.get_figheight() * 72.0
    minx, miny, maxx, maxy = extent
    dx = maxx - minx + 2 * MARGIN
    dy = maxy - miny + 2 * MARGIN + _scale_bar_room(maxx - minx)
    return min(w_pt / max(dx, 1e-6), h_pt / max(dy, 1e-6))


def _scale_bar_length(width: float) -> float:
    """1, 2 or 5 m (10 m for very large plans): the largest at most a quarter of the width."""
    for length in (10.0, 5.0, 2.0):
        if length <= width / 4:
            return length
    return 1.0


def _scale_bar_room(width: float) -> float:
    return 0.9 if width < 12 else 1.3


class Shapes(NamedTuple):
    """Polygons drawn alike: a fill (one colour, one per shape, or None for none),
    an outline colour (or one per shape) and width in points, on layer ``z``."""

    geoms: list[BaseGeometry]
    face: object
    edge: object
    width: float
    z: float


class Strokes(NamedTuple):
    """Polylines (arrays of plan points) in one colour (or one per line), width in points."""

    lines: list[np.ndarray]
    colours: object
    width: float
    z: float
    alpha: float = 1.0


class Label(NamedTuple):
    """A text at a plan point: size in points, turned ``rotation`` degrees, centred
    there (``ha="left"``: starting there)."""

    x: float
    y: float
    text: str
    size: float
    rotation: int
    colour: str
    linespacing: float | None = None  # None: the text default
    ha: str = "center"


def plan_layers(plan: Plan, highlight: Iterable[str] = ()) -> list[Shapes | Strokes]:
    """What :func:`draw_plan` draws below the labels, bottom layer first: spaces filled
    by :data:`PALETTE` class, features, walls, windows, doors with their swing hint,
    and the elements named in ``highlight`` in red on top. Layers with nothing in
    them are left out."""
    spaces, feats = list(plan.spaces), list(plan.features)
    layers: list[Shapes | Strokes] = [
        Shapes([s.polygon for s in spaces], [PALETTE[colour_class(s)] for s in spaces], "#8a8a8a", 0.3, Z_SPACES),
        Shapes([f.polygon for f in feats], FEATURE_FACE, FEATURE_EDGE, 0.6, Z_FEATURES),
        *_separator_layers(plan),
        *_window_layers([o for o in plan.openings if o.kind == WINDOW]),
        *_door_layers(plan, [o for o in plan.openings if o.kind != WINDOW]),
    ]
    wanted = set(highlight)
    if wanted:
        geoms = [s.polygon for s in plan.spaces if s.id in wanted]
        geoms += [e.polygon for e in (*plan.separators, *plan.openings, *plan.features) if e.id in wanted]
        layers.append(Shapes(geoms, (0.89, 0.10, 0.11, 0.30), HIGHLIGHT_COLOUR, 2.2, Z_HIGHLIGHT))
    return [layer for layer in layers if len(layer[0])]


def plan_labels(plan: Plan, ppm: float) -> list[Label]:
    """Space names with their area, then feature names, each sized to fit its
    shape at ``ppm`` points per metre (left out where none fits)."""
    spaces, feats = list(plan.spaces), list(plan.features)
    return _space_labels(spaces, feats, ppm) + _feature_labels(feats, ppm)


def draw_plan(
    ax: Axes,
    plan: Plan,
    *,
    highlight: Iterable[str] = (),
    labels: bool = True,
    scale_bar: bool = True,
) -> Axes:
    """Draw ``plan`` top-down on ``ax`` and return ``ax``.

    Spaces are filled by :data:`PALETTE` class and labelled with their short
    subtype and area; walls dark grey, columns black, railings thin lines;
    doors as rectangles with a swing hint (the entrance door in its own
    colour), windows light blue; features outlined with a short label.
    ``highlight`` names element ids (space, separator, opening or feature)
    drawn in red on top; an unknown id raises ``ValueError``. The Axes gets
    equal aspect, no ticks, limits around the plan and a scale bar.
    """
    wanted = _check_highlight(plan, highlight)
    extent = plan_extent(plan)
    ppm = _points_per_metre(ax, extent)
    for layer in plan_layers(plan, wanted):
        if isinstance(layer, Shapes):
            _add_polygons(ax, layer.geoms, zorder=layer.z, facecolors="none" if layer.face is None else layer.face,
                          edgecolors=layer.edge, linewidths=layer.width)
        else:
            ax.add_collection(LineCollection(layer.lines, colors=layer.colours, linewidths=layer.width,
                                             zorder=layer.z, alpha=None if layer.alpha == 1.0 else layer.alpha))
    for label in plan_labels(plan, ppm) if labels else ():
        _add_label(ax, label, Z_LABELS)
    _frame_axes(ax, extent, _scale_bar_room(extent[2] - extent[0]) if scale_bar else 0.0)
    if scale_bar:
        bar, label = scale_bar_marks(extent, ppm)
        ax.plot(bar[:, 0], bar[:, 1], color="#222222", linewidth=SCALE_BAR_WIDTH, solid_capstyle="butt",
                zorder=Z_SCALE_BAR)
        _add_label(ax, label, Z_SCALE_BAR)
    return ax


def _add_label(ax: Axes, label: Label, zorder: float) -> None:
    ax.text(label.x, label.y, label.text, ha=label.ha, va="center", fontsize=label.size, rotation=label.rotation,
            color=label.colour, zorder=zorder, linespacing=label.linespacing, clip_on=True)


def _separator_layers(plan: Plan) -> list[Shapes]:
    """Walls dark grey, columns black, railings as thin outlines."""
    walls = [s.polygon for s in plan.separators if s.kind not in (COLUMN, RAILING)]
    columns = [s.polygon for s in plan.separators if s.kind == COLUMN]
    railings = [s.polygon for s in plan.separators if s.kind == RAILING]
    return [Shapes(walls, WALL_COLOUR, WALL_COLOUR, 0.2, Z_WALLS),
            Shapes(columns, COLUMN_COLOUR, COLUMN_COLOUR, 0.2, Z_WALLS),
            Shapes(railings, None, RAILING_COLOUR, 0.6, Z_WALLS)]


def _window_layers(windows: Sequence[Opening]) -> list[Shapes | Strokes]:
    """Windows light blue, a line along the glass."""
    glass = []
    for o in windows:
        frame = _axes_frame(o.polygon)
        if frame is not None:
            c, u, _, long, _ = frame
            glass.append(np.array([c - u * long / 2, c + u * long / 2]))
    return [Shapes([o.polygon for o in windows], WINDOW_COLOUR, WINDOW_EDGE, 0.5, Z_OPENINGS),
            Strokes(glass, WINDOW_EDGE, 0.5, Z_OPENINGS + 0.01)]


def _door_layers(plan: Plan, doors: Sequence[Opening]) -> list[Shapes | Strokes]:
    """Doors as rectangles with a swing hint, the entrance door in its own colour."""
    door_colours = [ENTRANCE_DOOR_COLOUR if o.kind == ENTRANCE_DOOR else DOOR_COLOUR for o in doors]
    swings = [_swing_hint(plan, o) for o in doors]
    leaves = [seg for s, colour in zip(swings, door_colours) if s for seg in s]
    leaf_colours = [colour for s, colour in zip(swings, door_colours) if s for _ in s]
    return [Shapes([o.polygon for o in doors], door_colours, door_colours, 0.4, Z_OPENINGS),
            Strokes(leaves, leaf_colours, 0.6, Z_OPENINGS, alpha=0.9)]


def _frame_axes(ax: Axes, extent: tuple[float, float, float, float], bar_room: float) -> None:
    """Limits around the plan (room below it for the scale bar), equal aspect, no ticks or spines."""
    minx, miny, maxx, maxy = extent
    ax.set_xlim(minx - MARGIN, maxx + MARGIN)
    ax.set_ylim(miny - MARGIN - bar_room, maxy + MARGIN)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


def _swing_hint(plan: Plan, door: Opening) -> list[np.ndarray] | None:
    """A door leaf and quarter arc swinging into one of the spaces it connects.

    Swiss Dwellings doors have no swing direction; the hint opens into a room
    rather than a corridor, and into the inside rather than the outside.
    """
    frame = _axes_frame(door.polygon)
    connects = [sid for sid in door.connects if plan.has_space(sid)]
    if frame is None or not connects:
        return None
    c, u, n, width, depth = frame
    if width > MAX_SWING_WIDTH or width < 0.3:
        return None

    def rank(space_id: str) -> int:
        s = plan.space(space_id)
        if s.space_class == INDOOR:
            return 0 if colour_class(s) != "corridor" else 1
        return 2 if s.space_class == ANCILLARY else 3

    target = min(connects, key=rank)
    poly = plan.space(target).polygon
    probe = depth / 2 + 0.1
    side = 1.0
    if shapely.distance(poly, shapely.Point(*(c - n * probe))) < shapely.distance(poly, shapely.Point(*(c + n * probe))):
        side = -1.0
    n = n * side
    hinge = c - u * width / 2 + n * depth / 2
    leaf = np.array([hinge, hinge + n * width])
    angles = np.linspace(0.0, math.pi / 2, 13)
    arc = hinge + width * (np.outer(np.cos(angles), n) + np.outer(np.sin(angles), u))
    return [leaf, arc]


def _valid(geom: BaseGeometry) -> BaseGeometry:
    """``geom`` made valid for overlay operations (plans under audit may hold bad shapes)."""
    return geom if geom.is_valid else shapely.make_valid(geom)


def _fit_boxes(regions: Sequence[BaseGeometry]) -> list[tuple[tuple[float, float], float, float]]:
    """For each region: a label point inside it and the free width and height (m) through it."""
    out: list[tuple[tuple[float, float], float, float]] = [((0.0, 0.0), 0.0, 0.0)] * len(regions)
    polys, where = [], []
    for i, region in enumerate(regions):
        poly = _label_polygon(region)
        if poly is None:
            continue
        if poly.geom_type == "Point":  # no polygon part: nothing to fit
            out[i] = ((poly.x, poly.y), 0.0, 0.0)
            continue
        polys.append(poly)
        where.append(i)
    if not polys:
        return out
    arr = np.array(polys, dtype=object)
    xy = shapely.get_coordinates(_label_points(arr))
    minx, miny, maxx, maxy = shapely.bounds(arr).T
    across = shapely.linestrings(np.stack([np.column_stack([minx - 1, xy[:, 1]]),
                                           np.column_stack([maxx + 1, xy[:, 1]])], axis=1))
    along = shapely.linestrings(np.stack([np.column_stack([xy[:, 0], miny - 1]),
                                          np.column_stack([xy[:, 0], maxy + 1])], axis=1))
    widths, heights = shapely.intersection(arr, across), shapely.intersection(arr, along)
    for k, i in enumerate(where):
        x, y = float(xy[k, 0]), float(xy[k, 1])
        out[i] = ((x, y), _run(widths[k], 0, x), _run(heights[k], 1, y))
    return out


def _label_polygon(region: BaseGeometry) -> BaseGeometry | None:
    """The polygon of ``region`` a label goes in (its largest part, made valid);
    its centroid where it has no polygon part, None where it is empty."""
    poly = _valid(region)
    if poly.is_empty:
        return None
    if poly.geom_type != "Polygon":
        parts = [g for g in getattr(poly, "geoms", [poly]) if g.geom_type == "Polygon"]
        if not parts:
            return poly.centroid if not poly.is_empty else shapely.Point(0, 0)
        poly = max(parts, key=lambda g: g.area)
    return poly


def _label_points(polys: np.ndarray) -> np.ndarray:
    """The centroid of each polygon, which reads best; the pole of inaccessibility
    for shapes (L, T) whose centroid sits near or outside an edge."""
    points = shapely.centroid(polys)
    solid = np.flatnonzero(shapely.area(polys) > 0)
    if len(solid):
        shapes, centroids = polys[solid], points[solid]
        poles = shapely.get_point(shapely.maximum_inscribed_circle(shapes, 0.02), 0)
        holed = shapely.get_num_interior_rings(shapes) > 0
        edges = np.where(holed, shapely.boundary(shapes), shapely.get_exterior_ring(shapes))
        inside = shapely.distance(edges, poles)
        near_edge = shapely.distance(shapely.boundary(shapes), centroids) < 0.7 * inside
        off = ~shapely.contains(shapes, centroids) | near_edge
        points[solid[off]] = poles[off]
    return points


def _run(cut: BaseGeometry, coord: int, at: float) -> float:
    """The length of the piece of ``cut`` (a line through a polygon) that holds ``at``."""
    best = 0.0
    for seg in getattr(cut, "geoms", [cut]):
        if seg.is_empty or seg.geom_type != "LineString":
            continue
        vals = np.asarray(seg.coords)[:, coord]
        if vals.min() - 1e-9 <= at <= vals.max() + 1e-9:
            best = max(best, float(vals.max() - vals.min()))
    return best


def _text_size(lines: Sequence[str], fontsize: float) -> tuple[float, float]:
    """Rough extent (points) of a block of text: width, height."""
    return 0.56 * fontsize * max(len(t) for t in lines), 1.25 * fontsize * len(lines)


def _space_labels(spaces: Sequence[Space], features: Sequence, ppm: float) -> list[Label]:
    base = float(np.clip(ppm * 0.30, 3.0, 9.0))
    tree = shapely.STRtree([f.polygon for f in features]) if features else None
    valid = [_valid(f.polygon) for f in features]
    regions = []
    for s in spaces:
        # Labels go on the free floor, clear of sinks, counters, tubs ...
        region = _valid(s.polygon)
        if tree is not None:
            hits = tree.query(region, predicate="intersects")
            if len(hits):
                covered = shapely.union_all([valid[i] for i in hits])
                free = region.difference(covered)
                if not free.is_empty and free.area > 0.25 * region.area:
                    region = free
        regions.append(region)
    labels = []
    for s, ((x, y), w, h) in zip(spaces, _fit_boxes(regions)):
        if w <= 0 or h <= 0:
            continue
        lines = [short_space_name(s.subtype), f"{s.area:.1f} m²"]
        w_pt, h_pt = w * ppm * 0.92, h * ppm * 0.92
        size, rotation = _fit_font(lines, base, w_pt, h_pt)
        if size is None:
            lines = lines[:1]
            size, rotation = _fit_font(lines, base, w_pt, h_pt)
        if size is None:
            continue
        labels.append(Label(x, y, "\n".join(lines), size, rotation, LABEL_COLOUR, linespacing=1.1))
    return labels


def _fit_font(lines: Sequence[str], base: float, w_pt: float, h_pt: float, smallest: float = 3.0):
    """The largest font size up to ``base`` that fits, upright or turned 90°."""
    tw, th = _text_size(lines, 1.0)
    upright = min(base, w_pt / tw, h_pt / th)
    turned = min(base, h_pt / tw, w_pt / th)
    if upright >= smallest and upright >= 0.8 * turned:
        return upright, 0
    if turned >= smallest:
        return turned, 90
    return None, 0


def _feature_labels(feats: Sequence, ppm: float) -> list[Label]:
    base = float(np.clip(ppm * 0.16, 2.5, 6.0))
    valid = [_valid(f.polygon) for f in feats]
    areas = [f.polygon.area for f in feats]
    tree = shapely.STRtree([f.polygon for f in feats])
    named, regions = [], []
    for i, f in enumerate(feats):
        # A feature drawn over another (a sink in a counter) keeps its own
        # label; the one below is labelled in the part left free.
        hits = sorted(tree.query(f.polygon, predicate="intersects"))
        others = [valid[j] for j in hits if j != i and areas[j] < areas[i]]
        free = valid[i].difference(shapely.union_all(others)) if others else valid[i]
        if not free.is_empty and free.area >= 1e-4:
            named.append(short_feature_name(f.kind))
            regions.append(free)
    labels = []
    for name, ((x, y), w, h) in zip(named, _fit_boxes(regions)):
        if w <= 0 or h <= 0:
            continue
        size, rotation = _fit_font([name], base, w * ppm * 0.9, h * ppm * 0.9, smallest=2.5)
        if size is None:
            continue
        labels.append(Label(x, y, name, size, rotation, FEATURE_EDGE))
    return labels


def scale_bar_marks(extent: tuple[float, float, float, float], ppm: float) -> tuple[np.ndarray, Label]:
    """The scale bar below a plan of ``extent``: its polyline (a bar with end ticks)
    and the label after it, sized for ``ppm`` points per metre."""
    minx, miny, maxx, _ = extent
    length = _scale_bar_length(maxx - minx)
    room = _scale_bar_room(maxx - minx)
    y = miny - MARGIN - room * 0.45
    x0 = minx
    tick = room * 0.12
    bar = np.array([[x0, y + tick], [x0, y], [x0 + length, y], [x0 + length, y + tick]])
    size = float(np.clip(ppm * 0.28, 5.0, 9.0))
    return bar, Label(x0 + length + 0.25, y, f"{length:g} m", size, 0, "#222222", ha="left")


# --- files -----------------------------------------------------------------------


def plan_caption(plan: Plan) -> str:
    """A one-line summary: bedrooms, rooms, indoor area, doors, windows."""
    return (
        f"{plan.count_spaces(BEDROOM_SUBTYPES)} bedrooms · {len(plan.indoor_spaces)} indoor spaces · "
        f"{plan.indoor_area:.0f} m² indoor · {len(plan.doors) + len(plan.entrance_doors)} doors · "
        f"{len(plan.windows)} windows"
    )


def short_key(key: str, keep: int = 8) -> str:
    """A plan key with its apartment id cut to ``keep`` characters."""
    head, _, apartment = key.rpartition("-")
    return f"{head}-{apartment[:keep]}" if head else key[:keep]


def _save(fig: Figure, path: str | Path, dpi: int) -> Path:
    FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata=PNG_METADATA, facecolor="white")
    return Path(path)


def _legend_handles(plans: Iterable[Plan]) -> list[Patch]:
    used = {colour_class(s) for p in plans for s in p.spaces}
    handles = [Patch(facecolor=PALETTE[c], edgecolor="#8a8a8a", label=c) for c in PALETTE if c in used]
    handles.append(Patch(facecolor=DOOR_COLOUR, label="door"))
    handles.append(Patch(facecolor=ENTRANCE_DOOR_COLOUR, label="entrance"))
    handles.append(Patch(facecolor=WINDOW_COLOUR, edgecolor=WINDOW_EDGE, label="window"))
    return handles


def render_plan(
    plan: Plan,
    path: str | Path,
    *,
    highlight: Iterable[str] = (),
    title: str | None = None,
    dpi: int = DEFAULT_DPI,
    width_in: float = 10.0,
) -> Path:
    """Write a PNG preview of ``plan`` to ``path`` (atomically) and return the path.

    The title is ``title`` or the plan key with a one-line summary. The same
    plan, highlight and arguments give a byte-identical file.
    """
    highlight = tuple(highlight)
    _check_highlight(plan, highlight)
    minx, miny, maxx, maxy = plan_extent(plan)
    aspect = (maxy - miny + 2 * MARGIN + _scale_bar_room(maxx - minx)) / max(maxx - minx + 2 * MARGIN, 1e-6)
    plot_h = float(np.clip(width_in * aspect, 3.0, 14.0))
    fig = Figure(figsize=(width_in, plot_h + 1.3))
    top = 1 - 0.75 / (plot_h + 1.3)
    bottom = 0.55 / (plot_h + 1.3)
    ax = fig.add_axes((0.02, bottom, 0.96, top - bottom))
    draw_plan(ax, plan, highlight=highlight)
    head = title if title is not None else f"{plan.key}\n{plan_caption(plan)}"
    fig.suptitle(head, fontsize=10, y=1 - 0.12 / (plot_h + 1.3), va="top")
    fig.legend(
        handles=_legend_handles([plan]), loc="lower center", ncol=8, fontsize=7, frameon=False,
        handlelength=1.2, columnspacing=1.0, bbox_to_anchor=(0.5, 0.0),
    )
    return _save(fig, path, dpi)


def render_sheet(
    plans: Sequence[Plan],
    path: str | Path,
    *,
    columns: int = 4,
    highlights: Mapping[str, Iterable[str]] | None = None,
    title: str | None = None,
    dpi: int = 110,
    cell_in: float = 3.6,
) -> Path:
    """Write a contact sheet of ``plans`` (a grid, ``columns`` wide) to ``path``.

    Each cell is titled with the short plan key, bedrooms and indoor area.
    ``highlights`` maps plan keys to element ids to draw in red.
    """
    plans = list(plans)
    if not plans:
        raise ValueError("render_sheet needs at least one plan")
    highlights = {k: tuple(v) for k, v in (highlights or {}).items()}
    known = {p.key for p in plans}
    missing = sorted(set(highlights) - known)
    if missing:
        raise ValueError(f"highlights name plans not on the sheet: {', '.join(missing)}")
    columns = max(1, min(columns, len(plans)))
    rows = math.ceil(len(plans) / columns)
    head_in = 0.6 if title else 0.15
    foot_in = 0.35
    fig = Figure(figsize=(columns * cell_in, rows * cell_in + head_in + foot_in))
    fig_w, fig_h = fig.get_figwidth(), fig.get_figheight()
    title_in = 0.42
    for i, plan in enumerate(plans):
        r, c = divmod(i, columns)
        left = (c * cell_in + 0.08) / fig_w
        bottom = (fig_h - head_in - (r + 1) * cell_in + 0.05) / fig_h
        ax = fig.add_axes((left, bottom, (cell_in - 0.16) / fig_w, (cell_in - title_in - 0.05) / fig_h))
        draw_plan(ax, plan, highlight=highlights.get(plan.key, ()))
        bedrooms = plan.count_spaces(BEDROOM_SUBTYPES)
        ax.set_title(
            f"{short_key(plan.key)}\n{bedrooms} bd · {plan.indoor_area:.0f} m²",
            fontsize=8, pad=3, linespacing=1.15,
        )
    if title:
        fig.suptitle(title, fontsize=12, y=1 - 0.1 / fig_h, va="top")
    fig.legend(
        handles=_legend_handles(plans), loc="lower center", ncol=13, fontsize=7, frameon=False,
        handlelength=1.2, columnspacing=1.0, bbox_to_anchor=(0.5, 0.0),
    )
    return _save(fig, path, dpi)
