"""Devices that sense and act: readings from the ground truth, actuators that are the ground truth
(docs/dynamics.md, docs/catalog.md).

Every step, after the dynamics have moved the world, :class:`Devices` (the
last dynamics module) computes the readings of the sensing devices from the
ground truth: a smoke alarm reads the smoke density at its position, a leak
sensor whether the floor under it is wet, a contact sensor and the lock's
door sensor whether their opening is open, a soil probe its plant's
moisture, a thermostat the air of its room. Actuators work the other way:
their values *are* the ground truth the dynamics read (a lit burner heats
the pan, a closed water main stops the leak, a light that is on lights its
room); the lock and the garage door opener are bound to their opening, so
throwing the bolt locks the door that paths and people meet.

A fault (:attr:`DeviceState.faults`) replaces a reading the agent sees (a
smoke alarm reporting smoke over a clear kitchen); the ground truth stays.

Device events (the catalog's ``events:`` lists) come from one table,
:data:`EVENTS`: a reading that starts to satisfy a transition emits its
event with :meth:`World.emit` (the smoke alarm trips → ``smoke_alarm``).

:func:`set_state` changes a device on purpose (the hub's ``set_state``
skill, the robot pressing a switch): it checks the value against the field's
specification in the home file and applies the effects (a light switch
switches its lights, a plug powers its load, the lock throws its bolt);
:func:`press` presses a momentary button (the doorbell, a help pendant).
"""

from __future__ import annotations

import difflib
import math
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from homeloop.core.catalog import FieldValue
from homeloop.core.home import Device, DeviceField
from homeloop.sim.dynamics.air_devices import fan_speed
from homeloop.sim.dynamics.climate import Climate
from homeloop.sim.dynamics.humidity import Humidity
from homeloop.sim.dynamics.smoke import SMOKE_ALARM_DENSITY, Smoke  # the alarm's trip point, docs/dynamics.md
from homeloop.sim.dynamics.water import Water
from homeloop.sim.world import EVERYTHING, NOTHING, DeviceState, OpeningState, Rest, World

#: Soil moisture (volumetric fraction) below which a soil probe reports the plant dry; the
#: water_the_plants task asks for more than this (its own ``min_moisture``), docs/tasks.md.
SOIL_DRY_BELOW = 0.2

#: How long a momentary button (doorbell, help pendant) reads pressed after a press (s).
PRESS_HOLD_S = 0.5

#: Power (W) a smart plug reports while on, by the class of furniture whose appliance it feeds
#: (a television on a TV unit, a desk's computer and lamp, a table lamp); nothing plugged in: 0 W.
PLUG_LOAD_W: dict[str, float] = {"tv_unit": 95.0, "desk": 120.0, "side_table": 9.0, "nightstand": 9.0}

#: What a step changes, and what the readings come from (:class:`~homeloop.sim.world.Rest`): per sensing
#: device type (its reader, :data:`READERS`), and for the bindings and the events, the devices and doors.
CHANGES = frozenset({"devices", "openings", "events"})
SOURCES: dict[str, frozenset[str]] = {
    "smoke_sensor": frozenset({"smoke"}), "leak_sensor": frozenset({"water"}),
    "contact_sensor": frozenset({"openings"}), "lock": frozenset({"openings"}),
    "soil_moisture_sensor": frozenset({"object_props"}), "thermostat": frozenset({"climate"}),
    "humidifier": frozenset({"humidity"}), "dehumidifier": frozenset({"humidity"}),
    "fan": frozenset({"devices"}), "air_purifier": frozenset({"devices"})}
BOUND = frozenset({"devices", "openings"})
READS = BOUND.union(*SOURCES.values())

#: Device categories the hub reaches; cameras and worn devices have services of their own
#: (docs/skills.md), so withholding those services hides them from the hub too.
HUB_CATEGORIES = ("sensor", "actuator", "appliance")


class DeviceError(ValueError):
    """A device change refused: an unknown device or field, a read-only field, a value out of range."""


# --- the event table -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transition:
    """A device event: ``event`` is emitted when the reading of ``field`` starts to equal
    ``equals`` (or to be below ``below``)."""

    field: str
    event: str
    equals: FieldValue = None
    below: float | None = None

    def holds(self, value: Any) -> bool:
        if self.below is not None:
            return value is not None and bool(value < self.below)
        return bool(value == self.equals)


