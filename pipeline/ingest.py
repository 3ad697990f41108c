"""Ingest: a Swiss Dwellings geometries.csv to the plan tables of a build.

Writes, atomically, under ``out_dir``:

- ``plans.parquet`` (GeoParquet): one row per plan, :meth:`Plan.summary` and
  the plan footprint as geometry, sorted by plan key;
- ``elements.parquet`` (GeoParquet): :func:`homeloop.plan.frame_from_plans` of
  every plan (one row per element, with the spaces each opening connects), so
  later stages reload plans (:func:`load_plans`) without reparsing the CSV;
- ``rejected.parquet``: every row not taken, with the reason, the field at
  fault and a message (see :mod:`homeloop.pipeline.sources.swiss_dwellings`).

Element and rejection tables are written batch by batch to bound memory, in
row groups of a fixed size, so the same input gives the same bytes whatever
the chunk size of the reader.
"""

from __future__ import annotations

import contextlib
import json
from concurrent.futures import ThreadPoolExecutor
import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import shapely

from homeloop.io import atomic_path, write_parquet
from homeloop.plan import Plan, PlanIds, frame_from_plans, plans_from_frame
from homeloop.pipeline.sources.swiss_dwellings import (
    DEFAULT_CHUNK_BYTES,
    DEFAULT_USAGES,
    PLAN_LEVEL,
    REJECTION_SCHEMA,
    SourceError,
    SourceIndex,
    count_rows,
    read_batches,
    scan_source,
)

__all__ = [
    "IngestSummary",
    "SourceError",
    "count_rows",
    "ingest",
    "load_plans",
    "load_rejections",
    "scan_source",
]

PLANS_FILE = "plans.parquet"
ELEMENTS_FILE = "elements.parquet"
REJECTED_FILE = "rejected.parquet"

#: Rows per Parquet row group of the element and rejection tables.
ROW_GROUP_ROWS = 65_536

#: GeoParquet metadata of the element table. Coordinates are metres in each
#: site's local frame, so there is no CRS ("crs": null).
ELEMENTS_GEO_METADATA = {
    "version": "1.0.0",
    "primary_column": "geometry",
    "columns": {"geometry": {"encoding": "WKB", "crs": None, "geometry_types": []}},
}

#: Arrow schema of the element table (``elements.parquet``).
ELEMENTS_SCHEMA = pa.schema(
    [
        ("plan", pa.string()),
        ("site_id", pa.int64()),
        ("building_id", pa.int64()),
        ("plan_id", pa.int64()),
        ("floor_id", pa.int64()),
        ("apartment_id", pa.string()),
        ("unit_id", pa.int64()),
        ("elevation", pa.float64()),
        ("entity_type", pa.string()),
        ("subtype", pa.string()),
        ("element", pa.string()),
        ("space", pa.string()),
        ("connects", pa.string()),
        ("row", pa.int64()),
        ("geometry", pa.binary()),
    ],
    metadata={b"geo": json.dumps(ELEMENTS_GEO_METADATA, sort_keys=True).encode()},
)


@dataclass
class IngestSummary:
    """Counts of one ingest: rows in = rows used + rows rejected."""

    source: str
    rows_in: int
    rows_used: int
    rows_rejected: int
    plans: int
    plans_rejected: int
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    floors_collapsed: int = 0
    seconds: float = 0.0

    @property
    def reconciles(self) -> bool:
        return self.rows_in == self.rows_used + self.rows_rejected

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["rejected_by_reason"] = dict(sorted(self.rejected_by_reason.items()))
        out["reconciles"] = self.reconciles
        return out


