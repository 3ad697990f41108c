"""Rendered camera images (homeloop/sim/render): tests that look at the pixels (docs/skills.md).

Episodes run in the house with images on, so captures carry rendered PNGs; what a frame shows is
the geometric backend's in both arms (docs/episodes.md), and the renderer's id buffer, reading the
same gates from the pixels, is held to the same verdicts. Rooms, cameras and things are found by type,
role and class.
"""

from __future__ import annotations

import base64
import io
import logging
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from typer.testing import CliRunner

from homeloop.sim.episode import Episode
from homeloop.sim.render import materials
from homeloop.sim.render.idbuffer import IdBufferVisibility
from homeloop.sim.render.raycast import new_device
from homeloop.sim.render.renderer import Renderer
from homeloop.sim.services import perception
from homeloop.sim.services.cameras import capture_view
from homeloop.sim.visibility import Viewpoint
from homeloop.sim.world import ObjectState, Placement

#: What perception never labels (docs/skills.md): hazards show only in the pixels.
HAZARD_LABELS = {"fire", "flame", "flames", "smoke", "water", "puddle", "leak", "spill"}


def pixels(result_data: dict) -> np.ndarray:
    """The RGB array of a capture's base64 PNG."""
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(result_data["image"]))).convert("RGB"))


def capture(ep: Episode, camera_id: str) -> dict:
    result = ep.call("cameras_capture", camera_id=camera_id)
    assert result.error is None and result.data["image"]
    return result.data


def agent_camera_in(ep: Episode, room: str):
    return next(c for c in ep.home.cameras if c.room == room and c.agent_visible)


def room_of_type(ep: Episode, *types: str) -> str:
    return next(r.id for r in ep.home.rooms if r.type in types)


def switch_lights(ep: Episode, room: str, on: bool) -> None:
    for light in (d for d in ep.home.devices if d.type == "light" and d.room == room):
        assert ep.call("hub_set_state", device_id=light.id, field="on", value=on).error is None


def orange_red(image: np.ndarray) -> np.ndarray:
    """Pixels of a flame's colours: hue from red to orange (0-45 degrees), well saturated and bright."""
    rgb = image.astype(float) / 255
    top, low = rgb.max(axis=-1), rgb.min(axis=-1)
    saturation = np.where(top > 0, (top - low) / np.maximum(top, 1e-9), 0.0)
    reddest = rgb[..., 0] >= top - 1e-9
    hue = np.degrees(np.arctan2(math.sqrt(3) * (rgb[..., 1] - rgb[..., 2]),
                                2 * rgb[..., 0] - rgb[..., 1] - rgb[..., 2]))
    return reddest & (hue >= 0) & (hue <= 45) & (saturation > 0.4) & (top > 0.6)


def window(image: np.ndarray, u: float, v: float, half: int) -> np.ndarray:
    h, w = image.shape[:2]
    return image[max(0, int(v) - half):min(h, int(v) + half), max(0, int(u) - half):min(w, int(u) + half)]


def project(view: Viewpoint, point: tuple[float, float, float]) -> tuple[float, float]:
    cam = view.camera_coords(np.array([point]))
    assert cam[0, 2] > 0, "the point lies behind the camera"
    u, v = view.to_pixels(cam)[0]
    return float(u), float(v)


# --- fire, smoke and light -------------------------------------------------------------------------------


def test_the_kitchen_camera_shows_flames_over_the_cooktop_once_the_pan_burns(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0)
    pan = ep.world.objects_of_class("pan")[0]
    camera = agent_camera_in(ep, pan.placement.room)
    view = Viewpoint.of(camera)
    entry = ep.catalog.objects[pan.catalog_id]
    u, v = project(view, (pan.x, pan.y, pan.z + entry.dimensions.height + 0.15))  # just over the rim
    assert 0 <= u < view.width and 0 <= v < view.height

    before = capture_view(ep.context, view, camera.id)  # the scenario may withhold it from the agent
    assert not orange_red(window(pixels(before), u, v, 60)).any()
    ep.call("clock_wait", seconds=200 - ep.now())
    assert ep.world.module("cooking").pan(pan.id).burning
    after = capture_view(ep.context, view, camera.id)
    assert orange_red(window(pixels(after), u, v, 60)).sum() >= 100

    labels = {d["label"] for d in ep.call("perception_detect_objects", capture_id=after["capture_id"]).data[
        "detections"]}
    assert "pan" in labels and not labels & HAZARD_LABELS
    shown = {(h["kind"], h["source"]) for h in ep.state["captures"][after["capture_id"]]["hazards"]}
    assert ("fire", pan.id) in shown  # the record knows what the pixels show; perception does not say


