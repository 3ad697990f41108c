"""The home verifier: rules every furnished, device-equipped home must satisfy.

:func:`check_home` reads only the home file (and the catalog for robot body
widths) and returns one :class:`CheckFinding` per violation; an empty list
means the home is kept by the build. It is deliberately independent of the
stages that build homes: it recomputes every distance and clear zone itself,
so a fault in furnishing or equipping shows up here.

Rules (ids are stable; a finding names the elements involved):

- ``furniture_overlap``: two footprints overlap by more than
  :data:`OVERLAP_TOLERANCE` (items standing on another item and flat decor
  such as rugs are exempt).
- ``furniture_outside_room``: part of a footprint lies outside its room.
- ``furniture_blocks_wall`` / ``furniture_blocks_opening``: a footprint lies
  over a wall, or over a door or window rectangle.
- ``door_clearance``: furniture in a door's clear zone (door width ×
  :data:`DOOR_CLEAR_DEPTH` on each face that opens into the home).
- ``window_blocked_by_tall_item``: a tall item stands in front of a window.
- ``unreachable_room``: an indoor room or the garage is not reachable from the
  entrance by the Unitree G1-D (the experiments' body, SPEC.md §2).
- ``doors_not_connected``: two doors of a room are not joined by free floor
  inside the room for the widest catalog body.
- ``smoke_sensor_distance``: a smoke sensor nearer than 3.0 m to a cooking
  appliance without a recorded exception, or nearer than 1.8 m (NFPA 72).
- ``smoke_sensor_missing_bedroom`` / ``smoke_sensor_missing_outside_sleeping``.
- ``leak_sensor_missing``: a dishwasher without a leak sensor within
  :data:`LEAK_SENSOR_MAX_DISTANCE`.
- ``contact_sensor_missing``: an exterior door or openable window without one.
- ``entrance_not_covered``: no camera sees the inside of the entrance door.
- ``device_outside_room``: a device's position is not in its room.
- ``camera_privacy``: a bathroom camera not image-blocked, a bedroom camera
  without privacy, or a dome camera device disagreeing with its camera.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import shapely
from shapely import LineString, Point
from shapely.geometry.base import BaseGeometry

from homeloop import navigation
from homeloop.catalog import Catalog
from homeloop.home import Camera, Home, Opening, polygon_from_rings
from homeloop.plan import BEDROOM_SUBTYPES, DOOR_CLEAR_DEPTH

# --- thresholds -------------------------------------------------------------------------

#: Overlap (m²) of two furniture footprints, or of a footprint with a wall or an
#: opening, above which they collide (a square centimetre).
OVERLAP_TOLERANCE = 1e-4
#: A footprint may stick out of its room by this much (m): rounding to the millimetre.
ROOM_TOLERANCE = 0.01
#: The door clear zone is shrunk at its sides (m) and starts this far from the face,
#: as the plan audit does, so jambs and the door's own wall do not count.
DOOR_ZONE_SIDE_INSET = 0.02
DOOR_ZONE_FACE_GAP = 0.05
#: Overlap (m²) of furniture with a door's clear zone that obstructs it (the audit's 10 × 10 cm).
DOOR_OBSTRUCTION_MIN_AREA = 0.01
#: Share of a door face's zone over the home's rooms for the face to be checked.
DOOR_FACE_INSIDE_FRACTION = 0.5
#: Depth (m) of the zone in front of a window where no tall item may stand.
WINDOW_ZONE_DEPTH = 0.5
#: Furniture no higher than this (m) is flat decor (rugs): it never collides.
FLAT_HEIGHT = 0.03
#: Smoke sensors keep this horizontal distance (m) from every cooking appliance
#: (NFPA 72, 10 ft; SPEC.md §2) ...
SMOKE_MIN_DISTANCE = 3.0
#: ... or this one (6 ft) where the room has no other place, recorded in the home.
SMOKE_FALLBACK_DISTANCE = 1.8
#: A dishwasher's leak sensor lies within this distance (m) of its footprint.
LEAK_SENSOR_MAX_DISTANCE = 0.5
#: How far (m) a camera sees for the entrance rule.
CAMERA_RANGE = 8.0
#: The entrance door's inside point lies this far (m) into the room from the door's centre.
ENTRANCE_INSIDE_DEPTH = 0.5
#: A device may lie this far (m) outside its room (wall mounts sit on the wall face).
DEVICE_ROOM_TOLERANCE = 0.05
#: A device on an opening lies within this distance (m) of the opening rectangle.
DEVICE_OPENING_TOLERANCE = 0.35
#: Two spaces joined along at least this length (m) with no wall or window between
#: them are openly connected (as homeloop.plan defines it).
OPEN_PASSAGE_MIN_LENGTH = 0.6
CONTACT_TOLERANCE = 0.05
#: The experiments' robot body (SPEC.md §2), whose width decides reachability.
EXPERIMENT_ROBOT = "unitree_g1_d_ultimate"
#: Key of Home.metadata listing smoke sensors placed with the 1.8 m exception.
SMOKE_EXCEPTIONS_KEY = "smoke_sensor_exceptions"

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
    poly = polygon_from_rings(opening.polygon)
    centre, _, normal, _, thickness = navigation.opening_axes(poly)
    room = home.room_polygon(room_id)
    probe = thickness / 2 + 0.02
    side = 1.0 if room.distance(Point(*(centre + normal * probe))) <= room.distance(
        Point(*(centre - normal * probe))) else -1.0
    p = centre + side * normal * (thickness / 2 + depth)
    return float(p[0]), float(p[1])


def open_connections(home: Home) -> list[tuple[str, str]]:
    """Pairs of rooms touching with no wall or window between them over a walkable length."""
    if len(home.rooms) < 2:
        return []
    ids = [r.id for r in home.rooms]
    polys = np.array([polygon_from_rings(r.polygon) for r in home.rooms], dtype=object)
    tree = shapely.STRtree(polys)
    a, b = tree.query(polys, predicate="dwithin", distance=CONTACT_TOLERANCE)
    keep = a < b
    a, b = a[keep], b[keep]
    if len(a) == 0:
        return []
    blockers = [polygon_from_rings(w.polygon) for w in home.walls]
    blockers += [polygon_from_rings(o.polygon) for o in home.openings if o.kind == "window"]
    blocking = shapely.union_all(blockers) if blockers else shapely.Polygon()
    tol = CONTACT_TOLERANCE
    strips = shapely.difference(
        shapely.intersection(shapely.buffer(polys[a], tol, join_style="mitre"),
                             shapely.buffer(polys[b], tol, join_style="mitre")), blocking)
    lengths = shapely.area(strips) / (2 * tol)
    return [(ids[i], ids[j]) for i, j, n in zip(a, b, lengths) if n >= OPEN_PASSAGE_MIN_LENGTH]


def room_adjacency(home: Home) -> dict[str, list[str]]:
    """For each room, the rooms reached through a door or an open passage (sorted ids)."""
    adj: dict[str, set[str]] = {r.id: set() for r in home.rooms}
    for o in home.openings:
        if o.kind in PASSAGE_KINDS and len(o.connects) == 2:
            u, v = o.connects
            if u in adj and v in adj and u != v:
                adj[u].add(v)
                adj[v].add(u)
    for u, v in open_connections(home):
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


def sight_blockers(home: Home) -> BaseGeometry:
    """Walls, shrunk by a centimetre so a camera in a corner does not touch them."""
    walls = [polygon_from_rings(w.polygon) for w in home.walls if w.kind != "RAILING"]
    if not walls:
        return shapely.Polygon()
    return shapely.union_all(walls).buffer(-0.01)


def door_clear_zones(home: Home, opening: Opening, depth: float = DOOR_CLEAR_DEPTH) -> list[BaseGeometry]:
    """The clear zones in front of each face of a door that opens over the home's rooms."""
    poly = polygon_from_rings(opening.polygon)
    centre, along, normal, width, thickness = navigation.opening_axes(poly)
    half_w = max(width / 2 - DOOR_ZONE_SIDE_INSET, 0.0)
    rooms = shapely.union_all([polygon_from_rings(r.polygon) for r in home.rooms])
    zones = []
    for side in (1.0, -1.0):
        near = thickness / 2 + DOOR_ZONE_FACE_GAP
        far = thickness / 2 + depth
        pts = [centre + side * normal * d + along * s for d, s in
               ((near, -half_w), (near, half_w), (far, half_w), (far, -half_w))]
        zone = shapely.Polygon([tuple(p) for p in pts])
        if zone.area > 0 and zone.intersection(rooms).area / zone.area >= DOOR_FACE_INSIDE_FRACTION:
            zones.append(zone)
    return zones


