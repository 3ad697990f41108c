"""What a camera sees, worked out from geometry (docs/skills.md).

A capture needs to know which things its frame shows: perception labels
them, checks ask whether the source of a hazard was seen. Until pixels come
from a renderer (whose id buffer answers the same question exactly), the
:class:`GeometricVisibility` backend answers it from the home's geometry:

1. Every entity (a carryable object, a piece of furniture, a person, a door
   or window, a device) is a *solid*: a convex footprint extruded between two
   heights (objects and people where they are now; a person's solid follows
   their posture, with the head a solid of its own).
2. A pinhole :class:`Viewpoint` projects each solid's corners, clipped at a
   near plane, to its pixel box, clipped to the frame.
3. Sample points inside the solid are joined to the camera by rays; a ray is
   blocked by walls (footprints minus their openings, full height), by the
   parts of an opening that are not open (the wall under a sill and over a
   head, and a shut door's leaf; glass lets light through), and by the solids
   of furniture, device bodies, objects and people (Cyrus-Beck clipping
   against each convex solid, all rays at once with numpy), as the renderer's
   id buffer is. An entity's own solid never hides it, nor does the furniture
   it stands on (or an opened container it lies in); what a frame leaves out
   (a camera's own housing) hides nothing.
   The *unoccluded fraction* is the share of its in-frame samples seen.
4. Hazards in view are found the same way, from sample points of what the
   dynamics report: the flames over a burning pan, the smoke layer under the
   ceiling where it is thick enough to see, water on the floor.

Walls, opening pieces, furniture and device bodies are prepared once per
world; the rest is built per frame (a few tens of milliseconds in the house).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Protocol

import numpy as np
import shapely
from shapely.geometry import Polygon
from shapely.ops import unary_union

from homeloop.geometry_assets import Box, device_body
from homeloop.home import Home, polygon_from_rings

#: Nearest depth a camera images (m); solids closer than this are clipped.
NEAR_M = 0.05

#: Ray ends ignored (m): a sample on a solid's face is not hidden by the face it lies on.
RAY_END_SLACK_M = 0.02

#: Sample points per level of a solid (its centre and points toward each corner), and levels.
SAMPLE_LEVELS = (1 / 6, 1 / 2, 5 / 6)
SAMPLE_SHRINK = 0.7

#: A person's solid by posture: (height as a share of their stature, footprint depth (m)); lying
#: people lie along their heading on the floor or on what they lie on, this thick (m).
POSTURE_SOLIDS = {"standing": (1.0, 0.30), "sitting": (0.72, 0.55)}
LYING_THICKNESS_M = 0.30

#: Stature and shoulder width (m) of a person the catalog does not describe.
UNLISTED_PERSON_M = (1.7, 0.45)

#: A head: this tall and wide (m), at the top of a standing or sitting person, at one end of a lying one.
HEAD_M = 0.24

#: Smoke density (0-1) from which the layer under the ceiling can be seen, and how far below the
#: ceiling its sample points lie (m).
SMOKE_SEEN_DENSITY = 0.15
SMOKE_LAYER_DEPTH_M = 0.3

#: Flames over a burning pan: sample heights above the pan's rim (m).
FLAME_HEIGHTS_M = (0.05, 0.2, 0.35)

#: Spacing of the floor points sampled for water and of the ceiling points sampled for smoke (m).
HAZARD_GRID_M = 0.25

#: Opening kinds with a leaf that blocks sight when shut (a window's glass does not).
LEAF_KINDS = ("door", "entrance_door", "garage_door")


# --- the camera ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Viewpoint:
    """A pinhole camera: position (m), heading and tilt (rad; negative pitch looks down),
    horizontal field of view (degrees) and image size (pixels)."""

    x: float
    y: float
    z: float
    yaw: float
    pitch: float
    hfov_deg: float
    width: int
    height: int

    @classmethod
    def of(cls, view: Any) -> "Viewpoint":
        """A viewpoint from a Viewpoint, a home Camera, or a mapping with x, y, z, yaw, pitch,
        hfov (or hfov_deg) and resolution (or width and height)."""
        if isinstance(view, Viewpoint):
            return view
        if isinstance(view, Mapping):
            width, height = view.get("resolution") or (view["width"], view["height"])
            return cls(float(view["x"]), float(view["y"]), float(view["z"]), float(view["yaw"]),
                       float(view.get("pitch", 0.0)), float(view.get("hfov", view.get("hfov_deg"))),
                       int(width), int(height))
        pose = view.pose
        width, height = view.resolution
        return cls(pose.x, pose.y, pose.z, pose.yaw, pose.pitch, float(view.hfov_deg), int(width), int(height))

    @property
    def focal_px(self) -> float:
        return (self.width / 2) / math.tan(math.radians(self.hfov_deg) / 2)

    @property
    def origin(self) -> np.ndarray:
        return np.array([self.x, self.y, self.z])

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Forward, right and up unit vectors in home coordinates."""
        cy, sy, cp, sp = math.cos(self.yaw), math.sin(self.yaw), math.cos(self.pitch), math.sin(self.pitch)
        forward = np.array([cy * cp, sy * cp, sp])
        right = np.array([sy, -cy, 0.0])
        return forward, right, np.cross(right, forward)

    def camera_coords(self, points: np.ndarray) -> np.ndarray:
        """(right, up, depth) of home points (N, 3)."""
        forward, right, up = self.axes()
        rel = points - self.origin
        return np.stack([rel @ right, rel @ up, rel @ forward], axis=-1)

    def to_pixels(self, cam: np.ndarray) -> np.ndarray:
        """Pixel (u, v) of camera coordinates with depth > 0 (v grows downwards)."""
        f = self.focal_px
        return np.stack([self.width / 2 + f * cam[:, 0] / cam[:, 2], self.height / 2 - f * cam[:, 1] / cam[:, 2]],
                        axis=-1)

    def to_dict(self) -> dict[str, Any]:
        return {"x": round(self.x, 4), "y": round(self.y, 4), "z": round(self.z, 4), "yaw": round(self.yaw, 5),
                "pitch": round(self.pitch, 5), "hfov": self.hfov_deg, "resolution": [self.width, self.height]}


