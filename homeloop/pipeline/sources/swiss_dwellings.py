"""Read Swiss Dwellings ``geometries.csv`` (docs/data-format.md) into plans.

The reader streams the file in chunks with pyarrow and turns its rows into
plans, one per apartment per floor: tables of their elements and ids, made
for many plans at once (numpy, Arrow, shapely on whole columns), and
:class:`homeloop.core.plan.Plan` objects when asked for. Every row it
does not use is rejected with a reason, the field at fault and the row (the
line number in the file, the header being line 1), so that

    rows read == rows used + rows rejected

always holds. Blank lines are lines but not rows; a row whose quoted field
spans lines is numbered by its first line. Three passes are made over the file:

1. a line scan of the bytes (:mod:`homeloop.pipeline.sources.csv_lines`) that
   finds the line each row starts on, the rows pyarrow cannot read (a quote
   never closed, a NUL byte, bytes that are no text) and the encoding: UTF-8,
   or cp1252 for a file that is not UTF-8 (logged as one warning);
2. an index pass that reads only the id columns, to learn where each plan's
   last row is (a plan is assembled once the stream has passed it, so plans
   may be spread anywhere in the file) and which floors repeat the layout of
   another floor (they share a ``plan_id``; only the lowest is kept). It runs
   beside the line scan, taking the file for plain UTF-8 with a line per row,
   and again after it where the scan finds otherwise;
3. the main pass, which checks every row, parses the geometry of the rows that
   pass, and assembles plans chunk by chunk. A thread reads and checks each
   chunk while the chunk before is assembled.

Both the 13-column v3 layout and the older 9-column v1 layout are read; the
columns are found by name, in any order.

Rejection reasons (``Rejection.reason``):

- ``wrong_field_count``: the row has more or fewer fields than the header.
- ``unreadable_row``: a quote is never closed on the row's line, or is closed
  in the middle of a field (the field is the column where it opened).
- ``nul_byte``: the row holds a NUL byte; ``undecodable_row``: the file is not
  UTF-8 and the row holds bytes that are no cp1252 text either.
- ``no_apartment``: apartment_id is md5("") (docs/data-format.md); an exclusion, not an error.
- ``unit_usage_<USAGE>``: the unit's usage is not one of the kept usages; an exclusion.
- ``repeated_floor_layout``: the floor shares its plan_id with a lower floor; an exclusion.
- ``missing_value`` / ``not_a_number``: an id is empty or not an integer, or an
  elevation or height is not a finite number.
- ``unsafe_id``: apartment_id cannot be part of a file name (it names the home's
  folder and files): only letters, digits and ``_ - . +``, no ``..``
  (:func:`homeloop.core.ids.safe_id`).
- ``unknown_entity_type``: entity_type is not area, separator, opening or feature.
- ``unknown_subtype``: entity_subtype is not one of the known subtypes of its
  entity type (:data:`homeloop.core.plan.SUBTYPES`); the message lists them.
- ``non_positive_height``: a height of 0 m or less.
- ``malformed_wkt``, ``not_a_polygon``, ``empty_geometry``: the geometry field.
- ``invalid_element_geometry``: an invalid separator, opening or feature polygon.
- ``duplicate_area_id``: a second area with the same area_id in a plan.
- ``feature_outside_spaces``: a feature that overlaps no space of its plan.
- ``opening_not_in_wall``: an opening further than 5 cm from every wall, column and railing.
- ``invalid_geometry`` (plan level): an area polygon of the plan is invalid, so
  every row of the plan is rejected.
- ``no_spaces`` (plan level): nothing of the plan is left that is an area.

Plan-level rejections have ``level == "plan"``; :func:`plan_rejections` lists
them one row per culprit row.
"""

from __future__ import annotations

import collections
import csv
import io
import logging
import os
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import shapely

from homeloop.core.ids import SAFE_ID
from homeloop.pipeline.sources.csv_lines import UTF8, LineScan, scan_lines
from homeloop.core.plan import (
    SWISS_DWELLINGS_COLUMNS,
    AREA,
    COLUMN,
    DEFAULT_WALL_HEIGHT,  # noqa: F401  (the plan height when a file gives none; named here too)
    EMPTY_APARTMENT_ID,
    ELEMENT_COLUMNS,
    ENTITY_TYPES,
    FEATURE,
    OPENING,
    OPENING_CONTACT_TOLERANCE,
    RAILING,
    SEPARATOR,
    SUBTYPES,
    WALL,
    Plan,
    connect_openings,
    frame_from_plans,
    plan_key,
)

# --- the file layout -----------------------------------------------------------

#: Columns of the v3 layout (docs/data-format.md).
V3_COLUMNS = SWISS_DWELLINGS_COLUMNS
#: Columns of the older v1 layout: no plan_id, unit_usage, elevation or height.
V1_COLUMNS = (
    "apartment_id",
    "site_id",
    "building_id",
    "floor_id",
    "unit_id",
    "area_id",
    "entity_type",
    "entity_subtype",
    "geometry",
)
#: Columns only v3 has. A file with any of them must have all of them.
V3_ONLY_COLUMNS = tuple(c for c in V3_COLUMNS if c not in V1_COLUMNS)

#: Usages kept by default: dwellings only (docs/data-format.md lists the others).
DEFAULT_USAGES = ("RESIDENTIAL",)
#: Bytes of CSV per chunk: 16 MiB is ~90,000 rows of Swiss Dwellings. Memory grows with it
#: (a chunk is read while the one before is assembled and the one before that written).
DEFAULT_CHUNK_BYTES = 16 << 20
#: An opening must lie within this distance (m) of a wall, column or railing of
#: its plan; the same tolerance that joins openings to spaces.
WALL_CONTACT_TOLERANCE = OPENING_CONTACT_TOLERANCE
#: Separator kinds an opening can sit in.
WALL_KINDS = frozenset({WALL, COLUMN, RAILING})
#: shapely type ids of Polygon and MultiPolygon, the geometries accepted.
POLYGON_TYPE_IDS = (3, 6)

# --- rejection reasons ----------------------------------------------------------

WRONG_FIELD_COUNT = "wrong_field_count"
NO_APARTMENT = "no_apartment"
UNIT_USAGE_PREFIX = "unit_usage_"
REPEATED_FLOOR_LAYOUT = "repeated_floor_layout"
MISSING_VALUE = "missing_value"
NOT_A_NUMBER = "not_a_number"
UNKNOWN_ENTITY_TYPE = "unknown_entity_type"
UNKNOWN_SUBTYPE = "unknown_subtype"
NON_POSITIVE_HEIGHT = "non_positive_height"
MALFORMED_WKT = "malformed_wkt"
NOT_A_POLYGON = "not_a_polygon"
EMPTY_GEOMETRY = "empty_geometry"
INVALID_ELEMENT_GEOMETRY = "invalid_element_geometry"
DUPLICATE_AREA_ID = "duplicate_area_id"
FEATURE_OUTSIDE_SPACES = "feature_outside_spaces"
OPENING_NOT_IN_WALL = "opening_not_in_wall"
INVALID_GEOMETRY = "invalid_geometry"
NO_SPACES = "no_spaces"
UNSAFE_ID = "unsafe_id"

#: Rejection levels: one row at fault, or a whole plan.
ROW_LEVEL, PLAN_LEVEL = "row", "plan"


def is_exclusion(reason: str) -> bool:
    """True for reasons that leave out rows by design (not data errors)."""
    return reason in (NO_APARTMENT, REPEATED_FLOOR_LAYOUT) or reason.startswith(UNIT_USAGE_PREFIX)


class SourceError(Exception):
    """The file cannot be read as Swiss Dwellings CSV; the message is one line."""


@dataclass
class Rejection:
    """A row (or, with ``level == "plan"``, a row of a whole plan) not taken."""

    row: int | None
    plan: str | None
    site_id: str | None
    floor_id: str | None
    apartment_id: str | None
    entity_type: str | None
    field: str | None
    reason: str
    message: str
    level: str = ROW_LEVEL


REJECTION_COLUMNS = tuple(f.name for f in fields(Rejection))

#: Arrow schema of the rejection table (``rejected.parquet``).
REJECTION_SCHEMA = pa.schema(
    [
        ("row", pa.int64()),
        ("plan", pa.string()),
        ("site_id", pa.string()),
        ("floor_id", pa.string()),
        ("apartment_id", pa.string()),
        ("entity_type", pa.string()),
        ("field", pa.string()),
        ("reason", pa.string()),
        ("message", pa.string()),
        ("level", pa.string()),
    ]
)


def empty_rejections() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in REJECTION_COLUMNS})
    frame["row"] = frame["row"].astype("Int64")
    return frame


