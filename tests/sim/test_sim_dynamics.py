"""The physical dynamics of the simulated home, in the house (docs/dynamics.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from homeloop.sim.dynamics.appliances import Appliances
from homeloop.sim.dynamics.climate import HEATING_TIME_CONSTANT_S, Climate
from homeloop.sim.dynamics.cooking import IGNITION_AFTER_ALARM_S, RECIPES, Cooking
from homeloop.sim.dynamics.light import BRIGHTNESS_FLOOR_LUX, Light
from homeloop.sim.dynamics.smoke import DENSITY_CAP, SMOKE_ALARM_DENSITY, Smoke, SmokeSource, rooms_reached
from homeloop.sim.dynamics.water import CONTAINED_LIMIT_L, FILM_THICKNESS_M, LEAK_RATE_L_PER_MIN, Water
from homeloop.sim.world import STEP_S, World

HYPOTHESIS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def make_world(home, catalog, *modules, **kwargs) -> World:
    world = World(home, catalog, seed=0, **kwargs)
    for module in modules:
        world.add_module(module)
    return world


# --- the kitchen as the house has it --------------------------------------------------------------------


@dataclass
class Kitchen:
    world: World
    cooking: Cooking
    smoke: Smoke
    stove: str
    burner: str
    pan: str
    sensor: tuple[str, float, float]  # room, x, y of the smoke sensor in the range's room

    def light(self, on: bool) -> None:
        self.world.devices[self.stove].values[self.burner] = on

    def sensor_density(self) -> float:
        return self.smoke.density_at(*self.sensor)

    def run_until(self, condition, limit_s: float) -> float | None:
        """Step until ``condition()`` holds; the time it first held, or None."""
        end = self.world.time + limit_s
        while self.world.time < end - 1e-9:
            self.world.advance(STEP_S)
            if condition():
                return self.world.time
        return None


def kitchen(home, catalog, recipe: str, *extra) -> Kitchen:
    """The house's pan on the burner under it, holding ``recipe``, with the burner lit."""
    cooking, smoke = Cooking(), Smoke()
    world = make_world(home, catalog, cooking, smoke, *extra)
    pan = world.objects_of_class("pan")[0]
    stove = world.devices_of_type("stove")[0]
    range_ = next(f for f in home.furniture if f.id == pan.placement.furniture)
    burner = min(range_.burners, key=lambda b: math.hypot(b.position[0] - pan.x, b.position[1] - pan.y))
    sensor = next(d for d in home.devices if d.type == "smoke_sensor" and d.room == range_.room)
    cooking.add_pan(world, pan.id, stove.id, burner.name, recipe)
    k = Kitchen(world, cooking, smoke, stove.id, burner.name, pan.id, (sensor.room, sensor.pose.x, sensor.pose.y))
    k.light(True)
    return k


def test_oil_ignites_170_s_after_the_kitchen_alarm(house_home, catalog):
    k = kitchen(house_home, catalog, "oil")
    tripped = k.run_until(lambda: k.sensor_density() > SMOKE_ALARM_DENSITY, 900)
    assert tripped is not None
    pan = k.cooking.pan(k.pan)
    assert pan.smoke_started_at is not None and pan.smoke_started_at < tripped and not pan.burning
    ignited = k.run_until(lambda: k.cooking.pan(k.pan).burning, 400)
    assert ignited is not None and abs((ignited - tripped) - IGNITION_AFTER_ALARM_S) <= 5.0
    kinds = [(m.kind, m.source) for m in k.world.milestones]
    assert kinds == [("smoke_started", k.pan), ("ignition", k.pan)]
    assert pan.ignited_at == ignited and pan.temperature >= pan.recipe.ignition_c


