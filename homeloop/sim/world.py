"""The simulated home: ground truth that evolves in fixed steps.

A :class:`World` is built from a home file and a catalog (the scenario adds
people, objects, hazards and faults; :mod:`homeloop.sim.scenario`). It holds
the state of every opening, articulated part, carryable object, device,
person and the robot, plus the state each dynamics module keeps
(:attr:`World.modules`). Time advances only through :meth:`World.advance` (or
:meth:`World.advance_while`, the same as many calls of it), in steps of
:data:`STEP_S`; the agent's thinking takes no simulated time (docs/episodes.md).

Each dynamics module (:mod:`homeloop.sim.dynamics`) is an object with a
``name``, a ``step(world, dt)`` method and a ``snapshot()`` method returning
plain data; modules run in the order they were added, devices last, so a
sensor reads the state its step produced. Everything random draws from
:attr:`World.rng`, seeded from the episode's seed: equal seeds, equal traces.

**Sleeping modules.** A module may also say, after each of its steps, how it
stands (``rest(world)`` returning a :class:`Rest`): what its step changed
(:data:`ASPECTS`), the world time of its next step of its own accord (a
timeline's next action, a button's release; ``math.inf`` when it only
answers to changes), and what it reads, whose change wakes it before then.
Between those, its step would change nothing, so :meth:`World.advance` skips
it; when every module sleeps, it jumps straight to the next wake time. A
module that changes what another reads wakes it (in the same step when it
comes later in the order, else the next one), and a call from outside the
steps (a skill's action) wakes every module for the next step. A module
without ``rest`` steps every step and wakes every other. A module woken may
ask :meth:`World.woken_by` whether something it reads changed since its last
step (the devices read again only the readings whose sources changed). The
traces are the fixed step's to the last bit; :data:`SLEEPING` = False steps
every module every step (the tests and benchmarks compare the two).

**Coasting modules.** A module that evolves on its own (a pan cooling, smoke
thinning out) steps every step, though nothing else reads what it changes and
it reads nothing that changes. Such a module may offer
``coast(world, steps, take)``: how many of the next ``steps`` steps it would
take as its last one went (the same rest, changing nothing but its own state:
no event, milestone or other state, and reading nothing another step could
change), stopping before the first that would not; with ``take``, it takes
that many at once (asked once the world's clock has moved past them), its
state as after as many steps one by one. When every module due at the next
step can coast, none of them changes what another reads, and nothing else is
due, the world moves on by the steps they all can take in one go. While
:meth:`World.advance_while` steps (a robot's motion), a coasting module must
keep what ``going`` reads as it is; the world works out for the coasted steps
what asking after each would have given (:class:`_WhileGoing`).

:meth:`World.snapshot` gives the full ground truth as plain data (lists,
dicts, numbers, strings): what checks, records and the reference agent read.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, NamedTuple, Protocol, TypeVar, cast, overload

import numpy as np

from homeloop.core.catalog import Catalog, RobotEntry
from homeloop.core.home import Home, HomeObject
from homeloop.core.visuals.library import VisualLibrary

#: Fixed simulated step (s): docs/episodes.md.
STEP_S = 0.1

#: Whether :meth:`World.advance` lets modules sleep (see the module docstring); False steps
#: every module every step, for the tests and benchmarks that compare the two.
SLEEPING = True

#: What a module's step may change or read, as :class:`Rest` names it: the world's own state
#: ("objects": where they are; "object_props": their properties, a plant's soil moisture), and the
#: state other code reads of a module (by the module's name; "pan_heat": how hot the pans are;
#: "smoke_density": the smoke's densities, where no smoke sensor's reading can change with them).
ASPECTS = ("openings", "parts", "objects", "object_props", "devices", "people", "robot", "messages", "events",
           "timeline", "cooking", "pan_heat", "smoke", "smoke_density", "water", "climate", "humidity", "appliances",
           "robot_motion")
#: Every aspect: what a module without ``rest`` may change, and what wakes it.
EVERYTHING = frozenset({"*"})
NOTHING: frozenset[str] = frozenset()

#: A module is woken this much (s) before the time it asked for: early is harmless, late is not.
WAKE_EARLY_S = 1e-6


@dataclass
class Event:
    """Something that happened that an agent may be told of (an alarm, a message, a device event)."""

    time: float
    kind: str
    source: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Message:
    """A message sent by the agent (or received from a person)."""

    time: float
    sender: str
    recipient: str
    text: str


@dataclass
class OpeningState:
    """A door, entrance door, garage door or window: open or shut, locked or not."""

    id: str
    kind: str
    open: bool = False
    locked: bool = False


@dataclass
class Placement:
    """Where a carryable object is: on a surface or in a container of furniture, on the floor,
    or held (by the robot or a person)."""

    kind: str  # "surface" | "container" | "floor" | "held"
    room: str | None = None
    furniture: str | None = None
    name: str | None = None  # the surface or container name
    holder: str | None = None  # "robot" or a person id, when held


@dataclass
class ObjectState:
    id: str
    catalog_id: str
    semantic_class: str
    placement: Placement
    x: float
    y: float
    z: float
    props: dict[str, Any] = field(default_factory=dict)


@dataclass
class PersonState:
    """A person: where they are, their posture and what they are doing (docs/dynamics.md)."""

    id: str
    catalog_id: str
    role: str
    name: str
    room: str | None  # None when away from home
    x: float
    y: float
    yaw: float = 0.0
    posture: str = "standing"  # standing | sitting | lying
    activity: str = "standing"
    wears: list[str] = field(default_factory=list)
    holding: list[str] = field(default_factory=list)


@dataclass
class RobotState:
    """The robot body's pose and hands; ``route`` holds its position at the wake and after each skill call."""

    body: RobotEntry
    room: str
    x: float
    y: float
    yaw: float = 0.0
    head_yaw: float = 0.0  # relative to the body
    head_pitch: float = 0.0  # tilt of the head camera (rad); negative looks down
    held: dict[str, str | None] = field(default_factory=dict)  # hand -> object id
    route: list[tuple[float, float, float, bool]] = field(default_factory=list)  # (t, x, y, holding)

    def holding(self) -> list[str]:
        return [o for o in self.held.values() if o is not None]

    def free_hand(self) -> str | None:
        return next((h for h, o in self.held.items() if o is None), None)


