"""The home preview: a top-down PNG of a furnished, device-equipped home.

:func:`render_home` needs only the home file: it paints the home's rooms,
walls, openings and fixtures as a plan (:func:`plan_of_home`, the layers and
labels of :mod:`homeloop.pipeline.previews.plan`), then furniture footprints (short
labels; tall items hatched), carryable objects as dots, devices as one marker
per type, and each camera's view cone (agent cameras solid and filled,
evaluation-only cameras dashed; colour by privacy mode), under a title and
over a legend. Thousands are drawn per build, so they are painted with
Pillow (:mod:`homeloop.pipeline.previews.raster`) rather than through matplotlib's
figures (docs/pipeline.md). The file is written atomically and the same home
gives the same bytes.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import shapely
from matplotlib.colors import to_rgb
from PIL import Image

from homeloop.core.home import (
    FEATURE_OF_FIXTURE_KIND,
    OPENING_KIND_OF_SUBTYPE,
    Camera,
    Home,
    polygon_from_rings,
)
from homeloop.core.plan import DOOR, Feature, Opening, Plan, PlanIds, Separator, Space
from homeloop.pipeline.previews.raster import (
    DASH_PATTERN,
    SUPERSAMPLE,
    Canvas,
    marker_shape,
    text_width,
)
from homeloop.pipeline.previews.plan import (
    DEFAULT_DPI,
    MARGIN,
    SCALE_BAR_WIDTH,
    Z_FURNITURE,
    Label,
    Shapes,
    _scale_bar_room,
    plan_extent,
    plan_labels,
    plan_layers,
    scale_bar_marks,
)

#: Marker, colour and legend label of each device type.
DEVICE_STYLE: dict[str, tuple[str, str, str]] = {
    "smoke_sensor": ("o", "#d62728", "smoke"),
    "contact_sensor": ("s", "#17becf", "contact"),
    "leak_sensor": ("v", "#1f77b4", "leak"),
    "doorbell": ("P", "#2ca02c", "doorbell"),
    "soil_moisture_sensor": ("^", "#8c564b", "soil"),
    "stove": ("X", "#ff7f0e", "stove"),
    "lock": ("D", "#2ca02c", "lock"),
    "roller_blind": ("_", "#7f7f7f", "blind"),
    "curtain": ("|", "#9467bd", "curtain"),
    "thermostat": ("h", "#e377c2", "thermostat"),
    "plug": ("d", "#bcbd22", "plug"),
    "light_switch": ("<", "#444444", "switch"),
    "light": ("*", "#f2b701", "light"),
    "water_main": ("H", "#1f3b99", "water main"),
    "garage_door": ("8", "#555555", "garage door"),
    "washer": ("p", "#4c72b0", "washer"),
    "dryer": ("p", "#dd8452", "dryer"),
    "dome_camera": (".", "#000000", "camera"),
    "fall_watch": ("1", "#000000", "watch"),
    "help_button": ("2", "#000000", "help button"),
    # the optional air devices (homeloop/catalog/air_devices.yaml)
    "humidifier": ("o", "#6baed6", "humidifier"),
    "dehumidifier": ("s", "#08519c", "dehumidifier"),
    "fan": ("+", "#31a354", "fan"),
    "air_purifier": ("d", "#756bb1", "air purifier"),
}
#: View-cone colour per privacy mode.
PRIVACY_COLOUR = {"none": "#1f77b4", "people_masked": "#ff7f0e", "image_blocked": "#d62728"}
#: Radius (m) of a drawn view cone, and points along its arc.
CONE_RADIUS, CONE_ARC_POINTS = 4.0, 33
#: A cone is kept to its camera's room grown by this much (m), so it covers the walls but not the next room.
CONE_CLIP_GROWTH = 0.35
#: Fill strength of an agent camera's cone; outline strength of an evaluation-only camera's;
#: strength of a privacy mode's swatch in the legend (stronger than a cone, to read at its size).
CONE_FILL_ALPHA, EVALUATION_CONE_ALPHA, LEGEND_CONE_ALPHA = 0.13, 0.9, 0.35
CONE_LINE_WIDTH = 0.8
FURNITURE_FACE = "#e8dcc8"
FURNITURE_EDGE = "#6b5a45"
FURNITURE_LINE_WIDTH = 0.6
FURNITURE_LABEL = "#3d3226"
#: Furniture footprints smaller than this (m²) go unlabelled.
MIN_LABELLED_FOOTPRINT = 0.12
#: Hatch of tall furniture: matplotlib's ``////`` (a line every twelfth of an inch along a row), 1 pt wide.
TALL_HATCH_PER_INCH, TALL_HATCH_WIDTH = 12.0, 1.0
OBJECT_COLOUR = "#333333"
#: Marker sizes (points): devices, the bar markers (blind, curtain) larger, objects, cameras, and in the legend.
DEVICE_MARKER, BAR_DEVICE_MARKER = math.sqrt(22), math.sqrt(40)
OBJECT_MARKER, CAMERA_MARKER, LEGEND_MARKER = 2.0, 5.0, 6.0
BAR_MARKERS = ("_", "|")
#: Edge widths (points): of filled markers (black), of line markers (their own colour), of camera dots.
MARKER_EDGE, LINE_MARKER_WIDTH, CAMERA_EDGE = 0.4, 1.4, 0.6
#: Font sizes (points) of the title, the legend and the furniture labels.
TITLE_SIZE, LEGEND_SIZE, FURNITURE_LABEL_SIZE = 10.0, 7.0, 4.2
#: Height limits (inches) of the plan's part of the picture.
MIN_PLOT_IN, MAX_PLOT_IN = 1.0, 16.0
#: Padding (inches) at the top, between title, plan and legend, and at the bottom.
PAD_IN = 0.12

#: Short furniture labels by semantic class; other classes print as they are.
SHORT_FURNITURE = {
    "coffee_table": "table", "dining_table": "table", "tv_unit": "TV unit", "television": "TV",
    "nightstand": "night", "wardrobe": "wardrobe", "side_table": "side", "plant_stand": "plant",
    "office_chair": "chair", "shoe_cabinet": "shoes", "laundry_basket": "basket", "dishwasher": "DW",
    "bookshelf": "books", "armchair": "arm", "fridge": "fridge", "range": "range",
}

#: The Swiss Dwellings subtype each home opening kind is drawn as (a garage door is a wide DOOR).
SUBTYPE_OF_OPENING_KIND = {kind: subtype for subtype, kind in OPENING_KIND_OF_SUBTYPE.items()} | {"garage_door": DOOR}


def plan_of_home(home: Home) -> Plan:
    """The home's rooms, walls, openings and fixtures as a plan, for drawing."""
    spaces = tuple(Space(r.id, r.type, polygon_from_rings(r.polygon)) for r in home.rooms)
    walls = tuple(Separator(w.id, w.kind, polygon_from_rings(w.polygon)) for w in home.walls)
    openings = tuple(Opening(o.id, SUBTYPE_OF_OPENING_KIND[o.kind], polygon_from_rings(o.polygon), tuple(o.connects))
                     for o in home.openings)
    features = tuple(Feature(x.id, FEATURE_OF_FIXTURE_KIND[x.kind], polygon_from_rings(x.polygon), x.room)
                     for x in home.fixtures)
    return Plan(PlanIds(0, 0, 0, 0, home.home_id), spaces, walls, openings, features)


