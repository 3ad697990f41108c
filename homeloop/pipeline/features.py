"""Plan features: the vector, the group key and the room-door graph hash (docs/pipeline.md,
pipeline steps 3 and 4).

Each plan becomes one row of ``features.parquet``:

- **the vector**: how many spaces of each room type (outdoor spaces included,
  see :data:`ROOM_TYPE_COLUMNS`), ``n_windows``, ``n_interior_doors`` and
  ``indoor_area_m2``; :func:`scaled_vectors` makes the columns commensurate for
  L1 distances;
- **the group key** (step 4): ``bedrooms_capped`` × ``outdoor_type`` ×
  ``open_kitchen`` × ``washing_machine``, joined into ``group`` such as
  ``"b3|balcony|open|wm"``;
- **the structure hash** ``wl_hash``: a 3-round Weisfeiler–Lehman hash of the
  room–door graph (see :func:`wl_hash`).
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Mapping

import networkx as nx
import numpy as np
import pandas as pd
import shapely

from homeloop.core.plan import (
    BEDROOM_SUBTYPES,
    DOOR,
    INDOOR,
    KITCHEN_SUBTYPES,
    OPEN_KITCHEN_SUBTYPES,
    OUTDOOR,
    SERVICE,
    WINDOW,
    Plan,
)

# --- the vector -------------------------------------------------------------------

#: Room-type count columns and the Swiss Dwellings area subtypes each counts.
#: Every indoor or ancillary space that no named column claims counts in
#: ``n_other`` (offices are named; garages, studios, hobby rooms ... are not);
#: every outdoor space not claimed counts in ``n_other_outdoor`` (PATIO,
#: WINTERGARTEN, PORCH, DRIVEWAY). Service spaces (shafts, voids, stairwells,
#: lift shafts, technical rooms, NOT_DEFINED) are building infrastructure, not
#: rooms, and are not counted.
ROOM_TYPE_COLUMNS: Mapping[str, frozenset[str]] = {
    "n_bedroom": BEDROOM_SUBTYPES,  # ROOM, BEDROOM: Swiss Dwellings labels most bedrooms ROOM
    "n_living": frozenset({"LIVING_ROOM", "LIVING_DINING"}),
    "n_kitchen": KITCHEN_SUBTYPES,  # KITCHEN, KITCHEN_DINING
    "n_dining": frozenset({"DINING"}),
    "n_bathroom": frozenset({"BATHROOM"}),
    "n_corridor": frozenset({"CORRIDOR", "CORRIDORS_AND_HALLS"}),
    "n_storeroom": frozenset({"STOREROOM"}),
    "n_wash_and_dry": frozenset({"WASH_AND_DRY_ROOM"}),
    "n_office": frozenset({"OFFICE"}),
    "n_balcony": frozenset({"BALCONY"}),
    "n_loggia": frozenset({"LOGGIA"}),
    "n_terrace": frozenset({"TERRACE"}),
    "n_garden": frozenset({"GARDEN"}),
    "n_other_outdoor": frozenset(),  # every other outdoor subtype
    "n_other": frozenset(),  # every other indoor or ancillary subtype
}
ROOM_TYPE_COUNT_COLUMNS: tuple[str, ...] = tuple(ROOM_TYPE_COLUMNS)

#: The vector of a plan, in this order: room-type counts, then windows, interior
#: doors (DOOR openings; entrance doors excluded) and indoor floor area (m²).
VECTOR_COLUMNS: tuple[str, ...] = ROOM_TYPE_COUNT_COLUMNS + (
    "n_windows",
    "n_interior_doors",
    "indoor_area_m2",
)

_COLUMN_OF_SUBTYPE: dict[str, str] = {
    subtype: column for column, subtypes in ROOM_TYPE_COLUMNS.items() for subtype in subtypes
}

# --- the group key ---------------------------------------------------------------

#: Bedroom counts above this fall in one group (docs/pipeline.md).
BEDROOM_CAP = 5

#: The outdoor kind of each outdoor subtype, for ``outdoor_type``. A wintergarten
#: (glazed, enclosed on its sides) is grouped with loggias; a patio or porch (paved
#: open-air space at ground level) with terraces. A driveway is no outdoor living
#: space and has no kind.
OUTDOOR_KIND: Mapping[str, str] = {
    "BALCONY": "balcony",
    "LOGGIA": "loggia",
    "WINTERGARTEN": "loggia",
    "TERRACE": "terrace",
    "PATIO": "terrace",
    "PORCH": "terrace",
    "GARDEN": "garden",
}
OUTDOOR_TYPES = ("none", "balcony", "loggia", "terrace", "garden", "several")

#: Spaces a kitchen is open to when it forms an open kitchen with them.
LIVING_DINING_SUBTYPES = frozenset({"LIVING_ROOM", "LIVING_DINING", "DINING"})

#: Feature kinds (entity_type = feature) the group key looks at.
KITCHEN_COUNTER = "KITCHEN"
WASHING_MACHINE = "WASHING_MACHINE"
WASH_AND_DRY_ROOM = "WASH_AND_DRY_ROOM"

# --- the structure hash -------------------------------------------------------------

#: Weisfeiler–Lehman rounds (docs/pipeline.md). networkx is pinned to 3.4.2
#: because the hashes ``weisfeiler_lehman_graph_hash`` returns changed in 3.5.
WL_ITERATIONS = 3
#: Suffix of the node label of a space an entrance door opens into.
ENTRANCE_MARK = "+entrance"

#: Columns of the features table, in order.
FEATURE_COLUMNS: tuple[str, ...] = (
    ("plan", "site_id")
    + VECTOR_COLUMNS
    + ("bedrooms_capped", "outdoor_type", "open_kitchen", "washing_machine", "group", "wl_hash")
)


def outdoor_type(subtypes: Iterable[str]) -> str:
    """The outdoor-space type of a plan from the subtypes of its spaces.

    ``"none"`` when no space has an outdoor kind (:data:`OUTDOOR_KIND`); the kind
    (``"balcony"``, ``"loggia"``, ``"terrace"``, ``"garden"``) when every outdoor
    space has the same kind, however many there are; ``"several"`` when two or
    more kinds are present (a balcony and a garden, say).
    """
    kinds = {OUTDOOR_KIND[s] for s in subtypes if s in OUTDOOR_KIND}
    if not kinds:
        return "none"
    if len(kinds) == 1:
        return next(iter(kinds))
    return "several"


def group_key(bedrooms_capped: int, outdoor: str, open_kitchen: bool, washing_machine: bool) -> str:
    """The group string, e.g. ``"b3|balcony|open|wm"`` or ``"b1|none|closed|nowm"``."""
    kitchen = "open" if open_kitchen else "closed"
    machine = "wm" if washing_machine else "nowm"
    return f"b{int(bedrooms_capped)}|{outdoor}|{kitchen}|{machine}"


def _space_of_feature(plan: Plan, feature) -> str | None:
    """The id of the space holding a feature: its area id, else the space its centre lies in."""
    if feature.space_id is not None and plan.has_space(feature.space_id):
        return feature.space_id
    centre = shapely.centroid(feature.polygon)
    for space in plan.spaces:
        if space.polygon.covers(centre):
            return space.id
    return None


def has_open_kitchen(plan: Plan, graph: nx.Graph | None = None) -> bool:
    """Whether cooking happens in the open with living or dining.

    True when the plan has a KITCHEN_DINING space; or a kitchen counter
    (feature KITCHEN) lies in a LIVING_ROOM, LIVING_DINING or DINING space; or a
    KITCHEN space is openly connected (no wall over a walkable length, edge
    ``open=True`` of the room–door graph) to such a space. A kitchen joined to
    the living room only by a door is closed.
    """
    if any(s.subtype in OPEN_KITCHEN_SUBTYPES for s in plan.spaces):
        return True
    for f in plan.features:
        if f.kind != KITCHEN_COUNTER:
            continue
        sid = _space_of_feature(plan, f)
        if sid is not None and plan.space(sid).subtype in LIVING_DINING_SUBTYPES:
            return True
    kitchens = [s.id for s in plan.spaces if s.subtype == "KITCHEN"]
    if not kitchens:
        return False
    g = plan.room_door_graph() if graph is None else graph
    for k in kitchens:
        for other, edge in g[k].items():
            if edge.get("open") and g.nodes[other]["subtype"] in LIVING_DINING_SUBTYPES:
                return True
    return False


def supports_washing_machine(plan: Plan) -> bool:
    """Whether the plan has a WASHING_MACHINE feature or a WASH_AND_DRY_ROOM space."""
    return any(f.kind == WASHING_MACHINE for f in plan.features) or any(
        s.subtype == WASH_AND_DRY_ROOM for s in plan.spaces
    )


def wl_graph(plan: Plan, graph: nx.Graph | None = None) -> nx.Graph:
    """The labelled room–door graph the structure hash is taken over.

    Nodes are the plan's indoor, outdoor and ancillary spaces (service spaces
    such as shafts and voids are left out: they are building infrastructure and
    their presence varies with how a plan was drawn, not with its layout),
    labelled by subtype, with :data:`ENTRANCE_MARK` appended where an entrance
    door opens into the space (``"CORRIDOR+entrance"``). Edges are labelled
    ``"open"`` where the two spaces are openly connected (with or without doors
    besides) and ``"door"`` where only doors join them; how many doors join a
    pair does not enter the label.
    """
    g = plan.room_door_graph() if graph is None else graph
    out = nx.Graph()
    for node, attrs in g.nodes(data=True):
        if attrs["space_class"] == SERVICE:
            continue
        label = attrs["subtype"] + (ENTRANCE_MARK if attrs["entrance"] else "")
        out.add_node(node, label=label)
    for u, v, attrs in g.edges(data=True):
        if u in out and v in out:
            out.add_edge(u, v, label="open" if attrs.get("open") else "door")
    return out


def wl_hash(plan: Plan, graph: nx.Graph | None = None) -> str:
    """3-round Weisfeiler–Lehman hash (node and edge labels of :func:`wl_graph`).

    Renaming or reordering spaces leaves it unchanged; moving a door so that it
    joins a different pair of room types changes it.
    """
    return nx.weisfeiler_lehman_graph_hash(
        wl_graph(plan, graph), node_attr="label", edge_attr="label", iterations=WL_ITERATIONS
    )


def plan_features(plan: Plan) -> dict:
    """The features row of one plan (the columns of :data:`FEATURE_COLUMNS`)."""
    counts = dict.fromkeys(ROOM_TYPE_COUNT_COLUMNS, 0)
    indoor_area = 0.0
    for s in plan.spaces:
        cls = s.space_class
        if cls == SERVICE:
            continue
        column = _COLUMN_OF_SUBTYPE.get(s.subtype)
        if column is None:
            column = "n_other_outdoor" if cls == OUTDOOR else "n_other"
        counts[column] += 1
        if cls == INDOOR:
            indoor_area += s.polygon.area
    n_windows = 0
    n_doors = 0
    for o in plan.openings:
        if o.kind == DOOR:
            n_doors += 1
        elif o.kind == WINDOW:
            n_windows += 1
    graph = plan.room_door_graph()
    open_kitchen = has_open_kitchen(plan, graph)
    washing = supports_washing_machine(plan)
    bedrooms = min(counts["n_bedroom"], BEDROOM_CAP)
    outdoor = outdoor_type(s.subtype for s in plan.spaces)
    row: dict = {"plan": plan.key, "site_id": int(plan.site_id)}
    row.update(counts)
    row["n_windows"] = n_windows
    row["n_interior_doors"] = n_doors
    row["indoor_area_m2"] = round(float(indoor_area), 3)
    row["bedrooms_capped"] = bedrooms
    row["outdoor_type"] = outdoor
    row["open_kitchen"] = open_kitchen
    row["washing_machine"] = washing
    row["group"] = group_key(bedrooms, outdoor, open_kitchen, washing)
    row["wl_hash"] = wl_hash(plan, graph)
    return row


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Fix the column dtypes, so an empty table has the same schema as a full one."""
    ints = ("site_id",) + ROOM_TYPE_COUNT_COLUMNS + ("n_windows", "n_interior_doors", "bedrooms_capped")
    for c in ints:
        frame[c] = frame[c].astype("int64")
    frame["indoor_area_m2"] = frame["indoor_area_m2"].astype("float64")
    for c in ("open_kitchen", "washing_machine"):
        frame[c] = frame[c].astype("bool")
    for c in ("plan", "outdoor_type", "group", "wl_hash"):
        frame[c] = frame[c].astype("object")
    return frame