# --- solids ---------------------------------------------------------------------------------------------


@dataclass
class Solid:
    """A convex footprint (counter-clockwise ring, (n, 2)) extruded from ``z0`` to ``z1``."""

    ring: np.ndarray
    z0: float
    z1: float

    @classmethod
    def box(cls, x: float, y: float, yaw: float, length: float, width: float, z0: float, z1: float) -> "Solid":
        """A box centred on (x, y): ``length`` along the heading, ``width`` across."""
        c, s = math.cos(yaw), math.sin(yaw)
        half = [(length / 2, width / 2), (-length / 2, width / 2), (-length / 2, -width / 2), (length / 2, -width / 2)]
        ring = np.array([(x + c * a - s * b, y + s * a + c * b) for a, b in half])
        return cls(_ccw(ring), z0, z1)

    @classmethod
    def of_box(cls, pose: Any, box: Box) -> "Solid":
        """A box given in a pose's frame (x forward, y left, z up from the pose), placed there."""
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        corners = [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]
        ring = np.array([(pose.x + c * a - s * b, pose.y + s * a + c * b) for a, b in corners])
        return cls(_ccw(ring), pose.z + box.z0, pose.z + box.z1)

    @classmethod
    def of_polygon(cls, polygon: Polygon, z0: float, z1: float) -> "Solid":
        hull = polygon.convex_hull
        coords = np.asarray(hull.exterior.coords)[:-1] if hull.geom_type == "Polygon" else np.asarray(hull.coords)
        return cls(_ccw(coords), z0, z1)

    def corners(self) -> np.ndarray:
        n = len(self.ring)
        return np.vstack([np.column_stack([self.ring, np.full(n, self.z0)]),
                          np.column_stack([self.ring, np.full(n, self.z1)])])

    def edges(self) -> list[tuple[int, int]]:
        n = len(self.ring)
        return [(i, (i + 1) % n) for i in range(n)] + [(n + i, n + (i + 1) % n) for i in range(n)] + \
            [(i, n + i) for i in range(n)]

    def samples(self) -> np.ndarray:
        centre = self.ring.mean(axis=0)
        flat = np.vstack([centre, centre + SAMPLE_SHRINK * (self.ring - centre)])
        levels = [self.z0 + f * (self.z1 - self.z0) for f in SAMPLE_LEVELS]
        return np.vstack([np.column_stack([flat, np.full(len(flat), z)]) for z in levels])


def _ccw(ring: np.ndarray) -> np.ndarray:
    ring = np.asarray(ring, dtype=float)
    x, y = ring[:, 0], ring[:, 1]
    area = 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
    return ring if area >= 0 else ring[::-1].copy()


