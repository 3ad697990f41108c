"""Equipping homes with devices and cameras (homeloop/pipeline/devices/).

The crafted home (all rooms rectangles, interior walls 0.1 m, exterior 0.3 m)::

    y 11.5  +-----------+
            | BALCONY 8 |
    y  9.9  +-----------+-----------+-----------+
            | LIVING 2  | KITCHEN 3 | BEDROOM 4 |
    y  5.6  +-----------+-----------+-----------+
            |              CORRIDOR 1           |=| entrance (east)
    y  4.0  +------+--------+----------+--------+
            |BATH 5| ROOM 6 | OFFICE 7 |
    y  0    +------+--------+----------+
           x 0    3.0      7.0       10.5      12.7
"""

from __future__ import annotations

import functools
import math
import shutil

import numpy as np
import pytest
import shapely
import shapely.affinity
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import box

from homeloop.core.catalog import load_catalog
from homeloop.core.check import check_home, smoke_distance_rule
from homeloop.core.home import (
    FIXTURE_KIND_OF_FEATURE,
    Fixture,
    Home,
    ObjectLocation,
    Opening,
    Pose,
    Room,
    Source,
    Wall,
    furniture_from_catalog,
    object_from_catalog,
    rings_from_polygon,
)
from homeloop.core.plan import space_class
from homeloop.sim.dynamics.smoke import rooms_reached

from homeloop.pipeline.devices import EquipProfile, HOUSE_PROFILE, device_summary, equip
from homeloop.pipeline.furnish import FEATURE_HEIGHTS

CAT = load_catalog()
KIND = {"DOOR": "door", "ENTRANCE_DOOR": "entrance_door", "WINDOW": "window", "GARAGE_DOOR": "garage_door"}


# --- building small homes by hand ---------------------------------------------------------


def build(rooms: dict[str, tuple[str, tuple[float, float, float, float]]],
          openings: list[tuple[str, str, tuple[float, float, float, float], tuple[str, ...]]],
          features: list[tuple[str, str, tuple[float, float, float, float]]] = (),
          furniture: list[tuple[str, str, str, tuple[float, float, float]]] = (),
          home_id: str = "crafted") -> Home:
    """A home from rectangles.

    rooms: id -> (subtype, box); openings: (id, SD kind, box, connects);
    features: (id, SD feature kind, box), the home's fixtures (the room is
    found by position); furniture: (id, catalog id, room, (x, y, yaw)). Walls
    fill the gaps between rooms inside the envelope grown by 0.3 m, cut at
    doors and windows.
    """
    polys = {rid: box(*b) for rid, (_, b) in rooms.items()}
    indoor = [polys[r] for r, (t, _) in rooms.items() if space_class(t) != "outdoor"]
    envelope = shapely.union_all(indoor).envelope.buffer(0.3, join_style="mitre")
    op_polys = {oid: box(*b) for oid, _, b, _ in openings}
    solid = envelope.difference(shapely.union_all(list(polys.values())))
    solid = solid.difference(shapely.union_all(list(op_polys.values())))
    walls = [Wall(id=f"wall_{i}", polygon=rings_from_polygon(g))
             for i, g in enumerate(g for g in shapely.get_parts(solid) if g.area > 1e-4)]
    fixtures = [Fixture(id=fid, kind=FIXTURE_KIND_OF_FEATURE[kind], polygon=rings_from_polygon(box(*b)),
                        room=next(r for r, p in polys.items() if p.buffer(0.01).contains(box(*b))),
                        height=FEATURE_HEIGHTS.get(kind, 0.9)) for fid, kind, b in features]
    names: dict[str, int] = {}
    home_rooms = []
    for rid, (t, _) in rooms.items():
        base = t.lower().replace("_", " ")
        names[base] = names.get(base, 0) + 1
        home_rooms.append(Room(id=rid, name=base if names[base] == 1 else f"{base} {names[base]}", type=t,
                               polygon=rings_from_polygon(polys[rid])))
    home_ops = []
    for oid, k, b, connects in openings:
        window = k == "WINDOW"
        width = max(b[2] - b[0], b[3] - b[1])
        outdoor = any(space_class(rooms[c][0]) == "outdoor" for c in connects)
        home_ops.append(Opening(id=oid, kind=KIND[k], polygon=rings_from_polygon(op_polys[oid]),
                                connects=list(connects), width=width, sill=0.5 if window else 0.0,
                                height=1.9 if window else 2.0, lockable=k == "ENTRANCE_DOOR",
                                exterior=(window or k in ("ENTRANCE_DOOR", "GARAGE_DOOR") or outdoor
                                          or len(connects) < 2)))
    items = [furniture_from_catalog(CAT.furniture[cid], fid, room, Pose(x=x, y=y, yaw=yaw))
             for fid, cid, room, (x, y, yaw) in furniture]
    return Home(home_id=home_id, source=Source(kind="synthetic", plan=home_id, seed=0), rooms=home_rooms,
                walls=walls, openings=home_ops, fixtures=fixtures, furniture=items)


def add_plant(home: Home, stand_id: str) -> Home:
    stand = home.furniture_item(stand_id)
    top = stand.surfaces[0]
    plant = object_from_catalog(CAT.objects["potted_plant"], f"plant_{stand.room}",
                                ObjectLocation(kind="surface", room=stand.room, furniture=stand_id, name=top.name),
                                Pose(x=stand.pose.x, y=stand.pose.y, z=top.height))
    return home.model_copy(update={"objects": [*home.objects, plant]})


N, S, E, W = math.pi / 2, -math.pi / 2, 0.0, math.pi