# --- the plan of the home, painted ----------------------------------------------------


def paint_home(canvas: Canvas, home: Home, plan: Plan, extent: tuple[float, float, float, float]) -> None:
    """Paint the home (``plan`` is :func:`plan_of_home`, ``extent`` its bounds), its
    furniture, objects, devices and cameras on a framed ``canvas``, bottom layer first."""
    for layer in plan_layers(plan):
        canvas.shapes(layer) if isinstance(layer, Shapes) else canvas.strokes(layer)
    _paint_furniture(canvas, home)
    if home.objects:
        dots = canvas.xy([(o.pose.x, o.pose.y) for o in home.objects])
        canvas.markers(dots, "o", OBJECT_MARKER, OBJECT_COLOUR)
    for label in plan_labels(plan, canvas.ppm) + furniture_labels(home):
        canvas.label(label)
    _paint_cones(canvas, home)
    _paint_devices(canvas, home)
    for cam in home.cameras:
        canvas.markers(canvas.xy([cam.pose.x, cam.pose.y]), "o", CAMERA_MARKER, _cone_colour(cam), "black",
                       CAMERA_EDGE)
    bar, label = scale_bar_marks(extent, canvas.ppm)
    canvas.polylines([canvas.xy(bar)], ["#222222"], canvas.width(SCALE_BAR_WIDTH))
    canvas.label(label)


