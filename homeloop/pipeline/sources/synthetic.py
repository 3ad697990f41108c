"""Synthetic apartments in the Swiss Dwellings v3 ``geometries.csv`` format.

:func:`generate` writes a file with the 13 Swiss Dwellings v3 columns
(docs/data-format.md) holding ``plans`` apartments spread over ``sites`` sites. The
same arguments always give the same bytes.

What a file holds
-----------------
* **Apartments** (:mod:`homeloop.pipeline.sources.apartments`, docs/pipeline.md
  "The generated plans"). Two bands of rooms on either side of a corridor, the
  living room in a band or across the whole depth at one end; L- and U-shaped
  units, long single-loaded units, corner units with windows in the gable;
  flats whose living room is the hall; bathrooms off bedrooms, storerooms,
  kitchens, offices and dining rooms reached through their neighbours;
  kitchens open to the corridor or the living room; corridors parted in two;
  bedrooms with a balcony of their own.
  Bedrooms (``ROOM`` or ``BEDROOM``), a ``LIVING_ROOM`` or ``LIVING_DINING``,
  a ``KITCHEN`` or ``KITCHEN_DINING``, one or two ``BATHROOM`` s and maybe a
  guest WC (a ``BATHROOM`` with toilet and basin), one or two ``CORRIDOR`` s,
  sometimes an ``OFFICE``, a ``DINING`` room, ``STOREROOM`` s or a
  ``WASH_AND_DRY_ROOM``, and mostly an outdoor space (``BALCONY``,
  ``LOGGIA``, ``TERRACE``, ``GARDEN``) off the living room.
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
everything else 0); ``height`` is the element's own height (docs/data-format.md).

Defects
-------
With probability ``defect_rate`` a plan carries exactly one defect; the kinds
are dealt from a shuffled deck of the five, so they come out evenly (counts
differ by at most one per deck). Every defect leaves the rest of the plan
valid. The sidecar ``<stem>.defects.csv`` (columns ``plan,defect,element``)
lists every emitted plan that carries one, repeated floors included;
``GenerationReport.defects`` counts the ``plans`` lowest-floor plans only.
``element`` names the culprit the way :mod:`homeloop.core.plan` does: an area id
(several joined by ``;``) or ``element_id(kind, line)`` with ``line`` the
1-based line of the row in the CSV (header = line 1).

* ``blocked_doorway`` — either a ``BUILT_IN_FURNITURE`` block 0.5 m deep, as
  wide as the door plus 0.1 m each side (within the room), starting 0.1 m from
  the face of a door into a bedroom (element = the furniture), or a door into a
  bedroom narrowed to 0.55 m (element = the door).
* ``no_shower_or_bath`` — every ``SHOWER`` and ``BATHTUB`` removed; toilets
  and sinks stay (element = the bathroom area ids).
* ``no_fridge_space`` — 0.6 m deep counters and cupboards along every edge of
  the kitchen space except the clear zones of its doors, which they keep 0.1 m
  clear of; no 0.6 m wide stretch of wall is left free (element = the kitchen
  area id).
* ``unreachable_space`` — the doors of one room removed, a room no other room
  is reached through: a storeroom where there is one, else a bedroom, else
  another room, one with a single door first (element = that area id).
* ``invalid_geometry`` — a bedroom polygon redrawn as a bow-tie (its ring
  visits the rectangle's corners in crossing order): valid WKT, invalid
  polygon (element = that area id).

Guarantees of defect-free plans
-------------------------------
Spaces do not overlap; every door opens into exactly two spaces; the single
``ENTRANCE_DOOR`` (0.9–1.0 m, at least 0.1 m from a wall corner) leads from
outside into the corridor, or into the living room of a flat without one;
every indoor space is reachable from it. Doors are 0.8–0.9 m wide and at
least 0.15 m from a wall corner; a room has one to the hall, or one to a
neighbour it is reached through, or both. Each door's clear zone, the door-wide rectangle
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
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from homeloop.core.errors import HomeLoopError
from homeloop.core.io import atomic_path
from homeloop.pipeline.sources.apartments import (  # noqa: F401  (DOOR_CLEAR_DEPTH_MM, fridge_mm: re-exported)
    AREA,
    COUNTER_DEPTH,
    DOOR_CLEAR_DEPTH_MM,
    FEATURE,
    Element,
    Rect,
    _Apartment,
    _mm,
    _Room,
    apartment,
    fridge_mm,
    overlaps,
)
from homeloop.core.plan import SWISS_DWELLINGS_COLUMNS, element_id, plan_key

COLUMNS = SWISS_DWELLINGS_COLUMNS

BLOCKED_DOORWAY = "blocked_doorway"
NO_SHOWER_OR_BATH = "no_shower_or_bath"
NO_FRIDGE_SPACE = "no_fridge_space"
UNREACHABLE_SPACE = "unreachable_space"
INVALID_GEOMETRY = "invalid_geometry"
#: The defect kinds a plan may carry, one at most.
DEFECT_KINDS = (BLOCKED_DOORWAY, NO_SHOWER_OR_BATH, NO_FRIDGE_SPACE, UNREACHABLE_SPACE, INVALID_GEOMETRY)

#: Default share of plans with a defect: ~600 of ~3,400 rejected (docs/data-format.md).
DEFAULT_DEFECT_RATE = 600 / 3400

# All lengths below are integer millimetres; coordinates are written in metres.

#: Storey height (mm): floor n sits at n × 2.9 m.
STOREY_HEIGHT = 2900
#: Width (mm) of a door narrowed by a ``blocked_doorway`` defect (below 0.6 m).
NARROW_DOOR_WIDTH = 550
#: Share of floors that reuse a floor template already drawn.
TEMPLATE_REUSE = 0.35
#: Share of upper-floor layouts repeated on one or two floors above with the same plan_id.
REPEATED_FLOOR_SHARE = 0.2
#: Floor templates kept per (apartments per floor, ground floor) for reuse; a new
#: template replaces a random kept one once this many are kept, so memory stays
#: flat however many plans are written.
TEMPLATE_POOL_SIZE = 64

# (elevation above the floor, height) in mm of each element kind (docs/data-format.md).
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



@dataclass(frozen=True)
class GenerationReport:
    """What :func:`generate` wrote."""

    path: Path
    plans: int
    sites: int
    rows: int
    defects: dict[str, int]


# --- defects -----------------------------------------------------------------------

# A defect hint: ("area", [area indices]) or ("element", element index).
Hint = tuple


def _with_defect(apt: _Apartment, kind: str, rng: random.Random) -> tuple[list[Element], Hint]:
    """A copy of the apartment's elements carrying one defect of ``kind``."""
    els = list(apt.elements)
    if kind == BLOCKED_DOORWAY:
        return _blocked_doorway(apt, els, rng)
    if kind == NO_SHOWER_OR_BATH:
        drop = {i for i, e in enumerate(els) if e[0] == FEATURE and e[1] in ("SHOWER", "BATHTUB")}
        baths = [r.area for r in apt.rooms if r.subtype == "BATHROOM"]
        return _drop(els, drop), ("area", baths)
    if kind == NO_FRIDGE_SPACE:
        return _no_fridge_space(apt, els)
    if kind == UNREACHABLE_SPACE:
        room = _isolable_room(apt, rng)
        return _drop(els, {d.index for d in apt.doors if d.serves(room)}), ("area", [room.area])
    if kind == INVALID_GEOMETRY:
        r = rng.choice([b for b in apt.rooms if b.kind == "bed"])
        i = next(i for i, e in enumerate(els) if e[0] == AREA and e[3] == r.area)
        x0, y0, x1, y1 = els[i][2]
        els[i] = (AREA, els[i][1], [(x0, y0), (x1, y1), (x1, y0), (x0, y1)], r.area)
        return els, ("area", [r.area])
    raise ValueError(f"unknown defect kind {kind!r}")


