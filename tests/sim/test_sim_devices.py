"""Devices that sense and act (homeloop/sim/devices.py): readings from the ground truth, actuators
that are the ground truth, faults, device events and the checks of set_state.

Expectations come from the home file's device fields and the catalog's event lists, never re-typed.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from homeloop.sim import devices
from homeloop.sim.devices import EVENTS, PRESS_HOLD_S, DeviceError, Devices, set_state
from homeloop.sim.dynamics.appliances import Appliances
from homeloop.sim.dynamics.cooking import Cooking
from homeloop.sim.dynamics.smoke import SMOKE_ALARM_DENSITY, Smoke
from homeloop.sim.dynamics.water import Water
from homeloop.sim.world import STEP_S, World


def make_world(home, catalog, *modules) -> World:
    """A world of the house running ``modules`` and the devices (last, as the episode orders them)."""
    world = World(home, catalog, seed=0)
    for m in (*modules, Devices()):
        world.add_module(m)
    world.advance(STEP_S)
    return world


def first_of(home, device_type: str):
    return next(d for d in home.devices if d.type == device_type and d.agent_visible)


def events_of(world: World, source: str, since: int = 0) -> list[str]:
    return [e.kind for e in world.events[since:] if e.source == source]


# --- set_state refuses bad changes, naming the field and what it accepts ------------------------------


def test_an_unknown_device_is_refused_with_the_ids_of_its_type(house_home, catalog):
    world = make_world(house_home, catalog)
    stoves = [d.id for d in house_home.devices if d.type == "stove" and d.agent_visible]
    with pytest.raises(DeviceError) as err:
        set_state(world, "stove_99_9", "burner_1", False)
    assert "unknown device 'stove_99_9'" in str(err.value)
    assert all(s in str(err.value) for s in stoves)


def test_an_unknown_field_is_refused_with_the_fields(house_home, catalog):
    world = make_world(house_home, catalog)
    stove = first_of(house_home, "stove")
    with pytest.raises(DeviceError) as err:
        set_state(world, stove.id, "burner_99", False)
    assert "burner_99" in str(err.value)
    assert all(f in str(err.value) for f in stove.fields)


def test_a_read_only_field_is_refused_with_the_settable_ones(house_home, catalog):
    world = make_world(house_home, catalog)
    lock = first_of(house_home, "lock")
    read_only = next(n for n, f in lock.fields.items() if not f.settable)
    with pytest.raises(DeviceError) as err:
        set_state(world, lock.id, read_only, "open")
    assert f"{lock.id}.{read_only} is read-only" in str(err.value)
    assert all(n in str(err.value) for n in lock.settable_fields)


def test_a_value_out_of_range_names_the_range(house_home, catalog):
    world = make_world(house_home, catalog)
    light = first_of(house_home, "light")
    spec = light.fields["brightness"]
    with pytest.raises(DeviceError) as err:
        set_state(world, light.id, "brightness", int(spec.max) + 1)
    message = str(err.value)
    assert "brightness" in message and f"{spec.min:g}" in message and f"{spec.max:g}" in message
    assert world.devices[light.id].values["brightness"] == spec.value


def test_a_value_outside_an_enum_names_the_values(house_home, catalog):
    world = make_world(house_home, catalog)
    thermostat = first_of(house_home, "thermostat")
    spec = thermostat.fields["mode"]
    with pytest.raises(DeviceError) as err:
        set_state(world, thermostat.id, "mode", "freezing")
    assert all(repr(v) in str(err.value) for v in spec.values)


def test_a_value_of_the_wrong_type_names_the_type(house_home, catalog):
    world = make_world(house_home, catalog)
    stove = first_of(house_home, "stove")
    field = stove.settable_fields[0]
    with pytest.raises(DeviceError) as err:
        set_state(world, stove.id, field, "off")
    assert f"{stove.id}.{field}" in str(err.value) and "true" in str(err.value) and "false" in str(err.value)


# --- actuators are the ground truth the dynamics read ---------------------------------------------------


def _pan_on_a_burner(home):
    """The home's pan and the stove field of the range burner it stands on."""
    pan = next(o for o in home.objects if o.semantic_class == "pan")
    stove = first_of(home, "stove")
    host = next(f for f in home.furniture if f.id in (stove.mounted_on, *stove.controls))
    burner = min(host.burners, key=lambda b: math.dist(b.position[:2], (pan.pose.x, pan.pose.y)))
    return pan.id, stove.id, burner.name


