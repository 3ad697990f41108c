"""The build's 2-D previews: top-down pictures of plans and homes for people to look at.

- :mod:`~homeloop.pipeline.previews.plan`: plan pictures and contact sheets (matplotlib);
- :mod:`~homeloop.pipeline.previews.home`: the preview of a furnished, equipped home (Pillow);
- :mod:`~homeloop.pipeline.previews.raster`: the Pillow canvas the home preview is painted on,
  in the plan pictures' colours, widths, markers and font.

The simulator's camera frames are drawn elsewhere, by :mod:`homeloop.sim.render`.
"""
