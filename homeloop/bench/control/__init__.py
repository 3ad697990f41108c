"""The home-control track (docs/tasks.md, "Home control"): episodes generated per home from its rooms and
devices, played through the same runner, and goals checked over simulated time.

- :mod:`~homeloop.bench.control.model`: a control episode, one JSON line (query type, request, goal,
  prerequisites, and for an infeasible one its constraint);
- :mod:`~homeloop.bench.control.templates`: the requests per query type, feasible and infeasible;
- :mod:`~homeloop.bench.control.generate`: ``homeloop bench generate-control`` (kept are only the
  episodes the scripted solver passes);
- :mod:`~homeloop.bench.control.solver`: the scripted control solver;
- :mod:`~homeloop.bench.control.goals`: the goal watch (a dynamics module) and the rule judge;
- :mod:`~homeloop.bench.control.judge`: the optional model judge of infeasible reports;
- :mod:`~homeloop.bench.control.play`: one control episode played by an agent;
- :mod:`~homeloop.bench.control.plan`: the episodes of ``homeloop bench run --tasks control``;
- :mod:`~homeloop.bench.control.scores`: the score tables per query type × feasible or infeasible.
"""
