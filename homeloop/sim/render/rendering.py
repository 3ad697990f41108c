"""An episode's renderer and its id-buffer visibility, built at the first capture (the package's
docstring says how rendering fits an episode). Apart from the package's ``__init__``, so that
importing the colours (:mod:`homeloop.sim.render.materials`, read by the USD export) does not
bring in the renderer."""

from __future__ import annotations

import logging
from typing import Any, Iterable

log = logging.getLogger(__name__)


class EpisodeRendering:
    """An episode's renderer, built on first use, and the two entries a capture reads:
    :meth:`image` (``state["renderer"]``) and :meth:`visibility` (``state["visibility"]``)."""

    def __init__(self, world: Any):
        self.world = world
        self._renderer: Any = None
        self._failure: str | None = None

    def renderer(self) -> Any:
        """The renderer (built on the first call; a build that failed is not tried again)."""
        if self._renderer is None:
            if self._failure is not None:
                raise RuntimeError(f"no renderer in this episode: {self._failure}")
            from homeloop.sim.render.renderer import Renderer

            try:
                self._renderer = Renderer(self.world)
            except Exception as exc:
                self._failure = f"{type(exc).__name__}: {exc}"
                raise
        return self._renderer

    def image(self, world: Any, view: Any, record: dict[str, Any]) -> str | None:
        try:
            return self.renderer()(world, view, record)
        except Exception:  # no pixels rather than a stopped episode
            log.warning("render: capture %s got no image", record.get("id"), exc_info=True)
            return None

    def visibility(self) -> Any:
        from homeloop.sim.render.idbuffer import IdBufferVisibility

        return _Guarded(IdBufferVisibility(self.renderer), self.world)


class _Guarded:
    """A visibility backend that falls back on the geometric one if the id buffer fails."""

    def __init__(self, backend: Any, world: Any):
        self.backend, self.world = backend, world
        self._geometric: Any = None

    def frame(self, world: Any, view: Any, hide: Iterable[str] = ()) -> Any:
        try:
            return self.backend.frame(world, view, hide)
        except Exception:
            log.warning("render: id buffer failed; this frame is read geometrically", exc_info=True)
            if self._geometric is None:
                from homeloop.sim.visibility import GeometricVisibility

                self._geometric = GeometricVisibility(world)
            return self._geometric.frame(world, view, hide)


def available() -> bool:
    """Whether the ray tracer (``embreex``) can be imported here."""
    try:
        import embreex.rtcore_scene  # noqa: F401
    except ImportError:
        return False
    return True


def attach(state: dict[str, Any], world: Any) -> bool:
    """Give an episode's ``state`` a renderer and the id-buffer backend; False (and the geometric
    backend stays) where the ray tracer cannot be loaded."""
    if not available():
        log.warning("render: embreex is not installed; captures carry no images")
        return False
    rendering = EpisodeRendering(world)
    state["renderer"] = rendering.image
    state["visibility"] = rendering.visibility()
    return True
