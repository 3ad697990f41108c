"""Every threshold the audit rules use, in one place.

All lengths are metres, areas square metres, in the plan's frame.

============================  =============  ==============================================
constant                      value          meaning (source / rationale)
============================  =============  ==============================================
DOOR_CLEAR_DEPTH              0.8 m          free floor in front of each face of a door
                                             (SIA 500: a 0.8 m deep manoeuvring zone);
                                             defined in homeloop.core.plan
MIN_DOOR_WIDTH                0.7 m          narrowest interior door (SIA 500 / accessible
                                             housing: 0.8 m clear; 0.7 m tolerated for
                                             older interior doors)
MIN_ENTRANCE_DOOR_WIDTH       0.8 m          narrowest entrance door (SIA 500)
DOOR_ZONE_SIDE_INSET          0.02 m         clear zone shrunk at its sides so flush jambs
                                             and corner walls do not count as obstacles;
                                             this and the next three are defined in
                                             homeloop.core.geometry with the clear zone itself
DOOR_ZONE_FACE_GAP            0.05 m         clear zone starts this far from the door face so
                                             the door's own wall (drawn a little thicker or
                                             overlapping the door) does not count
DOOR_OBSTRUCTION_MIN_AREA     0.01 m²        overlap of an obstacle with a clear zone that
                                             counts as an obstruction (a 10 × 10 cm corner)
DOOR_FACE_INSIDE_FRACTION     0.5            share of a face's clear zone over the plan's
                                             spaces for that face to be checked (the outer
                                             face of an entrance door is not the plan's)
FRIDGE_FOOTPRINT              catalog        width along the wall × depth of the catalog's
                                             fridge (homeloop/catalog/furniture.yaml, 0.60 × 0.65 m:
                                             EN 60/65 cm kitchen module); read when asked
FRIDGE_FRONT_CLEARANCE        catalog        the fridge's clearance_front (1.0 m: door swing
                                             plus standing room); read when asked
FRIDGE_SEARCH_STEP            0.1 m          spacing of candidate fridge positions along a wall
FRIDGE_WALL_TOLERANCE         0.02 m         a candidate may sit this far outside its space
                                             (digitising noise) and shrinks by it before
                                             testing overlaps (touching is not overlapping)
FRIDGE_WALL_PROBE_DEPTH       0.05 m         depth behind the wall line searched for a window
                                             or door in the fridge's wall (the contact
                                             tolerance of homeloop.core.plan)
WALL_SIMPLIFY_TOLERANCE       0.01 m         vertices closer than this to a straight wall are
                                             dropped, so a wall split by a joint counts whole
SPACE_OVERLAP_MIN_AREA        0.05 m²        two spaces overlapping by more are a drawing error
                                             (digitised edges overlap by a few cm²)
FEATURE_AREA_TOLERANCE        0.10 m         how far a feature may reach beyond the area it
                                             names (fixtures are drawn against walls and
                                             overlap them by a few cm; the thinnest
                                             partitions are ~0.10 m, so further out is
                                             another space or outside the plan)
TOLERANCE_M                   0.001 m        a measure within 1 mm of its threshold meets it:
                                             every threshold comparison goes through
                                             below() / above(), so floating-point noise
                                             (5.95 - 5.15 = 0.7999999999999998) never
                                             decides a rule; also how close two drawings of
                                             an element are to count as the same geometry
TOLERANCE_M2                  1 mm²          the same tolerance for areas (a 1 mm square)
============================  =============  ==============================================
"""

from __future__ import annotations

from homeloop.core.geometry import (  # noqa: F401  (re-exported for the rules)
    DOOR_CLEAR_DEPTH,
    DOOR_FACE_INSIDE_FRACTION,
    DOOR_OBSTRUCTION_MIN_AREA,
    DOOR_ZONE_FACE_GAP,
    DOOR_ZONE_SIDE_INSET,
)

# --- doors -------------------------------------------------------------------------

#: DOOR_CLEAR_DEPTH (0.8 m in front of each face of a door, SIA 500 manoeuvring
#: zone) is defined with the plan model, and the shape of the clear zone
#: (DOOR_ZONE_SIDE_INSET, DOOR_ZONE_FACE_GAP, DOOR_OBSTRUCTION_MIN_AREA,
#: DOOR_FACE_INSIDE_FRACTION) with homeloop.core.geometry, which the audit,
#: furnishing and the home check share.
#: Narrowest interior door (m): SIA 500 asks 0.8 m clear; 0.7 m is tolerated for interior doors.
MIN_DOOR_WIDTH = 0.7
#: Narrowest entrance door (m): SIA 500 / accessible housing.
MIN_ENTRANCE_DOOR_WIDTH = 0.8

# --- the fridge --------------------------------------------------------------------

# The fridge's footprint and front clearance are the catalog's fridge entry
# (homeloop/catalog/furniture.yaml): the audit, the generator, furnishing and the home
# check share that one definition. FRIDGE_FOOTPRINT and FRIDGE_FRONT_CLEARANCE
# read it when asked, so a catalog given by HOMELOOP_CATALOG is honoured.


def fridge_size() -> tuple[float, float, float]:
    """Width along the wall, depth and front clearance (m) of the catalog's fridge."""
    from homeloop.core.catalog import load_catalog

    fridge = load_catalog().fridge
    return fridge.dimensions.width, fridge.dimensions.depth, fridge.clearance_front


def __getattr__(name: str) -> object:
    if name == "FRIDGE_FOOTPRINT":
        return fridge_size()[:2]
    if name == "FRIDGE_FRONT_CLEARANCE":
        return fridge_size()[2]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Spacing (m) of the candidate fridge positions searched along each wall.
FRIDGE_SEARCH_STEP = 0.1
#: Tolerance (m): digitising noise at the wall; candidates shrink by it before overlap tests.
FRIDGE_WALL_TOLERANCE = 0.02
#: Depth (m) behind the wall line searched for a window or door in the fridge's wall.
FRIDGE_WALL_PROBE_DEPTH = 0.05
#: Vertices within this distance (m) of a straight wall are dropped before the search.
WALL_SIMPLIFY_TOLERANCE = 0.01

# --- spaces ------------------------------------------------------------------------

#: Overlap (m²) between two spaces above which they are reported as overlapping.
SPACE_OVERLAP_MIN_AREA = 0.05

# --- features ----------------------------------------------------------------------

#: How far (m) a feature may reach beyond the outline of the area it names.
FEATURE_AREA_TOLERANCE = 0.10

# --- comparing measures with thresholds -----------------------------------------------

#: Comparison tolerance (m): a length within 1 mm of its threshold meets it.
TOLERANCE_M = 0.001
#: Comparison tolerance (m²) for areas: a 1 mm square.
TOLERANCE_M2 = TOLERANCE_M**2


def below(value, threshold, tolerance: float = TOLERANCE_M):
    """True where ``value`` falls short of ``threshold`` by more than ``tolerance``.

    Works on numbers and numpy arrays. A value within the tolerance of the
    threshold meets it: a door measured 0.7999999999999998 m is 0.80 m wide.
    """
    return value < threshold - tolerance


def above(value, threshold, tolerance: float = TOLERANCE_M):
    """True where ``value`` exceeds ``threshold`` by more than ``tolerance`` (numbers or arrays)."""
    return value > threshold + tolerance
