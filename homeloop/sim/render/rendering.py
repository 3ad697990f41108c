"""An episode's renderer, built at the first capture (the package's docstring says how rendering
fits an episode). Apart from the package's ``__init__``, so that importing the colours
(:mod:`homeloop.sim.render.materials`, read by the USD export) does not bring in the renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from homeloop.sim.render.renderer import Renderer
    from homeloop.sim.visibility import ViewLike
    from homeloop.sim.world import World

#: What an episode's ``state["renderer"]`` is: the world, the viewpoint and the capture record to
#: the image as base64 PNG.
DrawImage = Callable[["World", "ViewLike", dict[str, Any]], str]


class EpisodeRendering:
    """An episode's renderer, built on first use; :meth:`image` is the entry a capture calls
    (``state["renderer"]``). It draws pixels only: what a frame shows is the geometric backend's,
    with images on or off (:mod:`homeloop.sim.services.cameras`)."""

    def __init__(self, world: World):
        self.world = world
        self._renderer: Renderer | None = None
        self._failure: str | None = None

    def renderer(self) -> Renderer:
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

    def image(self, world: World, view: ViewLike, record: dict[str, Any]) -> str:
        """The capture's image as base64 PNG; raises whatever stops the renderer (the capture
        turns it into the episode's ``render_error``)."""
        return self.renderer()(world, view, record)


def available() -> bool:
    """Whether the ray tracer (``embreex``) can be imported here."""
    try:
        import embreex.rtcore_scene  # noqa: F401
    except ImportError:
        return False
    return True


def _unavailable(world: World, view: ViewLike, record: dict[str, Any]) -> str:
    raise RuntimeError("the ray tracer (embreex) is not installed, so no image can be drawn")


def attach(state: dict[str, Any], world: World) -> bool:
    """Give an episode's ``state`` its renderer; where the ray tracer cannot be loaded, one that
    raises at the first capture (the episode ends ``render_error``). False in that case."""
    if not available():
        state["renderer"] = _unavailable
        return False
    state["renderer"] = EpisodeRendering(world).image
    return True
