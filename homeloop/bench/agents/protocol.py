"""What every agent is to the runner (docs/agents.md).

An agent plays one episode in :meth:`Agent.run`: it reads ``episode.wake``
and ``episode.tools()``, makes calls with ``episode.call(tool, arguments)``
and ends with ``episode.stop(summary)``, or ``episode.end(reason)`` when a
limit of its own is reached. The runner then records its ``name``, its
``model`` and its ``usage``. Agents that talk to a model may also have
``conditions`` (what the model was told and shown) and ``calls`` (each
request with its reply, tokens and cost); the runner reads those where they
are present. An agent with a ``preflight()`` method has it called once before
a run's first episode (``bench run``): it checks that the model's endpoint
answers and takes the key, and raises a one-line
:class:`~homeloop.core.errors.HomeLoopError` where it does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode


class Agent(Protocol):
    """An agent (see the module docstring)."""

    @property
    def name(self) -> str:
        """The name the agent is registered and recorded under."""
        ...

    @property
    def model(self) -> str | None:
        """The model behind the agent, None for one without a model."""
        ...

    @property
    def usage(self) -> dict[str, Any] | None:
        """Requests, tokens and cost of the last episode; None for an agent without a model."""
        ...

    def run(self, episode: Episode) -> None:
        """Play ``episode`` until it is done."""
        ...


def play(agent: Agent, episode: Episode) -> str:
    """Let ``agent`` play ``episode`` to its end. An agent that raises ends the episode ``agent_error``
    (the run goes on), as does one that returns without stopping it; returns what it raised, or ""."""
    error = ""
    try:
        agent.run(episode)
    except Exception as exc:  # a plug-in may raise anything: its episode ends, the run goes on
        error = f"{type(exc).__name__}: {exc}"
        episode.end("agent_error", error)
    if not episode.done:
        episode.end("agent_error", "the agent returned without stopping")
    return error