def test_a_burning_pan_keeps_burning_with_the_burner_off(house_home, catalog):
    k = kitchen(house_home, catalog, "oil")
    assert k.run_until(lambda: k.cooking.pan(k.pan).burning, 900) is not None
    k.light(False)
    k.world.advance(300)
    pan = k.cooking.pan(k.pan)
    assert pan.burning and pan.temperature >= pan.recipe.ignition_c
    assert [s.smoking for s in k.cooking.sources()] == [True]
    assert k.sensor_density() == DENSITY_CAP


def test_switching_off_before_ignition_cools_the_pan_and_clears_the_smoke(house_home, catalog):
    k = kitchen(house_home, catalog, "oil")
    tripped = k.run_until(lambda: k.sensor_density() > SMOKE_ALARM_DENSITY, 900)
    k.world.advance(60)
    k.light(False)
    hottest = k.cooking.pan(k.pan).temperature
    k.world.advance(STEP_S)
    assert k.cooking.pan(k.pan).temperature < hottest
    k.world.advance(900)
    pan = k.cooking.pan(k.pan)
    assert not pan.burning and pan.ignited_at is None and tripped is not None
    assert not pan.smoking and pan.temperature < 60.0
    assert k.sensor_density() == 0.0
    assert "ignition" not in [m.kind for m in k.world.milestones]


def test_frying_smokes_past_the_alarm_but_never_ignites(house_home, catalog):
    k = kitchen(house_home, catalog, "frying")
    assert k.run_until(lambda: k.sensor_density() > SMOKE_ALARM_DENSITY, 900) is not None
    k.world.advance(1800)
    pan = k.cooking.pan(k.pan)
    assert pan.smoking and not pan.burning
    assert pan.recipe.smoke_point_c < pan.temperature < pan.recipe.ignition_c


def test_a_pan_on_fire_burns_from_the_start(house_home, catalog):
    k = kitchen(house_home, catalog, "on_fire")
    assert k.cooking.pan(k.pan).burning and k.world.milestones[0].kind == "ignition"
    assert k.run_until(lambda: k.sensor_density() > SMOKE_ALARM_DENSITY, 30) is not None


def test_a_far_sensor_trips_a_few_seconds_after_a_near_one(house_home, catalog):
    k = kitchen(house_home, catalog, "oil")
    room, sx, sy = k.sensor
    pan = k.world.objects[k.pan]
    ux, uy = (sx - pan.x), (sy - pan.y)
    norm = math.hypot(ux, uy)
    near, far = [(pan.x + ux / norm * d, pan.y + uy / norm * d) for d in (1.0, 3.0)]
    floor = house_home.room_polygon(room)
    assert floor.contains(shapely.Point(near)) and floor.contains(shapely.Point(far))
    t_near = k.run_until(lambda: k.smoke.density_at(room, *near) > SMOKE_ALARM_DENSITY, 900)
    t_far = k.run_until(lambda: k.smoke.density_at(room, *far) > SMOKE_ALARM_DENSITY, 60)
    assert t_near is not None and t_far is not None and 2.0 <= t_far - t_near <= 6.0


def _neighbour_with_sensor(home, room: str):
    """A door from ``room`` to a room with a smoke sensor, and that sensor."""
    for o in home.openings:
        if o.kind == "door" and room in o.connects and len(o.connects) == 2:
            other = next(r for r in o.connects if r != room)
            sensor = next((d for d in home.devices if d.type == "smoke_sensor" and d.room == other), None)
            if sensor is not None:
                return o.id, (sensor.room, sensor.pose.x, sensor.pose.y)
    raise AssertionError(f"no door from room {room} to a room with a smoke sensor")


@pytest.mark.parametrize("door_open", [True, False])
def test_smoke_passes_an_open_door_and_not_a_closed_one(house_home, catalog, door_open):
    k = kitchen(house_home, catalog, "oil")
    door, neighbour = _neighbour_with_sensor(house_home, k.sensor[0])
    k.world.openings[door].open = door_open
    k.world.advance(900)
    density = k.smoke.density_at(*neighbour)
    assert (density > SMOKE_ALARM_DENSITY) if door_open else density == 0.0
    assert k.smoke.room_density(neighbour[0]) == density