ROOMS = {
    "1": ("CORRIDOR", (0.0, 4.1, 12.7, 5.5)),
    "2": ("LIVING_ROOM", (0.0, 5.6, 5.0, 9.6)),
    "3": ("KITCHEN", (5.1, 5.6, 8.6, 9.6)),
    "4": ("BEDROOM", (8.7, 5.6, 12.7, 9.6)),
    "5": ("BATHROOM", (0.0, 0.0, 3.0, 4.0)),
    "6": ("ROOM", (3.1, 0.0, 7.0, 4.0)),
    "7": ("OFFICE", (7.1, 0.0, 10.5, 4.0)),
    "8": ("BALCONY", (0.0, 9.9, 5.0, 11.5)),
}
OPENINGS = [
    ("entrance", "ENTRANCE_DOOR", (12.7, 4.3, 13.0, 5.3), ("1",)),
    ("door_living", "DOOR", (1.0, 5.5, 1.9, 5.6), ("1", "2")),
    ("door_kitchen", "DOOR", (5.5, 5.5, 6.4, 5.6), ("1", "3")),
    ("door_bedroom", "DOOR", (11.0, 5.5, 11.9, 5.6), ("1", "4")),
    ("door_bath", "DOOR", (1.5, 4.0, 2.4, 4.1), ("1", "5")),
    ("door_room", "DOOR", (5.5, 4.0, 6.4, 4.1), ("1", "6")),
    ("door_office", "DOOR", (8.0, 4.0, 8.9, 4.1), ("1", "7")),
    ("door_balcony", "DOOR", (3.5, 9.6, 4.4, 9.9), ("2", "8")),
    ("window_living", "WINDOW", (1.0, 9.6, 2.5, 9.9), ("2", "8")),
    ("window_kitchen", "WINDOW", (6.0, 9.6, 7.0, 9.9), ("3",)),
    ("window_bedroom", "WINDOW", (12.7, 7.0, 13.0, 8.4), ("4",)),
    ("window_bath", "WINDOW", (-0.3, 1.5, 0.0, 2.3), ("5",)),
    ("window_room", "WINDOW", (4.5, -0.3, 5.7, 0.0), ("6",)),
    ("window_office", "WINDOW", (8.2, -0.3, 9.4, 0.0), ("7",)),
]
FEATURES = [
    ("counter", "KITCHEN", (6.1, 9.0, 8.6, 9.6)),
    ("sink", "SINK", (7.2, 9.1, 7.8, 9.5)),
]
FURNITURE = [
    # living room: sofa on the west wall facing east, TV on the east wall
    ("sofa", "sofa", "2", (0.45, 7.6, E)),
    ("coffee_table", "coffee_table", "2", (1.6, 7.6, E)),
    ("tv_unit", "tv_unit", "2", (4.79, 7.6, W)),
    ("side_table", "side_table", "2", (0.25, 6.2, E)),
    ("plant_stand", "plant_stand", "2", (4.7, 9.3, W)),
    # kitchen: counter run on the north wall, fridge at the west end
    ("fridge", "fridge", "3", (5.425, 9.275, S)),
    ("range", "range", "3", (6.4, 9.3, S)),
    ("dishwasher", "dishwasher", "3", (8.3, 9.3, S)),
    # bedroom
    ("bed", "double_bed", "4", (12.675 - 1.025, 7.6, W)),
    ("nightstand", "nightstand", "4", (12.5, 6.35, W)),
    ("wardrobe", "wardrobe", "4", (9.5, 9.3, S)),
    # second bedroom and office
    ("bed_6", "single_bed", "6", (4.1, 1.0, N)),
    ("desk", "desk", "7", (10.2, 2.0, W)),
]


def crafted() -> Home:
    return add_plant(build(ROOMS, OPENINGS, FEATURES, FURNITURE), "plant_stand")


def rooms_of_type(*types: str) -> set[str]:
    """Ids of the crafted home's rooms of these subtypes."""
    return {rid for rid, (t, _) in ROOMS.items() if t in types}


def furniture_of(catalog_id: str) -> str:
    """The id of the crafted home's piece of furniture of this catalog id."""
    (fid,) = [fid for fid, cid, _, _ in FURNITURE if cid == catalog_id]
    return fid


def openings_of(kind: str) -> set[str]:
    return {oid for oid, k, _, _ in OPENINGS if k == kind}


def catalog_with(tmp_path, file: str, old: str, new: str):
    """A copy of the catalog with one edit (``old`` replaced by ``new`` in ``file``)."""
    from homeloop.core.catalog import DEFAULT_CATALOG_DIR

    copy = tmp_path / "catalog"
    shutil.copytree(DEFAULT_CATALOG_DIR, copy)
    text = (copy / file).read_text()
    assert text.count(old) == 1, old
    (copy / file).write_text(text.replace(old, new))
    return load_catalog(copy)


@pytest.fixture(scope="module")
def equipped():
    home = crafted()
    return equip(home, CAT, np.random.default_rng(0)), home


# --- tests -------------------------------------------------------------------------------


def test_crafted_home_is_clean_before_equipping():
    rules = {f.rule for f in check_home(crafted(), CAT)}
    # Only the device rules can fire on a home without devices.
    assert rules <= {"smoke_sensor_missing_bedroom", "smoke_sensor_missing_outside_sleeping", "leak_sensor_missing",
                     "contact_sensor_missing", "entrance_not_covered"}


def test_equipped_home_passes_check_home(equipped):
    result, _ = equipped
    assert result.failures == []
    assert check_home(result.home, CAT) == []
    assert result.home.equip_profile == EquipProfile().name


def test_device_types_present(equipped):
    result, _ = equipped
    counts = result.home.device_counts()
    for t in ("smoke_sensor", "contact_sensor", "leak_sensor", "doorbell", "soil_moisture_sensor", "stove", "lock",
              "roller_blind", "curtain", "thermostat", "plug", "light_switch", "light", "water_main", "dome_camera",
              "fall_watch", "help_button"):
        assert counts.get(t, 0) >= 1, t
    assert counts["thermostat"] == 1 and counts["water_main"] == 1 and counts["stove"] == 1
    assert 50 <= sum(1 for d in result.home.devices if d.agent_visible) <= 120


def test_smoke_sensors_follow_nfpa(equipped):
    result, _ = equipped
    home = result.home
    rule = smoke_distance_rule(CAT)
    wall_gap = CAT.devices["smoke_sensor"].placement.min_wall_distance
    smoke = home.devices_of_type("smoke_sensor")
    rooms = {d.room for d in smoke}
    assert rooms_of_type("BEDROOM", "ROOM") <= rooms  # both bedrooms
    assert rooms_of_type("CORRIDOR") <= rooms  # outside the sleeping areas
    assert rooms_of_type("LIVING_ROOM") <= rooms
    stove = furniture_of("range")
    rng = shapely.Polygon(home.furniture_item(stove).footprint[0])
    for d in smoke:
        assert d.mount == "ceiling" and d.pose.z == pytest.approx(home.room(d.room).ceiling_height)
        assert home.room_polygon(d.room).exterior.distance(shapely.Point(d.pose.x, d.pose.y)) >= wall_gap - 1e-6
        assert rng.distance(shapely.Point(d.pose.x, d.pose.y)) >= rule.min_distance
    kitchen = [d for d in smoke if stove in d.monitors]
    assert len(kitchen) == 1
    assert home.placement_exceptions == []


