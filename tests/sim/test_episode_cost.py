"""The simulator's shortcuts change no trace: modules that sleep while nothing of theirs evolves
(homeloop/sim/world.py), the monitor that sleeps until something its checks read changes
(homeloop/bench/monitor.py), a house camera's view of the static part worked out once
(homeloop/sim/static_visibility.py), the lookups the robot's motion keeps, and the ways and spots
planned before in the same home (homeloop/sim/robot/floor.py ``KEPT``).

Each record of the benchmark's runner (``homeloop bench run``'s episode record: calls with their
results and events, checks, milestones, the final state; it holds no wall-clock field) is written
twice, with the shortcuts and with every module stepped every step and every frame worked out in
full, and the two files must be byte for byte the same: for the 48 house episodes (every task at
seeds 0 and 1, scripted agent) and for the screened pairs of generated homes; and, asked for with
``--shortcut-build DIR`` (it takes minutes), for every screened pair of a sample of 100 of a build's
homes. Nothing here times anything.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import pytest
import shapely
from hypothesis import example, given, settings
from hypothesis import strategies as st

from homeloop.bench import monitor, runner
from homeloop.bench.pairs import HOUSE
from homeloop.bench.records import record_path
from homeloop.core.home import polygon_from_rings
from homeloop.pipeline.verify_pairs import verify_plan
from homeloop.pipeline.verify_settings import VerifySettings
from homeloop.sim import static_visibility, world as world_module
from homeloop.sim.dynamics.cooking import Cooking
from homeloop.sim.dynamics.robot_motion import _Rooms
from homeloop.sim.dynamics.smoke import Smoke
from homeloop.sim.robot import floor
from homeloop.sim.robot.hands import hold
from homeloop.sim.episode import DEFAULT_ROBOT, Episode
from homeloop.sim.task import load_tasks
from homeloop.sim.visibility import GeometricVisibility, Viewpoint
from homeloop.sim.world import STEP_S, Rest, World

TASKS = sorted(load_tasks())


class shortcuts:
    """The shortcuts on or off, for the time of a ``with``."""

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self) -> None:
        self.saved = world_module.SLEEPING, static_visibility.CACHED, monitor.WAKE_ON_READS, floor.KEPT
        world_module.SLEEPING = static_visibility.CACHED = monitor.WAKE_ON_READS = floor.KEPT = self.on

    def __exit__(self, *_: Any) -> None:
        world_module.SLEEPING, static_visibility.CACHED, monitor.WAKE_ON_READS, floor.KEPT = self.saved


def record_text(home_id: str, home_file: Path, task: str, seed: int, run_dir: Path, on: bool) -> str:
    """The record file the runner writes for one scripted episode, shortcuts on or off."""
    spec = runner.EpisodeSpec(home_id, str(home_file), task, DEFAULT_ROBOT, seed, runner.Flags(images=False))
    with shortcuts(on):
        summary = runner.run_episode(spec, "scripted", {}, str(run_dir))
    path = record_path(run_dir, spec.id)
    return path.read_text(encoding="utf-8") if path.is_file() else f"not set up: {summary}"


def both_ways(home_id: str, home_file: Path, task: str, seed: int, tmp_path: Path) -> tuple[str, str]:
    return (record_text(home_id, home_file, task, seed, tmp_path / "fixed", False),
            record_text(home_id, home_file, task, seed, tmp_path / "shortcuts", True))


# --- whole episodes: the same records -----------------------------------------------------------------


@pytest.mark.parametrize("seed", (0, 1))
@pytest.mark.parametrize("task", TASKS)
def test_house_episodes_write_the_same_record_with_the_shortcuts(house_file, tmp_path, task, seed):
    fixed, fast = both_ways("house", house_file, task, seed, tmp_path)
    assert fixed.startswith("{") and fast == fixed


def generated_pairs(homes: list[Any], catalog: Any) -> Iterator[tuple[Any, str]]:
    """Every task screened applicable in each generated home, for the experiments' body."""
    from homeloop.pipeline.applicability import screen

    robot = catalog.robots[DEFAULT_ROBOT]
    for home in homes:
        for task, spec in sorted(load_tasks().items()):
            if screen(home, spec, robot, catalog).applicable:
                yield home, task


