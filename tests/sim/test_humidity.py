"""Humidity per room (homeloop/sim/dynamics/humidity.py): bounded, monotone toward what drives it,
deterministic, and moved by windows, people and water as docs/dynamics.md says."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from homeloop.sim import step_order
from homeloop.sim import world as world_module
from homeloop.sim.dynamics import humidity
from homeloop.sim.dynamics.humidity import Humidity, RoomAir, next_humidity
from homeloop.sim.episode import Episode

STEP_ORDER = [cls.name for cls in step_order.order()]

percent = st.floats(0.0, 100.0)
grams = st.floats(0.5, 500.0)  # grams per percent of a room's air
rate = st.floats(0.0, 0.05)
tick = st.floats(0.1, 60.0)


@given(h=percent, air=grams, exchange=rate, moisture=st.floats(-1.0, 1.0), device=st.floats(-1.0, 1.0),
       target=st.one_of(st.none(), percent), dt=tick, outdoor=percent)
def test_humidity_stays_between_0_and_100(h, air, exchange, moisture, device, target, dt, outdoor):
    after = next_humidity(h, RoomAir(air, exchange, moisture, device, target), dt, outdoor)
    assert 0.0 <= after <= 100.0


@given(h=percent, target=percent, air=grams, device=st.floats(0.001, 1.0), dt=tick)
def test_a_device_moves_humidity_monotonely_to_its_target_and_never_past_it(h, target, air, device, dt):
    sign = 1.0 if target >= h else -1.0
    room = RoomAir(air, 0.0, 0.0, sign * device, target)
    values = [h]
    for _ in range(50):
        values.append(next_humidity(values[-1], room, dt, outdoor=h))
    steps = [b - a for a, b in zip(values, values[1:])]
    assert all(sign * s >= -1e-12 for s in steps)
    assert all(min(h, target) - 1e-9 <= v <= max(h, target) + 1e-9 for v in values)


@given(h=percent, outdoor=percent, air=grams, exchange=st.floats(1e-5, 0.05), dt=tick)
def test_air_exchange_moves_humidity_monotonely_toward_outdoors_without_overshooting(h, outdoor, air, exchange, dt):
    room = RoomAir(air, exchange)
    values = [h]
    for _ in range(30):
        values.append(next_humidity(values[-1], room, dt, outdoor))
    gaps = [abs(v - outdoor) for v in values]
    assert all(b <= a + 1e-12 for a, b in zip(gaps, gaps[1:]))
    assert all((v - outdoor) * (h - outdoor) >= -1e-9 for v in values)


def _episode(home, seed: int = 0) -> tuple[Episode, Humidity]:
    ep = Episode(home, "put_away", seed=seed, images=False, control=True)
    return ep, step_order.add(ep.world, humidity.Humidity)


def _room(ep: Episode, name: str) -> str:
    return next(r.id for r in ep.home.rooms if r.name == name)


def test_a_humidity_added_to_a_world_steps_where_a_world_with_air_devices_steps_it(house_home):
    """One step order: the humidity added later (a home without air devices) takes the place
    :func:`homeloop.sim.step_order.install` gives it in a home with them."""
    ep, _ = _episode(house_home)
    running = [m.name for m in ep.world.modules]
    assert [n for n in running if n in STEP_ORDER] == STEP_ORDER


def test_an_open_window_brings_the_outdoor_humidity_in_and_people_add_moisture(house_home):
    ep, module = _episode(house_home)
    names = [m.name for m in ep.world.modules]
    assert names.index("humidity") == names.index("climate") + 1
    bedroom, office = _room(ep, "bedroom"), _room(ep, "office")
    window = next(o.id for o in house_home.openings if o.kind == "window" and o.exterior and bedroom in o.connects)
    assert not any(o.kind == "window" and o.exterior and office in o.connects and ep.world.openings[o.id].open
                   for o in house_home.openings)
    ep.world.openings[window].open = True
    ep.call("clock_wait", seconds=300)
    living = next(p.room for p in ep.world.people.values())  # the resident watches television there
    start = humidity.START_PERCENT
    assert start < module.percent[office] < module.percent[bedroom] < humidity.OUTDOOR_PERCENT
    assert module.percent[living] > module.percent[office]  # the resident's breath and the air leaking in
    assert ep.world.snapshot()["modules"]["humidity"]["humidity_percent"][bedroom] == round(module.percent[bedroom], 2)


def _trace(home) -> list[dict]:
    ep, module = _episode(home, seed=5)
    window = next(o.id for o in home.openings if o.kind == "window" and o.exterior)
    trace = []
    for k in range(6):
        ep.world.openings[window].open = k % 2 == 0
        ep.call("clock_wait", seconds=37.3)
        trace.append(module.snapshot())
    return trace


def test_same_episode_same_humidity_with_or_without_sleeping_modules(house_home, monkeypatch):
    first, again = _trace(house_home), _trace(house_home)
    monkeypatch.setattr(world_module, "SLEEPING", False)
    assert first == again == _trace(house_home)
