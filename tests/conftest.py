"""Shared test helpers: small hand-written Swiss Dwellings fixtures."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import shapely

from homeloop.plan import (
    AREA,
    FEATURE,
    OPENING,
    SEPARATOR,
    Feature,
    Opening,
    Plan,
    PlanIds,
    Separator,
    Space,
    element_id,
    with_connected_openings,
)

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture_plans(path: str | Path) -> list[Plan]:
    """Plans of a small, well-formed fixture CSV (row = file line, header = line 1)."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    groups: dict[tuple, dict] = {}
    for i, r in enumerate(df.itertuples(index=False)):
        row = i + 2
        key = (int(r.site_id), int(r.floor_id), r.apartment_id)
        g = groups.setdefault(key, {"r": r, "spaces": [], "seps": [], "ops": [], "feats": [], "units": set()})
        g["units"].add(int(r.unit_id))
        geom = shapely.from_wkt(r.geometry)
        area_id = str(int(float(r.area_id))) if r.area_id else ""
        if r.entity_type == AREA:
            g["spaces"].append(Space(area_id, r.entity_subtype, geom, row))
        elif r.entity_type == SEPARATOR:
            g["seps"].append(Separator(element_id(r.entity_subtype, row), r.entity_subtype, geom, row))
        elif r.entity_type == OPENING:
            g["ops"].append(Opening(element_id(r.entity_subtype, row), r.entity_subtype, geom, (), row))
        elif r.entity_type == FEATURE:
            g["feats"].append(Feature(element_id(r.entity_subtype, row), r.entity_subtype, geom, area_id or None, row))
    plans = []
    for (site, floor, apartment), g in sorted(groups.items()):
        r = g["r"]
        ids = PlanIds(site, int(r.building_id), int(r.plan_id), floor, apartment, tuple(sorted(g["units"])))
        plan = Plan(ids, tuple(g["spaces"]), tuple(g["seps"]), tuple(g["ops"]), tuple(g["feats"]))
        plans.append(with_connected_openings(plan))
    return plans


@pytest.fixture
def fixture_plan():
    """Load the single plan of ``tests/fixtures/<name>.csv``."""

    def load(name: str) -> Plan:
        plans = load_fixture_plans(FIXTURES / f"{name}.csv")
        assert len(plans) == 1, f"{name}.csv holds {len(plans)} plans, expected 1"
        return plans[0]

    return load
