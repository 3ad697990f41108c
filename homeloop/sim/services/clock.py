"""The clock: let simulated time pass (docs/skills.md, docs/episodes.md).

The world stands still while the agent thinks; ``clock_wait`` is how an
agent lets it run (to see whether a hazard grows, to give a person time to
answer). It costs nothing but the time, and never runs past the horizon.
"""

from __future__ import annotations

from typing import Any

from homeloop.sim.context import SkillContext
from homeloop.sim.skills import SkillError, skill


@skill("clock", units=0, seconds=None, seconds_note="as asked")
def wait(ctx: SkillContext, seconds: float) -> dict[str, Any]:
    """Let time pass; returns the time now and the events that came meanwhile.

    seconds: how long to wait (more than 0); a wait past the episode's end stops there.
    """
    if not seconds > 0:
        raise SkillError(f"seconds must be more than 0, got {seconds!r}")
    world, start, first = ctx.world, ctx.now(), len(ctx.world.events)
    ctx.advance(seconds)
    came = [ctx.event_dict(e) for e in world.events[first:]]
    return {"t": ctx.now(), "waited_s": round(ctx.now() - start, 6), "events": came}