def test_with_every_door_shut_the_smoke_stays_in_the_rooms_it_reaches(house_home, catalog):
    k = kitchen(house_home, catalog, "oil")
    assert not any(state.open for state in k.world.openings.values())
    k.world.advance(900)
    smoky = {r.id for r in house_home.rooms if k.smoke.room_density(r.id) > 0.0}
    assert smoky == rooms_reached(house_home, k.sensor[0])
    door, neighbour = _neighbour_with_sensor(house_home, k.sensor[0])
    assert neighbour[0] not in smoky


# --- water ------------------------------------------------------------------------------------------------


def _dishwasher_leak(home, catalog):
    water = Water()
    world = make_world(home, catalog, water)
    sensor = next(d for d in home.devices if d.type == "leak_sensor" and d.room is not None
                  and any(f.semantic_class == "dishwasher" for f in home.furniture if f.id in d.monitors))
    dishwasher = next(f for f in home.furniture if f.id in sensor.monitors)
    at = shapely.centroid(shapely.Polygon(dishwasher.footprint[0]))
    valve = world.devices_of_type("water_main")[0].id
    water.add_leak(world, "hose", dishwasher.room, at.x, at.y, valve)
    return world, water, valve, sensor, (at.x, at.y)


def test_the_leak_spills_60_litres_in_90_s_and_stops_at_the_valve(house_home, catalog):
    world, water, valve, _, _ = _dishwasher_leak(house_home, catalog)
    assert [m.kind for m in world.milestones] == ["leak_started"]
    world.advance(89.9)
    assert water.total_litres() < CONTAINED_LIMIT_L
    world.advance(STEP_S)
    assert water.total_litres() == pytest.approx(LEAK_RATE_L_PER_MIN * 1.5) == pytest.approx(CONTAINED_LIMIT_L)
    assert [(m.kind, m.time) for m in world.milestones][-1] == ("litres_60", pytest.approx(90.0))
    world.devices[valve].values["state"] = "closed"
    before = water.total_litres()
    world.advance(120)
    assert water.total_litres() == before


def test_the_leak_sensor_is_wet_within_a_second_of_the_water_reaching_it(house_home, catalog):
    world, water, _, sensor, (lx, ly) = _dishwasher_leak(house_home, catalog)
    floor = house_home.room_polygon(sensor.room)
    distance = math.hypot(sensor.pose.x - lx, sensor.pose.y - ly)
    reached_area = floor.intersection(shapely.Point(lx, ly).buffer(distance, quad_segs=64)).area
    reaches_at = reached_area * FILM_THICKNESS_M * 1000.0 / (LEAK_RATE_L_PER_MIN / 60.0)
    wet_at = None
    while wet_at is None and world.time < 60:
        world.advance(STEP_S)
        if water.wet_at(sensor.room, sensor.pose.x, sensor.pose.y):
            wet_at = world.time
    assert wet_at is not None and reaches_at - 0.2 <= wet_at <= reaches_at + 1.0


def test_a_spill_puts_its_volume_down_at_once_within_the_room(house_home, catalog):
    water = Water()
    world = make_world(house_home, catalog, water)
    can = world.objects_of_class("watering_can")[0]
    water.add_spill(world, "can", can.placement.room, can.x, can.y, 5.0)
    world.advance(10)
    assert water.total_litres() == 5.0 and water.wet_at(can.placement.room, can.x, can.y)
    assert water.source("can").wetted_area_m2 == pytest.approx(5.0 / 1000 / FILM_THICKNESS_M)
    flood = Water()
    world = make_world(house_home, catalog, flood)
    flood.add_spill(world, "flood", can.placement.room, can.x, can.y, 1000.0)
    floor = house_home.room_polygon(can.placement.room)
    assert flood.source("flood").wetted_area_m2 == pytest.approx(floor.area)
    far_corner = max(floor.exterior.coords, key=lambda p: math.hypot(p[0] - can.x, p[1] - can.y))
    inside = shapely.Point(far_corner).buffer(0.05).intersection(floor).centroid
    assert flood.wet_at(can.placement.room, inside.x, inside.y)
    other_room = next(r.id for r in house_home.rooms if r.id != can.placement.room)
    assert not flood.wet_at(other_room, inside.x, inside.y)


