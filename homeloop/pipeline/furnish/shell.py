"""The home's fixed parts, made from the plan before any furniture: rooms, walls,
openings and fixtures (:func:`home_shell`), at the heights docs/data-format.md gives."""

from __future__ import annotations

import shapely

from homeloop.core.geometry import rectangle_frames
from homeloop.core.home import (
    FIXTURE_KIND_OF_FEATURE,
    Fixture,
    Home,
    Room,
    Source,
    Wall,
    polygon_from_rings,
    rings_from_polygon,
)
from homeloop.core.home import Opening as HomeOpening
from homeloop.core.plan import ENTRANCE_DOOR, RAILING, WINDOW, Opening, Plan, space_class
from homeloop.pipeline.furnish_geometry import valid_polygon

#: Default opening heights (m), docs/data-format.md: doors 0–2.0, windows 0.5–2.4.
DOOR_SILL, DOOR_HEAD = 0.0, 2.0
WINDOW_SILL, WINDOW_HEAD = 0.5, 2.4
#: Default railing height (m), docs/data-format.md.
RAILING_HEIGHT = 1.0
#: Counter top height (m), docs/data-format.md (kitchen counter 0–0.9).
COUNTER_HEIGHT = 0.9
#: Default fixture heights (m) by plan feature subtype (docs/data-format.md), recorded
#: with the home's fixtures; built-in furniture reaches the ceiling, others the counter top.
FEATURE_HEIGHTS = {"KITCHEN": COUNTER_HEIGHT, "SINK": 0.85, "BATHTUB": 0.6, "WASHING_MACHINE": 1.3}
#: A plan DOOR into a GARAGE wider than this (m) is a garage door.
GARAGE_DOOR_MIN_WIDTH = 2.0

#: Room names the agent hears, by area subtype (others: the subtype in lower case).
ROOM_NAMES = {"ROOM": "bedroom", "LIVING_ROOM": "living room", "LIVING_DINING": "living room",
              "KITCHEN_DINING": "kitchen", "WASH_AND_DRY_ROOM": "laundry", "CORRIDOR": "hall",
              "STOREROOM": "storeroom"}


def _room_names(plan: Plan) -> dict[str, str]:
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for s in plan.spaces:
        base = ROOM_NAMES.get(s.subtype, s.subtype.lower().replace("_", " "))
        counts[base] = counts.get(base, 0) + 1
        names[s.id] = base if counts[base] == 1 else f"{base} {counts[base]}"
    return names


def opening_kind(plan: Plan, opening: Opening) -> str:
    """The home opening kind of a plan opening (a wide DOOR into a GARAGE is a garage door)."""
    if opening.kind == WINDOW:
        return "window"
    if opening.kind == ENTRANCE_DOOR:
        return "entrance_door"
    garage = any(plan.has_space(s) and plan.space(s).subtype == "GARAGE" for s in opening.connects)
    return "garage_door" if garage and opening.width > GARAGE_DOOR_MIN_WIDTH else "door"


def home_shell(plan: Plan, *, source_kind: str = "swiss_dwellings", seed: int | None = None,
               catalog_hash: str | None = None) -> Home:
    """The home's rooms, walls, openings and fixtures (no furniture yet)."""
    rooms = _shell_rooms(plan)
    return Home(home_id=plan.key,
                source=Source(kind=source_kind, plan=plan.key, seed=seed, catalog_hash=catalog_hash),
                rooms=rooms, walls=_shell_walls(plan), openings=_shell_openings(plan, {r.id for r in rooms}),
                fixtures=_shell_fixtures(plan, rooms))


def _shell_rooms(plan: Plan) -> list[Room]:
    names = _room_names(plan)
    rooms = []
    for s in plan.spaces:
        poly = valid_polygon(s.polygon)
        if poly is None:
            continue
        rooms.append(Room(id=s.id, name=names[s.id], type=s.subtype, space_class=space_class(s.subtype),
                          polygon=rings_from_polygon(poly), floor_height=0.0, ceiling_height=plan.height))
    return rooms


def _shell_walls(plan: Plan) -> list[Wall]:
    walls = []
    for sep in plan.separators:
        parts = [g for g in shapely.get_parts(shapely.make_valid(sep.polygon) if not sep.polygon.is_valid
                                              else sep.polygon) if g.geom_type == "Polygon" and g.area > 1e-6]
        height = RAILING_HEIGHT if sep.kind == RAILING else plan.height
        for k, part in enumerate(parts):
            wid = sep.id if len(parts) == 1 else f"{sep.id}_{k + 1}"
            walls.append(Wall(id=wid, kind=sep.kind, polygon=rings_from_polygon(part), height=height))
    return walls


def _shell_openings(plan: Plan, room_ids: set[str]) -> list[HomeOpening]:
    openings = []
    # Each opening's width (the plan's ``Opening.width``), all measured in one pass.
    widths = rectangle_frames([o.polygon for o in plan.openings])[3].tolist()
    for o, width in zip(plan.openings, widths):
        poly = valid_polygon(o.polygon)
        if poly is None:
            continue
        kind = opening_kind(plan, o)
        connects = [c for c in o.connects if c in room_ids]
        exterior = len(connects) < 2 or any(space_class(plan.space(c).subtype) == "outdoor" for c in connects)
        sill, head = (WINDOW_SILL, WINDOW_HEAD) if kind == "window" else (DOOR_SILL, DOOR_HEAD)
        openings.append(HomeOpening(id=o.id, kind=kind, polygon=rings_from_polygon(poly), connects=connects,
                                    width=max(width, 0.01), sill=sill, height=head - sill,
                                    lockable=kind in ("entrance_door", "garage_door"), exterior=exterior))
    return openings


def _shell_fixtures(plan: Plan, rooms: list[Room]) -> list[Fixture]:
    """The plan's features as fixtures, each in the room the plan names, else the room
    it overlaps most; a feature over no room (or of an unknown subtype) is left out."""
    polys = {r.id: polygon_from_rings(r.polygon) for r in rooms}
    fixtures = []
    for f in plan.features:
        poly = valid_polygon(f.polygon)
        if poly is None or f.kind not in FIXTURE_KIND_OF_FEATURE:
            continue
        room = f.space_id if f.space_id in polys else max(
            polys, key=lambda rid: (polys[rid].intersection(poly).area, rid), default=None)
        if room is None or polys[room].intersection(poly).area <= 0:
            continue
        height = FEATURE_HEIGHTS.get(f.kind, plan.height if f.kind == "BUILT_IN_FURNITURE" else 0.9)
        fixtures.append(Fixture(id=f.id, kind=FIXTURE_KIND_OF_FEATURE[f.kind], room=room,
                                polygon=rings_from_polygon(poly), height=height))
    return fixtures
