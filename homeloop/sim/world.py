"""The simulated home: ground truth that evolves in fixed steps.

A :class:`World` is built from a home file and a catalog (the scenario adds
people, objects, hazards and faults; :mod:`homeloop.sim.scenario`). It holds
the state of every opening, articulated part, carryable object, device,
person and the robot, plus the state each dynamics module keeps
(:attr:`World.modules`). Time advances only through :meth:`World.advance`, in
steps of :data:`STEP_S`; the agent's thinking takes no simulated time
(docs/episodes.md).

Each dynamics module (:mod:`homeloop.sim.dynamics`) is an object with a
``name``, a ``step(world, dt)`` method and a ``snapshot()`` method returning
plain data; modules run in the order they were added, devices last, so a
sensor reads the state its step produced. Everything random draws from
:attr:`World.rng`, seeded from the episode's seed: equal seeds, equal traces.

:meth:`World.snapshot` gives the full ground truth as plain data (lists,
dicts, numbers, strings): what checks, records and the reference agent read.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Protocol, TypeVar, cast, overload

import numpy as np

from homeloop.core.catalog import Catalog, RobotEntry
from homeloop.core.home import Home, HomeObject

#: Fixed simulated step (s): docs/episodes.md.
STEP_S = 0.1


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
    """What :meth:`World.advance` steps: a named module with a step and a plain-data snapshot."""

    name: str

    def step(self, world: "World", dt: float) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...


#: A dynamics module's class, as :meth:`World.module` and :meth:`World.running` take it.
_Kind = TypeVar("_Kind", bound=Dynamics)


class World:
    """Ground truth of one home during one episode (see the module docstring)."""

    def __init__(self, home: Home, catalog: Catalog, seed: int, *, clock_start_s: float = 12 * 3600.0):
        self.home = home
        self.catalog = catalog
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

    # --- time -----------------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Step the world forward by ``seconds``, in whole steps: a remainder shorter than a step
        is carried to the next call, so many short actions add up to the time they take."""
        owed = self._owed_s + max(seconds, 0.0)
        n = int(math.floor(owed / STEP_S + 1e-9))
        self._owed_s = max(owed - n * STEP_S, 0.0)
        steps = [m.step for m in self.modules]
        for _ in range(n):
            self._steps += 1
            self.time = round(self._steps * STEP_S, 6)
            for step in steps:
                step(self, STEP_S)

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
        found = next((m for m in self.modules if m.name == kind.name), None)
        return cast(_Kind | None, found)

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
        return {k if type(k) in _ATOMS else plain_copy(k): v if type(v) in _ATOMS else plain_copy(v)
                for k, v in value.items()}
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
