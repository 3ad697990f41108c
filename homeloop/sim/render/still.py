"""A still image from any camera of a home, as a task's scenario leaves it (docs/skills.md).

:func:`render_still` renders a dome camera of the home file, or the robot's
head camera (``robot``) once a task has placed the robot: the home as built
(noon, the home file's device states), or a task's scenario at a simulated
time after its wake event (the pan burning 200 s after the alarm in
handle_smoke_alarm). The camera's privacy mode applies unless ``privacy`` is
False. ``homeloop render`` is its command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from homeloop.core.catalog import DEFAULT_ROBOT, load_catalog
from homeloop.core.errors import HomeLoopError
from homeloop.core.home import Home

if TYPE_CHECKING:
    from homeloop.sim.visibility import Frame
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
                 robot: str | None = None, privacy: bool = True) -> Still:
    """Render ``camera`` of ``home`` (see the module docstring); :class:`UnknownCamera` when it
    has no such camera."""
    from homeloop.sim.render.idbuffer import IdBufferVisibility
    from homeloop.sim.render.renderer import Renderer
    from homeloop.sim.render.shade import png_base64
    from homeloop.sim.visibility import Viewpoint

    domes = {c.id: c for c in home.cameras}
    names = [*domes, *([ROBOT] if task is not None else [])]
    if camera not in names:
        raise UnknownCamera(f"home {home.home_id} has no camera {camera!r}; cameras: {', '.join(names)}"
                            + ("" if task is not None else f" (and {ROBOT} with a task)"))
    world, t = _world(home, task, at, seed, robot)
    if camera == ROBOT:
        from homeloop.sim.robot.body import head_view

        if world.robot is None:
            raise UnknownCamera(f"task {task!r} places no robot in home {home.home_id}, so it has no {ROBOT} camera")
        view, mode = Viewpoint.of(head_view(world.robot)), "none"
    else:
        view, mode = Viewpoint.of(domes[camera]), domes[camera].privacy_mode if privacy else "none"
    renderer = Renderer(world)
    frame = IdBufferVisibility(renderer).frame(world, view, (camera,))
    record = {"camera": camera, "privacy": mode, "override": False, "blocked": mode == "image_blocked"}
    image = renderer.image(world, view, record)
    return Still(image, png_base64(image), camera, t, frame)


def _world(home: Home, task: str | None, at: float, seed: int, robot: str | None) -> tuple[World, float]:
    """The world to render: a task's episode ``at`` seconds after its wake, or the home as built."""
    if task is not None:
        from homeloop.sim.episode import Episode, EpisodeError

        try:
            episode = Episode(home, task, robot or DEFAULT_ROBOT, seed, images=False)
        except EpisodeError as exc:
            raise HomeLoopError(str(exc)) from None
        if at > 0:
            episode.call("clock_wait", {"seconds": at})  # never past the horizon
        return episode.world, episode.now()
    from homeloop.sim import step_order
    from homeloop.sim.world import STEP_S, World

    world = World(home, load_catalog(), seed)
    step_order.install(world)
    world.advance(STEP_S)  # the modules bind to the world on their first step
    return world, 0.0