#: Device type -> the transitions that raise its events (homeloop/catalog/devices.yaml ``events:``).
EVENTS: dict[str, tuple[Transition, ...]] = {
    "smoke_sensor": (Transition("smoke_detected", "smoke_alarm", equals=True),),
    "leak_sensor": (Transition("leak_detected", "leak_alarm", equals=True),),
    "doorbell": (Transition("pressed", "doorbell_pressed", equals=True),),
    "contact_sensor": (Transition("state", "opened", equals="open"), Transition("state", "closed", equals="closed")),
    "soil_moisture_sensor": (Transition("moisture", "soil_dry", below=SOIL_DRY_BELOW),),
    "lock": (Transition("door_state", "door_opened", equals="open"),
             Transition("door_state", "door_closed", equals="closed"),
             Transition("lock_state", "locked", equals="locked"),
             Transition("lock_state", "unlocked", equals="unlocked")),
    "garage_door": (Transition("state", "opened", equals="open"), Transition("state", "closed", equals="closed")),
    "washer": (Transition("cycle_state", "cycle_finished", equals="finished"),),
    "dryer": (Transition("cycle_state", "cycle_finished", equals="finished"),),
    "fall_watch": (Transition("fall_detected", "fall_detected", equals=True),),
    "help_button": (Transition("pressed", "help_requested", equals=True),),
}

#: Momentary buttons: ``pressed`` reads true for :data:`PRESS_HOLD_S` after :func:`press`.
BUTTONS = ("doorbell", "help_button")


# --- readings as an agent sees them ------------------------------------------------------------------


def readings(device: DeviceState) -> dict[str, Any]:
    """Every field's reading: faults replace values; an ``online`` field reports whether it answers."""
    out = {name: device.faults.get(name, value) for name, value in device.values.items()}
    if "online" in out:
        out["online"] = bool(device.online and out["online"])
    return out


def accepted_values(spec: DeviceField) -> list[FieldValue] | dict[str, str | float]:
    """What a field accepts, as the hub shows it: a list of choices, or a numeric range."""
    if spec.type == "bool":
        return [True, False]
    if spec.type == "enum":
        choices: list[FieldValue] = list(spec.values or [])
        return choices
    if spec.type in ("int", "float", "timestamp"):
        bounds: dict[str, str | float | None] = {"type": spec.type, "min": spec.min, "max": spec.max,
                                                 "unit": spec.unit}
        return {k: v for k, v in bounds.items() if v is not None}
    return {"type": spec.type}


def _accepted_text(spec: DeviceField) -> str:
    choices = accepted_values(spec)
    if isinstance(choices, list):
        return "one of " + ", ".join(_literal(c) for c in choices)
    lo, hi = choices.get("min"), choices.get("max")
    unit = f" {choices['unit']}" if "unit" in choices else ""
    kind = "an integer" if spec.type == "int" else "a number"
    if lo is not None and hi is not None:
        return f"{kind} from {lo:g} to {hi:g}{unit}"
    return kind


def _literal(value: FieldValue) -> str:
    return "true" if value is True else "false" if value is False else repr(value)


# --- changing a device on purpose --------------------------------------------------------------------


def home_device(world: World, device_id: str) -> Device:
    """The home file's entry of a device (its fields' specifications), or :class:`DeviceError`."""
    entries = _home_devices(world)
    if device_id not in entries:
        raise DeviceError(f"unknown device {device_id!r}; {suggest_devices(world, device_id)}")
    return entries[device_id]


#: Each world's home-file device entries by id, built once (the home file does not change).
_ENTRIES: "weakref.WeakKeyDictionary[World, dict[str, Device]]" = weakref.WeakKeyDictionary()


def _home_devices(world: World) -> dict[str, Device]:
    entries = _ENTRIES.get(world)
    if entries is None:
        entries = _ENTRIES[world] = {d.id: d for d in world.home.devices}
    return entries


def suggest_devices(world: World, device_id: str, categories: tuple[str, ...] | None = None) -> str:
    """Agent-visible device ids like ``device_id`` (of ``categories``, if given): those of its type
    (and room), or near spellings."""
    visible = [d for d in world.home.devices if d.agent_visible and (categories is None or d.category in categories)]
    types = sorted({d.type for d in visible if device_id.startswith(d.type + "_")}, key=len)
    same_type = [d for d in visible if types and d.type == types[-1]]  # light_switch_… is no light_…
    if same_type:
        rest = device_id[len(same_type[0].type) + 1:]
        in_room = [d.id for d in same_type if d.room is not None and rest.split("_")[0] == d.room]
        ids = in_room or [d.id for d in same_type]
        return f"{same_type[0].type} devices: {', '.join(ids)}"
    close = difflib.get_close_matches(device_id, [d.id for d in visible], n=5, cutoff=0.6)
    if close:
        return f"did you mean {', '.join(close)}?"
    return f"the home has {len(visible)} devices; hub_list_devices names them"


