"""Quick raster drawing of plans with Pillow, for the home previews.

A :class:`Canvas` maps plan metres to the pixels of a picture drawn at
:data:`SUPERSAMPLE` times its final size and shrunk at the end, which smooths
edges as an anti-aliased renderer would. It paints the layers and labels of
:mod:`homeloop.pipeline.previews.plan` with the same colours and widths (points),
matplotlib's marker shapes and dash pattern, and the DejaVu Sans font
matplotlib ships, so a preview drawn here reads like the plan pictures drawn
there, at a fraction of matplotlib's cost (``benchmarks/furnish.py`` times the preview).
"""

from __future__ import annotations

import functools
import struct
import zlib
from pathlib import Path
from typing import Callable, Sequence

import matplotlib
import numpy as np
import shapely
from matplotlib.colors import to_rgba
from matplotlib.markers import MarkerStyle
from PIL import Image, ImageChops, ImageDraw, ImageFont
from shapely.geometry.base import BaseGeometry

from homeloop.core.io import write_bytes
from homeloop.pipeline.previews.plan import Label, Shapes, Strokes

#: The picture is drawn this many times larger than the file, then shrunk.
SUPERSAMPLE = 2
#: The font of every text: the one matplotlib draws its text with.
FONT_FILE = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
#: matplotlib's dashed line ("--"): dash and gap, in line widths.
DASH_PATTERN: tuple[float, float] = tuple(matplotlib.rcParams["lines.dashed_pattern"])  # type: ignore[assignment]
#: Line spacing of a text whose label names none (matplotlib's default).
LINE_SPACING = 1.2
#: Top of a capital below the line's top, in font sizes (DejaVu Sans): Pillow
#: spaces lines by it, matplotlib by the font size.
_CAP_TOP = 0.93
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

Rings = list[np.ndarray]
Box = tuple[int, int, int, int]


@functools.cache
def rgb(colour: object) -> tuple[int, int, int]:
    """0-255 red, green, blue of a matplotlib colour."""
    r, g, b, _ = to_rgba(colour)  # type: ignore[arg-type]
    return round(r * 255), round(g * 255), round(b * 255)


@functools.cache
def rgba(colour: object, alpha: float = 1.0) -> tuple[int, int, int, int]:
    """0-255 red, green, blue and strength of a matplotlib colour laid at ``alpha``."""
    return (*rgb(colour), round(255 * alpha * to_rgba(colour)[3]))  # type: ignore[arg-type]


@functools.cache
def font(quarter_pixels: int) -> ImageFont.FreeTypeFont:
    """DejaVu Sans at ``quarter_pixels / 4`` pixels (basic layout: the same glyphs everywhere)."""
    return ImageFont.truetype(str(FONT_FILE), quarter_pixels / 4, layout_engine=ImageFont.Layout.BASIC)


def text_width(text: str, size_px: float) -> float:
    """Width (pixels) of one line of ``text`` at ``size_px`` pixels."""
    return font(max(1, round(size_px * 4))).getlength(text)


#: Texts up to this many characters (labels, legend keys) are kept once drawn: they come
#: back picture after picture, while titles are each their own.
KEPT_TEXT_CHARS = 32


def text_mask(text: str, quarter_pixels: int, spacing_percent: int, ha: str,
              turned: bool) -> tuple[Image.Image, tuple[int, int]]:
    """``text`` at ``quarter_pixels / 4`` pixels as a mask, and where its top left
    corner lies from the point it is anchored at: the middle of its left end,
    middle or right end (``ha``); turned 90° about that point when ``turned``."""
    face = font(quarter_pixels)
    spacing = max(0.0, (spacing_percent / 100 - _CAP_TOP) * quarter_pixels / 4)
    anchor = {"center": "m", "left": "l", "right": "r"}[ha] + "m"
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    left, top, right, bottom = (round(v) for v in probe.multiline_textbbox((0, 0), text, font=face, anchor=anchor,
                                                                           spacing=spacing, align="center"))
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)))
    ImageDraw.Draw(mask).multiline_text((-left, -top), text, fill=255, font=face, anchor=anchor, spacing=spacing,
                                        align="center")
    if not turned:
        return mask, (left, top)
    return mask.transpose(Image.Transpose.ROTATE_90), (top, -right)  # (dx, dy) -> (dy, -dx)


_kept_text_mask = functools.lru_cache(maxsize=4096)(text_mask)


@functools.cache
def marker_shape(marker: str) -> tuple[bool, tuple[np.ndarray, ...]]:
    """matplotlib's outline of ``marker`` at size 1 (y up): whether it is filled, and
    its polygons (filled) or polylines (line markers such as ``_`` and ``1``)."""
    style = MarkerStyle(marker)
    path = style.get_path().transformed(style.get_transform())
    filled = style.is_filled()
    return filled, tuple(np.asarray(p, dtype=float) for p in path.to_polygons(closed_only=filled))


