"""The requests of the home-control track, per query type, feasible and infeasible (docs/tasks.md,
"Home control").

A template is a function of one home (:class:`HomeView`: its rooms and the
devices the hub reaches) and a random generator: it returns a :class:`Draft`
(the request in the home's room and device names, its structured intent,
the prerequisites, the goal over time and, for an infeasible one, the
constraint), or :class:`Missing` naming the device types the home lacks for
it (the generator counts those). Templates are registered with
:func:`template` in the order the generator tries them.

Infeasible requests name a device the home lacks (:data:`ABSENT`: types no
home of the paper's set has), a value outside what the device's field
accepts, or times that cannot hold (a time already past, acting before an
event, steps that each wait for the other).

The templates of the optional air devices (``homeloop build --air-devices``)
declare the types they need (:attr:`Template.needs`): the generator offers
them only in a home with one, so in the paper's home set the draws, and the
episodes file, are what they are without them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable

from homeloop.bench.control.model import (TIME_TOLERANCE_S, Answer, Condition, Constraint, ConstraintKind, Goal,
                                          Inquiry, Intent, Prerequisite, QueryType, Step, TimedEvent,
                                          TriggerIntent)
from homeloop.core.catalog import FieldValue
from homeloop.core.home import Device, Home, Room
from homeloop.sim.devices import HUB_CATEGORIES

#: Device types no home of the paper's set has, with the words a report of their absence names. A home
#: built with the air devices (``homeloop build --air-devices``) may have a fan, a dehumidifier or an air
#: purifier: the templates then draw only the types it lacks, and :data:`AIR_DEVICES` make requests of those.
ABSENT: dict[str, tuple[str, ...]] = {
    "air_conditioner": ("air conditioner", "air conditioning"), "fan": ("fan",), "dehumidifier": ("dehumidifier",),
    "air_purifier": ("purifier",), "robot_vacuum": ("vacuum",), "motion_sensor": ("motion",),
    "television": ("television", "tv"), "coffee_machine": ("coffee",)}

#: When the front door opens in an event-driven episode, and how long it stays open (s of agent time).
DOOR_OPENS_AT_S = 300.0
DOOR_OPEN_FOR_S = 15.0
#: Window coverings: the device types whose ``position`` (% closed) blinds a window.
COVERINGS = ("roller_blind", "curtain")
#: Where a scripted clock time may fall after the request (s), for schedules at a time of day.
AT_AHEAD_S = (240, 600)


@dataclass(frozen=True)
class Draft:
    """One generated request, before it is numbered and verified."""

    request: str
    intent: Intent
    goal: Goal
    prerequisites: tuple[Prerequisite, ...] = ()
    constraint: Constraint | None = None
    events: tuple[TimedEvent, ...] = ()


@dataclass(frozen=True)
class Missing:
    """The home lacks these device types (or the rooms holding them) for a template."""

    types: tuple[str, ...]


@dataclass
class HomeView:
    """What the templates read of a home: its indoor rooms and the devices the hub reaches."""

    home: Home
    now_s: float  # the time of day the request arrives (s after midnight)
    rooms: dict[str, Room] = field(init=False)
    hub: list[Device] = field(init=False)

    def __post_init__(self) -> None:
        self.rooms = {r.id: r for r in self.home.rooms if r.indoor}
        self.hub = [d for d in self.home.devices if d.agent_visible and d.category in HUB_CATEGORIES]

    def of(self, kind: str, room: str | None = None) -> list[Device]:
        return [d for d in self.hub if d.type == kind and (room is None or d.room == room)]

    def rooms_with(self, *kinds: str) -> list[str]:
        return [r for r in self.rooms if any(self.of(k, r) for k in kinds)]

    def name(self, room: str) -> str:
        return self.rooms[room].name

    def front_door(self) -> tuple[Device, str, str] | None:
        """The device that raises an event when the front door (the home's first entrance door) opens and
        closes, with those events: its contact sensor, else its lock."""
        door = next((o.id for o in self.home.openings if o.kind == "entrance_door"), None)
        for kind, opened, closed in (("contact_sensor", "opened", "closed"), ("lock", "door_opened", "door_closed")):
            for d in self.of(kind):
                if door is not None and door in (d.mounted_on, *d.monitors):
                    return d, opened, closed
        return None

    def hall(self) -> str | None:
        """The indoor room the front door opens into."""
        door = next((o for o in self.home.openings if o.kind == "entrance_door"), None)
        return next((r for r in door.connects if r in self.rooms), None) if door is not None else None


Build = Callable[[HomeView, random.Random], "Draft | Missing"]


@dataclass(frozen=True)
class Template:
    name: str
    query_type: QueryType
    feasible: bool
    build: Build
    #: Optional device types (the air devices) one of which the home must have for the template to be
    #: offered at all: in a home of the paper's set it is not drawn among the others, so their draws and
    #: the generated file are what they were without it.
    needs: tuple[str, ...] = ()

    def offered(self, view: HomeView) -> bool:
        return not self.needs or any(view.of(kind) for kind in self.needs)


#: Every template, in the order the generator tries them.
TEMPLATES: dict[str, Template] = {}


def template(name: str, query_type: QueryType, feasible: bool,
             needs: tuple[str, ...] = ()) -> Callable[[Build], Build]:
    def register(build: Build) -> Build:
        TEMPLATES[name] = Template(name, query_type, feasible, build, needs)
        return build

    return register


# --- shared pieces ----------------------------------------------------------------------------------


def _ids(devices: list[Device]) -> tuple[str, ...]:
    return tuple(d.id for d in devices)


def _set(devices: list[Device], field_name: str, value: FieldValue) -> tuple[Prerequisite, ...]:
    return tuple(Prerequisite(device_id=d.id, field=field_name, value=value) for d in devices)


def _set_to(kind: str, room: str, devices: list[Device], field_name: str, value: FieldValue,
            in_s: float | None = None) -> Intent:
    """One step: the devices' field set to ``value`` (now, or ``in_s`` from the request)."""
    return Intent(steps=(Step(device_type=kind, room=room, devices=_ids(devices), field=field_name, value=value,
                              in_s=in_s),))


def _final(devices: list[Device], field_name: str, value: FieldValue, any_one: bool = False) -> Condition:
    return Condition(devices=_ids(devices), field=field_name, equals=value, any=any_one)


def _timed(devices: list[Device], field_name: str, before: FieldValue, after: FieldValue,
           at_s: float) -> tuple[Condition, ...]:
    """The field keeps ``before`` until shortly before ``at_s`` and holds ``after`` from shortly after it."""
    ids = _ids(devices)
    return (Condition(devices=ids, field=field_name, equals=before, start_s=0.0, end_s=at_s - TIME_TOLERANCE_S),
            Condition(devices=ids, field=field_name, equals=after, start_s=at_s + TIME_TOLERANCE_S))


def _untouched(kind: ConstraintKind, words: tuple[str, ...]) -> tuple[Goal, Constraint]:
    return Goal(untouched=True), Constraint(kind=kind, words=words)


def _setpoint_too_high(view: HomeView, rng: random.Random, values: tuple[int, ...], words: str) -> Draft | Missing:
    """A request to set the first thermostat to one of ``values`` (°C, above what it accepts), said as
    ``words`` with the value in its ``{}``: infeasible, out of range."""
    stats = view.of("thermostat")
    if not stats:
        return Missing(("thermostat",))
    stat, value = stats[0], float(rng.choice(values))
    top = stat.fields["setpoint"].max or 0.0
    goal, constraint = _untouched("out_of_range", (f"{value:g}", f"{top:g}"))
    return Draft(words.format(f"{value:g}"),
                 Intent(steps=(Step(device_type="thermostat", room=stat.room, devices=(stat.id,), field="setpoint",
                                    value=value),)), goal, constraint=constraint)


def _clock(seconds: float) -> str:
    s = int(seconds) % 86400
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}"


