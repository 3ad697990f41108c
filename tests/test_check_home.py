"""The home verifier (homeloop/core/check.py): each crafted fault fires exactly its rule,
and every rule of the verifier has such a fault."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import box

from homeloop.core import check
from homeloop.core.check import RULES, CheckFinding, check_home, rule_counts, smoke_distance_rule
from homeloop.core.home import (
    Home,
    ObjectLocation,
    PlacementException,
    Pose,
    Wall,
    furniture_from_catalog,
    object_from_catalog,
    rings_from_polygon,
)
from test_devices import CAT, E, N, S, W, build, crafted, furniture_of, rooms_of_type

from homeloop.pipeline.devices import equip

RULE = smoke_distance_rule(CAT)


@pytest.fixture(scope="module")
def clean() -> Home:
    result = equip(crafted(), CAT, np.random.default_rng(0))
    assert result.failures == []
    return result.home


def rules(home: Home) -> set[str]:
    return {f.rule for f in check_home(home, CAT)}


def with_furniture(home: Home, *items) -> Home:
    return Home.model_validate({**home.model_dump(), "furniture": [f.model_dump() for f in (*home.furniture, *items)]})


def placed(catalog_id: str, room: str, x: float, y: float, yaw: float) -> object:
    return furniture_from_catalog(CAT.furniture[catalog_id], f"{catalog_id}_extra", room, Pose(x=x, y=y, yaw=yaw))


def moved(home: Home, furniture_id: str, x: float, y: float, yaw: float) -> Home:
    f = home.furniture_item(furniture_id)
    again = furniture_from_catalog(CAT.furniture[f.catalog_id], f.id, f.room, Pose(x=x, y=y, yaw=yaw))
    items = [again if g.id == furniture_id else g for g in home.furniture]
    return Home.model_validate({**home.model_dump(), "furniture": [g.model_dump() for g in items]})


def edit_device(home: Home, device_id: str, **pose) -> Home:
    devices = [d.model_copy(update={"pose": d.pose.model_copy(update=pose)}) if d.id == device_id else d
               for d in home.devices]
    return Home.model_validate({**home.model_dump(), "devices": [d.model_dump() for d in devices]})


def without_devices(home: Home, keep) -> Home:
    devices = [d for d in home.devices if keep(d)]
    return Home.model_validate({**home.model_dump(), "devices": [d.model_dump() for d in devices]})


def with_update(home: Home, **parts) -> Home:
    return Home.model_validate({**home.model_dump(), **{k: [x.model_dump() for x in v] for k, v in parts.items()}})


def kitchen_sensor(home: Home):
    (d,) = [d for d in home.devices_of_type("smoke_sensor") if furniture_of("range") in d.monitors]
    return d


def door_between(home: Home, *types: str) -> str:
    (door,) = [o.id for o in home.openings if o.kind == "door" and {home.room(r).type for r in o.connects} == set(types)]
    return door


def window_of(home: Home, room_type: str) -> str:
    (window,) = [o.id for o in home.openings if o.kind == "window" and home.room(o.connects[0]).type == room_type]
    return window


def test_clean_home_has_no_findings(clean):
    assert check_home(clean, CAT) == []


# --- one crafted fault per rule ------------------------------------------------------------------


def overlapping_furniture(clean: Home) -> Home:
    sofa = clean.furniture_item(furniture_of("sofa"))
    return moved(clean, furniture_of("coffee_table"), sofa.pose.x + 0.55, sofa.pose.y, E)


def furniture_off_the_balcony(clean: Home) -> Home:
    # A bench half over the balcony's open north edge: no wall or opening there.
    (balcony,) = rooms_of_type("BALCONY")
    top = clean.room_polygon(balcony).bounds[3]
    return with_furniture(clean, placed("bench", balcony, 2.5, top, S))


def furniture_over_a_window(clean: Home) -> Home:
    # A side table in the second bedroom pokes 10 cm into the window rectangle of its south wall.
    (room,) = rooms_of_type("ROOM")
    window = clean.opening(window_of(clean, "ROOM"))
    (x0, _, x1, y1) = shapely.Polygon(window.polygon[0]).bounds
    return with_furniture(clean, placed("side_table", room, (x0 + x1) / 2, y1 + 0.125, N))


def furniture_over_a_wall(clean: Home) -> Home:
    tv = clean.furniture_item(furniture_of("tv_unit"))
    return moved(clean, tv.id, tv.pose.x + 0.06, tv.pose.y, W)


def furniture_in_a_door_zone(clean: Home) -> Home:
    # The side table pokes 8 cm past the living-room door's side, 0.4 m from its face.
    door = shapely.Polygon(clean.opening(door_between(clean, "CORRIDOR", "LIVING_ROOM")).polygon[0])
    half = CAT.furniture["side_table"].dimensions.depth / 2
    return moved(clean, furniture_of("side_table"), door.bounds[2] + half - 0.08, door.bounds[3] + 0.4, E)


def tall_item_at_a_window(clean: Home) -> Home:
    (room,) = rooms_of_type("ROOM")
    window = shapely.Polygon(clean.opening(window_of(clean, "ROOM")).polygon[0])
    return with_furniture(clean, placed("wardrobe", room, window.centroid.x, window.bounds[3] + 0.3, N))


def something_in_front_of_the_fridge(clean: Home) -> Home:
    fridge = clean.furniture_item(furniture_of("fridge"))
    ahead = CAT.fridge.dimensions.depth / 2 + CAT.fridge.clearance_front / 2
    x, y, _ = fridge.pose.to_world(ahead, 0.0)
    return with_furniture(clean, placed("side_table", fridge.room, x, y, E))


def nook_home(sofa_gap: float | None) -> Home:
    """A hall, a living room and a dining nook open to it through a 1.5 m passage.

    With ``sofa_gap`` a sofa stands with its back to the passage, that far from it.
    """
    rooms = {"h": ("CORRIDOR", (0.0, -1.6, 6.0, -0.1)), "l": ("LIVING_ROOM", (0.0, 0.0, 4.0, 4.0)),
             "d": ("DINING", (4.0, 0.0, 6.0, 4.0))}
    openings = [("e", "ENTRANCE_DOOR", (6.0, -1.4, 6.3, -0.4), ("h",)),
                ("dl", "DOOR", (1.5, -0.1, 2.4, 0.0), ("h", "l"))]
    home = build(rooms, openings, home_id="nook")
    partition = [box(3.95, 0.0, 4.05, 1.5), box(3.95, 3.0, 4.05, 4.0)]
    walls = [*home.walls, *(Wall(id=f"partition_{i}", polygon=rings_from_polygon(g)) for i, g in enumerate(partition))]
    home = with_update(home, walls=walls)
    home = equip(home, CAT, np.random.default_rng(0)).home
    if sofa_gap is None:
        return home
    sofa = furniture_from_catalog(CAT.furniture["sofa"], "sofa", "l", Pose(x=3.95 - sofa_gap - 0.45, y=2.25, yaw=W))
    return with_furniture(home, sofa)


def room_cut_off_by_a_sofa(clean: Home) -> Home:
    # 0.45 m behind the sofa: a Stretch (0.33 m) passes, the G1-D (0.50 m) does not.
    return nook_home(0.45)


def doors_split_by_sofas(clean: Home) -> Home:
    """A living room whose two doors (to the hall, to a balcony) two sofas wall off from each
    other; the balcony is outdoors, so only the doors' connection inside the room fails."""
    rooms = {"h": ("CORRIDOR", (0.0, -1.6, 4.0, -0.1)), "l": ("LIVING_ROOM", (0.0, 0.0, 4.0, 4.0)),
             "b": ("BALCONY", (0.0, 4.3, 4.0, 5.5))}
    openings = [("e", "ENTRANCE_DOOR", (4.0, -1.4, 4.3, -0.4), ("h",)),
                ("hl", "DOOR", (1.5, -0.1, 2.4, 0.0), ("h", "l")),
                ("lb", "DOOR", (1.5, 4.0, 2.4, 4.3), ("l", "b"))]
    home = equip(build(rooms, openings, home_id="split"), CAT, np.random.default_rng(0)).home
    sofas = [furniture_from_catalog(CAT.furniture["sofa"], f"sofa_{k}", "l", Pose(x=x, y=2.0, yaw=S))
             for k, x in enumerate((1.0, 3.0))]
    return with_furniture(home, *sofas)


