"""The home verifier: rules every furnished, device-equipped home must satisfy.

:func:`check_home` reads only the home file and the catalog (robot body
widths, and the numbers of the placement rules: docs/catalog.md) and returns
one :class:`CheckFinding` per violation; an empty list means the home is kept
by the build. It is independent of the stages that build homes: it measures
every distance and clear zone on the home file itself (with the shared
geometry of :mod:`homeloop.core.geometry`), so a fault in furnishing or equipping
shows up here.

Rules (ids are stable; a finding names the elements involved; :data:`RULES`
lists them as the code registers them):

- ``furniture_overlap``: two footprints overlap by more than
  :data:`OVERLAP_TOLERANCE` (items standing on another item and flat decor
  such as rugs are exempt).
- ``furniture_outside_room``: part of a footprint lies outside its room.
- ``furniture_blocks_wall`` / ``furniture_blocks_opening``: a footprint lies
  over a wall, or over a door or window rectangle.
- ``door_clearance``: furniture in a door's clear zone (see
  :func:`homeloop.core.geometry.door_clear_zones`).
- ``window_blocked_by_tall_item``: a tall item stands in front of a window.
- ``fridge_clearance``: the free floor in front of a fridge (its catalog
  ``clearance_front``) is taken by a wall, a fixture or furniture, or is not floor.
- ``unreachable_room``: an indoor room or the garage is not reachable from the
  entrance by the experiments' robot body (:data:`EXPERIMENT_ROBOT`).
- ``doors_not_connected``: two doors of a room are not joined by free floor
  inside the room for the widest catalog body.
- ``smoke_sensor_distance``: a smoke sensor nearer to a cooking appliance than
  the catalog's rule (NFPA 72: 3.0 m), or than its fallback (1.8 m) where the
  home records a placement exception for it.
- ``smoke_sensor_near_wall``: a smoke sensor nearer to its room's walls than
  the catalog's ``min_wall_distance`` (NFPA 72: 4 in, 0.1 m).
- ``smoke_sensor_missing_bedroom`` / ``smoke_sensor_missing_outside_sleeping``.
- ``leak_sensor_missing``: an appliance the catalog's leak sensor is for (the
  dishwasher) without one within the catalog's ``max_distance``.
- ``light_switch_far_from_door``: a light switch farther from every door of its
  room than the catalog's ``max_distance`` (0.4 m); a room entered only through
  open passages has no door to be beside.
- ``water_main_far_from_sink``: the water main farther than the catalog's
  ``max_distance`` (2.0 m) from every fixture its ``near`` names (the sink, the
  kitchen counter) in a room of its ``rooms``; a home with none has it by the
  washer or in the garage.
- ``plug_far_from_furniture``: a plug farther than the catalog's ``max_distance``
  (1.0 m) from the furniture it powers.
- ``contact_sensor_missing``: an exterior door or openable window without one.
- ``entrance_not_covered``: no camera sees the inside of the entrance door.
- ``device_outside_room``: a device's position is not in its room.
- ``camera_privacy``: a bathroom camera not image-blocked, a bedroom camera
  without privacy, or a dome camera device disagreeing with its camera.
- ``object_inside_furniture``: a carryable object's box reaches more than
  :data:`OBJECT_PENETRATION` into the solid of a piece of furniture (a shelf
  board, a drum's wall, a TV's panel, a closed door), as
  :func:`homeloop.core.geometry_assets.furniture_solids` models it: objects on a
  surface rest on it, objects in a container lie in its cavity.
- ``device_overlaps_object``: a device's body
  (:func:`homeloop.core.geometry_assets.device_body`) reaches more than
  :data:`OBJECT_PENETRATION` into a carryable object or into the solid of a
  piece of furniture, other than the one it is mounted on (a lamp stands on
  its nightstand beside what lies there, a soil probe is in its plant).
"""

from __future__ import annotations

import math
from collections import deque
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np
import shapely
from shapely import LineString, Point
from shapely.geometry.base import BaseGeometry

from homeloop.core import navigation
from homeloop.core.catalog import Catalog, KeepAway
from homeloop.core.geometry import (
    DOOR_CLEAR_DEPTH,
    DOOR_OBSTRUCTION_MIN_AREA,
    WINDOW_CLEAR_DEPTH,
    ShapeMemo,
    door_clear_zones,
    face_point,
    open_connections,
    oriented_boxes,
)
from homeloop.core.geometry_assets import OrientedBoxes, device_solids, object_box, overlapping_pairs, placed_solids
from homeloop.core.home import Camera, Furniture, Home, Opening, polygon_from_rings
from homeloop.core.plan import BEDROOM_SUBTYPES

# --- thresholds -------------------------------------------------------------------------

