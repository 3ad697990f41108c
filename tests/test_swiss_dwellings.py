"""Reading Swiss Dwellings geometries.csv: one hand-written fixture per case.

Rows are line numbers in the file (the header is line 1). Most fixtures are
``two_rooms.csv`` (rows 2-12: living room 1, bedroom 2, five walls, a door, an
entrance door, a window, a built-in cupboard in space 1) with one row changed.
"""

from __future__ import annotations

import csv
import io
import logging

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from homeloop.pipeline.sources.csv_lines import scan_lines
from homeloop.pipeline.sources.synthetic import generate
from homeloop.core.plan import frame_from_plans
from homeloop.pipeline.sources.swiss_dwellings import (
    SourceError,
    plan_rejections,
    read_batches,
    read_layout,
    read_plans,
    scan_source,
)

from conftest import FIXTURES, load_fixture_plans

PLAN_A = "1-1000-aaaa0000000000000000000000000001"
PLAN_B = "1-1000-bbbb0000000000000000000000000002"
TWO_ROOMS_ROWS = 11


def read(name: str, **options):
    return read_plans(FIXTURES / f"{name}.csv", **options)


def rows_in(name: str) -> int:
    with open(FIXTURES / f"{name}.csv") as fh:
        return sum(1 for line in fh if line.strip()) - 1


def reconciles(name: str, plans, rejected) -> bool:
    used = sum(len(p.spaces) + len(p.separators) + len(p.openings) + len(p.features) for p in plans)
    return rows_in(name) == used + len(rejected)


def only_rejection(rejected: pd.DataFrame):
    assert len(rejected) == 1, rejected
    return rejected.iloc[0]


def summaries(plans):
    return [p.summary() for p in plans]


def element_rows(plan) -> list[int]:
    return sorted(e.row for e in (*plan.spaces, *plan.separators, *plan.openings, *plan.features))


# --- well-formed files ----------------------------------------------------------------


def test_two_rooms_reads_like_the_reference_loader():
    plans, rejected = read_plans(FIXTURES / "two_rooms.csv")
    reference = load_fixture_plans(FIXTURES / "two_rooms.csv")
    assert rejected.empty
    assert summaries(plans) == summaries(reference)
    assert [o.connects for o in plans[0].openings] == [o.connects for o in reference[0].openings]
    assert [f.space_id for f in plans[0].features] == ["1"]


def test_columns_in_another_order_give_the_same_plan():
    plans, rejected = read("sd_reordered_columns")
    reference, _ = read_plans(FIXTURES / "two_rooms.csv")
    assert rejected.empty
    assert summaries(plans) == summaries(reference)
    pd.testing.assert_frame_equal(frame_from_plans(plans), frame_from_plans(reference))


def test_v1_layout_reads_each_floor_as_its_own_plan():
    layout = read_layout(FIXTURES / "sd_v1_layout.csv")
    assert layout.version == 1
    plans, rejected = read("sd_v1_layout")
    assert rejected.empty
    (plan,) = plans
    assert plan.ids.plan_id == plan.ids.floor_id == 1000
    assert plan.elevation == 0.0 and plan.height == 2.6
    reference, _ = read_plans(FIXTURES / "two_rooms.csv")
    assert plan.summary() | {"plan_id": 100} == reference[0].summary()


def test_missing_geometry_column_is_a_source_error_naming_file_and_column():
    with pytest.raises(SourceError) as info:
        read("sd_missing_geometry")
    message = str(info.value)
    assert "\n" not in message
    assert "sd_missing_geometry.csv" in message and "geometry" in message


def test_unreadable_or_non_csv_file_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="cannot read"):
        read_plans(tmp_path / "absent.csv")
    binary = tmp_path / "image.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(SourceError, match="image.csv"):
        read_plans(binary)
    wrong = tmp_path / "other.csv"
    wrong.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(SourceError, match="missing column"):
        read_plans(wrong)


# --- rows rejected, the rest read -------------------------------------------------------


