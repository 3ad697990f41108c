"""The home file: building, validation, round trips and byte-stable JSON."""

import json
import math
import re

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from homeloop.core.catalog import load_catalog
from homeloop.core.home import (
    MAX_EXTENT,
    MIN_ROOM_AREA,
    SCHEMA_VERSION,
    CameraPose,
    Fixture,
    Home,
    HomeFileError,
    HomeLookupError,
    NamedPoint,
    ObjectLocation,
    Opening,
    PlacementException,
    Pose,
    Room,
    Source,
    Wall,
    camera_from_catalog,
    device_from_catalog,
    furniture_from_catalog,
    object_from_catalog,
    polygon_array,
    rings_from_polygon,
)
from homeloop.core.plan import space_class as plan_space_class
from shapely.geometry import Polygon, box


def tiny_home() -> Home:
    """A 4 x 3 m bedroom with a door, a built-in wardrobe fixture, a bed, a nightstand
    with a mug on it, a smoke sensor (placed by the fallback of its rule), a dome camera
    and a named point."""
    cat = load_catalog()
    room = Room(id="1", name="bedroom", type="BEDROOM", polygon=rings_from_polygon(box(0, 0, 4, 3)))
    wall = Wall(id="wall_1", polygon=rings_from_polygon(box(-0.1, -0.1, 4.1, 0.0)), height=2.6)
    door = Opening(id="door_1", kind="door", polygon=rings_from_polygon(box(1.0, -0.1, 1.9, 0.0)),
                   connects=["1"], width=0.9, height=2.0)
    # Bed against the west wall, head to the wall: its front (foot end) faces east.
    bed = furniture_from_catalog(cat.furniture["double_bed"], "bed_1", "1", Pose(x=1.025, y=1.5, yaw=0.0))
    stand = furniture_from_catalog(cat.furniture["nightstand"], "nightstand_1", "1", Pose(x=0.2, y=2.6, yaw=0.0))
    top = stand.surface("top")
    mug = object_from_catalog(cat.objects["mug"], "mug_1",
                              ObjectLocation(kind="surface", room="1", furniture="nightstand_1", name="top"),
                              Pose(x=0.2, y=2.6, z=top.height, yaw=math.pi / 2))
    smoke = device_from_catalog(cat.devices["smoke_sensor"], "smoke_1", "1", Pose(x=3.0, y=1.5, z=2.6))
    dome = device_from_catalog(cat.devices["dome_camera"], "cam_1", "1", Pose(x=3.9, y=2.9, z=2.55))
    cam = camera_from_catalog(cat.devices["dome_camera"], "cam_1", "1",
                              CameraPose(x=3.9, y=2.9, z=2.55, yaw=-2.5, pitch=-0.6), agent_visible=True)
    wardrobe = Fixture(id="built_in_furniture_9", kind="built_in_furniture", room="1",
                       polygon=rings_from_polygon(box(3.4, 0.0, 4.0, 1.2)), height=2.6)
    (rule,) = cat.devices["smoke_sensor"].placement.keep_away
    exception = PlacementException(device="smoke_1", rule=rule.id, value=2.04, required=rule.min_distance,
                                   fallback=rule.fallback_distance)
    return Home(
        home_id="tiny",
        source=Source(kind="synthetic", plan="1-1000-aaaa", seed=7, catalog_hash=cat.version_hash),
        rooms=[room], walls=[wall], openings=[door], fixtures=[wardrobe], furniture=[bed, stand], objects=[mug],
        devices=[smoke, dome], cameras=[cam], points=[NamedPoint(name="bedside", room="1", x=2.2, y=0.4)],
        placement_exceptions=[exception], equip_profile="default",
    )


def test_write_read_round_trip_is_equal(tmp_path):
    home = tiny_home()
    path = home.write(tmp_path / "homes" / "tiny" / "home.json")
    back = Home.read(path)
    assert back == home
    assert back.to_json() == home.to_json()


def test_to_json_is_byte_stable_and_sorted():
    a, b = tiny_home().to_json(), tiny_home().to_json()
    assert a == b and a.endswith("\n")
    data = json.loads(a)
    assert list(data) == sorted(data)
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["furniture"][0]["class"] == "bed"


