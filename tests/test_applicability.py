"""Task applicability screening: crafted homes missing one thing fail exactly the tasks that need it."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from homeloop.core import navigation
from homeloop.sim.task import CORE_TASK_IDS, TASK_IDS, load_tasks
from homeloop.core.catalog import load_catalog
from homeloop.core.home import (
    Home,
    ObjectLocation,
    Opening,
    Pose,
    Room,
    Source,
    device_from_catalog,
    furniture_from_catalog,
    object_from_catalog,
)
from homeloop.sim.robot.targets import POUR_CLEARANCE
from homeloop.pipeline.applicability import (
    HomeFacts,
    reasons_of,
    screen,
    screen_homes,
    summary_per_home,
    write_applicability,
)

G1D = "unitree_g1_d_ultimate"
NORTH, SOUTH = math.pi / 2, -math.pi / 2


def _rect(x0: float, y0: float, x1: float, y1: float) -> list[list[tuple[float, float]]]:
    return [[(x0, y0), (x1, y0), (x1, y1), (x0, y1)]]


def crafted_home(home_id: str = "crafted", *, laundry_door: float = 0.9, drop: tuple[str, ...] = ()) -> Home:
    """A small furnished, equipped home that every task applies to (for the G1-D).

    Rooms sit 0.1 m apart (the walls); doors bridge the gaps::

        +---------+  +----------+  +-----------+   y 6.1
        | kitchen |  |  living  |  |  bedroom  |
        +--d------+  +---d------+  +------d----+   y 2.1
        |              corridor                |   y 0.0 .. 2.0
        +--E-------+--d------+--d--------------+
        |  porch   | |bathroom| |laundry|
        x 0        3  4       7  7.1     10

    ``drop`` removes elements by id (a device, a piece of furniture, an object).
    """
    cat = load_catalog()
    rooms = [
        Room(id="corridor", name="hall", type="CORRIDOR", polygon=_rect(0, 0, 13, 2)),
        Room(id="kitchen", name="kitchen", type="KITCHEN", polygon=_rect(0, 2.1, 4, 6.1)),
        Room(id="living", name="living room", type="LIVING_ROOM", polygon=_rect(4.1, 2.1, 9, 6.1)),
        Room(id="bedroom", name="bedroom", type="BEDROOM", polygon=_rect(9.1, 2.1, 13, 6.1)),
        Room(id="porch", name="porch", type="PORCH", polygon=_rect(0, -2.1, 3, -0.1)),
        Room(id="bathroom", name="bathroom", type="BATHROOM", polygon=_rect(4, -3.1, 7, -0.1)),
        Room(id="laundry", name="laundry", type="WASH_AND_DRY_ROOM", polygon=_rect(7.1, -3.1, 10, -0.1)),
    ]

    def door(oid: str, x: float, y: float, width: float, a: str, b: str | None, kind: str = "door") -> Opening:
        return Opening(id=oid, kind=kind, polygon=_rect(x, y, x + width, y + 0.1), connects=[a] + ([b] if b else []),
                       width=width, height=2.0, lockable=kind == "entrance_door", exterior=kind == "entrance_door")

    openings = [
        door("entrance", 1.0, -0.1, 1.0, "corridor", "porch", "entrance_door"),
        door("door_kitchen", 1.0, 2.0, 0.9, "corridor", "kitchen"),
        door("door_living", 5.0, 2.0, 0.9, "corridor", "living"),
        door("door_bedroom", 10.0, 2.0, 0.9, "corridor", "bedroom"),
        door("door_bathroom", 5.0, -0.1, 0.9, "corridor", "bathroom"),
        door("door_laundry", 8.0, -0.1, laundry_door, "corridor", "laundry"),
        Opening(id="window_living", kind="window", polygon=_rect(6, 6.1, 7, 6.2), connects=["living"], width=1.0,
                sill=0.5, height=1.9, exterior=True),
    ]
    F = cat.furniture
    furniture = [
        furniture_from_catalog(F["range"], "range_1", "kitchen", Pose(x=1.0, y=5.8, yaw=SOUTH)),
        furniture_from_catalog(F["dishwasher"], "dishwasher_1", "kitchen", Pose(x=2.0, y=5.8, yaw=SOUTH)),
        furniture_from_catalog(F["coffee_table"], "coffee_table_1", "living", Pose(x=6.5, y=4.0)),
        furniture_from_catalog(F["plant_stand"], "plant_stand_1", "living", Pose(x=8.5, y=5.5)),
        furniture_from_catalog(F["double_bed"], "bed_1", "bedroom", Pose(x=10.6, y=5.075, yaw=SOUTH)),
        furniture_from_catalog(F["single_bed"], "bed_2", "bedroom", Pose(x=12.4, y=5.1, yaw=SOUTH)),
        furniture_from_catalog(F["nightstand"], "nightstand_1", "bedroom", Pose(x=9.5, y=5.9, yaw=SOUTH)),
        furniture_from_catalog(F["dryer"], "dryer_1", "laundry", Pose(x=8.0, y=-2.79, yaw=NORTH)),
        furniture_from_catalog(F["washer"], "washer_1", "laundry", Pose(x=9.0, y=-2.8, yaw=NORTH)),
        furniture_from_catalog(F["laundry_basket"], "basket_1", "laundry", Pose(x=9.5, y=-1.0)),
    ]
    def on(oid: str, cid: str, furniture_id: str, name: str, kind: str = "surface") -> object:
        host = next(f for f in furniture if f.id == furniture_id)
        z = host.surface(name).height if kind == "surface" else host.container(name).bottom
        return object_from_catalog(cat.objects[cid], oid, ObjectLocation(kind=kind, room=host.room,
                                                                         furniture=furniture_id, name=name),
                                   Pose(x=host.pose.x, y=host.pose.y, z=z))

    objects = [
        on("plant_1", "potted_plant", "plant_stand_1", "top"),
        on("pan_1", "pan", "range_1", "cooktop"),
        object_from_catalog(cat.objects["watering_can"], "can_1", ObjectLocation(kind="floor", room="kitchen"),
                            Pose(x=3.5, y=3.0)),
        on("mug_1", "mug", "nightstand_1", "top"),  # put_away asks for it on the coffee table
        on("glasses_1", "glasses", "nightstand_1", "top"),
        on("pills_red", "pill_box_red", "nightstand_1", "top"),
        on("pills_blue", "pill_box_blue", "nightstand_1", "top"),
        on("pills_white", "pill_box_white", "nightstand_1", "top"),
        on("shirt_1", "garment_shirt", "dryer_1", "drum", "container"),
        on("towel_1", "garment_towel", "dryer_1", "drum", "container"),
    ]
    D = cat.devices
    devices = [
        device_from_catalog(D["smoke_sensor"], "smoke_kitchen", "kitchen", Pose(x=2.0, y=2.6, z=2.6)),
        device_from_catalog(D["stove"], "stove_1", "kitchen", Pose(x=1.0, y=5.8), mounted_on="range_1"),
        device_from_catalog(D["leak_sensor"], "leak_1", "kitchen", Pose(x=2.4, y=5.4), monitors=["dishwasher_1"]),
        device_from_catalog(D["water_main"], "water_main_1", "kitchen", Pose(x=3.9, y=5.0, z=0.4)),
        device_from_catalog(D["lock"], "lock_1", "corridor", Pose(x=1.5, y=0.0, z=1.0), mounted_on="entrance"),
        device_from_catalog(D["doorbell"], "doorbell_1", "porch", Pose(x=2.2, y=-0.1, z=1.2), mounted_on="entrance"),
        device_from_catalog(D["contact_sensor"], "contact_entrance", "corridor", Pose(x=1.5, y=0.0, z=2.0),
                            mounted_on="entrance", monitors=["entrance"]),
        device_from_catalog(D["contact_sensor"], "contact_window", "living", Pose(x=6.5, y=6.1, z=1.5),
                            mounted_on="window_living", monitors=["window_living"]),
        device_from_catalog(D["light"], "light_living", "living", Pose(x=6.5, y=4.1, z=2.6)),
        device_from_catalog(D["light"], "light_bedroom", "bedroom", Pose(x=11.0, y=4.1, z=2.6)),
        device_from_catalog(D["light"], "light_kitchen", "kitchen", Pose(x=2.0, y=4.1, z=2.6)),
        device_from_catalog(D["soil_moisture_sensor"], "soil_1", "living", Pose(x=8.5, y=5.5, z=0.7),
                            mounted_on="plant_1", monitors=["plant_1"]),
        device_from_catalog(D["fall_watch"], "watch_1", None, Pose(x=0.0, y=0.0)),
        device_from_catalog(D["dryer"], "dryer_device_1", "laundry", Pose(x=8.0, y=-2.79), mounted_on="dryer_1"),
        device_from_catalog(D["washer"], "washer_device_1", "laundry", Pose(x=9.0, y=-2.8), mounted_on="washer_1"),
    ]
    dropped = set(drop)
    for o in objects:  # objects on dropped furniture go with it
        if o.location.furniture in dropped:
            dropped.add(o.id)
    for d in devices:  # references to a dropped element go with it
        if d.mounted_on in dropped or set(d.monitors) & dropped:
            dropped.add(d.id)
    return Home(
        home_id=home_id,
        source=Source(kind="synthetic", plan=home_id),
        rooms=rooms,
        openings=openings,
        furniture=[f for f in furniture if f.id not in dropped],
        objects=[o for o in objects if o.id not in dropped],
        devices=[d for d in devices if d.id not in dropped],
    )


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


def _failing(home: Home, tasks, robot, catalog) -> dict[str, list[str]]:
    out = {}
    for tid, task in tasks.items():
        s = screen(home, task, robot, catalog)
        assert s.applicable == (not s.reasons)
        if not s.applicable:
            out[tid] = s.reasons
    return out


def test_crafted_home_applies_to_every_task_for_the_g1_d(catalog, tasks):
    assert _failing(crafted_home(), tasks, catalog.robots[G1D], catalog) == {}


def _declaring(tasks, predicate) -> set[str]:
    return {tid for tid, t in tasks.items() if predicate(t)}


@pytest.mark.parametrize("drop, reason_prefix, device_type", [
    ("leak_1", "missing_device:leak_sensor", "leak_sensor"),
    ("smoke_kitchen", "missing_device:smoke_sensor", "smoke_sensor"),
    ("lock_1", "missing_device:lock", "lock"),
    ("doorbell_1", "missing_device:doorbell", "doorbell"),
    ("watch_1", "missing_device:fall_watch", "fall_watch"),
    ("water_main_1", "missing_device:water_main", "water_main"),
    ("light_living", "missing_device:light", "light"),
])
def test_a_missing_device_fails_exactly_the_tasks_that_declare_it(catalog, tasks, drop, reason_prefix, device_type):
    failing = _failing(crafted_home(drop=(drop,)), tasks, catalog.robots[G1D], catalog)
    expected = _declaring(tasks, lambda t: any(d.type == device_type for d in t.requires.devices))
    assert expected and set(failing) == expected
    for reasons in failing.values():
        assert len(reasons) == 1 and reasons[0].startswith(reason_prefix)


def test_removing_the_leak_sensor_fails_the_three_leak_tasks(catalog, tasks):
    failing = _failing(crafted_home(drop=("leak_1",)), tasks, catalog.robots[G1D], catalog)
    assert set(failing) == {"water_leak_response", "watering_can_spill", "leak_sensor_fault"}
    assert failing["water_leak_response"] == ["missing_device:leak_sensor(beside dishwasher)"]


def test_a_leak_sensor_far_from_the_dishwasher_does_not_count(catalog, tasks):
    home = crafted_home()
    leak = home.device("leak_1")
    leak.monitors = []
    leak.pose = Pose(x=0.5, y=2.5)  # across the kitchen
    s = screen(home, tasks["water_leak_response"], catalog.robots[G1D], catalog)
    assert s.reasons == ["missing_device:leak_sensor(beside dishwasher)"]


def _smoke_sensor_moved(room: str, x: float, y: float, *, kitchen_open_to_living: bool = False) -> Home:
    """The crafted home with its only smoke sensor moved to (x, y) in ``room``, listing the
    kitchen and its range as monitored (as equipping does for a kitchen's sensor next door),
    and the kitchen light the smoke scenarios switch on. ``kitchen_open_to_living`` moves
    the living room against the kitchen: a 4 m open passage, no wall or door between."""
    home = crafted_home()
    if kitchen_open_to_living:
        home.rooms = [r.model_copy(update={"polygon": _rect(4.0, 2.1, 9, 6.1)}) if r.id == "living" else r
                      for r in home.rooms]
    sensor = home.device("smoke_kitchen")
    sensor.room, sensor.pose, sensor.monitors = room, Pose(x=x, y=y, z=2.6), ["kitchen", "range_1"]
    return Home.model_validate(home.model_dump())


@pytest.mark.parametrize("room, x, y, open_plan", [
    ("corridor", 1.5, 1.0, False),  # behind the kitchen's door, which the scenarios leave shut
    ("living", 6.0, 3.0, True),  # across an open passage from the kitchen
])
def test_smoke_tasks_apply_only_where_the_kitchens_smoke_reaches_a_sensor(catalog, tasks, room, x, y, open_plan):
    from homeloop.sim.episode import Episode, EpisodeError

    home = _smoke_sensor_moved(room, x, y, kitchen_open_to_living=open_plan)
    smoke_tasks = _declaring(tasks, lambda t: any(d.type == "smoke_sensor" for d in t.requires.devices))
    failing = _failing(home, {t: tasks[t] for t in smoke_tasks}, catalog.robots[G1D], catalog)
    try:  # the simulator decides whether the kitchen's smoke sounds the alarm
        Episode(home, task="handle_smoke_alarm", robot=G1D, seed=0)
        sounds = True
    except EpisodeError as exc:
        assert "the wake event 'smoke_alarm' did not happen" in str(exc)
        sounds = False
    assert sounds == open_plan
    assert set(failing) == (set() if sounds else smoke_tasks)
    assert all(r == ["missing_device:smoke_sensor(in/near kitchen)"] for r in failing.values())


@pytest.mark.parametrize("drop, reason, expected", [
    ("dishwasher_1", "missing_furniture:dishwasher(in kitchen)",
     {"water_leak_response", "watering_can_spill", "leak_sensor_fault"}),
    ("coffee_table_1", "missing_furniture:coffee_table(in living)", {"put_away"}),
    ("basket_1", "missing_furniture:laundry_basket", {"empty_the_dryer"}),
])
def test_missing_furniture(catalog, tasks, drop, reason, expected):
    failing = _failing(crafted_home(drop=(drop,)), tasks, catalog.robots[G1D], catalog)
    assert set(failing) == expected
    for reasons in failing.values():
        # devices on the removed furniture and objects on it go with it
        assert reason in reasons
        assert all(r == reason or r.startswith(("missing_device", "missing_object")) for r in reasons)


@pytest.mark.parametrize("drop, reason, expected", [
    ("glasses_1", "missing_object:glasses", {"find_my_glasses"}),
    ("pills_red", "missing_object:pill_box_red/pill_box_blue/pill_box_white", {"fetch_medicine"}),
    ("mug_1", "missing_object:mug(not on coffee_table)", {"put_away"}),
    ("can_1", "missing_object:watering_can", {"water_the_plants", "watering_can_spill"}),
    ("pan_1", "missing_object:pan", {"handle_smoke_alarm", "kitchen_fire_emergency", "smoke_while_cooking",
                                     "smoke_sensor_fault", "kitchen_fire_with_delivery",
                                     "smoke_fault_with_delivery"}),
])
def test_missing_object(catalog, tasks, drop, reason, expected):
    failing = _failing(crafted_home(drop=(drop,)), tasks, catalog.robots[G1D], catalog)
    assert set(failing) == expected
    assert all(reasons == [reason] for reasons in failing.values())


def test_objects_on_a_desk_count_like_on_a_nightstand(catalog, tasks):
    data = crafted_home().model_dump(by_alias=True)
    desk = furniture_from_catalog(catalog.furniture["desk"], "desk_1", "bedroom", Pose(x=11.5, y=2.5, yaw=NORTH))
    data["furniture"] = [f for f in data["furniture"] if f["id"] != "nightstand_1"] + [desk.model_dump(by_alias=True)]
    for o in data["objects"]:
        if o["location"]["furniture"] == "nightstand_1":
            o["location"]["furniture"] = "desk_1"
            o["pose"]["z"] = 0.75
    home = Home.model_validate(data)
    assert _failing(home, tasks, catalog.robots[G1D], catalog) == {}


def test_a_mug_already_on_the_coffee_table_rules_put_away_out_where_doing_nothing_passes(catalog, tasks):
    """put_away asks for the mug on the coffee table. Where the home leaves it there, an agent doing
    nothing passes, so the screening rules the pair out; with the mug elsewhere, doing nothing fails."""
    from homeloop.bench import runner

    def do_nothing(home: Home) -> bool:
        return runner.play(home, "put_away", G1D, 0, runner.Flags((), images=False), "do-nothing", {}).passed

    plain = crafted_home()
    table = plain.furniture_item("coffee_table_1")
    data = plain.model_dump(by_alias=True)
    mug = next(o for o in data["objects"] if o["id"] == "mug_1")
    mug["location"].update(room="living", furniture=table.id, name="top")
    mug["pose"].update(x=table.pose.x, y=table.pose.y, z=table.surface("top").height)
    on_table = Home.model_validate(data)
    assert _failing(on_table, tasks, catalog.robots[G1D], catalog) == {
        "put_away": ["missing_object:mug(not on coffee_table)"]}
    assert do_nothing(on_table)
    assert "put_away" not in _failing(plain, tasks, catalog.robots[G1D], catalog)
    assert not do_nothing(plain)


def test_missing_plant_fails_only_watering(catalog, tasks):
    failing = _failing(crafted_home(drop=("plant_1",)), tasks, catalog.robots[G1D], catalog)
    assert set(failing) == {"water_the_plants"}
    assert "missing_object:potted_plant" in failing["water_the_plants"]


def test_missing_room(catalog, tasks):
    home = crafted_home()
    home.rooms = [r.model_copy(update={"type": "STOREROOM"}) if r.id == "laundry" else r for r in home.rooms]
    home = Home.model_validate(home.model_dump())
    failing = _failing(home, tasks, catalog.robots[G1D], catalog)
    assert set(failing) == {"empty_the_dryer"}
    assert "missing_room:laundry" in failing["empty_the_dryer"]
    assert "missing_furniture:dryer(in laundry)" in failing["empty_the_dryer"]


def test_three_residents_need_three_sleeping_places(catalog, tasks):
    failing = _failing(crafted_home(drop=("bed_2",)), tasks, catalog.robots[G1D], catalog)
    assert set(failing) == {"housemate_down_emergency", "housemate_fall_false_alarm"}
    assert failing["housemate_down_emergency"] == ["residents:3 need 3 sleeping places, home has 2"]


def test_short_horizontal_reach_fails_empty_the_dryer(catalog, tasks):
    g1d = catalog.robots[G1D]
    short = g1d.model_copy(update={"reach": g1d.reach.model_copy(update={"horizontal_reach": 0.45})})
    failing = _failing(crafted_home(), tasks, short, catalog)
    assert set(failing) == {"empty_the_dryer"}
    assert failing["empty_the_dryer"] == ["reach:dryer drum depth 0.54 m > horizontal reach 0.45 m"]


def test_low_max_grasp_height_fails_watering(catalog, tasks):
    g1d = catalog.robots[G1D]
    low = g1d.model_copy(update={"reach": g1d.reach.model_copy(update={"max_grasp_height": 1.0})})
    failing = _failing(crafted_home(), tasks, low, catalog)
    assert set(failing) == {"water_the_plants", "close_up_after_leaving"}
    # The lowest hand the robot's pour skill holds the can at over the pot: the stand's top, the
    # pot's rim (its highest grasp), the clearance, and the can's lowest grasp.
    stand = catalog.furniture["plant_stand"].surfaces[0].height
    rim = max(g.offset.z for g in catalog.objects["potted_plant"].grasp_points)
    grasp = min(g.offset.z for g in catalog.objects["watering_can"].grasp_points)
    lowest = stand + rim + POUR_CLEARANCE + grasp
    assert failing["water_the_plants"] == [
        f"reach:pouring over the pot on the plant stand height {lowest:.2f} m above max grasp height 1.00 m"]
    # The living room's window handle: halfway up the window, 0.5 m sill and 1.9 m high.
    assert failing["close_up_after_leaving"] == ["reach:open window height 1.45 m above max grasp height 1.00 m"]


def test_a_body_that_cannot_grasp_the_can_where_it_lies_is_screened_out_of_watering(catalog, tasks):
    """The crafted home's watering can stands on the floor: a body whose lowest grasp is above both
    of its handles cannot pick it up (the simulator's pick says so too), whatever it carries."""
    g1d = catalog.robots[G1D]
    handles = [g.offset.z for g in catalog.objects["watering_can"].grasp_points]
    high = g1d.model_copy(update={"reach": g1d.reach.model_copy(update={"min_grasp_height": max(handles) + 0.02})})
    s = screen(crafted_home(), tasks["water_the_plants"], high, catalog)
    assert s.reasons == [f"reach:watering can height {max(handles):.2f} m below min grasp height "
                         f"{max(handles) + 0.02:.2f} m"]


def test_payload_limits_carrying(catalog, tasks):
    stretch = catalog.robots["hello_robot_stretch_4"]  # one hand
    weak = stretch.model_copy(update={"payload": stretch.payload.model_copy(update={"kg": 1.0})})
    assert not any(r.startswith("carry:") for r in screen(crafted_home(), tasks["water_the_plants"], stretch, catalog).reasons)
    s = screen(crafted_home(), tasks["water_the_plants"], weak, catalog)
    can = catalog.objects["watering_can"].mass
    assert f"carry:watering_can {can:.1f} kg > payload 1.0 kg (1 hand)" in s.reasons


def test_narrow_door_blocks_passage_for_a_wide_body_only(catalog, tasks):
    home = crafted_home(laundry_door=0.52)
    tiago = catalog.robots["pal_tiago"]  # 0.54 m
    s = screen(home, tasks["empty_the_dryer"], tiago, catalog)
    assert "passage:laundry not reachable for body width 0.54 m (door_laundry 0.52 m)" in s.reasons
    assert any(r.startswith("approach:dryer drum not reachable") for r in s.reasons)
    stretch = catalog.robots["hello_robot_stretch_4"]  # 0.33 m
    assert not any(r.startswith(("passage", "approach")) for r in screen(home, tasks["empty_the_dryer"], stretch,
                                                                         catalog).reasons)


def test_furniture_blocking_the_dryer_front_fails_approach(catalog, tasks):
    home = crafted_home()
    cat = catalog
    home.furniture = [*home.furniture, furniture_from_catalog(cat.furniture["storage_shelf"], "shelf_block", "laundry",
                                                              Pose(x=8.0, y=-2.0, yaw=SOUTH))]
    home = Home.model_validate(home.model_dump())
    s = screen(home, tasks["empty_the_dryer"], cat.robots[G1D], cat)
    assert s.reasons == ["approach:dryer drum not reachable for body width 0.50 m"]


def test_an_open_window_out_of_reach_fails_closing_up_for_the_bodies_the_reference_agent_fails(catalog, tasks):
    """The screening finds a spot to stand by the window that the scenario opens as the robot
    does when it approaches: for every body, in a home where it can and one where a bed
    against the window keeps it 1.1 m off, the screening agrees with playing the task."""
    from homeloop.pipeline.verify_pairs import verify_pair

    bed = catalog.furniture["double_bed"]
    blocked = crafted_home()
    blocked.furniture = [*blocked.furniture, furniture_from_catalog(
        bed, "bed_window", "living", Pose(x=6.5, y=6.1 - bed.dimensions.depth / 2, yaw=SOUTH))]
    blocked = Home.model_validate(blocked.model_dump())
    task = tasks["close_up_after_leaving"]
    verdicts = set()
    for home in (crafted_home(), blocked):
        for body in catalog.robots.values():
            s = screen(home, task, body, catalog)
            played = verify_pair(home, task.id, body.id, 0)
            assert s.applicable == played["passed"], (home.home_id, body.id, s.reasons, played["reason"])
            verdicts.add((home is blocked, s.applicable))
    assert verdicts == {(False, True), (False, False), (True, True), (True, False)}
    s = screen(blocked, task, catalog.robots[G1D], catalog)
    assert s.reasons == ["approach:open window out of reach: no free floor joined to the entrance within 0.88 m "
                         "of it for body width 0.50 m"]


def test_a_watering_can_walled_into_a_corner_of_a_reached_kitchen_is_out_of_reach(catalog, tasks):
    """The crafted home's watering can stands on the kitchen floor (here lit, so a robot finds it).
    Shelves walling off the corner it stands in leave the kitchen reached but no floor within reach
    of the can: every body the reference agent waters the plant with in the plain home is screened
    out of the walled one, where playing the task fails."""
    from homeloop.pipeline.verify_pairs import verify_pair

    shelf = catalog.furniture["storage_shelf"]  # 1.0 m wide, 0.4 m deep
    # x 1.5-1.9 from the south wall to y 5.1, then y 5.1-5.5 to the east wall: the can, at (3.5, 3.0),
    # lies more than the longest reach (the Spot's, 1.53 m) from the floor outside
    walls = [*((f"shelf_a{k}", 1.7, y, 0.0) for k, y in enumerate((2.6, 3.6, 4.6))),
             *((f"shelf_b{k}", x, 5.3, math.pi / 2) for k, x in enumerate((2.0, 3.0, 3.5)))]
    homes = []
    for shelves in ([], walls):
        home = crafted_home()
        home.furniture = [*home.furniture, *(furniture_from_catalog(shelf, fid, "kitchen", Pose(x=x, y=y, yaw=yaw))
                                             for fid, x, y, yaw in shelves)]
        homes.append(Home.model_validate(home.model_dump()))
    plain, walled = homes
    task = tasks["water_the_plants"]
    watering = [b for b in catalog.robots.values() if verify_pair(plain, task.id, b.id, 0)["passed"]]
    assert G1D in {b.id for b in watering}
    for body in watering:
        assert screen(plain, task, body, catalog).applicable
        played = verify_pair(walled, task.id, body.id, 0)
        assert not screen(walled, task, body, catalog).applicable and not played["passed"]
    assert screen(walled, task, catalog.robots[G1D], catalog).reasons == [
        "approach:watering can out of reach: no free floor joined to the entrance within 0.88 m of it for body "
        "width 0.50 m"]


def side_points(footprint: list[tuple[float, float]], offset: float) -> list[tuple[float, float]]:
    """A point ``offset`` out from the middle of each side of a convex footprint."""
    cx = sum(x for x, _ in footprint) / len(footprint)
    cy = sum(y for _, y in footprint) / len(footprint)
    out = []
    for (ax, ay), (bx, by) in zip(footprint, footprint[1:] + footprint[:1]):
        mx, my = (ax + bx) / 2, (ay + by) / 2
        nx, ny = by - ay, ax - bx
        norm = math.hypot(nx, ny)
        nx, ny = nx / norm, ny / norm
        if nx * (mx - cx) + ny * (my - cy) < 0:
            nx, ny = -nx, -ny
        out.append((mx + nx * offset, my + ny * offset))
    return out


@pytest.mark.parametrize("laundry_door", [0.9, 0.52])
def test_furniture_is_approachable_where_a_path_from_the_entrance_reaches_one_of_its_sides(catalog, laundry_door):
    home = crafted_home(laundry_door=laundry_door)
    home.furniture = [*home.furniture, furniture_from_catalog(catalog.furniture["storage_shelf"], "shelf_block",
                                                              "laundry", Pose(x=8.0, y=-2.0, yaw=SOUTH))]
    home = Home.model_validate(home.model_dump())
    facts = HomeFacts(home, catalog)
    verdicts = set()
    for width in sorted({r.clearance_width for r in catalog.robots.values()}, reverse=True):
        start = facts.start_point(width)
        for f in home.furniture:
            sides = side_points(list(map(tuple, f.footprint[0])), width / 2 + navigation.APPROACH_MARGIN)
            expected = any(navigation.path_exists(home, (start.x, start.y), p, width) for p in sides)
            assert facts.approachable(f, width) == expected, (f.id, width)
            verdicts.add(expected)
    assert verdicts == {True, False}


def test_screen_homes_table_and_summary(catalog, tasks, tmp_path):
    homes = [crafted_home("a"), crafted_home("b", drop=("leak_1",))]
    table = screen_homes(homes, tasks, None, catalog)
    assert list(table.columns) == ["home", "task", "family", "extension", "robot", "applicable", "reasons"]
    assert len(table) == 2 * len(TASK_IDS) * len(catalog.robots)
    g1d = table[(table.robot == G1D)]
    assert g1d[g1d.home == "a"].applicable.all()
    row = g1d[(g1d.home == "b") & (g1d.task == "leak_sensor_fault")].iloc[0]
    assert reasons_of(row.reasons) == ["missing_device:leak_sensor(beside dishwasher)"]
    summary = summary_per_home(table)
    s = summary.set_index(["home", "robot"])
    assert s.loc[("a", G1D), "applicable_count"] == len(CORE_TASK_IDS)
    assert s.loc[("b", G1D), "applicable_count"] == len(CORE_TASK_IDS) - 3
    assert s.loc[("a", G1D), "extension_count"] == 4
    # the same answers as one-by-one screening, for every body
    for r in table.itertuples():
        one = screen(homes[0] if r.home == "a" else homes[1], tasks[r.task], catalog.robots[r.robot], catalog)
        assert one.applicable == r.applicable and "; ".join(one.reasons) == r.reasons
    a, b = write_applicability(table, tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(a), table)
    assert len(pd.read_parquet(b)) == 2 * len(catalog.robots)


def test_home_facts_roles(catalog):
    facts = HomeFacts(crafted_home(), catalog)
    assert facts.role_rooms["entrance"] == {"corridor", "porch"}
    assert facts.role_rooms["laundry"] == {"laundry"}
    assert facts.sleeping_places == 3


def test_bathroom_with_washer_is_a_laundry(catalog):
    home = crafted_home()
    home.rooms = [r.model_copy(update={"type": "BATHROOM"}) if r.id == "laundry" else r for r in home.rooms]
    home = Home.model_validate(home.model_dump())
    facts = HomeFacts(home, catalog)
    assert facts.role_rooms["laundry"] == {"laundry"}
    home2 = crafted_home(drop=("washer_1",))
    home2.rooms = [r.model_copy(update={"type": "BATHROOM"}) if r.id == "laundry" else r for r in home2.rooms]
    assert HomeFacts(Home.model_validate(home2.model_dump()), catalog).role_rooms["laundry"] == set()


def test_equipped_house_applies_to_every_task_for_the_g1_d(catalog, tasks):
    """The house (docs/pipeline.md), furnished and equipped, applies to all 24 tasks for the G1-D."""
    from homeloop.pipeline.devices import equip_house
    from homeloop.pipeline.furnish import furnish_house

    home = equip_house(furnish_house(catalog, seed=0), catalog, seed=0).home
    failing = _failing(home, tasks, catalog.robots[G1D], catalog)
    assert failing == {}


def test_what_one_home_learns_does_not_carry_to_the_next(catalog, tasks):
    """Homes screened in one call keep their own facts (reachability, stand spots, roles): equal
    homes get equal rows whatever came before them, a different home its own."""
    blocked = crafted_home("blocked", laundry_door=0.52)
    homes = [crafted_home("a"), blocked, crafted_home("b")]
    table = screen_homes(homes, tasks, None, catalog)
    assert len(table) == len(homes) * len(tasks) * len(catalog.robots)
    rows = {h: t.drop(columns="home").reset_index(drop=True) for h, t in table.groupby("home", sort=False)}
    pd.testing.assert_frame_equal(rows["a"], rows["b"])
    alone = screen_homes([blocked], tasks, None, catalog).drop(columns="home")
    pd.testing.assert_frame_equal(rows["blocked"], alone)
    assert not rows["blocked"].equals(rows["a"])


# --- queries ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory, catalog, tasks):
    out = tmp_path_factory.mktemp("build")
    homes = [crafted_home("home_a"), crafted_home("home_b", drop=("plant_1",)),
             crafted_home("home_c", drop=("smoke_kitchen",))]
    write_applicability(screen_homes(homes, tasks, None, catalog), out)
    return out


def test_query_all_tasks_for_a_robot(build_dir):
    from homeloop.pipeline.queries import query_applicability

    hits = query_applicability(build_dir, tasks=["water_the_plants", "handle_smoke_alarm"], robot=G1D)
    assert list(hits.home) == ["home_a"]
    hits_any = query_applicability(build_dir, tasks=["water_the_plants", "handle_smoke_alarm"], robot=G1D,
                                   all_tasks=False)
    assert list(hits_any.home) == ["home_a", "home_b", "home_c"]
    # The Stretch pours holding the can by its rear handle, as low as its 1.10 m reach allows.
    stretch = query_applicability(build_dir, tasks=["water_the_plants"], robot="hello_robot_stretch_4")
    assert list(stretch.home) == ["home_a", "home_c"]  # home_b has no plant
    assert query_applicability(build_dir, tasks=["close_up_after_leaving"], robot="hello_robot_stretch_4").empty


def test_query_family_and_min_applicable(build_dir):
    from homeloop.pipeline.queries import query_applicability

    hits = query_applicability(build_dir, family="hazards", robot=G1D)
    assert list(hits.home) == ["home_a", "home_b"]
    full = query_applicability(build_dir, robot=G1D, min_applicable=20)
    assert list(full.home) == ["home_a"]
    assert set(query_applicability(build_dir, min_applicable=0).robot) == set(load_catalog().robots)


@pytest.mark.parametrize("kwargs, words", [
    ({"tasks": ["make_tea"]}, ["unknown task 'make_tea'", "handle_smoke_alarm", "housemate_fall_false_alarm"]),
    ({"robot": "r2d2"}, ["unknown robot 'r2d2'", G1D, "spot_arm"]),
    ({"family": "games"}, ["unknown family 'games'", "hazards", "chores"]),
])
def test_query_errors_name_the_valid_choices(build_dir, kwargs, words):
    from homeloop.pipeline.queries import QueryError, query_applicability

    with pytest.raises(QueryError) as err:
        query_applicability(build_dir, **kwargs)
    message = str(err.value)
    assert "\n" not in message
    for w in words:
        assert w in message


def test_run_sql(build_dir):
    from homeloop.core.errors import HomeLoopError
    from homeloop.pipeline.queries import QueryError, run_sql

    df = run_sql(build_dir, "SELECT home, count(*) AS n FROM applicability WHERE applicable AND robot = "
                            f"'{G1D}' GROUP BY home ORDER BY home")
    assert list(df.home) == ["home_a", "home_b", "home_c"]
    assert list(df.n) == [24, 23, 18]
    joined = run_sql(build_dir, "SELECT s.home, s.applicable_count FROM applicability_summary s "
                                f"WHERE s.robot = '{G1D}' ORDER BY 1")
    assert list(joined.applicable_count) == [20, 19, 16]
    for bad in ("SELECT nope FROM applicability", "SELECT * FROM plans"):
        with pytest.raises(QueryError) as err:
            run_sql(build_dir, bad)
        assert isinstance(err.value, HomeLoopError) and "\n" not in str(err.value)


def test_filter_query_over_a_full_size_table(tmp_path, catalog):
    """A filter over a 2,100 x 24 x 5 table finds every home where both tasks apply
    (benchmarks/applicability.py times it)."""
    from homeloop.pipeline.queries import query_applicability

    table = screen_homes([crafted_home("x")], load_tasks(), None, catalog)
    big = pd.concat([table.assign(home=f"h{i:04d}") for i in range(2100)], ignore_index=True)
    write_applicability(big, tmp_path)
    hits = query_applicability(tmp_path, tasks=["water_the_plants", "handle_smoke_alarm"], robot=G1D)
    assert len(hits) == 2100
