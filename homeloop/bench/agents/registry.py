"""Every agent through one lookup (docs/agents.md, "Plug-ins"): a registered name, an entry point
of the ``homeloop.agents`` group, or a ``module.path:Name`` of a module on the import path.

The built-in agents are entry points of the group too (``pyproject.toml``), and each module files
its classes here with :func:`register` as it is imported, so an agent module and
:func:`homeloop.bench.agents.make_agent` depend on this module and not on each other.

Whatever cannot be found, imported, made or used as an agent is an :class:`AgentError`: one
line naming the agent as given and what is wrong with it.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from homeloop.core.errors import HomeLoopError

if TYPE_CHECKING:
    from homeloop.bench.agents.protocol import Agent

#: The entry-point group agents are declared in (``[project.entry-points."homeloop.agents"]``).
GROUP = "homeloop.agents"

#: A factory of an agent: its class, called with the agent's options.
Factory = TypeVar("Factory", bound=Callable[..., "Agent"])

#: name -> factory(options) -> agent; filled by the agent modules as they are imported.
AGENTS: dict[str, Callable[..., Agent]] = {}

#: What an agent must have, beside ``run(episode)`` (homeloop/bench/agents/protocol.py).
PROTOCOL_ATTRIBUTES = ("name", "model", "usage")


class AgentError(HomeLoopError, ValueError):
    """An agent that cannot be found, imported, made or used: one line naming it."""


def register(name: str) -> Callable[[Factory], Factory]:
    """A decorator that files a factory (an agent class) under ``name``."""
    def add(factory: Factory) -> Factory:
        AGENTS[name] = factory
        return factory

    return add


def entry_points() -> dict[str, metadata.EntryPoint]:
    """The group's entry points by name, from the metadata of every installed distribution (a
    stale copy of a distribution's metadata found first, such as a leftover ``*.egg-info`` in the
    working folder, hides none of them); where two share a name, the first in sorted order."""
    points = {p for dist in metadata.distributions() for p in dist.entry_points if p.group == GROUP}
    found: dict[str, metadata.EntryPoint] = {}
    for point in sorted(points, key=lambda p: (p.name, p.value)):
        found.setdefault(point.name, point)
    return found


def load_builtin_agents() -> None:
    """Import the modules of the entry points HomeLoop itself declares, so that :data:`AGENTS`
    holds every built-in agent; an install whose metadata predates them is told to reinstall."""
    for point in _builtin(entry_points()):
        if point.name not in AGENTS:
            _load(point.value, lambda: point.load())


def _builtin(points: dict[str, metadata.EntryPoint], asked: str = "") -> list[metadata.EntryPoint]:
    """The entry points HomeLoop itself declares; none means the install's metadata predates
    them, which is one line (after ``asked``) telling the user to reinstall."""
    builtin = [p for p in points.values() if p.module.split(".")[0] == "homeloop"]
    if not builtin:
        raise AgentError(f"{asked}no agent is declared in the {GROUP} entry points of this install; "
                         "reinstall HomeLoop (pip install -e .) so that its metadata lists them")
    return builtin


def known_agents() -> list[str]:
    """Every agent name the lookup knows without importing a plug-in."""
    return sorted(set(AGENTS) | set(entry_points()))


def find_agent(spec: str) -> Callable[..., Agent]:
    """The factory ``spec`` names: ``module.path:Name`` (a dotted attribute after the colon), a
    registered name, or an entry point of :data:`GROUP`; an :class:`AgentError` otherwise."""
    if ":" in spec:
        module_name, _, attribute = spec.partition(":")
        if not module_name or not attribute:
            raise AgentError(f"agent {spec}: give a plug-in as module.path:Name")
        return _load(spec, lambda: _attribute(spec, module_name, attribute))
    if spec in AGENTS:
        return AGENTS[spec]
    points = entry_points()
    point = points.get(spec)
    if point is None:
        _builtin(points, f"unknown agent {spec!r}: ")  # stale metadata is said first
        raise AgentError(f"unknown agent {spec!r}; agents: {', '.join(sorted(set(AGENTS) | set(points)))}, "
                         "or a plug-in as module.path:Name")
    return _load(spec, lambda: point.load())


def _attribute(spec: str, module_name: str, attribute: str) -> Any:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise AgentError(f"agent {spec}: no module named {exc.name!r} on the import path") from None
        raise
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise AgentError(f"agent {spec}: no attribute {attribute!r} in module {module_name}")
        value = getattr(value, part)
    return value


def _load(spec: str, load: Callable[[], Any]) -> Callable[..., Agent]:
    """What ``load`` returns, which must be callable (an agent class or factory); an import that
    raises is one line naming the agent."""
    try:
        factory = load()
    except AgentError:
        raise
    except Exception as exc:  # a plug-in's import may raise anything; say what, in one line
        raise AgentError(f"agent {spec}: importing it raised {_what(exc)}") from None
    if not callable(factory):
        raise AgentError(f"agent {spec}: a {type(factory).__name__}, not an agent class or factory")
    return factory  # type: ignore[no-any-return]


def make(spec: str, options: dict[str, Any]) -> Agent:
    """The agent ``spec`` names, made with ``options`` and checked against the protocol."""
    factory = find_agent(spec)
    try:
        agent = factory(**options)
    except HomeLoopError:
        raise
    except ValueError as exc:  # a built-in agent refusing an option says it in its own words
        raise AgentError(f"agent {spec}: {exc}") from None
    except Exception as exc:
        raise AgentError(f"agent {spec}: making it raised {_what(exc)}") from None
    missing = [a for a in PROTOCOL_ATTRIBUTES if not hasattr(agent, a)]
    if not callable(getattr(agent, "run", None)):
        missing.insert(0, "run(episode)")
    if missing:
        raise AgentError(f"agent {spec}: a {type(agent).__name__} does not implement the Agent protocol "
                         f"(docs/agents.md): it has no {', '.join(missing)}")
    if not isinstance(agent.name, str) or not agent.name:
        raise AgentError(f"agent {spec}: its name must be a non-empty string, got {agent.name!r}")
    return agent


def _what(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