def _python_json(home: Home) -> str:
    return json.dumps(home.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_home_text_is_what_the_json_module_writes(house_home):
    """The fast encoder writes the documented text: sorted keys, two-space indent, UTF-8."""
    for home in (tiny_home(), house_home):
        assert home.to_json() == _python_json(home)


@settings(max_examples=200, deadline=None)
@given(names=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4),
       x=st.floats(-1e4, 1e4, allow_nan=False), yaw=st.floats(-10, 10, allow_nan=False))
def test_home_text_matches_the_json_module_for_any_names_and_numbers(names, x, yaw):
    home = tiny_home()
    home.furniture[0].id = " ".join(names)
    home.furniture[0].pose = Pose(x=x, y=-x / 7, yaw=yaw)
    assert home.to_json() == _python_json(type(home).model_validate(home.model_dump()))


def test_lengths_round_to_the_millimetre_and_angles_to_1e4():
    p = Pose(x=1.23456, y=-0.00004, yaw=math.pi / 3 + 2 * math.pi)
    assert (p.x, p.y) == (1.235, 0.0)
    assert p.yaw == round(math.pi / 3, 4)
    assert Pose(x=0, y=0, yaw=-math.pi).yaw == round(math.pi, 4)


def test_geometry_and_counts():
    home = tiny_home()
    assert home.room_polygon("1").area == pytest.approx(12.0)
    feet = home.furniture_footprints()
    assert feet["bed_1"].area == pytest.approx(1.6 * 2.05, abs=1e-3)
    assert feet["bed_1"].bounds == pytest.approx((0.0, 0.7, 2.05, 2.3))
    assert home.room_at(2.0, 1.0) == "1" and home.room_at(9.0, 9.0) is None
    assert home.device_counts() == {"dome_camera": 1, "smoke_sensor": 1}
    assert home.agent_camera_count == 1 and home.evaluation_camera_count == 0
    assert home.object("mug_1").pose.z == pytest.approx(0.55)
    assert home.device("smoke_1").fields["smoke_detected"].value is False
    assert home.rooms[0].space_class == "indoor" and not home.rooms[0].outdoor


def test_furniture_parts_follow_the_pose():
    cat = load_catalog()
    # A fridge turned to face north: its door hinge is at its front right (north-east corner).
    fridge = furniture_from_catalog(cat.furniture["fridge"], "fridge_1", "1", Pose(x=2.0, y=1.0, yaw=math.pi / 2))
    door = fridge.part("door")
    assert door.hinge[:2] == pytest.approx((2.3, 1.325))
    assert door.axis == (0.0, 0.0, 1.0) and not door.is_open
    stove = furniture_from_catalog(cat.furniture["range"], "range_1", "1", Pose(x=1.0, y=1.0))
    assert len(stove.burners) == 4 and stove.cooking_appliance
    assert stove.burners[0].position == pytest.approx((1.13, 1.15, 0.9))


def test_unknown_field_is_rejected():
    data = json.loads(tiny_home().to_json())
    data["rooms"][0]["colour"] = "blue"
    with pytest.raises(HomeFileError, match=r"rooms\[0\]\.colour"):
        Home.from_json(json.dumps(data), "x.json")
    with pytest.raises(ValidationError):
        Room(id="2", name="hall", type="CORRIDOR", polygon=[[(0, 0), (1, 0), (1, 1)]], colour="red")


def test_a_version_1_file_is_refused_in_one_line_saying_to_rebuild(tmp_path):
    data = json.loads(tiny_home().to_json())
    data["schema_version"] = "homeloop.home/1"
    path = tmp_path / "home.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HomeFileError) as err:
        Home.read(path)
    assert str(err.value) == (f"{path}: home file format homeloop.home/1 is no longer read; "
                              "rebuild the home set (homeloop build …)")


def test_fixtures_points_and_exceptions_are_typed_and_read_back(tmp_path):
    home = tiny_home()
    back = Home.read(home.write(tmp_path / "home.json"))
    assert back.fixtures == home.fixtures and back.points == home.points
    assert back.placement_exceptions == home.placement_exceptions and back.equip_profile == "default"
    assert "metadata" not in json.loads(home.to_json())
    (wardrobe,) = back.fixtures_of_kind("built_in_furniture")
    assert wardrobe.feature_subtype == "BUILT_IN_FURNITURE" and back.fixtures_in("1") == [wardrobe]
    assert back.fixtures_of_kind("sink") == []
    assert back.point("bedside").x == 2.2
    (record,) = back.placement_exceptions
    assert back.placement_exception(record.device, record.rule) == record
    assert back.placement_exception(record.device, "another_rule") is None


