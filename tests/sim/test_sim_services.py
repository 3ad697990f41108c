"""The services an agent calls (hub, cameras, perception, wearables, messaging, clock): skills declared
once, the costs of docs/skills.md, what each returns, and the perception gates.

Episodes run in the house with the task's own scenario; ids are found by type, room and role.
"""

from __future__ import annotations

import importlib
import inspect
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from homeloop.sim import services
from homeloop.sim.episode import Episode
from homeloop.sim.services import perception
from homeloop.sim.services.cameras import capture_view
from homeloop.sim.skills import SkillError
from homeloop.sim.visibility import Viewpoint
from homeloop.sim.world import ObjectState, Placement

#: docs/skills.md, written out once: tool -> (units, seconds; None = as asked / as the body needs).
SKILL_COSTS = {
    "hub_list_devices": (1, 0.1), "hub_get_state": (1, 0.1), "hub_set_state": (2, 0.3),
    "cameras_list_cameras": (1, 0.1), "cameras_capture": (1, 0.5),
    "perception_detect_objects": (1, 0.3), "perception_identify_people": (1, 0.4),
    "wearables_list_wearables": (1, 0.1),
    "messaging_list_contacts": (1, 0.1), "messaging_send": (2, 0.5),
    "clock_wait": (0, None),
    "robot_status": (1, 0.05), "robot_capture": (1, 0.2), "robot_turn": (1, None), "robot_look": (1, None),
    "robot_move": (2, None), "robot_pick": (2, None), "robot_place": (2, None), "robot_pour": (2, None),
    "robot_handoff": (2, None), "robot_open": (2, None), "robot_close": (2, None), "robot_press": (2, None),
    "robot_approach": (3, None), "robot_navigate_to": (5, None), "robot_scan": (6, None),
}
EMERGENCY_UNITS, OVERRIDE_MASKED_UNITS, OVERRIDE_BLOCKED_UNITS = 42, 5, 10

#: What perception never labels (docs/skills.md): hazards show only in the pixels.
HAZARD_LABELS = {"fire", "flame", "flames", "smoke", "water", "puddle", "leak", "spill"}


@pytest.fixture
def episode(house_home):
    return Episode(house_home, "handle_smoke_alarm", seed=0, images=False)


def device_in(ep, device_type: str, room: str | None = None):
    return next(d for d in ep.home.devices
                if d.type == device_type and d.agent_visible and (room is None or d.room == room))


def room_of_type(ep, *types: str) -> str:
    return next(r.id for r in ep.home.rooms if r.type in types)


def switch_lights(ep, room: str, on: bool) -> None:
    for light in (d for d in ep.home.devices if d.type == "light" and d.room == room):
        assert ep.call("hub_set_state", device_id=light.id, field="on", value=on).error is None


# --- skills declared once ----------------------------------------------------------------------------


def test_every_tool_is_a_declared_function_of_its_service():
    for s in services.available():
        # the robot service's module is robot_skills: homeloop.sim.robot is the body it drives
        module = importlib.import_module(f"homeloop.sim.services.{s.service}{'_skills' if s.service == 'robot' else ''}")
        assert s.function.__module__ == module.__name__ and s.function in vars(module).values(), s.tool_name
        assert s.tool_name == f"{s.service}_{s.name}", s.tool_name
        params = list(inspect.signature(s.function).parameters.values())[1:]
        schema = s.tool_schema()["function"]["parameters"]
        assert list(schema["properties"]) == [p.name for p in params], s.tool_name
        assert all(schema["properties"][p.name].get("description") for p in params), s.tool_name
        required = [p.name for p in params if p.default is inspect.Parameter.empty]
        assert sorted(schema.get("required", [])) == sorted(required), s.tool_name


def test_the_declared_costs_are_those_of_the_skill_table():
    declared = {s.tool_name: (s.units, s.seconds) for s in services.available()}
    assert declared == SKILL_COSTS