@dataclass
class PlanBatch:
    """Plans completed within one chunk of the file, and the rows rejected there.

    ``rows_read`` counts the file's data rows in the chunk; ``rows_used`` the
    rows that became elements of the plans. Summed over all batches,
    rows_read == rows_used + len(rejections). The plans come as tables
    (``elements``, ``plan_ids``); ``plans`` makes :class:`Plan` objects of them
    when asked for.
    """

    rejections: pd.DataFrame
    rows_read: int
    assembly: "_Assembly"

    @property
    def rows_used(self) -> int:
        return len(self.assembly.rows)

    @property
    def elements(self) -> pd.DataFrame:
        """The element table of the plans (as :func:`homeloop.core.plan.frame_from_plans`)."""
        return self.assembly.elements

    @property
    def element_columns(self) -> dict[str, np.ndarray]:
        """The columns of ``elements`` as arrays (``row`` as int64), without
        making the table."""
        return self.assembly.element_columns

    @property
    def plan_ids(self) -> pd.DataFrame:
        """One row per plan, in the order of ``plans``: its key, the ids of
        :class:`homeloop.core.plan.PlanIds` (``unit_ids`` joined by commas, and
        ``unit_id`` the lowest) and its elevation."""
        return self.assembly.plan_ids

    @cached_property
    def plans(self) -> list[Plan]:
        """The plans, in order of their last row."""
        return self.assembly.plans()

    def rejection_records(self) -> list[Rejection]:
        """The rejections as :class:`Rejection` objects."""
        out = []
        for rec in self.rejections.to_dict("records"):
            rec = {k: (None if _is_missing(v) else v) for k, v in rec.items()}
            rec["row"] = None if rec["row"] is None else int(rec["row"])
            out.append(Rejection(**rec))
        return out


def plan_rejections(rejections: pd.DataFrame) -> pd.DataFrame:
    """The plans rejected as a whole: plan, reason, the culprit row and message.

    One row per culprit row (for ``invalid_geometry``: each invalid area), or
    per plan where no single row is at fault (``no_spaces``).
    """
    cols = ["plan", "reason", "row", "field", "message"]
    plan_rows = rejections[rejections["level"] == PLAN_LEVEL]
    if plan_rows.empty:
        return plan_rows[cols].reset_index(drop=True)
    culprit = plan_rows["field"].notna()
    no_culprit = ~plan_rows["plan"].isin(plan_rows.loc[culprit, "plan"])
    firsts = plan_rows[no_culprit].drop_duplicates("plan")
    out = pd.concat([plan_rows[culprit], firsts]).sort_values(["plan", "row"], kind="stable")
    return out[cols].reset_index(drop=True)


# --- the header -------------------------------------------------------------------


@dataclass(frozen=True)
class SourceLayout:
    """The columns of a geometries.csv and which layout they are."""

    path: Path
    columns: tuple[str, ...]
    version: int

    def has(self, column: str) -> bool:
        return column in self.columns


def read_layout(path: str | os.PathLike[str]) -> SourceLayout:
    """Read and check the header; raise :class:`SourceError` naming what is missing."""
    path = Path(path)
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            head = stream.read(1 << 16)
    except (OSError, pa.ArrowException) as exc:
        raise SourceError(f"{path}: cannot read the file ({_one_line(exc)})") from None
    if b"\0" in head.split(b"\n", 1)[0]:
        raise SourceError(f"{path}: not a CSV file (binary content)")
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError:
        # A chunk boundary may split a character; only the first line matters.
        text = head.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace")
    first_line = text.splitlines()[0] if text else ""
    header = next(csv.reader(io.StringIO(first_line)), [])
    columns = tuple(c.strip() for c in header)
    has_v3 = any(c in columns for c in V3_ONLY_COLUMNS)
    required = V3_COLUMNS if has_v3 else V1_COLUMNS
    missing = [c for c in required if c not in columns]
    if missing:
        layout = "v3" if has_v3 else "Swiss Dwellings"
        raise SourceError(
            f"{path}: not a {layout} geometries.csv: missing column(s) {', '.join(missing)}"
        )
    return SourceLayout(path, columns, 3 if has_v3 else 1)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# --- streaming ---------------------------------------------------------------------


class _LeftOut:
    """Rows that come in no batch, each rejected once the stream passes its line:
    those pyarrow skips for a wrong field count, and those the line scan left
    out of what pyarrow reads (:mod:`homeloop.pipeline.sources.csv_lines`)."""

    def __init__(self, lines: LineScan) -> None:
        self.lines = lines
        #: pyarrow's numbers (header = 1) of the rows it skipped.
        self.numbers: list[int] = []
        #: (line, reason, field, message, text) of rows not yet rejected.
        self.pending: list[tuple[int, str, str | None, str, str]] = [
            (b.line, b.reason, b.field, b.message, b.text) for b in lines.bad]
        self._sorted: np.ndarray | None = None

    def __call__(self, invalid: pacsv.InvalidRow) -> str:
        # Reading without threads, pyarrow knows the row's number among the rows it reads.
        number = int(invalid.number)
        self.numbers.append(number)
        self._sorted = None
        line = int(self.lines.line_numbers(np.array([number - 2]))[0])
        message = f"row has {invalid.actual_columns} fields, the header has {invalid.expected_columns}"
        self.pending.append((line, WRONG_FIELD_COUNT, None, message, invalid.text))
        return "skip"

    def row_numbers(self, first_valid: int, count: int) -> np.ndarray:
        """Lines of the rows pyarrow returned ``first_valid`` .. ``first_valid + count - 1``
        (counting its returned rows from 0)."""
        if self._sorted is None:
            self._sorted = np.sort(np.asarray(self.numbers, dtype=np.int64))
        k = np.arange(first_valid, first_valid + count, dtype=np.int64)
        skipped = self._sorted
        # Returned rows before the j-th skipped row: its number - j - 2.
        before = skipped - np.arange(len(skipped), dtype=np.int64) - 2
        numbers = k + 2 + np.searchsorted(before, k, side="right")
        return self.lines.line_numbers(numbers - 2)

    def take_through(self, last_line: int | None) -> list[tuple[int, str, str | None, str, str]]:
        """Remove and return the rows up to ``last_line`` (all if None), by line."""
        taken = [t for t in self.pending if last_line is None or t[0] <= last_line]
        self.pending = [t for t in self.pending if not (last_line is None or t[0] <= last_line)]
        return sorted(taken)


def _open(layout: SourceLayout, columns: Iterable[str], chunk_bytes: int, left_out: _LeftOut):
    lines = left_out.lines
    try:
        return pacsv.open_csv(
            lines.source(),
            read_options=pacsv.ReadOptions(
                block_size=int(chunk_bytes), use_threads=False,
                encoding="utf8" if lines.encoding == UTF8 else lines.encoding),
            parse_options=pacsv.ParseOptions(invalid_row_handler=left_out, newlines_in_values=lines.multiline),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in layout.columns},
                include_columns=list(columns),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (OSError, pa.ArrowException) as exc:
        raise SourceError(f"{layout.path}: cannot read as CSV ({_one_line(exc)})") from None


def _batches(reader, path: Path) -> Iterator[pa.RecordBatch]:
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as exc:
            raise SourceError(f"{path}: cannot read as CSV ({_one_line(exc)})") from None
        yield batch


def _numbered_batches(reader, path: Path, left_out: _LeftOut) -> Iterator[tuple[pa.RecordBatch, np.ndarray]]:
    """Non-empty batches with the line number of each of their rows."""
    valid = 0
    for batch in _batches(reader, path):
        n = batch.num_rows
        if n == 0:
            continue
        rows = left_out.row_numbers(valid, n)
        valid += n
        yield batch, rows


def _unsafe_ids(values) -> np.ndarray:
    """Rows whose non-empty id cannot be part of a file name (:data:`homeloop.core.ids.SAFE_ID`)."""
    text = _text(values)
    safe = pc.or_(pc.equal(text, ""), pc.and_(pc.match_substring_regex(text, f"^(?:{SAFE_ID.pattern})$"),
                                               pc.invert(pc.match_substring(text, ".."))))
    return ~pc.fill_null(safe, True).to_numpy(zero_copy_only=False)


def _text(values) -> pa.Array:
    """A string column as an Arrow array, surrounding whitespace removed."""
    if isinstance(values, pd.Series):
        values = pa.array(values, pa.string(), from_pandas=True)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return pc.utf8_trim_whitespace(values)


def _objects(values) -> np.ndarray:
    """An Arrow string column as a numpy array of Python strings."""
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=object)


def _normalised(values, upper: bool = True) -> np.ndarray:
    """A vocabulary column (entity_type, subtype, usage): trimmed, one case."""
    text = _text(values)
    return _objects(pc.utf8_upper(text) if upper else pc.utf8_lower(text))


