"""Light, shadows, textures, flames and smoke in rendered frames (homeloop/sim/render/lighting.py,
textures.py, effects.py, shade.py).

Episodes run in the house. Rooms, lights, furniture and cameras are found by type and class; where a
test needs a place (a floor point in a shadow), it works the place out from the home's geometry and
checks the geometry says what the test assumes before it looks at the pixels.
"""

from __future__ import annotations

import base64
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from shapely.geometry import Point

from homeloop.core.home import polygon_from_rings
from homeloop.sim.episode import Episode
from homeloop.sim.render import effects, shade, textures
from homeloop.sim.render.idbuffer import IdBufferVisibility
from homeloop.sim.render.lighting import DARK_FLOOR_LUX, FrameLight, room_lux
from homeloop.sim.render.renderer import Renderer
from homeloop.sim.visibility import Viewpoint

#: What a capture record needs to render a viewpoint of no camera (nothing hidden).
NO_CAMERA = {"camera": "none", "privacy": "none"}


def room_of_type(ep: Episode, kind: str) -> str:
    return next(r.id for r in ep.home.rooms if r.type == kind)


def camera_in(ep: Episode, room: str):
    return next(c for c in ep.home.cameras if c.room == room and c.agent_visible)


def set_lights(ep: Episode, room: str, on: bool, mount: str | None = None) -> None:
    """Switch the room's lights (those of one mount only, when given) on or off, and every other
    light of the room off when a mount is given."""
    for light in (d for d in ep.home.devices if d.type == "light" and d.room == room):
        value = on if mount is None or light.mount == mount else False
        assert ep.call("hub_set_state", device_id=light.id, field="on", value=value).error is None


