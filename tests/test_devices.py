"""Equipping homes with devices and cameras (pipeline/devices.py).

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

import math
import time

import numpy as np
import pytest
import shapely
from shapely.geometry import box

from homeloop.catalog import load_catalog
from homeloop.check import SMOKE_EXCEPTIONS_KEY, check_home
from homeloop.home import (
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
from homeloop.plan import Feature, Plan, PlanIds, Space, Separator, space_class
from homeloop.plan import Opening as PlanOpening

from homeloop.pipeline.devices import EquipProfile, HOUSE_PROFILE, device_summary, equip

CAT = load_catalog()
KIND = {"DOOR": "door", "ENTRANCE_DOOR": "entrance_door", "WINDOW": "window", "GARAGE_DOOR": "garage_door"}


# --- building small homes by hand ---------------------------------------------------------


def build(rooms: dict[str, tuple[str, tuple[float, float, float, float]]],
          openings: list[tuple[str, str, tuple[float, float, float, float], tuple[str, ...]]],
          features: list[tuple[str, str, tuple[float, float, float, float]]] = (),
          furniture: list[tuple[str, str, str, tuple[float, float, float]]] = (),
          home_id: str = "crafted") -> tuple[Home, Plan]:
    """A home and its plan from rectangles.

    rooms: id -> (subtype, box); openings: (id, SD kind, box, connects);
    features: (id, kind, box) (the space is found by position); furniture:
    (id, catalog id, room, (x, y, yaw)). Walls fill the gaps between rooms
    inside the envelope grown by 0.3 m, cut at doors and windows.
    """
    polys = {rid: box(*b) for rid, (_, b) in rooms.items()}
    indoor = [polys[r] for r, (t, _) in rooms.items() if space_class(t) != "outdoor"]
    envelope = shapely.union_all(indoor).envelope.buffer(0.3, join_style="mitre")
    op_polys = {oid: box(*b) for oid, _, b, _ in openings}
    solid = envelope.difference(shapely.union_all(list(polys.values())))
    solid = solid.difference(shapely.union_all(list(op_polys.values())))
    parts = [g for g in shapely.get_parts(solid) if g.area > 1e-4]
    spaces = tuple(Space(rid, t, polys[rid]) for rid, (t, _) in rooms.items())
    seps = tuple(Separator(f"wall_{i}", "WALL", g) for i, g in enumerate(parts))
    plan_ops = tuple(PlanOpening(oid, k if k != "GARAGE_DOOR" else "DOOR", op_polys[oid], tuple(c))
                     for oid, k, _, c in openings)
    feats = []
    for fid, kind, b in features:
        g = box(*b)
        sid = next(r for r, p in polys.items() if p.buffer(0.01).contains(g))
        feats.append(Feature(fid, kind, g, sid))
    plan = Plan(PlanIds(1, 1, 1, 1, "c" * 32), spaces, seps, plan_ops, tuple(feats))
    names: dict[str, int] = {}
    home_rooms = []
    for rid, (t, _) in rooms.items():
        base = t.lower().replace("_", " ")
        names[base] = names.get(base, 0) + 1
        home_rooms.append(Room(id=rid, name=base if names[base] == 1 else f"{base} {names[base]}", type=t,
                               polygon=rings_from_polygon(polys[rid])))
    walls = [Wall(id=s.id, polygon=rings_from_polygon(s.polygon)) for s in seps]
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
    home = Home(home_id=home_id, source=Source(kind="synthetic", plan=plan.key, seed=0),
                rooms=home_rooms, walls=walls, openings=home_ops, furniture=items)
    return home, plan


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


def crafted() -> tuple[Home, Plan]:
    home, plan = build(ROOMS, OPENINGS, FEATURES, FURNITURE)
    return add_plant(home, "plant_stand"), plan


@pytest.fixture(scope="module")
def equipped():
    home, plan = crafted()
    return equip(home, plan, CAT, np.random.default_rng(0)), home, plan


# --- tests -------------------------------------------------------------------------------


def test_crafted_home_is_clean_before_equipping():
    home, _ = crafted()
    rules = {f.rule for f in check_home(home, CAT)}
    # Only the device rules can fire on a home without devices.
    assert rules <= {"smoke_sensor_missing_bedroom", "smoke_sensor_missing_outside_sleeping", "leak_sensor_missing",
                     "contact_sensor_missing", "entrance_not_covered"}


def test_equipped_home_passes_check_home(equipped):
    result, _, _ = equipped
    assert result.failures == []
    assert check_home(result.home, CAT) == []


def test_device_types_present(equipped):
    result, _, _ = equipped
    counts = result.home.device_counts()
    for t in ("smoke_sensor", "contact_sensor", "leak_sensor", "doorbell", "soil_moisture_sensor", "stove", "lock",
              "roller_blind", "curtain", "thermostat", "plug", "light_switch", "light", "water_main", "dome_camera",
              "fall_watch", "help_button"):
        assert counts.get(t, 0) >= 1, t
    assert counts["thermostat"] == 1 and counts["water_main"] == 1 and counts["stove"] == 1
    assert 50 <= sum(1 for d in result.home.devices if d.agent_visible) <= 120


def test_smoke_sensors_follow_nfpa(equipped):
    result, _, _ = equipped
    home = result.home
    smoke = home.devices_of_type("smoke_sensor")
    rooms = {d.room for d in smoke}
    assert {"4", "6"} <= rooms  # both bedrooms
    assert "1" in rooms  # outside the sleeping areas
    assert "2" in rooms  # living room
    rng = shapely.Polygon(home.furniture_item("range").footprint[0])
    for d in smoke:
        assert d.mount == "ceiling" and d.pose.z == pytest.approx(2.6)
        assert home.room_polygon(d.room).exterior.distance(shapely.Point(d.pose.x, d.pose.y)) >= 0.1 - 1e-6
        assert rng.distance(shapely.Point(d.pose.x, d.pose.y)) >= 3.0
    kitchen = [d for d in smoke if "range" in d.monitors]
    assert len(kitchen) == 1
    assert home.metadata[SMOKE_EXCEPTIONS_KEY] == []


def test_opening_devices(equipped):
    result, home, _ = equipped
    h = result.home
    watched = {d.mounted_on for d in h.devices_of_type("contact_sensor")}
    assert watched == {"entrance", "door_balcony", "window_living", "window_kitchen", "window_bedroom", "window_bath",
                       "window_room", "window_office"}
    (lock,) = h.devices_of_type("lock")
    (bell,) = h.devices_of_type("doorbell")
    assert lock.mounted_on == bell.mounted_on == "entrance"
    assert bell.pose.x > 13.0  # outside the door
    blinds = {d.mounted_on for d in h.devices_of_type("roller_blind")}
    curtains = {d.mounted_on for d in h.devices_of_type("curtain")}
    assert blinds == {"window_bedroom", "window_room", "window_office"}
    assert curtains == {"window_living"}


def test_lights_switches_plugs(equipped):
    result, _, _ = equipped
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
    assert any(d.room == "8" for d in lights.values())  # the balcony light
    assert any(d.room == "2" and d.mounted_on == "side_table" for d in lights.values())  # the lamp
    plugs = h.devices_of_type("plug")
    per_room: dict[str, int] = {}
    for p in plugs:
        per_room[p.room] = per_room.get(p.room, 0) + 1
        assert p.pose.z == pytest.approx(0.3)
    assert set(per_room) == {"2", "3", "4", "6", "7"} and all(1 <= n <= 3 for n in per_room.values())
    assert any(p.controls == ["tv_unit"] for p in plugs) and any(p.controls == ["desk"] for p in plugs)


def test_appliances_plants_wearables(equipped):
    result, _, _ = equipped
    h = result.home
    (stove,) = h.devices_of_type("stove")
    assert stove.mounted_on == "range"
    assert {n for n in stove.fields if n.startswith("burner")} == {b.name for b in h.furniture_item("range").burners}
    (leak,) = h.devices_of_type("leak_sensor")
    assert leak.monitors == ["dishwasher"] and leak.mount == "floor"
    dw = shapely.Polygon(h.furniture_item("dishwasher").footprint[0])
    assert dw.distance(shapely.Point(leak.pose.x, leak.pose.y)) <= 0.3
    (soil,) = h.devices_of_type("soil_moisture_sensor")
    assert soil.mounted_on == "plant_2" and soil.value("moisture") == h.object("plant_2").soil_moisture
    (wm,) = h.devices_of_type("water_main")
    assert wm.room == "3" and shapely.box(7.2, 9.1, 7.8, 9.5).distance(shapely.Point(wm.pose.x, wm.pose.y)) <= 2.0
    assert {d.type for d in h.devices if d.mount == "worn"} == {"fall_watch", "help_button"}


def test_cameras_privacy_and_agent_flags(equipped):
    result, _, _ = equipped
    h = result.home
    by_room = {}
    for c in h.cameras:
        by_room.setdefault(c.room, []).append(c)
        d = h.device(c.id) if c.id.startswith("dome") else None
        if d is not None:
            assert d.value("privacy_mode") == c.privacy_mode and d.agent_visible == c.agent_visible
        assert math.radians(-46) <= c.pose.pitch <= math.radians(-29) or c.id.startswith("doorbell")
        assert c.hfov_deg == CAT.devices["dome_camera"].camera.hfov_deg
    assert all(c.privacy_mode == "image_blocked" and not c.agent_visible for c in by_room["5"])
    assert all(c.privacy_mode == "people_masked" and not c.agent_visible for c in by_room["4"] + by_room["6"])
    assert any(c.agent_visible for c in by_room["1"])  # the entrance hall
    assert any(c.id.startswith("doorbell_camera") for c in h.cameras)  # no porch: a doorbell camera
    assert 6 <= h.agent_camera_count <= 10


def test_agent_camera_cap():
    home, plan = crafted()
    result = equip(home, plan, CAT, np.random.default_rng(0), EquipProfile(agent_camera_cap=3))
    assert result.home.agent_camera_count == 3
    assert check_home(result.home, CAT) == []


def test_equip_is_deterministic_and_pure():
    home, plan = crafted()
    before = home.to_json()
    a = equip(home, plan, CAT, np.random.default_rng(5)).home.to_json()
    b = equip(home, plan, CAT, np.random.default_rng(5)).home.to_json()
    assert a == b
    assert home.to_json() == before


def test_device_ids_are_type_room_number(equipped):
    result, _, _ = equipped
    for d in result.home.devices:
        assert d.id.startswith(d.type + "_")
        assert d.id.rsplit("_", 1)[1].isdigit()
    names = [d.name for d in result.home.devices]
    assert len(set(names)) == len(names)


def test_kitchen_too_small_puts_the_sensor_next_door():
    # A 3.0 x 2.6 m kitchen opening into a dining room: the sensor goes there, 3 m away.
    rooms = {"k": ("KITCHEN", (0.0, 0.0, 3.0, 2.6)), "d": ("DINING", (3.1, 0.0, 8.0, 4.0)),
             "h": ("CORRIDOR", (0.0, -1.6, 8.0, -0.1))}
    openings = [("e", "ENTRANCE_DOOR", (8.0, -1.4, 8.3, -0.4), ("h",)),
                ("kd", "DOOR", (3.0, 0.8, 3.1, 1.7), ("k", "d")),
                ("hd", "DOOR", (5.0, -0.1, 5.9, 0.0), ("h", "d"))]
    furniture = [("range", "range", "k", (1.5, 2.3, S))]
    home, plan = build(rooms, openings, furniture=furniture)
    result = equip(home, plan, CAT, np.random.default_rng(0))
    kitchen = [d for d in result.home.devices_of_type("smoke_sensor") if "range" in d.monitors]
    assert len(kitchen) == 1 and kitchen[0].room == "d"
    assert result.home.metadata[SMOKE_EXCEPTIONS_KEY] == []
    assert not [f for f in check_home(result.home, CAT) if f.rule.startswith("smoke")]
    assert result.home.opening("kd").is_open  # smoke from the range reaches the dining room
    assert not home.opening("kd").is_open


def test_wearables_go_on_the_resident():
    from homeloop.home import Person

    home, plan = crafted()
    person = Person(id="resident", catalog_id="resident_margaret", role="resident", room="2",
                    pose=Pose(x=2.5, y=7.0))
    home = home.model_copy(update={"people": [person]})
    result = equip(home, plan, CAT, np.random.default_rng(0))
    worn = [d for d in result.home.devices if d.mount == "worn"]
    assert {d.type for d in worn} == {"fall_watch", "help_button"}
    assert all(d.room is None and d.mounted_on == "resident" for d in worn)
    assert sorted(result.home.people[0].wears) == sorted(d.id for d in worn)


def _furnished_house() -> Home:
    """The house furnished by the furnishing stage: its hand-written file when present,
    else the room rules alone."""
    furnish_mod = pytest.importorskip("homeloop.pipeline.furnish")
    from homeloop.house import load_house

    if furnish_mod.HOUSE_FURNISHING_YAML.exists():
        return furnish_mod.furnish_house(CAT, seed=0)
    result = furnish_mod.furnish(load_house(), CAT, np.random.default_rng(0), source_kind="house", seed=0)
    assert result.ok, result.failures
    return result.home


@pytest.fixture(scope="module")
def equipped_house():
    from homeloop.house import load_house
    from homeloop.pipeline.devices import equip_house

    plan = load_house()
    return equip_house(_furnished_house(), plan, CAT), plan


def test_furnished_house_is_equipped_as_spec_lists(equipped_house):
    from homeloop.pipeline.devices import house_problems

    result, _ = equipped_house
    home = result.home
    assert house_problems(home) == []
    assert result.failures == []
    assert len(home.cameras) == 14 and home.agent_camera_count == 8 and home.evaluation_camera_count == 6
    assert check_home(home, CAT) == []
    assert home.metadata["equip_profile"] == HOUSE_PROFILE.name
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
    # SPEC.md §1: kitchen smoke sensor, stove, leak sensor by the dishwasher, water main,
    # lock, doorbell, garage door, washer and dryer.
    counts = home.device_counts()
    for t in ("smoke_sensor", "stove", "leak_sensor", "water_main", "lock", "doorbell", "garage_door", "washer",
              "dryer", "soil_moisture_sensor"):
        assert counts.get(t, 0) >= 1, t
    assert 52 <= sum(1 for d in home.devices if d.agent_visible) <= 118


def test_house_equipping_is_deterministic(equipped_house):
    from homeloop.pipeline.devices import equip_house

    result, plan = equipped_house
    again = equip_house(_furnished_house(), plan, CAT)
    assert again.home.to_json() == result.home.to_json()


def test_render_home_writes_a_stable_png(equipped, tmp_path):
    from homeloop.pipeline.render_home import render_home

    result, _, plan = equipped
    a = render_home(result.home, plan, tmp_path / "a" / "preview.png")
    b = render_home(result.home, plan, tmp_path / "b" / "preview.png", title=None)
    data = a.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data == b.read_bytes()
    assert not list((tmp_path / "a").glob(".*.tmp"))
    plain = render_home(home_without_devices(result.home), plan, tmp_path / "plain.png")
    assert plain.read_bytes() != data


def home_without_devices(home: Home) -> Home:
    return home.model_copy(update={"devices": [], "cameras": []})


def test_counts_and_speed(equipped):
    result, home, plan = equipped
    summary = device_summary(result.home)
    assert summary["agent_cameras"] + summary["evaluation_cameras"] == summary["cameras"]
    start = time.perf_counter()
    r = equip(home, plan, CAT, np.random.default_rng(1))
    check_home(r.home, CAT)
    assert time.perf_counter() - start < 5.0
