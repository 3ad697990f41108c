"""A floor plan in metres: one apartment on one floor, as Swiss Dwellings draws it.

A :class:`Plan` holds the four kinds of Swiss Dwellings elements of one
apartment on one floor (docs/data-format.md): spaces (``area`` rows), separators
(walls, columns, railings), openings (doors, entrance doors, windows) and
features (sinks, counters, showers ...). Geometry is shapely, in the site's
local frame (+x east, +y north), metres.

Openings in Swiss Dwellings are rectangles through the wall thickness and do
not say which spaces they join; :func:`connect_openings` works that out from
geometry, and :meth:`Plan.room_door_graph` turns it into a networkx graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import networkx as nx
import numpy as np
import shapely
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core.geometry import OPENING_CONTACT_TOLERANCE, open_connections, opening_axes, repaired

# --- vocabulary ----------------------------------------------------------------

AREA, SEPARATOR, OPENING, FEATURE = "area", "separator", "opening", "feature"
ENTITY_TYPES = (AREA, SEPARATOR, OPENING, FEATURE)

DOOR, ENTRANCE_DOOR, WINDOW = "DOOR", "ENTRANCE_DOOR", "WINDOW"
PASSAGE_KINDS = frozenset({DOOR, ENTRANCE_DOOR})
WALL, COLUMN, RAILING = "WALL", "COLUMN", "RAILING"

#: The 13 columns of Swiss Dwellings v3 ``geometries.csv``, in file order (docs/data-format.md).
SWISS_DWELLINGS_COLUMNS = (
    "apartment_id",
    "site_id",
    "building_id",
    "plan_id",
    "floor_id",
    "unit_id",
    "area_id",
    "unit_usage",
    "entity_type",
    "entity_subtype",
    "geometry",
    "elevation",
    "height",
)

#: Apartment id of rows that belong to no apartment: md5("") (docs/data-format.md).
EMPTY_APARTMENT_ID = "d41d8cd98f00b204e9800998ecf8427e"

# Space classes. "indoor" spaces make up the dwelling (rooms, circulation,
# storage); "outdoor" ones are private open-air spaces; "ancillary" ones belong
# to the home but are not living space (garage, car park, bike storage);
# "service" ones are building infrastructure a resident never stands in.
INDOOR, OUTDOOR, ANCILLARY, SERVICE = "indoor", "outdoor", "ancillary", "service"

#: Outdoor area subtypes. WINTERGARTEN (an unheated glazed veranda) counts as
#: outdoor space, as the Swiss Dwellings documentation groups it with balconies.
#: PORCH and DRIVEWAY are not in Swiss Dwellings; the house (docs/data-format.md) uses them.
OUTDOOR_SUBTYPES = frozenset(
    {"BALCONY", "LOGGIA", "TERRACE", "GARDEN", "PATIO", "WINTERGARTEN", "PORCH", "DRIVEWAY"}
)
ANCILLARY_SUBTYPES = frozenset({"GARAGE", "CARPARK", "BIKE_STORAGE", "BASEMENT_COMPARTMENT"})
SERVICE_SUBTYPES = frozenset(
    {
        "SHAFT",
        "VOID",
        "OUTDOOR_VOID",
        "LIGHTWELL",
        "STAIRCASE",
        "ELEVATOR",
        "ELEVATOR_FACILITIES",
        "TECHNICAL_AREA",
        "HOUSE_TECHNICS_FACILITIES",
        "OIL_TANK",
        "NOT_DEFINED",
    }
)

#: Every area subtype a Swiss Dwellings file may hold (docs/data-format.md):
#: the area types of the taxonomy the dataset was drawn in (77 of them occur
#: in the v3 release), and PORCH and DRIVEWAY, which the house uses.
AREA_SUBTYPES = frozenset(
    """
    ROOM BEDROOM LIVING_ROOM LIVING_DINING DINING KITCHEN KITCHEN_DINING STUDIO OFFICE
    BATHROOM CORRIDOR FOYER LOBBY STOREROOM WASH_AND_DRY_ROOM
    BALCONY LOGGIA TERRACE GARDEN PATIO WINTERGARTEN ARCADE PORCH DRIVEWAY
    GARAGE CARPARK BIKE_STORAGE PRAM PRAM_AND_BIKE_STORAGE_ROOM BASEMENT BASEMENT_COMPARTMENT
    MOTORCYCLE_PARKING VEHICLE_TRAFFIC_AREA
    SHAFT VOID OUTDOOR_VOID LIGHTWELL STAIRCASE ELEVATOR ELEVATOR_FACILITIES TECHNICAL_AREA
    HOUSE_TECHNICS_FACILITIES OIL_TANK NOT_DEFINED TRANSPORT_SHAFT CORRIDORS_AND_HALLS
    OPERATIONS_FACILITIES WASTEWATER WATER_SUPPLY HEATING GAS ELECTRICAL_SUPPLY
    TELECOMMUNICATIONS AIR SHELTER PASSENGER_PLATFORM SANITARY_ROOMS CLOAKROOM
    COMMUNITY_ROOM BREAK_ROOM WAITING_ROOM CANTEEN COMMON_KITCHEN PRISON_CELL OFFICE_SPACE
    OPEN_PLAN_OFFICE MEETING_ROOM DESIGN_ROOM COUNTER_ROOM CONTROL_ROOM RECEPTION_ROOM
    OFFICE_TECH_ROOM FACTORY_ROOM WORKSHOP TECHNICAL_LAB PHYSICS_LAB CHEMICAL_LAB LIVESTOCK
    PLANTS SPECIAL_WORKSPACE WAREHOUSE ARCHIVE COLD_STORAGE LOGISTICS SALESROOM EXHIBITION
    TEACHING_ROOM FLEXIBLE_TEACHING_ROOM DEDICATED_TEACHING_ROOM LIBRARY SPORTS_ROOMS
    ASSEMBLY_HALL STAGE_ROOM SHOWROOM CHAPEL MEDICAL_ROOM DEDICATED_MEDICAL_ROOM SURGERY_ROOM
    RADIATION_DIAGNOSIS RADATION_THERAPY PHYSIO_AND_REHABILITATION MEDICAL_BEDROOM
    DEDICATED_MEDICAL_BEDROOM
    BUF10_1_AUSSEN_PP_FAHRZEUG BUF10_2_UEBERDACHTE_AUSSEN_PP_FAHRZEUG BUF10_3_AUSSEN_PP_MOTO
    BUF10_4_AUSSEN_PP_FAHRRAD BUF10_5_BEARB__AUSSENFLAECHE UUF11_1_UNBEARB__AUSSENFLAECHE
    """.split()
)
SEPARATOR_SUBTYPES = frozenset({WALL, COLUMN, RAILING})
OPENING_SUBTYPES = frozenset({DOOR, ENTRANCE_DOOR, WINDOW})
#: Features: the fixtures drawn in the plans. No fridge, stove or dishwasher
#: exists in the data; furnishing places appliances.
FEATURE_SUBTYPES = frozenset(
    {"SINK", "WASHING_MACHINE", "BUILT_IN_FURNITURE", "KITCHEN", "SHOWER", "BATHTUB", "STAIRS", "RAMP",
     "TOILET", "ELEVATOR"}
)
#: The known subtypes of each entity type: the one vocabulary the reader, the
#: house and :meth:`Plan.from_rows` check rows against.
SUBTYPES: dict[str, frozenset[str]] = {
    AREA: AREA_SUBTYPES,
    SEPARATOR: SEPARATOR_SUBTYPES,
    OPENING: OPENING_SUBTYPES,
    FEATURE: FEATURE_SUBTYPES,
}
#: Bedroom-like subtypes. Swiss Dwellings labels most bedrooms plain ROOM.
BEDROOM_SUBTYPES = frozenset({"ROOM", "BEDROOM"})
KITCHEN_SUBTYPES = frozenset({"KITCHEN", "KITCHEN_DINING"})
#: Spaces where cooking happens in the open with living or dining.
OPEN_KITCHEN_SUBTYPES = frozenset({"KITCHEN_DINING"})

#: Wall height (m) of a plan whose file gives none (docs/data-format.md, default heights).
DEFAULT_WALL_HEIGHT = 2.6
#: Minimum overlap (m²) of an opening's tolerance band with a space for the
#: opening to count as opening into it; screens out corner contacts.
OPENING_MIN_CONTACT_AREA = 0.002


def space_class(subtype: str) -> str:
    """The class of an area subtype: indoor, outdoor, ancillary or service."""
    if subtype in OUTDOOR_SUBTYPES:
        return OUTDOOR
    if subtype in ANCILLARY_SUBTYPES:
        return ANCILLARY
    if subtype in SERVICE_SUBTYPES:
        return SERVICE
    return INDOOR


# --- elements -------------------------------------------------------------------


@dataclass(frozen=True)
class PlanIds:
    """Where a plan sits in the Swiss Dwellings hierarchy."""

    site_id: int
    building_id: int
    plan_id: int
    floor_id: int
    apartment_id: str
    unit_ids: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        """The plan's id in HomeLoop tables: site, floor and apartment."""
        return plan_key(self.site_id, self.floor_id, self.apartment_id)


