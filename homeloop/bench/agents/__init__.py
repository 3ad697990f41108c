"""Agents behind one interface (docs/agents.md): each drives an episode through its tools.

An agent is built from its name and options by :func:`make_agent` and has one
method, ``run(episode)``: it reads ``episode.wake`` and ``episode.tools()``,
makes calls with ``episode.call(tool, arguments)`` and ends with
``episode.stop(summary)`` (or ``episode.end(reason)`` when a limit of its own
is reached). The world pauses while it thinks: simulated time passes only
inside calls. Agents that talk to a model report ``usage`` (tokens, cost).
The agent modules file themselves by name in :mod:`homeloop.bench.agents.registry`.
"""

from __future__ import annotations

from typing import Any

from homeloop.bench.agents.protocol import Agent
from homeloop.bench.agents.registry import AGENTS

__all__ = ["AGENTS", "Agent", "make_agent"]


def make_agent(name: str, **options: Any) -> Agent:
    """The agent called ``name``; an unknown name gets an error listing the known ones."""
    from homeloop.bench.agents import baselines, openai_agent, replay, scripted  # noqa: F401  (they register themselves)

    if name not in AGENTS:
        raise KeyError(f"unknown agent {name!r}; agents: {', '.join(sorted(AGENTS))}")
    return AGENTS[name](**options)
