"""Rule ``unreachable_space``: an indoor space nobody can walk to from the entrance.

Reachability follows the room–door graph (:meth:`Plan.reachable_from_entrance`):
doors, and open passages where two spaces touch with no wall between them over
at least 0.6 m (``OPEN_PASSAGE_MIN_LENGTH`` in :mod:`homeloop.core.plan`). Only
indoor spaces are required to be reachable. A plan without an entrance (or
whose entrance opens into no space) is skipped: ``no_entrance`` and
``door_not_connecting`` report it. Spaces with invalid geometry are left to
``invalid_geometry``.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import shapely

from homeloop.core.plan import Plan

from homeloop.audits.findings import Finding
from homeloop.audits.registry import rule

RULE_ID = "unreachable_space"


@rule(RULE_ID, description="An indoor space cannot be reached from the entrance by doors or open passages.")
def unreachable_space(plan: Plan) -> Iterator[Finding]:
    if not plan.entrance_space_ids():
        return
    indoor = plan.indoor_spaces
    if not indoor:
        return
    valid = shapely.is_valid(np.array([s.polygon for s in indoor], dtype=object))
    reached = plan.reachable_from_entrance()
    for space, ok in zip(indoor, valid):
        if not ok or space.id in reached:
            continue
        doors = [o.id for o in plan.openings if o.is_passage and space.id in o.connects]
        how = (
            f"its doors ({', '.join(doors)}) lead only to other unreachable spaces"
            if doors
            else "no door or open passage leads into it"
        )
        yield Finding(
            RULE_ID,
            plan.key,
            (space.id,),
            f"{space.subtype} {space.id} ({space.area:.1f} m²) cannot be reached from the entrance: "
            f"{how}",
        )