def smoke_sensor_near_the_range(clean: Home) -> Home:
    d = kitchen_sensor(clean)
    x, y, _ = clean.furniture_item(furniture_of("range")).pose.to_world(1.3, 0.0)
    return edit_device(clean, d.id, x=x, y=y)


def smoke_sensor_by_the_hall_wall(clean: Home) -> Home:
    (hall,) = rooms_of_type("CORRIDOR")
    (d,) = [d for d in clean.devices_of_type("smoke_sensor") if d.room == hall]
    return edit_device(clean, d.id, y=clean.room_polygon(hall).bounds[1] + 0.05)


def no_smoke_sensor_in_a_bedroom(clean: Home) -> Home:
    (room,) = rooms_of_type("ROOM")
    return without_devices(clean, lambda d: not (d.type == "smoke_sensor" and d.room == room))


def no_smoke_sensor_in_the_hall(clean: Home) -> Home:
    (hall,) = rooms_of_type("CORRIDOR")
    return without_devices(clean, lambda d: not (d.type == "smoke_sensor" and d.room == hall))


def no_leak_sensor(clean: Home) -> Home:
    return without_devices(clean, lambda d: d.type != "leak_sensor")


def room_switch(home: Home, room: str):
    """The switch of a room's ceiling light."""
    (light,) = [d.id for d in home.devices_of_type("light") if d.room == room and d.mount == "ceiling"]
    (switch,) = [d for d in home.devices_of_type("light_switch") if light in d.controls]
    return switch