@dataclass
class Entity:
    """Something a frame may show. ``hidden_by_none_of`` names solids that never hide it
    (itself, what it stands on)."""

    kind: str  # object | furniture | person | opening | device
    id: str
    label: str
    rooms: tuple[str, ...]
    solid: Solid
    position: tuple[float, float, float]
    hidden_by_none_of: tuple[str, ...] = ()
    head: Solid | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Seen:
    """An entity in one frame: its pixel box (x0, y0, x1, y1), the share of its sample points inside the
    frame, the share of those not hidden, and (people) the share of the head seen."""

    kind: str
    id: str
    label: str
    rooms: tuple[str, ...]
    box: tuple[int, int, int, int]
    area_px: int
    in_frame: float
    unoccluded: float
    position: tuple[float, float, float]
    head_seen: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["rooms"] = list(self.rooms)
        out["box"] = list(self.box)
        return out


@dataclass
class Frame:
    """What one viewpoint shows: the entities with a pixel box, and the hazards in view."""

    entities: list[Seen]
    hazards: list[dict[str, Any]]


class Visibility(Protocol):
    """A backend that says what a viewpoint shows (this module's geometry, or a renderer's id buffer)."""

    def frame(self, world: Any, view: Viewpoint, hide: Iterable[str] = ()) -> Frame: ...


# --- occluders ------------------------------------------------------------------------------------------


@dataclass
class _Segments:
    """Vertical faces seen edge-on from above: segment ``a``-``b`` blocking between ``z0`` and ``z1``."""

    a: np.ndarray
    b: np.ndarray
    z0: np.ndarray
    z1: np.ndarray
    owner: np.ndarray  # owner code per segment (-1: a wall)

    @classmethod
    def empty(cls) -> "_Segments":
        z = np.zeros((0, 2))
        return cls(z, z, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))

    @classmethod
    def concat(cls, parts: Iterable["_Segments"]) -> "_Segments":
        parts = [p for p in parts if len(p.z0)]
        if not parts:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("a", "b", "z0", "z1", "owner")))


def _ring_segments(polygon: Any, z0: float, z1: float, owner: int) -> _Segments:
    """The boundary segments of a polygon (or multipolygon) blocking between z0 and z1."""
    rings = []
    for poly in getattr(polygon, "geoms", [polygon]):
        if poly.is_empty or poly.geom_type != "Polygon":
            continue
        rings.extend([np.asarray(poly.exterior.coords), *(np.asarray(r.coords) for r in poly.interiors)])
    if not rings:
        return _Segments.empty()
    a = np.vstack([r[:-1] for r in rings])
    b = np.vstack([r[1:] for r in rings])
    n = len(a)
    return _Segments(a, b, np.full(n, z0), np.full(n, z1), np.full(n, owner, dtype=np.int64))


@dataclass
class _Solids:
    """Convex solids as half-planes ``normal . p <= offset`` (padded to one edge count) and heights."""

    normal: np.ndarray  # (Q, E, 2)
    offset: np.ndarray  # (Q, E)
    z0: np.ndarray
    z1: np.ndarray
    owner: np.ndarray

    @classmethod
    def of(cls, solids: list[tuple[int, Solid]]) -> "_Solids":
        if not solids:
            return cls(np.zeros((0, 1, 2)), np.zeros((0, 1)), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))
        width = max(len(s.ring) for _, s in solids)
        normal = np.zeros((len(solids), width, 2))
        offset = np.ones((len(solids), width))  # padding: 0 . p <= 1 always holds
        for q, (_, s) in enumerate(solids):
            edge = np.roll(s.ring, -1, axis=0) - s.ring
            n = np.column_stack([edge[:, 1], -edge[:, 0]])  # outward for a counter-clockwise ring
            normal[q, :len(n)] = n
            offset[q, :len(n)] = np.einsum("ij,ij->i", n, s.ring)
        return cls(normal, offset, np.array([s.z0 for _, s in solids]), np.array([s.z1 for _, s in solids]),
                   np.array([o for o, _ in solids], dtype=np.int64))


def _excluded(owner: np.ndarray, ex: np.ndarray) -> np.ndarray:
    """(M, K): whether occluder k is one ray m ignores (``ex``: (M, X) owner codes, -2 padding)."""
    return (owner[None, :, None] == ex[:, None, :]).any(axis=-1)


