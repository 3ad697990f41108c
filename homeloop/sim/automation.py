"""The hub's schedules and automations, run in simulated time (docs/skills.md, "Schedules and automations").

A **schedule** sets one device field at one time; an **automation** sets one
when a trigger fires, optionally after a delay. A trigger is a device event
(a contact sensor's ``opened``, the catalog's ``events:``,
:data:`homeloop.sim.devices.EVENTS`) or a device field crossing a threshold
(``above``, ``below``, or starting to ``equal`` a value). An automation fires
each time its trigger starts to hold; a field already past its threshold when
the automation is made fires only once it has crossed back and again, as a
hub's numeric trigger does.

:class:`HubAutomation` is the hub's engine and a dynamics module: it steps
after the devices, so it sees the events and readings of the step it is in,
and it sleeps (:class:`~homeloop.sim.world.Rest`) until its next firing or,
while an automation is armed, until a device changes or an event comes.
Firing is an event the episode records: ``schedule_fired`` /
``automation_fired`` with the device, field and value, or ``schedule_failed``
/ ``automation_failed`` with the reason, when the device does not answer or
refuses the action (a lock throwing its bolt on an open door), as a real hub
reports it. Nothing is random: the same calls give the same firing times.

Refused when made, with a reason the agent can act on (:class:`AutomationError`):
an action the device's field does not accept; a schedule for a time already
past; an automation whose action writes what its own trigger reads (it
triggers itself) or closes a cycle with the automations kept (A's action
triggers B, B's triggers A); more than :data:`MAX_SCHEDULES` made in one
episode. What an action writes is its device's field and, for a light
switch, the ``on`` of the lights it switches, and for a plug its reported
power; what the world then does (a room warming after the setpoint moved)
is not followed.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from homeloop.core.catalog import FieldValue
from homeloop.sim import devices
from homeloop.sim.world import NOTHING, Rest, World

#: The most schedules and automations a hub takes in one episode (cancelled ones count).
MAX_SCHEDULES = 50

#: What a step that fires or queues a firing changes (a device's value, a lock's door, the firing's event,
#: and the hub's own rules, "hub_automation"), and what wakes an armed automation
#: (:class:`~homeloop.sim.world.Rest`).
CHANGES = frozenset({"devices", "openings", "events", "hub_automation"})
READS = frozenset({"devices", "events"})

#: Earliest a schedule may be set for: later than now by at least one step of the world (s).
MIN_LEAD_S = 0.1

Status = Literal["pending", "armed", "fired", "failed", "cancelled"]
Kind = Literal["schedule", "automation"]

#: The reading a plug's switch also changes: the power it reports (:func:`writes`).
_PLUG_POWER = "power_w"


class AutomationError(ValueError):
    """A schedule or automation the hub refuses, or an unknown one to cancel."""


@dataclass(frozen=True)
class Action:
    """Set ``field`` of device ``device_id`` to ``value``."""

    device_id: str
    field: str
    value: FieldValue

    def plain(self) -> dict[str, Any]:
        return {"device_id": self.device_id, "field": self.field, "value": self.value}


@dataclass(frozen=True)
class Trigger:
    """A device event (``event``), or a field of the device crossing ``above`` / ``below`` or
    starting to ``equal`` a value."""

    device_id: str
    event: str | None = None
    field: str | None = None
    above: float | None = None
    below: float | None = None
    equals: FieldValue = None

    def holds(self, reading: Any) -> bool:
        """Whether a field trigger holds for ``reading``."""
        if self.above is not None:
            return _number(reading) and reading > self.above
        if self.below is not None:
            return _number(reading) and reading < self.below
        return bool(reading == self.equals)

    def plain(self) -> dict[str, Any]:
        kept = {"event": self.event, "field": self.field, "above": self.above, "below": self.below,
                "equals": self.equals}
        return {"device_id": self.device_id, **{k: v for k, v in kept.items() if v is not None}}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Rule:
    """A schedule or an automation the hub keeps, with what became of it."""

    id: str
    kind: Kind
    action: Action
    at: float | None = None  # world time, for a schedule
    trigger: Trigger | None = None
    delay_s: float = 0.0
    status: Status = "pending"
    fired: list[float] = field(default_factory=list)  # world times it fired (failures included)
    reason: str = ""  # why its last firing failed
    holding: bool = False  # whether a field trigger held at the last look
    since: int = 0  # the first of the world's events an event trigger looks at

    def writes(self, world: World) -> frozenset[tuple[str, str]]:
        return writes(world, self.action)

    def reads(self, world: World) -> tuple[str, str] | None:
        return reads(world, self.trigger) if self.trigger is not None else None


def writes(world: World, action: Action) -> frozenset[tuple[str, str]]:
    """The (device, field) readings an action changes (see the module docstring)."""
    entry = devices.home_device(world, action.device_id)
    out = {(action.device_id, action.field)}
    if entry.type == "light_switch":
        out.update((light, "on") for light in entry.controls if light in world.devices)
    elif entry.type == "plug":
        out.add((action.device_id, _PLUG_POWER))
    return frozenset(out)


def reads(world: World, trigger: Trigger) -> tuple[str, str]:
    """The (device, field) reading a trigger watches (an event's, from the event table)."""
    if trigger.field is not None:
        return trigger.device_id, trigger.field
    kind = world.devices[trigger.device_id].type
    source = next(t.field for t in devices.EVENTS.get(kind, ()) if t.event == trigger.event)
    return trigger.device_id, source


def _reading(world: World, trigger: Trigger) -> Any:
    """What the hub reads of a field trigger's device field now (a fault's value, where one replaces it)."""
    state = world.devices[trigger.device_id]
    return state.faults.get(trigger.field or "", state.values.get(trigger.field or ""))


def check_action(world: World, action: Action) -> FieldValue:
    """The value the action sets, as its field accepts it, or :class:`AutomationError`."""
    try:
        entry = devices.home_device(world, action.device_id)
    except devices.DeviceError as exc:
        raise AutomationError(str(exc)) from None
    spec = entry.fields.get(action.field)
    if spec is None or not spec.settable:
        settable = ", ".join(entry.settable_fields) or "none"
        raise AutomationError(f"{action.device_id} has no settable field {action.field!r}; settable: {settable}")
    try:
        return spec.check(action.value)
    except ValueError as exc:
        raise AutomationError(f"{action.device_id}.{action.field}: {exc}") from None


def check_trigger(world: World, trigger: Trigger) -> None:
    """:class:`AutomationError` unless the trigger names one event of the device, or one of its fields
    with one threshold (a number for ``above`` and ``below``)."""
    entry = devices.home_device(world, trigger.device_id)
    thresholds = [t for t in (trigger.above, trigger.below, trigger.equals) if t is not None]
    if (trigger.event is None) == (trigger.field is None):
        raise AutomationError("give the trigger's event, or its field with above, below or equals")
    if trigger.event is not None:
        known = [t.event for t in devices.EVENTS.get(entry.type, ())]
        if trigger.event not in known or thresholds:
            raise AutomationError(f"{trigger.device_id} ({entry.type}) raises the events: "
                                  f"{', '.join(dict.fromkeys(known)) or 'none'}")
        return
    if trigger.field not in entry.fields:
        raise AutomationError(f"{trigger.device_id} has no field {trigger.field!r}; its fields: "
                              f"{', '.join(entry.fields)}")
    if len(thresholds) != 1:
        raise AutomationError("give one of above, below and equals for a field trigger")
    if any(isinstance(t, float) and not math.isfinite(t) for t in thresholds):
        raise AutomationError(f"the threshold must be a number, got {thresholds[0]!r}")
    if trigger.equals is None and entry.fields[trigger.field].type not in ("int", "float"):
        raise AutomationError(f"{trigger.device_id}.{trigger.field} is not a number; use equals")


class HubAutomation:
    """The hub's schedules and automations (see the module docstring)."""

    name = "hub_automation"

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}
        self._due: list[tuple[float, int, str]] = []  # (world time, order, rule id): firings to come
        self._order = 0
        self._changed = False

    # --- making and cancelling ------------------------------------------------------------------

    def schedule(self, world: World, action: Action, at: float) -> Rule:
        """Keep a schedule of ``action`` at world time ``at`` (see the module docstring)."""
        value = check_action(world, action)
        if at < world.time + MIN_LEAD_S - 1e-9:
            raise AutomationError(f"that time is in the past (or now): the hub runs a schedule at least "
                                  f"{MIN_LEAD_S:g} s ahead")
        rule = self._new("schedule", Action(action.device_id, action.field, value), at=at)
        self._push(at, rule.id)
        return rule

    def automate(self, world: World, action: Action, trigger: Trigger, delay_s: float = 0.0) -> Rule:
        """Keep an automation: ``action`` after ``delay_s`` whenever ``trigger`` fires."""
        value = check_action(world, action)
        check_trigger(world, trigger)
        if not delay_s >= 0 or not math.isfinite(delay_s):
            raise AutomationError(f"the delay must be 0 s or more, got {delay_s!r}")
        action = Action(action.device_id, action.field, value)
        watched = reads(world, trigger)
        if watched in writes(world, action):
            raise AutomationError(f"this automation triggers itself: its action writes {watched[0]}.{watched[1]}, "
                                  f"which its trigger watches")
        loop = self._cycle(world, action, watched)
        if loop:
            raise AutomationError(f"this automation would close a cycle of automations: {' -> '.join(loop)}")
        rule = self._new("automation", action, trigger=trigger, delay_s=delay_s, since=len(world.events))
        rule.status = "armed"
        if trigger.field is not None:
            rule.holding = trigger.holds(_reading(world, trigger))
        return rule

    def cancel(self, rule_id: str) -> Rule:
        """Cancel a schedule or automation still to fire (an automation stops firing)."""
        rule = self.rules.get(rule_id)
        if rule is None:
            raise AutomationError(f"unknown schedule {rule_id!r}; the hub keeps: {', '.join(self.rules) or 'none'}")
        if rule.status not in ("pending", "armed"):
            raise AutomationError(f"{rule_id} has {rule.status} already; only a pending schedule or an armed "
                                  f"automation can be cancelled")
        rule.status = "cancelled"
        self._due = [d for d in self._due if d[2] != rule_id]
        heapq.heapify(self._due)
        return rule

    def _new(self, kind: Kind, action: Action, **fields: Any) -> Rule:
        if len(self.rules) >= MAX_SCHEDULES:
            raise AutomationError(f"the hub takes at most {MAX_SCHEDULES} schedules and automations per episode "
                                  f"(cancelled ones count), and has taken {len(self.rules)}")
        prefix = "sched" if kind == "schedule" else "auto"
        rule = Rule(id=f"{prefix}_{len(self.rules) + 1}", kind=kind, action=action, **fields)
        self.rules[rule.id] = rule
        return rule

    def _cycle(self, world: World, action: Action, watched: tuple[str, str]) -> list[str]:
        """The automations a new one (writing ``action``, watching ``watched``) would loop through, back
        to itself; empty when it closes no cycle."""
        armed = [r for r in self.rules.values() if r.status == "armed"]
        written = writes(world, action)
        start = [r for r in armed if r.reads(world) in written]
        paths = [[r] for r in start]
        seen: set[str] = set()
        while paths:
            path = paths.pop(0)
            last = path[-1]
            if watched in last.writes(world):
                return ["new", *(r.id for r in path), "new"]
            if last.id in seen:
                continue
            seen.add(last.id)
            out = last.writes(world)
            paths.extend(path + [r] for r in armed if r.reads(world) in out and r.id not in seen)
        return []

    def _push(self, at: float, rule_id: str) -> None:
        self._order += 1
        heapq.heappush(self._due, (at, self._order, rule_id))

    def _armed(self) -> list[Rule]:
        return [r for r in self.rules.values() if r.status == "armed"]

    # --- the dynamics module --------------------------------------------------------------------

    def step(self, world: World, dt: float) -> None:
        self._changed = False
        armed = self._armed()
        if armed:
            self._look(world, armed)
        due = world.time + 1e-6
        while self._due and self._due[0][0] <= due:
            _, _, rule_id = heapq.heappop(self._due)
            self._fire(world, self.rules[rule_id])

    def _look(self, world: World, armed: list[Rule]) -> None:
        """Queue the firings of the automations whose triggers started to hold."""
        events = world.events
        for rule in armed:
            trigger = rule.trigger
            assert trigger is not None
            if trigger.event is not None:
                hits = sum(1 for e in events[rule.since:] if e.kind == trigger.event and e.source == trigger.device_id)
                rule.since = len(events)
            else:
                now = trigger.holds(_reading(world, trigger))
                hits, rule.holding = int(now and not rule.holding), now
            for _ in range(hits):
                self._push(world.time + rule.delay_s, rule.id)
                self._changed = True

    def _fire(self, world: World, rule: Rule) -> None:
        if rule.status == "cancelled":
            return
        a = rule.action
        rule.fired.append(world.time)
        try:
            devices.set_state(world, a.device_id, a.field, a.value)
        except devices.DeviceError as exc:
            rule.reason = str(exc)
            rule.status = "failed" if rule.kind == "schedule" else rule.status
            world.emit(f"{rule.kind}_failed", rule.id, **a.plain(), reason=rule.reason)
        else:
            rule.status = "fired" if rule.kind == "schedule" else rule.status
            world.emit(f"{rule.kind}_fired", rule.id, **a.plain())
        self._changed = True

    def rest(self, world: World) -> Rest:
        """Asleep until the next firing; while an automation is armed, a device change or an event wakes it."""
        until = self._due[0][0] if self._due else math.inf
        return Rest(CHANGES if self._changed else NOTHING, until, READS if self._armed() else NOTHING)

    def snapshot(self) -> dict[str, Any]:
        return {"rules": [plain_rule(r) for r in self.rules.values()]}


def plain_rule(rule: Rule, offset: float = 0.0) -> dict[str, Any]:
    """A rule as plain data, its times less ``offset`` (the wake time, for what the agent sees)."""
    out: dict[str, Any] = {"id": rule.id, "kind": rule.kind, "status": rule.status, "action": rule.action.plain()}
    if rule.at is not None:
        out["at"] = round(rule.at - offset, 3)
    if rule.trigger is not None:
        out["trigger"] = rule.trigger.plain()
        out["delay_s"] = rule.delay_s
    out["fired"] = [round(t - offset, 3) for t in rule.fired]
    if rule.reason:
        out["reason"] = rule.reason
    return out


def engine(world: World) -> HubAutomation:
    """The world's hub engine, added after every module there now the first time it is asked for."""
    found = world.running(HubAutomation)
    if found is None:
        found = HubAutomation()
        world.add_module(found)
    return found