def test_switching_the_burner_off_stops_the_heating(house_home, catalog):
    pan, stove, burner = _pan_on_a_burner(house_home)
    worlds = []
    for switch_off in (False, True):
        world = make_world(house_home, catalog, Cooking(), Smoke())
        world.module("cooking").add_pan(world, pan, stove, burner, "oil")
        set_state(world, stove, burner, True)
        world.advance(60)
        if switch_off:
            set_state(world, stove, burner, False)
        worlds.append(world)
    left_on, off = worlds
    hot = off.module("cooking").pan(pan).temperature
    temperatures = []
    for _ in range(60):
        left_on.advance(10)
        off.advance(10)
        temperatures.append(off.module("cooking").pan(pan).temperature)
    assert left_on.module("cooking").pan(pan).burning
    assert not off.module("cooking").pan(pan).burning
    assert all(b <= a for a, b in zip([hot, *temperatures], temperatures))


def test_closing_the_water_main_stops_the_leak(house_home, catalog):
    world = make_world(house_home, catalog, Water())
    valve = first_of(house_home, "water_main")
    sensor = first_of(house_home, "leak_sensor")
    water = world.module("water")
    water.add_leak(world, "supply_hose", sensor.room, sensor.pose.x, sensor.pose.y, valve.id)
    world.advance(10)
    assert world.devices[sensor.id].values["leak_detected"]
    assert "leak_alarm" in events_of(world, sensor.id)
    set_state(world, valve.id, "state", "closed")
    world.advance(STEP_S)
    spilled = water.total_litres()
    world.advance(60)
    assert spilled > 0 and water.total_litres() == spilled


def test_the_lock_locks_the_door_paths_meet(house_home, catalog):
    from homeloop.sim.robot.floor import NoPath
    from homeloop.sim.robot.routes import plan_path

    world = make_world(house_home, catalog)
    lock = first_of(house_home, "lock")
    door = devices.opening_of(world, lock)
    inside, outside = house_home.opening(door).connects[::-1] if house_home.room(
        house_home.opening(door).connects[0]).outdoor else house_home.opening(door).connects
    start = house_home.room_polygon(inside).representative_point().coords[0]
    goal = next(p for p in house_home.points if p.room == outside)
    set_state(world, lock.id, "lock_state", "unlocked")
    world.advance(STEP_S)
    assert not world.openings[door].locked
    assert plan_path(world, start, (goal.x, goal.y), 0.5).length > 0
    set_state(world, lock.id, "lock_state", "locked")
    world.advance(STEP_S)
    assert world.openings[door].locked
    with pytest.raises(NoPath) as err:
        plan_path(world, start, (goal.x, goal.y), 0.5)
    assert door in str(err.value) or "locked" in str(err.value)


def test_an_open_door_cannot_be_locked(house_home, catalog):
    world = make_world(house_home, catalog)
    lock = first_of(house_home, "lock")
    door = devices.opening_of(world, lock)
    set_state(world, lock.id, "lock_state", "unlocked")
    world.openings[door].open = True
    with pytest.raises(DeviceError, match="open"):
        set_state(world, lock.id, "lock_state", "locked")
    assert not world.openings[door].locked


def test_a_light_switch_switches_its_lights_and_a_plug_reports_its_load(house_home, catalog):
    world = make_world(house_home, catalog)
    switch = next(d for d in house_home.devices if d.type == "light_switch" and d.controls)
    set_state(world, switch.id, "on", True)
    assert all(world.devices[light].values["on"] for light in switch.controls)
    set_state(world, switch.id, "on", False)
    assert not any(world.devices[light].values["on"] for light in switch.controls)
    plug = next(d for d in house_home.devices if d.type == "plug" and d.controls)
    set_state(world, plug.id, "on", True)
    assert world.devices[plug.id].values["power_w"] > 0
    set_state(world, plug.id, "on", False)
    assert world.devices[plug.id].values["power_w"] == 0


# --- faults and events ----------------------------------------------------------------------------------


def test_a_fault_replaces_the_reading_not_the_ground_truth(house_home, catalog):
    world = make_world(house_home, catalog, Smoke())
    sensor = first_of(house_home, "smoke_sensor")
    world.devices[sensor.id].faults["smoke_detected"] = True
    world.advance(STEP_S)
    assert devices.readings(world.devices[sensor.id])["smoke_detected"] is True
    assert world.devices[sensor.id].values["smoke_detected"] is False
    assert world.module("smoke").density_at(sensor.room, sensor.pose.x, sensor.pose.y) <= SMOKE_ALARM_DENSITY
    assert events_of(world, sensor.id) == ["smoke_alarm"]
    del world.devices[sensor.id].faults["smoke_detected"]
    world.advance(STEP_S)
    assert devices.readings(world.devices[sensor.id])["smoke_detected"] is False


def test_the_event_table_covers_the_catalog(catalog):
    for entry in catalog.devices.values():
        assert {t.event for t in EVENTS.get(entry.id, ())} == set(entry.events), entry.id
    for device_type, transitions in EVENTS.items():
        assert device_type in catalog.devices
        assert all(t.field in catalog.devices[device_type].fields for t in transitions)