@pytest.mark.parametrize(
    "name, row, field, reason",
    [
        ("sd_malformed_wkt", 6, "geometry", "malformed_wkt"),
        ("sd_non_numeric_id", 6, "unit_id", "not_a_number"),
        ("sd_empty_polygon", 12, "geometry", "empty_geometry"),
        ("sd_opening_not_in_wall", 11, "geometry", "opening_not_in_wall"),
        ("sd_extra_field", 6, None, "wrong_field_count"),
        ("sd_unknown_subtype", 6, "entity_subtype", "unknown_subtype"),
        ("sd_non_positive_height", 6, "height", "non_positive_height"),
    ],
)
def test_a_bad_row_is_rejected_and_the_rest_of_the_plan_is_read(name, row, field, reason):
    plans, rejected = read(name)
    rejection = only_rejection(rejected)
    assert (rejection["row"], rejection["field"], rejection["reason"]) == (row, field, reason)
    assert rejection["plan"] == PLAN_A and rejection["level"] == "row"
    assert rejection["message"]
    (plan,) = plans
    assert element_rows(plan) == [r for r in range(2, 2 + TWO_ROOMS_ROWS) if r != row]
    assert reconciles(name, plans, rejected)


def test_rows_after_a_skipped_row_keep_their_line_numbers():
    plans, _ = read("sd_extra_field")
    walls = [s.id for s in plans[0].separators]
    assert walls == ["wall_4", "wall_5", "wall_7", "wall_8"]
    assert plans[0].doors[0].id == "door_9"


def test_an_unknown_subtype_is_rejected_naming_the_known_ones():
    plans, rejected = read("sd_unknown_subtype")
    rejection = only_rejection(rejected)
    assert rejection["message"] == "separator subtype 'WALLX' is not a known separator subtype (COLUMN, RAILING, WALL)"
    # Not kept as a new kind of separator.
    assert {s.kind for s in plans[0].separators} == {"WALL"}


@pytest.mark.parametrize("row, old, new, field, reason, words", [
    (6, '",0.0,2.6', '",0.0,-2.6', "height", "non_positive_height", "height -2.6 m is not above 0"),
    (3, '",0.0,2.6', '",inf,2.6', "elevation", "not_a_number", "elevation 'inf' is not a finite number"),
    (3, ",BEDROOM,", ",BEDROOMX,", "entity_subtype", "unknown_subtype",
     "area subtype 'BEDROOMX' is not a known area subtype (AIR, ARCADE, "),
])
def test_heights_elevations_and_area_subtypes_are_checked_per_row(tmp_path, row, old, new, field, reason, words):
    lines = (FIXTURES / "two_rooms.csv").read_text().splitlines()
    assert old in lines[row - 1]
    lines[row - 1] = lines[row - 1].replace(old, new)
    path = tmp_path / "edited.csv"
    path.write_text("\n".join(lines) + "\n")
    plans, rejected = read_plans(path)
    rejection = only_rejection(rejected)
    assert (rejection["row"], rejection["field"], rejection["reason"]) == (row, field, reason)
    assert rejection["message"].startswith(words), rejection["message"]
    assert element_rows(plans[0]) == [r for r in range(2, 2 + TWO_ROOMS_ROWS) if r != row]


def test_feature_outside_every_space_is_rejected_others_find_their_space():
    plans, rejected = read("sd_feature_outside")
    rejection = only_rejection(rejected)
    assert (rejection["row"], rejection["field"], rejection["reason"]) == (13, "geometry", "feature_outside_spaces")
    spaces = {f.kind: f.space_id for f in plans[0].features}
    # Row 14 has no area_id and lies in the bedroom; row 15 names an area the plan lacks.
    assert spaces == {"BUILT_IN_FURNITURE": "1", "BATHTUB": "2", "SHOWER": "1"}
    assert reconciles("sd_feature_outside", plans, rejected)


def test_rows_of_no_apartment_are_counted_not_read():
    plans, rejected = read("sd_no_apartment")
    assert list(rejected["row"]) == [13, 14]
    assert set(rejected["reason"]) == {"no_apartment"} and set(rejected["field"]) == {"apartment_id"}
    assert rejected["plan"].isna().all()
    assert [p.key for p in plans] == [PLAN_A]
    assert reconciles("sd_no_apartment", plans, rejected)


