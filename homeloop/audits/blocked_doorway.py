"""Rule ``blocked_doorway``: a door too narrow, or with something in front of it.

Each DOOR and ENTRANCE_DOOR needs a clear passage on every face that opens
into the plan: the door width × :data:`~homeloop.audits.thresholds.DOOR_CLEAR_DEPTH`
(0.8 m) rectangle extending perpendicular from the face. The door rectangle's
long side runs along the wall, its short side through it. The outer face of
an entrance door (over no space of the plan) is not checked.

The passage is obstructed when a WALL or COLUMN, a feature, or another
opening's rectangle overlaps it by more than
:data:`~homeloop.audits.thresholds.DOOR_OBSTRUCTION_MIN_AREA` (0.01 m²). The zone is
shrunk by :data:`~homeloop.audits.thresholds.DOOR_ZONE_SIDE_INSET` (2 cm) at its sides
and starts :data:`~homeloop.audits.thresholds.DOOR_ZONE_FACE_GAP` (5 cm) from the face,
so jambs flush with the door and the door's own wall do not count.

A door is also blocked when narrower than
:data:`~homeloop.audits.thresholds.MIN_DOOR_WIDTH` (0.7 m; interior doors) or
:data:`~homeloop.audits.thresholds.MIN_ENTRANCE_DOOR_WIDTH` (0.8 m; entrance doors)
by more than :data:`~homeloop.audits.thresholds.TOLERANCE_M` (1 mm): a door drawn
from x 5.15 to 5.95 is 0.80 m wide, whatever the last bit of its float says.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import shapely

from homeloop.core.plan import ENTRANCE_DOOR, Plan

from homeloop.audits.findings import Finding
from homeloop.audits.geometry import describe_door, plan_geometry
from homeloop.audits.registry import rule
from homeloop.audits.thresholds import (
    DOOR_CLEAR_DEPTH,
    DOOR_OBSTRUCTION_MIN_AREA,
    MIN_DOOR_WIDTH,
    MIN_ENTRANCE_DOOR_WIDTH,
    TOLERANCE_M2,
    above,
    below,
)

RULE_ID = "blocked_doorway"


@rule(
    RULE_ID,
    description=(
        f"A door or entrance door is narrower than {MIN_DOOR_WIDTH} m (entrance "
        f"{MIN_ENTRANCE_DOOR_WIDTH} m), or a wall, column, feature or other opening "
        f"stands within {DOOR_CLEAR_DEPTH} m of a face that opens into the plan."
    ),
)
def blocked_doorway(plan: Plan) -> Iterator[Finding]:
    geo = plan_geometry(plan)
    widths = geo.opening_widths
    obstructions = _obstructions(plan)
    for i in geo.passage_index:
        o = plan.openings[i]
        width = float(widths[i])
        door = describe_door(plan, o.id, o.kind, width, o.connects)
        minimum = MIN_ENTRANCE_DOOR_WIDTH if o.kind == ENTRANCE_DOOR else MIN_DOOR_WIDTH
        if below(width, minimum):
            kind = "entrance doors" if o.kind == ENTRANCE_DOOR else "doors"
            yield Finding(
                RULE_ID,
                plan.key,
                (o.id,),
                f"{door} is narrower than the {minimum:.2f} m {kind} need: widen it",
            )
        blockers = obstructions.get(int(i), [])
        if blockers:
            ids = tuple(dict.fromkeys(b_id for b_id, _ in blockers))
            names = ", ".join(dict.fromkeys(name for _, name in blockers))
            yield Finding(
                RULE_ID,
                plan.key,
                (o.id,) + ids,
                f"{door}: its clear zone is blocked by {names} within "
                f"{DOOR_CLEAR_DEPTH} m of the door face",
            )


def _obstructions(plan: Plan) -> dict[int, list[tuple[str, str]]]:
    """For each door (index into plan.openings), the (id, name) of what blocks it."""
    geo = plan_geometry(plan)
    zones = geo.door_zones
    if not zones:
        return {}
    zone_polys = np.array([z.polygon for z in zones], dtype=object)
    owners = np.array([z.opening for z in zones])
    # Obstacles: walls and columns, features, openings (one array, with names).
    obstacles = np.concatenate([geo.blocking, geo.features, geo.openings])
    kinds = (
        [("blocking", j) for j in range(len(geo.blocking))]
        + [("feature", j) for j in range(len(geo.features))]
        + [("opening", j) for j in range(len(geo.openings))]
    )
    if len(obstacles) == 0:
        return {}
    tree = shapely.STRtree(obstacles)
    zi, oi = tree.query(zone_polys, predicate="intersects")
    if len(zi) == 0:
        return {}
    # A door does not block itself.
    own = np.array([kinds[k] == ("opening", owners[z]) for z, k in zip(zi, oi)], dtype=bool)
    zi, oi = zi[~own], oi[~own]
    areas = shapely.area(shapely.intersection(zone_polys[zi], obstacles[oi]))
    found: dict[int, list[tuple[str, str]]] = {}
    for z, k, a in zip(zi, oi, areas):
        if not above(a, DOOR_OBSTRUCTION_MIN_AREA, TOLERANCE_M2):
            continue
        kind, j = kinds[k]
        if kind == "blocking":
            element = plan.separators[int(geo.blocking_index[j])].id
            name = geo.blocking_name(j)
        elif kind == "feature":
            element = plan.features[j].id
            name = geo.feature_name(j)
        else:
            element = plan.openings[j].id
            name = geo.opening_name(j)
        found.setdefault(int(owners[z]), []).append((element, name))
    for blockers in found.values():
        blockers.sort()
    return found