def test_generated_homes_pairs_write_the_same_records_with_the_shortcuts(generated_homes, catalog, tmp_path):
    pairs = list(generated_pairs(generated_homes, catalog))
    assert len({home.home_id for home, _ in pairs}) >= 2 and len(pairs) >= 10
    for home, task in pairs:
        home_file = home.write(tmp_path / "homes" / home.home_id / "home.json")
        fixed, fast = both_ways(home.home_id, home_file, task, 0, tmp_path / task)
        assert fast == fixed, (home.home_id, task)


def test_a_builds_sample_of_homes_writes_the_same_records_with_the_shortcuts(request, tmp_path):
    """Opt-in, for its length: ``pytest tests/sim/test_episode_cost.py --shortcut-build outputs/default``
    plays every screened pair of the experiments' body in a sample of the build's homes (100 unless
    ``--shortcut-homes`` says otherwise), the pairs the verify stage plays with ``--verify-homes``, both ways."""
    build = request.config.getoption("--shortcut-build")
    if build is None:
        pytest.skip("opt-in: --shortcut-build DIR plays a sample of that build's homes both ways")
    table = pd.read_parquet(Path(build) / "applicability.parquet")
    work = verify_plan(table, VerifySettings(homes=request.config.getoption("--shortcut-homes")), 0)
    work.pop(HOUSE)  # the house's episodes: the test above
    differ, played = [], 0
    for home_id, pairs in work.items():
        home_file = Path(build) / "homes" / home_id / "home.json"
        for task, _ in pairs:
            fixed, fast = both_ways(home_id, home_file, task, 0, tmp_path / home_id / task)
            played += 1
            if fast != fixed:
                differ.append(f"{home_id} {task}")
    assert played and not differ, f"{len(differ)} of {played} pairs differ: {differ[:10]}"


# --- the world: sleeping modules ----------------------------------------------------------------------


class Ticker:
    """A module that changes its own count every ``every`` seconds and sleeps in between."""

    name = "ticker"

    def __init__(self, every: float):
        self.every, self.ticks, self.stepped = every, [], 0

    def step(self, world: World, dt: float) -> None:
        self.stepped += 1
        if not self.ticks or world.time >= self.ticks[-1] + self.every - 1e-9:
            self.ticks.append(world.time)

    def rest(self, world: World) -> Rest:
        return Rest(frozenset({"ticker"}), self.ticks[-1] + self.every)

    def snapshot(self) -> dict[str, Any]:
        return {"ticks": list(self.ticks)}


class Follower:
    """A module without ``rest``: it steps every step, and sees the ticker's count each time."""

    name = "follower"

    def __init__(self, ticker: Ticker):
        self.ticker, self.seen = ticker, []

    def step(self, world: World, dt: float) -> None:
        self.seen.append(len(self.ticker.ticks))

    def snapshot(self) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize("every", (0.1, 0.7, 5.0))
def test_a_sleeping_module_steps_only_when_it_asked_to_and_ends_as_the_fixed_step(house_home, catalog, every):
    runs = {}
    for sleeping in (False, True):
        world = World(house_home, catalog, seed=0)
        ticker = Ticker(every)
        world.add_module(ticker)
        world_module.SLEEPING, saved = sleeping, world_module.SLEEPING
        try:
            world.advance(20.0)
            world.advance(STEP_S / 3)  # a remainder carried to the next call, as before
            world.advance(10.0)
        finally:
            world_module.SLEEPING = saved
        runs[sleeping] = (world.time, ticker.ticks, ticker.stepped)
    (time_fixed, ticks_fixed, steps_fixed), (time_fast, ticks_fast, steps_fast) = runs[False], runs[True]
    assert time_fast == time_fixed and ticks_fast == ticks_fixed
    assert steps_fixed == round(time_fixed / STEP_S)
    # with sleeping: one step per tick, and one where each call from outside wakes every module
    assert steps_fast <= len(ticks_fixed) + 3


@settings(max_examples=40)
@given(calls=st.lists(st.floats(0.0, 3000.0), min_size=1, max_size=6), every=st.floats(0.1, 400.0))
def test_the_worlds_time_after_jumps_and_steps_is_the_fixed_steps(house_home, catalog, calls, every):
    """However a world's time is reached (stepped, or jumped over while every module sleeps), it reads
    as the fixed step's, ``round(steps * STEP_S, 6)``."""
    times = {}
    for sleeping in (False, True):
        world = World(house_home, catalog, seed=0)
        world.add_module(Ticker(every))
        world_module.SLEEPING, saved = sleeping, world_module.SLEEPING
        try:
            times[sleeping] = []
            for seconds in calls:
                world.advance(seconds, touched=False)
                times[sleeping].append(world.time)
        finally:
            world_module.SLEEPING = saved
    assert times[True] == times[False]