#: Overlap (m²) of two furniture footprints, or of a footprint with a wall or an
#: opening, above which they collide (a square centimetre).
OVERLAP_TOLERANCE = 1e-4
#: A footprint may stick out of its room by this much (m): rounding to the millimetre.
ROOM_TOLERANCE = 0.01
#: Furniture no higher than this (m) is flat decor (rugs): it never collides.
FLAT_HEIGHT = 0.03
#: The zone in front of a fridge is shrunk by this much (m) on every side, so an
#: item touching its edge (footprints are rounded to the millimetre) does not take it.
CLEARANCE_EDGE = 0.005
#: Slack (m) on distances to walls: poses are rounded to the millimetre.
POSE_ROUNDING = 0.001
#: How far (m) a camera sees for the entrance rule.
CAMERA_RANGE = 8.0
#: The entrance door's inside point lies this far (m) into the room from the door's face.
ENTRANCE_INSIDE_DEPTH = 0.5
#: A device may lie this far (m) outside its room (wall mounts sit on the wall face).
DEVICE_ROOM_TOLERANCE = 0.05
#: A device on an opening lies within this distance (m) of the opening rectangle.
DEVICE_OPENING_TOLERANCE = 0.35
#: An object may reach this far (m) into furniture: poses are rounded to the millimetre.
OBJECT_PENETRATION = 0.002
#: The experiments' robot body, whose width decides reachability.
EXPERIMENT_ROBOT = "unitree_g1_d_ultimate"
#: The catalog's device types and the distance rule of the smoke sensor.
SMOKE_SENSOR, LEAK_SENSOR, COOKING = "smoke_sensor", "leak_sensor", "cooking_appliance"
LIGHT_SWITCH, WATER_MAIN, PLUG = "light_switch", "water_main", "plug"

#: Room subtypes a sleeping area extends through (bedrooms and rooms reached only from them).
PRIVATE_SUBTYPES = frozenset(BEDROOM_SUBTYPES | {"BATHROOM", "STOREROOM"})
BATHROOM_SUBTYPES = frozenset({"BATHROOM"})
PASSAGE_KINDS = frozenset({"door", "entrance_door", "garage_door"})


@dataclass(frozen=True)
class CheckFinding:
    """One violation: the rule id, the ids of the elements involved, and what to do."""

    rule: str
    elements: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class CheckRule:
    """A rule of :func:`check_home`: its id and what it asks of a home."""

    id: str
    description: str


Check = Callable[[Home, Catalog], list[CheckFinding]]

#: Every rule of :func:`check_home` by id, in the order its checks run (filled by :func:`checks`).
RULES: dict[str, CheckRule] = {}
_CHECKS: list[tuple[Check, frozenset[str]]] = []


def checks(**rules: str) -> Callable[[Check], Check]:
    """Register the decorated function as the check of these rules (``rule_id=description``)."""

    def register(check: Check) -> Check:
        for rule_id, description in rules.items():
            if rule_id in RULES:
                raise ValueError(f"home check rule {rule_id!r} is already registered")
            RULES[rule_id] = CheckRule(rule_id, description)
        _CHECKS.append((check, frozenset(rules)))
        return check

    return register


def check_home(home: Home, catalog: Catalog) -> list[CheckFinding]:
    """Every rule over ``home``; findings in rule order, then element order."""
    findings: list[CheckFinding] = []
    token = _SHARED.set((home, {}))
    try:
        for check, rule_ids in _CHECKS:
            found = check(home, catalog)
            stray = {f.rule for f in found} - rule_ids
            if stray:  # a check reports only the rules it registered
                raise AssertionError(f"{check.__name__} reported unregistered rules {sorted(stray)}")
            findings += found
    finally:
        _SHARED.reset(token)
    return findings


#: The home :func:`check_home` is checking and what its rules measured alike, by name; the
#: home is not changed while it is checked, so a rule reuses what another one built.
_SHARED: ContextVar[tuple[Home, dict[str, Any]] | None] = ContextVar("check_shared", default=None)