def light_switch_in_the_middle_of_the_room(clean: Home) -> Home:
    (living,) = rooms_of_type("LIVING_ROOM")
    centre = clean.room_polygon(living).centroid
    return edit_device(clean, room_switch(clean, living).id, x=centre.x, y=centre.y)


def water_main_across_the_kitchen(clean: Home) -> Home:
    # The kitchen's south-west corner, 3.4 m from the counter with the sink.
    (main,) = clean.devices_of_type("water_main")
    x0, y0, _, _ = clean.room_polygon(main.room).bounds
    return edit_device(clean, main.id, x=x0 + 0.1, y=y0 + 0.1)


def tv_plug_across_the_room(clean: Home) -> Home:
    (plug,) = [d for d in clean.devices_of_type("plug") if furniture_of("tv_unit") in d.controls]
    centre = clean.room_polygon(plug.room).centroid
    return edit_device(clean, plug.id, x=centre.x, y=centre.y)


def window_without_contact_sensor(clean: Home) -> Home:
    window = window_of(clean, "OFFICE")
    return without_devices(clean, lambda d: not (d.type == "contact_sensor" and d.mounted_on == window))


def entrance_camera_turned_away(clean: Home) -> Home:
    (hall,) = rooms_of_type("CORRIDOR")
    cams = [c.model_copy(update={"pose": c.pose.model_copy(update={"yaw": c.pose.yaw + math.pi})})
            if c.room == hall else c for c in clean.cameras]
    return with_update(clean, cameras=cams)


def plug_outside_its_room(clean: Home) -> Home:
    # A plug that powers nothing, so only its room is wrong.
    plug = next(d for d in clean.devices_of_type("plug") if not d.controls)
    return edit_device(clean, plug.id, x=plug.pose.x + 20.0)


def bathroom_camera_without_privacy(clean: Home) -> Home:
    (bath,) = rooms_of_type("BATHROOM")
    cams = [c.model_copy(update={"privacy_mode": "none"}) if c.room == bath else c for c in clean.cameras]
    return with_update(clean, cameras=cams)


def book_sunk_into_the_nightstand(clean: Home) -> Home:
    # A book "on" the nightstand's top, 5 cm lower than the top: inside the nightstand's solid.
    stand = clean.furniture_item(furniture_of("nightstand"))
    top = stand.surface("top")
    book = object_from_catalog(CAT.objects["book"], "book_sunk",
                               ObjectLocation(kind="surface", room=stand.room, furniture=stand.id, name=top.name),
                               Pose(x=stand.pose.x, y=stand.pose.y, z=top.height - 0.05, yaw=stand.pose.yaw))
    return with_update(clean, objects=[*clean.objects, book])