# --- the rules ----------------------------------------------------------------------------


def check_home(home: Home, catalog: Catalog) -> list[CheckFinding]:
    """Every rule over ``home``; findings in rule order, then element order."""
    findings: list[CheckFinding] = []
    findings += _furniture_rules(home)
    findings += _door_clearance(home)
    findings += _window_rule(home)
    findings += _navigation_rules(home, catalog)
    findings += _smoke_rules(home)
    findings += _leak_rule(home)
    findings += _contact_rule(home)
    findings += _entrance_rule(home)
    findings += _device_room_rule(home)
    findings += _privacy_rule(home)
    return findings


def _collides(f) -> bool:
    return f.height > FLAT_HEIGHT


def _stacked(a, b) -> bool:
    """Whether one item stands on the other (its base at or above the other's top)."""
    return a.pose.z >= b.height - 0.02 or b.pose.z >= a.height - 0.02


def _furniture_rules(home: Home) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    items = [f for f in home.furniture if _collides(f)]
    polys = [polygon_from_rings(f.footprint) for f in items]
    if len(items) > 1:
        tree = shapely.STRtree(polys)
        a, b = tree.query(np.array(polys, dtype=object), predicate="intersects")
        for i, j in sorted({(int(i), int(j)) for i, j in zip(a, b) if i < j}):
            fa, fb = items[i], items[j]
            if _stacked(fa, fb):
                continue
            area = polys[i].intersection(polys[j]).area
            if area > OVERLAP_TOLERANCE:
                out.append(CheckFinding("furniture_overlap", (fa.id, fb.id),
                                        f"{fa.id} and {fb.id} overlap by {area:.3f} m²: move one"))
    walls = [(w.id, polygon_from_rings(w.polygon)) for w in home.walls]
    openings = [(o.id, polygon_from_rings(o.polygon)) for o in home.openings]
    rooms = home.room_polygons()
    for f, poly in zip(items, polys):
        room = rooms[f.room].buffer(ROOM_TOLERANCE, join_style="mitre")
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


