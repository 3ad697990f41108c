"""The ``homeloop`` command: every command of the project, the ``bench`` commands included.

The command line is the top floor: it may import every package (the pipeline, the flows, the
benchmark). Each command imports what it runs when it runs, so ``import homeloop.cli`` and
``homeloop --help`` load none of pandas, numpy, Prefect, Dask or the simulator
(tests/test_cli.py checks). The commands live by subject:

- :mod:`homeloop.cli.plans`: ``generate``, ``ingest``, ``show``, ``audit``
- :mod:`homeloop.cli.build`: ``build`` (its options are :class:`~homeloop.pipeline.config.BuildConfig`'s
  fields), ``verify``
- :mod:`homeloop.cli.query`: ``applicability``
- :mod:`homeloop.cli.sim`: ``sim``, ``render``
- :mod:`homeloop.cli.bench`: ``bench run``, ``bench score``, ``bench replay-latency``, ``bench view``
"""

from __future__ import annotations

import typer

from homeloop.cli import bench, build, plans, query, sim
from homeloop.cli.common import CommandGroup

app = typer.Typer(
    cls=CommandGroup,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="HomeLoop: furnished, device-equipped homes from floor plans, and a benchmark that runs agents in them.",
)

#: The top-level commands, in the order ``homeloop --help`` lists them.
COMMANDS = (plans.generate, plans.ingest, plans.show, plans.audit, build.build, query.applicability, build.verify,
            sim.sim, sim.render)
for command in COMMANDS:
    app.command()(command)
app.add_typer(bench.bench_app, name="bench")


def main() -> None:  # pragma: no cover - console entry point
    app()