def _segments_block(origin: np.ndarray, targets: np.ndarray, slack: np.ndarray, ex: np.ndarray,
                    segs: _Segments) -> np.ndarray:
    """Rays blocked by a vertical face: the 2-D crossing lies within the face's heights."""
    if not len(segs.z0):
        return np.zeros(len(targets), dtype=bool)
    d = targets[:, :2] - origin[:2]
    e = segs.b - segs.a
    w = segs.a - origin[:2]
    den = d[:, None, 0] * e[None, :, 1] - d[:, None, 1] * e[None, :, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[None, :, 0] * e[None, :, 1] - w[None, :, 1] * e[None, :, 0]) / den
        s = (w[None, :, 0] * d[:, None, 1] - w[None, :, 1] * d[:, None, 0]) / den
        z = origin[2] + t * (targets[:, None, 2] - origin[2])  # parallel faces give inf/nan, masked below
    hit = (np.abs(den) > 1e-12) & (s >= 0) & (s <= 1) & (t > slack[:, None]) & (t < 1 - slack[:, None])
    hit &= (z >= segs.z0[None, :]) & (z <= segs.z1[None, :])
    hit &= ~_excluded(segs.owner, ex)
    return hit.any(axis=1)


def _solids_block(origin: np.ndarray, targets: np.ndarray, slack: np.ndarray, ex: np.ndarray,
                  solids: _Solids) -> np.ndarray:
    """Rays blocked by a convex solid (Cyrus-Beck: the ray's parameter interval inside every
    half-plane and inside the height range is not empty)."""
    if not len(solids.z0):
        return np.zeros(len(targets), dtype=bool)
    d = targets - origin
    num = solids.offset - np.einsum("qej,j->qe", solids.normal, origin[:2])  # (Q, E)
    den = np.einsum("qej,mj->mqe", solids.normal, d[:, :2])  # (M, Q, E)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = num[None] / den
    lower = np.where(den < 0, ratio, -np.inf).max(axis=2)
    upper = np.where(den > 0, ratio, np.inf).min(axis=2)
    never = ((den == 0) & (num[None] < 0)).any(axis=2)
    dz = d[:, 2:3]
    with np.errstate(divide="ignore", invalid="ignore"):
        za = (solids.z0[None, :] - origin[2]) / dz
        zb = (solids.z1[None, :] - origin[2]) / dz
    flat = np.abs(dz) < 1e-12
    inside_z = (solids.z0[None, :] <= origin[2]) & (origin[2] <= solids.z1[None, :])
    lower = np.maximum(lower, np.where(flat, np.where(inside_z, -np.inf, np.inf), np.minimum(za, zb)))
    upper = np.minimum(upper, np.where(flat, np.inf, np.maximum(za, zb)))
    lower = np.maximum(lower, slack[:, None])
    upper = np.minimum(upper, 1 - slack[:, None])
    hit = (lower < upper) & ~never & ~_excluded(solids.owner, ex)
    return hit.any(axis=1)


# --- the geometric backend ------------------------------------------------------------------------------