def small(view: Viewpoint, width: int = 320) -> Viewpoint:
    return Viewpoint(view.x, view.y, view.z, view.yaw, view.pitch, view.hfov_deg, width, width * 9 // 16)


def own_pixels(renderer: Renderer, ep: Episode, view: Viewpoint, room: str, hide: tuple[str, ...]) -> np.ndarray:
    """Mask (H, W) of the pixels showing the room's own floor and ceiling."""
    hits = renderer.buffers(ep.world, view, hide).hits
    own = [i for i, c in enumerate(renderer.scene.codes) if c.room == room]
    mask: np.ndarray = np.isin(hits.code, own).reshape(view.height, view.width)
    return mask


def illuminance(renderer: Renderer, ep: Episode, view: Viewpoint, hide: tuple[str, ...] = ()) -> np.ndarray:
    """Lux at every pixel's surface (H, W), as the renderer lights the frame."""
    frame = renderer.buffers(ep.world, view, hide)
    lux, outside = room_lux(ep.world, renderer.rooms)
    light = FrameLight(renderer.rig, renderer.rig.table(ep.world, lux, outside), frame.hits, renderer.caster,
                       frame.hide, shade.Palette.of(renderer.scene.codes).ground, ep.world.seed)
    return light.illuminance().reshape(view.height, view.width)


def png(renderer: Renderer, ep: Episode, view: Viewpoint, record: dict) -> bytes:
    return base64.b64decode(renderer(ep.world, view, record))


# --- light and dark -----------------------------------------------------------------------------------------


def test_a_lit_room_is_brighter_than_with_its_light_off_which_is_dark_but_not_black(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)  # 18:30: no daylight left
    living = room_of_type(ep, "LIVING_ROOM")
    camera = camera_in(ep, living)
    view, record = small(Viewpoint.of(camera)), {"camera": camera.id, "privacy": "none"}
    light = ep.world.module("light")

    set_lights(ep, living, True)
    assert light.lit(living)
    renderer = Renderer(ep.world)
    mask = own_pixels(renderer, ep, view, living, (camera.id,))
    lit = renderer.image(ep.world, view, record).astype(float)
    set_lights(ep, living, False)
    assert not light.lit(living)  # perception calls it dark: it must look dark
    dark = Renderer(ep.world).image(ep.world, view, record).astype(float)

    assert mask.mean() > 0.2
    lit_mean, dark_mean = lit[mask].mean(), dark[mask].mean()
    assert lit_mean >= 3 * dark_mean
    assert dark_mean >= 3 and (dark[mask].max(axis=-1) > 0).mean() > 0.99  # dark, not black
    lux = illuminance(Renderer(ep.world), ep, view, (camera.id,))
    assert lux[mask].min() >= DARK_FLOOR_LUX - 1e-3


def test_lighting_changes_no_pixel_of_the_id_buffer_nor_what_the_frame_shows(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    living = room_of_type(ep, "LIVING_ROOM")
    camera = camera_in(ep, living)
    view, hide = small(Viewpoint.of(camera)), (camera.id,)
    renderer = Renderer(ep.world)
    backend = IdBufferVisibility(renderer)
    record = {"camera": camera.id, "privacy": "none"}

    set_lights(ep, living, True)
    codes_lit = renderer.buffers(ep.world, view, hide).hits.code.copy()
    frame_lit = backend.frame(ep.world, view, hide)
    renderer.image(ep.world, view, record)
    assert (renderer.buffers(ep.world, view, hide).hits.code == codes_lit).all()  # shading changed nothing
    set_lights(ep, living, False)
    ep.world.advance(0.1)
    assert (renderer.buffers(ep.world, view, hide).hits.code == codes_lit).all()
    assert backend.frame(ep.world, view, hide) == frame_lit


# --- shadows ---------------------------------------------------------------------------------------------------


def shadow_and_open_floor(ep: Episode, renderer: Renderer, room: str):
    """A ceiling light of the room, a floor point the room's furniture hides from it (just past a piece's
    far edge, on the line from the light over its top) and an open floor point as far from the light's foot
    on the other side; each checked against the scene."""
    fitting = next(f for f in renderer.rig.fittings if f.emitter.row == renderer.rooms.index[room]
                   and f.emitter.axis == (0.0, 0.0, -1.0))
    lx, ly, lz = fitting.emitter.centre
    polygon = ep.home.room_polygon(room)
    floor_z = ep.home.room(room).floor_height
    pieces = [f for f in ep.home.furniture if f.room == room]
    footprints = [polygon_from_rings(f.footprint) for f in pieces]

    def free(x: float, y: float) -> bool:
        return polygon.buffer(-0.15).contains(Point(x, y)) and not any(fp.buffer(0.03).contains(Point(x, y))
                                                                        for fp in footprints)

    for piece, footprint in sorted(zip(pieces, footprints), key=lambda pf: pf[1].centroid.distance(Point(lx, ly))):
        cx, cy = footprint.centroid.x, footprint.centroid.y
        away = math.atan2(cy - ly, cx - lx)
        edge = next(d for d in np.arange(0.0, 4.0, 0.01)
                    if not footprint.contains(Point(cx + d * math.cos(away), cy + d * math.sin(away))))
        reach = math.hypot(cx - lx, cy - ly) + edge - 0.02  # just inside the far edge, on the top
        top = floor_z + piece.height
        ground = reach * (lz - floor_z) / (lz - top)  # where the line over the top meets the floor
        if ground - reach < 0.12 or footprint.contains(Point(lx, ly)):
            continue
        shadow_d = reach + 0.02 + (ground - reach) / 2
        shadow = (lx + shadow_d * math.cos(away), ly + shadow_d * math.sin(away))
        opposite = (lx - shadow_d * math.cos(away), ly - shadow_d * math.sin(away))
        if free(*shadow) and free(*opposite):
            return fitting, (*shadow, floor_z), (*opposite, floor_z)
    pytest.fail(f"no furniture in room {room} casts a shadow on free floor")


def blocked(renderer: Renderer, point: tuple[float, float, float], light: tuple[float, float, float]) -> bool:
    origin = np.array([point], dtype=np.float32) + np.float32([0.0, 0.0, 0.004])
    towards = np.array([light], dtype=np.float32) - origin
    length = np.linalg.norm(towards, axis=1)
    return bool(renderer.caster.static.occluded(origin, towards / length[:, None], length - 0.01)[0])


def looking_down_at(point: tuple[float, float, float]) -> Viewpoint:
    return Viewpoint(point[0], point[1], point[2] + 1.2, 0.0, -math.pi / 2, 40.0, 160, 90)


def test_the_floor_behind_furniture_seen_from_a_ceiling_light_is_darker_than_open_floor(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)  # 18:30: no daylight left
    living = room_of_type(ep, "LIVING_ROOM")
    set_lights(ep, living, True, mount="ceiling")
    renderer = Renderer(ep.world)
    fitting, shadowed, open_ = shadow_and_open_floor(ep, renderer, living)
    light = fitting.emitter.centre
    assert blocked(renderer, shadowed, light) and not blocked(renderer, open_, light)
    assert math.dist(shadowed[:2], light[:2]) == pytest.approx(math.dist(open_[:2], light[:2]))

    lux, images = [], []
    for point in (shadowed, open_):
        view = looking_down_at(point)
        floor = [i for i, c in enumerate(renderer.scene.codes) if c.kind == "floor" and c.room == living]
        hits = renderer.buffers(ep.world, view).hits
        centre = (view.height // 2) * view.width + view.width // 2
        assert hits.code[centre] in floor
        lux.append(illuminance(renderer, ep, view)[view.height // 2 - 3:view.height // 2 + 3,
                                                   view.width // 2 - 3:view.width // 2 + 3].mean())
        images.append(renderer.image(ep.world, view, NO_CAMERA)[view.height // 2 - 3:view.height // 2 + 3,
                                                                view.width // 2 - 3:view.width // 2 + 3].mean())
    assert lux[0] < 0.8 * lux[1]
    assert images[0] < images[1]


# --- textures --------------------------------------------------------------------------------------------------


def floor_albedo(ep: Episode, room: str, renderer: Renderer) -> np.ndarray:
    """The albedo (M, 3) of the room's floor pixels its camera sees."""
    camera = next(c for c in ep.home.cameras if c.room == room)
    view = small(Viewpoint.of(camera), 480)
    hits = renderer.buffers(ep.world, view, (camera.id,)).hits
    floor = [i for i, c in enumerate(renderer.scene.codes) if c.kind == "floor" and c.room == room]
    albedo = shade.albedo(hits, shade.Palette.of(renderer.scene.codes))
    return albedo[:, np.isin(hits.code, floor)].T


@pytest.mark.parametrize("kind, texture", [("LIVING_ROOM", "wood"), ("BATHROOM", "tile"), ("KITCHEN", "tile")])
def test_floors_are_textured_by_room_and_their_albedo_varies_the_same_way_every_time(house_home, kind, texture):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    room = room_of_type(ep, kind)
    renderer = Renderer(ep.world)
    codes = [c for c in renderer.scene.codes if c.kind == "floor" and c.room == room and c.texture]
    assert {c.texture for c in codes} == {texture}
    albedo = floor_albedo(ep, room, renderer)
    assert len(albedo) > 1000
    flat = np.array(codes[0].rgb, dtype=np.float32)
    luminance = albedo.mean(axis=1)
    assert luminance.std() > 0.01 and not np.allclose(albedo, flat)
    if texture == "tile":
        assert (np.abs(albedo - np.float32(textures.GROUT_RGB)).max(axis=1) < 1e-6).mean() > 0.005  # grout lines
    again = floor_albedo(ep, room, Renderer(ep.world))
    assert again.tobytes() == albedo.tobytes()


@settings(max_examples=80, deadline=None)
@given(u=st.floats(-30, 30), v=st.floats(-30, 30), i=st.integers(-5, 5), j=st.integers(-5, 5))
def test_tiles_repeat_every_tile_and_wood_stays_within_its_tones(u, v, i, j):
    shifted_u = np.array([u, u + i * textures.TILE_M])
    shifted_v = np.array([v, v + j * textures.TILE_M])
    tone, grout = textures.tile(shifted_u, shifted_v)
    if abs(u / textures.TILE_M - round(u / textures.TILE_M)) > 1e-4 and \
            abs(v / textures.TILE_M - round(v / textures.TILE_M)) > 1e-4:  # off a grout line's edge
        assert grout[0] == grout[1]
    assert ((tone > 1 - textures.TILE_TONE_SPREAD) & (tone < 1 + textures.TILE_TONE_SPREAD)).all()
    wood = textures.wood(np.array([u]), np.array([v]))[0]
    low = textures.SEAM_SHADE * (1 - textures.PLANK_TONE_SPREAD / 2) * (1 - textures.GRAIN_CONTRAST)
    assert low - 1e-6 <= wood <= 1 + textures.PLANK_TONE_SPREAD / 2 + 1e-6
    points = np.array([[u, v, 0.0], [u, v, 0.0]], dtype=np.float32)
    first, _ = textures.apply("wood", points, np.array([2, 2]))
    assert first[0] == first[1] == textures.apply("wood", points[:1], np.array([2]))[0][0]


# --- flames, smoke and the same bytes ----------------------------------------------------------------------------


def burning_kitchen(seed: int = 0) -> tuple[Episode, Viewpoint, str]:
    from homeloop.pipeline.houses import house_home

    ep = Episode(house_home(), "handle_smoke_alarm", seed=seed, images=False)
    pan = ep.world.objects_of_class("pan")[0]
    camera = camera_in(ep, pan.placement.room)
    ep.call("clock_wait", seconds=200)
    assert ep.world.module("cooking").pan(pan.id).burning
    return ep, small(Viewpoint.of(camera), 480), camera.id


def flame_layer(ep: Episode, view: Viewpoint, camera: str) -> tuple[np.ndarray, np.ndarray]:
    layers = Renderer(ep.world).buffers(ep.world, view, (camera,)).layers
    assert layers.flame_alpha is not None and layers.flame_rgb is not None
    return layers.flame_alpha.copy(), layers.flame_rgb.copy()


def test_flames_flicker_with_the_time_and_the_seed_and_repeat_for_the_same_ones():
    ep, view, camera = burning_kitchen()
    alpha, rgb = flame_layer(ep, view, camera)
    assert (alpha > 0).sum() > 50
    again = flame_layer(ep, view, camera)
    assert again[0].tobytes() == alpha.tobytes() and again[1].tobytes() == rgb.tobytes()
    ep.call("clock_wait", seconds=1)
    later_alpha, later_rgb = flame_layer(ep, view, camera)
    assert ((later_alpha > 0) != (alpha > 0)).sum() > 0 or not np.allclose(later_rgb, rgb)
    pan = ep.world.objects_of_class("pan")[0]
    shapes = [effects.flame_mesh(0.0, 0.0, 0.9, 0.1, seed, t).vertices for seed, t in
              (("0:" + pan.id, 0.0), ("0:" + pan.id, 0.13), ("1:" + pan.id, 0.0))]
    assert not np.allclose(shapes[0], shapes[1]) and not np.allclose(shapes[0], shapes[2])
    assert np.allclose(shapes[0], effects.flame_mesh(0.0, 0.0, 0.9, 0.1, "0:" + pan.id, 0.0).vertices)


def saturation(pixels: np.ndarray) -> np.ndarray:
    rgb = pixels.astype(float)
    top = rgb.max(axis=-1)
    out: np.ndarray = (top - rgb.min(axis=-1)) / np.maximum(top, 1.0)
    return out


def test_smoke_turns_the_pixels_it_covers_greyer_as_its_density_rises(house_home, monkeypatch):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)  # before the pan burns: no flames
    kitchen = room_of_type(ep, "KITCHEN")
    camera = camera_in(ep, kitchen)
    view = small(Viewpoint.of(camera), 480)
    smoke = ep.world.module("smoke")
    frames, alphas = [], []
    for density in (0.0, 0.25, 0.5, 1.0):
        monkeypatch.setattr(smoke, "room_density", lambda room, d=density: d if room == kitchen else 0.0)
        monkeypatch.setattr(smoke, "densities_at", lambda room, points, d=density: np.full(len(points), d))
        renderer = Renderer(ep.world)
        layers = renderer.buffers(ep.world, view, (camera.id,)).layers
        alphas.append(np.zeros(view.width * view.height) if layers.smoke_alpha is None else layers.smoke_alpha)
        frames.append(renderer.image(ep.world, view, {"camera": camera.id, "privacy": "none"}))
    covered = (alphas[1] > 0.05).reshape(view.height, view.width)
    assert covered.mean() > 0.05
    assert all((alphas[k + 1] >= alphas[k] - 1e-6).all() for k in range(3))
    sat = [saturation(f[covered]).mean() for f in frames]
    assert sat[0] > sat[1] > sat[2] > sat[3]


def test_the_same_seed_and_time_give_the_same_png_bytes_and_another_seed_other_flames():
    ep, view, camera = burning_kitchen()
    record = {"camera": camera, "privacy": "none"}
    first = png(Renderer(ep.world), ep, view, record)
    again_ep, _, _ = burning_kitchen()
    assert png(Renderer(again_ep.world), again_ep, view, record) == first
    image = np.asarray(Image.open(io.BytesIO(first)).convert("RGB"))
    assert image.shape == (view.height, view.width, 3)
    other_ep, _, _ = burning_kitchen(seed=1)
    alpha, rgb = flame_layer(ep, view, camera)
    other_alpha, other_rgb = flame_layer(other_ep, view, camera)
    assert (alpha != other_alpha).any() or (rgb != other_rgb).any()
