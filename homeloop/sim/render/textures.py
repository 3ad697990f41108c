"""Procedural textures: albedo that varies over a surface, without texture coordinates.

A triangle's code may name a texture (:attr:`homeloop.sim.render.scene.Code.texture`):
``wood`` for most floors and wooden furniture, ``tile`` for the floors of wet
rooms (:func:`floor_texture`), ``fabric`` for upholstery. The pattern is a function of the home point
a pixel's ray hits and of the surface's normal: it is laid in the plane the
normal faces most (a floor in x-y, a wall facing x in y-z), so it needs no UVs
and stays put on the surface as the camera moves.

- **wood**: planks :data:`PLANK_WIDTH_M` wide and :data:`PLANK_LENGTH_M` long
  running along the plane's first axis, each row's joints staggered, each
  plank a tone of its own, with wavering grain along it and a dark seam
  round it;
- **tile**: square tiles :data:`TILE_M` wide in grout lines :data:`GROUT_M`
  wide, each tile a slightly different tone;
- **fabric**: a weave of two crossing sets of threads :data:`WEAVE_M` apart
  over a slow mottle.

Everything is deterministic: tones come from integer hashes of a plank's or
tile's indices, never from a random state, so the same point always gets the
same colour.
"""

from __future__ import annotations

import numpy as np

#: The textures a code may name ("" is none).
TEXTURES = ("wood", "tile", "fabric")

#: Floors by room type (Swiss Dwellings area subtype; homeloop/catalog/rooms.yaml): tiles where
#: water is used (bathrooms, the laundry, kitchens), bare concrete in a garage; wood elsewhere
#: indoors. Outdoor floors keep their flat paving colour.
TILED_ROOM_TYPES = frozenset({"BATHROOM", "WASH_AND_DRY_ROOM", "KITCHEN", "KITCHEN_DINING"})
BARE_ROOM_TYPES = frozenset({"GARAGE"})

#: Wood: plank width and length (m), the seam between planks (m), and how far plank tones spread.
PLANK_WIDTH_M = 0.14
PLANK_LENGTH_M = 1.2
SEAM_M = 0.004
SEAM_SHADE = 0.55
PLANK_TONE_SPREAD = 0.22
#: Wood grain: lines per metre across the plank, their contrast, and how much they waver.
GRAIN_PER_M = 9.0
GRAIN_CONTRAST = 0.10
GRAIN_WAVER = 0.35
#: Tiles: size and grout width (m), the grout's colour (linear RGB), how far tile tones spread.
TILE_M = 0.30
GROUT_M = 0.006
GROUT_RGB = (0.62, 0.62, 0.60)
TILE_TONE_SPREAD = 0.08
#: Fabric: thread spacing (m), the weave's contrast, and the mottle's size (m) and contrast.
WEAVE_M = 0.008
WEAVE_CONTRAST = 0.06
MOTTLE_M = 0.25
MOTTLE_CONTRAST = 0.10


def floor_texture(room_type: str, outdoor: bool) -> str:
    """The texture of a room's floor (see :data:`TILED_ROOM_TYPES`)."""
    if outdoor or room_type in BARE_ROOM_TYPES:
        return ""
    return "tile" if room_type in TILED_ROOM_TYPES else "wood"


