"""Smoke sensors (NFPA 72).

Smoke sensors go on the ceiling, at least ``min_wall_distance`` (0.1 m) from walls and at
least the ``smoke_sensor_cooking_distance`` rule's ``min_distance`` (3.0 m, horizontal, to
the nearest point of the footprint) from every cooking appliance, per the catalog
(homeloop/catalog/devices.yaml, docs/catalog.md), whose numbers are the only ones used.
Positions come from a grid of ceiling points, nearest the room's centre
(:mod:`homeloop.pipeline.devices.smoke_search`).

- The room with the range gets one; where the kitchen has no such place, in an adjoining
  dining room, hall or living room its smoke reaches with every door shut (through an
  open passage: homeloop.sim.dynamics.smoke.rooms_reached), near where smoke comes
  through; else at the rule's ``fallback_distance`` (1.8 m) in the kitchen, recorded in
  the home's ``placement_exceptions``; else, last, in such a room behind a door, which is
  marked open.
- One in every bedroom, one outside each sleeping area, one in each room of a type the
  catalog lists (corridors, living rooms).
- A rule no room can meet is one failure line naming the rule and its catalog file.
"""

from __future__ import annotations

import math

from homeloop.core import navigation
from homeloop.core.check import SMOKE_SENSOR, opening_face_point, sleeping_area_exits
from homeloop.core.home import Device, PlacementException, Pose
from homeloop.core.plan import BEDROOM_SUBTYPES
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.mounting import Point2
from homeloop.pipeline.devices.registry import step
from homeloop.pipeline.devices.smoke_search import (
    cooking,
    pick_farthest_smoke_point,
    pick_smoke_point,
    smoke_candidates,
    smoke_rule,
)
from homeloop.sim.dynamics.smoke import rooms_reached

#: Rooms next to a kitchen that may hold the kitchen's smoke sensor (reached through a door or passage).
KITCHEN_SENSOR_NEIGHBOURS = ("DINING", "CORRIDOR", "LIVING_ROOM", "LIVING_DINING", "KITCHEN_DINING")
#: Exit rooms of a sleeping area, in order of preference for its smoke sensor.
EXIT_PREFERENCE = ("CORRIDOR", "LIVING_ROOM", "LIVING_DINING", "DINING", "KITCHEN_DINING", "KITCHEN")
#: A new smoke sensor this close (m) to one already in the room is not added; the existing one serves.
SMOKE_REUSE_DISTANCE = 1.5


@step("smoke_sensors", "Smoke sensors for the kitchen, each bedroom, each sleeping area and the listed rooms "
                       "(NFPA 72).")
def smoke_sensors(ctx: EquipContext) -> None:
    SmokeSensors(ctx).place()


