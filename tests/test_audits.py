"""The audit rules, over small hand-written plans.

``audit_good.csv`` is a small flat (metres; exterior walls 0.2 m drawn as one
ring, partitions 0.1 m; every door sits inside a partition wall)::

    y=6.2 +------------------[window 2-3.5]-----------------------+
          |                    BEDROOM 4 (0-8 × 3.1-6)            |
    y=3.1 +----------[door 3.2-4]---------------------------------+
          | BATHROOM 3   |  CORRIDOR 1   |  KITCHEN 2      |counter|
          | (0-2.5)    door (2.6-4.6)  door (4.7-8)        |7.4-8  |
          |              |1.8-2.6        |1.8-2.6          | sink  |
          |shower 0-0.9  |               |                 |       |
    y=0   +--------------+--[entrance 3.1-4.1]-------------+-------+
         x=0           2.5/2.6        4.6/4.7                      8

Each ``audit_<rule>_fail.csv`` is that flat with one change, which breaks
that rule and no other:

- blocked_doorway: a wardrobe 0.3 m in front of the bedroom door;
- blocked_doorway_narrow: the bathroom door only 0.55 m wide;
- no_shower_or_bath: a toilet where the shower was;
- no_fridge_space: counters on three kitchen walls, a pantry on the fourth;
- door_not_connecting: a door in the bedroom's outer wall;
- unreachable_space: no bedroom door;
- no_entrance: no entrance door;
- no_kitchen: the kitchen is a DINING room without counter or sink;
- invalid_geometry: a bow-tie STOREROOM area beyond the east wall;
- overlapping_spaces: the bathroom drawn 0.2 m into the corridor;
- duplicate_element: the kitchen door's row written twice;
- feature_outside_area: a second kitchen SINK 100 m east of the flat.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shapely import Polygon
from shapely.geometry import box

from homeloop import audits
from homeloop.audits import AUDIT_COLUMNS, RULES, AuditResult, Finding, RuleRegistry, audit_plan
from homeloop.audits.thresholds import fridge_size
from homeloop.audits import thresholds
from homeloop.audits.findings import extra_findings, finding_from_rejection
from homeloop.audits.no_fridge_space import search_fridge_position
from homeloop.pipeline.sources.swiss_dwellings import read_plans
from homeloop.core.plan import COLUMN, Feature, Plan, PlanIds, Separator, Space

from conftest import FIXTURES

GEOMETRIC_RULES = (
    "invalid_geometry",
    "overlapping_spaces",
    "duplicate_element",
    "feature_outside_area",
    "no_entrance",
    "door_not_connecting",
    "unreachable_space",
    "blocked_doorway",
    "no_shower_or_bath",
    "no_kitchen",
    "no_fridge_space",
)


def with_changes(plan: Plan, **changes) -> Plan:
    return dataclasses.replace(plan, **changes)


# --- the good plan -----------------------------------------------------------------


def test_every_geometric_rule_is_registered_in_order():
    assert audits.REGISTRY.checked_rule_ids == GEOMETRIC_RULES
    assert RULES["furnish_failed"].is_external
    assert all(RULES[r].description for r in RULES)


def test_good_plan_passes_every_rule(fixture_plan):
    result = audit_plan(fixture_plan("audit_good"))
    assert result.findings == ()
    assert result.passed
    assert result.rules_checked == GEOMETRIC_RULES
    assert result.failed_rules == ()


# --- one failing fixture per rule ---------------------------------------------------

# fixture, rule, elements of the finding, words the message must contain
FAILING = [
    ("audit_blocked_doorway_fail", "blocked_doorway", ("door_13", "built_in_furniture_18"),
     ["door_13", "0.80 m", "CORRIDOR 1", "BEDROOM 4", "built_in_furniture_18", "BUILT_IN_FURNITURE"]),
    ("audit_blocked_doorway_narrow_fail", "blocked_doorway", ("door_11",),
     ["door_11", "0.55 m", "CORRIDOR 1", "BATHROOM 3", "narrower", "0.70 m"]),
    ("audit_no_shower_or_bath_fail", "no_shower_or_bath", ("3",), ["SHOWER", "BATHTUB", "BATHROOM 3"]),
    ("audit_no_fridge_space_fail", "no_fridge_space", ("2",),
     ["KITCHEN 2", "9.9 m²", "every wall taken", "kitchen_16", "built_in_furniture_20"]),
    ("audit_door_not_connecting_fail", "door_not_connecting", ("door_18", "4"), ["door_18", "BEDROOM 4"]),
    ("audit_unreachable_space_fail", "unreachable_space", ("4",), ["BEDROOM 4", "entrance"]),
    ("audit_no_entrance_fail", "no_entrance", (), ["ENTRANCE_DOOR"]),
    ("audit_no_kitchen_fail", "no_kitchen", (), ["KITCHEN"]),
    ("audit_invalid_geometry_fail", "invalid_geometry", ("5",), ["STOREROOM area 5", "Self-intersection"]),
    ("audit_overlapping_spaces_fail", "overlapping_spaces", ("1", "3"),
     ["CORRIDOR 1", "BATHROOM 3", "0.60 m²"]),
    ("audit_duplicate_element_fail", "duplicate_element", ("door_12", "door_18"),
     ["door_18", "on top of door_12", "1 mm"]),
    ("audit_feature_outside_area_fail", "feature_outside_area", ("sink_18", "2"),
     ["sink_18", "99.95 m", "KITCHEN 2", "0.10 m"]),
]


@pytest.mark.parametrize("name, rule_id, elements, words", FAILING, ids=[f[0] for f in FAILING])
def test_each_failing_fixture_fails_its_rule_and_only_it(fixture_plan, name, rule_id, elements, words):
    plan = fixture_plan(name)
    result = audit_plan(plan)
    assert result.failed_rules == (rule_id,), [f.message for f in result.findings]
    assert not result.passed
    (finding,) = result.findings
    assert finding.rule == rule_id
    assert finding.plan == plan.key
    assert finding.elements == elements
    for word in words:
        assert word in finding.message, (word, finding.message)
    # Every other rule was checked and passed.
    assert set(result.rules_checked) == set(GEOMETRIC_RULES)


def test_every_rule_has_a_failing_fixture():
    assert {f[1] for f in FAILING} == set(GEOMETRIC_RULES)


# --- blocked_doorway ----------------------------------------------------------------


def test_blocked_doorway_message_reads_as_the_example(fixture_plan):
    (finding,) = audit_plan(fixture_plan("audit_blocked_doorway_fail"), ["blocked_doorway"]).findings
    assert finding.message == (
        "door_13 (0.80 m) between CORRIDOR 1 and BEDROOM 4: its clear zone is blocked by "
        "BUILT_IN_FURNITURE feature built_in_furniture_18 within 0.8 m of the door face"
    )


def test_a_column_in_front_of_a_door_blocks_it(fixture_plan):
    plan = fixture_plan("audit_good")
    # 0.5 m in front of the kitchen door (x 4.7, y 1.8-2.6), on the kitchen side.
    column = Separator("column_99", COLUMN, box(5.2, 2.0, 5.5, 2.3))
    result = audit_plan(with_changes(plan, separators=plan.separators + (column,)), ["blocked_doorway"])
    (finding,) = result.findings
    assert finding.elements == ("door_12", "column_99")
    assert "KITCHEN 2" in finding.message and "column_99" in finding.message


def test_an_obstacle_beyond_the_clear_depth_is_fine(fixture_plan):
    plan = fixture_plan("audit_good")
    # The bedroom door's face is at y 3.1; 0.8 m beyond it is y 3.9.
    wardrobe = Feature("wardrobe", "BUILT_IN_FURNITURE", box(3.0, 3.95, 4.2, 4.55), "4")
    result = audit_plan(with_changes(plan, features=plan.features + (wardrobe,)), ["blocked_doorway"])
    assert result.passed


def test_the_outer_face_of_an_entrance_door_is_not_checked(fixture_plan):
    plan = fixture_plan("audit_good")
    # A bench on the landing, just outside the entrance (y < -0.2), over no space of the plan.
    bench = Feature("bench", "BUILT_IN_FURNITURE", box(3.1, -0.7, 4.1, -0.3), None)
    result = audit_plan(with_changes(plan, features=plan.features + (bench,)), ["blocked_doorway"])
    assert result.passed


def test_a_feature_inside_the_entrance_blocks_it(fixture_plan):
    plan = fixture_plan("audit_good")
    shoes = Feature("shoe_cabinet", "BUILT_IN_FURNITURE", box(3.3, 0.2, 4.3, 0.6), "1")
    result = audit_plan(with_changes(plan, features=plan.features + (shoes,)), ["blocked_doorway"])
    (finding,) = result.findings
    assert finding.elements == ("entrance_door_10", "shoe_cabinet")
    assert "into CORRIDOR 1" in finding.message


def test_door_width_thresholds_accept_generated_door_widths():
    # Generated plans draw interior doors 0.8-0.9 m and entrances 0.9-1.0 m;
    # their defects are doors under 0.6 m.
    assert thresholds.MIN_DOOR_WIDTH <= 0.8 and thresholds.MIN_ENTRANCE_DOOR_WIDTH <= 0.9
    assert thresholds.MIN_DOOR_WIDTH > 0.6



def _good_flat_with(tmp_path, old: str, new: str):
    """audit_good.csv with one piece of its text replaced, read by the Swiss Dwellings reader."""
    text = (FIXTURES / "audit_good.csv").read_text()
    assert text.count(old) == 1
    path = tmp_path / "flat.csv"
    path.write_text(text.replace(old, new))
    (plan,), rejected = read_plans(path)
    assert rejected.empty
    return plan


ENTRANCE = "POLYGON ((3.1 -0.2, 4.1 -0.2, 4.1 0, 3.1 0, 3.1 -0.2))"


def test_an_entrance_door_exactly_0_80_m_wide_is_wide_enough(tmp_path):
    # Drawn from x 5.15 to 5.95 (into the kitchen): 5.95 - 5.15 is 0.7999999999999998 in floats.
    assert 5.95 - 5.15 < thresholds.MIN_ENTRANCE_DOOR_WIDTH
    plan = _good_flat_with(tmp_path, ENTRANCE, "POLYGON ((5.15 -0.2, 5.95 -0.2, 5.95 0, 5.15 0, 5.15 -0.2))")
    assert plan.entrance_doors[0].connects == ("2",)
    result = audit_plan(plan)
    assert result.passed, [f.message for f in result.findings]


def test_an_entrance_door_0_79_m_wide_is_too_narrow(tmp_path):
    plan = _good_flat_with(tmp_path, ENTRANCE, "POLYGON ((5.15 -0.2, 5.94 -0.2, 5.94 0, 5.15 0, 5.15 -0.2))")
    result = audit_plan(plan)
    assert result.failed_rules == ("blocked_doorway",)
    (finding,) = result.findings
    assert finding.message == (
        "entrance_door_10 (0.79 m) into KITCHEN 2 is narrower than the 0.80 m entrance doors need: widen it"
    )


_MM = thresholds.TOLERANCE_M


@given(threshold=st.floats(0.01, 100), offset=st.floats(-0.999, 0.999))
def test_a_measure_within_the_tolerance_meets_its_threshold(threshold, offset):
    value = threshold + offset * _MM
    assert not thresholds.below(value, threshold) and not thresholds.above(value, threshold)


@given(threshold=st.floats(0.01, 100), gap=st.floats(1.001, 1e4))
def test_a_measure_beyond_the_tolerance_decides(threshold, gap):
    assert thresholds.below(threshold - gap * _MM, threshold)
    assert thresholds.above(threshold + gap * _MM, threshold)
    assert not thresholds.above(threshold - gap * _MM, threshold)


# --- duplicate_element and feature_outside_area ------------------------------------------------


def test_a_whole_file_written_twice_fails_only_duplicate_element(tmp_path):
    lines = (FIXTURES / "audit_good.csv").read_text().splitlines()
    path = tmp_path / "twice.csv"
    path.write_text("\n".join(lines + lines[1:]) + "\n")
    (plan,), rejected = read_plans(path)
    # The second copy of each area is rejected for its area_id; every other row is doubled.
    assert set(rejected["reason"]) == {"duplicate_area_id"} and len(rejected) == 4
    result = audit_plan(plan)
    assert result.failed_rules == ("duplicate_element",)
    copies = {f.elements for f in result.findings}
    n = len(lines) - 1
    assert copies == {(f"{kind}_{row}", f"{kind}_{row + n}") for kind, row in _non_area_rows(lines)}


def _non_area_rows(lines):
    for row, line in enumerate(lines[1:], start=2):
        entity, kind = line.split(",")[8:10]
        if entity != "area":
            yield kind.lower(), row


def test_elements_of_another_kind_or_a_mm_apart_are_not_duplicates(fixture_plan):
    plan = fixture_plan("audit_good")
    door = plan.doors[0]
    window = dataclasses.replace(door, id="window_90", kind="WINDOW")
    moved = dataclasses.replace(door, id="door_91", polygon=shapely_translate(door.polygon, 0.002))
    near = dataclasses.replace(door, id="door_92", polygon=shapely_translate(door.polygon, 0.0005))
    result = audit_plan(with_changes(plan, openings=plan.openings + (window, moved)), ["duplicate_element"])
    assert result.passed
    result = audit_plan(with_changes(plan, openings=plan.openings + (near,)), ["duplicate_element"])
    assert [f.elements for f in result.findings] == [(door.id, "door_92")]


def shapely_translate(polygon, dx):
    from shapely import affinity

    return affinity.translate(polygon, xoff=dx)


def test_a_feature_reaching_into_the_wall_is_inside_its_area(fixture_plan):
    plan = fixture_plan("audit_good")
    tolerance = thresholds.FEATURE_AREA_TOLERANCE
    # A cupboard in the bedroom (y 3.1-6) drawn into the north wall, just within the tolerance, then beyond it.
    inside = Feature("cupboard", "BUILT_IN_FURNITURE", box(5, 5.4, 6, 6 + tolerance), "4")
    assert audit_plan(with_changes(plan, features=plan.features + (inside,)), ["feature_outside_area"]).passed
    beyond = Feature("cupboard", "BUILT_IN_FURNITURE", box(5, 5.4, 6, 6.15), "4")
    (finding,) = audit_plan(with_changes(plan, features=plan.features + (beyond,)), ["feature_outside_area"]).findings
    assert finding.elements == ("cupboard", "4")
    assert "0.15 m beyond BEDROOM 4" in finding.message


def test_a_feature_naming_an_area_the_plan_lacks_is_reported(fixture_plan):
    plan = fixture_plan("audit_good")
    stray = Feature("sink_77", "SINK", box(5, 1, 5.5, 1.5), "9")
    (finding,) = audit_plan(with_changes(plan, features=plan.features + (stray,)), ["feature_outside_area"]).findings
    assert finding.elements == ("sink_77",)
    assert "names area 9, which the plan does not have" in finding.message


# --- no_fridge_space ----------------------------------------------------------------


def _single_space_plan(subtype: str, polygon, features=()) -> Plan:
    return Plan(PlanIds(1, 1, 1, 1, "k"), (Space("7", subtype, polygon),), features=tuple(features))


def test_a_tiny_kitchen_is_too_small_for_a_fridge():
    plan = _single_space_plan("KITCHEN", box(0, 0, 1.2, 1.4))
    (finding,) = audit_plan(plan, ["no_fridge_space"]).findings
    assert finding.elements == ("7",)
    assert "KITCHEN 7 (1.7 m²) is too small" in finding.message


def test_a_kitchen_just_deep_enough_fits_a_fridge():
    depth = thresholds.FRIDGE_FOOTPRINT[1] + thresholds.FRIDGE_FRONT_CLEARANCE
    plan = _single_space_plan("KITCHEN", box(0, 0, 0.7, depth + 0.01))
    assert audit_plan(plan, ["no_fridge_space"]).passed
    search = search_fridge_position(plan, 0)
    assert search.free > 0 and search.position is not None


def test_an_open_kitchen_is_a_living_room_holding_the_counter():
    counter = Feature("counter", "KITCHEN", box(0, 0, 1.0, 1.6), "7")
    cramped = _single_space_plan("LIVING_DINING", box(0, 0, 1.0, 1.6), [counter])
    (finding,) = audit_plan(cramped, ["no_fridge_space"]).findings
    assert "LIVING_DINING 7" in finding.message
    roomy = _single_space_plan("LIVING_DINING", box(0, 0, 4, 4), [counter])
    assert audit_plan(roomy, ["no_fridge_space"]).passed


def test_a_living_room_without_counter_is_not_a_kitchen():
    plan = _single_space_plan("LIVING_ROOM", box(0, 0, 1, 1))
    assert audit_plan(plan, ["no_fridge_space"]).passed  # no_kitchen's business


def test_a_kitchen_split_by_a_joint_in_its_wall_still_fits_a_fridge():
    # The only free wall (y = 0) is drawn as two collinear edges; the room is just deep enough for
    # the catalog's fridge and the clear floor in front of it.
    width, depth, clearance = fridge_size()
    w, d = round(width + 0.2, 3), round(depth + clearance + 0.05, 3)
    split = Polygon([(0, 0), (w / 2, 0), (w, 0), (w, d), (0, d)])
    assert split.equals(box(0, 0, w, d))
    plan = _single_space_plan("KITCHEN", split)
    assert audit_plan(plan, ["no_fridge_space"]).passed


# --- registry -------------------------------------------------------------------------


def test_a_rule_that_raises_becomes_an_invalid_geometry_finding(fixture_plan):
    registry = RuleRegistry()

    @registry.rule("always_breaks", description="raises on every plan")
    def always_breaks(plan):
        raise ValueError("ring not closed")

    @registry.rule("never_finds", description="finds nothing")
    def never_finds(plan):
        return []

    plan = fixture_plan("audit_good")
    result = registry.audit_plan(plan)
    (finding,) = result.findings
    assert finding.rule == "invalid_geometry"
    assert finding.elements == ()
    assert "always_breaks" in finding.message and "ring not closed" in finding.message
    assert result.failed_rules == ("invalid_geometry",)
    assert set(result.rules_checked) == {"always_breaks", "never_finds", "invalid_geometry"}


def test_temporary_rules_in_the_main_registry_are_removed_afterwards(fixture_plan):
    plan = fixture_plan("audit_good")
    with audits.REGISTRY.temporary_rules() as registry:

        @registry.rule("broken_for_a_while", description="raises")
        def broken(plan):
            raise RuntimeError("boom")

        result = audit_plan(plan)
        assert result.failed_rules == ("invalid_geometry",)
    assert "broken_for_a_while" not in RULES
    assert audit_plan(plan).passed


def test_registering_a_rule_twice_is_an_error():
    registry = RuleRegistry()
    registry.rule("x", description="x")(lambda plan: [])
    with pytest.raises(ValueError):
        registry.rule("x", description="x")(lambda plan: [])


def test_audit_runs_only_the_rules_asked_for(fixture_plan):
    result = audit_plan(fixture_plan("audit_no_entrance_fail"), ["no_kitchen"])
    assert result.rules_checked == ("no_kitchen",) and result.passed
    with pytest.raises(KeyError):
        audit_plan(fixture_plan("audit_good"), ["no_such_rule"])


def test_a_plan_with_nothing_in_it_is_audited_without_errors():
    plan = Plan(PlanIds(1, 1, 1, 1, "empty"), ())
    result = audit_plan(plan)
    assert set(result.failed_rules) == {"no_entrance", "no_shower_or_bath", "no_kitchen"}


# --- results and records ----------------------------------------------------------------


def test_records_have_one_row_per_finding_and_one_per_clean_rule(fixture_plan):
    plan = fixture_plan("audit_blocked_doorway_fail")
    records = audit_plan(plan).to_records()
    assert all(tuple(r) == AUDIT_COLUMNS for r in records)
    assert len(records) == len(GEOMETRIC_RULES)
    failing = [r for r in records if not r["passed"]]
    assert failing == [
        {
            "plan": plan.key,
            "rule": "blocked_doorway",
            "passed": False,
            "element": "door_13,built_in_furniture_18",
            "message": failing[0]["message"],
        }
    ]
    passing = [r for r in records if r["passed"]]
    assert {r["rule"] for r in passing} == set(GEOMETRIC_RULES) - {"blocked_doorway"}
    assert all(r["element"] == "" and r["message"] == "" for r in passing)


def test_several_findings_of_one_rule_make_several_rows():
    result = AuditResult(
        "p",
        (Finding("a", "p", ("x",), "x is wrong"), Finding("a", "p", ("y",), "y is wrong")),
        ("a", "b"),
    )
    records = result.to_records()
    assert [(r["rule"], r["passed"], r["element"]) for r in records] == [
        ("a", False, "x"),
        ("a", False, "y"),
        ("b", True, ""),
    ]


def test_later_stages_add_findings(fixture_plan):
    plan = fixture_plan("audit_good")
    result = audit_plan(plan)
    furnished = result.with_findings([], rules_checked=["furnish_failed"])
    assert furnished.passed and "furnish_failed" in furnished.rules_checked
    failed = result.with_findings([Finding("furnish_failed", plan.key, ("2",), "no fridge fits KITCHEN 2")])
    assert failed.failed_rules == ("furnish_failed",)
    assert len(failed.to_records()) == len(GEOMETRIC_RULES) + 1
    with pytest.raises(ValueError):
        result.with_findings([Finding("furnish_failed", "another plan", (), "")])


def test_findings_from_other_stages_stand_alone():
    result = extra_findings("p", [Finding("furnish_failed", "p", ("3",), "bed does not fit ROOM 3")])
    assert result.failed_rules == ("furnish_failed",)
    assert result.to_records()[0]["element"] == "3"


def test_a_row_rejected_at_ingest_is_an_invalid_geometry_finding():
    finding = finding_from_rejection("1-2-abc", 17, "Self-intersection[1 1]")
    assert finding.rule == "invalid_geometry"
    assert finding.elements == ("row_17",)
    assert "row 17" in finding.message and "Self-intersection" in finding.message
    assert extra_findings("1-2-abc", [finding]).to_records()[0]["passed"] is False


# --- thresholds -----------------------------------------------------------------------------


def test_every_threshold_is_in_the_docstring_table():
    names = [n for n in vars(thresholds) if re.fullmatch(r"[A-Z][A-Z_]+", n)]
    assert len(names) >= 10
    for name in names:
        assert name in thresholds.__doc__, name