@dataclass
class DeviceState:
    """A device's present field values; ``faults`` replace chosen readings (docs/dynamics.md)."""

    id: str
    type: str
    room: str | None
    values: dict[str, Any]
    faults: dict[str, Any] = field(default_factory=dict)
    online: bool = True

    def reading(self, name: str) -> Any:
        return self.faults.get(name, self.values[name])


class Dynamics(Protocol):
    """What :meth:`World.advance` steps: a named module with a step and a plain-data snapshot
    (and, if it may sleep, a ``rest(world)`` giving its :class:`Rest`; see the module docstring)."""

    name: str

    def step(self, world: "World", dt: float) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...


class Rest(NamedTuple):
    """How a module stands after its step: what the step changed, the world time of its next step
    of its own accord (``math.inf``: none; now or earlier: the next step), and what wakes it
    before then (aspects of :data:`ASPECTS`, or :data:`EVERYTHING`). A tuple: one is made after
    every step a module runs."""

    changed: frozenset[str] = NOTHING
    until: float = math.inf
    wakes_on: frozenset[str] = NOTHING


#: The rest of a module that must step every step (one without ``rest``).
RESTLESS = Rest(EVERYTHING, -math.inf, EVERYTHING)


#: A dynamics module's class, as :meth:`World.module` and :meth:`World.running` take it.
_Kind = TypeVar("_Kind", bound=Dynamics)


