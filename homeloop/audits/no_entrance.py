"""Rule ``no_entrance``: the unit has no ENTRANCE_DOOR.

Without an entrance the home cannot be entered, and reachability cannot be
judged. No threshold.
"""

from __future__ import annotations

from typing import Iterator

from homeloop.core.plan import Plan

from homeloop.audits.findings import Finding
from homeloop.audits.registry import rule

RULE_ID = "no_entrance"


@rule(RULE_ID, description="The unit has no ENTRANCE_DOOR opening.")
def no_entrance(plan: Plan) -> Iterator[Finding]:
    if plan.entrance_doors:
        return
    yield Finding(
        RULE_ID,
        plan.key,
        (),
        f"the unit has no ENTRANCE_DOOR among its {len(plan.openings)} openings: "
        "mark the door from the landing or street as ENTRANCE_DOOR",
    )
