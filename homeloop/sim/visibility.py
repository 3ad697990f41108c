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
3. Sample points in the solid (on three levels: near its foot, at its middle,
   and on its top face, which cameras above see first) are joined to the
   camera by rays; a ray is
   blocked by walls (footprints minus their openings, full height), by the
   plan's fixtures (counter runs, built-in wardrobes: what
   :func:`homeloop.core.navigation.fixture_solids` says they fill, up to their height), by the
   parts of an opening that are not open (the wall under a sill and over a
   head, and a shut door's leaf; glass lets light through), and by the solids
   of furniture, device bodies, objects and people (Cyrus-Beck clipping
   against each convex solid, all rays at once with numpy), as the renderer's
   id buffer is. An entity's own solid never hides it, nor does the furniture
   it stands on (or an opened container it lies in), nor what stands, sits or
   lies on it (:func:`resting_on`); what a frame leaves out (a camera's own
   housing) hides nothing.
   The *unoccluded fraction* is the share of its in-frame samples seen.
4. Hazards in view are found the same way, from sample points of what the
   dynamics report: the flames over a burning pan, the smoke layer under the
   ceiling where it is thick enough to see, water on the floor.

Walls, fixtures, opening pieces, furniture and device bodies are prepared once per
home (and shared by every episode in it); a solid's corners, samples and
half-planes once per solid. Per frame, every solid is projected at once, and
each ray is tested only against the occluders lying in its direction from
the camera and no farther than its end (:class:`_Occlusion`), with the same
arithmetic as testing them all, so the answer is the same to the last bit.
A house camera's view of the static part is worked out once per home and
camera, and its frames test only what moves
(:mod:`homeloop.sim.static_visibility`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol, TypeVar, Union, overload

import numpy as np
import shapely
from shapely.geometry import Polygon
from shapely.ops import unary_union

from homeloop.core.catalog import Catalog, ObjectEntry, PersonEntry
from homeloop.core.geometry_assets import Box, device_body
from homeloop.core.home import Camera, Home, Pose, polygon_from_rings
from homeloop.core.kept import Kept
from homeloop.core.keyed_file import disk_folder
from homeloop.core.navigation import fixture_solids
from homeloop.sim.dynamics.cooking import Cooking
from homeloop.sim.dynamics.smoke import Smoke
from homeloop.sim.dynamics.water import Water
from homeloop.sim import static_visibility
from homeloop.sim.occlusion import Faces, Occlusion, Prisms
from homeloop.sim.static_visibility import Blocks, Either, KeptView, StaticView, blocked_in_chunks
from homeloop.sim.world import ObjectState, PersonState, World, plain_copy

#: Nearest depth a camera images (m); solids closer than this are clipped.
NEAR_M = 0.05

#: Sample points per level of a solid (its centre and points toward each corner), and the levels as
#: shares of its height: the top level lies on its top face, which shows over what stands as high
#: beside it (a range between counters).
SAMPLE_LEVELS = (1 / 6, 1 / 2, 1.0)
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


#: What :meth:`Viewpoint.of` takes: a viewpoint, a home camera, or a mapping of the same values.
ViewLike = Union["Viewpoint", Camera, Mapping[str, Any]]


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
    def of(cls, view: ViewLike) -> "Viewpoint":
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

    # A viewpoint never changes: its focal length, origin and axes are worked out once (read-only).

    @property
    def focal_px(self) -> float:
        return _memo(self, "_focal", lambda: (self.width / 2) / math.tan(math.radians(self.hfov_deg) / 2))

    @property
    def origin(self) -> np.ndarray:
        return _memo(self, "_origin", lambda: _frozen(np.array([self.x, self.y, self.z])))

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Forward, right and up unit vectors in home coordinates."""
        return _memo(self, "_axes", self._axes)

    def _axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cy, sy, cp, sp = math.cos(self.yaw), math.sin(self.yaw), math.cos(self.pitch), math.sin(self.pitch)
        f0, f1, f2 = forward = (cy * cp, sy * cp, sp)
        r0, r1, r2 = right = (sy, -cy, 0.0)
        up = (r1 * f2 - r2 * f1, r2 * f0 - r0 * f2, r0 * f1 - r1 * f0)  # right x forward, as np.cross works it
        return _frozen(np.array(forward), np.array(right), np.array(up))

    def camera_coords(self, points: np.ndarray) -> np.ndarray:
        """(right, up, depth) of home points (N, 3), or of stacks of them (K, N, 3): each (N, 3)
        stack comes out as it would alone."""
        return np.stack(self.camera_axes(points), axis=-1)

    def camera_axes(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`camera_coords` as three arrays (right, up, depth), each of the points' shape but
        the last. A stack is read as one (K * N, 3) array: each row is worked out alone, as each
        stack is (N > 1)."""
        forward, right, up = self.axes()
        rel = (points - self.origin).reshape(-1, 3)
        shape = points.shape[:-1]
        return (rel @ right).reshape(shape), (rel @ up).reshape(shape), (rel @ forward).reshape(shape)

    def to_pixels(self, cam: np.ndarray) -> np.ndarray:
        """Pixel (u, v) of camera coordinates with depth > 0 (v grows downwards)."""
        return np.stack(_pixels(self, cam[:, 0], cam[:, 1], cam[:, 2]), axis=-1)

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
    def of_box(cls, pose: Pose, box: Box) -> "Solid":
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

    # A solid never changes once made: what is worked out from it is kept (read-only).

    def corners(self) -> np.ndarray:
        return _memo(self, "_corners", self._corners)

    def _corners(self) -> np.ndarray:
        n = len(self.ring)
        return _frozen(np.vstack([np.column_stack([self.ring, np.full(n, self.z0)]),
                                  np.column_stack([self.ring, np.full(n, self.z1)])]))

    def edges(self) -> list[tuple[int, int]]:
        n = len(self.ring)
        return [(i, (i + 1) % n) for i in range(n)] + [(n + i, n + (i + 1) % n) for i in range(n)] + \
            [(i, n + i) for i in range(n)]

    def edge_index(self) -> np.ndarray:
        """:meth:`edges` as an (n, 2) array of corner indices."""
        return _memo(self, "_edge_index", lambda: _frozen(np.array(self.edges())))

    def samples(self) -> np.ndarray:
        return _memo(self, "_samples", self._samples)

    def _samples(self) -> np.ndarray:
        centre = self.ring.mean(axis=0)
        flat = np.vstack([centre, centre + SAMPLE_SHRINK * (self.ring - centre)])
        levels = [self.z0 + f * (self.z1 - self.z0) for f in SAMPLE_LEVELS]
        return _frozen(np.vstack([np.column_stack([flat, np.full(len(flat), z)]) for z in levels]))

    def half_planes(self) -> tuple[np.ndarray, np.ndarray]:
        """The footprint as half-planes ``normal . p <= offset``: outward normals (n, 2), offsets (n,)."""
        return _memo(self, "_half_planes", self._half_planes)

    def _half_planes(self) -> tuple[np.ndarray, np.ndarray]:
        edge = np.concatenate([self.ring[1:], self.ring[:1]]) - self.ring  # each corner to the next
        normal = np.column_stack([edge[:, 1], -edge[:, 0]])  # outward for a counter-clockwise ring
        return _frozen(normal), _frozen(np.einsum("ij,ij->i", normal, self.ring))


_Kept = TypeVar("_Kept")


def _memo(owner: object, name: str, make: Callable[[], _Kept]) -> _Kept:
    """``make()`` worked out once and kept on ``owner`` (something that never changes)."""
    value: _Kept | None = owner.__dict__.get(name)
    if value is None:
        value = make()
        object.__setattr__(owner, name, value)
    return value


@overload
def _frozen(a: np.ndarray, /) -> np.ndarray: ...


@overload
def _frozen(a: np.ndarray, b: np.ndarray, /) -> tuple[np.ndarray, np.ndarray]: ...


@overload
def _frozen(a: np.ndarray, b: np.ndarray, c: np.ndarray, /) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


def _frozen(*arrays: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
    """The arrays made read-only (they are shared), one or a tuple."""
    for a in arrays:
        a.flags.writeable = False
    return arrays[0] if len(arrays) == 1 else arrays


def _ccw(ring: np.ndarray) -> np.ndarray:
    """``ring`` counter-clockwise: reversed where its signed area (the shoelace sum over its few
    corners, in plain Python: a solid is made for every object and person that moves) is below 0."""
    ring = np.asarray(ring, dtype=float)
    corners = ring.tolist()
    if not corners:
        return ring
    twice_area = 0.0
    px, py = corners[-1]
    for qx, qy in corners:
        twice_area += px * qy - qx * py
        px, py = qx, qy
    return ring if twice_area >= 0 else ring[::-1].copy()


@dataclass
class Entity:
    """Something a frame may show. ``hidden_by_none_of`` names solids that never hide it
    (itself, what it stands on; :func:`not_hiding` adds what rests on it)."""

    kind: str  # object | furniture | person | opening | device
    id: str
    label: str
    rooms: tuple[str, ...]
    solid: Solid
    position: tuple[float, float, float]
    hidden_by_none_of: tuple[str, ...] = ()
    head: Solid | None = None
    extra: dict[str, Any] = field(default_factory=dict)


#: What may rest on something (a device mounted on a door or a piece of furniture is part of it).
RESTING_KINDS = ("object", "person")


def resting_on(entities: Iterable[Entity]) -> dict[str, tuple[str, ...]]:
    """What rests on each entity: the objects and people whose ``hidden_by_none_of`` names it as what
    they stand, sit or lie on, or lie in (a pan on the range, a resident in bed). None of them hides
    it either: they cover a little of its surface, yet the rays to its sample points mostly pass
    through its top, where they stand, so they would hide far more of the points than of what shows."""
    out: dict[str, list[str]] = {}
    for e in entities:
        if e.kind not in RESTING_KINDS:
            continue
        for host in e.hidden_by_none_of:
            if host != e.id:
                out.setdefault(host, []).append(e.id)
    return {host: tuple(ids) for host, ids in out.items()}


def not_hiding(entity: Entity, resting: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The solids that never hide ``entity``: itself, what it rests on, and what rests on it (``resting``,
    :func:`resting_on` of the frame's entities)."""
    return entity.hidden_by_none_of + resting.get(entity.id, ())


#: A pixel box (x0, y0, x1, y1), x1 and y1 exclusive.
PixelBox = tuple[int, int, int, int]


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
        """As plain data, every field in order (rooms and box as lists; values shared are immutable)."""
        return {"kind": self.kind, "id": self.id, "label": self.label, "rooms": list(self.rooms), "box": list(self.box),
                "area_px": self.area_px, "in_frame": self.in_frame, "unoccluded": self.unoccluded,
                "position": tuple(self.position), "head_seen": self.head_seen, "extra": plain_copy(self.extra)}


@dataclass
class Frame:
    """What one viewpoint shows: the entities with a pixel box, and the hazards in view."""

    entities: list[Seen]
    hazards: list[dict[str, Any]]


class Visibility(Protocol):
    """A backend that says what a viewpoint shows (this module's geometry, or a renderer's id buffer)."""

    def frame(self, world: World, view: Viewpoint, hide: Iterable[str] = ()) -> Frame: ...


# --- a home's static part, prepared once ---------------------------------------------------------------


#: Homes whose static part is kept: an episode reads one home, and the verify stage plays a home's
#: pairs one after another.
PREPARED_HOMES = 8
_PREPARED: "Kept[_Prepared]" = Kept(PREPARED_HOMES)

#: Sets of shut doors whose faces are kept per home.
FACE_SETS_KEPT = 64

#: Objects' solids kept per home, by where the objects are.
MOVED_SOLIDS_KEPT = 4096


def _prepared(home: Home, catalog: Catalog) -> "_Prepared":
    """The static part of a home, kept while the home and the catalog are the same objects and the
    home's layout reads the same (an edited home is prepared again)."""
    return _PREPARED.get_or_make((), lambda: _Prepared(home, catalog), (home, catalog), _static_signature(home))


def _static_signature(home: Home) -> tuple[object, ...]:
    """What a home's static part is made from, read cheaply: ids, kinds, poses, heights, first corners."""
    return (home.home_id,
            tuple((r.id, r.floor_height, r.ceiling_height, tuple(r.polygon[0][0]), len(r.polygon[0]))
                  for r in home.rooms),
            tuple((w.id, w.height, tuple(w.polygon[0][0]), len(w.polygon[0])) for w in home.walls),
            tuple((x.id, x.height, tuple(x.polygon[0][0]), len(x.polygon[0])) for x in home.fixtures),
            tuple((o.id, o.kind, o.sill, o.height, tuple(o.connects), tuple(o.polygon[0][0])) for o in home.openings),
            tuple((f.id, f.catalog_id, f.room, f.height, f.pose.x, f.pose.y, f.pose.yaw) for f in home.furniture),
            tuple((d.id, d.type, d.mount, d.room, d.mounted_on, d.pose.x, d.pose.y, d.pose.z, d.pose.yaw)
                  for d in home.devices),
            tuple((o.id, o.pose.yaw) for o in home.objects))


class _Prepared:
    """What never moves in a home: walls, fixtures, opening pieces and door leaves as faces, furniture and device
    bodies as solids, the static entities, and the owner codes given to them (each visibility
    starts from a copy of those)."""

    def __init__(self, home: Home, catalog: Catalog):
        self.catalog = catalog
        self.codes: dict[str, int] = {}
        openings = home.opening_polygons()
        self.walls = Faces.concat([_wall_segments(home, openings), self._fixture_faces(home)])
        self.opening_pieces, self.leaves = self._opening_segments(home, openings)
        self.furniture = [(self.code(f.id), Solid.of_polygon(polygon_from_rings(f.footprint), 0.0, f.height))
                          for f in home.furniture]
        self.static_entities = [*self._furniture_entities(home), *self._opening_entities(home, openings),
                                *self._device_entities(home), *_doormat_entities(home)]
        self.devices = [(self.code(e.id), e.solid) for e in self.static_entities if e.kind == "device"]
        self.static_stacks = stacks_of([e.solid for e in self.static_entities])
        kinds = np.array([e.kind for e in self.static_entities] or [""])[:len(self.static_entities)]
        self.is_furniture, self.is_device = kinds == "furniture", kinds == "device"
        blockers = np.flatnonzero(self.is_furniture | self.is_device)
        #: The furniture and device bodies as prisms, and each static entity's row among them.
        self.static_prisms = Prisms.of([(self.codes[self.static_entities[i].id], self.static_entities[i].solid)
                                        for i in blockers])
        self.prism_rows = np.full(len(self.static_entities), -1, dtype=np.int64)
        self.prism_rows[blockers] = np.arange(len(blockers))
        self.furniture_by_id = {f.id: f for f in home.furniture}
        self.footprints = [(f.id, polygon_from_rings(f.footprint), f) for f in home.furniture]
        self.object_yaws = _object_yaws(home)
        self.room_grids: dict[str, np.ndarray] = {}
        self._faces: Kept[Faces] = Kept(FACE_SETS_KEPT)
        self.camera_views = frozenset(Viewpoint.of(c) for c in home.cameras)
        #: Each house camera's id by its viewpoint, and the home's id (the names of kept views on disk).
        self.camera_ids = {Viewpoint.of(c): c.id for c in sorted(home.cameras, key=lambda c: c.id, reverse=True)}
        self.home_id, self._home = home.home_id, home
        self._home_hash: str | None = None
        #: Objects' solids by where they are (every episode in the home starts with them where they lie).
        self.moved_solids: Kept[Solid] = Kept(MOVED_SOLIDS_KEPT)
        self._static_frames: dict[tuple[Viewpoint, frozenset[str]], _StaticFrame] = {}

    def static_frame(self, view: Viewpoint, hidden: frozenset[str]) -> "_StaticFrame":
        """What ``view`` shows of the static part, ``hidden`` left out (worked out once per view)."""
        key = (view, hidden)
        hit = self._static_frames.get(key)
        if hit is None:
            hit = self._static_frames[key] = _StaticFrame(self, view, hidden)
        return hit

    def has_static_frame(self, view: Viewpoint, hidden: frozenset[str]) -> bool:
        return (view, hidden) in self._static_frames

    def code(self, entity_id: str) -> int:
        return self.codes.setdefault(entity_id, len(self.codes))

    def kept_view(self, view: Viewpoint, hidden: frozenset[str], arrays: list[np.ndarray]) -> KeptView | None:
        """Where a camera's static view is kept on disk, and its key (None: not kept on disk now)."""
        folder = disk_folder()
        if folder is None:
            return None
        if self._home_hash is None:
            self._home_hash = self._home.content_digest()
        camera = self.camera_ids[view]
        return KeptView(static_visibility.view_file(folder, self.home_id, camera, hidden),
                        static_visibility.view_key(self._home_hash, camera, hidden, arrays))

    def _fixture_faces(self, home: Home) -> Faces:
        """The fixtures' sides, from the floor to their height (a fixture may be any polygon, so its
        sides stand for it: a ray into or out of its column crosses one below the top)."""
        return Faces.concat([Faces.of_polygon(poly, 0.0, x.height, self.code(x.id)) for x, poly in fixture_solids(home)])

    def faces(self, shut: tuple[str, ...]) -> Faces:
        """The walls and fixtures, the opening pieces and the leaves of the ``shut`` doors."""
        return self._faces.get_or_make(
            shut, lambda: Faces.concat([self.walls, self.opening_pieces, *(self.leaves[o] for o in shut)]))

    def _opening_segments(self, home: Home, openings: dict[str, Polygon]) -> tuple[Faces, dict[str, Faces]]:
        top = max((w.height for w in home.walls), default=2.6)
        pieces, leaves = [], {}
        for o in home.openings:
            poly, owner = openings[o.id], self.code(o.id)
            if o.sill > 0:
                pieces.append(Faces.of_polygon(poly, 0.0, o.sill, owner))
            if o.sill + o.height < top:
                pieces.append(Faces.of_polygon(poly, o.sill + o.height, top, owner))
            if o.kind in LEAF_KINDS:
                leaves[o.id] = Faces.of_polygon(poly, o.sill, o.sill + o.height, owner)
        return Faces.concat(pieces), leaves

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
        """Each device's body (homeloop.core.geometry_assets.device_body); a device in a carryable object
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


class _StaticFrame:
    """What a fixed view shows of a home's static part (:mod:`homeloop.sim.static_visibility`): the static
    entities with a pixel box, the number of sample points of each, their :class:`StaticView`, which
    static solids lie ahead of the camera plane, and what a frame reports of each entity but the share
    seen."""

    def __init__(self, prepared: _Prepared, view: Viewpoint, hidden: frozenset[str]):
        entities = prepared.static_entities
        projection = _Projection(view, [e.solid for e in entities])
        self.boxed = [(e, box) for e, box in zip(entities, projection.boxes) if box is not None and e.id not in hidden]
        codes = prepared.codes
        left_out = {codes[h] for h in hidden if h in codes}
        furniture = [(codes[e.id], e.solid) for e, ahead in zip(entities, projection.ahead)
                     if e.kind == "furniture" and ahead]
        devices = [(codes[e.id], e.solid) for e, box in zip(entities, projection.boxes)
                   if e.kind == "device" and box is not None]
        prisms = Prisms.of([(c, s) for c, s in (*furniture, *devices) if c not in left_out])
        samples = [e.solid.samples() for e, _ in self.boxed]
        self.counts = [len(p) for p in samples]
        points = np.vstack(samples) if samples else np.zeros((0, 3))
        width = max((len(e.hidden_by_none_of) for e, _ in self.boxed), default=1)
        ex = _per_point([[codes.get(x, -2) for x in e.hidden_by_none_of] for e, _ in self.boxed], self.counts, width)
        faces = Faces.concat([prepared.walls, prepared.opening_pieces])
        inside = in_frame(view, points)
        arrays = [view.origin, faces.a, faces.b, faces.z0, faces.z1, faces.owner, prisms.normal, prisms.offset,
                  prisms.z0, prisms.z1, prisms.owner, points, ex, inside]
        kept = prepared.kept_view(view, hidden, arrays)
        self.view = StaticView(view.origin, faces, prisms, points, ex, inside, kept)

        # What a frame reports of each boxed entity with points inside it, but the share seen, never
        # changes: worked out here once, as :meth:`GeometricVisibility._look` works it out (a static
        # entity has no head: only people have one).
        self.starts = np.cumsum([0, *self.counts[:-1]])
        inside_counts = np.add.reduceat(inside.astype(np.int64), self.starts).tolist() if self.boxed else []
        self.shown = [k for k, n_in in enumerate(inside_counts) if n_in]
        self.reported = [(e.kind, e.id, e.label, e.rooms, box, (box[2] - box[0]) * (box[3] - box[1]),
                          round(inside_counts[k] / self.counts[k], 4), rounded_position(e.position), e.extra,
                          inside_counts[k]) for k, (e, box) in ((k, self.boxed[k]) for k in self.shown)]

    def seen_now(self, changing: Blocks, resting: dict[str, list[int]]) -> list[Seen]:
        """The boxed entities with sample points inside the frame, as the frame reports them: the share
        seen is of those points clear of the static occluders and of ``changing`` (the doors shut now,
        the objects and people) but what rests on each (``resting``: owner codes by entity id)."""
        if not self.shown:
            return []
        clear = np.add.reduceat(self.view.clear_now(changing, self._resting_ex(resting)).astype(np.int64),
                                self.starts).tolist()
        return [Seen(kind, eid, label, rooms, box, area, in_share, round(clear[k] / n_in, 4), position, None,
                     dict(extra))
                for k, (kind, eid, label, rooms, box, area, in_share, position, extra, n_in)
                in zip(self.shown, self.reported)]

    def _resting_ex(self, resting: dict[str, list[int]]) -> np.ndarray | None:
        """Per sample point, the owner codes of what rests on its entity (padded with -2); None where
        nothing rests on any entity of the frame."""
        if not resting:
            return None
        rows = [resting.get(e.id, []) for e, _ in self.boxed]
        width = max(map(len, rows), default=0)
        return _per_point(rows, self.counts, width) if width else None


# --- the geometric backend ------------------------------------------------------------------------------


class GeometricVisibility:
    """The :class:`Visibility` backend of the module docstring, for one world."""

    def __init__(self, world: World):
        prepared = _prepared(world.home, world.catalog)
        self._prepared = prepared
        self.catalog = world.catalog
        self._codes = dict(prepared.codes)
        self.walls, self.opening_pieces, self.leaves = prepared.walls, prepared.opening_pieces, prepared.leaves
        self.furniture, self.devices = prepared.furniture, prepared.devices
        self.static_entities = prepared.static_entities
        self.room_grids = prepared.room_grids
        self._furniture_by_id, self._footprints = prepared.furniture_by_id, prepared.footprints
        # the solids of what moves, kept while it stays put: id -> (where it is, solids)
        self._object_solids: dict[str, tuple[tuple[object, ...], Solid]] = {}
        self._person_solids: dict[str, tuple[tuple[object, ...], tuple[Solid, Solid, str | None]]] = {}
        # the stacks projecting what moves, alone (False) or after the static entities (True), and their solids
        self._kept_stacks: dict[bool, tuple[list[Solid], list[Stack]]] = {}

    @property
    def static_part(self) -> object:
        """The home's static part as prepared (one object while the home reads the same): what a
        cache of answers about the static part alone is held by."""
        return self._prepared

    def code(self, entity_id: str) -> int:
        """A small integer naming a solid (occluder owners are compared as integers)."""
        return self._codes.setdefault(entity_id, len(self._codes))

    # -- what moves: objects and people

    def _object_entities(self, world: World) -> list[Entity]:
        out = []
        yaws = self._prepared.object_yaws
        for o in world.objects.values():
            entry = self.catalog.objects.get(o.catalog_id)
            if entry is None:
                continue
            solid = self._object_solid(o, entry, yaws.get(o.id, 0.0))
            out.append(Entity("object", o.id, entry.label, _object_rooms(world, o), solid, (o.x, o.y, o.z),
                              (o.id, *self._object_hosts(world, o))))
        return out

    def _object_solid(self, obj: ObjectState, entry: ObjectEntry, yaw: float) -> Solid:
        where = (obj.x, obj.y, obj.z, yaw, obj.catalog_id, lies_tipped(obj))
        kept = self._object_solids.get(obj.id)
        if kept is None or kept[0] != where:
            solid = self._prepared.moved_solids.get_or_make(where, lambda: _resting_box(obj, entry, yaw, where[-1]))
            kept = self._object_solids[obj.id] = (where, solid)
        return kept[1]

    def _object_hosts(self, world: World, obj: ObjectState) -> tuple[str, ...]:
        """The furniture an object lies on, or in when that container is open (then it does not hide it)."""
        place = obj.placement
        if place.kind == "held" or place.furniture is None:
            return ()
        if place.kind == "surface":
            return (place.furniture,)
        host = self._furniture_by_id.get(place.furniture)
        container = next((c for c in host.containers if c.name == place.name), None) if host else None
        if host is None or container is None or container.opened_by is None:
            return (place.furniture,)
        part = next((p for p in host.parts if p.name == container.opened_by), None)
        state = world.parts.get((host.id, container.opened_by))
        opened = part is not None and state is not None and abs(state - part.range[0]) > 1e-6
        return (place.furniture,) if opened else ()

    def _person_entities(self, world: World) -> list[Entity]:
        out = []
        for p in world.people.values():
            if p.room is None:
                continue
            entry = self.catalog.people.get(p.catalog_id)
            body, head, host = self._person_solid(p, entry)
            extra = {"posture": p.posture, "name": p.name, "role": p.role,
                     "enrolled": bool(entry.enrolled) if entry is not None else False}
            out.append(Entity("person", p.id, "person", (p.room,), body, (p.x, p.y, 0.0),
                              (p.id,) + ((host,) if host else ()), head=head, extra=extra))
        return out

    def _person_solid(self, p: PersonState, entry: PersonEntry | None) -> tuple[Solid, Solid, str | None]:
        """A person's body and head solids, and the furniture they sit or lie on."""
        where = (p.x, p.y, p.yaw, p.posture, p.catalog_id)
        kept = self._person_solids.get(p.id)
        if kept is None or kept[0] != where:
            stature, shoulders = (entry.height, entry.shoulder_width) if entry is not None else UNLISTED_PERSON_M
            host, base = self._support(p.x, p.y) if p.posture != "standing" else (None, 0.0)
            body, head = person_solids(p.x, p.y, p.yaw, p.posture, stature, shoulders, base)
            kept = self._person_solids[p.id] = (where, (body, head, host))
        return kept[1]

    def _support(self, x: float, y: float) -> tuple[str | None, float]:
        """The furniture under a point a person sits or lies on, and its highest surface there."""
        point = shapely.Point(x, y)
        for fid, footprint, f in self._footprints:
            if footprint.covers(point):
                tops = [s.height for s in f.surfaces if polygon_from_rings(s.polygon).covers(point)]
                return fid, max(tops, default=0.0)
        return None, 0.0

    def entities(self, world: World) -> list[Entity]:
        """Every entity a frame may show now: furniture, openings, devices and places, then the
        objects and people where they are (the renderer's id buffer names the same entities)."""
        return [*self.static_entities, *self._object_entities(world), *self._person_entities(world)]

    # -- a frame

    def frame(self, world: World, view: Viewpoint, hide: Iterable[str] = ()) -> Frame:
        """The entities a viewpoint shows and the hazards in view (``hide``: entities not shown,
        such as the camera itself). A house camera's view of the static part is worked out once
        (:mod:`homeloop.sim.static_visibility`)."""
        hidden = set(hide)
        moving = [*self._object_entities(world), *self._person_entities(world)]
        resting = resting_on(moving)  # only what moves rests on something
        if static_visibility.CACHED and view in self._prepared.camera_views:
            static, boxes, changing = self._kept_view(world, view, moving, hidden)
            boxed = [(e, box) for e, box in zip(moving, boxes) if box is not None and e.id not in hidden]
            fixed = static.seen_now(changing, self._resting_codes(resting))
            return self._look(world, view, boxed, Either(static.view.occlusion, changing), resting, fixed)
        entities = [*self.static_entities, *moving]
        stacks = self._stacks([e.solid for e in moving], after_static=True)
        projection = _Projection(view, [e.solid for e in entities], stacks)
        boxed = [(e, box) for e, box in zip(entities, projection.boxes) if box is not None and e.id not in hidden]
        occlusion = Occlusion(view.origin, *self._occluders(world, view, entities, hidden, projection))
        return self._look(world, view, boxed, occlusion, resting)

    def seen(self, world: World, view: Viewpoint, entity_id: str, hide: Iterable[str] = (), *,
             still: bool = False) -> Seen | None:
        """What :meth:`frame` would report of one entity, or None where it would not show it: the
        same rule, with that entity's samples alone tested (no other moving entity's, no hazards'),
        from a house camera's kept view of the static part where a frame has made it already (making
        one for a single entity costs more than testing the entity against everything). ``still``:
        of a static entity, with the objects and people left out (they neither show nor hide)."""
        hidden = set(hide)
        moving = [] if still else [*self._object_entities(world), *self._person_entities(world)]
        entities = [*self.static_entities, *moving]
        index = next((i for i, e in enumerate(entities) if e.id == entity_id), -1)
        n = len(self.static_entities)
        if index < 0 or entity_id in hidden or pixel_box(view, entities[index].solid) is None:
            return None  # (out of the picture: nothing else need be projected)
        target = entities[index]
        resting = resting_on(moving)
        if static_visibility.CACHED and self._prepared.has_static_frame(view, frozenset(hidden)):
            static, boxes, changing = self._kept_view(world, view, moving, hidden)
            if index < n:
                return next((s for s in static.seen_now(changing, self._resting_codes(resting)) if s.id == entity_id),
                            None)
            occlusion: Blocks = Either(static.view.occlusion, changing)
            box = boxes[index - n]
        else:
            projection = _Projection(view, [e.solid for e in entities], self._stacks([e.solid for e in moving], True))
            box = projection.boxes[index]
            occlusion = Occlusion(view.origin, *self._occluders(world, view, entities, hidden, projection))
        if box is None:
            return None
        shown = self._look(world, view, [(target, box)], occlusion, resting, hazards=False)
        return shown.entities[0] if shown.entities else None

    def _kept_view(self, world: World, view: Viewpoint, moving: list[Entity],
                   hidden: set[str]) -> tuple[_StaticFrame, list[PixelBox | None], Occlusion]:
        """A house camera's kept view of the static part, the boxes of what moves, and what may hide
        something now besides the static part (shut doors, objects and people ahead of the camera)."""
        static = self._prepared.static_frame(view, frozenset(hidden))
        solids = [e.solid for e in moving]
        projection = _Projection(view, solids, self._stacks(solids, after_static=False))
        shut, movable = self._changing(world, moving, projection.ahead, hidden)
        return static, projection.boxes, Occlusion(view.origin, Faces.concat([self.leaves[o] for o in shut]), movable)

    def _resting_codes(self, resting: dict[str, tuple[str, ...]]) -> dict[str, list[int]]:
        return {eid: [self.code(x) for x in ids] for eid, ids in resting.items()}

    def _stacks(self, solids: list[Solid], after_static: bool) -> "list[Stack]":
        """The stacks projecting ``solids`` (what moves), indexed after the static entities' (and joined
        to their stacks) when ``after_static``: kept while they are the same solids (in most frames
        nothing has moved since the last)."""
        kept = self._kept_stacks.get(after_static)
        if kept is None or len(kept[0]) != len(solids) or any(a is not b for a, b in zip(kept[0], solids)):
            if after_static:
                stacks = _joined(self._prepared.static_stacks + stacks_of(solids, len(self.static_entities)))
            else:
                stacks = stacks_of(solids)
            kept = self._kept_stacks[after_static] = (solids, stacks)
        return kept[1]

    def _changing(self, world: World, moving: list[Entity], ahead: np.ndarray,
                  hidden: set[str]) -> tuple[tuple[str, ...], Prisms]:
        """What may hide something that changes between frames: the doors shut now, and the solids of
        the objects and people ahead of the camera plane."""
        openings = world.openings
        shut = tuple(oid for oid in self.leaves if oid in openings and not openings[oid].open)
        left_out = {self._codes[h] for h in hidden if h in self._codes}
        movable = [(c, e.solid) for c, e in ((self.code(e.id), e) for e, front in zip(moving, ahead)
                                             if front and e.kind in ("object", "person")) if c not in left_out]
        return shut, Prisms.of(movable)

    def _occluders(self, world: World, view: Viewpoint, entities: list[Entity], hidden: Iterable[str] = (),
                   projection: "_Projection | None" = None) -> tuple[Faces, Prisms]:
        """The faces (walls, fixtures, opening pieces, shut leaves) and the solids that may hide something in
        the frame: furniture, objects and people ahead of the camera plane, and the device bodies the
        frame shows (they are many and small: only those can cross a ray to what it shows). ``entities``
        are the static ones, then what moves (:meth:`entities`)."""
        projection = projection or _Projection(view, [e.solid for e in entities])
        prepared, n = self._prepared, len(self.static_entities)
        shut, movable = self._changing(world, entities[n:], projection.ahead[n:], set(hidden))
        left_out = [self._codes[h] for h in hidden if h in self._codes]
        shown = np.array([b is not None for b in projection.boxes[:n]], dtype=bool)
        rows = prepared.prism_rows[(prepared.is_furniture & projection.ahead[:n]) | (prepared.is_device & shown)]
        static = prepared.static_prisms.take(rows[~np.isin(prepared.static_prisms.owner[rows], left_out)])
        return prepared.faces(shut), Prisms.concat([static, movable])

    def _look(self, world: World, view: Viewpoint, boxed: list[tuple[Entity, PixelBox]], occlusion: Blocks,
              resting: dict[str, tuple[str, ...]], fixed: list[Seen] | None = None, hazards: bool = True) -> Frame:
        """The frame: ``fixed`` (what is known already of the static part), then the ``boxed`` entities
        with samples inside it, and the hazards in view (unless not ``hazards``); every sample point of
        ``boxed`` (bodies, heads) and of the hazards tested in one batch (``resting``: what rests on each,
        :func:`resting_on`)."""
        probes = _Probes()
        bodies = [probes.add(e.solid.samples(), self._ex(e, resting)) for e, _ in boxed]
        heads = {i: probes.add(e.head.samples(), self._ex(e, resting))
                 for i, (e, _) in enumerate(boxed) if e.head is not None}
        hazards_in = [(h, probes.add(h[3], ())) for h in (hazard_points(self, world) if hazards else ()) if len(h[3])]
        inside, clear = probes.look(view, occlusion)
        counts = probes.counts
        seen = list(fixed) if fixed else []
        for i, (e, box) in enumerate(boxed):
            n_in, n_clear = inside[bodies[i]], clear[bodies[i]]
            total = len(e.solid.samples())
            if n_in == 0:
                continue
            head_seen = None
            if e.head is not None:
                h = heads[i]
                head_seen = round((inside[h] / counts[h]) * ((clear[h] / inside[h]) if inside[h] else 0.0), 4)
            seen.append(Seen(e.kind, e.id, e.label, e.rooms, box, (box[2] - box[0]) * (box[3] - box[1]),
                             round(n_in / total, 4), round(n_clear / n_in, 4), rounded_position(e.position),
                             head_seen, dict(e.extra)))
        shown = [{"kind": kind, "source": source, "rooms": list(rooms), "seen_fraction": round(clear[h] / counts[h], 4)}
                 for (kind, source, rooms, _), h in hazards_in if inside[h] and clear[h]]
        return Frame(seen, shown)

    def _ex(self, entity: Entity, resting: dict[str, tuple[str, ...]]) -> list[int]:
        """The owner codes of the solids that never hide ``entity`` (:func:`not_hiding`)."""
        return [self.code(x) for x in not_hiding(entity, resting)]


class _Probes:
    """Groups of sample points looked at from one camera at once: per group, how many lie inside
    the frame and how many of those no occluder hides (each ray ignoring its group's owners)."""

    def __init__(self) -> None:
        self.points: list[np.ndarray] = []
        self.ex: list[list[int]] = []
        self.counts: list[int] = []

    def add(self, points: np.ndarray, ex: Iterable[int]) -> int:
        """Add a group; its index."""
        self.points.append(points)
        self.ex.append(list(ex))
        self.counts.append(len(points))
        return len(self.counts) - 1

    def look(self, view: Viewpoint, occlusion: Blocks) -> tuple[list[int], list[int]]:
        """Per group: the points inside the frame, and those of them seen."""
        if not self.points:
            return [], []
        points = np.vstack(self.points)
        ex = _per_point(self.ex, self.counts, max(1, max(len(x) for x in self.ex)))
        inside = in_frame(view, points)
        clear = np.zeros(len(points), dtype=bool)
        rays = np.flatnonzero(inside)
        clear[rays] = ~blocked_in_chunks(occlusion, points, ex, rays)
        starts = np.cumsum([0, *self.counts[:-1]])
        return (np.add.reduceat(inside.astype(np.int64), starts).tolist(),
                np.add.reduceat(clear.astype(np.int64), starts).tolist())


def _per_point(rows: list[list[int]], counts: list[int], width: int) -> np.ndarray:
    """Each group's owner codes, padded with -2 (no owner) to ``width``, repeated for each of its
    ``counts`` sample points: the owners each ray ignores (:func:`~homeloop.sim.occlusion.blocked`)."""
    padded = np.array([r + [-2] * (width - len(r)) for r in rows], dtype=np.int64).reshape(len(rows), width)
    return np.repeat(padded, counts, axis=0)


class _Projection:
    """Every solid of a frame projected at once: its pixel box (as :func:`pixel_box` gives it) and
    whether any corner lies ahead of the camera plane (only those can hide what the frame shows).
    Solids are stacked by corner count; a stack's camera coordinates come out as each solid's alone."""

    def __init__(self, view: Viewpoint, solids: list[Solid], stacks: "list[Stack] | None" = None):
        """``stacks``: the solids' stacks when they are known already (see :func:`stacks_of`)."""
        self.boxes: list[tuple[int, int, int, int] | None] = [None] * len(solids)
        self.ahead = np.zeros(len(solids), dtype=bool)
        for members, corners, edges in (stacks_of(solids) if stacks is None else stacks):
            self._project(view, members, corners, edges)

    def _project(self, view: Viewpoint, members: list[int], corners: np.ndarray, edges: np.ndarray) -> None:
        x, y, depth = view.camera_axes(corners)  # each (K, corners)
        self.ahead[members] = (depth > 0).any(axis=1)
        front = depth >= NEAR_M
        with np.errstate(divide="ignore", invalid="ignore"):  # read only where front
            u, v = _pixels(view, x, y, depth)
        bounds = [np.where(front, u, np.inf).min(axis=1), np.where(front, v, np.inf).min(axis=1),
                  np.where(front, u, -np.inf).max(axis=1), np.where(front, v, -np.inf).max(axis=1)]
        cross = front[:, edges[:, 0]] != front[:, edges[:, 1]]  # edges the near plane cuts
        if cross.any():
            _widen_by_cuts(view, bounds, (x, y, depth), edges, cross)
        size = np.array([[view.width], [view.height]])
        low = np.floor(np.clip(np.array(bounds[:2]), 0, size)).astype(np.int64)  # (2, K); a solid with no
        high = np.ceil(np.clip(np.array(bounds[2:]), 0, size)).astype(np.int64)  # corner in front has no box
        boxed = front.any(axis=1) & (high > low).all(axis=0)
        for k, (x0, y0, x1, y1) in zip(np.flatnonzero(boxed).tolist(), np.vstack([low, high])[:, boxed].T.tolist()):
            self.boxes[members[k]] = (x0, y0, x1, y1)


def _widen_by_cuts(view: Viewpoint, bounds: list[np.ndarray], cam: tuple[np.ndarray, np.ndarray, np.ndarray],
                   edges: np.ndarray, cross: np.ndarray) -> None:
    """Widen solids' pixel bounds (u and v least, then most, per solid) to the points where the near
    plane cuts their edges (``cross``: solid x edge), each worked out as :func:`_box_of` does."""
    k, j = np.nonzero(cross)
    a, b = edges[j, 0], edges[j, 1]
    x, y, depth = cam
    t = (NEAR_M - depth[k, a]) / (depth[k, b] - depth[k, a])
    cut = [c[k, a] + t * (c[k, b] - c[k, a]) for c in (x, y, depth)]
    u, v = _pixels(view, *cut)
    for bound, values, at in zip(bounds, (u, v, u, v), (np.minimum.at, np.minimum.at, np.maximum.at, np.maximum.at)):
        at(bound, k, values)


#: Solids stacked for :class:`_Projection`: their indices, their corners (K, corners, 3) and the edges
#: (corner index pairs) they share.
Stack = tuple[list[int], np.ndarray, np.ndarray]


def stacks_of(solids: list[Solid], first: int = 0) -> list[Stack]:
    """The solids in one stack, indexed from ``first``: each footprint padded to the most corners by
    repeating its last corner, which adds only corners already there and edges of no length (so
    a solid's box comes out as its own)."""
    if not solids:
        return []
    most = max(len(s.ring) for s in solids)
    corners = np.stack([_padded_corners(s, most) for s in solids])
    return [(list(range(first, first + len(solids))), corners, _edge_index(most))]


def _padded_corners(solid: Solid, most: int) -> np.ndarray:
    """A solid's corners as :func:`stacks_of` pads them to ``most`` footprint corners."""
    n, own = len(solid.ring), solid.corners()
    if n == most:
        return own
    return np.concatenate([own[:n], np.repeat(own[n - 1:n], most - n, axis=0),
                           own[n:], np.repeat(own[2 * n - 1:], most - n, axis=0)])


def _joined(stacks: list[Stack]) -> list[Stack]:
    """The stacks with those of one width made one (fewer, larger arrays to project)."""
    by_width: dict[int, list[Stack]] = {}
    for stack in stacks:
        by_width.setdefault(stack[1].shape[1], []).append(stack)
    return [same[0] if len(same) == 1 else
            ([i for members, _, _ in same for i in members], np.concatenate([c for _, c, _ in same]), same[0][2])
            for same in by_width.values()]


@functools.lru_cache(maxsize=None)
def _edge_index(n: int) -> np.ndarray:
    """:meth:`Solid.edge_index` of every solid with ``n`` footprint corners (read-only: shared)."""
    return _frozen(np.array([(i, (i + 1) % n) for i in range(n)] + [(n + i, n + (i + 1) % n) for i in range(n)] +
                    [(i, n + i) for i in range(n)]))


def _pixels(view: Viewpoint, x: np.ndarray, y: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixel u and v of camera coordinates (:meth:`Viewpoint.camera_axes`) with depth > 0."""
    f = view.focal_px
    return view.width / 2 + f * x / depth, view.height / 2 - f * y / depth


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


def in_frame(view: Viewpoint, points: np.ndarray) -> np.ndarray:
    """Whether each point lies in front of the camera and inside the image."""
    x, y, depth = view.camera_axes(points)
    ok = depth >= NEAR_M
    with np.errstate(divide="ignore", invalid="ignore"):  # read only where ok
        u, v = _pixels(view, x, y, depth)
    inside: np.ndarray = ok & (u >= 0) & (u < view.width) & (v >= 0) & (v < view.height)
    return inside


def pixel_box(view: Viewpoint, solid: Solid) -> tuple[int, int, int, int] | None:
    """The solid's projected box (x0, y0, x1, y1) in whole pixels, clipped to the frame; None if outside."""
    return _box_of(view, view.camera_coords(solid.corners()), solid)


def _box_of(view: Viewpoint, cam: np.ndarray, solid: Solid) -> tuple[int, int, int, int] | None:
    """:func:`pixel_box` from the camera coordinates of the solid's corners."""
    front = cam[:, 2] >= NEAR_M
    if not front.any():
        return None
    pts = [cam[front]]
    edges = solid.edge_index()
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


def rounded_position(p: tuple[float, float, float]) -> tuple[float, float, float]:
    """A position as a frame reports it (to 0.1 mm)."""
    return round(p[0], 4), round(p[1], 4), round(p[2], 4)


def _object_rooms(world: World, obj: ObjectState) -> tuple[str, ...]:
    place = obj.placement
    if place.kind == "held":
        room = _holder_room(world, place.holder)
        return (room,) if room else ()
    return (place.room,) if place.room else ()


def _holder_room(world: World, holder: str | None) -> str | None:
    """The room of whoever holds an object (the robot or a person), None if they are not there."""
    if holder == "robot":
        return world.robot.room if world.robot is not None else None
    person = world.people.get(holder) if holder is not None else None
    return person.room if person is not None else None


def lies_tipped(obj: ObjectState) -> bool:
    """Whether an object lies knocked over on its side (a scenario tips it: ``props['tipped']``)."""
    return bool(obj.props.get("tipped"))


def rest_matrix(entry: ObjectEntry, tipped: bool) -> np.ndarray:
    """How an object rests, in its own frame (x its length, y its width, z up from its base): upright,
    or tipped over onto its side about its length, its top toward -y and its side on the ground,
    centred where it stood. Both visibility backends pose it so (:func:`resting_size`; the renderer)."""
    if not tipped:
        return np.eye(4)
    d = entry.dimensions
    matrix = np.eye(4)
    matrix[:3, :3] = [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]  # a quarter turn about x
    matrix[:3, 3] = (0.0, d.height / 2, d.width / 2)
    return matrix


def resting_size(entry: ObjectEntry, tipped: bool) -> tuple[float, float, float]:
    """Length, width and height of an object's box as it rests (:func:`rest_matrix`)."""
    d = entry.dimensions
    corners = np.array([(x, y, z, 1.0) for x in (-d.depth / 2, d.depth / 2) for y in (-d.width / 2, d.width / 2)
                        for z in (0.0, d.height)])
    placed = corners @ rest_matrix(entry, tipped).T
    size = placed[:, :3].max(axis=0) - placed[:, :3].min(axis=0)
    return float(size[0]), float(size[1]), float(size[2])


def _object_yaws(home: Home) -> dict[str, float]:
    return {o.id: o.pose.yaw for o in home.objects}


def _wall_segments(home: Home, openings: dict[str, Polygon]) -> Faces:
    """Wall footprints less their openings, blocking from the floor to the wall's top."""
    holes = unary_union(list(openings.values())) if openings else None
    parts = []
    for w in home.walls:
        poly = polygon_from_rings(w.polygon)
        if holes is not None:
            poly = poly.difference(holes)
        parts.append(Faces.of_polygon(poly, 0.0, w.height, -1))
    return Faces.concat(parts)


# --- hazards in view ------------------------------------------------------------------------------------


#: A hazard's sample points: (kind, source, rooms, points (N, 3)).
HazardPoints = tuple[str, str, tuple[str, ...], np.ndarray]


def hazard_points(vis: GeometricVisibility, world: World) -> list[HazardPoints]:
    """Sample points of every hazard now: (kind, source, rooms, points)."""
    return [*_fire_points(world), *_smoke_points(vis, world), *_water_points(vis, world)]


def _room_grid(vis: GeometricVisibility, world: World, room_id: str) -> np.ndarray:
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


def _fire_points(world: World) -> list[HazardPoints]:
    """Flames over each burning pan."""
    cooking = world.running(Cooking)
    if cooking is None:
        return []
    out: list[HazardPoints] = []
    for pan in cooking.pans():
        obj = world.objects.get(pan.id)
        if not pan.burning or obj is None:
            continue
        entry = world.catalog.objects.get(obj.catalog_id)
        rim = obj.z + (entry.dimensions.height if entry is not None else 0.0)
        pts = np.array([(obj.x, obj.y, rim + h) for h in FLAME_HEIGHTS_M])
        out.append(("fire", pan.id, _object_rooms(world, obj), pts))
    return out


def _smoke_points(vis: GeometricVisibility, world: World) -> list[HazardPoints]:
    """The smoke layer under the ceiling of each room where it is thick enough to see."""
    smoke = world.running(Smoke)
    if smoke is None:
        return []
    out: list[HazardPoints] = []
    for room in world.home.rooms:
        if smoke.room_density(room.id) < SMOKE_SEEN_DENSITY:
            continue
        grid = _room_grid(vis, world, room.id)
        thick = grid[smoke.densities_at(room.id, grid) >= SMOKE_SEEN_DENSITY]
        if len(thick):
            z = room.ceiling_height - SMOKE_LAYER_DEPTH_M
            out.append(("smoke", room.id, (room.id,), np.column_stack([thick, np.full(len(thick), z)])))
    return out


def _water_points(vis: GeometricVisibility, world: World) -> list[HazardPoints]:
    """Water on the floor around each leak or spill, and the spot it comes from."""
    water = world.running(Water)
    if water is None:
        return []
    out: list[HazardPoints] = []
    for source in water.sources():
        if source.litres <= 0.0:
            continue
        grid = _room_grid(vis, world, source.room)
        near = grid[np.hypot(grid[:, 0] - source.x, grid[:, 1] - source.y) <= source.radius]
        flat = np.vstack([np.array([[source.x, source.y]]), near])
        out.append(("water", source.name, (source.room,), np.column_stack([flat, np.full(len(flat), 0.01)])))
    return out


def _resting_box(obj: ObjectState, entry: ObjectEntry, yaw: float, tipped: bool) -> Solid:
    """An object's solid where it rests: its catalog box, on its side when it lies ``tipped``."""
    length, width, height = resting_size(entry, tipped)
    return Solid.box(obj.x, obj.y, yaw, length, width, obj.z, obj.z + height)
