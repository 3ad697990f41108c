"""The agents by name: each agent module registers its factory here with :func:`register`.

The registry is its own module so that the agent modules, which register
themselves, and :func:`homeloop.bench.agents.make_agent`, which imports them,
depend on it and not on each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar

if TYPE_CHECKING:
    from homeloop.bench.agents.protocol import Agent

#: A factory of an agent: its class, called with the agent's options.
Factory = TypeVar("Factory", bound=Callable[..., "Agent"])

#: name -> factory(options) -> agent; filled by the agent modules as they are imported.
AGENTS: dict[str, Callable[..., Agent]] = {}


def register(name: str) -> Callable[[Factory], Factory]:
    """A decorator that files a factory (an agent class) under ``name``."""
    def add(factory: Factory) -> Factory:
        AGENTS[name] = factory
        return factory

    return add
