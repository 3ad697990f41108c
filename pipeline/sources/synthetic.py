"""Synthetic apartments in the Swiss Dwellings v3 ``geometries.csv`` format.

:func:`generate` writes a file with the 13 Swiss Dwellings v3 columns
(SPEC.md §1) holding ``plans`` apartments spread over ``sites`` sites. The
same arguments always give the same bytes.

What a file holds
-----------------
* **Apartments.** Each apartment is a rectangle of clear floor inside exterior
  walls, laid out as two bands of rooms on either side of a corridor; the
  living room either sits in a band or takes the whole depth at one end. Half
  of the one- and two-bedroom flats have no corridor: the living room runs the
  whole length and the other rooms open off it.
  Bedrooms (``ROOM`` or ``BEDROOM``), a ``LIVING_ROOM`` or ``LIVING_DINING``,
  a closed ``KITCHEN`` or a ``KITCHEN_DINING`` (sometimes open to the living
  room, with no wall between them), one or two ``BATHROOM`` s, a ``CORRIDOR``,
  sometimes a ``STOREROOM`` or ``WASH_AND_DRY_ROOM``, and mostly one outdoor
  space (``BALCONY``, ``LOGGIA``, ``TERRACE``, ``GARDEN``) off the living room.
  Room order, band depths (so the corridor's position), door sides and the
  outdoor space vary per apartment; whole apartments are mirrored, and whole
  buildings mirrored and turned by quarter turns at each site.
* **Elements.** Walls are separate ``WALL`` polygons split into segments at
  room boundaries (exterior 0.25–0.35 m, interior 0.10–0.15 m thick); spaces
  are the clear floor between wall faces. Doors and windows are rectangles
  through the wall thickness. Features (counter, sink, bath fittings,
  built-in cupboards, washing machines) carry the ``area_id`` of their space.
* **Sites, buildings, floors.** A pool of floor templates (each 1–4
  apartments in a row) is drawn as the file is written, and about a third of
  the floors reuse a template already drawn, so several sites share building
  shapes up to translation (and mirroring or quarter turns). Plans per site
  follow a skewed (log-normal) spread: many sites with a few plans, some with
  many.

Counting plans
--------------
Each floor has its own ``floor_id`` and its own ``plan_id``, except that about
a fifth of upper-floor layouts are repeated on one or two floors above, with the
*same* ``plan_id`` and identical geometry (as real data repeats typical
floors). ``plans`` counts apartments on the lowest floor of each ``plan_id``
only: an ingest that collapses floors sharing a ``plan_id`` onto the lowest
one keeps exactly ``plans`` plans. Apartments of repeated floors are extra
rows beyond that (new ``floor_id``, ``apartment_id``, ``unit_id`` and
``area_id`` values, same geometry).

Columns
-------
``apartment_id`` is md5 of ``synthetic:{seed}:{site_id}:{floor_id}:{n}`` (n =
the apartment's place on its floor); all other ids are integers counted from
1 and unique across the file; ``area_id`` is set on area rows and on feature
rows (the containing area) and empty on separators and openings.
``elevation`` is absolute: the floor's elevation (floor index × 2.9 m) plus
the element's own height above the floor (window sill 0.5 m, sink 0.6 m,
everything else 0); ``height`` is the element's own height (SPEC.md §1).

Defects
-------
With probability ``defect_rate`` a plan carries exactly one defect; the kinds
are dealt from a shuffled deck of the five, so they come out evenly (counts
differ by at most one per deck). Every defect leaves the rest of the plan
valid. The sidecar ``<stem>.defects.csv`` (columns ``plan,defect,element``)
lists every emitted plan that carries one, repeated floors included;
``GenerationReport.defects`` counts the ``plans`` lowest-floor plans only.
``element`` names the culprit the way :mod:`homeloop.plan` does: an area id
(several joined by ``;``) or ``element_id(kind, line)`` with ``line`` the
1-based line of the row in the CSV (header = line 1).

* ``blocked_doorway`` — either a ``BUILT_IN_FURNITURE`` block 0.5 m deep, as
  wide as the door plus 0.1 m each side, starting 0.1 m from the door's face
  inside a bedroom (element = the furniture), or a bedroom door narrowed to
  0.55 m (element = the door).
* ``no_shower_or_bath`` — every ``SHOWER`` and ``BATHTUB`` removed; toilets
  and sinks stay (element = the bathroom area ids).
* ``no_fridge_space`` — 0.6 m deep counters and cupboards along every edge of
  the kitchen space except the door's clear zone, which they keep 0.1 m clear
  of sideways; no 0.6 m wide stretch of wall is left free (element = the
  kitchen area id).
* ``unreachable_space`` — the only door of a storeroom (or a bedroom, when
  there is no storeroom) removed (element = that area id).
* ``invalid_geometry`` — a bedroom polygon redrawn as a bow-tie (its ring
  visits the rectangle's corners in crossing order): valid WKT, invalid
  polygon (element = that area id).

Guarantees of defect-free plans
-------------------------------
Spaces do not overlap; every door opens into exactly two spaces; the single
``ENTRANCE_DOOR`` (0.9–1.0 m, at least 0.1 m from a wall corner) leads from
outside into the corridor, or into the living room of a flat without one;
every indoor space is reachable from it. Doors are 0.8–0.9 m wide and at
least 0.15 m from a wall corner. Each door's clear zone, the door-wide rectangle
reaching :data:`DOOR_CLEAR_DEPTH_MM` from each face, is free of features,
columns, railings, other openings and walls other than the door's own. Each
kitchen has a counter 1.8–3.6 m long along its outer wall with a sink on it,
and beside the counter a free 0.8 m stretch of that wall with 1.65 m (0.65 m
fridge depth plus 1.0 m) of clear floor in front, outside every door's clear
zone. Features lie inside their space.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

from homeloop.io import atomic_path
from homeloop.plan import DOOR_CLEAR_DEPTH, SWISS_DWELLINGS_COLUMNS, element_id, plan_key

COLUMNS = SWISS_DWELLINGS_COLUMNS

BLOCKED_DOORWAY = "blocked_doorway"
NO_SHOWER_OR_BATH = "no_shower_or_bath"
NO_FRIDGE_SPACE = "no_fridge_space"
UNREACHABLE_SPACE = "unreachable_space"
INVALID_GEOMETRY = "invalid_geometry"
#: The defect kinds a plan may carry, one at most.
DEFECT_KINDS = (BLOCKED_DOORWAY, NO_SHOWER_OR_BATH, NO_FRIDGE_SPACE, UNREACHABLE_SPACE, INVALID_GEOMETRY)

#: Default share of plans with a defect: ~600 of ~3,400 rejected (SPEC.md §1).
DEFAULT_DEFECT_RATE = 600 / 3400

# All lengths below are integer millimetres; coordinates are written in metres.

#: Storey height (mm): floor n sits at n × 2.9 m.
STOREY_HEIGHT = 2900
#: Depth (mm) of a door's clear zone on each face, kept free in valid plans.
DOOR_CLEAR_DEPTH_MM = round(DOOR_CLEAR_DEPTH * 1000)
#: Width (mm) of a door narrowed by a ``blocked_doorway`` defect (below 0.6 m).
NARROW_DOOR_WIDTH = 550


def fridge_mm() -> tuple[int, int, int]:
    """Width, depth and front clearance (mm) of the catalog's fridge, which a valid
    kitchen leaves room for (catalog/furniture.yaml: 600, 650, 1000)."""
    from homeloop.catalog import load_catalog

    fridge = load_catalog().fridge
    return tuple(round(v * 1000) for v in (fridge.dimensions.width, fridge.dimensions.depth,
                                           fridge.clearance_front))  # type: ignore[return-value]


#: Kitchen counter depth (mm).
COUNTER_DEPTH = 600
#: Share of floors that reuse a floor template already drawn.
TEMPLATE_REUSE = 0.35
#: Share of upper-floor layouts repeated on one or two floors above with the same plan_id.
REPEATED_FLOOR_SHARE = 0.2
#: Floor templates kept per (apartments per floor, ground floor) for reuse; a new
#: template replaces a random kept one once this many are kept, so memory stays
#: flat however many plans are written.
TEMPLATE_POOL_SIZE = 64

# (elevation above the floor, height) in mm of each element kind (SPEC.md §1).
_LEVELS = {
    "area": (0, 2600),
    "WALL": (0, 2600),
    "COLUMN": (0, 2600),
    "RAILING": (0, 1000),
    "DOOR": (0, 2000),
    "ENTRANCE_DOOR": (0, 2000),
    "WINDOW": (500, 1900),
    "KITCHEN": (0, 900),
    "SINK": (600, 250),
    "BATHTUB": (0, 600),
    "SHOWER": (0, 2000),
    "TOILET": (0, 400),
    "WASHING_MACHINE": (0, 1300),
    "BUILT_IN_FURNITURE": (0, 2000),
}

AREA, SEPARATOR, OPENING, FEATURE = "area", "separator", "opening", "feature"


@dataclass(frozen=True)
class GenerationReport:
    """What :func:`generate` wrote."""

    path: Path
    plans: int
    sites: int
    rows: int
    defects: dict[str, int]


# --- apartments ------------------------------------------------------------------

# An element: (entity_type, subtype, geometry, area index or -1).
# geometry is a rectangle (x0, y0, x1, y1) with x0 < x1, y0 < y1, or a list of
# (x, y) ring vertices without the closing vertex.
Element = tuple


@dataclass
class _Room:
    """A space being laid out, with the frame its fittings are placed in.

    Fittings are placed in a room frame: ``u`` runs along the door wall,
    ``v`` from the door wall (v = 0) to the opposite, exterior wall (v = d).
    ``side`` says which side of ``rect`` the door wall is on; ``flip``
    reverses ``u``.
    """

    kind: str  # programme role: bed, bath, kitchen, kitchen_dining, living, store, laundry
    subtype: str
    width: int = 0
    rect: tuple[int, int, int, int] = (0, 0, 0, 0)
    side: str = "N"
    flip: bool = False
    area: int = -1
    door: int | None = None  # element index of its door
    door_u: tuple[int, int] | None = None
    open_to_living: bool = False
    has_door: bool = True
    features: list[int] = field(default_factory=list)

    @property
    def w(self) -> int:
        x0, y0, x1, y1 = self.rect
        return x1 - x0 if self.side in "NS" else y1 - y0

    @property
    def d(self) -> int:
        x0, y0, x1, y1 = self.rect
        return y1 - y0 if self.side in "NS" else x1 - x0

    def map(self, u0: int, v0: int, u1: int, v1: int) -> tuple[int, int, int, int]:
        """A rectangle in the room frame, in apartment coordinates."""
        x0, y0, x1, y1 = self.rect
        if self.side in "NS":
            xa, xb = (x1 - u1, x1 - u0) if self.flip else (x0 + u0, x0 + u1)
            ya, yb = (y0 + v0, y0 + v1) if self.side == "S" else (y1 - v1, y1 - v0)
        else:
            ya, yb = (y1 - u1, y1 - u0) if self.flip else (y0 + u0, y0 + u1)
            xa, xb = (x0 + v0, x0 + v1) if self.side == "W" else (x1 - v1, x1 - v0)
        return (xa, ya, xb, yb)


@dataclass
class _Apartment:
    """One apartment in its own frame: elements plus what defects need to know."""

    elements: list[Element]
    rooms: list[_Room]
    bbox: tuple[int, int, int, int]


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


class _Layout:
    """Lays out one apartment: rooms, walls, openings, features, outdoor space."""

    def __init__(self, rng: random.Random, bedrooms: int, ground: bool):
        self.rng = rng
        self.bedrooms = bedrooms
        self.ground = ground
        self.elements: list[Element] = []
        self.rooms: list[_Room] = []
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

    # programme
    def build(self) -> _Apartment:
        """Draw the programme, lay its rooms out in a south and a north band along the
        corridor, then draw spaces, walls, doors, fit-out and outdoor space."""
        others = self._programme()
        self._place_rooms(others)
        self._balance_bands()
        self._spaces()
        self._walls()
        self._doors()
        for room in self.rooms:
            self._fit_out(room)
        self._outdoor()
        self._split_long_walls()
        xs = [g[0] for _, _, g, _ in self.elements] + [g[2] for _, _, g, _ in self.elements]
        ys = [g[1] for _, _, g, _ in self.elements] + [g[3] for _, _, g, _ in self.elements]
        return _Apartment(self.elements, self.rooms, (min(xs), min(ys), max(xs), max(ys)))

    def _programme(self) -> list[_Room]:
        """Draw the wall thicknesses, corridor, band depths and rooms; the living block goes
        into a band (``self.bands``), the other rooms are returned to be placed."""
        rng = self.rng
        small = self.small = self.bedrooms <= 2
        te, ti = _mm(rng, 250, 350), _mm(rng, 100, 150)
        # Small flats often have no corridor: the living room is the hall.
        hall = small and rng.random() < 0.5
        c = 0 if hall else _mm(rng, 1200, 1500, 50)
        top = 3800 if small else 4200
        ds, dn = _mm(rng, 3000, top, 50), _mm(rng, 3000, top, 50)

        style = rng.choices(("closed", "kitchen_dining", "living_dining"), (0.45, 0.35, 0.2))[0]
        living = _Room("living", "LIVING_DINING" if style == "living_dining" else "LIVING_ROOM")
        kitchen = _Room(
            "kitchen_dining" if style == "kitchen_dining" else "kitchen",
            "KITCHEN_DINING" if style == "kitchen_dining" else "KITCHEN",
        )
        kitchen.open_to_living = style == "kitchen_dining" and not hall and rng.random() < 0.6
        if kitchen.open_to_living:
            kitchen.has_door = rng.random() < 0.5
        self.living, self.kitchen, self.hall = living, kitchen, hall
        self.te, self.ti, self.c = te, ti, c
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

    def _other_rooms(self) -> list[_Room]:
        """The bedrooms, bathrooms, and maybe a laundry and a storeroom."""
        rng = self.rng
        bed_sub = rng.choice(("ROOM", "ROOM", "BEDROOM", "mixed"))
        others: list[_Room] = []
        for _ in range(self.bedrooms):
            sub = bed_sub if bed_sub != "mixed" else rng.choice(("ROOM", "BEDROOM"))
            others.append(_Room("bed", sub))
        baths = 1 if self.bedrooms <= 2 else (2 if self.bedrooms >= 5 or rng.random() < 0.6 else 1)
        for _ in range(baths):
            others.append(_Room("bath", "BATHROOM"))
        self.laundry = not self.small and rng.random() < 0.15
        if self.laundry:
            others.append(_Room("laundry", "WASH_AND_DRY_ROOM"))
        if rng.random() < (0.1 if self.small else 0.25):
            others.append(_Room("store", "STOREROOM"))
        return others

    def _living_block(self, others: list[_Room]) -> None:
        """Put the living room (with an open kitchen) in a band, or in a section of its own
        across both bands (``self.lw`` wide); a closed kitchen joins ``others``."""
        rng, living, kitchen = self.rng, self.living, self.kitchen
        self.bands: dict[str, list[_Room]] = {"S": [], "N": []}
        self.lw = 0
        if self.hall:
            self.bands["S"].append(living)
            others.append(kitchen)
        elif self.section:
            area = _mm(rng, 22_000, 40_000, 500) * 1000
            self.lw = max(3200, min(5000, (area // self.D) // 10 * 10))
            if kitchen.open_to_living:
                self.bands[rng.choice("SN")].append(kitchen)
            else:
                others.append(kitchen)
        else:
            block = [living, kitchen] if kitchen.open_to_living else [living]
            if kitchen.open_to_living:
                rng.shuffle(block)
            else:
                others.append(kitchen)
            self.bands[rng.choice("SN")].extend(block)

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
        """Longest rooms first, each to the shorter band, at a random place in it; an empty
        band gets a storeroom."""
        bands, depths = self.bands, self.depths
        if not self.hall:
            for b in "SN":
                for r in bands[b]:
                    r.width = self._width(r, depths[b])
        mean_depth = (self.ds + self.dn) // 2
        for r in others:
            r.width = self._width(r, mean_depth)
        others.sort(key=lambda r: -r.width)
        for r in others:
            if self.hall:
                b = "N"
            else:
                lens = {b: self._band_len(b) for b in "SN"}
                b = min("SN", key=lambda k: (lens[k], k))
            r.width = self._width(r, depths[b])
            bands[b].insert(self._insert_pos(bands[b]), r)
        if self.hall:
            self._fit_hall_living()
        for b in "SN":
            if not bands[b]:
                bands[b].append(_Room("store", "STOREROOM", width=_mm(self.rng, 1200, 1800)))

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
        then all of them alike."""
        rng, ti, bands, depths = self.rng, self.ti, self.bands, self.depths
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
        ti, ds, c, W, D = self.ti, self.ds, self.c, self.W, self.D
        self.cy0, self.cy1 = ds + ti, ds + ti + c
        y_n = self.y_n = ds + ti if self.hall else ds + 2 * ti + c
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
            x = self._band_start(b, rooms)
            y0, y1 = (0, ds) if b == "S" else (y_n, D)
            for i, r in enumerate(rooms):
                r.rect = (x, y0, x + r.width, y1)
                r.side = "N" if b == "S" else "S"
                r.flip = self.rng.random() < 0.5
                x += r.width
                if i + 1 < len(rooms) and not self._open_pair(r, rooms[i + 1]):
                    x += ti
                self.add_area(r)
        if self.corridor is not None:
            self.add_area(self.corridor)

    def _walls(self) -> None:
        te, ti, ds, c, W, D = self.te, self.ti, self.ds, self.c, self.W, self.D
        y_n = self.y_n
        wall = lambda *g: self.add(SEPARATOR, "WALL", g)  # noqa: E731
        # exterior: south and north split at the band's room boundaries
        for b, (ya, yb) in (("S", (-te, 0)), ("N", (D, D + te))):
            cuts = [r.rect[2] for r in self.bands[b][:-1]]
            if self.lw:
                cuts.insert(0, self.lw)
            xs = [-te] + sorted(set(cuts)) + [W + te]
            for xa, xb in zip(xs, xs[1:]):
                wall(xa, ya, xb, yb)
        for xa, xb in ((-te, 0), (W, W + te)):
            for ya, yb in ((0, ds), (ds, y_n), (y_n, D)):
                wall(xa, ya, xb, yb)
        # corridor walls (or the one wall between the bands), split at the room boundaries
        x_c = self.corridor.rect[0] if self.corridor else 0
        spine = (("N", (ds, ds + ti)),) if self.hall else (("S", (ds, ds + ti)), ("N", (ds + ti + c, y_n)))
        for b, (ya, yb) in spine:
            cuts = sorted({r.rect[2] for r in self.bands[b][:-1] if x_c < r.rect[2] < W})
            xs = [x_c] + cuts + [W]
            for xa, xb in zip(xs, xs[1:]):
                wall(xa, ya, xb, yb)
        # partitions between rooms of a band
        for b, (ya, yb) in (("S", (0, ds)), ("N", (y_n, D))):
            rooms = self.bands[b]
            for r, nxt in zip(rooms, rooms[1:]):
                if not self._open_pair(r, nxt):
                    wall(r.rect[2], ya, r.rect[2] + ti, yb)
        # the living section's inner wall
        if self.lw:
            pieces = [
                (0, ds, "S"), (ds, ds + ti, ""), (ds + ti, ds + ti + c, ""), (ds + ti + c, y_n, ""), (y_n, D, "N")
            ]
            for ya, yb, b in pieces:
                if b and self.bands[b][0].open_to_living:
                    continue
                wall(self.lw, ya, self.lw + ti, yb)

    def _doors(self) -> None:
        rng, ti, te = self.rng, self.ti, self.te
        for r in self.rooms:
            if r.kind in ("corridor",) or (r.kind == "living" and (self.lw or self.hall)) or not r.has_door:
                continue
            dw = _mm(rng, 800, min(900, r.w - 300))
            lo = 300 if r.w - dw - 300 >= 300 else 150
            off = _mm(rng, lo, min(500, r.w - dw - 150))
            r.door_u = (r.w - off - dw, r.w - off)
            r.door = self.add(OPENING, "DOOR", r.map(r.door_u[0], -ti, r.door_u[1], 0))
        if self.lw:
            dw = _mm(rng, 800, 900)
            y0 = self.cy0 + _mm(rng, 150, self.c - 150 - dw)
            self.living.door_u = (y0, y0 + dw)
            self.living.door = self.add(OPENING, "DOOR", (self.lw, y0, self.lw + ti, y0 + dw))
        de = _mm(rng, 900, 1000)
        if self.hall:  # into the living room, clear of its corners
            y0 = _mm(rng, 300, self.ds - 300 - de)
        else:
            y0 = self.cy0 + _mm(rng, 100, self.c - 100 - de)
        self.add(OPENING, "ENTRANCE_DOOR", (self.W, y0, self.W + te, y0 + de))

    def _windows(self, r: _Room, widths: list[int]) -> None:
        """Windows of ``widths`` on the room's exterior (far) wall, dropping
        the widest-last ones that do not fit."""
        while widths:
            starts = _place_along(self.rng, r.w, widths)
            if starts is not None:
                for s, w in zip(starts, widths):
                    self.add(OPENING, "WINDOW", r.map(s, r.d, s + w, r.d + self.te))
                return
            widths = widths[:-1]

    def _fit_out(self, r: _Room) -> None:
        rng = self.rng
        k = r.kind
        w, d = r.w, r.d
        if k == "bed":
            if rng.random() < 0.4:
                length = _mm(rng, 1200, min(2400, d - 1000))
                self.feature(r, "BUILT_IN_FURNITURE", 0, 900, COUNTER_DEPTH, 900 + length)
            n = 2 if w >= 4200 and rng.random() < 0.4 else 1
            self._windows(r, [_mm(rng, 1000, min(2500, (w - 550) // n - 150)) for _ in range(n)])
        elif k == "bath":
            self._fit_bathroom(r)
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
        rng = self.rng
        w, d = r.w, r.d
        lx = _mm(rng, 1800, min(3600, w - fridge_mm()[0] - 300))
        self.feature(r, "KITCHEN", 0, d - COUNTER_DEPTH, lx, d)
        if not r.open_to_living and rng.random() < 0.4:
            ly = _mm(rng, 1200, min(2000, d - COUNTER_DEPTH - 1000))
            self.feature(r, "KITCHEN", 0, d - COUNTER_DEPTH - ly, COUNTER_DEPTH, d - COUNTER_DEPTH)
        s = _mm(rng, 100, lx - 700)
        self.feature(r, "SINK", s, d - 550, s + 600, d - 50)
        self._windows(r, [_mm(rng, 1000, min(1800, w - 400))])

    def _outdoor(self) -> None:
        rng, te = self.rng, self.te
        r = self.living
        if self.ground:
            kind = rng.choices(("GARDEN", "TERRACE", "BALCONY", ""), (0.45, 0.3, 0.15, 0.1))[0]
        else:
            kind = rng.choices(("BALCONY", "LOGGIA", "TERRACE", ""), (0.55, 0.2, 0.1, 0.15))[0]
        w, d = r.w, r.d
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
        lo, hi = max(a + 200, 300), min(a + ow - 200, w - 300) - dw
        du = _mm(rng, lo, hi)
        v0, v1 = d + te, d + te + depth
        out = _Room("outdoor", kind, rect=r.map(a, v0, a + ow, v1))
        self.add_area(out)
        self.add(OPENING, "DOOR", r.map(du, d, du + dw, d + te))
        # windows beside the door, in whichever stretch of the wall has room
        left, right = du - 150, w - (du + dw + 150)
        for start, length in ((0, left), (du + dw + 150, right)):
            if length >= 1000 + 200 and rng.random() < 0.8:
                ww = _mm(rng, 1000, min(2500, length - 200))
                s = start + (200 if start == 0 else 0) + _mm(rng, 0, length - 200 - ww)
                s = min(s, start + length - ww - (200 if start else 0))
                self.add(OPENING, "WINDOW", r.map(s, d, s + ww, d + te))
        if kind == "GARDEN":
            return
        t = 50
        self.add(SEPARATOR, "RAILING", r.map(a, v1, a + ow, v1 + t))
        if kind == "LOGGIA":
            self.add(SEPARATOR, "WALL", r.map(a - 200, v0, a, v1 + t))
            self.add(SEPARATOR, "WALL", r.map(a + ow, v0, a + ow + 200, v1 + t))
        else:
            self.add(SEPARATOR, "RAILING", r.map(a - t, v0, a, v1))
            self.add(SEPARATOR, "RAILING", r.map(a + ow, v0, a + ow + t, v1))
            if kind == "TERRACE":
                self.add(SEPARATOR, "COLUMN", r.map(a - 250, v1, a, v1 + 250))
                self.add(SEPARATOR, "COLUMN", r.map(a + ow, v1, a + ow + 250, v1 + 250))
            else:
                self.add(SEPARATOR, "RAILING", r.map(a - t, v1, a, v1 + t))
                self.add(SEPARATOR, "RAILING", r.map(a + ow, v1, a + ow + t, v1 + t))


def _bedrooms(rng: random.Random) -> int:
    return rng.choices((1, 2, 3, 4, 5), (0.18, 0.3, 0.3, 0.16, 0.06))[0]


def _apartment(rng: random.Random, ground: bool) -> _Apartment:
    return _Layout(rng, _bedrooms(rng), ground).build()


# --- defects -----------------------------------------------------------------------

# A defect hint: ("area", [area indices]) or ("element", element index).
Hint = tuple


def _with_defect(apt: _Apartment, kind: str, rng: random.Random) -> tuple[list[Element], Hint]:
    """A copy of the apartment's elements carrying one defect of ``kind``."""
    els = list(apt.elements)
    rooms = apt.rooms
    beds = [r for r in rooms if r.kind == "bed"]
    if kind == BLOCKED_DOORWAY:
        r = rng.choice([b for b in beds if b.door is not None])
        u0, u1 = r.door_u
        if rng.random() < 2 / 3:
            a, b = max(0, u0 - 100), min(r.w, u1 + 100)
            els.append((FEATURE, "BUILT_IN_FURNITURE", r.map(a, 100, b, 600), r.area))
            return els, ("element", len(els) - 1)
        etype, sub, _, area = els[r.door]
        els[r.door] = (etype, sub, r.map(u0, -_ti(apt, r), u0 + NARROW_DOOR_WIDTH, 0), area)
        return els, ("element", r.door)
    if kind == NO_SHOWER_OR_BATH:
        drop = {i for i, e in enumerate(els) if e[0] == FEATURE and e[1] in ("SHOWER", "BATHTUB")}
        baths = [r.area for r in rooms if r.kind == "bath"]
        return _drop(els, drop), ("area", baths)
    if kind == NO_FRIDGE_SPACE:
        r = next(x for x in rooms if x.kind in ("kitchen", "kitchen_dining"))
        drop = {i for i in r.features if els[i][1] == "KITCHEN"}
        w, d, cd = r.w, r.d, COUNTER_DEPTH
        new = [("KITCHEN", (0, d - cd, w, d)), ("KITCHEN", (0, 0, cd, d - cd))]
        if r.door_u is not None:
            u0, u1 = r.door_u
            if u0 - 100 > cd:
                new.append(("BUILT_IN_FURNITURE", (cd, 0, u0 - 100, cd)))
            if u1 + 100 < w - cd:
                new.append(("BUILT_IN_FURNITURE", (u1 + 100, 0, w - cd, cd)))
            new.append(("BUILT_IN_FURNITURE", (w - cd, DOOR_CLEAR_DEPTH_MM + 100, w, d - cd)))
        else:
            new.append(("BUILT_IN_FURNITURE", (cd, 0, w - cd, cd)))
            new.append(("BUILT_IN_FURNITURE", (w - cd, 0, w, d - cd)))
        els = _drop(els, drop)
        els.extend((FEATURE, sub, r.map(*g), r.area) for sub, g in new)
        return els, ("area", [r.area])
    if kind == UNREACHABLE_SPACE:
        stores = [r for r in rooms if r.kind == "store" and r.door is not None]
        r = rng.choice(stores or [b for b in beds if b.door is not None])
        return _drop(els, {r.door}), ("area", [r.area])
    if kind == INVALID_GEOMETRY:
        r = rng.choice(beds)
        i = next(i for i, e in enumerate(els) if e[0] == AREA and e[3] == r.area)
        x0, y0, x1, y1 = els[i][2]
        els[i] = (AREA, els[i][1], [(x0, y0), (x1, y1), (x1, y0), (x0, y1)], r.area)
        return els, ("area", [r.area])
    raise ValueError(f"unknown defect kind {kind!r}")


def _ti(apt: _Apartment, room: _Room) -> int:
    """Thickness of the wall a room's door sits in, read off the door itself."""
    x0, y0, x1, y1 = apt.elements[room.door][2]
    return y1 - y0 if room.side in "NS" else x1 - x0


def _drop(els: list[Element], drop: set[int]) -> list[Element]:
    """Elements without those at ``drop``; dropped slots become None so element
    indices (used by hints) stay put."""
    return [None if i in drop else e for i, e in enumerate(els)]


# --- floors, buildings, sites --------------------------------------------------------


@dataclass
class _FloorTemplate:
    """A floor layout: apartments and where each sits on the floor."""

    apartments: list[_Apartment]
    transforms: list[tuple[int, int, int, int, int, int]]
    bbox: tuple[int, int, int, int]


# A transform (a, b, c, d, tx, ty): (x, y) -> (a x + b y + tx, c x + d y + ty).
_IDENTITY = (1, 0, 0, 1, 0, 0)


def _compose(outer: tuple, inner: tuple) -> tuple:
    a, b, c, d, tx, ty = outer
    e, f, g, h, ux, uy = inner
    return (a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h, a * ux + b * uy + tx, c * ux + d * uy + ty)


def _apply_rect(t: tuple, rect: tuple) -> tuple[int, int, int, int]:
    a, b, c, d, tx, ty = t
    x0, y0, x1, y1 = rect
    xa, ya = a * x0 + b * y0 + tx, c * x0 + d * y0 + ty
    xb, yb = a * x1 + b * y1 + tx, c * x1 + d * y1 + ty
    return (min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb))


def _floor_template(rng: random.Random, apartments: int, ground: bool) -> _FloorTemplate:
    """Apartments in a row; odd ones mirrored so entrances face a stair core."""
    apts, transforms = [], []
    cursor = 0
    box = [0, 0, 0, 0]
    for k in range(apartments):
        apt = _apartment(rng, ground)
        mirror = k % 2 == 1
        t = (-1, 0, 0, 1, 0, 0) if mirror else _IDENTITY
        x0, y0, x1, y1 = _apply_rect(t, apt.bbox)
        t = _compose((1, 0, 0, 1, cursor - x0, 0), t)
        bx = _apply_rect(t, apt.bbox)
        gap = _mm(rng, 2500, 3500) if k % 2 == 0 else _mm(rng, 300, 800)
        cursor = bx[2] + gap
        apts.append(apt)
        transforms.append(t)
        box = [min(box[0], bx[0]), min(box[1], bx[1]), max(box[2], bx[2]), max(box[3], bx[3])] if k else list(bx)
    return _FloorTemplate(apts, transforms, tuple(box))


def _plans_per_site(rng: random.Random, plans: int, sites: int) -> list[int]:
    """A skewed spread of ``plans`` over ``sites``, each at least one."""
    weights = [rng.lognormvariate(0.0, 1.1) for _ in range(sites)]
    extra = plans - sites
    total = sum(weights)
    shares = [extra * w / total for w in weights]
    counts = [1 + int(s) for s in shares]
    left = plans - sum(counts)
    order = sorted(range(sites), key=lambda i: (-(shares[i] - int(shares[i])), i))
    for i in order[:left]:
        counts[i] += 1
    return counts


class _Writer:
    """Formats rows and keeps the running counters (ids, lines)."""

    def __init__(self, out: TextIO, seed: int):
        self.out = out
        self.seed = seed
        self.rows = 0
        self.next_unit = 1
        self.next_area = 1
        self._num: dict[int, str] = {}

    def num(self, v: int) -> str:
        """Millimetres as metres, shortest exact decimal ('3.25', '-0.3')."""
        s = self._num.get(v)
        if s is None:
            if len(self._num) >= 50_000:  # coordinates repeat within a building; keep memory flat
                self._num.clear()
            s = self._num[v] = repr(v / 1000)
        return s

    def plan(self, els: list, t: tuple, ids: tuple, elevation: int) -> tuple[dict[int, int], dict[int, int]]:
        """Write one apartment's rows; return area index -> area_id and
        element index -> CSV line."""
        num = self.num
        apartment_id, site, building, plan, floor = ids
        unit = self.next_unit
        self.next_unit += 1
        prefix = f"{apartment_id},{site},{building},{plan},{floor},{unit},"
        area_ids: dict[int, int] = {}
        lines: dict[int, int] = {}
        a, b, c, d, tx, ty = t
        buf = []
        for e in els:
            if e is not None and e[0] == AREA:
                area_ids[e[3]] = self.next_area
                self.next_area += 1
        for i, e in enumerate(els):
            if e is None:
                continue
            etype, sub, g, area = e
            if len(g) == 4 and not isinstance(g, list):
                x0, y0, x1, y1 = g
                xa, ya = a * x0 + b * y0 + tx, c * x0 + d * y0 + ty
                xb, yb = a * x1 + b * y1 + tx, c * x1 + d * y1 + ty
                if xa > xb:
                    xa, xb = xb, xa
                if ya > yb:
                    ya, yb = yb, ya
                sx0, sy0, sx1, sy1 = num(xa), num(ya), num(xb), num(yb)
                wkt = f"POLYGON (({sx0} {sy0}, {sx1} {sy0}, {sx1} {sy1}, {sx0} {sy1}, {sx0} {sy0}))"
            else:
                pts = [(a * x + b * y + tx, c * x + d * y + ty) for x, y in g]
                pts.append(pts[0])
                wkt = "POLYGON ((" + ", ".join(f"{num(x)} {num(y)}" for x, y in pts) + "))"
            key = etype if etype == AREA else sub
            off, height = _LEVELS[key]
            area_id = area_ids[area] if area >= 0 else ""
            buf.append(
                f'{prefix}{area_id},RESIDENTIAL,{etype},{sub},"{wkt}",{num(elevation + off)},{num(height)}\n'
            )
            self.rows += 1
            lines[i] = self.rows + 1
        self.out.write("".join(buf))
        return area_ids, lines


def _hint_text(hint: Hint, els: list, area_ids: dict[int, int], lines: dict[int, int]) -> str:
    what, ref = hint
    if what == "area":
        return ";".join(str(area_ids[a]) for a in ref)
    return element_id(els[ref][1], lines[ref])


def apartment_id(seed: int, site_id: int, floor_id: int, n: int) -> str:
    """The apartment_id of the ``n``-th apartment of a floor."""
    return hashlib.md5(f"synthetic:{seed}:{site_id}:{floor_id}:{n}".encode()).hexdigest()


def defects_path(path: str | Path) -> Path:
    """Where :func:`generate` writes the defect list of ``path``."""
    p = Path(path)
    return p.with_name(f"{p.stem}.defects.csv")


def generate(
    path: str | Path,
    *,
    plans: int = 3400,
    sites: int = 900,
    seed: int = 0,
    defect_rate: float = DEFAULT_DEFECT_RATE,
    progress: Callable[[int], None] | None = None,
) -> GenerationReport:
    """Write ``plans`` synthetic apartments over ``sites`` sites to ``path``.

    Also writes :func:`defects_path` (``<stem>.defects.csv``). ``progress``,
    if given, is called after each site with the number of plans that site
    added (the calls add up to ``plans``), like the ingest's progress. See the module docstring for what
    counts as a plan and what the defects are.
    """
    if sites < 1 or plans < sites:
        raise ValueError(f"need 1 <= sites <= plans, got plans={plans}, sites={sites}")
    if not 0.0 <= defect_rate <= 1.0:
        raise ValueError(f"defect_rate must lie in [0, 1], got {defect_rate}")
    path = Path(path)
    rng = random.Random(f"homeloop-synthetic:{seed}")
    counts = _plans_per_site(rng, plans, sites)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as out:
        out.write(",".join(COLUMNS) + "\n")
        gen = _Generator(rng, _Writer(out, seed), seed, defect_rate)
        for site_index, count in enumerate(counts):
            gen.site(site_index + 1, count)
            if progress is not None:
                progress(count)
    with atomic_path(defects_path(path)) as tmp:
        tmp.write_text("plan,defect,element\n" + "".join(gen.sidecar), encoding="utf-8")
    return GenerationReport(path=path, plans=plans, sites=sites, rows=gen.writer.rows, defects=gen.defects)


class _Generator:
    """Writing one file of sites: the floor templates kept for reuse, the shuffled deck of
    defect kinds, the running building, plan and floor ids, and the defects sidecar's lines."""

    def __init__(self, rng: random.Random, writer: _Writer, seed: int, defect_rate: float) -> None:
        self.rng, self.writer, self.seed, self.defect_rate = rng, writer, seed, defect_rate
        self.pool: dict[tuple[int, bool], list[_FloorTemplate]] = {}
        self.deck: list[str] = []
        self.defects = {k: 0 for k in DEFECT_KINDS}
        self.sidecar: list[str] = []
        self.ids = {"building": 0, "plan": 0, "floor": 0}

    def template(self, n: int, ground: bool) -> _FloorTemplate:
        """A floor of ``n`` apartments: one kept earlier (at :data:`TEMPLATE_REUSE`), else a new one."""
        bucket = self.pool.setdefault((n, ground), [])
        if bucket and self.rng.random() < TEMPLATE_REUSE:
            return self.rng.choice(bucket)
        tpl = _floor_template(self.rng, n, ground)
        if len(bucket) < TEMPLATE_POOL_SIZE:
            bucket.append(tpl)
        else:
            bucket[self.rng.randrange(TEMPLATE_POOL_SIZE)] = tpl
        return tpl

    def site(self, site: int, plans: int) -> None:
        """Buildings in a row along x from a random spot, until the site's plans are written."""
        rng = self.rng
        sx, sy = _mm(rng, -50_000, 50_000, 10), _mm(rng, -50_000, 50_000, 10)
        cursor = sx
        while plans > 0:
            width, written = self.building(site, plans, (cursor, sy))
            plans -= written
            cursor += width + _mm(rng, 8000, 20_000, 100)

    def building(self, site: int, plans: int, corner: tuple[int, int]) -> tuple[int, int]:
        """One building of up to ``plans`` plans, turned and maybe mirrored, its lower left
        corner at ``corner``: a few floor layouts stacked, upper ones maybe repeated.
        Returns its width and the plans written."""
        rng = self.rng
        self.ids["building"] += 1
        per_floor = min(rng.choices((1, 2, 3, 4), (0.2, 0.4, 0.25, 0.15))[0], plans)
        layouts = min(rng.randint(1, 4), math.ceil(plans / per_floor))
        turn = rng.choices((0, 1, 2, 3), (0.55, 0.15, 0.15, 0.15))[0]
        mirror = rng.random() < 0.25
        rot = [_IDENTITY, (0, -1, 1, 0, 0, 0), (-1, 0, 0, -1, 0, 0), (0, 1, -1, 0, 0, 0)][turn]
        orient = _compose(rot, (-1, 0, 0, 1, 0, 0) if mirror else _IDENTITY)
        level = widest = written = 0
        for _ in range(layouts):
            n = min(per_floor, plans - written)
            tpl = self.template(n, ground=level == 0)
            x0, y0, x1, y1 = _apply_rect(orient, tpl.bbox)
            place = _compose((1, 0, 0, 1, corner[0] - x0, corner[1] - y0), orient)
            widest = max(widest, x1 - x0)
            self.ids["plan"] += 1
            repeats = 1
            if level > 0 and rng.random() < REPEATED_FLOOR_SHARE:
                repeats += rng.randint(1, 2)
            carried = [self.with_defect(apt) for apt in tpl.apartments]
            for _ in range(repeats):
                self.floor(site, tpl, place, carried, level)
                level += 1
            written += n
        return widest, written

    def with_defect(self, apt: _Apartment) -> tuple[list[Element], Hint | None, str | None]:
        """An apartment's elements, with a defect injected at ``defect_rate``: the kinds are
        dealt from a shuffled deck, so every kind comes up as often. Also the defect's hint and kind."""
        if not (self.defect_rate > 0 and self.rng.random() < self.defect_rate):
            return apt.elements, None, None
        if not self.deck:
            self.deck = list(DEFECT_KINDS)
            self.rng.shuffle(self.deck)
        kind = self.deck.pop()
        self.defects[kind] += 1
        els, hint = _with_defect(apt, kind, self.rng)
        return els, hint, kind

    def floor(self, site: int, tpl: _FloorTemplate, place: tuple, carried: list, level: int) -> None:
        """Write one floor of the current building and plan at storey ``level``; each
        defective apartment gets a sidecar line naming its plan, defect and element."""
        self.ids["floor"] += 1
        floor = self.ids["floor"]
        for k, (els, hint, kind) in enumerate(carried):
            aid = apartment_id(self.seed, site, floor, k)
            t = _compose(place, tpl.transforms[k])
            row_ids = (aid, site, self.ids["building"], self.ids["plan"], floor)
            area_ids, lines = self.writer.plan(els, t, row_ids, level * STOREY_HEIGHT)
            if kind is not None:
                element = _hint_text(hint, els, area_ids, lines)
                self.sidecar.append(f"{plan_key(site, floor, aid)},{kind},{element}\n")
