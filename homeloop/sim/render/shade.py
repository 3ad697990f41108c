"""From hits and hazard layers to an RGB image (docs/skills.md, "Captures and perception").

Each pixel takes the flat colour of the triangle it sees (its code's albedo),
lit two ways:

- **exposure**: the illuminance of the room the surface is in
  (:meth:`homeloop.sim.dynamics.light.Light.lux`, the same figure perception's
  light gate reads), through a fixed camera exposure
  ``1 - exp(-lux / EXPOSURE_LUX)``: a room below the brightness floor is
  nearly black, a lit one shows plainly. The room is found from the hit point,
  stepped back toward the camera so a wall counts for the room in front of it;
  the sky and the ground take the outdoor illuminance.
- **form**: a soft light from the camera, so faces turned away are darker.

Over that come, in depth order, the water film on wet floors (a blue-grey
tint with a sheen at grazing angles), window glass (a faint tint), the
flames (emissive: not scaled by the exposure) and the smoke layer (grey,
lit by its room). Privacy comes last: ``people_masked`` paints every pixel
of a person in :data:`~homeloop.sim.render.materials.MASK_RGB8`, and a
blocked image is :data:`~homeloop.sim.render.materials.BLOCKED_RGB8`
everywhere. Output is sRGB, 8 bits per channel.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import numpy as np
from PIL import Image

from homeloop.sim.dynamics.light import Light, outdoor_lux
from homeloop.sim.render import materials
from homeloop.sim.render.effects import SMOKE_RGB, WATER_ALPHA, WATER_RGB, WATER_SHEEN, Layers
from homeloop.sim.render.raycast import Hits
from homeloop.sim.render.rooms import RoomGrid
from homeloop.sim.render.scene import Code
from homeloop.sim.world import World

#: Illuminance (lux) at which the fixed exposure reaches 63 % of full white.
EXPOSURE_LUX = 150.0
#: Share of the light that reaches a face whatever its angle to the camera (the rest follows the angle).
AMBIENT_SHARE = 0.45
#: How far a hit point is stepped back toward the camera to find its room (m): past a wall's face.
ROOM_PROBE_M = 0.08
#: Opacity of window glass over what lies behind it.
GLASS_ALPHA = 0.15
#: PNG compression (zlib level): fast, and the same bytes for the same pixels.
PNG_COMPRESS_LEVEL = 3


def exposure(lux: np.ndarray | float) -> np.ndarray:
    """Share of full white a white surface reaches under ``lux``."""
    share: np.ndarray = 1.0 - np.exp(-np.asarray(lux, dtype=np.float32) / np.float32(EXPOSURE_LUX))
    return share


def room_lux(world: World, rooms: RoomGrid) -> tuple[np.ndarray, float]:
    """Illuminance of each room (indexed as the grid's rooms) and outdoors, now."""
    outside = outdoor_lux(world.clock_of_day())
    light = world.running(Light)
    if light is None:
        return np.full(len(rooms.rooms), 500.0, dtype=np.float32), outside
    return np.array([light.lux(r) for r in rooms.rooms], dtype=np.float32), outside


@dataclass(frozen=True)
class Palette:
    """Per code of the scene: its colour, and whether it is a person's or the ground outside."""

    rgb: np.ndarray  # (C, 3) float32
    person: np.ndarray  # (C,) bool
    ground: np.ndarray  # (C,) bool

    @classmethod
    def of(cls, codes: list[Code]) -> "Palette":
        return cls(np.array([c.rgb for c in codes], dtype=np.float32).reshape(-1, 3),
                   np.array([c.kind == "person" for c in codes], dtype=bool),
                   np.array([c.kind == "ground" for c in codes], dtype=bool))


def shade(world: World, hits: Hits, layers: Layers, palette: Palette, rooms: RoomGrid, masked: bool) -> np.ndarray:
    """The image of one frame (H, W, 3) uint8 (see the module docstring)."""
    view = hits.view
    rgb_of_code = palette.rgb
    lux, outside = room_lux(world, rooms)
    camera_room = int(rooms.lookup(np.array([view.x]), np.array([view.y]))[0])
    inside = float(lux[camera_room]) if camera_room >= 0 else outside
    exposed = exposure(_pixel_lux(hits, rooms, palette, lux, outside, inside))
    seen = hits.code >= 0
    light = exposed * np.where(seen, AMBIENT_SHARE + (1 - AMBIENT_SHARE) * hits.facing, np.float32(1.0))
    albedo = np.vstack([rgb_of_code, np.array(materials.SKY, np.float32)])  # code -1 is the sky
    colour = albedo[hits.code] * light[:, None]
    if layers.wet is not None:
        _water(colour, hits, layers.wet, exposed)
    glass = np.flatnonzero(hits.glass >= 0)
    if len(glass):
        tint = rgb_of_code[hits.glass[glass]] * np.float32(exposure(inside))
        colour[glass] = (1 - GLASS_ALPHA) * colour[glass] + GLASS_ALPHA * tint
    if layers.flame_alpha is not None and layers.flame_rgb is not None:
        lit = np.flatnonzero(layers.flame_alpha > 0)
        a = layers.flame_alpha[lit, None]
        colour[lit] = (1 - a) * colour[lit] + a * layers.flame_rgb[lit]
    if layers.smoke_alpha is not None and layers.smoke_rooms is not None:
        smoke_lux = np.where(layers.smoke_rooms >= 0, lux[np.maximum(layers.smoke_rooms, 0)], np.float32(inside))
        a = layers.smoke_alpha[:, None]
        colour *= 1 - a
        if layers.flame_alpha is not None:  # flames outshine the room: keep their hue where they clip
            _clip_hue(colour, np.flatnonzero(layers.flame_alpha > 0))
        colour += a * (np.array(SMOKE_RGB, np.float32) * exposure(smoke_lux)[:, None])
    elif layers.flame_alpha is not None:
        _clip_hue(colour, np.flatnonzero(layers.flame_alpha > 0))
    image = _to_srgb8(colour)
    if masked:
        image[np.append(palette.person, False)[hits.code]] = materials.MASK_RGB8
    return image.reshape(view.height, view.width, 3)


def _pixel_lux(hits: Hits, rooms: RoomGrid, palette: Palette, lux: np.ndarray, outside: float,
               inside: float) -> np.ndarray:
    """The illuminance lighting each pixel: its hit point's room (stepped back toward the camera;
    the camera's room for a point in no room), outdoors for the sky and the ground. Worked out on
    every second pixel each way and spread (a room's edge may move by a pixel)."""
    view = hits.view
    h, w = view.height, view.width
    grid = (np.arange(0, h, 2)[:, None] * w + np.arange(0, w, 2)[None, :]).ravel()
    depth = hits.depth[grid]
    reach = np.where(np.isfinite(depth), depth - ROOM_PROBE_M, 0.0).astype(np.float32)
    d = hits.directions[grid]
    room = rooms.lookup(view.x + d[:, 0] * reach, view.y + d[:, 1] * reach)
    ground = np.append(palette.ground, True)[hits.code[grid]]  # the sky counts as outdoors
    value = np.where(room >= 0, lux[np.maximum(room, 0)], np.float32(inside))
    value = np.where(ground, np.float32(outside), value).reshape((h + 1) // 2, (w + 1) // 2)
    return np.repeat(np.repeat(value, 2, axis=0), 2, axis=1)[:h, :w].ravel()


def _clip_hue(colour: np.ndarray, idx: np.ndarray) -> None:
    """Scale pixels brighter than white down to it as a whole, so an overexposed flame stays orange
    instead of turning yellow-white channel by channel."""
    peak = colour[idx].max(axis=1, keepdims=True)
    colour[idx] /= np.maximum(peak, 1.0)


def _water(colour: np.ndarray, hits: Hits, wet: np.ndarray, exposed: np.ndarray) -> None:
    """The film over wet floor pixels: tinted, with a sheen that grows at grazing angles."""
    idx = np.flatnonzero(wet)
    grazing = (1.0 - np.abs(hits.directions[idx, 2])) ** 2
    film = np.array(WATER_RGB, np.float32) * exposed[idx, None]
    sheen = (WATER_SHEEN * grazing * exposed[idx])[:, None]
    colour[idx] = (1 - WATER_ALPHA) * colour[idx] + WATER_ALPHA * film + sheen


#: Linear light (quantised to 12 bits) to 8-bit sRGB.
_SRGB_LEVELS = 4096
_SRGB_TABLE = np.round(255 * np.where(
    (levels := np.linspace(0.0, 1.0, _SRGB_LEVELS)) <= 0.0031308, 12.92 * levels,
    1.055 * np.power(levels, 1 / 2.4) - 0.055)).astype(np.uint8)


def _to_srgb8(linear: np.ndarray) -> np.ndarray:
    """8-bit sRGB of linear light (the array is used up as scratch)."""
    np.clip(linear, 0.0, 1.0, out=linear)
    linear *= _SRGB_LEVELS - 1
    linear += 0.5
    return _SRGB_TABLE[linear.astype(np.uint16)]


def blocked_image(width: int, height: int) -> np.ndarray:
    """A blocked camera's frame: one colour everywhere."""
    return np.broadcast_to(np.array(materials.BLOCKED_RGB8, np.uint8), (height, width, 3)).copy()


def png_base64(image: np.ndarray) -> str:
    """The image as a PNG, base64-encoded (the form captures return)."""
    buffer = io.BytesIO()
    Image.fromarray(image, "RGB").save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