class _RowGroupWriter:
    """Appends tables to a Parquet file in row groups of exactly ``rows`` rows
    (the last one shorter), whatever the sizes of the tables appended."""

    def __init__(self, path: Path, schema: pa.Schema, rows: int = ROW_GROUP_ROWS) -> None:
        self.schema = schema
        self.rows = rows
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.writer = pq.ParquetWriter(str(path), schema, compression="zstd")

    def append(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.pending.append(table)
        self.pending_rows += table.num_rows
        if self.pending_rows >= self.rows:
            combined = pa.concat_tables(self.pending)
            full = (combined.num_rows // self.rows) * self.rows
            # Contiguous arrays per row group: the bytes written then depend on
            # the rows alone, not on how the reader's chunks cut them.
            for start in range(0, full, self.rows):
                self.writer.write_table(combined.slice(start, self.rows).combine_chunks())
            rest = combined.slice(full)
            self.pending = [rest] if rest.num_rows else []
            self.pending_rows = rest.num_rows

    def close(self) -> None:
        if self.pending_rows:
            self.writer.write_table(pa.concat_tables(self.pending).combine_chunks())
        self.pending = []
        self.writer.close()


def _element_table(frame: pd.DataFrame) -> pa.Table:
    arrays = []
    for name in ELEMENTS_SCHEMA.names:
        if name == "geometry":
            arrays.append(pa.array(shapely.to_wkb(frame["geometry"].to_numpy(dtype=object)), pa.binary()))
        else:
            arrays.append(pa.array(frame[name], ELEMENTS_SCHEMA.field(name).type, from_pandas=True))
    return pa.Table.from_arrays(arrays, schema=ELEMENTS_SCHEMA)


def _footprints(plans: list[Plan]) -> list[bytes]:
    """WKB of each plan's footprint (as :attr:`Plan.footprint`: its spaces and
    separators unioned), computed in one vectorised call."""
    if not plans:
        return []
    parts = [[s.polygon for s in p.spaces] + [s.polygon for s in p.separators] for p in plans]
    grid = np.full((len(parts), max(len(g) for g in parts)), None, dtype=object)
    for i, g in enumerate(parts):
        grid[i, : len(g)] = g
    return list(shapely.to_wkb(shapely.union_all(grid, axis=1)))


def _rejection_table(rejections: pd.DataFrame) -> pa.Table:
    arrays = [
        pa.array(rejections[name], REJECTION_SCHEMA.field(name).type, from_pandas=True)
        for name in REJECTION_SCHEMA.names
    ]
    return pa.Table.from_arrays(arrays, schema=REJECTION_SCHEMA)


#: Columns of ``plans.parquet`` besides geometry: those of :meth:`Plan.summary`.
PLAN_COLUMNS = tuple(Plan(PlanIds(0, 0, 0, 0, ""), ()).summary())


def _plans_frame(summaries: list[dict], footprints: list[bytes]) -> gpd.GeoDataFrame:
    frame = pd.DataFrame.from_records(summaries, columns=list(PLAN_COLUMNS))
    geometry = shapely.from_wkb(np.asarray(footprints, dtype=object)) if footprints else []
    gdf = gpd.GeoDataFrame(frame, geometry=gpd.GeoSeries(geometry, crs=None), crs=None)
    return gdf.sort_values("plan", kind="stable").reset_index(drop=True)


def ingest(
    source: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    usages: Iterable[str] | None = DEFAULT_USAGES,
    keep_all_floors: bool = False,
    progress: Callable[[int], None] | None = None,
    index: SourceIndex | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> IngestSummary:
    """Read ``source`` (Swiss Dwellings CSV) and write the plan tables to ``out_dir``.

    ``usages``: unit usages kept (None: all). ``progress(rows)`` is called
    after every chunk with the number of source rows that chunk read, so the
    calls add up to :func:`count_rows` (also ``index.rows``: pass the index
    from :func:`scan_source` to skip that pass here). Raises
    :class:`~homeloop.pipeline.sources.swiss_dwellings.SourceError` if the file is not
    Swiss Dwellings CSV.
    """
    started = time.perf_counter()
    out = Path(out_dir)
    if index is None:
        index = scan_source(source, usages=usages, keep_all_floors=keep_all_floors, chunk_bytes=chunk_bytes)
    summaries: list[dict] = []
    footprints: list = []
    reasons: Counter[str] = Counter()
    rows_done = rows_used = rows_rejected = 0
    plans_rejected: set[str] = set()
    with contextlib.ExitStack() as stack:
        # Footprint unions run beside the reader: GEOS releases the GIL.
        unions = stack.enter_context(ThreadPoolExecutor(max_workers=1))
        plans_tmp = stack.enter_context(atomic_path(out / PLANS_FILE))
        elements_tmp = stack.enter_context(atomic_path(out / ELEMENTS_FILE))
        rejected_tmp = stack.enter_context(atomic_path(out / REJECTED_FILE))
        elements = _RowGroupWriter(elements_tmp, ELEMENTS_SCHEMA, ROW_GROUP_ROWS)
        rejected = _RowGroupWriter(rejected_tmp, REJECTION_SCHEMA, ROW_GROUP_ROWS)
        for batch in read_batches(source, index=index, chunk_bytes=chunk_bytes):
            frame = batch.elements if batch.elements is not None else frame_from_plans(batch.plans)
            elements.append(_element_table(frame))
            rejected.append(_rejection_table(batch.rejections))
            summaries.extend(plan.summary() for plan in batch.plans)
            footprints.append(unions.submit(_footprints, batch.plans))
            reasons.update(batch.rejections["reason"].tolist())
            plans_rejected.update(
                batch.rejections.loc[batch.rejections["level"] == PLAN_LEVEL, "plan"].dropna().tolist()
            )
            rows_done += batch.rows_read
            rows_used += batch.rows_used
            rows_rejected += len(batch.rejections)
            if progress is not None and batch.rows_read:
                progress(batch.rows_read)
        elements.close()
        rejected.close()
        geometry = [wkb for future in footprints for wkb in future.result()]
        write_parquet(plans_tmp, _plans_frame(summaries, geometry))
    return IngestSummary(
        source=str(source),
        rows_in=rows_done,
        rows_used=rows_used,
        rows_rejected=rows_rejected,
        plans=len(summaries),
        plans_rejected=len(plans_rejected),
        rejected_by_reason=dict(sorted(reasons.items())),
        floors_collapsed=index.floors_collapsed,
        seconds=round(time.perf_counter() - started, 3),
    )


def load_plans(out_dir: str | os.PathLike[str], keys: Iterable[str] | None = None) -> list[Plan]:
    """Plans from ``out_dir/elements.parquet``, all or those with the given keys, by key."""
    path = Path(out_dir) / ELEMENTS_FILE
    if keys is not None:
        wanted = sorted(set(keys))
        if not wanted:
            return []
        table = pq.read_table(path, filters=[("plan", "in", wanted)])
    else:
        table = pq.read_table(path)
    frame = table.drop(["geometry"]).to_pandas()
    frame["geometry"] = shapely.from_wkb(table.column("geometry").to_numpy(zero_copy_only=False))
    return plans_from_frame(frame)


def load_rejections(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The rejection table of an ingest."""
    return pq.read_table(Path(out_dir) / REJECTED_FILE).to_pandas()