def _span(minutes: float) -> str:
    """A number of minutes in words: "1 minute", "3 minutes"."""
    return f"{minutes:g} minute{'' if minutes == 1 else 's'}"


def _minutes(rng: random.Random, low: int, high: int) -> int:
    return rng.randint(low, high)


def _absent(view: HomeView, rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A device type of :data:`ABSENT` the home lacks (a home built with the air devices has some)."""
    kind = rng.choice([k for k in sorted(ABSENT) if not view.of(k)])
    return kind, ABSENT[kind]


def _noun(kind: str) -> str:
    return kind.replace("_", " ")


def _room_of(view: HomeView, rng: random.Random, *kinds: str) -> str | None:
    rooms = view.rooms_with(*kinds)
    return rng.choice(rooms) if rooms else None


def _covering(view: HomeView, room: str) -> tuple[str, list[Device]]:
    kind = next(k for k in COVERINGS if view.of(k, room))
    return kind, view.of(kind, room)


_COVER_WORD = {"roller_blind": "blinds", "curtain": "curtains"}


# --- QT1: state inquiry -----------------------------------------------------------------------------


@template("light_state", "state_inquiry", True)
def light_state(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    lights, on = view.of("light", room), rng.random() < 0.5
    said, other = ("on", "off") if on else ("off", "on")
    return Draft(f"Is the light in the {view.name(room)} on?",
                 Intent(inquiry=Inquiry(device_type="light", room=room, devices=_ids(lights), field="on")),
                 Goal(untouched=True, answer=Answer(words=(said,), wrong=(other,))), _set(lights, "on", on))


@template("lock_state", "state_inquiry", True)
def lock_state(view: HomeView, rng: random.Random) -> Draft | Missing:
    door = next((o.id for o in view.home.openings if o.kind == "entrance_door"), None)
    locks = [d for d in view.of("lock") if door is not None and door in (d.mounted_on, *d.monitors)]
    if not locks:
        return Missing(("lock",))
    state = rng.choice(["locked", "unlocked"])
    other = "unlocked" if state == "locked" else "locked"
    return Draft("Is the front door locked?",
                 Intent(inquiry=Inquiry(device_type="lock", room=locks[0].room, devices=_ids(locks[:1]),
                                        field="lock_state")),
                 Goal(untouched=True, answer=Answer(words=(state,), wrong=(other,))),
                 _set(locks[:1], "lock_state", state))


@template("temperature", "state_inquiry", True)
def temperature(view: HomeView, rng: random.Random) -> Draft | Missing:
    stats = view.of("thermostat")
    if not stats or stats[0].room not in view.rooms:
        return Missing(("thermostat",))
    stat = stats[0]
    reading = float(stat.fields["local_temperature"].value or 0.0)
    return Draft(f"What is the temperature in the {view.name(stat.room or '')} right now?",
                 Intent(inquiry=Inquiry(device_type="thermostat", room=stat.room, devices=(stat.id,),
                                        field="local_temperature")),
                 Goal(untouched=True, answer=Answer(number=reading)))


@template("blinds_state", "state_inquiry", True)
def blinds_state(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, *COVERINGS)
    if room is None:
        return Missing(COVERINGS)
    kind, covers = _covering(view, room)
    closed = rng.random() < 0.5
    said, other = ("closed", "open") if closed else ("open", "closed")
    return Draft(f"Are the {_COVER_WORD[kind]} in the {view.name(room)} closed?",
                 Intent(inquiry=Inquiry(device_type=kind, room=room, devices=_ids(covers), field="position")),
                 Goal(untouched=True, answer=Answer(words=(said,), wrong=(other,))),
                 _set(covers, "position", 100 if closed else 0))


@template("absent_state", "state_inquiry", False)
def absent_state(view: HomeView, rng: random.Random) -> Draft | Missing:
    kind, words = _absent(view, rng)
    room = rng.choice(sorted(view.rooms))
    goal, constraint = _untouched("missing_device", words)
    return Draft(f"Is the {_noun(kind)} in the {view.name(room)} on?",
                 Intent(inquiry=Inquiry(device_type=kind, room=room, field="on")), goal, constraint=constraint)


# --- QT2: implicit intent ---------------------------------------------------------------------------


@template("too_dark", "implicit_intent", True)
def too_dark(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    lights = view.of("light", room)
    return Draft(f"It's too dark in the {view.name(room)}; I can hardly see a thing.",
                 Intent(steps=(Step(device_type="light", room=room, devices=_ids(lights), field="on", value=True,
                                    any=True),)),
                 Goal(conditions=(_final(lights, "on", True, any_one=True),)), _set(lights, "on", False))


@template("too_bright_to_sleep", "implicit_intent", True)
def too_bright_to_sleep(view: HomeView, rng: random.Random) -> Draft | Missing:
    rooms = [r for r in view.rooms_with("light") if view.rooms[r].type in ("BEDROOM", "ROOM")]
    if not rooms:
        return Missing(("light",))
    room = rng.choice(rooms)
    lights = view.of("light", room)
    return Draft(f"I'm trying to sleep in the {view.name(room)}, but it's far too bright in there.",
                 _set_to("light", room, lights, "on", False),
                 Goal(conditions=(_final(lights, "on", False),)), _set(lights, "on", True))


@template("sun_glare", "implicit_intent", True)
def sun_glare(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, *COVERINGS)
    if room is None:
        return Missing(COVERINGS)
    kind, covers = _covering(view, room)
    return Draft(f"The sun is glaring through the windows of the {view.name(room)}.",
                 Intent(steps=(Step(device_type=kind, room=room, devices=_ids(covers), field="position", value=100,
                                    any=True),)),
                 Goal(conditions=(Condition(devices=_ids(covers), field="position", at_least=50, any=True),)),
                 _set(covers, "position", 0))


@template("chilly", "implicit_intent", True)
def chilly(view: HomeView, rng: random.Random) -> Draft | Missing:
    stats = view.of("thermostat")
    if not stats:
        return Missing(("thermostat",))
    stat = stats[0]
    return Draft("I'm feeling chilly; the heating is set far too low.",
                 Intent(steps=(Step(device_type="thermostat", room=stat.room, devices=(stat.id,), field="setpoint",
                                    value=21.0),)),
                 Goal(conditions=(Condition(devices=(stat.id,), field="setpoint", at_least=20.5),
                                  Condition(devices=(stat.id,), field="mode", equals="heat"))),
                 (Prerequisite(device_id=stat.id, field="setpoint", value=16.0),
                  Prerequisite(device_id=stat.id, field="mode", value="heat")))


@template("humid_air", "implicit_intent", False)
def humid_air(view: HomeView, rng: random.Random) -> Draft | Missing:
    if view.of("dehumidifier"):
        return Missing(())  # the home has one: the request is no longer impossible (see "damp_room")
    room = rng.choice(sorted(view.rooms))
    goal, constraint = _untouched("missing_device", ABSENT["dehumidifier"])
    return Draft(f"The air in the {view.name(room)} is so damp; please dry it out.",
                 Intent(steps=(Step(device_type="dehumidifier", room=room, field="on", value=True),)), goal,
                 constraint=constraint)


@template("sauna", "implicit_intent", False)
def sauna(view: HomeView, rng: random.Random) -> Draft | Missing:
    return _setpoint_too_high(view, rng, (35, 38, 40), "I'm freezing. Make it as warm as a sauna in here: {} degrees!")


# --- QT3: explicit control --------------------------------------------------------------------------


@template("switch_lights", "explicit_control", True)
def switch_lights(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    lights, on = view.of("light", room), rng.random() < 0.5
    return Draft(f"Please switch {'on' if on else 'off'} the lights in the {view.name(room)}.",
                 _set_to("light", room, lights, "on", on),
                 Goal(conditions=(_final(lights, "on", on),)), _set(lights, "on", not on))


@template("set_heating", "explicit_control", True)
def set_heating(view: HomeView, rng: random.Random) -> Draft | Missing:
    stats = view.of("thermostat")
    if not stats:
        return Missing(("thermostat",))
    stat, value = stats[0], float(rng.randint(18, 25))
    return Draft(f"Set the heating to {value:g} degrees, please.",
                 Intent(steps=(Step(device_type="thermostat", room=stat.room, devices=(stat.id,), field="setpoint",
                                    value=value),)),
                 Goal(conditions=(_final([stat], "setpoint", value),)),
                 (Prerequisite(device_id=stat.id, field="setpoint", value=value - 2.0),))


@template("close_covers", "explicit_control", True)
def close_covers(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, *COVERINGS)
    if room is None:
        return Missing(COVERINGS)
    kind, covers = _covering(view, room)
    return Draft(f"Close the {_COVER_WORD[kind]} in the {view.name(room)}, please.",
                 _set_to(kind, room, covers, "position", 100),
                 Goal(conditions=(_final(covers, "position", 100),)), _set(covers, "position", 0))


@template("dim_light", "explicit_control", True)
def dim_light(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    lights, level = view.of("light", room), rng.choice([20, 30, 40, 50, 60, 70])
    return Draft(f"Dim the lights in the {view.name(room)} to {level} percent.",
                 _set_to("light", room, lights, "brightness", level),
                 Goal(conditions=(_final(lights, "brightness", level),)),
                 _set(lights, "on", True) + _set(lights, "brightness", 100))


@template("absent_device", "explicit_control", False)
def absent_device(view: HomeView, rng: random.Random) -> Draft | Missing:
    kind, words = _absent(view, rng)
    room = rng.choice(sorted(view.rooms))
    goal, constraint = _untouched("missing_device", words)
    return Draft(f"Turn on the {_noun(kind)} in the {view.name(room)}.",
                 Intent(steps=(Step(device_type=kind, room=room, field="on", value=True),)), goal,
                 constraint=constraint)


@template("too_bright_a_light", "explicit_control", False)
def too_bright_a_light(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    lights, level = view.of("light", room), rng.choice([120, 150, 200])
    top = lights[0].fields["brightness"].max or 0.0
    goal, constraint = _untouched("out_of_range", (f"{level}", f"{top:g}"))
    return Draft(f"Turn the lights in the {view.name(room)} up to {level} percent brightness.",
                 _set_to("light", room, lights, "brightness", level), goal, constraint=constraint)


@template("heating_too_high", "explicit_control", False)
def heating_too_high(view: HomeView, rng: random.Random) -> Draft | Missing:
    return _setpoint_too_high(view, rng, (32, 34, 36), "Set the heating to {} degrees.")


# --- QT4-1: time-based schedules ---------------------------------------------------------------------


@template("lights_off_in", "time_schedule", True)
def lights_off_in(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    lights, minutes = view.of("light", room), _minutes(rng, 3, 10)
    return Draft(f"Turn off the lights in the {view.name(room)} in {minutes} minutes.",
                 _set_to("light", room, lights, "on", False, minutes * 60.0),
                 Goal(conditions=_timed(lights, "on", True, False, minutes * 60.0)), _set(lights, "on", True))


@template("lights_on_at", "time_schedule", True)
def lights_on_at(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    lights = view.of("light", room)
    first = math.ceil((view.now_s + AT_AHEAD_S[0]) / 60.0) * 60.0
    at = first + 60.0 * rng.randint(0, (AT_AHEAD_S[1] - AT_AHEAD_S[0]) // 60)
    return Draft(f"Switch on the lights in the {view.name(room)} at {_clock(at)}.",
                 Intent(steps=(Step(device_type="light", room=room, devices=_ids(lights), field="on", value=True,
                                    at=_clock(at)),)),
                 Goal(conditions=_timed(lights, "on", False, True, at - view.now_s)), _set(lights, "on", False))


@template("covers_in", "time_schedule", True)
def covers_in(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, *COVERINGS)
    if room is None:
        return Missing(COVERINGS)
    kind, covers = _covering(view, room)
    minutes = _minutes(rng, 3, 10)
    return Draft(f"Close the {_COVER_WORD[kind]} in the {view.name(room)} in {minutes} minutes.",
                 _set_to(kind, room, covers, "position", 100, minutes * 60.0),
                 Goal(conditions=_timed(covers, "position", 0, 100, minutes * 60.0)), _set(covers, "position", 0))


@template("heating_in", "time_schedule", True)
def heating_in(view: HomeView, rng: random.Random) -> Draft | Missing:
    stats = view.of("thermostat")
    if not stats:
        return Missing(("thermostat",))
    stat, minutes, value = stats[0], _minutes(rng, 3, 10), float(rng.randint(18, 24))
    return Draft(f"In {minutes} minutes, set the heating to {value:g} degrees.",
                 Intent(steps=(Step(device_type="thermostat", room=stat.room, devices=(stat.id,), field="setpoint",
                                    value=value, in_s=minutes * 60.0),)),
                 Goal(conditions=_timed([stat], "setpoint", value - 3.0, value, minutes * 60.0)),
                 (Prerequisite(device_id=stat.id, field="setpoint", value=value - 3.0),))


@template("at_a_past_time", "time_schedule", False)
def at_a_past_time(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    past = math.floor(view.now_s / 3600.0) * 3600.0 - 3600.0 * rng.randint(1, 3)
    if past < 0:
        return Missing(("light",))  # just after midnight: no earlier hour today
    goal, constraint = _untouched("time_contradiction", (_clock(past), "past"))
    return Draft(f"Switch on the lights in the {view.name(room)} at {_clock(past)} today.",
                 Intent(steps=(Step(device_type="light", room=room, devices=_ids(view.of("light", room)), field="on",
                                    value=True, at=_clock(past)),)), goal, constraint=constraint)


@template("heating_later_too_high", "time_schedule", False)
def heating_later_too_high(view: HomeView, rng: random.Random) -> Draft | Missing:
    stats = view.of("thermostat")
    if not stats:
        return Missing(("thermostat",))
    stat, minutes, value = stats[0], _minutes(rng, 3, 10), float(rng.choice([35, 40, 45]))
    top = stat.fields["setpoint"].max or 0.0
    goal, constraint = _untouched("out_of_range", (f"{value:g}", f"{top:g}"))
    return Draft(f"In {minutes} minutes, turn the heating up to {value:g} degrees.",
                 Intent(steps=(Step(device_type="thermostat", room=stat.room, devices=(stat.id,), field="setpoint",
                                    value=value, in_s=minutes * 60.0),)), goal, constraint=constraint)


# --- QT4-2: event-driven automations ------------------------------------------------------------------


def _door_pieces(view: HomeView) -> tuple[Device, str, str, str] | Missing:
    found, hall = view.front_door(), view.hall()
    if found is None or hall is None or not view.of("light", hall):
        return Missing(("contact_sensor", "light"))
    return found[0], found[1], found[2], hall


_DOOR_EVENTS = (TimedEvent(at_s=DOOR_OPENS_AT_S, action="open", opening="front_door"),
                TimedEvent(at_s=DOOR_OPENS_AT_S + DOOR_OPEN_FOR_S, action="close", opening="front_door"))


@template("door_opens_light", "event_automation", True)
def door_opens_light(view: HomeView, rng: random.Random) -> Draft | Missing:
    pieces = _door_pieces(view)
    if isinstance(pieces, Missing):
        return pieces
    sensor, opened, _, hall = pieces
    lights, delay = view.of("light", hall), 60.0 * rng.choice([0, 0, 1, 2])
    when = "When the front door opens" + (f", wait {_span(delay / 60)} and then" if delay else ",")
    return Draft(f"{when} switch on the lights in the {view.name(hall)}.",
                 Intent(steps=(Step(device_type="light", room=hall, devices=_ids(lights), field="on", value=True),),
                        trigger=TriggerIntent(device_type=sensor.type, room=sensor.room, devices=(sensor.id,),
                                              event=opened, delay_s=delay)),
                 Goal(conditions=_timed(lights, "on", False, True, DOOR_OPENS_AT_S + delay)),
                 _set(lights, "on", False), events=_DOOR_EVENTS)


@template("door_closes_dark", "event_automation", True)
def door_closes_dark(view: HomeView, rng: random.Random) -> Draft | Missing:
    pieces = _door_pieces(view)
    if isinstance(pieces, Missing):
        return pieces
    sensor, _, closed, hall = pieces
    lights = view.of("light", hall)
    return Draft(f"Once the front door has closed behind me, switch off the lights in the {view.name(hall)}.",
                 Intent(steps=(Step(device_type="light", room=hall, devices=_ids(lights), field="on", value=False),),
                        trigger=TriggerIntent(device_type=sensor.type, room=sensor.room, devices=(sensor.id,),
                                              event=closed)),
                 Goal(conditions=_timed(lights, "on", True, False, DOOR_OPENS_AT_S + DOOR_OPEN_FOR_S)),
                 _set(lights, "on", True), events=_DOOR_EVENTS)


@template("before_the_door_opens", "event_automation", False)
def before_the_door_opens(view: HomeView, rng: random.Random) -> Draft | Missing:
    pieces = _door_pieces(view)
    if isinstance(pieces, Missing):
        return pieces
    sensor, opened, _, hall = pieces
    minutes = rng.choice([1, 2, 5])
    goal, constraint = _untouched("time_contradiction", ("before",))
    return Draft(f"Switch on the lights in the {view.name(hall)} {_span(minutes)} before the front door opens.",
                 Intent(steps=(Step(device_type="light", room=hall, devices=_ids(view.of("light", hall)), field="on",
                                    value=True),),
                        trigger=TriggerIntent(device_type=sensor.type, room=sensor.room, devices=(sensor.id,),
                                              event=opened, delay_s=-60.0 * minutes)),
                 goal, constraint=constraint, events=_DOOR_EVENTS)


@template("absent_trigger", "event_automation", False)
def absent_trigger(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    goal, constraint = _untouched("missing_device", ABSENT["motion_sensor"])
    return Draft(f"When the motion sensor in the {view.name(room)} sees someone, switch on the lights there.",
                 Intent(steps=(Step(device_type="light", room=room, devices=_ids(view.of("light", room)), field="on",
                                    value=True),),
                        trigger=TriggerIntent(device_type="motion_sensor", room=room, event="motion")),
                 goal, constraint=constraint)


# --- QT4-3: coordinated schedules ----------------------------------------------------------------------


def _two_rooms(view: HomeView, rng: random.Random) -> tuple[str, str, str] | Missing:
    """A room with lights, and another with window coverings (and the coverings' type)."""
    lit, covered = view.rooms_with("light"), view.rooms_with(*COVERINGS)
    if not lit or not covered:
        return Missing(("light", *COVERINGS))
    b = rng.choice(covered)
    a = rng.choice([r for r in lit if r != b] or lit)
    return a, b, _covering(view, b)[0]


@template("light_then_covers", "coordinated_schedule", True)
def light_then_covers(view: HomeView, rng: random.Random) -> Draft | Missing:
    rooms = _two_rooms(view, rng)
    if isinstance(rooms, Missing):
        return rooms
    a, b, kind = rooms
    lights, covers = view.of("light", a), view.of(kind, b)
    first, gap = _minutes(rng, 2, 5), _minutes(rng, 1, 4)
    return Draft(f"In {first} minutes switch off the lights in the {view.name(a)}, and {_span(gap)} after that "
                 f"close the {_COVER_WORD[kind]} in the {view.name(b)}.",
                 Intent(steps=(Step(device_type="light", room=a, devices=_ids(lights), field="on", value=False,
                                    in_s=first * 60.0),
                               Step(device_type=kind, room=b, devices=_ids(covers), field="position", value=100,
                                    after=0, after_s=gap * 60.0))),
                 Goal(conditions=_timed(lights, "on", True, False, first * 60.0)
                      + _timed(covers, "position", 0, 100, (first + gap) * 60.0)),
                 _set(lights, "on", True) + _set(covers, "position", 0))


@template("heating_then_light", "coordinated_schedule", True)
def heating_then_light(view: HomeView, rng: random.Random) -> Draft | Missing:
    stats, room = view.of("thermostat"), _room_of(view, rng, "light")
    if not stats or room is None:
        return Missing(("thermostat", "light"))
    stat, lights = stats[0], view.of("light", room)
    first, gap, value = _minutes(rng, 2, 5), _minutes(rng, 1, 4), float(rng.randint(19, 24))
    return Draft(f"In {first} minutes set the heating to {value:g} degrees; {_span(gap)} later switch on the "
                 f"lights in the {view.name(room)}.",
                 Intent(steps=(Step(device_type="thermostat", room=stat.room, devices=(stat.id,), field="setpoint",
                                    value=value, in_s=first * 60.0),
                               Step(device_type="light", room=room, devices=_ids(lights), field="on", value=True,
                                    after=0, after_s=gap * 60.0))),
                 Goal(conditions=_timed([stat], "setpoint", value - 2.0, value, first * 60.0)
                      + _timed(lights, "on", False, True, (first + gap) * 60.0)),
                 (Prerequisite(device_id=stat.id, field="setpoint", value=value - 2.0),) + _set(lights, "on", False))


@template("each_waits_for_the_other", "coordinated_schedule", False)
def each_waits_for_the_other(view: HomeView, rng: random.Random) -> Draft | Missing:
    rooms = _two_rooms(view, rng)
    if isinstance(rooms, Missing):
        return rooms
    a, b, kind = rooms
    gap = _minutes(rng, 2, 5)
    goal, constraint = _untouched("time_contradiction", ("circular", "cycle", "each other", "contradict"))
    return Draft(f"Close the {_COVER_WORD[kind]} in the {view.name(b)} {gap} minutes after the lights in the "
                 f"{view.name(a)} go off, and switch those lights off {gap} minutes after the "
                 f"{_COVER_WORD[kind]} close.",
                 Intent(steps=(Step(device_type="light", room=a, devices=_ids(view.of("light", a)), field="on",
                                    value=False, after=1, after_s=gap * 60.0),
                               Step(device_type=kind, room=b, devices=_ids(view.of(kind, b)), field="position",
                                    value=100, after=0, after_s=gap * 60.0))),
                 goal, constraint=constraint)


@template("then_an_absent_device", "coordinated_schedule", False)
def then_an_absent_device(view: HomeView, rng: random.Random) -> Draft | Missing:
    room = _room_of(view, rng, "light")
    if room is None:
        return Missing(("light",))
    kind, words = rng.choice([("robot_vacuum", ABSENT["robot_vacuum"]), ("coffee_machine", ABSENT["coffee_machine"])])
    first, gap = _minutes(rng, 2, 5), _minutes(rng, 1, 4)
    goal, constraint = _untouched("missing_device", words)
    return Draft(f"In {first} minutes switch off the lights in the {view.name(room)}, then {_span(gap)} later "
                 f"start the {_noun(kind)}.",
                 Intent(steps=(Step(device_type="light", room=room, devices=_ids(view.of("light", room)), field="on",
                                    value=False, in_s=first * 60.0),
                               Step(device_type=kind, field="on", value=True, after=0, after_s=gap * 60.0))),
                 goal, constraint=constraint)


# --- the optional air devices (homeloop build --air-devices) ---------------------------------------------
#
# A home of the paper's set has none of these devices: each template below is dropped there, and the
# templates above keep making the requests they always made.

#: The air devices, with the field that says whether one runs and the value it takes running.
AIR_DEVICES: dict[str, tuple[str, FieldValue]] = {
    "humidifier": ("on", True), "dehumidifier": ("on", True), "fan": ("fan_mode", "high"),
    "air_purifier": ("fan_mode", "auto")}
#: The fan speeds a request may name (Fan Control's FanMode values, less on and auto).
FAN_SPEEDS = ("off", "low", "medium", "high")
#: The types the air templates need one of (:attr:`Template.needs`).
_AIR, _FANS, _UNITS = tuple(AIR_DEVICES), ("fan", "air_purifier"), ("humidifier", "dehumidifier")
#: What a device of each type is off at.
AIR_OFF: dict[str, FieldValue] = {"humidifier": False, "dehumidifier": False, "fan": "off", "air_purifier": "off"}


def _air_room(view: HomeView, rng: random.Random, *kinds: str) -> tuple[str, str, list[Device]] | Missing:
    """A room with a device of one of ``kinds``, the type drawn among those it has, and those devices."""
    room = _room_of(view, rng, *kinds)
    if room is None:
        return Missing(kinds)
    kind = rng.choice([k for k in kinds if view.of(k, room)])
    return room, kind, view.of(kind, room)


def _switch(view: HomeView, rng: random.Random, kinds: tuple[str, ...], words: str) -> Draft | Missing:
    """A device of ``kinds`` in a room, off, asked to run: ``words`` with the room and device in its ``{}``."""
    found = _air_room(view, rng, *kinds)
    if isinstance(found, Missing):
        return found
    room, kind, devices = found
    field_name, running = AIR_DEVICES[kind]
    return Draft(words.format(room=view.name(room), device=_noun(kind)),
                 _set_to(kind, room, devices, field_name, running),
                 Goal(conditions=(_final(devices, field_name, running),)), _set(devices, field_name, AIR_OFF[kind]))


def _target_out_of_range(view: HomeView, rng: random.Random, later: bool) -> Draft | Missing:
    """A humidifier or dehumidifier asked for a target humidity outside what it accepts (now or later)."""
    found = _air_room(view, rng, "humidifier", "dehumidifier")
    if isinstance(found, Missing):
        return found
    room, kind, devices = found
    spec = devices[0].fields["target_humidity"]
    low, high = spec.min or 0.0, spec.max or 100.0
    value = rng.choice([int(low) - 10, int(high) + 10, int(high) + 15])
    minutes = _minutes(rng, 3, 10) if later else None
    goal, constraint = _untouched("out_of_range", (f"{value}", f"{low:g}", f"{high:g}"))
    when = f"In {minutes} minutes, set" if minutes else "Set"
    return Draft(f"{when} the {_noun(kind)} in the {view.name(room)} to {value} percent humidity.",
                 _set_to(kind, room, devices, "target_humidity", value, minutes * 60.0 if minutes else None),
                 goal, constraint=constraint)


@template("air_device_state", "state_inquiry", True, needs=_AIR)
def air_device_state(view: HomeView, rng: random.Random) -> Draft | Missing:
    found = _air_room(view, rng, *AIR_DEVICES)
    if isinstance(found, Missing):
        return found
    room, kind, devices = found
    field_name, _ = AIR_DEVICES[kind]
    if field_name == "on":
        on = rng.random() < 0.5
        said, other = ("on", "off") if on else ("off", "on")
        value: FieldValue = on
        request = f"Is the {_noun(kind)} in the {view.name(room)} running?"
    else:
        value = said = rng.choice(FAN_SPEEDS)
        other = "off" if said != "off" else "high"
        request = f"What is the {_noun(kind)} in the {view.name(room)} set to?"
    return Draft(request, Intent(inquiry=Inquiry(device_type=kind, room=room, devices=_ids(devices[:1]),
                                                 field=field_name)),
                 Goal(untouched=True, answer=Answer(words=(str(said),), wrong=(other,))),
                 _set(devices[:1], field_name, value))


@template("damp_room", "implicit_intent", True, needs=("dehumidifier",))
def damp_room(view: HomeView, rng: random.Random) -> Draft | Missing:
    return _switch(view, rng, ("dehumidifier",), "The air in the {room} is so damp; the laundry never dries.")


@template("dry_air", "implicit_intent", True, needs=("humidifier",))
def dry_air(view: HomeView, rng: random.Random) -> Draft | Missing:
    return _switch(view, rng, ("humidifier",), "The air in the {room} is so dry my throat hurts in the morning.")


@template("switch_on_air_device", "explicit_control", True, needs=_AIR)
def switch_on_air_device(view: HomeView, rng: random.Random) -> Draft | Missing:
    return _switch(view, rng, tuple(AIR_DEVICES), "Switch on the {device} in the {room}, please.")


@template("fan_speed", "explicit_control", True, needs=_FANS)
def fan_speed(view: HomeView, rng: random.Random) -> Draft | Missing:
    found = _air_room(view, rng, "fan", "air_purifier")
    if isinstance(found, Missing):
        return found
    room, kind, devices = found
    speed = rng.choice(FAN_SPEEDS[1:])
    return Draft(f"Set the {_noun(kind)} in the {view.name(room)} to {speed}.",
                 _set_to(kind, room, devices, "fan_mode", speed),
                 Goal(conditions=(_final(devices, "fan_mode", speed),)), _set(devices, "fan_mode", "off"))


@template("target_humidity", "explicit_control", True, needs=_UNITS)
def target_humidity(view: HomeView, rng: random.Random) -> Draft | Missing:
    found = _air_room(view, rng, "humidifier", "dehumidifier")
    if isinstance(found, Missing):
        return found
    room, kind, devices = found
    spec = devices[0].fields["target_humidity"]
    value = 5 * rng.randint(int(spec.min or 0) // 5 + 1, int(spec.max or 100) // 5 - 1)
    return Draft(f"Set the {_noun(kind)} in the {view.name(room)} to {value} percent humidity.",
                 _set_to(kind, room, devices, "target_humidity", value),
                 Goal(conditions=(_final(devices, "target_humidity", value),)),
                 _set(devices, "target_humidity", value - 5))


@template("humidity_target_out_of_range", "explicit_control", False, needs=_UNITS)
def humidity_target_out_of_range(view: HomeView, rng: random.Random) -> Draft | Missing:
    return _target_out_of_range(view, rng, later=False)


@template("fan_off_in", "time_schedule", True, needs=_FANS)
def fan_off_in(view: HomeView, rng: random.Random) -> Draft | Missing:
    found = _air_room(view, rng, "fan", "air_purifier")
    if isinstance(found, Missing):
        return found
    room, kind, devices = found
    minutes = _minutes(rng, 3, 10)
    return Draft(f"Turn off the {_noun(kind)} in the {view.name(room)} in {minutes} minutes.",
                 _set_to(kind, room, devices, "fan_mode", "off", minutes * 60.0),
                 Goal(conditions=_timed(devices, "fan_mode", "high", "off", minutes * 60.0)),
                 _set(devices, "fan_mode", "high"))


@template("humidity_target_later_out_of_range", "time_schedule", False, needs=_UNITS)
def humidity_target_later_out_of_range(view: HomeView, rng: random.Random) -> Draft | Missing:
    return _target_out_of_range(view, rng, later=True)


@template("door_opens_air", "event_automation", True, needs=_AIR)
def door_opens_air(view: HomeView, rng: random.Random) -> Draft | Missing:
    found_door = view.front_door()
    if found_door is None:
        return Missing(("contact_sensor",))
    sensor, opened, _ = found_door
    found = _air_room(view, rng, *AIR_DEVICES)
    if isinstance(found, Missing):
        return found
    room, kind, devices = found
    field_name, running = AIR_DEVICES[kind]
    return Draft(f"When the front door opens, switch on the {_noun(kind)} in the {view.name(room)}.",
                 Intent(steps=(Step(device_type=kind, room=room, devices=_ids(devices), field=field_name,
                                    value=running),),
                        trigger=TriggerIntent(device_type=sensor.type, room=sensor.room, devices=(sensor.id,),
                                              event=opened)),
                 Goal(conditions=_timed(devices, field_name, AIR_OFF[kind], running, DOOR_OPENS_AT_S)),
                 _set(devices, field_name, AIR_OFF[kind]), events=_DOOR_EVENTS)


@template("fan_then_humidity_device", "coordinated_schedule", True, needs=("fan",))
def fan_then_humidity_device(view: HomeView, rng: random.Random) -> Draft | Missing:
    fans, drying = _air_room(view, rng, "fan"), _air_room(view, rng, "dehumidifier", "humidifier")
    if isinstance(fans, Missing) or isinstance(drying, Missing):
        return Missing(("fan", "dehumidifier", "humidifier"))
    (a, _, fan), (b, kind, units) = fans, drying
    first, gap = _minutes(rng, 2, 5), _minutes(rng, 1, 4)
    return Draft(f"In {first} minutes switch off the fan in the {view.name(a)}, and "
                 f"{_span(gap)} after that switch on the {_noun(kind)} in the {view.name(b)}.",
                 Intent(steps=(Step(device_type="fan", room=a, devices=_ids(fan), field="fan_mode", value="off",
                                    in_s=first * 60.0),
                               Step(device_type=kind, room=b, devices=_ids(units), field="on", value=True, after=0,
                                    after_s=gap * 60.0))),
                 Goal(conditions=_timed(fan, "fan_mode", "high", "off", first * 60.0)
                      + _timed(units, "on", False, True, (first + gap) * 60.0)),
                 _set(fan, "fan_mode", "high") + _set(units, "on", False))
