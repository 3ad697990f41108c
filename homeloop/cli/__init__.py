"""The ``homeloop`` command: every command of the project, the ``bench`` commands included.

The command line is the top floor: it may import every package (the pipeline, the flows, the
benchmark). Each command's module is imported when that command runs or shows its own help, so
``import homeloop.cli`` and ``homeloop --help`` load none of the command modules, and none of
pandas, numpy, pydantic, Prefect, Dask or the simulator (tests/test_cli.py checks). The commands
live by subject:

- :mod:`homeloop.cli.plans`: ``generate``, ``ingest``, ``show``, ``audit``
- :mod:`homeloop.cli.build`: ``build`` (its options are :class:`~homeloop.pipeline.config.BuildConfig`'s
  fields), ``verify``
- :mod:`homeloop.cli.query`: ``applicability``
- :mod:`homeloop.cli.sim`: ``sim``, ``render``
- :mod:`homeloop.cli.bench`: ``bench run``, ``bench score``, ``bench replay-latency``, ``bench view``
- :mod:`homeloop.cli.mcp`: ``mcp``

A new command is a function in one of these modules (or a new one) and its line in
:data:`COMMANDS`.
"""

from __future__ import annotations

import typer

from homeloop.cli.common import CommandEntry, LazyCommandGroup

#: Every command: the module and name of its function (or of the Typer app of a command group),
#: and the line ``homeloop --help`` lists it with, in the order listed.
COMMANDS: dict[str, CommandEntry] = {
    "generate": CommandEntry("plans", "generate", "Generate plans in the Swiss Dwellings v3 format."),
    "ingest": CommandEntry("plans", "ingest", "Read a Swiss Dwellings CSV into plan tables, recording every "
                           "row not taken."),
    "show": CommandEntry("plans", "show", "Draw one plan as a top-down PNG."),
    "audit": CommandEntry("plans", "audit", "Audit a floor-plan source: ingest it, run every rule, report "
                          "per rule."),
    "build": CommandEntry("build", "build", "Build the home set: source → ingest → audit → features → "
                          "selection → homes → USD → applicability → verify → report."),
    "applicability": CommandEntry("query", "applicability", "Which homes suit an experiment: filter the "
                                  "build's task applicability, or ask in SQL."),
    "verify": CommandEntry("build", "verify", "Check a build folder against its manifest."),
    "sim": CommandEntry("sim", "sim", "Run an episode in which the agent only waits, and print its timeline."),
    "render": CommandEntry("sim", "render", "Render one camera of a built home to a PNG, or every agent camera "
                           "on one sheet."),
    "bench": CommandEntry("bench", "bench_app", "Run agents on the benchmark's tasks, score the records, "
                          "view episodes."),
    "mcp": CommandEntry("mcp", "mcp", "Serve one episode to an MCP client: the skills as tools, the wake event "
                        "as a prompt."),
}


class HomeLoopCommands(LazyCommandGroup):
    """The top-level group: :data:`COMMANDS`, each loaded when used."""

    entries = COMMANDS


app = typer.Typer(
    cls=HomeLoopCommands,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


@app.callback()
def homeloop() -> None:
    """HomeLoop: furnished, device-equipped homes from floor plans, and a benchmark that runs agents in them."""


def main() -> None:  # pragma: no cover - console entry point
    app()
