"""The world's dynamics in the order they step (docs/dynamics.md; the order is explained in
:mod:`homeloop.sim.dynamics`). Kept out of that package's ``__init__``: importing one dynamics
module for its constants (the USD export reads the light model's lumens, device placement the
smoke's spread) then brings in that module alone, so a stage's cache key
(homeloop.pipeline.cache) does not cover the whole simulator."""

from __future__ import annotations

from typing import TypeVar

from homeloop.sim.world import Dynamics, World

_Module = TypeVar("_Module", bound=Dynamics)


def order() -> tuple[type[Dynamics], ...]:
    """Every dynamics module's class, in step order."""
    from homeloop.sim import devices
    from homeloop.sim.dynamics import (appliances, climate, cooking, humidity, light, people, robot_motion, smoke,
                                       timeline, water)

    return (timeline.Timeline, people.People, robot_motion.RobotMotion, cooking.Cooking, smoke.Smoke, water.Water,
            light.Light, climate.Climate, humidity.Humidity, appliances.Appliances, devices.Devices)


def install(world: World) -> None:
    """Add every dynamics module to ``world`` in step order; the humidity only in a home with a device
    that reads or drives it (:data:`homeloop.sim.dynamics.humidity.HUMIDITY_DEVICE_TYPES`, the optional
    air devices), so the paper's homes step what they always stepped."""
    from homeloop.sim.dynamics import humidity

    humid = any(d.type in humidity.HUMIDITY_DEVICE_TYPES for d in world.home.devices)
    for cls in order():
        if cls is not humidity.Humidity or humid:
            world.add_module(cls())


def add(world: World, kind: type[_Module]) -> _Module:
    """The world's module of ``kind``, added at its place in the step order if absent: right after
    the last module that steps before it (first where none does). Tests add the humidity so to a
    world whose home has no air device."""
    found = world.running(kind)
    if found is not None:
        return found
    rank = {cls.name: k for k, cls in enumerate(order())}
    module = kind()
    world.add_module(module)  # checks the name
    world.modules.remove(module)
    before = [i for i, m in enumerate(world.modules) if rank.get(m.name, len(rank)) < rank[module.name]]
    world.modules.insert(before[-1] + 1 if before else 0, module)
    return module
