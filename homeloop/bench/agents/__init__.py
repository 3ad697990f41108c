"""Agents behind one interface (docs/agents.md): each drives an episode through its tools.

An agent is built from its name and options by :func:`make_agent` and has one
method, ``run(episode)``: it reads ``episode.wake`` and ``episode.tools()``,
makes calls with ``episode.call(tool, arguments)`` and ends with
``episode.stop(summary)`` (or ``episode.end(reason)`` when a limit of its own
is reached). The world pauses while it thinks: simulated time passes only
inside calls. Agents that talk to a model report ``usage`` (tokens, cost).

Every agent is read through one lookup (:mod:`homeloop.bench.agents.registry`): a registered
name, an entry point of the ``homeloop.agents`` group (the built-in agents are declared there
too), or a plug-in given as ``module.path:Name``.
"""

from __future__ import annotations

from typing import Any

from homeloop.bench.agents.protocol import Agent
from homeloop.bench.agents.registry import AGENTS, AgentError, find_agent, known_agents, make

__all__ = ["AGENTS", "Agent", "AgentError", "find_agent", "known_agents", "make_agent"]


def make_agent(name: str, **options: Any) -> Agent:
    """The agent ``name`` names (a built-in, an entry point or ``module.path:Name``), made with
    ``options``; one that cannot be found, made or used is an :class:`AgentError` naming it."""
    return make(name, options)  # imports the one module that defines it, not every agent's
