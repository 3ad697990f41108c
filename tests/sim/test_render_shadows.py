"""Shadows come out smooth (homeloop/sim/render/lighting.py): no grain or blotches a viewer could
read as smoke or soot, and a penumbra that rises steadily from shadow to light.

The frames are the house's dome cameras at the start of the fall false alarm; the regions looked at
are worked out from each frame's id buffer (pixels well inside one flat surface), not placed by hand.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from homeloop.sim.episode import Episode
from homeloop.sim.render import shade
from homeloop.sim.render.lighting import FrameLight, _blur_same_surface, room_lux
from homeloop.sim.render.renderer import Renderer
from homeloop.sim.visibility import Viewpoint

#: A pixel standing out from every pixel two away by more than this share is a bump.
BUMP_SHARE = 0.03
#: Most bumps per pixel well inside a flat surface (grain left tens of times more).
MOST_BUMPS = 1e-4


def inside_one_surface(surface: np.ndarray, reach: int) -> np.ndarray:
    """The pixels (H, W) whose every neighbour up to ``reach`` away sees the same flat surface."""
    h, w = surface.shape
    padded = np.pad(surface, reach, constant_values=-2)
    out = surface >= 0
    for dy in range(2 * reach + 1):
        for dx in range(2 * reach + 1):
            out &= padded[dy:dy + h, dx:dx + w] == surface
    return out


def bumps(lux: np.ndarray) -> np.ndarray:
    """The pixels brighter than every pixel on the ring two away, or darker than every one of them,
    by more than :data:`BUMP_SHARE`: a speck or blotch (a smooth shading or a penumbra has none)."""
    h, w = lux.shape
    padded = np.pad(lux, 2, mode="edge")
    ring = [padded[2 + dy:2 + dy + h, 2 + dx:2 + dx + w] for dy in range(-2, 3) for dx in range(-2, 3)
            if max(abs(dy), abs(dx)) == 2]
    out: np.ndarray = (lux > np.max(ring, axis=0) * (1 + BUMP_SHARE)) | (lux < np.min(ring, axis=0) * (1 - BUMP_SHARE))
    return out


def test_flat_surfaces_in_light_and_shadow_carry_no_grain_or_blotches(house_home):
    ep = Episode(house_home, "fall_false_alarm", seed=0, images=False)
    renderer = Renderer(ep.world)
    lux_of, outside = room_lux(ep.world, renderer.rooms)
    ground = shade.Palette.of(renderer.scene.codes).ground
    inside, found, shadowed = 0, 0, 0
    for camera in (c for c in ep.home.cameras if c.agent_visible):
        v = Viewpoint.of(camera)
        view = Viewpoint(v.x, v.y, v.z, v.yaw, v.pitch, v.hfov_deg, 640, 360)
        frame = renderer.buffers(ep.world, view, (camera.id,))
        light = FrameLight(renderer.rig, renderer.rig.table(ep.world, lux_of, outside), frame.hits, renderer.caster,
                           frame.hide, ground, ep.world.seed)
        lux = light.illuminance().reshape(view.height, view.width)
        flat = inside_one_surface(frame.hits.surface.reshape(view.height, view.width), 4)
        inside += int(flat.sum())
        found += int((bumps(lux) & flat).sum())
        # the frame has shadows to look at: light varies across some surface by more than its shading
        shadowed += int(np.any(lux[flat] < 0.5 * np.median(lux[flat])))
    assert inside > 0 and shadowed  # lit surfaces with shadows on them were looked at
    assert found <= MOST_BUMPS * inside


@settings(max_examples=40, deadline=None)
@given(st.integers(6, 30), st.integers(6, 30), st.floats(-0.8, 0.8), st.floats(0.0, 1.0), st.integers(1, 5))
def test_a_shadow_s_edge_becomes_a_penumbra_rising_steadily_and_stays_on_its_surface(h, w, slope, offset, split):
    ys, xs = np.mgrid[0:h, 0:w]
    edge = offset * w + slope * (ys - h / 2)
    free = (xs >= edge).astype(np.float32)  # a hard shadow on the left, light on the right
    surface = np.where(ys < split, 7, 3).astype(np.int64)  # a second surface along the top
    lit = np.ones((h, w), dtype=bool)
    out = _blur_same_surface(free, lit, surface)
    assert np.all((out >= 0) & (out <= 1))
    lower = out[split:]
    assert np.all(np.diff(lower, axis=1) >= -1e-6)  # from shadow to light, never back
    # far from the edge on its own surface, a sample keeps its verdict
    far = (np.abs(xs - edge) > 4)[split:]
    assert np.allclose(lower[far], free[split:][far])
    # a surface in full light beside the shadowed one gets none of its shadow
    bright = np.ones((h, w), dtype=np.float32)
    bright[split:] = 0.0
    top = _blur_same_surface(bright, lit, surface)
    assert np.all(top[:split] == 1.0) and np.all(top[split:] == 0.0)