def test_an_unknown_point_names_the_home_and_its_points():
    with pytest.raises(HomeLookupError) as err:
        tiny_home().point("parcel_spot")
    assert str(err.value) == "home tiny has no point 'parcel_spot'; its points: bedside"
    with pytest.raises(ValueError, match="no fixture kind 'sofa'"):
        tiny_home().fixtures_of_kind("sofa")


@pytest.mark.parametrize("part, edit, words", [
    ("fixtures", {"room": "9"}, "fixture 'built_in_furniture_9': unknown room '9'"),
    ("fixtures", {"id": "bed_1"}, "id 'bed_1' of furniture is already used in fixtures"),
    ("fixtures", {"kind": "fireplace"}, "fixtures[0].kind"),
    ("points", {"room": "9"}, "point 'bedside': unknown room '9'"),
    ("placement_exceptions", {"device": "smoke_9"}, "unknown device 'smoke_9'"),
    ("placement_exceptions", {"fallback": 3.5}, "fallback 3.5 must be below required 3.0"),
])
def test_fixtures_points_and_exceptions_are_validated(part, edit, words):
    data = json.loads(tiny_home().to_json())
    data[part][0].update(edit)
    with pytest.raises(HomeFileError, match=re.escape(words)):
        Home.from_json(json.dumps(data), "x.json")


def test_two_points_of_one_name_are_refused():
    data = json.loads(tiny_home().to_json())
    data["points"].append(dict(data["points"][0]))
    with pytest.raises(HomeFileError, match="duplicate point names"):
        Home.from_json(json.dumps(data), "x.json")


def test_wrong_schema_version_is_rejected_with_a_clear_message(tmp_path):
    data = json.loads(tiny_home().to_json())
    data["schema_version"] = "homeloop.home/0"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HomeFileError) as err:
        Home.read(path)
    msg = str(err.value)
    assert str(path) in msg and "'homeloop.home/0'" in msg and SCHEMA_VERSION in msg


def test_dangling_references_are_rejected():
    home = tiny_home()
    data = home.model_dump()
    data["objects"][0]["location"]["name"] = "shelf_9"
    with pytest.raises(ValidationError, match="has no surface 'shelf_9'"):
        Home.model_validate(data)
    data = home.model_dump()
    data["furniture"][0]["room"] = "99"
    with pytest.raises(ValidationError, match="unknown room '99'"):
        Home.model_validate(data)


def test_device_values_are_checked_against_the_catalog():
    cat = load_catalog()
    light = device_from_catalog(cat.devices["light"], "light_1", "1", Pose(x=1, y=1, z=2.6),
                                values={"on": True, "brightness": 40})
    assert light.value("brightness") == 40 and set(light.settable_fields) == {"on", "brightness"}
    with pytest.raises(ValidationError):
        device_from_catalog(cat.devices["light"], "light_2", "1", Pose(x=1, y=1), values={"brightness": 140})
    with pytest.raises(ValidationError):
        light.fields["brightness"].value = 101


@pytest.mark.parametrize("text", ['{"schema_version": ', "nope", '{"x": NaN}', "[1, 2]"])
def test_a_home_file_that_is_not_a_json_object_is_named_in_one_line(tmp_path, text):
    path = tmp_path / "home.json"
    path.write_text(text)
    with pytest.raises(HomeFileError) as err:
        Home.read(path)
    message = str(err.value)
    assert str(path) in message and "\n" not in message
    assert "not JSON" in message or "JSON object" in message


def test_reading_a_file_gives_the_home_its_parsed_json_validates_to(house_home):
    """Home files are parsed and validated by pydantic in one pass; the home must be the one
    that validating the parsed JSON gives (the house: every kind of element and device field)."""
    text = house_home.to_json()
    read = Home.from_json(text)
    assert read == Home.model_validate(orjson.loads(text))
    assert read.to_json() == text


# --- the geometry a home file may hold -----------------------------------------------------------