class GeometricVisibility:
    """The :class:`Visibility` backend of the module docstring, prepared once for one world."""

    #: Rays tested at once (bounds the memory of the (rays x occluders) arrays).
    RAY_CHUNK = 1024

    def __init__(self, world: Any):
        home: Home = world.home
        self.catalog = world.catalog
        self._codes: dict[str, int] = {}
        openings = home.opening_polygons()
        self.walls = _wall_segments(home, openings)
        self.opening_pieces, self.leaves = self._opening_segments(home, openings)
        self.furniture = [(self.code(f.id), Solid.of_polygon(polygon_from_rings(f.footprint), 0.0, f.height))
                          for f in home.furniture]
        self.static_entities = [*self._furniture_entities(home), *self._opening_entities(home, openings),
                                *self._device_entities(home), *_doormat_entities(home)]
        self.devices = [(self.code(e.id), e.solid) for e in self.static_entities if e.kind == "device"]
        self._furniture_by_id = {f.id: f for f in home.furniture}
        self._footprints = [(f.id, polygon_from_rings(f.footprint), f) for f in home.furniture]
        self.room_grids: dict[str, np.ndarray] = {}

    def code(self, entity_id: str) -> int:
        """A small integer naming a solid (occluder owners are compared as integers)."""
        return self._codes.setdefault(entity_id, len(self._codes))

    # -- set-up

    def _opening_segments(self, home: Home, openings: dict[str, Polygon]) -> tuple[_Segments, dict[str, _Segments]]:
        top = max((w.height for w in home.walls), default=2.6)
        pieces, leaves = [], {}
        for o in home.openings:
            poly, owner = openings[o.id], self.code(o.id)
            if o.sill > 0:
                pieces.append(_ring_segments(poly, 0.0, o.sill, owner))
            if o.sill + o.height < top:
                pieces.append(_ring_segments(poly, o.sill + o.height, top, owner))
            if o.kind in LEAF_KINDS:
                leaves[o.id] = _ring_segments(poly, o.sill, o.sill + o.height, owner)
        return _Segments.concat(pieces), leaves

    def _furniture_entities(self, home: Home) -> list[Entity]:
        out = []
        for (_, solid), f in zip(self.furniture, home.furniture):
            out.append(Entity("furniture", f.id, f.semantic_class.replace("_", " "), (f.room,), solid,
                              (f.pose.x, f.pose.y, 0.0), (f.id,)))
        return out

    def _opening_entities(self, home: Home, openings: dict[str, Polygon]) -> list[Entity]:
        out = []
        for o in home.openings:
            label = {"window": "window", "garage_door": "garage door"}.get(o.kind, "door")
            solid = Solid.of_polygon(openings[o.id], o.sill, o.sill + o.height)
            c = openings[o.id].centroid
            out.append(Entity("opening", o.id, label, tuple(o.connects), solid, (c.x, c.y, o.sill), (o.id,)))
        return out

    def _device_entities(self, home: Home) -> list[Entity]:
        """Each device's body (homeloop.geometry_assets.device_body); a device in a carryable object
        (a soil probe in a pot) lies within the object's solid and moves with it, so the object
        stands for it."""
        out = []
        objects = {o.id for o in home.objects}
        for d in home.devices:
            body = device_body(home, d)
            if body is None or d.room is None or d.mounted_on in objects:
                continue
            entry = self.catalog.devices.get(d.type)
            label = entry.name if entry is not None else d.type.replace("_", " ")
            hosts = (d.id,) + ((d.mounted_on,) if d.mounted_on else ())
            out.append(Entity("device", d.id, label, (d.room,), Solid.of_box(d.pose, body),
                              (d.pose.x, d.pose.y, d.pose.z), hosts))
        return out

    # -- what moves: objects and people

    def _object_entities(self, world: Any) -> list[Entity]:
        out = []
        yaws = _object_yaws(world.home)
        for o in world.objects.values():
            entry = self.catalog.objects.get(o.catalog_id)
            if entry is None:
                continue
            dims = entry.dimensions
            solid = Solid.box(o.x, o.y, yaws.get(o.id, 0.0), dims.depth, dims.width, o.z, o.z + dims.height)
            out.append(Entity("object", o.id, entry.label, _object_rooms(world, o), solid, (o.x, o.y, o.z),
                              (o.id, *self._object_hosts(world, o))))
        return out

    def _object_hosts(self, world: Any, obj: Any) -> tuple[str, ...]:
        """The furniture an object lies on, or in when that container is open (then it does not hide it)."""
        place = obj.placement
        if place.kind == "held" or place.furniture is None:
            return ()
        if place.kind == "surface":
            return (place.furniture,)
        host = self._furniture_by_id.get(place.furniture)
        container = next((c for c in host.containers if c.name == place.name), None) if host else None
        if container is None or container.opened_by is None:
            return (place.furniture,)
        part = next((p for p in host.parts if p.name == container.opened_by), None)
        state = world.parts.get((host.id, container.opened_by))
        opened = part is not None and state is not None and abs(state - part.range[0]) > 1e-6
        return (place.furniture,) if opened else ()

    def _person_entities(self, world: Any) -> list[Entity]:
        out = []
        for p in world.people.values():
            if p.room is None:
                continue
            entry = self.catalog.people.get(p.catalog_id)
            stature, shoulders = (entry.height, entry.shoulder_width) if entry is not None else UNLISTED_PERSON_M
            host, base = self._support(p.x, p.y) if p.posture != "standing" else (None, 0.0)
            body, head = person_solids(p.x, p.y, p.yaw, p.posture, stature, shoulders, base)
            extra = {"posture": p.posture, "name": p.name, "role": p.role,
                     "enrolled": bool(entry.enrolled) if entry is not None else False}
            out.append(Entity("person", p.id, "person", (p.room,), body, (p.x, p.y, 0.0),
                              (p.id,) + ((host,) if host else ()), head=head, extra=extra))
        return out

    def _support(self, x: float, y: float) -> tuple[str | None, float]:
        """The furniture under a point a person sits or lies on, and its highest surface there."""
        point = shapely.Point(x, y)
        for fid, footprint, f in self._footprints:
            if footprint.covers(point):
                tops = [s.height for s in f.surfaces if polygon_from_rings(s.polygon).covers(point)]
                return fid, max(tops, default=0.0)
        return None, 0.0

    def entities(self, world: Any) -> list[Entity]:
        """Every entity a frame may show now: furniture, openings, devices and places, then the
        objects and people where they are (the renderer's id buffer names the same entities)."""
        return [*self.static_entities, *self._object_entities(world), *self._person_entities(world)]

    # -- a frame

    def frame(self, world: Any, view: Viewpoint, hide: Iterable[str] = ()) -> Frame:
        """The entities a viewpoint shows and the hazards in view (``hide``: entities not shown,
        such as the camera itself)."""
        entities = self.entities(world)
        hidden = set(hide)
        boxed = [(e, box) for e in entities if e.id not in hidden and (box := pixel_box(view, e.solid)) is not None]
        segs, solids = self._occluders(world, view, entities, hidden)
        seen = []
        parts = [(i, e.solid.samples(), e.hidden_by_none_of) for i, (e, _) in enumerate(boxed)]
        heads = [(i, e.head.samples(), e.hidden_by_none_of) for i, (e, _) in enumerate(boxed) if e.head is not None]
        body = self._fractions(view, parts, segs, solids)
        head = self._fractions(view, heads, segs, solids)
        for i, (e, box) in enumerate(boxed):
            in_frame, unoccluded = body[i]
            if in_frame == 0.0:
                continue
            head_seen = None if e.head is None else head.get(i, (0.0, 0.0))[0] * head.get(i, (0.0, 0.0))[1]
            seen.append(Seen(e.kind, e.id, e.label, e.rooms, box, (box[2] - box[0]) * (box[3] - box[1]),
                             round(in_frame, 4), round(unoccluded, 4), tuple(round(v, 4) for v in e.position),
                             None if head_seen is None else round(head_seen, 4), dict(e.extra)))
        return Frame(seen, hazards_in_view(self, world, view, segs, solids))

    def _occluders(self, world: Any, view: Viewpoint, entities: list[Entity],
                   hidden: Iterable[str] = ()) -> tuple[_Segments, _Solids]:
        leaves = [seg for oid, seg in self.leaves.items() if oid in world.openings and not world.openings[oid].open]
        segs = _Segments.concat([self.walls, self.opening_pieces, *leaves])
        movable = [(self.code(e.id), e.solid) for e in entities if e.kind in ("object", "person")]
        left_out = {self._codes[h] for h in hidden if h in self._codes}
        candidates = [(c, s) for c, s in (*self.furniture, *movable) if c not in left_out and _in_front(view, s)]
        # Device bodies are many and small: only those the frame shows can cross a ray to what it shows.
        candidates += [(c, s) for c, s in self.devices if c not in left_out and pixel_box(view, s) is not None]
        return segs, _Solids.of(candidates)

    def _fractions(self, view: Viewpoint, parts: list[tuple[int, np.ndarray, tuple[str, ...]]],
                   segs: _Segments, solids: _Solids) -> dict[int, tuple[float, float]]:
        """Per part: the share of its samples inside the frame, and the share of those not hidden."""
        if not parts:
            return {}
        points = np.vstack([p for _, p, _ in parts])
        owner = np.concatenate([np.full(len(p), i) for i, p, _ in parts])
        width = max(len(ex) for _, _, ex in parts)
        ex_rows = [[self.code(x) for x in ex] + [-2] * (width - len(ex)) for _, _, ex in parts]
        ex = np.concatenate([np.tile(np.array(row, dtype=np.int64), (len(p), 1)) for row, (_, p, _) in
                             zip(ex_rows, parts)])
        inside = in_frame(view, points)
        clear = np.zeros(len(points), dtype=bool)
        idx = np.flatnonzero(inside)
        origin = view.origin
        for start in range(0, len(idx), self.RAY_CHUNK):
            chunk = idx[start:start + self.RAY_CHUNK]
            clear[chunk] = ~blocked(origin, points[chunk], ex[chunk], segs, solids)
        out = {}
        for i, _, _ in parts:
            mine = owner == i
            n_in = int(inside[mine].sum())
            out[i] = (n_in / int(mine.sum()), (int(clear[mine].sum()) / n_in) if n_in else 0.0)
        return out


