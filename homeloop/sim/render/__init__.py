"""Rendered camera images on the CPU: house cameras and the robot's head camera (docs/skills.md).

Alerts are ambiguous on purpose and resolved by looking: fire, smoke and
water show only in the pixels. This package draws them:

- :mod:`~homeloop.sim.render.scene`: the home as triangles, each naming its
  entity, updated in place as things move (:mod:`~homeloop.sim.render.figures`:
  people and the robot; :mod:`~homeloop.sim.render.materials`: colours;
  :mod:`~homeloop.sim.render.rooms`: which room a point is in);
- :mod:`~homeloop.sim.render.raycast`: Embree primary rays per pixel: depth,
  the id buffer and normals; a fixed camera's rays against the static scene
  are cast once and kept, only the movers are cast again;
- :mod:`~homeloop.sim.render.effects`: flames, the smoke layer and wet floors;
- :mod:`~homeloop.sim.render.lighting`: each room's light (the light model's,
  :meth:`~homeloop.sim.dynamics.light.Light.source_lux` per source) spread
  over its surfaces from its fittings, windows and fires, with shadow rays;
- :mod:`~homeloop.sim.render.textures`: procedural wood, tiles and fabric;
- :mod:`~homeloop.sim.render.shade`: surface colours, exposure by the light,
  glass, flames, smoke and water over them, privacy masks, PNG;
- :mod:`~homeloop.sim.render.idbuffer`: the id-buffer visibility backend;
- :mod:`~homeloop.sim.render.renderer`: the renderer tying them together.

:func:`~homeloop.sim.render.rendering.attach` gives an episode with images on its renderer (an
episode with images off renders nothing). It is built at the first capture, so
an episode that never looks pays nothing; what it works out from the home alone (the
static triangles, their Embree scenes, the static rays a camera pose cast) is kept for the next
episode in the same home, which draws the same pixels from it. The renderer draws pixels only: what
a frame shows, and so what perception reports, comes from the geometric
backend with images on or off (docs/episodes.md). The id-buffer backend
reads the same question from the pixels; tests and benchmarks hold the two
to agreement. A capture the renderer cannot draw ends the episode
``render_error``, never a capture without its image.
"""