def test_a_module_without_rest_steps_every_step_and_sees_every_change(house_home, catalog):
    world = World(house_home, catalog, seed=0)
    ticker = Ticker(1.0)
    follower = Follower(ticker)
    world.add_module(ticker)
    world.add_module(follower)
    world.advance(10.0)
    assert len(follower.seen) == round(10.0 / STEP_S)
    assert follower.seen == [1 + math.floor(i * STEP_S + 1e-9) for i in range(len(follower.seen))]


class Counter:
    """A module that counts its steps and asks for every step."""

    name = "counter"

    def __init__(self) -> None:
        self.steps: list[float] = []

    def step(self, world: World, dt: float) -> None:
        self.steps.append(world.time)

    def rest(self, world: World) -> Rest:
        return Rest(frozenset({"counter"}), -math.inf)

    def snapshot(self) -> dict[str, Any]:
        return {}


class Coaster(Counter):
    """A counter that coasts (the world's "Coasting modules") up to the step before its ``stops``-th,
    after which ``going`` reads its count: what a robot's motion does before its last phase ends."""

    name = "coaster"

    def __init__(self, stops: int) -> None:
        super().__init__()
        self.stops = stops

    def rest(self, world: World) -> Rest:
        return Rest(frozenset({"coaster"}), -math.inf)

    def coast(self, world: World, steps: int, take: bool) -> int:
        steps = max(min(steps, self.stops - len(self.steps) - 1), 0)
        if take:  # the clock has moved past them: their times, as each step would have read it
            self.steps += [round((world._steps - steps + k) * STEP_S, 6) for k in range(1, steps + 1)]
        return steps


def advance_a_step_at_a_time(world: World, going: Any, until: float) -> None:
    """What a skill's motion did before :meth:`World.advance_while`: a call of ``advance`` for a step
    while ``going()`` holds, never past ``until``, the first call touched."""
    touched = True
    while going():
        before = world.time
        world.advance(min(STEP_S, max(until - world.time, 0.0)), touched=touched)
        if world.time == before:
            return
        touched = False


@settings(max_examples=80, deadline=None)
# coasting through the call's last step, whose part of a step leaves a new remainder
@example(owed=0.17, horizon=20.05, stop_at=500, every=7.0, counting=Coaster, sleeping=True)
@given(owed=st.floats(0.0, 0.3), horizon=st.floats(0.0, 40.0), stop_at=st.integers(0, 500),
       every=st.floats(0.1, 30.0), counting=st.sampled_from([None, Counter, Coaster]), sleeping=st.booleans())
def test_advance_while_takes_the_steps_of_a_call_per_step(house_home, catalog, owed, horizon, stop_at, every,
                                                         counting, sleeping):
    """Stepping while a motion goes on in one call gives the world the steps, the time and the remainder
    carried that a call per step gave it, whether what ``going`` reads steps every step, coasts (many
    steps at once, until the step after which ``going`` stops) or sleeps (a ticker), up to a horizon
    or not."""
    outcomes = []
    for one_call in (False, True):
        world = World(house_home, catalog, seed=0)
        ticker, counter = Ticker(every), Coaster(stop_at) if counting is Coaster else Counter()
        world.add_module(ticker)
        if counting:
            world.add_module(counter)
        world_module.SLEEPING, saved = sleeping, world_module.SLEEPING
        try:
            world.advance(owed)
            until = world.time + horizon

            def going() -> bool:
                return (len(counter.steps) if counting else len(ticker.ticks)) < stop_at

            if one_call:
                world.advance_while(going, until)
            else:
                advance_a_step_at_a_time(world, going, until)
            world.advance(0.25)  # the remainder carried reads in the next call
        finally:
            world_module.SLEEPING = saved
        outcomes.append((world.time, world._steps, world._owed_s, ticker.ticks, counter.steps))
    assert outcomes[1] == outcomes[0]
    assert outcomes[0][0] <= round(until + 0.25 + STEP_S, 6)


