"""A still image from any camera of a home, as a task's scenario leaves it (docs/skills.md).

:func:`render_still` renders a dome camera of the home file, or the robot's
head camera (``robot``) once a task has placed the robot: the home as built
(noon, the home file's device states), or a task's scenario at a simulated
time after its wake event (the pan burning 200 s after the alarm in
handle_smoke_alarm). The camera's privacy mode applies unless ``privacy`` is
False. The image takes the camera's own resolution, or ``size`` (width,
height) at the same horizontal field of view. ``homeloop render`` is its
command line.

The pieces are public for :mod:`homeloop.sim.render.sheet`, which renders
every agent camera of one world: :func:`still_world` makes the world once,
:func:`camera_names` checks a camera, and :func:`camera_view` renders one.
A still and a sheet's tile of the same camera, world and size come out
pixel-equal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from homeloop.core.catalog import DEFAULT_ROBOT, load_catalog
from homeloop.core.errors import HomeLoopError
from homeloop.core.home import Home

if TYPE_CHECKING:
    from homeloop.core.visuals.library import VisualLibrary
    from homeloop.sim.render.renderer import Renderer
    from homeloop.sim.visibility import Frame, Viewpoint
    from homeloop.sim.world import World

#: The name of the robot's head camera among a home's cameras.
ROBOT = "robot"


class UnknownCamera(HomeLoopError):
    """A camera the home (or the task's robot) does not have; the message lists those it has."""


@dataclass
class Still:
    """A rendered frame and what it shows."""

    image: np.ndarray  # (H, W, 3) uint8
    png: str  # base64
    camera: str
    t: float  # seconds after the wake event (0 without a task)
    frame: Frame  # the visibility frame: entities and hazards in view


def render_still(home: Home, camera: str, *, task: str | None = None, at: float = 0.0, seed: int = 0,
                 robot: str | None = None, privacy: bool = True, size: tuple[int, int] | None = None,
                 visuals: VisualLibrary | None = None) -> Still:
    """Render ``camera`` of ``home`` (see the module docstring), drawing the build's own assets of
    ``visuals``; :class:`UnknownCamera` when it has no such camera."""
    from homeloop.sim.render.idbuffer import IdBufferVisibility
    from homeloop.sim.render.renderer import Renderer
    from homeloop.sim.render.shade import png_base64

    camera_names(home, camera, task)
    world, t = still_world(home, task, at, seed, robot, visuals)
    renderer = Renderer(world)
    view, record = camera_record(world, camera, privacy=privacy, size=size)
    frame = IdBufferVisibility(renderer).frame(world, view, (camera,))
    image = renderer.image(world, view, record)
    return Still(image, png_base64(image), camera, t, frame)


def camera_names(home: Home, camera: str | None = None, task: str | None = None) -> list[str]:
    """The cameras a still may show: the home's dome cameras, and :data:`ROBOT` with a task;
    :class:`UnknownCamera`, listing them, when ``camera`` is given and is none of them."""
    names = [*(c.id for c in home.cameras), *([ROBOT] if task is not None else [])]
    if camera is not None and camera not in names:
        raise UnknownCamera(f"home {home.home_id} has no camera {camera!r}; cameras: {', '.join(names)}"
                            + ("" if task is not None else f" (and {ROBOT} with a task)"))
    return names


def camera_record(world: World, camera: str, *, privacy: bool = True,
                  size: tuple[int, int] | None = None) -> tuple[Viewpoint, dict[str, Any]]:
    """The viewpoint of ``camera`` in ``world`` (at ``size``, if given) and the capture record the
    renderer shades it by: its privacy mode (the home file's; none for the robot or without
    ``privacy``)."""
    from homeloop.sim.visibility import Viewpoint

    if camera == ROBOT:
        from homeloop.sim.robot.body import head_view

        if world.robot is None:
            raise UnknownCamera(f"this task places no robot in home {world.home.home_id}, so it has no "
                                f"{ROBOT} camera")
        view, mode = Viewpoint.of(head_view(world.robot)), "none"
    else:
        dome = world.home.camera(camera)
        view, mode = Viewpoint.of(dome), dome.privacy_mode if privacy else "none"
    if size is not None:
        view = dataclasses.replace(view, width=size[0], height=size[1])
    return view, {"camera": camera, "privacy": mode, "override": False, "blocked": mode == "image_blocked"}


def camera_view(renderer: Renderer, world: World, camera: str, *, privacy: bool = True,
                size: tuple[int, int] | None = None) -> np.ndarray:
    """The image of ``camera`` in ``world`` (H, W, 3 uint8), as :func:`render_still` draws it."""
    view, record = camera_record(world, camera, privacy=privacy, size=size)
    return renderer.image(world, view, record)


def still_world(home: Home, task: str | None, at: float = 0.0, seed: int = 0,
                robot: str | None = None, visuals: VisualLibrary | None = None) -> tuple[World, float]:
    """The world to render and its time after the wake event: a task's episode ``at`` seconds
    after its wake, or the home as built (time 0)."""
    if task is not None:
        from homeloop.sim.episode import Episode, EpisodeError

        try:
            episode = Episode(home, task, robot or DEFAULT_ROBOT, seed, images=False, visuals=visuals)
        except EpisodeError as exc:
            raise HomeLoopError(str(exc)) from None
        if at > 0:
            episode.call("clock_wait", {"seconds": at})  # never past the horizon
        return episode.world, episode.now()
    from homeloop.sim import step_order
    from homeloop.sim.world import STEP_S, World

    world = World(home, load_catalog(), seed, visuals=visuals)
    step_order.install(world)
    world.advance(STEP_S)  # the modules bind to the world on their first step
    return world, 0.0