def plan_key(site_id: int, floor_id: int, apartment_id: str) -> str:
    return f"{int(site_id)}-{int(floor_id)}-{apartment_id}"


@dataclass(frozen=True)
class Space:
    """An area: a room, a balcony, a shaft ... ``id`` is the Swiss Dwellings area_id."""

    id: str
    subtype: str
    polygon: Polygon
    row: int | None = None

    @property
    def space_class(self) -> str:
        return space_class(self.subtype)

    @property
    def is_indoor(self) -> bool:
        return self.space_class == INDOOR

    @property
    def is_outdoor(self) -> bool:
        return self.space_class == OUTDOOR

    @property
    def area(self) -> float:
        return float(self.polygon.area)


@dataclass(frozen=True)
class Separator:
    """A wall, column or railing."""

    id: str
    kind: str
    polygon: Polygon
    row: int | None = None


@dataclass(frozen=True)
class Opening:
    """A door, entrance door or window, and the spaces it opens into."""

    id: str
    kind: str
    polygon: Polygon
    connects: tuple[str, ...] = ()
    row: int | None = None

    @property
    def is_passage(self) -> bool:
        return self.kind in PASSAGE_KINDS

    @cached_property
    def _sides(self) -> tuple[float, float]:
        """(long, short) sides (m) of the rectangle: :func:`homeloop.core.geometry.opening_axes`."""
        _, _, _, width, depth = opening_axes(self.polygon)
        return width, depth

    @property
    def width(self) -> float:
        """Clear width (m): the opening's long side along the wall."""
        return self._sides[0]

    @property
    def depth(self) -> float:
        """Depth (m) through the wall: the short side."""
        return self._sides[1]


