"""Devices and cameras: equip a furnished home with the 20 networked device types.

:func:`equip` is the stage after furnishing. It returns a new home (the input
is not changed) with devices and house cameras placed by the rules below,
plus notes and failures. It reads only the home file (its fixtures included)
and the catalog. The same home, catalog and generator state give the same
home file bytes; device ids are ``<type>_<room>_<n>``.

Placement, per the catalog (catalog/devices.yaml, docs/catalog.md), whose
numbers are the only ones used:

- smoke sensors on the ceiling, at least ``min_wall_distance`` (0.1 m) from
  walls and at least the ``smoke_sensor_cooking_distance`` rule's
  ``min_distance`` (3.0 m, horizontal, to the nearest point of the footprint)
  from every cooking appliance (NFPA 72). The room with the range gets one;
  where the kitchen has no such place, in an adjoining dining room, hall or
  living room its smoke reaches with every door shut (through an open
  passage: homeloop.sim.dynamics.smoke.rooms_reached), near where smoke comes
  through; else at the rule's ``fallback_distance`` (1.8 m) in the kitchen,
  recorded in the home's ``placement_exceptions``; else, last, in such a room
  behind a door, which is marked open. A rule no room can meet is one failure
  line naming the rule and its catalog file.
  One in every bedroom, one outside each sleeping area, one in each room of a
  type the catalog lists (corridors, living rooms). Positions come from a grid
  of ceiling points, nearest the room's centre;
- a leak sensor on the floor beside each dishwasher and washer, on free floor
  (not in the counter run the appliance stands in: then in front of it);
- contact sensors on exterior doors and openable exterior windows; lock and
  doorbell (outside) at each entrance door; a garage door opener at each
  garage door;
- a ceiling light at the centre of each indoor room and the garage, an
  outdoor wall light for outdoor spaces entered by a door, a switch beside
  the room's door controlling them; lamps on a living room's side table and a
  bedroom's nightstand, standing at a free spot of its top (:func:`lamp_spot`:
  clear of what lies there, a back corner where that is free), a floor lamp in
  a living room whose side table has none;
- plugs (1-3 per habitable room, the first at the TV unit or desk); roller
  blinds on bedroom and office windows, curtains on living-room windows; one
  thermostat; the water main beside the kitchen sink (else the washer, else
  the garage: the home's sink and counter fixtures); stove, washer and dryer devices on their appliances; a soil
  sensor in each potted plant; the two wearables on the resident;
- dome cameras in ceiling corners, turned to the room's centre and tilted
  down: the entrance hall (seeing the entrance door), the porch (or a doorbell
  camera), living areas, kitchens, dining rooms, corridors, offices and
  outdoor spaces for the agent (at most :attr:`EquipProfile.agent_camera_cap`,
  the rest evaluation-only); laundries and garages evaluation-only; bedrooms
  (people masked) and bathrooms (image blocked) evaluation-only; a second,
  evaluation-only camera in rooms the first sees poorly. Homes with fewer than
  :attr:`EquipProfile.agent_camera_min` agent cameras give the agent the
  laundry's and garage's cameras, then second views of the largest common rooms.

Candidate points (ceiling grids, wall points, floor grids, camera coverage
points) are measured in arrays (:mod:`homeloop.pipeline.devices_geometry`):
a shortcut (a bounds test, a distance computed with numpy, a room no wall
comes near) decides only where its decision cannot differ from measuring the
pair with shapely, so every placement is the one measuring each candidate
gives. The new home shares the input's unchanged parts (rooms, walls,
furniture, objects): they are validated models already, and only what ties
the parts together is checked again.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import shapely
from shapely import Point, Polygon, affinity
from shapely.geometry.base import BaseGeometry
from shapely.ops import polylabel

from homeloop import navigation
from homeloop.catalog import Catalog, CatalogError, DeviceEntry, KeepAway
from homeloop.check import (
    CAMERA_RANGE,
    OBJECT_PENETRATION,
    ENTRANCE_INSIDE_DEPTH,
    LEAK_SENSOR,
    LIGHT_SWITCH,
    PLUG,
    SMOKE_SENSOR,
    WATER_MAIN,
    inner_room,
    needs_contact_sensor,
    opening_face_point,
    room_adjacency,
    sight_blockers,
    sleeping_area_exits,
    smoke_distance_rule,
)
from homeloop.geometry import face_side, opening_axes
from homeloop.geometry_assets import BodySize, device_body_size, device_solid, overlapping, placed_solids
from homeloop.home import (
    Camera,
    CameraPose,
    Device,
    Furniture,
    Home,
    HomeObject,
    Opening,
    PlacementException,
    Pose,
    Room,
    Surface,
    camera_from_catalog,
    device_from_catalog,
    polygon_from_rings,
)
from homeloop.pipeline.devices_geometry import Shapes, ccw, clear_of, heading, holds, ring_segments, wall_point_array
from homeloop.plan import BEDROOM_SUBTYPES, KITCHEN_SUBTYPES
from homeloop.sim.dynamics.smoke import rooms_reached

# --- rules and distances ------------------------------------------------------------

#: Spacing (m) of the candidate ceiling points searched for a smoke sensor.
SMOKE_GRID_STEP = 0.1
#: The search for a smoke sensor's place looks this far (m) about its target first, then twice as far ...
SMOKE_SEARCH_RADIUS = 0.5
#: Furniture whose footprint comes this close (m) to a wall device's centre may reach its body:
#: the device's half-width plus, with room to spare, what a closed part (a wardrobe's door) stands
#: proud of a footprint (furnishing leaves every part closed).
WALL_BODY_NEAR = 0.3
#: Rooms next to a kitchen that may hold the kitchen's smoke sensor (reached through a door or passage).
KITCHEN_SENSOR_NEIGHBOURS = ("DINING", "CORRIDOR", "LIVING_ROOM", "LIVING_DINING", "KITCHEN_DINING")
#: Exit rooms of a sleeping area, in order of preference for its smoke sensor.
EXIT_PREFERENCE = ("CORRIDOR", "LIVING_ROOM", "LIVING_DINING", "DINING", "KITCHEN_DINING", "KITCHEN")
#: A new smoke sensor this close (m) to one already in the room is not added; the existing one serves.
SMOKE_REUSE_DISTANCE = 1.5

#: A leak sensor's puck sits this far (m) from the appliance's side (within 0.3 m, catalog).
LEAK_SIDE_GAP = 0.08
#: A device on the floor or a wall keeps this far (m) from furniture and objects (and a floor
#: device from fixtures) beyond its own body.
DEVICE_GAP = 0.005
#: A lamp on a top keeps this far (m) from the things on it; a floor lamp's centre this far (m)
#: from furniture and objects on the floor.
LAMP_GAP = 0.005
FLOOR_LAMP_CLEARANCE = 0.25
#: Wall devices keep this distance (m) from the edge of any door or window.
WALL_OPENING_CLEARANCE = 0.3
#: Spacing (m) of candidate wall points for plugs and the thermostat.
WALL_STEP = 0.3
#: Wall-mounted devices sit this far (m) inside the room, on the wall face.
WALL_INSET = 0.01
#: A light switch's centre lies this far (m) beyond the door's edge (within the catalog's max_distance).
SWITCH_DOOR_OFFSET = 0.15
#: Where the door's own wall has no place: spacing (m) of the wall points searched near the door,
#: and how far (m) a switch keeps from the edge of any opening.
SWITCH_SEARCH_STEP = 0.05
SWITCH_OPENING_GAP = 0.1
#: Height (m) of outdoor wall lights beside the door.
OUTDOOR_LIGHT_HEIGHT = 2.2
#: Height (m) of a lock (door handle height).
LOCK_HEIGHT = 1.0

#: Rooms with plugs (habitable rooms).
PLUG_ROOMS = frozenset(BEDROOM_SUBTYPES | KITCHEN_SUBTYPES | {"LIVING_ROOM", "LIVING_DINING", "DINING", "OFFICE"})
#: Furniture classes a plug serves, in order of preference (catalog plug.attached_to).
PLUG_FURNITURE = ("tv_unit", "desk")
LIVING_SUBTYPES = frozenset({"LIVING_ROOM", "LIVING_DINING"})
BATHROOM_SUBTYPES = frozenset({"BATHROOM"})

#: Rooms whose camera may be given to the agent (common areas); outdoor spaces too.
AGENT_CAMERA_SUBTYPES = ("LIVING_ROOM", "LIVING_DINING", "KITCHEN", "KITCHEN_DINING", "DINING", "CORRIDOR", "OFFICE")
#: Rooms with an evaluation-only camera.
EVALUATION_CAMERA_SUBTYPES = frozenset(BEDROOM_SUBTYPES | BATHROOM_SUBTYPES | {"WASH_AND_DRY_ROOM", "GARAGE"})
#: Rooms smaller than this (m²) get no camera (closets, tiny halls); the entrance room always does.
MIN_CAMERA_ROOM_AREA = 3.0
#: A camera sits this far (m) from its corner along the corner's bisector, ...
CAMERA_CORNER_INSET = 0.2
#: ... this far (m) below the ceiling ...
CAMERA_CEILING_DROP = 0.1
#: ... tilted down between these angles (degrees), aimed at a point this high (m) at the room's centre.
CAMERA_PITCH_RANGE = (-45.0, -30.0)
CAMERA_AIM_HEIGHT = 1.0
#: The entrance door is kept this far (degrees) inside the edge of the entrance camera's view.
CAMERA_EDGE_MARGIN = 10.0
#: Spacing (m) of floor points used to score what a camera sees.
COVERAGE_STEP = 0.5
#: Doorbell camera: height (m) beside the door and tilt (degrees).
DOORBELL_CAMERA_HEIGHT = 1.4
DOORBELL_CAMERA_PITCH = -10.0


@dataclass(frozen=True)
class EquipProfile:
    """Knobs of one equipping policy."""

    name: str = "default"
    #: Cameras given to the agent at most (docs/pipeline.md: 6-10 per further home).
    agent_camera_cap: int = 10
    #: Cameras given to the agent at least, where the home has the common rooms for them:
    #: evaluation cameras of rooms without privacy are given first, then second views of
    #: the largest common rooms.
    agent_camera_min: int = 6
    #: ... and more in larger homes: this many per space, rounded, up to the cap
    #: (the further homes of docs/pipeline.md give the agent 6-10 cameras for 8-15 rooms).
    agent_cameras_per_space: float = 0.7
    #: Rooms need at least this area (m²) for a second view given to the agent.
    agent_second_view_min_area: float = 8.0
    #: Add a second, evaluation-only camera where the first sees less than this share of the room.
    second_camera_below: float | None = 0.6
    #: Rooms need at least this area (m²) for a second camera.
    second_camera_min_area: float = 12.0


DEFAULT_PROFILE = EquipProfile()
#: The house (docs/pipeline.md): one camera per space, 8 for the agent and 6 evaluation-only.
HOUSE_PROFILE = EquipProfile(name="house", agent_camera_cap=8, second_camera_below=None)


@dataclass
class EquipResult:
    """The equipped home, what was decided on the way, and what could not be placed."""

    home: Home
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


# --- small geometry ------------------------------------------------------------------


#: A room holds its centroid well when the centroid lies this far (m) inside it.
CENTRE_DEPTH = 0.3


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


def visible_mask(cam: tuple[float, float, float], hfov_deg: float, pts: np.ndarray, blocking: BaseGeometry,
                 max_range: float = CAMERA_RANGE) -> np.ndarray:
    """Which points a camera at (x, y, yaw) sees: in the cone, in range, no wall between."""
    return visible_masks(np.array([cam], dtype=float), hfov_deg, pts, blocking, max_range)[0]


def visible_masks(cams: np.ndarray, hfov_deg: float, pts: np.ndarray, blocking: BaseGeometry | None,
                  max_range: float = CAMERA_RANGE) -> np.ndarray:
    """:func:`visible_mask` of several cameras (rows x, y, yaw), shape (cameras, points)."""
    if len(pts) == 0 or len(cams) == 0:
        return np.zeros((len(cams), len(pts)), dtype=bool)
    d = pts[None, :, :] - cams[:, None, :2]
    dist = np.hypot(d[..., 0], d[..., 1])
    off = np.abs(np.remainder(np.arctan2(d[..., 1], d[..., 0]) - cams[:, 2, None] + math.pi, 2 * math.pi) - math.pi)
    ok = (dist <= max_range) & (off <= math.radians(hfov_deg) / 2)
    if blocking is None or blocking.is_empty:
        return ok
    for (x, y, _), sees in zip(cams.tolist(), ok):
        if sees.any():
            idx = np.nonzero(sees)[0]
            coords = np.empty((len(idx), 2, 2))
            coords[:, 0, 0], coords[:, 0, 1] = x, y
            coords[:, 1, :] = np.asarray(pts[idx], dtype=float)
            sees[idx] = ~shapely.intersects(shapely.linestrings(coords), blocking)
    return ok


# --- devices of catalog types ---------------------------------------------------------

#: Devices made by :func:`device_from_catalog`, by catalog entry (identity), mount and present
#: values: each new device of the kind copies one (:func:`new_device`).
_MADE: dict[tuple, tuple[DeviceEntry, Device]] = {}
_MADE_SIZE = 2000


def new_device(entry: DeviceEntry, device_id: str, room: str | None, pose: Pose, *, name: str | None = None,
               mount: str | None = None, mounted_on: str | None = None, controls: list[str] | None = None,
               monitors: list[str] | None = None, agent_visible: bool = True,
               values: dict[str, Any] | None = None) -> Device:
    """A device of ``entry``'s type as :func:`device_from_catalog` makes it, named ``name`` (the
    catalog's name when None). The catalog's part of a type (its fields with their accepted and
    present values, category, Matter type, events, mount) is built and checked once; each
    device copies it with its own id, room, pose, name and links."""
    key = (id(entry), mount, tuple(sorted(values.items())) if values else ())
    hit = _MADE.get(key)
    if hit is None or hit[0] is not entry:
        if len(_MADE) >= _MADE_SIZE:
            _MADE.clear()
        hit = _MADE[key] = (entry, device_from_catalog(entry, device_id, room, pose, mount=mount, values=values))
    first = hit[1]
    fields = {n: f.model_copy(update=None if f.values is None else {"values": list(f.values)})
              for n, f in first.fields.items()}
    return first.model_copy(update={
        "id": device_id, "room": room, "pose": pose, "name": name or first.name, "mounted_on": mounted_on,
        "controls": list(controls or []), "monitors": list(monitors or []), "agent_visible": agent_visible,
        "fields": fields, "events": list(first.events)})


# --- the stage -----------------------------------------------------------------------


def _memo(method):
    """A method of :class:`_Equipper` computed once per home for each set of arguments."""
    name = method.__name__

    @functools.wraps(method)
    def cached(self, *args):
        memo = self._memo.setdefault(name, {})
        if args not in memo:
            memo[args] = method(self, *args)
        return memo[args]

    return cached


class _Equipper:
    """The state of equipping one home."""

    def __init__(self, home: Home, catalog: Catalog, rng: np.random.Generator, profile: EquipProfile) -> None:
        self.home, self.catalog, self.rng, self.profile = home, catalog, rng, profile
        self.rooms: dict[str, Room] = {r.id: r for r in home.rooms}
        self.polys = home.room_polygons()
        self.openings = {o.id: o for o in home.openings}
        self.opening_polys = home.opening_polygons()
        self.footprints = home.furniture_footprints()
        self.fixture_polys = [polygon_from_rings(x.polygon) for x in home.fixtures]
        self.adjacency = room_adjacency(home)
        self._memo: dict[str, dict[tuple, Any]] = {}
        self.object_footprints: dict[str, Polygon] = {}
        self.room_furniture: dict[str, list[Furniture]] = {rid: [] for rid in self.rooms}
        for f in home.furniture:
            self.room_furniture.setdefault(f.room, []).append(f)
        self.room_openings: dict[str, list[Opening]] = {rid: [] for rid in self.rooms}
        for o in home.openings:
            for rid in dict.fromkeys(o.connects):
                self.room_openings.setdefault(rid, []).append(o)
        self.devices: list[Device] = []
        self.cameras: list[Camera] = []
        self.counters: dict[tuple[str, str], int] = {}
        self.notes: list[str] = []
        self.failures: list[str] = []
        self.exceptions: list[PlacementException] = []
        #: Rooms where the smoke distance rule left no place, by rule id (one failure line).
        self.unmet: dict[str, list[str]] = {}
        self.open_doors: set[str] = set()
        self.cookers = [f for f in home.furniture if f.cooking_appliance]
        self.cooker_union = shapely.union_all([self.footprints[f.id] for f in self.cookers]) if self.cookers else None
        self.cooker_segments = ring_segments(self.cooker_union) if self.cookers else np.zeros((0, 4))
        self.smoke_rule = _smoke_rule(catalog)
        self.smoke_wall = catalog.placement_number(SMOKE_SENSOR, "min_wall_distance")
        self.switch_reach = catalog.placement_number(LIGHT_SWITCH, "max_distance")

    @property
    def smoke_min(self) -> float:
        return self.smoke_rule.min_distance

    @property
    def smoke_fallback(self) -> float:
        """The fallback distance; a rule without one allows none (the main distance again)."""
        return self.smoke_rule.fallback_distance or self.smoke_rule.min_distance

    # -- bookkeeping

    def entry(self, device_type: str) -> DeviceEntry:
        return self.catalog.devices[device_type]

    def height(self, device_type: str) -> float:
        """The catalog's mounting height (m) of a device type."""
        return self.catalog.placement_number(device_type, "height")

    def new_id(self, device_type: str, where: str | None) -> str:
        key = (device_type, where or "home")
        n = self.counters.get(key, 0) + 1
        self.counters[key] = n
        return f"{device_type}_{where or 'home'}_{n}"

    def add(self, device_type: str, room: str | None, pose: Pose, *, label: str | None = None,
            **kwargs: Any) -> Device:
        entry = self.entry(device_type)
        where = label or (self.rooms[room].name if room else None)
        device = new_device(entry, self.new_id(device_type, room or kwargs.get("mounted_on")), room, pose,
                            name=f"{where} {entry.name}" if where else None, **kwargs)
        self.devices.append(device)
        return device

    def room_name(self, rid: str) -> str:
        return self.rooms[rid].name

    def ceiling(self, rid: str) -> float:
        r = self.rooms[rid]
        return r.floor_height + r.ceiling_height

    def floor(self, rid: str) -> float:
        return self.rooms[rid].floor_height

    # -- smoke sensors

    @_memo
    def centre(self, rid: str) -> Point:
        """:func:`room_centre` of a room."""
        return room_centre(self.polys[rid])

    @_memo
    def centre_xy(self, rid: str) -> tuple[float, float]:
        c = self.centre(rid)
        return c.x, c.y

    @_memo
    def smoke_ceiling(self, rid: str) -> Polygon:
        """The room's ceiling at least the rule's ``min_wall_distance`` from its walls."""
        return self.polys[rid].buffer(-self.smoke_wall, join_style="mitre")

    def smoke_candidates(self, rid: str, window: tuple[float, float, float, float] | None = None) -> np.ndarray:
        """Ceiling candidate points of a room (those of the grid in ``window``, a box)."""
        # Rounded as the home file stores poses, so the distance measured here is the
        # one the home check measures on the file.
        return np.round(grid_points(self.smoke_ceiling(rid), SMOKE_GRID_STEP, window), 3) + 0.0

    def cooker_distances(self, pts: np.ndarray) -> np.ndarray:
        """Each point's distance to the nearest cooking appliance, as shapely measures it."""
        if self.cooker_union is None:
            return np.full(len(pts), np.inf)
        return shapely.distance(self.cooker_union, shapely.points(pts))

    def cooker_clear(self, pts: np.ndarray, limit: float) -> np.ndarray:
        """Which points lie at least ``limit`` from every cooking appliance (shapely's distance):
        computed with numpy, measured where rounding could tell otherwise."""
        if self.cooker_union is None or len(pts) == 0:
            return np.ones(len(pts), dtype=bool)
        return clear_of(self.cooker_union, self.cooker_segments, pts, limit)

    def pick_smoke_point(self, rid: str, minimum: float, towards: tuple[float, float] | None = None
                         ) -> tuple[float, float] | None:
        """The candidate point at least ``minimum`` from cooking appliances nearest ``towards``
        (the room's centre, or a door smoke comes through), ties by position."""
        target = towards if towards is not None else self.centre_xy(rid)
        limit = minimum - 1e-9
        x0, y0, x1, y1 = self.smoke_ceiling(rid).bounds
        radius = SMOKE_SEARCH_RADIUS
        while True:
            # The points within ``radius`` of the target (rounding moves a point 0.5 mm at most);
            # one nearer than ``radius`` is nearer than any other. At last the whole grid, and at
            # once where the search comes near the cooking appliances (measured in one go).
            pad = radius + 0.001
            window = (target[0] - pad, target[1] - pad, target[0] + pad, target[1] + pad)
            beyond = self.cooker_beyond(window, limit)
            last = not beyond or (window[0] <= x0 and window[1] <= y0 and window[2] >= x1 and window[3] >= y1)
            pts = self.smoke_candidates(rid, None if last else window)
            to_target = np.round(np.hypot(pts[:, 0] - target[0], pts[:, 1] - target[1]), 3)
            if not last:
                pts, to_target = pts[to_target <= radius], to_target[to_target <= radius]
            if not beyond:
                ok = self.cooker_clear(pts, limit)
                pts, to_target = pts[ok], to_target[ok]
            if len(pts):
                i = int(np.lexsort((pts[:, 1], pts[:, 0], to_target))[0])
                if last or to_target[i] < radius:
                    return float(pts[i, 0]), float(pts[i, 1])
            elif last:
                return None
            radius *= 2

    def cooker_beyond(self, window: tuple[float, float, float, float], limit: float) -> bool:
        """Whether every point of ``window`` (a box; and rounding's half millimetre about it) lies
        ``limit`` or more from the cooking appliances' bounds, and so from them."""
        if self.cooker_union is None:
            return True
        a0, b0, a1, b1 = self.cooker_union.bounds
        gap = math.hypot(max(a0 - window[2], window[0] - a1, 0.0), max(b0 - window[3], window[1] - b1, 0.0))
        return gap >= limit + 0.001

    def pick_farthest_smoke_point(self, rid: str, minimum: float) -> tuple[tuple[float, float], float] | None:
        """The candidate point at least ``minimum`` from cooking appliances farthest from them (to
        the decimetre), then nearest the room's centre, ties by position; with its distance."""
        target = self.centre_xy(rid)
        pts = self.smoke_candidates(rid)
        dist = self.cooker_distances(pts)
        ok = dist >= minimum - 1e-9
        if not ok.any():
            return None
        pts, dist = pts[ok], dist[ok]
        to_target = np.hypot(pts[:, 0] - target[0], pts[:, 1] - target[1])
        i = int(np.lexsort((pts[:, 1], pts[:, 0], np.round(to_target, 3), -np.round(dist, 1)))[0])
        return (float(pts[i, 0]), float(pts[i, 1])), float(dist[i])

    def smoke_in(self, rid: str) -> list[Device]:
        return [d for d in self.devices if d.type == SMOKE_SENSOR and d.room == rid]

    def place_smoke(self, rid: str, point: tuple[float, float], *, serves: list[str], reason: str,
                    fallback_at: float | None = None) -> Device:
        """A smoke sensor at ``point`` serving ``serves``; placed with the rule's fallback distance
        when ``fallback_at`` (its distance from the range) is given."""
        exception, distance = fallback_at is not None, fallback_at
        excepted = {e.device for e in self.exceptions}
        for existing in self.smoke_in(rid):
            # A sensor nearby serves too, unless it was placed with the exception and this one need not be.
            if math.hypot(existing.pose.x - point[0], existing.pose.y - point[1]) < SMOKE_REUSE_DISTANCE and (
                    exception or existing.id not in excepted):
                merged = sorted(set(existing.monitors) | set(serves))
                self.devices[self.devices.index(existing)] = existing.model_copy(update={"monitors": merged})
                return existing
        device = self.add(SMOKE_SENSOR, rid, Pose(x=point[0], y=point[1], z=self.ceiling(rid)),
                          monitors=sorted(set(serves)))
        if exception:
            self.exceptions.append(PlacementException(device=device.id, rule=self.smoke_rule.id, value=distance,
                                                      required=self.smoke_min, fallback=self.smoke_fallback))
            self.notes.append(f"smoke sensor {device.id} in room {rid} placed with the {self.smoke_fallback} m "
                              f"fallback of rule {self.smoke_rule.id} ({distance:.2f} m from the range): {reason}")
        return device

    def door_towards(self, rid: str, other: str) -> tuple[tuple[float, float], str | None]:
        """Where smoke passes from ``other`` into ``rid``: a door's point in ``rid`` and the
        door, else the middle of the open passage between them (and None)."""
        for o in self.home.openings:
            if o.kind in navigation.PASSABLE_KINDS and set(o.connects) == {rid, other}:
                return opening_face_point(self.home, o, rid, 0.5), o.id
        shared = self.polys[rid].buffer(0.06).intersection(self.polys[other].buffer(0.06))
        c = shared.centroid if not shared.is_empty else self.polys[rid].centroid
        return (c.x, c.y), None

    def smoke_sensors(self) -> None:
        kitchens = list(dict.fromkeys(f.room for f in self.cookers))
        for rid in kitchens:
            self.kitchen_smoke(rid)
        for r in self.home.rooms:
            if r.type in BEDROOM_SUBTYPES:
                self.room_smoke(r.id, required=True, why="a bedroom")
        for bedroom, exits in sleeping_area_exits(self.home, self.adjacency).items():
            self.sleeping_area_smoke(bedroom, exits)
        listed = set(self.entry(SMOKE_SENSOR).placement.rooms)
        for r in self.home.rooms:
            served = any(r.id in d.monitors for d in self.devices if d.type == SMOKE_SENSOR)
            if r.type in listed and r.indoor and not self.smoke_in(r.id) and not served:
                self.room_smoke(r.id, required=False, why=f"a {r.type.lower()}")

    def sleeping_area_smoke(self, bedroom: str, exits: list[str]) -> None:
        """One smoke sensor just outside the sleeping area of ``bedroom``, by exit preference."""
        if not exits:
            self.notes.append(f"bedroom {bedroom} has no indoor room outside its sleeping area")
            return
        if any(self.smoke_in(e) for e in exits):
            return
        ranked = sorted(exits, key=lambda e: (EXIT_PREFERENCE.index(self.rooms[e].type)
                                              if self.rooms[e].type in EXIT_PREFERENCE else 99, e))
        why = f"outside the sleeping area of {bedroom}"
        for allow_exception in (False, True):
            if any(self.room_smoke(e, required=False, why=why, allow_exception=allow_exception) for e in ranked):
                return
        if all(self.rule_blocks(e) for e in ranked):  # the distance rule left no place: its line says so
            for e in ranked:
                self.rule_unmet(e)
        else:
            self.failures.append(f"no place for a smoke sensor outside the sleeping area of bedroom {bedroom}")

    def room_smoke(self, rid: str, *, required: bool, why: str, allow_exception: bool = True) -> Device | None:
        if self.smoke_in(rid):
            return self.smoke_in(rid)[0]
        spot = self.pick_smoke_point(rid, self.smoke_min)
        if spot is not None:
            return self.place_smoke(rid, spot, serves=[rid], reason=why)
        if not allow_exception:
            return None
        hit = self.pick_farthest_smoke_point(rid, self.smoke_fallback)
        if hit is not None:
            return self.place_smoke(rid, hit[0], serves=[rid], fallback_at=hit[1],
                                    reason=f"{why}: no ceiling point {self.smoke_min} m from the range")
        if required and self.rule_blocks(rid):
            self.rule_unmet(rid)
        else:
            (self.failures if required else self.notes).append(f"no place for a smoke sensor in room {rid} ({why})")
        return None

    def rule_blocks(self, rid: str) -> bool:
        """Whether the room has ceiling for a smoke sensor, all of it too near the range."""
        return len(self.smoke_candidates(rid)) > 0

    def rule_unmet(self, rid: str) -> None:
        rooms = self.unmet.setdefault(self.smoke_rule.id, [])
        if rid not in rooms:
            rooms.append(rid)

    def kitchen_smoke(self, rid: str) -> None:
        """The smoke sensor of the room with the range: in it; else in a room its smoke reaches
        with every door shut (an open passage away); else in it at the fallback distance, with the
        exception; else, last, next door behind a door (marked open)."""
        serves = [rid] + [f.id for f in self.cookers if f.room == rid]
        spot = self.pick_smoke_point(rid, self.smoke_min)
        if spot is not None:
            self.place_smoke(rid, spot, serves=serves, reason="the kitchen")
            return
        reached = rooms_reached(self.home, rid)
        if self.kitchen_smoke_next_door(rid, serves, within=reached):
            return
        hit = self.pick_farthest_smoke_point(rid, self.smoke_fallback)
        if hit is not None:
            self.place_smoke(rid, hit[0], serves=serves, fallback_at=hit[1],
                             reason=f"the kitchen has no place {self.smoke_min} m from the range and no "
                                    "room its smoke reaches through an open passage has one")
            return
        if self.kitchen_smoke_next_door(rid, serves, within=None):
            return
        self.rule_unmet(rid)

    def kitchen_smoke_next_door(self, rid: str, serves: list[str], within: set[str] | None) -> bool:
        """The kitchen's smoke sensor in an adjoining room (one of ``within``, the rooms its smoke
        reaches, where given; else any, behind a door marked open), near where smoke comes through."""
        neighbours = [n for n in self.adjacency.get(rid, [])
                      if self.rooms[n].indoor and self.rooms[n].type in KITCHEN_SENSOR_NEIGHBOURS
                      and (within is None or n in within)]
        best = None
        for n in neighbours:
            door, door_id = self.door_towards(n, rid)
            got = self.pick_smoke_point(n, self.smoke_min, towards=door)
            if got is not None:
                gap = math.hypot(got[0] - door[0], got[1] - door[1])
                if best is None or gap < best[0] - 1e-9:
                    best = (gap, n, got, door_id)
        if best is None:
            return False
        _, n, got, door_id = best
        self.place_smoke(n, got, serves=serves, reason=f"next to kitchen {rid}")
        self.notes.append(f"kitchen {rid} has no ceiling point {self.smoke_min} m from the range; "
                          f"its smoke sensor is in room {n}, by the way smoke comes through")
        if door_id is not None and within is None:
            # A room the smoke does not reach (the rooms it reaches were tried first, with no spot
            # found): smoke spreads through open doors only, so the kitchen door stands open.
            self.open_doors.add(door_id)
            self.notes.append(f"door {door_id} between kitchen {rid} and room {n} is marked open so smoke "
                              "from the range reaches the kitchen's smoke sensor")
        return True

    def unmet_rule_failures(self) -> list[str]:
        """One line for the smoke distance rule if rooms that need a sensor could not
        meet it, naming the catalog file that sets it."""
        rooms = self.unmet.get(self.smoke_rule.id)
        if not rooms:
            return []
        where = self.catalog.source_of("devices", SMOKE_SENSOR)
        return [f"rule {self.smoke_rule.id} cannot be met in rooms {', '.join(rooms)}: no ceiling point lies "
                f"{self.smoke_min} m (fallback {self.smoke_fallback} m) from the cooking appliance; the distances "
                f"are set in {where} (devices entry {SMOKE_SENSOR!r}, placement.keep_away)"]

    # -- things on furniture, objects, people

    def appliance_devices(self) -> None:
        stove_fields = {n for n in self.entry("stove").fields if n.startswith("burner_")}
        for f in self.home.furniture:
            if f.semantic_class == "range":
                names = {b.name for b in f.burners}
                if names != stove_fields:
                    self.failures.append(f"range {f.id}: burners {sorted(names)} do not match the stove device's "
                                         f"fields {sorted(stove_fields)}")
                    continue
                self.add("stove", f.room, Pose(x=f.pose.x, y=f.pose.y, z=f.pose.z + f.height, yaw=f.pose.yaw),
                         mounted_on=f.id, controls=[f.id])
            elif f.semantic_class in ("washer", "dryer"):
                self.add(f.semantic_class, f.room, Pose(x=f.pose.x, y=f.pose.y, z=f.pose.z + f.height,
                                                        yaw=f.pose.yaw), mounted_on=f.id, controls=[f.id])
        for f in self.home.furniture:
            if f.semantic_class in ("dishwasher", "washer"):
                self.leak_sensor(f)

    def free_floor_point(self, rid: str, p: tuple[float, float], own: str, body: BodySize) -> bool:
        """Whether a floor device with this body stands at ``p`` clear of the room's walls, of
        furniture other than ``own`` and of the plan's fixtures (a counter run is solid to the floor)."""
        if not holds(self.polys[rid], Point(p), 0.03):
            return False
        reach = math.hypot(body.width, body.depth) / 2 + DEVICE_GAP
        owners, solids = self.floor_solids
        gaps = solids.distances(np.array([p], dtype=float), reach)[:, 0]
        return all(gap >= reach for owner, gap in zip(owners, gaps.tolist()) if owner != own)

    @functools.cached_property
    def floor_solids(self) -> tuple[list[str | None], Shapes]:
        """What stands on the floor: the furniture (by id) and the plan's fixtures (no id)."""
        return [*self.footprints, *[None] * len(self.fixture_polys)], \
            Shapes.of([*self.footprints.values(), *self.fixture_polys])

    def leak_sensor(self, f: Furniture) -> None:
        depth = _local_depth(f)
        width = _local_width(f)
        options = [(0.0, s * (width / 2 + LEAK_SIDE_GAP)) for s in (1, -1)]
        options += [(depth / 2 + LEAK_SIDE_GAP, s * (width / 2 - 0.1)) for s in (1, -1)]
        body = device_body_size(LEAK_SENSOR, "floor")
        for dx, dy in options:
            x, y, _ = f.pose.to_world(dx, dy)
            if self.free_floor_point(f.room, (x, y), f.id, body):
                self.add("leak_sensor", f.room, Pose(x=x, y=y, z=self.floor(f.room), yaw=f.pose.yaw),
                         monitors=[f.id], label=f"{self.room_name(f.room)} {f.semantic_class}")
                return
        (self.failures if f.semantic_class == "dishwasher" else self.notes).append(
            f"no free floor beside {f.semantic_class} {f.id} for a leak sensor")

    def plant_sensors(self) -> None:
        for obj in self.home.objects:
            if obj.semantic_class != "potted_plant":
                continue
            values = {"moisture": obj.soil_moisture} if obj.soil_moisture is not None else None
            self.add("soil_moisture_sensor", obj.location.room,
                     Pose(x=obj.pose.x, y=obj.pose.y, z=obj.pose.z + obj.size[2] * 0.6, yaw=obj.pose.yaw),
                     mounted_on=obj.id, monitors=[obj.id], values=values)

    def wearables(self) -> Home | None:
        residents = [p for p in self.home.people if p.role == "resident"]
        if residents:
            person = residents[0]
            pose, owner = person.pose.model_copy(update={"z": 1.0}), person.id
        else:
            start = navigation.entrance_room(self.home) or self.home.rooms[0].id
            c = room_centre(self.polys[start])
            pose, owner = Pose(x=c.x, y=c.y, z=1.0), None
            self.notes.append("no resident in the home: the wearables are worn by the scenario's resident")
        ids = []
        for t in ("fall_watch", "help_button"):
            d = new_device(self.entry(t), self.new_id(t, owner or "resident"), None, pose,
                                       mounted_on=owner)
            self.devices.append(d)
            ids.append(d.id)
        if residents:
            people = [p.model_copy(update={"wears": sorted(set(p.wears) | set(ids))}) if p.id == owner else p
                      for p in self.home.people]
            return self.home.model_copy(update={"people": people})
        return None

    # -- openings

    def face(self, o: Opening, rid: str, depth: float = 0.02, along: float = 0.0,
             outside: bool = False) -> tuple[float, float, float]:
        """A point on the face of an opening on ``rid``'s side (the far side when
        ``outside``), ``depth`` beyond the face and ``along`` from its centre; the yaw
        faces away from the opening (:func:`homeloop.geometry.face_point`, its frame measured once)."""
        centre, u, normal, thickness = self.face_frame(o.id, rid)
        outward = (-1.0 if outside else 1.0) * normal
        p = centre + outward * (thickness / 2 + depth) + u * along
        (x, y), (dx, dy) = p.tolist(), outward.tolist()
        return x, y, heading(dx, dy)

    @_memo
    def face_frame(self, oid: str, rid: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """An opening's centre, unit direction along its wall, unit normal out of its face on
        ``rid``'s side, and its thickness."""
        poly = self.opening_polys[oid]
        centre, u, normal, _, thickness = opening_axes(poly)
        return centre, u, face_side(poly, self.polys[rid]) * normal, thickness

    def opening_devices(self) -> None:
        for o in self.home.openings:
            inner = inner_room(self.home, o)
            if inner is None:
                continue
            width = o.width
            if needs_contact_sensor(self.home, o):
                x, y, yaw = self.face(o, inner, along=max(width / 2 - 0.1, 0.0))
                self.add("contact_sensor", inner, Pose(x=x, y=y, z=self.floor(inner) + o.sill + o.height - 0.1,
                                                       yaw=yaw), mounted_on=o.id, monitors=[o.id],
                         label=f"{self.room_name(inner)} {_opening_word(o)}")
            if o.kind == "entrance_door":
                x, y, yaw = self.face(o, inner, along=-max(width / 2 - 0.1, 0.0))
                self.add("lock", inner, Pose(x=x, y=y, z=self.floor(inner) + LOCK_HEIGHT, yaw=yaw),
                         mounted_on=o.id, monitors=[o.id], label="front door")
                outer = next((r for r in o.connects if r != inner and r in self.rooms), None)
                height = self.height("doorbell")
                if outer is not None:
                    x, y, yaw = self.face(o, outer, along=width / 2 + 0.2)
                    self.add("doorbell", outer, Pose(x=x, y=y, z=self.floor(outer) + height, yaw=yaw),
                             mounted_on=o.id, label="front door")
                else:
                    x, y, yaw = self.face(o, inner, along=width / 2 + 0.2, outside=True)
                    self.add("doorbell", inner, Pose(x=x, y=y, z=self.floor(inner) + height, yaw=yaw),
                             mounted_on=o.id, label="front door")
            if o.kind == "garage_door":
                x, y, yaw = self.face(o, inner, depth=0.1)
                self.add("garage_door", inner, Pose(x=x, y=y, z=self.floor(inner) + o.sill + o.height, yaw=yaw),
                         mounted_on=o.id, controls=[o.id], label=self.room_name(inner))
            if o.kind == "window":
                rtype = self.rooms[inner].type
                kind = ("roller_blind" if rtype in BEDROOM_SUBTYPES or rtype == "OFFICE"
                        else "curtain" if rtype in LIVING_SUBTYPES else None)
                if kind is not None and rtype in self.entry(kind).placement.rooms:
                    x, y, yaw = self.face(o, inner, depth=0.05)
                    self.add(kind, inner, Pose(x=x, y=y, z=self.floor(inner) + o.sill + o.height, yaw=yaw),
                             mounted_on=o.id, controls=[o.id])

    # -- wall devices

    @_memo
    def outline(self, rid: str) -> Polygon:
        """The room's polygon simplified by a centimetre (straight runs of wall one edge), counter-clockwise."""
        return ccw(self.polys[rid].simplify(0.01))

    @_memo
    def wall_point_rows(self, rid: str, step: float = WALL_STEP, end_gap: float = 0.2) -> np.ndarray:
        """:func:`wall_point_array` of a room's :meth:`outline`: points ``WALL_INSET`` inside its walls."""
        return wall_point_array(self.outline(rid), step, end_gap, WALL_INSET)

    @_memo
    def wall_neighbours(self, rid: str, body: tuple[str, float] | None) -> tuple[Shapes, int, int, float]:
        """What wall devices keep clear of: the room's doors and windows and any other opening
        within 5 cm of it, then its furniture, then with ``body`` (a wall device type and its
        height) what that device's body keeps clear of (:meth:`wall_body_obstacles`); how many
        openings and pieces of furniture, and how far the body keeps."""
        close = shapely.distance(self.all_openings.geoms, self.polys[rid]) < 0.05
        openings = [g for (oid, g), near in zip(self.opening_polys.items(), close.tolist())
                    if rid in self.openings[oid].connects or near]
        furniture = [self.footprints[f.id] for f in self.room_furniture[rid]]
        reach, obstacles = self.wall_body_obstacles(rid, *body) if body else (0.0, Shapes.of([]))
        return Shapes.of(openings + furniture + list(obstacles.geoms)), len(openings), len(furniture), reach

    @functools.cached_property
    def all_openings(self) -> Shapes:
        return Shapes.of(list(self.opening_polys.values()))

    def wall_candidates(self, rid: str, *, avoid_furniture: float | None = 0.05,
                        clear_for: tuple[str, float] | None = None) -> list[tuple[float, float, float]]:
        """Wall points of the room clear of its openings, and of its furniture by ``avoid_furniture``;
        with ``clear_for`` (a wall device type and its height) where its body stays clear too
        (:meth:`wall_spot_clear`). One pass measures them all."""
        rows = self.wall_point_rows(rid)
        near, n_open, n_furniture, body_reach = self.wall_neighbours(rid, clear_for)
        gaps = near.distances(rows[:, :2], max(WALL_OPENING_CLEARANCE, avoid_furniture or 0.0, body_reach))
        keep = ~(gaps[:n_open] < WALL_OPENING_CLEARANCE).any(axis=0)
        if avoid_furniture is not None:
            keep &= ~(gaps[n_open:n_open + n_furniture] < avoid_furniture).any(axis=0)
        if clear_for is not None:
            keep &= (gaps[n_open + n_furniture:] >= body_reach).all(axis=0)
        return [tuple(row) for row in rows[keep].tolist()]

    def room_doors(self, rid: str) -> list[Opening]:
        """The doors of a room, the one its switch goes beside first: the entrance door, a door
        to a corridor, other doors by id; then garage doors in home order."""

        def rank(o: Opening) -> tuple:
            other = [r for r in o.connects if r != rid]
            other_type = self.rooms[other[0]].type if other and other[0] in self.rooms else ""
            return (0 if o.kind == "entrance_door" else 1, 0 if other_type == "CORRIDOR" else 1, o.id)

        doors = [o for o in self.room_openings[rid] if o.kind in ("door", "entrance_door")]
        return sorted(doors, key=rank) + [o for o in self.room_openings[rid] if o.kind == "garage_door"]

    def switch_point(self, rid: str, door: Opening) -> tuple[float, float, float] | None:
        """Beside the door on its wall, :data:`SWITCH_DOOR_OFFSET` past its edge (farther where
        furniture stands there); else the wall point nearest the door within the catalog's
        ``max_distance`` (a door in a room's corner: the switch goes round the corner)."""
        poly = self.polys[rid]
        tall = [self.footprints[f.id] for f in self.room_furniture[rid]]
        for extra in (0.0, 0.1, 0.2):
            for s in (1.0, -1.0):
                x, y, yaw = self.face(door, rid, depth=WALL_INSET,
                                      along=s * (door.width / 2 + SWITCH_DOOR_OFFSET + extra))
                p = Point(x, y)
                if poly.distance(p) > 0.005 or any(g.distance(p) < 0.05 for g in tall):
                    continue
                if self.opening_polys[door.id].distance(p) <= self.switch_reach \
                        and self.wall_body_clear(rid, LIGHT_SWITCH, x, y, yaw):
                    return x, y, yaw
        return self.switch_near_door(rid, door)

    def switch_near_door(self, rid: str, door: Opening) -> tuple[float, float, float] | None:
        """The wall point of the room nearest the door within the catalog's ``max_distance``,
        :data:`SWITCH_OPENING_GAP` clear of every opening and clear of furniture that rises to
        the switch's height."""
        reach, switch_h = self.switch_reach, self.height("light_switch")
        rows = self.wall_point_rows(rid, SWITCH_SEARCH_STEP, SWITCH_SEARCH_STEP)
        d = Shapes.of([self.opening_polys[door.id]]).distances(rows[:, :2], reach)[0]
        rows, d = rows[d <= reach], d[d <= reach]
        openings = Shapes.of([self.opening_polys[o.id] for o in self.room_openings[rid]])
        high = Shapes.of([self.footprints[f.id] for f in self.room_furniture[rid] if f.pose.z + f.height >= switch_h])
        keep = ~openings.near(rows[:, :2], SWITCH_OPENING_GAP) & ~high.near(rows[:, :2], 0.05)
        keep &= shapely.intersects_xy(self.polys[rid], rows[:, 0], rows[:, 1])  # covered: in or on the room
        spots = sorted((round(dk, 3), x, y, yaw) for dk, (x, y, yaw) in zip(d[keep].tolist(), rows[keep].tolist()))
        # nearest the door, then by position; its body clear of furniture as the home check measures it
        return next((spot[1:] for spot in spots if self.wall_body_clear(rid, LIGHT_SWITCH, *spot[1:])), None)

    def wall_body_clear(self, rid: str, device_type: str, x: float, y: float, yaw: float) -> bool:
        """Whether the body of a wall device at (x, y), at its catalog height, stays out of the
        room's furniture as the home check measures it (rule device_overlaps_object: solids with
        their parts, which stand proud of a footprint, as a wardrobe's doors do)."""
        here = Point(x, y)
        near = [f for f in self.room_furniture[rid] if self.footprints[f.id].distance(here) < WALL_BODY_NEAR]
        if not near:
            return True
        probe = Device.model_construct(id=f"{device_type}_probe", type=device_type, mount="wall", room=rid,
                                       pose=Pose(x=x, y=y, z=self.floor(rid) + self.height(device_type), yaw=yaw))
        body = device_solid(self.home, probe)
        solids, _ = placed_solids([self.catalog.furniture[f.catalog_id] for f in near], near)
        return body is None or not overlapping(body, solids, OBJECT_PENETRATION).any()

    def lights_and_switches(self) -> None:
        switch_h = self.height("light_switch")
        for r in self.home.rooms:
            if not (r.indoor or r.type == "GARAGE"):
                continue
            c = self.centre(r.id)
            light = self.add("light", r.id, Pose(x=c.x, y=c.y, z=self.ceiling(r.id)), mount="ceiling")
            doors = self.room_doors(r.id)
            spot = next((s for s in (self.switch_point(r.id, o) for o in doors) if s is not None), None)
            if spot is None and doors:
                self.failures.append(f"room {r.id}: no wall place within {self.switch_reach} m of its doors "
                                     f"({', '.join(o.id for o in doors)}) for a light switch")
                continue
            if spot is None:  # a room open to the next has no door to be beside
                walls = self.wall_candidates(r.id)
                spot = walls[0] if walls else None
            if spot is None:
                self.notes.append(f"room {r.id}: no wall place for a light switch")
                continue
            x, y, yaw = spot
            self.add("light_switch", r.id, Pose(x=x, y=y, z=self.floor(r.id) + switch_h, yaw=yaw),
                     controls=[light.id])
        # Outdoor spaces entered through a door: a wall light by the door, switched from inside.
        for r in self.home.rooms:
            if not r.outdoor:
                continue
            door = next((o for o in self.home.openings if o.kind in ("door", "entrance_door") and r.id in o.connects
                         and any(x in self.rooms and self.rooms[x].space_class in ("indoor", "ancillary")
                                 for x in o.connects if x != r.id)), None)
            if door is None:
                continue
            inside = next(x for x in door.connects if x != r.id)
            x, y, yaw = self.face(door, r.id, along=-(door.width / 2 + 0.3))
            light = self.add("light", r.id, Pose(x=x, y=y, z=self.floor(r.id) + OUTDOOR_LIGHT_HEIGHT, yaw=yaw),
                             mount="wall", mounted_on=door.id)
            spot = self.switch_point(inside, door)
            if spot is not None:
                x, y, yaw = spot
                self.add("light_switch", inside, Pose(x=x, y=y, z=self.floor(inside) + switch_h, yaw=yaw),
                         controls=[light.id], label=f"{r.name} light")

    def lamps(self) -> None:
        """A lamp on a living room's side table or a bedroom's nightstand, at a free spot of its top
        (:func:`lamp_spot`); a living room where no side table has one gets a floor lamp."""
        size = device_body_size("light", "on_furniture")
        for r in self.home.rooms:
            host_class = "side_table" if r.type in LIVING_SUBTYPES else "nightstand" if r.type in BEDROOM_SUBTYPES \
                else None
            if host_class is None:
                continue
            hosts = [f for f in self.home.furniture_in(r.id) if f.semantic_class == host_class and f.surfaces]
            if not any(self.lamp_on(r, host, size) for host in hosts):
                if hosts:
                    self.notes.append(f"room {r.id}: no free spot for a lamp on {', '.join(f.id for f in hosts)}")
                if r.type in LIVING_SUBTYPES:
                    self.floor_lamp(r)

    def lamp_on(self, r: Room, host: Furniture, size: BodySize) -> bool:
        """Stand a lamp on the host's top where :func:`lamp_spot` finds room; whether it did."""
        top = host.surfaces[0]
        spot = lamp_spot(host, top, self.things_on(host, top), size)
        if spot is None:
            return False
        self.add("light", r.id, Pose(x=spot[0], y=spot[1], z=top.height, yaw=host.pose.yaw),
                 mount="on_furniture", mounted_on=host.id, label=f"{r.name} lamp on the {host.semantic_class}")
        return True

    def things_on(self, host: Furniture, top: Surface) -> list[Polygon]:
        """The footprints of what is on a top: the objects lying on it and furniture standing on it."""
        things = [self.object_footprint(o) for o in self.objects_on().get((host.id, top.name), [])]
        base = self.footprints[host.id]
        stacked = [f for f in self.home.furniture if f.id != host.id and f.pose.z >= top.height - 0.02]
        things += [g for f in stacked if (g := self.footprints[f.id]).intersects(base)]
        return things

    def floor_lamp(self, r: Room) -> None:
        seats = [f for f in self.room_furniture[r.id] if f.semantic_class in ("sofa", "armchair")]
        pts = grid_points(self.polys[r.id].buffer(-FLOOR_LAMP_CLEARANCE), 0.2)
        if len(pts) == 0:
            return
        anchor = self.footprints[seats[0].id] if seats else self.polys[r.id].exterior
        obstacles = Shapes.of([*self.footprints.values(), *map(self.object_footprint, self.floor_objects(r.id))])
        pts = pts[~obstacles.near(pts, FLOOR_LAMP_CLEARANCE)]
        to_anchor = shapely.distance(anchor, shapely.points(pts)) if len(pts) else []
        best = min(((round(d, 3), x, y) for d, (x, y) in zip(np.asarray(to_anchor).tolist(), pts.tolist())), default=None)
        if best is None:
            self.notes.append(f"room {r.id}: no free floor for a lamp")
            return
        self.add("light", r.id, Pose(x=best[1], y=best[2], z=self.floor(r.id)), mount="floor",
                 label=f"{r.name} floor lamp")

    def plugs(self) -> None:
        height = self.height("plug")
        for r in self.home.rooms:
            if r.type not in PLUG_ROOMS or not r.indoor:
                continue
            area = self.polys[r.id].area
            wanted = min(3, 1 + int(area >= 10) + int(area >= 18))
            placed: list[tuple[float, float]] = []
            served = [f for c in PLUG_FURNITURE for f in self.room_furniture[r.id] if f.semantic_class == c]
            for f in served[:1]:
                spot = self.plug_at(r.id, f)
                if spot is not None:
                    x, y, yaw = spot
                    self.add("plug", r.id, Pose(x=x, y=y, z=self.floor(r.id) + height, yaw=yaw), controls=[f.id],
                             label=f"{r.name} {f.semantic_class.replace('_', ' ')}")
                    placed.append((x, y))
            walls = self.wall_candidates(r.id, clear_for=(PLUG, height))
            while len(placed) < wanted and walls:
                if not placed:
                    pick = walls[int(self.rng.integers(len(walls)))]
                else:
                    pick = max(walls, key=lambda w: min(math.hypot(w[0] - p[0], w[1] - p[1]) for p in placed))
                    if min(math.hypot(pick[0] - p[0], pick[1] - p[1]) for p in placed) < 1.0:
                        break
                x, y, yaw = pick
                self.add("plug", r.id, Pose(x=x, y=y, z=self.floor(r.id) + height, yaw=yaw))
                placed.append((x, y))

    def plug_at(self, rid: str, f: Furniture) -> tuple[float, float, float] | None:
        """A wall point just beside the back of a piece of furniture, within the catalog's
        ``max_distance`` of it."""
        poly = self.polys[rid]
        ring = ccw(poly).exterior
        width = _local_width(f)
        reach = self.catalog.placement_number(PLUG, "max_distance")
        for side in (1.0, -1.0):
            bx, by, _ = f.pose.to_world(-_local_depth(f) / 2, side * (width / 2 + 0.15))
            d = ring.project(Point(bx, by))
            p = ring.interpolate(d)
            if p.distance(Point(bx, by)) > 0.3:
                continue
            q = ring.interpolate(min(d + 0.01, ring.length))
            ux, uy = q.x - p.x, q.y - p.y
            n = math.hypot(ux, uy) or 1.0
            inward = (-uy / n, ux / n)
            x, y = p.x + inward[0] * WALL_INSET, p.y + inward[1] * WALL_INSET
            if poly.covers(Point(x, y)) and self.footprints[f.id].distance(Point(x, y)) <= reach \
                    and self.wall_spot_clear(rid, (x, y), PLUG, self.height(PLUG)):
                return x, y, heading(*inward)
        return None

    def wall_spot_clear(self, rid: str, p: tuple[float, float], device_type: str, height: float) -> bool:
        """Whether a wall device's body at ``p``, ``height`` above the floor, stays clear of the room's
        furniture and of the objects on its floor that reach up to it: a plug beside the TV unit is
        neither behind it nor inside the bookshelf next to it, nor in the watering can by the wall."""
        reach, near = self.wall_body_obstacles(rid, device_type, height)
        return bool(near.clear(np.array([p], dtype=float), reach)[0])

    @_memo
    def wall_body_obstacles(self, rid: str, device_type: str, height: float) -> tuple[float, Shapes]:
        """How far a wall device's centre keeps from things, and the things of the room that
        reach its body's height band."""
        body = device_body_size(device_type, "wall")
        reach, low, high = body.width / 2 + DEVICE_GAP, height - body.height / 2, height + body.height / 2
        near = [self.footprints[f.id] for f in self.room_furniture[rid] if f.pose.z < high and f.pose.z + f.height > low]
        near += [self.object_footprint(o) for o in self.floor_objects(rid) if o.pose.z + o.size[2] > low]
        return reach, Shapes.of(near)

    @_memo
    def objects_on(self) -> dict[tuple[str, str], list[HomeObject]]:
        """The objects lying on each furniture's surface, by (furniture id, surface name)."""
        on: dict[tuple[str, str], list[HomeObject]] = {}
        for o in self.home.objects:
            if o.location.kind == "surface":
                on.setdefault((o.location.furniture, o.location.name), []).append(o)
        return on

    @_memo
    def floor_objects(self, rid: str) -> list[HomeObject]:
        return [o for o in self.home.objects if o.location.kind == "floor" and o.location.room == rid]

    def object_footprint(self, obj: HomeObject) -> Polygon:
        """:func:`object_footprint`, computed once per object."""
        got = self.object_footprints.get(obj.id)
        if got is None:
            got = self.object_footprints[obj.id] = object_footprint(obj)
        return got

    def thermostat(self) -> None:
        order = self.entry("thermostat").placement.rooms
        room = next((r for t in order for r in self.home.rooms if r.type == t and r.indoor), None)
        if room is None:
            room = next((r for r in self.home.rooms if r.indoor), None)
        if room is None:
            return
        walls = self.wall_candidates(room.id, avoid_furniture=0.3) or self.wall_candidates(room.id)
        if not walls:
            self.failures.append(f"room {room.id}: no wall place for the thermostat")
            return
        c = self.centre(room.id)
        # Interior walls first (a probe through the wall lands in another indoor room).
        probes = np.array([(x - math.cos(yaw) * 0.4, y - math.sin(yaw) * 0.4) for x, y, yaw in walls])
        interior = [other is not None and self.rooms[other].indoor for other in self.rooms_at(probes)]

        def rank(k: int) -> tuple:
            w = walls[k]
            return (0 if interior[k] else 1, round(math.hypot(w[0] - c.x, w[1] - c.y), 3), w[0], w[1])

        x, y, yaw = walls[min(range(len(walls)), key=rank)]
        h = self.height("thermostat")
        self.add("thermostat", room.id, Pose(x=x, y=y, z=self.floor(room.id) + h, yaw=yaw))

    def water_main(self) -> None:
        placement = self.entry(WATER_MAIN).placement
        h = self.height(WATER_MAIN)
        limit = self.catalog.placement_number(WATER_MAIN, "max_distance")
        for t in placement.rooms:
            for r in self.home.rooms:
                if r.type != t:
                    continue
                fixtures = [(x.room, polygon_from_rings(x.polygon)) for x in self.home.fixtures
                            if x.feature_subtype in placement.near]
                anchors = [g for room, g in fixtures if room == r.id or self.polys[r.id].contains(g.centroid)]
                anchors.sort(key=lambda g: (0 if g.area < 1.0 else 1, g.centroid.x, g.centroid.y))
                anchors += [self.footprints[f.id] for f in self.home.furniture_in(r.id) if f.semantic_class == "washer"]
                for g in anchors:
                    spot = self.wall_point_near(r.id, g.centroid)
                    if spot is not None and g.distance(Point(spot[0], spot[1])) <= limit \
                            and self.wall_spot_clear(r.id, spot[:2], WATER_MAIN, h):
                        x, y, yaw = spot
                        self.add("water_main", r.id, Pose(x=x, y=y, z=self.floor(r.id) + h, yaw=yaw))
                        return
        garage = next((r for r in self.home.rooms if r.type == "GARAGE"), None)
        if garage is not None:
            walls = self.wall_candidates(garage.id)
            if walls:
                x, y, yaw = walls[0]
                self.add("water_main", garage.id, Pose(x=x, y=y, z=self.floor(garage.id) + h, yaw=yaw))
                self.notes.append("no kitchen sink or washer with a wall beside it: the water main is in the garage")
                return
        for t in placement.rooms:
            for r in self.home.rooms:
                walls = self.wall_candidates(r.id) if r.type == t else []
                if walls:
                    x, y, yaw = walls[0]
                    self.add("water_main", r.id, Pose(x=x, y=y, z=self.floor(r.id) + h, yaw=yaw))
                    self.notes.append(f"no sink or washer with a wall beside it: the water main is on a wall "
                                      f"of room {r.id}")
                    return
        self.failures.append("no place for the water main (no sink, washer, garage or wet room)")

    def rooms_at(self, xy: np.ndarray) -> list[str | None]:
        """:meth:`Home.room_at` of many points: the first room (in the home's order) covering each."""
        found: list[str | None] = [None] * len(xy)
        left = np.arange(len(xy))
        pts = shapely.points(xy)
        for rid, poly in self.polys.items():
            if len(left) == 0:
                break
            hit = shapely.covers(poly, pts[left])
            for k in left[hit].tolist():
                found[k] = rid
            left = left[~hit]
        return found

    def wall_point_near(self, rid: str, p: Point) -> tuple[float, float, float] | None:
        poly = ccw(self.polys[rid])
        ring = poly.exterior
        d = ring.project(p)
        a = ring.interpolate(d)
        b = ring.interpolate(min(d + 0.01, ring.length))
        if a.distance(b) < 1e-9:
            b = ring.interpolate(max(d - 0.01, 0.0))
            a, b = b, a
        ux, uy = b.x - a.x, b.y - a.y
        n = math.hypot(ux, uy) or 1.0
        inward = (-uy / n, ux / n)
        x, y = a.x + inward[0] * WALL_INSET, a.y + inward[1] * WALL_INSET
        return (x, y, heading(*inward)) if poly.covers(Point(x, y)) else None

    # -- cameras

    def corners(self, rid: str) -> list[tuple[float, float]]:
        """Candidate camera points: each convex corner of the room, moved in along its bisector."""
        return list(self.room_corners[rid])

    @functools.cached_property
    def room_corners(self) -> dict[str, list[tuple[float, float]]]:
        """:meth:`corners` of every room (its :meth:`outline`'s), found for all at once."""
        rids = list(self.polys)
        outlines = np.empty(len(rids), dtype=object)
        outlines[:] = [self.outline(rid) for rid in rids]
        coords, ring = shapely.get_coordinates(shapely.get_exterior_ring(outlines), return_index=True)
        vertex = np.nonzero(ring[1:] == ring[:-1])[0]  # each ring's points but its closing one
        owner, edge = ring[vertex], coords[vertex + 1] - coords[vertex]  # the edge out of each vertex
        count = np.bincount(owner, minlength=len(rids))
        first = (np.cumsum(count) - count)[owner]
        into = first + (np.arange(len(vertex)) - first - 1) % count[owner]  # the edge into each vertex
        length = np.hypot(edge[:, 0], edge[:, 1])
        a, b, la, lb = edge[into], edge, length[into], length
        # A corner to look out of: convex (not reflex, not straight), between edges of some length.
        ok = (la >= 1e-6) & (lb >= 1e-6) & (a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0] > 1e-9)
        at, a, b, la, lb, owner = coords[vertex][ok], a[ok], b[ok], la[ok], lb[ok], owner[ok]
        bis = -a / la[:, None] + b / lb[:, None]
        nb = np.hypot(bis[:, 0], bis[:, 1])
        ok = nb >= 1e-9
        p, owner = at[ok] + bis[ok] / nb[ok, None] * CAMERA_CORNER_INSET, owner[ok]
        shapely.prepare(outlines)
        inside = shapely.contains_xy(outlines[owner], p[:, 0], p[:, 1])
        out: dict[str, list[tuple[float, float]]] = {rid: [] for rid in rids}
        for k, q in zip(owner[inside].tolist(), p[inside].tolist()):
            out[rids[k]].append(tuple(q))
        return out

    @_memo
    def coverage_floor(self, rid: str) -> BaseGeometry:
        """The room's floor whose points score what a camera sees."""
        return self.polys[rid].buffer(-0.1)

    @_memo
    def coverage_points(self, rid: str) -> np.ndarray:
        """The floor points a camera's view of the room is scored on."""
        poly = self.coverage_floor(rid)
        step = max(COVERAGE_STEP, math.sqrt(max(poly.area, 0.0) / 300.0))
        return grid_points(poly, step)

    @_memo
    def sight_clear(self, rid: str) -> bool:
        """Whether nothing blocks sight between any of the room's camera corners and coverage
        points: no blocker meets the convex hull of the corners and the floor the points lie
        on, which holds every line between them."""
        pts = np.concatenate([shapely.get_coordinates(self.coverage_floor(rid)), np.reshape(self.room_corners[rid], (-1, 2))])
        if len(pts) == 0 or not self.walls_near_box((*pts.min(axis=0), *pts.max(axis=0))):
            return True
        hull = shapely.multipoints(pts).convex_hull
        blocking = self.blockers_near(hull)
        return blocking is None or not blocking.intersects(hull)

    @functools.cached_property
    def blocking(self) -> BaseGeometry:
        """What blocks sight (:func:`sight_blockers`), prepared."""
        blocking = sight_blockers(self.home)
        shapely.prepare(blocking)
        return blocking

    @functools.cached_property
    def wall_tree(self) -> shapely.STRtree:
        return shapely.STRtree(self.wall_shapes().geoms)

    def blockers_near(self, geom: BaseGeometry) -> BaseGeometry | None:
        """:attr:`blocking`, or None where no wall comes within a micrometre of ``geom`` (then
        nothing that blocks sight, the walls shrunk, meets it)."""
        if not self.walls_near_box(geom.bounds):
            return None
        near = self.wall_tree.query(geom, predicate="dwithin", distance=1e-6)
        return self.blocking if len(near) else None

    def walls_near_box(self, bounds: tuple[float, float, float, float]) -> bool:
        """Whether the bounds of a wall come within a micrometre of the box ``bounds``."""
        walls = self.wall_shapes().bounds
        gap = np.hypot(np.maximum(np.maximum(walls[:, 0] - bounds[2], bounds[0] - walls[:, 2]), 0.0),
                       np.maximum(np.maximum(walls[:, 1] - bounds[3], bounds[1] - walls[:, 3]), 0.0))
        return bool(np.any(~(gap > 1e-6)))

    def near_walls(self, points: list[tuple[float, float]], distance: float) -> list[bool]:
        """Which points lie closer than ``distance`` to the home's walls (their union), measured to
        each wall; the union is built only for a point as far as ``distance`` within rounding."""
        walls = self.wall_shapes()
        if not points:
            return []
        nearest = walls.distances(np.asarray(points, dtype=float), distance).min(axis=0)
        if np.any(~(np.abs(nearest - distance) > 1e-9)):
            union = shapely.union_all(walls.geoms)
            return [union.distance(Point(p)) < distance for p in points]
        return (nearest < distance).tolist()

    @_memo
    def wall_shapes(self) -> Shapes:
        return Shapes.of([polygon_from_rings(w.polygon) for w in self.home.walls])

    @_memo
    def corner_views(self, rid: str, must_see: tuple[float, float] | None, hfov: float
                     ) -> dict[tuple[float, float], tuple[float, float, float, np.ndarray, bool]]:
        """Cameras in the room's corners (:meth:`camera_pose`), by corner: the yaw, height and
        pitch, which of the room's coverage points it sees, and whether it sees ``must_see``."""
        corners = self.room_corners[rid]
        poses = [self.camera_pose(rid, c, must_see=must_see, hfov=hfov) for c in corners]
        cams = np.array([(c[0], c[1], pose[0]) for c, pose in zip(corners, poses)], dtype=float).reshape(-1, 3)
        # Nothing blocks the lines to the coverage points of a room clear of blockers.
        seen = visible_masks(cams, hfov, self.coverage_points(rid), None if self.sight_clear(rid) else self.blocking)
        sees = np.ones(len(corners), dtype=bool)
        if must_see is not None:
            sees = visible_masks(cams, hfov, np.array([must_see]), None)[:, 0]
            for k in np.nonzero(sees)[0].tolist():  # in sight where no wall comes near the line to it
                blocking = self.blockers_near(shapely.linestrings([corners[k], must_see]))
                sees[k] = blocking is None or blocking.is_empty or not blocking.intersects(
                    shapely.linestrings([cams[k, :2], must_see]))
        return {c: (*pose, seen[k], target) for k, (c, pose, target) in enumerate(zip(corners, poses, sees.tolist()))}

    def camera_pose(self, rid: str, corner: tuple[float, float], target: tuple[float, float] | None = None,
                    must_see: tuple[float, float] | None = None, hfov: float = 100.0) -> tuple[float, float, float]:
        c = self.centre(rid)
        aim = target or (c.x, c.y)
        yaw = heading(aim[0] - corner[0], aim[1] - corner[1])
        if must_see is not None:
            to_door = heading(must_see[0] - corner[0], must_see[1] - corner[1])
            off = math.remainder(to_door - yaw, 2 * math.pi)
            limit = math.radians(hfov / 2 - CAMERA_EDGE_MARGIN)
            if abs(off) > limit:
                yaw = to_door - math.copysign(limit, off)
        z = self.ceiling(rid) - CAMERA_CEILING_DROP
        dist = max(math.hypot(aim[0] - corner[0], aim[1] - corner[1]), 0.5)
        pitch = -math.degrees(math.atan2(z - self.floor(rid) - CAMERA_AIM_HEIGHT, dist))
        pitch = min(max(pitch, CAMERA_PITCH_RANGE[0]), CAMERA_PITCH_RANGE[1])
        return yaw, z, math.radians(pitch)

    def best_camera(self, rid: str, hfov: float, *, must_see: tuple[float, float] | None = None,
                    exclude: np.ndarray | None = None, prefer_walls: bool = False):
        """The corner, yaw and what it sees that shows most of the room (and ``must_see``)."""
        corners = self.corners(rid)
        if prefer_walls and self.home.walls:
            near = [c for c, ok in zip(corners, self.near_walls(corners, 0.6)) if ok]
            corners = near or corners
        views = self.corner_views(rid, must_see, hfov)
        best = None
        for i, corner in enumerate(corners):
            yaw, z, pitch, seen, sees_target = views[corner]
            fresh = seen & ~exclude if exclude is not None else seen
            key = (sees_target, int(fresh.sum()), -i)
            if best is None or key > best[0]:
                best = (key, corner, yaw, z, pitch, seen)
        if best is None:
            return None
        _, corner, yaw, z, pitch, seen = best
        share = float(seen.mean()) if len(seen) else 1.0
        return corner, yaw, z, pitch, seen, share, best[0][0]

    def cameras_plan(self) -> None:
        entry = self.entry("dome_camera")
        hfov = entry.camera.hfov_deg  # a camera device type always has optics (catalog)
        planned = self.entrance_cameras(hfov)
        done = {p["room"] for p in planned if not p.get("doorbell")}
        planned += self.room_cameras(hfov, done)
        if self.profile.second_camera_below is not None:
            planned += self.second_cameras(planned, hfov)
        self.top_up_agent_cameras(planned, hfov)
        # The agent gets the first cameras by priority, up to the cap; the rest record for evaluation.
        agent_order = sorted((p for p in planned if p["agent"]),
                             key=lambda p: (p["priority"], self.room_index(p["room"])))
        for k, p in enumerate(agent_order):
            if k >= self.profile.agent_camera_cap:
                p["agent"] = False
                self.notes.append(f"camera in room {p['room']} is evaluation-only: the agent's "
                                  f"{self.profile.agent_camera_cap} cameras are taken")
        for p in sorted(planned, key=lambda p: (not p["agent"], p["priority"], self.room_index(p["room"]))):
            self.add_camera(p, entry)

    def entrance_cameras(self, hfov: float) -> list[dict[str, Any]]:
        """The hall's camera seeing the inside of the entrance door; the porch's seeing its
        outside, or a doorbell camera where the door opens onto nothing drawn."""
        entrance = next((o for o in self.home.openings if o.kind == "entrance_door" and inner_room(self.home, o)),
                        None)
        if entrance is None:
            return []
        planned: list[dict[str, Any]] = []
        hall = inner_room(self.home, entrance)
        door_in = opening_face_point(self.home, entrance, hall, ENTRANCE_INSIDE_DEPTH)
        got = self.best_camera(hall, hfov, must_see=door_in)
        if got is not None:
            planned.append(self.camera_record(hall, got, priority=0, agent=True))
            if not got[6]:
                self.failures.append(f"no corner of room {hall} sees the entrance door {entrance.id}")
        outer = next((r for r in entrance.connects if r != hall and r in self.rooms), None)
        if outer is not None and self.polys[outer].area >= 1.0:
            door_out = opening_face_point(self.home, entrance, outer, ENTRANCE_INSIDE_DEPTH)
            got = self.best_camera(outer, hfov, must_see=door_out, prefer_walls=self.rooms[outer].outdoor)
            if got is not None:
                planned.append(self.camera_record(outer, got, priority=1, agent=True))
        else:
            planned.append(self.doorbell_camera(entrance, hall))
        return planned

    def room_cameras(self, hfov: float, done: set[str]) -> list[dict[str, Any]]:
        """A camera in each other room large enough: common rooms and outdoor spaces for the
        agent (by :data:`AGENT_CAMERA_SUBTYPES` order), private and service rooms for evaluation."""
        planned: list[dict[str, Any]] = []
        for r in self.home.rooms:
            if r.id in done or self.polys[r.id].area < MIN_CAMERA_ROOM_AREA:
                continue
            if r.outdoor:
                priority, agent = 2 + len(AGENT_CAMERA_SUBTYPES), True
            elif r.indoor and r.type in AGENT_CAMERA_SUBTYPES:
                priority, agent = 2 + AGENT_CAMERA_SUBTYPES.index(r.type), True
            elif r.type in EVALUATION_CAMERA_SUBTYPES:
                priority, agent = 100, False
            else:
                continue
            got = self.best_camera(r.id, hfov, prefer_walls=r.outdoor)
            if got is None:
                self.notes.append(f"room {r.id}: no corner for a camera")
                continue
            planned.append(self.camera_record(r.id, got, priority=priority, agent=agent))
        return planned

    def second_cameras(self, planned: list[dict[str, Any]], hfov: float) -> list[dict[str, Any]]:
        """Second, evaluation-only cameras where the first sees little of a large room."""
        added: list[dict[str, Any]] = []
        for rec in planned:
            rid = rec["room"]
            if rec.get("doorbell") or rec["share"] >= self.profile.second_camera_below or \
                    self.polys[rid].area < self.profile.second_camera_min_area:
                continue
            got = self.best_camera(rid, hfov, exclude=rec["seen"], prefer_walls=self.rooms[rid].outdoor)
            if got is not None and tuple(got[0]) != tuple(rec["corner"]):
                added.append(self.camera_record(rid, got, priority=200, agent=False))
        return added

    def top_up_agent_cameras(self, planned: list[dict[str, Any]], hfov: float) -> None:
        """Give the agent at least ``agent_camera_min`` cameras, more in larger homes
        (``agent_cameras_per_space``), where the home allows."""
        by_size = round(self.profile.agent_cameras_per_space * len(self.home.rooms))
        wanted = min(max(self.profile.agent_camera_min, by_size), self.profile.agent_camera_cap)

        def short() -> int:
            return wanted - sum(1 for p in planned if p["agent"])

        open_rooms = [p for p in planned if not p["agent"] and self.rooms[p["room"]].type not in
                      BEDROOM_SUBTYPES | BATHROOM_SUBTYPES]
        for p in sorted(open_rooms, key=lambda p: (p["priority"], self.room_index(p["room"]))):
            if short() <= 0:
                return
            p["agent"] = True
            self.notes.append(f"camera in room {p['room']} given to the agent ({wanted} agent cameras wanted)")
        common = [r for r in self.home.rooms if (r.outdoor or r.type in AGENT_CAMERA_SUBTYPES)
                  and self.polys[r.id].area >= self.profile.agent_second_view_min_area]
        common.sort(key=lambda r: (-round(self.polys[r.id].area, 1), self.room_index(r.id)))
        for r in common:
            if short() <= 0:
                return
            if sum(1 for p in planned if p["room"] == r.id) >= 2:
                continue
            first = next((p for p in planned if p["room"] == r.id and not p.get("doorbell")), None)
            got = self.best_camera(r.id, hfov, exclude=first["seen"] if first else None, prefer_walls=r.outdoor)
            if got is None or (first is not None and tuple(got[0]) == tuple(first["corner"])):
                continue
            planned.append(self.camera_record(r.id, got, priority=150, agent=True))
            self.notes.append(f"second camera in room {r.id} given to the agent ({wanted} agent cameras wanted)")

    def room_index(self, rid: str) -> int:
        return next(i for i, r in enumerate(self.home.rooms) if r.id == rid)

    def camera_record(self, rid: str, got, *, priority: int, agent: bool) -> dict[str, Any]:
        corner, yaw, z, pitch, seen, share, _ = got
        return {"room": rid, "corner": corner, "yaw": yaw, "z": z, "pitch": pitch, "seen": seen,
                "share": share, "priority": priority, "agent": agent}

    def doorbell_camera(self, door: Opening, hall: str) -> dict[str, Any]:
        x, y, yaw = self.face(door, hall, depth=0.05, along=door.width / 2 + 0.2, outside=True)
        return {"room": hall, "corner": (x, y), "yaw": yaw, "z": self.floor(hall) + DOORBELL_CAMERA_HEIGHT,
                "pitch": math.radians(DOORBELL_CAMERA_PITCH), "seen": np.zeros(0, dtype=bool), "share": 1.0,
                "priority": 1, "agent": True, "doorbell": door.id}

    def add_camera(self, p: dict[str, Any], entry: DeviceEntry) -> None:
        rid = p["room"]
        rtype = self.rooms[rid].type
        privacy = ("image_blocked" if rtype in BATHROOM_SUBTYPES else
                   "people_masked" if rtype in BEDROOM_SUBTYPES else "none")
        x, y = p["corner"]
        pose = CameraPose(x=x, y=y, z=p["z"], yaw=p["yaw"], pitch=p["pitch"])
        if p.get("doorbell"):
            cid = self.new_id("doorbell_camera", rid)
            cam = camera_from_catalog(entry, cid, rid, pose, agent_visible=p["agent"], privacy_mode=privacy)
            self.cameras.append(cam)
            return
        cid = self.new_id("dome_camera", rid)
        cam = camera_from_catalog(entry, cid, rid, pose, agent_visible=p["agent"], privacy_mode=privacy)
        self.cameras.append(cam)
        self.devices.append(new_device(
            entry, cid, rid, Pose(x=x, y=y, z=p["z"], yaw=p["yaw"]), name=f"{self.room_name(rid)} {entry.name}",
            agent_visible=p["agent"], values={"privacy_mode": privacy}))

    # -- all of it

    def run(self) -> EquipResult:
        home = self.home
        self.smoke_sensors()
        self.appliance_devices()
        self.opening_devices()
        self.lights_and_switches()
        self.lamps()
        self.plugs()
        self.thermostat()
        self.water_main()
        self.plant_sensors()
        with_people = self.wearables()
        if with_people is not None:
            home = with_people
        self.cameras_plan()
        devices = _unique_names(self.devices)
        openings = [o.model_copy(update={"is_open": True}) if o.id in self.open_doors else o for o in home.openings]
        parts = {name: getattr(home, name) for name in Home.model_fields}
        parts.update({
            "devices": list(home.devices) + devices, "openings": openings,
            "cameras": list(home.cameras) + self.cameras, "equip_profile": self.profile.name,
            "placement_exceptions": list(home.placement_exceptions) + self.exceptions})
        # The parts are models built (and so checked and rounded) already: validating the home
        # from them checks what ties them together without building every part again.
        out = Home.model_validate(parts)
        return EquipResult(out, self.notes, self.unmet_rule_failures() + self.failures)