#: The mat at the entrance door's parcel spot (m: length, width, height): what "the porch mat" is.
DOORMAT_SIZE_M = (0.8, 0.5, 0.02)


def _doormat_entities(home: Home) -> list[Entity]:
    """The doormat on the parcel spot outside the entrance door, where the home has one."""
    from homeloop.sim.roles import Roles, ScenarioError

    try:
        spot = Roles(home, "doormat").point("parcel_spot")
    except (ScenarioError, KeyError, ValueError):
        return []
    length, width, height = DOORMAT_SIZE_M
    solid = Solid.box(spot.x, spot.y, spot.yaw, length, width, 0.0, height)
    rooms = (spot.room,) if spot.room else ()
    return [Entity("place", "doormat", "doormat", rooms, solid, (spot.x, spot.y, 0.0), ("doormat",))]


def blocked(origin: np.ndarray, targets: np.ndarray, ex: np.ndarray, segs: _Segments, solids: _Solids) -> np.ndarray:
    """Whether each ray from ``origin`` to a target is blocked (``ex``: owner codes each ray ignores)."""
    length = np.linalg.norm(targets - origin, axis=1)
    slack = np.minimum(RAY_END_SLACK_M / np.maximum(length, 1e-9), 0.49)
    return _segments_block(origin, targets, slack, ex, segs) | _solids_block(origin, targets, slack, ex, solids)