# --- light, climate, appliances ---------------------------------------------------------------------------


def _room_lights(world: World, room: str) -> list[str]:
    return [d.id for d in world.devices.values() if d.type == "light" and d.room == room]


def test_a_room_is_lit_at_night_only_with_its_lights_on(house_home, catalog):
    light = Light()
    world = make_world(house_home, catalog, light, clock_start_s=23 * 3600.0)
    world.advance(STEP_S)
    room = next(d.room for d in world.devices.values() if d.type == "stove")
    assert light.lux(room) == 0.0 and not light.lit(room)
    for device in _room_lights(world, room):
        world.devices[device].values["on"] = True
    assert light.lit(room) and light.lux(room) >= BRIGHTNESS_FLOOR_LUX
    for device in _room_lights(world, room):
        world.devices[device].values["brightness"] = 1
    assert not light.lit(room)


def test_closed_blinds_darken_a_room_by_day(house_home, catalog):
    light = Light()
    world = make_world(house_home, catalog, light)  # noon
    world.advance(STEP_S)
    blinds = [d for d in house_home.devices if d.type in ("roller_blind", "curtain")]
    windows_of = {}
    for o in house_home.openings:
        if o.kind == "window":
            for r in o.connects:
                windows_of.setdefault(r, set()).add(o.id)
    room = next(r for r, ws in windows_of.items() if ws and ws <= {b.mounted_on for b in blinds}
                and not house_home.room(r).outdoor)
    assert light.lit(room)
    for b in blinds:
        if b.mounted_on in windows_of[room]:
            world.devices[b.id].values["position"] = 100
    assert light.lux(room) == 0.0 and not light.lit(room)
    outdoor = next(r.id for r in house_home.rooms if r.outdoor)
    assert light.lit(outdoor)


def test_a_fire_lights_a_dark_kitchen(house_home, catalog):
    light = Light()
    k = kitchen(house_home, catalog, "on_fire", light)
    k.world.clock_start_s = 23 * 3600.0
    k.world.advance(STEP_S)
    assert light.lit(k.sensor[0])


def test_rooms_follow_the_thermostat(house_home, catalog):
    climate = Climate()
    world = make_world(house_home, catalog, climate)
    stat = world.devices_of_type("thermostat")[0]
    start = float(stat.values["setpoint"])
    world.advance(STEP_S)
    stat.values["setpoint"] = start + 4.0
    world.advance(HEATING_TIME_CONSTANT_S)
    rise = climate.temperature(stat.room) - start
    assert rise == pytest.approx(4.0 * (1 - math.exp(-1)), abs=0.01)
    assert stat.values["local_temperature"] == pytest.approx(start + rise, abs=0.05)
    stat.values["mode"] = "off"
    held = climate.temperature(stat.room)
    world.advance(600)
    assert climate.temperature(stat.room) == held
    assert climate.air_quality(stat.room) == "good"


def test_the_air_turns_bad_where_the_smoke_is(house_home, catalog):
    climate = Climate()
    k = kitchen(house_home, catalog, "on_fire", climate)
    k.world.advance(10)
    assert climate.air_quality(k.sensor[0]) == "extremely_poor"