def test_messaging_emergency_services_costs_more(episode):
    resident = episode.world.residents()[0]
    told = episode.call("messaging_send", recipient=resident.id, text="The stove was on; I switched it off.")
    called = episode.call("messaging_send", recipient="emergency_services", text="A pan is burning.")
    assert (told.error, told.units) == (None, SKILL_COSTS["messaging_send"][0])
    assert (called.error, called.units) == (None, EMERGENCY_UNITS)
    assert [(m.sender, m.recipient) for m in episode.world.messages[-2:]] == [
        ("agent", resident.id), ("agent", "emergency_services")]
    unknown = episode.call("messaging_send", recipient="nobody", text="hello")
    assert "unknown recipient" in unknown.error and resident.id in unknown.error


def test_overriding_a_privacy_mode_costs_its_price(episode):
    camera = episode.call("cameras_list_cameras").data["cameras"][0]["id"]
    base = SKILL_COSTS["cameras_capture"][0]
    prices = (("none", 0), ("people_masked", OVERRIDE_MASKED_UNITS), ("image_blocked", OVERRIDE_BLOCKED_UNITS))
    for mode, extra in prices:
        episode.world.devices[camera].values["privacy_mode"] = mode
        assert episode.call("cameras_capture", camera_id=camera).units == base
        overridden = episode.call("cameras_capture", camera_id=camera, override_privacy=True)
        assert overridden.error is None and overridden.units == base + extra, mode


def test_a_withheld_service_offers_no_skills(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False, withheld=("cameras", "wearables"))
    names = [t["function"]["name"] for t in ep.tools()]
    assert names and not any(n.startswith(("cameras_", "wearables_")) for n in names)
    result = ep.call("cameras_capture", camera_id="dome_camera_1")
    assert result.data is None and "unknown tool 'cameras_capture'" in result.error


# --- .call never raises for what an agent sends ---------------------------------------------------------


def test_bad_calls_come_back_as_errors(episode):
    cases = [("no_such_tool", {}), ("hub_get_state", {}), ("hub_get_state", {"device_id": 3}),
             ("hub_get_state", {"device_id": "x", "extra": 1}), ("hub_set_state", {"device_id": "x", "field": "on"}),
             ("clock_wait", {"seconds": -5}), ("clock_wait", {"seconds": "soon"}), ("hub_list_devices", "all"),
             ("perception_detect_objects", {"capture_id": "cap_999"}), ("cameras_capture", {"camera_id": "porch"})]
    for tool, args in cases:
        result = episode.call(tool, args)
        assert result.error and result.data is None, (tool, args)


JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True)
                       | st.text(max_size=12), lambda inner: st.lists(inner, max_size=3), max_leaves=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(sorted(SKILL_COSTS) + ["hub_nothing", ""]),
       args=st.dictionaries(st.sampled_from(["device_id", "field", "value", "room", "type", "camera_id",
                                             "override_privacy", "capture_id", "recipient", "text", "seconds",
                                             "target", "x"]), JSONISH, max_size=4) | JSONISH)
def test_call_never_raises(episode, tool, args):
    if isinstance(args, dict) and tool == "clock_wait":
        args.pop("seconds", None)  # a valid wait would end the episode early; bad ones are covered above
    result = episode.call(tool, args)
    assert result.error is None or isinstance(result.error, str)


# --- hub, wearables, clock ------------------------------------------------------------------------------


def test_the_hub_lists_what_it_reaches_and_filters(episode):
    listed = episode.call("hub_list_devices").data["devices"]
    expected = [d.id for d in episode.home.devices
                if d.agent_visible and d.category in ("sensor", "actuator", "appliance")]
    assert [d["id"] for d in listed] == expected
    kitchen = room_of_type(episode, "KITCHEN", "KITCHEN_DINING")
    in_kitchen = episode.call("hub_list_devices", room=kitchen).data["devices"]
    assert in_kitchen and {d["room"] for d in in_kitchen} == {kitchen}
    stoves = episode.call("hub_list_devices", type="stove").data["devices"]
    stove = episode.home.device(stoves[0]["id"])
    settable = {n: f["settable"] for n, f in stoves[0]["fields"].items()}
    assert settable == {n: f.settable for n, f in stove.fields.items()}
    bad = episode.call("hub_list_devices", room="attic")
    assert "unknown room 'attic'" in bad.error and kitchen in bad.error