@dataclass(frozen=True)
class Feature:
    """A fixture drawn in the plan (sink, counter, shower ...) and the space holding it."""

    id: str
    kind: str
    polygon: Polygon
    space_id: str | None = None
    row: int | None = None


def element_id(kind: str, row: int) -> str:
    """Id of a non-area element: its kind and its row in the source file."""
    return f"{kind.lower()}_{row}"


# --- connectivity -----------------------------------------------------------------


def unions_by_group(polygons: Sequence[BaseGeometry] | np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """For each group ``0 .. n-1``, the union of its polygons (valid ones: see :func:`repaired`),
    in one vectorised call; None for a group without polygons. ``groups`` numbers each polygon's
    group, in increasing order.

    A group's polygons become one multipolygon buffered by zero: GEOS's buffer merges parts
    that overlap or share edges into the region ``shapely.union_all`` gives (the tests compare
    them), in about half its time for a plan's spaces and walls (docs/pipeline.md).
    """
    parts, owner = np.asarray(polygons, dtype=object), np.asarray(groups)
    if (shapely.get_type_id(parts) != shapely.GeometryType.POLYGON).any():
        parts, which = shapely.get_parts(parts, return_index=True)  # multipolygons taken apart
        owner = owner[which]
    grouped = shapely.multipolygons(parts, indices=owner, out=np.full(n, None, dtype=object))
    return shapely.buffer(grouped, 0)


def connect_openings(
    openings: Sequence[BaseGeometry] | np.ndarray,
    spaces: Sequence[BaseGeometry] | np.ndarray,
    opening_groups: np.ndarray | None = None,
    space_groups: np.ndarray | None = None,
    tolerance: float = OPENING_CONTACT_TOLERANCE,
) -> list[list[int]]:
    """For each opening, the indices of the (at most two) spaces it opens into.

    Vectorised over many plans at once: pass ``opening_groups`` and
    ``space_groups`` (a plan number per geometry) and an opening only meets
    spaces of its own group. The spaces are ranked by how much of the
    opening's ``tolerance`` band they overlap; the two largest win, so a door
    near a corner does not also join the room round the corner.
    """
    op = np.asarray(openings, dtype=object)
    sp = repaired(spaces)
    result: list[list[int]] = [[] for _ in range(len(op))]
    if len(op) == 0 or len(sp) == 0:
        return result
    tree = shapely.STRtree(sp)
    pairs = tree.query(op, predicate="dwithin", distance=tolerance)
    if pairs.shape[1] == 0:
        return result
    oi, si = pairs
    if opening_groups is not None and space_groups is not None:
        same = np.asarray(opening_groups)[oi] == np.asarray(space_groups)[si]
        oi, si = oi[same], si[same]
    bands = shapely.buffer(op, tolerance, cap_style="flat", join_style="mitre")
    overlap = shapely.area(shapely.intersection(bands[oi], sp[si]))
    keep = overlap >= OPENING_MIN_CONTACT_AREA
    oi, si, overlap = oi[keep], si[keep], overlap[keep]
    # Sort by opening, then by overlap descending, then by space index (stable ties).
    order = np.lexsort((si, -overlap, oi))
    for o, s in zip(oi[order], si[order]):
        if len(result[o]) < 2:
            result[o].append(int(s))
    return result


# --- the plan -----------------------------------------------------------------------


@dataclass
class Plan:
    """One apartment on one floor."""

    ids: PlanIds
    spaces: tuple[Space, ...]
    separators: tuple[Separator, ...] = ()
    openings: tuple[Opening, ...] = ()
    features: tuple[Feature, ...] = ()
    elevation: float = 0.0
    height: float = DEFAULT_WALL_HEIGHT
    _index: dict[str, Space] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.spaces = tuple(sorted(self.spaces, key=lambda s: s.id))
        self.separators = tuple(self.separators)
        self.openings = tuple(self.openings)
        self.features = tuple(self.features)
        self._index = {s.id: s for s in self.spaces}

    @classmethod
    def from_rows(cls, rows, *, lenient: bool = False) -> "Plan":
        """One apartment on one floor from its Swiss Dwellings rows (docs/data-format.md).

        ``rows`` holds the plan's rows as columns, in file order: a DataFrame or
        a mapping of column name to values, with the file's column names and
        ``row`` (the row's line number in the file). Values may be the file's
        text or already parsed (ints, floats, shapely geometries). An optional
        ``connects`` column gives the spaces each opening joins (ids separated
        by ``;``); without it they are found from geometry.

        Ids come from the first row, unit ids from all rows; the elevation is
        the lowest area's, the height the tallest wall's (else
        :data:`DEFAULT_WALL_HEIGHT`). Areas are named by their area_id, other
        elements by :func:`element_id`; a feature's area_id is its space.

        Strict by default: an unknown entity type or subtype (:data:`SUBTYPES`),
        an area without an area_id or with one used before, or a geometry that
        is not a valid, non-empty polygon raises ValueError naming the row.
        ``lenient=True`` keeps invalid polygons as drawn, for test fixtures
        that hold them on purpose (the audit reports them).
        """
        cols = rows_as_columns(rows)
        if not cols.get("row"):
            raise ValueError("no rows: a plan needs at least one area row")
        geoms = [_row_geometry(g, r) for g, r in zip(cols["geometry"], cols["row"])]
        area_ids = [_area_key(a) for a in cols["area_id"]]
        _check_rows(cols, area_ids, geoms, lenient)
        spaces, separators, openings, features = [], [], [], []
        links = cols.get("connects")
        for i, (row, entity, kind) in enumerate(zip(cols["row"], cols["entity_type"], cols["entity_subtype"])):
            if entity == AREA:
                spaces.append(Space(area_ids[i], kind, geoms[i], row))
            elif entity == SEPARATOR:
                separators.append(Separator(element_id(kind, row), kind, geoms[i], row))
            elif entity == OPENING:
                joined = _space_list(links[i]) if links is not None else ()
                openings.append(Opening(element_id(kind, row), kind, geoms[i], joined, row))
            else:
                features.append(Feature(element_id(kind, row), kind, geoms[i], area_ids[i] or None, row))
        plan = cls(_row_ids(cols), tuple(spaces), tuple(separators), tuple(openings), tuple(features),
                   elevation=_floor_elevation(cols), height=_wall_height(cols))
        return plan if links is not None else with_connected_openings(plan)

    # identity
    @property
    def key(self) -> str:
        return self.ids.key

    @property
    def site_id(self) -> int:
        return self.ids.site_id

    def space(self, space_id: str) -> Space:
        return self._index[space_id]

    def has_space(self, space_id: str) -> bool:
        return space_id in self._index

    # derived geometry
    @property
    def indoor_spaces(self) -> tuple[Space, ...]:
        return tuple(s for s in self.spaces if s.is_indoor)

    @property
    def outdoor_spaces(self) -> tuple[Space, ...]:
        return tuple(s for s in self.spaces if s.is_outdoor)

    @property
    def indoor_area(self) -> float:
        """Indoor floor area (m²): the sum of indoor space polygons."""
        return float(sum(s.area for s in self.indoor_spaces))

    @property
    def doors(self) -> tuple[Opening, ...]:
        return tuple(o for o in self.openings if o.kind == DOOR)

    @property
    def entrance_doors(self) -> tuple[Opening, ...]:
        return tuple(o for o in self.openings if o.kind == ENTRANCE_DOOR)

    @property
    def windows(self) -> tuple[Opening, ...]:
        return tuple(o for o in self.openings if o.kind == WINDOW)

    @property
    def walls(self) -> tuple[Separator, ...]:
        return tuple(s for s in self.separators if s.kind == WALL)

    def features_in(self, space_id: str) -> tuple[Feature, ...]:
        return tuple(f for f in self.features if f.space_id == space_id)

    @cached_property
    def footprint(self) -> BaseGeometry:
        """Everything drawn: spaces and separators, unioned."""
        geoms = repaired([s.polygon for s in self.spaces] + [s.polygon for s in self.separators])
        return unions_by_group(geoms, np.zeros(len(geoms), dtype=np.int64), 1)[0] if len(geoms) else Polygon()

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        return tuple(self.footprint.bounds)  # type: ignore[return-value]

    # graphs
    @cached_property
    def open_connections(self) -> tuple[tuple[str, str], ...]:
        """Pairs of spaces that touch with no wall between them over a walkable length
        (:func:`homeloop.core.geometry.open_connections` over the spaces and separators)."""
        pairs = open_connections([s.polygon for s in self.spaces], [s.polygon for s in self.separators])
        return tuple((self.spaces[i].id, self.spaces[j].id) for i, j in pairs)

    def room_door_graph(self) -> nx.Graph:
        """Spaces as nodes (``subtype``, ``space_class``, ``entrance``); an edge per
        pair of spaces joined by doors (``doors`` = how many, ``openings`` = their
        ids) or by an open passage (``open`` = True)."""
        g = nx.Graph()
        for s in self.spaces:
            g.add_node(s.id, subtype=s.subtype, space_class=s.space_class, entrance=False)
        for o in self.openings:
            if not o.is_passage:
                continue
            if o.kind == ENTRANCE_DOOR:
                for sid in o.connects:
                    g.nodes[sid]["entrance"] = True
            if len(o.connects) == 2:
                u, v = o.connects
                if g.has_edge(u, v):
                    g[u][v]["doors"] += 1
                    g[u][v]["openings"].append(o.id)
                else:
                    g.add_edge(u, v, doors=1, openings=[o.id], open=False)
        for u, v in self.open_connections:
            if g.has_edge(u, v):
                g[u][v]["open"] = True
            else:
                g.add_edge(u, v, doors=0, openings=[], open=True)
        return g

    def entrance_space_ids(self) -> tuple[str, ...]:
        """Spaces an entrance door opens into (the indoor side first)."""
        ids: list[str] = []
        for o in self.entrance_doors:
            for sid in sorted(o.connects, key=lambda s: not self._index[s].is_indoor):
                if sid not in ids:
                    ids.append(sid)
        return tuple(ids)

    def reachable_from_entrance(self) -> set[str]:
        """Ids of spaces a person entering by an entrance door can walk to."""
        g = self.room_door_graph()
        reached: set[str] = set()
        for sid in self.entrance_space_ids():
            reached |= nx.node_connected_component(g, sid)
        return reached

    # counts
    def count_spaces(self, subtypes: Iterable[str]) -> int:
        wanted = set(subtypes)
        return sum(1 for s in self.spaces if s.subtype in wanted)

    def summary(self) -> dict[str, object]:
        """The per-plan row of ``plans.parquet`` (without geometry)."""
        return {
            "plan": self.key,
            "site_id": self.ids.site_id,
            "building_id": self.ids.building_id,
            "plan_id": self.ids.plan_id,
            "floor_id": self.ids.floor_id,
            "apartment_id": self.ids.apartment_id,
            "unit_ids": ",".join(str(u) for u in self.ids.unit_ids),
            "elevation": self.elevation,
            "spaces": len(self.spaces),
            "indoor_spaces": len(self.indoor_spaces),
            "outdoor_spaces": len(self.outdoor_spaces),
            "bedrooms": self.count_spaces(BEDROOM_SUBTYPES),
            "doors": len(self.doors),
            "entrance_doors": len(self.entrance_doors),
            "windows": len(self.windows),
            "separators": len(self.separators),
            "features": len(self.features),
            "indoor_area_m2": round(self.indoor_area, 3),
        }


# --- rows to plans ----------------------------------------------------------------


def rows_as_columns(rows) -> dict[str, list]:
    """A plan's rows (a DataFrame or a mapping of column -> values) as lists per column."""
    if hasattr(rows, "columns"):
        return {str(c): rows[c].tolist() for c in rows.columns}
    return {str(c): v if isinstance(v, list) else list(v) for c, v in rows.items()}


def _row_geometry(value, row) -> BaseGeometry:
    if not isinstance(value, str):
        return value
    try:
        return shapely.from_wkt(value)
    except shapely.errors.GEOSException as exc:
        raise ValueError(f"row {row}: geometry is not WKT: {exc}") from None


def _area_key(value) -> str:
    """An area_id as the plan names spaces: ``"7"`` for 7, "7", "7.0"; ``""`` when empty."""
    if value.__class__ is str and (value.isdigit() or not value):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit() or not text:
            return text
        return str(int(float(text)))
    if value is None or value != value:  # None or NaN
        return ""
    return str(int(value))


def _whole(value) -> int:
    if isinstance(value, str):
        return int(float(value)) if "." in value else int(value)
    return int(value)


def _number(value) -> float:
    if value.__class__ is float:
        return value
    if isinstance(value, str):
        return float(value) if value.strip() else math.nan
    return math.nan if value is None else float(value)


def _space_list(value) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split(";")) if value else ()
    return tuple(value or ())


