"""One apartment of the plan generator (:mod:`homeloop.pipeline.sources.synthetic`), laid out in
its own frame in integer millimetres: spaces, walls, openings, fixtures and outdoor space, plus
the rooms and doors the generator's defects work on. docs/pipeline.md ("The generated plans")
lists the layouts with their shares (:mod:`~homeloop.pipeline.sources.apartments.variants`).

:func:`apartment` runs the drawing steps (:data:`~homeloop.pipeline.sources.apartments.steps.STEPS`),
in order, over one :class:`ApartmentDrawing`.

Layout
------
Rooms lie in two bands, south and north, on either side of a corridor along x; the entrance door
is in the east end wall and opens into the corridor. On that frame:

* **Shape** (:data:`SHAPES`). A rectangle; an **L**, whose north band stops short of the east
  end (the corridor's north wall is a facade there); a **U**, with a recess in the middle of the
  north band; a **long** single-loaded unit, every room in the south band and the corridor along
  the north facade. Some one- and two-bedroom flats (:data:`HALL_FLAT_SHARE`) have no corridor:
  the living room runs the whole length as the hall and the other rooms open off it.
* **Living room** in a band, or in a section of its own across both bands at the west end.
* **Kitchen**: closed, a kitchen-dining room (sometimes open to the living room with no wall
  between), or a living-dining room beside a closed kitchen. A closed kitchen may open to the
  hall with no wall on that side (:data:`KITCHEN_OPEN_TO_HALL`): to the corridor, or to the
  living room of a flat without one.
* **Doors between neighbours** (:data:`LINKS`): a bathroom off a bedroom, a walk-in storeroom
  off a bedroom, a pantry or laundry off the kitchen, a bedroom, kitchen, office or dining room
  off the living room, connecting bedrooms. The inner room is then often reached only through
  its neighbour, so rooms are reached through other rooms.
* **Two corridors** (:data:`SECOND_CORRIDOR_SHARE`): a door across the corridor parts an
  entrance hall from an inner hall.
* **Programme**: 1–5 bedrooms (``ROOM`` or ``BEDROOM``), one or two bathrooms, and sometimes a
  guest WC (a ``BATHROOM`` with toilet and basin only), an office, a dining room, a laundry,
  one or two storerooms (:mod:`~homeloop.pipeline.sources.apartments.programme`).
* **Outdoor space**: mostly one off the living room; a bedroom or office may have one of its
  own (:data:`ROOM_OUTDOOR_SHARE`).
* **Corner units**: the units at the ends of a row have windows in their gable wall too.

Every opening added to this frame is placed only where its clear zone
(:data:`DOOR_CLEAR_DEPTH_MM` on each face of a door) lies in its rooms, free of walls, fixtures,
other openings and the floor kept for the fridge, and where no other door's clear zone reaches
it; a door between neighbours that finds no such place is not drawn, and the room it would have
served keeps its door to the hall. So the generator's guarantees (its module docstring) hold
for every variant.
"""

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.rects import (
    AREA,
    COUNTER_DEPTH,
    DOOR_CLEAR_DEPTH_MM,
    FEATURE,
    OPENING,
    SEPARATOR,
    Element,
    Rect,
    _mm,
    clear_zones,
    fridge_mm,
    overlaps,
)
from homeloop.pipeline.sources.apartments.rooms import _Apartment, _Door, _Room
from homeloop.pipeline.sources.apartments.steps import STEPS, DrawingStep, apartment, bedrooms
from homeloop.pipeline.sources.apartments.variants import (
    BUILT_IN_MIN_AREA,
    GABLE_WINDOW_SHARE,
    HALL_FLAT_SHARE,
    KITCHEN_OPEN_TO_HALL,
    LINKS,
    LONG_MAX_BEDROOMS,
    MIN_CORRIDOR_PART,
    NOTCH_MM,
    ROOM_OUTDOOR_SHARE,
    SECOND_CORRIDOR_SHARE,
    SHAPES,
    WINDOWED,
)

__all__ = [
    "AREA",
    "BUILT_IN_MIN_AREA",
    "COUNTER_DEPTH",
    "DOOR_CLEAR_DEPTH_MM",
    "FEATURE",
    "GABLE_WINDOW_SHARE",
    "HALL_FLAT_SHARE",
    "KITCHEN_OPEN_TO_HALL",
    "LINKS",
    "LONG_MAX_BEDROOMS",
    "MIN_CORRIDOR_PART",
    "NOTCH_MM",
    "OPENING",
    "ROOM_OUTDOOR_SHARE",
    "SECOND_CORRIDOR_SHARE",
    "SEPARATOR",
    "SHAPES",
    "STEPS",
    "WINDOWED",
    "ApartmentDrawing",
    "DrawingStep",
    "Element",
    "Rect",
    "_Apartment",
    "_Door",
    "_Room",
    "_mm",
    "apartment",
    "bedrooms",
    "clear_zones",
    "fridge_mm",
    "overlaps",
]