def _paint_furniture(canvas: Canvas, home: Home) -> None:
    """Footprints in one colour; tall ones hatched under their outline."""
    low = [polygon_from_rings(f.footprint) for f in home.furniture if not f.tall]
    tall = [polygon_from_rings(f.footprint) for f in home.furniture if f.tall]
    canvas.shapes(Shapes(low, FURNITURE_FACE, FURNITURE_EDGE, FURNITURE_LINE_WIDTH, Z_FURNITURE))
    width = canvas.width(FURNITURE_LINE_WIDTH)
    for polygons in canvas.rings(tall):
        for rings in polygons:
            canvas.polygon(rings, FURNITURE_FACE, None, width)
            canvas.hatch(rings, FURNITURE_EDGE, TALL_HATCH_PER_INCH, TALL_HATCH_WIDTH)
            canvas.polygon(rings, None, FURNITURE_EDGE, width)


def furniture_labels(home: Home) -> list[Label]:
    """A short name at the middle of each footprint large enough to carry one."""
    labels = []
    for f in home.furniture:
        g = polygon_from_rings(f.footprint)
        if g.area >= MIN_LABELLED_FOOTPRINT:
            c = g.centroid
            name = SHORT_FURNITURE.get(f.semantic_class, f.semantic_class.replace("_", " "))
            labels.append(Label(c.x, c.y, name, FURNITURE_LABEL_SIZE, 0, FURNITURE_LABEL))
    return labels


def _cone_colour(cam: Camera) -> str:
    return PRIVACY_COLOUR.get(cam.privacy_mode, PRIVACY_COLOUR["none"])


def _paint_cones(canvas: Canvas, home: Home) -> None:
    """Each camera's view cone: filled faintly under a solid outline for an agent
    camera, a dashed outline for an evaluation-only one; kept to the camera's room
    (grown by :data:`CONE_CLIP_GROWTH`) when the camera stands in it."""
    cams = list(home.cameras)
    if not cams:
        return
    wedges = shapely.polygons(_wedges(cams))
    outlines = shapely.get_exterior_ring(wedges)
    rooms = home.room_polygons()
    room = np.array([rooms.get(cam.room) for cam in cams], dtype=object)
    inside = shapely.covers(room, shapely.points([(c.pose.x, c.pose.y) for c in cams])) & ~shapely.is_missing(room)
    grown = shapely.buffer(room[inside], CONE_CLIP_GROWTH, join_style="mitre")
    wedges[inside] = shapely.intersection(wedges[inside], grown)
    outlines[inside] = shapely.intersection(outlines[inside], grown)
    width = canvas.width(CONE_LINE_WIDTH)
    dash = tuple(d * CONE_LINE_WIDTH * canvas.px_per_pt for d in DASH_PATTERN)
    for cam, polygons, lines in zip(cams, canvas.rings(wedges), canvas.lines(outlines)):
        colour = _cone_colour(cam)
        if cam.agent_visible:
            for rings in polygons:
                canvas.polygon(rings, (colour, CONE_FILL_ALPHA), None, width)
            canvas.polylines(lines, [colour] * len(lines), width)
        else:
            canvas.polylines(lines, [colour] * len(lines), width, alpha=EVALUATION_CONE_ALPHA, dash=dash)


def _wedges(cams: list[Camera]) -> np.ndarray:
    """The corners of each camera's view cone (apex, arc, back to the apex), plan metres."""
    apex = np.array([(c.pose.x, c.pose.y) for c in cams])[:, None, :]
    yaw = np.array([c.pose.yaw for c in cams])[:, None]
    half = np.radians([c.hfov_deg / 2 for c in cams])[:, None]
    turns = yaw - half + 2 * half * np.linspace(0.0, 1.0, CONE_ARC_POINTS)
    arc = apex + CONE_RADIUS * np.stack([np.cos(turns), np.sin(turns)], axis=-1)
    return np.concatenate([apex, arc, apex], axis=1)


def _device_look(marker: str) -> tuple[str | None, float]:
    """Edge colour and width (points) of a device marker: black round a filled
    marker, none for a line marker, which is drawn thicker in its own colour."""
    filled, _ = marker_shape(marker)
    return ("black", MARKER_EDGE) if filled else (None, LINE_MARKER_WIDTH)


def _paint_devices(canvas: Canvas, home: Home) -> None:
    """One marker per device type (:data:`DEVICE_STYLE`); cameras are drawn with their cones."""
    placed = [d for d in home.devices if d.room is not None and d.type != "dome_camera"]
    for t, (marker, colour, _) in DEVICE_STYLE.items():
        pts = [(d.pose.x, d.pose.y) for d in placed if d.type == t]
        if pts:
            edge, edge_pt = _device_look(marker)
            size = BAR_DEVICE_MARKER if marker in BAR_MARKERS else DEVICE_MARKER
            canvas.markers(canvas.xy(pts), marker, size, colour, edge, edge_pt)