class World:
    """Ground truth of one home during one episode (see the module docstring)."""

    def __init__(self, home: Home, catalog: Catalog, seed: int, *, clock_start_s: float = 12 * 3600.0,
                 visuals: VisualLibrary | None = None):
        self.home = home
        self.catalog = catalog
        #: The visuals cameras draw where a build maps its own assets (docs/catalog.md, "Your own
        #: assets"); the empty library draws every entry's built-in visual.
        self.visuals = visuals if visuals is not None else VisualLibrary()
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.time = 0.0
        #: Seconds after midnight at time 0 (daylight follows it).
        self.clock_start_s = clock_start_s
        self.openings = {o.id: OpeningState(o.id, o.kind, open=False, locked=False) for o in home.openings}
        self.parts = {(f.id, p.name): float(p.state) for f in home.furniture for p in f.parts}
        self.objects = {o.id: _object_state(home, o) for o in home.objects}
        self.devices = {d.id: DeviceState(d.id, d.type, d.room, {k: f.value for k, f in d.fields.items()})
                        for d in home.devices}
        self.people: dict[str, PersonState] = {}
        self.robot: RobotState | None = None
        self.messages: list[Message] = []
        self.events: list[Event] = []
        #: Ground-truth milestones (ignition, litres spilled, a fall) for timelines and records;
        #: never shown to the agent, unlike :attr:`events`.
        self.milestones: list[Event] = []
        self.modules: list[Dynamics] = []
        self._steps = 0
        self._owed_s = 0.0
        self._sleepers: _Sleepers | None = None
        self._woken = -1  # what woke the module stepping now (bits of _bits; all: every step)

    # --- time -----------------------------------------------------------------------------------

    def advance(self, seconds: float, *, touched: bool = True) -> None:
        """Step the world forward by ``seconds``, in whole steps: a remainder shorter than a step
        is carried to the next call, so many short actions add up to the time they take.

        ``touched``: whether anything outside the steps may have changed the world since the last
        one (a call's action: every module is woken); False only where the caller knows nothing did."""
        self._steps_for(self._owe(seconds), touched)

    def _owe(self, seconds: float) -> int:
        """The whole steps :meth:`advance` takes for ``seconds`` more; the remainder is carried."""
        n, self._owed_s = _owing(self._owed_s, seconds)
        return n

    def advance_while(self, going: Callable[[], bool], until: float) -> None:
        """Step while ``going()`` holds before each step, as calls of :meth:`advance` for a step, one
        after another, would (never past the time ``until``; the first call touched, the later ones
        not): the same steps and the same remainder carried, without a call per step."""
        touched = True
        while going():
            n = self._owe(_step_asked(self.time, until))
            if n == 1:
                n = self._steps_while(going, until, touched)
                if n < 0:
                    return
                touched = False
            before = self.time
            self._steps_for(n, touched)
            if self.time == before:
                return
            touched = False

    def _steps_while(self, going: Callable[[], bool], until: float, touched: bool) -> int:
        """The steps of :meth:`advance_while` while each is a call's one step; after the last, -1 where
        ``going()`` no longer holds, else the steps the call after it owes (0, or 2 on a remainder)."""
        stop = _WhileGoing(self, going, until)
        # at most every step up to ``until`` and one more: each owes one step, then a call owes none;
        # no step is skipped over unasked (each owes its share of the remainder)
        self._steps_for(max(int(math.ceil((until - self.time) / STEP_S)), 0) + 2, touched, stop, jumps=False)
        return stop.owed

    def advance_until(self, done: Callable[[], bool], steps: int, *, coasting: bool = False) -> None:
        """Step the world until ``done()`` holds after a step, ``steps`` at most (the remainder
        :meth:`advance` carries is left as it is). ``done`` must read only what steps change; with
        ``coasting``, nothing a coasting module changes either (the events, say: see the module
        docstring), so the steps modules coast through are not asked about one by one."""
        self._steps_for(steps, True, done, coasting=coasting)

    def _steps_for(self, n: int, touched: bool, done: Callable[[], bool] | None = None, *,
                   jumps: bool = True, coasting: bool = True) -> None:
        if n <= 0:
            return
        if not SLEEPING:
            self._woken, self._sleepers = -1, None
            steps = [m.step for m in self.modules]
            for _ in range(n):
                self._steps += 1
                self.time = round(self._steps * STEP_S, 6)
                for step in steps:
                    step(self, STEP_S)
                if done is not None and done():
                    return
            return
        sleepers = self._sleepers
        if sleepers is None or sleepers.modules != self.modules:
            sleepers = self._sleepers = _Sleepers(self.modules)
        elif touched:
            sleepers.wake_all()
        sleepers.run(self, self._steps + n, done, jumps, coasting)

    def woken_by(self, aspects: frozenset[str]) -> bool:
        """Whether anything of ``aspects`` may have changed since the module stepping now last stepped
        (asked during its step, see the module docstring): always, where every module steps every
        step, on the first step after a call, and for a module that reads everything."""
        bits = _SET_BITS.get(aspects)
        return bool(self._woken & (_bits(aspects) if bits is None else bits))

    def _jump_to(self, steps: int) -> None:
        """Skip to after step ``steps``: every step between changes nothing (the modules sleep)."""
        self._steps = steps
        self.time = _step_time(steps)

    def clock_of_day(self) -> float:
        """Seconds after midnight now."""
        return (self.clock_start_s + self.time) % 86400.0

    def emit(self, kind: str, source: str, **data: Any) -> Event:
        """An event agents may be told of (a device event, a message from a person)."""
        event = Event(self.time, kind, source, data)
        self.events.append(event)
        return event

    def note(self, kind: str, source: str, **data: Any) -> Event:
        """Record a ground-truth milestone (not an event the agent is told of)."""
        event = Event(self.time, kind, source, data)
        self.milestones.append(event)
        return event

    def events_since(self, index: int) -> list[Event]:
        return self.events[index:]

    # --- lookup ---------------------------------------------------------------------------------

    @overload
    def module(self, kind: type[_Kind]) -> _Kind: ...

    @overload
    def module(self, kind: str) -> Dynamics: ...

    def module(self, kind: type[_Kind] | str) -> _Kind | Dynamics:
        """The dynamics module registered under ``kind``'s name (a class or the name itself)."""
        name = kind if isinstance(kind, str) else kind.name
        for m in self.modules:
            if m.name == name:
                return m
        raise KeyError(f"no dynamics module {name!r}; modules: {', '.join(m.name for m in self.modules)}")

    def running(self, kind: type[_Kind]) -> _Kind | None:
        """The dynamics module of ``kind`` if the world runs it (a partial world may not).

        Modules are found by name, so a stand-in registered under a class's name (a wrapper that
        times its module's steps and passes on the rest) answers for that class.
        """
        name = kind.name
        for m in self.modules:  # a loop, not a generator: the devices ask this of every sensor
            if m.name == name:
                return cast(_Kind, m)
        return None

    def add_module(self, module: Dynamics) -> None:
        if any(m.name == module.name for m in self.modules):
            raise ValueError(f"dynamics module {module.name!r} added twice")
        self.modules.append(module)

    def devices_of_type(self, device_type: str) -> list[DeviceState]:
        return [d for d in self.devices.values() if d.type == device_type]

    def objects_of_class(self, semantic_class: str) -> list[ObjectState]:
        return [o for o in self.objects.values() if o.semantic_class == semantic_class]

    def residents(self) -> list[PersonState]:
        return [p for p in self.people.values() if p.role == "resident"]

    # --- ground truth as plain data --------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The full ground truth as plain data (see the module docstring)."""
        return {
            "time": self.time,
            "openings": {k: asdict(v) for k, v in self.openings.items()},
            "parts": {f"{f}/{p}": v for (f, p), v in self.parts.items()},
            "objects": {k: asdict(v) for k, v in self.objects.items()},
            "devices": {k: {"type": v.type, "room": v.room, "values": dict(v.values), "faults": dict(v.faults)}
                        for k, v in self.devices.items()},
            "people": {k: asdict(v) for k, v in self.people.items()},
            "robot": None if self.robot is None else _robot_snapshot(self.robot),
            "messages": [asdict(m) for m in self.messages],
            "modules": {m.name: m.snapshot() for m in self.modules},
        }


