"""Plan features: the vector, the group key, the room-door graph hash, the scaling."""

import numpy as np
import pandas as pd
import pytest
from shapely.geometry import box

from homeloop.core.plan import (
    DOOR,
    ENTRANCE_DOOR,
    WINDOW,
    Feature,
    Opening,
    Plan,
    PlanIds,
    Separator,
    Space,
    with_connected_openings,
)
from homeloop.pipeline.features import (
    FEATURE_COLUMNS,
    VECTOR_COLUMNS,
    features_table,
    group_key,
    has_open_kitchen,
    outdoor_type,
    plan_features,
    scaled_vectors,
    supports_washing_machine,
    synthetic_features_table,
    vector_spreads,
    wl_hash,
)


def make_plan(spaces, doors=(), entrance=None, features=(), walls=(), site=1, apartment="x"):
    """A plan from (id, subtype, polygon) spaces, door polygons, an entrance door polygon,
    (kind, polygon, space id) features and wall polygons; openings connected from geometry."""
    openings = [Opening(f"door_{i}", DOOR, d) for i, d in enumerate(doors)]
    if entrance is not None:
        openings.append(Opening("entrance_door_0", ENTRANCE_DOOR, entrance))
    plan = Plan(
        PlanIds(site, 1, 1, 1, apartment),
        tuple(Space(sid, subtype, poly) for sid, subtype, poly in spaces),
        separators=tuple(Separator(f"wall_{i}", "WALL", w) for i, w in enumerate(walls)),
        openings=tuple(openings),
        features=tuple(Feature(f"{kind.lower()}_{i}", kind, poly, sid) for i, (kind, poly, sid) in enumerate(features)),
    )
    return with_connected_openings(plan)


# Three rooms: L (left) and B (right) side by side, W across the top of both;
# 10 cm gaps (walls) between them so only doors join them.
L_BOX, B_BOX, W_BOX = box(0, 0, 4, 3), box(4.1, 0, 7, 3), box(0, 3.1, 7, 5)
DOOR_LB = box(4, 1, 4.1, 1.9)
DOOR_LW = box(1, 3, 2, 3.1)
DOOR_BW = box(5, 3, 6, 3.1)
ENTRANCE_L = box(1, -0.2, 2, 0)


def three_rooms(ids=("l", "b", "w"), bathroom_door=DOOR_LW, reverse=False):
    spaces = [(ids[0], "LIVING_ROOM", L_BOX), (ids[1], "ROOM", B_BOX), (ids[2], "BATHROOM", W_BOX)]
    doors = [DOOR_LB, bathroom_door]
    if reverse:
        spaces, doors = spaces[::-1], doors[::-1]
    return make_plan(spaces, doors, entrance=ENTRANCE_L)


# --- the vector ---------------------------------------------------------------------


def test_vector_counts_of_the_two_room_fixture(fixture_plan):
    row = plan_features(fixture_plan("two_rooms"))
    assert row["plan"] == "1-1000-aaaa0000000000000000000000000001"
    assert row["site_id"] == 1
    assert row["n_living"] == 1 and row["n_bedroom"] == 1
    others = [c for c in VECTOR_COLUMNS if c.startswith("n_") and c not in ("n_living", "n_bedroom", "n_windows", "n_interior_doors")]
    assert all(row[c] == 0 for c in others)
    assert row["n_windows"] == 1
    assert row["n_interior_doors"] == 1  # the entrance door is not interior
    assert row["indoor_area_m2"] == pytest.approx(4 * 3 + 2.9 * 3)
    assert row["group"] == "b1|none|closed|nowm"
    assert set(row) == set(FEATURE_COLUMNS)


def test_every_space_counts_once_and_service_spaces_not_at_all():
    spaces = [
        ("1", "ROOM", box(0, 0, 3, 3)),
        ("2", "BEDROOM", box(4, 0, 7, 3)),
        ("3", "KITCHEN_DINING", box(8, 0, 11, 3)),
        ("4", "CORRIDOR", box(0, 4, 3, 6)),
        ("5", "BALCONY", box(4, 4, 6, 6)),
        ("6", "PATIO", box(7, 4, 9, 6)),
        ("7", "GARAGE", box(10, 4, 13, 6)),
        ("8", "SHAFT", box(14, 4, 15, 5)),
        ("9", "WASH_AND_DRY_ROOM", box(16, 4, 18, 6)),
    ]
    row = plan_features(make_plan(spaces))
    assert row["n_bedroom"] == 2 and row["n_kitchen"] == 1 and row["n_corridor"] == 1
    assert row["n_balcony"] == 1 and row["n_other_outdoor"] == 1
    assert row["n_other"] == 1  # the garage
    assert row["n_wash_and_dry"] == 1
    assert sum(row[c] for c in VECTOR_COLUMNS if c.startswith("n_") and c not in ("n_windows", "n_interior_doors")) == 8
    # Indoor area: bedrooms, kitchen, corridor, laundry; not the garage, balcony, patio or shaft.
    assert row["indoor_area_m2"] == pytest.approx(9 + 9 + 9 + 6 + 4)


