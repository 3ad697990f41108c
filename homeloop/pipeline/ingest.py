"""Ingest: a Swiss Dwellings geometries.csv to the plan tables of a build.

Writes, atomically, under ``out_dir``:

- ``plans.parquet`` (GeoParquet): one row per plan, :meth:`Plan.summary` and
  the plan footprint as geometry, sorted by plan key;
- ``elements.parquet`` (GeoParquet): :func:`homeloop.core.plan.frame_from_plans` of
  every plan (one row per element, with the spaces each opening connects), so
  later stages reload plans (:func:`load_plans`) without reparsing the CSV;
- ``rejected.parquet``: every row not taken, with the reason, the field at
  fault and a message (see :mod:`homeloop.pipeline.sources.swiss_dwellings`).

Element and rejection tables are written batch by batch to bound memory, in
row groups of a fixed size, so the same input gives the same bytes whatever
the chunk size of the reader. The stages of an ingest overlap, each in a
thread of its own (pyarrow and GEOS release the GIL): reading and checking a
chunk, assembling the plans of the chunk before, writing the tables of the
batch before that, and unioning plan footprints, the costliest step
(``benchmarks/ingest.py`` times a full-size file).
"""

from __future__ import annotations

import contextlib
import json
from concurrent.futures import Future, ThreadPoolExecutor
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

from homeloop.core.io import atomic_path, write_parquet
from homeloop.core.plan import (
    AREA,
    BEDROOM_SUBTYPES,
    DOOR,
    ENTRANCE_DOOR,
    FEATURE,
    INDOOR,
    OPENING,
    OUTDOOR,
    SEPARATOR,
    WINDOW,
    Plan,
    PlanIds,
    plans_from_frame,
    runs_of,
    space_class,
    unions_by_group,
)
from homeloop.pipeline.sources.swiss_dwellings import (
    DEFAULT_CHUNK_BYTES,
    DEFAULT_USAGES,
    PLAN_LEVEL,
    PlanBatch,
    REJECTION_SCHEMA,
    SourceError,
    SourceIndex,
    count_rows,
    read_batches,
    read_layout,
    scan_source,
)

