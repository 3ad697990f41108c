"""The synthetic Swiss Dwellings generator: format, determinism, realistic
valid plans, and defects that are really there."""

from __future__ import annotations

import csv
import hashlib
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest
import shapely
import shapely.affinity
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely.geometry import box

from homeloop.core.plan import (
    BEDROOM_SUBTYPES,
    EMPTY_APARTMENT_ID,
    WALL,
    Opening,
    Plan,
    Space,
)
from homeloop.pipeline.sources.synthetic import (
    BLOCKED_DOORWAY,
    COLUMNS,
    DEFECT_KINDS,
    INVALID_GEOMETRY,
    NO_FRIDGE_SPACE,
    NO_SHOWER_OR_BATH,
    UNREACHABLE_SPACE,
    defects_path,
    generate,
)
from conftest import load_fixture_plans

#: Door clear zone depth (m) on each face, as the generator guarantees.
CLEAR = 0.8
#: Depth (m) from a door face within which a feature blocks the doorway.
BLOCKING = 0.3
EPS = 1e-6


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- geometric checks shared by valid and defective plans -------------------------


def clear_zone(door: Opening, depth: float = CLEAR):
    """The door-wide rectangle reaching ``depth`` from both faces (axis-aligned doors)."""
    x0, y0, x1, y1 = door.polygon.bounds
    if x1 - x0 >= y1 - y0:
        return box(x0, y0 - depth, x1, y1 + depth)
    return box(x0 - depth, y0, x1 + depth, y1)


def zone_intruders(plan: Plan, door: Opening, depth: float = CLEAR) -> list[str]:
    """Elements overlapping a door's clear zone (its own wall excepted)."""
    zone = clear_zone(door, depth)
    hits = [f.id for f in plan.features if f.polygon.intersection(zone).area > EPS]
    for s in plan.separators:
        if s.kind == WALL and s.polygon.intersection(door.polygon).area > EPS:
            continue
        if s.polygon.intersection(zone).area > EPS:
            hits.append(s.id)
    hits += [o.id for o in plan.openings if o.id != door.id and o.polygon.intersection(zone).area > EPS]
    return hits


def blocked_doorways(plan: Plan) -> list[str]:
    """Doors narrower than 0.6 m or with a feature within 0.3 m of a face."""
    found = []
    for door in plan.openings:
        if not door.is_passage:
            continue
        if door.width < 0.6 - EPS:
            found.append(door.id)
        zone = clear_zone(door, BLOCKING)
        found += [f.id for f in plan.features if f.polygon.intersection(zone).area > EPS]
    return found


def kitchen_spaces(plan: Plan) -> list[Space]:
    ids = {f.space_id for f in plan.features if f.kind == "KITCHEN"}
    return [s for s in plan.spaces if s.id in ids]


def fridge_fits(plan: Plan, kitchen: Space, front: float = 0.9) -> bool:
    """Whether a 0.6 x 0.65 m fridge fits against an edge of the kitchen with
    ``front`` m clear ahead, off every feature and every door's clear zone."""
    x0, y0, x1, y1 = kitchen.polygon.bounds
    deep = 0.65 + front
    obstacles = [f.polygon for f in plan.features] + [clear_zone(d) for d in plan.openings if d.is_passage]
    blocking = shapely.union_all(obstacles)
    room = kitchen.polygon.buffer(EPS)
    step = 0.05
    candidates = []
    n = int((x1 - x0 - 0.6) / step) + 1
    for i in range(max(n, 0)):
        a = x0 + i * step
        candidates += [box(a, y0, a + 0.6, y0 + deep), box(a, y1 - deep, a + 0.6, y1)]
    n = int((y1 - y0 - 0.6) / step) + 1
    for i in range(max(n, 0)):
        b = y0 + i * step
        candidates += [box(x0, b, x0 + deep, b + 0.6), box(x1 - deep, b, x1, b + 0.6)]
    return any(room.contains(c) and c.intersection(blocking).area <= EPS for c in candidates)


def unreachable(plan: Plan) -> set[str]:
    return {s.id for s in plan.indoor_spaces} - plan.reachable_from_entrance()


def invalid(plan: Plan) -> list[str]:
    elements = list(plan.spaces) + list(plan.separators) + list(plan.openings) + list(plan.features)
    return [e.id for e in elements if not e.polygon.is_valid]


