"""Smoke: a layer under the ceiling fed by smoking sources (docs/dynamics.md).

Each source (a pan from :mod:`homeloop.sim.dynamics.cooking`: any module
whose ``makes_smoke`` is True, read through its ``sources()``, and asked
first through its ``smoking()``, when it has one, whether any source smokes
now) has a density that rises
:data:`RISE_PER_S` while it smokes (heating past the smoke point, or
burning) and falls :data:`FALL_PER_S` after, held in [0, :data:`DENSITY_CAP`].

- **The source's room.** The layer's density is the source's. It spreads
  from the source as a ceiling jet: a point of the room is reached once a
  front expanding at :data:`CEILING_JET_SPEED_M_S` has covered its distance,
  so a sensor 3 m from the pan trips a few seconds after one 1 m away.
- **Other rooms.** Each is one well-mixed layer exchanging smoke with its
  neighbours through *open* openings only: a door or window whose
  ``world.openings[id].open`` is True, or an open passage (two rooms touching
  with no wall between them, :func:`homeloop.core.check.open_passages`, which
  has no leaf and is always open). Across an opening of width ``w``::

      d rho_i / dt = EXCHANGE_SPEED_M_S * w / A_i * (rho_j - rho_i)

  where ``A_i`` is room i's floor area (the layer depth cancels: the
  exchanged volume and the layer's volume both scale with it). A closed
  door stops the exchange. Outdoor spaces, and the outside beyond an
  exterior window or door, take smoke away: their density stays 0.
- **Air purifiers** (the optional air devices, a home built with
  ``--air-devices``). A running one clears its room's layer at its clean
  air delivery rate over the room's volume, ``d rho / dt = -r * rho``
  (:mod:`homeloop.sim.dynamics.air_devices`; exact decay each step). A room
  whose source still feeds it holds the source's density regardless.

A smoke sensor reports smoke when :meth:`Smoke.density_at` at its position
exceeds :data:`SMOKE_ALARM_DENSITY`. With every door and window shut (as the
scenarios start) a room's smoke spreads only to :func:`rooms_reached`, so a
sensor elsewhere never sounds for it; task screening reads that rule. Until a
source first smokes the step returns at once; when every source has stopped
and the smoke has cleared it goes idle again. Idle, it sleeps
(:class:`~homeloop.sim.world.Rest`) until a module making smoke changes.
While it spreads it tells a step that may change a sensor's reading (a room's
density crossing :data:`SMOKE_ALARM_DENSITY`, a front still spreading) from
one that changes the densities only (:data:`DENSITIES`), so the devices sleep
through the second kind. Once the layers hold still (no source feeds a room,
every front has covered its room, and a step left every density exactly as it
was: the exchange has evened them out to the last bit) every further step
would leave them so too; it sleeps (:data:`STILL_READS`) until a door or window
opens or shuts, or a module making smoke changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Protocol, runtime_checkable

import networkx as nx
import numpy as np
import shapely

from homeloop.core.check import open_passages
from homeloop.core.home import Home, polygon_from_rings
from homeloop.core.geometry import OPENING_CONTACT_TOLERANCE
from homeloop.core.kept import Kept
from homeloop.sim.dynamics.air_devices import purifier_rate_per_s
from homeloop.sim.world import EVERYTHING, NOTHING, STEP_S, Rest, World

#: The device type that clears smoke from its room's layer (the optional air devices).
PURIFIER = "air_purifier"
#: Density rise per second at a smoking source (docs/dynamics.md).
RISE_PER_S = 0.3
#: Density fall per second at a source that has stopped smoking (docs/dynamics.md).
FALL_PER_S = 0.06
#: Densest layer (1 = opaque); densities are fractions of it.
DENSITY_CAP = 1.0
#: A smoke sensor reports smoke above this density at its position (docs/dynamics.md;
#: homeloop/catalog/devices.yaml, smoke_sensor).
SMOKE_ALARM_DENSITY = 0.4
#: Speed of the smoke front under the ceiling (m/s). Alpert's ceiling-jet correlation,
#: U = 0.197 Q^(1/3) H^(1/2) / r^(5/6), gives 0.3-1 m/s a few metres from a 10-50 kW
#: plume under a 2.6 m ceiling; 0.6 m/s is taken for a smoking or burning pan.
CEILING_JET_SPEED_M_S = 0.6
#: Layer exchange through an open opening, per metre of its width (m/s): the mean outflow
#: speed of the smoke over the layer's depth in a doorway, with cool air flowing back
#: beneath it (assumption: a tenth of a metre per second for a slow, cool layer).
EXCHANGE_SPEED_M_S = 0.1
#: Below this density everywhere, with no source smoking, the smoke has cleared.
CLEAR_DENSITY = 1e-4

#: What a step spreading smoke changes (:class:`~homeloop.sim.world.Rest`).
CHANGES = frozenset({"smoke"})
#: What it changes when no smoke sensor's reading can change with it: no room's density crossed
#: :data:`SMOKE_ALARM_DENSITY`, and no front is spreading (a module reading only whether a sensor
#: trips, the devices, sleeps on; one reading everything wakes).
DENSITIES = frozenset({"smoke_density"})
#: What wakes the layers held still: the openings (the exchange's paths), besides the modules making smoke,
#: and in a home with an air purifier the devices (:data:`PURIFIER_READS`: it clears its room's layer).
STILL_READS = frozenset({"openings"})
PURIFIER_READS = frozenset({"devices"})


@dataclass
class SmokeSource:
    """Something that smokes: where it is now and whether it smokes (heats past its
    smoke point or burns). Modules that make smoke return these from ``sources()``."""

    id: str
    room: str | None
    x: float
    y: float
    smoking: bool


@runtime_checkable
class SmokeProvider(Protocol):
    """A module that makes smoke (it sets ``makes_smoke``): the smoke asks it for its sources each
    step; one that can also say :meth:`smoking` without making them spares that while nothing smokes."""

    def sources(self) -> list[SmokeSource]: ...


def alarm_delay_s(distance_m: float) -> float:
    """Seconds from a source's first smoke to density above :data:`SMOKE_ALARM_DENSITY`
    at a ceiling sensor ``distance_m`` away in the same room: the later of the source's
    density crossing the threshold and the front arriving (the density behind the front
    is the source's)."""
    return max(SMOKE_ALARM_DENSITY / RISE_PER_S, distance_m / CEILING_JET_SPEED_M_S)


@dataclass
class _Front:
    """The ceiling jet spreading from where a room's first source started smoking."""

    x: float
    y: float
    started: float
    reach: float  # distance to the room's farthest corner: covered beyond it
    covered: bool = False


@dataclass(frozen=True)
class _Link:
    """An exchange path between room ``a`` and room ``b`` (None: the outside, density 0)."""

    a: int
    b: int | None
    rate_a: float  # EXCHANGE_SPEED_M_S * width / area of a (1/s)
    rate_b: float
    opening: str | None  # None for an open passage: always open


class Smoke:
    """The smoke layer of every room (see the module docstring)."""

    name = "smoke"

    def __init__(self) -> None:
        self._world: World | None = None
        self._laid_out = False  # whether the rooms' layers are set up (the first smoke lays them out)
        self._index: dict[str, int] = {}
        self._rooms: list[str] = []
        self._rho: list[float] = []
        self._links: list[_Link] = []
        self._paths: list[tuple[int, int | None, float, float, str | None]] = []  # the links as tuples
        self._open: list[tuple[int, int | None, float, float, str | None]] | None = None  # those open now
        self._makers: frozenset[str] = EVERYTHING  # what the modules making smoke change (their names)
        self._still_reads = STILL_READS
        self._purifiers: list[tuple[int, dict[str, Any], float]] = []  # (room index, values, room volume)
        # the rests of a spreading step: one that may have changed a sensor's reading, one that cannot have
        self._spreading_rests = (Rest(CHANGES, -math.inf, EVERYTHING), Rest(DENSITIES, -math.inf, EVERYTHING))
        self._quiet = False  # whether no source smoked or held smoke after the last step
        self._rings: dict[str, list[tuple[float, float]]] = {}
        self._providers: list[SmokeProvider] = []
        self._source_density: dict[str, float] = {}
        self._fronts: dict[str, _Front] = {}
        self._active = False
        self._time = 0.0
        self._stepped = False  # whether the last step went past the idle check
        self._sensed = True  # whether the last step may have changed a smoke sensor's reading
        self._still = False  # whether the last step left the layers as they were, and every further one would
        # the layers after each of the next steps, as far as :meth:`coast` has worked them out, and the
        # layers they start from (asked how far it can coast, then to coast, it works them out once)
        self._ahead: tuple[list[float] | None, list[list[float]]] = (None, [])
        # what the sensors' readings follow from (density_at against the alarm density), after the last
        # step: active, which rooms are denser than a sensor trips at, the fronts, one still spreading
        self._sensing: tuple[bool, list[bool], int, bool] | None = None

    # --- set-up -----------------------------------------------------------------------------------

    def _set_up(self, world: World) -> None:
        """What every step reads; the rooms' layers wait for the first smoke (:meth:`_lay_out`): most
        worlds never smoke, and until then every layer reads 0."""
        self._rooms, self._index, self._rho, self._laid_out = [], {}, [], False
        self._sensing = None
        self._providers = [m for m in world.modules
                           if getattr(m, "makes_smoke", False) and isinstance(m, SmokeProvider)]
        makers = [getattr(p, "name", None) for p in self._providers]
        self._makers = EVERYTHING if None in makers else frozenset(str(n) for n in makers)
        purifying = any(d.type == PURIFIER for d in world.devices.values())
        self._still_reads = STILL_READS | PURIFIER_READS if purifying else STILL_READS
        reads = self._makers | self._still_reads
        self._spreading_rests = (Rest(CHANGES, -math.inf, reads), Rest(DENSITIES, -math.inf, reads))
        self._open = None
        self._quiet = False
        self._world = world

    def _lay_out(self, world: World) -> None:
        """The rooms' layers, the exchange paths between them and the purifiers in them."""
        home = world.home
        indoor = [r for r in home.rooms if not r.outdoor]
        self._rooms = [r.id for r in indoor]
        self._index = {rid: i for i, rid in enumerate(self._rooms)}
        self._rho = [0.0] * len(self._rooms)
        self._rings = {r.id: [(p[0], p[1]) for ring in r.polygon for p in ring] for r in indoor}
        areas = [polygon_from_rings(r.polygon).area for r in indoor]
        links = [_link(self._index, areas, u, v, width, oid) for u, v, width, oid in _paths(home)]
        self._links = [link for link in links if link is not None]
        self._paths = [(k.a, k.b, k.rate_a, k.rate_b, k.opening) for k in self._links]
        volumes = {r.id: area * r.ceiling_height for r, area in zip(indoor, areas)}
        self._purifiers = [(self._index[d.room], d.values, volumes[d.room]) for d in world.devices.values()
                           if d.type == PURIFIER and d.room in self._index]
        self._laid_out = True

    # --- stepping ---------------------------------------------------------------------------------

    def step(self, world: World, dt: float) -> None:
        if self._world is not world:
            self._set_up(world)
        if self._ahead[0] is not None:  # a step changes the layers in place
            self._ahead = (None, [])
        if not self._active and not any(_smoking(p) for p in self._providers):
            self._stepped = False
            self._open = None  # asleep, it is not told of the openings
            return
        self._stepped = True
        self._active = True
        if not self._laid_out:
            self._lay_out(world)
        self._time = world.time
        known = len(self._source_density)
        if self._quiet and not world.woken_by(self._makers):
            # no source smoked or held smoke, and none changed since: none feeds a room now either
            sources: list[SmokeSource] = []
            feeding: set[str] = set()
        else:
            sources = [s for p in self._providers for s in p.sources()]
            feeding = self._step_sources(sources, dt)
        rho_before = self._rho[:]
        self._exchange(world, dt)
        if self._purifiers:
            self._purify(dt)
        # only a feeding source can smoke: one that smokes has a density above 0
        smoking = self._feed_rooms([s for s in sources if s.id in feeding]) if feeding else False
        spreading = self._advance_fronts()
        rho = self._rho
        if not smoking and (max(rho) if rho else 0.0) < CLEAR_DENSITY:
            rho = self._rho = [0.0] * len(rho)
            self._active = False
            self._open = None
        self._quiet = self._active and not feeding
        before = self._sensing
        now = self._sensing = (self._active, [d > SMOKE_ALARM_DENSITY for d in rho], len(self._fronts), spreading)
        self._sensed = before is None or before[3] or before != now
        # held still: the step is a function of the layers, the open paths and the sources alone
        self._still = (self._active and not feeding and not spreading and rho == rho_before
                       and len(self._source_density) == known)

    def rest(self, world: World) -> Rest:
        """Spreading: the next step. Idle: asleep until a module making smoke changes; held still (see
        the module docstring), until that or an opening changes. A step that may have changed a smoke
        sensor's reading (:meth:`density_at` above :data:`SMOKE_ALARM_DENSITY` somewhere) changed
        "smoke"; any other, the densities only (:data:`DENSITIES`)."""
        if self._active and not self._still:
            return self._spreading_rests[0 if self._sensed else 1]
        if self._active:  # held still
            return Rest(CHANGES if self._sensed else NOTHING, math.inf, self._makers | self._still_reads)
        return Rest(CHANGES if self._stepped else NOTHING, math.inf, self._makers)

    def _step_sources(self, sources: Iterable[SmokeSource], dt: float) -> set[str]:
        """Update each source's density; the ids of those that had smoke before or have now.
        (Clamped as ``min(max(d, 0.0), DENSITY_CAP)`` is, written out: the step runs every step.)"""
        feeding = set()
        densities = self._source_density
        for s in sources:
            before = densities.get(s.id, 0.0)
            d = before + RISE_PER_S * dt if s.smoking else before - FALL_PER_S * dt
            d = 0.0 if 0.0 > d else d
            d = densities[s.id] = DENSITY_CAP if DENSITY_CAP < d else d
            if before > 0.0 or d > 0.0:
                feeding.add(s.id)
        return feeding

    def _exchange(self, world: World, dt: float) -> None:
        """One explicit step of the exchange through every open path (:func:`_exchanged`). The open
        paths are kept while no opening changes (:meth:`World.woken_by`)."""
        paths = self._open
        if paths is None or world.woken_by(STILL_READS):
            openings = world.openings
            paths = self._open = [p for p in self._paths if p[4] is None or openings[p[4]].open]
        _exchanged(self._rho, paths, dt)

    def coast(self, world: World, steps: int, take: bool) -> int:
        """Of the next ``steps`` steps, how many only thin the layers out as the last one did (no source
        feeds a room, no front spreads, no sensor's reading can change, the smoke neither clears nor
        holds still); with ``take``, the layers as after them (:mod:`homeloop.sim.world`, "Coasting
        modules")."""
        sensing = self._sensing
        if (not (self._active and self._quiet and self._stepped) or self._still or self._sensed or sensing is None
                or sensing[3] or self._open is None):
            return 0
        start, ahead = self._ahead
        if start is not self._rho:  # worked out from other layers: start again
            start, ahead = self._ahead = (self._rho, [])
        rho = ahead[-1] if ahead else start
        while len(ahead) < steps:
            after = rho[:]
            _exchanged(after, self._open, STEP_S)
            if self._purifiers:
                self._purify(STEP_S, after)
            if (max(after) < CLEAR_DENSITY or after == rho
                    or [d > SMOKE_ALARM_DENSITY for d in after] != sensing[1]):
                break
            ahead.append(after)
            rho = after
        taken = min(steps, len(ahead))
        if take and taken:
            self._rho, self._time = ahead[taken - 1], world.time
            self._ahead = (None, [])
        return taken

    def _purify(self, dt: float, rho: list[float] | None = None) -> None:
        """Each running air purifier clears its room's layer (of ``rho``: the module's own by default) at
        its clean-air rate over the room's volume (exact exponential decay,
        :func:`~homeloop.sim.dynamics.air_devices.purifier_rate_per_s`)."""
        rho = self._rho if rho is None else rho
        for i, values, volume in self._purifiers:
            rate = purifier_rate_per_s(values, volume)
            if rate > 0.0 and rho[i] > 0.0:
                rho[i] *= math.exp(-rate * dt)

    def _feed_rooms(self, sources: Iterable[SmokeSource]) -> bool:
        """The layer of a source's room holds the source's density (down to 0 when it has
        cleared); True if any source smokes."""
        smoking = False
        fed: dict[int, float] = {}
        for s in sources:
            smoking = smoking or s.smoking
            room = s.room
            i = self._index.get(room) if room is not None else None
            if room is None or i is None:
                continue
            fed[i] = max(fed.get(i, 0.0), self._source_density[s.id])
            if room not in self._fronts:
                reach = max(math.hypot(px - s.x, py - s.y) for px, py in self._rings[room])
                self._fronts[room] = _Front(s.x, s.y, self._time, reach)
        for i, density in fed.items():
            self._rho[i] = density
        return smoking

    def _advance_fronts(self) -> bool:
        """Mark the fronts that now cover their rooms; whether one is still spreading."""
        spreading = False
        for front in self._fronts.values():
            if not front.covered:
                if CEILING_JET_SPEED_M_S * (self._time - front.started) >= front.reach:
                    front.covered = True
                else:
                    spreading = True
        return spreading

    # --- reading ----------------------------------------------------------------------------------

    def room_density(self, room_id: str) -> float:
        """The layer's density in a room (0 outdoors and in rooms the smoke has not reached)."""
        i = self._index.get(room_id)
        return 0.0 if i is None else self._rho[i]

    def density_at(self, room_id: str, x: float, y: float) -> float:
        """The density under the ceiling at (x, y) in a room: 0 where the front from the
        room's source has not arrived yet."""
        i = self._index.get(room_id)
        if i is None or not self._active:
            return 0.0
        front = self._fronts.get(room_id)
        if front is not None and not front.covered:
            if math.hypot(x - front.x, y - front.y) > CEILING_JET_SPEED_M_S * (self._time - front.started):
                return 0.0
        return self._rho[i]

    def densities_at(self, room_id: str, points: np.ndarray) -> np.ndarray:
        """:meth:`density_at` of each point (N, 2) of a room: one reading for them all unless a
        front is still spreading there."""
        front = self._fronts.get(room_id)
        if front is not None and not front.covered:
            return np.array([self.density_at(room_id, x, y) for x, y in points], dtype=float)
        return np.full(len(points), self.density_at(room_id, math.nan, math.nan))

    def source_density(self, source_id: str) -> float:
        return self._source_density.get(source_id, 0.0)

    def snapshot(self) -> dict[str, Any]:
        return {
            "active": self._active,
            "rooms": {rid: round(d, 4) for rid, d in zip(self._rooms, self._rho) if d > 0.0},
            "sources": {sid: round(d, 4) for sid, d in sorted(self._source_density.items())},
            "fronts": {rid: {"x": f.x, "y": f.y, "started": f.started, "covered": f.covered}
                       for rid, f in sorted(self._fronts.items())},
        }


def _exchanged(rho: list[float], paths: list[tuple[int, int | None, float, float, str | None]], dt: float) -> None:
    """One explicit step of the exchange through ``paths`` on the layers ``rho``, in place (all flows
    from the densities before the step; clamped to [0, DENSITY_CAP] as :meth:`Smoke._step_sources`
    clamps)."""
    flows = []
    for a, b, rate_a, rate_b, _ in paths:
        diff = (0.0 if b is None else rho[b]) - rho[a]
        if diff != 0.0:
            flows.append((a, b, rate_a, rate_b, diff * dt))
    for a, b, rate_a, rate_b, amount in flows:
        d = rho[a] + rate_a * amount
        d = 0.0 if 0.0 > d else d
        rho[a] = DENSITY_CAP if DENSITY_CAP < d else d
        if b is not None:
            d = rho[b] - rate_b * amount
            d = 0.0 if 0.0 > d else d
            rho[b] = DENSITY_CAP if DENSITY_CAP < d else d


def _smoking(provider: SmokeProvider) -> bool:
    """Whether any of a provider's sources smokes now."""
    smoking = getattr(provider, "smoking", None)
    return bool(smoking()) if smoking is not None else any(s.smoking for s in provider.sources())


# --- the home's exchange paths (set-up only) --------------------------------------------------------

#: Homes whose exchange paths are kept: an episode reads one home, and the verify stage plays a
#: home's pairs one after another.
PATHS_KEPT = 8
#: A path smoke can take: (room, other room or None for the outside, width, opening id or None).
SmokePath = tuple[str, str | None, float, str | None]
_PATHS: Kept[tuple[SmokePath, ...]] = Kept(PATHS_KEPT)


def _paths(home: Home) -> tuple[SmokePath, ...]:
    """Every path smoke can take: (room, other room or None for the outside, width, opening id
    or None for an always-open passage); kept while the home is the same object and its layout
    reads the same."""
    return _PATHS.get_or_make((), lambda: tuple(_find_paths(home)), (home,), _layout_signature(home))


def _layout_signature(home: Home) -> tuple[object, ...]:
    """What the paths are found from, read cheaply: rooms, walls and openings by id, kind and first corner."""
    return (tuple((r.id, r.space_class, tuple(r.polygon[0][0]), len(r.polygon[0])) for r in home.rooms),
            tuple((w.id, tuple(w.polygon[0][0]), len(w.polygon[0])) for w in home.walls),
            tuple((o.id, o.kind, o.width, o.exterior, tuple(o.connects), tuple(o.polygon[0][0])) for o in home.openings))


def _find_paths(home: Home) -> list[SmokePath]:
    outdoor = {r.id for r in home.rooms if r.outdoor}
    paths: list[SmokePath] = []
    for o in home.openings:
        inside = [rid for rid in o.connects if rid not in outdoor]
        if len(inside) == 2 and inside[0] != inside[1]:
            paths.append((inside[0], inside[1], o.width, o.id))
        elif len(inside) == 1 and (o.exterior or len(o.connects) == 2):
            paths.append((inside[0], None, o.width, o.id))
    for u, v in open_passages(home):
        width = _shared_edge_length(home, u, v)
        if u in outdoor and v in outdoor:
            continue
        if u in outdoor or v in outdoor:
            paths.append((v if u in outdoor else u, None, width, None))
        else:
            paths.append((u, v, width, None))
    return paths


def rooms_reached(home: Home, room: str) -> set[str]:
    """The rooms the smoke of ``room`` spreads to while every door and window is shut:
    ``room`` and the indoor rooms joined to it by open passages, one after another (the
    paths of :func:`_paths` that have no leaf to close; docs/dynamics.md)."""
    joined: nx.Graph[str] = nx.Graph()
    joined.add_node(room)
    joined.add_edges_from((u, v) for u, v, _, opening in _paths(home) if opening is None and v is not None)
    return set(nx.node_connected_component(joined, room))


def _shared_edge_length(home: Home, u: str, v: str) -> float:
    """Width of an open passage: the length of room u's outline lying against room v."""
    a, b = home.room_polygon(u), home.room_polygon(v)
    return float(shapely.intersection(a.boundary, b.buffer(OPENING_CONTACT_TOLERANCE)).length)


def _link(index: dict[str, int], areas: list[float], u: str, v: str | None, width: float,
          opening: str | None) -> _Link | None:
    a = index.get(u)
    b = index.get(v) if v is not None else None
    if a is None or (v is not None and b is None) or width <= 0.0:
        return None
    rate_b = 0.0 if b is None else EXCHANGE_SPEED_M_S * width / areas[b]
    return _Link(a, b, EXCHANGE_SPEED_M_S * width / areas[a], rate_b, opening)