def object_footprint(obj: HomeObject) -> Polygon:
    """An object's footprint: its catalog width and depth about its pose, turned by its yaw."""
    width, depth, _ = obj.size
    box = shapely.box(-depth / 2, -width / 2, depth / 2, width / 2)
    return affinity.translate(affinity.rotate(box, obj.pose.yaw, origin=(0, 0), use_radians=True),
                              obj.pose.x, obj.pose.y)


def lamp_spot(host: Furniture, top: Surface, things: list[Polygon], size: BodySize) -> tuple[float, float] | None:
    """Where a lamp with a base of ``size`` stands on a top, clear of ``things`` by :data:`LAMP_GAP`;
    None where it does not fit.

    In the host's frame (+x its front) the base is a square along the axes: its centre may go
    anywhere on the top shrunk by half the base, less each thing's box grown by half the base
    and the gap. Of the corners of that free region it takes the one that hides least of the
    things behind it from someone in front, then the one farthest back, then the one farthest
    to a side: a back corner where that is free.
    """
    # The top and the things in the host's frame, moved and turned at once.
    moved = affinity.translate(shapely.GeometryCollection([polygon_from_rings(top.polygon), *things]),
                               -host.pose.x, -host.pose.y)
    local = shapely.get_parts(affinity.rotate(moved, -host.pose.yaw, origin=(0, 0), use_radians=True))
    (x0, y0, x1, y1), *boxes = [tuple(b) for b in shapely.bounds(local).tolist()]
    half_d, half_w = size.depth / 2, size.width / 2
    if x1 - x0 < size.depth or y1 - y0 < size.width:
        return None
    taken = [shapely.box(a - half_d - LAMP_GAP, b - half_w - LAMP_GAP, c + half_d + LAMP_GAP, d + half_w + LAMP_GAP)
             for a, b, c, d in boxes]
    free = shapely.box(x0 + half_d, y0 + half_w, x1 - half_d, y1 - half_w)
    if taken:
        free = free.difference(shapely.union_all(taken))
    rings = [r for g in shapely.get_parts(free) if g.geom_type == "Polygon" and g.area > 0
             for r in (g.exterior, *g.interiors)]
    corners = sorted({(round(x, 4), round(y, 4)) for r in rings for x, y in r.coords})
    if not corners:
        return None

    def hidden(u: float, v: float) -> float:
        """The width of the things behind a lamp at (u, v) that it covers seen from the front."""
        return sum(max(0.0, min(v + half_w, b1) - max(v - half_w, b0)) for a0, b0, a1, b1 in boxes
                   if (a0 + a1) / 2 < u)

    u, v = min(corners, key=lambda c: (round(hidden(*c), 3), c[0], -abs(c[1]), c[1]))
    x, y, _ = host.pose.to_world(u, v)
    return round(x, 3), round(y, 3)