def book_under_the_bedside_lamp(clean: Home) -> Home:
    # A book lying on the nightstand's top (clear of the nightstand) right where its lamp stands.
    stand = clean.furniture_item(furniture_of("nightstand"))
    (lamp,) = [d for d in clean.devices if d.mounted_on == stand.id]
    top = stand.surface("top")
    book = object_from_catalog(CAT.objects["book"], "book_under_lamp",
                               ObjectLocation(kind="surface", room=stand.room, furniture=stand.id, name=top.name),
                               Pose(x=lamp.pose.x, y=lamp.pose.y, z=top.height, yaw=stand.pose.yaw))
    return with_update(clean, objects=[*clean.objects, book])


#: rule id -> a crafted home that breaks it and no other rule.
FAILING_CASES: dict[str, Callable[[Home], Home]] = {
    "furniture_overlap": overlapping_furniture,
    "furniture_outside_room": furniture_off_the_balcony,
    "furniture_blocks_opening": furniture_over_a_window,
    "furniture_blocks_wall": furniture_over_a_wall,
    "door_clearance": furniture_in_a_door_zone,
    "window_blocked_by_tall_item": tall_item_at_a_window,
    "fridge_clearance": something_in_front_of_the_fridge,
    "unreachable_room": room_cut_off_by_a_sofa,
    "doors_not_connected": doors_split_by_sofas,
    "smoke_sensor_distance": smoke_sensor_near_the_range,
    "smoke_sensor_near_wall": smoke_sensor_by_the_hall_wall,
    "smoke_sensor_missing_bedroom": no_smoke_sensor_in_a_bedroom,
    "smoke_sensor_missing_outside_sleeping": no_smoke_sensor_in_the_hall,
    "leak_sensor_missing": no_leak_sensor,
    "light_switch_far_from_door": light_switch_in_the_middle_of_the_room,
    "water_main_far_from_sink": water_main_across_the_kitchen,
    "plug_far_from_furniture": tv_plug_across_the_room,
    "contact_sensor_missing": window_without_contact_sensor,
    "entrance_not_covered": entrance_camera_turned_away,
    "device_outside_room": plug_outside_its_room,
    "camera_privacy": bathroom_camera_without_privacy,
    "object_inside_furniture": book_sunk_into_the_nightstand,
    "device_overlaps_object": book_under_the_bedside_lamp,
}


@pytest.mark.parametrize("rule", sorted(FAILING_CASES))
def test_each_crafted_fault_fires_its_rule_and_only_it(clean, rule):
    assert rules(FAILING_CASES[rule](clean)) == {rule}


def test_every_rule_of_the_check_has_a_crafted_fault():
    # RULES is what check.py registers as it defines its checks: a new rule without a case fails here.
    assert set(RULES) == set(FAILING_CASES)


def test_every_rule_is_documented_in_the_module():
    for rule in RULES:
        assert f"``{rule}``" in check.__doc__, rule


# --- what findings say ---------------------------------------------------------------------------


def test_findings_name_rule_elements_and_message(clean):
    (finding,) = check_home(overlapping_furniture(clean), CAT)
    assert isinstance(finding, CheckFinding)
    assert finding.rule == "furniture_overlap"
    assert set(finding.elements) == {furniture_of("sofa"), furniture_of("coffee_table")}
    assert "overlap" in finding.message


def test_a_door_zone_finding_names_the_door_and_the_item(clean):
    (f,) = check_home(furniture_in_a_door_zone(clean), CAT)
    assert f.elements == (door_between(clean, "CORRIDOR", "LIVING_ROOM"), furniture_of("side_table"))


def test_a_fridge_clearance_finding_names_the_fridge_and_what_is_in_front(clean):
    (f,) = check_home(something_in_front_of_the_fridge(clean), CAT)
    assert f.elements == (furniture_of("fridge"), "side_table_extra")
    assert f"{CAT.fridge.clearance_front} m" in f.message


