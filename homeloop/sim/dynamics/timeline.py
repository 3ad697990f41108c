"""The scenario's timeline: scripted actions fired at their times (docs/dynamics.md, docs/episodes.md).

The scenario (:mod:`homeloop.sim.scenario`) resolves its timeline's roles to
ids and places and loads the result here as :class:`Action` items; each step
fires those whose time has come, in time order (ties in file order). Times are
seconds of world time (0 = the scenario's start, before the pre-roll).

Actions and what they do:

===============  ===========================================================
``message``      a person sends the assistant a message (``world.emit("message", person, text=...)``
                 and ``world.messages``)
``activity``     a person takes up an activity, walking to its place first when one is given
``walk``         a person walks somewhere and stands there
``deliver``      a courier brings ``object`` to a spot, rings the doorbell and goes
``ring_and_leave`` someone rings the doorbell and is gone before anyone answers
``break_in``     an intruder forces the front door and heads for a room
``leave_home``   a person walks out of the front door and shuts it behind them
``cook``         a person cooks at the range, keeping a burner lit
``fall``         a person collapses; their fall watch reports it
``fall_alert_misfire`` a person's fall watch reports a fall they did not have
``press_help``   a person presses their help pendant
``ring``         the doorbell is pressed (by nobody the scenario places)
``fault``        a device field's reading is replaced from now on (``clear_fault`` ends it)
``set_device``   a device field takes a value, as a person switching it by hand would
``open``, ``close``, ``lock``, ``unlock``  an opening
===============  ===========================================================

A step with nothing due costs one comparison, and the timeline sleeps until its
next action (:class:`~homeloop.sim.world.Rest`); an action fired may change
anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from homeloop.core.catalog import FieldValue
from homeloop.sim.dynamics.people import DoorWay, People
from homeloop.sim.world import EVERYTHING, NOTHING, Message, Rest, World

#: Recipient of messages people send (the assistant the agent plays).
ASSISTANT = "assistant"


@dataclass(frozen=True)
class Action:
    """One timeline action with its roles already resolved (``args`` as the handler takes them)."""

    at_s: float
    kind: str
    args: dict[str, Any] = field(default_factory=dict)


class Timeline:
    """Fires the scenario's actions at their times (see the module docstring)."""

    name = "timeline"

    def __init__(self) -> None:
        self.actions: list[Action] = []
        self.next_index = 0
        self._next_time = float("inf")
        self.fired: list[tuple[float, str]] = []
        self._fired_seen = 0

    def load(self, actions: list[Action]) -> None:
        """Set the actions (sorted by time; ties keep their order); unknown kinds are refused."""
        for a in actions:
            if a.kind not in HANDLERS:
                raise ValueError(f"unknown timeline action {a.kind!r}; actions: {', '.join(HANDLERS)}")
        self.actions = sorted(actions, key=lambda a: a.at_s)
        self.next_index = 0
        self._next_time = self.actions[0].at_s if self.actions else float("inf")

    def step(self, world: World, dt: float) -> None:
        if world.time < self._next_time - 1e-9:
            return
        while self.next_index < len(self.actions) and self.actions[self.next_index].at_s <= world.time + 1e-9:
            action = self.actions[self.next_index]
            self.next_index += 1
            HANDLERS[action.kind](world, **action.args)
            self.fired.append((world.time, action.kind))
        nxt = self.actions[self.next_index].at_s if self.next_index < len(self.actions) else float("inf")
        self._next_time = nxt

    def rest(self, world: World) -> Rest:
        """Asleep until the next action; an action fired this step may have changed anything."""
        fired, self._fired_seen = len(self.fired) != self._fired_seen, len(self.fired)
        return Rest(EVERYTHING if fired else NOTHING, self._next_time)

    def snapshot(self) -> dict[str, Any]:
        return {"fired": [list(f) for f in self.fired], "pending": len(self.actions) - self.next_index}


# --- handlers -------------------------------------------------------------------------------------


def _people(world: World) -> People:
    return world.module(People)


def _message(world: World, person: str, text: str) -> None:
    world.messages.append(Message(world.time, person, ASSISTANT, text))
    world.emit("message", person, text=text)


def _activity(world: World, person: str, activity: str, place: tuple[float, float, str | None] | None = None,
              yaw: float | None = None) -> None:
    if place is None:
        _people(world).set_activity(world, person, activity)
    else:
        _people(world).go(world, person, place[:2], place[2], activity, yaw)


def _walk(world: World, person: str, place: tuple[float, float, str | None]) -> None:
    _people(world).go(world, person, place[:2], place[2], "standing")


def _deliver(world: World, person: str, door: DoorWay, place: tuple[float, float, str | None],
             doorbell: str | None, object: str | None = None) -> None:
    _people(world).deliver(world, person, door, place, doorbell, object)


def _ring_and_leave(world: World, person: str, door: DoorWay, doorbell: str) -> None:
    _people(world).ring_and_leave(world, person, door, doorbell)


def _break_in(world: World, person: str, door: DoorWay, place: tuple[float, float, str], lights: list[str]) -> None:
    _people(world).break_in(world, person, door, place, lights)


def _leave_home(world: World, person: str, door: DoorWay) -> None:
    _people(world).leave_home(world, person, door)


def _cook(world: World, person: str, device: str, field: str) -> None:
    _people(world).cook(world, person, device, field)


def _fall(world: World, person: str) -> None:
    _people(world).fall(world, person)


def _fall_alert_misfire(world: World, person: str) -> None:
    _people(world).misfire_fall_alert(world, person)


def _press_help(world: World, person: str) -> None:
    _people(world).press_help(world, person)


def _ring(world: World, device: str) -> None:
    from homeloop.sim.devices import press

    press(world, device)


def _fault(world: World, device: str, field: str, value: FieldValue) -> None:
    world.devices[device].faults[field] = value
    world.note("fault", device, field=field, value=value)


def _clear_fault(world: World, device: str, field: str) -> None:
    world.devices[device].faults.pop(field, None)
    world.note("fault_cleared", device, field=field)


def _set_device(world: World, device: str, field: str, value: FieldValue) -> None:
    world.devices[device].values[field] = value


def _opening(flag: str, value: bool) -> Callable[..., None]:
    def handler(world: World, opening: str) -> None:
        setattr(world.openings[opening], flag, value)

    return handler


HANDLERS: dict[str, Callable[..., None]] = {
    "message": _message, "activity": _activity, "walk": _walk, "deliver": _deliver,
    "ring_and_leave": _ring_and_leave, "break_in": _break_in, "leave_home": _leave_home, "cook": _cook,
    "fall": _fall, "fall_alert_misfire": _fall_alert_misfire, "press_help": _press_help, "ring": _ring,
    "fault": _fault, "clear_fault": _clear_fault, "set_device": _set_device,
    "open": _opening("open", True), "close": _opening("open", False),
    "lock": _opening("locked", True), "unlock": _opening("locked", False),
}