def _local_width(f: Furniture) -> float:
    ring = np.asarray(f.footprint[0])
    c, s = math.cos(f.pose.yaw), math.sin(f.pose.yaw)
    local_y = -(ring[:, 0] - f.pose.x) * s + (ring[:, 1] - f.pose.y) * c
    return float(local_y.max() - local_y.min())


def _local_depth(f: Furniture) -> float:
    ring = np.asarray(f.footprint[0])
    c, s = math.cos(f.pose.yaw), math.sin(f.pose.yaw)
    local_x = (ring[:, 0] - f.pose.x) * c + (ring[:, 1] - f.pose.y) * s
    return float(local_x.max() - local_x.min())


def _opening_word(o: Opening) -> str:
    return {"entrance_door": "front door", "garage_door": "garage door", "door": "door"}.get(o.kind, "window")


def _unique_names(devices: list[Device]) -> list[Device]:
    """Devices with names made unique by a number (``kitchen plug 2``), in order."""
    seen: dict[str, int] = {}
    totals: dict[str, int] = {}
    for d in devices:
        totals[d.name] = totals.get(d.name, 0) + 1
    out = []
    for d in devices:
        if totals[d.name] == 1:
            out.append(d)
            continue
        seen[d.name] = seen.get(d.name, 0) + 1
        out.append(d.model_copy(update={"name": f"{d.name} {seen[d.name]}"}))
    return out