def _blocked_doorway(apt: _Apartment, els: list[Element], rng: random.Random) -> tuple[list[Element], Hint]:
    """A door into a bedroom blocked: built-in furniture 0.5 m deep, 0.1 m from the door's face
    in the bedroom and 0.1 m wider than the door each side (2 in 3), or the door narrowed."""
    door, bed = rng.choice([(d, r) for d in apt.doors for r in d.rooms if r is not None and r.kind == "bed"])
    x0, y0, x1, y1 = door.rect
    zone = door.zone_in(bed)
    if rng.random() < 2 / 3:
        if x1 - x0 >= y1 - y0:
            f = (x0 - 100, y0 - 600, x1 + 100, y0 - 100) if zone[1] < y0 else (x0 - 100, y1 + 100, x1 + 100, y1 + 600)
        else:
            f = (x0 - 600, y0 - 100, x0 - 100, y1 + 100) if zone[0] < x0 else (x1 + 100, y0 - 100, x1 + 600, y1 + 100)
        r = bed.rect
        els.append((FEATURE, "BUILT_IN_FURNITURE", (max(f[0], r[0]), max(f[1], r[1]), min(f[2], r[2]),
                                                     min(f[3], r[3])), bed.area))
        return els, ("element", len(els) - 1)
    etype, sub, _, area = els[door.index]
    narrow = (x0, y0, x0 + NARROW_DOOR_WIDTH, y1) if x1 - x0 >= y1 - y0 else (x0, y0, x1, y0 + NARROW_DOOR_WIDTH)
    els[door.index] = (etype, sub, narrow, area)
    return els, ("element", door.index)