def test_a_lit_room_shows_many_times_brighter_than_a_dark_one(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0)  # early evening: only the lamps light the rooms
    living = room_of_type(ep, "LIVING_ROOM")
    camera = agent_camera_in(ep, living)
    switch_lights(ep, living, True)
    lit = pixels(capture(ep, camera.id))
    switch_lights(ep, living, False)
    assert ep.world.module("light").lit(living) is False
    dark = pixels(capture(ep, camera.id))

    renderer = Renderer(ep.world)
    hits = renderer.buffers(ep.world, Viewpoint.of(camera), (camera.id,)).hits
    own = [i for i, c in enumerate(renderer.scene.codes) if c.room == living]  # its floor and ceiling
    mask = np.isin(hits.code, own).reshape(lit.shape[:2])
    assert mask.mean() > 0.2
    lit_mean, dark_mean = lit[mask].mean(), dark[mask].mean()
    assert lit_mean > 40 and lit_mean >= 4 * dark_mean


def test_a_leak_shows_as_a_blue_grey_film_on_the_floor(house_home):
    ep = Episode(house_home, "water_leak_response", seed=0)
    source = ep.world.module("water").sources()[0]
    camera = next(c for c in ep.home.cameras if c.room == source.room)  # withheld from the agent here
    before = capture_view(ep.context, Viewpoint.of(camera), camera.id)
    ep.call("clock_wait", seconds=60)
    assert source.radius > 1.0
    after = capture_view(ep.context, Viewpoint.of(camera), camera.id)
    toward = math.atan2(camera.pose.y - source.y, camera.pose.x - source.x)
    spot = (source.x + source.radius / 2 * math.cos(toward), source.y + source.radius / 2 * math.sin(toward), 0.0)
    u, v = project(Viewpoint.of(camera), spot)

    def blueness(image: np.ndarray) -> float:
        patch = window(image, u, v, 15).astype(float)
        return float((patch[..., 2] - patch[..., 0]).mean())

    assert blueness(pixels(before)) < 0 < blueness(pixels(after))  # a wooden floor, then water over it
    shown = {(h["kind"], h["source"]) for h in ep.state["captures"][after["capture_id"]]["hazards"]}
    assert ("water", source.name) in shown


# --- privacy -----------------------------------------------------------------------------------------------


def test_a_people_masked_frame_shows_only_the_mask_colour_where_the_person_is(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0)
    resident = ep.world.residents()[0]
    camera = agent_camera_in(ep, resident.room)
    view = Viewpoint.of(camera)
    plain = pixels(capture_view(ep.context, view, camera.id))
    masked = pixels(capture_view(ep.context, view, camera.id, privacy="people_masked"))

    renderer = Renderer(ep.world)
    hits = renderer.buffers(ep.world, view, (camera.id,)).hits
    theirs = [i for i, c in enumerate(renderer.scene.codes) if c.entity == resident.id]
    person = np.isin(hits.code, theirs).reshape(plain.shape[:2])
    assert person.sum() >= perception.MIN_BOX_AREA_PX
    assert (masked[person] == materials.MASK_RGB8).all()
    assert len(np.unique(plain[person], axis=0)) > 3  # unmasked, the person has a face and clothes
    assert (masked[~person] == plain[~person]).all()
    assert not (plain == materials.MASK_RGB8).all(axis=-1).any()


def test_the_render_command_draws_a_blocked_camera_as_one_colour_and_names_the_cameras(house_home, tmp_path):
    from homeloop.cli import app

    house_home.write(tmp_path / "house" / "home.json")
    blocked = next(c for c in house_home.cameras if c.privacy_mode == "image_blocked")
    out = tmp_path / "blocked.png"
    result = CliRunner().invoke(app, ["render", str(tmp_path / "house"), "--camera", blocked.id, "--out", str(out)])
    assert result.exit_code == 0, result.output
    image = np.asarray(Image.open(out).convert("RGB"))
    assert image.shape == (blocked.resolution[1], blocked.resolution[0], 3)
    assert (image == materials.BLOCKED_RGB8).all()

    wrong = CliRunner().invoke(app, ["render", str(tmp_path / "house"), "--camera", "attic", "--out", str(out)])
    assert wrong.exit_code == 2
    line = " ".join(wrong.output.split())
    assert "'attic'" in line and all(c.id in line for c in house_home.cameras)


# --- the id buffer's gates ---------------------------------------------------------------------------------


def view_at(target: tuple[float, float, float], frm: tuple[float, float, float], width: int = 1280,
            hfov: float = 69.0) -> Viewpoint:
    dx, dy, dz = (t - f for t, f in zip(target, frm))
    return Viewpoint(frm[0], frm[1], frm[2], math.atan2(dy, dx), math.atan2(dz, math.hypot(dx, dy)), hfov, width,
                     width * 9 // 16)


def mug_and_a_view(ep: Episode, distance: float = 1.0):
    """The mug, and an eye ``distance`` m from it toward its room's middle, just above it."""
    mug = ep.world.objects_of_class("mug")[0]
    middle = ep.home.room_polygon(mug.placement.room).centroid
    heading = math.atan2(middle.y - mug.y, middle.x - mug.x)
    return mug, (mug.x + distance * math.cos(heading), mug.y + distance * math.sin(heading), mug.z + 0.1)


def entity_in(ep: Episode, shot: dict, entity_id: str) -> dict:
    return next(e for e in ep.state["captures"][shot["capture_id"]]["entities"] if e["id"] == entity_id)


def detected(ep: Episode, shot: dict, entity_id: str) -> bool:
    found = perception.detect_objects(ep.context, shot["capture_id"])["detections"]
    return entity_id in {ep.state["detections"][d["id"]]["entity"] for d in found}


def pixel_verdict(ep: Episode, view: Viewpoint, entity_id: str) -> bool:
    """The size and occlusion gates as the pixels of the frame answer them (the id buffer)."""
    frame = IdBufferVisibility(Renderer(ep.world)).frame(ep.world, view, ("robot_head",))
    seen = next(s for s in frame.entities if s.id == entity_id)
    return seen.area_px >= perception.MIN_BOX_AREA_PX and seen.unoccluded >= perception.MIN_UNOCCLUDED


def test_a_mug_hidden_behind_a_parcel_is_not_detected_and_the_pixels_agree(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0)
    mug, eye = mug_and_a_view(ep)
    switch_lights(ep, mug.placement.room, True)
    view = view_at((mug.x, mug.y, mug.z + 0.05), eye)
    clear = capture_view(ep.context, view, "robot_head")
    assert clear["image"] and entity_in(ep, clear, mug.id)["unoccluded"] > 0.9
    assert detected(ep, clear, mug.id) and pixel_verdict(ep, view, mug.id)

    between = (mug.x + 0.3 * (eye[0] - mug.x), mug.y + 0.3 * (eye[1] - mug.y))
    ep.world.objects["parcel_test"] = ObjectState("parcel_test", "parcel", "parcel", Placement(
        "surface", mug.placement.room, mug.placement.furniture, mug.placement.name), *between, mug.z)
    hidden = capture_view(ep.context, view, "robot_head")
    assert entity_in(ep, hidden, mug.id)["unoccluded"] < perception.MIN_UNOCCLUDED
    assert not detected(ep, hidden, mug.id) and not pixel_verdict(ep, view, mug.id)
    assert detected(ep, hidden, "parcel_test")


def test_a_pill_box_behind_the_bedside_lamp_is_hidden_in_the_detections_and_the_pixels(house_home):
    # Device bodies are solid in both backends: the lamp on the nightstand hides what stands right
    # behind it, seen from in front of the nightstand, and nothing beside it.
    ep = Episode(house_home, "fetch_medicine", seed=0)
    box = ep.world.objects_of_class("pill_box")[0]
    stand = box.placement.furniture
    for other in [o.id for o in ep.world.objects.values() if o is not box and o.placement.furniture == stand]:
        del ep.world.objects[other]  # the box alone beside the lamp on the nightstand's top
    lamp = next(d for d in ep.home.devices if d.mounted_on == stand)
    switch_lights(ep, box.placement.room, True)
    front = lamp.pose.to_world(0.7, 0.0, 0.25)  # the lamp is 0.4 m tall; the eye looks just over its middle
    verdicts = {}
    for where, across in (("beside", -0.16), ("behind", 0.0)):
        box.x, box.y, _ = lamp.pose.to_world(-0.095, across)
        view = view_at((box.x, box.y, box.z + 0.015), front)
        shot = capture_view(ep.context, view, "robot_head")
        verdicts[where] = (detected(ep, shot, box.id), pixel_verdict(ep, view, box.id))
    assert verdicts == {"beside": (True, True), "behind": (False, False)}


def _range_shares(ep: Episode, views: dict[str, tuple[Viewpoint, str]],
                  range_id: str) -> dict[str, tuple[float, float]]:
    """The range's unoccluded share in each view, as the frame reports it and as its pixels give it."""
    shares = {}
    for name, (view, source) in views.items():
        shot = capture_view(ep.context, view, source)
        frame = IdBufferVisibility(Renderer(ep.world)).frame(ep.world, view, (source,))
        shares[name] = (entity_in(ep, shot, range_id)["unoccluded"],
                        next(s.unoccluded for s in frame.entities if s.id == range_id))
    return shares


def test_the_pan_on_the_range_hides_none_of_it_in_the_frame_nor_the_pixels(house_home):
    # What stands on a thing covers a little of its top, yet the rays to its sample points, inside it,
    # mostly come in through that top: it counts as part of the view of what it stands on.
    ep = Episode(house_home, "handle_smoke_alarm", seed=0)
    pan = ep.world.objects_of_class("pan")[0]
    range_id = pan.placement.furniture
    cooker = next(f for f in ep.home.furniture if f.id == range_id)
    switch_lights(ep, pan.placement.room, True)
    kitchen = agent_camera_in(ep, pan.placement.room)
    views = {"dome camera": (Viewpoint.of(kitchen), kitchen.id)}
    for k, turn in enumerate((0.0, 0.5, 1.0)):  # the robot's eye over the range, from its front round to a side
        yaw = cooker.pose.yaw + turn
        eye = (pan.x + 1.1 * math.cos(yaw), pan.y + 1.1 * math.sin(yaw), 1.45)
        views[f"robot {k}"] = (view_at((pan.x, pan.y, cooker.height / 2), eye), "robot_head")
    with_pan = _range_shares(ep, views, range_id)
    del ep.world.objects[pan.id]
    without = _range_shares(ep, views, range_id)
    assert with_pan == without
    # and the frame's share agrees with the pixels' where perception draws its line
    assert all(geometric >= perception.MIN_UNOCCLUDED and drawn >= perception.MIN_UNOCCLUDED
               for geometric, drawn in with_pan.values())


# --- the scene and the rays --------------------------------------------------------------------------------


@pytest.mark.parametrize("mesh_fails_too", [False, True])
def test_a_visual_that_fails_is_drawn_as_its_solid_or_its_box_with_one_warning(house_home, monkeypatch, caplog,
                                                                               mesh_fails_too):
    from homeloop.sim.render import scene as scene_module

    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    broken = ep.home.furniture[0].catalog_id
    real_visual, real_mesh = scene_module.furniture_visual, scene_module.mesh_for

    def furniture_visual(entry):
        if entry.id == broken:
            raise ValueError("unreadable builder")
        return real_visual(entry)

    def mesh_for(entry):
        if mesh_fails_too and entry.id == broken:
            raise ValueError("unreadable asset")
        return real_mesh(entry)

    monkeypatch.setattr(scene_module, "furniture_visual", furniture_visual)
    monkeypatch.setattr(scene_module, "mesh_for", mesh_for)
    monkeypatch.setattr(scene_module, "KEPT", False)  # built from nothing, with the broken builders
    with caplog.at_level(logging.WARNING, logger="homeloop.sim.render.scene"):
        renderer = Renderer(ep.world)
    warnings = [r.getMessage() for r in caplog.records if broken in r.getMessage()]
    assert len(warnings) == 1
    item = next(f for f in ep.home.furniture if f.catalog_id == broken)
    mesh = renderer.scene.entity_mesh(item.id, "body")
    entry = ep.catalog.furniture[broken]
    dims = entry.dimensions
    extent = np.ptp(mesh.vertices[mesh.faces.ravel()], axis=0)
    assert sorted(extent[:2].round(3)) == sorted([round(dims.width, 3), round(dims.depth, 3)])
    assert extent[2] == pytest.approx(dims.height)
    drawn = 12 if mesh_fails_too else len(real_mesh(entry).faces)  # its box, else its solid
    assert len(mesh.faces) == drawn


def test_a_moved_object_is_drawn_where_it_now_is(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    mug, eye = mug_and_a_view(ep, distance=1.2)
    view = view_at((mug.x, mug.y, mug.z + 0.05), eye, width=320)
    backend = IdBufferVisibility(Renderer(ep.world))
    first = next(s for s in backend.frame(ep.world, view).entities if s.id == mug.id)
    dx = 0.2 * math.cos(view.yaw - math.pi / 2)  # to the camera's right
    dy = 0.2 * math.sin(view.yaw - math.pi / 2)
    mug.x, mug.y = mug.x + dx, mug.y + dy
    ep.world.advance(0.1)
    moved = next(s for s in backend.frame(ep.world, view).entities if s.id == mug.id)
    assert moved.box[0] > first.box[2] - 1  # now wholly to the right of where it was


DEVICE = new_device()


def test_an_opened_door_swings_out_of_its_doorway(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    living = room_of_type(ep, "LIVING_ROOM")
    camera = agent_camera_in(ep, living)
    view = Viewpoint.of(camera)
    view = Viewpoint(view.x, view.y, view.z, view.yaw, view.pitch, view.hfov_deg, 480, 270)
    renderer = Renderer(ep.world)

    def leaf_pixels(door_id: str) -> set[int]:
        hits = renderer.buffers(ep.world, view, (camera.id,)).hits
        leaf = [i for i, c in enumerate(renderer.scene.codes) if c.entity == door_id and c.part == "leaf"]
        return set(np.flatnonzero(np.isin(hits.code, leaf)).tolist())

    doors = [o.id for o in ep.home.openings if o.kind == "door" and living in o.connects
             and not ep.world.openings[o.id].open]
    door = max(doors, key=lambda d: len(leaf_pixels(d)))
    shut = leaf_pixels(door)
    assert len(shut) > 100
    ep.world.openings[door].open = True
    ep.world.advance(0.1)
    assert len(leaf_pixels(door) & shut) < len(shut) / 2


@settings(max_examples=60, deadline=None)
@given(corners=st.lists(st.tuples(st.floats(-2, 2), st.floats(-2, 2), st.floats(-1, 3)), min_size=3, max_size=3),
       yaw=st.floats(-math.pi, math.pi), pitch=st.floats(-1.0, 0.5))
def test_every_pixel_a_triangle_covers_lies_in_its_pixel_bounds(corners, yaw, pitch):
    from homeloop.sim.render.raycast import Geometry, pixel_bounds, ray_directions
    from homeloop.sim.render.scene import Mesh

    vertices = np.array(corners, dtype=float)
    if np.linalg.norm(np.cross(vertices[1] - vertices[0], vertices[2] - vertices[0])) < 1e-3:
        return
    view = Viewpoint(0.0, 0.0, 1.0, yaw, pitch, 69.0, 96, 54)
    faces = np.array([[0, 1, 2]])
    triangle = Geometry(DEVICE, Mesh(vertices, faces, np.zeros(1, dtype=np.int64)))
    rays = ray_directions(view)
    _, face = triangle.cast(view, rays)
    covered = np.flatnonzero(face >= 0)
    box = pixel_bounds(view, vertices, faces)
    if box is None:
        assert not len(covered)
        return
    x0, y0, x1, y1 = box
    rows, cols = covered // view.width, covered % view.width
    assert ((cols >= x0) & (cols < x1) & (rows >= y0) & (rows < y1)).all()


def test_the_same_moment_renders_to_the_same_bytes(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    camera = agent_camera_in(ep, ep.world.residents()[0].room)
    record = {"camera": camera.id, "privacy": "none"}
    first = Renderer(ep.world)(ep.world, Viewpoint.of(camera), record)
    again = Renderer(ep.world)(ep.world, Viewpoint.of(camera), record)
    assert first == again


# --- records ---------------------------------------------------------------------------------------------


def test_the_runner_writes_each_captured_image_beside_the_record(tmp_path):
    from homeloop.bench.records import record_path
    from homeloop.bench.runner import write_capture_images
    from homeloop.bench.viewer import capture_files

    buffer = io.BytesIO()
    Image.fromarray(np.full((4, 6, 3), 90, np.uint8)).save(buffer, format="PNG")
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    trace = [{"kind": "call", "tool": "cameras_capture", "data": {"capture_id": "cap_1", "image": png}},
             {"kind": "call", "tool": "robot_scan", "data": {"captures": [
                 {"heading_deg": 0.0, "capture": {"capture_id": "cap_2", "image": png}}]}},
             {"kind": "call", "tool": "hub_list_devices", "data": {"devices": []}}]
    assert write_capture_images(tmp_path, "ep_1", trace) == 2
    first, scanned = trace[0]["data"], trace[1]["data"]["captures"][0]["capture"]
    assert (first["image"], first["image_file"]) == (None, "ep_1/cap_1.png")
    assert scanned["image_file"] == "ep_1/cap_2.png"
    folder = record_path(tmp_path, "ep_1").parent
    assert (folder / "ep_1" / "cap_1.png").read_bytes() == buffer.getvalue()
    assert [capture_files(entry["data"]) for entry in trace] == [["ep_1/cap_1.png"], ["ep_1/cap_2.png"], []]