def features_table(plans: Iterable[Plan]) -> pd.DataFrame:
    """The features table: one row per plan, sorted by plan key (``features.parquet``)."""
    return features_frame([plan_features(p) for p in plans])


def features_partition(keys: list[str], build_dir: str) -> list[dict]:
    """The feature rows of some plans of a build, read from its plan table (a Dask partition)."""
    from homeloop.pipeline.ingest import load_plans

    return [plan_features(p) for p in load_plans(build_dir, keys=keys, hold=True)]


def features_frame(rows: list[dict]) -> pd.DataFrame:
    """The features table from feature rows in any order."""
    frame = pd.DataFrame.from_records(rows, columns=list(FEATURE_COLUMNS))
    frame = frame.sort_values("plan", kind="stable").reset_index(drop=True)
    return _typed(frame)


# --- scaling ------------------------------------------------------------------------

#: The smallest spread a column is divided by, in the column's own unit (one
#: room, one window, one m²).
MIN_SPREAD = 1.0


def vector_spreads(table: pd.DataFrame, columns: Iterable[str] = VECTOR_COLUMNS) -> np.ndarray:
    """Per vector column: its mean absolute deviation about the pool median, at least
    :data:`MIN_SPREAD`."""
    # Sorted per column, so the float sums (and the spreads) do not depend on row order.
    x = np.sort(table[list(columns)].to_numpy(dtype=np.float64), axis=0)
    if len(x) == 0:
        return np.full(x.shape[1], MIN_SPREAD)
    mad = np.mean(np.abs(x - np.median(x, axis=0)), axis=0)
    return np.maximum(mad, MIN_SPREAD)


