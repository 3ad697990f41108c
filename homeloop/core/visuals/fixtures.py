"""Visual meshes of the plan's fixtures: toilets, basins, baths, showers, counter runs, built-in
wardrobes, stairs and ramps (see :mod:`homeloop.core.visuals`).

A fixture (:class:`homeloop.core.home.Fixture`) is a footprint the plan draws and a height; the
geometric backend, navigation and collision hold it as the prism of
:func:`homeloop.core.navigation.fixture_solids`. Its visual is the recognizable shape drawn inside
that prism, in world coordinates: x and y as the footprint, z from 0 (the room's floor; the caller
lifts it by the floor's height) up to the fixture's height, so the prism stays the bound.

Each rectangle of the footprint gets a frame of its own like the furniture's item frame (origin at
its centre on the floor, +x out of the front, +y to the left, z up): the front looks away from the
wall the fixture stands against (``back``, :func:`fixture_back`), and for stairs and a ramp +x is
the way up. A footprint that is no rectangle is cut into the rectangles it is made of (an L-shaped
counter run, a run cut by a range); one that is not made of rectangles, and a rectangle too small
for its kind's parts, is drawn as its prism under a top slab. Elevators and washing-machine places
stay one prism part: the elevator is a shaft, and the machine itself is furniture drawn by its
own visual.

Roles name materials as the furniture's do; each kind's palette in
``homeloop/catalog/materials.yaml`` gives them (palette id: the fixture kind), ``body`` and
``top`` included for the prism fallback.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
import shapely
import trimesh
from shapely import affinity
from shapely.geometry import Point, Polygon
from shapely.geometry import box as rect
from shapely.geometry.base import BaseGeometry

from homeloop.core.home import Fixture, Home, polygon_from_rings
from homeloop.core.navigation import fixture_solids
from homeloop.core.visuals.furniture import GAP
from homeloop.core.visuals.part import Parts, VisualPart, registrar
from homeloop.core.visuals.shapes import (
    ROUND_SECTIONS,
    bevelled_box,
    box,
    cylinder,
    disc,
    extruded,
    frustum,
    handle,
    plain_mesh,
    rod,
    rotated_z,
    spans,
)

Vector = tuple[float, float]
FixtureBuilder = Callable[[float, float, float], list[VisualPart]]

#: The builder of each fixture kind's parts in a rectangle's frame, from its half depth (x),
#: half width (y) and height.
FIXTURE_BUILDERS: dict[str, FixtureBuilder] = {}
#: Kinds drawn as their prism, one ``body`` part.
PRISM_KINDS = frozenset({"elevator", "washing_machine_place"})
#: Kinds whose depth (across the wall they stand against) is their footprint's long side when no
#: ``back`` says otherwise; the others stand with a long side to the wall.
DEEP_KINDS = frozenset({"toilet"})
#: Kinds that climb along their footprint's long side (+x the way up).
CLIMBING_KINDS = frozenset({"stairs", "ramp"})
#: Kinds built as one run along a wall, whose pieces keep their depth across their short side.
RUN_KINDS = frozenset({"counter", "built_in_furniture"})
#: A rectangle narrower (m) or lower than this is drawn as its prism under a top slab.
MIN_SIDE = 0.15
#: Two sides of a fixture lie equally near the room's boundary (m) within this.
BACK_TIE = 0.02
#: A rectangle whose envelope exceeds it by more than this area (m²) is no rectangle.
RECT_AREA_TOLERANCE = 1e-9
#: At most this many grid cells when a rectilinear footprint is cut into rectangles.
MAX_CELLS = 400
#: Height (m) of a tap's riser over the rim it stands on, at most.
TAP_RISE = 0.16


_builds = registrar(FIXTURE_BUILDERS)


# --- shapes ----------------------------------------------------------------------------------------


def _oval(cx: float, cy: float, rx: float, ry: float) -> Polygon:
    """An ellipse of :data:`ROUND_SECTIONS` facets (its vertices on the ellipse, so inside it)."""
    circle = Point(cx, cy).buffer(1.0, quad_segs=ROUND_SECTIONS // 4)
    out: Polygon = affinity.scale(circle, rx, ry, origin=(cx, cy))
    return out


def _rounded(x0: float, y0: float, x1: float, y1: float, radius: float) -> Polygon:
    """A rectangle with round corners, inside the rectangle."""
    r = max(0.0, min(radius, (x1 - x0) / 2.01, (y1 - y0) / 2.01))
    if r <= 1e-4:
        return rect(x0, y0, x1, y1)
    out: Polygon = rect(x0 + r, y0 + r, x1 - r, y1 - r).buffer(r, quad_segs=4)
    return out


def _hollow(outer: Polygon, inner: Polygon, z0: float, floor: float, z1: float) -> list[trimesh.Trimesh]:
    """A vessel: walls round ``inner`` up to ``z1`` and its floor up to ``floor`` (a visible recess)."""
    return [extruded(outer.difference(inner), "z", z0, z1), extruded(inner, "z", z0, floor)]


def _tap(x: float, y: float, z0: float, top: float, reach: float, toward: Vector,
         radius: float) -> list[trimesh.Trimesh]:
    """A tap standing at (x, y) from ``z0``: a riser up to ``top`` and a spout of ``reach``
    along ``toward``, both under ``top``."""
    z_spout = top - radius
    end = (x + toward[0] * reach, y + toward[1] * reach, z_spout)
    return [rod((x, y, z0), (x, y, top), radius), rod((x, y, z_spout), end, 0.8 * radius)]


# --- bathroom -------------------------------------------------------------------------------------


@_builds("toilet")
def _toilet(hx: float, hy: float, h: float) -> list[VisualPart]:
    """A pedestal under an oval bowl (a recess in its rim), a seat ring on the rim, a raised lid,
    and a tank with its lid and flush button at the back."""
    depth = 2 * hx
    tank_d = min(0.2, 0.3 * depth)
    tw = min(0.9 * hy, 0.21)
    seat = min(0.42, 0.5 * h)
    tank_top = min(h, seat + 0.42)
    lid_t = min(0.025, 0.1 * (tank_top - seat))
    bx0, bx1 = -hx + tank_d, hx - 0.005
    cx, rx, ry = (bx0 + bx1) / 2, (bx1 - bx0) / 2, min(0.95 * hy, 0.19)
    seat_t = min(0.02, 0.05 * seat)
    rim, low = seat - seat_t, 0.45 * seat
    outer, inner = _oval(cx, 0.0, rx, ry), _oval(cx + 0.1 * rx, 0.0, 0.72 * rx, 0.68 * ry)
    back = -hx + min(0.03, 0.1 * depth)
    front = cx + 0.5 * rx
    v = Parts()
    v.add("pedestal", "ceramic", extruded(_oval((back + front) / 2, 0.0, (front - back) / 2, 0.55 * ry), "z", 0.0, low))
    v.add("bowl", "ceramic", _hollow(outer, inner, low, low + 0.35 * (rim - low), rim))
    seat_ring = _oval(cx, 0.0, 0.98 * rx, 0.98 * ry).difference(_oval(cx + 0.1 * rx, 0.0, 0.78 * rx, 0.74 * ry))
    v.add("seat", "seat", extruded(seat_ring, "z", rim, seat))
    v.add("tank", "ceramic", bevelled_box(-hx, -tw, seat, -hx + tank_d, tw, tank_top - lid_t, 0.01))
    v.add("tank_lid", "ceramic", bevelled_box(-hx, -tw, tank_top - lid_t, -hx + tank_d, tw, tank_top, 0.004))
    v.add("flush", "fitting", disc(-hx + tank_d / 2, 0.0, tank_top - 0.004, min(0.025, 0.3 * tank_d, 0.5 * tw), 0.006))
    lid_r = min(ry, (tank_top - seat) / 2 - 0.005)
    if lid_r >= 0.03:
        lid = _oval(0.0, seat + lid_r, 0.9 * ry, lid_r)
        v.add("lid", "seat", extruded(lid, "x", bx0, bx0 + min(0.02, 0.2 * rx)))
    return v.parts


@_builds("sink")
def _sink(hx: float, hy: float, h: float) -> list[VisualPart]:
    """A basin (its bowl a recess in its top) with a tap on a strip at the back, on a small
    cabinet with doors where the basin is wide, else on a pedestal."""
    depth, width = 2 * hx, 2 * hy
    rim = h - min(TAP_RISE, 0.2 * h)
    b0 = rim - min(0.18, 0.35 * rim)
    m, strip = min(0.05, 0.15 * min(depth, width)), min(0.12, 0.3 * depth)
    hole = _rounded(-hx + strip, -hy + m, hx - m, hy - m, 0.08)
    v = Parts()
    v.add("basin", "ceramic", _hollow(_rounded(-hx, -hy, hx, hy, 0.02), hole, b0, b0 + 0.3 * (rim - b0), rim))
    hx0, _, hx1, _ = hole.bounds
    v.add("drain", "fitting", disc((hx0 + hx1) / 2, 0.0, b0 + 0.3 * (rim - b0), min(0.025, 0.2 * (hx1 - hx0)), 0.004))
    r = min(0.012, (h - rim) / 6, strip / 4)
    v.add("tap", "fitting", _tap(-hx + strip / 2, 0.0, rim, h, min(0.12, 0.5 * (hx1 - hx0)) + strip / 2, (1.0, 0.0), r))
    if width >= 0.55 and b0 > 0.25:
        _cabinet(v, hx, hy, b0, doors=2 if width >= 0.7 else 1)
    else:
        r_p = min(0.09, 0.5 * min(hx, hy))
        v.add("pedestal", "ceramic", frustum(0.0, 0.0, 0.0, b0, 0.85 * r_p, r_p))
    return v.parts


def _cabinet(v: Parts, hx: float, hy: float, top: float, doors: int) -> None:
    """A base cabinet up to ``top``: a carcass on a recessed plinth, doors with bar handles."""
    out = hx - 0.014
    face = out - 0.018
    plinth = min(0.1, 0.15 * top)
    v.add("carcass", "carcass", box(-hx, -hy, plinth, face, hy, top))
    v.add("plinth", "plinth", box(-hx, -hy, 0.0, face - min(0.06, 0.1 * hx), hy, plinth))
    z0, z1 = plinth + GAP, top - GAP
    for k, (y0, y1) in enumerate(spans(-hy + GAP, hy - GAP, doors, 2 * GAP)):
        name = "door" if doors == 1 else f"door_{k + 1}"
        v.add(name, "front", box(face, y0, z0, out, y1, z1))
        y = y1 - 0.04 if k % 2 == 0 else y0 + 0.04
        length = min(0.14, 0.4 * (z1 - z0))
        v.add(f"{name}handle", "handle", handle(out, hx, y, z1 - 0.03 - length / 2, length, "z"))


@_builds("bathtub")
def _bathtub(hx: float, hy: float, h: float) -> list[VisualPart]:
    """A tub (a rim round a visibly lower inside) with a drain and a tap on a deck at one end
    of its long side: the -y end, or the back (-x) where the tub is deeper than wide."""
    if hx > hy:
        return [VisualPart(p.name, rotated_z(p.mesh, -math.pi / 2), p.role) for p in _bathtub(hy, hx, h)]
    rim = h - min(0.1, 0.2 * h)
    m = min(0.06, 0.12 * min(hx, hy) * 2)
    deck = min(0.12, 0.15 * hy)
    inner = _rounded(-hx + m, -hy + m + deck, hx - m, hy - m, 0.15)
    floor = max(0.04 * rim, min(0.12, 0.3 * rim))
    v = Parts()
    v.add("tub", "tub", _hollow(_rounded(-hx, -hy, hx, hy, 0.03), inner, 0.0, floor, rim))
    _, iy0, _, _ = inner.bounds
    v.add("drain", "fitting", disc(0.0, iy0 + min(0.1, 0.2 * hy), floor, min(0.03, 0.3 * hx), 0.004))
    ty = -hy + (m + deck) / 2
    r = min(0.012, (h - rim) / 6, (m + deck) / 4)
    knob_x = min(0.07, 0.6 * hx)
    knobs = [cylinder(s * knob_x, ty, rim, rim + 0.6 * (h - rim), min(0.018, 0.4 * (m + deck) / 2), sections=10)
             for s in (-1, 1)]
    v.add("tap", "fitting", [*_tap(0.0, ty, rim, h, min(0.1, 0.5 * hy), (0.0, 1.0), r), *knobs])
    return v.parts


@_builds("shower")
def _shower(hx: float, hy: float, h: float) -> list[VisualPart]:
    """A tray with a drain, glass on the open sides (both sides, half the front) in a thin frame,
    and a riser with a shower head at the back."""
    tray = min(0.06, 0.1 * h)
    edge = min(0.04, 0.2 * min(hx, hy))
    post = min(0.025, 0.1 * min(hx, hy))
    glass = min(0.008, post / 2)
    v = Parts()
    v.add("tray", "tray", _hollow(rect(-hx, -hy, hx, hy), rect(-hx + edge, -hy + edge, hx - edge, hy - edge), 0.0,
                                  0.5 * tray, tray))
    v.add("drain", "fitting", disc(0.0, 0.0, 0.5 * tray, min(0.04, 0.3 * min(hx, hy)), 0.004))
    top = h - post
    c = post / 2
    panels = [box(-hx, s * (hy - c) - glass / 2, tray, hx - post, s * (hy - c) + glass / 2, top) for s in (-1, 1)]
    panels.append(box(hx - c - glass / 2, -hy + post, tray, hx - c + glass / 2, 0.0, top))
    v.add("glass", "glass", panels)
    posts = [box(hx - post, s * hy - (post if s > 0 else 0.0), tray, hx, s * hy + (0.0 if s > 0 else post), top)
             for s in (-1, 1)]
    posts.append(box(hx - post, 0.0, tray, hx, post, top))
    rails = [box(-hx, s * hy - (post if s > 0 else 0.0), top, hx, s * hy + (0.0 if s > 0 else post), h)
             for s in (-1, 1)]
    rails.append(box(hx - post, -hy + post, top, hx, hy - post, h))
    v.add("frame", "frame", [*posts, *rails])
    x = -hx + min(0.04, 0.3 * hx)
    r = min(0.012, 0.25 * (x + hx), 0.05 * h)
    head_z = h - post - 0.02 - r
    reach = min(0.12, 0.4 * hx)
    head_r = min(0.08, 0.5 * reach + r, 0.4 * hy)
    v.add("shower_head", "fitting", [rod((x, 0.0, tray), (x, 0.0, head_z + r), r),
                                     rod((x, 0.0, head_z), (x + reach, 0.0, head_z), 0.8 * r),
                                     disc(x + reach, 0.0, head_z - r, head_r, 0.015),
                                     box(x - r, -0.04, 0.5 * h - 0.03, x + 2 * r, 0.04, 0.5 * h + 0.03)])
    return v.parts


# --- kitchen and storage --------------------------------------------------------------------------


def _handle_spot(k: int, y0: float, y1: float) -> float:
    """Where a door's vertical handle goes: by the edge it shares with its pair's other door."""
    inset = min(0.04, 0.25 * (y1 - y0))
    return y1 - inset if k % 2 == 0 else y0 + inset


@_builds("counter")
def _counter(hx: float, hy: float, h: float) -> list[VisualPart]:
    """Base cabinets: a worktop slab on a carcass, door fronts with bar handles under a row of
    drawers (where the run is tall enough), over a plinth recessed at the bottom front."""
    top_t = min(0.04, 0.08 * h)
    plinth = min(0.1, 0.12 * h)
    out = hx - 0.014
    face = out - 0.018
    under = h - top_t
    v = Parts()
    v.add("worktop", "worktop", bevelled_box(-hx, -hy, under, hx, hy, h, 0.003))
    v.add("carcass", "carcass", box(-hx, -hy, plinth, face, hy, under))
    v.add("plinth", "plinth", box(-hx, -hy, 0.0, face - min(0.06, 0.1 * hx), hy, plinth))
    doors = spans(-hy + GAP, hy - GAP, max(1, round(2 * hy / 0.6)), 2 * GAP)
    tall = under - plinth
    band = min(0.16, 0.25 * tall) if tall > 0.45 else 0.0
    door_top = under - GAP - (band + GAP if band else 0.0)
    for k, (y0, y1) in enumerate(doors):
        v.add(f"door_{k + 1}", "front", box(face, y0, plinth + GAP, out, y1, door_top))
        length = min(0.14, 0.4 * (door_top - plinth))
        v.add(f"door_{k + 1}handle", "handle",
              handle(out, hx, _handle_spot(k, y0, y1), door_top - 0.03 - length / 2, length, "z"))
        if band:
            z0 = under - GAP - band
            v.add(f"drawer_{k + 1}", "front", box(face, y0, z0, out, y1, under - GAP))
            v.add(f"drawer_{k + 1}handle", "handle",
                  handle(out, hx, (y0 + y1) / 2, z0 + band / 2, min(0.3, 0.6 * (y1 - y0)), "y"))
    return v.parts


@_builds("built_in_furniture")
def _built_in(hx: float, hy: float, h: float) -> list[VisualPart]:
    """A built-in wardrobe: a carcass under a top board on a recessed plinth, and a front of
    doors in pairs with long bar handles where each pair meets."""
    out = hx - 0.014
    face = out - 0.018
    plinth, lid = min(0.08, 0.06 * h), min(0.03, 0.03 * h)
    v = Parts()
    v.add("carcass", "carcass", box(-hx, -hy, plinth, face, hy, h - lid))
    v.add("top", "carcass", box(-hx, -hy, h - lid, hx, hy, h))
    v.add("plinth", "plinth", box(-hx, -hy, 0.0, face - min(0.05, 0.1 * hx), hy, plinth))
    z0, z1 = plinth + GAP, h - lid - GAP
    for k, (y0, y1) in enumerate(spans(-hy + GAP, hy - GAP, max(1, round(2 * hy / 0.5)), 2 * GAP)):
        v.add(f"door_{k + 1}", "front", box(face, y0, z0, out, y1, z1))
        length = min(0.35, 0.3 * (z1 - z0))
        z = min(max(1.05, z0 + length), z1 - length / 2 - 0.02)
        v.add(f"door_{k + 1}handle", "handle", handle(out, hx, _handle_spot(k, y0, y1), z, length, "z"))
    return v.parts


# --- ways up --------------------------------------------------------------------------------------


@_builds("stairs")
def _stairs(hx: float, hy: float, h: float) -> list[VisualPart]:
    """Steps rising along +x: a stepped body with a tread on each step."""
    length = 2 * hx
    count = max(2, min(round(h / 0.18), int(length / 0.2)))
    run, rise = length / count, h / count
    tread = min(0.03, 0.3 * rise)
    profile = [(-hx, 0.0), (hx, 0.0)]
    for i in range(count - 1, -1, -1):
        z = (i + 1) * rise - tread
        profile += [(-hx + (i + 1) * run, z), (-hx + i * run, z)]
    v = Parts()
    v.add("steps", "riser", extruded(Polygon(profile), "y", -hy, hy))
    v.add("treads", "tread", [box(-hx + i * run, -hy, (i + 1) * rise - tread, -hx + (i + 1) * run, hy, (i + 1) * rise)
                              for i in range(count)])
    return v.parts


@_builds("ramp")
def _ramp(hx: float, hy: float, h: float) -> list[VisualPart]:
    """A slope rising along +x between two curbs along its sides."""
    curb = min(0.05, 0.1 * hy)
    lip = min(0.02, 0.1 * h)
    profile = Polygon([(-hx, 0.0), (hx, 0.0), (hx, h), (-hx, lip)])
    v = Parts()
    v.add("slope", "ramp", extruded(profile, "y", -hy + curb, hy - curb))
    v.add("curbs", "curb", [extruded(profile, "y", -hy, -hy + curb), extruded(profile, "y", hy - curb, hy)])
    return v.parts


# --- footprints, frames and placing ---------------------------------------------------------------


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    """The polygons of a shapely geometry with an area."""
    return [g for g in getattr(geom, "geoms", [geom]) if isinstance(g, Polygon) and g.area > 1e-9]


def _rectangles(piece: Polygon) -> list[Polygon] | None:
    """The rectangles ``piece`` is made of (itself where it is one), or None where its edges do not
    all run along two perpendicular directions."""
    envelope = shapely.oriented_envelope(piece)
    if not piece.interiors and envelope.area - piece.area <= RECT_AREA_TOLERANCE:
        return [envelope]
    coords = np.asarray(piece.exterior.coords, dtype=float)
    edges = np.diff(coords, axis=0)
    longest = edges[int(np.argmax(np.hypot(edges[:, 0], edges[:, 1])))]
    angle = math.atan2(float(longest[1]), float(longest[0]))
    flat = affinity.rotate(piece, -angle, origin=(0.0, 0.0), use_radians=True)
    rings = [np.asarray(r.coords, dtype=float) for r in (flat.exterior, *flat.interiors)]
    steps = np.vstack([np.abs(np.diff(r, axis=0)) for r in rings])
    if not np.all(np.min(steps, axis=1) <= 1e-7):
        return None
    points = np.vstack(rings)
    xs, ys = (sorted(set(np.round(points[:, k], 7).tolist())) for k in (0, 1))
    if len(xs) * len(ys) > MAX_CELLS:
        return None
    cells = [[flat.contains(Point((xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2)) for i in range(len(xs) - 1)]
             for j in range(len(ys) - 1)]
    found = [affinity.rotate(r, angle, origin=(0.0, 0.0), use_radians=True) for r in _merged_cells(cells, xs, ys)]
    if abs(sum(r.area for r in found) - piece.area) > 1e-7 * max(piece.area, 1.0):
        return None
    return found


def _merged_cells(cells: list[list[bool]], xs: list[float], ys: list[float]) -> list[Polygon]:
    """Grid cells that are in, merged into rectangles: runs along each row, then runs of the
    same span in the rows above one another."""
    open_runs: dict[tuple[int, int], int] = {}  # (first, last column) -> first row
    out: list[Polygon] = []
    for j, row in enumerate([*cells, [False] * (len(xs) - 1)]):
        runs, i = set(), 0
        while i < len(row):
            if row[i]:
                start = i
                while i < len(row) and row[i]:
                    i += 1
                runs.add((start, i))
            else:
                i += 1
        for span in sorted(set(open_runs) - runs):
            out.append(rect(xs[span[0]], ys[open_runs.pop(span)], xs[span[1]], ys[j]))
        for span in sorted(runs - set(open_runs)):
            open_runs[span] = j
    return out


class _Frame:
    """A rectangle's frame: its centre, the unit vector out of its front (+x), and its half depth
    (along the front) and half width."""

    def __init__(self, centre: Vector, front: Vector, hx: float, hy: float) -> None:
        self.centre, self.front, self.hx, self.hy = centre, front, hx, hy

    def place(self, mesh: trimesh.Trimesh) -> trimesh.Trimesh:
        """``mesh`` moved from this frame to the world (a turn and a shift: windings kept)."""
        fx, fy = self.front
        turn = np.array([[fx, -fy, 0.0], [fy, fx, 0.0], [0.0, 0.0, 1.0]])
        shift = np.array([self.centre[0], self.centre[1], 0.0])
        vertices = np.asarray(mesh.vertices, dtype=float) @ turn.T + shift
        return plain_mesh(vertices, np.asarray(mesh.faces, dtype=np.int64).copy())


def _frame(box_: Polygon, kind: str, back: Vector | None, away: Vector | None) -> _Frame:
    """The frame of a rectangle of a fixture of ``kind``: its back toward ``back`` (the axis most
    along it; for a piece of a run, across its short side, the sign from ``back`` else ``away``,
    the way from the whole footprint's centre), stairs and ramps climbing along the long side."""
    corners = np.asarray(box_.exterior.coords, dtype=float)[:4]
    centre = corners.mean(axis=0)
    u, w = corners[1] - corners[0], corners[2] - corners[1]
    lu, lw = float(np.hypot(*u)), float(np.hypot(*w))
    long_, short = (u / lu, w / lw) if lu >= lw else (w / lw, u / lu)
    if kind in CLIMBING_KINDS:
        axis = long_
        up = _signed(axis, back) if back is not None and abs(float(axis @ back)) > 1e-9 else _signed(axis, None)
        return _frame_of(centre, up, corners)
    if back is not None and away is None:
        b = max((d for a in (u / lu, w / lw) for d in (a, -a)), key=lambda d: float(d @ np.asarray(back)))
        return _frame_of(centre, -b, corners)
    axis = long_ if kind in DEEP_KINDS else short
    hint = back if back is not None and abs(float(axis @ np.asarray(back))) > 0.3 else away
    return _frame_of(centre, -_signed(axis, hint), corners)


def _signed(axis: np.ndarray, toward: Vector | None) -> np.ndarray:
    """``axis`` or its opposite: the one along ``toward``, else a fixed one of the two."""
    if toward is not None and abs(float(axis @ np.asarray(toward))) > 1e-9:
        return axis if float(axis @ np.asarray(toward)) > 0 else -axis
    return axis if (round(float(axis[0]), 9), round(float(axis[1]), 9)) > (0.0, 0.0) else -axis


def _frame_of(centre: np.ndarray, front: np.ndarray, corners: np.ndarray) -> _Frame:
    """The frame at ``centre`` facing ``front``, its half sizes measured from the corners."""
    left = np.array([-front[1], front[0]])
    rel = corners - centre
    hx, hy = float(np.abs(rel @ front).max()), float(np.abs(rel @ left).max())
    shrink = 1e-7  # float noise of the turn stays inside the rectangle
    return _Frame((float(centre[0]), float(centre[1])), (float(front[0]), float(front[1])), hx - shrink, hy - shrink)


def _prism(piece: Polygon, height: float, kind: str) -> list[VisualPart]:
    """The piece's prism: one ``body`` part for the prism kinds, else a body under a ``top`` slab."""
    if kind in PRISM_KINDS or kind not in FIXTURE_BUILDERS:
        return [VisualPart("body", extruded(piece, "z", 0.0, height), "body")]
    slab = min(0.04, 0.3 * height)
    return [VisualPart("body", extruded(piece, "z", 0.0, height - slab), "body"),
            VisualPart("top", extruded(piece, "z", height - slab, height), "top")]


@functools.lru_cache(maxsize=1024)
def _local(kind: str, hx: float, hy: float, height: float) -> tuple[VisualPart, ...]:
    """A kind's parts in its rectangle's frame, made once per size: homes share their fixtures'
    sizes, and :meth:`_Frame.place` copies what it places, so the kept parts stay as made."""
    return tuple(FIXTURE_BUILDERS[kind](hx, hy, height))


def fixture_visual(kind: str, footprint: BaseGeometry, height: float, back: Vector | None) -> list[VisualPart]:
    """The visual of a fixture of ``kind`` filling ``footprint`` (the fixture_solids footprint) up to
    ``height``, its back toward ``back`` (a unit vector, :func:`fixture_back`; None: the kind's
    usual way), in world x, y and z from the room's floor: closed parts inside the prism."""
    pieces = _polygons(footprint)
    if not pieces or height <= 0:
        return []
    whole = shapely.union_all(pieces).centroid
    made: list[list[VisualPart]] = []
    for piece in pieces:
        boxes = _rectangles(piece) if kind in FIXTURE_BUILDERS else None
        if boxes is None:
            made.append(_prism(piece, height, kind))
            continue
        for b in boxes:
            c = b.centroid
            away = (c.x - whole.x, c.y - whole.y) if len(boxes) > 1 or len(pieces) > 1 else None
            if kind not in RUN_KINDS:
                away = None
            frame = _frame(b, kind, back, away)
            if min(frame.hx, frame.hy) * 2 < MIN_SIDE or height < MIN_SIDE:
                made.append(_prism(b, height, kind))
                continue
            made.append([VisualPart(p.name, frame.place(p.mesh), p.role)
                         for p in _local(kind, frame.hx, frame.hy, height)])
    if len(made) == 1:
        return made[0]
    return [VisualPart(f"piece{k + 1}_{p.name}", p.mesh, p.role) for k, parts in enumerate(made) for p in parts]


def fixture_back(fixture_polygon: BaseGeometry, room_polygon: BaseGeometry, kind: str | None = None) -> Vector:
    """The unit vector from a fixture's centre toward the wall it stands against: across the side
    of its minimum rotated rectangle lying nearest the room's boundary (the mean distance along
    the side). Between sides about as near (a fixture in a corner), a long side, or for a toilet
    (:data:`DEEP_KINDS`) a short one, then a fixed choice."""
    corners = np.asarray(shapely.oriented_envelope(fixture_polygon).exterior.coords, dtype=float)[:5]
    centre = corners[:4].mean(axis=0)
    boundary = room_polygon.boundary
    along = np.linspace(0.0, 1.0, 9)[None, :, None]
    samples = corners[:4, None, :] + along * (corners[1:5] - corners[:4])[:, None, :]
    means = shapely.distance(boundary, shapely.points(samples.reshape(-1, 2))).reshape(4, -1).mean(axis=1)
    sides = []
    for a, b, mean in zip(corners[:4], corners[1:5], means.tolist()):
        normal = (a + b) / 2 - centre
        length = float(np.hypot(*(b - a)))
        sides.append((mean, length, normal / float(np.hypot(*normal))))
    nearest = min(s[0] for s in sides)
    tied = [s for s in sides if s[0] <= nearest + BACK_TIE]
    sign = 1.0 if kind in DEEP_KINDS else -1.0
    best = min(tied, key=lambda s: (round(sign * s[1], 6), -round(float(s[2][0]), 6), -round(float(s[2][1]), 6)))
    return float(best[2][0]), float(best[2][1])


def visual_footprints(home: Home) -> list[tuple[Fixture, BaseGeometry]]:
    """Each fixture with the footprint its visual fills: the fixture_solids footprint, less, for a
    counter run or a built-in, the other fixtures standing in it (a sink in the run), which draw
    themselves there. Every footprint stays inside its fixture's solid."""
    solids = fixture_solids(home)
    out = []
    for x, footprint in solids:
        if x.kind in RUN_KINDS:
            inside = [polygon_from_rings(o.polygon) for o, _ in solids if o is not x and o.kind not in RUN_KINDS]
            cut = [p for p in inside if p.intersects(footprint)]
            if cut:
                footprint = footprint.difference(shapely.union_all(cut))
        out.append((x, footprint))
    return out


def fixture_visuals(home: Home) -> list[tuple[Fixture, list[VisualPart]]]:
    """Every fixture's visual (:func:`fixture_visual`), its back toward its room's nearest wall,
    z from its room's floor."""
    rooms = {r.id: polygon_from_rings(r.polygon) for r in home.rooms}
    out = []
    for x, footprint in visual_footprints(home):
        room = rooms.get(x.room)
        back = fixture_back(polygon_from_rings(x.polygon), room, x.kind) if room is not None else None
        out.append((x, fixture_visual(x.kind, footprint, x.height, back)))
    return out


__all__ = ["FIXTURE_BUILDERS", "PRISM_KINDS", "fixture_back", "fixture_visual", "fixture_visuals",
           "visual_footprints"]