def test_the_fridge_clearance_is_the_catalogs(clean, tmp_path):
    # A catalog asking only 0.3 m in front of the fridge accepts a table 0.6 m away.
    from test_devices import catalog_with

    fridge = clean.furniture_item(furniture_of("fridge"))
    x, y, _ = fridge.pose.to_world(CAT.fridge.dimensions.depth / 2 + 0.6 + 0.225, 0.0)
    home = with_furniture(clean, placed("side_table", fridge.room, x, y, E))
    assert rules(home) == {"fridge_clearance"}
    short = catalog_with(tmp_path, "furniture.yaml", "clearance_front: 1.00", "clearance_front: 0.30")
    assert "fridge_clearance" not in {f.rule for f in check_home(home, short)}


def test_smoke_sensor_finding_names_the_rule_and_its_numbers(clean):
    d = kitchen_sensor(clean)
    (f,) = check_home(smoke_sensor_near_the_range(clean), CAT)
    assert f.elements == (d.id, furniture_of("range"))
    assert "1.00 m" in f.message and RULE.id in f.message
    assert f"{RULE.min_distance} m" in f.message and f"{RULE.fallback_distance} m" in f.message


def test_a_smoke_sensor_between_fallback_and_rule_needs_a_placement_exception(clean):
    d = kitchen_sensor(clean)
    x, y, _ = clean.furniture_item(furniture_of("range")).pose.to_world(2.8, 0.0)
    home = edit_device(clean, d.id, x=x, y=y)
    assert rules(home) == {"smoke_sensor_distance"}
    record = PlacementException(device=d.id, rule=RULE.id, value=2.5, required=RULE.min_distance,
                                fallback=RULE.fallback_distance)
    recorded = with_update(home, placement_exceptions=[record])
    assert check_home(recorded, CAT) == []
    # An exception never allows less than the fallback.
    closer = edit_device(recorded, d.id, x=x, y=y + 1.0)
    assert rules(closer) == {"smoke_sensor_distance"}
    # An exception of another rule does not count.
    other = with_update(home, placement_exceptions=[record.model_copy(update={"rule": "another_rule"})])
    assert rules(other) == {"smoke_sensor_distance"}


#: The near rules, their crafted faults and each one's catalog line (homeloop/catalog/devices.yaml).
NEAR_RULES = {
    "light_switch_far_from_door": (light_switch_in_the_middle_of_the_room, "light_switch"),
    "water_main_far_from_sink": (water_main_across_the_kitchen, "water_main"),
    "plug_far_from_furniture": (tv_plug_across_the_room, "plug"),
}


@pytest.mark.parametrize("rule", sorted(NEAR_RULES))
def test_a_near_rule_reads_its_distance_from_the_catalog(clean, rule, tmp_path):
    from test_devices import catalog_with

    fault, device_type = NEAR_RULES[rule]
    home = fault(clean)
    (finding,) = check_home(home, CAT)
    limit = CAT.devices[device_type].placement.max_distance
    device = home.device(finding.elements[0])
    target = finding.elements[1]
    geom = (home.opening_polygons() | home.furniture_footprints()
            | {x.id: shapely.Polygon(x.polygon[0]) for x in home.fixtures})[target]
    measured = geom.distance(shapely.Point(device.pose.x, device.pose.y))
    assert device.type == device_type and measured > limit
    assert f"{measured:.2f} m" in finding.message and f"at most {limit} m" in finding.message
    # A catalog allowing the measured distance accepts the same home.
    wider = catalog_with(tmp_path, "devices.yaml", f"max_distance: {limit}", f"max_distance: {measured + 0.5:.1f}")
    assert rule not in {f.rule for f in check_home(home, wider)}


def test_every_distance_of_the_catalogs_device_placements_is_checked():
    # A device type given a new distance in homeloop/catalog/devices.yaml needs a rule here too.
    near = {d.id for d in CAT.devices.values() if d.placement.max_distance is not None}
    assert near == {"leak_sensor", *(device_type for _, device_type in NEAR_RULES.values())}
    kept_away = {d.id for d in CAT.devices.values() if d.placement.keep_away or d.placement.min_wall_distance}
    assert kept_away == {"smoke_sensor"}
    assert {"leak_sensor_missing", "smoke_sensor_distance", "smoke_sensor_near_wall", *NEAR_RULES} <= set(RULES)