def test_commercial_unit_is_left_out_unless_its_usage_is_kept():
    plans, rejected = read("sd_commercial")
    assert list(rejected["row"]) == [13, 14, 15, 16]
    assert set(rejected["reason"]) == {"unit_usage_COMMERCIAL"}
    assert set(rejected["field"]) == {"unit_usage"} and set(rejected["plan"]) == {PLAN_B}
    assert [p.key for p in plans] == [PLAN_A]
    assert reconciles("sd_commercial", plans, rejected)
    plans, rejected = read("sd_commercial", usages=("RESIDENTIAL", "COMMERCIAL"))
    assert rejected.empty and [p.key for p in plans] == [PLAN_A, PLAN_B]
    plans, rejected = read("sd_commercial", usages=None)
    assert rejected.empty and len(plans) == 2


def test_self_intersecting_area_rejects_the_whole_plan():
    plans, rejected = read("sd_self_intersecting_area")
    assert [p.key for p in plans] == [PLAN_B]
    assert list(rejected["row"]) == list(range(2, 2 + TWO_ROOMS_ROWS))
    assert set(rejected["reason"]) == {"invalid_geometry"} and set(rejected["level"]) == {"plan"}
    assert set(rejected["plan"]) == {PLAN_A}
    # Every row names the culprit; the culprit row itself carries the field.
    assert rejected["message"].str.contains("row 3").all()
    assert rejected["message"].str.contains("Self-intersection").all()
    culprit = rejected[rejected["field"].notna()]
    assert list(culprit["row"]) == [3] and list(culprit["field"]) == ["geometry"]
    listed = plan_rejections(rejected)
    assert listed[["plan", "reason", "row"]].values.tolist() == [[PLAN_A, "invalid_geometry", 3]]
    assert reconciles("sd_self_intersecting_area", plans, rejected)


def test_floors_sharing_a_plan_keep_only_the_lowest():
    # Floor 1001 (elevation 3.0) is written around floor 1002 (elevation 0.0).
    index = scan_source(FIXTURES / "sd_shared_plan_floors.csv")
    assert index.kept_floor == {(1, 100): 1002} and index.floors_collapsed == 1
    plans, rejected = read("sd_shared_plan_floors")
    assert [p.ids.floor_id for p in plans] == [1002]
    assert set(rejected["reason"]) == {"repeated_floor_layout"} and set(rejected["field"]) == {"floor_id"}
    assert list(rejected["row"]) == [2, 3, 4, 5, 6, 7, 19, 20, 21, 22, 23]
    assert reconciles("sd_shared_plan_floors", plans, rejected)
    plans, rejected = read("sd_shared_plan_floors", keep_all_floors=True)
    assert rejected.empty
    assert sorted(p.ids.floor_id for p in plans) == [1001, 1002]
    upper = next(p for p in plans if p.ids.floor_id == 1001)
    assert upper.elevation == 3.0 and len(upper.spaces) == 2 and len(upper.openings) == 3


# --- chunks and order ------------------------------------------------------------------------


def test_a_plan_split_across_distant_rows_is_assembled():
    plans, rejected = read("sd_split_plan", chunk_bytes=300)
    assert rejected.empty
    by_key = {p.key: p for p in plans}
    assert element_rows(by_key[PLAN_A]) == [2, 3, 4, 5, *range(10, 17)]
    assert element_rows(by_key[PLAN_B]) == [6, 7, 8, 9]
    assert set(by_key[PLAN_A].doors[0].connects) == {"1", "2"}


@pytest.mark.parametrize(
    "name",
    ["sd_split_plan", "sd_shared_plan_floors", "sd_self_intersecting_area", "sd_extra_field", "sd_feature_outside"],
)
def test_tiny_chunks_give_the_same_plans_and_rejections_as_one_chunk(name):
    path = FIXTURES / f"{name}.csv"
    whole = list(read_batches(path))
    assert len(whole) == 1
    tiny = list(read_batches(path, chunk_bytes=300))
    assert len(tiny) > 3
    plans_whole = [p for b in whole for p in b.plans]
    plans_tiny = [p for b in tiny for p in b.plans]
    assert summaries(plans_tiny) == summaries(plans_whole)
    pd.testing.assert_frame_equal(frame_from_plans(plans_tiny), frame_from_plans(plans_whole))
    rejected_whole = pd.concat([b.rejections for b in whole], ignore_index=True)
    rejected_tiny = pd.concat([b.rejections for b in tiny], ignore_index=True)
    pd.testing.assert_frame_equal(rejected_tiny, rejected_whole)
    assert sum(b.rows_read for b in tiny) == rows_in(name)
    assert sum(b.rows_read for b in tiny) == sum(b.rows_used for b in tiny) + len(rejected_tiny)