def set_state(world: World, device_id: str, field: str, value: Any) -> dict[str, Any]:
    """Set a settable field of a device and apply its effects; returns the device's readings.

    Refused with :class:`DeviceError` naming the field and what it accepts: an unknown device or
    field, a read-only field, a value of the wrong type or out of range, a device that does not
    answer, or locking a door that stands open.
    """
    entry = home_device(world, device_id)
    state = world.devices[device_id]
    if field not in entry.fields:
        settable = ", ".join(entry.settable_fields) or "none"
        raise DeviceError(f"{device_id} has no field {field!r}; its fields: {', '.join(entry.fields)} "
                          f"(settable: {settable})")
    spec = entry.fields[field]
    if not spec.settable:
        settable = ", ".join(entry.settable_fields) or "none"
        raise DeviceError(f"{device_id}.{field} is read-only; settable fields of {device_id}: {settable}")
    if not state.online:
        raise DeviceError(f"{device_id} does not answer (offline)")
    try:
        value = spec.check(value)
    except ValueError as exc:
        raise DeviceError(f"{device_id}.{field}: {exc}; accepted: {_accepted_text(spec)}") from None
    EFFECTS.get(entry.type, _plain)(world, entry, field, value)
    return readings(state)


def _plain(world: World, entry: Device, field: str, value: FieldValue) -> None:
    world.devices[entry.id].values[field] = value


def _switch(world: World, entry: Device, field: str, value: FieldValue) -> None:
    """A light switch switches the lights it is bound to."""
    _plain(world, entry, field, value)
    for light in entry.controls:
        if light in world.devices:
            world.devices[light].values["on"] = value


def _plug(world: World, entry: Device, field: str, value: FieldValue) -> None:
    """A plug's reported power follows its switch and what it feeds."""
    _plain(world, entry, field, value)
    load = sum(PLUG_LOAD_W.get(_furniture_class(world, f), 0.0) for f in entry.controls)
    world.devices[entry.id].values["power_w"] = load if world.devices[entry.id].values.get("on") else 0.0


def _furniture_class(world: World, furniture_id: str) -> str:
    return next((f.semantic_class for f in world.home.furniture if f.id == furniture_id), "")


def _lock(world: World, entry: Device, field: str, value: FieldValue) -> None:
    """Throwing the bolt locks the door; a door standing open cannot be locked."""
    door = _bound_door(world, entry)
    if value == "locked" and door.open:
        raise DeviceError(f"{entry.id}: the door {door.id} is open; it must be closed before it is locked")
    _plain(world, entry, field, value)
    door.locked = value == "locked"


def _garage(world: World, entry: Device, field: str, value: FieldValue) -> None:
    _plain(world, entry, field, value)
    _bound_door(world, entry).open = value == "open"


EFFECTS: dict[str, Callable[[World, Device, str, FieldValue], None]] = {
    "light_switch": _switch, "plug": _plug, "lock": _lock, "garage_door": _garage,
}


def opening_of(world: World, entry: Device) -> str | None:
    """The opening a door device (lock, contact sensor, garage door opener) is on or watches."""
    return next((ref for ref in (entry.mounted_on, *entry.monitors, *entry.controls)
                 if ref is not None and ref in world.openings), None)


def _door_of(world: World, entry: Device) -> OpeningState | None:
    """The state of the opening a door device is on or watches, if any."""
    ref = opening_of(world, entry)
    return world.openings[ref] if ref is not None else None


def _bound_door(world: World, entry: Device) -> OpeningState:
    """The opening a lock or garage door opener works; one on no opening refuses the change."""
    door = _door_of(world, entry)
    if door is None:
        raise DeviceError(f"{entry.id} is on no opening of the home")
    return door


def press(world: World, device_id: str) -> None:
    """Press a momentary button (the doorbell, a help pendant): it reads pressed for a moment."""
    state = world.devices[device_id]
    if state.type not in BUTTONS:
        raise DeviceError(f"{device_id} is a {state.type}, not a button; buttons: {', '.join(BUTTONS)}")
    state.values["pressed"] = True
    state.values["last_pressed_at"] = world.time


# --- the dynamics module -----------------------------------------------------------------------------