def has_wet_fitting(plan: Plan) -> bool:
    return any(f.kind in ("SHOWER", "BATHTUB") for f in plan.features)


def detected_defects(plan: Plan) -> set[str]:
    """Which defect kinds the checks above see in a plan."""
    found = set()
    if invalid(plan):
        return {INVALID_GEOMETRY}  # geometry checks are meaningless past this
    if blocked_doorways(plan):
        found.add(BLOCKED_DOORWAY)
    if not has_wet_fitting(plan):
        found.add(NO_SHOWER_OR_BATH)
    if not all(fridge_fits(plan, k) for k in kitchen_spaces(plan)):
        found.add(NO_FRIDGE_SPACE)
    if unreachable(plan):
        found.add(UNREACHABLE_SPACE)
    return found


def assert_valid(plan: Plan) -> None:
    """Everything a defect-free plan promises."""
    assert not invalid(plan), plan.key
    spaces = plan.spaces
    for i, a in enumerate(spaces):
        for b in spaces[i + 1:]:
            assert a.polygon.intersection(b.polygon).area < EPS, (plan.key, a.id, b.id)
    for door in plan.doors:
        assert len(door.connects) == 2, (plan.key, door.id, door.connects)
        assert 0.8 - EPS <= door.width <= 0.9 + EPS
        assert not zone_intruders(plan, door), (plan.key, door.id, zone_intruders(plan, door))
    entrances = plan.entrance_doors
    assert len(entrances) == 1, plan.key
    assert len(entrances[0].connects) == 1 and plan.space(entrances[0].connects[0]).is_indoor
    assert plan.space(entrances[0].connects[0]).subtype in ("CORRIDOR", "LIVING_ROOM", "LIVING_DINING")
    assert 0.9 - EPS <= entrances[0].width <= 1.0 + EPS
    assert not zone_intruders(plan, entrances[0])
    assert not unreachable(plan), (plan.key, unreachable(plan))
    for f in plan.features:
        assert f.space_id is not None, (plan.key, f.id)
        assert plan.space(f.space_id).polygon.buffer(EPS).contains(f.polygon), (plan.key, f.id)
    for w in plan.windows:
        assert 1.0 - EPS <= w.width <= 2.5 + EPS and w.connects
    kitchens = kitchen_spaces(plan)
    assert kitchens, plan.key
    for k in kitchens:
        assert any(f.kind == "SINK" for f in plan.features_in(k.id)), plan.key
        assert fridge_fits(plan, k, front=1.0), plan.key
    assert has_wet_fitting(plan)
    assert any(s.subtype in ("BATHROOM",) for s in spaces)
    assert plan.count_spaces(BEDROOM_SUBTYPES) >= 1
    assert plan.count_spaces({"LIVING_ROOM", "LIVING_DINING"}) == 1
    assert plan.count_spaces({"CORRIDOR"}) <= 2
    assert not blocked_doorways(plan)
    for s in plan.spaces:
        if s.subtype in BEDROOM_SUBTYPES:
            assert 8.5 <= s.area <= 32, (plan.key, s.area)
    assert 30 <= plan.indoor_area <= 220, (plan.key, plan.indoor_area)


def canonical(plans: list[Plan]) -> list[Plan]:
    """The plans on the lowest floor of each plan_id (what an ingest keeps)."""
    lowest: dict[int, int] = {}
    for p in plans:
        lowest[p.ids.plan_id] = min(lowest.get(p.ids.plan_id, p.ids.floor_id), p.ids.floor_id)
    return [p for p in plans if p.ids.floor_id == lowest[p.ids.plan_id]]


# --- format and determinism ------------------------------------------------------------


@pytest.fixture(scope="module")
def default_like(tmp_path_factory) -> tuple[Path, object]:
    path = tmp_path_factory.mktemp("synthetic") / "geometries.csv"
    return path, generate(path, plans=400, sites=100, seed=3)


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    generate(a, plans=60, sites=15, seed=7)
    generate(b, plans=60, sites=15, seed=7)
    generate(c, plans=60, sites=15, seed=8)
    assert sha(a) == sha(b)
    assert sha(defects_path(a)) == sha(defects_path(b))
    assert sha(a) != sha(c)