def dashes(line: np.ndarray, on: float, off: float) -> np.ndarray:
    """The dashes of a polyline (pixels) for a pattern of ``on`` and ``off`` pixels
    from its start, as rows (x0, y0, x1, y1) of straight pieces: dashes are short
    next to the bends of the lines drawn."""
    steps = np.hypot(*np.diff(line, axis=0).T)
    along = np.concatenate([[0.0], np.cumsum(steps)])
    starts = np.arange(0.0, along[-1], on + off)
    ends = np.minimum(starts + on, along[-1])
    return np.column_stack([np.interp(starts, along, line[:, 0]), np.interp(starts, along, line[:, 1]),
                            np.interp(ends, along, line[:, 0]), np.interp(ends, along, line[:, 1])])


def png_bytes(image: Image.Image, dpi: float) -> bytes:
    """A PNG file of an RGB picture, rows unfiltered and deflated at the fastest level.

    Pillow's encoder tries every row filter on every row of an RGB picture; a
    drawing of flat colours compresses as small without, and much faster.
    """
    width, height = image.size
    pixels = (image if image.mode == "RGB" else image.convert("RGB")).tobytes()
    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)  # each row: filter 0, then its pixels
    rows[:, 0] = 0
    rows[:, 1:] = np.frombuffer(pixels, dtype=np.uint8).reshape(height, -1)
    per_metre = round(dpi / 0.0254)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return b"".join([
        PNG_MAGIC,
        chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
        chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
        chunk(b"IDAT", zlib.compress(rows, 1)),
        chunk(b"IEND", b""),
    ])


def _flat(points: np.ndarray, offset: tuple[int, int] | None = None) -> list[float]:
    return (points if offset is None else points - offset).ravel().tolist()


def fill_rings(draw: ImageDraw.ImageDraw, rings: Rings, value: int, offset: tuple[int, int] | None = None) -> None:
    """Fill a polygon given by its pixel rings (outer first) with ``value`` on a
    mask, its holes left at 0; ``offset`` is where the mask lies in the picture."""
    draw.polygon(_flat(rings[0], offset), fill=value)
    for hole in rings[1:]:
        draw.polygon(_flat(hole, offset), fill=0)


def _box(points: np.ndarray, pad: float, size: tuple[int, int]) -> Box | None:
    """The pixel box around ``points`` grown by ``pad``, cut to the picture; None when empty."""
    lo = np.floor(points.min(axis=0) - pad).astype(int)
    hi = np.ceil(points.max(axis=0) + pad).astype(int) + 1
    x0, y0 = max(int(lo[0]), 0), max(int(lo[1]), 0)
    x1, y1 = min(int(hi[0]), size[0]), min(int(hi[1]), size[1])
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


