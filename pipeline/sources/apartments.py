"""One apartment of the plan generator (:mod:`homeloop.pipeline.sources.synthetic`), laid out in
its own frame in integer millimetres: spaces, walls, openings, fixtures and outdoor space, plus
the rooms and doors the generator's defects work on. docs/pipeline.md ("The generated plans")
lists the layouts with their shares.

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
  one or two storerooms (:meth:`_Layout._other_rooms`).
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

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field

from homeloop.plan import DOOR_CLEAR_DEPTH

AREA, SEPARATOR, OPENING, FEATURE = "area", "separator", "opening", "feature"

# An element: (entity_type, subtype, geometry, area index or -1). In a layout the geometry is
# a rectangle (x0, y0, x1, y1) with x0 < x1, y0 < y1; a defect may turn an area's into a list
# of (x, y) ring vertices without the closing vertex.
Element = tuple
Rect = tuple[int, int, int, int]

#: Depth (mm) of a door's clear zone on each face, kept free in valid plans.
DOOR_CLEAR_DEPTH_MM = round(DOOR_CLEAR_DEPTH * 1000)
#: Kitchen counter depth (mm).
COUNTER_DEPTH = 600

#: Share of one- and two-bedroom flats without a corridor (the living room is the hall).
HALL_FLAT_SHARE = 0.4
#: Unit shapes (see the module docstring) and their weights; a flat without a corridor is a
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


def fridge_mm() -> tuple[int, int, int]:
    """Width, depth and front clearance (mm) of the catalog's fridge, which a valid
    kitchen leaves room for (catalog/furniture.yaml: 600, 650, 1000)."""
    from homeloop.catalog import catalog_dir

    return _fridge_mm(str(catalog_dir()))


@functools.lru_cache(maxsize=8)
def _fridge_mm(folder: str) -> tuple[int, int, int]:
    from homeloop.catalog import load_catalog

    fridge = load_catalog(folder).fridge
    return tuple(round(v * 1000) for v in (fridge.dimensions.width, fridge.dimensions.depth,
                                           fridge.clearance_front))  # type: ignore[return-value]


# --- rectangles ---------------------------------------------------------------------------


def overlaps(a: Rect, b: Rect) -> bool:
    """Whether two rectangles share some area (touching is not overlapping)."""
    return max(a[0], b[0]) < min(a[2], b[2]) and max(a[1], b[1]) < min(a[3], b[3])


def _inside(a: Rect, b: Rect) -> bool:
    return b[0] <= a[0] and b[1] <= a[1] and a[2] <= b[2] and a[3] <= b[3]


def _minus(span: tuple[int, int], gaps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the interval ``span`` outside every interval of ``gaps``."""
    parts = [span]
    for g0, g1 in gaps:
        parts = [p for a, b in parts for p in ((a, min(b, g0)), (max(a, g1), b)) if p[0] < p[1]]
    return parts


def clear_zones(rect: Rect) -> tuple[Rect, Rect]:
    """The clear zones of a door: as wide as the door, :data:`DOOR_CLEAR_DEPTH_MM` deep, on both faces."""
    x0, y0, x1, y1 = rect
    c = DOOR_CLEAR_DEPTH_MM
    if x1 - x0 >= y1 - y0:
        return (x0, y0 - c, x1, y0), (x0, y1, x1, y1 + c)
    return (x0 - c, y0, x0, y1), (x1, y0, x1 + c, y1)


def _front(rect: Rect, room: Rect, depth: int) -> Rect:
    """The strip ``depth`` deep in front of an opening in a wall, on the side of ``room``."""
    x0, y0, x1, y1 = rect
    if x1 - x0 >= y1 - y0:
        return (x0, y1, x1, y1 + depth) if room[1] >= y1 else (x0, y0 - depth, x1, y0)
    return (x1, y0, x1 + depth, y1) if room[0] >= x1 else (x0 - depth, y0, x0, y1)


# --- rooms, doors, apartments -----------------------------------------------------------------


@dataclass(eq=False)
class _Room:
    """A space being laid out, with the frame its fittings are placed in.

    Fittings are placed in a room frame: ``u`` runs along the door wall,
    ``v`` from the door wall (v = 0) to the opposite, exterior wall (v = d).
    ``side`` says which side of ``rect`` the door wall is on; ``flip``
    reverses ``u``.
    """

    # programme role: bed, bath, wc, kitchen, kitchen_dining, living, dining, office, store,
    # laundry; corridor, outdoor; notch (the recess of an L or U: a gap in a band, no space)
    kind: str
    subtype: str
    width: int = 0
    rect: Rect = (0, 0, 0, 0)
    side: str = "N"
    flip: bool = False
    area: int = -1
    door: int | None = None  # element index of its door to the hall
    door_u: tuple[int, int] | None = None
    door_rect: Rect | None = None  # where that door goes (drawn unless reached through ``via``)
    open_to_living: bool = False
    open_to_hall: bool = False
    has_door: bool = True
    via: _Room | None = None  # the neighbour it is reached through instead of the hall
    features: list[int] = field(default_factory=list)

    @property
    def w(self) -> int:
        x0, y0, x1, y1 = self.rect
        return x1 - x0 if self.side in "NS" else y1 - y0

    @property
    def d(self) -> int:
        x0, y0, x1, y1 = self.rect
        return y1 - y0 if self.side in "NS" else x1 - x0

    def map(self, u0: int, v0: int, u1: int, v1: int) -> Rect:
        """A rectangle in the room frame, in apartment coordinates."""
        x0, y0, x1, y1 = self.rect
        if self.side in "NS":
            xa, xb = (x1 - u1, x1 - u0) if self.flip else (x0 + u0, x0 + u1)
            ya, yb = (y0 + v0, y0 + v1) if self.side == "S" else (y1 - v1, y1 - v0)
        else:
            ya, yb = (y1 - u1, y1 - u0) if self.flip else (y0 + u0, y0 + u1)
            xa, xb = (x0 + v0, x0 + v1) if self.side == "W" else (x1 - v1, x1 - v0)
        return (xa, ya, xb, yb)


@dataclass(eq=False)
class _Door:
    """A door drawn in the plan: its element, its rectangle and the rooms on its two faces
    (None: outside the apartment)."""

    index: int
    rect: Rect
    rooms: tuple[_Room | None, _Room | None]

    def zones(self) -> tuple[Rect, Rect]:
        return clear_zones(self.rect)

    def zone_in(self, room: _Room) -> Rect:
        """The clear zone on the face of ``room``."""
        return next(z for z in self.zones() if overlaps(z, room.rect))

    def serves(self, room: _Room) -> bool:
        return any(r is room for r in self.rooms)