def _door_clearance(home: Home) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    items = [(f.id, polygon_from_rings(f.footprint)) for f in home.furniture if _collides(f)]
    for o in home.openings:
        if o.kind not in PASSAGE_KINDS:
            continue
        zones = door_clear_zones(home, o)
        hit = [fid for fid, g in items if any(g.intersection(z).area > DOOR_OBSTRUCTION_MIN_AREA for z in zones)]
        if hit:
            out.append(CheckFinding("door_clearance", (o.id, *hit),
                                    f"{o.kind} {o.id}: {', '.join(hit)} within {DOOR_CLEAR_DEPTH} m of its face"))
    return out


def _window_rule(home: Home) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    tall = [(f.id, polygon_from_rings(f.footprint)) for f in home.furniture if f.tall]
    if not tall:
        return out
    for o in home.openings:
        if o.kind != "window":
            continue
        zones = door_clear_zones(home, o, depth=WINDOW_ZONE_DEPTH)
        hit = [fid for fid, g in tall if any(g.intersection(z).area > DOOR_OBSTRUCTION_MIN_AREA for z in zones)]
        if hit:
            out.append(CheckFinding("window_blocked_by_tall_item", (o.id, *hit),
                                    f"window {o.id}: tall {', '.join(hit)} stands in front of it"))
    return out


def _rooms_needing_access(home: Home) -> list[str]:
    return [r.id for r in home.rooms if r.indoor or r.type == "GARAGE"]


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
        for rid in wanted:
            for a, b in navigation.doors_connected_within_room(home, rid, widest):
                out.append(CheckFinding("doors_not_connected", (rid, a, b),
                                        f"room {rid}: no free floor {widest} m wide joins {a} and {b}"))
    return out


def smoke_exceptions(home: Home) -> set[str]:
    """Ids of smoke sensors recorded as placed with the 1.8 m exception."""
    records = home.metadata.get(SMOKE_EXCEPTIONS_KEY) or []
    return {str(r.get("device")) for r in records if isinstance(r, dict)}