def test_batch_element_table_is_the_frame_of_its_plans():
    for batch in read_batches(FIXTURES / "sd_split_plan.csv", chunk_bytes=300):
        pd.testing.assert_frame_equal(batch.elements, frame_from_plans(batch.plans))


def test_rejection_records_carry_every_field():
    batch = next(iter(read_batches(FIXTURES / "sd_malformed_wkt.csv")))
    (record,) = batch.rejection_records()
    assert record.row == 6 and record.field == "geometry" and record.reason == "malformed_wkt"
    assert record.plan == PLAN_A and record.site_id == "1" and record.entity_type == "separator"


def test_unknown_entity_type_float_ids_and_a_short_last_row(tmp_path):
    lines = (FIXTURES / "two_rooms.csv").read_text().splitlines()
    lines[1] = lines[1].replace(",1,RESIDENTIAL,area,", ",1.0,RESIDENTIAL,area,")  # area_id written as 1.0
    lines[5] = lines[5].replace(",separator,WALL,", ",partition,WALL,")
    lines[9] = lines[9].replace('",0.0,2.0', '",low,2.0')  # entrance door: elevation not a number
    lines.append("aaaa0000000000000000000000000001,1,10,100")
    path = tmp_path / "mixed.csv"
    path.write_text("\n".join(lines) + "\n")
    plans, rejected = read_plans(path)
    got = list(zip(rejected["row"], rejected["field"], rejected["reason"]))
    assert got == [
        (6, "entity_type", "unknown_entity_type"),
        (10, "elevation", "not_a_number"),
        (13, None, "wrong_field_count"),
    ]
    assert [s.id for s in plans[0].spaces] == ["1", "2"]
    batches = list(read_batches(path))
    assert sum(b.rows_read for b in batches) == 12
    assert sum(b.rows_used for b in batches) + len(rejected) == 12



# --- every row numbered by its line ------------------------------------------------------------

TWO_ROOMS = (FIXTURES / "two_rooms.csv").read_bytes()


def two_rooms_lines() -> list[bytes]:
    return TWO_ROOMS.rstrip(b"\n").split(b"\n")


def write(tmp_path, lines: list[bytes], name: str = "edited.csv", end: bytes = b"\n"):
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + end)
    return path


def read_all(path, **options):
    """Plans, rejections and the rows the batches say they read."""
    batches = list(read_batches(path, **options))
    plans = [p for b in batches for p in b.plans]
    rejected = pd.concat([b.rejections for b in batches], ignore_index=True)
    assert sum(b.rows_read for b in batches) == sum(b.rows_used for b in batches) + len(rejected)
    return plans, rejected, sum(b.rows_read for b in batches)


def all_element_rows(plans) -> list[int]:
    return sorted(r for p in plans for r in element_rows(p))


@pytest.mark.parametrize("chunk_bytes", [None, 300])
def test_blank_lines_are_lines_but_not_rows(tmp_path, chunk_bytes):
    lines = two_rooms_lines()
    # An empty line after line 4, a line of spaces after line 8, two at the end.
    edited = [*lines[:4], b"", *lines[4:8], b"   \t", *lines[8:], b"", b""]
    path = write(tmp_path, edited)
    options = {} if chunk_bytes is None else {"chunk_bytes": chunk_bytes}
    plans, rejected, rows_read = read_all(path, **options)
    assert rejected.empty and rows_read == TWO_ROOMS_ROWS
    assert all_element_rows(plans) == [2, 3, 4, *range(6, 10), *range(11, 15)]
    # Line 6 of the file is the wall that was row 5.
    assert [s.id for s in plans[0].separators][:2] == ["wall_4", "wall_6"]


