"""Rule ``door_not_connecting``: a door that leads nowhere.

A DOOR must open into two spaces of the plan and an ENTRANCE_DOOR into at
least one (``Opening.connects``, worked out from geometry with the contact
tolerance of :mod:`homeloop.core.plan`, 5 cm). A door that does not is drawn off
its wall or between spaces missing from the plan. A door touching a space
with an invalid polygon is left to ``invalid_geometry``: its connections
cannot be judged.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import shapely

from homeloop.core.geometry import OPENING_CONTACT_TOLERANCE
from homeloop.core.plan import DOOR, ENTRANCE_DOOR, Plan

from homeloop.audits.findings import Finding
from homeloop.audits.geometry import describe_door, plan_geometry
from homeloop.audits.registry import rule

RULE_ID = "door_not_connecting"


@rule(
    RULE_ID,
    description="A DOOR does not open into two spaces, or an ENTRANCE_DOOR into any space.",
)
def door_not_connecting(plan: Plan) -> Iterator[Finding]:
    geo = None
    for i, o in enumerate(plan.openings):
        needed = {DOOR: 2, ENTRANCE_DOOR: 1}.get(o.kind)
        if needed is None or len(o.connects) >= needed:
            continue
        geo = geo or plan_geometry(plan)
        if _touches_invalid_space(plan, geo.openings[i]):
            continue
        door = describe_door(plan, o.id, o.kind, float(geo.opening_widths[i]), o.connects)
        wanted = "two spaces" if o.kind == DOOR else "a space"
        yield Finding(
            RULE_ID,
            plan.key,
            (o.id,) + tuple(o.connects),
            f"{door} does not open into {wanted} of the plan: "
            "move it onto the wall between the spaces it joins",
        )


def _touches_invalid_space(plan: Plan, door) -> bool:
    polygons = np.array([s.polygon for s in plan.spaces], dtype=object)
    if len(polygons) == 0:
        return False
    broken = polygons[~shapely.is_valid(polygons)]
    if len(broken) == 0:
        return False
    # An invalid ring's shape is not to be trusted; its convex hull bounds where it was meant to be.
    hulls = shapely.convex_hull(broken)
    return bool(shapely.dwithin(hulls, door, OPENING_CONTACT_TOLERANCE).any())
