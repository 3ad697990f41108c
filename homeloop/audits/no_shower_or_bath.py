"""Rule ``no_shower_or_bath``: the unit has no SHOWER and no BATHTUB feature.

A home needs somewhere to wash (docs/pipeline.md, the audit). The
rule looks only at features drawn in the plan; it has no threshold.
"""

from __future__ import annotations

from typing import Iterator

from homeloop.core.plan import Plan

from homeloop.audits.findings import Finding
from homeloop.audits.registry import rule

RULE_ID = "no_shower_or_bath"
#: Feature subtypes a person washes in.
WASHING_FEATURES = frozenset({"SHOWER", "BATHTUB"})


@rule(RULE_ID, description="The unit has no SHOWER or BATHTUB feature.")
def no_shower_or_bath(plan: Plan) -> Iterator[Finding]:
    if any(f.kind in WASHING_FEATURES for f in plan.features):
        return
    bathrooms = tuple(s.id for s in plan.spaces if s.subtype == "BATHROOM")
    where = (
        "; its bathrooms (" + ", ".join(f"BATHROOM {b}" for b in bathrooms) + ") hold neither"
        if bathrooms
        else " and it has no BATHROOM space"
    )
    yield Finding(
        RULE_ID,
        plan.key,
        bathrooms,
        f"the unit has no SHOWER or BATHTUB feature{where}: add one or drop the plan",
    )
