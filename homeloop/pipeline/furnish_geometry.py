"""Furnishing's per-room geometry: what :mod:`homeloop.pipeline.furnish` measures once
per home and once per room before placing anything (docs/pipeline.md, furnish).

A room's wall faces (the stretches of its boundary along a wall, not at a door), the band
along them where an item's back counts as against a wall, its features and kitchen counter
runs, the clear zones of its doors and windows, the doors' approach points and its free
floor for the widest robot body. Measured in array passes; nothing here draws from the
furnishing generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely import Point, Polygon
from shapely.geometry.base import BaseGeometry
from shapely.ops import polylabel

from homeloop.core import navigation
from homeloop.core.geometry import (
    DOOR_CLEAR_DEPTH,
    WINDOW_CLEAR_DEPTH,
    face_zones,
    opening_axes,
    rectangle_frames,
)
from homeloop.core.home import Home, Room, polygon_from_rings
from homeloop.core.home import Opening as HomeOpening

#: An item is against a wall when its back is within this distance (m) of a wall face.
FLUSH_TOLERANCE = 0.02
#: An item overlapping a door's or window's clear zone by more than this (m²) stands in it.
ZONE_OVERLAP_AREA = 1e-5
#: A footprint corner this deep (m) inside a clear zone makes an overlap of more than
#: :data:`ZONE_OVERLAP_AREA` for sure (the footprint's quarter disc around that corner,
#: pi r² / 4, is over twice that area), so it needs no measuring.
ZONE_SURE_DEPTH = 1.6 * math.sqrt(4 * ZONE_OVERLAP_AREA / math.pi)
#: Wall faces shorter than this (m) take no furniture.
MIN_FACE_LENGTH = 0.2
#: Sampling step (m) when finding which parts of the room boundary are wall faces.
FACE_SAMPLE_STEP = 0.05
#: A boundary point within this distance (m) of a wall polygon is a wall face.
WALL_CONTACT = 0.06
#: ... unless it is within this distance (m) of a door or other passage.
PASSAGE_CONTACT = 0.03


def valid_polygon(geom: BaseGeometry) -> Polygon | None:
    """The geometry as one valid polygon (the largest part), or None."""
    if geom is None or geom.is_empty:
        return None
    if not geom.is_valid:
        geom = shapely.make_valid(geom)
    elif geom.geom_type == "Polygon":  # the usual case: the polygon itself, if not a sliver
        return geom if geom.area > 1e-6 else None
    parts = [g for g in shapely.get_parts(geom) if g.geom_type == "Polygon" and g.area > 1e-6]
    if not parts:
        return None
    return max(parts, key=lambda g: g.area)


@dataclass
class WallFaces:
    """A room's straight stretches of wall face, one row each: from ``a`` along ``t`` between
    ``s0`` and ``s1``, inward normal ``n``, ``heading`` the direction of ``n`` (rad)."""

    a: np.ndarray
    t: np.ndarray
    n: np.ndarray
    s0: np.ndarray
    s1: np.ndarray
    heading: np.ndarray

    def __len__(self) -> int:
        return len(self.s0)

    @staticmethod
    def of_edges(a: np.ndarray, t: np.ndarray, n: np.ndarray, s0: np.ndarray, s1: np.ndarray) -> "WallFaces":
        heading = np.array([math.atan2(y, x) for x, y in n.tolist()])
        return WallFaces(a, t, n, s0, s1, heading)


@dataclass
class CounterRun:
    """A KITCHEN counter run: centre, axis along the run, normal out of its front."""

    feature_id: str
    polygon: Polygon
    centre: np.ndarray
    u: np.ndarray
    front: np.ndarray
    length: float
    depth: float


class HomeGeometry:
    """Home-wide lookups shared by the rooms."""

    def __init__(self, home: Home) -> None:
        walls = [polygon_from_rings(w.polygon) for w in home.walls]
        self.wall_tree = shapely.STRtree(walls) if walls else None
        self.passages = [o for o in home.openings if o.kind in navigation.PASSABLE_KINDS]
        self.passage_polys = [polygon_from_rings(o.polygon) for o in self.passages]
        self.passage_tree = shapely.STRtree(self.passage_polys) if self.passages else None
        self.passage_bounds = shapely.bounds(np.asarray(self.passage_polys, dtype=object)).reshape(-1, 4)
        centres, _, normals, widths, _ = rectangle_frames(self.passage_polys)
        self._passage_frames = (centres, normals)
        self.passage_zones = door_zones_by_side(self.passages, self.passage_polys, widths)
        self.windows = [o for o in home.openings if o.kind == "window"]
        self.window_polys = np.asarray([polygon_from_rings(o.polygon) for o in self.windows], dtype=object)
        #: Where tall furniture keeps out in front of each window, shared by the rooms it faces.
        self.window_zones = shapely.buffer(self.window_polys, WINDOW_CLEAR_DEPTH, join_style="mitre")


    def by_passage(self, xy: np.ndarray, distance: float) -> np.ndarray:
        """Which points (rows of ``xy``) lie within ``distance`` of a passage's bounding box (and a
        hair more, for rounding): the only points that can lie within ``distance`` of a passage."""
        x, y, b, distance = xy[:, :1], xy[:, 1:], self.passage_bounds[None, :, :], distance + 1e-9
        return ((x >= b[..., 0] - distance) & (x <= b[..., 2] + distance)
                & (y >= b[..., 1] - distance) & (y <= b[..., 3] + distance)).any(axis=1)

    def passage_side(self, i: int, point: Point) -> float:
        """+1 or -1: the side of passage ``i``'s normal (see :func:`homeloop.core.geometry.opening_axes`)
        on which ``point`` lies."""
        centres, normals = self._passage_frames
        return 1.0 if (point.x - centres[i, 0]) * normals[i, 0] + (point.y - centres[i, 1]) * normals[i, 1] >= 0 else -1.0


class RoomGeometry:
    """A room's polygon, wall faces, fixtures, door and window zones, base free floor.

    ``features`` holds the room's fixtures as (id, plan feature subtype, polygon):
    the catalog's furnishing rules name fixtures by their subtype (``at_feature:SINK``).
    """

    def __init__(self, home: Home, geo: HomeGeometry, room: Room, radius: float) -> None:
        self.id = room.id
        self.subtype = room.type
        self.poly = polygon_from_rings(room.polygon)
        self.area = float(self.poly.area)
        self.ok = shapely.buffer(self.poly, 0.002, join_style="mitre")
        shapely.prepare(self.ok)
        # In a convex room a rectangle whose corners are inside is inside.
        self.convex = not self.poly.interiors and self.poly.area >= self.poly.convex_hull.area * (1 - 1e-6)
        self.radius = radius
        self.features = [(f.id, f.feature_subtype, polygon_from_rings(f.polygon)) for f in home.fixtures_in(room.id)]
        self.counters = [self._counter(fid, p) for fid, k, p in self.features if k == "KITCHEN"]
        self.faces = self._faces(geo)
        self.face_band = face_band(self.faces)
        #: The features' extents on the wall faces (:meth:`extents_on_faces`): wall items may stand flush beside them.
        self.feature_extents = self.extents_on_faces([np.asarray(p.exterior.coords) for _, _, p in self.features])
        self.door_zones: list[Polygon] = []
        self.door_points: list[Point] = []
        for i, (o, op) in enumerate(zip(geo.passages, geo.passage_polys)):
            if room.id not in o.connects:
                continue
            point = navigation.approach_point(op, self.poly, 2 * radius)
            self.door_points.append(point)
            # The approach point lies before the door's face on this room's side: that face's zone.
            self.door_zones.append(geo.passage_zones[(i, geo.passage_side(i, point))])
        near = shapely.distance(geo.window_polys, self.poly) < 0.05 if geo.windows else []
        self.window_zones = [z for o, z, close in zip(geo.windows, geo.window_zones, near)
                             if room.id in o.connects or close]
        self._open_floor: BaseGeometry | None = None
        self._base: BaseGeometry | None = None
        self._keep_out: dict[bool, KeepOut] = {}
        self._door_pieces: list[int | None] | None = None
        self._pole: Point | None = None

    # -- walls

    def _faces(self, geo: HomeGeometry) -> WallFaces:
        """The runs of the boundary's edges that lie along a wall (not at a door), sampled
        every :data:`FACE_SAMPLE_STEP` just inside the room; all edges tested in one query."""
        a, t, n, length = boundary_edges(self.poly)
        if geo.wall_tree is None or not len(a):
            none = np.zeros((0, 2))
            return WallFaces.of_edges(none, none, none, np.zeros(0), np.zeros(0))
        steps = np.maximum(np.ceil(length / FACE_SAMPLE_STEP).astype(int), 1)
        edge = np.repeat(np.arange(len(a)), steps + 1)
        first = np.concatenate([[0], np.cumsum(steps + 1)[:-1]])
        k = np.arange(len(edge)) - first[edge]
        # np.linspace(0, length, steps + 1), edge by edge: k * step, the last sample exactly at the end.
        s = k * (length / steps)[edge]
        last = k == steps[edge]
        s[last] = length[edge[last]]
        xy = a[edge] + s[:, None] * t[edge] + n[edge] * 0.001
        pts = shapely.points(xy)
        on = np.zeros(len(pts), bool)
        on[geo.wall_tree.query(pts, predicate="dwithin", distance=WALL_CONTACT)[0]] = True
        if geo.passage_tree is not None:
            near = np.flatnonzero(on & geo.by_passage(xy, PASSAGE_CONTACT))
            on[near[geo.passage_tree.query(pts[near], predicate="dwithin", distance=PASSAGE_CONTACT)[0]]] = False
        # Runs of consecutive wall samples of one edge become faces.
        starts = np.flatnonzero(on & ~np.concatenate([[False], on[:-1]]) | on & (k == 0))
        ends = np.flatnonzero(on & ~np.concatenate([on[1:], [False]]) | on & last)
        long_enough = s[ends] - s[starts] >= MIN_FACE_LENGTH
        owner, starts, ends = edge[starts][long_enough], starts[long_enough], ends[long_enough]
        return WallFaces.of_edges(a[owner], t[owner], n[owner], s[starts], s[ends])

    def extents_on_faces(self, outlines: list[np.ndarray]) -> np.ndarray:
        """Per wall face and outline (rows of corner coordinates): the least and greatest offset
        of its corners from the face (along the face's inward normal), then the least and greatest
        position along it; an array (4, faces, outlines)."""
        f = self.faces
        out = np.empty((4, len(f), len(outlines)))
        for k, corners in enumerate(outlines):
            off, along = along_axes(corners, f.a, f.n), along_axes(corners, f.a, f.t)
            out[:, :, k] = off.min(axis=1), off.max(axis=1), along.min(axis=1), along.max(axis=1)
        return out

    def _counter(self, fid: str, poly: Polygon) -> CounterRun:
        c, u, v, length, depth = opening_axes(poly)
        # The front is the long side farther from the room boundary (the back is at the wall).
        boundary = self.poly.boundary
        d_plus = boundary.distance(Point(*(c + v * depth / 2)))
        d_minus = boundary.distance(Point(*(c - v * depth / 2)))
        front = v if d_plus >= d_minus else -v
        return CounterRun(fid, poly, c, u, front, length, depth)

    def open_floor(self) -> BaseGeometry:
        """The room's floor with its features left out (measured once)."""
        if self._open_floor is None:
            feats = [p for _, _, p in self.features]
            self._open_floor = self.poly.difference(shapely.union_all(feats)) if feats else self.poly
        return self._open_floor

    def pole(self) -> Point:
        """The point of the room's floor (features left out) farthest from its edges."""
        if self._pole is None:
            floor = self.open_floor()
            if floor is not self.poly:
                floor = valid_polygon(floor) or self.poly
            try:
                self._pole = polylabel(floor, tolerance=0.05)
            except Exception:  # pragma: no cover - degenerate polygons
                self._pole = floor.representative_point()
        return self._pole

    # -- navigation base: the room's floor without features, eroded

    def base_free(self) -> BaseGeometry:
        if self._base is None:
            self._base = shapely.buffer(self.open_floor(), -self.radius, quad_segs=navigation.QUAD_SEGS)
        return self._base

    def keep_out(self, tall: bool) -> KeepOut:
        """The clear zones an item keeps out of: the doors', and the windows' for a tall item."""
        if tall not in self._keep_out:
            self._keep_out[tall] = KeepOut.of(self.door_zones + (self.window_zones if tall else []))
        return self._keep_out[tall]

    def door_pieces(self) -> list[int | None]:
        """Which piece of the empty room's free floor (:meth:`base_free`) each door opens onto."""
        if self._door_pieces is None:
            self._door_pieces = pieces_holding(self.base_free(), np.asarray(self.door_points, dtype=object))
        return self._door_pieces


@dataclass
class KeepOut:
    """Clear zones and the zones' cores, :data:`ZONE_SURE_DEPTH` in from their edges (one
    prepared geometry)."""

    zones: np.ndarray
    deep: BaseGeometry

    @staticmethod
    def of(zones: list[BaseGeometry]) -> "KeepOut":
        arr = np.asarray(zones, dtype=object)
        if not len(arr):
            return KeepOut(arr, Polygon())
        deep = shapely.union_all(shapely.buffer(arr, -ZONE_SURE_DEPTH, join_style="mitre"))
        shapely.prepare(deep)
        return KeepOut(arr, deep)


def door_zones_by_side(doors: list[HomeOpening], polys: list[Polygon],
                       widths: np.ndarray) -> dict[tuple[int, float], Polygon]:
    """Where furniture keeps out in front of each face of each door, by (door index,
    side): the door's full width, from its face as deep as its leaf swings (its width,
    as :func:`homeloop.core.geometry.rectangle_frames` measures it) or its clear zone, whichever
    is deeper (a garage door lifts: its clear zone only)."""
    if not doors:
        return {}
    reach = [DOOR_CLEAR_DEPTH if o.kind == "garage_door" else max(w, DOOR_CLEAR_DEPTH) for o, w in zip(doors, widths)]
    zones, owners, sides = face_zones(polys, np.array(reach), side_inset=0.0, face_gap=0.0)
    return {(int(i), float(side)): z for i, side, z in zip(owners, sides, zones)}


def boundary_edges(poly: Polygon) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The polygon's edges at least :data:`MIN_FACE_LENGTH` long (outer ring, then holes):
    start points, unit directions, inward normals (left of the direction) and lengths."""
    a, b = [], []
    for ring in [poly.exterior, *poly.interiors]:
        coords = np.asarray(ring.coords)
        a.append(coords[:-1])
        b.append(coords[1:])
    a, b = np.concatenate(a), np.concatenate(b)
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])
    keep = length >= MIN_FACE_LENGTH
    a, d, length = a[keep], d[keep], length[keep]
    t = d / length[:, None]
    return a, t, np.stack([-t[:, 1], t[:, 0]], axis=1), length


def along_axes(points: np.ndarray, origins: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """How far along each axis (a row per axis, from its origin) each point lies: (axes, points)."""
    rel = points[None, :, :] - origins[:, None, :]
    return rel[..., 0] * axes[:, None, 0] + rel[..., 1] * axes[:, None, 1]


def face_band(faces: WallFaces) -> BaseGeometry:
    """The strip along the wall faces where an item's back counts as against a wall (prepared)."""
    if not len(faces):
        return Polygon()
    ends = np.stack([faces.a + faces.t * faces.s0[:, None], faces.a + faces.t * faces.s1[:, None]], axis=1)
    band = shapely.union_all(shapely.buffer(shapely.linestrings(ends), FLUSH_TOLERANCE + 0.005, cap_style="flat"))
    shapely.prepare(band)
    return band


def pieces_holding(geom: BaseGeometry, pts: np.ndarray) -> list[int | None]:
    """For each point (an array of shapely points), the index of the piece of ``geom``
    holding it (None if on none)."""
    if not len(pts):
        return []
    if geom.is_empty:
        return [None] * len(pts)
    parts = shapely.get_parts(geom)
    if len(parts) == 1:
        d = shapely.distance(parts[0], pts)
        return [0 if x <= navigation.SNAP_TOLERANCE else None for x in d]
    dist = shapely.distance(parts[:, None], pts[None, :])
    best = np.argmin(dist, axis=0)
    return [int(b) if dist[b, k] <= navigation.SNAP_TOLERANCE else None for k, b in enumerate(best)]