def in_frame(view: Viewpoint, points: np.ndarray) -> np.ndarray:
    """Whether each point lies in front of the camera and inside the image."""
    cam = view.camera_coords(points)
    ok = cam[:, 2] >= NEAR_M
    uv = np.full((len(points), 2), -1.0)
    uv[ok] = view.to_pixels(cam[ok])
    return ok & (uv[:, 0] >= 0) & (uv[:, 0] < view.width) & (uv[:, 1] >= 0) & (uv[:, 1] < view.height)


def pixel_box(view: Viewpoint, solid: Solid) -> tuple[int, int, int, int] | None:
    """The solid's projected box (x0, y0, x1, y1) in whole pixels, clipped to the frame; None if outside."""
    cam = view.camera_coords(solid.corners())
    front = cam[:, 2] >= NEAR_M
    if not front.any():
        return None
    pts = [cam[front]]
    edges = np.array(solid.edges())
    a, b = cam[edges[:, 0]], cam[edges[:, 1]]
    cross = front[edges[:, 0]] != front[edges[:, 1]]
    if cross.any():
        t = (NEAR_M - a[cross, 2]) / (b[cross, 2] - a[cross, 2])
        pts.append(a[cross] + t[:, None] * (b[cross] - a[cross]))
    uv = view.to_pixels(np.vstack(pts))
    x0, y0 = np.clip(uv.min(axis=0), 0, [view.width, view.height])
    x1, y1 = np.clip(uv.max(axis=0), 0, [view.width, view.height])
    box = (int(math.floor(x0)), int(math.floor(y0)), int(math.ceil(x1)), int(math.ceil(y1)))
    return box if box[2] > box[0] and box[3] > box[1] else None


def _in_front(view: Viewpoint, solid: Solid) -> bool:
    """Whether any part of a solid is ahead of the camera plane (only those can hide what it sees)."""
    return bool((view.camera_coords(solid.corners())[:, 2] > 0).any())



def person_solids(x: float, y: float, yaw: float, posture: str, stature: float, shoulders: float,
                  base: float = 0.0) -> tuple[Solid, Solid]:
    """A person's body and head solids for a posture (see :data:`POSTURE_SOLIDS`)."""
    if posture == "lying":
        body = Solid.box(x, y, yaw, stature, shoulders, base, base + LYING_THICKNESS_M)
        reach = stature / 2 - HEAD_M / 2
        head = Solid.box(x + math.cos(yaw) * reach, y + math.sin(yaw) * reach, yaw, HEAD_M, HEAD_M, base,
                         base + HEAD_M)
        return body, head
    share, depth = POSTURE_SOLIDS.get(posture, POSTURE_SOLIDS["standing"])
    top = stature * share
    return (Solid.box(x, y, yaw, depth, shoulders, 0.0, top),
            Solid.box(x, y, yaw, HEAD_M, HEAD_M, top - HEAD_M, top))


def _object_rooms(world: Any, obj: Any) -> tuple[str, ...]:
    place = obj.placement
    if place.kind == "held":
        holder = world.people.get(place.holder) if place.holder != "robot" else world.robot
        room = getattr(holder, "room", None)
        return (room,) if room else ()
    return (place.room,) if place.room else ()


def _object_yaws(home: Home) -> dict[str, float]:
    return {o.id: o.pose.yaw for o in home.objects}


def _wall_segments(home: Home, openings: dict[str, Polygon]) -> _Segments:
    """Wall footprints less their openings, blocking from the floor to the wall's top."""
    holes = unary_union(list(openings.values())) if openings else None
    parts = []
    for w in home.walls:
        poly = polygon_from_rings(w.polygon)
        if holes is not None:
            poly = poly.difference(holes)
        parts.append(_ring_segments(poly, 0.0, w.height, -1))
    return _Segments.concat(parts)