def scaled_vectors(table: pd.DataFrame, columns: Iterable[str] = VECTOR_COLUMNS) -> np.ndarray:
    """The plans' vectors (rows in table order) divided column-wise by the pool's spread.

    Each column is divided by its mean absolute deviation about the pool median
    (the L1 counterpart of the standard deviation), floored at one unit. Why:
    raw, indoor area in m² spreads over tens of units while room counts spread
    over one or two, so area alone would decide every L1 distance; after
    scaling, each column contributes on average about one unit to the L1
    distance between a plan and the pool median, so area, bedrooms and windows
    weigh alike. The floor stops a rare column (gardens: almost all zero, a
    spread near 0) from being blown up so that a single garden outweighs
    everything else: a count never weighs more than one unit per room. The
    median and mean deviation are robust to the odd huge plan, and depend only
    on the pool passed in, so the scaling is deterministic.
    """
    columns = list(columns)
    x = table[columns].to_numpy(dtype=np.float64)
    return x / vector_spreads(table, columns)


# --- a synthetic table -----------------------------------------------------------------


def synthetic_features_table(plans: int, sites: int, seed: int = 0) -> pd.DataFrame:
    """A features table drawn at random, with the shape of a real pool, for benchmarks
    and tests of the later stages (no geometry is generated).

    Site sizes are heavy-tailed (a few large estates, many small buildings);
    plans of one site share a typical size; counts, area and the group key follow
    the bedroom count; ``wl_hash`` is a function of the room counts and one of a
    few layout variants, so common layouts repeat across the pool as they do in
    real housing.
    """
    rng = np.random.default_rng(seed)
    site_of_plan, site_size, bedrooms = _synthetic_sites(rng, plans, sites)
    cols, kitchen_dining = _synthetic_room_counts(rng, bedrooms)
    rooms = sum(cols[c] for c in ("n_bedroom", "n_living", "n_kitchen", "n_dining", "n_bathroom", "n_office"))
    area = 18.0 + 17.0 * bedrooms + 6.0 * cols["n_bathroom"] + rng.gamma(4.0, 4.0, plans)
    area = area * np.exp(0.15 * site_size[site_of_plan])
    washing = (cols["n_wash_and_dry"] > 0) | (rng.random(plans) < 0.35)
    open_kitchen = kitchen_dining | (rng.random(plans) < 0.25)
    variant = rng.integers(0, 3, plans)  # a few layouts per room programme
    table = pd.DataFrame({"plan": [f"{s}-{i}-synthetic" for i, s in enumerate(site_of_plan)],
                          "site_id": site_of_plan.astype(np.int64)})
    for c in ROOM_TYPE_COUNT_COLUMNS:
        table[c] = np.asarray(cols[c], dtype=np.int64)
    table["n_windows"] = (rooms + rng.poisson(1.5 + 0.6 * bedrooms)).astype(np.int64)
    table["n_interior_doors"] = (rooms + cols["n_storeroom"] + cols["n_corridor"] - 1 + rng.integers(0, 2, plans)).astype(np.int64)
    table["indoor_area_m2"] = np.round(area, 3)
    table["bedrooms_capped"] = np.minimum(bedrooms, BEDROOM_CAP).astype(np.int64)
    table = _synthetic_groups(table, cols, open_kitchen, washing, variant)
    table = table.sort_values("plan", kind="stable").reset_index(drop=True)
    return _typed(table[list(FEATURE_COLUMNS)].copy())


