"""Rule ``duplicate_element``: the same element drawn twice.

Two elements of the same kind (two DOORs, two WALLs, two SINKs, two BATHROOM
areas ...) whose polygons are the same within
:data:`~homeloop.audits.thresholds.TOLERANCE_M` (1 mm: the Hausdorff distance
between them) are one element drawn twice, as when a file's rows are written
twice. Doubled doors and walls pass every other rule, yet count twice in the
plan's figures and its room–door graph (docs/pipeline.md). Candidate pairs come
from an STRtree and equal bounds; each later copy is reported once, against
the first drawing of it.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import shapely

from homeloop.core.plan import AREA, FEATURE, OPENING, SEPARATOR, Plan

from homeloop.audits.findings import Finding
from homeloop.audits.geometry import element_name
from homeloop.audits.registry import rule
from homeloop.audits.thresholds import TOLERANCE_M, above

RULE_ID = "duplicate_element"


@rule(
    RULE_ID,
    description=f"Two elements of the same kind have the same geometry (within {TOLERANCE_M * 1000:g} mm).",
)
def duplicate_element(plan: Plan) -> Iterator[Finding]:
    elements = _elements(plan)
    if len(elements) < 2:
        return
    geoms = np.array([g for _, _, _, g in elements], dtype=object)
    drawn = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    kinds = np.array([f"{entity}:{kind}" for entity, kind, _, _ in elements], dtype=object)
    first: dict[int, int] = {}
    for i, j in _same_geometry_pairs(geoms, np.flatnonzero(drawn)):
        if kinds[i] == kinds[j]:
            first.setdefault(j, i)
    for j in sorted(first):
        i = first[j]
        entity, kind, original, _ = elements[i]
        copy = elements[j][2]
        name = f"{kind} area {copy}" if entity == AREA else element_name(kind, copy)
        yield Finding(
            RULE_ID,
            plan.key,
            (original, copy),
            f"{name} is drawn again on top of {original} (the same polygon within "
            f"{TOLERANCE_M * 1000:g} mm): delete the copy",
        )


def _elements(plan: Plan) -> list[tuple[str, str, str, object]]:
    """(entity type, kind, id, polygon) of every element, in plan order."""
    return (
        [(AREA, s.subtype, s.id, s.polygon) for s in plan.spaces]
        + [(SEPARATOR, e.kind, e.id, e.polygon) for e in plan.separators]
        + [(OPENING, e.kind, e.id, e.polygon) for e in plan.openings]
        + [(FEATURE, e.kind, e.id, e.polygon) for e in plan.features]
    )


def _same_geometry_pairs(geoms: np.ndarray, candidates: np.ndarray) -> list[tuple[int, int]]:
    """Index pairs (i < j) among ``candidates`` whose polygons are the same within the tolerance."""
    if len(candidates) < 2:
        return []
    shapes = geoms[candidates]
    a, b = shapely.STRtree(shapes).query(shapes, predicate="intersects")
    upper = a < b
    a, b = a[upper], b[upper]
    bounds = shapely.bounds(shapes)
    close = ~above(np.abs(bounds[a] - bounds[b]).max(axis=1), 0.0)
    a, b = a[close], b[close]
    same = ~above(shapely.hausdorff_distance(shapes[a], shapes[b]), 0.0)
    pairs = zip(candidates[a[same]].tolist(), candidates[b[same]].tolist())
    return sorted(pairs)