def test_features_table_is_sorted_by_plan_and_typed(fixture_plan):
    a = make_plan([("1", "ROOM", box(0, 0, 3, 3))], site=9, apartment="b")
    b = make_plan([("1", "ROOM", box(0, 0, 3, 3))], site=10, apartment="a")
    table = features_table([a, b, fixture_plan("two_rooms")])
    assert list(table["plan"]) == sorted(table["plan"])
    assert list(table.columns) == list(FEATURE_COLUMNS)
    assert table["n_bedroom"].dtype == np.int64 and table["open_kitchen"].dtype == bool
    empty = features_table([])
    assert list(empty.columns) == list(FEATURE_COLUMNS) and len(empty) == 0


# --- the group key -------------------------------------------------------------------


@pytest.mark.parametrize(
    "subtypes, expected",
    [
        ([], "none"),
        (["ROOM", "KITCHEN"], "none"),
        (["BALCONY"], "balcony"),
        (["BALCONY", "BALCONY"], "balcony"),
        (["LOGGIA"], "loggia"),
        (["WINTERGARTEN"], "loggia"),
        (["TERRACE"], "terrace"),
        (["PATIO"], "terrace"),
        (["GARDEN"], "garden"),
        (["BALCONY", "GARDEN"], "several"),
        (["TERRACE", "PATIO"], "terrace"),
        (["DRIVEWAY"], "none"),
    ],
)
def test_outdoor_type(subtypes, expected):
    assert outdoor_type(subtypes) == expected


def test_bedrooms_are_capped_at_five():
    rooms = [(str(i), "ROOM", box(4 * i, 0, 4 * i + 3, 3)) for i in range(7)]
    row = plan_features(make_plan(rooms))
    assert row["n_bedroom"] == 7 and row["bedrooms_capped"] == 5
    assert row["group"].startswith("b5|")


def test_group_key_string():
    assert group_key(3, "balcony", True, True) == "b3|balcony|open|wm"
    assert group_key(0, "none", False, False) == "b0|none|closed|nowm"


def test_kitchen_dining_is_an_open_kitchen():
    plan = make_plan([("1", "KITCHEN_DINING", box(0, 0, 4, 4))])
    assert has_open_kitchen(plan)


def test_counter_in_the_living_room_is_an_open_kitchen():
    counter = box(0.1, 0.1, 2.5, 0.7)
    living = ("1", "LIVING_ROOM", box(0, 0, 5, 4))
    assert has_open_kitchen(make_plan([living], features=[("KITCHEN", counter, "1")]))
    # Without an area id the counter is placed by geometry.
    assert has_open_kitchen(make_plan([living], features=[("KITCHEN", counter, None)]))
    # A counter in a kitchen is not open by itself.
    kitchen = ("1", "KITCHEN", box(0, 0, 3, 3))
    assert not has_open_kitchen(make_plan([kitchen], features=[("KITCHEN", counter, "1")]))


def test_kitchen_open_to_living_is_open_and_behind_a_door_is_closed():
    kitchen, living = box(0, 0, 3, 3), box(3, 0, 7, 3)  # shared edge, no wall
    open_plan = make_plan([("k", "KITCHEN", kitchen), ("l", "LIVING_ROOM", living)])
    assert open_plan.room_door_graph()["k"]["l"]["open"]
    assert has_open_kitchen(open_plan)
    closed = make_plan(
        [("k", "KITCHEN", box(0, 0, 3, 3)), ("l", "LIVING_ROOM", box(3.1, 0, 7, 3))],
        doors=[box(3, 1, 3.1, 1.9)],
        walls=[box(3, 0, 3.1, 3)],
    )
    assert closed.room_door_graph()["k"]["l"]["doors"] == 1
    assert not has_open_kitchen(closed)
    # Open to a bedroom does not count.
    bedroom = make_plan([("k", "KITCHEN", kitchen), ("r", "ROOM", living)])
    assert not has_open_kitchen(bedroom)