def test_get_state_reports_faults_and_set_state_changes_the_world(episode):
    sensor = device_in(episode, "smoke_sensor", room_of_type(episode, "KITCHEN", "KITCHEN_DINING"))
    assert episode.call("hub_get_state", device_id=sensor.id).data["readings"]["smoke_detected"] is True
    stove = device_in(episode, "stove")
    lit = [n for n, v in episode.world.devices[stove.id].values.items() if v is True]
    assert lit, "the scenario heats a pan on a lit burner"
    watch = next(d.id for d in episode.home.devices if d.category == "wearable")
    wearable = episode.call("hub_get_state", device_id=watch)
    assert "wearables service" in wearable.error
    for burner in lit:
        assert episode.call("hub_set_state", device_id=stove.id, field=burner, value=False).error is None
    episode.call("clock_wait", seconds=episode.task.horizon_s)
    cooking = episode.world.module("cooking")
    assert not any(p.burning for p in cooking.pans())


def test_doing_nothing_lets_the_pan_ignite(episode):
    result = episode.call("clock_wait", seconds=episode.task.horizon_s)
    assert episode.done and result.data["t"] == pytest.approx(episode.task.horizon_s)
    assert any(p.burning for p in episode.world.module("cooking").pans())


def test_wearables_name_their_wearer(episode):
    listed = episode.call("wearables_list_wearables").data["wearables"]
    resident = episode.world.residents()[0]
    assert {w["wearer"] for w in listed} == {resident.name}
    assert {w["id"] for w in listed} == set(resident.wears)


def test_wait_returns_the_time_and_the_events(episode):
    assert "more than 0" in episode.call("clock_wait", seconds=0).error
    door = device_in(episode, "lock")
    episode.call("hub_set_state", device_id=door.id, field="lock_state", value="unlocked")
    waited = episode.call("clock_wait", seconds=5)
    assert waited.data["waited_s"] == pytest.approx(5) and waited.units == 0
    assert waited.data["t"] == pytest.approx(episode.now())


# --- cameras and captures -------------------------------------------------------------------------------


def test_list_cameras_leaves_out_evaluation_and_offline_cameras(episode):
    shown = [c["id"] for c in episode.call("cameras_list_cameras").data["cameras"]]
    withheld = [c.id for c in episode.home.cameras if not episode.world.devices[c.id].online]
    assert withheld, "the smoke scenario takes the kitchen camera offline"
    assert shown == [c.id for c in episode.home.cameras if c.agent_visible and c.id not in withheld]
    episode.world.devices[shown[0]].online = False
    assert shown[0] not in [c["id"] for c in episode.call("cameras_list_cameras").data["cameras"]]
    refused = episode.call("cameras_capture", camera_id=shown[0])
    assert f"no camera '{shown[0]}' is available" in refused.error and shown[1] in refused.error


def test_a_capture_is_registered_with_what_it_shows(episode):
    kitchen = room_of_type(episode, "KITCHEN", "KITCHEN_DINING")
    camera = next(c for c in episode.home.cameras if c.room == kitchen and c.agent_visible)
    episode.world.devices[camera.id].online = True  # the scenario withholds it; here it is back
    switch_lights(episode, kitchen, True)
    episode.call("clock_wait", seconds=episode.task.horizon_s / 2)  # past ignition
    shot = episode.call("cameras_capture", camera_id=camera.id).data
    assert (shot["width"], shot["height"]) == tuple(camera.resolution) and shot["image"] is None
    record = episode.state["captures"][shot["capture_id"]]
    assert record["camera"] == camera.id and not record["own"]
    assert {"x", "y", "z", "yaw", "pitch", "hfov", "resolution"} <= set(record["viewpoint"])
    pan = next(p for p in episode.world.module("cooking").pans())
    assert any(h["kind"] == "fire" and h["source"] == pan.id for h in record["hazards"])
    found = episode.call("perception_detect_objects", capture_id=shot["capture_id"]).data["detections"]
    labels = [d["label"] for d in found]
    assert "pan" in labels and not HAZARD_LABELS & set(labels)


def test_people_masking_hides_people_unless_overridden(episode):
    resident = episode.world.residents()[0]
    camera = next(c for c in episode.home.cameras if c.room == resident.room and c.agent_visible)
    episode.world.devices[camera.id].values["privacy_mode"] = "people_masked"
    masked = episode.call("cameras_capture", camera_id=camera.id).data["capture_id"]
    shown = episode.call("cameras_capture", camera_id=camera.id, override_privacy=True).data["capture_id"]
    assert episode.call("perception_identify_people", capture_id=masked).data["people"] == []
    people = episode.call("perception_identify_people", capture_id=shown).data["people"]
    assert [p["posture"] for p in people] == [resident.posture]


