"""The world's dynamics, one module per concern, run in a fixed order each step (docs/dynamics.md).

Order matters: the scenario's timeline fires first (people start activities,
faults begin), people and the robot move, then the physical processes
(cooking heats the pan, which feeds the smoke; water spreads; light and
climate follow), appliances run their cycles, and devices read the result
last, so every sensor reading reflects the state of the step it reports.
:func:`homeloop.sim.step_order.install` adds them to a world in that order.
"""