# --- hazards in view ------------------------------------------------------------------------------------


def hazards_in_view(vis: GeometricVisibility, world: Any, view: Viewpoint, segs: _Segments,
                    solids: _Solids) -> list[dict[str, Any]]:
    """The hazards whose sample points the viewpoint sees: kind (fire, smoke, water), source, rooms,
    and the share of their points seen."""
    out = []
    for kind, source, rooms, points in hazard_points(vis, world):
        if not len(points):
            continue
        inside = in_frame(view, points)
        if not inside.any():
            continue
        targets = points[inside]
        clear = ~blocked(view.origin, targets, np.full((len(targets), 1), -2, dtype=np.int64), segs, solids)
        if clear.any():
            out.append({"kind": kind, "source": source, "rooms": list(rooms),
                        "seen_fraction": round(float(clear.sum()) / len(points), 4)})
    return out


def hazard_points(vis: GeometricVisibility, world: Any) -> list[tuple[str, str, tuple[str, ...], np.ndarray]]:
    """Sample points of every hazard now: (kind, source, rooms, points)."""
    return [*_fire_points(world), *_smoke_points(vis, world), *_water_points(vis, world)]


def _module(world: Any, name: str) -> Any:
    return next((m for m in world.modules if m.name == name), None)


def _room_grid(vis: GeometricVisibility, world: Any, room_id: str) -> np.ndarray:
    """Points on a room's floor plan, :data:`HAZARD_GRID_M` apart (cached per room)."""
    grids = vis.room_grids
    if room_id not in grids:
        poly = world.home.room_polygon(room_id)
        x0, y0, x1, y1 = poly.bounds
        xs = np.arange(x0 + HAZARD_GRID_M / 2, x1, HAZARD_GRID_M)
        ys = np.arange(y0 + HAZARD_GRID_M / 2, y1, HAZARD_GRID_M)
        gx, gy = np.meshgrid(xs, ys)
        pts = np.column_stack([gx.ravel(), gy.ravel()])
        grids[room_id] = pts[shapely.contains_xy(poly, pts[:, 0], pts[:, 1])] if len(pts) else pts
    return grids[room_id]


def _fire_points(world: Any) -> list[tuple[str, str, tuple[str, ...], np.ndarray]]:
    """Flames over each burning pan."""
    cooking = _module(world, "cooking")
    if cooking is None:
        return []
    out = []
    for pan in cooking.pans():
        obj = world.objects.get(pan.id)
        if not pan.burning or obj is None:
            continue
        entry = world.catalog.objects.get(obj.catalog_id)
        rim = obj.z + (entry.dimensions.height if entry is not None else 0.0)
        pts = np.array([(obj.x, obj.y, rim + h) for h in FLAME_HEIGHTS_M])
        out.append(("fire", pan.id, _object_rooms(world, obj), pts))
    return out


def _smoke_points(vis: GeometricVisibility, world: Any) -> list[tuple[str, str, tuple[str, ...], np.ndarray]]:
    """The smoke layer under the ceiling of each room where it is thick enough to see."""
    smoke = _module(world, "smoke")
    if smoke is None:
        return []
    out = []
    for room in world.home.rooms:
        if smoke.room_density(room.id) < SMOKE_SEEN_DENSITY:
            continue
        grid = _room_grid(vis, world, room.id)
        thick = [(x, y) for x, y in grid if smoke.density_at(room.id, x, y) >= SMOKE_SEEN_DENSITY]
        if thick:
            z = room.ceiling_height - SMOKE_LAYER_DEPTH_M
            out.append(("smoke", room.id, (room.id,), np.column_stack([np.asarray(thick), np.full(len(thick), z)])))
    return out


def _water_points(vis: GeometricVisibility, world: Any) -> list[tuple[str, str, tuple[str, ...], np.ndarray]]:
    """Water on the floor around each leak or spill, and the spot it comes from."""
    water = _module(world, "water")
    if water is None:
        return []
    out = []
    for source in water.sources():
        if source.litres <= 0.0:
            continue
        grid = _room_grid(vis, world, source.room)
        near = grid[np.hypot(grid[:, 0] - source.x, grid[:, 1] - source.y) <= source.radius]
        flat = np.vstack([np.array([[source.x, source.y]]), near])
        out.append(("water", source.name, (source.room,), np.column_stack([flat, np.full(len(flat), 0.01)])))
    return out