def _not_holding(transition, spec):
    if transition.below is not None:
        return transition.below + 0.1
    if spec.type == "bool":
        return not transition.equals
    return next(v for v in spec.values if v != transition.equals)


def _holding(transition):
    return transition.below - 0.05 if transition.below is not None else transition.equals


@pytest.mark.parametrize("device_type,transition",
                         [(k, t) for k, ts in EVENTS.items() for t in ts], ids=lambda v: getattr(v, "event", v))
def test_each_event_is_emitted_on_its_transition(house_home, catalog, device_type, transition):
    device = next((d for d in house_home.devices if d.type == device_type), None)
    assert device is not None, f"the house has no {device_type}, whose events this test covers"
    world = make_world(house_home, catalog)
    faults = world.devices[device.id].faults
    faults[transition.field] = _not_holding(transition, device.fields[transition.field])
    world.advance(STEP_S)
    since = len(world.events)
    faults[transition.field] = _holding(transition)
    world.advance(STEP_S)
    world.advance(STEP_S)
    assert events_of(world, device.id, since).count(transition.event) == 1


def test_opening_a_door_trips_its_contact_sensor_and_the_lock(house_home, catalog):
    world = make_world(house_home, catalog)
    lock = first_of(house_home, "lock")
    door = devices.opening_of(world, lock)
    contact = next(d for d in house_home.devices if d.type == "contact_sensor" and door in d.monitors)
    set_state(world, lock.id, "lock_state", "unlocked")
    world.openings[door].open = True
    world.advance(STEP_S)
    assert world.devices[contact.id].values["state"] == "open"
    assert world.devices[lock.id].values["door_state"] == "open"
    world.openings[door].open = False
    world.advance(STEP_S)
    assert events_of(world, contact.id) == ["opened", "closed"]
    assert sorted(events_of(world, lock.id)) == ["door_closed", "door_opened", "unlocked"]


def test_the_garage_door_opener_moves_its_door(house_home, catalog):
    world = make_world(house_home, catalog)
    opener = first_of(house_home, "garage_door")
    door = devices.opening_of(world, opener)
    set_state(world, opener.id, "state", "open")
    world.advance(STEP_S)
    assert world.openings[door].open and events_of(world, opener.id) == ["opened"]


def test_a_button_press_reads_pressed_for_a_moment_and_rings_once(house_home, catalog):
    world = make_world(house_home, catalog)
    bell = first_of(house_home, "doorbell")
    devices.press(world, bell.id)
    world.advance(STEP_S)
    assert world.devices[bell.id].values["pressed"]
    assert world.devices[bell.id].values["last_pressed_at"] == pytest.approx(world.time - STEP_S)
    world.advance(PRESS_HOLD_S + STEP_S)
    assert not world.devices[bell.id].values["pressed"]
    assert events_of(world, bell.id) == ["doorbell_pressed"]


def test_a_finished_cycle_and_a_dry_plant_raise_their_events(house_home, catalog):
    world = make_world(house_home, catalog, Appliances())
    dryer = first_of(house_home, "dryer")
    world.module("appliances").start_cycle(world, dryer.id, 2.0)
    world.advance(3.0)
    assert events_of(world, dryer.id) == ["cycle_finished"]
    probe = first_of(house_home, "soil_moisture_sensor")
    plant = world.objects[probe.monitors[0]]
    plant.props["soil_moisture"] = devices.SOIL_DRY_BELOW + 0.2
    world.advance(STEP_S)
    plant.props["soil_moisture"] = devices.SOIL_DRY_BELOW - 0.1
    world.advance(STEP_S)
    assert world.devices[probe.id].values["moisture"] == pytest.approx(devices.SOIL_DRY_BELOW - 0.1)
    assert events_of(world, probe.id) == ["soil_dry"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["hub", "hand"]), st.booleans()), min_size=1, max_size=12))
def test_the_lock_and_its_door_always_agree(house_home, catalog, changes):
    """Whoever changes the bolt (the hub, or a person by hand), the lock's reading and the door agree
    after each step, and every real change is reported once."""
    world = make_world(house_home, catalog)
    lock = first_of(house_home, "lock")
    door = world.openings[devices.opening_of(world, lock)]
    since, state, changed = len(world.events), door.locked, 0
    for who, locked in changes:
        if who == "hub":
            set_state(world, lock.id, "lock_state", "locked" if locked else "unlocked")
        else:
            door.locked = locked
        changed += locked != state
        state = locked
        world.advance(STEP_S)
        assert door.locked == locked
        assert world.devices[lock.id].values["lock_state"] == ("locked" if locked else "unlocked")
    reported = [k for k in events_of(world, lock.id, since) if k in ("locked", "unlocked")]
    assert len(reported) == changed