def test_opening_devices(equipped):
    result, _ = equipped
    h = result.home
    watched = {d.mounted_on for d in h.devices_of_type("contact_sensor")}
    exterior_doors = {oid for oid, k, _, connects in OPENINGS if k != "WINDOW" and (
        k == "ENTRANCE_DOOR" or any(ROOMS[c][0] == "BALCONY" for c in connects))}
    assert watched == openings_of("WINDOW") | exterior_doors
    (entrance,) = openings_of("ENTRANCE_DOOR")
    (lock,) = h.devices_of_type("lock")
    (bell,) = h.devices_of_type("doorbell")
    assert lock.mounted_on == bell.mounted_on == entrance
    assert bell.pose.x > h.opening(entrance).polygon[0][0][0] or bell.pose.x > 13.0  # outside the door
    blinds = {d.mounted_on for d in h.devices_of_type("roller_blind")}
    curtains = {d.mounted_on for d in h.devices_of_type("curtain")}

    def windows_of(*types: str) -> set[str]:
        return {o.id for o in h.openings if o.kind == "window" and h.room(o.connects[0]).type in types}

    assert blinds == windows_of("BEDROOM", "ROOM", "OFFICE")
    assert curtains == windows_of("LIVING_ROOM")


def test_lights_switches_plugs(equipped):
    result, _ = equipped
    h = result.home
    lights = {d.id: d for d in h.devices_of_type("light")}
    switches = h.devices_of_type("light_switch")
    for r in h.rooms:
        if r.indoor:
            assert any(d.room == r.id and d.mount == "ceiling" for d in lights.values()), r.id
            assert any(d.room == r.id for d in switches), r.id
    for s in switches:
        assert s.controls and all(c in lights for c in s.controls)
        assert s.pose.z == pytest.approx(CAT.devices["light_switch"].placement.height)
    assert any(d.room in rooms_of_type("BALCONY") for d in lights.values())  # the balcony light
    side_table = furniture_of("side_table")
    assert any(d.mounted_on == side_table for d in lights.values())  # the living-room lamp
    plugs = h.devices_of_type("plug")
    per_room: dict[str, int] = {}
    for p in plugs:
        per_room[p.room] = per_room.get(p.room, 0) + 1
        assert p.pose.z == pytest.approx(CAT.devices["plug"].placement.height)
    assert set(per_room) == rooms_of_type("LIVING_ROOM", "KITCHEN", "BEDROOM", "ROOM", "OFFICE")
    assert all(1 <= n <= 3 for n in per_room.values())
    assert any(p.controls == [furniture_of("tv_unit")] for p in plugs)
    assert any(p.controls == [furniture_of("desk")] for p in plugs)


def test_appliances_plants_wearables(equipped):
    result, _ = equipped
    h = result.home
    stove_id, dishwasher = furniture_of("range"), furniture_of("dishwasher")
    (stove,) = h.devices_of_type("stove")
    assert stove.mounted_on == stove_id
    assert {n for n in stove.fields if n.startswith("burner")} == {b.name for b in h.furniture_item(stove_id).burners}
    (leak,) = h.devices_of_type("leak_sensor")
    assert leak.monitors == [dishwasher] and leak.mount == "floor"
    dw = shapely.Polygon(h.furniture_item(dishwasher).footprint[0])
    assert dw.distance(shapely.Point(leak.pose.x, leak.pose.y)) <= CAT.devices["leak_sensor"].placement.max_distance
    (plant,) = h.objects
    (soil,) = h.devices_of_type("soil_moisture_sensor")
    assert soil.mounted_on == plant.id and soil.value("moisture") == plant.soil_moisture
    assert {d.type for d in h.devices if d.mount == "worn"} == {"fall_watch", "help_button"}


def test_water_main_beside_the_sink_fixture(equipped):
    result, _ = equipped
    h = result.home
    (sink,) = h.fixtures_of_kind("sink")
    (wm,) = h.devices_of_type("water_main")
    limit = CAT.devices["water_main"].placement.max_distance
    assert wm.room == sink.room
    assert shapely.Polygon(sink.polygon[0]).distance(shapely.Point(wm.pose.x, wm.pose.y)) <= limit


def test_cameras_privacy_and_agent_flags(equipped):
    result, _ = equipped
    h = result.home
    by_room = {}
    for c in h.cameras:
        by_room.setdefault(c.room, []).append(c)
        d = h.device(c.id) if c.id.startswith("dome") else None
        if d is not None:
            assert d.value("privacy_mode") == c.privacy_mode and d.agent_visible == c.agent_visible
        assert math.radians(-46) <= c.pose.pitch <= math.radians(-29) or c.id.startswith("doorbell")
        assert c.hfov_deg == CAT.devices["dome_camera"].camera.hfov_deg
    for rid in rooms_of_type("BATHROOM"):
        assert all(c.privacy_mode == "image_blocked" and not c.agent_visible for c in by_room[rid])
    for rid in rooms_of_type("BEDROOM", "ROOM"):
        assert all(c.privacy_mode == "people_masked" and not c.agent_visible for c in by_room[rid])
    (hall,) = rooms_of_type("CORRIDOR")
    assert any(c.agent_visible for c in by_room[hall])  # the entrance hall
    assert any(c.id.startswith("doorbell_camera") for c in h.cameras)  # no porch: a doorbell camera
    assert 6 <= h.agent_camera_count <= 10


def test_agent_camera_cap():
    result = equip(crafted(), CAT, np.random.default_rng(0), EquipProfile(agent_camera_cap=3))
    assert result.home.agent_camera_count == 3
    assert check_home(result.home, CAT) == []


def test_equip_is_deterministic_and_pure():
    home = crafted()
    before = home.to_json()
    a = equip(home, CAT, np.random.default_rng(5)).home.to_json()
    b = equip(home, CAT, np.random.default_rng(5)).home.to_json()
    assert a == b
    assert home.to_json() == before


