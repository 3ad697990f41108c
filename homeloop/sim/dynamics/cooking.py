"""Cooking: pans on burners that heat, smoke and may ignite (docs/dynamics.md).

A pan's contents follow a first-order lag, dT/dt = (T_eq - T) / tau with
tau = :data:`TIME_CONSTANT_S`, toward its recipe's equilibrium T_eq while its
burner is lit and the pan sits on it, toward the room's temperature
otherwise. The contents smoke at or above their smoke point; once they reach
their ignition temperature the pan burns for the rest of the episode, even
with the burner off (the flame holds the contents at least at ignition).

Recipes (:data:`RECIPES`):

- ``oil``: a pan of oil left on a lit burner; its equilibrium lies above the
  oil's ignition temperature, so it smokes, then ignites.
- ``frying``: a resident frying food, the pan already hot; its equilibrium
  lies above the smoke point (frying food smokes and trips the alarm) but
  below ignition, so it never ignites.
- ``on_fire``: burning when the scenario starts.

**Calibration of the oil's equilibrium.** In handle_smoke_alarm ignition
comes :data:`IGNITION_AFTER_ALARM_S` after the kitchen alarm (docs/dynamics.md).
Heating from the smoke point T_s to the ignition temperature T_i takes::

    D = tau * ln((T_eq - T_s) / (T_eq - T_i))

and the alarm trips a delay d after the first smoke: the smoke's density must
build up and its front must reach a sensor at the NFPA 72 distance from the
range (:data:`NOMINAL_SENSOR_DISTANCE_M`; :func:`homeloop.sim.dynamics.smoke.
alarm_delay_s`). With D = 170 s + d, solving for T_eq::

    a = exp(-D / tau),    T_eq = (T_i - T_s * a) / (1 - a)

With tau = 250 s, T_s = 230 °C, T_i = 370 °C and d = 5 s (3.0 m at a 0.6 m/s
ceiling jet): D = 175 s and T_eq = 508 °C. A sensor 1.8 m away trips 2 s
before the nominal one, one 3.6 m away 1 s after: inside the ±5 s allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

from homeloop.sim.dynamics.climate import ROOM_TEMPERATURE_C, Climate
from homeloop.sim.dynamics.smoke import SmokeSource, alarm_delay_s
from homeloop.sim.world import NOTHING, STEP_S, ObjectState, Rest, World

#: Time constant of the contents' temperature (s): docs/dynamics.md.
TIME_CONSTANT_S = 250.0
#: In handle_smoke_alarm, ignition this long after the kitchen alarm (s): docs/dynamics.md.
IGNITION_AFTER_ALARM_S = 170.0
#: Distance from the range at which the calibration places the smoke sensor (m): the
#: NFPA 72 distance of the smoke_sensor placement rule (homeloop/catalog/devices.yaml).
NOMINAL_SENSOR_DISTANCE_M = 3.0
#: Smoke point of refined vegetable oil (°C; 225-240 °C for sunflower and rapeseed oil).
OIL_SMOKE_POINT_C = 230.0
#: Temperature at which the oil ignites in the pan (°C; assumption within the 340-400 °C
#: range reported for cooking-oil fires).
OIL_IGNITION_C = 370.0
#: Equilibrium of food frying on a tended burner (°C): above the smoke point, below ignition.
FRYING_EQUILIBRIUM_C = 260.0
#: Where a frying pan starts: already at frying temperature (°C).
FRYING_START_C = 180.0
#: A pan further than this from its burner's centre is off the burner (m).
ON_BURNER_M = 0.1

#: What a step changes (:class:`~homeloop.sim.world.Rest`): whether a pan smokes or burns (what the smoke
#: and the light read of it) and the milestones, or only how hot a pan is; and what a settled pan
#: answers to: where the pan is (or who holds it), the burners, the rooms' temperatures.
CHANGES = frozenset({"cooking", "pan_heat", "events"})
HEATING = frozenset({"pan_heat"})
READS = frozenset({"objects", "robot", "people", "devices", "climate"})
#: The rests of a step that changed something (by what it changed) and of a settled one.
_STEPPED = {CHANGES: Rest(CHANGES, -math.inf, READS), HEATING: Rest(HEATING, -math.inf, READS)}
_SETTLED = Rest(NOTHING, math.inf, READS)
_EMPTY = Rest(NOTHING, math.inf, NOTHING)


def equilibrium_for(smoke_point_c: float, ignition_c: float, smoke_to_ignition_s: float,
                    time_constant_s: float = TIME_CONSTANT_S) -> float:
    """The equilibrium temperature that takes a first-order lag from the smoke point to
    ignition in ``smoke_to_ignition_s`` (see the module docstring)."""
    a = math.exp(-smoke_to_ignition_s / time_constant_s)
    return (ignition_c - smoke_point_c * a) / (1.0 - a)


#: Seconds from the oil's first smoke to its ignition.
SMOKE_TO_IGNITION_S = IGNITION_AFTER_ALARM_S + alarm_delay_s(NOMINAL_SENSOR_DISTANCE_M)
#: Equilibrium of a pan of oil on a lit burner (°C; about 508).
OIL_EQUILIBRIUM_C = equilibrium_for(OIL_SMOKE_POINT_C, OIL_IGNITION_C, SMOKE_TO_IGNITION_S)


@dataclass(frozen=True)
class Recipe:
    """What is in a pan: its smoke point, ignition and lit-burner equilibrium (°C), its
    starting temperature (None: the room's) and whether it burns from the start."""

    name: str
    smoke_point_c: float
    ignition_c: float
    equilibrium_c: float
    start_c: float | None = None
    burning: bool = False


RECIPES: dict[str, Recipe] = {r.name: r for r in (
    Recipe("oil", OIL_SMOKE_POINT_C, OIL_IGNITION_C, OIL_EQUILIBRIUM_C),
    Recipe("frying", OIL_SMOKE_POINT_C, OIL_IGNITION_C, FRYING_EQUILIBRIUM_C, start_c=FRYING_START_C),
    Recipe("on_fire", OIL_SMOKE_POINT_C, OIL_IGNITION_C, OIL_EQUILIBRIUM_C, start_c=OIL_IGNITION_C, burning=True),
)}


@dataclass
class Pan:
    """One pan on a burner and the state of its contents."""

    id: str
    stove: str
    burner: str
    recipe: Recipe
    burner_x: float
    burner_y: float
    temperature: float
    smoking: bool = False
    burning: bool = False
    ignited_at: float | None = None
    smoke_started_at: float | None = None

    def state(self) -> dict[str, Any]:
        return {"stove": self.stove, "burner": self.burner, "recipe": self.recipe.name,
                "temperature_c": round(self.temperature, 3), "smoking": self.smoking, "burning": self.burning,
                "ignited_at": self.ignited_at, "smoke_started_at": self.smoke_started_at}


class Cooking:
    """Every pan on a burner (see the module docstring)."""

    name = "cooking"
    #: The smoke module reads :meth:`sources` of modules that make smoke.
    makes_smoke = True

    def __init__(self) -> None:
        self._pans: dict[str, Pan] = {}
        self._world: World | None = None
        self._gain = 0.0
        self._gain_dt = -1.0
        self._changed = NOTHING  # what the last step changed of the pans
        self._climate: tuple[World, int, Climate | None] | None = None  # a world's climate, while its modules stay
        # what each pan heads for before burning holds it up, while nothing of READS changes (World.woken_by)
        self._targets: dict[str, float] = {}
        # the pans' temperatures after each of the next steps, as far as :meth:`coast` has worked them
        # out, and what they are worked out from (asked how far, then to coast, it works them out once)
        self._ahead: tuple[list[tuple[float, float, bool, bool, float]] | None, list[_Course]] = (None, [])

    def add_pan(self, world: World, object_id: str, stove_device: str, burner_field: str, recipe: str) -> Pan:
        """Put the contents of ``recipe`` in the pan ``object_id``, on the burner that
        ``stove_device``'s field ``burner_field`` switches."""
        if object_id not in world.objects:
            raise KeyError(f"cooking: no object {object_id!r} in the home")
        if recipe not in RECIPES:
            raise KeyError(f"cooking: unknown recipe {recipe!r}; recipes: {', '.join(RECIPES)}")
        stove = world.devices.get(stove_device)
        if stove is None or burner_field not in stove.values:
            fields = ", ".join(stove.values) if stove is not None else "no such device"
            raise KeyError(f"cooking: stove {stove_device!r} has no field {burner_field!r} ({fields})")
        r = RECIPES[recipe]
        obj = world.objects[object_id]
        bx, by = _burner_xy(world, stove_device, burner_field, (obj.x, obj.y))
        if math.hypot(obj.x - bx, obj.y - by) > ON_BURNER_M:
            raise ValueError(f"cooking: pan {object_id!r} at ({obj.x:.2f}, {obj.y:.2f}) is not on {burner_field} of "
                             f"{stove_device!r} at ({bx:.2f}, {by:.2f}); move it there or name its burner")
        start = r.start_c if r.start_c is not None else _room_temperature(world, obj.placement.room)
        pan = Pan(object_id, stove_device, burner_field, r, bx, by, start)
        self._pans[object_id] = pan
        self._world = world
        if r.burning:
            self._ignite(world, pan)
        return pan

    # --- stepping ---------------------------------------------------------------------------------

    def step(self, world: World, dt: float) -> None:
        self._changed = NOTHING
        if not self._pans:
            return
        if dt != self._gain_dt:
            self._gain, self._gain_dt = 1.0 - math.exp(-dt / TIME_CONSTANT_S), dt
        targets = self._targets
        if world.woken_by(READS):
            targets.clear()
        for pan in self._pans.values():
            temperature, smoking, burning = pan.temperature, pan.smoking, pan.burning
            target = targets.get(pan.id)
            if target is None:
                target = targets[pan.id] = self._target(world, pan)
            self._step_pan(world, pan, target)
            if pan.smoking != smoking or pan.burning != burning:
                self._changed = CHANGES
            elif pan.temperature != temperature and not self._changed:
                self._changed = HEATING

    def coast(self, world: World, steps: int, take: bool) -> int:
        """Of the next ``steps`` steps, how many only heat or cool the pans as the last one did (with the
        targets it read: none starts or stops smoking or ignites, and one at least still changes); with
        ``take``, the pans' temperatures as after them (:mod:`homeloop.sim.world`, "Coasting modules")."""
        if self._changed is not HEATING or self._gain_dt != STEP_S:
            return 0
        pans = list(self._pans.values())
        targets = [self._targets.get(p.id) for p in pans]
        if any(t is None for t in targets):
            return 0
        heads = [max(cast(float, t), p.recipe.ignition_c) if p.burning else cast(float, t)
                 for p, t in zip(pans, targets)]
        key = [(p.temperature, head, p.smoking, p.burning, self._gain) for p, head in zip(pans, heads)]
        if self._ahead[0] != key:  # worked out for other pans: start again
            self._ahead = (key, [_Course(p, head, self._gain) for p, head in zip(pans, heads)])
        courses = self._ahead[1]
        for course in courses:
            course.extend(steps)
        # up to the first step a pan would cross at, and while one pan at least still changes
        taken = min(steps, *(len(c.temperatures) for c in courses if not c.settled),
                    max(len(c.temperatures) for c in courses))
        if take and taken:
            for p, course in zip(pans, courses):
                p.temperature = course.after(taken)
            self._ahead = (None, [])
        return taken

    def rest(self, world: World) -> Rest:
        """Heating or cooling: the next step. Settled (every pan at what it heads for): asleep until
        what it reads changes (where a pan is, the burners, the rooms' temperatures)."""
        if self._changed:
            return _STEPPED[self._changed]
        return _SETTLED if self._pans else _EMPTY

    def _climate_of(self, world: World) -> Climate | None:
        """The world's climate module (looked up again when the world or its modules change)."""
        kept = self._climate
        if kept is None or kept[0] is not world or kept[1] != len(world.modules):
            kept = self._climate = (world, len(world.modules), world.running(Climate))
        return kept[2]

    def _target(self, world: World, pan: Pan) -> float:
        """What a pan heads for: its recipe's equilibrium on its lit burner, else its room's temperature
        (a burning pan is held at least at ignition besides: :meth:`_step_pan`)."""
        obj = world.objects[pan.id]
        if world.devices[pan.stove].values[pan.burner] and _on_burner(pan, obj):
            return pan.recipe.equilibrium_c
        room = _room_of(world, obj)
        climate = self._climate_of(world)
        return climate.temperature(room) if climate is not None and room is not None else ROOM_TEMPERATURE_C

    def _step_pan(self, world: World, pan: Pan, target: float) -> None:
        if pan.burning:
            target = max(target, pan.recipe.ignition_c)
        pan.temperature = _heated(pan.temperature, target, self._gain)
        smoking = pan.temperature >= pan.recipe.smoke_point_c
        if smoking and not pan.smoking:
            pan.smoke_started_at = pan.smoke_started_at if pan.smoke_started_at is not None else world.time
            world.note("smoke_started", pan.id, temperature_c=round(pan.temperature, 2))
        pan.smoking = smoking
        if not pan.burning and pan.temperature >= pan.recipe.ignition_c:
            self._ignite(world, pan)

    def _ignite(self, world: World, pan: Pan) -> None:
        pan.burning, pan.ignited_at = True, world.time
        pan.smoking = pan.smoking or pan.temperature >= pan.recipe.smoke_point_c
        world.note("ignition", pan.id, temperature_c=round(pan.temperature, 2))

    # --- reading ----------------------------------------------------------------------------------

    def pan(self, object_id: str) -> Pan:
        return self._pans[object_id]

    def pans(self) -> list[Pan]:
        return list(self._pans.values())

    def smoking(self) -> bool:
        """Whether any pan smokes now (as :meth:`sources` would say, without making them)."""
        return self._world is not None and any(p.smoking or p.burning for p in self._pans.values())

    def sources(self) -> list[SmokeSource]:
        """Every pan as a smoke source: it smokes while heating past its smoke point or burning."""
        world = self._world
        if world is None:
            return []
        out = []
        for pan in self._pans.values():
            obj = world.objects[pan.id]
            out.append(SmokeSource(pan.id, _room_of(world, obj), obj.x, obj.y, pan.smoking or pan.burning))
        return out

    def fires(self) -> list[tuple[str | None, float, float]]:
        """(room, x, y) of every burning pan (the light of a fire)."""
        world = self._world
        if world is None:
            return []
        return [(_room_of(world, o), o.x, o.y) for o in (world.objects[p.id] for p in self._pans.values() if p.burning)]

    def snapshot(self) -> dict[str, Any]:
        return {"pans": {pid: pan.state() for pid, pan in sorted(self._pans.items())}}


# --- helpers ----------------------------------------------------------------------------------------


def _heated(temperature: float, target: float, gain: float) -> float:
    """A pan's temperature after one step of the lag toward ``target`` (at ``target`` once within a
    billionth of a degree of it)."""
    if temperature == target:
        return temperature
    temperature += (target - temperature) * gain
    return target if abs(target - temperature) < 1e-9 else temperature


class _Course:
    """A pan's temperatures after each of the next steps toward ``head``, worked out as far as asked:
    up to the step before it would cross (:func:`_crosses`), or until it stops changing (``settled``:
    it then stays as it is)."""

    def __init__(self, pan: Pan, head: float, gain: float):
        self.pan, self.head, self.gain = pan, head, gain
        self.temperatures: list[float] = []
        self.settled = self.ended = False

    def extend(self, steps: int) -> None:
        temperatures, head, gain, pan = self.temperatures, self.head, self.gain, self.pan
        t = temperatures[-1] if temperatures else pan.temperature
        while not self.ended and len(temperatures) < steps:
            after = _heated(t, head, gain)
            if after == t or _crosses(pan, after):
                self.settled, self.ended = after == t, True
                break
            temperatures.append(after)
            t = after

    def after(self, steps: int) -> float:
        """The temperature after ``steps`` steps (those past its end: as it ended)."""
        if steps <= len(self.temperatures):
            return self.temperatures[steps - 1]
        return self.temperatures[-1] if self.temperatures else self.pan.temperature


def _crosses(pan: Pan, temperature: float) -> bool:
    """Whether a pan at ``temperature`` would start or stop smoking, or ignite (what a step tells the
    smoke and notes as a milestone)."""
    recipe = pan.recipe
    ignites = not pan.burning and temperature >= recipe.ignition_c
    return (temperature >= recipe.smoke_point_c) != pan.smoking or ignites


def _burner_xy(world: World, stove_device: str, burner: str, fallback: tuple[float, float]) -> tuple[float, float]:
    """Centre of the burner a stove field switches: the range's burner of that name, or where
    the pan stands when the home file names no such burner."""
    device = next((d for d in world.home.devices if d.id == stove_device), None)
    hosts = [device.mounted_on, *device.controls] if device is not None else []
    for furniture in world.home.furniture:
        if furniture.id in hosts:
            for b in furniture.burners:
                if b.name == burner:
                    return b.position[0], b.position[1]
    return fallback


def _on_burner(pan: Pan, obj: ObjectState) -> bool:
    return obj.placement.kind != "held" and math.hypot(obj.x - pan.burner_x, obj.y - pan.burner_y) <= ON_BURNER_M


def _room_of(world: World, obj: ObjectState) -> str | None:
    """The room an object is in; a held object is where its holder is."""
    p = obj.placement
    if p.kind != "held":
        return p.room
    if p.holder == "robot" and world.robot is not None:
        return world.robot.room
    person = world.people.get(p.holder) if p.holder else None
    return person.room if person is not None else p.room


def _room_temperature(world: World, room: str | None) -> float:
    climate = world.running(Climate)
    return climate.temperature(room) if climate is not None and room is not None else ROOM_TEMPERATURE_C