def test_columns_ids_and_levels(default_like):
    path, report = default_like
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        assert tuple(next(reader)) == COLUMNS
        rows = list(reader)
    assert len(rows) == report.rows
    df = pd.DataFrame(rows, columns=COLUMNS)
    assert (df.apartment_id.str.fullmatch(r"[0-9a-f]{32}")).all()
    assert EMPTY_APARTMENT_ID not in set(df.apartment_id)
    assert set(df.unit_usage) == {"RESIDENTIAL"}
    assert set(df.entity_type) == {"area", "separator", "opening", "feature"}
    assert df.geometry.str.startswith("POLYGON ((").all()
    coords = df.geometry.str.extractall(r"(-?\d+\.\d+)")[0]
    assert coords.str.split(".").str[1].str.len().max() <= 3
    areas = df[df.entity_type == "area"]
    assert areas.area_id.is_unique and (areas.area_id != "").all()
    assert (df[df.entity_type == "feature"].area_id != "").all()
    assert (df[df.entity_type.isin(["separator", "opening"])].area_id == "").all()
    assert set(df[df.entity_type == "feature"].area_id) <= set(areas.area_id)
    # elevation = floor elevation + the element's own sill; heights per docs/data-format.md
    floor_elev = df[df.entity_type == "area"].groupby("floor_id").elevation.first().astype(float)
    assert set((floor_elev / 2.9).round(6) % 1) == {0.0}
    rel = df.elevation.astype(float) - df.floor_id.map(floor_elev)
    levels = {(s, round(e, 3), h) for s, e, h in zip(df.entity_subtype, rel, df.height)}
    assert ("WINDOW", 0.5, "1.9") in levels and ("DOOR", 0.0, "2.0") in levels
    assert ("SINK", 0.6, "0.25") in levels and ("KITCHEN", 0.0, "0.9") in levels
    assert {h for s, _, h in levels if s == "WALL"} == {"2.6"}
    # every apartment keeps one plan_id, and floors sharing a plan_id hold the same geometry
    per_plan = df.groupby(["plan_id", "floor_id"]).geometry.apply(lambda g: tuple(g))
    for plan_id, floors in per_plan.groupby(level=0):
        assert len(set(floors)) == 1, plan_id


def test_counts_and_spread_over_sites(default_like):
    path, report = default_like
    assert report.plans == 400 and report.sites == 100
    plans = canonical(load_fixture_plans(path))
    assert len(plans) == 400
    per_site = Counter(p.site_id for p in plans)
    assert len(per_site) == 100
    assert min(per_site.values()) >= 1 and max(per_site.values()) >= 3 * (400 / 100)
    assert 55 <= report.rows / report.plans <= 90
    bedrooms = Counter(min(p.count_spaces(BEDROOM_SUBTYPES), 5) for p in plans)
    assert set(bedrooms) == {1, 2, 3, 4, 5}
    subtypes = Counter(s.subtype for p in plans for s in p.spaces)
    for st_ in ("ROOM", "BEDROOM", "LIVING_ROOM", "LIVING_DINING", "KITCHEN", "KITCHEN_DINING", "BATHROOM",
                "CORRIDOR", "STOREROOM", "WASH_AND_DRY_ROOM", "BALCONY", "LOGGIA", "TERRACE", "GARDEN"):
        assert subtypes[st_] > 0, st_
    assert sum(1 for p in plans if not p.outdoor_spaces) > 0
    features = Counter(f.kind for p in plans for f in p.features)
    assert features["WASHING_MACHINE"] > 0 and features["BATHTUB"] > 0 and features["SHOWER"] > 0


def test_progress_reports_each_sites_plans(tmp_path):
    seen: list[int] = []
    generate(tmp_path / "p.csv", plans=50, sites=12, seed=1, progress=seen.append)
    assert len(seen) == 12 and all(n >= 1 for n in seen) and sum(seen) == 50


def test_rejects_fewer_plans_than_sites(tmp_path):
    with pytest.raises(ValueError):
        generate(tmp_path / "x.csv", plans=3, sites=4)


# --- valid plans -----------------------------------------------------------------------


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_valid_plans_are_sound(tmp_path, seed):
    path = tmp_path / f"valid_{seed}.csv"
    report = generate(path, plans=12, sites=4, seed=seed, defect_rate=0.0)
    assert sum(report.defects.values()) == 0
    assert defects_path(path).read_text() == "plan,defect,element\n"
    plans = load_fixture_plans(path)
    assert len(canonical(plans)) == 12
    for plan in plans:
        assert_valid(plan)