def _check_rows(cols: dict[str, list], area_ids: list[str], geoms: list, lenient: bool) -> None:
    """Raise ValueError naming the first row :meth:`Plan.from_rows` cannot take."""
    entities, kinds = cols["entity_type"], cols["entity_subtype"]
    # The kinds of rows a plan holds are few: check each once, name a row only on failure.
    for entity, kind in set(zip(entities, kinds)):
        if entity not in SUBTYPES:
            raise ValueError(f"row {_first_row(cols, entity, kind)}: entity_type {entity!r} is not one of "
                             f"{list(ENTITY_TYPES)}")
        if not lenient and kind not in SUBTYPES[entity]:
            raise ValueError(f"row {_first_row(cols, entity, kind)}: {entity} subtype {kind!r} is not one of "
                             f"{sorted(SUBTYPES[entity])}")
    if lenient:
        return
    areas = [(row, area) for row, entity, area in zip(cols["row"], entities, area_ids) if entity == AREA]
    if len({area for _, area in areas}) != len(areas) or any(not area for _, area in areas):
        seen: set[str] = set()
        for row, area in areas:
            if not area:
                raise ValueError(f"row {row}: area row without an area_id")
            if area in seen:
                raise ValueError(f"row {row}: area_id {area} is used by an earlier area row")
            seen.add(area)
    _check_polygons(cols["row"], geoms)


