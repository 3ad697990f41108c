"""Furnishing: a floor plan turned into a furnished :class:`~homeloop.core.home.Home`.

``furnish(plan, catalog, rng)`` builds the home's rooms, walls, openings and fixtures from
the plan (:mod:`~homeloop.pipeline.furnish.shell`), draws what the household owns
(:func:`lacking_items`), then runs its registered steps in order
(:data:`~homeloop.pipeline.furnish.stage.STEPS`) over one context
(:mod:`~homeloop.pipeline.furnish.context`):

1. ``house_furniture``, ``house_objects``: the house's hand-written furnishing, verbatim
   (:mod:`~homeloop.pipeline.furnish.house`; plans have none);
2. ``rooms``: each room's furniture as the catalog's room rule for its kind says
   (``homeloop/catalog/rooms.yaml``; :mod:`~homeloop.pipeline.furnish.rooms`), one item at a
   time (:mod:`~homeloop.pipeline.furnish.placement`: candidates from
   :mod:`~homeloop.pipeline.furnish.generators`, tested by
   :mod:`~homeloop.pipeline.furnish.filters` and :mod:`~homeloop.pipeline.furnish.constraints`,
   the room kept navigable by :mod:`~homeloop.pipeline.furnish.navigability`);
3. ``task_objects``: the carryable objects the tasks need (docs/tasks.md;
   :mod:`~homeloop.pipeline.furnish.objects`).

What it measures of each room before placing anything (wall faces, features, door and window
zones, free floor) is :mod:`homeloop.pipeline.furnish_geometry`. A required item that cannot
be placed is a :class:`FurnishFailure`, and the plan yields no home.

Determinism: every draw comes from the generator passed in; rooms, features, openings and
candidates are visited in fixed orders; the same plan and seed give a byte-identical home file.
"""

from homeloop.pipeline.furnish.context import REACHED_CLASSES, FurnishContext, lacking_items
from homeloop.pipeline.furnish.house_file import (
    HOUSE_FURNISHING_YAML,
    FixedFurniture,
    FixedObject,
    FixedPoint,
    HouseFurnishing,
    load_house_furnishing,
)
from homeloop.pipeline.furnish.objects import TASK_OBJECTS, TaskObject
from homeloop.pipeline.furnish.results import FurnishFailure, FurnishResult
from homeloop.pipeline.furnish.shell import (
    COUNTER_HEIGHT,
    DOOR_HEAD,
    DOOR_SILL,
    FEATURE_HEIGHTS,
    GARAGE_DOOR_MIN_WIDTH,
    RAILING_HEIGHT,
    ROOM_NAMES,
    WINDOW_HEAD,
    WINDOW_SILL,
    home_shell,
    opening_kind,
)
from homeloop.pipeline.furnish.stage import STEPS, FurnishStep, furnish, furnish_house

__all__ = [
    "COUNTER_HEIGHT",
    "DOOR_HEAD",
    "DOOR_SILL",
    "FEATURE_HEIGHTS",
    "GARAGE_DOOR_MIN_WIDTH",
    "HOUSE_FURNISHING_YAML",
    "RAILING_HEIGHT",
    "REACHED_CLASSES",
    "ROOM_NAMES",
    "STEPS",
    "TASK_OBJECTS",
    "WINDOW_HEAD",
    "WINDOW_SILL",
    "FixedFurniture",
    "FixedObject",
    "FixedPoint",
    "FurnishContext",
    "FurnishFailure",
    "FurnishResult",
    "FurnishStep",
    "HouseFurnishing",
    "TaskObject",
    "furnish",
    "furnish_house",
    "home_shell",
    "lacking_items",
    "load_house_furnishing",
    "opening_kind",
]