#: A module's ``coast(world, steps, take)`` (see the module docstring).
Coast = Callable[["World", int, bool], int]
#: Coasting fewer steps than this is left to the steps one by one (asking costs about a step).
COAST_AT_LEAST = 2
#: The most steps coasted at once: a module that could coast further works out no more than this
#: before the others have their say.
COAST_AT_MOST = 256


class _Sleepers:
    """Which modules of a world sleep, and until when (see the module docstring): per module, what
    changed since its last step that it reads (``dirty``, bits of :func:`_bits`; 0: nothing), the
    time it asked to step again, and what wakes it."""

    def __init__(self, modules: list[Dynamics]):
        self.modules = list(modules)
        self.steps = [m.step for m in modules]
        self.rests: list[Callable[[World], Rest] | None] = [getattr(m, "rest", None) for m in modules]
        self.dirty = [-1] * len(modules)
        self.until = [-math.inf] * len(modules)
        self.wakes_on = [-1] * len(modules)
        #: The modules that read a change (by its bits), while what each module reads stays the same.
        self.readers: dict[int, list[int]] = {}
        #: Each module's last rest and what it changed as bits (a module handing back the same rest
        #: object spares working them out again).
        self.last: list[Rest | None] = [None] * len(modules)
        self.changed = [-1] * len(modules)
        self.coasts: list[Coast | None] = [getattr(m, "coast", None) for m in modules]
        self.refused = -1  # the module that last could not coast

    def wake_all(self) -> None:
        self.dirty[:] = [-1] * len(self.modules)

    def run(self, world: World, last: int, done: Callable[[], bool] | None, jumps: bool = True,
            coasting: bool = True) -> None:
        """Step ``world`` up to step ``last``: skip to the next step where a module wakes (unless not
        ``jumps``: ``done()`` is asked after every step), step the modules awake then, or let them
        coast (with ``coasting``, and ``jumps`` or a ``done`` that says how many steps go by without a
        stop: see the module docstring); stop early after a step where ``done()`` holds."""
        dirty, until = self.dirty, self.until
        steady = done if isinstance(done, _WhileGoing) else None
        coasting = coasting and (jumps or steady is not None) and any(self.coasts)
        while world._steps < last:
            settled = (jumps or coasting) and not any(dirty)  # nothing woken: the modules may jump or coast
            if settled and coasting and self._coast(world, last, steady):
                continue
            if settled and jumps:
                wake = min(until) - WAKE_EARLY_S
                nxt = world._steps + 1
                # (a step's time is past the last one's: a wake not past it is no later than the next)
                if wake > world.time and round(nxt * STEP_S, 6) < wake:
                    nxt = max(nxt, int(math.floor(wake / STEP_S)) if wake < math.inf else last + 1)
                    while nxt <= last and round(nxt * STEP_S, 6) < wake:
                        nxt += 1
                    if nxt > last:
                        world._jump_to(last)
                        return
                    world._jump_to(nxt - 1)
            nxt = world._steps + 1
            world._steps, world.time = nxt, _step_time(nxt)
            self.step(world)
            if done is not None and done():
                return

    def _coast(self, world: World, last: int, steady: _WhileGoing | None = None) -> int:
        """Let the modules due at the next step coast, if each can and none changes what another reads,
        up to the step before another module is due (and ``last``, and :data:`COAST_AT_MOST` at once,
        and the steps ``steady`` lets go by): the steps they took. Each is asked first whether it can
        take :data:`COAST_AT_LEAST` (the one that last could not, first), so one that can coast far
        works out its steps only where the others can coast too."""
        due = _step_time(world._steps + 1) + WAKE_EARLY_S
        refused = self.refused  # most often it refuses again: asked before anything else is looked at
        if refused >= 0 and self.until[refused] <= due and \
                cast(Coast, self.coasts[refused])(world, COAST_AT_LEAST, False) < COAST_AT_LEAST:
            return 0
        group: list[int] = []
        for i, u in enumerate(self.until):
            if u <= due:
                if self.coasts[i] is None or u != -math.inf or self._wakes_another(i):
                    return 0
                group.append(i)
        if not group:
            return 0
        for i in group:
            if i != refused and cast(Coast, self.coasts[i])(world, COAST_AT_LEAST, False) < COAST_AT_LEAST:
                self.refused = i
                return 0
        coasts = [cast(Coast, self.coasts[i]) for i in group]
        first = self._first_due(world, min((u for u in self.until if u > due), default=math.inf), last)
        steps = min(first - 1, last, world._steps + COAST_AT_MOST) - world._steps
        if steady is not None and steps >= COAST_AT_LEAST:
            steps = steady.steady(steps)
        if steps < COAST_AT_LEAST:
            return 0
        for coast in coasts:
            steps = min(steps, coast(world, steps, False))
        world._jump_to(world._steps + steps)
        for coast in coasts:
            took = coast(world, steps, True)
            if took != steps:
                raise RuntimeError(f"a dynamics module coasted {took} steps of the {steps} it said it would")
        if steady is not None:
            steady.coasted(steps)
        return steps

    def _wakes_another(self, i: int) -> bool:
        """Whether what module ``i`` changed in its last step wakes any other module."""
        changed = self.changed[i]
        if changed == -1:
            return True
        if not changed:
            return False
        woken = self.readers.get(changed)
        return any(j != i for j in (self._readers_of(changed) if woken is None else woken))

    def _readers_of(self, changed: int) -> list[int]:
        """The modules that read a change of ``changed`` (bits), kept in :attr:`readers`."""
        woken = self.readers[changed] = [j for j, reads in enumerate(self.wakes_on) if reads & changed]
        return woken

    @staticmethod
    def _first_due(world: World, until: float, last: int) -> int:
        """The first step after now at which a module asking to step at ``until`` is due (as
        :meth:`step` tells), or ``last + 1`` if none up to ``last`` is."""
        wake = until - WAKE_EARLY_S
        if wake > _step_time(last):
            return last + 1
        nxt = max(world._steps + 1, int(math.floor(wake / STEP_S)))
        while _step_time(nxt) < wake:
            nxt += 1
        return nxt

    def step(self, world: World) -> None:
        """One step of the modules awake, each one dirty or due, in order; what a step changes wakes
        the others that read it (a module's own change is its own step's to finish)."""
        dirty, until, wakes_on, rests, readers = self.dirty, self.until, self.wakes_on, self.rests, self.readers
        last, changes = self.last, self.changed
        due = world.time + WAKE_EARLY_S
        for i, step in enumerate(self.steps):
            if not dirty[i] and until[i] > due:
                continue
            rest = rests[i]
            world._woken = dirty[i] if rest is not None else -1
            step(world, STEP_S)
            now = rest(world) if rest is not None else RESTLESS
            until[i] = now.until
            if now is not last[i] and now != last[i]:  # an equal rest made anew: the same bits
                last[i] = now
                changes[i] = _bits(now.changed)
                wakes = _bits(now.wakes_on)
                if wakes != wakes_on[i]:
                    wakes_on[i] = wakes
                    readers.clear()
            changed = changes[i]
            if changed == -1:  # anything, a module's own state included
                dirty[:] = [-1] * len(dirty)
            elif changed:
                woken = readers.get(changed)
                if woken is None:
                    woken = self._readers_of(changed)
                for j in woken:
                    dirty[j] |= changed
            dirty[i] = 0
        world._woken = -1