def test_device_ids_are_type_room_number(equipped):
    result, _ = equipped
    for d in result.home.devices:
        assert d.id.startswith(d.type + "_")
        assert d.id.rsplit("_", 1)[1].isdigit()
    names = [d.name for d in result.home.devices]
    assert len(set(names)) == len(names)


def small_kitchen_next_to_dining(depth: float = 2.6, width: float = 3.0, door: bool = True) -> Home:
    """A kitchen ``width`` wide and ``depth`` deep, the range in the middle of its north wall,
    opening into a dining room through a door (or, without ``door``, an open passage: the two
    rooms touch, no wall between)."""
    gap = 0.1 if door else 0.0
    rooms = {"k": ("KITCHEN", (0.0, 0.0, width, depth)), "d": ("DINING", (width + gap, 0.0, 8.0, 4.0)),
             "h": ("CORRIDOR", (0.0, -1.6, 8.0, -0.1))}
    openings = [("e", "ENTRANCE_DOOR", (8.0, -1.4, 8.3, -0.4), ("h",)),
                ("hd", "DOOR", (5.0, -0.1, 5.9, 0.0), ("h", "d")),
                ("kh", "DOOR", (0.4, -0.1, 1.3, 0.0), ("k", "h"))]
    if door:
        openings.append(("kd", "DOOR", (width, 0.8, width + gap, 1.7), ("k", "d")))
    return build(rooms, openings, furniture=[("range", "range", "k", (width / 2, depth - 0.3, S))])


def _kitchen_sensor(result):
    (sensor,) = [d for d in result.home.devices_of_type("smoke_sensor") if "range" in d.monitors]
    return sensor


def test_a_small_kitchen_behind_a_door_keeps_its_sensor_at_the_fallback_distance():
    """Doors start shut in the simulator: a sensor next door would never smell the range."""
    home = small_kitchen_next_to_dining()
    result = equip(home, CAT, np.random.default_rng(0))
    sensor = _kitchen_sensor(result)
    assert sensor.room == "k"
    (exception,) = result.home.placement_exceptions
    assert exception.device == sensor.id and exception.fallback == 1.8 and exception.required == 3.0
    assert not [f for f in check_home(result.home, CAT) if f.rule.startswith("smoke")]
    assert not any(o.is_open for o in result.home.openings)


def test_a_small_kitchen_open_to_the_dining_room_has_its_sensor_there():
    home = small_kitchen_next_to_dining(door=False)
    assert rooms_reached(home, "k") == {"k", "d"}
    result = equip(home, CAT, np.random.default_rng(0))
    assert _kitchen_sensor(result).room == "d"
    assert result.home.placement_exceptions == []
    assert not [f for f in check_home(result.home, CAT) if f.rule.startswith("smoke")]
    assert not any(o.is_open for o in result.home.openings)


def test_a_kitchen_too_small_even_for_the_fallback_puts_the_sensor_next_door_with_the_door_open():
    home = small_kitchen_next_to_dining(depth=2.0, width=2.0)
    result = equip(home, CAT, np.random.default_rng(0))
    room = _kitchen_sensor(result).room
    (door,) = [o for o in home.openings if set(o.connects) == {"k", room}]
    assert result.home.placement_exceptions == []
    assert result.home.opening(door.id).is_open  # smoke from the range reaches the sensor's room
    assert [o.id for o in result.home.openings if o.is_open] == [door.id]
    assert not home.opening(door.id).is_open


def test_a_switch_stays_clear_of_the_wardrobe_doors_beside_its_door():
    """A wardrobe side-on to the wall, just past the door: its footprint leaves room for the
    switch, its doors (proud of the footprint) do not, so the switch goes to the door's other side."""
    wardrobe_y = 1.9 + 0.15 + 0.067  # the door's edge, the switch's offset, a gap wider than 5 cm
    rooms = {"r": ("BEDROOM", (0.0, 0.0, 4.0, 4.0)), "h": ("CORRIDOR", (4.1, 0.0, 6.0, 4.0))}
    openings = [("e", "ENTRANCE_DOOR", (6.0, 1.0, 6.3, 1.9), ("h",)),
                ("d", "DOOR", (4.0, 1.0, 4.1, 1.9), ("r", "h"))]
    home = build(rooms, openings, furniture=[("wardrobe", "wardrobe", "r", (3.5, wardrobe_y + 0.3, -math.pi / 2))])
    result = equip(home, CAT, np.random.default_rng(0))
    (switch,) = [d for d in result.home.devices_of_type("light_switch") if d.room == "r"]
    assert switch.pose.y < 1.0  # below the door, away from the wardrobe
    assert [f for f in check_home(result.home, CAT) if f.rule == "device_overlaps_object"] == []


def test_wearables_go_on_the_resident():
    from homeloop.core.home import Person

    person = Person(id="resident", catalog_id="resident_margaret", role="resident", room="2",
                    pose=Pose(x=2.5, y=7.0))
    home = crafted().model_copy(update={"people": [person]})
    result = equip(home, CAT, np.random.default_rng(0))
    worn = [d for d in result.home.devices if d.mount == "worn"]
    assert {d.type for d in worn} == {"fall_watch", "help_button"}
    assert all(d.room is None and d.mounted_on == person.id for d in worn)
    assert sorted(result.home.people[0].wears) == sorted(d.id for d in worn)


# --- the smoke rule lives in the catalog ------------------------------------------------------

SMOKE_RULE_YAML = "min_distance: 3.0\n          fallback_distance: 1.8"