@pytest.mark.parametrize("chunk_bytes", [None, 300])
def test_a_quoted_field_spanning_lines_is_one_row_numbered_by_its_first(tmp_path, chunk_bytes):
    lines = two_rooms_lines()
    # The wall of row 6 has its geometry broken over lines 6-8; everything after moves down two lines.
    lines[5] = lines[5].replace(b"((-0.2 0, 0 0,", b"((-0.2 0,\n 0 0,\r\n")
    path = write(tmp_path, lines)
    options = {} if chunk_bytes is None else {"chunk_bytes": chunk_bytes}
    plans, rejected, rows_read = read_all(path, **options)
    assert rejected.empty and rows_read == TWO_ROOMS_ROWS
    assert all_element_rows(plans) == [2, 3, 4, 5, 6, *range(9, 15)]
    wall = next(s for s in plans[0].separators if s.row == 6)
    assert wall.polygon.equals(shapely_box(-0.2, 0, 0, 3))


def shapely_box(*bounds):
    from shapely.geometry import box

    return box(*bounds)


def test_an_unterminated_quote_rejects_its_row_alone(tmp_path):
    lines = two_rooms_lines()
    lines[5] = lines[5].replace(b'3, -0.2 0))"', b"3, -0.2 0))")  # the geometry's closing quote lost
    path = write(tmp_path, lines)
    plans, rejected, rows_read = read_all(path)
    assert rows_read == TWO_ROOMS_ROWS
    rejection = only_rejection(rejected)
    assert (rejection["row"], rejection["field"], rejection["reason"]) == (6, "geometry", "unreadable_row")
    assert rejection["plan"] == PLAN_A and rejection["entity_type"] == "separator"
    assert "not closed on its line" in rejection["message"]
    assert all_element_rows(plans) == [r for r in range(2, 2 + TWO_ROOMS_ROWS) if r != 6]


@pytest.mark.parametrize("old, new, row, words", [
    (b'BEDROOM,"POLYGON', b'BEDROOM,"POLYGON"', 3, "the quote closing geometry is followed by ' ', not by a comma"),
    (b'0 2.4))",0.0,2.0', b"0 2.4)),0.0,2.0", 12, "the quote opening geometry is never closed"),
])
def test_a_quote_closed_mid_field_or_never_is_one_unreadable_row(tmp_path, old, new, row, words):
    lines = two_rooms_lines()
    at = row - 1
    assert old in lines[at], lines[at]
    lines[at] = lines[at].replace(old, new)
    plans, rejected, rows_read = read_all(write(tmp_path, lines))
    rejection = only_rejection(rejected)
    assert (rejection["row"], rejection["reason"]) == (row, "unreadable_row")
    assert words in rejection["message"]
    assert rows_read == TWO_ROOMS_ROWS


def test_a_nul_byte_rejects_its_row_alone(tmp_path):
    lines = two_rooms_lines()
    lines[6] = lines[6].replace(b"WALL", b"WA\x00LL")
    plans, rejected, rows_read = read_all(write(tmp_path, lines))
    rejection = only_rejection(rejected)
    assert (rejection["row"], rejection["reason"]) == (7, "nul_byte")
    assert rejection["plan"] == PLAN_A
    assert all_element_rows(plans) == [r for r in range(2, 2 + TWO_ROOMS_ROWS) if r != 7]


def test_a_nul_byte_in_the_header_is_not_a_csv_file(tmp_path):
    lines = two_rooms_lines()
    lines[0] = lines[0].replace(b"site_id", b"site\x00id")
    with pytest.raises(SourceError, match="binary content"):
        read_plans(write(tmp_path, lines))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    path = tmp_path_factory.mktemp("latin1") / "generated.csv"
    generate(path, plans=3, sites=1, seed=5, defect_rate=0.0)
    return path