def _smoke_rules(home: Home) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    sensors = home.devices_of_type("smoke_sensor")
    cookers = [(f.id, polygon_from_rings(f.footprint)) for f in home.furniture if f.cooking_appliance]
    excepted = smoke_exceptions(home)
    for s in sensors:
        p = Point(s.pose.x, s.pose.y)
        for fid, g in cookers:
            d = g.distance(p)
            if d < SMOKE_FALLBACK_DISTANCE - 1e-6 or (d < SMOKE_MIN_DISTANCE - 1e-6 and s.id not in excepted):
                need = SMOKE_MIN_DISTANCE if d >= SMOKE_FALLBACK_DISTANCE else SMOKE_FALLBACK_DISTANCE
                out.append(CheckFinding("smoke_sensor_distance", (s.id, fid),
                                        f"smoke sensor {s.id} is {d:.2f} m from cooking appliance {fid}; "
                                        f"NFPA 72 asks at least {need} m"
                                        + ("" if need == SMOKE_FALLBACK_DISTANCE
                                           else " unless recorded as an exception")))
    with_sensor = {s.room for s in sensors}
    for r in home.rooms:
        if r.type in BEDROOM_SUBTYPES and r.id not in with_sensor:
            out.append(CheckFinding("smoke_sensor_missing_bedroom", (r.id,), f"bedroom {r.id} has no smoke sensor"))
    for bedroom, exits in sleeping_area_exits(home).items():
        if exits and not with_sensor.intersection(exits):
            out.append(CheckFinding("smoke_sensor_missing_outside_sleeping", (bedroom, *exits),
                                    f"no smoke sensor outside the sleeping area of bedroom {bedroom} "
                                    f"(in one of {', '.join(exits)})"))
    return out


def _leak_rule(home: Home) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    leaks = [Point(d.pose.x, d.pose.y) for d in home.devices_of_type("leak_sensor")]
    for f in home.furniture:
        if f.semantic_class != "dishwasher":
            continue
        g = polygon_from_rings(f.footprint)
        if not any(g.distance(p) <= LEAK_SENSOR_MAX_DISTANCE for p in leaks):
            out.append(CheckFinding("leak_sensor_missing", (f.id,),
                                    f"dishwasher {f.id} has no leak sensor within {LEAK_SENSOR_MAX_DISTANCE} m"))
    return out


def needs_contact_sensor(home: Home, opening: Opening) -> bool:
    """Exterior doors and openable exterior windows of the home's indoor rooms and garage."""
    if not is_exterior(home, opening) or (opening.kind == "window" and not opening.openable):
        return False
    rid = inner_room(home, opening)
    return rid is not None and home.room(rid).space_class in ("indoor", "ancillary")


def _contact_rule(home: Home) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    watched: set[str] = set()
    for d in home.devices_of_type("contact_sensor"):
        watched.update(x for x in (d.mounted_on, *d.monitors) if x)
    for o in home.openings:
        if needs_contact_sensor(home, o) and o.id not in watched:
            out.append(CheckFinding("contact_sensor_missing", (o.id,),
                                    f"exterior {o.kind} {o.id} has no contact sensor"))
    return out


def _entrance_rule(home: Home) -> list[CheckFinding]:
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


def _device_room_rule(home: Home) -> list[CheckFinding]:
    out: list[CheckFinding] = []
    rooms = home.room_polygons()
    openings = home.opening_polygons()
    for d in home.devices:
        if d.room is None:
            continue
        p = Point(d.pose.x, d.pose.y)
        ok = rooms[d.room].distance(p) <= DEVICE_ROOM_TOLERANCE
        if not ok and d.mounted_on in openings:
            ok = openings[d.mounted_on].distance(p) <= DEVICE_OPENING_TOLERANCE
        if not ok:
            out.append(CheckFinding("device_outside_room", (d.id, d.room),
                                    f"device {d.id} at ({d.pose.x:.2f}, {d.pose.y:.2f}) is not in room {d.room}"))
    return out


def _privacy_rule(home: Home) -> list[CheckFinding]:
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


def rule_counts(findings: Iterable[CheckFinding]) -> dict[str, int]:
    """Number of findings per rule, rules sorted."""
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    return dict(sorted(counts.items()))