def test_a_switch_moved_along_the_door_wall_within_the_distance_passes(clean):
    (living,) = rooms_of_type("LIVING_ROOM")
    switch = room_switch(clean, living)
    door = shapely.Polygon(clean.opening(door_between(clean, "CORRIDOR", "LIVING_ROOM")).polygon[0])
    limit = CAT.devices["light_switch"].placement.max_distance
    assert rules(edit_device(clean, switch.id, x=door.bounds[2] + limit - 0.01)) == set()
    assert rules(edit_device(clean, switch.id, x=door.bounds[2] + limit + 0.05)) == {"light_switch_far_from_door"}


def test_no_smoke_sensor_outside_the_sleeping_area_names_both_bedrooms(clean):
    found = check_home(no_smoke_sensor_in_the_hall(clean), CAT)
    assert {f.elements[0] for f in found} == rooms_of_type("BEDROOM", "ROOM")


def test_a_bathroom_camera_finding_says_what_it_must_be(clean):
    assert any("must be image_blocked" in f.message for f in check_home(bathroom_camera_without_privacy(clean), CAT))


def test_a_wider_nook_passage_is_clean():
    assert check_home(nook_home(None), CAT) == []
    assert check_home(nook_home(0.8), CAT) == []


def test_the_room_cut_off_by_a_sofa_is_named():
    found = check_home(nook_home(0.45), CAT)
    assert [(f.rule, f.elements) for f in found] == [("unreachable_room", ("d",))]


def test_rule_counts(clean):
    assert rule_counts(check_home(overlapping_furniture(clean), CAT)) == {"furniture_overlap": 1}


# --- NFPA 72: the fallback distance -----------------------------------------------------------------


def small_kitchen() -> Home:
    """A 3.0 x 2.6 m kitchen, the range in the middle of its north wall, entered from a porch."""
    rooms = {"k": ("KITCHEN", (0.0, 0.0, 3.0, 2.6)), "p": ("PORCH", (0.5, -2.3, 2.5, -0.3))}
    openings = [("e", "ENTRANCE_DOOR", (1.0, -0.3, 2.0, 0.0), ("k", "p"))]
    furniture = [("range", "range", "k", (1.5, 2.3, S))]
    return build(rooms, openings, furniture=furniture, home_id="small_kitchen")


def test_small_kitchen_gets_the_exception_and_passes():
    result = equip(small_kitchen(), CAT, np.random.default_rng(0))
    assert result.failures == []
    (smoke,) = result.home.devices_of_type("smoke_sensor")
    stove = shapely.Polygon(result.home.furniture_item("range").footprint[0])
    d = stove.distance(shapely.Point(smoke.pose.x, smoke.pose.y))
    assert RULE.fallback_distance <= d < RULE.min_distance
    (record,) = result.home.placement_exceptions
    assert (record.device, record.rule) == (smoke.id, RULE.id)
    assert (record.required, record.fallback) == (RULE.min_distance, RULE.fallback_distance)
    assert record.value == pytest.approx(d, abs=1e-3)
    assert any("fallback" in n for n in result.notes)
    assert check_home(result.home, CAT) == []
    # Without the record the same sensor fails.
    assert rules(with_update(result.home, placement_exceptions=[])) == {"smoke_sensor_distance"}


def test_the_rule_distance_is_kept_where_the_room_allows(clean):
    stove = shapely.Polygon(clean.furniture_item(furniture_of("range")).footprint[0])
    for d in clean.devices_of_type("smoke_sensor"):
        assert stove.distance(shapely.Point(d.pose.x, d.pose.y)) >= RULE.min_distance
    assert clean.placement_exceptions == []


# --- light switches beside the door ------------------------------------------------------------------