class Devices:
    """Reads the sensing devices each step and emits device events (see the module docstring).

    Set up on its first step, when the scenario has placed everything: only the devices that sense
    are visited each step, through readers bound once.
    """

    name = "devices"

    def __init__(self) -> None:
        self._world: World | None = None
        self._inputs: list[tuple[dict[str, Any], str, Read]] = []
        #: The inputs by what their readings come from (:data:`SOURCES`): read again when that changed.
        self._groups: list[tuple[frozenset[str], list[tuple[dict[str, Any], str, Read]]]] = []
        self._bindings: list[_Binding] = []
        self._buttons: list[DeviceState] = []
        self._pressed_since: dict[str, float] = {}
        self._watched: list[_Watch] = []
        self.emitted = 0
        self._changed = False  # whether the last step changed a reading, a door or a button

    def _setup(self, world: World) -> None:
        self._world = world
        entries = _home_devices(world)
        for state in world.devices.values():
            entry = entries.get(state.id)
            if entry is None:
                continue
            for field, read in _readers(world, entry, state):
                self._inputs.append((state.values, field, read))
                source = SOURCES.get(entry.type, EVERYTHING)
                group = next((g for s, g in self._groups if s == source), None)
                if group is None:
                    self._groups.append((source, group := []))
                group.append((state.values, field, read))
            self._bindings.extend(_bindings(world, entry, state))
            if state.type in BUTTONS:
                self._buttons.append(state)
            by_field: dict[str, tuple[Transition, ...]] = {}
            for t in EVENTS.get(state.type, ()):
                by_field[t.field] = by_field.get(t.field, ()) + (t,)
            for field, transitions in by_field.items():
                # compared with the home file's value, so a change made while setting up is an event
                self._watched.append(_Watch(state, field, transitions, entry.fields[field].value))

    def step(self, world: World, dt: float) -> None:
        if self._world is not world:
            self._setup(world)
        changed = False
        for source, inputs in self._groups:
            if not world.woken_by(source):  # nothing the readings come from changed since the last step
                continue
            for values, field, read in inputs:
                before = values[field]
                reading = values[field] = read()
                if not changed and (reading != before or type(reading) is not type(before)):
                    changed = True
        if world.woken_by(BOUND):
            for binding in self._bindings:
                changed = binding.sync() or changed
        if self._buttons:
            changed = self._release_buttons(world) or changed
        self._changed = changed
        if changed or world.woken_by(BOUND):
            self._look_for_events(world)

    def _look_for_events(self, world: World) -> None:
        """Emit the events of the readings that start to satisfy a transition."""
        for watch in self._watched:
            state = watch.state
            value = state.faults.get(watch.field, state.values[watch.field]) if state.faults \
                else state.values[watch.field]
            if value != watch.last:
                self._transition(world, watch, value)
                self._changed = True

    def rest(self, world: World) -> Rest:
        """Asleep (:class:`~homeloop.sim.world.Rest`) until what the readings come from changes, or
        a pressed button is due to be released."""
        release = min(self._pressed_since.values(), default=math.inf) + PRESS_HOLD_S
        return Rest(CHANGES if self._changed else NOTHING, release, READS)

    def _transition(self, world: World, watch: "_Watch", value: Any) -> None:
        before, watch.last = watch.last, value
        for t in watch.transitions:
            if t.holds(value) and not t.holds(before):
                world.emit(t.event, watch.state.id)
                self.emitted += 1

    def _release_buttons(self, world: World) -> bool:
        """Release the buttons pressed long enough; whether any was pressed."""
        pressed = False
        for state in self._buttons:
            if not state.values.get("pressed"):
                continue
            pressed = True
            since = self._pressed_since.setdefault(state.id, world.time)
            if world.time - since >= PRESS_HOLD_S - 1e-9:
                state.values["pressed"] = False
                del self._pressed_since[state.id]
        return pressed

    def snapshot(self) -> dict[str, Any]:
        return {"sensing": len(self._inputs), "bound": len(self._bindings), "events_emitted": self.emitted}


class _Watch:
    """A reading whose transitions raise events, and its value at the last step."""

    __slots__ = ("state", "field", "transitions", "last")

    def __init__(self, state: DeviceState, field: str, transitions: tuple[Transition, ...], last: Any):
        self.state, self.field, self.transitions, self.last = state, field, transitions, last


# --- readers: ground truth -> readings -----------------------------------------------------------------


#: A field's reader: its reading now, from the ground truth.
Read = Callable[[], FieldValue]