def _owing(owed_s: float, seconds: float) -> tuple[int, float]:
    """The whole steps ``seconds`` more come to with ``owed_s`` carried, and what is carried after."""
    owed = owed_s + max(seconds, 0.0)
    n = int(math.floor(owed / STEP_S + 1e-9))
    return n, max(owed - n * STEP_S, 0.0)


def _step_asked(time: float, until: float) -> float:
    """The seconds a call for one step asks for at ``time``: a step, less where ``until`` comes first."""
    return min(STEP_S, max(until - time, 0.0))


class _WhileGoing:
    """What :meth:`World._steps_while` asks after each step: whether to stop, because ``going()`` no
    longer holds or the call after this one owes other than one step (:attr:`owed`: -1 where ``going()``
    stopped). A step that moves the clock only by coasting (see the module docstring) changes nothing
    ``going()`` reads, so of the steps the modules could coast, :meth:`steady` says how many go by
    without a stop, and :meth:`coasted` carries the remainder as asking after each would have."""

    def __init__(self, world: World, going: Callable[[], bool], until: float):
        self.world, self.going, self.until = world, going, until
        self.owed = -1

    def __call__(self) -> bool:
        if not self.going():
            self.owed = -1
            return True
        world = self.world
        self.owed = world._owe(_step_asked(world.time, self.until))
        return self.owed != 1

    def steady(self, steps: int) -> int:
        """Of the next ``steps`` steps, how many in a row each owe the next call one step."""
        return self._owing_one(self.world._steps, steps)[0]

    def coasted(self, steps: int) -> None:
        """The world's clock moved on by ``steps`` (each owing one step, :meth:`steady`): carry their
        remainder."""
        world = self.world
        world._owed_s = self._owing_one(world._steps - steps, steps)[1]
        self.owed = 1

    def _owing_one(self, now: int, steps: int) -> tuple[int, float]:
        """How many of the ``steps`` steps after step ``now`` in a row each owe one step, and the
        remainder carried after them. A remainder that comes back unchanged from a whole step comes back
        so from every one after it, as long as the call's time left holds a whole step."""
        owed_s, until = self.world._owed_s, self.until
        for k in range(1, steps + 1):
            seconds = _step_asked(_step_time(now + k), until)
            n, after = _owing(owed_s, seconds)
            if n != 1:
                return k - 1, owed_s
            if after == owed_s and seconds == STEP_S and until - _step_time(now + steps) >= STEP_S:
                return steps, owed_s
            owed_s = after
        return steps, owed_s