def _read_with(tmp_path, edit) -> str:
    """The one-line message reading the tiny home's file gives after ``edit`` changed its JSON."""
    data = json.loads(tiny_home().to_json())
    edit(data)
    path = tmp_path / "home.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HomeFileError) as err:
        Home.read(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message


BOW_TIE = [[0.0, 0.0], [4.0, 3.0], [4.0, 0.0], [0.0, 3.0]]


def test_a_bow_tie_room_is_refused_naming_the_room(tmp_path):
    message = _read_with(tmp_path, lambda d: d["rooms"][0].update(polygon=[BOW_TIE]))
    assert "room '1' (bedroom)" in message and "Self-intersection" in message
    assert not polygon_array([[BOW_TIE]])[0].is_valid


@pytest.mark.parametrize("part, words", [("walls", "wall 'wall_1'"), ("openings", "opening 'door_1'"),
                                         ("fixtures", "fixture 'built_in_furniture_9'")])
def test_a_bow_tie_wall_opening_or_fixture_is_refused_naming_it(tmp_path, part, words):
    message = _read_with(tmp_path, lambda d: d[part][0].update(polygon=[BOW_TIE]))
    assert words in message and "Self-intersection" in message


def test_a_bow_tie_surface_is_refused_naming_its_furniture(tmp_path):
    message = _read_with(tmp_path, lambda d: d["furniture"][1]["surfaces"][0].update(polygon=[BOW_TIE]))
    assert "furniture 'nightstand_1' surface 'top'" in message


def test_a_room_too_small_for_its_class_is_refused_with_the_area_it_needs(tmp_path):
    tiny = rings_from_polygon(box(0, 0, 0.1, 0.1))
    message = _read_with(tmp_path, lambda d: d["rooms"][0].update(polygon=tiny))
    assert "room '1' (bedroom)" in message
    assert f"{MIN_ROOM_AREA['indoor']:g} m²" in message and "0.01 m²" in message


def test_a_service_space_may_be_small():
    # A shaft is never entered: its class asks for no floor area, only a simple polygon.
    assert MIN_ROOM_AREA[plan_space_class("SHAFT")] == 0.0
    home = tiny_home()
    shaft = Room(id="2", name="shaft", type="SHAFT", polygon=rings_from_polygon(box(4.1, 0, 4.3, 0.2)))
    home.rooms = [*home.rooms, shaft]
    assert Home.from_json(home.to_json()).room("2").space_class == "service"


@pytest.mark.parametrize("part, place, words", [
    ("rooms", lambda item: item["polygon"][0][1].__setitem__(0, 1e308), "room '1'"),
    ("devices", lambda item: item["pose"].update(x=-1e308), "device 'smoke_1'"),
    ("furniture", lambda item: item["pose"].update(y=MAX_EXTENT * 1.5), "furniture 'bed_1'"),
])
def test_coordinates_beyond_the_extent_are_refused_naming_the_item(tmp_path, part, place, words):
    message = _read_with(tmp_path, lambda d: place(d[part][0]))
    assert words in message and f"{MAX_EXTENT:,.0f} m" in message


def test_coordinates_at_the_extent_are_read():
    home = tiny_home()
    home.points[0].x = MAX_EXTENT
    assert Home.from_json(home.to_json()).point("bedside").x == MAX_EXTENT


def test_several_problems_are_one_line_naming_the_first(tmp_path):
    def edit(d):
        d["rooms"][0]["colour"] = "blue"
        d["devices"][0]["pose"]["x"] = 1e308
    message = _read_with(tmp_path, edit)
    assert "room '1'" in message and "(and 1 more problems)" in message


_corner = st.tuples(st.floats(-5, 5, allow_nan=False), st.floats(-5, 5, allow_nan=False))


@settings(max_examples=150, deadline=None)
@given(corners=st.lists(_corner, min_size=3, max_size=6))
def test_a_room_polygon_is_read_exactly_when_simple_and_large_enough(corners):
    """Any ring of corners: the home reads when shapely finds it a valid polygon of at least the
    indoor minimum (as rounded to the millimetre), and is refused naming the room otherwise."""
    data = json.loads(tiny_home().to_json())
    ring = [[round(x, 3) + 0.0, round(y, 3) + 0.0] for x, y in corners]
    data["rooms"][0]["polygon"] = [ring]
    polygon = Polygon(ring)
    fits = polygon.is_valid and polygon.area >= MIN_ROOM_AREA["indoor"]
    try:
        Home.from_json(json.dumps(data), "x.json")
        assert fits
    except HomeFileError as err:
        assert not fits and "room '1' (bedroom)" in str(err) and "\n" not in str(err)
