"""The benchmark: tasks (and, later, scenarios, monitor, agents, runner, scores)."""
