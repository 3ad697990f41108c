"""Rule ``invalid_geometry``: an element whose polygon is invalid or empty.

Self-intersecting rings (a bow-tie), rings with too few points and empty or
missing geometries make area and overlap figures meaningless. The message
gives GEOS's reason (``shapely.is_valid_reason``). No threshold.

The same rule id also reports rules that could not evaluate a plan (see
:mod:`homeloop.audits.registry`) and rows rejected at ingest
(:func:`homeloop.audits.findings.finding_from_rejection`).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import shapely

from homeloop.core.plan import Plan

from homeloop.audits.findings import Finding
from homeloop.audits.registry import rule

RULE_ID = "invalid_geometry"


@rule(RULE_ID, description="An element's polygon is invalid (e.g. self-intersecting) or empty.")
def invalid_geometry(plan: Plan) -> Iterator[Finding]:
    elements = (
        [(s.id, f"{s.subtype} area {s.id}", s.polygon) for s in plan.spaces]
        + [(e.id, f"{e.kind} {e.id}", e.polygon) for e in plan.separators]
        + [(e.id, f"{e.kind} {e.id}", e.polygon) for e in plan.openings]
        + [(e.id, f"{e.kind} {e.id}", e.polygon) for e in plan.features]
    )
    if not elements:
        return
    geoms = np.array([g for _, _, g in elements], dtype=object)
    missing = shapely.is_missing(geoms)
    geoms[missing] = shapely.Polygon()
    bad = ~shapely.is_valid(geoms) | shapely.is_empty(geoms)
    for k in np.flatnonzero(bad):
        element, name, _ = elements[k]
        reason = "no geometry" if missing[k] else (
            "empty geometry" if shapely.is_empty(geoms[k]) else shapely.is_valid_reason(geoms[k])
        )
        yield Finding(
            RULE_ID,
            plan.key,
            (element,),
            f"{name} has an invalid polygon ({reason}): redraw it as a simple polygon",
        )
