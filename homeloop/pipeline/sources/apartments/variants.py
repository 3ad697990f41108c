"""How often each variant of the apartment layout is drawn (docs/pipeline.md, "The generated
plans", lists them with these shares) and the sizes that bound them."""

from __future__ import annotations

#: Share of one- and two-bedroom flats without a corridor (the living room is the hall).
HALL_FLAT_SHARE = 0.4
#: Unit shapes (see the package docstring) and their weights; a flat without a corridor is a
#: rectangle, and a long unit has at most :data:`LONG_MAX_BEDROOMS` bedrooms (else a rectangle).
SHAPES: dict[str, float] = {"rect": 0.5, "L": 0.2, "U": 0.12, "long": 0.18}
LONG_MAX_BEDROOMS = 3
#: Width range (mm) of the recess of an L or a U.
NOTCH_MM = (2500, 4500)
#: Share of closed kitchens open to the corridor (no wall on the hall side).
KITCHEN_OPEN_TO_HALL = 0.25
#: Share of corridors parted in two by a door across them.
SECOND_CORRIDOR_SHARE = 0.3
#: Shortest part (mm) of a parted corridor.
MIN_CORRIDOR_PART = 1500
#: Chance that a room of a corner unit touching the gable gets a window in it, and that a
#: room beside a recess gets one in the recess's wall.
GABLE_WINDOW_SHARE = 0.8
#: Doors between neighbours in a band: (host kind, inner kind) -> (chance of a door between
#: them, chance that the inner room then has no door to the hall of its own). A kitchen-dining
#: room counts as a kitchen.
LINKS: dict[tuple[str, str], tuple[float, float]] = {
    ("bed", "bath"): (0.45, 0.75),  # en-suite bathroom
    ("bed", "store"): (0.4, 0.85),  # walk-in wardrobe
    ("bed", "office"): (0.2, 0.5),
    ("bed", "bed"): (0.12, 0.0),  # connecting bedrooms
    ("kitchen", "store"): (0.45, 0.8),  # pantry
    ("kitchen", "laundry"): (0.35, 0.5),
    ("kitchen", "dining"): (0.7, 0.5),
    ("bath", "laundry"): (0.35, 0.5),
    ("living", "bed"): (0.3, 0.7),
    ("living", "kitchen"): (0.4, 0.6),
    ("living", "dining"): (0.7, 0.6),
    ("living", "office"): (0.35, 0.6),
    ("living", "store"): (0.25, 0.7),
}
#: Chance that a bedroom or office at least 3 m wide has an outdoor space of its own (a balcony
#: or loggia upstairs, a terrace or garden on the ground floor) besides the living room's.
ROOM_OUTDOOR_SHARE = 0.18
#: Smallest bedroom (mm²) with a built-in cupboard: a smaller one keeps its walls for the
#: bed, the nightstands and a free-standing wardrobe.
BUILT_IN_MIN_AREA = 11_500_000
#: Room kinds that take windows in a gable or beside a recess.
WINDOWED = frozenset({"bed", "living", "kitchen", "kitchen_dining", "office", "dining"})