def _first_row(cols: dict[str, list], entity: str, kind: str):
    return next(r for r, e, k in zip(cols["row"], cols["entity_type"], cols["entity_subtype"]) if (e, k) == (entity, kind))


def _check_polygons(rows: list, geoms: list) -> None:
    """Raise ValueError naming the first row whose geometry is not a valid, non-empty polygon."""
    shapes = np.array(geoms, dtype=object)
    kinds = shapely.get_type_id(shapes)
    polygonal = (kinds == 3) | (kinds == 6)  # Polygon, MultiPolygon
    good = polygonal & ~shapely.is_empty(shapes)
    good[good] = shapely.is_valid(shapes[good])
    if good.all():
        return
    i = int(np.flatnonzero(~good)[0])
    shape = shapes[i]
    why = ("empty" if shape is None or shape.is_empty else
           f"a {shape.geom_type}" if not polygonal[i] else shapely.is_valid_reason(shape))
    raise ValueError(f"row {rows[i]}: geometry is not a valid polygon ({why})")


def _row_ids(cols: dict[str, list]) -> PlanIds:
    floor = _whole(cols["floor_id"][0])
    plan_ids = cols.get("plan_id")
    return PlanIds(
        site_id=_whole(cols["site_id"][0]),
        building_id=_whole(cols["building_id"][0]),
        plan_id=_whole(plan_ids[0]) if plan_ids else floor,
        floor_id=floor,
        apartment_id=str(cols["apartment_id"][0]),
        unit_ids=tuple(sorted({_whole(u) for u in cols["unit_id"]})),
    )