def test_a_file_with_latin1_rows_is_read_as_cp1252_with_one_warning(generated, tmp_path, caplog):
    lines = generated.read_bytes().rstrip(b"\n").split(b"\n")
    assert len(lines) > 44
    latin1 = [line.replace(b"RESIDENTIAL", "RÉSIDENTIAL".encode("latin-1")) for line in lines[1:44]]
    path = write(tmp_path, [lines[0], *latin1, *lines[44:]], name="latin1.csv")
    with caplog.at_level(logging.WARNING):
        plans, rejected = read_plans(path, usages=None)
    expected, _ = read_plans(generated, usages=None)
    assert rejected.empty
    assert summaries(plans) == summaries(expected)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"{path}: not UTF-8 text; read as cp1252 (Windows Latin-1)"]
    # Read with the residential usage kept, the 43 rows are rejected for their usage, by line.
    _, rejected = read_plans(path)
    usage = rejected[rejected["reason"] == "unit_usage_RÉSIDENTIAL"]
    assert sorted(usage["row"]) == list(range(2, 45))


def test_utf8_text_is_read_as_utf8_without_a_warning(tmp_path, caplog):
    lines = two_rooms_lines()
    lines[2] = lines[2].replace(b"RESIDENTIAL", "RÉSIDENTIAL".encode("utf-8"))
    with caplog.at_level(logging.WARNING):
        _, rejected = read_plans(write(tmp_path, lines))
    assert list(rejected["reason"]) == ["unit_usage_RÉSIDENTIAL"]
    assert not caplog.records
    assert scan_source(write(tmp_path, lines)).encoding == "utf-8"


def test_a_row_that_is_no_cp1252_text_is_rejected_alone(tmp_path):
    lines = two_rooms_lines()
    lines[1] = lines[1].replace(b"RESIDENTIAL", "RÉSIDENTIAL".encode("latin-1"))  # the file is not UTF-8
    lines[2] = lines[2].replace(b"RESIDENTIAL", b"RESIDENTIAL\x81")  # and 0x81 is no cp1252 character
    plans, rejected, rows_read = read_all(write(tmp_path, lines), usages=None)
    rejection = only_rejection(rejected)
    assert (rejection["row"], rejection["reason"]) == (3, "undecodable_row")
    assert "0x81" in rejection["message"]
    assert rows_read == TWO_ROOMS_ROWS