def test_a_dryer_cycle_finishes_and_its_door_follows_the_part(house_home, catalog):
    appliances = Appliances()
    world = make_world(house_home, catalog, appliances)
    dryer = world.devices_of_type("dryer")[0]
    furniture = next(f for f in house_home.furniture if f.id == next(d for d in house_home.devices
                                                                       if d.id == dryer.id).mounted_on)
    door = next(p for p in furniture.parts if p.opens)
    appliances.start_cycle(world, dryer.id, 30)
    world.advance(10)
    assert dryer.values["cycle_state"] == "running" and dryer.values["remaining_s"] == 20
    world.parts[(furniture.id, door.name)] = door.range[1]  # the robot opens the door: the cycle pauses
    world.advance(10)
    assert dryer.values["door_open"] and dryer.values["remaining_s"] == 20
    dryer.values["door_open"] = False  # shut through the field: the part follows
    world.advance(20)
    assert world.parts[(furniture.id, door.name)] == door.range[0]
    assert dryer.values["cycle_state"] == "finished" and dryer.values["remaining_s"] == 0


# --- properties --------------------------------------------------------------------------------------------


@HYPOTHESIS
@given(recipe=st.sampled_from(["oil", "frying"]),
       switches=st.lists(st.floats(min_value=1.0, max_value=200.0), min_size=1, max_size=5))
def test_pan_temperature_stays_between_room_and_equilibrium(house_home, catalog, recipe, switches):
    k = kitchen(house_home, catalog, recipe)
    pan = k.cooking.pan(k.pan)
    low, high = min(21.0, pan.temperature), RECIPES[recipe].equilibrium_c
    lit = True
    for seconds in switches:
        before = pan.temperature
        for _ in range(int(seconds / STEP_S)):
            k.world.advance(STEP_S)
            assert low - 1e-9 <= pan.temperature <= high + 1e-9
            if lit and not pan.burning:
                assert pan.temperature >= before
            before = pan.temperature
        lit = not lit
        k.light(lit)


class _Sources:
    """A smoke source whose smoking follows a script (for the smoke properties)."""

    name = "script"
    makes_smoke = True

    def __init__(self, room: str, x: float, y: float) -> None:
        self.source = SmokeSource("script", room, x, y, False)

    def step(self, world, dt):
        pass

    def sources(self):
        return [self.source]

    def snapshot(self):
        return {}


@HYPOTHESIS
@given(script=st.lists(st.tuples(st.booleans(), st.floats(min_value=0.5, max_value=60.0),
                                  st.sets(st.integers(min_value=0, max_value=30))), min_size=1, max_size=6))
def test_smoke_density_stays_within_0_and_the_cap(house_home, catalog, script):
    pan = next(o for o in house_home.objects if o.semantic_class == "pan")
    provider = _Sources(pan.location.room, pan.pose.x, pan.pose.y)
    smoke = Smoke()
    world = make_world(house_home, catalog, provider, smoke)
    openings = sorted(world.openings)
    probes = [(d.room, d.pose.x, d.pose.y) for d in house_home.devices if d.room is not None]
    for smoking, seconds, open_indices in script:
        provider.source.smoking = smoking
        for i, oid in enumerate(openings):
            world.openings[oid].open = i in open_indices
        world.advance(seconds)
        assert 0.0 <= smoke.source_density("script") <= DENSITY_CAP
        for room, x, y in probes:
            assert 0.0 <= smoke.density_at(room, x, y) <= DENSITY_CAP
        assert all(0.0 <= smoke.room_density(r.id) <= DENSITY_CAP for r in house_home.rooms)


@HYPOTHESIS
@given(script=st.lists(st.tuples(st.booleans(), st.floats(min_value=0.1, max_value=30.0),
                                  st.floats(min_value=0.0, max_value=3.0)), min_size=1, max_size=8))
def test_litres_never_decrease(house_home, catalog, script):
    world, water, valve, _, (x, y) = _dishwasher_leak(house_home, catalog)
    room = next(s.room for s in water.sources())
    last = water.total_litres()
    for i, (open_, seconds, spill) in enumerate(script):
        world.devices[valve].values["state"] = "open" if open_ else "closed"
        if spill > 0:
            water.add_spill(world, f"spill_{i}", room, x, y, spill)
        world.advance(seconds)
        assert water.total_litres() >= last
        last = water.total_litres()