# --- title, legend and the file ------------------------------------------------------


class LegendKey(NamedTuple):
    """One key of the legend: a device ``marker`` in ``colour``, or a swatch filled
    with ``face`` at strength ``alpha`` (None: unfilled), outlined in ``colour``,
    dashed or hatched."""

    label: str
    colour: str
    marker: str | None = None
    face: str | None = None
    alpha: float = 1.0
    dashed: bool = False
    hatched: bool = False


#: Legend geometry, in legend font sizes: key swatch width and height, key-to-text gap,
#: gap between keys, row height.
KEY_WIDTH, KEY_HEIGHT, KEY_GAP, KEY_SPACING, LEGEND_ROW = 1.4, 0.7, 0.8, 1.0, 1.6


def legend_keys(home: Home) -> list[LegendKey]:
    """The device types placed in the home, the privacy modes of its cameras,
    evaluation-only cameras and tall furniture, in that order, where present."""
    present = {d.type for d in home.devices if d.room is not None}
    keys = [LegendKey(label, colour, marker=marker) for t, (marker, colour, label) in DEVICE_STYLE.items()
            if t in present and t != "dome_camera"]
    keys += [LegendKey(f"camera: {mode.replace('_', ' ')}", colour, face=colour, alpha=LEGEND_CONE_ALPHA)
             for mode, colour in PRIVACY_COLOUR.items() if any(c.privacy_mode == mode for c in home.cameras)]
    if any(not c.agent_visible for c in home.cameras):
        keys.append(LegendKey("evaluation-only", "#555555", dashed=True))
    if any(f.tall for f in home.furniture):
        keys.append(LegendKey("tall", FURNITURE_EDGE, face=FURNITURE_FACE, hatched=True))
    return keys


def _legend_rows(keys: list[LegendKey], width: float, dpi: float) -> list[list[tuple[LegendKey, float]]]:
    """Keys with their widths (pixels), in rows that fit ``width``."""
    em = LEGEND_SIZE * dpi / 72
    rows: list[list[tuple[LegendKey, float]]] = [[]]
    used = 0.0
    for key in keys:
        w = (KEY_WIDTH + KEY_GAP) * em + text_width(key.label, em)
        if rows[-1] and used + KEY_SPACING * em + w > width:
            rows.append([])
            used = 0.0
        used += (KEY_SPACING * em if rows[-1] else 0.0) + w
        rows[-1].append((key, w))
    return rows if rows[0] else []


@functools.lru_cache(maxsize=64)
def legend_strip(keys: tuple[LegendKey, ...], width: int, dpi: int) -> Image.Image:
    """The legend of ``keys`` as a strip ``width`` pixels wide, drawn at the canvas's
    :data:`~homeloop.pipeline.previews.raster.SUPERSAMPLE` scale: its rows, each centred, and
    the bottom padding. Kept: most homes show the same keys (treat as read-only)."""
    rows = _legend_rows(list(keys), 0.98 * width, dpi)
    em = LEGEND_SIZE * dpi / 72
    canvas = Canvas((width, math.ceil(len(rows) * LEGEND_ROW * em + PAD_IN * dpi)), dpi)
    _paint_legend(canvas, rows)
    return canvas.image


def _paint_legend(canvas: Canvas, rows: list[list[tuple[LegendKey, float]]]) -> None:
    """The legend's rows from the top of ``canvas``, each centred."""
    em = LEGEND_SIZE * canvas.dpi / 72
    for i, row in enumerate(rows):
        y = (i + 0.5) * LEGEND_ROW * em
        x = (canvas.size[0] - sum(w for _, w in row) - KEY_SPACING * em * (len(row) - 1)) / 2
        for key, w in row:
            _paint_key(canvas, key, x * SUPERSAMPLE, y * SUPERSAMPLE, em * SUPERSAMPLE)
            canvas.text((x + (KEY_WIDTH + KEY_GAP) * em) * SUPERSAMPLE, y * SUPERSAMPLE, key.label, LEGEND_SIZE,
                        "black", ha="left")
            x += w + KEY_SPACING * em