def test_a_catalog_smoke_distance_of_2_5_m_is_what_placement_and_check_use(tmp_path):
    from homeloop.pipeline.devices import equip_house
    from homeloop.pipeline.furnish import furnish_house

    catalog = catalog_with(tmp_path, "devices.yaml", SMOKE_RULE_YAML,
                           "min_distance: 2.5\n          fallback_distance: 1.8")
    assert smoke_distance_rule(catalog).min_distance == 2.5
    # A 3.4 m deep kitchen has ceiling 2.5 m from the range, none 3.0 m away: the sensor
    # stays in it, with no exception.
    result = equip(small_kitchen_next_to_dining(3.4), catalog, np.random.default_rng(0))
    (sensor,) = [d for d in result.home.devices_of_type("smoke_sensor") if "range" in d.monitors]
    footprint = shapely.Polygon(result.home.furniture_item("range").footprint[0])
    assert sensor.room == "k" and 2.5 <= footprint.distance(shapely.Point(sensor.pose.x, sensor.pose.y)) < 3.0
    assert result.failures == [] and check_home(result.home, catalog) == []
    # With the shipped catalog the same home fails: the rule is the catalog's, nobody else's.
    assert {f.rule for f in check_home(result.home, CAT)} == {"smoke_sensor_distance"}
    # And the house builds with it.
    house = equip_house(furnish_house(catalog, seed=0), catalog)
    assert house.failures == [] and check_home(house.home, catalog) == []


def test_a_catalog_rule_no_room_can_meet_is_one_line_naming_rule_and_file(tmp_path):
    catalog = catalog_with(tmp_path, "devices.yaml", SMOKE_RULE_YAML,
                           "min_distance: 60.0\n          fallback_distance: 50.0")
    result = equip(crafted(), catalog, np.random.default_rng(0))
    (line,) = result.failures
    assert "\n" not in line
    assert smoke_distance_rule(catalog).id in line and str(catalog.source_of("devices", "smoke_sensor")) in line


def test_a_catalog_without_a_mounting_height_names_the_field(tmp_path):
    from homeloop.core.catalog import CatalogError

    catalog = catalog_with(tmp_path, "devices.yaml", "      height: 1.5\n", "")
    with pytest.raises(CatalogError, match=r"devices.yaml: devices entry 'thermostat': field placement.height"):
        equip(crafted(), catalog, np.random.default_rng(0))


# --- the house ------------------------------------------------------------------------------


@functools.cache
def _furnished_house() -> Home:
    """The house furnished by the furnishing stage from its hand-written file."""
    from homeloop.pipeline.furnish import furnish_house

    return furnish_house(CAT, seed=0)


@pytest.fixture(scope="module")
def equipped_house():
    from homeloop.pipeline.devices import equip_house

    return equip_house(_furnished_house(), CAT)


def test_furnished_house_is_equipped_as_its_list_says(equipped_house):
    from homeloop.pipeline.devices import HOUSE_AGENT_CAMERAS, HOUSE_CAMERAS, house_problems

    result = equipped_house
    home = result.home
    assert house_problems(home) == []
    assert result.failures == []
    assert len(home.cameras) == HOUSE_CAMERAS and home.agent_camera_count == HOUSE_AGENT_CAMERAS
    assert home.evaluation_camera_count == HOUSE_CAMERAS - HOUSE_AGENT_CAMERAS
    assert check_home(home, CAT) == []
    assert home.equip_profile == HOUSE_PROFILE.name
    types = {r.id: r.type for r in home.rooms}
    # Agent cameras on the common areas, the porch and the outdoor spaces; privacy where people sleep or wash.
    agent_rooms = sorted(types[c.room] for c in home.cameras if c.agent_visible)
    assert agent_rooms == sorted(["CORRIDOR", "PORCH", "LIVING_ROOM", "KITCHEN", "DINING", "OFFICE", "PATIO",
                                  "DRIVEWAY"])
    for c in home.cameras:
        if types[c.room] == "BATHROOM":
            assert c.privacy_mode == "image_blocked"
        if types[c.room] in ("BEDROOM", "ROOM"):
            assert c.privacy_mode == "people_masked"
    counts = home.device_counts()
    for t in ("smoke_sensor", "stove", "leak_sensor", "water_main", "lock", "doorbell", "garage_door", "washer",
              "dryer", "soil_moisture_sensor"):
        assert counts.get(t, 0) >= 1, t
    assert 52 <= sum(1 for d in home.devices if d.agent_visible) <= 118


def test_house_equipping_is_deterministic(equipped_house):
    from homeloop.pipeline.devices import equip_house

    again = equip_house(_furnished_house(), CAT)
    assert again.home.to_json() == equipped_house.home.to_json()


def test_render_home_writes_a_stable_png_from_the_home_alone(equipped, tmp_path):
    from homeloop.pipeline.previews.home import render_home

    result, _ = equipped
    a = render_home(result.home, tmp_path / "a" / "preview.png")
    b = render_home(result.home, tmp_path / "b" / "preview.png", title=None)
    data = a.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data == b.read_bytes()
    assert not list((tmp_path / "a").glob(".*.tmp"))
    plain = render_home(home_without_devices(result.home), tmp_path / "plain.png")
    assert plain.read_bytes() != data
    bare = render_home(result.home.model_copy(update={"fixtures": []}), tmp_path / "bare.png", title=None)
    assert bare.read_bytes() != b.read_bytes()  # the fixtures are drawn


def home_without_devices(home: Home) -> Home:
    return home.model_copy(update={"devices": [], "cameras": []})


def test_counts(equipped):
    result, _ = equipped
    summary = device_summary(result.home)
    assert summary["agent_cameras"] + summary["evaluation_cameras"] == summary["cameras"]
    assert summary["devices"] == len(result.home.devices)


# --- devices stand where nothing else is ---------------------------------------------------------


def _on_top(home: Home, stand_id: str, catalog_id: str, n: int, u: float, v: float):
    """An object lying on a piece of furniture's top at (u, v) in its frame (+u its front, +v its left)."""
    stand = home.furniture_item(stand_id)
    top = stand.surfaces[0]
    x, y, _ = stand.pose.to_world(u, v)
    return object_from_catalog(CAT.objects[catalog_id], f"{catalog_id}_{n}",
                               ObjectLocation(kind="surface", room=stand.room, furniture=stand.id, name=top.name),
                               Pose(x=x, y=y, z=top.height, yaw=stand.pose.yaw))


def _lamp_frame(home: Home, lamp) -> tuple[float, float]:
    """The lamp's position in its host's frame."""
    host = home.furniture_item(lamp.mounted_on)
    dx, dy = lamp.pose.x - host.pose.x, lamp.pose.y - host.pose.y
    c, s = math.cos(host.pose.yaw), math.sin(host.pose.yaw)
    return c * dx + s * dy, -s * dx + c * dy


