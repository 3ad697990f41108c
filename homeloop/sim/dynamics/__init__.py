"""The world's dynamics, one module per concern, run in a fixed order each step (docs/dynamics.md).

Order matters: the scenario's timeline fires first (people start activities,
faults begin), people and the robot move, then the physical processes
(cooking heats the pan, which feeds the smoke; water spreads; light and
climate follow), appliances run their cycles, and devices read the result
last, so every sensor reading reflects the state of the step it reports.
"""

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