def _integers(values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(integer values, empty mask, not-an-integer mask) of a string column.

    Swiss Dwellings writes some ids as floats ("123.0"); those are integers.
    """
    text = _text(values)
    empty = pc.equal(text, "").to_numpy(zero_copy_only=False)
    try:  # The common case: every value an integer or empty.
        ints = pc.cast(pc.if_else(empty, "0", text), pa.int64()).to_numpy(zero_copy_only=False)
        return ints, empty, np.zeros(len(empty), dtype=bool)
    except pa.ArrowInvalid:
        pass
    whole = pc.replace_substring_regex(text, r"\.0*$", "")
    try:  # Integers written as floats.
        ints = pc.cast(pc.if_else(empty, "0", whole), pa.int64()).to_numpy(zero_copy_only=False)
        return ints, empty, np.zeros(len(empty), dtype=bool)
    except pa.ArrowInvalid:
        pass
    good = pc.match_substring_regex(whole, r"^[+-]?[0-9]{1,18}$").to_numpy(zero_copy_only=False)
    ints = pc.cast(pc.if_else(good, whole, "0"), pa.int64()).to_numpy(zero_copy_only=False)
    bad = ~empty & ~good
    return np.where(good, ints, 0), empty, bad


def _floats(values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(float values, empty mask, not-a-number mask) of a string column."""
    text = _text(values)
    empty = pc.equal(text, "").to_numpy(zero_copy_only=False)
    try:
        num = pc.cast(pc.if_else(empty, "nan", text), pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        num = pd.to_numeric(pd.Series(_objects(text)), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~empty & ~np.isfinite(num)
    return num, empty, bad


# --- the index pass ----------------------------------------------------------------


@dataclass
class SourceIndex:
    """What the index pass learns from the id columns of a file.

    ``rows``: data rows in the file (header and blank lines excluded,
    malformed rows included); ``last_row``: for each plan (site_id, floor_id,
    apartment_id), the last row holding one of its kept rows; ``kept_floor``:
    for each (site_id, plan_id) shared by several floors, the floor kept
    (lowest elevation, then lowest floor_id); ``floors_collapsed``: how many
    floors were dropped for it; ``lines``: where each row starts, and the rows
    that cannot be read (:func:`homeloop.pipeline.sources.csv_lines.scan_lines`).
    """

    layout: SourceLayout
    usages: tuple[str, ...] | None
    keep_all_floors: bool
    rows: int
    last_row: dict[tuple[int, int, str], int]
    kept_floor: dict[tuple[int, int], int]
    floors_collapsed: int
    lines: LineScan

    @property
    def encoding(self) -> str:
        """The encoding the file is read in: utf-8, or cp1252 when it is not UTF-8."""
        return self.lines.encoding

    def kept_floors(self, site: np.ndarray, plan: np.ndarray, floor: np.ndarray) -> np.ndarray:
        """For each row, the floor kept of its (site_id, plan_id), or its own
        floor where no other floor shares the plan (``kept_floor`` in bulk)."""
        at = self._kept_floor_keys.get_indexer(pd.MultiIndex.from_arrays([site, plan]))
        return np.where(at >= 0, self._kept_floor_values[at], floor)

    def last_rows(self, site: np.ndarray, floor: np.ndarray, apartment: np.ndarray) -> np.ndarray:
        """For each row, the last row of its plan (``last_row`` in bulk)."""
        if len(site) == 0:
            return np.zeros(0, dtype=np.int64)
        at = self._last_row_keys.get_indexer(pd.MultiIndex.from_arrays([site, floor, apartment]))
        if (at < 0).any():
            i = int(np.flatnonzero(at < 0)[0])
            raise SourceError(f"{self.layout.path}: plan {plan_key(site[i], floor[i], apartment[i])} is not in "
                              "the index of the file; pass an index made with the same options")
        return self._last_row_values[at]

    @cached_property
    def _kept_floor_keys(self) -> pd.MultiIndex:
        return pd.MultiIndex.from_tuples(list(self.kept_floor), names=["site", "plan"]) if self.kept_floor \
            else pd.MultiIndex.from_arrays([np.zeros(0, np.int64)] * 2)

    @cached_property
    def _kept_floor_values(self) -> np.ndarray:
        return np.fromiter(self.kept_floor.values(), dtype=np.int64, count=len(self.kept_floor))

    @cached_property
    def _last_row_keys(self) -> pd.MultiIndex:
        if not self.last_row:
            return pd.MultiIndex.from_arrays([np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, object)])
        return pd.MultiIndex.from_tuples(list(self.last_row))

    @cached_property
    def _last_row_values(self) -> np.ndarray:
        return np.fromiter(self.last_row.values(), dtype=np.int64, count=len(self.last_row))


def scan_source(
    path: str | os.PathLike[str],
    *,
    usages: Iterable[str] | None = DEFAULT_USAGES,
    keep_all_floors: bool = False,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> SourceIndex:
    """The index pass: find where rows start, and read only the id columns
    (see :class:`SourceIndex`). A file that is not UTF-8 is logged, in one
    warning line naming the encoding it is read in.

    ``usages``: the unit usages kept; None keeps every usage.
    """
    layout = read_layout(path)
    kept_usages = None if usages is None else tuple(sorted({u.strip().upper() for u in usages}))
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The id columns are read while the lines are scanned, taking the file
        # for what most files are: UTF-8 text, a line per row, nothing to leave
        # out. Where the scan finds otherwise, they are read again knowing what it found.
        scanning = pool.submit(_scan_lines, layout, chunk_bytes)
        try:
            guessed: _IdPass | None = _read_ids(layout, _plain_lines(layout.path), kept_usages, chunk_bytes)
        except SourceError:
            guessed = None
        lines = scanning.result()
    if lines.warning:
        logging.getLogger(__name__).warning(lines.warning)
    if guessed is not None and not lines.omit and not lines.multiline and lines.encoding == UTF8:
        ids = guessed.numbered_by(lines)
    else:
        ids = _read_ids(layout, lines, kept_usages, chunk_bytes)
    kept_floor, collapsed = ({}, 0) if keep_all_floors else _kept_floors(ids.floors)
    return SourceIndex(layout, kept_usages, keep_all_floors, ids.rows + len(lines.bad), ids.last_row, kept_floor,
                       collapsed, lines)


def _plain_lines(path: Path) -> LineScan:
    """What the line scan finds in a plain file: UTF-8, a line per row, no
    row left out; its line numbers are pyarrow's row numbers."""
    return LineScan(path, UTF8, 0, [], np.zeros(0, dtype=np.int64), [], False)


@dataclass
class _IdPass:
    """What the id columns say: ``rows`` read (by pyarrow, or skipped by it),
    the last row of each plan, and the lowest elevation of each (site, plan,
    floor), in parts."""

    rows: int
    last_row: dict[tuple[int, int, str], int]
    floors: list[pd.DataFrame]

    def numbered_by(self, lines: LineScan) -> "_IdPass":
        """The same, read taking row numbers for lines (:func:`_plain_lines`),
        with the lines ``lines`` gives them."""
        rows = np.fromiter(self.last_row.values(), dtype=np.int64, count=len(self.last_row))
        renumbered = lines.line_numbers(rows - 2).tolist()
        return _IdPass(self.rows, dict(zip(self.last_row, renumbered)), self.floors)


def _read_ids(layout: SourceLayout, lines: LineScan, kept_usages: tuple[str, ...] | None,
              chunk_bytes: int) -> _IdPass:
    """Read the id columns, numbering rows by ``lines``."""
    wanted = [c for c in ("apartment_id", "site_id", "floor_id", "plan_id", "elevation", "unit_usage")
              if layout.has(c)]
    left_out = _LeftOut(lines)
    reader = _open(layout, wanted, chunk_bytes, left_out)
    last_row: dict[tuple[int, int, str], int] = {}
    floor_parts: list[pd.DataFrame] = []
    valid = 0
    for batch, rows in _numbered_batches(reader, layout.path, left_out):
        n = batch.num_rows
        valid += n
        df = {name: batch.column(name) for name in batch.schema.names}
        site, site_empty, site_bad = _integers(df["site_id"])
        floor, floor_empty, floor_bad = _integers(df["floor_id"])
        ids_ok = ~(site_empty | site_bad | floor_empty | floor_bad)
        if layout.has("plan_id"):
            plan, plan_empty, plan_bad = _integers(df["plan_id"])
            plan_ok = ids_ok & ~(plan_empty | plan_bad)
        else:
            plan, plan_ok = floor, ids_ok
        elevation = _floats(df["elevation"])[0] if layout.has("elevation") else np.zeros(n)
        floor_parts.append(
            pd.DataFrame({"site": site[plan_ok], "plan": plan[plan_ok], "floor": floor[plan_ok],
                          "elevation": elevation[plan_ok]})
            .groupby(["site", "plan", "floor"], sort=False)["elevation"].min().reset_index()
        )
        apartment = _objects(df["apartment_id"])
        used = ids_ok & (apartment != EMPTY_APARTMENT_ID) & (apartment != "")
        if layout.has("unit_usage") and kept_usages is not None:
            usage = pc.utf8_upper(_text(df["unit_usage"]))
            used &= pc.is_in(usage, pa.array(kept_usages, pa.string())).to_numpy(zero_copy_only=False)
        if used.any():
            last = (
                pd.DataFrame({"site": site[used], "floor": floor[used],
                              "apartment": apartment[used], "row": rows[used]})
                .groupby(["site", "floor", "apartment"], sort=False)["row"].max()
            )
            last_row.update(zip(last.index, last.to_numpy().tolist()))
    last_row = {(int(s), int(f), str(a)): int(r) for (s, f, a), r in last_row.items()}
    return _IdPass(valid + len(left_out.numbers), last_row, floor_parts)


def _kept_floors(floor_parts: list[pd.DataFrame]) -> tuple[dict[tuple[int, int], int], int]:
    """For each (site_id, plan_id) shared by several floors, the floor kept
    (lowest elevation, then lowest floor_id), and how many floors are dropped."""
    if not floor_parts:
        return {}, 0
    floors = (
        pd.concat(floor_parts)
        .groupby(["site", "plan", "floor"])["elevation"].min()
        .fillna(0.0)
        .reset_index()
        .sort_values(["site", "plan", "elevation", "floor"], kind="stable")
    )
    counts = floors.groupby(["site", "plan"])["floor"].transform("size")
    shared = floors[counts > 1]
    firsts = shared.drop_duplicates(["site", "plan"])
    kept_floor = {(int(s), int(p)): int(f) for s, p, f in zip(firsts["site"], firsts["plan"], firsts["floor"])}
    return kept_floor, len(shared) - len(firsts)


def count_rows(path: str | os.PathLike[str]) -> int:
    """Data rows in a geometries.csv (header and blank lines excluded), from a quick pass."""
    return _scan_lines(read_layout(path), DEFAULT_CHUNK_BYTES).rows


def _scan_lines(layout: SourceLayout, chunk_bytes: int) -> LineScan:
    try:
        return scan_lines(layout.path, layout.columns, chunk_bytes)
    except (OSError, pa.ArrowException) as exc:
        raise SourceError(f"{layout.path}: cannot read the file ({_one_line(exc)})") from None


# --- checking rows ------------------------------------------------------------------


class _Verdicts:
    """The first rejection of each row of a chunk (``ok`` while a row passes)."""

    def __init__(self, n: int) -> None:
        self.ok = np.ones(n, dtype=bool)
        self.reason = np.full(n, None, dtype=object)
        self.field = np.full(n, None, dtype=object)
        self.message = np.full(n, None, dtype=object)

    def reject(self, mask: np.ndarray, reason: str | np.ndarray, field_name: str, messages) -> None:
        """Reject rows in ``mask`` that still pass; ``messages`` is a string, or a
        function of the indices rejected giving one message per row."""
        idx = np.flatnonzero(mask & self.ok)
        if len(idx) == 0:
            return
        self.ok[idx] = False
        self.reason[idx] = reason if isinstance(reason, str) else reason[idx]
        self.field[idx] = field_name
        self.message[idx] = messages if isinstance(messages, str) else messages(idx)


def _snippet(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _joined(*parts) -> np.ndarray:
    """Strings made row by row from text and columns of integers or strings, in
    bulk: ``_joined("floor ", floors)`` is ``[f"floor {f}" for f in floors]``."""
    columns = [p if isinstance(p, str) else pc.cast(pa.array(p, from_pandas=True), pa.string()) for p in parts]
    return _objects(pc.binary_join_element_wise(*columns, ""))


def _plan_keys(site: np.ndarray, floor: np.ndarray, apartment: np.ndarray) -> np.ndarray:
    """:func:`homeloop.core.plan.plan_key` of each row."""
    if len(site) == 0:
        return np.zeros(0, dtype=object)
    return _joined(np.asarray(site, dtype=np.int64), "-", np.asarray(floor, dtype=np.int64), "-",
                   np.asarray(apartment, dtype=object))


#: Every known (entity type, subtype) pair, as ``entity_type:SUBTYPE``.
_KNOWN_KINDS = pa.array(sorted(f"{entity}:{kind}" for entity, kinds in SUBTYPES.items() for kind in kinds),
                        pa.string())


def _reject_unknown_subtypes(v: _Verdicts, entity: np.ndarray, subtype: np.ndarray) -> None:
    """Reject rows whose subtype is not a known subtype of their entity type.

    Checked row by row here rather than plan by plan in the audit: the row is
    at fault, not the plan, and its neighbours are read; an unknown kind kept
    would be a new kind of element no stage knows how to treat.
    """
    entities, subtypes = pa.array(entity, pa.string()), pa.array(subtype, pa.string())
    known = pc.is_in(pc.binary_join_element_wise(entities, subtypes, ":"), _KNOWN_KINDS)
    # Empty subtypes and unknown entity types are rejected as such.
    checked = pc.and_(pc.not_equal(subtypes, ""), pc.is_in(entities, pa.array(list(SUBTYPES), pa.string())))
    unknown = pc.and_(checked, pc.invert(known)).to_numpy(zero_copy_only=False)

    def messages(idx):
        out = []
        for i in idx:
            kind = entity[i]
            listed = ", ".join(sorted(SUBTYPES[kind]))
            out.append(f"{kind} subtype {_snippet(subtype[i])!r} is not a known {kind} subtype ({listed})")
        return out

    v.reject(unknown, UNKNOWN_SUBTYPE, "entity_subtype", messages)


def _check_chunk(batch: pa.RecordBatch, rows: np.ndarray, index: SourceIndex):
    """Check the rows of one chunk; return (kept rows, rejections)."""
    v = _Verdicts(batch.num_rows)
    col = {name: batch.column(name) for name in batch.schema.names}
    apartment = _objects(col["apartment_id"])
    v.reject(apartment == EMPTY_APARTMENT_ID, NO_APARTMENT, "apartment_id",
             "row belongs to no apartment (apartment_id is md5 of the empty string)")
    v.reject(pc.equal(_text(col["apartment_id"]), "").to_numpy(zero_copy_only=False), MISSING_VALUE,
             "apartment_id", "apartment_id is empty")
    v.reject(_unsafe_ids(col["apartment_id"]), UNSAFE_ID, "apartment_id",
             "apartment_id cannot name a file: only letters, digits and _ - . + are allowed, and no '..'")
    _check_usage(v, col, index)
    ids, area_empty = _check_ids(v, col, index)
    entity, subtype = _check_kinds(v, col, area_empty)
    numbers = _check_numbers(v, col, index.layout)
    geoms, why = _check_geometry(v, col, entity, subtype)
    ok = v.ok.copy()
    rejections = _chunk_rejections(v, col, rows, apartment, ~ok)
    keep = np.flatnonzero(ok)
    kept = pd.DataFrame(
        {
            "row": rows[keep],
            "site_id": ids["site_id"][keep],
            "floor_id": ids["floor_id"][keep],
            "apartment_id": apartment[keep],
            "building_id": ids["building_id"][keep],
            "plan_id": ids["plan_id"][keep],
            "unit_id": ids["unit_id"][keep],
            "area_id": ids["area_id"][keep],
            "entity_type": entity[keep],
            "subtype": subtype[keep],
            "geometry": geoms[keep],
            "elevation": numbers["elevation"][keep],
            "height": numbers["height"][keep],
            "invalid_reason": why[keep],
        }
    )
    kept["last_row"] = index.last_rows(kept["site_id"].to_numpy(), kept["floor_id"].to_numpy(),
                                       kept["apartment_id"].to_numpy())
    return kept, rejections


def _check_usage(v: _Verdicts, col: dict[str, pa.Array], index: SourceIndex) -> None:
    """Rows of a unit whose usage is not kept are left out, as ``unit_usage_<USAGE>``."""
    if not index.layout.has("unit_usage") or index.usages is None:
        return
    usage = _normalised(col["unit_usage"])
    v.reject(usage == "", MISSING_VALUE, "unit_usage", "unit_usage is empty")
    not_kept = ~pc.is_in(pa.array(usage, pa.string()), pa.array(index.usages, pa.string())).to_numpy(
        zero_copy_only=False)
    reasons = np.full(len(usage), None, dtype=object)
    reasons[not_kept] = [UNIT_USAGE_PREFIX + u for u in usage[not_kept].tolist()]
    kept = ", ".join(index.usages)
    v.reject(not_kept, reasons, "unit_usage",
             lambda idx: _joined("unit usage ", usage[idx], f" is not kept (kept: {kept})"))


def _check_ids(v: _Verdicts, col: dict[str, pa.Array], index: SourceIndex) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The id columns as integers (area_id as text, "" when empty), and which
    rows have no area_id; rejects rows with a missing or non-integer id, and
    floors that repeat the layout of another floor."""
    ids: dict[str, np.ndarray] = {}
    for name in ("site_id", "building_id", "plan_id", "floor_id", "unit_id"):
        if not index.layout.has(name):
            continue
        ints, empty, bad = _integers(col[name])
        ids[name] = ints
        v.reject(empty, MISSING_VALUE, name, f"{name} is empty")
        v.reject(bad, NOT_A_NUMBER, name, lambda idx, name=name: [
            f"{name} {_snippet(col[name][int(i)].as_py())!r} is not an integer" for i in idx])
    if "plan_id" not in ids:
        ids["plan_id"] = ids["floor_id"]
    area_ints, area_empty, area_bad = _integers(col["area_id"])
    v.reject(area_bad, NOT_A_NUMBER, "area_id", lambda idx: [
        f"area_id {_snippet(col['area_id'][int(i)].as_py())!r} is not an integer" for i in idx])
    ids["area_id"] = _objects(pc.if_else(area_empty, "", pc.cast(pa.array(area_ints), pa.string())))

    site, floor, plan_id = ids["site_id"], ids["floor_id"], ids["plan_id"]
    if index.kept_floor:
        kept = index.kept_floors(site, plan_id, floor)
        v.reject(kept != floor, REPEATED_FLOOR_LAYOUT, "floor_id", lambda idx: _joined(
            "floor ", floor[idx], " repeats the layout of floor ", kept[idx], " (plan ", plan_id[idx], ")"))
    return ids, area_empty


def _check_kinds(v: _Verdicts, col: dict[str, pa.Array], area_empty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """entity_type (lower case) and entity_subtype (upper case) of each row;
    rejects unknown or missing ones, and areas without an area_id."""
    entity = _normalised(col["entity_type"], upper=False)
    known = pc.is_in(pa.array(entity, pa.string()), pa.array(ENTITY_TYPES, pa.string()))
    v.reject(~known.to_numpy(zero_copy_only=False), UNKNOWN_ENTITY_TYPE, "entity_type", lambda idx: [
        f"entity_type {_snippet(col['entity_type'][int(i)].as_py())!r} is not one of {', '.join(ENTITY_TYPES)}"
        for i in idx])
    v.reject((entity == AREA) & area_empty, MISSING_VALUE, "area_id", "area row without area_id")
    subtype = _normalised(col["entity_subtype"])
    v.reject(subtype == "", MISSING_VALUE, "entity_subtype", "entity_subtype is empty")
    _reject_unknown_subtypes(v, entity, subtype)
    return entity, subtype


def _check_numbers(v: _Verdicts, col: dict[str, pa.Array], layout: SourceLayout) -> dict[str, np.ndarray]:
    """Elevation (0 when empty) and height (NaN when empty) of each row;
    rejects values that are not finite numbers, and heights of 0 m or less."""
    n = len(v.ok)
    numbers: dict[str, np.ndarray] = {}
    for name, default in (("elevation", 0.0), ("height", np.nan)):
        if not layout.has(name):
            numbers[name] = np.full(n, default)
            continue
        num, empty, bad = _floats(col[name])
        v.reject(bad, NOT_A_NUMBER, name, lambda idx, name=name: [
            f"{name} {_snippet(col[name][int(i)].as_py())!r} is not a finite number" for i in idx])
        numbers[name] = np.where(empty, default, num)
    height = numbers["height"]
    v.reject(height <= 0, NON_POSITIVE_HEIGHT, "height",
             lambda idx: [f"height {height[i]:g} m is not above 0: an element has a height" for i in idx])
    return numbers


def _check_geometry(v: _Verdicts, col: dict[str, pa.Array], entity: np.ndarray,
                    subtype: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The geometry of each row still passing, and why it is invalid (None
    when valid); rejects text that is not WKT, geometries that are not
    non-empty polygons, and invalid polygons of elements other than areas
    (an invalid area rejects its whole plan, in :func:`_assemble`)."""
    n = len(v.ok)
    text = col["geometry"]
    geoms = np.full(n, None, dtype=object)
    todo = np.flatnonzero(v.ok)
    if len(todo):
        geoms[todo] = _parse_wkt(text.take(pa.array(todo, pa.int64())))
    v.reject(pd.isna(geoms), MALFORMED_WKT, "geometry",
             lambda idx: [f"geometry is not valid WKT: {_snippet(text[int(i)].as_py())!r}" for i in idx])
    todo = np.flatnonzero(v.ok)
    kinds = np.full(n, -1, dtype=np.int64)
    kinds[todo] = shapely.get_type_id(geoms[todo])
    v.reject(~np.isin(kinds, POLYGON_TYPE_IDS), NOT_A_POLYGON, "geometry",
             lambda idx: [f"geometry is a {geoms[i].geom_type}, not a polygon" for i in idx])
    todo = np.flatnonzero(v.ok)
    empty_geom = np.zeros(n, dtype=bool)
    empty_geom[todo] = shapely.is_empty(geoms[todo])
    v.reject(empty_geom, EMPTY_GEOMETRY, "geometry", "geometry is an empty polygon")
    todo = np.flatnonzero(v.ok)
    invalid = np.zeros(n, dtype=bool)
    invalid[todo] = ~shapely.is_valid(geoms[todo])
    why = np.full(n, None, dtype=object)
    bad_idx = np.flatnonzero(invalid)
    if len(bad_idx):
        why[bad_idx] = shapely.is_valid_reason(geoms[bad_idx])
    v.reject(invalid & (entity != AREA), INVALID_ELEMENT_GEOMETRY, "geometry",
             lambda idx: [f"{entity[i]} {subtype[i]} polygon is not valid: {why[i]}" for i in idx])
    return geoms, why


def _parse_wkt(text: pa.Array) -> np.ndarray:
    """Geometries of WKT text (None where it is not WKT), parsed by shapely in bulk."""
    return shapely.from_wkt(_objects(text), on_invalid="ignore")


def _chunk_rejections(v: _Verdicts, col: dict[str, pa.Array], rows: np.ndarray, apartment: np.ndarray,
                      rejected: np.ndarray) -> pd.DataFrame:
    """The rejection table of the rows rejected in a chunk, with their plan
    key where their ids give one."""
    idx = np.flatnonzero(rejected)
    take = pa.array(idx, pa.int64())
    site, floor = col["site_id"].take(take), col["floor_id"].take(take)
    plan = np.full(len(idx), None, dtype=object)
    if len(idx):
        s_ints, s_empty, s_bad = _integers(site)
        f_ints, f_empty, f_bad = _integers(floor)
        apt = apartment[idx]
        has_apartment = (pc.not_equal(_text(pa.array(apt, pa.string())), "").to_numpy(zero_copy_only=False)
                         & (apt != EMPTY_APARTMENT_ID))
        good = ~(s_empty | s_bad | f_empty | f_bad) & has_apartment
        plan[good] = _plan_keys(s_ints[good], f_ints[good], apt[good])
    return pd.DataFrame(
        {
            "row": rows[idx],
            "plan": plan,
            "site_id": _objects(site),
            "floor_id": _objects(floor),
            "apartment_id": apartment[idx],
            "entity_type": _objects(col["entity_type"].take(take)),
            "field": v.field[idx],
            "reason": v.reason[idx],
            "message": v.message[idx],
            "level": ROW_LEVEL,
            "_emit": rows[idx],
        }
    )


def _left_out_rejections(layout: SourceLayout, rows: list[tuple[int, str, str | None, str, str]]) -> pd.DataFrame:
    """Rejections of rows that came in no batch, with the ids their text gives."""
    where = {c: i for i, c in enumerate(layout.columns)}
    records = []
    for line, reason, field_name, message, text in rows:
        values = next(csv.reader(io.StringIO(text or "")), [])

        def get(name: str) -> str | None:
            i = where[name]
            return values[i] if i < len(values) else None

        site, floor, apartment = get("site_id"), get("floor_id"), get("apartment_id")
        key = None
        try:
            if apartment and apartment != EMPTY_APARTMENT_ID:
                key = f"{int(float(site))}-{int(float(floor))}-{apartment}"
        except (TypeError, ValueError):
            key = None
        records.append(
            {
                "row": line,
                "plan": key,
                "site_id": site,
                "floor_id": floor,
                "apartment_id": apartment,
                "entity_type": get("entity_type"),
                "field": field_name,
                "reason": reason,
                "message": message,
                "level": ROW_LEVEL,
                "_emit": line,
            }
        )
    return pd.DataFrame.from_records(records, columns=list(REJECTION_COLUMNS) + ["_emit"])


# --- assembling plans ----------------------------------------------------------------


def _rejections_of(rows: pd.DataFrame, reason: str, field_name, messages, level: str) -> pd.DataFrame:
    """Rejections of kept rows (already checked) that fail when their plan is assembled."""
    keys = _plan_keys(rows["site_id"].to_numpy(), rows["floor_id"].to_numpy(), rows["apartment_id"].to_numpy())
    return pd.DataFrame(
        {
            "row": rows["row"].to_numpy(),
            "plan": keys,
            "site_id": rows["site_id"].astype(str).to_numpy(dtype=object),
            "floor_id": rows["floor_id"].astype(str).to_numpy(dtype=object),
            "apartment_id": rows["apartment_id"].to_numpy(dtype=object),
            "entity_type": rows["entity_type"].to_numpy(dtype=object),
            "field": field_name,
            "reason": reason,
            "message": messages,
            "level": level,
            "_emit": rows["last_row"].to_numpy(),
        }
    )


def _assemble(done: pd.DataFrame) -> tuple["_Assembly", list[pd.DataFrame]]:
    """Plans from the checked rows of plans whose last row has been read.

    Returns the plans' rows (:class:`_Assembly`) and the rejection frames.
    Rows are grouped by ``last_row`` (one value per plan); plans come out in
    order of it.
    """
    rejected: list[pd.DataFrame] = []
    if done.empty:
        return _Assembly.of(pd.DataFrame()), rejected
    done = _drop_broken_plans(_by_plan(done), rejected)
    entity = done["entity_type"].to_numpy()
    groups = done["last_row"].to_numpy()
    area_id = done["area_id"].to_numpy(dtype=object)
    # A row's space: an area is its own; a feature's is its area_id, or found below.
    space = np.where((entity == AREA) | (entity == FEATURE), area_id, "")
    lost = (entity == FEATURE) & ~_in_plan_spaces(done)
    # Plans share coordinates (each site has its own local frame, and floors of
    # a site lie on top of each other), so spatial queries over many plans at
    # once would meet every plan drawn at the same place. Queries run on a copy
    # of the geometry with each plan moved to a cell of its own.
    placed = _spread_out(done["geometry"].to_numpy(dtype=object), groups,
                         (entity == AREA) | (entity == OPENING) | (entity == SEPARATOR) | lost)
    # Spaces in the order Plan keeps them (by id), so that connect_openings sees
    # them as it would plan by plan.
    areas = np.flatnonzero(entity == AREA)
    areas = areas[np.lexsort((area_id[areas], groups[areas]))]
    spaces = _Spaces(placed[areas], groups[areas], area_id[areas])

    keep = np.ones(len(done), dtype=bool)
    outside = _place_lost_features(spaces, placed, groups, np.flatnonzero(lost), space)
    _reject_rows(rejected, done, outside, keep, FEATURE_OUTSIDE_SPACES,
                 lambda kinds: _joined("feature ", kinds, " lies outside every space of the plan"))
    openings = np.flatnonzero(entity == OPENING)
    walls = np.flatnonzero((entity == SEPARATOR) & done["subtype"].isin(WALL_KINDS).to_numpy())
    loose = openings[~_in_walls(placed[openings], groups[openings], placed[walls], groups[walls])]
    _reject_rows(rejected, done, loose, keep, OPENING_NOT_IN_WALL, lambda kinds: _joined(
        kinds, f" lies more than {WALL_CONTACT_TOLERANCE} m from every wall, column and railing"))
    openings = openings[keep[openings]]

    # Which spaces each opening opens into, for all plans of the chunk at once.
    links = np.full(len(done), "", dtype=object)
    if len(openings):
        hits = connect_openings(placed[openings], spaces.geoms, groups[openings], spaces.groups)
        ids = spaces.ids.tolist()
        links[openings] = [";".join([ids[i] for i in hit]) for hit in hits]
    if keep.all():
        return _Assembly.of(done, space, links), rejected
    return _Assembly.of(done[keep], space[keep], links[keep]), rejected


def _by_plan(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows sorted by (last_row, row): by plan, each plan's in file order."""
    order = np.lexsort((rows["row"].to_numpy(), rows["last_row"].to_numpy()))
    # Rows mostly come in that order already (a plan's rows together); then no copy.
    return rows if (order == np.arange(len(order))).all() else rows.iloc[order]


def _reject_rows(rejected: list[pd.DataFrame], done: pd.DataFrame, culprits: np.ndarray, keep: np.ndarray,
                 reason: str, messages) -> None:
    """Reject the rows ``culprits`` of ``done`` (row level, on their geometry),
    with ``messages(their subtypes)``, and take them out of ``keep``."""
    if len(culprits) == 0:
        return
    rows = done.iloc[culprits]
    rejected.append(_rejections_of(rows, reason, "geometry", messages(rows["subtype"].to_numpy()), ROW_LEVEL))
    keep[culprits] = False


def _drop_broken_plans(done: pd.DataFrame, rejected: list[pd.DataFrame]) -> pd.DataFrame:
    """The rows left once plans with an invalid area polygon, second areas with
    the same area_id and plans without a space are taken out (and rejected)."""
    is_area = (done["entity_type"] == AREA).to_numpy()
    drop = np.zeros(len(done), dtype=bool)
    # A plan with an invalid area polygon is rejected whole.
    bad_area = is_area & done["invalid_reason"].notna().to_numpy()
    if bad_area.any():
        culprits = done[bad_area].drop_duplicates("last_row").set_index("last_row")
        doomed = done["last_row"].isin(culprits.index).to_numpy()
        rows = done[doomed]
        first_row = culprits["row"].reindex(rows["last_row"]).to_numpy()
        first_why = culprits["invalid_reason"].reindex(rows["last_row"]).to_numpy()
        own = bad_area[doomed]
        first_area = culprits["area_id"].reindex(rows["last_row"]).to_numpy()
        # Culprit rows describe themselves; the plan's other rows name its first culprit.
        area = np.where(own, rows["area_id"], first_area)
        row = np.where(own, rows["row"], first_row)
        why = np.where(own, rows["invalid_reason"], first_why)
        messages = [f"area {a} at row {r} is not a valid polygon ({w}); the plan is rejected"
                    for a, r, w in zip(area, row, why)]
        fields_ = np.where(own, "geometry", None)
        rejected.append(_rejections_of(rows, INVALID_GEOMETRY, fields_, messages, PLAN_LEVEL))
        drop |= doomed

    # Duplicate area ids: the first row keeps the id.
    areas = is_area & ~drop
    dup = np.zeros(len(done), dtype=bool)
    dup[areas] = done[areas].duplicated(["last_row", "area_id"]).to_numpy()
    if dup.any():
        rows = done[dup]
        rejected.append(_rejections_of(rows, DUPLICATE_AREA_ID, "area_id",
                                       _joined("area_id ", rows["area_id"].to_numpy(), " appears earlier in the plan"),
                                       ROW_LEVEL))
        drop |= dup

    # Plans without a space.
    has_space = np.unique(done["last_row"].to_numpy()[is_area & ~drop])
    empty_plan = ~drop & ~np.isin(done["last_row"].to_numpy(), has_space)
    if empty_plan.any():
        rows = done[empty_plan]
        rejected.append(_rejections_of(rows, NO_SPACES, None, "plan has no valid area rows", PLAN_LEVEL))
        drop |= empty_plan
    return done[~drop] if drop.any() else done


@dataclass
class _Spaces:
    """The spaces of the plans being assembled, moved apart (:func:`_spread_out`):
    geometry, plan (its last row) and area_id, by plan then by id."""

    geoms: np.ndarray
    groups: np.ndarray
    ids: np.ndarray


def _in_plan_spaces(done: pd.DataFrame) -> np.ndarray:
    """For each row, whether its area_id names a space (an area row) of its plan."""
    is_area = (done["entity_type"] == AREA).to_numpy()
    keys = pd.MultiIndex.from_arrays([done["last_row"], done["area_id"]])
    return keys.isin(keys[is_area])


def _place_lost_features(spaces: _Spaces, placed: np.ndarray, groups: np.ndarray, lost: np.ndarray,
                         space: np.ndarray) -> np.ndarray:
    """Give each feature whose area_id names no space of its plan the space
    holding most of it (ties: the space listed first, the lowest id), writing
    it into ``space``; return the features that lie in no space."""
    if len(lost) == 0:
        return lost
    geoms = placed[lost]
    fi, si = shapely.STRtree(spaces.geoms).query(geoms, predicate="intersects")
    same = groups[lost][fi] == spaces.groups[si]
    fi, si = fi[same], si[same]
    overlap = shapely.area(shapely.intersection(geoms[fi], spaces.geoms[si]))
    fi, si, overlap = fi[overlap > 0], si[overlap > 0], overlap[overlap > 0]
    # Most overlap first; ties go to the space listed first (lowest id).
    order = np.lexsort((si, -overlap, fi))
    fi, si = fi[order], si[order]
    first = np.r_[True, fi[1:] != fi[:-1]] if len(fi) else np.zeros(0, dtype=bool)
    space[lost[fi[first]]] = spaces.ids[si[first]]
    found = np.zeros(len(lost), dtype=bool)
    found[fi] = True
    return lost[~found]


def _in_walls(openings: np.ndarray, opening_groups: np.ndarray, walls: np.ndarray,
              wall_groups: np.ndarray) -> np.ndarray:
    """For each opening, whether it lies within :data:`WALL_CONTACT_TOLERANCE`
    of a wall, column or railing of its plan."""
    in_wall = np.zeros(len(openings), dtype=bool)
    if len(openings) == 0 or len(walls) == 0:
        return in_wall
    tree = shapely.STRtree(walls)
    # Most openings are drawn through their wall: those that touch it need no distance.
    oi, wi = tree.query(openings, predicate="intersects")
    in_wall[oi[opening_groups[oi] == wall_groups[wi]]] = True
    rest = np.flatnonzero(~in_wall)
    if len(rest):
        oi, wi = tree.query(openings[rest], predicate="dwithin", distance=WALL_CONTACT_TOLERANCE)
        in_wall[rest[oi[opening_groups[rest][oi] == wall_groups[wi]]]] = True
    return in_wall


#: Gap (m) between the cells plans are moved to for spatial queries: far more
#: than any tolerance used across plan elements.
PLAN_CELL_GAP = 10.0
#: Side (m) of the cell each plan is moved to, and cells per grid row. A plan's
#: cell follows from its last row alone, so every plan is moved by the same
#: amount whatever else its chunk holds, and results do not depend on chunking.
PLAN_CELL_SIZE = 1000.0
PLAN_CELLS_PER_ROW = 4096


def _spread_out(geoms: np.ndarray, groups: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Copies of the ``wanted`` geometries (None for the others) with each group
    (plan, numbered by its last row) moved to its own cell of a grid, so that
    no two groups come within ``PLAN_CELL_GAP`` m of each other. A group's
    cell and offset follow from all its geometries."""
    placed = np.full(len(geoms), None, dtype=object)
    if len(geoms) == 0:
        return placed
    keys, codes = np.unique(groups, return_inverse=True)
    bounds = shapely.bounds(geoms)
    n = len(keys)
    lo_x, lo_y = np.full(n, np.inf), np.full(n, np.inf)
    hi_x, hi_y = np.full(n, -np.inf), np.full(n, -np.inf)
    np.minimum.at(lo_x, codes, bounds[:, 0])
    np.minimum.at(lo_y, codes, bounds[:, 1])
    np.maximum.at(hi_x, codes, bounds[:, 2])
    np.maximum.at(hi_y, codes, bounds[:, 3])
    extent = float(max((hi_x - lo_x).max(), (hi_y - lo_y).max()))
    cell = PLAN_CELL_SIZE
    while extent + PLAN_CELL_GAP > cell:  # Only for plans over a kilometre across.
        cell *= 10
    keys = keys.astype(np.int64)
    shift_x = (keys % PLAN_CELLS_PER_ROW) * cell - lo_x
    shift_y = (keys // PLAN_CELLS_PER_ROW) * cell - lo_y
    wanted = np.flatnonzero(wanted)
    moved = geoms[wanted]
    # As shapely.transform does, reading the coordinates once.
    xy, owner = shapely.get_coordinates(moved, return_index=True)
    owner = codes[wanted][owner]
    xy += np.column_stack([shift_x[owner], shift_y[owner]])
    placed[wanted] = shapely.set_coordinates(moved, xy)
    return placed


#: Order of element kinds within a plan in the element table (as
#: :func:`homeloop.core.plan.frame_from_plans` writes them).
_ENTITY_RANK = {AREA: 0, SEPARATOR: 1, OPENING: 2, FEATURE: 3}


@dataclass
class _Assembly:
    """Plans assembled from their checked rows (sorted by last_row, then row),
    with the ``space`` and ``connects`` of each element. The tables are made
    when first asked for, by whichever thread needs them: the element table
    (as :func:`homeloop.core.plan.frame_from_plans` gives for the plans), the
    plans' ids (:func:`_plan_ids`) and :class:`Plan` objects."""

    rows: pd.DataFrame
    space: np.ndarray
    connects: np.ndarray

    @classmethod
    def of(cls, rows: pd.DataFrame, space: np.ndarray | None = None,
           connects: np.ndarray | None = None) -> "_Assembly":
        empty = np.zeros(0, dtype=object)
        return cls(rows, empty if space is None else space, empty if connects is None else connects)

    @cached_property
    def _starts(self) -> np.ndarray:
        """The first row of each plan."""
        return np.flatnonzero(np.r_[True, np.diff(self.rows["last_row"].to_numpy()) != 0])

    @cached_property
    def plan_ids(self) -> pd.DataFrame:
        if self.rows.empty:
            return pd.DataFrame(columns=list(_PLAN_ID_COLUMNS))
        return _plan_ids(self.rows, self._starts)

    @cached_property
    def element_columns(self) -> dict[str, np.ndarray]:
        if self.rows.empty:
            return {name: values.to_numpy() for name, values in frame_from_plans([]).items()}
        return _element_columns(self, self._starts)

    @cached_property
    def elements(self) -> pd.DataFrame:
        if self.rows.empty:
            return frame_from_plans([])
        return _element_frame(self.element_columns)

    def plans(self) -> list[Plan]:
        """One :class:`Plan` per plan, built by :meth:`Plan.from_rows`."""
        return _plans_of(self)


def _plan_ids(done: pd.DataFrame, starts: np.ndarray) -> pd.DataFrame:
    """One row per plan (``starts``: its first row in ``done``): the ids of
    :class:`homeloop.core.plan.PlanIds` from the plan's first row (``unit_ids``: all
    its unit ids, sorted, joined by commas; ``unit_id`` the lowest) and its
    elevation, its lowest area's (as :meth:`Plan.from_rows` reads them)."""
    units = done["unit_id"].to_numpy()
    elevation = np.where(done["entity_type"].to_numpy() == AREA, done["elevation"].to_numpy(), np.inf)
    lowest = np.minimum.reduceat(elevation, starts)
    first = done.iloc[starts]
    return pd.DataFrame(
        {
            "plan": _plan_keys(first["site_id"].to_numpy(), first["floor_id"].to_numpy(),
                               first["apartment_id"].to_numpy()),
            "site_id": first["site_id"].to_numpy(),
            "building_id": first["building_id"].to_numpy(),
            "plan_id": first["plan_id"].to_numpy(),
            "floor_id": first["floor_id"].to_numpy(),
            "apartment_id": first["apartment_id"].to_numpy(dtype=object),
            "unit_ids": _unit_lists(units, starts),
            "unit_id": np.minimum.reduceat(units, starts),
            "elevation": np.where(np.isfinite(lowest), lowest, 0.0),
        },
        columns=list(_PLAN_ID_COLUMNS),
    )


#: Columns of :attr:`PlanBatch.plan_ids`.
_PLAN_ID_COLUMNS = ("plan", "site_id", "building_id", "plan_id", "floor_id", "apartment_id", "unit_ids", "unit_id",
                    "elevation")


def _unit_lists(units: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per plan (rows from ``starts``), its distinct unit ids in ascending
    order, joined by commas."""
    low, high = np.minimum.reduceat(units, starts), np.maximum.reduceat(units, starts)
    out = low.astype(str).astype(object)
    ends = np.r_[starts[1:], len(units)]
    for plan in np.flatnonzero(low != high).tolist():  # Plans of several units: rare.
        out[plan] = ",".join(str(u) for u in sorted(set(units[starts[plan]:ends[plan]].tolist())))
    return out


def _element_ids(kinds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """:func:`homeloop.core.plan.element_id` of each (kind, row), in bulk."""
    return _joined(_objects(pc.utf8_lower(pa.array(kinds, pa.string()))), "_", rows)


def _element_columns(assembly: _Assembly, starts: np.ndarray) -> dict[str, np.ndarray]:
    """The columns of the element table of the plans (:data:`homeloop.core.plan.ELEMENT_COLUMNS`):
    areas by id, then separators, openings and features, each by row."""
    done, plan_ids = assembly.rows, assembly.plan_ids
    entity = done["entity_type"].to_numpy(dtype=object)
    is_area = entity == AREA
    area_id = done["area_id"].to_numpy(dtype=object)
    rows = done["row"].to_numpy()
    element = area_id.copy()
    element[~is_area] = _element_ids(done["subtype"].to_numpy(dtype=object)[~is_area], rows[~is_area])
    codes = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(done)]))
    rank = np.select([entity == kind for kind in _ENTITY_RANK], list(_ENTITY_RANK.values()))
    area_order = np.zeros(len(done), dtype=np.int64)  # areas by id, as text
    area_order[is_area] = np.unique(area_id[is_area], return_inverse=True)[1]
    order = np.lexsort((rows, area_order, rank, codes))
    per_plan = {name: plan_ids[name].to_numpy()[codes[order]]
                for name in ("plan", "building_id", "plan_id", "unit_id", "elevation")}
    return {
        "plan": per_plan["plan"],
        "site_id": done["site_id"].to_numpy()[order],
        "building_id": per_plan["building_id"],
        "plan_id": per_plan["plan_id"],
        "floor_id": done["floor_id"].to_numpy()[order],
        "apartment_id": done["apartment_id"].to_numpy(dtype=object)[order],
        "unit_id": per_plan["unit_id"],
        "elevation": per_plan["elevation"],
        "entity_type": entity[order],
        "subtype": done["subtype"].to_numpy(dtype=object)[order],
        "element": element[order],
        "space": assembly.space[order],
        "connects": assembly.connects[order],
        "row": rows[order],
        "geometry": done["geometry"].to_numpy(dtype=object)[order],
    }


def _element_frame(columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """The element table as :func:`homeloop.core.plan.frame_from_plans` gives it."""
    frame = pd.DataFrame(columns, columns=list(ELEMENT_COLUMNS))
    frame["row"] = frame["row"].astype("Int64")
    return frame


#: Columns of the checked rows handed to :meth:`homeloop.core.plan.Plan.from_rows`,
#: under the names it reads (the file's).
_PLAN_ROW_COLUMNS = {
    "row": "row", "site_id": "site_id", "building_id": "building_id", "plan_id": "plan_id",
    "floor_id": "floor_id", "apartment_id": "apartment_id", "unit_id": "unit_id", "entity_type": "entity_type",
    "entity_subtype": "subtype", "geometry": "geometry", "elevation": "elevation", "height": "height",
}


def _plans_of(assembly: _Assembly) -> list[Plan]:
    """One :class:`Plan` per ``last_row`` group of the checked rows (sorted by
    last_row, then row), built by :meth:`Plan.from_rows`, with each row's
    space as its area_id (for a feature: the space found to hold it) and the
    spaces each opening joins, both found for all plans at once."""
    done = assembly.rows
    if done.empty:
        return []
    columns = {name: done[source].tolist() for name, source in _PLAN_ROW_COLUMNS.items()}
    columns["area_id"] = assembly.space.tolist()
    columns["connects"] = assembly.connects.tolist()
    last = done["last_row"].to_numpy()
    cuts = [0, *(np.flatnonzero(np.diff(last) != 0) + 1).tolist(), len(done)]
    # The rows were checked one by one (_check_chunk) and plan by plan (_assemble).
    return [Plan.from_rows({name: values[a:b] for name, values in columns.items()})
            for a, b in zip(cuts[:-1], cuts[1:])]


# --- the main pass -------------------------------------------------------------------------


def _finish_rejections(parts: list[pd.DataFrame]) -> pd.DataFrame:
    parts = [p for p in parts if len(p)]
    if not parts:
        return empty_rejections()
    frame = pd.concat(parts, ignore_index=True)
    frame = frame.sort_values(["_emit", "row"], kind="stable").drop(columns="_emit")
    frame = frame.reset_index(drop=True)
    frame["row"] = frame["row"].astype("Int64")
    for c in REJECTION_COLUMNS:
        if c != "row":
            frame[c] = frame[c].astype(object).where(frame[c].notna(), None)
    return frame[list(REJECTION_COLUMNS)]


@dataclass
class _CheckedChunk:
    """A chunk of the file, checked: its kept rows, its rejections (with the
    rows left out of it), the data rows it read and its last line (None for
    the rows left out after the last chunk)."""

    end: int | None
    kept: pd.DataFrame
    rejections: list[pd.DataFrame]
    rows_read: int


def _check_chunks(index: SourceIndex, chunk_bytes: int) -> Iterator[_CheckedChunk]:
    """Read the file chunk by chunk and check each chunk (:func:`_check_chunk`)."""
    layout = index.layout
    left_out = _LeftOut(index.lines)
    reader = _open(layout, layout.columns, chunk_bytes, left_out)
    for batch, rows in _numbered_batches(reader, layout.path, left_out):
        chunk_end = int(rows[-1])
        kept, rejections = _check_chunk(batch, rows, index)
        passed = left_out.take_through(chunk_end)
        yield _CheckedChunk(chunk_end, kept, [rejections, _left_out_rejections(layout, passed)],
                            batch.num_rows + len(passed))
    tail = left_out.take_through(None)
    yield _CheckedChunk(None, pd.DataFrame(), [_left_out_rejections(layout, tail)], len(tail))


_END = object()
#: Chunks read and checked ahead of the one being assembled (each holds its rows in memory).
CHUNKS_AHEAD = 1
#: Chunks assembled at once, each in a thread (the assembly's spatial joins are GEOS's, which
#: releases the GIL): one assembling thread alone set the pace of a full-size ingest.
ASSEMBLY_THREADS = 2


def _ahead(items: Iterator, name: str) -> Iterator:
    """The items of ``items``, made in a thread of their own one item ahead of
    their use: reading and checking a chunk (pyarrow, GEOS) runs while the
    chunk before is assembled. Errors come out where the item would have."""
    ready: queue.Queue = queue.Queue(maxsize=CHUNKS_AHEAD)
    stop = threading.Event()

    def make() -> None:
        try:
            for item in items:
                ready.put(item)
                if stop.is_set():
                    return
            ready.put(_END)
        except BaseException as exc:  # handed over to the consumer, raised there
            ready.put(exc)

    thread = threading.Thread(target=make, name=name, daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # let a waiting put go through, so the thread ends
            try:
                ready.get(timeout=0.1)
            except queue.Empty:
                pass
        thread.join()


def read_batches(
    path: str | os.PathLike[str],
    *,
    usages: Iterable[str] | None = DEFAULT_USAGES,
    keep_all_floors: bool = False,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    index: SourceIndex | None = None,
) -> Iterator[PlanBatch]:
    """Stream a geometries.csv as batches of plans and rejections.

    ``usages``: unit usages kept (others are rejected as ``unit_usage_<X>``;
    None keeps every usage);
    ``keep_all_floors``: keep floors that repeat another floor's layout;
    ``index``: the result of :func:`scan_source` with the same options, if
    already made. A plan comes out in the batch of the chunk holding its last
    row; across batches, plans and rejections come in an order that does not
    depend on ``chunk_bytes`` (plans by their last row, rejections by the row
    at which they are settled, then by row).
    """
    if index is None:
        index = scan_source(path, usages=usages, keep_all_floors=keep_all_floors, chunk_bytes=chunk_bytes)
    in_flight: collections.deque[tuple[Future, _CheckedChunk]] = collections.deque()

    def settled() -> PlanBatch:
        assembled, chunk = in_flight.popleft()
        assembly, assembly_rejections = assembled.result()
        return PlanBatch(_finish_rejections([*chunk.rejections, *assembly_rejections]), chunk.rows_read, assembly)

    pending = pd.DataFrame()
    with ThreadPoolExecutor(max_workers=ASSEMBLY_THREADS, thread_name_prefix="assemble") as assemblers:
        for chunk in _ahead(_check_chunks(index, chunk_bytes), name=f"read {index.layout.path.name}"):
            if chunk.end is None:
                # Every plan's last row has been read by now (the index pass saw the same
                # rows), so nothing is pending; rows left out after the last good row remain.
                in_flight.append((assemblers.submit(_assemble, pending), chunk))
                break
            pending = pd.concat([pending, chunk.kept], ignore_index=True) if len(pending) else chunk.kept
            complete = (pending["last_row"] <= chunk.end).to_numpy()
            in_flight.append((assemblers.submit(_assemble, pending[complete]), chunk))
            pending = pending[~complete].reset_index(drop=True)
            while len(in_flight) > ASSEMBLY_THREADS:
                yield settled()
        while in_flight:
            batch = settled()
            if in_flight or batch.rows_read or len(batch.assembly.rows) or len(batch.rejections):
                yield batch


def read_plans(path: str | os.PathLike[str], **options) -> tuple[list[Plan], pd.DataFrame]:
    """All plans of a (small) file, sorted by key, and the rejection table."""
    plans: list[Plan] = []
    parts: list[pd.DataFrame] = []
    for batch in read_batches(path, **options):
        plans.extend(batch.plans)
        parts.append(batch.rejections)
    plans.sort(key=lambda p: p.key)
    parts = [p for p in parts if len(p)]
    frame = pd.concat(parts, ignore_index=True) if parts else empty_rejections()
    return plans, frame


def _is_missing(value) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))

