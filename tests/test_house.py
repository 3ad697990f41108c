"""The house (docs/pipeline.md): its rooms, doors, fixtures, and that it loads strictly."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
import shapely
from shapely import Polygon

from homeloop.core.geometry import DOOR_CLEAR_DEPTH, face_zones
from homeloop.core.house import HOUSE_CSV, HOUSE_PLAN_KEY, load_house
from homeloop.core.plan import ANCILLARY, INDOOR, OUTDOOR, PASSAGE_KINDS, Opening, Plan

#: Least distance (m) from a door to the corner of a space it opens into.
CORNER_GAP = 0.15


@pytest.fixture(scope="module")
def house() -> Plan:
    return load_house()


def _subtypes(plan: Plan, space_class: str) -> list[str]:
    return sorted(s.subtype for s in plan.spaces if s.space_class == space_class)


def _face_rectangles(door: Opening, depth: float, extend: float = 0.0) -> list[Polygon]:
    """Rectangles on both faces of a door, from its face: its width (+ ``extend`` each end) by ``depth``."""
    zones, _, _ = face_zones([door.polygon], depth, side_inset=-extend, face_gap=0.0)
    return list(zones)


def test_the_house_loads_with_its_key(house):
    assert house.key == HOUSE_PLAN_KEY
    assert HOUSE_CSV.is_file()
    assert house.ids.apartment_id != "d41d8cd98f00b204e9800998ecf8427e"


def test_ten_indoor_rooms_and_the_garage_porch_patio_driveway(house):
    indoor = _subtypes(house, INDOOR)
    assert len(indoor) == 10
    for subtype in ("KITCHEN", "LIVING_ROOM", "OFFICE", "WASH_AND_DRY_ROOM", "BATHROOM", "CORRIDOR"):
        assert subtype in indoor
    assert {"ROOM", "BEDROOM"} & set(indoor)
    assert _subtypes(house, ANCILLARY) == ["GARAGE"]
    assert _subtypes(house, OUTDOOR) == ["DRIVEWAY", "PATIO", "PORCH"]
    assert 140 <= house.indoor_area <= 180


def test_all_polygons_are_valid_and_spaces_do_not_overlap(house):
    elements = [*house.spaces, *house.separators, *house.openings, *house.features]
    assert all(e.polygon.is_valid and not e.polygon.is_empty for e in elements)
    for a, b in itertools.combinations(house.spaces, 2):
        assert a.polygon.intersection(b.polygon).area < 1e-6, (a.subtype, b.subtype)


def test_one_entrance_door_from_the_porch_into_the_house(house):
    (entrance,) = house.entrance_doors
    kinds = {house.space(s).subtype: house.space(s).space_class for s in entrance.connects}
    assert kinds.get("PORCH") == OUTDOOR
    assert INDOOR in kinds.values()
    assert abs(entrance.width - 1.0) < 1e-6


def test_every_room_and_the_garage_is_reachable_from_the_front_door(house):
    reached = house.reachable_from_entrance()
    wanted = {s.id for s in house.spaces if s.space_class in (INDOOR, ANCILLARY)}
    assert wanted <= reached
    patio = next(s for s in house.spaces if s.subtype == "PATIO")
    driveway = next(s for s in house.spaces if s.subtype == "DRIVEWAY")
    assert {patio.id, driveway.id} <= reached


def test_every_door_connects_two_spaces(house):
    passages = [o for o in house.openings if o.kind in PASSAGE_KINDS]
    assert len(passages) >= 12
    for door in passages:
        assert len(door.connects) == 2, door.id
    garage = next(s.id for s in house.spaces if s.subtype == "GARAGE")
    garage_doors = [d for d in house.doors if garage in d.connects]
    assert any(2.4 <= d.width <= 3.0 for d in garage_doors)  # the garage door
    assert any(
        {house.space(s).subtype for s in d.connects} == {"GARAGE", "CORRIDOR"} for d in garage_doors
    )
    patio_doors = [d for d in house.doors if "PATIO" in {house.space(s).subtype for s in d.connects}]
    assert patio_doors


def test_door_clear_zones_are_free(house):
    features = [f.polygon for f in house.features]
    separators = [s.polygon for s in house.separators]
    for door in house.openings:
        if door.kind not in PASSAGE_KINDS:
            continue
        others = [o.polygon for o in house.openings if o.id != door.id]
        for zone in _face_rectangles(door, DOOR_CLEAR_DEPTH):
            for geom in [*features, *others, *separators]:
                assert zone.intersection(geom).area <= 1e-6, door.id


def test_doors_keep_clear_of_corners(house):
    for door in house.openings:
        if door.kind not in PASSAGE_KINDS:
            continue
        spaces = shapely.union_all([house.space(s).polygon for s in door.connects]).buffer(1e-6)
        for strip in _face_rectangles(door, 0.05, extend=CORNER_GAP):
            assert spaces.contains(strip), door.id


def test_windows_in_every_habitable_room_and_the_living_room(house):
    lit = {s for w in house.windows for s in w.connects}
    for s in house.indoor_spaces:
        if s.subtype != "CORRIDOR":
            assert s.id in lit, s.subtype
    assert all(len(w.connects) >= 1 for w in house.windows)


def test_fixtures_of_kitchen_bathrooms_and_laundry(house):
    def kinds(subtype: str) -> list[set[str]]:
        return [{f.kind for f in house.features_in(s.id)} for s in house.spaces if s.subtype == subtype]

    (kitchen,) = kinds("KITCHEN")
    assert {"KITCHEN", "SINK"} <= kitchen
    baths = kinds("BATHROOM")
    assert baths and all({"SHOWER", "BATHTUB"} & b and {"TOILET", "SINK"} <= b for b in baths)
    assert any({"SHOWER", "BATHTUB"} <= b for b in baths)
    (laundry,) = kinds("WASH_AND_DRY_ROOM")
    assert "WASHING_MACHINE" in laundry
    for f in house.features:
        assert house.space(f.space_id).polygon.buffer(1e-6).contains(f.polygon), f.id


def test_the_house_draws(house, tmp_path):
    from homeloop.pipeline.previews.plan import render_plan

    out = render_plan(house, tmp_path / "house.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


# --- strict loading ---------------------------------------------------------------


def _broken(tmp_path, edit) -> str:
    frame = pd.read_csv(HOUSE_CSV, dtype=str, keep_default_na=False)
    edit(frame)
    path = tmp_path / "house.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_a_bad_geometry_is_reported_with_its_row(tmp_path):
    def edit(frame):
        frame.loc[4, "geometry"] = "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))"

    with pytest.raises(ValueError, match=r"row 6: geometry is not valid"):
        load_house(_broken(tmp_path, edit))


def test_a_second_apartment_is_reported_with_its_row(tmp_path):
    def edit(frame):
        frame.loc[9, "apartment_id"] = "f" * 32

    with pytest.raises(ValueError, match=r"row 11: apartment_id"):
        load_house(_broken(tmp_path, edit))


def test_an_unknown_subtype_or_area_is_reported_with_its_row(tmp_path):
    def subtype(frame):
        frame.loc[len(frame) - 1, "entity_subtype"] = "SOFA"

    with pytest.raises(ValueError, match=rf"row {len(pd.read_csv(HOUSE_CSV)) + 1}: feature subtype 'SOFA'"):
        load_house(_broken(tmp_path, subtype))

    def area(frame):
        frame.loc[len(frame) - 1, "area_id"] = "999"

    with pytest.raises(ValueError, match=r"area_id 999"):
        load_house(_broken(tmp_path, area))


def test_wrong_columns_are_rejected(tmp_path):
    def edit(frame):
        frame.drop(columns=["height"], inplace=True)

    with pytest.raises(ValueError, match=r"row 1: columns"):
        load_house(_broken(tmp_path, edit))
