"""The benchmark: the task and scenario files, the predicates their checks name and the monitor
that evaluates them over an episode, the agents, the runner that plays episodes into records,
and the scores computed from those records (docs/benchmark.md, docs/scores.md).

The world an episode runs in, and the task schema, are the simulator's (:mod:`homeloop.sim`).
"""
