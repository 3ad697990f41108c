"""One episode's renderer: scene, ray caster, hazard layers, light and shading (docs/skills.md).

:class:`Renderer` ties the render package together. :meth:`Renderer.buffers`
brings the scene up to date with the world, casts the frame's rays and
works out the hazard layers; the id-buffer visibility backend reads these,
and :meth:`Renderer.image` lights them (:mod:`~homeloop.sim.render.lighting`)
and shades them. A capture asks for both in turn at the same moment, so the
last frame's buffers are kept and reused when the viewpoint, the time, the
hidden entities and the scene (its movers and its settled doors and parts)
are unchanged. Light and shading only read the
buffers: the id buffer is the same whatever the light.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from homeloop.sim.render import effects, shade
from homeloop.sim.render.effects import Layers, SmokeField
from homeloop.sim.render.lighting import FrameLight, LightCache, LightRig, room_lux
from homeloop.sim.render.raycast import Caster, Hits, PoseCache
from homeloop.sim.render.rooms import RoomGrid
from homeloop.sim.render.scene import Scene
from homeloop.sim.visibility import Entity, GeometricVisibility, Viewpoint, ViewLike
from homeloop.sim.world import World

#: A viewpoint this close to a dome camera's pose (m) is inside its housing.
HOUSING_REACH_M = 0.15


@dataclass
class Buffers:
    """One frame before shading: what each pixel sees, the hazard layers, and the entities now."""

    hits: Hits
    layers: Layers
    entities: list[Entity]
    hide: frozenset[str]  # what the frame leaves out (it casts no shadow in it either)


class Renderer:
    """The renderer of one world (see the module docstring)."""

    def __init__(self, world: World):
        self.geometric = GeometricVisibility(world)
        self.scene = Scene(world, self.geometric.static_entities)
        self.caster = Caster(self.scene)
        self.rooms = RoomGrid(world.home)
        self.smoke = SmokeField(world.home, self.rooms)
        self.rig = LightRig(world.home, self.rooms, self.geometric.static_entities)
        self.light_cache = LightCache()
        self.surfaces: PoseCache[shade.Surfaces] = PoseCache()
        self._last: tuple[tuple[Viewpoint, float, frozenset[str], int, int], Buffers] | None = None
        self._palette: shade.Palette | None = None
        self.cameras = list(world.home.cameras)

    def buffers(self, world: World, view: Viewpoint, hide: Iterable[str] = ()) -> Buffers:
        """Rays and hazard layers of a viewpoint now (``hide``: entities left out, such as the
        camera's own housing or the robot for its head camera)."""
        entities = self.geometric.entities(world)
        bases = {e.id: e.solid.z0 for e in entities if e.kind == "person" and e.extra.get("posture") == "lying"}
        self.scene.update(world, bases)
        hide = frozenset(hide) | self.housings_at(view)
        key = (view, world.time, hide, self.scene.version, self.scene.settled_version)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        hits = self.caster.hits(view, hide)
        layers = Layers()
        effects.water(world, self._floor_codes(), self.rooms, hits, layers)
        effects.flames(world, self.caster, self.rooms, hits, layers)
        effects.smoke(world, self.smoke, hits, layers)
        out = Buffers(hits, layers, entities, hide)
        self._last = (key, out)
        return out

    def housings_at(self, view: Viewpoint) -> frozenset[str]:
        """The dome cameras whose housing holds the viewpoint: a camera never images its own."""
        return frozenset(c.id for c in self.cameras if math.dist((c.pose.x, c.pose.y, c.pose.z),
                                                                  (view.x, view.y, view.z)) <= HOUSING_REACH_M)

    def image(self, world: World, view: Viewpoint, record: dict[str, Any]) -> np.ndarray:
        """The frame a capture record describes (H, W, 3 uint8): its camera, privacy and override."""
        if record.get("blocked"):
            return shade.blocked_image(view.width, view.height)
        frame = self.buffers(world, view, (record["camera"],))
        masked = record.get("privacy") == "people_masked" and not record.get("override")
        if self._palette is None or len(self._palette.rgb) != len(self.scene.codes):
            self._palette = shade.Palette.of(self.scene.codes)
        lux, outside = room_lux(world, self.rooms)
        light = FrameLight(self.rig, self.rig.table(world, lux, outside), frame.hits, self.caster, frame.hide,
                           self._palette.ground, world.seed)
        lit = shade.Lit(light.illuminance(self.light_cache), lux, outside, float(light.table.lux[light.camera_row]))
        return shade.shade(frame.hits, frame.layers, self._palette, lit, self.caster.bounce, masked, self.surfaces)

    def __call__(self, world: World, view: ViewLike, record: dict[str, Any]) -> str:
        """The capture's image as base64 PNG (the renderer a capture calls)."""
        return shade.png_base64(self.image(world, Viewpoint.of(view), record))

    def _floor_codes(self) -> dict[str, np.ndarray]:
        out: dict[str, list[int]] = {}
        for i, c in enumerate(self.scene.codes):
            if c.kind == "floor" and c.room is not None:
                out.setdefault(c.room, []).append(i)
        return {room: np.array(codes) for room, codes in out.items()}