def test_a_door_filling_the_end_of_a_corridor_gets_its_switch_round_the_corner():
    # The entrance door leaves 0.14 m of end wall each side: the switch goes on a side wall.
    rooms = {"h": ("CORRIDOR", (0.0, 0.0, 1.2, 6.0)), "l": ("LIVING_ROOM", (1.3, 0.0, 5.3, 6.0))}
    openings = [("e", "ENTRANCE_DOOR", (0.14, 6.0, 1.06, 6.3), ("h",)),
                ("hl", "DOOR", (1.2, 2.0, 1.3, 2.9), ("h", "l"))]
    result = equip(build(rooms, openings, home_id="corner_door"), CAT, np.random.default_rng(0))
    assert not [f for f in result.failures if "light switch" in f]
    assert "light_switch_far_from_door" not in rules(result.home)
    light = next(d.id for d in result.home.devices_of_type("light") if d.room == "h")
    (switch,) = [d for d in result.home.devices_of_type("light_switch") if light in d.controls]
    door = result.home.opening_polygons()["e"]
    assert door.distance(shapely.Point(switch.pose.x, switch.pose.y)) <= CAT.devices["light_switch"].placement.max_distance
    assert min(switch.pose.x, 1.2 - switch.pose.x) < 0.02  # on a side wall


def test_a_door_walled_in_by_wardrobes_is_an_equip_failure_naming_the_distance():
    rooms = {"h": ("CORRIDOR", (0.0, -1.6, 3.0, -0.1)), "b": ("BEDROOM", (0.0, 0.0, 3.0, 3.0))}
    openings = [("e", "ENTRANCE_DOOR", (3.0, -1.4, 3.3, -0.4), ("h",)),
                ("hb", "DOOR", (1.0, -0.1, 1.9, 0.0), ("h", "b"))]
    furniture = [("wardrobe_w", "wardrobe", "b", (0.5, 0.3, N)), ("wardrobe_e", "wardrobe", "b", (2.4, 0.3, N))]
    result = equip(build(rooms, openings, furniture=furniture, home_id="walled_door"), CAT,
                   np.random.default_rng(0))
    limit = CAT.devices["light_switch"].placement.max_distance
    assert [f for f in result.failures if "light switch" in f] == [
        f"room b: no wall place within {limit} m of its doors (hb) for a light switch"]
    assert not [d for d in result.home.devices_of_type("light_switch") if d.room == "b"]


# --- objects clear of furniture ---------------------------------------------------------------------


def test_an_object_inside_furniture_is_named_with_its_host(clean):
    (f,) = check_home(book_sunk_into_the_nightstand(clean), CAT)
    assert f.elements == ("book_sunk", furniture_of("nightstand")) and "surface top" in f.message
    # Resting on the top instead, it is clean.
    book = book_sunk_into_the_nightstand(clean).object("book_sunk")
    rested = with_update(clean, objects=[*clean.objects, book.model_copy(
        update={"pose": book.pose.model_copy(update={"z": book.pose.z + 0.05})})])
    assert check_home(rested, CAT) == []


# --- devices clear of objects and furniture --------------------------------------------------------


def test_a_device_in_an_object_or_furniture_is_named_with_it(clean):
    stand = furniture_of("nightstand")
    (lamp,) = [d for d in clean.devices if d.mounted_on == stand]
    (f,) = check_home(book_under_the_bedside_lamp(clean), CAT)
    assert f.elements == (lamp.id, "book_under_lamp") and "book" in f.message
    # The lamp stands on its own nightstand: that never counts (the clean home has no finding).
    top = clean.furniture_item(stand).surface("top")
    assert lamp.mount == "on_furniture" and lamp.pose.z == pytest.approx(top.height)
    # A bedroom plug pushed along its wall into the wardrobe is named with the wardrobe.
    wardrobe = clean.furniture_item(furniture_of("wardrobe"))
    plug = next(d for d in clean.devices_of_type("plug") if d.room == wardrobe.room and not d.controls)
    wall_y = max(y for _, y in clean.room_polygon(wardrobe.room).exterior.coords)
    inside = edit_device(clean, plug.id, x=wardrobe.pose.x, y=wall_y - 0.01, yaw=S)
    assert [(f.rule, f.elements) for f in check_home(inside, CAT)] == [("device_overlaps_object",
                                                                        (plug.id, wardrobe.id))]