class Canvas:
    """A white picture of ``size`` pixels at ``dpi``, drawn in plan metres once
    :meth:`frame` has placed the plan, or in pixels of the drawn picture
    (:data:`SUPERSAMPLE` times the final ones)."""

    def __init__(self, size: tuple[int, int], dpi: float):
        self.size = size
        self.dpi = dpi
        self.image = Image.new("RGB", (size[0] * SUPERSAMPLE, size[1] * SUPERSAMPLE), "white")
        self.draw = ImageDraw.Draw(self.image)
        self.tint = ImageDraw.Draw(self.image, "RGBA")  # blends see-through colours into the picture
        self.px_per_pt = dpi / 72.0 * SUPERSAMPLE
        self.k, self.origin = 1.0, (0.0, 0.0)
        self.view = (0, 0, *self.image.size)

    # -- placing the plan

    def frame(self, extent: tuple[float, float, float, float], box: tuple[float, float, float, float]) -> None:
        """Show plan ``extent`` (minx, miny, maxx, maxy, metres) as large as fits in
        ``box`` (left, top, width, height, final pixels), centred, x right and y up."""
        minx, miny, maxx, maxy = extent
        left, top, width, height = (v * SUPERSAMPLE for v in box)
        self.k = min(width / max(maxx - minx, 1e-6), height / max(maxy - miny, 1e-6))
        x0 = left + (width - (maxx - minx) * self.k) / 2
        y0 = top + (height - (maxy - miny) * self.k) / 2
        self.origin = (x0 - minx * self.k, y0 + maxy * self.k)
        self.view = (round(x0), round(y0), round(x0 + (maxx - minx) * self.k), round(y0 + (maxy - miny) * self.k))

    def clear_outside_view(self) -> None:
        """White out what was drawn beyond the framed plan, as a plot's axes clip it."""
        x0, y0, x1, y1 = self.view
        w, h = self.image.size
        for box in ((0, 0, w, y0), (0, y1, w, h), (0, y0, x0, y1), (x1, y0, w, y1)):
            if box[2] > box[0] and box[3] > box[1]:
                self.image.paste((255, 255, 255), box)

    @property
    def ppm(self) -> float:
        """Points per plan metre."""
        return self.k / self.px_per_pt

    def xy(self, points) -> np.ndarray:
        """Plan points (m) as drawn pixels."""
        return np.asarray(points, dtype=float).reshape(-1, 2) * (self.k, -self.k) + self.origin

    def rings(self, geoms: Sequence[BaseGeometry]) -> list[list[Rings]]:
        """Per shape of ``geoms``: its polygons, each as its rings (outer first) in drawn pixels."""
        parts, owner = shapely.get_parts(np.asarray(geoms, dtype=object), return_index=True)
        keep = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
        parts, owner = parts[keep], owner[keep]
        rings, ring_part = shapely.get_rings(parts, return_index=True)
        coords, coord_ring = shapely.get_coordinates(rings, return_index=True)
        cuts = [0, *(np.flatnonzero(np.diff(coord_ring)) + 1).tolist(), len(coords)]
        drawn = self.xy(coords)
        pixels = [drawn[a:b] for a, b in zip(cuts[:-1], cuts[1:])] if len(coords) else []
        out: list[list[Rings]] = [[] for _ in geoms]
        part_rings: list[Rings] = [[] for _ in parts]
        for ring, part in zip(pixels, ring_part):
            part_rings[part].append(ring)
        for part, g in zip(part_rings, owner):
            out[g].append(part)
        return out

    def lines(self, geoms: Sequence[BaseGeometry]) -> list[list[np.ndarray]]:
        """Per shape of ``geoms``: its lines (of a line, multi-line or collection) in drawn pixels."""
        parts, owner = shapely.get_parts(np.asarray(geoms, dtype=object), return_index=True)
        parts, again = shapely.get_parts(parts, return_index=True)  # multi-lines inside collections
        owner = owner[again]
        keep = np.isin(shapely.get_type_id(parts), (1, 2)) & ~shapely.is_empty(parts)
        coords, index = shapely.get_coordinates(parts[keep], return_index=True)
        cuts = [0, *(np.flatnonzero(np.diff(index)) + 1).tolist(), len(coords)]
        drawn = self.xy(coords)
        out: list[list[np.ndarray]] = [[] for _ in geoms]
        for g, (a, b) in zip(owner[keep], zip(cuts[:-1], cuts[1:])):
            out[g].append(drawn[a:b])
        return out

    def width(self, points: float) -> int:
        """A line width in points as whole drawn pixels (at least one)."""
        return max(1, round(points * self.px_per_pt))

    # -- layers of the plan

    def shapes(self, layer: Shapes) -> None:
        """Paint a :class:`~homeloop.pipeline.previews.plan.Shapes` layer."""
        n = len(layer.geoms)
        faces = layer.face if isinstance(layer.face, list) else [layer.face] * n
        edges = layer.edge if isinstance(layer.edge, list) else [layer.edge] * n
        width = self.width(layer.width)
        for polygons, face, edge in zip(self.rings(layer.geoms), faces, edges):
            for rings in polygons:
                self.polygon(rings, face, edge, width)

    def polygon(self, rings: Rings, face: object, edge: object, width: int) -> None:
        """One polygon (pixel rings, outer first): ``face`` None for no fill, ``edge``
        None for no outline; a see-through fill or one with holes goes through a mask."""
        if len(rings[0]) < 3:
            return
        if face is not None and face != "none":
            if len(rings) > 1:
                value = rgba(face)[3]
                self.blend(face, rings[0], lambda d, box: fill_rings(d, rings, value, box[:2]))
            elif rgba(face)[3] < 255:
                self.tint.polygon(_flat(rings[0]), fill=rgba(face))
            elif edge is not None and width == 1:
                self.draw.polygon(_flat(rings[0]), fill=rgb(face), outline=rgb(edge))
                edge = None
            else:
                self.draw.polygon(_flat(rings[0]), fill=rgb(face))
        if edge is not None and edge != "none":
            for ring in rings:
                self.draw.line(_flat(np.vstack([ring, ring[:1]])), fill=rgb(edge), width=width)

    def strokes(self, layer: Strokes) -> None:
        """Paint a :class:`~homeloop.pipeline.previews.plan.Strokes` layer."""
        n = len(layer.lines)
        colours = layer.colours if isinstance(layer.colours, list) else [layer.colours] * n
        self.polylines([self.xy(line) for line in layer.lines], colours, self.width(layer.width), layer.alpha)

    def polylines(self, lines: Sequence[np.ndarray], colours: Sequence[object], width: int,
                  alpha: float = 1.0, dash: tuple[float, float] | None = None) -> None:
        """Pixel polylines, each in its colour; ``dash`` (on, off pixels) cuts them in dashes."""
        draw = self.draw if alpha >= 1.0 else self.tint
        for line, colour in zip(lines, colours):
            ink = rgb(colour) if alpha >= 1.0 else rgba(colour, alpha)
            for piece in dashes(line, *dash).tolist() if dash else [_flat(line)]:
                draw.line(piece, fill=ink, width=width)

    def blend(self, colour: object, around: np.ndarray, paint: Callable, *, pad: float = 1.0,
              clip: list[Rings] | None = None) -> None:
        """Lay ``colour`` through a mask that ``paint(draw, box)`` paints (0 to 255)
        over ``box``, the pixels (x0, y0, x1, y1) around pixel points ``around``;
        ``clip`` (polygons as pixel rings) keeps only what lies inside them."""
        box = _box(around, pad, self.image.size)
        if box is None:
            return
        mask = Image.new("L", (box[2] - box[0], box[3] - box[1]))
        paint(ImageDraw.Draw(mask), box)
        if clip is not None:
            keep = Image.new("L", mask.size)
            for rings in clip:
                fill_rings(ImageDraw.Draw(keep), rings, 255, box[:2])
            mask = ImageChops.multiply(mask, keep)
        self.image.paste(rgb(colour), box, mask)

    def hatch(self, rings: Rings, colour: object, per_inch: float, width_pt: float) -> None:
        """Diagonal lines (``/``), ``per_inch`` of them along a row, across a polygon
        (pixel rings), lined up over the whole picture as matplotlib's hatches are."""
        step = self.dpi * SUPERSAMPLE / per_inch
        width = self.width(width_pt)

        def paint(draw: ImageDraw.ImageDraw, box: Box) -> None:
            x0, y0, x1, y1 = box
            for c in np.arange(np.floor((x0 + y0) / step) * step, x1 + y1 + step, step):
                s = c - x0 - y0  # the line x + y = c in the mask's own pixels
                draw.line([(s, 0), (s - (y1 - y0), y1 - y0)], fill=255, width=width)

        self.blend(colour, rings[0], paint, clip=[rings])

    # -- marks and text

    def markers(self, points: np.ndarray, marker: str, size_pt: float, face: object,
                edge: object = None, edge_pt: float = 0.0) -> None:
        """matplotlib ``marker`` of ``size_pt`` points at each pixel point: filled in
        ``face`` with an ``edge`` outline, or, for line markers, drawn in ``face``."""
        filled, shapes = marker_shape(marker)
        scale = size_pt * self.px_per_pt
        width = self.width(edge_pt)
        centres = np.asarray(points, dtype=float).reshape(-1, 1, 2)
        for shape in shapes:
            for pts in centres + shape * (scale, -scale):
                if filled:
                    self.polygon([pts], face, edge, width)
                else:
                    self.draw.line(_flat(pts), fill=rgb(face), width=width)

    def label(self, label: Label) -> None:
        """Paint a :class:`~homeloop.pipeline.previews.plan.Label` at its plan point."""
        x, y = self.origin[0] + label.x * self.k, self.origin[1] - label.y * self.k
        self.text(x, y, label.text, label.size, label.colour, rotation=label.rotation, ha=label.ha,
                  linespacing=label.linespacing or LINE_SPACING)

    def text(self, x: float, y: float, text: str, size_pt: float, colour: object, *, rotation: int = 0,
             ha: str = "center", linespacing: float = LINE_SPACING) -> None:
        """``text`` (lines centred on each other) of ``size_pt`` points at pixel point
        (x, y): its middle there, or its left (``ha="left"``) or right end; turned 90°
        (reading upwards) when ``rotation`` is 90."""
        quarters = max(1, round(size_pt * self.px_per_pt * 4))
        draw_mask = _kept_text_mask if len(text) <= KEPT_TEXT_CHARS else text_mask
        mask, (dx, dy) = draw_mask(text, quarters, round(linespacing * 100), ha, rotation == 90)
        self.draw.bitmap((round(x) + dx, round(y) + dy), mask, fill=rgb(colour))

    # -- the file

    def save(self, path: str | Path) -> Path:
        """Shrink the picture to its final size and write it as a PNG, atomically."""
        return write_bytes(path, png_bytes(self.image.reduce(SUPERSAMPLE), self.dpi))


__all__ = ["Canvas", "DASH_PATTERN", "SUPERSAMPLE", "dashes", "marker_shape", "png_bytes",
           "text_width"]