def _floor_elevation(cols: dict[str, list]) -> float:
    """The plan's elevation: its lowest area's (0 without one)."""
    levels = [_number(e) for e, entity in zip(cols.get("elevation", ()), cols["entity_type"]) if entity == AREA]
    return min((e for e in levels if math.isfinite(e)), default=0.0)


def _wall_height(cols: dict[str, list]) -> float:
    """The plan's height: its tallest wall's (:data:`DEFAULT_WALL_HEIGHT` without one)."""
    heights = [_number(h) for h, entity, kind in zip(cols.get("height", ()), cols["entity_type"],
                                                   cols["entity_subtype"]) if kind == WALL and entity == SEPARATOR]
    return max((h for h in heights if math.isfinite(h) and h > 0), default=DEFAULT_WALL_HEIGHT)


# --- plans as a table -------------------------------------------------------------

#: Columns of the element table (``elements.parquet``): one row per element.
ELEMENT_COLUMNS = (
    "plan",
    "site_id",
    "building_id",
    "plan_id",
    "floor_id",
    "apartment_id",
    "unit_id",
    "elevation",
    "entity_type",
    "subtype",
    "element",
    "space",
    "connects",
    "row",
    "geometry",
)


def frame_from_plans(plans: Iterable[Plan]) -> "pd.DataFrame":
    """The element table of some plans: one row per element (geometry as shapely)."""
    import pandas as pd

    records: list[tuple] = []
    for p in plans:
        i = p.ids
        unit = i.unit_ids[0] if i.unit_ids else -1
        base = (p.key, i.site_id, i.building_id, i.plan_id, i.floor_id, i.apartment_id, unit, p.elevation)
        for s in p.spaces:
            records.append(base + (AREA, s.subtype, s.id, s.id, "", s.row, s.polygon))
        for s in p.separators:
            records.append(base + (SEPARATOR, s.kind, s.id, "", "", s.row, s.polygon))
        for o in p.openings:
            records.append(base + (OPENING, o.kind, o.id, "", ";".join(o.connects), o.row, o.polygon))
        for f in p.features:
            records.append(base + (FEATURE, f.kind, f.id, f.space_id or "", "", f.row, f.polygon))
    frame = pd.DataFrame.from_records(records, columns=list(ELEMENT_COLUMNS))
    frame["row"] = frame["row"].astype("Int64")
    return frame