def _tv_on_its_unit(clean: Home):
    """A TV standing on the crafted living room's TV unit, its back to the unit's back (as
    furnishing stands it), and the unit's top surface."""
    unit = clean.furniture_item(furniture_of("tv_unit"))
    top = CAT.furniture["tv_unit"].surfaces[0]
    tv_entry = CAT.furniture["television"]
    x, y, _ = unit.pose.to_world(top.offset.x - (top.depth - tv_entry.dimensions.depth) / 2, top.offset.y)
    tv = furniture_from_catalog(tv_entry, "television_1", unit.room,
                                Pose(x=x, y=y, z=unit.pose.z + top.height, yaw=unit.pose.yaw))
    return unit, top, tv


@settings(max_examples=60, deadline=None)
@given(u=st.floats(-1.0, 1.0), v=st.floats(-1.0, 1.0))
def test_a_remote_on_the_tv_unit_meets_the_tv_only_at_its_feet(clean, u, v):
    from homeloop.core.geometry_assets import SCREEN_STANDS, furniture_solids, object_box, overlapping

    unit, top, tv = _tv_on_its_unit(clean)
    remote = CAT.objects["remote_control"]
    d = remote.dimensions
    # Anywhere on the unit's top (u, v: fractions of the free travel along its depth and width).
    du, dv = u * (top.depth - d.depth) / 2, v * (top.width - d.width) / 2
    x, y, _ = unit.pose.to_world(top.offset.x + du, top.offset.y + dv)
    obj = object_from_catalog(remote, "remote_1", ObjectLocation(kind="surface", room=unit.room,
                                                                  furniture=unit.id, name=top.name),
                              Pose(x=x, y=y, z=unit.pose.z + top.height, yaw=unit.pose.yaw))
    hit = overlapping(object_box(obj), furniture_solids(CAT.furniture["television"], tv),
                      check.OBJECT_PENETRATION).any()
    # The TV's panel stands clear above the remote; only its two feet reach down to the top.
    stand, tv_d = SCREEN_STANDS["television"], CAT.furniture["television"].dimensions
    assert d.height < stand.clearance
    tv_u = top.offset.x - (top.depth - tv_d.depth) / 2
    along = abs(du - tv_u) < (tv_d.depth + d.depth) / 2 - check.OBJECT_PENETRATION
    feet = abs(abs(dv) - (tv_d.width / 2 - stand.foot_width / 2)) < (stand.foot_width + d.width) / 2 - \
        check.OBJECT_PENETRATION
    assert hit == (along and feet)


def test_remotes_where_furnishing_puts_them_never_meet_the_tv(clean):
    # The furnisher's grid over the unit's top (homeloop/pipeline/furnish/objects.py: 5 x 7 positions) avoids the feet.
    unit, top, tv = _tv_on_its_unit(clean)
    remote = CAT.objects["remote_control"]
    d = remote.dimensions
    objects = []
    for i, du in enumerate(np.linspace(-(top.depth - d.depth) / 2, (top.depth - d.depth) / 2, 5)):
        for j, dv in enumerate(np.linspace(-(top.width - d.width) / 2, (top.width - d.width) / 2, 7)):
            x, y, _ = unit.pose.to_world(top.offset.x + du, top.offset.y + dv)
            objects.append(object_from_catalog(
                remote, f"remote_{i}_{j}", ObjectLocation(kind="surface", room=unit.room, furniture=unit.id,
                                                           name=top.name),
                Pose(x=x, y=y, z=unit.pose.z + top.height, yaw=unit.pose.yaw)))
    home = with_update(clean, furniture=[*clean.furniture, tv], objects=[*clean.objects, *objects])
    assert [f for f in check_home(home, CAT) if f.rule == "object_inside_furniture"] == []


def test_a_home_changed_between_two_checks_is_checked_as_it_is_now(clean):
    # The object and device rules share the furniture solids within one check only:
    # the nightstand moved a metre after a first check no longer holds the sunk book.
    home = book_sunk_into_the_nightstand(clean)
    assert "object_inside_furniture" in rules(home)
    stand = home.furniture_item(furniture_of("nightstand"))
    home.furniture = moved(home, stand.id, stand.pose.x + 1.0, stand.pose.y, stand.pose.yaw).furniture
    assert "object_inside_furniture" not in rules(home)
