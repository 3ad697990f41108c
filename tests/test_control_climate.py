"""The climate steps only where what others read of it changes, and ends as the fixed step, bit for bit
(homeloop/sim/dynamics/climate.py): rooms settling under the thermostat in the house, with and without a
pan that reads the temperatures unrounded, and the house's control episodes that work the thermostat, whose
records must be the same bytes with the simulator's shortcuts on or off. Nothing here times anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from homeloop.bench import monitor, runner
from homeloop.bench.control import generate as gen
from homeloop.bench.control.model import read_episodes
from homeloop.bench.records import record_path
from homeloop.sim import world as world_module
from homeloop.sim.dynamics.climate import Climate
from homeloop.sim.episode import DEFAULT_ROBOT, Episode

#: A house task without a pan, and one whose pan reads the rooms' temperatures unrounded.
PLAIN_TASK, PAN_TASK = "doorbell_false_alarm", "smoke_while_cooking"


def settle(house_home: Any, task: str, sleeping: bool, changes: list[tuple[float, str, float]],
           ) -> tuple[list[Any], int]:
    """Each change (after ``wait`` s: the mode and the setpoint's offset from the room) then a read of the
    climate: its exact temperatures, the thermostat's fields, the snapshot; and how often it stepped."""
    saved = world_module.SLEEPING
    world_module.SLEEPING = sleeping
    try:
        world = Episode(house_home, task, images=False).world
        climate = world.running(Climate)
        assert climate is not None
        stepped = [0]
        own: Callable[[Any, float], None] = climate.step

        def counted(w: Any, dt: float) -> None:
            stepped[0] += 1
            own(w, dt)

        climate.step = counted  # type: ignore[method-assign]
        world._sleepers = None  # the world's list of steps is made anew with the counted one
        stat = world.devices_of_type("thermostat")[0]
        seen = []
        for wait, mode, offset in changes:
            world.advance(wait)
            stat.values["mode"], stat.values["setpoint"] = mode, round(climate.temperature(stat.room) + offset, 1)
            world.advance(world_module.STEP_S)  # the change, as a call makes it: every module woken
            seen.append(([repr(climate.temperature(r.id)) for r in world.home.rooms], dict(stat.values),
                         world.snapshot()["modules"]["climate"]))
        world.advance(changes[-1][0])
        seen.append(([repr(climate.temperature(r.id)) for r in world.home.rooms], dict(stat.values)))
        return seen, stepped[0]
    finally:
        world_module.SLEEPING = saved


changes = st.lists(st.tuples(st.floats(1.0, 150.0).map(lambda s: round(s, 1)),
                             st.sampled_from(("heat", "cool", "auto", "off")),
                             st.floats(-6.0, 6.0).map(lambda d: round(d, 1))), min_size=1, max_size=3)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=changes)
def test_settling_rooms_end_as_the_fixed_step_and_the_climate_steps_less(house_home, changes):
    fixed, every = settle(house_home, PLAIN_TASK, False, changes)
    fast, few = settle(house_home, PLAIN_TASK, True, changes)
    assert fast == fixed
    assert few <= every


def test_a_room_warming_for_minutes_steps_the_climate_a_few_dozen_times(house_home):
    plan = [(1.0, "heat", 4.0), (300.0, "heat", 0.0)]
    fixed, every = settle(house_home, PLAIN_TASK, False, plan)
    fast, few = settle(house_home, PLAIN_TASK, True, plan)
    assert fast == fixed
    assert every >= 3000 and few < every / 10


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offset=st.sampled_from((0.012, 0.02, -0.015)))
def test_rooms_that_settle_end_settled_as_the_fixed_step(house_home, offset):
    plan = [(1.0, "auto", offset), (1300.0, "auto", 0.0)]
    assert settle(house_home, PLAIN_TASK, True, plan)[0] == settle(house_home, PLAIN_TASK, False, plan)[0]


def test_with_a_pan_reading_the_temperatures_the_climate_steps_every_step(house_home):
    plan = [(1.0, "heat", 3.0), (60.0, "cool", -2.0)]
    fixed, _ = settle(house_home, PAN_TASK, False, plan)
    fast, few = settle(house_home, PAN_TASK, True, plan)
    assert fast == fixed
    assert few >= round((plan[1][0] + plan[0][0] + 2 * world_module.STEP_S) / world_module.STEP_S)


# --- control episodes with the thermostat: the same records ---------------------------------------------


def record_text(home_file: Path, episode_line: str, episode_id: str, seed: int, run_dir: Path, on: bool) -> str:
    spec = runner.EpisodeSpec("house", str(home_file), episode_id, DEFAULT_ROBOT, seed, runner.Flags(images=False),
                              control=episode_line)
    saved = world_module.SLEEPING, monitor.WAKE_ON_READS
    world_module.SLEEPING = monitor.WAKE_ON_READS = on
    try:
        runner.run_episode(spec, "scripted", {}, str(run_dir))
    finally:
        world_module.SLEEPING, monitor.WAKE_ON_READS = saved
    return record_path(run_dir, spec.id).read_text(encoding="utf-8")


def test_control_episodes_that_work_the_thermostat_write_the_same_records(house_home, tmp_path):
    home_file = house_home.write(tmp_path / "build" / "homes" / "house" / "home.json")
    out = tmp_path / "episodes.jsonl"
    gen.generate_file(tmp_path / "build", per_home=24, seed=3, out=out)
    warm = [e for e in read_episodes(out)
            if any("thermostat" in s.device_type for s in e.intent.steps) and e.feasible]
    assert warm
    for e in warm:
        fixed = record_text(home_file, e.line(), e.id, e.seed, tmp_path / "fixed", False)
        fast = record_text(home_file, e.line(), e.id, e.seed, tmp_path / "fast", True)
        assert fixed.startswith("{") and fast == fixed, e.id