def equip(home: Home, catalog: Catalog, rng: np.random.Generator,
          profile: EquipProfile = DEFAULT_PROFILE) -> EquipResult:
    """A new home with devices and cameras placed (see the module docstring).

    ``home`` must not hold devices or cameras of its own already placed by
    this stage; its fixtures (sinks, counters) anchor the water main. ``rng``
    is the only source of randomness.
    """
    return _Equipper(home, catalog, rng, profile).run()


def _smoke_rule(catalog: Catalog) -> KeepAway:
    """The catalog's smoke-sensor distance rule; a catalog without one cannot equip homes."""
    rule = smoke_distance_rule(catalog)
    if rule is None:
        raise CatalogError(f"{catalog.source_of('devices', SMOKE_SENSOR)}: devices entry {SMOKE_SENSOR!r}: field "
                           "placement.keep_away: needs a rule away from cooking_appliance (NFPA 72)")
    return rule


# --- the house ------------------------------------------------------------------------

#: The house's equipment (docs/pipeline.md), checked by :func:`house_problems`.
HOUSE_CAMERAS = 14
HOUSE_AGENT_CAMERAS = 8


def equip_house(home: Home, catalog: Catalog, seed: int = 0) -> EquipResult:
    """Equip the furnished house with :data:`HOUSE_PROFILE`; anything the house's
    list (:func:`house_problems`) has that is missing becomes a failure."""
    result = equip(home, catalog, np.random.default_rng(seed), HOUSE_PROFILE)
    return replace(result, failures=result.failures + house_problems(result.home))


