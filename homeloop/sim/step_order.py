"""The world's dynamics in the order they step (docs/dynamics.md; the order is explained in
:mod:`homeloop.sim.dynamics`). Kept out of that package's ``__init__``: importing one dynamics
module for its constants (the USD export reads the light model's lumens, device placement the
smoke's spread) then brings in that module alone, so a stage's cache key
(homeloop.pipeline.cache) does not cover the whole simulator."""

from __future__ import annotations

from homeloop.sim.world import World


def install(world: World) -> None:
    """Add every dynamics module to ``world`` in step order; the humidity only in a home with a device
    that reads or drives it (:data:`homeloop.sim.dynamics.humidity.HUMIDITY_DEVICE_TYPES`, the optional
    air devices), so the paper's homes step what they always stepped."""
    from homeloop.sim import devices
    from homeloop.sim.dynamics import (appliances, climate, cooking, humidity, light, people, robot_motion, smoke,
                                       timeline, water)

    humid = any(d.type in humidity.HUMIDITY_DEVICE_TYPES for d in world.home.devices)
    for module in (timeline.Timeline(), people.People(), robot_motion.RobotMotion(), cooking.Cooking(),
                   smoke.Smoke(), water.Water(), light.Light(), climate.Climate(),
                   *((humidity.Humidity(),) if humid else ()), appliances.Appliances(), devices.Devices()):
        world.add_module(module)
