"""Ingest: plan tables written from a Swiss Dwellings file, reloadable and reproducible."""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pyarrow.parquet as pq
import pytest

from homeloop.core.io import sha256_file
from homeloop.pipeline.ingest import (
    ELEMENTS_FILE,
    PLANS_FILE,
    REJECTED_FILE,
    count_rows,
    ingest,
    load_plans,
    load_rejections,
)
from homeloop.pipeline.sources.swiss_dwellings import SourceError, read_plans, scan_source
from homeloop.pipeline.sources.synthetic import generate

from conftest import FIXTURES

OUTPUTS = (PLANS_FILE, ELEMENTS_FILE, REJECTED_FILE)


@pytest.fixture
def mixed_source(tmp_path):
    """One file holding several fixtures' rows: good plans, bad rows, a rejected plan."""
    parts = ["sd_split_plan", "sd_self_intersecting_area", "sd_malformed_wkt", "sd_shared_plan_floors"]
    lines = [(FIXTURES / f"{name}.csv").read_text().splitlines() for name in parts]
    body = []
    for site, rows in enumerate(lines, start=1):
        # A site of its own per fixture, so that plan keys stay apart.
        body += [row.replace(",1,10,", f",{site},10,", 1) for row in rows[1:]]
    path = tmp_path / "mixed.csv"
    path.write_text("\n".join([lines[0][0], *body]) + "\n")
    return path


def opening_links(plans):
    return {p.key: [(o.id, o.connects) for o in p.openings] for p in plans}


def test_ingest_writes_the_three_tables_and_reconciles(mixed_source, tmp_path):
    seen: list[int] = []
    summary = ingest(mixed_source, tmp_path / "out", progress=seen.append)
    assert summary.reconciles
    assert summary.rows_in == count_rows(mixed_source) == sum(seen) == 15 + 15 + 11 + 22
    assert summary.plans == 5 and summary.plans_rejected == 1
    assert summary.rejected_by_reason == {
        "invalid_geometry": 11,
        "malformed_wkt": 1,
        "repeated_floor_layout": 11,
    }
    assert summary.to_dict()["reconciles"] is True
    for name in OUTPUTS:
        assert (tmp_path / "out" / name).is_file()
    plans_table = gpd.read_parquet(tmp_path / "out" / PLANS_FILE)
    assert list(plans_table["plan"]) == sorted(plans_table["plan"])
    assert plans_table.geometry.notna().all() and (plans_table.geometry.area > 0).all()
    rejected = load_rejections(tmp_path / "out")
    assert len(rejected) == summary.rows_rejected
    assert list(rejected.columns[:9]) == [
        "row", "plan", "site_id", "floor_id", "apartment_id", "entity_type", "field", "reason", "message"
    ]
    elements = gpd.read_parquet(tmp_path / "out" / ELEMENTS_FILE)
    assert len(elements) == summary.rows_used


def test_round_trip_gives_the_plans_read_directly(mixed_source, tmp_path):
    ingest(mixed_source, tmp_path / "out")
    direct, _ = read_plans(mixed_source)
    loaded = load_plans(tmp_path / "out")
    assert [p.summary() for p in loaded] == [p.summary() for p in direct]
    assert opening_links(loaded) == opening_links(direct)
    assert [[f.space_id for f in p.features] for p in loaded] == [[f.space_id for f in p.features] for p in direct]
    plans_table = gpd.read_parquet(tmp_path / "out" / PLANS_FILE)
    for plan, footprint in zip(direct, plans_table.geometry):
        assert footprint.equals_exact(plan.footprint, 0)


def test_plan_table_rows_are_the_plans_own_summaries_and_footprints(tmp_path):
    source = tmp_path / "sites.csv"
    generate(source, plans=12, sites=3, seed=11)
    ingest(source, tmp_path / "out", chunk_bytes=20_000)
    direct, _ = read_plans(source)
    table = gpd.read_parquet(tmp_path / "out" / PLANS_FILE)
    assert len(direct) >= 10
    expected = pd.DataFrame([p.summary() for p in direct])
    pd.testing.assert_frame_equal(pd.DataFrame(table.drop(columns="geometry")), expected)
    for plan, footprint in zip(direct, table.geometry):
        assert footprint.equals_exact(plan.footprint, 0)


def test_load_plans_by_key(mixed_source, tmp_path):
    ingest(mixed_source, tmp_path / "out")
    direct, _ = read_plans(mixed_source)
    wanted = direct[1].key
    (plan,) = load_plans(tmp_path / "out", keys=[wanted])
    assert plan.summary() == direct[1].summary()
    assert load_plans(tmp_path / "out", keys=[]) == []
    assert load_plans(tmp_path / "out", keys=["9-9-none"]) == []