def test_many_valid_plans_are_sound(default_like):
    path, _ = default_like
    flagged = {r.plan for r in pd.read_csv(defects_path(path)).itertuples()}
    plans = [p for p in load_fixture_plans(path) if p.key not in flagged]
    assert len(plans) > 300
    for plan in plans:
        assert_valid(plan)


def test_layouts_vary(default_like):
    """Not one template shifted: shapes, room counts and orientations differ."""
    path, _ = default_like
    plans = canonical(load_fixture_plans(path))
    shapes = {shape_signature(p) for p in plans}
    assert len(shapes) > 0.4 * len(plans)
    # the living room's outdoor space lies on every side of it somewhere
    sides = set()
    for p in plans:
        living = next(s for s in p.spaces if s.subtype in ("LIVING_ROOM", "LIVING_DINING"))
        for o in p.outdoor_spaces:
            dx = o.polygon.centroid.x - living.polygon.centroid.x
            dy = o.polygon.centroid.y - living.polygon.centroid.y
            sides.add(("E" if dx > 0 else "W") if abs(dx) > abs(dy) else ("N" if dy > 0 else "S"))
    assert sides == {"N", "S", "E", "W"}


def layout_variants(plan: Plan) -> set[str]:
    """The layout variants of docs/pipeline.md ("The generated plans") a plan shows, read off
    its spaces, room–door graph and footprint."""
    g = plan.room_door_graph()
    sub = {s.id: s.subtype for s in plan.spaces}
    halls = {s.id for s in plan.spaces if s.subtype == "CORRIDOR"} or set(plan.entrance_space_ids())
    found = set()
    if len(halls) == 2:
        found.add("two corridors")
    for s in plan.indoor_spaces:
        if s.id not in halls and not set(g[s.id]) & halls and s.subtype not in ("LIVING_ROOM", "LIVING_DINING"):
            found.add("reached through another room")
        if s.subtype == "BATHROOM" and {sub[o] for o in g[s.id]} <= BEDROOM_SUBTYPES:
            found.add("en-suite bathroom")
        wet = {f.kind for f in plan.features_in(s.id)} & {"SHOWER", "BATHTUB"}
        if s.subtype == "BATHROOM" and not wet:
            found.add("guest WC")
        if s.subtype in ("OFFICE", "DINING"):
            found.add(s.subtype.lower())
    for u, v, attrs in g.edges(data=True):
        if attrs["open"] and {sub[u], sub[v]} == {"KITCHEN", "CORRIDOR"}:
            found.add("kitchen open to the hall")
        if {sub[u], sub[v]} & BEDROOM_SUBTYPES and (g.nodes[u]["space_class"] == "outdoor"
                                                    or g.nodes[v]["space_class"] == "outdoor"):
            found.add("bedroom with an outdoor space")
    footprint = shapely.union_all([s.polygon.buffer(0.4, join_style="mitre") for s in plan.indoor_spaces])
    footprint = footprint.buffer(-0.4, join_style="mitre")
    if footprint.area < 0.93 * footprint.envelope.area:
        found.add("L or U")
    x0, y0, x1, y1 = footprint.bounds
    if max(x1 - x0, y1 - y0) > 3.2 * min(x1 - x0, y1 - y0):
        found.add("long")
    return found


def test_layout_variants_all_appear(default_like):
    """Every layout variant the generator draws turns up (and the plans holding them are the
    sound ones test_many_valid_plans_are_sound checks)."""
    path, _ = default_like
    seen = Counter(v for p in canonical(load_fixture_plans(path)) for v in layout_variants(p))
    expected = {"two corridors", "reached through another room", "en-suite bathroom", "guest WC", "office",
                "dining", "kitchen open to the hall", "bedroom with an outdoor space", "L or U", "long"}
    assert set(seen) == expected
    assert min(seen.values()) >= 10, seen


def test_room_door_graphs_vary(default_like):
    """Most plans have a room–door graph of their own (3-round WL hash), though about a third of
    floors repeat a floor template drawn earlier."""
    from homeloop.pipeline.features import features_table

    path, _ = default_like
    table = features_table(canonical(load_fixture_plans(path)))
    assert table["wl_hash"].nunique() > 0.62 * len(table)


