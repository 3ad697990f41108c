"""The house: the one hand-designed home of the main benchmark (docs/pipeline.md).

The house is kept as Swiss Dwellings v3 rows in ``homeloop/core/data/house.csv``, so
it flows through the same stages as every other plan. It is a single-storey
house, front (south, -y) facing the street; metres, +x east, +y north.

Layout (schematic; clear floor between wall faces, exterior walls 0.3 m,
interior walls 0.12 m; area ids in brackets)::

                                   PATIO (13)
               +---------+--------+----------+---------+  y 10.94
               | KITCHEN | DINING |  LIVING  | BEDROOM |
               |   (3)   |  (4)   |   (2)    |   (7)   |
    +----------+---------+--------+----------+---------+  y 5.84
    |  GARAGE  |                CORRIDOR (1)           |
    |   (11)   +-------+--------+ +---+-------+---+----+  y 4.30
    |          |LAUNDRY| OFFICE | |(1)| BATH  |BATH|ROOM|
    |          |  (6)  |  (5)   | |   |  (9)  |(10)|(8) |
    +--garage door-----+--------+-+ENT+-------+----+----+  y 0
       DRIVEWAY (14)               PORCH (12)
    x 0        6.6                12.54 14.34            23.56

- Ten indoor spaces: CORRIDOR (a spine hall with the entrance hall leg going
  south to the front door), KITCHEN, DINING, LIVING_ROOM, BEDROOM, OFFICE,
  WASH_AND_DRY_ROOM, ROOM, BATHROOM (bathtub, shower, toilet, sink) and a
  second BATHROOM (shower, toilet, sink). Plus GARAGE (ancillary), PORCH,
  PATIO and DRIVEWAY (outdoor).
- Doors are 0.9 m; the ENTRANCE_DOOR (porch -> hall) is 1.0 m. The garage
  door is drawn as a 2.7 m DOOR in the garage's south wall, towards the
  driveway: Swiss Dwellings has no garage-door subtype.
- The living room has a patio door and one window (the one the home file
  marks as able to open); every room except the corridor has a window.
- Features: a 3.6 m straight KITCHEN counter with a SINK along the kitchen's
  north wall (its 4.2 m west wall is left free for fridge and range); the
  laundry's WASHING_MACHINE against its west wall, with free wall beside it for
  a dryer and a basket; a BUILT_IN_FURNITURE wardrobe in the bedroom.
- Element heights follow docs/pipeline.md defaults (wall 2.6, door 2.0, window top
  2.4, counter 0.9, sink 0.85, bathtub 0.6, washing machine 1.3); every row's
  elevation is the floor's, 0.

Row numbers are file line numbers (the header is line 1), so element ids
(:func:`homeloop.core.plan.element_id`) match those of the Swiss Dwellings ingest.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import shapely
from shapely import Polygon

from homeloop.core.ids import HOUSE_ID as HOUSE_ID
from homeloop.core.plan import (
    SWISS_DWELLINGS_COLUMNS,
    AREA,
    ENTITY_TYPES,
    FEATURE,
    SUBTYPES,
    Plan,
    plan_key,
)


def _package_data(name: str) -> Path:
    """A file under ``homeloop/core/data`` (package data, beside this module)."""
    return Path(__file__).resolve().parent / "data" / name


#: The house's Swiss Dwellings file (package data).
HOUSE_CSV: Path = _package_data("house.csv")

#: The house's apartment id: 32 hex digits, not md5("") (which marks no apartment).
HOUSE_APARTMENT_ID = "00000000000000000000000000000e01"
#: The house's plan key (site 0, floor 0).
HOUSE_PLAN_KEY = plan_key(0, 0, HOUSE_APARTMENT_ID)

_UNIT_USAGES = frozenset({"RESIDENTIAL", "COMMERCIAL", "JANITOR", "PLACEHOLDER", "PUBLIC"})
_ID_COLUMNS = ("site_id", "building_id", "plan_id", "floor_id", "unit_id")


def load_house(path: str | Path | None = None) -> Plan:
    """The house as a :class:`~homeloop.core.plan.Plan`, openings connected.

    ``path`` defaults to :data:`HOUSE_CSV`. Raises ``ValueError`` naming the
    file row when the file is not one well-formed apartment on one floor.
    """
    return read_single_plan_csv(HOUSE_CSV if path is None else path)


def read_single_plan_csv(path: str | Path) -> Plan:
    """Read a Swiss Dwellings CSV holding exactly one apartment on one floor.

    Strict: the 13 columns in order, one apartment / site / building / plan /
    floor / unit, one elevation, known entity types and subtypes, valid
    non-empty WKT polygons, integer area ids (unique on area rows, naming an
    area on feature rows, empty on separator and opening rows).
    """
    path = Path(path)
    frame = _read_frame(path)
    area_ids: set[str] = set()
    feature_areas: list[tuple[int, str]] = []
    first: dict[str, str] = {}
    elevations: set[float] = set()
    for row, rec in enumerate(frame.itertuples(index=False), start=2):
        values = rec._asdict()
        try:
            elevations.add(_check_ids(values, first))
            entity = _check_entity(values["entity_type"], values["entity_subtype"])
            _check_geometry(values["geometry"])
            _file_area(entity, _area_id(values["area_id"]), row, area_ids, feature_areas)
        except ValueError as exc:
            raise ValueError(f"{path}: row {row}: {exc}") from exc
    if len(elevations) != 1:
        raise ValueError(f"{path}: rows hold several elevations {sorted(elevations)}; expected one floor")
    for row, area_id in feature_areas:
        if area_id not in area_ids:
            raise ValueError(f"{path}: row {row}: feature names area_id {area_id}, which no area row has")
    if not area_ids:
        raise ValueError(f"{path}: no area rows")
    return Plan.from_rows(frame.assign(row=range(2, len(frame) + 2)))


def _read_frame(path: Path) -> pd.DataFrame:
    """The file's rows as text, its columns the Swiss Dwellings ones in order."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{path}: cannot read as CSV: {exc}") from exc
    if tuple(frame.columns) != SWISS_DWELLINGS_COLUMNS:
        raise ValueError(
            f"{path}: row 1: columns {list(frame.columns)} are not the Swiss Dwellings "
            f"columns {list(SWISS_DWELLINGS_COLUMNS)}"
        )
    if frame.empty:
        raise ValueError(f"{path}: no rows")
    return frame


