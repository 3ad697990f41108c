"""From hits, light and hazard layers to an RGB image (docs/skills.md, "Captures and perception").

Each pixel takes the colour of the triangle it sees (its code's albedo), with
the code's procedural texture over it where it names one
(:mod:`homeloop.sim.render.textures`: wood, tiles, fabric), lit by the
illuminance at its surface (:mod:`homeloop.sim.render.lighting`: the room's
light as :meth:`homeloop.sim.dynamics.light.Light.lux` gives it, spread by
the room's sources with their shadows, over an ambient share), through a
fixed camera exposure ``1 - exp(-lux / EXPOSURE_LUX)``: a room below the
brightness floor is dark (never quite black), a lit one shows plainly; the
sky takes the outdoor illuminance.

Over that come, in depth order, the water film on wet floors (a blue-grey
tint that mirrors what stands over it, more so at grazing angles: one bounce
ray each, with Schlick's Fresnel term), window glass (a faint tint), the
flames (emissive: not scaled by the exposure) and the smoke (grey, lit by its
room, more opaque and so greyer where it is denser). Privacy comes last:
``people_masked`` paints every pixel of a person in
:data:`~homeloop.sim.render.materials.MASK_RGB8`, and a blocked image is
:data:`~homeloop.sim.render.materials.BLOCKED_RGB8` everywhere. Output is
sRGB, 8 bits per channel.

Shading reads the frame's hits and never changes them: what each pixel
shows (the id buffer) and so what perception reports are the same whatever
the light. A dome camera's frames keep their surface colours
(:class:`Surfaces`): a pixel that sees what it saw keeps its colour.
"""

from __future__ import annotations

import base64
import struct
import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from homeloop.sim.render import materials, textures
from homeloop.sim.render.effects import SMOKE_RGB, WATER_ALPHA, WATER_RGB, WATER_SHEEN, Layers
from homeloop.sim.render.raycast import Hits, PoseCache
from homeloop.sim.render.scene import Code