#: The world's time after each step (``round(step * STEP_S, 6)``), worked out once for the first
#: :data:`STEP_TIMES_KEPT` steps: the steps read it every step.
_STEP_TIMES: list[float] = []
STEP_TIMES_KEPT = 1 << 17


def _step_time(step: int) -> float:
    """The world's time after step ``step``."""
    times = _STEP_TIMES
    if step < len(times):
        return times[step]
    if step >= STEP_TIMES_KEPT:
        return round(step * STEP_S, 6)
    times.extend(round(n * STEP_S, 6) for n in range(len(times), min(max(2 * step, 1024), STEP_TIMES_KEPT)))
    return times[step]


#: Each aspect's bit, and each set of aspects' bits (all bits for :data:`EVERYTHING`).
_ASPECT_BITS: dict[str, int] = {}
_SET_BITS: dict[frozenset[str], int] = {}


def _bits(aspects: frozenset[str]) -> int:
    """A set of aspects as bits (-1, every bit, for :data:`EVERYTHING`)."""
    bits = _SET_BITS.get(aspects)
    if bits is None:
        if "*" in aspects:
            bits = -1
        else:
            bits = 0
            for aspect in sorted(aspects):
                bits |= 1 << _ASPECT_BITS.setdefault(aspect, len(_ASPECT_BITS))
        bits = _SET_BITS[aspects] = bits
    return bits