def _check_ids(values: dict[str, str], first: dict[str, str]) -> float:
    """A row's usage and ids, the same as the first row's (kept in ``first``); its elevation."""
    if values["unit_usage"] not in _UNIT_USAGES:
        raise ValueError(f"unit_usage {values['unit_usage']!r} is not one of {sorted(_UNIT_USAGES)}")
    for col in ("apartment_id", *_ID_COLUMNS):
        value = values[col].strip()
        if col != "apartment_id" and not _is_int(value):
            raise ValueError(f"{col} {value!r} is not an integer")
        if col not in first:
            first[col] = value
        elif value != first[col]:
            raise ValueError(f"{col} {value!r} differs from {first[col]!r} on the first row")
    if len(first["apartment_id"]) != 32:
        raise ValueError(f"apartment_id {first['apartment_id']!r} is not 32 hex digits")
    try:
        elevation = float(values["elevation"])
        float(values["height"])
    except ValueError:
        raise ValueError(f"elevation {values['elevation']!r} or height {values['height']!r} is not a number")
    return elevation


def _check_entity(entity: str, subtype: str) -> str:
    if entity not in ENTITY_TYPES:
        raise ValueError(f"entity_type {entity!r} is not one of {list(ENTITY_TYPES)}")
    if entity != AREA and subtype not in SUBTYPES[entity]:
        raise ValueError(f"{entity} subtype {subtype!r} is not one of {sorted(SUBTYPES[entity])}")
    if entity == AREA and not subtype:
        raise ValueError("area row without a subtype")
    return entity


def _check_geometry(wkt: str) -> None:
    try:
        geom = shapely.from_wkt(wkt)
    except shapely.errors.GEOSException as exc:
        raise ValueError(f"geometry is not WKT: {exc}") from exc
    if not isinstance(geom, Polygon) or geom.is_empty:
        raise ValueError(f"geometry is a {geom.geom_type}, not a non-empty POLYGON")
    if not geom.is_valid:
        raise ValueError(f"geometry is not valid: {shapely.is_valid_reason(geom)}")


def _area_id(text: str) -> str:
    """An area_id as the plan names areas (``"7"`` for 7.0), or ``""``."""
    area_id = text.strip()
    if area_id and not _is_int(area_id):
        raise ValueError(f"area_id {area_id!r} is not an integer")
    return str(int(float(area_id))) if area_id else ""


def _file_area(entity: str, area_id: str, row: int, area_ids: set[str], feature_areas: list[tuple[int, str]]
               ) -> None:
    """Record an area row's id (unique) or a feature row's area; other rows carry none."""
    if entity == AREA:
        if not area_id:
            raise ValueError("area row without an area_id")
        if area_id in area_ids:
            raise ValueError(f"area_id {area_id} is used by an earlier area row")
        area_ids.add(area_id)
    elif entity == FEATURE:
        if not area_id:
            raise ValueError("feature row without the area_id of its area")
        feature_areas.append((row, area_id))
    elif area_id:
        raise ValueError(f"{entity} row with an area_id ({area_id}); only areas and features carry one")


def _is_int(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and value == int(value)
