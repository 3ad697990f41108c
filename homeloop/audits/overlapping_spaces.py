"""Rule ``overlapping_spaces``: two spaces drawn over each other.

Spaces tile the floor; two overlapping by more than
:data:`~homeloop.audits.thresholds.SPACE_OVERLAP_MIN_AREA` (0.05 m²) double-count floor
area and confuse which room a point is in. Pairs are found with an STRtree.
"""

from __future__ import annotations

from typing import Iterator

import shapely

from homeloop.core.plan import Plan

from homeloop.audits.findings import Finding
from homeloop.audits.geometry import plan_geometry
from homeloop.audits.registry import rule
from homeloop.audits.thresholds import SPACE_OVERLAP_MIN_AREA, TOLERANCE_M2, above

RULE_ID = "overlapping_spaces"


@rule(
    RULE_ID,
    description=f"Two spaces overlap by more than {SPACE_OVERLAP_MIN_AREA} m².",
)
def overlapping_spaces(plan: Plan) -> Iterator[Finding]:
    geo = plan_geometry(plan)
    if len(geo.spaces) < 2:
        return
    a, b = geo.space_tree.query(geo.spaces, predicate="intersects")
    upper = a < b
    a, b = a[upper], b[upper]
    if len(a) == 0:
        return
    areas = shapely.area(shapely.intersection(geo.spaces[a], geo.spaces[b]))
    for i, j, area in zip(a, b, areas):
        if not above(area, SPACE_OVERLAP_MIN_AREA, TOLERANCE_M2):
            continue
        si, sj = plan.spaces[int(i)], plan.spaces[int(j)]
        yield Finding(
            RULE_ID,
            plan.key,
            (si.id, sj.id),
            f"{si.subtype} {si.id} and {sj.subtype} {sj.id} overlap by {area:.2f} m² "
            f"(more than {SPACE_OVERLAP_MIN_AREA} m²): redraw their shared edge",
        )