def test_held_table_gives_the_plans_of_a_filtered_read_and_follows_a_rewrite(mixed_source, tmp_path):
    ingest(mixed_source, tmp_path / "out")
    keys = [p.key for p in load_plans(tmp_path / "out")]
    # Some plans, spread over the file and out of order, as the homes stage asks for them.
    some = keys[::3][::-1] + ["9-9-none"]
    held = load_plans(tmp_path / "out", keys=some, hold=True)
    filtered = load_plans(tmp_path / "out", keys=some)
    assert [p.key for p in held] == sorted(keys[::3])
    assert held == filtered
    # The file rewritten in place by another ingest (of fewer plans): the held table is not served.
    plans, _ = read_plans(mixed_source)
    first = plans[0]
    smaller = tmp_path / "one.csv"
    frame = pd.read_csv(mixed_source)
    frame[frame["apartment_id"].astype(str) == first.ids.apartment_id].to_csv(smaller, index=False)
    ingest(smaller, tmp_path / "out")
    now = load_plans(tmp_path / "out")
    assert 0 < len(now) < len(keys)
    assert load_plans(tmp_path / "out", keys=keys, hold=True) == now
    assert [p.key for p in load_plans(tmp_path / "out", keys=some, hold=True)] == \
        sorted({p.key for p in now} & set(some))


def test_a_table_with_a_plans_rows_apart_is_held_as_well(mixed_source, tmp_path):
    """An element table written by other means may interleave plans: held, it still gives the
    plans a filtered read gives."""
    import numpy as np
    import pyarrow.parquet as pq

    ingest(mixed_source, tmp_path / "out")
    table = pq.read_table(tmp_path / "out" / ELEMENTS_FILE)
    order = np.r_[np.arange(0, table.num_rows, 2), np.arange(1, table.num_rows, 2)]  # every plan split
    (tmp_path / "mixed").mkdir()
    pq.write_table(table.take(order), tmp_path / "mixed" / ELEMENTS_FILE)
    keys = sorted(set(table.column("plan").to_pylist()))
    held = load_plans(tmp_path / "mixed", keys=keys[1::2], hold=True)
    assert held == load_plans(tmp_path / "mixed", keys=keys[1::2])
    assert [p.key for p in held] == keys[1::2]


def test_outputs_are_byte_identical_across_ingests_and_chunk_sizes(mixed_source, tmp_path):
    ingest(mixed_source, tmp_path / "a")
    ingest(mixed_source, tmp_path / "b", chunk_bytes=300)
    for name in OUTPUTS:
        assert sha256_file(tmp_path / "a" / name) == sha256_file(tmp_path / "b" / name), name


def test_index_given_to_ingest_is_used_and_usages_none_keeps_all(tmp_path):
    source = FIXTURES / "sd_commercial.csv"
    index = scan_source(source, usages=None)
    assert index.rows == 15
    summary = ingest(source, tmp_path / "out", index=index)
    assert summary.plans == 2 and summary.rows_rejected == 0


def test_a_failed_ingest_leaves_no_tables(tmp_path):
    with pytest.raises(SourceError):
        ingest(FIXTURES / "sd_missing_geometry.csv", tmp_path / "out")
    assert not any((tmp_path / "out").glob("*.parquet")) if (tmp_path / "out").exists() else True


def test_element_table_is_geoparquet_with_the_element_columns(mixed_source, tmp_path):
    ingest(mixed_source, tmp_path / "out")
    schema = pq.read_schema(tmp_path / "out" / ELEMENTS_FILE)
    assert b"geo" in schema.metadata
    elements = gpd.read_parquet(tmp_path / "out" / ELEMENTS_FILE)
    openings = elements[elements["entity_type"] == "opening"]
    assert openings["connects"].str.len().gt(0).all()
    assert pd.api.types.is_integer_dtype(elements["row"])


def test_row_groups_do_not_depend_on_chunking(mixed_source, tmp_path, monkeypatch):
    import homeloop.pipeline.ingest as ingest_module

    monkeypatch.setattr(ingest_module, "ROW_GROUP_ROWS", 7)
    ingest(mixed_source, tmp_path / "a")
    ingest(mixed_source, tmp_path / "b", chunk_bytes=300)
    assert pq.ParquetFile(tmp_path / "a" / ELEMENTS_FILE).metadata.num_row_groups > 3
    for name in OUTPUTS:
        assert sha256_file(tmp_path / "a" / name) == sha256_file(tmp_path / "b" / name), name


def test_rejected_rows_carry_their_line_numbers_through_blank_lines_and_quotes(tmp_path):
    lines = (FIXTURES / "two_rooms.csv").read_bytes().rstrip(b"\n").split(b"\n")
    lines[3] = lines[3].replace(b"((-0.2 -0.2, 7.2 -0.2,", b"((-0.2 -0.2,\n 7.2 -0.2,")  # row 4 spans lines 4-5
    lines[5] = lines[5].replace(b'3, -0.2 0))"', b"3, -0.2 0))")  # row 6, now line 8: a quote never closed
    lines[10] = lines[10].replace(b"WINDOW", b"WIN\x00DOW")  # row 11, now line 13: a NUL byte
    body = [*lines[:3], b"", *lines[3:]]  # line 4 is blank
    source = tmp_path / "messy.csv"
    source.write_bytes(b"\n".join(body) + b"\n")
    seen: list[int] = []
    summary = ingest(source, tmp_path / "out", progress=seen.append)
    assert summary.reconciles
    assert summary.rows_in == count_rows(source) == sum(seen) == 11
    rejected = load_rejections(tmp_path / "out")
    assert rejected[["row", "reason", "field"]].values.tolist() == [
        [8, "unreadable_row", "geometry"],
        [13, "nul_byte", None],
    ]
    elements = pq.read_table(tmp_path / "out" / ELEMENTS_FILE).to_pandas()
    assert sorted(elements["row"]) == [2, 3, 5, 7, 9, 10, 11, 12, 14]