def test_the_variants_page_states_the_generators_shares():
    """docs/pipeline.md ("The generated plans") lists each variant's share and each pair of
    neighbours a door may join with the values the generator draws from."""
    from homeloop.pipeline.sources import apartments

    text = (Path(__file__).resolve().parent.parent / "docs" / "pipeline.md").read_text(encoding="utf-8")
    lines = text.splitlines()

    def rows(header: str) -> list[list[str]]:
        body = []
        for line in lines[lines.index(header) + 2:]:
            if not line.startswith("|"):
                return body
            body.append([c.strip() for c in line.strip("|").split("|")])
        return body

    for _, share, constant in rows("| variant | share | constant |"):
        name, _, key = constant.strip("`").partition("[")
        value = getattr(apartments, name)
        value = value[key.strip('"]')] if key else value
        assert float(share) == value, constant
    stated = {(h, i): (float(a), float(b)) for h, i, a, b in
              rows("| host | inner room | door between them | reached only through the host |")}
    assert stated == apartments.LINKS


def shape_signature(plan: Plan) -> tuple:
    """The plan's geometry up to translation."""
    elements = plan.spaces + plan.separators + plan.openings + plan.features
    x0 = min(e.polygon.bounds[0] for e in elements)
    y0 = min(e.polygon.bounds[1] for e in elements)
    moved = [shapely.affinity.translate(e.polygon, -x0, -y0) for e in elements]
    snapped = (shapely.set_precision(g, 0.001, mode="pointwise") for g in moved)
    return tuple(sorted(shapely.to_wkt(g, rounding_precision=3) for g in snapped))


def test_building_shapes_repeat_across_sites(default_like):
    path, _ = default_like
    plans = canonical(load_fixture_plans(path))
    sites_of: dict[tuple, set[int]] = defaultdict(set)
    for p in plans:
        sites_of[shape_signature(p)].add(p.site_id)
    shared = [s for s in sites_of.values() if len(s) > 1]
    assert len(shared) >= 5


# --- defects ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_defective(tmp_path_factory):
    path = tmp_path_factory.mktemp("defects") / "geometries.csv"
    report = generate(path, plans=100, sites=25, seed=11, defect_rate=1.0)
    return path, report, load_fixture_plans(path)


def test_every_plan_gets_one_defect_dealt_evenly(all_defective):
    path, report, plans = all_defective
    assert sum(report.defects.values()) == 100
    assert set(report.defects) == set(DEFECT_KINDS)
    assert max(report.defects.values()) - min(report.defects.values()) <= 1
    sidecar = pd.read_csv(defects_path(path), dtype=str)
    assert list(sidecar.columns) == ["plan", "defect", "element"]
    assert sidecar.plan.is_unique
    assert set(sidecar.plan) == {p.key for p in plans}
    lowest = {p.key for p in canonical(plans)}
    assert Counter(sidecar[sidecar.plan.isin(lowest)].defect) == Counter(report.defects)


def test_defects_are_really_there_and_alone(all_defective):
    path, _, plans = all_defective
    sidecar = {r.plan: (r.defect, r.element) for r in pd.read_csv(defects_path(path), dtype=str).itertuples()}
    for plan in plans:
        kind, element = sidecar[plan.key]
        assert detected_defects(plan) == {kind}, (plan.key, kind, detected_defects(plan))
        ids = {s.id for s in plan.spaces} | {e.id for e in plan.separators + plan.openings + plan.features}
        assert set(element.split(";")) <= ids, (plan.key, element)
        if kind == INVALID_GEOMETRY:
            assert invalid(plan) == [element]
            assert shapely.from_wkt(plan.space(element).polygon.wkt) is not None
        elif kind == UNREACHABLE_SPACE:
            assert unreachable(plan) == {element}
        elif kind == BLOCKED_DOORWAY:
            assert element in blocked_doorways(plan)
        elif kind == NO_FRIDGE_SPACE:
            assert [k.id for k in kitchen_spaces(plan)] == [element]
        elif kind == NO_SHOWER_OR_BATH:
            assert {plan.space(a).subtype for a in element.split(";")} == {"BATHROOM"}
            assert any(f.kind == "TOILET" for f in plan.features)
