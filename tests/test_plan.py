"""The plan model: rows to a plan, opening connectivity, the room-door graph, derived figures."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st
from shapely.geometry import box

from homeloop.pipeline.sources.swiss_dwellings import read_plans
from homeloop.core.plan import (
    ANCILLARY_SUBTYPES,
    AREA_SUBTYPES,
    DOOR,
    ENTRANCE_DOOR,
    OUTDOOR_SUBTYPES,
    SERVICE_SUBTYPES,
    Opening,
    Plan,
    PlanIds,
    Space,
    connect_openings,
    frame_from_plans,
    plans_from_frame,
    repaired,
    unions_by_group,
    with_connected_openings,
)

from conftest import FIXTURES


def test_door_connects_the_rooms_on_both_sides_of_the_wall(fixture_plan):
    plan = fixture_plan("two_rooms")
    door = plan.doors[0]
    assert set(door.connects) == {"1", "2"}
    assert abs(door.width - 0.9) < 1e-9
    assert abs(door.depth - 0.1) < 1e-9


def test_entrance_and_window_open_into_one_space(fixture_plan):
    plan = fixture_plan("two_rooms")
    assert plan.entrance_doors[0].connects == ("1",)
    assert plan.windows[0].connects == ("2",)


def test_room_door_graph_has_an_edge_per_connected_pair(fixture_plan):
    g = fixture_plan("two_rooms").room_door_graph()
    assert set(g.nodes) == {"1", "2"}
    assert g.nodes["1"]["subtype"] == "LIVING_ROOM" and g.nodes["1"]["entrance"]
    assert g["1"]["2"]["doors"] == 1
    assert g.number_of_edges() == 1


def test_two_doors_between_the_same_rooms_make_one_edge_with_count_two():
    a, b = box(0, 0, 4, 3), box(4.1, 0, 7, 3)
    doors = [box(4, 0.5, 4.1, 1.3), box(4, 2, 4.1, 2.8)]
    plan = Plan(
        PlanIds(1, 1, 1, 1, "x"),
        (Space("a", "LIVING_ROOM", a), Space("b", "ROOM", b)),
        openings=tuple(Opening(f"door_{i}", DOOR, d) for i, d in enumerate(doors)),
    )
    g = with_connected_openings(plan).room_door_graph()
    assert g["a"]["b"]["doors"] == 2


def test_door_near_a_corner_joins_only_the_two_rooms_it_crosses():
    # Three rooms meet near the door: the one round the corner only touches its end.
    rooms = [box(0, 0, 3, 3), box(3.1, 0, 6, 3), box(0, 3.1, 6, 5)]
    door = box(3, 2.1, 3.1, 2.99)
    hits = connect_openings([door], rooms)
    assert sorted(hits[0]) == [0, 1]


def test_open_passage_without_wall_connects_spaces():
    plan = Plan(PlanIds(1, 1, 1, 1, "x"), (Space("k", "KITCHEN", box(0, 0, 3, 3)), Space("l", "LIVING_ROOM", box(3, 0, 7, 3))))
    g = plan.room_door_graph()
    assert g["k"]["l"]["open"] and g["k"]["l"]["doors"] == 0


def test_unconnected_room_is_not_reachable_from_the_entrance(fixture_plan):
    plan = fixture_plan("two_rooms")
    assert plan.reachable_from_entrance() == {"1", "2"}
    no_door = Plan(plan.ids, plan.spaces, plan.separators, tuple(o for o in plan.openings if o.kind != DOOR))
    assert no_door.reachable_from_entrance() == {"1"}


def test_indoor_area_counts_indoor_spaces_only():
    plan = Plan(PlanIds(1, 1, 1, 1, "x"), (Space("r", "ROOM", box(0, 0, 4, 3)), Space("b", "BALCONY", box(0, 3.2, 4, 5))))
    assert plan.indoor_area == 12.0
    assert [s.id for s in plan.outdoor_spaces] == ["b"]


def test_element_table_round_trips(fixture_plan):
    plan = fixture_plan("two_rooms")
    back = plans_from_frame(frame_from_plans([plan]))[0]
    assert back.summary() == plan.summary()
    assert [o.connects for o in back.openings] == [o.connects for o in plan.openings]
    assert nx.utils.graphs_equal(back.room_door_graph(), plan.room_door_graph())


# --- Swiss Dwellings rows to a plan -------------------------------------------------------------

def two_rooms_rows() -> pd.DataFrame:
    rows = pd.read_csv(FIXTURES / "two_rooms.csv", dtype=str, keep_default_na=False)
    return rows.assign(row=range(2, len(rows) + 2))


def test_rows_make_the_plan_the_reader_makes():
    (read,), _ = read_plans(FIXTURES / "two_rooms.csv")
    built = Plan.from_rows(two_rooms_rows())
    assert built.summary() == read.summary()
    pd.testing.assert_frame_equal(frame_from_plans([built]), frame_from_plans([read]))
    assert (built.elevation, built.height) == (read.elevation, read.height) == (0.0, 2.6)


def test_rows_given_as_parsed_columns_make_the_same_plan():
    rows = two_rooms_rows()
    parsed = {
        "row": rows["row"].tolist(),
        **{c: [int(v) for v in rows[c]] for c in ("site_id", "building_id", "plan_id", "floor_id", "unit_id")},
        "apartment_id": rows["apartment_id"].tolist(),
        "area_id": rows["area_id"].tolist(),
        "entity_type": rows["entity_type"].tolist(),
        "entity_subtype": rows["entity_subtype"].tolist(),
        "geometry": list(shapely.from_wkt(rows["geometry"].to_numpy())),
        "elevation": [float(v) for v in rows["elevation"]],
        "height": [float(v) for v in rows["height"]],
    }
    assert Plan.from_rows(parsed).summary() == Plan.from_rows(rows).summary()


def test_the_plan_takes_the_lowest_area_and_the_tallest_wall():
    rows = two_rooms_rows()
    rows.loc[rows["entity_type"] == "area", "elevation"] = ["3.1", "2.9"]
    rows.loc[rows["entity_subtype"] == "WALL", "height"] = ["2.4", "2.75", "", "2.5", "2.5"]
    plan = Plan.from_rows(rows)
    assert (plan.elevation, plan.height) == (2.9, 2.75)


@pytest.mark.parametrize("column, value, words", [
    ("entity_subtype", "WALLX", "row 5: separator subtype 'WALLX' is not one of ['COLUMN', 'RAILING', 'WALL']"),
    ("entity_type", "partition", "row 5: entity_type 'partition'"),
    ("geometry", "POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))", "row 5: geometry is not a valid polygon (Self-intersection"),
    ("geometry", "LINESTRING (0 0, 1 1)", "row 5: geometry is not a valid polygon (a LineString)"),
    ("geometry", "POLYGON ((0 0, 1", "row 5: geometry is not WKT"),
])
def test_strict_rows_name_the_row_at_fault(column, value, words):
    rows = two_rooms_rows()
    rows.loc[3, column] = value
    with pytest.raises(ValueError) as err:
        Plan.from_rows(rows)
    assert str(err.value).startswith(words), str(err.value)


def test_lenient_rows_keep_an_invalid_polygon_as_drawn():
    rows = two_rooms_rows()
    bow_tie = "POLYGON ((4.1 0, 7 3, 7 0, 4.1 3, 4.1 0))"
    rows.loc[1, "geometry"] = bow_tie
    with pytest.raises(ValueError, match="row 3: geometry is not a valid polygon"):
        Plan.from_rows(rows)
    plan = Plan.from_rows(rows, lenient=True)
    assert plan.space("2").polygon.equals_exact(shapely.from_wkt(bow_tie), 0)
    assert not plan.space("2").polygon.is_valid


def test_an_area_id_used_twice_is_refused():
    rows = two_rooms_rows()
    rows.loc[1, "area_id"] = "1"
    with pytest.raises(ValueError, match="row 3: area_id 1 is used by an earlier area row"):
        Plan.from_rows(rows)


def test_every_classified_area_subtype_is_known():
    assert OUTDOOR_SUBTYPES | ANCILLARY_SUBTYPES | SERVICE_SUBTYPES <= AREA_SUBTYPES


# --- footprints: the union of a plan's polygons ------------------------------------------------------------

_cell = st.integers(min_value=0, max_value=6)
_rectangle = st.tuples(_cell, _cell, st.integers(1, 4), st.integers(1, 4)).map(
    lambda r: box(r[0] * 0.5, r[1] * 0.5, (r[0] + r[2]) * 0.5, (r[1] + r[3]) * 0.5))


@given(st.lists(st.lists(_rectangle, min_size=1, max_size=8), min_size=1, max_size=4))
def test_unions_by_group_cover_what_union_all_covers(groups):
    """Rectangles on a half-metre grid overlap, share edges, touch at corners and leave holes;
    each group's union is the region shapely.union_all gives, and groups do not mix."""
    polygons = [p for g in groups for p in g]
    owner = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    unions = unions_by_group(polygons, owner, len(groups))
    for union, group in zip(unions, groups):
        expected = shapely.union_all(group)
        assert union.is_valid
        assert union.symmetric_difference(expected).area < 1e-9
        assert union.area == pytest.approx(expected.area)


