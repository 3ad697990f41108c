"""The services an agent reaches, one module each (docs/skills.md).

Importing this package declares every skill (each service module declares
its own with :func:`homeloop.sim.skills.skill`); :func:`available` lists the
skills an episode offers and :func:`cost_table` is the table of docs/skills.md,
which ``python -m homeloop.sim.services`` rewrites.
"""

from __future__ import annotations

from typing import Iterable

from homeloop.sim.services import cameras, clock, hub, messaging, perception, robot_skills, wearables  # noqa: F401
from homeloop.sim.services import control as control_skills
from homeloop.sim.skills import REGISTRY, SERVICES, Skill


def declared() -> dict[str, Skill]:
    """Every declared skill by tool name (the service modules above declared them on import)."""
    return REGISTRY


def available(withheld: Iterable[str] = (), *, control: bool = False) -> list[Skill]:
    """The skills an agent gets with ``withheld`` services removed, in service order; the home-control
    skills (:data:`homeloop.sim.services.control.CONTROL_SKILLS`) only with ``control``."""
    gone = set(withheld)
    unknown = gone - set(SERVICES)
    if unknown:
        raise ValueError(f"unknown service(s) {', '.join(sorted(unknown))}; services: {', '.join(SERVICES)}")
    offered = (s for s in REGISTRY.values()
               if s.service not in gone and (control or s.function not in control_skills.CONTROL_SKILLS))
    return sorted(offered, key=lambda s: SERVICES.index(s.service))


def cost_table() -> str:
    """The Markdown table of services, skills, units and seconds (docs/skills.md)."""
    rows = ["| service | tool | units | seconds | what it does |", "|---|---|---|---|---|"]
    for s in available(control=True):
        rows.append(f"| {s.service} | `{s.tool_name}` | {s.cost_text()} | {s.seconds_text()} | {s.summary} |")
    return "\n".join(rows)


#: The markers docs/skills.md keeps :func:`cost_table` between.
COST_TABLE_MARKERS = ("<!-- skills-table:start -->", "<!-- skills-table:end -->")


def with_cost_table(page: str) -> str:
    """``page`` (the text of docs/skills.md) with the table between its markers made :func:`cost_table`."""
    start, end = COST_TABLE_MARKERS
    if page.count(start) != 1 or page.count(end) != 1 or page.index(start) > page.index(end):
        raise ValueError(f"the page needs one {start} followed by one {end}")
    head, rest = page.split(start)
    tail = rest.split(end)[1]
    return f"{head}{start}\n{cost_table()}\n{end}{tail}"
