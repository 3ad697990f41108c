"""Read Swiss Dwellings ``geometries.csv`` (docs/data-format.md) into plans.

The reader streams the file in chunks with pyarrow and turns its rows into
:class:`homeloop.plan.Plan` objects, one per apartment per floor. Every row it
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
   another floor (they share a ``plan_id``; only the lowest is kept);
3. the main pass, which checks every row, parses the geometry of the rows that
   pass, and assembles plans chunk by chunk.

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
- ``unknown_entity_type``: entity_type is not area, separator, opening or feature.
- ``unknown_subtype``: entity_subtype is not one of the known subtypes of its
  entity type (:data:`homeloop.plan.SUBTYPES`); the message lists them.
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

import csv
import io
import logging
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import shapely

from homeloop.pipeline.sources.csv_lines import UTF8, LineScan, scan_lines
from homeloop.plan import (
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
    element_id,
    frame_from_plans,
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
#: Bytes of CSV per chunk. 32 MiB is ~100,000 rows of Swiss Dwellings.
DEFAULT_CHUNK_BYTES = 32 << 20
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
    rows that became elements of ``plans``; ``elements`` is their element table. Summed over all batches,
    rows_read == rows_used + len(rejections).
    """

    plans: list[Plan]
    rejections: pd.DataFrame
    rows_read: int
    rows_used: int
    #: The element table of ``plans`` (as :func:`homeloop.plan.frame_from_plans`).
    elements: pd.DataFrame | None = None

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
    whole = pc.replace_substring_regex(text, r"\.0*$", "")
    try:  # The common case: every value an integer or empty.
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


