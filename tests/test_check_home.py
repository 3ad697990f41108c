"""The home verifier (homeloop/check.py): each crafted fault fires exactly its rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from shapely.geometry import box

from homeloop.check import SMOKE_EXCEPTIONS_KEY, CheckFinding, check_home, rule_counts
from homeloop.home import Home, Pose, Wall, furniture_from_catalog, rings_from_polygon
from test_devices import CAT, E, N, S, W, build, crafted

from homeloop.pipeline.devices import equip


@pytest.fixture(scope="module")
def clean() -> Home:
    home, plan = crafted()
    result = equip(home, plan, CAT, np.random.default_rng(0))
    assert result.failures == []
    return result.home


def rules(home: Home) -> set[str]:
    return {f.rule for f in check_home(home, CAT)}


def with_furniture(home: Home, *items) -> Home:
    return Home.model_validate({**home.model_dump(), "furniture": [f.model_dump() for f in (*home.furniture, *items)]})


def moved(home: Home, furniture_id: str, x: float, y: float, yaw: float) -> Home:
    f = home.furniture_item(furniture_id)
    placed = furniture_from_catalog(CAT.furniture[f.catalog_id], f.id, f.room, Pose(x=x, y=y, yaw=yaw))
    items = [placed if g.id == furniture_id else g for g in home.furniture]
    return Home.model_validate({**home.model_dump(), "furniture": [g.model_dump() for g in items]})


def edit_device(home: Home, device_id: str, **pose) -> Home:
    devices = [d.model_copy(update={"pose": d.pose.model_copy(update=pose)}) if d.id == device_id else d
               for d in home.devices]
    return Home.model_validate({**home.model_dump(), "devices": [d.model_dump() for d in devices]})


def without_devices(home: Home, keep) -> Home:
    devices = [d for d in home.devices if keep(d)]
    return Home.model_validate({**home.model_dump(), "devices": [d.model_dump() for d in devices]})


def kitchen_sensor(home: Home):
    (d,) = [d for d in home.devices_of_type("smoke_sensor") if "range" in d.monitors]
    return d


def test_clean_home_has_no_findings(clean):
    assert check_home(clean, CAT) == []


def test_findings_name_rule_elements_and_message(clean):
    home = moved(clean, "coffee_table", 1.0, 7.6, E)
    (finding,) = check_home(home, CAT)
    assert isinstance(finding, CheckFinding)
    assert finding.rule == "furniture_overlap"
    assert set(finding.elements) == {"sofa", "coffee_table"}
    assert "overlap" in finding.message


def test_overlapping_furniture(clean):
    assert rules(moved(clean, "coffee_table", 1.0, 7.6, E)) == {"furniture_overlap"}


def test_furniture_in_a_door_clear_zone(clean):
    # The side table pokes 5 cm into the living-room door's clear zone (0.8 m deep).
    home = moved(clean, "side_table", 2.05, 6.0, E)
    assert rules(home) == {"door_clearance"}
    (f,) = check_home(home, CAT)
    assert f.elements == ("door_living", "side_table")


def test_wardrobe_in_front_of_a_window(clean):
    wardrobe = furniture_from_catalog(CAT.furniture["wardrobe"], "wardrobe_6", "6", Pose(x=5.15, y=0.3, yaw=N))
    assert rules(with_furniture(clean, wardrobe)) == {"window_blocked_by_tall_item"}


def test_furniture_over_a_wall(clean):
    assert rules(moved(clean, "tv_unit", 4.85, 7.6, W)) == {"furniture_blocks_wall"}


def test_smoke_sensor_one_metre_from_the_range(clean):
    d = kitchen_sensor(clean)
    home = edit_device(clean, d.id, x=6.4, y=8.0)  # the range's front edge is at y 9.0
    assert rules(home) == {"smoke_sensor_distance"}
    (f,) = check_home(home, CAT)
    assert f.elements == (d.id, "range") and "1.00 m" in f.message and "1.8" in f.message


def test_smoke_sensor_at_2_5_m_needs_an_exception_record(clean):
    d = kitchen_sensor(clean)
    home = edit_device(clean, d.id, x=6.4, y=6.5)
    assert rules(home) == {"smoke_sensor_distance"}
    recorded = Home.model_validate({**home.model_dump(), "metadata": {
        **home.metadata, SMOKE_EXCEPTIONS_KEY: [{"device": d.id, "room": "3", "distance_m": 2.5}]}})
    assert check_home(recorded, CAT) == []
    # An exception never allows less than 1.8 m.
    closer = edit_device(recorded, d.id, x=6.4, y=7.5)
    assert rules(closer) == {"smoke_sensor_distance"}


def test_bedroom_without_a_smoke_sensor(clean):
    home = without_devices(clean, lambda d: not (d.type == "smoke_sensor" and d.room == "6"))
    assert rules(home) == {"smoke_sensor_missing_bedroom"}


def test_no_smoke_sensor_outside_the_sleeping_area(clean):
    home = without_devices(clean, lambda d: not (d.type == "smoke_sensor" and d.room == "1"))
    found = check_home(home, CAT)
    assert {f.rule for f in found} == {"smoke_sensor_missing_outside_sleeping"}
    assert {f.elements[0] for f in found} == {"4", "6"}


def test_dishwasher_without_a_leak_sensor(clean):
    assert rules(without_devices(clean, lambda d: d.type != "leak_sensor")) == {"leak_sensor_missing"}


def test_exterior_window_without_a_contact_sensor(clean):
    home = without_devices(clean, lambda d: not (d.type == "contact_sensor" and d.mounted_on == "window_office"))
    assert rules(home) == {"contact_sensor_missing"}


def test_entrance_not_covered(clean):
    cams = [c.model_copy(update={"pose": c.pose.model_copy(update={"yaw": c.pose.yaw + math.pi})})
            if c.room == "1" else c for c in clean.cameras]
    home = Home.model_validate({**clean.model_dump(), "cameras": [c.model_dump() for c in cams]})
    assert rules(home) == {"entrance_not_covered"}


def test_bathroom_camera_without_privacy(clean):
    (cam,) = [c for c in clean.cameras if c.room == "5"]
    cams = [c.model_copy(update={"privacy_mode": "none"}) if c.id == cam.id else c for c in clean.cameras]
    home = Home.model_validate({**clean.model_dump(), "cameras": [c.model_dump() for c in cams]})
    found = check_home(home, CAT)
    assert {f.rule for f in found} == {"camera_privacy"}
    assert any("must be image_blocked" in f.message for f in found)


def test_device_outside_its_room(clean):
    plug = clean.devices_of_type("plug")[0]
    home = edit_device(clean, plug.id, x=plug.pose.x + 20.0)
    assert rules(home) == {"device_outside_room"}


# --- navigation: a dining nook behind an open passage ------------------------------------


def nook_home(sofa_gap: float | None) -> Home:
    """A hall, a living room and a dining nook open to it through a 1.5 m passage.

    With ``sofa_gap`` a sofa stands with its back to the passage, that far from it.
    """
    rooms = {"h": ("CORRIDOR", (0.0, -1.6, 6.0, -0.1)), "l": ("LIVING_ROOM", (0.0, 0.0, 4.0, 4.0)),
             "d": ("DINING", (4.0, 0.0, 6.0, 4.0))}
    openings = [("e", "ENTRANCE_DOOR", (6.0, -1.4, 6.3, -0.4), ("h",)),
                ("dl", "DOOR", (1.5, -0.1, 2.4, 0.0), ("h", "l"))]
    home, plan = build(rooms, openings, home_id="nook")
    partition = [box(3.95, 0.0, 4.05, 1.5), box(3.95, 3.0, 4.05, 4.0)]
    walls = [*home.walls, *(Wall(id=f"partition_{i}", polygon=rings_from_polygon(g)) for i, g in enumerate(partition))]
    home = Home.model_validate({**home.model_dump(), "walls": [w.model_dump() for w in walls]})
    home = equip(home, plan, CAT, np.random.default_rng(0)).home
    if sofa_gap is None:
        return home
    sofa = furniture_from_catalog(CAT.furniture["sofa"], "sofa", "l", Pose(x=3.95 - sofa_gap - 0.45, y=2.25, yaw=W))
    return with_furniture(home, sofa)


def test_nook_home_is_clean():
    assert check_home(nook_home(None), CAT) == []
    assert check_home(nook_home(0.8), CAT) == []


def test_room_cut_off_by_a_sofa_for_the_g1d():
    # 0.45 m behind the sofa: a Stretch (0.33 m) passes, the G1-D (0.50 m) does not.
    found = check_home(nook_home(0.45), CAT)
    assert [(f.rule, f.elements) for f in found] == [("unreachable_room", ("d",))]


# --- NFPA 72: the 1.8 m exception ----------------------------------------------------------


def small_kitchen() -> tuple[Home, object]:
    """A 3.0 x 2.6 m kitchen, the range in the middle of its north wall, entered from a porch."""
    rooms = {"k": ("KITCHEN", (0.0, 0.0, 3.0, 2.6)), "p": ("PORCH", (0.5, -2.3, 2.5, -0.3))}
    openings = [("e", "ENTRANCE_DOOR", (1.0, -0.3, 2.0, 0.0), ("k", "p"))]
    furniture = [("range", "range", "k", (1.5, 2.3, S))]
    return build(rooms, openings, furniture=furniture, home_id="small_kitchen")


def test_small_kitchen_gets_the_exception_and_passes():
    home, plan = small_kitchen()
    result = equip(home, plan, CAT, np.random.default_rng(0))
    assert result.failures == []
    (smoke,) = result.home.devices_of_type("smoke_sensor")
    rng = shapely.Polygon(result.home.furniture_item("range").footprint[0])
    d = rng.distance(shapely.Point(smoke.pose.x, smoke.pose.y))
    assert 1.8 <= d < 3.0
    (record,) = result.home.metadata[SMOKE_EXCEPTIONS_KEY]
    assert record["device"] == smoke.id and record["distance_m"] == pytest.approx(d, abs=1e-3)
    assert any("exception" in n for n in result.notes)
    assert check_home(result.home, CAT) == []
    # Without the record the same sensor fails.
    bare = Home.model_validate({**result.home.model_dump(), "metadata": {SMOKE_EXCEPTIONS_KEY: []}})
    assert rules(bare) == {"smoke_sensor_distance"}


def test_three_metres_is_kept_where_the_room_allows(clean):
    rng = shapely.Polygon(clean.furniture_item("range").footprint[0])
    for d in clean.devices_of_type("smoke_sensor"):
        assert rng.distance(shapely.Point(d.pose.x, d.pose.y)) >= 3.0
    assert clean.metadata[SMOKE_EXCEPTIONS_KEY] == []


def test_rule_counts(clean):
    home = moved(clean, "coffee_table", 1.0, 7.6, E)
    assert rule_counts(check_home(home, CAT)) == {"furniture_overlap": 1}
