"""Harnesses: an episode played by an agent that lives outside HomeLoop (docs/agents.md).

A floor above the benchmark: each harness plays its episode through the benchmark's runner, so
the record, the limits and the verdict are those of ``homeloop bench run``.

- :mod:`homeloop.harness.session`: one episode driven call by call from another thread, the
  seam every harness shares.
- :mod:`homeloop.harness.mcp_server`: that episode served to an MCP client (``homeloop mcp``).
- :mod:`homeloop.harness.gym_env`: that episode as a Gymnasium environment (``homeloop.gym``).
- :mod:`homeloop.harness.inspect_task`: episodes as the samples of an Inspect task
  (``homeloop.inspect``), and :mod:`homeloop.harness.inspect_logs`, their records read back from
  Inspect's logs for ``homeloop bench score``.
"""
