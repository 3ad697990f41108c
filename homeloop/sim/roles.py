"""Roles: what a scenario names, resolved against one home (docs/episodes.md).

A scenario never names ids (they differ from home to home); it names roles,
and :class:`Roles` finds the thing filling each role in the home at hand::

    kitchen                      a room role (homeloop.sim.task.ROOM_ROLES, plus office, hall, porch)
    bedroom of resident_1        the bedroom of the scenario's first resident
    range                        furniture of a class (the first in home order)
    laundry_basket near laundry  ... the one nearest a room of the role
    nightstand of resident_1     ... in that resident's bedroom, nearest the bed
    stove at range               a device of a type attached to furniture (mounted on, controlling or
                                 monitoring it, or within ATTACHED_WITHIN of it)
    smoke_sensor near range      ... the one nearest the range
    camera in kitchen            the kitchen's dome camera; ``lamp in living``: a light standing on
                                 furniture, else the room's ceiling light
    fall_watch of resident_1     a worn device of that resident (see :meth:`Roles.worn_by`)
    front_left_burner            the range's front-left burner: the range, the burner and the stove
                                 field that switches it (also front_right, back_left, back_right)
    front_door                   the (first) entrance door; ``openable_window in living``
    parcel_spot                  a named point of the home; ``parcel_spot`` is computed outside the
                                 entrance door where the home names none
    glasses, plant, pill_box_red a carryable object by class or catalog id (``plant``: potted_plant)

Qualifiers: ``in <room role>`` keeps candidates in a room filling the role
(``in room of <role>``: in the room of the thing filling that role, e.g.
``light in room of mug``);
``near <role>`` orders them by distance to that role's spot; ``of <person>``
takes the person's bedroom (or worn devices); ``at <role>`` keeps devices
attached to that thing. Candidates are otherwise taken in home-file order, so
resolving is deterministic. A role the home lacks raises
:class:`ScenarioError`, one line naming the scenario, the role and the home.

:func:`named_point` is the one place that reads named points from a home.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

import numpy as np
import shapely
import shapely.ops
from shapely import Point, Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core import navigation
from homeloop.core.errors import HomeLoopError
from homeloop.core.geometry import ShapeMemo, face_point, opening_axes
from homeloop.core.home import Burner, Device, Furniture, Home, HomeObject, NamedPoint, Opening, polygon_from_rings
from homeloop.sim.task import OPENING_ROLES, ROOM_ROLES, RoomMatch, RoomRole

#: Room roles scenarios name beyond the task files' (ROOM_ROLES in homeloop/sim/task.py).
SCENARIO_ROOM_ROLES: dict[str, RoomRole] = {r.name: r for r in (
    RoomRole(name="office", any_of=(RoomMatch(types=("OFFICE",)), RoomMatch(holds=("desk",), indoor=True)),
             description="an office, or any indoor room holding a desk"),
    RoomRole(name="hall", any_of=(RoomMatch(at_opening="entrance_door", indoor=True),),
             description="the indoor room the entrance door opens into"),
    RoomRole(name="porch", any_of=(RoomMatch(at_opening="entrance_door", indoor=False),),
             description="the outdoor space in front of the entrance door, where the plan draws one"),
)}

#: Every room role a scenario may name.
ALL_ROOM_ROLES: dict[str, RoomRole] = {**ROOM_ROLES, **SCENARIO_ROOM_ROLES}

#: A device counts as attached to a thing it does not name when it lies this close to it (m).
ATTACHED_WITHIN = 0.5

#: Names that stand for a class or type of another name.
ALIASES = {"plant": "potted_plant", "camera": "dome_camera"}

#: Burner roles: the burner's direction in the range's frame (+x its front, +y its left).
BURNER_ROLES: dict[str, tuple[float, float]] = {
    "front_left_burner": (1.0, 1.0), "front_right_burner": (1.0, -1.0),
    "back_left_burner": (-1.0, 1.0), "back_right_burner": (-1.0, -1.0),
}

#: Where the computed parcel spot lies from the entrance door's outside face (m): on an
#: outdoor space the plan draws (a porch), out along the door's normal and aside along the
#: wall, clear of the door swing; where nothing is drawn outside (an apartment's door to the
#: stair hall), on the doormat, centred, within reach of a body standing in the doorway.
PARCEL_SPOT_OUT = 0.6
PARCEL_SPOT_ASIDE = 0.35
DOORMAT_OUT = 0.4

#: Clearance (m) from walls and furniture of the floor spots roles give for rooms.
FLOOR_CLEARANCE = 0.25

QUALIFIERS = ("in", "near", "of", "at")


#: A candidate for a role (furniture, an object, an opening, a device).
_Candidate = TypeVar("_Candidate")


class ScenarioError(HomeLoopError, ValueError):
    """A scenario that cannot run in a home: one line naming the scenario, the role and the home."""


@dataclass(frozen=True)
class Spot:
    """A place on a floor: its room (None outside every room of the plan), position and heading."""

    room: str | None
    x: float
    y: float
    z: float = 0.0
    yaw: float = 0.0


@dataclass(frozen=True)
class BurnerRef:
    """A burner of a range and the stove field that switches it."""

    range: Furniture
    burner: Burner
    stove: Device
    field: str


@dataclass(frozen=True)
class RoleSpec:
    """A parsed role: ``name [qualifier argument]``."""

    text: str
    name: str
    qualifier: str | None = None
    argument: str | None = None


def parse_role(text: str) -> RoleSpec:
    """``'laundry_basket near laundry'`` -> RoleSpec(name, 'near', 'laundry'); ValueError if malformed."""
    words = str(text).split()
    if len(words) == 1:
        return RoleSpec(str(text), words[0])
    if len(words) >= 3 and words[1] in QUALIFIERS:
        return RoleSpec(str(text), words[0], words[1], " ".join(words[2:]))
    raise ValueError(f"role {text!r} is not '<name>' or '<name> in|near|of|at <role>'")


def named_point(home: Home, name: str) -> NamedPoint | None:
    """The home's named point ``name`` (the home file's ``points``), or None."""
    return next((p for p in home.points if p.name == name), None)


def room_fills(home: Home, room_id: str, match: RoomMatch) -> bool:
    """Whether a room meets one way of filling a role (its type, furniture held, opening, indoor).

    The one reading of a :class:`~homeloop.sim.task.RoomMatch`: scenarios resolve
    roles with it and task applicability screens homes with it."""
    room = home.room(room_id)
    if match.types and room.type not in match.types:
        return False
    if match.indoor is not None and room.indoor != match.indoor:
        return False
    if match.holds:
        held = {f.semantic_class for f in home.furniture if f.room == room_id}
        if any(cls not in held for cls in match.holds):
            return False
    return match.at_opening is None or any(
        o.kind == match.at_opening and room_id in o.connects for o in home.openings)


class Roles:
    """Resolves roles in one home for one scenario (see the module docstring).

    ``residents`` are the scenario's resident ids in order: the first sleeps in
    the home's main bedroom, the next in the next bedroom (a bedroom holding a
    bed; BEDROOM before ROOM, larger first), sharing the last when there are
    fewer bedrooms than residents.
    """

    def __init__(self, home: Home, scenario: str, residents: Iterable[str] = ()):
        self.home = home
        self.scenario = scenario
        self.residents = list(residents)
        self._polys = home.room_polygons()
        self._free: BaseGeometry | None = None

    # --- errors -----------------------------------------------------------------------------

    def missing(self, role: str, what: str = "") -> ScenarioError:
        detail = f" ({what})" if what else ""
        return ScenarioError(f"scenario {self.scenario!r}: role {role!r} not found in home {self.home.home_id}{detail}")

    def _spec(self, role: str) -> RoleSpec:
        try:
            return parse_role(role)
        except ValueError as exc:
            raise ScenarioError(f"scenario {self.scenario!r}: {exc}") from None

    # --- rooms ------------------------------------------------------------------------------

    def rooms_of(self, role_name: str) -> list[str]:
        """Ids of every room filling a room role, largest first (then home order)."""
        role = ALL_ROOM_ROLES.get(role_name)
        if role is None:
            return []
        ids = [r.id for r in self.home.rooms if any(room_fills(self.home, r.id, m) for m in role.any_of)]
        return sorted(ids, key=lambda rid: -round(self._polys[rid].area, 3))

    def room(self, role: str) -> str:
        """The id of the room filling ``role`` (``kitchen``, ``bedroom of resident_1`` ...)."""
        spec = self._spec(role)
        if spec.name == "bedroom" and spec.qualifier == "of":
            return self._bedroom_of(spec)
        if spec.qualifier is not None:
            raise self.missing(role, "a room role takes only 'of <resident>' (bedroom)")
        rooms = self.rooms_of(spec.name)
        if not rooms:
            known = ", ".join(ALL_ROOM_ROLES)
            raise self.missing(role, "no room fills it" if spec.name in ALL_ROOM_ROLES else f"room roles: {known}")
        if spec.name == "entrance":
            indoor = [r for r in rooms if self.home.room(r).indoor]
            return (indoor or rooms)[0]
        return rooms[0]

    def bedrooms(self) -> list[str]:
        """Bedrooms holding a bed: BEDROOM before ROOM, larger first, then home order."""
        beds = {f.room for f in self.home.furniture if f.semantic_class == "bed"}
        rooms = [r for r in self.rooms_of("bedroom") if r in beds]
        return sorted(rooms, key=lambda rid: self.home.room(rid).type != "BEDROOM")

    def _bedroom_of(self, spec: RoleSpec) -> str:
        rooms = self.bedrooms()
        if not rooms:
            raise self.missing(spec.text, "no bedroom with a bed")
        return rooms[min(self._resident_index(spec), len(rooms) - 1)]

    def _resident_index(self, spec: RoleSpec) -> int:
        if spec.argument not in self.residents:
            raise ScenarioError(f"scenario {self.scenario!r}: role {spec.text!r}: {spec.argument!r} is not one of "
                                f"its residents ({', '.join(self.residents) or 'none'})")
        return self.residents.index(spec.argument)

    # --- generic candidate filtering ----------------------------------------------------------

    def _filter(self, spec: RoleSpec, items: list[_Candidate], room_of: Callable[[_Candidate], Iterable[str]],
                xy: Callable[[_Candidate], tuple[float, float]]) -> list[_Candidate]:
        """Apply ``in`` / ``near`` / ``of`` to candidates (``at`` is the devices' own)."""
        if spec.qualifier == "in":
            rooms = self._rooms_meant(spec)
            return [i for i in items if rooms.intersection(room_of(i))]
        if spec.qualifier == "of":
            bedroom = self.room(f"bedroom of {spec.argument}")
            bed = self._bed_in(bedroom)
            kept = [i for i in items if bedroom in room_of(i)]
            return sorted(kept, key=lambda i: _dist(xy(i), (bed.pose.x, bed.pose.y)) if bed else 0.0)
        if spec.qualifier == "near":
            target = self.spot(spec.argument or "")
            return sorted(items, key=lambda i: _dist(xy(i), (target.x, target.y)))
        return items

    def _rooms_meant(self, spec: RoleSpec) -> set[str]:
        """The rooms ``in <argument>`` means: every room filling a room role, or ``room of <role>``:
        the room the thing filling that role is in."""
        arg = spec.argument or ""
        if arg in ALL_ROOM_ROLES:
            return set(self.rooms_of(arg))
        if arg.startswith("room of "):
            room = self.spot(arg.removeprefix("room of ")).room
            return {room} if room is not None else set()
        raise self.missing(spec.text, f"{arg!r} is neither a room role nor 'room of <role>'")

    def _bed_in(self, room_id: str) -> Furniture | None:
        return next((f for f in self.home.furniture if f.room == room_id and f.semantic_class == "bed"), None)

    def _one(self, spec: RoleSpec, items: list[_Candidate], what: str) -> _Candidate:
        if not items:
            raise self.missing(spec.text, what)
        return items[0]

    # --- furniture, objects, openings ----------------------------------------------------------

    def furniture(self, role: str) -> Furniture:
        """Furniture of a class (``range``, ``nightstand of resident_1``, ``laundry_basket near laundry``)."""
        spec = self._spec(role)
        items = [f for f in self.home.furniture if f.semantic_class == spec.name]
        kept = self._filter(spec, items, lambda f: (f.room,), lambda f: (f.pose.x, f.pose.y))
        return self._one(spec, kept, f"no {spec.name} furniture" if not items else "none where asked")

    def object(self, role: str) -> HomeObject:
        """A carryable object by class or catalog id (``glasses``, ``pill_box_red``, ``plant in office``)."""
        return self.objects(role)[0]

    def objects(self, role: str) -> list[HomeObject]:
        """Every object filling a role, first the one :meth:`object` gives (ScenarioError: none)."""
        spec = self._spec(role)
        name = ALIASES.get(spec.name, spec.name)
        items = [o for o in self.home.objects if name in (o.semantic_class, o.catalog_id)]
        kept = self._filter(spec, items, lambda o: (o.location.room,), lambda o: (o.pose.x, o.pose.y))
        self._one(spec, kept, f"no {name} object" if not items else "none where asked")
        return kept

    def opening(self, role: str) -> Opening:
        """``front_door``, ``openable_window [in <room role>]`` or an opening kind."""
        spec = self._spec(role)
        if spec.name == "front_door":
            items = [o for o in self.home.openings if o.kind == "entrance_door"]
        elif spec.name == "openable_window":
            items = self._openable_windows()
        else:
            items = [o for o in self.home.openings if o.kind == spec.name]
        kept = self._filter(spec, items, lambda o: o.connects, lambda o: _centre(o))
        return self._one(spec, kept, f"no {spec.name}")

    def _openable_windows(self) -> list[Opening]:
        """Windows that open: those a contact sensor watches first (a hub can tell they are shut),
        then those nearest the free floor of their rooms (a window behind a bed or a desk is the
        last a resident would leave open, and one no one could reach to shut)."""
        watched = {ref for d in self.home.devices if d.type == "contact_sensor" for ref in (d.mounted_on, *d.monitors)}
        windows = [o for o in self.home.openings if o.kind == "window" and o.openable]
        return sorted(windows, key=lambda o: (o.id not in watched, self._reach_gap(o)))

    def _reach_gap(self, opening: Opening) -> float:
        """How far (m, to the centimetre) an opening lies from the free floor of the rooms it joins."""
        rooms = [self._polys[r] for r in opening.connects if r in self._polys]
        free, shape = self.free_floor(), polygon_from_rings(opening.polygon)
        return _REACH_GAPS.get(([free, shape], rooms), (), lambda: _gap_to_floor(free, shape, rooms))

    # --- devices ----------------------------------------------------------------------------

    def device(self, role: str) -> Device:
        """A device of a type (``stove at range``, ``camera in kitchen``, ``lamp in living``,
        ``fall_watch of resident_1``, ``smoke_sensor near range``)."""
        spec = self._spec(role)
        if spec.name == "lamp":
            return self._lamp(spec)
        dtype = ALIASES.get(spec.name, spec.name)
        items = [d for d in self.home.devices if d.type == dtype]
        if spec.qualifier == "of":
            kept = [d for d in items if d.id in self.worn_by(spec.argument or "", spec)]
        elif spec.qualifier == "at":
            kept = self._attached(items, spec.argument or "")
        else:
            kept = self._filter(spec, items, lambda d: (d.room,) if d.room else (), lambda d: (d.pose.x, d.pose.y))
        return self._one(spec, kept, f"no {dtype} device" if not items else "none where asked")

    def cameras_in(self, role: str) -> list[Device]:
        """The dome cameras ``camera in <room role>`` (or ``in room of <role>``) names: every one in
        the rooms filling the role, none where those rooms have none. Any other form, or a role no
        room of the home fills, is a ScenarioError naming the value and the home's cameras."""
        cameras = [d for d in self.home.devices if d.type == "dome_camera"]
        try:
            spec = parse_role(role)
            ok = ALIASES.get(spec.name, spec.name) == "dome_camera" and spec.qualifier == "in"
            rooms = self._rooms_meant(spec) if ok else set()
        except (ValueError, ScenarioError):
            rooms = set()
        if not rooms:
            raise self.camera_error(role, "names no room")
        return [d for d in cameras if d.room in rooms]

    def camera_error(self, role: str, why: str) -> ScenarioError:
        """One line: the withheld camera ``role`` is not one of this home, ``why``, the forms a
        scenario may give and the home's cameras."""
        names = {r.id: r.name for r in self.home.rooms}
        listed = ", ".join(f"{d.id} ({names.get(d.room or '', d.room)})" for d in self.home.devices
                           if d.type == "dome_camera") or "none"
        return ScenarioError(f"scenario {self.scenario!r}: camera {role!r} {why} of home {self.home.home_id}; "
                             f"give 'camera in <room role>' (room roles: {', '.join(ALL_ROOM_ROLES)}) or "
                             f"'camera seeing <a person, furniture or object>'; the home's cameras: {listed}")

    def _lamp(self, spec: RoleSpec) -> Device:
        lights = [d for d in self.home.devices if d.type == "light"]
        kept = self._filter(spec, lights, lambda d: (d.room,) if d.room else (), lambda d: (d.pose.x, d.pose.y))
        lamps = [d for d in kept if d.mount == "on_furniture"] or [d for d in kept if d.mount == "ceiling"]
        return self._one(spec, lamps, "no light standing on furniture or on the ceiling there")

    def _attached(self, devices: list[Device], target_role: str) -> list[Device]:
        thing = self.thing(target_role)
        target_id = getattr(thing, "id", None)  # a named point has none: nearness alone counts
        spot = self.spot_of(thing)
        return [d for d in devices if target_id in (d.mounted_on, *d.controls, *d.monitors)
                or _dist((d.pose.x, d.pose.y), (spot.x, spot.y)) <= ATTACHED_WITHIN]

    def worn_by(self, person: str, spec: RoleSpec | None = None) -> list[str]:
        """Ids of the worn devices a resident wears: the k-th resident gets the k-th worn
        device of each type (home order); devices the home file gives a wearer stay theirs."""
        index = self._resident_index(spec or RoleSpec(person, "worn", "of", person))
        by_type: dict[str, list[Device]] = {}
        for d in self.home.devices:
            if d.mount == "worn":
                by_type.setdefault(d.type, []).append(d)
        worn = []
        for devices in by_type.values():
            owned = [d for d in devices if d.mounted_on == person]
            free = [d for d in devices if d.mounted_on is None or d.mounted_on not in {p.id for p in self.home.people}]
            if owned:
                worn += [d.id for d in owned]
            elif index < len(free):
                worn.append(free[index].id)
        return worn

    def burner(self, role: str) -> BurnerRef:
        """``front_left_burner`` (etc.): the range, its burner in that corner, the stove field."""
        spec = self._spec(role)
        if spec.name not in BURNER_ROLES:
            raise self.missing(role, f"burner roles: {', '.join(BURNER_ROLES)}")
        rng = self.furniture(f"range {spec.qualifier} {spec.argument}" if spec.qualifier else "range")
        stove = self.device(f"stove at range {spec.qualifier} {spec.argument}" if spec.qualifier else "stove at range")
        fx, fy = BURNER_ROLES[spec.name]
        burners = [b for b in rng.burners if b.name in {f for f, v in stove.fields.items() if v.type == "bool"}]
        if not burners:
            raise self.missing(role, f"range {rng.id} has no burner its stove switches")
        best = max(burners, key=lambda b: _local(rng, b.position[0], b.position[1]) @ (fx, fy))
        return BurnerRef(rng, best, stove, best.name)

    # --- points and spots -------------------------------------------------------------------

    def point(self, role: str) -> Spot:
        """A named point (``parcel_spot`` computed outside the entrance door where the home names none)."""
        spec = self._spec(role)
        p = named_point(self.home, spec.name)
        if p is not None:
            return Spot(p.room, p.x, p.y)
        if spec.name == "parcel_spot":
            return self._computed_parcel_spot(role)
        raise self.missing(role, "no such named point")

    def _computed_parcel_spot(self, role: str) -> Spot:
        door = self.opening("front_door")
        inside = [r for r in door.connects if self.home.room(r).indoor] or list(door.connects)
        if not inside:
            raise self.missing(role, f"entrance door {door.id} joins no room")
        poly = polygon_from_rings(door.polygon)
        outdoor = bool([r for r in door.connects if r not in inside])
        return _PARCEL_SPOTS.get(([poly], list(self._polys.values())), (tuple(inside), outdoor, tuple(self._polys)),
                                 lambda: self._parcel_spot(poly, inside, outdoor))

    def _parcel_spot(self, door: Polygon, inside: list[str], outdoor: bool) -> Spot:
        """Outside the entrance door ``door``: aside on the outdoor space, or on the doormat."""
        if outdoor:
            width = opening_axes(door)[3]
            (x, y), _ = face_point(door, self._polys[inside[0]], PARCEL_SPOT_OUT, along=width / 2 + PARCEL_SPOT_ASIDE,
                                   far_side=True)
        else:
            (x, y), _ = face_point(door, self._polys[inside[0]], DOORMAT_OUT, far_side=True)
        room = self.home.room_at(float(x), float(y))
        return Spot(None if room in inside else room, round(float(x), 3), round(float(y), 3))

    def thing(self, role: str) -> Thing:
        """Whatever fills ``role``: a room id wrapped as :class:`RoomThing`, a named point as a Spot,
        furniture, an opening, an object or a device (tried in that order)."""
        spec = self._spec(role)
        if spec.name in ALL_ROOM_ROLES:
            return RoomThing(self.room(role))
        if spec.name in BURNER_ROLES:
            return self.burner(role)
        if spec.qualifier is None and (named_point(self.home, spec.name) or spec.name == "parcel_spot"):
            return self.point(role)
        name = ALIASES.get(spec.name, spec.name)
        if any(f.semantic_class == name for f in self.home.furniture):
            return self.furniture(role)
        if name in OPENING_ROLES or any(o.kind == name for o in self.home.openings):
            return self.opening(role)
        if any(name in (o.semantic_class, o.catalog_id) for o in self.home.objects):
            return self.object(role)
        if name == "lamp" or any(d.type == name for d in self.home.devices):
            return self.device(role)
        raise self.missing(role, "not a room role, named point, furniture, opening, object or device of this home")

    def spot(self, role: str) -> Spot:
        """Where the thing filling ``role`` is: a room's free floor near its middle, a point,
        the centre of furniture, an opening, an object or a device."""
        return self.spot_of(self.thing(role))

    def spot_of(self, thing: Thing) -> Spot:
        if isinstance(thing, Spot):
            return thing
        if isinstance(thing, RoomThing):
            return self.floor_spot(thing.id)
        if isinstance(thing, BurnerRef):
            return Spot(thing.range.room, thing.burner.position[0], thing.burner.position[1], thing.burner.position[2])
        if isinstance(thing, Opening):
            x, y = _centre(thing)
            return Spot(thing.connects[0] if thing.connects else None, x, y)
        if isinstance(thing, HomeObject):
            return Spot(thing.location.room, thing.pose.x, thing.pose.y, thing.pose.z, thing.pose.yaw)
        if isinstance(thing, Furniture):
            return Spot(thing.room, thing.pose.x, thing.pose.y, 0.0, thing.pose.yaw)
        return Spot(thing.room, thing.pose.x, thing.pose.y, thing.pose.z, thing.pose.yaw)

    # --- free floor -----------------------------------------------------------------------------

    def free_floor(self) -> BaseGeometry:
        if self._free is None:
            self._free = navigation.free_floor(self.home, 2 * FLOOR_CLEARANCE)
        return self._free

    def floor_spot(self, room_id: str, near: tuple[float, float] | None = None) -> Spot:
        """A point of the room's free floor: nearest ``near``, else nearest the room's middle."""
        room_poly = self._polys[room_id]
        free = self.free_floor()
        floor = _ROOM_FLOORS.get(([free, room_poly],), (), lambda: free.intersection(room_poly))
        if floor.is_empty:
            floor = room_poly
        target = Point(near) if near is not None else room_poly.centroid
        p = target if floor.covers(target) else shapely.ops.nearest_points(floor, target)[0]
        return Spot(room_id, round(float(p.x), 3), round(float(p.y), 3))

    def front_of(self, furniture: Furniture, gap: float = 0.35) -> Spot:
        """Free floor in front of furniture (where a person uses it), facing it."""
        poly = polygon_from_rings(furniture.footprint)
        half_depth = abs(_local_extent(furniture, poly))
        yaw = furniture.pose.yaw
        x = furniture.pose.x + math.cos(yaw) * (half_depth + gap)
        y = furniture.pose.y + math.sin(yaw) * (half_depth + gap)
        spot = self.floor_spot(furniture.room, (x, y))
        return Spot(spot.room, spot.x, spot.y, 0.0, _wrap(yaw + math.pi))


#: Rooms' free floor, openings' gaps to it and computed parcel spots, by the shapes (a home's never
#: move): every scenario set up in a home asks for the same rooms, windows and door.
_ROOM_FLOORS = ShapeMemo(256)
_REACH_GAPS = ShapeMemo(256)
_PARCEL_SPOTS = ShapeMemo(64)


def _gap_to_floor(free: BaseGeometry, opening: BaseGeometry, rooms: list[Polygon]) -> float:
    floor = free.intersection(shapely.union_all(rooms)) if rooms else shapely.Polygon()
    if floor.is_empty:
        return math.inf
    return round(float(opening.distance(floor)), 2)


@dataclass(frozen=True)
class RoomThing:
    """A room, as :meth:`Roles.thing` returns it."""

    id: str


#: Whatever fills a role (:meth:`Roles.thing`).
Thing = RoomThing | BurnerRef | Spot | Furniture | Opening | HomeObject | Device


def _dist(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _centre(opening: Opening) -> tuple[float, float]:
    c = polygon_from_rings(opening.polygon).centroid
    return float(c.x), float(c.y)


def _local(furniture: Furniture, x: float, y: float) -> np.ndarray:
    """A home point in the furniture's frame (+x its front, +y its left), as a numpy vector."""
    dx, dy = x - furniture.pose.x, y - furniture.pose.y
    c, s = math.cos(furniture.pose.yaw), math.sin(furniture.pose.yaw)
    return np.array([c * dx + s * dy, -s * dx + c * dy])


def _local_extent(furniture: Furniture, poly: Polygon) -> float:
    """Half the furniture's depth (its extent along its front direction)."""
    xs = [float(_local(furniture, x, y)[0]) for x, y in poly.exterior.coords]
    return (max(xs) - min(xs)) / 2


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi
