"""What the renderer keeps between frames (homeloop/sim/render): a kept frame is the frame a fresh
renderer draws, and whatever moved is drawn where it now is.

A scene starts from the part of it kept from an earlier scene of the same home; the scenes of a
second episode there are held to scenes built from nothing. A dome camera's frames reuse its static rays, its movers' pixel boxes, its light samples and its
surface colours; these tests hold every such frame to the one a renderer made for it alone draws,
pixel for pixel, as people move and doors open. The pieces the caches rest on (the pixel boxes of
a mesh's parts at once, the PNG writer, each light source's share) are held to their definitions.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from homeloop.core.keyed_file import kept_on_disk
from homeloop.sim.dynamics.light import Light
from homeloop.sim.episode import Episode
from homeloop.sim.render import raycast
from homeloop.sim.render import scene as scene_module
from homeloop.sim.render.lighting import _spread
from homeloop.sim.render.raycast import Parts, camera_bounds, part_boxes
from homeloop.sim.render.renderer import Renderer
from homeloop.sim.render.scene import Mesh
from homeloop.sim.render.shade import png_bytes
from homeloop.sim.visibility import Viewpoint
from homeloop.sim.world import STEP_S

SIZE = (320, 180)


def sized(camera) -> Viewpoint:
    v = Viewpoint.of(camera)
    return Viewpoint(v.x, v.y, v.z, v.yaw, v.pitch, v.hfov_deg, *SIZE)


def draw(renderer: Renderer, ep: Episode, view: Viewpoint, camera_id: str) -> np.ndarray:
    return renderer.image(ep.world, view, {"camera": camera_id, "privacy": "none"})


def from_nothing(world) -> Renderer:
    """A renderer whose scene is built from nothing: no part of it kept from an earlier one."""
    kept, scene_module.KEPT = scene_module.KEPT, False
    try:
        return Renderer(world)
    finally:
        scene_module.KEPT = kept


def fresh(ep: Episode, view: Viewpoint, camera_id: str) -> np.ndarray:
    return draw(from_nothing(ep.world), ep, view, camera_id)


def codes_of(renderer: Renderer, entity: str, part: str | None = None) -> list[int]:
    return [i for i, c in enumerate(renderer.scene.codes) if c.entity == entity and (part is None or c.part == part)]


@pytest.fixture()
def episode(house_home) -> Episode:
    return Episode(house_home, "handle_smoke_alarm", seed=0, images=False)


def test_a_dome_camera_s_kept_frames_are_the_frames_a_fresh_renderer_draws(episode, monkeypatch):
    ep = episode
    person = ep.world.residents()[0]
    camera = next(c for c in ep.home.cameras if c.room == person.room and c.agent_visible)
    view = sized(camera)
    renderer = Renderer(ep.world)
    static_casts = []
    cast = raycast.Caster._static
    monkeypatch.setattr(raycast.Caster, "_static", lambda self, *a: static_casts.append(1) or cast(self, *a))

    def step_aside() -> None:  # the resident steps aside a little, a moment later
        ep.world.people[person.id].x += 0.3
        ep.world.advance(STEP_S)

    def lights_off() -> None:
        for d in (d for d in ep.home.devices if d.type == "light" and d.room == person.room):
            assert ep.call("hub_set_state", device_id=d.id, field="on", value=False).error is None

    frames = []
    for change in (step_aside, lights_off, step_aside):
        kept = draw(renderer, ep, view, camera.id)
        assert np.array_equal(kept, fresh(ep, view, camera.id))
        frames.append(kept)
        change()
    frames.append(draw(renderer, ep, view, camera.id))
    assert np.array_equal(frames[-1], fresh(ep, view, camera.id))
    assert all(not np.array_equal(a, b) for a, b in zip(frames, frames[1:]))  # each change shows
    assert len(static_casts) - 4 == 1  # the kept renderer cast its static rays once; each fresh one once


def test_a_door_opened_at_the_same_moment_is_drawn_open(episode):
    ep = episode
    renderer = Renderer(ep.world)
    for camera in (c for c in ep.home.cameras if c.agent_visible):
        view = sized(camera)
        hits = renderer.buffers(ep.world, view, (camera.id,)).hits
        doors = [o.id for o in ep.home.openings if o.kind == "door" and not ep.world.openings[o.id].open
                 and np.isin(hits.code, codes_of(renderer, o.id, "leaf")).sum() > 50]
        if doors:
            break
    else:
        pytest.fail("no camera of the house sees a shut door")
    door = doors[0]
    shut = draw(renderer, ep, view, camera.id)
    ep.world.openings[door].open = True  # the same moment: no step between the frames
    opened = draw(renderer, ep, view, camera.id)
    assert np.array_equal(opened, fresh(ep, view, camera.id))
    leaf = np.isin(renderer.buffers(ep.world, view, (camera.id,)).hits.code, codes_of(renderer, door, "leaf"))
    assert not np.array_equal(shut, opened)
    assert not np.array_equal(leaf, np.isin(hits.code, codes_of(renderer, door, "leaf")))  # the leaf swung


def test_a_person_who_moved_is_drawn_where_they_now_are(episode):
    ep = episode
    person = ep.world.residents()[0]
    camera = next(c for c in ep.home.cameras if c.room == person.room and c.agent_visible)
    view = sized(camera)
    renderer = Renderer(ep.world)

    def person_pixels() -> set[int]:
        hits = renderer.buffers(ep.world, view, (camera.id,)).hits
        return set(np.flatnonzero(np.isin(hits.code, codes_of(renderer, person.id))).tolist())

    draw(renderer, ep, view, camera.id)
    before = person_pixels()
    assert before, "the resident is out of the camera's view"
    towards = math.atan2(camera.pose.y - person.y, camera.pose.x - person.x)
    ep.world.people[person.id].x += 0.4 * math.cos(towards)  # a step toward the camera: drawn larger
    ep.world.people[person.id].y += 0.4 * math.sin(towards)
    moved = draw(renderer, ep, view, camera.id)
    assert np.array_equal(moved, fresh(ep, view, camera.id))
    after = person_pixels()
    assert after != before and len(after) > len(before)


def test_a_second_episode_s_scene_begun_from_the_home_s_kept_part_draws_what_one_built_from_nothing_draws(
        house_home):
    """The first episode's scene keeps the home's part (its triangles, codes, doors and parts unposed),
    then poses its own copies (a door swung, a resident in view); the next episode's scene begins from
    that part, numbers its codes as a scene built from nothing, and draws each camera's frame alike."""
    first = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    kept = Renderer(first.world)
    door = next(o.id for o in house_home.openings if o.kind == "door")
    first.world.openings[door].open = not first.world.openings[door].open
    cameras = [c for c in house_home.cameras if c.agent_visible]
    for camera in cameras:
        draw(kept, first, sized(camera), camera.id)
    second = Episode(house_home, "bring_in_package", seed=1, images=False)
    renderer, alone = Renderer(second.world), from_nothing(second.world)
    assert renderer.scene.static is kept.scene.static and alone.scene.static is not kept.scene.static
    assert renderer.scene.codes == alone.scene.codes and list(renderer.scene.movers) == list(alone.scene.movers)
    assert second.world.openings[door].open != first.world.openings[door].open
    for camera in cameras:
        view = sized(camera)
        assert np.array_equal(draw(renderer, second, view, camera.id), draw(alone, second, view, camera.id)), camera.id
    edited = house_home.model_copy(deep=True)  # a home edited between episodes is built anew
    edited.furniture[0].pose.x += 0.2
    assert Renderer(Episode(edited, "bring_in_package", seed=1, images=False).world).scene.static is not kept.scene.static


def test_rays_cast_first_within_the_camera_s_room_meet_what_rays_cast_through_the_home_meet(episode):
    """The static rays are cast first only as far as the box of the camera's room; those that meet
    nothing there are cast again through the whole home. Every ray's hit is the one a single cast
    through the whole home finds, from each dome camera's pose and turned toward the doors."""
    renderer = Renderer(episode.world)
    caster = renderer.caster
    recast = 0
    for camera in episode.home.cameras:
        base = sized(camera)
        for turn in (0.0, math.pi / 2, math.pi, -math.pi / 2):
            view = Viewpoint(base.x, base.y, base.z, base.yaw + turn, base.pitch, base.hfov_deg, *SIZE)
            rays, near, start = caster._rays_of(view)
            reach = caster._room_reach(view, rays)
            assert reach is not None, f"{camera.id} is in no room's box"
            depth, face, cos = caster.static.trace(view, rays, None, near, start)
            inside = depth <= reach
            recast += int((~inside & (face >= 0)).sum())
            got = caster._static(view, rays, near, start)
            assert np.array_equal(got[3], face) and np.array_equal(got[0], depth)
            assert np.array_equal(got[2], np.where(face >= 0, np.abs(cos), 1.0))
    assert recast > 0, "no ray left a camera's room: the second cast went untested"


def test_a_pose_met_again_after_its_hits_were_let_go_is_drawn_from_its_kept_faces_as_cast_anew(episode, monkeypatch):
    """A camera turned to more poses than the whole static hits kept: the first pose, met again, is
    worked out from the faces its rays met (kept, compressed, with the home part) without casting a
    ray, and drawn pixel for pixel as a renderer built from nothing draws it."""
    ep = episode
    camera = next(c for c in ep.home.cameras if c.agent_visible)
    base = sized(camera)
    turns = [Viewpoint(base.x, base.y, base.z, base.yaw + k * 0.3, base.pitch, base.hfov_deg, *SIZE)
             for k in range(raycast.STATIC_CACHE_SIZE + 1)]
    renderer = Renderer(ep.world)
    for view in turns:
        draw(renderer, ep, view, camera.id)
    casts = []
    static = renderer.caster.static
    monkeypatch.setattr(static, "faces_hit", lambda *a: casts.append(1) or raycast.Geometry.faces_hit(static, *a))
    again = draw(renderer, ep, turns[0], camera.id)
    assert renderer.caster.static is static and casts == []
    assert np.array_equal(again, fresh(ep, turns[0], camera.id))
    rays, near, start = renderer.caster._rays_of(turns[0])
    depth, face, cos = static.trace(turns[0], rays, None, near, start)  # one whole cast, nothing kept
    got = renderer.caster._static(turns[0], rays, near, start)
    assert np.array_equal(got[3], face) and np.array_equal(got[0], depth)
    assert np.array_equal(got[2], np.where(face >= 0, np.abs(cos), 1.0))


def _cut_short(data: bytes) -> bytes:
    return data[:len(data) - 9]


def _a_byte_changed(data: bytes) -> bytes:
    return data[:-3] + bytes([data[-3] ^ 0x10]) + data[-2:]


def _another_pose_s(data: bytes) -> bytes:
    """A whole, well-formed file, as the faces of another pose (another key) are written."""
    head, payload = data.split(b"\n", 1)
    return head.replace(b'"key": "', b'"key": "0') + b"\n" + payload


def _garbage(data: bytes) -> bytes:
    return b"\x00\xff not faces"


def cast_count(monkeypatch) -> list[int]:
    """A list that grows by one each time a caster casts a pose's static rays."""
    casts: list[int] = []
    cast = raycast.Caster._static_faces
    monkeypatch.setattr(raycast.Caster, "_static_faces", lambda *a: casts.append(1) or cast(*a))
    return casts


def test_a_pose_s_faces_kept_on_disk_are_read_where_a_scene_is_built_from_nothing_and_drawn_as_cast(
        episode, monkeypatch, tmp_path):
    """Inside kept_on_disk the faces a pose's rays meet are kept in a file too (a run's workers share
    one folder): a renderer whose scene is built from nothing, as in another worker, reads them
    there, casts no ray, and draws the frame pixel for pixel as the renderer that cast them."""
    ep = episode
    camera = next(c for c in ep.home.cameras if c.agent_visible)
    view = sized(camera)
    casts = cast_count(monkeypatch)
    with kept_on_disk(tmp_path):
        first = fresh(ep, view, camera.id)
        again = fresh(ep, view, camera.id)
    assert len(casts) == 1 and np.array_equal(again, first)
    assert [p.suffix for p in (tmp_path / raycast.FACES_FOLDER).iterdir()] == [raycast.FACES_SUFFIX]


@pytest.mark.parametrize("spoil", [_cut_short, _a_byte_changed, _another_pose_s, _garbage])
def test_a_spoilt_file_of_faces_is_cast_again_and_written_anew(episode, monkeypatch, tmp_path, spoil):
    """A file of faces cut short, changed, of another pose or not one at all is never trusted: the
    rays are cast again, the frame is the one cast first, and the file is written as it was."""
    ep = episode
    camera = next(c for c in ep.home.cameras if c.agent_visible)
    view = sized(camera)
    with kept_on_disk(tmp_path):
        first = fresh(ep, view, camera.id)
        (path,) = (tmp_path / raycast.FACES_FOLDER).iterdir()
        kept = path.read_bytes()
        path.write_bytes(spoil(kept))
        casts = cast_count(monkeypatch)
        again = fresh(ep, view, camera.id)
    assert casts == [1] and np.array_equal(again, first)
    assert path.read_bytes() == kept


@settings(max_examples=60, deadline=None)
@given(points=st.lists(st.tuples(st.floats(-3, 3), st.floats(-3, 3), st.floats(-1, 3)), min_size=9, max_size=24),
       codes=st.lists(st.integers(0, 3), min_size=8, max_size=8),
       yaw=st.floats(-math.pi, math.pi), pitch=st.floats(-1.0, 0.5))
def test_the_boxes_of_a_mesh_s_parts_at_once_are_each_part_s_own(points, codes, yaw, pitch):
    view = Viewpoint(0.0, 0.0, 1.0, yaw, pitch, 69.0, 96, 54)
    vertices = np.array(points, dtype=float)
    faces = np.arange(len(vertices) // 3 * 3).reshape(-1, 3)
    face_codes = np.array(codes[:len(faces)] + [0] * max(0, len(faces) - len(codes)), dtype=np.int64)
    order = np.argsort(face_codes, kind="stable")
    starts = np.concatenate([[0], np.flatnonzero(np.diff(face_codes[order])) + 1])
    parts = Parts(faces[order], starts)
    cam = view.camera_coords(vertices)
    expected = [b for k in range(len(starts)) if (b := camera_bounds(view, cam, parts.group(k))) is not None]
    assert part_boxes(view, cam, parts) == expected


@settings(max_examples=60, deadline=None)
@given(points=st.lists(st.tuples(st.floats(-3, 3), st.floats(-3, 3), st.floats(-1, 3)), min_size=9, max_size=24),
       codes=st.lists(st.integers(0, 3), min_size=8, max_size=8), share=st.booleans(),
       yaw=st.floats(-math.pi, math.pi), pitch=st.floats(-1.0, 0.5))
def test_a_mesh_s_parts_grouped_by_vertex_give_each_part_s_own_box(points, codes, share, yaw, pitch):
    """:func:`raycast._parts` groups each part's vertices once where no vertex serves two parts (and
    keeps to the corners where one does): the boxes are still each part's own."""
    view = Viewpoint(0.0, 0.0, 1.0, yaw, pitch, 69.0, 96, 54)
    vertices = np.array(points, dtype=float)
    faces = np.arange(len(vertices) // 3 * 3).reshape(-1, 3)
    if share and len(faces) > 1:
        faces[-1, 0] = faces[0, 1]  # two faces share a vertex (in one part or in two)
    face_codes = np.array(codes[:len(faces)] + [0] * max(0, len(faces) - len(codes)), dtype=np.int64)
    mesh = Mesh(vertices, faces, face_codes)
    parts = raycast._parts(mesh)
    shared = len({int(c) for c in face_codes[(faces == faces[0, 1]).any(axis=1)]}) > 1
    assert (parts.vertices is None) == shared
    if parts.vertices is not None:  # each part's vertices: exactly the points its faces use
        for k in range(len(parts.starts)):
            end = parts.vertex_starts[k + 1] if k + 1 < len(parts.starts) else len(parts.vertices)
            assert sorted(parts.vertices[parts.vertex_starts[k]:end]) == sorted(set(parts.group(k).ravel()))
    cam = view.camera_coords(vertices)
    expected = [b for k in range(len(parts.starts)) if (b := camera_bounds(view, cam, parts.group(k))) is not None]
    assert part_boxes(view, cam, parts) == expected


@settings(max_examples=60, deadline=None)
@given(height=st.integers(1, 30), width=st.integers(1, 30), stride=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_the_light_spread_from_its_samples_blends_the_neighbours_on_the_same_surface(height, width, stride, seed):
    """:func:`lighting._spread` over the whole frame at once is, at each pixel, the bilinear blend of
    its (up to four) nearest samples that see the same surface, and names the pixels with none."""
    rng = np.random.default_rng(seed)
    surface = rng.integers(0, 3, (height, width)).astype(np.int64)
    coarse = (rng.random(((height + stride - 1) // stride, (width + stride - 1) // stride)) * 500).astype(np.float32)
    out, alone = _spread(coarse, surface, stride)
    rows, cols = coarse.shape
    for y in range(height):
        for x in range(width):
            total = count = 0.0
            for dy in (0, 1):
                for dx in (0, 1):
                    sy, sx = min(y // stride + dy, rows - 1), min(x // stride + dx, cols - 1)
                    wy = (1 - (y % stride) / stride) if dy == 0 else (y % stride) / stride
                    wx = (1 - (x % stride) / stride) if dx == 0 else (x % stride) / stride
                    if wy * wx > 0 and surface[sy * stride, sx * stride] == surface[y, x]:
                        total += wy * wx * float(coarse[sy, sx])
                        count += wy * wx
            if count == 0:
                assert y * width + x in alone
            else:
                assert y * width + x not in alone
                assert out[y * width + x] == pytest.approx(total / count, rel=1e-5)


@settings(max_examples=40, deadline=None)
@given(height=st.integers(1, 24), width=st.integers(1, 24), seed=st.integers(0, 2**16))
def test_a_png_decodes_to_the_image_it_was_made_of(height, width, seed):
    image = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    data = png_bytes(image)
    Image.open(io.BytesIO(data)).verify()  # chunk lengths and checksums
    decoded = Image.open(io.BytesIO(data))
    assert decoded.mode == "RGB" and decoded.size == (width, height)
    assert np.array_equal(np.asarray(decoded), image)
    assert png_bytes(image) == data


def test_each_source_s_light_adds_up_to_its_room_s(house_home):
    ep = Episode(house_home, "water_leak_response", seed=0, images=False)  # mid-morning: daylight
    for light_device in [d for d in ep.home.devices if d.type == "light"][::2]:
        assert ep.call("hub_set_state", device_id=light_device.id, field="on", value=True).error is None
    light = ep.world.running(Light)
    assert light is not None
    windows = [o.id for o in ep.home.openings if o.kind == "window"]
    lit_by_both = 0
    for room in ep.home.rooms:
        fittings = [light.source_lux(room.id, "fitting", d.id) for d in ep.home.devices if d.type == "light"]
        panes = [light.source_lux(room.id, "window", w) for w in windows]
        total = sum(fittings) + sum(panes) + light.source_lux(room.id, "sky")
        assert total == pytest.approx(light.lux(room.id), rel=1e-9, abs=1e-9)
        lit_by_both += any(f > 0 for f in fittings) and any(p > 0 for p in panes)
    assert lit_by_both  # some room has both a fitting on and daylight through a window