def test_a_lamp_on_an_empty_top_stands_in_a_back_corner(equipped):
    from homeloop.core.geometry_assets import device_body_size

    result, _ = equipped
    size = device_body_size("light", "on_furniture")
    for host in (furniture_of("nightstand"), furniture_of("side_table")):
        (lamp,) = [d for d in result.home.devices if d.mounted_on == host]
        top = CAT.furniture[result.home.furniture_item(host).catalog_id].surfaces[0]
        u, v = _lamp_frame(result.home, lamp)
        assert u == pytest.approx(-(top.depth - size.depth) / 2, abs=2e-3)  # against the back
        assert abs(v) == pytest.approx((top.width - size.width) / 2, abs=2e-3)  # and a side


def test_a_lamp_stands_clear_of_what_lies_on_the_nightstand():
    # Glasses and three pill boxes on the nightstand, as in the house: the lamp takes the free band
    # between them, at the end where it hides the least of the boxes behind it.
    from homeloop.core.geometry_assets import device_solid, object_box, overlapping

    home = crafted()
    stand = furniture_of("nightstand")
    things = [_on_top(home, stand, "glasses", 1, 0.107, 0.075), _on_top(home, stand, "pill_box_red", 1, 0.107, -0.125),
              _on_top(home, stand, "pill_box_blue", 1, -0.093, 0.075),
              _on_top(home, stand, "pill_box_white", 1, -0.093, -0.095)]
    result = equip(home.model_copy(update={"objects": [*home.objects, *things]}), CAT, np.random.default_rng(0))
    assert result.failures == [] and check_home(result.home, CAT) == []
    (lamp,) = [d for d in result.home.devices if d.mounted_on == stand]
    body = device_solid(result.home, lamp)
    for obj in things:
        assert not overlapping(body, object_box(obj), 0.0).any(), obj.id
    u, v = _lamp_frame(result.home, lamp)
    assert -0.063 < u < 0.077 and v > 0  # in the band, on the side of the blue box, not the white one


def test_a_living_room_whose_side_table_is_full_gets_a_floor_lamp():
    home = crafted()
    table = furniture_of("side_table")
    books = [_on_top(home, table, "book", i, u, v) for i, (u, v) in
             enumerate((u, v) for u in (-0.15, 0.0, 0.15) for v in (-0.15, 0.0, 0.15))]
    result = equip(home.model_copy(update={"objects": [*home.objects, *books]}), CAT, np.random.default_rng(0))
    lamps = [d for d in result.home.devices_of_type("light") if d.room in rooms_of_type("LIVING_ROOM")
             and d.mount != "ceiling"]
    assert [d.mount for d in lamps] == ["floor"]
    assert f"no free spot for a lamp on {table}" in " ".join(result.notes)
    assert check_home(result.home, CAT) == []


def _footprint(body) -> shapely.Polygon:
    """The footprint of one oriented box (homeloop.core.geometry_assets.OrientedBoxes)."""
    c, axes, h = body.centres[0][:2], body.axes[0][:2, :2], body.halves[0][:2]
    return shapely.MultiPoint([c + sx * h[0] * axes[0] + sy * h[1] * axes[1]
                               for sx in (-1, 1) for sy in (-1, 1)]).convex_hull


def test_the_dishwashers_leak_sensor_stands_on_free_floor_in_front_of_the_counter_run(equipped):
    # Beside the dishwasher is the counter run (a fixture, solid to the floor): the sensor goes in front.
    from homeloop.core.geometry_assets import device_solid

    result, _ = equipped
    h = result.home
    (leak,) = h.devices_of_type("leak_sensor")
    (counter,) = h.fixtures_of_kind("counter")
    assert shapely.Polygon(counter.polygon[0]).distance(_footprint(device_solid(h, leak))) > 0
    u, _ = _lamp_frame(h, leak.model_copy(update={"mounted_on": furniture_of("dishwasher")}))
    assert u > CAT.furniture["dishwasher"].dimensions.depth / 2  # in front of its door


def test_the_tv_plug_keeps_out_of_the_bookshelf_beside_the_tv_unit(equipped):
    from homeloop.core.geometry_assets import device_body_size, device_solid

    tv_unit = furniture_of("tv_unit")
    (alone,) = [d for d in equipped[0].home.devices_of_type("plug") if d.controls == [tv_unit]]
    assert alone.pose.y < 7.6  # the side it takes when free
    home = build(ROOMS, OPENINGS, FEATURES, [*FURNITURE, ("bookshelf", "bookshelf", "2", (4.85, 6.35, W))])
    result = equip(home, CAT, np.random.default_rng(0))
    (plug,) = [d for d in result.home.devices_of_type("plug") if d.controls == [tv_unit]]
    assert plug.pose.y > 7.6  # the other side of the TV unit
    shelf = shapely.Polygon(result.home.furniture_item("bookshelf").footprint[0])
    assert shelf.distance(_footprint(device_solid(result.home, plug))) > 0
    assert shelf.distance(shapely.Point(alone.pose.x, alone.pose.y)) < device_body_size("plug", "wall").width / 2
    assert check_home(result.home, CAT) == []


@settings(max_examples=60, deadline=None)
@given(spots=st.lists(st.tuples(st.floats(-0.2, 0.2), st.floats(-0.2, 0.2), st.sampled_from(
    ["book", "glasses", "pill_box_red", "keys", "remote_control"])), max_size=5))
def test_a_lamp_spot_is_on_the_top_and_clear_of_everything_on_it(spots):
    from homeloop.core.geometry_assets import device_body_size
    from homeloop.pipeline.devices import LAMP_GAP, lamp_spot, object_footprint

    home = crafted()
    stand = home.furniture_item(furniture_of("nightstand"))
    top = stand.surfaces[0]
    size = device_body_size("light", "on_furniture")
    objects = [_on_top(home, stand.id, cid, i, u, v) for i, (u, v, cid) in enumerate(spots)]
    spot = lamp_spot(stand, top, [object_footprint(o) for o in objects], size)
    if spot is None:
        assert objects  # an empty top always has room
        return
    lamp = shapely.box(-size.depth / 2, -size.width / 2, size.depth / 2, size.width / 2)
    lamp = shapely.affinity.translate(shapely.affinity.rotate(lamp, stand.pose.yaw, origin=(0, 0), use_radians=True),
                                      *spot)
    assert shapely.Polygon(top.polygon[0]).buffer(1e-3, join_style="mitre").covers(lamp)
    for o in objects:
        assert object_footprint(o).distance(lamp) >= LAMP_GAP - 1e-3, o.id


