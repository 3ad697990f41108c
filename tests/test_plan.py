"""The plan model: opening connectivity, the room-door graph, derived figures."""

import networkx as nx
import shapely
from shapely.geometry import box

from homeloop.plan import (
    DOOR,
    ENTRANCE_DOOR,
    Opening,
    Plan,
    PlanIds,
    Space,
    connect_openings,
    frame_from_plans,
    plans_from_frame,
    with_connected_openings,
)


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