__all__ = [
    "IngestSummary",
    "SourceError",
    "count_rows",
    "ingest",
    "load_plans",
    "load_rejections",
    "read_layout",
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


def _element_table(columns: dict[str, np.ndarray]) -> pa.Table:
    """The element table (:attr:`PlanBatch.element_columns`) as Arrow, geometry as WKB."""
    arrays = []
    for name in ELEMENTS_SCHEMA.names:
        if name == "geometry":
            arrays.append(pa.array(shapely.to_wkb(columns["geometry"]), pa.binary()))
        else:
            arrays.append(pa.array(columns[name], ELEMENTS_SCHEMA.field(name).type, from_pandas=True))
    return pa.Table.from_arrays(arrays, schema=ELEMENTS_SCHEMA)


def _plan_codes(columns: dict[str, np.ndarray]) -> np.ndarray:
    """For each element, the number of its plan in the table (the rows of a plan are together)."""
    plan = columns["plan"]
    return np.cumsum(np.r_[False, plan[1:] != plan[:-1]]) if len(plan) else np.zeros(0, dtype=np.int64)


def _footprints(columns: dict[str, np.ndarray]) -> list[bytes]:
    """WKB of each plan's footprint (as :attr:`Plan.footprint`: its spaces and
    separators unioned, in the plan's order), for the plans of an element
    table, in their order; computed in one vectorised call."""
    entity = columns["entity_type"]
    drawn = np.flatnonzero((entity == AREA) | (entity == SEPARATOR))
    if len(drawn) == 0:
        return []
    codes = _plan_codes(columns)[drawn]
    return list(shapely.to_wkb(unions_by_group(columns["geometry"][drawn], codes, int(codes[-1]) + 1)))


def _plan_summaries(batch: PlanBatch) -> pd.DataFrame:
    """:meth:`Plan.summary` of each plan of a batch, from its tables, in bulk."""
    columns, ids = batch.element_columns, batch.plan_ids
    n = len(ids)
    codes = _plan_codes(columns)
    entity, kind = columns["entity_type"], columns["subtype"]
    is_area, is_opening = entity == AREA, entity == OPENING
    space_classes = np.array([space_class(k) for k in kind[is_area].tolist()], dtype=object)
    area_code = codes[is_area]

    def count(mask: np.ndarray, of: np.ndarray = codes) -> np.ndarray:
        return np.bincount(of[mask], minlength=n)

    indoor = space_classes == INDOOR
    # Added plan by plan in element order, as Plan.indoor_area sums them.
    indoor_area = np.zeros(n)
    np.add.at(indoor_area, area_code[indoor], shapely.area(columns["geometry"][is_area][indoor]))
    summary = ids[["plan", "site_id", "building_id", "plan_id", "floor_id", "apartment_id", "unit_ids",
                   "elevation"]].reset_index(drop=True)
    summary = summary.assign(
        spaces=count(np.ones(len(area_code), dtype=bool), area_code),
        indoor_spaces=count(indoor, area_code),
        outdoor_spaces=count(space_classes == OUTDOOR, area_code),
        bedrooms=count(np.isin(kind[is_area], list(BEDROOM_SUBTYPES)), area_code),
        doors=count(is_opening & (kind == DOOR)),
        entrance_doors=count(is_opening & (kind == ENTRANCE_DOOR)),
        windows=count(is_opening & (kind == WINDOW)),
        separators=count(entity == SEPARATOR),
        features=count(entity == FEATURE),
        indoor_area_m2=[round(a, 3) for a in indoor_area.tolist()],
    )
    return summary[list(PLAN_COLUMNS)]


def _rejection_table(rejections: pd.DataFrame) -> pa.Table:
    arrays = [
        pa.array(rejections[name], REJECTION_SCHEMA.field(name).type, from_pandas=True)
        for name in REJECTION_SCHEMA.names
    ]
    return pa.Table.from_arrays(arrays, schema=REJECTION_SCHEMA)


#: Columns of ``plans.parquet`` besides geometry: those of :meth:`Plan.summary`.
PLAN_COLUMNS = tuple(Plan(PlanIds(0, 0, 0, 0, ""), ()).summary())


def _plans_frame(summaries: list[pd.DataFrame], footprints: list[bytes]) -> gpd.GeoDataFrame:
    summaries = [part for part in summaries if len(part)]
    frame = pd.concat(summaries, ignore_index=True) if summaries \
        else pd.DataFrame.from_records([], columns=list(PLAN_COLUMNS))
    geometry = shapely.from_wkb(np.asarray(footprints, dtype=object)) if footprints else []
    gdf = gpd.GeoDataFrame(frame, geometry=gpd.GeoSeries(geometry, crs=None), crs=None)
    return gdf.sort_values("plan", kind="stable").reset_index(drop=True)


#: Batches whose outputs may wait to be made, beyond the batch being read:
#: bounds the memory held by work not yet done.
BATCHES_IN_FLIGHT = 2
#: Threads unioning plan footprints, the costliest step of an ingest (GEOS,
#: which releases the GIL): two, so that the last batches' unions share the cores.
UNION_THREADS = 2


class _BatchOutputs:
    """What an ingest makes of each batch, made beside the reader in threads
    of their own (Arrow and GEOS release the GIL): one appends the element and
    rejection tables to their files and summarises the plans, in batch order;
    others (:data:`UNION_THREADS`) union the plans' footprints. At most :data:`BATCHES_IN_FLIGHT`
    batches wait for either."""

    def __init__(self, stack: contextlib.ExitStack, elements_path: Path, rejected_path: Path) -> None:
        self.elements = _RowGroupWriter(elements_path, ELEMENTS_SCHEMA, ROW_GROUP_ROWS)
        self.rejected = _RowGroupWriter(rejected_path, REJECTION_SCHEMA, ROW_GROUP_ROWS)
        # Entered after the files, so that on an error the threads stop before the files go.
        self.writes = stack.enter_context(ThreadPoolExecutor(max_workers=1))
        self.unions = stack.enter_context(ThreadPoolExecutor(max_workers=UNION_THREADS))
        self.summaries: list[Future | pd.DataFrame] = []
        self.footprints: list[Future | list[bytes]] = []

    def add(self, batch: PlanBatch) -> None:
        self.summaries.append(self.writes.submit(self._write, batch))
        settled = len(self.summaries) - 1 - BATCHES_IN_FLIGHT
        if settled >= 0:
            self.summaries[settled] = _done(self.summaries[settled])
            self.footprints[settled] = _done(self.footprints[settled])

    def _write(self, batch: PlanBatch) -> pd.DataFrame:
        columns = batch.element_columns  # made here, in this thread
        self.footprints.append(self.unions.submit(_footprints, columns))
        self.elements.append(_element_table(columns))
        self.rejected.append(_rejection_table(batch.rejections))
        return _plan_summaries(batch)

    def finish(self) -> gpd.GeoDataFrame:
        """Wait for every batch, close the table files; the plan table."""
        summaries = [_done(part) for part in self.summaries]
        footprints = [wkb for part in self.footprints for wkb in _done(part)]
        self.elements.close()
        self.rejected.close()
        return _plans_frame(summaries, footprints)


def _done(work):
    """The result of ``work``, waiting for it if it is a Future."""
    return work.result() if isinstance(work, Future) else work


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
    reasons: Counter[str] = Counter()
    rows_done = rows_used = rows_rejected = 0
    plans_rejected: set[str] = set()
    with contextlib.ExitStack() as stack:
        plans_tmp = stack.enter_context(atomic_path(out / PLANS_FILE))
        outputs = _BatchOutputs(stack, stack.enter_context(atomic_path(out / ELEMENTS_FILE)),
                                stack.enter_context(atomic_path(out / REJECTED_FILE)))
        for batch in read_batches(source, index=index, chunk_bytes=chunk_bytes):
            outputs.add(batch)
            reasons.update(batch.rejections["reason"].tolist())
            plans_rejected.update(
                batch.rejections.loc[batch.rejections["level"] == PLAN_LEVEL, "plan"].dropna().tolist()
            )
            rows_done += batch.rows_read
            rows_used += batch.rows_used
            rows_rejected += len(batch.rejections)
            if progress is not None and batch.rows_read:
                progress(batch.rows_read)
        plans = outputs.finish()
        write_parquet(plans_tmp, plans)
    return IngestSummary(
        source=str(source),
        rows_in=rows_done,
        rows_used=rows_used,
        rows_rejected=rows_rejected,
        plans=len(plans),
        plans_rejected=len(plans_rejected),
        rejected_by_reason=dict(sorted(reasons.items())),
        floors_collapsed=index.floors_collapsed,
        seconds=round(time.perf_counter() - started, 3),
    )


#: Element tables up to this size on disk are held whole, once read, by a process that loads
#: plans from them partition after partition (:func:`load_plans` with ``hold``). The homes
#: stage loads 25 plans per partition, spread over the whole file (they come in rank order):
#: a filtered read would decode every row group each time. A full-size table (hundreds of MB) is
#: read with a filter each time instead, as is any table for a single load.
HELD_ELEMENTS_BYTES = 32 * 2**20


@dataclass
class _HeldElements:
    """An element table held in memory, and where each plan's rows lie in it: one run of
    rows per plan in a table ingest wrote, any number in another."""

    file: tuple[str, int, int, int]
    table: pa.Table
    runs: dict[str, list[tuple[int, int]]]

    @staticmethod
    def read(path: Path, file: tuple[str, int, int, int]) -> "_HeldElements":
        table = pq.read_table(path)
        plan = table.column("plan").to_numpy(zero_copy_only=False)
        runs: dict[str, list[tuple[int, int]]] = {}
        for a, b in runs_of(plan):
            runs.setdefault(str(plan[a]), []).append((a, b))
        return _HeldElements(file, table, runs)

    def rows_of(self, keys: list[str]) -> pa.Table:
        """The rows of these plans, in the order of the file (as a filtered read gives them)."""
        found = sorted(run for k in keys for run in self.runs.get(k, ()))
        rows = np.concatenate([np.arange(a, b) for a, b in found]) if found else np.zeros(0, dtype=np.int64)
        return self.table.take(pa.array(rows, pa.int64()))


_HELD: _HeldElements | None = None


def _held_elements(path: Path) -> _HeldElements | None:
    """The element table at ``path`` held in memory (read when this process has not yet read
    this very file: a rewrite gives a new inode or time), or None for a large table."""
    global _HELD
    stat = path.stat()
    if stat.st_size > HELD_ELEMENTS_BYTES:
        return None
    file = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if _HELD is None or _HELD.file != file:
        _HELD = None  # the old table goes before the new one is read
        _HELD = _HeldElements.read(path, file)
    return _HELD


def load_plans(out_dir: str | os.PathLike[str], keys: Iterable[str] | None = None, *,
               hold: bool = False) -> list[Plan]:
    """Plans from ``out_dir/elements.parquet``, all or those with the given keys, by key.

    ``hold``: keep the table in this process for the loads that follow (a Dask partition's
    plans; see :data:`HELD_ELEMENTS_BYTES`)."""
    path = Path(out_dir) / ELEMENTS_FILE
    if keys is not None:
        wanted = sorted(set(keys))
        if not wanted:
            return []
        held = _held_elements(path) if hold else None
        table = held.rows_of(wanted) if held is not None else pq.read_table(path, filters=[("plan", "in", wanted)])
    else:
        table = pq.read_table(path)
    frame = table.drop(["geometry"]).to_pandas()
    frame["geometry"] = shapely.from_wkb(table.column("geometry").to_numpy(zero_copy_only=False))
    return plans_from_frame(frame)


def plan_keys(out_dir: str | os.PathLike[str]) -> list[str]:
    """The keys of the plans in ``out_dir/elements.parquet``, sorted."""
    column = pq.read_table(Path(out_dir) / ELEMENTS_FILE, columns=["plan"]).column("plan")
    return sorted(column.unique().to_pylist())


def load_rejections(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The rejection table of an ingest."""
    return pq.read_table(Path(out_dir) / REJECTED_FILE).to_pandas()