def test_advance_until_stops_after_the_step_that_brings_an_event(house_home):
    ep = Episode(house_home, "answer_delivery", seed=0, images=False)  # woken by the doorbell, pressed in a step
    wake = ep.wake_event
    assert wake.kind == "doorbell_pressed" and ep.world.time == wake.time


def smoke_held_still_then_stirred(house_home: Any, on: bool) -> tuple[dict[str, Any], list[bool]]:
    """The kitchen's smoke let through every door, the burner off, the doors shut once the pan stops
    smoking (the layers even out no further), then one door opened again: the world's ground truth at
    the end, and whether the smoke slept (held still) after each stage."""
    slept = []
    with shortcuts(on):
        ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
        world = ep.world
        smoke, pan = world.module(Smoke), world.module(Cooking).pans()[0]
        world.devices[pan.stove].values[pan.burner] = False
        doors = sorted((o for o in world.openings.values() if o.kind == "door"), key=lambda o: o.id)
        for door in doors:
            door.open = True
        world.advance(60.0)
        for opening in world.openings.values():
            opening.open = False
        for touched in (True, False):  # a call shuts them; the world then runs on by itself
            world.advance(90.0, touched=touched)
            slept.append(smoke.snapshot()["active"] and smoke.rest(world).until == math.inf)
        doors[0].open = True
        world.advance(60.0)
        slept.append(smoke.snapshot()["active"] and smoke.rest(world).until == math.inf)
        return world.snapshot(), slept


def test_smoke_held_still_sleeps_and_ends_as_the_fixed_step(house_home):
    fixed, _ = smoke_held_still_then_stirred(house_home, False)
    fast, slept = smoke_held_still_then_stirred(house_home, True)
    assert fast == fixed
    rooms = fixed["modules"]["smoke"]["rooms"]
    assert len(rooms) >= 2 and not fixed["modules"]["cooking"]["pans"][pan_id(fixed)]["smoking"]
    # shut in, every room's layer holds still and the smoke sleeps; a door opened stirs it again
    assert slept == [True, True, False]


def pan_id(snapshot: dict[str, Any]) -> str:
    (pid,) = snapshot["modules"]["cooking"]["pans"]
    return str(pid)


# --- a house camera's static view ---------------------------------------------------------------------


@settings(max_examples=12)
@given(shut=st.lists(st.booleans(), min_size=12, max_size=12), dx=st.floats(-1.5, 1.5), dy=st.floats(-1.5, 1.5))
def test_a_cameras_static_view_gives_the_full_frame(house_home, shut, dx, dy):
    """Whatever doors stand shut and wherever the objects and people are, a house camera's frame is the
    one worked out in full."""
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    world = ep.world
    for state, closed in zip(sorted(world.openings.values(), key=lambda o: o.id), shut):
        state.open = not closed
    for obj in world.objects.values():
        obj.x, obj.y = obj.x + dx, obj.y + dy
    for person in world.people.values():
        person.x, person.y = person.x - dy, person.y + dx
    vis = GeometricVisibility(world)
    for camera in house_home.cameras:
        view = Viewpoint.of(camera)
        static_visibility.CACHED = False
        try:
            full = vis.frame(world, view, hide=(camera.id,))
        finally:
            static_visibility.CACHED = True
        assert vis.frame(world, view, hide=(camera.id,)) == full


# --- the robot's room, looked up without GEOS inside a disc ---------------------------------------------


@settings(max_examples=60)
@given(room=st.integers(0, 40), fx=st.floats(0.0, 1.0), fy=st.floats(0.0, 1.0),
       walk=st.lists(st.tuples(st.floats(-0.4, 0.4), st.floats(-0.4, 0.4)), min_size=1, max_size=25))
def test_the_robots_room_is_the_room_whose_polygon_contains_it(house_home, room, fx, fy, walk):
    rooms = _Rooms(house_home)
    polygons = {r.id: polygon_from_rings(r.polygon) for r in house_home.rooms}
    current = house_home.rooms[room % len(house_home.rooms)].id
    x0, y0, x1, y1 = polygons[current].bounds
    x, y = x0 + fx * (x1 - x0), y0 + fy * (y1 - y0)
    for dx, dy in walk:
        x, y = x + dx, y + dy
        if shapely.contains_xy(polygons[current], x, y):
            expected = current
        else:
            expected = next((rid for rid, poly in polygons.items() if shapely.contains_xy(poly, x, y)), current)
        current = rooms.room_at(x, y, current)
        assert current == expected


