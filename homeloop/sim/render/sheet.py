"""A contact sheet: every camera an agent may use in a home, in one image (docs/skills.md).

:func:`render_sheet` renders, in one world (the home as built, or a task's
scenario some seconds after its wake, as :mod:`homeloop.sim.render.still`
makes it), each camera :func:`sheet_cameras` lists: the dome cameras the
home shows the agent that answer at that moment, in the home file's order
(the cameras service's list, so a scenario's withheld cameras are absent),
then the robot's head camera when the task places a robot. Each becomes a
tile of the same size, rendered at that size with the camera's horizontal
field of view, so a tile is pixel-equal to :func:`~homeloop.sim.render.still.render_still`
of that camera at that size.

The tiles fill a grid row by row, :func:`grid` columns wide; under each tile
a label band names the camera and its room. The sheet is ``columns × tile
width`` by ``rows × (tile height + band)`` pixels, and the cells after the
last camera stay :data:`EMPTY_RGB`. Nothing here reads a clock or draws a
random number: the same home, task, time and seed give the same bytes.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from homeloop.core.errors import HomeLoopError
from homeloop.core.home import Home
from homeloop.core.visuals.library import VisualLibrary
from homeloop.sim.devices import readings
from homeloop.sim.render.still import ROBOT, camera_view, still_world
from homeloop.sim.world import World

#: The default size of each tile (width, height): a 16:9 thumbnail of a dome camera.
TILE = (320, 180)
#: Colours of the label band, its text, and the cells no camera fills.
BAND_RGB = (24, 24, 24)
TEXT_RGB = (240, 240, 240)
EMPTY_RGB = (64, 64, 64)
#: Space left of a label and above and below its text (pixels).
LABEL_PAD_PX = 4
#: PNG compression (zlib level): the same bytes for the same pixels.
PNG_COMPRESS_LEVEL = 6


class NoCameras(HomeLoopError):
    """A home (in a task's scenario, if any) with no camera the agent may use."""


@dataclass(frozen=True)
class Tile:
    """One camera's place on the sheet: its frame's box (left, top, right, bottom; the label band lies
    below it) and the label the band shows."""

    camera: str
    label: str
    box: tuple[int, int, int, int]


@dataclass
class Sheet:
    """A contact sheet and where each camera lies on it."""

    image: np.ndarray  # (H, W, 3) uint8
    tiles: list[Tile]
    columns: int
    rows: int
    t: float  # seconds after the wake event (0 without a task)

    def png(self) -> bytes:
        """The sheet as PNG bytes."""
        return png_bytes(self.image)


def render_sheet(home: Home, *, task: str | None = None, at: float = 0.0, seed: int = 0, robot: str | None = None,
                 privacy: bool = True, tile: tuple[int, int] = TILE, visuals: VisualLibrary | None = None) -> Sheet:
    """Every agent camera of ``home`` (see the module docstring), each ``tile`` (width, height)
    pixels, drawing the build's own assets of ``visuals``; :class:`NoCameras` when there is none."""
    from homeloop.sim.render.renderer import Renderer

    world, t = still_world(home, task, at, seed, robot, visuals)
    cameras = sheet_cameras(world)
    if not cameras:
        where = f" in the scenario of {task}" if task is not None else ""
        why = (f"its {len(home.cameras)} camera(s) are for evaluation only or offline" if home.cameras
               else "its home file lists no cameras")
        raise NoCameras(f"home {home.home_id} has no camera an agent may use{where}: {why}")
    renderer = Renderer(world)
    frames = [camera_view(renderer, world, camera, privacy=privacy, size=tile) for camera, _ in cameras]
    image, tiles = compose(frames, cameras)
    columns, rows = grid(len(cameras))
    return Sheet(image, tiles, columns, rows, t)


def sheet_cameras(world: World) -> list[tuple[str, str]]:
    """(camera id, label) of each camera the agent may use now: the dome cameras shown to the agent
    that answer, in the home file's order (as the cameras service lists them), then the robot's head
    camera if a robot is placed. A label is the id and the room's name."""
    rooms = {r.id: r.name for r in world.home.rooms}
    out = []
    for camera in world.home.cameras:
        device = world.devices.get(camera.id)  # offline or withheld: the cameras service leaves it out too
        if camera.agent_visible and (device is None or bool(readings(device).get("online", True))):
            out.append((camera.id, f"{camera.id} ({rooms.get(camera.room, camera.room)})"))
    if world.robot is not None:
        out.append((ROBOT, f"{ROBOT} ({rooms.get(world.robot.room, world.robot.room)})"))
    return out


def grid(count: int) -> tuple[int, int]:
    """(columns, rows) for ``count`` tiles: the smallest square grid's columns, and as few rows as hold them."""
    columns = max(1, math.ceil(math.sqrt(count)))
    return columns, max(1, math.ceil(count / columns))


def band_height(tile_height: int) -> int:
    """The label band's height under a tile: its text grows with the tile."""
    return label_font_px(tile_height) + 2 * LABEL_PAD_PX


def label_font_px(tile_height: int) -> int:
    """The label's font size (pixels): legible on a small tile, in proportion on a large one."""
    return max(10, tile_height // 15)


def compose(frames: list[np.ndarray], cameras: list[tuple[str, str]]) -> tuple[np.ndarray, list[Tile]]:
    """Lay equal-sized ``frames`` (one or more) out on the grid, each over a band showing the label of
    its camera (``cameras``: (id, label), as :func:`sheet_cameras` gives them)."""
    height, width = frames[0].shape[:2]
    band = band_height(height)
    columns, rows = grid(len(frames))
    sheet = np.empty((rows * (height + band), columns * width, 3), dtype=np.uint8)
    sheet[:] = EMPTY_RGB
    tiles = []
    for i, (frame, (camera, label)) in enumerate(zip(frames, cameras, strict=True)):
        left, top = (i % columns) * width, (i // columns) * (height + band)
        sheet[top:top + height, left:left + width] = frame
        sheet[top + height:top + height + band, left:left + width] = label_band(label, width, height)
        tiles.append(Tile(camera, label, (left, top, left + width, top + height)))
    return sheet, tiles


def label_band(label: str, width: int, tile_height: int) -> np.ndarray:
    """The band under a tile (band height × ``width`` × 3): ``label`` from the left, clipped at the
    band's right edge so it never runs into the next tile's."""
    size = label_font_px(tile_height)
    band = Image.new("RGB", (width, band_height(tile_height)), BAND_RGB)
    font = ImageFont.load_default(size=size)  # Pillow's own font: the same glyphs everywhere it is installed
    ImageDraw.Draw(band).text((LABEL_PAD_PX, LABEL_PAD_PX), label, fill=TEXT_RGB, font=font)
    return np.asarray(band, dtype=np.uint8)


def png_bytes(image: np.ndarray) -> bytes:
    """``image`` (H, W, 3 uint8) as PNG bytes: no time stamp or other metadata, so the same pixels
    give the same bytes."""
    buffer = io.BytesIO()
    Image.fromarray(image, "RGB").save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()
