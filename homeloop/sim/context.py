"""The two views of an episode that code outside it is given (docs/episodes.md).

:class:`SkillContext` is what a skill of a service sees while it runs: the
world, the episode's flags and clock, and its per-episode registries
(captures, detections). :class:`EpisodeView` is what a check predicate and
the task monitor read of a running or finished episode: the world's ground
truth, the task, the scenario, the wake event and the registries.

Both are Protocols, so the services and the benchmark's checks name them
without importing :mod:`homeloop.sim.episode` (which imports the services);
:class:`homeloop.sim.episode.Episode` is an :class:`EpisodeView`, and
:class:`homeloop.sim.episode.SkillContext` implements :class:`SkillContext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from homeloop.sim.world import Event, World

if TYPE_CHECKING:
    from homeloop.sim.task import Task

#: One registered capture (``cap_N``) or detection (``det_N``): a JSON-able mapping, as
#: :mod:`homeloop.sim.services.cameras` and :mod:`homeloop.sim.services.perception` register it.
Registered = dict[str, Any]


class SkillContext(Protocol):
    """What a skill sees while it runs (see the module docstring)."""

    @property
    def world(self) -> World:
        """The simulated world, ground truth included."""
        ...

    @property
    def images(self) -> bool:
        """Whether captures carry rendered pixels (the images ablation turns them off)."""
        ...

    @property
    def withheld(self) -> tuple[str, ...]:
        """The services this episode does not offer."""
        ...

    @property
    def wake_time(self) -> float:
        """World time of the wake event: agent time 0."""
        ...

    @property
    def state(self) -> dict[str, Any]:
        """The episode's per-episode registries by name (``captures``, ``detections``,
        ``detected``, ``visibility``, ``renderer``)."""
        ...

    @property
    def captures(self) -> dict[str, Registered]:
        """The captures of this episode by id (``state["captures"]``)."""
        ...

    @property
    def detections(self) -> dict[str, Registered]:
        """The detections of this episode by id (``state["detections"]``)."""
        ...

    def now(self) -> float:
        """Agent time: seconds since the wake event."""
        ...

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass (never past the horizon)."""
        ...

    def advance_while(self, going: Callable[[], bool]) -> None:
        """Let simulated time pass a step at a time while ``going()`` holds (never past the
        horizon); ``going`` reads only what the world's steps change (a motion under way)."""
        ...

    def event_dict(self, event: Event) -> dict[str, Any]:
        """An event as the agent sees it (agent time)."""
        ...


class NamedScenario(Protocol):
    """What a check reads of the scenario: its name (the roles it gave the home's things are
    resolved from it). :mod:`homeloop.sim.scenario` is not imported here, since it reaches the
    services through the dynamics."""

    @property
    def name(self) -> str:
        ...


class EpisodeView(Protocol):
    """What checks and the task monitor read of an episode (see the module docstring)."""

    @property
    def world(self) -> World:
        """The simulated world, ground truth included."""
        ...

    @property
    def task(self) -> Task:
        """The task played."""
        ...

    @property
    def scenario(self) -> NamedScenario:
        """The scenario as it was applied to the world."""
        ...

    @property
    def wake_event(self) -> Event:
        """The event that woke the agent."""
        ...

    @property
    def wake_time(self) -> float:
        """World time of the wake event: agent time 0."""
        ...

    @property
    def state(self) -> dict[str, Any]:
        """The episode's registries (:attr:`SkillContext.state`)."""
        ...

    def now(self) -> float:
        """Agent time: seconds since the wake event."""
        ...