#: Illuminance (lux) at which the fixed exposure reaches 63 % of full white.
EXPOSURE_LUX = 150.0
#: Opacity of window glass over what lies behind it.
GLASS_ALPHA = 0.15
#: Water's reflectance seen square on (Schlick's F0 for water, n = 1.33), and how far above the
#: film a reflected ray starts (m).
WATER_F0 = 0.02
WATER_LIFT_M = 0.002
#: PNG compression (zlib level): fast, and the same bytes for the same pixels.
PNG_COMPRESS_LEVEL = 3
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: What a reflected ray meets first: distance and code per ray (the caster's bounce).
Bounce = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def exposure(lux: np.ndarray | float) -> np.ndarray:
    """Share of full white a white surface reaches under ``lux``."""
    share: np.ndarray = 1.0 - np.exp(-np.asarray(lux, dtype=np.float32) / np.float32(EXPOSURE_LUX))
    return share


@dataclass(frozen=True)
class Palette:
    """Per code of the scene: its colour, its texture, and whether it is a person's or the ground outside."""

    rgb: np.ndarray  # (C, 3) float32
    person: np.ndarray  # (C,) bool
    ground: np.ndarray  # (C,) bool
    texture: np.ndarray  # (C,) index into ("",) + textures.TEXTURES

    @classmethod
    def of(cls, codes: list[Code]) -> "Palette":
        kinds = ("", *textures.TEXTURES)
        return cls(np.array([c.rgb for c in codes], dtype=np.float32).reshape(-1, 3),
                   np.array([c.kind == "person" for c in codes], dtype=bool),
                   np.array([c.kind == "ground" for c in codes], dtype=bool),
                   np.array([kinds.index(c.texture) if c.texture in kinds else 0 for c in codes], dtype=np.int8))


@dataclass(frozen=True)
class Lit:
    """A frame's light: the illuminance at every pixel's surface, of every room and outdoors, and of
    the camera's own room (lux)."""

    pixels: np.ndarray  # (N,)
    rooms: np.ndarray  # (R,)
    outside: float
    inside: float


def shade(hits: Hits, layers: Layers, palette: Palette, lit: Lit, bounce: Bounce, masked: bool,
          surfaces: PoseCache[Surfaces] | None = None) -> np.ndarray:
    """The image of one frame (H, W, 3) uint8 (see the module docstring); ``surfaces`` keeps the
    surface colours for the next frame from the same pose. The colour is worked out a channel at a
    time (3 x N), so every step runs over whole contiguous rows."""
    view = hits.view
    exposed = exposure(lit.pixels)
    colour = albedo(hits, palette, surfaces) * exposed
    if layers.wet is not None:
        _water(colour, hits, layers.wet, exposed, palette, bounce, lit.outside)
    glass = np.flatnonzero(hits.glass >= 0)
    if len(glass):
        tint = palette.rgb[hits.glass[glass]] * np.float32(exposure(lit.inside))
        colour[:, glass] = ((1 - GLASS_ALPHA) * colour[:, glass].T + GLASS_ALPHA * tint).T
    if layers.flame_alpha is not None and layers.flame_rgb is not None:
        flame = np.flatnonzero(layers.flame_alpha > 0)
        a = layers.flame_alpha[flame, None]
        colour[:, flame] = ((1 - a) * colour[:, flame].T + a * layers.flame_rgb[flame]).T
    if layers.smoke_alpha is not None and layers.smoke_rooms is not None:
        rooms = np.where(layers.smoke_rooms >= 0, layers.smoke_rooms, len(lit.rooms))  # past the rooms: the camera's
        smoke_light = np.take(exposure(np.append(lit.rooms, np.float32(lit.inside))), rooms)
        a = layers.smoke_alpha
        colour *= 1 - a
        if layers.flame_alpha is not None:  # flames outshine the room: keep their hue where they clip
            _clip_hue(colour, np.flatnonzero(layers.flame_alpha > 0))
        for c, grey in enumerate(np.array(SMOKE_RGB, np.float32)):
            colour[c] += a * (grey * smoke_light)
    elif layers.flame_alpha is not None:
        _clip_hue(colour, np.flatnonzero(layers.flame_alpha > 0))
    image = _to_srgb8(colour)
    if masked:
        image[np.append(palette.person, False)[hits.code]] = materials.MASK_RGB8
    return image.reshape(view.height, view.width, 3)


@dataclass(frozen=True)
class Surfaces:
    """A frame's surface colours, kept for the next frame from the same pose: a pixel that sees
    what it saw then (the same code at the same depth) keeps its colour."""

    palette: Palette
    code: np.ndarray
    depth: np.ndarray
    albedo: np.ndarray  # (3, N)


def albedo(hits: Hits, palette: Palette, cache: PoseCache[Surfaces] | None = None) -> np.ndarray:
    """Each pixel's surface colour, a channel at a time (3 x N, linear): its code's, textured where
    the code names a texture; the sky where the ray leaves the home. ``cache`` keeps it for the
    next frame."""
    last = cache.get(hits.view) if cache is not None else None
    if last is not None and last.palette is palette:
        changed = np.flatnonzero((hits.code != last.code) | (hits.depth != last.depth))
        out = last.albedo.copy()
        if len(changed):
            out[:, changed] = _albedo_of(hits, palette, changed)
    else:
        out = _albedo_of(hits, palette, np.arange(len(hits.code)))
    if cache is not None:
        cache.put(hits.view, Surfaces(palette, hits.code, hits.depth, out))
    return out


def _albedo_of(hits: Hits, palette: Palette, index: np.ndarray) -> np.ndarray:
    """:func:`albedo` of the pixels ``index`` (3 x M)."""
    table = np.vstack([palette.rgb, np.array(materials.SKY, np.float32)]).T.copy()  # code -1 is the sky
    # ``index`` is sorted and unique: as long as the frame, it is every pixel in order. The codes as
    # numpy's own index type once, which every lookup below would otherwise convert to again.
    code = (hits.code if len(index) == len(hits.code) else hits.code[index]).astype(np.intp)
    out = np.empty((3, len(code)), dtype=np.float32)
    for c in range(3):  # a channel at a time: contiguous rows, and shading multiplies them so
        np.take(table[c], code, out=out[c])
    if not palette.texture.any():
        return out
    kind = np.take(np.append(palette.texture, 0), code)
    tone = np.ones(len(code), dtype=np.float32)  # each pixel's texture brightness (1: untextured)
    grout: list[np.ndarray] = []
    for k, name in enumerate(textures.TEXTURES, start=1):
        mine = np.flatnonzero(kind == k)
        if len(mine):
            tone[mine], lines = textures.apply(name, hits.points(index[mine]), hits.axis(index[mine]))
            if lines is not None:
                grout.append(mine[lines])
    out *= tone
    for pixels in grout:
        out[:, pixels] = np.array(textures.GROUT_RGB, np.float32)[:, None]
    return out


def _clip_hue(colour: np.ndarray, idx: np.ndarray) -> None:
    """Scale pixels (columns of the 3 x N colour) brighter than white down to it as a whole, so an
    overexposed flame stays orange instead of turning yellow-white channel by channel."""
    block = colour[:, idx]
    block /= np.maximum(block.max(axis=0), 1.0)
    colour[:, idx] = block


def _water(colour: np.ndarray, hits: Hits, wet: np.ndarray, exposed: np.ndarray, palette: Palette, bounce: Bounce,
           outside: float) -> None:
    """The film over wet floor pixels (columns of the 3 x N colour): tinted, and mirroring what its
    bounce ray meets (the sky's colour where it leaves the home), more so at grazing angles
    (Schlick's Fresnel term)."""
    idx = np.flatnonzero(wet)
    d = hits.directions[idx]
    cos = np.abs(d[:, 2])
    mirrored = d * np.array([1.0, 1.0, -1.0], dtype=np.float32)
    origins = hits.points(idx) + np.array([0.0, 0.0, WATER_LIFT_M], dtype=np.float32)
    _, code = bounce(origins, mirrored)
    seen = np.vstack([palette.rgb, np.array(materials.SKY, np.float32)])[code]
    light = np.where(code >= 0, exposed[idx], exposure(outside))
    fresnel = WATER_F0 + (1 - WATER_F0) * (1.0 - cos) ** 5
    film = np.array(WATER_RGB, np.float32) * exposed[idx, None]
    sheen = (WATER_SHEEN * (1.0 - cos) ** 2 * exposed[idx])[:, None]
    under = (1 - WATER_ALPHA) * colour[:, idx].T + WATER_ALPHA * film + sheen
    colour[:, idx] = ((1 - fresnel[:, None]) * under + fresnel[:, None] * seen * light[:, None]).T


#: Linear light (quantised to 12 bits) to 8-bit sRGB.
_SRGB_LEVELS = 4096
_SRGB_TABLE = np.round(255 * np.where(
    (levels := np.linspace(0.0, 1.0, _SRGB_LEVELS)) <= 0.0031308, 12.92 * levels,
    1.055 * np.power(levels, 1 / 2.4) - 0.055)).astype(np.uint8)


def _to_srgb8(linear: np.ndarray) -> np.ndarray:
    """8-bit sRGB (N x 3) of linear light given a channel at a time (3 x N; the array is used up as
    scratch)."""
    linear *= _SRGB_LEVELS - 1
    linear += 0.5
    np.clip(linear, 0.0, _SRGB_LEVELS - 0.5, out=linear)
    out = np.empty((linear.shape[1], 3), dtype=np.uint8)
    for k in range(3):  # a channel at a time: a contiguous index row takes about half the time of the whole
        out[:, k] = np.take(_SRGB_TABLE, linear[k].astype(np.intp))
    return out


def blocked_image(width: int, height: int) -> np.ndarray:
    """A blocked camera's frame: one colour everywhere."""
    return np.broadcast_to(np.array(materials.BLOCKED_RGB8, np.uint8), (height, width, 3)).copy()


def png_bytes(image: np.ndarray) -> bytes:
    """An RGB image (H, W, 3) uint8 as PNG, every row unfiltered (filter type 0) and the whole
    deflated at :data:`PNG_COMPRESS_LEVEL`: flat shading and fine procedural texture deflate
    smaller and faster so than with adaptive per-row filters."""
    height, width = image.shape[:2]
    rows = np.zeros((height, width * 3 + 1), dtype=np.uint8)  # each row's first byte: its filter type
    rows[:, 1:] = image.reshape(height, width * 3)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, deflate, no interlace
    return (PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), PNG_COMPRESS_LEVEL))
            + chunk(b"IEND", b""))


def png_base64(image: np.ndarray) -> str:
    """The image as a PNG (:func:`png_bytes`), base64-encoded (the form captures return)."""
    return base64.b64encode(png_bytes(image)).decode("ascii")
