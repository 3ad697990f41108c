"""What stands in a moving body's way: people and objects on the floor (as discs), and doors it
cannot pass now (locked, motorised, or closed for a body that does not open doors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from homeloop.core.navigation import PASSABLE_KINDS
from homeloop.sim.robot.floor import room_name
from homeloop.sim.robot.objects import object_label, object_size
from homeloop.sim.world import World

#: Extra clearance (m) kept from people and objects on the floor when planning around them.
OBSTACLE_MARGIN = 0.05


@dataclass(frozen=True)
class Obstacle:
    """A disc on the floor a body must keep clear of: a person, an object lying on the floor."""

    x: float
    y: float
    radius: float
    label: str

    def clearance(self, width: float) -> float:
        """How far the centre of a body ``width`` wide keeps from the disc's centre."""
        return self.radius + width / 2 + OBSTACLE_MARGIN


def people_obstacles(world: World, exclude: Iterable[str] = ()) -> list[Obstacle]:
    """People at home as discs of their shoulder width."""
    skip = set(exclude)
    out = []
    for p in world.people.values():
        if p.room is None or p.id in skip:
            continue
        entry = world.catalog.people.get(p.catalog_id)
        width = entry.shoulder_width if entry is not None else 0.45
        out.append(Obstacle(p.x, p.y, width / 2, f"{p.name} ({p.id})"))
    return out


def floor_object_obstacles(world: World, exclude: Iterable[str] = ()) -> list[Obstacle]:
    """Objects lying on the floor as discs around their footprint."""
    skip = set(exclude)
    out = []
    for o in world.objects.values():
        if o.placement.kind != "floor" or o.id in skip:
            continue
        w, d = object_size(world, o)[:2]
        out.append(Obstacle(o.x, o.y, math.hypot(w, d) / 2, f"the {object_label(world, o)} ({o.id})"))
    return out


def obstacles(world: World, exclude: Iterable[str] = ()) -> list[Obstacle]:
    """Everything a robot plans around: people and objects on the floor (but those in ``exclude``)."""
    skip = list(exclude)
    return people_obstacles(world, skip) + floor_object_obstacles(world, skip)


def door_words(world: World, opening_id: str) -> str:
    """'the entrance door o7 (corridor – porch)': an opening as messages name it."""
    o = world.home.opening(opening_id)
    rooms = " – ".join(room_name(world.home, r).split(" (")[0].removeprefix("the ") for r in o.connects)
    return f"the {o.kind.replace('_', ' ')} {o.id} ({rooms})"


def closed_off(world: World, *, through_closed_doors: bool = True) -> frozenset[str]:
    """Passable openings a body cannot pass now: locked doors, closed garage doors, and every
    closed door for a body that does not open doors."""
    out = set()
    for o in world.home.openings:
        if o.kind not in PASSABLE_KINDS:
            continue
        state = world.openings.get(o.id)
        if state is None or state.open:
            continue
        if state.locked or o.kind == "garage_door" or not o.openable or not through_closed_doors:
            out.add(o.id)
    return frozenset(out)


def why_closed(world: World, opening_id: str) -> str:
    state = world.openings[opening_id]
    if state.locked:
        return "which is locked"
    if world.home.opening(opening_id).kind == "garage_door":
        return "which is closed (a motorised door, opened through the hub)"
    return "which is closed"