def plans_from_frame(frame: "pd.DataFrame") -> list[Plan]:
    """Plans from an element table (the inverse of :func:`frame_from_plans`).

    Openings whose ``connects`` is empty are connected from geometry here.
    Plans come out in order of their key. The table is read column by column, as
    plain lists: a pandas row or group per element costs more than the plan it builds.
    """
    if not len(frame):
        return []
    # Each plan's rows together, in the table's order within the plan.
    keys = frame["plan"].to_numpy()
    order = np.argsort(keys, kind="stable")
    col = {c: frame[c].to_numpy()[order].tolist() for c in
           ("site_id", "building_id", "plan_id", "floor_id", "apartment_id", "unit_id", "elevation",
            "entity_type", "subtype", "element", "space", "connects", "geometry")}
    col["row"] = frame["row"].to_numpy(dtype=object, na_value=None)[order].tolist()
    plans: list[Plan] = []
    for start, stop in runs_of(keys[order]):
        plan = _plan_of_rows(col, start, stop)
        if any(not o.connects for o in plan.openings):
            plan = with_connected_openings(plan)
        plans.append(plan)
    return plans


def runs_of(values: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of each run of equal neighbouring values, in order: where each plan's rows lie
    in an element table whose plans' rows are together."""
    values = np.asarray(values)
    if not len(values):
        return []
    cuts = (np.flatnonzero(values[1:] != values[:-1]) + 1).tolist()
    return list(zip([0, *cuts], [*cuts, len(values)]))


def _plan_of_rows(col: dict[str, list], start: int, stop: int) -> Plan:
    ids = PlanIds(
        site_id=int(col["site_id"][start]),
        building_id=int(col["building_id"][start]),
        plan_id=int(col["plan_id"][start]),
        floor_id=int(col["floor_id"][start]),
        apartment_id=str(col["apartment_id"][start]),
        unit_ids=tuple(sorted({int(u) for u in col["unit_id"][start:stop] if int(u) >= 0})),
    )
    spaces, separators, openings, features = [], [], [], []
    for i in range(start, stop):
        kind, element, subtype, geometry = col["entity_type"][i], col["element"][i], col["subtype"][i], col["geometry"][i]
        row = None if col["row"][i] is None else int(col["row"][i])
        if kind == AREA:
            spaces.append(Space(element, subtype, geometry, row))
        elif kind == SEPARATOR:
            separators.append(Separator(element, subtype, geometry, row))
        elif kind == OPENING:
            connects = tuple(c for c in str(col["connects"][i]).split(";") if c)
            openings.append(Opening(element, subtype, geometry, connects, row))
        elif kind == FEATURE:
            features.append(Feature(element, subtype, geometry, col["space"][i] or None, row))
    return Plan(ids, tuple(spaces), tuple(separators), tuple(openings), tuple(features),
                elevation=float(col["elevation"][start]))


def with_connected_openings(plan: Plan) -> Plan:
    """The same plan with every opening's ``connects`` computed from geometry."""
    polys = [s.polygon for s in plan.spaces]
    hits = connect_openings([o.polygon for o in plan.openings], polys)
    openings = tuple(
        Opening(o.id, o.kind, o.polygon, tuple(plan.spaces[i].id for i in hit), o.row)
        for o, hit in zip(plan.openings, hits)
    )
    return Plan(plan.ids, plan.spaces, plan.separators, openings, plan.features,
                plan.elevation, plan.height)