def scan_source(
    path: str | os.PathLike[str],
    *,
    usages: Iterable[str] | None = DEFAULT_USAGES,
    keep_all_floors: bool = False,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> SourceIndex:
    """The index pass: find where rows start, then read only the id columns
    (see :class:`SourceIndex`). A file that is not UTF-8 is logged, in one
    warning line naming the encoding it is read in.

    ``usages``: the unit usages kept; None keeps every usage.
    """
    layout = read_layout(path)
    lines = _scan_lines(layout, chunk_bytes)
    if lines.warning:
        logging.getLogger(__name__).warning(lines.warning)
    kept_usages = None if usages is None else tuple(sorted({u.strip().upper() for u in usages}))
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
        if layout.has("elevation"):
            elevation, _, _ = _floats(df["elevation"])
        else:
            elevation = np.zeros(n)
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
    rows_total = valid + len(left_out.numbers) + len(lines.bad)
    kept_floor: dict[tuple[int, int], int] = {}
    collapsed = 0
    if floor_parts and not keep_all_floors:
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
        kept_floor = {
            (int(s), int(p)): int(f) for s, p, f in zip(firsts["site"], firsts["plan"], firsts["floor"])
        }
        collapsed = len(shared) - len(firsts)
    last_row = {(int(s), int(f), str(a)): int(r) for (s, f, a), r in last_row.items()}
    return SourceIndex(layout, kept_usages, keep_all_floors, rows_total, last_row, kept_floor, collapsed, lines)


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
    """The first rejection of each row of a chunk (None while a row passes)."""

    def __init__(self, n: int) -> None:
        self.reason = np.full(n, None, dtype=object)
        self.field = np.full(n, None, dtype=object)
        self.message = np.full(n, None, dtype=object)

    @property
    def ok(self) -> np.ndarray:
        return pd.isna(self.reason)

    def reject(self, mask: np.ndarray, reason: str | np.ndarray, field_name: str, messages) -> None:
        """Reject rows in ``mask`` that still pass; ``messages`` is a string, or a
        function of the indices rejected giving one message per row."""
        idx = np.flatnonzero(mask & self.ok)
        if len(idx) == 0:
            return
        self.reason[idx] = reason if isinstance(reason, str) else reason[idx]
        self.field[idx] = field_name
        self.message[idx] = messages if isinstance(messages, str) else messages(idx)


def _snippet(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plan_keys(site: np.ndarray, floor: np.ndarray, apartment: np.ndarray) -> np.ndarray:
    return np.array(
        [f"{s}-{f}-{a}" for s, f, a in zip(site.tolist(), floor.tolist(), apartment.tolist())],
        dtype=object,
    )


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
    layout = index.layout
    n = batch.num_rows
    v = _Verdicts(n)
    col = {name: batch.column(name) for name in batch.schema.names}
    apartment = _objects(col["apartment_id"])

    v.reject(apartment == EMPTY_APARTMENT_ID, NO_APARTMENT, "apartment_id",
             "row belongs to no apartment (apartment_id is md5 of the empty string)")
    v.reject(pc.equal(_text(col["apartment_id"]), "").to_numpy(zero_copy_only=False), MISSING_VALUE,
             "apartment_id", "apartment_id is empty")

    if layout.has("unit_usage") and index.usages is not None:
        usage = _normalised(col["unit_usage"])
        v.reject(usage == "", MISSING_VALUE, "unit_usage", "unit_usage is empty")
        not_kept = ~pc.is_in(pa.array(usage, pa.string()), pa.array(index.usages, pa.string())).to_numpy(
            zero_copy_only=False)
        reasons = np.array([UNIT_USAGE_PREFIX + u for u in usage.tolist()], dtype=object)
        v.reject(not_kept, reasons, "unit_usage",
                 lambda idx: [f"unit usage {usage[i]} is not kept (kept: {', '.join(index.usages)})"
                              for i in idx])

    ids: dict[str, np.ndarray] = {}
    for name in ("site_id", "building_id", "plan_id", "floor_id", "unit_id"):
        if not layout.has(name):
            continue
        ints, empty, bad = _integers(col[name])
        ids[name] = ints
        v.reject(empty, MISSING_VALUE, name, f"{name} is empty")
        raw = col[name]
        v.reject(bad, NOT_A_NUMBER, name,
                 lambda idx, raw=raw, name=name: [f"{name} {_snippet(raw[int(i)].as_py())!r} is not an integer"
                                                  for i in idx])
    if "plan_id" not in ids:
        ids["plan_id"] = ids["floor_id"]
    area_ints, area_empty, area_bad = _integers(col["area_id"])
    area_raw = col["area_id"]
    v.reject(area_bad, NOT_A_NUMBER, "area_id",
             lambda idx: [f"area_id {_snippet(area_raw[int(i)].as_py())!r} is not an integer" for i in idx])

    site, floor, plan_id = ids["site_id"], ids["floor_id"], ids["plan_id"]
    if index.kept_floor:
        kept = np.array(
            [index.kept_floor.get((s, p), f) for s, p, f in zip(site.tolist(), plan_id.tolist(), floor.tolist())],
            dtype=np.int64,
        )
        v.reject(kept != floor, REPEATED_FLOOR_LAYOUT, "floor_id",
                 lambda idx: [f"floor {floor[i]} repeats the layout of floor {kept[i]} (plan {plan_id[i]})"
                              for i in idx])

    entity = _normalised(col["entity_type"], upper=False)
    entity_raw = _objects(col["entity_type"])
    known = pc.is_in(pa.array(entity, pa.string()), pa.array(ENTITY_TYPES, pa.string()))
    v.reject(~known.to_numpy(zero_copy_only=False), UNKNOWN_ENTITY_TYPE, "entity_type",
             lambda idx: [f"entity_type {_snippet(entity_raw[i])!r} is not one of {', '.join(ENTITY_TYPES)}"
                          for i in idx])
    is_area = entity == AREA
    v.reject(is_area & area_empty, MISSING_VALUE, "area_id", "area row without area_id")
    subtype = _normalised(col["entity_subtype"])
    v.reject(subtype == "", MISSING_VALUE, "entity_subtype", "entity_subtype is empty")
    _reject_unknown_subtypes(v, entity, subtype)

    numbers: dict[str, np.ndarray] = {}
    for name, default in (("elevation", 0.0), ("height", np.nan)):
        if not layout.has(name):
            numbers[name] = np.full(n, default)
            continue
        num, empty, bad = _floats(col[name])
        raw = col[name]
        v.reject(bad, NOT_A_NUMBER, name,
                 lambda idx, raw=raw, name=name: [f"{name} {_snippet(raw[int(i)].as_py())!r} is not a finite number"
                                                  for i in idx])
        numbers[name] = np.where(empty, default, num)
    v.reject(numbers["height"] <= 0, NON_POSITIVE_HEIGHT, "height",
             lambda idx: [f"height {numbers['height'][i]:g} m is not above 0: an element has a height" for i in idx])

    # Geometry: parse only rows that passed so far.
    wkt = _objects(col["geometry"])
    geoms = np.full(n, None, dtype=object)
    todo = np.flatnonzero(v.ok)
    if len(todo):
        geoms[todo] = shapely.from_wkt(wkt[todo], on_invalid="ignore")
    v.reject(pd.isna(geoms), MALFORMED_WKT, "geometry",
             lambda idx: [f"geometry is not valid WKT: {_snippet(wkt[i])!r}" for i in idx])
    todo = np.flatnonzero(v.ok)
    kinds = np.full(n, -1, dtype=np.int64)
    kinds[todo] = shapely.get_type_id(geoms[todo])
    polygonal = np.isin(kinds, POLYGON_TYPE_IDS)
    v.reject(~polygonal, NOT_A_POLYGON, "geometry",
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
    v.reject(invalid & ~is_area, INVALID_ELEMENT_GEOMETRY, "geometry",
             lambda idx: [f"{entity[i]} {subtype[i]} polygon is not valid: {why[i]}" for i in idx])

    ok = v.ok
    # Plan keys for the rejection table, where the ids allow one.
    rejected_idx = np.flatnonzero(~ok)
    plan_of_rejected = np.full(len(rejected_idx), None, dtype=object)
    if len(rejected_idx):
        take = pa.array(rejected_idx, pa.int64())
        s_ints, s_empty, s_bad = _integers(col["site_id"].take(take))
        f_ints, f_empty, f_bad = _integers(col["floor_id"].take(take))
        apt = apartment[rejected_idx]
        has_apartment = np.array([a.strip() != "" and a != EMPTY_APARTMENT_ID for a in apt], dtype=bool)
        good = ~(s_empty | s_bad | f_empty | f_bad) & has_apartment
        plan_of_rejected[good] = _plan_keys(s_ints[good], f_ints[good], apt[good])
    rejections = pd.DataFrame(
        {
            "row": rows[rejected_idx],
            "plan": plan_of_rejected,
            "site_id": _objects(col["site_id"].take(pa.array(rejected_idx, pa.int64()))),
            "floor_id": _objects(col["floor_id"].take(pa.array(rejected_idx, pa.int64()))),
            "apartment_id": apartment[rejected_idx],
            "entity_type": entity_raw[rejected_idx],
            "field": v.field[rejected_idx],
            "reason": v.reason[rejected_idx],
            "message": v.message[rejected_idx],
            "level": ROW_LEVEL,
            "_emit": rows[rejected_idx],
        }
    )

    keep = np.flatnonzero(ok)
    area_ids = np.full(len(keep), "", dtype=object)
    has_area = ~area_empty[keep]
    area_ids[has_area] = area_ints[keep][has_area].astype(str)
    kept = pd.DataFrame(
        {
            "row": rows[keep],
            "site_id": site[keep],
            "floor_id": floor[keep],
            "apartment_id": apartment[keep],
            "building_id": ids["building_id"][keep],
            "plan_id": plan_id[keep],
            "unit_id": ids["unit_id"][keep],
            "area_id": area_ids,
            "entity_type": entity[keep],
            "subtype": subtype[keep],
            "geometry": geoms[keep],
            "elevation": numbers["elevation"][keep],
            "height": numbers["height"][keep],
            "invalid_reason": why[keep],
        }
    )
    if len(kept):
        last = [index.last_row[(s, f, a)] for s, f, a in
                zip(kept["site_id"].tolist(), kept["floor_id"].tolist(), kept["apartment_id"].tolist())]
        kept["last_row"] = np.asarray(last, dtype=np.int64)
    else:
        kept["last_row"] = np.zeros(0, dtype=np.int64)
    return kept, rejections


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


def _assemble(done: pd.DataFrame):
    """Plans from the checked rows of plans whose last row has been read.

    Returns (plans, element table, rejection frames, rows used). Rows are
    grouped by ``last_row`` (one value per plan); plans come out in order of it.
    """
    rejected: list[pd.DataFrame] = []
    if done.empty:
        return [], frame_from_plans([]), rejected, 0
    done = done.sort_values(["last_row", "row"], kind="stable").reset_index(drop=True)

    # A plan with an invalid area polygon is rejected whole.
    bad_area = (done["entity_type"] == AREA) & done["invalid_reason"].notna()
    if bad_area.any():
        culprits = done[bad_area].drop_duplicates("last_row").set_index("last_row")
        doomed = done["last_row"].isin(culprits.index)
        rows = done[doomed]
        first_row = culprits["row"].reindex(rows["last_row"]).to_numpy()
        first_why = culprits["invalid_reason"].reindex(rows["last_row"]).to_numpy()
        own = bad_area[doomed].to_numpy()
        first_area = culprits["area_id"].reindex(rows["last_row"]).to_numpy()
        # Culprit rows describe themselves; the plan's other rows name its first culprit.
        area = np.where(own, rows["area_id"], first_area)
        row = np.where(own, rows["row"], first_row)
        why = np.where(own, rows["invalid_reason"], first_why)
        messages = [f"area {a} at row {r} is not a valid polygon ({w}); the plan is rejected"
                    for a, r, w in zip(area, row, why)]
        fields_ = np.where(own, "geometry", None)
        rejected.append(_rejections_of(rows, INVALID_GEOMETRY, fields_, messages, PLAN_LEVEL))
        done = done[~doomed].reset_index(drop=True)

    # Duplicate area ids: the first row keeps the id.
    is_area = (done["entity_type"] == AREA).to_numpy()
    dup = np.zeros(len(done), dtype=bool)
    dup[is_area] = done[is_area].duplicated(["last_row", "area_id"]).to_numpy()
    if dup.any():
        rows = done[dup]
        rejected.append(_rejections_of(rows, DUPLICATE_AREA_ID, "area_id",
                                       [f"area_id {a} appears earlier in the plan" for a in rows["area_id"]],
                                       ROW_LEVEL))
        done = done[~dup].reset_index(drop=True)

    # Plans without a space.
    has_space = done.loc[done["entity_type"] == AREA, "last_row"].unique()
    empty_plan = ~done["last_row"].isin(has_space)
    if empty_plan.any():
        rows = done[empty_plan]
        rejected.append(_rejections_of(rows, NO_SPACES, None, "plan has no valid area rows", PLAN_LEVEL))
        done = done[~empty_plan].reset_index(drop=True)

    # Plans share coordinates (each site has its own local frame, and floors of
    # a site lie on top of each other), so spatial queries over many plans at
    # once would meet every plan drawn at the same place. Queries run on a copy
    # of the geometry with each plan moved to a cell of its own.
    done = done.assign(placed=_spread_out(done["geometry"].to_numpy(dtype=object), done["last_row"].to_numpy()))

    # Spaces in the order Plan keeps them (by id), so that connect_openings sees
    # them as it would plan by plan.
    areas = done[done["entity_type"] == AREA].sort_values(["last_row", "area_id"], kind="stable")
    space_geoms = areas["placed"].to_numpy(dtype=object)
    space_groups = areas["last_row"].to_numpy()
    space_ids = areas["area_id"].to_numpy(dtype=object)

    # Features: keep a valid area_id, else the space holding most of the feature.
    feature_space: dict[int, str] = {}
    features = done[done["entity_type"] == FEATURE]
    if len(features):
        plan_spaces = set(zip(space_groups.tolist(), space_ids.tolist()))
        need = []
        for pos, (row, group, area_id) in enumerate(
            zip(features["row"].tolist(), features["last_row"].tolist(), features["area_id"].tolist())
        ):
            if (group, area_id) in plan_spaces:
                feature_space[row] = area_id
            else:
                need.append(pos)
        if need:
            lost = features.iloc[need]
            geoms = lost["placed"].to_numpy(dtype=object)
            fi, si = shapely.STRtree(space_geoms).query(geoms, predicate="intersects")
            same = lost["last_row"].to_numpy()[fi] == space_groups[si]
            fi, si = fi[same], si[same]
            overlap = shapely.area(shapely.intersection(geoms[fi], space_geoms[si]))
            fi, si, overlap = fi[overlap > 0], si[overlap > 0], overlap[overlap > 0]
            lost_rows = lost["row"].to_numpy()
            # Most overlap first; ties go to the space listed first (lowest id).
            for f, s_ in zip(*(a[np.lexsort((si, -overlap, fi))] for a in (fi, si))):
                feature_space.setdefault(int(lost_rows[f]), space_ids[s_])
            outside = lost[~lost["row"].isin(list(feature_space))]
            if len(outside):
                rejected.append(_rejections_of(
                    outside, FEATURE_OUTSIDE_SPACES, "geometry",
                    [f"feature {k} lies outside every space of the plan" for k in outside["subtype"]],
                    ROW_LEVEL))
                done = done[~done["row"].isin(outside["row"])].reset_index(drop=True)

    # Openings must sit in a wall, column or railing of their plan.
    openings = done[done["entity_type"] == OPENING]
    walls = done[(done["entity_type"] == SEPARATOR) & done["subtype"].isin(WALL_KINDS)]
    if len(openings):
        op_geoms = openings["placed"].to_numpy(dtype=object)
        in_wall = np.zeros(len(openings), dtype=bool)
        if len(walls):
            oi, wi = shapely.STRtree(walls["placed"].to_numpy(dtype=object)).query(
                op_geoms, predicate="dwithin", distance=WALL_CONTACT_TOLERANCE)
            same = openings["last_row"].to_numpy()[oi] == walls["last_row"].to_numpy()[wi]
            in_wall[np.unique(oi[same])] = True
        if not in_wall.all():
            loose = openings[~in_wall]
            rejected.append(_rejections_of(
                loose, OPENING_NOT_IN_WALL, "geometry",
                [f"{k} lies more than {WALL_CONTACT_TOLERANCE} m from every wall, column and railing"
                 for k in loose["subtype"]], ROW_LEVEL))
            done = done[~done["row"].isin(loose["row"])].reset_index(drop=True)
            openings = openings[in_wall]

    # Which spaces each opening opens into, for all plans of the chunk at once.
    connects: dict[int, tuple[str, ...]] = {}
    if len(openings):
        hits = connect_openings(openings["placed"].to_numpy(dtype=object), space_geoms,
                                openings["last_row"].to_numpy(), space_groups)
        connects = {row: tuple(space_ids[i] for i in hit)
                    for row, hit in zip(openings["row"].tolist(), hits)}

    plans, elements = _build_plans(done, connects, feature_space)
    return plans, elements, rejected, len(done)


#: Gap (m) between the cells plans are moved to for spatial queries: far more
#: than any tolerance used across plan elements.
PLAN_CELL_GAP = 10.0
#: Side (m) of the cell each plan is moved to, and cells per grid row. A plan's
#: cell follows from its last row alone, so every plan is moved by the same
#: amount whatever else its chunk holds, and results do not depend on chunking.
PLAN_CELL_SIZE = 1000.0
PLAN_CELLS_PER_ROW = 4096


def _spread_out(geoms: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Copies of ``geoms`` with each group (plan, numbered by its last row)
    moved to its own cell of a grid, so that no two groups come within
    ``PLAN_CELL_GAP`` m of each other."""
    if len(geoms) == 0:
        return geoms
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
    _, owner = shapely.get_coordinates(geoms, return_index=True)
    offsets = np.column_stack([shift_x[codes[owner]], shift_y[codes[owner]]])
    return shapely.transform(geoms, lambda xy: xy + offsets)


#: Order of element kinds within a plan in the element table (as
#: :func:`homeloop.plan.frame_from_plans` writes them).
_ENTITY_RANK = {AREA: 0, SEPARATOR: 1, OPENING: 2, FEATURE: 3}


def _build_plans(done: pd.DataFrame, connects: dict[int, tuple[str, ...]],
                 feature_space: dict[int, str]) -> tuple[list[Plan], pd.DataFrame]:
    """Plans from their checked rows, and their element table.

    The element table is what :func:`homeloop.plan.frame_from_plans` gives
    for the plans, computed from the rows directly.
    """
    if done.empty:
        return [], frame_from_plans([])
    is_area = (done["entity_type"] == AREA).to_numpy()
    rows = done["row"].tolist()
    subtypes = done["subtype"].tolist()
    element = np.array(
        [a if area else element_id(k, r) for a, area, k, r in zip(done["area_id"].tolist(), is_area, subtypes, rows)],
        dtype=object,
    )
    space = np.where(is_area, done["area_id"].to_numpy(dtype=object), "")
    space = np.array([feature_space.get(r, sp) for r, sp in zip(rows, space)], dtype=object)
    links = np.array([";".join(connects[r]) if r in connects else "" for r in rows], dtype=object)
    group = done.groupby("last_row", sort=False)
    table = done.assign(
        element=element,
        space=space,
        connects=links,
        building_id=group["building_id"].transform("first"),
        plan_id=group["plan_id"].transform("first"),
        unit_id=group["unit_id"].transform("min"),
        elevation=done["elevation"].where(is_area).groupby(done["last_row"]).transform("min").fillna(0.0),
        rank=done["entity_type"].map(_ENTITY_RANK),
        area_order=np.where(is_area, done["area_id"].to_numpy(dtype=object), ""),
    )
    table = table.sort_values(["last_row", "rank", "area_order", "row"], kind="stable").reset_index(drop=True)
    table["plan"] = _plan_keys(table["site_id"].to_numpy(), table["floor_id"].to_numpy(),
                               table["apartment_id"].to_numpy())

    plans = _plans_of(done, space, links)
    elements = table[list(ELEMENT_COLUMNS)].copy()
    elements["row"] = elements["row"].astype("Int64")
    return plans, elements


#: Columns of the checked rows handed to :meth:`homeloop.plan.Plan.from_rows`,
#: under the names it reads (the file's).
_PLAN_ROW_COLUMNS = {
    "row": "row", "site_id": "site_id", "building_id": "building_id", "plan_id": "plan_id",
    "floor_id": "floor_id", "apartment_id": "apartment_id", "unit_id": "unit_id", "entity_type": "entity_type",
    "entity_subtype": "subtype", "geometry": "geometry", "elevation": "elevation", "height": "height",
}


def _plans_of(done: pd.DataFrame, space: np.ndarray, links: np.ndarray) -> list[Plan]:
    """One :class:`Plan` per ``last_row`` group of the checked rows (sorted by
    last_row, then row), built by :meth:`Plan.from_rows`. ``space`` is each
    row's area_id (for a feature: the space found to hold it) and ``links`` the
    spaces each opening joins, both computed for all plans of the chunk at once."""
    columns = {name: done[source].tolist() for name, source in _PLAN_ROW_COLUMNS.items()}
    columns["area_id"] = space.tolist()
    columns["connects"] = links.tolist()
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
    layout = index.layout
    left_out = _LeftOut(index.lines)
    reader = _open(layout, layout.columns, chunk_bytes, left_out)
    pending = pd.DataFrame()
    for batch, rows in _numbered_batches(reader, layout.path, left_out):
        chunk_end = int(rows[-1])
        kept, rejections = _check_chunk(batch, rows, index)
        passed = left_out.take_through(chunk_end)
        parts = [rejections, _left_out_rejections(layout, passed)]
        pending = pd.concat([pending, kept], ignore_index=True) if len(pending) else kept
        complete = (pending["last_row"] <= chunk_end).to_numpy()
        plans, elements, assembly_rejections, used = _assemble(pending[complete])
        parts.extend(assembly_rejections)
        pending = pending[~complete].reset_index(drop=True)
        yield PlanBatch(plans, _finish_rejections(parts), batch.num_rows + len(passed), used, elements)
    # Every plan's last row has been read by now (the index pass saw the same
    # rows), so nothing is pending; rows left out after the last good row remain.
    plans, elements, assembly_rejections, used = _assemble(pending)
    tail = left_out.take_through(None)
    if tail or plans or assembly_rejections:
        yield PlanBatch(plans, _finish_rejections([_left_out_rejections(layout, tail), *assembly_rejections]),
                        len(tail), used, elements)


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