def _shared(home: Home, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, made once per :func:`check_home` call (each time outside one)."""
    current = _SHARED.get()
    if current is None or current[0] is not home:
        return compute()
    memo = current[1]
    if name not in memo:
        memo[name] = compute()
    return memo[name]


# --- shared geometry of a home ----------------------------------------------------------


def is_exterior(home: Home, opening: Opening) -> bool:
    """Whether an opening leads outside: marked so, an entrance or garage door, one
    with a single room, or one joining an outdoor or service space."""
    if opening.exterior or opening.kind in ("entrance_door", "garage_door") or len(opening.connects) < 2:
        return True
    rooms = {r.id: r for r in home.rooms}
    return any(rid in rooms and rooms[rid].space_class in ("outdoor", "service") for rid in opening.connects)


def inner_room(home: Home, opening: Opening) -> str | None:
    """The indoor (else ancillary, else any) room an opening connects."""
    rooms = {r.id: r for r in home.rooms}
    for wanted in ("indoor", "ancillary", None):
        for rid in opening.connects:
            if rid in rooms and (wanted is None or rooms[rid].space_class == wanted):
                return rid
    return None


def opening_face_point(home: Home, opening: Opening, room_id: str, depth: float) -> tuple[float, float]:
    """The point on an opening's centre line, ``depth`` beyond its face, on ``room_id``'s side."""
    p, _ = face_point(polygon_from_rings(opening.polygon), home.room_polygon(room_id), depth)
    return float(p[0]), float(p[1])


def open_passages(home: Home) -> list[tuple[str, str]]:
    """Pairs of rooms touching with no wall or window between them over a walkable length."""
    blockers = [polygon_from_rings(w.polygon) for w in home.walls]
    blockers += [polygon_from_rings(o.polygon) for o in home.openings if o.kind == "window"]
    pairs = open_connections([polygon_from_rings(r.polygon) for r in home.rooms], blockers)
    return [(home.rooms[i].id, home.rooms[j].id) for i, j in pairs]


def room_adjacency(home: Home) -> dict[str, list[str]]:
    """For each room, the rooms reached through a door or an open passage (sorted ids)."""
    adj: dict[str, set[str]] = {r.id: set() for r in home.rooms}
    for o in home.openings:
        if o.kind in PASSAGE_KINDS and len(o.connects) == 2:
            u, v = o.connects
            if u in adj and v in adj and u != v:
                adj[u].add(v)
                adj[v].add(u)
    for u, v in open_passages(home):
        adj[u].add(v)
        adj[v].add(u)
    return {k: sorted(v) for k, v in adj.items()}


def sleeping_area_exits(home: Home, adjacency: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """For each bedroom, the indoor rooms just outside its sleeping area.

    The sleeping area grows from the bedroom through bedrooms and rooms
    entered from them (bathrooms, storerooms); the first common indoor rooms
    met (a corridor, a living room ...) lie outside it. A bedroom opening
    only outdoors has none.
    """
    adj = adjacency if adjacency is not None else room_adjacency(home)
    rooms = {r.id: r for r in home.rooms}
    out: dict[str, list[str]] = {}
    for r in home.rooms:
        if r.type not in BEDROOM_SUBTYPES:
            continue
        seen = {r.id}
        queue = deque([r.id])
        exits: set[str] = set()
        while queue:
            cur = queue.popleft()
            for nxt in adj.get(cur, []):
                if nxt in seen:
                    continue
                seen.add(nxt)
                room = rooms[nxt]
                if not room.indoor:
                    continue
                if room.type in PRIVATE_SUBTYPES:
                    queue.append(nxt)
                else:
                    exits.add(nxt)
        out[r.id] = sorted(exits)
    return out


def camera_sees(camera: Camera, point: tuple[float, float], blocking: BaseGeometry | None,
                max_range: float = CAMERA_RANGE) -> bool:
    """Whether ``point`` (on the floor plan) lies in the camera's horizontal view cone,
    within ``max_range``, with no wall between them."""
    dx, dy = point[0] - camera.pose.x, point[1] - camera.pose.y
    dist = math.hypot(dx, dy)
    if dist > max_range:
        return False
    if dist > 1e-6:
        off = abs(math.remainder(math.atan2(dy, dx) - camera.pose.yaw, 2 * math.pi))
        if off > math.radians(camera.hfov_deg) / 2 + 1e-6:
            return False
    if blocking is None or blocking.is_empty or dist < 1e-6:
        return True
    return not LineString([(camera.pose.x, camera.pose.y), point]).intersects(blocking)


#: :func:`sight_blockers` by wall shapes: equipping places the cameras with them and the home
#: check tests the entrance against the same walls.
_BLOCKERS_CACHE = ShapeMemo(512)


def sight_blockers(home: Home) -> BaseGeometry:
    """Walls, shrunk by a centimetre so a camera in a corner does not touch them
    (one shared geometry per set of walls: never change it)."""
    walls = [polygon_from_rings(w.polygon) for w in home.walls if w.kind != "RAILING"]
    return _BLOCKERS_CACHE.get((walls,), (), lambda: navigation.union_of_walls(walls).buffer(-0.01) if walls
                               else shapely.Polygon())


def opening_zones(home: Home, kinds: frozenset[str] | set[str], depth: float) -> dict[str, list[BaseGeometry]]:
    """For each opening of these kinds, its clear zones ``depth`` deep on the faces that
    open over the home's rooms (:func:`homeloop.core.geometry.door_clear_zones`)."""
    chosen = [o for o in home.openings if o.kind in kinds]
    zones = door_clear_zones([polygon_from_rings(o.polygon) for o in chosen],
                             [polygon_from_rings(r.polygon) for r in home.rooms], depth)
    out: dict[str, list[BaseGeometry]] = {o.id: [] for o in chosen}
    for z in zones:
        out[chosen[z.opening].id].append(z.polygon)
    return out


def smoke_distance_rule(catalog: Catalog) -> KeepAway | None:
    """The catalog's rule keeping smoke sensors away from cooking appliances (NFPA 72)."""
    entry = catalog.devices.get(SMOKE_SENSOR)
    return entry.placement.keep_away_from(COOKING) if entry is not None else None


def _grown_rooms(home: Home) -> dict[str, BaseGeometry]:
    """Each room grown by :data:`ROOM_TOLERANCE`: how far a footprint may stick out of it."""
    return _shared(home, "grown_rooms", lambda: {rid: p.buffer(ROOM_TOLERANCE, join_style="mitre")
                                                 for rid, p in home.room_polygons().items()})


def _collides(f: Furniture) -> bool:
    return f.height > FLAT_HEIGHT


def _stacked(a: Furniture, b: Furniture) -> bool:
    """Whether one item stands on the other (its base at or above the other's top)."""
    return a.pose.z >= b.height - 0.02 or b.pose.z >= a.height - 0.02


# --- the rules ----------------------------------------------------------------------------


@checks(furniture_overlap="two pieces of furniture overlap (stacked items and flat decor excepted)",
        furniture_outside_room="part of a footprint lies outside its room",
        furniture_blocks_wall="a footprint lies over a wall",
        furniture_blocks_opening="a footprint lies over a door or window")
def _furniture_rules(home: Home, catalog: Catalog) -> list[CheckFinding]:
    items = [f for f in home.furniture if _collides(f)]
    polys = [polygon_from_rings(f.footprint) for f in items]
    return _overlaps(items, polys) + _outside_rooms(home, items, polys)


def _overlaps(items: list[Furniture], polys: list[BaseGeometry]) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    if len(items) < 2:
        return out
    a, b = shapely.STRtree(polys).query(np.array(polys, dtype=object), predicate="intersects")
    for i, j in sorted({(int(i), int(j)) for i, j in zip(a, b) if i < j}):
        fa, fb = items[i], items[j]
        if _stacked(fa, fb):
            continue
        area = polys[i].intersection(polys[j]).area
        if area > OVERLAP_TOLERANCE:
            out.append(CheckFinding("furniture_overlap", (fa.id, fb.id),
                                    f"{fa.id} and {fb.id} overlap by {area:.3f} m²: move one"))
    return out


def _outside_rooms(home: Home, items: list[Furniture], polys: list[BaseGeometry]) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    walls = [(w.id, polygon_from_rings(w.polygon)) for w in home.walls]
    openings = [(o.id, polygon_from_rings(o.polygon)) for o in home.openings]
    grown = _grown_rooms(home)
    for f, poly in zip(items, polys):
        room = grown[f.room]
        shapely.prepare(room)
        if room.contains(poly):  # nothing outside: the overlay is not needed
            continue
        outside = poly.difference(room)
        if outside.area <= OVERLAP_TOLERANCE:
            continue
        rest = outside
        for what, parts in (("furniture_blocks_wall", walls), ("furniture_blocks_opening", openings)):
            hit = [eid for eid, g in parts if outside.intersection(g).area > OVERLAP_TOLERANCE]
            if hit:
                kind = "wall" if what.endswith("wall") else "opening"
                out.append(CheckFinding(what, (f.id, *hit), f"{f.id} stands over {kind} {', '.join(hit)}"))
            for _, g in parts:
                rest = rest.difference(g)
        if rest.area > OVERLAP_TOLERANCE:
            out.append(CheckFinding("furniture_outside_room", (f.id, f.room),
                                    f"{f.id}: {rest.area:.3f} m² of its footprint lies outside room {f.room}"))
    return out


def _items_in_zones(items: list[Furniture], zones: dict[str, list[BaseGeometry]]) -> dict[str, list[str]]:
    """For each opening, the items (in their order) whose footprint covers more than
    :data:`DOOR_OBSTRUCTION_MIN_AREA` of one of its zones; only items whose bounds meet a
    zone are measured."""
    polys = np.array([polygon_from_rings(f.footprint) for f in items], dtype=object)
    tree = shapely.STRtree(polys)
    out: dict[str, list[str]] = {}
    for oid, faces in zones.items():
        hit: set[int] = set()
        for zone in faces:
            near = tree.query(zone)
            covered = shapely.area(shapely.intersection(polys[near], zone)) > DOOR_OBSTRUCTION_MIN_AREA
            hit.update(near[covered].tolist())
        out[oid] = [items[i].id for i in sorted(hit)]
    return out


@checks(door_clearance=f"furniture stands in a door's clear zone ({DOOR_CLEAR_DEPTH} m in front of each face)")
def _door_clearance(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    items = [f for f in home.furniture if _collides(f)]
    kinds = {o.id: o.kind for o in home.openings}
    for oid, hit in _items_in_zones(items, opening_zones(home, PASSAGE_KINDS, DOOR_CLEAR_DEPTH)).items():
        if hit:
            out.append(CheckFinding("door_clearance", (oid, *hit),
                                    f"{kinds[oid]} {oid}: {', '.join(hit)} within {DOOR_CLEAR_DEPTH} m of its face"))
    return out


@checks(window_blocked_by_tall_item=f"a tall item stands within {WINDOW_CLEAR_DEPTH} m in front of a window")
def _window_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    tall = [f for f in home.furniture if f.tall]
    if not tall:
        return out
    for oid, hit in _items_in_zones(tall, opening_zones(home, {"window"}, WINDOW_CLEAR_DEPTH)).items():
        if hit:
            out.append(CheckFinding("window_blocked_by_tall_item", (oid, *hit),
                                    f"window {oid}: tall {', '.join(hit)} stands in front of it"))
    return out


def fridge_front_zone(fridge: Furniture, reach: float, catalog: Catalog) -> BaseGeometry:
    """The free floor a fridge needs: its width by ``reach`` in front of its front face
    (catalog dimensions), shrunk by :data:`CLEARANCE_EDGE`."""
    d = catalog.furniture[fridge.catalog_id].dimensions
    yaw = fridge.pose.yaw
    u, v = np.array([[math.cos(yaw), math.sin(yaw)]]), np.array([[-math.sin(yaw), math.cos(yaw)]])
    edge = CLEARANCE_EDGE
    return oriented_boxes(np.array([[fridge.pose.x, fridge.pose.y]]), u, v, d.depth / 2 + edge,
                          d.depth / 2 + reach - edge, -d.width / 2 + edge, d.width / 2 - edge)[0]


@checks(fridge_clearance="the free floor in front of a fridge (catalog clearance_front) is taken or is not floor")
def _fridge_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    fridges = [f for f in home.furniture if f.semantic_class == "fridge" and f.catalog_id in catalog.furniture]
    if not fridges:
        return out
    floor = shapely.union_all(list(_grown_rooms(home).values()))
    solid = [(w.id, polygon_from_rings(w.polygon)) for w in home.walls]
    solid += [(x.id, polygon_from_rings(x.polygon)) for x in home.fixtures]
    solid += [(f.id, polygon_from_rings(f.footprint)) for f in home.furniture if _collides(f)]
    for fridge in fridges:
        reach = catalog.furniture[fridge.catalog_id].clearance_front
        zone = fridge_front_zone(fridge, reach, catalog)
        hit = [eid for eid, g in solid if eid != fridge.id and g.intersection(zone).area > OVERLAP_TOLERANCE]
        off_floor = zone.difference(floor).area > OVERLAP_TOLERANCE
        if hit or off_floor:
            what = ", ".join(hit) + (" and " if hit and off_floor else "") + ("the edge of the floor" if off_floor
                                                                              else "")
            out.append(CheckFinding("fridge_clearance", (fridge.id, *hit),
                                    f"fridge {fridge.id}: the {reach} m of free floor in front of it "
                                    f"(catalog clearance_front) is taken by {what}"))
    return out


def _rooms_needing_access(home: Home) -> list[str]:
    return [r.id for r in home.rooms if r.indoor or r.type == "GARAGE"]


@checks(unreachable_room=f"an indoor room or the garage is not reachable from the entrance by {EXPERIMENT_ROBOT}",
        doors_not_connected="two doors of a room are not joined by free floor inside it for the widest body")
def _navigation_rules(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    wanted = _rooms_needing_access(home)
    robot = catalog.robots.get(EXPERIMENT_ROBOT)
    if robot is not None and wanted:
        reached = navigation.reachable_rooms(home, robot.clearance_width)
        for rid in wanted:
            if rid not in reached:
                out.append(CheckFinding("unreachable_room", (rid,),
                                        f"room {rid} ({home.room(rid).type}) is not reachable from the entrance "
                                        f"by {robot.name} ({robot.clearance_width} m wide)"))
    widest = navigation.widest_body_width(catalog)
    if widest > 0:
        for rid, pairs in navigation.doors_not_joined(home, wanted, widest).items():
            for a, b in pairs:
                out.append(CheckFinding("doors_not_connected", (rid, a, b),
                                        f"room {rid}: no free floor {widest} m wide joins {a} and {b}"))
    return out


@checks(smoke_sensor_distance="a smoke sensor nearer to a cooking appliance than the catalog's rule allows",
        smoke_sensor_near_wall="a smoke sensor nearer to its room's walls than the catalog's min_wall_distance",
        smoke_sensor_missing_bedroom="a bedroom without a smoke sensor",
        smoke_sensor_missing_outside_sleeping="no smoke sensor just outside a sleeping area")
def _smoke_rules(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out = _smoke_distance(home, catalog) + _smoke_wall_distance(home, catalog)
    with_sensor = {s.room for s in home.devices_of_type(SMOKE_SENSOR)}
    for r in home.rooms:
        if r.type in BEDROOM_SUBTYPES and r.id not in with_sensor:
            out.append(CheckFinding("smoke_sensor_missing_bedroom", (r.id,), f"bedroom {r.id} has no smoke sensor"))
    for bedroom, exits in sleeping_area_exits(home).items():
        if exits and not with_sensor.intersection(exits):
            out.append(CheckFinding("smoke_sensor_missing_outside_sleeping", (bedroom, *exits),
                                    f"no smoke sensor outside the sleeping area of bedroom {bedroom} "
                                    f"(in one of {', '.join(exits)})"))
    return out


def _smoke_distance(home: Home, catalog: Catalog) -> list[CheckFinding]:
    """Each smoke sensor keeps the catalog's distance from cooking appliances, or its
    fallback where the home records the sensor as a placement exception of the rule."""
    out: list[CheckFinding] = []
    rule = smoke_distance_rule(catalog)
    if rule is None:
        return out
    where = catalog.source_of("devices", SMOKE_SENSOR).name
    cookers = [(f.id, polygon_from_rings(f.footprint)) for f in home.furniture if f.cooking_appliance]
    for s in home.devices_of_type(SMOKE_SENSOR):
        excepted = rule.fallback_distance is not None and home.placement_exception(s.id, rule.id) is not None
        need = rule.fallback_distance if excepted else rule.min_distance
        p = Point(s.pose.x, s.pose.y)
        for fid, g in cookers:
            d = g.distance(p)
            if d < need - 1e-6:
                unless = ("" if excepted or rule.fallback_distance is None else
                          f", or {rule.fallback_distance} m recorded as a placement exception")
                out.append(CheckFinding("smoke_sensor_distance", (s.id, fid),
                                        f"smoke sensor {s.id} is {d:.2f} m from cooking appliance {fid}; rule "
                                        f"{rule.id} ({where}) asks at least {need} m{unless}"))
    return out


def _smoke_wall_distance(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    entry = catalog.devices.get(SMOKE_SENSOR)
    limit = entry.placement.min_wall_distance if entry is not None else None
    if not limit:
        return out
    for s in home.devices_of_type(SMOKE_SENSOR):
        if s.room is None:
            continue
        d = home.room_polygon(s.room).boundary.distance(Point(s.pose.x, s.pose.y))
        if d < limit - POSE_ROUNDING:
            out.append(CheckFinding("smoke_sensor_near_wall", (s.id, s.room),
                                    f"smoke sensor {s.id} is {d:.2f} m from a wall of room {s.room}; the catalog's "
                                    f"min_wall_distance asks at least {limit} m"))
    return out


def near_limit(catalog: Catalog, device_type: str) -> float | None:
    """The catalog's ``max_distance`` of a device type's ``near`` rule (m); None where the
    catalog has no such device type, a :class:`CatalogError` where it gives no number."""
    if device_type not in catalog.devices:
        return None
    return catalog.placement_number(device_type, "max_distance")


def nearest(geoms: dict[str, BaseGeometry], x: float, y: float) -> tuple[str, float]:
    """The id of the geometry nearest the point and its distance (m); ``geoms`` is not empty."""
    p = Point(x, y)
    return min(((gid, g.distance(p)) for gid, g in geoms.items()), key=lambda hit: hit[1])


def room_doors(home: Home, room_id: str) -> dict[str, BaseGeometry]:
    """The doors (entrance and garage doors too) opening into a room, by id."""
    return {o.id: polygon_from_rings(o.polygon) for o in home.openings
            if o.kind in PASSAGE_KINDS and room_id in o.connects}


def water_main_anchors(home: Home, catalog: Catalog) -> dict[str, BaseGeometry]:
    """The fixtures the water main goes beside: of the kinds its catalog ``near`` names
    (SINK, KITCHEN), in rooms of the types its ``rooms`` names."""
    placement = catalog.devices[WATER_MAIN].placement
    wet = {r.id for r in home.rooms if r.type in placement.rooms}
    return {x.id: polygon_from_rings(x.polygon) for x in home.fixtures
            if x.feature_subtype in placement.near and x.room in wet}


@checks(leak_sensor_missing="an appliance the leak sensor is for has none within the catalog's max_distance")
def _leak_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    limit = near_limit(catalog, LEAK_SENSOR)
    if limit is None:
        return out
    watched = set(catalog.devices[LEAK_SENSOR].placement.attached_to)
    leaks = [Point(d.pose.x, d.pose.y) for d in home.devices_of_type(LEAK_SENSOR)]
    for f in home.furniture:
        if f.semantic_class not in watched:
            continue
        g = polygon_from_rings(f.footprint)
        if not any(g.distance(p) <= limit + 1e-6 for p in leaks):
            out.append(CheckFinding("leak_sensor_missing", (f.id,),
                                    f"{f.semantic_class} {f.id} has no leak sensor within {limit} m"))
    return out


@checks(light_switch_far_from_door="a light switch farther from every door of its room than the catalog's "
                                   "max_distance")
def _switch_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    limit = near_limit(catalog, LIGHT_SWITCH)
    if limit is None:
        return out
    for s in home.devices_of_type(LIGHT_SWITCH):
        doors = room_doors(home, s.room) if s.room is not None else {}
        if not doors:  # a room open to the next: no door to be beside
            continue
        door, d = nearest(doors, s.pose.x, s.pose.y)
        if d > limit + POSE_ROUNDING:
            out.append(CheckFinding("light_switch_far_from_door", (s.id, door),
                                    f"light switch {s.id} is {d:.2f} m from {door}, the nearest door of room "
                                    f"{s.room}; the catalog's max_distance asks at most {limit} m"))
    return out


@checks(water_main_far_from_sink="the water main farther than the catalog's max_distance from every sink or "
                                 "kitchen counter (its near fixtures)")
def _water_main_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    limit = near_limit(catalog, WATER_MAIN)
    anchors = water_main_anchors(home, catalog) if limit is not None else {}
    if not anchors:  # no sink: the washer or the garage holds it
        return out
    for v in home.devices_of_type(WATER_MAIN):
        fixture, d = nearest(anchors, v.pose.x, v.pose.y)
        if d > limit + POSE_ROUNDING:
            out.append(CheckFinding("water_main_far_from_sink", (v.id, fixture),
                                    f"water main {v.id} is {d:.2f} m from {fixture}, the nearest sink or kitchen "
                                    f"counter; the catalog's max_distance asks at most {limit} m"))
    return out


@checks(plug_far_from_furniture="a plug farther from the furniture it powers than the catalog's max_distance")
def _plug_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    limit = near_limit(catalog, PLUG)
    if limit is None:
        return out
    footprints = home.furniture_footprints()
    for p in home.devices_of_type(PLUG):
        for fid in dict.fromkeys(x for x in (p.mounted_on, *p.controls) if x in footprints):
            d = footprints[fid].distance(Point(p.pose.x, p.pose.y))
            if d > limit + POSE_ROUNDING:
                out.append(CheckFinding("plug_far_from_furniture", (p.id, fid),
                                        f"plug {p.id} is {d:.2f} m from {fid}, which it powers; the catalog's "
                                        f"max_distance asks at most {limit} m"))
    return out


def needs_contact_sensor(home: Home, opening: Opening) -> bool:
    """Exterior doors and openable exterior windows of the home's indoor rooms and garage."""
    if not is_exterior(home, opening) or (opening.kind == "window" and not opening.openable):
        return False
    rid = inner_room(home, opening)
    return rid is not None and home.room(rid).space_class in ("indoor", "ancillary")


@checks(contact_sensor_missing="an exterior door or openable exterior window without a contact sensor")
def _contact_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    watched: set[str] = set()
    for d in home.devices_of_type("contact_sensor"):
        watched.update(x for x in (d.mounted_on, *d.monitors) if x)
    for o in home.openings:
        if needs_contact_sensor(home, o) and o.id not in watched:
            out.append(CheckFinding("contact_sensor_missing", (o.id,),
                                    f"exterior {o.kind} {o.id} has no contact sensor"))
    return out


@checks(entrance_not_covered="no camera sees the inside of the entrance door")
def _entrance_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    blocking = sight_blockers(home)
    for o in home.openings:
        if o.kind != "entrance_door":
            continue
        rid = inner_room(home, o)
        if rid is None:
            continue
        target = opening_face_point(home, o, rid, ENTRANCE_INSIDE_DEPTH)
        if not any(camera_sees(c, target, blocking) for c in home.cameras):
            out.append(CheckFinding("entrance_not_covered", (o.id,),
                                    f"no camera sees the inside of entrance door {o.id} at "
                                    f"({target[0]:.2f}, {target[1]:.2f})"))
    return out


@checks(device_outside_room="a device's position is not in its room (nor on its opening)")
def _device_room_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    rooms = home.room_polygons()
    openings = home.opening_polygons()
    placed = [d for d in home.devices if d.room is not None]
    if not placed:
        return out
    points = shapely.points(np.array([(d.pose.x, d.pose.y) for d in placed], dtype=float))
    in_room = shapely.distance(np.array([rooms[d.room] for d in placed], dtype=object), points)
    for d, p, gap in zip(placed, points, in_room):
        ok = gap <= DEVICE_ROOM_TOLERANCE
        if not ok and d.mounted_on in openings:
            ok = openings[d.mounted_on].distance(p) <= DEVICE_OPENING_TOLERANCE
        if not ok:
            out.append(CheckFinding("device_outside_room", (d.id, d.room),
                                    f"device {d.id} at ({d.pose.x:.2f}, {d.pose.y:.2f}) is not in room {d.room}"))
    return out


@checks(camera_privacy="a bathroom camera not image-blocked, a bedroom camera without privacy, "
                       "or a dome camera device disagreeing with its camera")
def _privacy_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    devices = {d.id: d for d in home.devices}
    for c in home.cameras:
        rtype = home.room(c.room).type
        if rtype in BATHROOM_SUBTYPES and c.privacy_mode != "image_blocked":
            out.append(CheckFinding("camera_privacy", (c.id, c.room),
                                    f"camera {c.id} in bathroom {c.room} has privacy {c.privacy_mode}; "
                                    "it must be image_blocked"))
        elif rtype in BEDROOM_SUBTYPES and c.privacy_mode == "none":
            out.append(CheckFinding("camera_privacy", (c.id, c.room),
                                    f"camera {c.id} in bedroom {c.room} has no privacy mode"))
        d = devices.get(c.id)
        if d is not None and "privacy_mode" in d.fields and d.value("privacy_mode") != c.privacy_mode:
            out.append(CheckFinding("camera_privacy", (c.id,),
                                    f"dome camera {c.id}: device privacy {d.value('privacy_mode')} differs from "
                                    f"the camera's {c.privacy_mode}"))
        if d is not None and d.agent_visible != c.agent_visible:
            out.append(CheckFinding("camera_privacy", (c.id,),
                                    f"dome camera {c.id}: device and camera disagree on agent visibility"))
    return out


def _furniture_solids(home: Home, catalog: Catalog) -> tuple[list[Furniture], OrientedBoxes, np.ndarray]:
    """The home's catalogued furniture, their solids as one set of boxes and each box's item index
    (shared by the object and device rules: treat as read-only)."""
    return _shared(home, "furniture_solids", lambda: _measure_furniture_solids(home, catalog))


def _measure_furniture_solids(home: Home, catalog: Catalog) -> tuple[list[Furniture], OrientedBoxes, np.ndarray]:
    items = [f for f in home.furniture if f.catalog_id in catalog.furniture]
    solids, owner = placed_solids([catalog.furniture[f.catalog_id] for f in items], items)
    return items, solids, owner


@checks(object_inside_furniture="a carryable object's box reaches into the solid of a piece of furniture")
def _object_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    items, solids, owner = _furniture_solids(home, catalog)
    objects = OrientedBoxes.concat(object_box(o) for o in home.objects)
    hits = overlapping_pairs(objects, solids, OBJECT_PENETRATION)
    out: list[CheckFinding] = []
    for o, i in sorted(set(zip(hits[0].tolist(), owner[hits[1]].tolist()))):
        obj, f = home.objects[o], items[i]
        where = f"{obj.location.kind} {obj.location.name}" if obj.location.name else obj.location.kind
        out.append(CheckFinding("object_inside_furniture", (obj.id, f.id),
                                f"{obj.semantic_class} {obj.id} ({where}) lies inside {f.semantic_class} "
                                f"{f.id}: put it on a surface or in a cavity of the item"))
    return out


@checks(device_overlaps_object="a device's body reaches into a carryable object or a piece of furniture "
                               "it is not mounted on")
def _device_body_rule(home: Home, catalog: Catalog) -> list[CheckFinding]:
    items, solids, owner = _furniture_solids(home, catalog)
    names = [(f.id, f.semantic_class) for f in items] + [(o.id, o.semantic_class) for o in home.objects]
    solids = OrientedBoxes.concat([solids, *(object_box(o) for o in home.objects)])
    owner = np.concatenate([owner, np.arange(len(items), len(names))])
    devices, bodies = device_solids(home)
    hits = overlapping_pairs(bodies, solids, OBJECT_PENETRATION)
    out: list[CheckFinding] = []
    for k, i in sorted(set(zip(hits[0].tolist(), owner[hits[1]].tolist()))):
        d = devices[k]
        thing, cls = names[i]
        if thing != d.mounted_on:
            out.append(CheckFinding("device_overlaps_object", (d.id, thing),
                                    f"{d.type} {d.id} ({d.mount}) reaches into {cls} {thing}: "
                                    f"move it where nothing else is"))
    return out


def rule_counts(findings: Iterable[CheckFinding]) -> dict[str, int]:
    """Number of findings per rule, rules sorted."""
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    return dict(sorted(counts.items()))