def test_a_group_without_polygons_has_no_union_and_a_plan_footprint_is_its_union(fixture_plan):
    unions = unions_by_group([box(0, 0, 1, 1)], np.array([1]), 3)
    assert unions[0] is None and unions[2] is None and unions[1].area == pytest.approx(1.0)
    plan = fixture_plan("two_rooms")
    drawn = [s.polygon for s in plan.spaces] + [s.polygon for s in plan.separators]
    assert plan.footprint.symmetric_difference(shapely.union_all(drawn)).area < 1e-9


def test_a_footprint_of_a_self_intersecting_space_is_made_of_its_repair():
    """A bow-tie space is an audit finding, not a crash: the plan's footprint unions its repaired
    halves with the rest."""
    bow_tie = shapely.Polygon([(0, 0), (2, 2), (2, 0), (0, 2)])
    plan = Plan(PlanIds(1, 1, 1, 1, "a"), (Space("1", "ROOM", bow_tie), Space("2", "ROOM", box(2, 0, 3, 2))),
                (), (), ())
    expected = shapely.union_all(repaired([bow_tie, box(2, 0, 3, 2)]))
    assert plan.footprint.is_valid and plan.footprint.area == pytest.approx(2.0 + 2.0)
    assert plan.footprint.symmetric_difference(expected).area < 1e-9


def test_a_multipolygon_part_is_unioned_with_the_rest_of_its_group():
    two = shapely.MultiPolygon([box(0, 0, 1, 1), box(2, 0, 3, 1)])
    union = unions_by_group([box(5, 5, 6, 6), two, box(1, 0, 2, 1)], np.array([0, 1, 1]), 2)[1]
    assert union.equals(box(0, 0, 3, 1))