# --- coasting: a pan cooling and smoke thinning out, many steps at once --------------------------------


def cooled_down(house_home: Any, on: bool, off_after: float, run: float, doors_open: bool) -> tuple[dict[str, Any], int]:
    """The house's smoke alarm episode: the burner turned off ``off_after`` s after the wake, the doors
    left as they are or all opened, then the world run ``run`` s on its own: its ground truth at the end,
    and how many steps the smoke module stepped one by one meanwhile."""
    with shortcuts(on):
        ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
        world = ep.world
        world.advance(off_after)
        pan = world.module(Cooking).pans()[0]
        world.devices[pan.stove].values[pan.burner] = False
        for opening in world.openings.values():
            opening.open = opening.open or (doors_open and opening.kind == "door")
        stepped, smoke = 0, world.module(Smoke)
        step = smoke.step

        def counted(w: World, dt: float) -> None:
            nonlocal stepped
            stepped += 1
            step(w, dt)

        smoke.step = counted  # type: ignore[method-assign]
        world._sleepers = None  # the steps read again, the counted one among them
        world.advance(run)
        return world.snapshot(), stepped


@settings(max_examples=8, deadline=None)
@given(off_after=st.floats(0.0, 240.0), run=st.floats(30.0, 900.0), doors_open=st.booleans())
def test_a_pan_cooling_and_smoke_thinning_coast_to_the_fixed_steps_ground_truth(house_home, off_after, run,
                                                                             doors_open):
    fixed, _ = cooled_down(house_home, False, off_after, run, doors_open)
    fast, _ = cooled_down(house_home, True, off_after, run, doors_open)
    assert fast == fixed


def test_a_pan_cooling_and_smoke_thinning_take_few_steps_one_by_one(house_home):
    run = 600.0
    fixed, stepped_fixed = cooled_down(house_home, False, 60.0, run, True)
    fast, stepped_fast = cooled_down(house_home, True, 60.0, run, True)
    assert fast == fixed
    pans = fixed["modules"]["cooking"]["pans"]
    assert fixed["modules"]["smoke"]["active"] and not any(p["smoking"] for p in pans.values())
    assert stepped_fixed == round(run / STEP_S)
    # the smoke steps one by one until its source stops feeding it, then coasts while it thins out
    assert stepped_fast < stepped_fixed / 4


# --- coasting: the robot driving a phase, many steps at once -------------------------------------------


def driven_round(house_home: Any, on: bool, carry: bool) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """The house's delivery episode, the robot driven to every room in turn (holding the parcel, with
    ``carry``): each call's result, the ground truth at the end, and how many steps the robot's motion
    stepped one by one."""
    with shortcuts(on):
        ep = Episode(house_home, "bring_in_package", seed=0, images=False)
        motion = ep.world.module("robot_motion")
        stepped, step = 0, motion.step

        def counted(w: World, dt: float) -> None:
            nonlocal stepped
            stepped += 1
            step(w, dt)

        motion.step = counted  # type: ignore[method-assign]
        ep.world._sleepers = None  # the steps read again, the counted one among them
        if carry:
            robot, parcel = ep.world.robot, next(iter(ep.world.objects.values()))
            assert robot is not None
            hold(ep.world, robot, parcel, list(robot.held)[:1])
        results = [ep.call("robot_navigate_to", room=r.id).to_dict() for r in house_home.rooms if not r.outdoor]
        return results, ep.world.snapshot(), stepped


@pytest.mark.parametrize("carry", [False, True])
def test_the_robot_driving_coasts_to_the_fixed_steps_calls_and_ground_truth(house_home, carry):
    fixed_calls, fixed, stepped_fixed = driven_round(house_home, False, carry)
    fast_calls, fast, stepped_fast = driven_round(house_home, True, carry)
    assert fast_calls == fixed_calls and fast == fixed
    assert sum(c["error"] is None for c in fixed_calls) >= 3  # the robot drove
    assert fixed["modules"]["robot_motion"]["driven_m"] > 10.0
    # a drive steps one by one where a phase ends or something comes in the way; it coasts between
    assert stepped_fast < stepped_fixed / 4
