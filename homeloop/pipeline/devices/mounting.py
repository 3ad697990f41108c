"""Where devices go, measured: the shared geometry of mounting and spacing.

Room centres and candidate grids, the frame of an opening's face (where devices on a door
or window go), a piece of furniture's width and depth in its own frame, the footprints of
objects and what lies on each top or floor. The array measurements these build on are in
:mod:`homeloop.pipeline.devices_geometry`.
"""

from __future__ import annotations

import math

import numpy as np
import shapely
from shapely import Point, Polygon, affinity
from shapely.geometry.base import BaseGeometry
from shapely.ops import polylabel

from homeloop.core.geometry import face_side, opening_axes
from homeloop.core.geometry_assets import BodySize, device_body_size
from homeloop.core.home import Furniture, HomeObject, Opening
from homeloop.pipeline.devices.context import EquipContext, memoized
from homeloop.pipeline.devices_geometry import ccw, heading, holds

#: A point of the floor plan: x, y (m).
Point2 = tuple[float, float]

#: A room holds its centroid well when the centroid lies this far (m) inside it.
CENTRE_DEPTH = 0.3
#: A device on the floor or a wall keeps this far (m) from furniture and objects (and a floor
#: device from fixtures) beyond its own body.
DEVICE_GAP = 0.005


def body_size(device_type: str, mount: str) -> BodySize:
    """:func:`device_body_size` of a device that has a body (not worn, not built in)."""
    size = device_body_size(device_type, mount)
    if size is None:
        raise ValueError(f"a {device_type} on mount {mount!r} has no body")
    return size


def room_centre(poly: BaseGeometry) -> Point:
    """The centroid, or the pole of inaccessibility of a room that does not hold it well."""
    c = poly.centroid
    if holds(poly, c, CENTRE_DEPTH):
        return c
    return polylabel(poly, tolerance=0.05)


def grid_points(poly: BaseGeometry, step: float, window: tuple[float, float, float, float] | None = None
                ) -> np.ndarray:
    """Points of a square grid (anchored at the polygon's bounds) inside ``poly``, shape (n, 2);
    with ``window`` (minx, miny, maxx, maxy) only the grid's points in it."""
    if poly.is_empty:
        return np.zeros((0, 2))
    minx, miny, maxx, maxy = poly.bounds
    xs = np.arange(minx + step / 2, maxx, step)
    ys = np.arange(miny + step / 2, maxy, step)
    if len(xs) == 0 or len(ys) == 0:
        c = poly.representative_point()
        return np.array([[c.x, c.y]])
    if window is not None:
        xs = xs[(xs >= window[0]) & (xs <= window[2])]
        ys = ys[(ys >= window[1]) & (ys <= window[3])]
    gx, gy = np.tile(xs, len(ys)), np.repeat(ys, len(xs))  # row by row, as a mesh grid ravelled
    inside = shapely.contains_xy(poly, gx, gy)
    return np.column_stack([gx[inside], gy[inside]])


@memoized
def centre(ctx: EquipContext, rid: str) -> Point:
    """:func:`room_centre` of a room."""
    return room_centre(ctx.polys[rid])


@memoized
def centre_xy(ctx: EquipContext, rid: str) -> tuple[float, float]:
    c = centre(ctx, rid)
    return c.x, c.y


@memoized
def outline(ctx: EquipContext, rid: str) -> Polygon:
    """The room's polygon simplified by a centimetre (straight runs of wall one edge), counter-clockwise."""
    return ccw(ctx.polys[rid].simplify(0.01))


def face(ctx: EquipContext, o: Opening, rid: str, depth: float = 0.02, along: float = 0.0,
         outside: bool = False) -> tuple[float, float, float]:
    """A point on the face of an opening on ``rid``'s side (the far side when
    ``outside``), ``depth`` beyond the face and ``along`` from its centre; the yaw
    faces away from the opening (:func:`homeloop.core.geometry.face_point`, its frame measured once)."""
    middle, u, normal, thickness = face_frame(ctx, o.id, rid)
    outward = (-1.0 if outside else 1.0) * normal
    p = middle + outward * (thickness / 2 + depth) + u * along
    (x, y), (dx, dy) = p.tolist(), outward.tolist()
    return x, y, heading(dx, dy)


@memoized
def face_frame(ctx: EquipContext, oid: str, rid: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """An opening's centre, unit direction along its wall, unit normal out of its face on
    ``rid``'s side, and its thickness."""
    poly = ctx.opening_polys[oid]
    middle, u, normal, _, thickness = opening_axes(poly)
    return middle, u, face_side(poly, ctx.polys[rid]) * normal, thickness


def local_width(f: Furniture) -> float:
    """The furniture's extent across its front (its local y)."""
    ring = np.asarray(f.footprint[0])
    c, s = math.cos(f.pose.yaw), math.sin(f.pose.yaw)
    local_y = -(ring[:, 0] - f.pose.x) * s + (ring[:, 1] - f.pose.y) * c
    return float(local_y.max() - local_y.min())


def local_depth(f: Furniture) -> float:
    """The furniture's extent from back to front (its local x)."""
    ring = np.asarray(f.footprint[0])
    c, s = math.cos(f.pose.yaw), math.sin(f.pose.yaw)
    local_x = (ring[:, 0] - f.pose.x) * c + (ring[:, 1] - f.pose.y) * s
    return float(local_x.max() - local_x.min())


def object_footprint(obj: HomeObject) -> Polygon:
    """An object's footprint: its catalog width and depth about its pose, turned by its yaw."""
    width, depth, _ = obj.size
    box = shapely.box(-depth / 2, -width / 2, depth / 2, width / 2)
    return affinity.translate(affinity.rotate(box, obj.pose.yaw, origin=(0, 0), use_radians=True),
                              obj.pose.x, obj.pose.y)


def footprint_of(ctx: EquipContext, obj: HomeObject) -> Polygon:
    """:func:`object_footprint`, computed once per object."""
    known: dict[str, Polygon] = ctx.memo.setdefault(object_footprint, {})
    got = known.get(obj.id)
    if got is None:
        got = known[obj.id] = object_footprint(obj)
    return got


@memoized
def objects_on(ctx: EquipContext) -> dict[tuple[str | None, str | None], list[HomeObject]]:
    """The objects lying on each furniture's surface, by (furniture id, surface name)."""
    on: dict[tuple[str | None, str | None], list[HomeObject]] = {}
    for o in ctx.home.objects:
        if o.location.kind == "surface":
            on.setdefault((o.location.furniture, o.location.name), []).append(o)
    return on


@memoized
def floor_objects(ctx: EquipContext, rid: str) -> list[HomeObject]:
    """The objects standing on a room's floor."""
    return [o for o in ctx.home.objects if o.location.kind == "floor" and o.location.room == rid]