def house_problems(home: Home) -> list[str]:
    """What the equipped house lacks of docs/pipeline.md's list (empty when complete)."""
    problems: list[str] = []
    by_type = {r.type: r.id for r in home.rooms}

    def devices_in(t: str, room_type: str | None = None) -> list[Device]:
        return [d for d in home.devices_of_type(t)
                if room_type is None or (d.room is not None and home.room(d.room).type == room_type)]

    if len(home.cameras) != HOUSE_CAMERAS or home.agent_camera_count != HOUSE_AGENT_CAMERAS:
        problems.append(f"{len(home.cameras)} cameras ({home.agent_camera_count} for the agent); the house has "
                        f"{HOUSE_CAMERAS} ({HOUSE_AGENT_CAMERAS} for the agent)")
    kitchen = by_type.get("KITCHEN")
    if not any(kitchen in d.monitors or d.room == kitchen for d in home.devices_of_type("smoke_sensor")):
        problems.append("no smoke sensor for the kitchen")
    if not devices_in("stove", "KITCHEN"):
        problems.append("no stove device on the kitchen range")
    if not any(home.furniture_item(m).semantic_class == "dishwasher"
               for d in home.devices_of_type("leak_sensor") for m in d.monitors):
        problems.append("no leak sensor beside the dishwasher")
    for t in ("water_main", "lock", "doorbell", "thermostat"):
        if not home.devices_of_type(t):
            problems.append(f"no {t}")
    if not any(home.room(c.room).type == "PORCH" for c in home.cameras):
        problems.append("no porch camera")
    for room_type in ("OFFICE", "LIVING_ROOM"):
        plants = [o for o in home.objects if o.semantic_class == "potted_plant"
                  and home.room(o.location.room).type == room_type]
        sensed = {m for d in home.devices_of_type("soil_moisture_sensor") for m in d.monitors}
        if not plants or any(p.id not in sensed for p in plants):
            problems.append(f"no plant with a soil sensor in the {room_type.lower()}")
    if not [d for d in devices_in("light", "LIVING_ROOM") if d.mount in ("on_furniture", "floor")]:
        problems.append("no lamp in the living room")
    for t in ("washer", "dryer"):
        if not devices_in(t, "WASH_AND_DRY_ROOM"):
            problems.append(f"no {t} in the laundry")
    living = by_type.get("LIVING_ROOM")
    windows = {o.id for o in home.openings if o.kind == "window" and o.openable and living in o.connects}
    if not any(d.mounted_on in windows for d in home.devices_of_type("contact_sensor")):
        problems.append("no openable living-room window with a contact sensor")
    return problems


def device_summary(home: Home) -> dict[str, Any]:
    """Counts the build reports per home: devices the agent can query, cameras by kind."""
    return {
        "devices": len(home.devices),
        "agent_devices": sum(1 for d in home.devices if d.agent_visible),
        "cameras": len(home.cameras),
        "agent_cameras": home.agent_camera_count,
        "evaluation_cameras": home.evaluation_camera_count,
        "by_type": home.device_counts(),
    }


__all__ = [
    "DEFAULT_PROFILE",
    "HOUSE_PROFILE",
    "EquipProfile",
    "EquipResult",
    "device_summary",
    "equip",
    "equip_house",
    "house_problems",
]