# --- the same decisions, measured in arrays (homeloop/pipeline/devices_geometry.py) -----------------------

SIDE = st.floats(0.2, 3.0)
COORD = st.floats(-1.0, 7.0)


def _turned_box(x: float, y: float, w: float, d: float, yaw: float) -> shapely.Polygon:
    return shapely.affinity.rotate(box(x, y, x + w, y + d), yaw, origin=(x, y), use_radians=True)


@st.composite
def boxes_and_points(draw, reaches=(0.0, 0.05, 0.3, 1.0)):
    """Turned boxes; points anywhere, and points at ``reach`` from a box edge (a decision's edge)."""
    shapes = draw(st.lists(st.builds(_turned_box, COORD, COORD, SIDE, SIDE, st.floats(-3.2, 3.2)),
                           min_size=1, max_size=4))
    reach = draw(st.sampled_from(reaches))
    pts = draw(st.lists(st.tuples(COORD, COORD), min_size=1, max_size=12))
    for g in shapes:  # beyond the middle of each edge by exactly the reach (as rounding lands)
        ring = np.asarray(g.exterior.coords)
        for a, b in zip(ring[:-1], ring[1:]):
            u = (b - a) / np.hypot(*(b - a))
            pts.append(tuple((a + b) / 2 + np.array([u[1], -u[0]]) * reach))
    return shapes, np.array(pts, dtype=float), reach


@settings(max_examples=80, deadline=None)
@given(case=boxes_and_points())
def test_shapes_decide_what_measuring_each_pair_decides(case):
    from homeloop.pipeline.devices_geometry import Shapes

    shapes, xy, reach = case
    measured = np.array([[g.distance(shapely.Point(p)) for p in xy] for g in shapes])
    many = Shapes.of(shapes)
    assert np.array_equal(many.near(xy, reach), (measured < reach).any(axis=0))
    assert np.array_equal(many.clear(xy, reach), (measured >= reach).all(axis=0))


@settings(max_examples=80, deadline=None)
@given(case=boxes_and_points(reaches=(0.3, 1.8, 3.0)))
def test_clear_of_a_polygon_decides_what_measuring_each_point_decides(case):
    from homeloop.pipeline.devices_geometry import DISTANCE_ROUNDING, clear_of, polygon_distances, ring_segments

    shapes, xy, gap = case
    geom = shapely.union_all(shapes)
    measured = np.array([geom.distance(shapely.Point(p)) for p in xy])
    assert np.allclose(polygon_distances(geom, ring_segments(geom), xy), measured, rtol=0, atol=DISTANCE_ROUNDING)
    assert np.array_equal(clear_of(geom, ring_segments(geom), xy, gap), measured >= gap)


@st.composite
def rooms(draw):
    """A rectangle, or an L of two overlapping ones, in metres."""
    x, y, w, d = draw(st.floats(0, 3)), draw(st.floats(0, 3)), draw(st.floats(0.5, 5)), draw(st.floats(0.5, 5))
    room = box(x, y, x + w, y + d)
    if draw(st.booleans()):
        room = room.union(box(x, y, x + draw(st.floats(0.5, 2)), y + d + draw(st.floats(0.5, 3))))
    return shapely.geometry.polygon.orient(room)


@settings(max_examples=80, deadline=None)
@given(room=rooms(), depth=st.sampled_from([0.03, 0.1, 0.3]), pts=st.lists(st.tuples(COORD, COORD), max_size=10))
def test_holds_is_containment_in_the_room_shrunk_by_the_depth(room, depth, pts):
    from homeloop.pipeline.devices_geometry import holds

    x0, y0, _, _ = room.bounds
    pts += [(x0 + depth, y0 + 1.0), (x0 + depth + 0.005, y0 + 0.4), room.centroid.coords[0]]
    shrunk = room.buffer(-depth)
    for p in pts:
        assert holds(room, shapely.Point(p), depth) == shrunk.contains(shapely.Point(p)), p