def _paint_key(canvas: Canvas, key: LegendKey, left: float, y: float, em: float) -> None:
    """A key's marker or swatch, from ``left`` at height ``y`` (drawn pixels, ``em`` a font size)."""
    if key.marker is not None:
        edge, edge_pt = _device_look(key.marker)
        canvas.markers(np.array([left + KEY_WIDTH * em / 2, y]), key.marker, LEGEND_MARKER, key.colour, edge,
                       edge_pt)
        return
    w, h = KEY_WIDTH * em, KEY_HEIGHT * em
    rect = np.array([[left, y - h / 2], [left + w, y - h / 2], [left + w, y + h / 2], [left, y + h / 2]])
    face = None if key.face is None else _on_white(key.face, key.alpha)
    if key.dashed:
        on, off = (d * canvas.px_per_pt for d in DASH_PATTERN)
        canvas.polylines([np.vstack([rect, rect[:1]])], [key.colour], canvas.width(1.0), dash=(on, off))
        return
    canvas.polygon([rect], face, None, 1)
    if key.hatched:
        canvas.hatch([rect], key.colour, TALL_HATCH_PER_INCH, TALL_HATCH_WIDTH)
    canvas.polygon([rect], None, _on_white(key.colour, key.alpha), canvas.width(1.0))


def _on_white(colour: str, alpha: float) -> tuple[float, float, float]:
    """``colour`` laid at strength ``alpha`` over white."""
    return tuple(1.0 - (1.0 - c) * alpha for c in to_rgb(colour))  # type: ignore[return-value]


def home_caption(home: Home) -> str:
    agent_devices = sum(1 for d in home.devices if d.agent_visible)
    return (f"{len(home.rooms)} spaces · {home.indoor_area:.0f} m² indoor · {len(home.furniture)} furniture · "
            f"{len(home.devices)} devices ({agent_devices} for the agent) · {len(home.cameras)} cameras "
            f"({home.agent_camera_count} agent, {home.evaluation_camera_count} evaluation)")


def _title_size(lines: list[str], width: float, dpi: float) -> float:
    """:data:`TITLE_SIZE`, or less where the longest line would not fit ``width`` pixels."""
    px = TITLE_SIZE * dpi / 72
    widest = max(text_width(line, px) for line in lines)
    return TITLE_SIZE * min(1.0, 0.98 * width / max(widest, 1e-6))


def render_home(home: Home, path: str | Path, *, title: str | None = None,
                dpi: int = DEFAULT_DPI, width_in: float = 12.0) -> Path:
    """Write the preview PNG of ``home`` to ``path`` atomically; return the path.

    The picture is ``width_in`` inches wide at ``dpi``: the title (``title``, or
    the home id and :func:`home_caption`), the plan as large as fits (at most
    :data:`MAX_PLOT_IN` high) and the legend below it."""
    return preview_canvas(home, title=title, dpi=dpi, width_in=width_in).save(path)


def preview_canvas(home: Home, *, title: str | None = None, dpi: int = DEFAULT_DPI,
                   width_in: float = 12.0) -> Canvas:
    """The preview of :func:`render_home`, painted, before it is shrunk and written."""
    plan = plan_of_home(home)
    extent = plan_extent(plan)
    minx, miny, maxx, maxy = extent
    view = (minx - MARGIN, miny - MARGIN - _scale_bar_room(maxx - minx), maxx + MARGIN, maxy + MARGIN)
    width, pt, pad = round(width_in * dpi), dpi / 72, PAD_IN * dpi
    head = (title if title is not None else f"{home.home_id}\n{home_caption(home)}").split("\n")
    title_pt = _title_size(head, width, dpi)
    legend = legend_strip(tuple(legend_keys(home)), width, dpi)
    head_h = len(head) * title_pt * 1.2 * pt
    plot_w = 0.96 * width
    aspect = (view[3] - view[1]) / (view[2] - view[0])
    plot_h = float(np.clip(plot_w * aspect, MIN_PLOT_IN * dpi, MAX_PLOT_IN * dpi))
    legend_top = math.ceil(3 * pad + head_h + plot_h)
    canvas = Canvas((width, legend_top + legend.height // SUPERSAMPLE), dpi)
    canvas.frame(view, (0.02 * width, 2 * pad + head_h, plot_w, plot_h))
    paint_home(canvas, home, plan, extent)
    canvas.clear_outside_view()
    for i, line in enumerate(head):
        canvas.text(width / 2 * SUPERSAMPLE, (pad + (i + 0.5) * title_pt * 1.2 * pt) * SUPERSAMPLE, line, title_pt,
                    "black")
    canvas.image.paste(legend, (0, legend_top * SUPERSAMPLE))
    return canvas


__all__ = ["DEVICE_STYLE", "home_caption", "legend_keys", "legend_strip", "paint_home", "plan_of_home",
           "preview_canvas", "render_home"]