# Cells of generated CSV: plain text, text with commas, doubled quotes or line breaks (quoted).
_cells = st.one_of(
    st.text(alphabet="abc 12.", max_size=6),
    st.text(alphabet='ab,"\n\r ', min_size=1, max_size=8).map(lambda t: '"' + t.replace('"', '""') + '"'),
)
_rows = st.lists(st.lists(_cells, min_size=3, max_size=3), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(rows=_rows, blanks=st.lists(st.booleans(), min_size=12, max_size=12),
       newline=st.sampled_from(["\n", "\r\n"]), chunk_bytes=st.sampled_from([48, 64, 1 << 20]))
def test_line_numbers_match_a_csv_parser(tmp_path_factory, rows, blanks, newline, chunk_bytes):
    """The line scan numbers rows as Python's csv module counts lines, for any
    well-formed file with blank lines and quoted line breaks, in any chunk size
    a row fits in."""
    text = "a,b,c" + newline
    for row, blank in zip(rows, blanks):
        text += (newline if blank else "") + ",".join(row) + newline
    path = tmp_path_factory.mktemp("lines") / "rows.csv"
    path.write_bytes(text.encode())
    expected = []
    reader = csv.reader(io.StringIO(text, newline=""))
    last = 0
    for record in reader:
        if record and reader.line_num > 1:
            expected.append(last + 1)
        last = reader.line_num
    scan = scan_lines(path, ("a", "b", "c"), chunk_bytes=chunk_bytes)
    assert scan.bad == [] and scan.records == len(expected)
    assert scan.line_numbers(range(scan.records)).tolist() == expected


@pytest.mark.parametrize("row", range(2, 2 + TWO_ROOMS_ROWS))
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_a_lost_closing_quote_on_any_row_costs_that_row_only(tmp_path, row, newline):
    lines = two_rooms_lines()
    lines[row - 1] = lines[row - 1].replace(b'))"', b"))")
    path = tmp_path / "lost.csv"
    path.write_bytes(newline.join(lines) + newline)
    scan = scan_lines(path, tuple(lines[0].decode().split(",")))
    assert [(b.line, b.reason, b.field) for b in scan.bad] == [(row, "unreadable_row", "geometry")]
    others = [r for r in range(2, 2 + TWO_ROOMS_ROWS) if r != row]
    assert scan.line_numbers(range(scan.records)).tolist() == others


# --- reading in bulk --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def several_sites(tmp_path_factory):
    """A generated file of plans on several sites, some of whose floors repeat a layout."""
    path = tmp_path_factory.mktemp("sites") / "sites.csv"
    generate(path, plans=12, sites=3, seed=11)
    return path


def test_batch_plan_ids_are_those_of_its_plans(several_sites):
    batches = list(read_batches(several_sites, chunk_bytes=20_000))
    assert len(batches) > 3
    for batch in batches:
        ids = batch.plan_ids
        assert list(ids["plan"]) == [p.key for p in batch.plans]
        for plan, row in zip(batch.plans, ids.itertuples(index=False)):
            assert (row.site_id, row.building_id, row.plan_id, row.floor_id, row.apartment_id) == (
                plan.ids.site_id, plan.ids.building_id, plan.ids.plan_id, plan.ids.floor_id, plan.ids.apartment_id)
            assert row.unit_ids == ",".join(str(u) for u in plan.ids.unit_ids)
            assert row.unit_id == min(plan.ids.unit_ids) and row.elevation == plan.elevation


def test_a_plan_of_two_units_lists_both_in_order(tmp_path):
    lines = two_rooms_lines()
    lines[2] = lines[2].replace(b",5000,", b",4999,")  # the bedroom row: a second, lower unit id
    (batch,) = list(read_batches(write(tmp_path, lines)))
    (plan,) = batch.plans
    assert plan.ids.unit_ids == (4999, 5000)
    assert batch.plan_ids["unit_ids"].tolist() == ["4999,5000"]
    assert set(batch.elements["unit_id"]) == {4999}


def test_a_reading_stopped_early_leaves_no_reader_running(several_sites):
    import threading

    batches = read_batches(several_sites, chunk_bytes=20_000)
    next(batches)
    batches.close()
    assert not [t for t in threading.enumerate() if t.name == f"read {several_sites.name}" and t.is_alive()]


def last_lines(path) -> dict[tuple[int, int, str], int]:
    """The line each plan's last row starts on, read with the csv module."""
    last: dict[tuple[int, int, str], int] = {}
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        before = reader.line_num
        for values in reader:
            start, before = before + 1, reader.line_num
            if len(values) == len(header):  # not a blank line
                record = dict(zip(header, values))
                last[(int(record["site_id"]), int(record["floor_id"]), record["apartment_id"])] = start
    return last


@pytest.mark.parametrize("blank", [b"", b"  "], ids=["empty", "spaces"])
def test_the_index_numbers_plans_last_rows_by_line_whatever_the_blank_lines(several_sites, tmp_path, blank):
    lines = several_sites.read_bytes().rstrip(b"\n").split(b"\n")
    # Blank lines among the rows: an empty one is read past by pyarrow, one of
    # spaces is left out of what it reads; both shift the lines of the rows after.
    edited = [lines[0], *[part for i, line in enumerate(lines[1:]) for part in ([blank, line] if i % 50 == 7 else [line])]]
    path = write(tmp_path, edited)
    index = scan_source(path, usages=None, keep_all_floors=True)
    assert index.last_row == last_lines(path)
    assert index.rows == len(lines) - 1


@pytest.mark.parametrize("apartment", ["../../x", "a/b", "..", ".hidden", "apt 1"])
def test_an_apartment_id_that_cannot_name_a_file_rejects_its_rows(tmp_path, apartment):
    """apartment_id becomes the plan's key, and so its home's folder and files: one that would leave
    the build folder (or name no plain file) is rejected, row by row, before anything is written."""
    with open(FIXTURES / "two_rooms.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    crafted = tmp_path / "crafted.csv"
    with open(crafted, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "apartment_id": apartment} for row in rows)
    plans, rejected = read_plans(crafted)
    assert plans == []
    assert len(rejected) == len(rows)
    assert set(rejected["reason"]) == {"unsafe_id"} and set(rejected["field"]) == {"apartment_id"}
    assert all("cannot name a file" in m for m in rejected["message"])