def _synthetic_sites(rng: np.random.Generator, plans: int, sites: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each plan's site (heavy-tailed site sizes, every site one plan at least), each site's
    size tendency, and each plan's bedrooms."""
    weights = rng.lognormal(0.0, 1.1, sites)
    site_of_plan = rng.choice(sites, size=plans, p=weights / weights.sum())
    site_of_plan[: min(plans, sites)] = np.arange(min(plans, sites))  # every site supplies one
    site_size = rng.normal(0.0, 0.6, sites)  # a site's plans are alike in size
    bedrooms = np.clip(np.round(rng.gamma(3.0, 0.8, plans) + 0.4 * site_size[site_of_plan]), 0, 7).astype(int)
    return site_of_plan, site_size, bedrooms


def _synthetic_room_counts(rng: np.random.Generator, bedrooms: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Room counts by type for plans with these bedrooms, and which plans have a kitchen-dining room."""
    plans = len(bedrooms)
    zeros = np.zeros(plans, dtype=np.int64)
    cols: dict[str, np.ndarray] = {c: zeros.copy() for c in ROOM_TYPE_COUNT_COLUMNS}
    cols["n_bedroom"] = bedrooms
    cols["n_living"] = (rng.random(plans) < 0.92).astype(int) + (rng.random(plans) < 0.04)
    kitchen_dining = rng.random(plans) < 0.3
    cols["n_kitchen"] = np.ones(plans, dtype=int)
    cols["n_dining"] = (rng.random(plans) < 0.15).astype(int)
    cols["n_bathroom"] = 1 + (rng.random(plans) < 0.12 * bedrooms).astype(int) + (rng.random(plans) < 0.03 * bedrooms)
    cols["n_corridor"] = rng.binomial(2, 0.35 + 0.05 * np.minimum(bedrooms, 4))
    cols["n_storeroom"] = rng.binomial(2, 0.25, plans)
    cols["n_wash_and_dry"] = (rng.random(plans) < 0.12).astype(int)
    cols["n_office"] = (rng.random(plans) < 0.05).astype(int)
    outdoor_roll = rng.random(plans)
    cols["n_balcony"] = ((outdoor_roll < 0.55) | (outdoor_roll > 0.97)).astype(int) + (rng.random(plans) < 0.05)
    cols["n_loggia"] = ((outdoor_roll >= 0.55) & (outdoor_roll < 0.70)).astype(int)
    cols["n_terrace"] = ((outdoor_roll >= 0.70) & (outdoor_roll < 0.82)).astype(int)
    cols["n_garden"] = ((outdoor_roll >= 0.82) & (outdoor_roll < 0.86) | (outdoor_roll > 0.985)).astype(int)
    cols["n_other_outdoor"] = (rng.random(plans) < 0.02).astype(int)
    cols["n_other"] = (rng.random(plans) < 0.08).astype(int)
    return cols, kitchen_dining


def _synthetic_groups(table: pd.DataFrame, cols: dict[str, np.ndarray], open_kitchen: np.ndarray,
                      washing: np.ndarray, variant: np.ndarray) -> pd.DataFrame:
    """The group keys and layout hashes of the drawn plans (``wl_hash``: the room counts,
    the open kitchen and one of a few layout variants)."""
    outdoor = [
        outdoor_type(["BALCONY"] * b + ["LOGGIA"] * lg + ["TERRACE"] * t + ["GARDEN"] * g)
        for b, lg, t, g in zip(cols["n_balcony"], cols["n_loggia"], cols["n_terrace"], cols["n_garden"])
    ]
    table["outdoor_type"] = outdoor
    table["open_kitchen"] = open_kitchen
    table["washing_machine"] = washing
    table["group"] = [group_key(b, o, k, w) for b, o, k, w in
                      zip(table["bedrooms_capped"], outdoor, open_kitchen, washing)]
    programme = table[list(ROOM_TYPE_COUNT_COLUMNS)].astype(str).agg("".join, axis=1)
    table["wl_hash"] = [_stable_hex(f"{p}|{v}|{k}") for p, v, k in zip(programme, variant, open_kitchen)]
    return table


def _stable_hex(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