def _no_fridge_space(apt: _Apartment, els: list[Element]) -> tuple[list[Element], Hint]:
    """The kitchen lined with counter-deep counters and cupboards along every edge, keeping
    0.1 m clear of each door's clear zone, so no stretch is left for the fridge."""
    r = next(x for x in apt.rooms if x.kind in ("kitchen", "kitchen_dining"))
    els = _drop(els, {i for i in r.features if els[i][1] == "KITCHEN"})
    x0, y0, x1, y1 = r.rect
    cd = COUNTER_DEPTH
    edges = {"S": (x0, y0, x1, y0 + cd), "N": (x0, y1 - cd, x1, y1),
             "W": (x0, y0 + cd, x0 + cd, y1 - cd), "E": (x1 - cd, y0 + cd, x1, y1 - cd)}
    far = {"N": "S", "S": "N", "E": "W", "W": "E"}[r.side]  # the exterior wall, opposite the door wall
    keep = [(z[0] - 100, z[1] - 100, z[2] + 100, z[3] + 100) for d in apt.doors if d.serves(r) for z in [d.zone_in(r)]]
    for side, strip in edges.items():
        sub = "KITCHEN" if side == far else "BUILT_IN_FURNITURE"
        els.extend((FEATURE, sub, piece, r.area) for piece in _strip_minus(strip, keep))
    return els, ("area", [r.area])


def _strip_minus(strip: Rect, boxes: list[Rect]) -> list[Rect]:
    """The pieces of a strip (along its longer side) outside every box that overlaps it."""
    x0, y0, x1, y1 = strip
    along_x = x1 - x0 >= y1 - y0
    parts = [(x0, x1) if along_x else (y0, y1)]
    for b in boxes:
        if not overlaps(strip, b):
            continue
        g0, g1 = (b[0], b[2]) if along_x else (b[1], b[3])
        parts = [p for a, z in parts for p in ((a, min(z, g0)), (max(a, g1), z)) if p[0] < p[1]]
    return [(a, y0, z, y1) if along_x else (x0, a, x1, z) for a, z in parts]


def _isolable_room(apt: _Apartment, rng: random.Random) -> _Room:
    """A room that taking its doors away leaves as the only one nobody can reach: a storeroom
    where there is one, else a bedroom, else any; rooms with a single door first."""
    rooms = [r for r in apt.rooms if r.kind not in ("corridor", "living", "outdoor")
             and not (r.open_to_living or r.open_to_hall)]
    alone = [r for r in rooms if _reached(apt, r) >= {x for x in apt.rooms if x.kind != "outdoor"} - {r}]
    for pool in ([r for r in alone if r.kind == "store"], [r for r in alone if r.kind == "bed"], alone):
        single = [r for r in pool if sum(d.serves(r) for d in apt.doors) == 1]
        if single or pool:
            return rng.choice(single or pool)
    raise ValueError("no room can be cut off alone")


def _reached(apt: _Apartment, without: _Room) -> set[_Room]:
    """The indoor rooms reached from the hall once the doors of ``without`` are gone: the halls,
    the living room and the open kitchens count as reached; doors carry the rest."""
    seen = {r for r in apt.rooms if r.kind in ("corridor", "living") or r.open_to_living or r.open_to_hall}
    seen.discard(without)
    queue = deque(seen)
    while queue:
        room = queue.popleft()
        for d in apt.doors:
            if d.serves(without) or not d.serves(room):
                continue
            for other in d.rooms:
                if other is not None and other not in seen and other.kind != "outdoor":
                    seen.add(other)
                    queue.append(other)
    return seen


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
    """Apartments in a row; odd ones mirrored so entrances face a stair core. The first
    apartment, and the last when mirrored, turn their west gable to the row's end: corner units."""
    apts, transforms = [], []
    cursor = 0
    box = [0, 0, 0, 0]
    for k in range(apartments):
        mirror = k % 2 == 1
        apt = apartment(rng, ground, corner=k == 0 or (mirror and k == apartments - 1))
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


class GenerationError(HomeLoopError, ValueError):
    """Counts or a defect rate that no set of plans can have."""


def check_counts(plans: int, sites: int, defect_rate: float = DEFAULT_DEFECT_RATE) -> None:
    """Raise :class:`GenerationError` unless ``plans`` can spread over ``sites`` (each site holds at
    least one plan) and ``defect_rate`` is a share: before anything is written or started."""
    if sites < 1 or plans < sites:
        raise GenerationError(f"--sites {sites} with --plans {plans}: each site holds at least one plan; "
                              f"give --sites from 1 to {max(plans, 1)}")
    if not 0.0 <= defect_rate <= 1.0:  # nan too
        raise GenerationError(f"--defect-rate {defect_rate}: give a share from 0 to 1")


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
    check_counts(plans, sites, defect_rate)
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