@dataclass
class _Near:
    """What is in the way within a search's envelope (:meth:`_Layout.near`)."""

    solid: list[Rect]  # walls, columns, railings, fixtures, openings, floor kept free
    zones: list[Rect]  # the clear zones of the doors
    openings: list[Rect]

    def blocked(self, rect: Rect) -> bool:
        return any(overlaps(rect, r) for r in self.solid)

    def in_door_zone(self, rect: Rect) -> bool:
        return any(overlaps(rect, z) for z in self.zones)

    def door_fits(self, rect: Rect, rooms: tuple[_Room, ...]) -> bool:
        """Whether a door may go at ``rect``: no door's clear zone reaches it, and each of its own
        clear zones lies inside one of ``rooms``, clear of everything drawn."""
        if self.in_door_zone(rect):
            return False
        return all(any(_inside(z, r.rect) for r in rooms) and not self.blocked(z) for z in clear_zones(rect))


@dataclass
class _Apartment:
    """One apartment in its own frame: elements plus what defects need to know."""

    elements: list[Element]
    rooms: list[_Room]
    doors: list[_Door]
    bbox: Rect


def _mm(rng: random.Random, lo: int, hi: int, step: int = 10) -> int:
    """A random length in [lo, hi] mm on a ``step`` grid."""
    if hi <= lo:
        return lo
    return lo + step * rng.randint(0, (hi - lo) // step)


def _place_along(
    rng: random.Random, length: int, widths: list[int], margin: int = 200, gap: int = 150
) -> list[int] | None:
    """Start positions of openings of ``widths`` along a wall of ``length``,
    at least ``margin`` from its ends and ``gap`` apart; None if they do not fit."""
    free = length - 2 * margin - sum(widths) - gap * (len(widths) - 1)
    if free < 0:
        return None
    cuts = sorted(rng.randint(0, free // 10) * 10 for _ in range(len(widths)))
    starts, pos, prev = [], margin, 0
    for w, c in zip(widths, cuts):
        pos += c - prev
        prev = c
        starts.append(pos)
        pos += w + gap
    return starts


def _rotated(items: list, rng: random.Random, first: int | None = None) -> list:
    """``items`` starting at a random place (among the first ``first``), wrapping round."""
    if not items:
        return items
    k = rng.randrange(min(len(items), first or len(items)))
    return items[k:] + items[:k]


def _link_kind(room: _Room) -> str:
    return "kitchen" if room.kind == "kitchen_dining" else room.kind


def _link_roles(a: _Room, b: _Room) -> tuple[_Room, _Room] | None:
    """(host, inner) of two neighbours that :data:`LINKS` may join, else None."""
    if (_link_kind(a), _link_kind(b)) in LINKS:
        return a, b
    if (_link_kind(b), _link_kind(a)) in LINKS:
        return b, a
    return None


class _Layout:
    """Lays out one apartment: rooms, walls, openings, features, outdoor space."""

    def __init__(self, rng: random.Random, bedrooms: int, ground: bool, corner: bool = False):
        self.rng = rng
        self.bedrooms = bedrooms
        self.ground = ground
        self.corner = corner
        self.elements: list[Element] = []
        self.rooms: list[_Room] = []
        self.doors: list[_Door] = []
        self.reserved: list[Rect] = []  # floor kept free: the fridge's place and the floor before it
        self.links: list[tuple[_Room, _Room, _Room, _Room, tuple]] = []
        self.n_areas = 0

    # element helpers
    def add(self, etype: str, subtype: str, geom, area: int = -1) -> int:
        self.elements.append((etype, subtype, geom, area))
        return len(self.elements) - 1

    def add_area(self, room: _Room) -> None:
        room.area = self.n_areas
        self.n_areas += 1
        self.add(AREA, room.subtype, room.rect, room.area)
        self.rooms.append(room)

    def feature(self, room: _Room, subtype: str, u0: int, v0: int, u1: int, v1: int) -> int:
        i = self.add(FEATURE, subtype, room.map(u0, v0, u1, v1), room.area)
        room.features.append(i)
        return i

    def add_door(self, rect: Rect, rooms: tuple[_Room | None, _Room | None], subtype: str = "DOOR") -> int:
        i = self.add(OPENING, subtype, rect)
        self.doors.append(_Door(i, rect, rooms))
        return i

    # what is in the way
    def near(self, envelope: Rect) -> _Near:
        """What is in the way within ``envelope`` (the whole extent of a search): the walls,
        columns, railings, fixtures and openings drawn so far and the floor kept free
        (:attr:`reserved`) that reach into it, and the doors' clear zones that do. Every
        candidate of the search lies inside the envelope, so it is tested against these few."""
        solid = [e[2] for e in self.elements if e[0] != AREA and overlaps(envelope, e[2])]
        solid += [r for r in self.reserved if overlaps(envelope, r)]
        zones = [z for d in self.doors for z in d.zones() if overlaps(envelope, z)]
        openings = [e[2] for e in self.elements if e[0] == OPENING and overlaps(envelope, e[2])]
        return _Near(solid, zones, openings)

    # the whole apartment
    def build(self) -> _Apartment:
        """Draw the programme, lay its rooms out in a south and a north band along the
        corridor, then draw spaces, walls, doors, fit-out, outdoor space and the doors,
        corridor divisions and windows the variants add."""
        others = self._programme()
        self._place_rooms(others)
        self._balance_bands()
        self._settle_notch()
        self._spaces()
        self._plan_links()
        self._walls()
        self._doors()
        for room in list(self.rooms):
            self._fit_out(room)
        self._outdoor()
        self._through_doors()
        self._split_corridor()
        self._extra_windows()
        self._split_long_walls()
        xs = [g[0] for _, _, g, _ in self.elements] + [g[2] for _, _, g, _ in self.elements]
        ys = [g[1] for _, _, g, _ in self.elements] + [g[3] for _, _, g, _ in self.elements]
        return _Apartment(self.elements, self.rooms, self.doors, (min(xs), min(ys), max(xs), max(ys)))

    # programme
    def _programme(self) -> list[_Room]:
        """Draw the wall thicknesses, shape, corridor, band depths and rooms; the living block
        goes into a band (``self.bands``), the other rooms are returned to be placed."""
        rng = self.rng
        small = self.small = self.bedrooms <= 2
        te, ti = _mm(rng, 250, 350), _mm(rng, 100, 150)
        # Small flats often have no corridor: the living room is the hall.
        hall = small and rng.random() < HALL_FLAT_SHARE
        shape = "rect" if hall else rng.choices(tuple(SHAPES), tuple(SHAPES.values()))[0]
        if shape == "long" and self.bedrooms > LONG_MAX_BEDROOMS:
            shape = "rect"
        c = 0 if hall else _mm(rng, 1200, 1500, 50)
        top = 3800 if small else 4200
        ds, dn = _mm(rng, 3000, top, 50), _mm(rng, 3000, top, 50)
        self.living, self.kitchen = self._living_and_kitchen(hall)
        self.hall, self.shape, self.te, self.ti, self.c = hall, shape, te, ti, c
        if shape == "long":
            depth = ds + ti + c
        else:
            depth = ds + dn + c + (ti if hall else 2 * ti)
        section = not hall and depth * 3200 <= 40_000_000 and rng.random() < 0.35
        self.ds, self.dn, self.D, self.section = ds, dn, depth, section
        self.depths = {"S": ds, "N": dn}
        others = self._other_rooms()
        self._living_block(others)
        beds = [r for r in others if r.kind == "bed"]
        self.master = beds[0] if beds else None
        self.first_bath = next((r for r in others if r.kind == "bath"), None)
        return others

    def _living_and_kitchen(self, hall: bool) -> tuple[_Room, _Room]:
        """The living room and the kitchen: closed, kitchen-dining (maybe open to the living room)
        or a living-dining room beside a closed kitchen; a closed kitchen may open to the corridor."""
        rng = self.rng
        style = rng.choices(("closed", "kitchen_dining", "living_dining"), (0.45, 0.35, 0.2))[0]
        living = _Room("living", "LIVING_DINING" if style == "living_dining" else "LIVING_ROOM")
        kitchen = _Room(
            "kitchen_dining" if style == "kitchen_dining" else "kitchen",
            "KITCHEN_DINING" if style == "kitchen_dining" else "KITCHEN",
        )
        kitchen.open_to_living = style == "kitchen_dining" and not hall and rng.random() < 0.6
        if kitchen.open_to_living:
            kitchen.has_door = rng.random() < 0.5
        kitchen.open_to_hall = kitchen.kind == "kitchen" and rng.random() < KITCHEN_OPEN_TO_HALL
        if kitchen.open_to_hall:
            kitchen.has_door = False
        return living, kitchen

    def _other_rooms(self) -> list[_Room]:
        """The bedrooms, bathrooms, and maybe a guest WC, an office, a dining room, a laundry and
        storerooms."""
        rng = self.rng
        bed_sub = rng.choice(("ROOM", "ROOM", "BEDROOM", "mixed"))
        others: list[_Room] = []
        for _ in range(self.bedrooms):
            sub = bed_sub if bed_sub != "mixed" else rng.choice(("ROOM", "BEDROOM"))
            others.append(_Room("bed", sub))
        two = self.bedrooms >= 5 or (self.bedrooms >= 2 and rng.random() < (0.25 if self.small else 0.6))
        others += [_Room("bath", "BATHROOM") for _ in range(2 if two else 1)]
        # A flat whose living room is the hall has all its rooms in one band: fewer extras.
        if self.bedrooms >= 2 and rng.random() < (0.2 if self.small else 0.35):
            others.append(_Room("wc", "BATHROOM"))
        if self.bedrooms <= (1 if self.hall else 4) and rng.random() < 0.25:
            others.append(_Room("office", "OFFICE"))
        if not self.hall and self.kitchen.kind == "kitchen" and self.bedrooms <= 3 and rng.random() < 0.2:
            others.append(_Room("dining", "DINING"))
        self.laundry = not self.small and rng.random() < 0.15
        if self.laundry:
            others.append(_Room("laundry", "WASH_AND_DRY_ROOM"))
        stores = rng.random() < (0.15 if self.small else 0.25)
        stores += stores and not self.hall and rng.random() < 0.2
        others += [_Room("store", "STOREROOM") for _ in range(stores)]
        return others

    def _living_block(self, others: list[_Room]) -> None:
        """Put the living room (with an open kitchen) in a band, or in a section of its own
        across both bands (``self.lw`` wide); a closed kitchen joins ``others``. A long unit
        has the south band only."""
        rng, living, kitchen = self.rng, self.living, self.kitchen
        self.bands: dict[str, list[_Room]] = {"S": [], "N": []}
        self.lw = 0
        band = "S" if self.shape == "long" else None
        if self.hall:
            self.bands["S"].append(living)
            others.append(kitchen)
        elif self.section:
            area = _mm(rng, 22_000, 40_000, 500) * 1000
            self.lw = max(3200, min(5000, (area // self.D) // 10 * 10))
            if kitchen.open_to_living:
                self.bands[band or rng.choice("SN")].append(kitchen)
            else:
                others.append(kitchen)
        else:
            block = [living, kitchen] if kitchen.open_to_living else [living]
            if kitchen.open_to_living:
                rng.shuffle(block)
            else:
                others.append(kitchen)
            self.bands[band or rng.choice("SN")].extend(block)

    def _width(self, room: _Room, d: int) -> int:
        """A room's width (mm) drawn for a band ``d`` deep, from the area its kind calls for."""
        rng, k = self.rng, room.kind
        if k == "bed":
            a = _mm(rng, 12_000, 18_000, 250) if room is self.master else _mm(rng, 9_500, 13_500, 250)
            return max(2600, min(5200, (a * 1000 // d) // 10 * 10))
        if k == "bath":
            return _mm(rng, 1800, 2400) if room is self.first_bath else _mm(rng, 1700, 2100)
        if k == "kitchen":
            return _mm(rng, 2700, 3400)
        if k == "kitchen_dining":
            return _mm(rng, 3200, 4200)
        if k == "living":
            a = _mm(rng, 20_000, 36_000, 500)
            return max(4200, min(7500, (a * 1000 // d) // 10 * 10))
        if k == "office":
            return max(2400, min(3600, (_mm(rng, 7_500, 11_000, 250) * 1000 // d) // 10 * 10))
        if k == "dining":
            return max(2800, min(4200, (_mm(rng, 9_000, 14_000, 250) * 1000 // d) // 10 * 10))
        if k == "wc":
            return _mm(rng, 1200, 1500)
        if k == "laundry":
            return _mm(rng, 1600, 2000)
        return _mm(rng, 1200, 1800)

    def _band_len(self, b: str) -> int:
        """The length (mm) of a band: its rooms, the walls between them, the living section."""
        rooms = self.bands[b]
        if not rooms:
            return 0
        walls = sum(0 if self._open_pair(rooms[i], rooms[i + 1]) else self.ti for i in range(len(rooms) - 1))
        return sum(r.width for r in rooms) + walls + self._band_start(b, rooms)

    def _place_rooms(self, others: list[_Room]) -> None:
        """Longest rooms first, each to the shorter band (the only one of a long unit, the north
        one of a flat without a corridor), at a random place in it; the recess of an L or U
        counts in the north band from the start. An empty band gets a storeroom."""
        bands, depths = self.bands, self.depths
        if not self.hall:
            for b in "SN":
                for r in bands[b]:
                    r.width = self._width(r, depths[b])
        if self.shape in ("L", "U"):
            bands["N"].append(_Room("notch", "", width=_mm(self.rng, *NOTCH_MM, 50)))
        mean_depth = (self.ds + self.dn) // 2
        for r in others:
            r.width = self._width(r, mean_depth)
        others.sort(key=lambda r: -r.width)
        for r in others:
            if self.hall or self.shape == "long":
                b = "N" if self.hall else "S"
            else:
                lens = {b: self._band_len(b) for b in "SN"}
                b = min("SN", key=lambda k: (lens[k], k))
            r.width = self._width(r, depths[b])
            bands[b].insert(self._insert_pos(bands[b]), r)
        if self.hall:
            self._fit_hall_living()
        for b in "SN":
            if not bands[b] and not (b == "N" and self.shape == "long"):
                bands[b].append(_Room("store", "STOREROOM", width=_mm(self.rng, 1200, 1800)))

    def _settle_notch(self) -> None:
        """Put the recess of an L at the east end of the north band, that of a U between two of
        its rooms (an L where no two rooms can part); a band with no room besides it keeps a
        storeroom in its place."""
        band = self.bands["N"]
        notch = next((r for r in band if r.kind == "notch"), None)
        if notch is None:
            return
        at = band.index(notch)
        band.remove(notch)
        spots = [k for k in range(1, len(band)) if not self._open_pair(band[k - 1], band[k])]
        if self.shape == "U" and spots:
            band.insert(self.rng.choice(spots), notch)
        elif band:
            band.append(notch)
        else:
            band.insert(at, _Room("store", "STOREROOM", width=notch.width))

    def _fit_hall_living(self) -> None:
        """The living room that is the hall runs the whole length: keep it within 40 m² at
        3 m deep, narrowing the north band's rooms where it runs long."""
        dn, ti = self.dn, self.ti
        excess = self._band_len("N") - 13_300
        if excess > 0:
            floor = {"bed": max(2600, -(-9_000_000 // dn) + 10), "kitchen": 2700, "kitchen_dining": 3200}
            slack = [(r, r.width - floor[r.kind]) for r in self.bands["N"] if r.kind in floor]
            total = sum(sl for _, sl in slack) or 1
            for r, sl in slack:
                r.width -= min(sl, excess * sl // total + 10)
        self.living.width = self._band_len("N")
        ds = max(3000, min(self.ds, (40_000_000 // self.living.width) // 10 * 10))
        self.ds = self.depths["S"] = ds
        self.D = ds + dn + ti

    def _balance_bands(self) -> None:
        """Bring the bands to a common length ``self.W``: add a laundry or storage where the
        short band's rooms cannot stretch that far, then stretch its rooms up to their caps,
        then all of them alike. A long unit has one band, as long as it is."""
        rng, ti, bands, depths = self.rng, self.ti, self.bands, self.depths
        if self.shape == "long":
            self.W = self._band_len("S")
            return
        stretchable = ("bed", "living", "kitchen", "kitchen_dining")
        for _ in range(3):
            lens = {b: self._band_len(b) for b in "SN"}
            short = min("SN", key=lambda k: (lens[k], k))
            gap = max(lens.values()) - lens[short]
            room_for = sum(
                max(0, self._max_width(r, depths[short]) - r.width) for r in bands[short] if r.kind in stretchable
            )
            if gap <= room_for or gap - ti < 1200:
                break
            laundry = not self.laundry and not self.small and rng.random() < 0.3
            kind, sub = ("laundry", "WASH_AND_DRY_ROOM") if laundry else ("store", "STOREROOM")
            self.laundry = self.laundry or kind == "laundry"
            filler = _Room(kind, sub, width=min(gap - ti, 2000) // 10 * 10)
            bands[short].insert(self._insert_pos(bands[short]), filler)
        lens = {b: self._band_len(b) for b in "SN"}
        self.W = max(lens.values())
        short = min("SN", key=lambda k: (lens[k], k))
        gap = self.W - lens[short]
        stretch = [r for r in bands[short] if r.kind in stretchable]
        spare = [max(0, self._max_width(r, depths[short]) - r.width) for r in stretch]
        if gap > sum(spare):
            stretch, spare = bands[short], [r.width for r in bands[short]]
        if not gap:
            return
        given = [gap * sp // max(1, sum(spare)) for sp in spare]
        given[0] += gap - sum(given)
        for r, g in zip(stretch, given):
            r.width += g

    def _split_long_walls(self) -> None:
        """Split walls longer than 3 m in two where no opening crosses them,
        as drawn plans split walls into segments."""
        openings = [g for e, _, g, _ in self.elements if e == OPENING]
        for i, (etype, sub, g, area) in enumerate(list(self.elements)):
            if etype != SEPARATOR or sub != "WALL":
                continue
            x0, y0, x1, y1 = g
            along_x = x1 - x0 >= y1 - y0
            lo, hi = (x0, x1) if along_x else (y0, y1)
            if hi - lo < 3000 or self.rng.random() < 0.5:
                continue
            spans = [(o[0], o[2]) if along_x else (o[1], o[3]) for o in openings
                     if o[0] < x1 and x0 < o[2] and o[1] < y1 and y0 < o[3]]
            for p in (lo + (hi - lo) // 2, lo + (hi - lo) // 3, lo + 2 * (hi - lo) // 3):
                if all(not (a - 50 <= p <= b + 50) for a, b in spans):
                    break
            else:
                continue
            first, second = ((x0, y0, p, y1), (p, y0, x1, y1)) if along_x else ((x0, y0, x1, p), (x0, p, x1, y1))
            self.elements[i] = (etype, sub, first, area)
            self.elements.append((etype, sub, second, area))

    @staticmethod
    def _max_width(room: _Room, depth: int) -> int:
        """How wide a room may be stretched in a band of ``depth``."""
        cap = {"bed": 20_000_000, "living": 40_000_000, "kitchen": 16_000_000, "kitchen_dining": 20_000_000}
        return cap[room.kind] // depth

    def _open_pair(self, a: _Room, b: _Room) -> bool:
        return {a.kind, b.kind} == {"living", "kitchen_dining"} and self.kitchen.open_to_living

    def _band_start(self, b: str, rooms: list[_Room]) -> int:
        if not self.lw:
            return 0
        first = rooms[0]
        return self.lw if (first.kind == "kitchen_dining" and first.open_to_living) else self.lw + self.ti

    def _insert_pos(self, rooms: list[_Room]) -> int:
        """A place in a band that splits neither the living/kitchen pair nor
        an open kitchen from the living section."""
        allowed = [
            i
            for i in range(len(rooms) + 1)
            if not (0 < i < len(rooms) and self._open_pair(rooms[i - 1], rooms[i]))
            and not (i == 0 and rooms and rooms[0].open_to_living and self.lw)
        ]
        return self.rng.choice(allowed)

    # geometry
    def _spaces(self) -> None:
        """The spaces: the corridor (none in a flat whose living room is the hall), the living
        section, the rooms of each band; a kitchen open to the hall reaches to the corridor."""
        ti, ds, c, W, D = self.ti, self.ds, self.c, self.W, self.D
        self.cy0, self.cy1 = ds + ti, ds + ti + c
        if self.hall:
            self.y_n = ds + ti
        else:
            self.y_n = self.cy1 if self.shape == "long" else ds + 2 * ti + c
        self.corridor = None
        if not self.hall:
            x0 = self.lw + ti if self.lw else 0
            self.corridor = _Room("corridor", "CORRIDOR", rect=(x0, self.cy0, W, self.cy1), side="S")
        if self.lw:
            self.living.rect = (0, 0, self.lw, D)
            self.living.side = "E"
            self.living.flip = False
            self.add_area(self.living)
        for b in "SN":
            rooms = self.bands[b]
            x = self._band_start(b, rooms) if rooms else 0
            y0, y1 = (0, ds) if b == "S" else (self.y_n, D)
            for i, r in enumerate(rooms):
                r.rect = (x, y0, x + r.width, y1)
                if r.open_to_hall:
                    r.rect = (x, y0, x + r.width, y1 + ti) if b == "S" else (x, y0 - ti, x + r.width, y1)
                r.side = "N" if b == "S" else "S"
                r.flip = self.rng.random() < 0.5
                x += r.width
                if i + 1 < len(rooms) and not self._open_pair(r, rooms[i + 1]):
                    x += ti
                if r.kind != "notch":
                    self.add_area(r)
        if self.corridor is not None:
            self.add_area(self.corridor)

    # walls
    def _notch_span(self) -> tuple[int, int | None] | None:
        """(x of the west face of the recess, x of its east face or None when it reaches the east
        end): the gap in the north band of an L or U, or None."""
        band = self.bands["N"]
        notch = next((r for r in band if r.kind == "notch"), None)
        if notch is None:
            return None
        east = notch.rect[2] + self.ti if notch is not band[-1] else None
        return notch.rect[0] - self.ti, east

    def _walls(self) -> None:
        """Exterior walls (the facades, the end walls, the faces of a recess), the corridor's walls
        (or the wall between the bands of a flat without one), the partitions between rooms and
        the living section's inner wall."""
        for g in self._facades() + self._end_walls() + self._spines() + self._partitions() + self._section_walls():
            self.add(SEPARATOR, "WALL", g)

    def _facades(self) -> list[Rect]:
        """The south and north facades, split at the rooms' boundaries, open over a recess."""
        te, W, D = self.te, self.W, self.D
        notch = self._notch_span()
        out = []
        for b, (ya, yb) in (("S", (-te, 0)), ("N", (D, D + te))):
            cuts = [r.rect[2] for r in self.bands[b][:-1]]
            if self.lw:
                cuts.insert(0, self.lw)
            xs = [-te] + sorted(set(cuts)) + [W + te]
            gaps = []
            if b == "N" and notch:
                gaps = [(notch[0] + te, notch[1] - te if notch[1] is not None else W + 2 * te)]
            for xa, xb in zip(xs, xs[1:]):
                out += [(a, ya, z, yb) for a, z in _minus((xa, xb), gaps)]
        return out

    def _end_walls(self) -> list[Rect]:
        """The west and east end walls, in a piece per band and one across the corridor; an L
        has none east of its north band."""
        te, ds, W, D, y_n = self.te, self.ds, self.W, self.D, self.y_n
        notch = self._notch_span()
        out = []
        for xa, xb, east in ((-te, 0, False), (W, W + te, True)):
            if east and notch and notch[1] is None:
                pieces: tuple = ((0, ds), (ds, y_n - self.ti))
            else:
                pieces = ((0, ds), (ds, y_n), (y_n, D))
            out += [(xa, a, xb, b) for a, b in pieces if a < b]
        return out

    def _spines(self) -> list[Rect]:
        """The corridor's walls (the wall between the bands in a flat without a corridor), split at
        the rooms' boundaries, open where a kitchen opens to the hall; along a recess the north
        one is a facade."""
        ds, ti, te, W, y_n = self.ds, self.ti, self.te, self.W, self.y_n
        x_c = self.corridor.rect[0] if self.corridor else 0
        if self.hall:
            spines: tuple = (("N", (ds, ds + ti)),)
        elif self.shape == "long":
            spines = (("S", (ds, ds + ti)),)
        else:
            spines = (("S", (ds, ds + ti)), ("N", (y_n - ti, y_n)))
        notch = self._notch_span()
        out = []
        for b, (ya, yb) in spines:
            gaps = [(r.rect[0], r.rect[2]) for r in self.bands[b] if r.open_to_hall]
            if b == "N" and notch:
                gaps.append((notch[0], notch[1] if notch[1] is not None else W + te))
            cuts = sorted({r.rect[2] for r in self.bands[b][:-1] if x_c < r.rect[2] < W})
            xs = [x_c] + cuts + [W]
            for xa, xb in zip(xs, xs[1:]):
                out += [(a, ya, z, yb) for a, z in _minus((xa, xb), gaps)]
        if notch:
            out.append((notch[0], y_n - ti, notch[1] if notch[1] is not None else W + te, y_n - ti + te))
        return out

    def _partitions(self) -> list[Rect]:
        """The walls between the rooms of a band, and the faces of a recess."""
        ti, te, ds, D, y_n = self.ti, self.te, self.ds, self.D, self.y_n
        out = []
        for b, (ya, yb) in (("S", (0, ds)), ("N", (y_n, D))):
            rooms = self.bands[b]
            for r, nxt in zip(rooms, rooms[1:]):
                if "notch" not in (r.kind, nxt.kind) and not self._open_pair(r, nxt):
                    out.append((r.rect[2], ya, r.rect[2] + ti, yb))
        notch = self._notch_span()
        if notch:
            top = y_n - ti + te
            out.append((notch[0], top, notch[0] + te, D))
            if notch[1] is not None:
                out.append((notch[1] - te, top, notch[1], D))
        return out

    def _section_walls(self) -> list[Rect]:
        """The living section's inner wall, open to a kitchen open to it."""
        if not self.lw:
            return []
        ds, ti, c, y_n, D = self.ds, self.ti, self.c, self.y_n, self.D
        pieces = [(0, ds, "S"), (ds, ds + ti, ""), (ds + ti, ds + ti + c, ""), (ds + ti + c, y_n, ""), (y_n, D, "N")]
        return [(self.lw, ya, self.lw + ti, yb) for ya, yb, b in pieces
                if ya < yb and not (b and self.bands[b][0].open_to_living)]

    # doors
    def _doors(self) -> None:
        """Each room's door to the hall (the corridor, or the living room of a flat without one), the
        living section's door and the entrance door. A room to be reached through a neighbour
        (``via``) gets its hall door only if the door to that neighbour finds no place."""
        rng, ti, te = self.rng, self.ti, self.te
        for r in self.rooms:
            if r.kind == "corridor" or (r.kind == "living" and (self.lw or self.hall)) or not r.has_door:
                continue
            dw = _mm(rng, 800, min(900, r.w - 300))
            lo = 300 if r.w - dw - 300 >= 300 else 150
            off = _mm(rng, lo, min(500, r.w - dw - 150))
            r.door_u = (r.w - off - dw, r.w - off)
            r.door_rect = r.map(r.door_u[0], -ti, r.door_u[1], 0)
            if r.via is None:
                self._hall_door(r)
        if self.lw:
            dw = _mm(rng, 800, 900)
            y0 = self.cy0 + _mm(rng, 150, self.c - 150 - dw)
            self.living.door_u = (y0, y0 + dw)
            self.living.door = self.add_door((self.lw, y0, self.lw + ti, y0 + dw), (self.living, self.corridor))
        de = _mm(rng, 900, 1000)
        if self.hall:  # into the living room, clear of its corners
            y0 = _mm(rng, 300, self.ds - 300 - de)
        else:
            y0 = self.cy0 + _mm(rng, 100, self.c - 100 - de)
        self.add_door((self.W, y0, self.W + te, y0 + de), (self.corridor or self.living, None), "ENTRANCE_DOOR")

    def _hall_door(self, room: _Room) -> None:
        room.door = self.add_door(room.door_rect, (room, self.corridor or self.living))

    def _neighbours(self):
        """(left, right, wall) of the rooms side by side with a partition between them, wall =
        (x of the partition's west face, its y range, whether the hall is at its north end)."""
        spans = {"S": (0, self.ds, True), "N": (self.y_n, self.D, False)}
        for b in "SN":
            ya, yb, north = spans[b]
            rooms = self.bands[b]
            if self.lw and rooms and not rooms[0].open_to_living:
                yield self.living, rooms[0], (self.lw, ya, yb, north)
            for r, nxt in zip(rooms, rooms[1:]):
                if "notch" not in (r.kind, nxt.kind) and not self._open_pair(r, nxt):
                    yield r, nxt, (r.rect[2], ya, yb, north)

    def _plan_links(self) -> None:
        """Which neighbours get a door between them (:data:`LINKS`), and which inner rooms are then
        reached through their host only (never round in a circle)."""
        rng = self.rng
        for left, right, wall in self._neighbours():
            roles = _link_roles(left, right)
            if roles is None:
                continue
            host, inner = roles
            chance, alone = LINKS[(_link_kind(host), _link_kind(inner))]
            if rng.random() >= chance:
                continue
            if inner.has_door and inner.via is None and rng.random() < alone and not self._reached_through(host, inner):
                inner.via = host
            self.links.append((host, inner, left, right, wall))

    @staticmethod
    def _reached_through(room: _Room, other: _Room) -> bool:
        """Whether ``room`` is reached through ``other`` (directly or along a chain)."""
        while room is not None:
            if room is other:
                return True
            room = room.via
        return False

    def _through_doors(self) -> None:
        """Draw the doors between neighbours; a room to be reached through a neighbour whose door
        finds no place gets its hall door back."""
        for host, inner, left, right, wall in self.links:
            rect = self._partition_door(left, right, wall)
            if rect is not None:
                self.add_door(rect, (left, right))
            elif inner.via is host:
                inner.via = None
                self._hall_door(inner)

    def _partition_door(self, left: _Room, right: _Room, wall: tuple) -> Rect | None:
        """A place for a door in the partition between two neighbours: the one nearest the hall
        (after a small random offset) whose clear zones are free, or None."""
        x_p, ya, yb, north = wall
        rng, ti = self.rng, self.ti
        dw = _mm(rng, 800, 900)
        offsets = _rotated(list(range(0, (yb - ya) - 300 - dw + 1, 50)), rng, first=6)
        near = self.near((x_p - DOOR_CLEAR_DEPTH_MM, ya, x_p + ti + DOOR_CLEAR_DEPTH_MM, yb))
        for off in offsets:
            y = yb - 150 - dw - off if north else ya + 150 + off
            rect = (x_p, y, x_p + ti, y + dw)
            if near.door_fits(rect, (left, right)):
                return rect
        return None

    def _split_corridor(self) -> None:
        """Now and then part the corridor with a door across it, an entrance hall and an inner hall,
        where the cross wall meets no door's clear zone and each part is long enough."""
        if self.corridor is None or self.rng.random() >= SECOND_CORRIDOR_SHARE:
            return
        rng, ti = self.rng, self.ti
        x0, y0, x1, y1 = self.corridor.rect
        dw = _mm(rng, 800, min(900, y1 - y0 - 300))
        p = _mm(rng, 150, y1 - y0 - 150 - dw)
        near = self.near(self.corridor.rect)  # the cross wall and its door's clear zones lie in it
        for x in _rotated(list(range(x0 + MIN_CORRIDOR_PART, x1 - MIN_CORRIDOR_PART - ti + 1, 50)), rng):
            cross, door = (x, y0, x + ti, y1), (x, y0 + p, x + ti, y0 + p + dw)
            if not near.in_door_zone(cross) and not near.blocked(cross) and near.door_fits(door, (self.corridor,)):
                inner = self.corridor
                i = next(i for i, e in enumerate(self.elements) if e[0] == AREA and e[3] == inner.area)
                inner.rect = (x0, y0, x, y1)
                self.elements[i] = (AREA, inner.subtype, inner.rect, inner.area)
                hall = _Room("corridor", "CORRIDOR", rect=(x + ti, y0, x1, y1), side="S")
                self.add_area(hall)
                self.add(SEPARATOR, "WALL", cross)
                self.add_door(door, (inner, hall))
                return

    # windows
    def _windows(self, r: _Room, widths: list[int], lo: int = 0, hi: int | None = None) -> None:
        """Windows of ``widths`` on the room's exterior (far) wall, between ``lo`` and ``hi`` along
        it (default: all of it), dropping the widest-last ones that do not fit."""
        hi = r.w if hi is None else hi
        while widths:
            starts = _place_along(self.rng, hi - lo, widths)
            if starts is not None:
                for s, w in zip(starts, widths):
                    self.add(OPENING, "WINDOW", r.map(lo + s, r.d, lo + s + w, r.d + self.te))
                return
            widths = widths[:-1]

    def _wall_window(self, room: _Room, wall: Rect) -> None:
        """One window in ``wall`` (a stretch of the room's exterior wall) where no opening is, no
        door's clear zone reaches and nothing stands in the 0.6 m before it; none if none fits."""
        rng = self.rng
        x0, y0, x1, y1 = wall
        along_x = x1 - x0 >= y1 - y0
        r = room.rect
        lo, hi = (max(x0, r[0]), min(x1, r[2])) if along_x else (max(y0, r[1]), min(y1, r[3]))
        lo, hi = lo + 200, hi - 200
        if hi - lo < 1000:
            return
        width = _mm(rng, 1000, min(1600, hi - lo))
        near = self.near((x0 - 600, y0 - 600, x1 + 600, y1 + 600))
        for s in _rotated(list(range(lo, hi - width + 1, 50)), rng):
            rect = (s, y0, s + width, y1) if along_x else (x0, s, x1, s + width)
            if any(overlaps(rect, o) for o in near.openings):
                continue
            if not near.in_door_zone(rect) and not near.blocked(_front(rect, r, 600)):
                self.add(OPENING, "WINDOW", rect)
                return

    def _extra_windows(self) -> None:
        """Windows a plain rectangle would not have: in the gable of a corner unit, in the
        corridor's facade (a long unit, or along a recess), in a recess's faces."""
        te, ti, D = self.te, self.ti, self.D
        rng = self.rng
        if self.corner:
            for r in self.rooms:
                if r.kind in WINDOWED and r.rect[0] == 0 and rng.random() < GABLE_WINDOW_SHARE:
                    self._wall_window(r, (-te, r.rect[1], 0, r.rect[3]))
        halls = [r for r in self.rooms if r.kind == "corridor"]
        if self.shape == "long":
            for r in halls:
                self._wall_window(r, (r.rect[0], D, r.rect[2], D + te))
        notch = self._notch_span()
        if notch is None:
            return
        x_l, x_r = notch
        top = self.y_n - ti
        for r in halls:
            self._wall_window(r, (x_l, top, x_r if x_r is not None else self.W, top + te))
        for r in self.bands["N"]:
            if r.kind in WINDOWED and rng.random() < GABLE_WINDOW_SHARE:
                if r.rect[2] == x_l:
                    self._wall_window(r, (x_l, top + te, x_l + te, D))
                elif x_r is not None and r.rect[0] == x_r:
                    self._wall_window(r, (x_r - te, top + te, x_r, D))

    # fit-out
    def _fit_out(self, r: _Room) -> None:
        rng = self.rng
        k = r.kind
        w, d = r.w, r.d
        if k == "bed":
            if w * d >= BUILT_IN_MIN_AREA and rng.random() < 0.4:
                length = _mm(rng, 1200, min(2400, d - 1000))
                self.feature(r, "BUILT_IN_FURNITURE", 0, 900, COUNTER_DEPTH, 900 + length)
            n = 2 if w >= 4200 and rng.random() < 0.4 else 1
            if not self._room_outdoor(r):
                self._windows(r, [_mm(rng, 1000, min(2500, (w - 550) // n - 150)) for _ in range(n)])
        elif k == "office" and self._room_outdoor(r):
            pass
        elif k in ("office", "dining"):
            self._windows(r, [_mm(rng, 1000, min(2000, w - 700))])
        elif k == "bath":
            self._fit_bathroom(r)
        elif k == "wc":
            self.feature(r, "TOILET", 0, d - 500, 700, d - 100)
            self.feature(r, "SINK", 0, d - 1250, 450, d - 650)
            if rng.random() < 0.5:
                self._windows(r, [_mm(rng, 1000, max(1000, w - 400))])
        elif k in ("kitchen", "kitchen_dining"):
            self._fit_kitchen(r)
        elif k == "laundry":
            self.feature(r, "WASHING_MACHINE", 100, d - 600, 700, d)
            if rng.random() < 0.5:
                self._windows(r, [_mm(rng, 1000, min(1400, w - 400))])
        elif k == "store":
            if rng.random() < 0.5:
                self.feature(r, "BUILT_IN_FURNITURE", 0, d - 400, w, d)
        # living rooms get their windows with the outdoor space (:meth:`_outdoor`)

    def _fit_bathroom(self, r: _Room) -> None:
        rng = self.rng
        w, d = r.w, r.d
        first = not any(x.kind == "bath" and x.features for x in self.rooms)
        tub = rng.random() < (0.6 if first else 0.2)
        shower = not tub or (w >= 2600 and rng.random() < 0.5)
        left_depth = 900
        right_depth = 0
        if tub:
            self.feature(r, "BATHTUB", 0, d - 750, 1700, d)
            left_depth = 750
            right_depth = 750 if w - 600 < 1700 else 0
            if shower:
                self.feature(r, "SHOWER", w - 900, d - 900, w, d)
                right_depth = 900
        else:
            self.feature(r, "SHOWER", 0, d - 900, 900, d)
            right_depth = 900 if w - 600 < 900 else 0
        vt = d - left_depth - 100 - 400
        self.feature(r, "TOILET", 0, vt, 700, vt + 400)
        vs = vt - 150 - 600
        self.feature(r, "SINK", 0, vs, 450, vs + 600)
        if first and not self.laundry and rng.random() < 0.35:
            vw = d - max(right_depth, 0) - 100 - 600 if right_depth else d - 600
            if vw >= DOOR_CLEAR_DEPTH_MM:
                self.feature(r, "WASHING_MACHINE", w - 600, vw, w, vw + 600)
        if rng.random() < 0.6:
            self._windows(r, [_mm(rng, 1000, min(1400, w - 400))])

    def _fit_kitchen(self, r: _Room) -> None:
        """A counter along the exterior wall with the sink on it (and sometimes a second leg), the
        window over the counter, and beside it the fridge's place with its floor kept free."""
        rng = self.rng
        w, d = r.w, r.d
        fw, fd, front = fridge_mm()
        lx = _mm(rng, 1800, min(3600, w - fw - 300))
        self.feature(r, "KITCHEN", 0, d - COUNTER_DEPTH, lx, d)
        if not r.open_to_living and rng.random() < 0.4:
            ly = _mm(rng, 1200, min(2000, d - COUNTER_DEPTH - 1000))
            self.feature(r, "KITCHEN", 0, d - COUNTER_DEPTH - ly, COUNTER_DEPTH, d - COUNTER_DEPTH)
        s = _mm(rng, 100, lx - 700)
        self.feature(r, "SINK", s, d - 550, s + 600, d - 50)
        self.reserved.append(r.map(lx, d - fd - front, min(w, lx + fw + 200), d))
        self._windows(r, [_mm(rng, 1000, min(1800, lx - 400))], 0, lx)

    def _outdoor(self) -> None:
        """The living room's outdoor space (most have one), with its door and windows beside it
        on the exterior wall; or just windows there."""
        rng = self.rng
        r = self.living
        if self.ground:
            kind = rng.choices(("GARDEN", "TERRACE", "BALCONY", ""), (0.45, 0.3, 0.15, 0.1))[0]
        else:
            kind = rng.choices(("BALCONY", "LOGGIA", "TERRACE", ""), (0.55, 0.2, 0.1, 0.15))[0]
        w = r.w
        if not kind:
            self._windows(r, [_mm(rng, 1200, 2500), _mm(rng, 1000, 2000)])
            return
        if kind == "GARDEN":
            ow, depth = w, _mm(rng, 4000, 8000, 100)
        elif kind == "TERRACE":
            ow, depth = _mm(rng, min(w, 4000), w), _mm(rng, 2500, 4000, 50)
        else:
            ow, depth = _mm(rng, 2800, min(w, 5000)), _mm(rng, 1500, 2400, 50)
        a = _mm(rng, 0, w - ow)
        dw = _mm(rng, 800, 900)
        du = _mm(rng, max(a + 200, 300), min(a + ow - 200, w - 300) - dw)
        self._outdoor_space(r, kind, (a, ow, depth), (du, dw))

    def _room_outdoor(self, r: _Room) -> bool:
        """Sometimes a bedroom or office has an outdoor space of its own (:data:`ROOM_OUTDOOR_SHARE`),
        0.3 m in from the room's sides so it keeps clear of its neighbours'; its door goes where its
        clear zone is free. Whether it got one."""
        rng = self.rng
        w, d = r.w, r.d
        if w < 3000 or w * d < BUILT_IN_MIN_AREA or rng.random() >= ROOM_OUTDOOR_SHARE:
            return False
        kind = rng.choice(("TERRACE", "GARDEN")) if self.ground else rng.choices(("BALCONY", "LOGGIA"), (0.8, 0.2))[0]
        ow = _mm(rng, 2000, min(w - 600, 3500))
        depth = _mm(rng, 3000, 6000, 100) if kind == "GARDEN" else _mm(rng, 1200, 2000, 50)
        a = _mm(rng, 300, w - 300 - ow)
        dw = _mm(rng, 800, 900)
        out = r.map(a, d + self.te, a + ow, d + self.te + depth)
        probe = _Room("outdoor", kind, rect=out)
        c = DOOR_CLEAR_DEPTH_MM
        near = self.near(r.map(a, d - c, a + ow, d + self.te + c))
        for du in _rotated(list(range(a + 200, a + ow - 200 - dw + 1, 50)), rng):
            if near.door_fits(r.map(du, d, du + dw, d + self.te), (r, probe)):
                self._outdoor_space(r, kind, (a, ow, depth), (du, dw))
                return True
        return False

    def _outdoor_space(self, r: _Room, kind: str, span: tuple[int, int, int], door: tuple[int, int]) -> None:
        """An outdoor space of ``kind`` beyond the room's exterior wall (``span`` = its start along
        the wall, width and depth), the door to it (start, width) and windows beside the door."""
        rng, te = self.rng, self.te
        a, ow, depth = span
        du, dw = door
        w, d = r.w, r.d
        v0, v1 = d + te, d + te + depth
        out = _Room("outdoor", kind, rect=r.map(a, v0, a + ow, v1))
        self.add_area(out)
        self.add_door(r.map(du, d, du + dw, d + te), (r, out))
        # windows beside the door, in whichever stretch of the wall has room
        left, right = du - 150, w - (du + dw + 150)
        for start, length in ((0, left), (du + dw + 150, right)):
            if length >= 1000 + 200 and rng.random() < 0.8:
                ww = _mm(rng, 1000, min(2500, length - 200))
                s = start + (200 if start == 0 else 0) + _mm(rng, 0, length - 200 - ww)
                s = min(s, start + length - ww - (200 if start else 0))
                self.add(OPENING, "WINDOW", r.map(s, d, s + ww, d + te))
        if kind != "GARDEN":
            self._enclose(r, kind, a, ow, v0, v1)

    def _enclose(self, r: _Room, kind: str, a: int, ow: int, v0: int, v1: int) -> None:
        """The railings, walls or columns round an outdoor space ``ow`` wide from ``v0`` to ``v1``."""
        t = 50
        self.add(SEPARATOR, "RAILING", r.map(a, v1, a + ow, v1 + t))
        if kind == "LOGGIA":
            self.add(SEPARATOR, "WALL", r.map(a - 200, v0, a, v1 + t))
            self.add(SEPARATOR, "WALL", r.map(a + ow, v0, a + ow + 200, v1 + t))
            return
        self.add(SEPARATOR, "RAILING", r.map(a - t, v0, a, v1))
        self.add(SEPARATOR, "RAILING", r.map(a + ow, v0, a + ow + t, v1))
        if kind == "TERRACE":
            self.add(SEPARATOR, "COLUMN", r.map(a - 250, v1, a, v1 + 250))
            self.add(SEPARATOR, "COLUMN", r.map(a + ow, v1, a + ow + 250, v1 + 250))
        else:
            self.add(SEPARATOR, "RAILING", r.map(a - t, v1, a, v1 + t))
            self.add(SEPARATOR, "RAILING", r.map(a + ow, v1, a + ow + t, v1 + t))


def bedrooms(rng: random.Random) -> int:
    """A bedroom count, 1–5."""
    return rng.choices((1, 2, 3, 4, 5), (0.18, 0.3, 0.3, 0.16, 0.06))[0]


def apartment(rng: random.Random, ground: bool, corner: bool = False) -> _Apartment:
    """One apartment; ``ground`` (on the ground floor: gardens, terraces), ``corner`` (at the end
    of a row: windows in the gable too)."""
    return _Layout(rng, bedrooms(rng), ground, corner).build()