def test_unknown_cameras_and_captures_are_named(episode):
    cameras = [c["id"] for c in episode.call("cameras_list_cameras").data["cameras"]]
    wrong = episode.call("cameras_capture", camera_id="dome_camera_attic")
    assert "'dome_camera_attic'" in wrong.error and all(c in wrong.error for c in cameras)
    first = episode.call("cameras_capture", camera_id=cameras[0]).data["capture_id"]
    missing = episode.call("perception_detect_objects", capture_id="cap_404")
    assert "unknown capture 'cap_404'" in missing.error and first in missing.error


def test_a_capture_of_a_withheld_service_is_refused(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False, withheld=("cameras",))
    camera = next(c for c in ep.home.cameras if c.agent_visible)
    shot = capture_view(ep.context, Viewpoint.of(camera), camera.id)
    refused = ep.call("perception_detect_objects", capture_id=shot["capture_id"])
    assert shot["capture_id"] in refused.error and "cameras service" in refused.error


# --- perception gates -----------------------------------------------------------------------------------


def view_at(target: tuple[float, float, float], frm: tuple[float, float, float], width: int = 1280,
            hfov: float = 69.0) -> Viewpoint:
    dx, dy, dz = (t - f for t, f in zip(target, frm))
    return Viewpoint(frm[0], frm[1], frm[2], math.atan2(dy, dx), math.atan2(dz, math.hypot(dx, dy)), hfov, width,
                     width * 9 // 16)


def entity_in(ep, capture: dict, entity_id: str) -> dict:
    return next(e for e in ep.state["captures"][capture["capture_id"]]["entities"] if e["id"] == entity_id)


def detected(ep, capture: dict, entity_id: str) -> bool:
    found = perception.detect_objects(ep.context, capture["capture_id"])["detections"]
    registry = ep.state["detections"]
    return entity_id in {registry[d["id"]]["entity"] for d in found}


def mug_and_a_view(ep, distance: float = 1.0):
    """The mug, and a camera ``distance`` m from it toward its room's middle, just above it."""
    mug = next(o for o in ep.world.objects.values() if o.semantic_class == "mug")
    middle = ep.home.room_polygon(mug.placement.room).centroid
    heading = math.atan2(middle.y - mug.y, middle.x - mug.x)
    eye = (mug.x + distance * math.cos(heading), mug.y + distance * math.sin(heading), mug.z + 0.1)
    return mug, eye


def test_a_box_under_100_pixels_is_not_detected(episode):
    mug, eye = mug_and_a_view(episode)
    switch_lights(episode, mug.placement.room, True)
    areas = {}

    def area(width: int) -> int:
        shot = capture_view(episode.context, view_at((mug.x, mug.y, mug.z + 0.05), eye, width), "robot_head")
        areas[width] = (shot, entity_in(episode, shot, mug.id))
        return areas[width][1]["area_px"]

    small, large = 16, 1280  # the mug's box grows with the image's size: bisect for the 100 px gate
    assert area(small) < perception.MIN_BOX_AREA_PX <= area(large)
    while large - small > 1:
        middle = (small + large) // 2
        small, large = (middle, large) if area(middle) < perception.MIN_BOX_AREA_PX else (small, middle)
    for width in (small, large):
        entity = areas[width][1]
        assert entity["unoccluded"] >= perception.MIN_UNOCCLUDED and entity["lit"]
    assert 80 <= areas[small][1]["area_px"] < perception.MIN_BOX_AREA_PX
    assert not detected(episode, areas[small][0], mug.id)
    assert detected(episode, areas[large][0], mug.id)


def test_a_mug_behind_a_box_is_not_detected(episode):
    mug, eye = mug_and_a_view(episode)
    switch_lights(episode, mug.placement.room, True)
    view = view_at((mug.x, mug.y, mug.z + 0.05), eye)
    assert detected(episode, capture_view(episode.context, view, "robot_head"), mug.id)
    between = (mug.x + 0.3 * (eye[0] - mug.x), mug.y + 0.3 * (eye[1] - mug.y))
    episode.world.objects["parcel_test"] = ObjectState("parcel_test", "parcel", "parcel",
                                                       Placement("surface", mug.placement.room, mug.placement.furniture,
                                                                 mug.placement.name), *between, mug.z)
    hidden = capture_view(episode.context, view, "robot_head")
    assert entity_in(episode, hidden, mug.id)["unoccluded"] < perception.MIN_UNOCCLUDED
    assert not detected(episode, hidden, mug.id)
    assert detected(episode, hidden, "parcel_test")


def test_a_person_lying_in_a_dark_room_is_found_once_the_light_is_on(episode):
    resident = episode.world.residents()[0]
    bedroom = room_of_type(episode, "BEDROOM")
    camera = next(c for c in episode.home.cameras if c.room == bedroom)  # evaluation-only: its pose will do
    floor = episode.home.room_polygon(bedroom).buffer(-0.6)
    spot = min(((x, y) for x, y in floor.exterior.coords), key=lambda p: -math.dist(p, (camera.pose.x, camera.pose.y)))
    resident.room, resident.x, resident.y, resident.posture = bedroom, spot[0], spot[1], "lying"
    switch_lights(episode, bedroom, False)
    assert not episode.world.module("light").lit(bedroom)
    dark = capture_view(episode.context, Viewpoint.of(camera), "robot_head")
    seen = entity_in(episode, dark, resident.id)
    assert seen["area_px"] >= perception.MIN_BOX_AREA_PX and seen["unoccluded"] >= perception.MIN_UNOCCLUDED
    assert perception.identify_people(episode.context, dark["capture_id"])["people"] == []
    switch_lights(episode, bedroom, True)
    lit = capture_view(episode.context, Viewpoint.of(camera), "robot_head")
    people = perception.identify_people(episode.context, lit["capture_id"])["people"]
    assert [p["posture"] for p in people] == ["lying"]


# --- detections and the robot's own camera --------------------------------------------------------------


def test_resolving_a_detection(episode):
    mug, eye = mug_and_a_view(episode)
    switch_lights(episode, mug.placement.room, True)
    own = capture_view(episode.context, view_at((mug.x, mug.y, mug.z), eye), "robot_head")
    found = perception.detect_objects(episode.context, own["capture_id"])["detections"]
    det = next(d["id"] for d in found if episode.state["detections"][d["id"]]["entity"] == mug.id)
    assert perception.resolve_detection(episode.context, det) == ("object", mug.id)
    mug.x += 0.04
    assert perception.resolve_detection(episode.context, det) == ("object", mug.id)
    mug.x += 0.04
    with pytest.raises(SkillError, match="stale"):
        perception.resolve_detection(episode.context, det)
    with pytest.raises(SkillError, match="unknown detection 'det_0'"):
        perception.resolve_detection(episode.context, "det_0")


def test_a_house_camera_detection_is_not_the_robots_own(episode):
    camera = next(c for c in episode.home.cameras if c.agent_visible and c.room == room_of_type(episode, "LIVING_ROOM"))
    shot = episode.call("cameras_capture", camera_id=camera.id).data
    found = episode.call("perception_detect_objects", capture_id=shot["capture_id"]).data["detections"]
    assert found
    with pytest.raises(SkillError, match="not the robot's own camera"):
        perception.resolve_detection(episode.context, found[0]["id"])
    assert perception.resolve_detection(episode.context, found[0]["id"], own_camera=False)


# --- the geometric visibility backend -------------------------------------------------------------------

coordinate = st.floats(-5, 5, allow_nan=False)


@settings(max_examples=80, deadline=None)
@given(cx=coordinate, cy=coordinate, yaw=st.floats(-math.pi, math.pi), pitch=st.floats(-1.2, 0.3),
       bx=coordinate, by=coordinate, size=st.floats(0.05, 2.0), height=st.floats(0.05, 2.0))
def test_a_pixel_box_holds_every_corner_the_camera_sees(cx, cy, yaw, pitch, bx, by, size, height):
    from homeloop.sim.visibility import Solid, in_frame, pixel_box

    view = Viewpoint(cx, cy, 1.5, yaw, pitch, 69.0, 640, 360)
    solid = Solid.box(bx, by, 0.3, size, size / 2, 0.0, height)
    box = pixel_box(view, solid)
    corners = solid.corners()
    inside = in_frame(view, corners)
    if inside.any():
        assert box is not None
        uv = view.to_pixels(view.camera_coords(corners[inside]))
        assert (uv[:, 0] >= box[0] - 1).all() and (uv[:, 0] <= box[2] + 1).all()
        assert (uv[:, 1] >= box[1] - 1).all() and (uv[:, 1] <= box[3] + 1).all()
    if box is not None:
        assert 0 <= box[0] < box[2] <= view.width and 0 <= box[1] < box[3] <= view.height


@settings(max_examples=80, deadline=None)
@given(start=st.tuples(coordinate, coordinate, st.floats(0.2, 2.5)), end=st.tuples(coordinate, coordinate,
       st.floats(0.0, 2.5)), along=st.floats(0.2, 0.8), half=st.floats(0.05, 0.5), side=st.floats(1.5, 3.0))
def test_a_solid_on_the_line_of_sight_hides_and_one_beside_it_does_not(start, end, along, half, side):
    import numpy as np

    from homeloop.sim.occlusion import Faces, Prisms, blocked
    from homeloop.sim.visibility import Solid

    origin, target = np.array(start), np.array(end)
    flat = target[:2] - origin[:2]
    if np.linalg.norm(flat) < 1.0:
        return
    centre = origin + along * (target - origin)
    normal = np.array([-flat[1], flat[0]]) / np.linalg.norm(flat)
    no_walls, ignore = Faces.empty(), np.full((1, 1), -2)
    on_line = Solid.box(centre[0], centre[1], 0.0, 2 * half, 2 * half, centre[2] - half, centre[2] + half)
    beside_xy = centre[:2] + normal * (side * half * math.sqrt(2) + 0.01)
    beside = Solid.box(beside_xy[0], beside_xy[1], 0.0, 2 * half, 2 * half, centre[2] - half, centre[2] + half)
    assert blocked(origin, target[None], ignore, no_walls, Prisms.of([(0, on_line)]))[0]
    assert not blocked(origin, target[None], ignore, no_walls, Prisms.of([(0, beside)]))[0]
    assert not blocked(origin, target[None], np.zeros((1, 1), dtype=np.int64), no_walls, Prisms.of([(0, on_line)]))[0]


@settings(max_examples=80, deadline=None)
@given(x=coordinate, y=coordinate, yaw=st.floats(-math.pi, math.pi), length=st.floats(0.3, 1.2),
       width=st.floats(0.3, 0.8), height=st.floats(0.3, 1.2), bearing=st.floats(-math.pi, math.pi),
       away=st.floats(0.4, 3.0), above=st.floats(0.1, 1.5))
def test_a_thing_walled_in_to_its_top_still_shows_its_top_to_an_eye_above_it(x, y, yaw, length, width, height,
                                                                            bearing, away, above):
    # A range between counters as high as it: seen from above, its top shows, and perception's share
    # of it must too (a third of its sample points lie on its top face).
    import numpy as np

    from homeloop.sim.occlusion import Faces, Prisms, blocked
    from homeloop.sim.visibility import SAMPLE_LEVELS, Solid

    thing = Solid.box(x, y, yaw, length, width, 0.0, height)
    c, s = math.cos(yaw), math.sin(yaw)
    around = []  # a block against each side, as high as the thing and a metre deep
    sides = ((1, 0, (1.0, width)), (-1, 0, (1.0, width)), (0, 1, (length, 1.0)), (0, -1, (length, 1.0)))
    for k, (along, across, size) in enumerate(sides, start=1):
        off = (along * (length + 1.0) / 2, across * (width + 1.0) / 2)
        centre = (x + c * off[0] - s * off[1], y + s * off[0] + c * off[1])
        around.append((k, Solid.box(*centre, yaw, *size, 0.0, height)))
    eye = np.array([x + away * math.cos(bearing), y + away * math.sin(bearing), height + above])
    points = thing.samples()
    hidden = blocked(eye, points, np.zeros((len(points), 1), dtype=np.int64), Faces.empty(), Prisms.of(around))
    assert (~hidden).sum() >= len(points) // len(SAMPLE_LEVELS)
    assert (~hidden).mean() >= perception.MIN_UNOCCLUDED