def _robot_snapshot(robot: RobotState) -> dict[str, Any]:
    return {"body": robot.body.id, "room": robot.room, "x": robot.x, "y": robot.y, "yaw": robot.yaw,
            "head_yaw": robot.head_yaw, "head_pitch": robot.head_pitch, "held": dict(robot.held)}


def _object_state(home: Home, obj: HomeObject) -> ObjectState:
    loc = obj.location
    placement = Placement(kind=loc.kind, room=loc.room, furniture=loc.furniture, name=loc.name)
    props: dict[str, Any] = {}
    if obj.soil_moisture is not None:
        props["soil_moisture"] = obj.soil_moisture
    if obj.capacity_l is not None:
        props["capacity_l"] = obj.capacity_l
    if obj.contents is not None:
        props["contents"] = obj.contents.model_dump() if hasattr(obj.contents, "model_dump") else obj.contents
    return ObjectState(obj.id, obj.catalog_id, obj.semantic_class, placement, obj.pose.x, obj.pose.y, obj.pose.z,
                       props)


#: Values a copy shares: immutable.
_ATOMS = frozenset({str, int, float, bool, type(None)})


@dataclass
class _Wrapped:
    value: Any


def plain_copy(value: Any) -> Any:
    """A copy of a value as :func:`dataclasses.asdict` makes one: dicts and lists rebuilt, dataclasses
    turned into dicts, anything else deep-copied; plain values, dicts and lists take a short cut."""
    kind = type(value)
    if kind is dict:
        out = {}  # a loop, not a comprehension: most dicts copied are small, and a comprehension is a call
        for k, v in value.items():
            out[k if type(k) in _ATOMS else plain_copy(k)] = v if type(v) in _ATOMS else plain_copy(v)
        return out
    if kind is list:
        return [v if type(v) in _ATOMS else plain_copy(v) for v in value]
    if kind in _ATOMS:
        return value
    return asdict(_Wrapped(value))["value"]


def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


class Identified(Protocol):
    """Anything with an id (a home's rooms, furniture, devices; the world's states)."""

    @property
    def id(self) -> str: ...


def ids(items: Iterable[Identified]) -> list[str]:
    return [i.id for i in items]