def test_washing_machine_from_feature_or_laundry_room():
    room = ("1", "BATHROOM", box(0, 0, 3, 3))
    assert not supports_washing_machine(make_plan([room]))
    assert supports_washing_machine(make_plan([room], features=[("WASHING_MACHINE", box(0, 0, 0.6, 0.6), "1")]))
    assert supports_washing_machine(make_plan([("1", "WASH_AND_DRY_ROOM", box(0, 0, 3, 3))]))


# --- the structure hash ------------------------------------------------------------------


def test_wl_hash_ignores_space_ids_and_order():
    base = wl_hash(three_rooms())
    assert wl_hash(three_rooms(ids=("97", "3", "x1"))) == base
    assert wl_hash(three_rooms(ids=("c", "a", "b"), reverse=True)) == base


def test_wl_hash_changes_when_a_door_joins_other_rooms():
    # The bathroom door moves from the living room to the bedroom.
    before, after = three_rooms(), three_rooms(bathroom_door=DOOR_BW)
    assert set(after.doors[1].connects) == {"b", "w"}
    assert wl_hash(before) != wl_hash(after)


def test_wl_hash_marks_the_entrance_space():
    with_entrance = three_rooms()
    spaces = [("l", "LIVING_ROOM", L_BOX), ("b", "ROOM", B_BOX), ("w", "BATHROOM", W_BOX)]
    bedroom_entrance = make_plan(spaces, [DOOR_LB, DOOR_LW], entrance=box(5, -0.2, 6, 0))
    assert wl_hash(with_entrance) != wl_hash(bedroom_entrance)


def test_wl_hash_tells_open_passages_from_doors():
    opened = make_plan([("k", "KITCHEN", box(0, 0, 3, 3)), ("l", "LIVING_ROOM", box(3, 0, 7, 3))])
    doored = make_plan(
        [("k", "KITCHEN", box(0, 0, 3, 3)), ("l", "LIVING_ROOM", box(3.1, 0, 7, 3))],
        doors=[box(3, 1, 3.1, 1.9)],
    )
    assert wl_hash(opened) != wl_hash(doored)


# --- scaling -----------------------------------------------------------------------


def test_scaling_keeps_area_from_dominating_the_l1_distance():
    table = synthetic_features_table(1500, 300, seed=1)
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, len(table), (2, 4000))
    area = VECTOR_COLUMNS.index("indoor_area_m2")

    raw = table[list(VECTOR_COLUMNS)].to_numpy(dtype=float)
    raw_parts = np.abs(raw[i] - raw[j]).mean(axis=0)
    assert raw_parts[area] / raw_parts.sum() > 0.5  # unscaled, area is most of the distance

    x = scaled_vectors(table)
    parts = np.abs(x[i] - x[j]).mean(axis=0)
    assert parts[area] / parts.sum() < 0.2
    assert parts[area] <= 1.5 * parts[VECTOR_COLUMNS.index("n_bedroom")]
    # Every column's mean absolute deviation about the median is at most one unit.
    mad = np.mean(np.abs(x - np.median(x, axis=0)), axis=0)
    assert np.all(mad <= 1 + 1e-9)
    assert mad[area] == pytest.approx(1.0)


def test_scaling_depends_only_on_the_pool_not_its_order():
    table = synthetic_features_table(300, 50, seed=2)
    shuffled = table.sample(frac=1, random_state=5)
    np.testing.assert_array_equal(vector_spreads(table), vector_spreads(shuffled))
    np.testing.assert_array_equal(scaled_vectors(shuffled), scaled_vectors(table)[shuffled.index])
    # A rare column is not blown up: its spread is floored at one unit.
    assert vector_spreads(table)[VECTOR_COLUMNS.index("n_garden")] == 1.0


def test_synthetic_table_has_the_features_schema():
    table = synthetic_features_table(200, 40, seed=3)
    assert list(table.columns) == list(FEATURE_COLUMNS)
    assert table["plan"].is_unique and list(table["plan"]) == sorted(table["plan"])
    assert set(table["site_id"]) == set(range(40))
    pd.testing.assert_frame_equal(table, synthetic_features_table(200, 40, seed=3))
