"""The world's dynamics in the order they step (docs/dynamics.md; the order is explained in
:mod:`homeloop.sim.dynamics`). Kept out of that package's ``__init__``: importing one dynamics
module for its constants (the USD export reads the light model's lumens, device placement the
smoke's spread) then brings in that module alone, so a stage's cache key
(homeloop.pipeline.cache) does not cover the whole simulator."""

from __future__ import annotations

from homeloop.sim.world import World


def install(world: World) -> None:
    """Add every dynamics module to ``world`` in step order."""
    from homeloop.sim import devices
    from homeloop.sim.dynamics import appliances, climate, cooking, light, people, robot_motion, smoke, timeline, water

    for module in (timeline.Timeline(), people.People(), robot_motion.RobotMotion(), cooking.Cooking(),
                   smoke.Smoke(), water.Water(), light.Light(), climate.Climate(), appliances.Appliances(),
                   devices.Devices()):
        world.add_module(module)
