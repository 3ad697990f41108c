"""Rule ``no_kitchen``: no KITCHEN / KITCHEN_DINING space and no KITCHEN feature.

An open kitchen is drawn as a KITCHEN feature (the counter block) inside a
living or dining space, so either one counts. Note that KITCHEN is both an
area and a feature subtype (docs/pipeline.md); both are looked at with their entity
type. No threshold.
"""

from __future__ import annotations

from typing import Iterator

from homeloop.core.plan import KITCHEN_SUBTYPES, Plan

from homeloop.audits.findings import Finding
from homeloop.audits.registry import rule

RULE_ID = "no_kitchen"
#: The feature subtype of a kitchen counter block.
KITCHEN_FEATURE = "KITCHEN"


@rule(RULE_ID, description="The unit has no KITCHEN or KITCHEN_DINING space and no KITCHEN feature.")
def no_kitchen(plan: Plan) -> Iterator[Finding]:
    if any(s.subtype in KITCHEN_SUBTYPES for s in plan.spaces):
        return
    if any(f.kind == KITCHEN_FEATURE for f in plan.features):
        return
    yield Finding(
        RULE_ID,
        plan.key,
        (),
        "the unit has no KITCHEN or KITCHEN_DINING space and no KITCHEN counter feature: "
        "it cannot be cooked in",
    )