def apply(kind: str, points: np.ndarray, axis: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Texture ``kind`` at surface points (M, 3): a brightness factor for each point's albedo (M,),
    and which points take the grout's colour instead (tiles; None for other textures). ``axis``:
    the home axis (0, 1, 2) each point's surface normal is nearest to. A factor of 1 for "" or a
    texture this module does not know."""
    if not len(points) or kind not in TEXTURES:
        return np.ones(len(points), dtype=np.float32), None
    u, v = plane_coords(points, axis)
    if kind == "wood":
        return wood(u, v), None
    if kind == "tile":
        return tile(u, v)
    return fabric(u, v), None


def plane_coords(points: np.ndarray, axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates (m) of each point in the home plane across its normal's ``axis``: (x, y) on a
    floor, (y, z) on a wall facing x, (x, z) on a wall facing y."""
    x, y, z = points[:, 0], points[:, 1], points[:, 2]
    u = np.where(axis == 0, y, x)
    v = np.where(axis == 2, y, z)
    return u.astype(np.float32), v.astype(np.float32)


def wood(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Brightness factor of wooden planks running along ``u`` (see the module docstring)."""
    row = np.floor(v / PLANK_WIDTH_M).astype(np.int64)
    shift = unit_hash(row, np.zeros_like(row), 1) * PLANK_LENGTH_M  # each row's joints elsewhere
    along = (u + shift) / PLANK_LENGTH_M
    col = np.floor(along).astype(np.int64)
    tone = 1.0 + PLANK_TONE_SPREAD * (unit_hash(row, col, 2) - 0.5)
    phase = unit_hash(row, col, 3) * 2 * np.pi
    waver = GRAIN_WAVER * np.sin(u * 2.3 + phase) + 0.15 * np.sin(u * 7.1 + 2 * phase)
    grain = 1.0 - GRAIN_CONTRAST * (0.5 + 0.5 * np.sin(2 * np.pi * (v * GRAIN_PER_M + waver) + phase)) ** 3
    across = v / PLANK_WIDTH_M - row
    seam = (across < SEAM_M / PLANK_WIDTH_M) | ((along - col) < SEAM_M / PLANK_LENGTH_M)
    out: np.ndarray = (tone * grain * np.where(seam, SEAM_SHADE, 1.0)).astype(np.float32)
    return out


def tile(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Brightness factor of each tile, and whether the point lies in a grout line."""
    cu, cv = np.floor(u / TILE_M), np.floor(v / TILE_M)
    grout = ((u / TILE_M - cu) < GROUT_M / TILE_M) | ((v / TILE_M - cv) < GROUT_M / TILE_M)
    tone = 1.0 + TILE_TONE_SPREAD * (unit_hash(cu.astype(np.int64), cv.astype(np.int64), 4) - 0.5)
    return tone.astype(np.float32), grout


def fabric(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Brightness factor of a woven fabric: crossing threads over a slow mottle."""
    weave = np.sin(np.pi * u / WEAVE_M) * np.sin(np.pi * v / WEAVE_M)
    mottle = value_noise(u / MOTTLE_M, v / MOTTLE_M, 5) - 0.5
    out: np.ndarray = (1.0 + WEAVE_CONTRAST * weave + MOTTLE_CONTRAST * mottle).astype(np.float32)
    return out


def unit_hash(a: np.ndarray, b: np.ndarray, salt: int) -> np.ndarray:
    """A number in [0, 1) for each pair of integers, the same every time (an integer mix of the pair)."""
    h = (a.astype(np.uint64) * np.uint64(0x9E3779B1)) ^ (b.astype(np.uint64) * np.uint64(0x85EBCA77))
    h ^= np.uint64(salt) * np.uint64(0xC2B2AE3D)
    h &= np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    h = (h * np.uint64(0x2C1B3C6D)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(12)
    h = (h * np.uint64(0x297A2D39)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    out: np.ndarray = h.astype(np.float64) / 2.0 ** 32
    return out


def value_noise(x: np.ndarray, y: np.ndarray, salt: int) -> np.ndarray:
    """Smooth noise in [0, 1): hashed values on the integer lattice, blended smoothly between."""
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = x - x0, y - y0
    sx, sy = fx * fx * (3 - 2 * fx), fy * fy * (3 - 2 * fy)
    i, j = x0.astype(np.int64), y0.astype(np.int64)
    a, b = unit_hash(i, j, salt), unit_hash(i + 1, j, salt)
    c, d = unit_hash(i, j + 1, salt), unit_hash(i + 1, j + 1, salt)
    out: np.ndarray = (a + (b - a) * sx) * (1 - sy) + (c + (d - c) * sx) * sy
    return out