class SmokeSensors:
    """Placing one home's smoke sensors; rooms where the distance rule leaves no place are
    gathered into one failure line."""

    def __init__(self, ctx: EquipContext) -> None:
        self.ctx = ctx
        self.rule = smoke_rule(ctx)
        #: Rooms where the smoke distance rule left no place, by rule id.
        self.unmet: dict[str, list[str]] = {}

    def place(self) -> None:
        ctx = self.ctx
        for rid in dict.fromkeys(f.room for f in cooking(ctx).appliances):
            self.kitchen(rid)
        for r in ctx.home.rooms:
            if r.type in BEDROOM_SUBTYPES:
                self.room(r.id, required=True, why="a bedroom")
        for bedroom, exits in sleeping_area_exits(ctx.home, ctx.adjacency).items():
            self.sleeping_area(bedroom, exits)
        listed = set(ctx.entry(SMOKE_SENSOR).placement.rooms)
        for r in ctx.home.rooms:
            served = any(r.id in d.monitors for d in ctx.devices if d.type == SMOKE_SENSOR)
            if r.type in listed and r.indoor and not self.sensors_in(r.id) and not served:
                self.room(r.id, required=False, why=f"a {r.type.lower()}")
        # The rule's line heads the failures.
        ctx.failures[:0] = self.unmet_rule_failures()

    def sensors_in(self, rid: str) -> list[Device]:
        return [d for d in self.ctx.devices if d.type == SMOKE_SENSOR and d.room == rid]

    def put(self, rid: str, point: Point2, *, serves: list[str], reason: str,
            fallback_at: float | None = None) -> Device:
        """A smoke sensor at ``point`` serving ``serves``; placed with the rule's fallback distance
        when ``fallback_at`` (its distance from the range) is given."""
        ctx, rule = self.ctx, self.rule
        exception = fallback_at is not None
        excepted = {e.device for e in ctx.exceptions}
        for existing in self.sensors_in(rid):
            # A sensor nearby serves too, unless it was placed with the exception and this one need not be.
            if math.hypot(existing.pose.x - point[0], existing.pose.y - point[1]) < SMOKE_REUSE_DISTANCE and (
                    exception or existing.id not in excepted):
                merged = sorted(set(existing.monitors) | set(serves))
                ctx.devices[ctx.devices.index(existing)] = existing.model_copy(update={"monitors": merged})
                return existing
        device = ctx.add(SMOKE_SENSOR, rid, Pose(x=point[0], y=point[1], z=ctx.ceiling(rid)),
                         monitors=sorted(set(serves)))
        if fallback_at is not None:
            ctx.exceptions.append(PlacementException(device=device.id, rule=rule.id, value=fallback_at,
                                                     required=rule.min_distance, fallback=rule.fallback))
            ctx.notes.append(f"smoke sensor {device.id} in room {rid} placed with the {rule.fallback} m "
                             f"fallback of rule {rule.id} ({fallback_at:.2f} m from the range): {reason}")
        return device

    def door_towards(self, rid: str, other: str) -> tuple[Point2, str | None]:
        """Where smoke passes from ``other`` into ``rid``: a door's point in ``rid`` and the
        door, else the middle of the open passage between them (and None)."""
        ctx = self.ctx
        for o in ctx.home.openings:
            if o.kind in navigation.PASSABLE_KINDS and set(o.connects) == {rid, other}:
                return opening_face_point(ctx.home, o, rid, 0.5), o.id
        shared = ctx.polys[rid].buffer(0.06).intersection(ctx.polys[other].buffer(0.06))
        c = shared.centroid if not shared.is_empty else ctx.polys[rid].centroid
        return (c.x, c.y), None

    def sleeping_area(self, bedroom: str, exits: list[str]) -> None:
        """One smoke sensor just outside the sleeping area of ``bedroom``, by exit preference."""
        ctx = self.ctx
        if not exits:
            ctx.notes.append(f"bedroom {bedroom} has no indoor room outside its sleeping area")
            return
        if any(self.sensors_in(e) for e in exits):
            return
        ranked = sorted(exits, key=lambda e: (EXIT_PREFERENCE.index(ctx.rooms[e].type)
                                              if ctx.rooms[e].type in EXIT_PREFERENCE else 99, e))
        why = f"outside the sleeping area of {bedroom}"
        for allow_exception in (False, True):
            if any(self.room(e, required=False, why=why, allow_exception=allow_exception) for e in ranked):
                return
        if all(self.rule_blocks(e) for e in ranked):  # the distance rule left no place: its line says so
            for e in ranked:
                self.rule_unmet(e)
        else:
            ctx.failures.append(f"no place for a smoke sensor outside the sleeping area of bedroom {bedroom}")

    def room(self, rid: str, *, required: bool, why: str, allow_exception: bool = True) -> Device | None:
        """The room's smoke sensor: nearest its centre at the rule's distance, else (where allowed)
        at the fallback distance with the exception recorded."""
        ctx, rule = self.ctx, self.rule
        if self.sensors_in(rid):
            return self.sensors_in(rid)[0]
        spot = pick_smoke_point(ctx, rid, rule.min_distance)
        if spot is not None:
            return self.put(rid, spot, serves=[rid], reason=why)
        if not allow_exception:
            return None
        hit = pick_farthest_smoke_point(ctx, rid, rule.fallback)
        if hit is not None:
            return self.put(rid, hit[0], serves=[rid], fallback_at=hit[1],
                            reason=f"{why}: no ceiling point {rule.min_distance} m from the range")
        if required and self.rule_blocks(rid):
            self.rule_unmet(rid)
        else:
            (ctx.failures if required else ctx.notes).append(f"no place for a smoke sensor in room {rid} ({why})")
        return None

    def rule_blocks(self, rid: str) -> bool:
        """Whether the room has ceiling for a smoke sensor, all of it too near the range."""
        return len(smoke_candidates(self.ctx, rid)) > 0

    def rule_unmet(self, rid: str) -> None:
        rooms = self.unmet.setdefault(self.rule.id, [])
        if rid not in rooms:
            rooms.append(rid)

    def kitchen(self, rid: str) -> None:
        """The smoke sensor of the room with the range: in it; else in a room its smoke reaches
        with every door shut (an open passage away); else in it at the fallback distance, with the
        exception; else, last, next door behind a door (marked open)."""
        ctx, rule = self.ctx, self.rule
        serves = [rid] + [f.id for f in cooking(ctx).appliances if f.room == rid]
        spot = pick_smoke_point(ctx, rid, rule.min_distance)
        if spot is not None:
            self.put(rid, spot, serves=serves, reason="the kitchen")
            return
        reached = rooms_reached(ctx.home, rid)
        if self.kitchen_next_door(rid, serves, within=reached):
            return
        hit = pick_farthest_smoke_point(ctx, rid, rule.fallback)
        if hit is not None:
            self.put(rid, hit[0], serves=serves, fallback_at=hit[1],
                     reason=f"the kitchen has no place {rule.min_distance} m from the range and no "
                            "room its smoke reaches through an open passage has one")
            return
        if self.kitchen_next_door(rid, serves, within=None):
            return
        self.rule_unmet(rid)

    def kitchen_next_door(self, rid: str, serves: list[str], within: set[str] | None) -> bool:
        """The kitchen's smoke sensor in an adjoining room (one of ``within``, the rooms its smoke
        reaches, where given; else any, behind a door marked open), near where smoke comes through."""
        ctx, rule = self.ctx, self.rule
        neighbours = [n for n in ctx.adjacency.get(rid, [])
                      if ctx.rooms[n].indoor and ctx.rooms[n].type in KITCHEN_SENSOR_NEIGHBOURS
                      and (within is None or n in within)]
        best = None
        for n in neighbours:
            door, door_id = self.door_towards(n, rid)
            got = pick_smoke_point(ctx, n, rule.min_distance, towards=door)
            if got is not None:
                gap = math.hypot(got[0] - door[0], got[1] - door[1])
                if best is None or gap < best[0] - 1e-9:
                    best = (gap, n, got, door_id)
        if best is None:
            return False
        _, n, got, door_id = best
        self.put(n, got, serves=serves, reason=f"next to kitchen {rid}")
        ctx.notes.append(f"kitchen {rid} has no ceiling point {rule.min_distance} m from the range; "
                         f"its smoke sensor is in room {n}, by the way smoke comes through")
        if door_id is not None and within is None:
            # A room the smoke does not reach (the rooms it reaches were tried first, with no spot
            # found): smoke spreads through open doors only, so the kitchen door stands open.
            ctx.open_doors.add(door_id)
            ctx.notes.append(f"door {door_id} between kitchen {rid} and room {n} is marked open so smoke "
                             "from the range reaches the kitchen's smoke sensor")
        return True

    def unmet_rule_failures(self) -> list[str]:
        """One line for the smoke distance rule if rooms that need a sensor could not
        meet it, naming the catalog file that sets it."""
        rule = self.rule
        rooms = self.unmet.get(rule.id)
        if not rooms:
            return []
        where = self.ctx.catalog.source_of("devices", SMOKE_SENSOR)
        return [f"rule {rule.id} cannot be met in rooms {', '.join(rooms)}: no ceiling point lies "
                f"{rule.min_distance} m (fallback {rule.fallback} m) from the cooking appliance; the distances "
                f"are set in {where} (devices entry {SMOKE_SENSOR!r}, placement.keep_away)"]
