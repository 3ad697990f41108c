"""The scripted reference agent in the house (docs/agents.md, docs/tasks.md): it passes every task at
seeds 0 and 1 with the G1-D, acting only through tool calls; the baselines fail where they must; and
the routes that stay solvable with a service withheld pass.

Episodes run through the benchmark's runner (homeloop.bench.runner.run_episode), so each leaves the
record a real run keeps, with images off; a few run with images on too, where what a capture shows is read
from the rendered id buffer.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from homeloop.bench import runner
from homeloop.bench.agents import make_agent
from homeloop.bench.agents.scripted import PLANS
from homeloop.bench.records import read_record, read_records, record_path
from homeloop.sim.task import load_tasks
from homeloop.sim.episode import DEFAULT_ROBOT, Episode

TASKS = sorted(load_tasks())

#: The soil moisture water_the_plants asks of its plants (its task file).
PREDICATE_FLOOR = next(c.params["min_moisture"] for c in load_tasks()["water_the_plants"].checks
                       if c.id == "plant_watered")
SEEDS = (0, 1)

#: Tasks whose evidence is something small a device body could hide (pill boxes beside the bedside lamp, a
#: watering can on the kitchen floor), or a person lying in bed or on the floor: run with images on as well.
IMAGES_ON = ["medicine_missing", "watering_can_spill", "person_down_emergency", "fall_false_alarm"]

#: Tasks where calling emergency services is a false alarm: the over-reactor must fail them.
NO_FALSE_ALARM = sorted(t for t, task in load_tasks().items()
                        if any(c.id == "no_false_alarm" and c.kind == "never" for c in task.checks))

#: docs/agents.md, "Routes that stay solvable with a service withheld", written out once:
#: (task, services withheld, the calls the route is made of, in order).
ROUTES: list[tuple[str, tuple[str, ...], list[str]]] = [
    ("smoke_while_cooking", ("hub", "wearables"), ["robot_navigate_to", "robot_capture", "messaging_send"]),
    ("smoke_sensor_fault", ("hub", "wearables"), ["robot_navigate_to", "robot_capture"]),
    ("watering_can_spill", ("hub", "wearables"), ["robot_navigate_to", "robot_capture", "messaging_send"]),
    ("doorbell_false_alarm", ("cameras",),
     ["hub_set_state", "robot_open", "robot_capture", "robot_close", "hub_set_state"]),
    ("answer_delivery", ("cameras",),
     ["hub_set_state", "robot_open", "robot_pick", "robot_place", "robot_close", "hub_set_state"]),
    ("respond_to_intruder", ("cameras",), ["hub_set_state", "robot_capture", "messaging_send", "messaging_send"]),
    ("kitchen_fire_emergency", ("robot",), ["hub_set_state", "messaging_send", "messaging_send"]),
    ("handle_smoke_alarm", ("robot",), ["hub_set_state", "messaging_send"]),
    ("doorbell_false_alarm", ("robot",), ["cameras_capture"]),
]

#: Which tasks the scripted agent still passes (seed 0) with the services of each route group
#: withheld; the rest cannot pass there, for the reason given.
STILL_SOLVABLE: dict[tuple[str, ...], set[str]] = {
    # Without the hub the robot presses switches (the range's knobs, a lamp), but the front door's lock
    # is motorised (hub only), a dark room's switch cannot be seen (the office of put_away, the living
    # room of respond_to_intruder at night), and the house's water main sits low on the wall behind the
    # kitchen counter, which hides it from the robot's camera as from any other.
    ("hub", "wearables"): set(TASKS) - {
        "answer_delivery", "bring_in_package", "close_up_after_leaving", "smoke_fault_with_delivery",
        "put_away", "respond_to_intruder", "water_leak_response"},
    # The robot sees whatever the house cameras would.
    ("cameras",): set(TASKS),
    # Without the robot nothing is carried, opened or shut, no house camera sees the bathroom, and the
    # smoke, leak and shared-household scenarios withhold the kitchen's: nobody sees the range or the cook.
    ("robot",): {"doorbell_false_alarm", "handle_smoke_alarm", "kitchen_fire_emergency",
                 "kitchen_fire_with_delivery", "respond_to_intruder"},
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("runs")


def episode_record(house_file: Path, run_dir: Path, task: str, seed: int = 0, agent: str = "scripted",
                   withheld: tuple[str, ...] = (), images: bool = False) -> dict[str, Any]:
    """Run one episode in the house as the benchmark does and read back its record."""
    spec = runner.EpisodeSpec("house", str(house_file), task, DEFAULT_ROBOT, seed,
                              runner.Flags(tuple(sorted(withheld)), images=images))
    runner.run_episode(spec, agent, {}, str(run_dir))
    return read_record(record_path(run_dir, spec.id))


def failed_checks(record: dict[str, Any]) -> dict[str, Any]:
    return {c["id"]: c for c in record["checks"] if not c["passed"]}


def tools_called(record: dict[str, Any]) -> list[str]:
    return [c["tool"] for c in record["calls"]]


def in_order(wanted: list[str], called: list[str]) -> bool:
    """Whether ``wanted`` occurs in ``called`` as a subsequence (in order, gaps allowed)."""
    rest = iter(called)
    return all(any(c == w for c in rest) for w in wanted)


# --- every task, both seeds -----------------------------------------------------------------------------


def test_every_task_has_a_plan():
    assert sorted(PLANS) == TASKS


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", TASKS)
def test_scripted_agent_passes_every_task(house_file, run_dir, task, seed):
    record = episode_record(house_file, run_dir, task, seed)
    assert not failed_checks(record), f"{task} seed {seed}: {failed_checks(record)}; {record['summary']}"
    assert record["passed"] and record["ended_by"] == "stop"
    assert [c for c in record["calls"] if c["error"]] == []  # the reference makes no failing call
    assert 0 < record["units_spent"] <= record["budget"]
    assert record["agent"]["name"] == "scripted" and "Could not finish" not in record["summary"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", IMAGES_ON)
def test_scripted_agent_passes_with_images_on(house_file, run_dir, task, seed):
    record = episode_record(house_file, run_dir, task, seed, images=True)
    assert not failed_checks(record), f"{task} seed {seed}: {failed_checks(record)}; {record['summary']}"
    assert record["passed"] and record["ended_by"] == "stop"
    rendered = {c["data"]["capture_id"]: c["data"]["image_file"] for c in record["calls"]
                if c["tool"] in ("robot_capture", "cameras_capture")}
    assert rendered and all(rendered.values())  # every capture carries its picture
    # Each thing the task needs seen was seen in one of those rendered captures.
    seen = [c["evidence"] for c in record["checks"] if c["id"].endswith("_seen")]
    assert seen and all(e["capture"] in rendered for e in seen)
    assert all((run_dir / "episodes" / rendered[e["capture"]]).is_file() for e in seen)


@pytest.mark.parametrize("task", [t for t, task in load_tasks().items() if task.wake.kind == "fall_alert"])
def test_the_agent_tells_a_false_fall_from_a_real_one_by_looking(house_file, run_dir, task):
    """The wearables read alike: the robot goes to the wearer and perception sees them before any message."""
    record = episode_record(house_file, run_dir, task)
    called = tools_called(record)
    before_any_message = called[:called.index("messaging_send")] if "messaging_send" in called else called
    assert in_order(["wearables_list_wearables", "robot_navigate_to", "robot_capture", "perception_identify_people"],
                    before_any_message), called


@pytest.mark.parametrize("seed", SEEDS)
def test_the_agent_waters_only_the_plant_its_sensor_reads_dry(house_home, house_file, run_dir, seed):
    record = episode_record(house_file, run_dir, "water_the_plants", seed)
    called = tools_called(record)
    sensors = {d.id for d in house_home.devices if d.type == "soil_moisture_sensor"}
    read = [c for c in record["calls"] if c["tool"] == "hub_get_state"]
    assert {c["arguments"]["device_id"] for c in read} == sensors
    dry = [c for c in read if c["data"]["readings"]["moisture"] < PREDICATE_FLOOR]
    assert len(dry) == 1 and called.count("robot_pour") == 1 and record["passed"]


@pytest.mark.parametrize("task", ["answer_delivery", "empty_the_dryer", "water_the_plants", "put_away"])
def test_the_agent_changes_the_world_only_through_calls(house_home, task):
    """Between one call's end and the next call's start the world stands exactly as it was."""
    ep = Episode(house_home, task, seed=0, images=False)
    real_call, last = ep.call, {"state": ep.world.snapshot()}

    def watched(tool: str, arguments: Any = None, **kwargs: Any) -> Any:
        assert ep.world.snapshot() == last["state"], f"the world changed outside a call before {tool}"
        result = real_call(tool, arguments, **kwargs)
        last["state"] = ep.world.snapshot()
        return result

    ep.call = watched
    make_agent("scripted").run(ep)
    assert ep.ended_by == "stop" and len(ep.trace) > 5


def test_the_agent_relies_on_perception_whether_or_not_captures_carry_pixels(house_file, run_dir):
    off = episode_record(house_file, run_dir, "fetch_medicine", images=False)
    on = episode_record(house_file, run_dir, "fetch_medicine", images=True)
    shots = [c for c in off["calls"] if c["tool"] == "robot_capture"]
    assert shots and all(c["data"]["image"] is None for c in shots)
    for record in (off, on):
        assert record["passed"] and "perception_detect_objects" in tools_called(record)


def test_a_thing_hidden_from_where_the_robot_arrives_is_looked_for_from_closer(house_home, catalog, monkeypatch):
    """A shelf between the kitchen's middle and the watering can on its floor hides the can from where
    the robot arrives and from all round there: the agent walks up to the can by turns and straight
    moves and finds it; without that walk the task fails."""
    from homeloop.bench.agents.scripted import RobotRoutines
    from homeloop.core.home import Pose, furniture_from_catalog

    can = next(o for o in house_home.objects if o.semantic_class == "watering_can")
    shelf = furniture_from_catalog(catalog.furniture["storage_shelf"], "storage_shelf_9", can.location.room,
                                   Pose(x=can.pose.x + 0.45, y=can.pose.y + 0.3, z=0.0, yaw=math.pi / 2))
    home = house_home.model_copy(update={"furniture": [*house_home.furniture, shelf]})

    found = runner.play(home, "water_the_plants", DEFAULT_ROBOT, 0, runner.Flags(images=False), "scripted", {})
    assert found.passed
    calls = [c["tool"] for c in found.episode.trace if c.get("kind") == "call"]
    assert in_order(["robot_navigate_to", "robot_scan", "robot_move", "robot_capture", "robot_approach",
                     "robot_pick"], calls)
    monkeypatch.setattr(RobotRoutines, "look_closer", lambda self, thing: None)
    hidden = runner.play(home, "water_the_plants", DEFAULT_ROBOT, 0, runner.Flags(images=False), "scripted", {})
    assert not hidden.passed


# --- the baselines fail where they must -----------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_do_nothing_fails_every_task(house_file, run_dir, task):
    record = episode_record(house_file, run_dir, task, agent="do-nothing")
    assert not record["passed"] and failed_checks(record)
    assert record["calls"] == []


@pytest.mark.parametrize("task", NO_FALSE_ALARM)
def test_over_reactor_fails_every_task_with_no_false_alarm(house_file, run_dir, task):
    record = episode_record(house_file, run_dir, task, agent="over-reactor")
    assert not record["passed"] and "no_false_alarm" in failed_checks(record)
    assert "Over" in record["failures"]


# --- services withheld ----------------------------------------------------------------------------------


@pytest.mark.parametrize("task, withheld, route", ROUTES,
                         ids=[f"{t}-without-{'+'.join(w)}" for t, w, _ in ROUTES])
def test_routes_that_stay_solvable_with_a_service_withheld(house_file, run_dir, task, withheld, route):
    record = episode_record(house_file, run_dir, task, withheld=withheld)
    assert not failed_checks(record), f"{failed_checks(record)}; {record['summary']}"
    called = tools_called(record)
    assert not [t for t in called if t.split("_", 1)[0] in withheld]
    assert in_order(route, called), called


@pytest.mark.parametrize("withheld, task", [(w, t) for w in STILL_SOLVABLE for t in TASKS],
                         ids=[f"without-{'+'.join(w)}-{t}" for w in STILL_SOLVABLE for t in TASKS])
def test_which_tasks_stay_solvable_with_a_service_withheld(house_file, run_dir, withheld, task):
    record = episode_record(house_file, run_dir, task, withheld=withheld)
    assert record["passed"] == (task in STILL_SOLVABLE[withheld]), failed_checks(record)
    assert record["ended_by"] == "stop"  # it does its best and stops, never raising
    assert not [t for t in tools_called(record) if t.split("_", 1)[0] in withheld]


# --- from the command line ------------------------------------------------------------------------------


@pytest.mark.slow
def test_bench_run_from_the_command_line_passes_all_48(tmp_path):
    from homeloop.cli import app

    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["bench", "run", "--agent", "scripted", "--tasks", "all", "--homes", "house",
                                      "--seeds", "0,1", "--out", str(out), "--no-images", "--workers", "2"])
    assert result.exit_code == 0, result.output
    records = read_records([out]).records
    assert len(records) == len(TASKS) * len(SEEDS)
    assert all(r["passed"] for r in records), [r["episode_id"] for r in records if not r["passed"]]
    assert {(r["task"]["id"], r["world"]["seed"]) for r in records} == {(t, s) for t in TASKS for s in SEEDS}


def test_a_robot_by_the_dryer_s_drum_but_not_its_door_walks_on_until_a_hand_reaches_the_door(house_home):
    """An approach stands by the nearest of a piece of furniture's handles; where that is the dryer's
    drum and leaves its door out of reach, the plan walks on to where a hand reaches the door (it
    used to ask robot_open from there and be refused)."""
    import numpy as np
    import shapely

    from homeloop.bench.agents.scripted import Household
    from homeloop.core.navigation import free_floor_of
    from homeloop.sim import robot as rb

    ep = Episode(house_home, "empty_the_dryer", seed=0, images=False)
    h = Household(ep)
    world, body = ep.world, ep.world.robot.body
    dryer = h.furniture_of("dryer")
    handles = {x.key: x for x in rb.target_of(world, "furniture", dryer.id).handles}
    door = rb.Target("furniture", dryer.id, handles["door"].what, dryer.room, (handles["door"],))
    floor = free_floor_of(world.home, body.clearance_width).geometry.intersection(world.home.room_polygon(dryer.room))
    reach = rb.reach_radius(body)
    x0, y0, x1, y1 = floor.bounds
    spots = [shapely.Point(x, y) for x in np.arange(x0, x1, 0.05) for y in np.arange(y0, y1, 0.05)]
    by_drum = [p for p in spots if floor.contains(p) and handles["drum"].shape.distance(p) < reach - 0.05]
    start = max(by_drum, key=lambda p: handles["door"].shape.distance(p))
    assert handles["door"].shape.distance(start) > reach  # the house has such a spot: the test means something
    rb.place_robot(world, body.id, point=(start.x, start.y))
    h.robot.within_reach_of_part(dryer, "door")
    robot = world.robot
    assert rb.reach_from(body, (robot.x, robot.y), door).key == "door"


def test_a_room_one_ceiling_light_leaves_too_dim_is_lit_with_its_other_lights_too(house_home, monkeypatch):
    """Where the living room's ceiling light alone falls short of what perception needs (a large
    room), the agent switches its other lights on as well, and sees the intruder; with the ceiling
    light alone no capture would show them."""
    from homeloop.sim.dynamics import light as light_module

    probe = Episode(house_home, "respond_to_intruder", seed=0, images=False)
    living = next(r.id for r in house_home.rooms if r.type == "LIVING_ROOM")
    lights = [d for d in house_home.devices if d.type == "light" and d.room == living]
    ceiling = next(d.id for d in lights if d.mount == "ceiling")
    for d in lights:
        probe.world.devices[d.id].values["on"] = True
    sim_light = probe.world.module(light_module.Light)
    alone = sim_light.source_lux(living, "fitting", ceiling)
    assert sim_light.lux(living) > alone * 1.05, "the living room's other lights add to its ceiling light's"
    monkeypatch.setattr(light_module, "BRIGHTNESS_FLOOR_LUX", alone * 1.05)

    played = runner.play(house_home, "respond_to_intruder", DEFAULT_ROBOT, 0, runner.Flags(images=False),
                         "scripted", {})
    switched = [c["arguments"]["device_id"] for c in played.episode.trace
                if c.get("kind") == "call" and c["tool"] == "hub_set_state" and c["arguments"]["field"] == "on"]
    assert switched == [ceiling] + sorted(d.id for d in lights if d.id != ceiling)
    assert played.passed


def test_a_robot_that_reaches_what_it_cannot_see_looks_from_the_spot_nearest_it(house_home):
    """The robot stands where a hand reaches the watering can, with the resident standing between:
    a closer look walks round her to the spot nearest the can and sees it there (it used to capture
    again from where it stood, and fail)."""
    from homeloop.bench.agents.scripted import WALK_TOLERANCE_M, Household
    from homeloop.sim import robot as rb

    ep = Episode(house_home, "water_the_plants", seed=0, images=False)
    h, world, robot = Household(ep), ep.world, ep.world.robot
    can = next(o for o in world.objects.values() if o.semantic_class == "watering_can")
    person = world.residents()[0]
    person.activity, person.posture = "standing", "standing"
    person.x, person.y, person.room = can.x + 0.22, can.y, can.placement.room  # right by the can
    robot.x, robot.y, robot.room = can.x + 0.8, can.y, can.placement.room
    thing = h.thing("object", can.id)
    rb.reach_from(robot.body, (robot.x, robot.y), rb.target_of(world, "object", can.id))  # a hand reaches it
    assert h.robot.capture(thing) is None, "the resident hides the can from here"
    start = (robot.x, robot.y)

    shot = h.robot.look_closer(thing)
    assert shot is not None and h.shows(shot, thing)
    assert math.dist((robot.x, robot.y), start) > WALK_TOLERANCE_M


def test_the_robot_in_the_living_room_looks_at_the_intruder_before_any_house_camera(house_file, run_dir):
    """The intruder turns back soon after noticing the light: the robot, standing in the living room,
    captures them first; house cameras are tried only where its one look does not show them."""
    record = episode_record(house_file, run_dir, "respond_to_intruder")
    called = tools_called(record)
    assert record["passed"] and "robot_capture" in called
    assert "cameras_capture" not in called[:called.index("robot_capture")]