def _readers(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
    make = READERS.get(entry.type)
    return make(world, entry, state) if make is not None else []


def _smoke_reader(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
    smoke = world.running(Smoke)
    if smoke is None or entry.room is None:
        return []
    density_at, room, x, y = smoke.density_at, entry.room, entry.pose.x, entry.pose.y
    return [("smoke_detected", lambda: density_at(room, x, y) > SMOKE_ALARM_DENSITY)]


def _leak_reader(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
    water = world.running(Water)
    if water is None or entry.room is None:
        return []
    wet_at, room, x, y = water.wet_at, entry.room, entry.pose.x, entry.pose.y
    return [("leak_detected", lambda: bool(wet_at(room, x, y)))]


def _opening_reader(field: str) -> Callable[[World, Device, DeviceState], list[tuple[str, Read]]]:
    def make(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
        door = _door_of(world, entry)
        if door is None:
            return []
        return [(field, lambda: "open" if door.open else "closed")]

    return make


def _soil_reader(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
    plant = next((world.objects[o] for o in entry.monitors if o in world.objects), None)
    if plant is None or "soil_moisture" not in plant.props:
        return []
    props = plant.props
    return [("moisture", lambda: round(float(props["soil_moisture"]), 4))]


def _thermostat_reader(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
    climate = world.running(Climate)
    if climate is None or entry.room is None:
        return []
    temperature, room = climate.temperature, entry.room
    return [("local_temperature", lambda: round(float(temperature(room)), 2))]


def _humidity_reader(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
    humidity = world.running(Humidity)
    if humidity is None or entry.room is None or humidity.room_percent(entry.room) is None:
        return []
    percent, room = humidity.percent, entry.room
    return [("humidity_percent", lambda: round(float(percent[room]), 2))]


def _fan_reader(world: World, entry: Device, state: DeviceState) -> list[tuple[str, Read]]:
    values = state.values
    return [("percent_current", lambda: fan_speed(values))] if "percent_current" in values else []


READERS: dict[str, Callable[[World, Device, DeviceState], list[tuple[str, Read]]]] = {
    "smoke_sensor": _smoke_reader,
    "leak_sensor": _leak_reader,
    "contact_sensor": _opening_reader("state"),
    "lock": _opening_reader("door_state"),
    "soil_moisture_sensor": _soil_reader,
    "thermostat": _thermostat_reader,
    "humidifier": _humidity_reader,
    "dehumidifier": _humidity_reader,
    "fan": _fan_reader,
    "air_purifier": _fan_reader,
}


# --- bindings: actuators tied to an opening ----------------------------------------------------------


class _Binding:
    """A device field tied both ways to an opening's flag: whichever side changed last wins.

    The lock's ``lock_state`` and the opening's ``locked``; the garage door opener's ``state`` and
    its door's ``open``. A person who unlocks the door by hand changes the opening (the device
    follows); the hub changes the device (the opening follows). At set-up the device's value wins
    unless the scenario already changed the opening.
    """

    def __init__(self, values: dict[str, Any], field: str, door: OpeningState, flag: str, on_value: str,
                 off_value: str):
        self.values, self.field, self.door, self.flag = values, field, door, flag
        self.on_value, self.off_value = on_value, off_value
        self.last_flag = False  # a world's openings start shut and unlocked
        self.last_value = values[field]
        self.sync()

    def sync(self) -> bool:
        """Bring the field and the flag into agreement; whether either had changed."""
        flag = getattr(self.door, self.flag)
        changed: bool = flag != self.last_flag or self.values[self.field] != self.last_value
        if flag != self.last_flag:
            self.values[self.field] = self.on_value if flag else self.off_value
        elif self.values[self.field] != self.last_value:
            setattr(self.door, self.flag, self.values[self.field] == self.on_value)
        elif (self.values[self.field] == self.on_value) != flag:  # first sync: the device's value wins
            setattr(self.door, self.flag, self.values[self.field] == self.on_value)
        changed = changed or bool(getattr(self.door, self.flag) != self.last_flag)
        self.last_flag = getattr(self.door, self.flag)
        self.last_value = self.values[self.field]
        return changed


def _bindings(world: World, entry: Device, state: DeviceState) -> list[_Binding]:
    if entry.type == "lock":
        door = _door_of(world, entry)
        return [] if door is None else [_Binding(state.values, "lock_state", door, "locked", "locked", "unlocked")]
    if entry.type == "garage_door":
        door = _door_of(world, entry)
        return [] if door is None else [_Binding(state.values, "state", door, "open", "open", "closed")]
    return []
