"""Rule ``feature_outside_area``: a feature that is not inside the area it names.

Swiss Dwellings gives each feature (SINK, SHOWER, KITCHEN counter ...) the
area_id of the area holding it (docs/data-format.md). A feature whose polygon
reaches further than :data:`~homeloop.audits.thresholds.FEATURE_AREA_TOLERANCE`
(0.10 m) beyond that area's outline is misplaced: a sink 100 m from every room
would furnish a kitchen with a sink it does not have. How far it reaches is the
largest distance from one of its vertices to the area (features are drawn as
rectangles). A feature naming an area the plan does not have is reported too;
one naming no area at all is left to the ingest, which places it by overlap.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import shapely

from homeloop.core.plan import Plan

from homeloop.audits.findings import Finding
from homeloop.audits.geometry import describe_space, element_name
from homeloop.audits.registry import rule
from homeloop.audits.thresholds import FEATURE_AREA_TOLERANCE, above

RULE_ID = "feature_outside_area"


@rule(
    RULE_ID,
    description=f"A feature reaches more than {FEATURE_AREA_TOLERANCE} m beyond the area it names.",
)
def feature_outside_area(plan: Plan) -> Iterator[Finding]:
    named = [f for f in plan.features if f.space_id]
    for feature in named:
        if not plan.has_space(feature.space_id):
            yield Finding(
                RULE_ID,
                plan.key,
                (feature.id,),
                f"{element_name(feature.kind, feature.id)} names area {feature.space_id}, which the plan does not have",
            )
    held = [f for f in named if plan.has_space(f.space_id)]
    if not held:
        return
    reach = _reach([f.polygon for f in held], [plan.space(f.space_id).polygon for f in held])
    for feature, distance in zip(held, reach):
        if not above(distance, FEATURE_AREA_TOLERANCE):
            continue
        yield Finding(
            RULE_ID,
            plan.key,
            (feature.id, feature.space_id),
            f"{element_name(feature.kind, feature.id)} reaches {distance:.2f} m beyond "
            f"{describe_space(plan, feature.space_id)}, the area it names (more than "
            f"{FEATURE_AREA_TOLERANCE:.2f} m): move it into its area or give it the area it stands in",
        )


def _reach(features: list, areas: list) -> np.ndarray:
    """For each feature, the largest distance (m) from its vertices to its area."""
    coords, owner = shapely.get_coordinates(np.array(features, dtype=object), return_index=True)
    if len(coords) == 0:
        return np.zeros(len(features))
    distances = shapely.distance(shapely.points(coords), np.array(areas, dtype=object)[owner])
    reach = np.zeros(len(features))
    np.maximum.at(reach, owner, distances)  # NaN (an empty area) is left to invalid_geometry
    return reach