@settings(max_examples=60, deadline=None)
@given(room=rooms(), step=st.sampled_from([0.05, 0.3]), end_gap=st.sampled_from([0.05, 0.2]))
def test_wall_points_run_along_each_wall_just_inside_facing_in(room, step, end_gap):
    from homeloop.pipeline.devices import WALL_INSET
    from homeloop.pipeline.devices_geometry import ccw, wall_point_array

    outline = ccw(room.simplify(0.01))  # straight runs of wall one edge
    rows = wall_point_array(outline, step, end_gap, WALL_INSET)
    ring = np.asarray(outline.exterior.coords)
    lengths = np.hypot(*np.diff(ring, axis=0).T)
    assert len(rows) == sum(int((n - 2 * end_gap) // step) + 1 for n in lengths if n >= 2 * end_gap)
    for x, y, yaw in rows:
        assert room.boundary.distance(shapely.Point(x, y)) == pytest.approx(WALL_INSET, abs=1e-9)
        assert room.contains(shapely.Point(x + 0.05 * math.cos(yaw), y + 0.05 * math.sin(yaw)))


@settings(max_examples=60, deadline=None)
@given(room=rooms(), step=st.sampled_from([0.1, 0.5]), corner=st.tuples(COORD, COORD), size=st.floats(0, 4))
def test_a_window_of_the_grid_holds_the_grid_points_in_it(room, step, corner, size):
    from homeloop.pipeline.devices import grid_points

    window = (corner[0], corner[1], corner[0] + size, corner[1] + size)
    grid = grid_points(room, step)
    inside = (grid[:, 0] >= window[0]) & (grid[:, 0] <= window[2]) & (grid[:, 1] >= window[1]) & \
        (grid[:, 1] <= window[3])
    assert np.array_equal(grid_points(room, step, window), grid[inside])


@functools.cache
def _crafted_equipper():
    from homeloop.pipeline.devices import DEFAULT_PROFILE, EquipContext

    return EquipContext(crafted(), CAT, np.random.default_rng(0), DEFAULT_PROFILE)


def _nearest_clear_ceiling_point(eq, rid: str, minimum: float, target: tuple[float, float]):
    """The smoke sensor's place by its definition: every candidate measured, the nearest clear one."""
    from homeloop.pipeline.devices.smoke_search import cooker_distances, smoke_candidates

    pts = smoke_candidates(eq, rid)
    pts = pts[cooker_distances(eq, pts) >= minimum - 1e-9]
    if len(pts) == 0:
        return None
    near = np.round(np.hypot(pts[:, 0] - target[0], pts[:, 1] - target[1]), 3)
    i = int(np.lexsort((pts[:, 1], pts[:, 0], near))[0])
    return float(pts[i, 0]), float(pts[i, 1])


@settings(max_examples=60, deadline=None)
@given(room=st.sampled_from(sorted(ROOMS)), minimum=st.sampled_from([1.8, 3.0, 4.5]),
       target=st.tuples(st.floats(-1.0, 14.0), st.floats(-1.0, 12.0)))
def test_the_smoke_search_finds_the_clear_ceiling_point_nearest_its_target(room, minimum, target):
    from homeloop.pipeline.devices.smoke_search import pick_smoke_point

    eq = _crafted_equipper()
    assert pick_smoke_point(eq, room, minimum, towards=target) == _nearest_clear_ceiling_point(eq, room, minimum, target)


def test_a_room_clear_of_sight_blockers_sees_what_testing_each_line_sees():
    # The house's corridor turns a corner (its lines of sight are tested); its other rooms are clear.
    from homeloop.pipeline.devices import HOUSE_PROFILE, EquipContext, visible_mask
    from homeloop.pipeline.devices.camera_views import corner_views, coverage_points, sight_blocking, sight_clear

    hfov = CAT.devices["dome_camera"].camera.hfov_deg
    for home in (crafted(), _furnished_house()):
        eq = EquipContext(home, CAT, np.random.default_rng(0), HOUSE_PROFILE)
        clear = {r.id: sight_clear(eq, r.id) for r in home.rooms}
        for rid in clear:
            for corner, (yaw, _, _, seen, _) in corner_views(eq, rid, None, hfov).items():
                tested = visible_mask((corner[0], corner[1], yaw), hfov, coverage_points(eq, rid), sight_blocking(eq))
                assert np.array_equal(seen, tested), (home.home_id, rid, corner)
    assert not all(clear.values()) and any(clear.values())


def test_devices_of_a_type_are_as_the_catalog_makes_them_and_their_own():
    from homeloop.core.home import device_from_catalog
    from homeloop.pipeline.devices import new_device

    pose = Pose(x=1.0, y=2.0, z=0.3, yaw=0.5)
    for entry in CAT.devices.values():
        for k in range(2):  # the first of a type, then one copied from it
            made = new_device(entry, f"{entry.id}_r_{k}", "r", pose, name=f"room {entry.name}",
                              monitors=["m"], agent_visible=bool(k))
            want = device_from_catalog(entry, f"{entry.id}_r_{k}", "r", pose, monitors=["m"],
                                       agent_visible=bool(k)).model_copy(update={"name": f"room {entry.name}"})
            assert made.model_dump_json() == want.model_dump_json()
    a, b = (new_device(CAT.devices["plug"], f"plug_r_{k}", "r", pose) for k in range(2))
    a.fields["on"].value = not a.fields["on"].value
    assert b.fields["on"].value != a.fields["on"].value


@settings(max_examples=60, deadline=None)
@given(cams=st.lists(st.tuples(COORD, COORD, st.floats(-3.2, 3.2)), min_size=1, max_size=6),
       pts=st.lists(st.tuples(COORD, COORD), max_size=40), hfov=st.sampled_from([60.0, 100.0]),
       wall=st.booleans())
def test_cameras_seen_together_see_what_each_sees_alone(cams, pts, hfov, wall):
    from homeloop.core.check import CAMERA_RANGE
    from homeloop.pipeline.devices import visible_mask, visible_masks

    def alone(cam):  # one camera: the cone, the range, then each line to a point in it
        d = xy - np.array(cam[:2])
        off = np.abs(np.remainder(np.arctan2(d[:, 1], d[:, 0]) - cam[2] + math.pi, 2 * math.pi) - math.pi)
        ok = (np.hypot(d[:, 0], d[:, 1]) <= CAMERA_RANGE) & (off <= math.radians(hfov) / 2)
        lines = [shapely.LineString([cam[:2], p]) for p in xy]
        return ok & np.array([blocking is None or not line.intersects(blocking) for line in lines], dtype=bool)

    blocking = box(2.0, -1.0, 2.3, 5.0) if wall else None
    xy = np.array(pts, dtype=float).reshape(-1, 2)
    together = visible_masks(np.array(cams, dtype=float), hfov, xy, blocking)
    for cam, seen in zip(cams, together):
        assert np.array_equal(seen, alone(cam))
        assert np.array_equal(seen, visible_mask(cam, hfov, xy, blocking))


def test_camera_corners_are_the_convex_corners_of_each_room_moved_in():
    from homeloop.pipeline.devices import CAMERA_CORNER_INSET, HOUSE_PROFILE, EquipContext
    from homeloop.pipeline.devices.camera_views import corners
    from homeloop.pipeline.devices.mounting import outline as room_outline

    for home in (crafted(), _furnished_house()):
        eq = EquipContext(home, CAT, np.random.default_rng(0), HOUSE_PROFILE)
        for r in home.rooms:
            outline = room_outline(eq, r.id)
            ring = np.asarray(outline.exterior.coords)[:-1]
            want = []
            for i, v in enumerate(ring):  # a convex vertex, the point along its bisector, if inside
                a, b = v - ring[i - 1], ring[(i + 1) % len(ring)] - v
                if a[0] * b[1] - a[1] * b[0] > 1e-9:
                    bis = -a / np.hypot(*a) + b / np.hypot(*b)
                    p = v + bis / np.hypot(*bis) * CAMERA_CORNER_INSET
                    if outline.contains(shapely.Point(p)):
                        want.append(tuple(p))
            got = np.reshape(corners(eq, r.id), (-1, 2))
            assert got.shape == np.reshape(want, (-1, 2)).shape and np.allclose(got, np.reshape(want, (-1, 2)),
                                                                                 rtol=0, atol=1e-12), r.id
