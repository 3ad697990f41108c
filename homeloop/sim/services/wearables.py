"""Wearables: the residents' fall-detecting watches and help pendants (docs/skills.md).

A worn device reports what the people module keeps as its wearer's ground
truth (worn, the heart rate, a fall, a press of the pendant), faults
included: what a real watch would, so a fall and a misfiring fall detection
read alike (docs/dynamics.md).
"""

from __future__ import annotations

from typing import Any

from homeloop.sim.context import SkillContext
from homeloop.sim.services.hub import agent_readings
from homeloop.sim.skills import skill
from homeloop.sim.world import PersonState


def wearer_of(ctx: SkillContext, device_id: str) -> PersonState | None:
    """The person wearing ``device_id``, if the scenario put it on someone."""
    return next((p for p in ctx.world.people.values() if device_id in p.wears), None)


@skill("wearables", units=1, seconds=0.1)
def list_wearables(ctx: SkillContext) -> dict[str, Any]:
    """List the wearables: id, type, who wears it, and its present readings (worn, the heart rate, a fall; a press of a pendant)."""
    listed = []
    for entry in ctx.world.home.devices:
        if entry.category != "wearable" or not entry.agent_visible:
            continue
        wearer = wearer_of(ctx, entry.id)
        listed.append({"id": entry.id, "type": entry.type, "name": entry.name,
                       "wearer": None if wearer is None else wearer.name,
                       "readings": agent_readings(ctx, entry)})
    return {"wearables": listed, "t": ctx.now()}
