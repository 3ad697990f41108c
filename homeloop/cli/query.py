"""``homeloop applicability``: which homes of a build suit an experiment, by filters or in SQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from homeloop.cli.common import guard, say
from homeloop.core.errors import INTERRUPTED_EXIT_CODE, HomeLoopError
from homeloop.core.progress import console
from homeloop.pipeline.config import OUTPUTS
from homeloop.pipeline.query_limits import DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT_S


@guard
def applicability(
    from_dir: Path = typer.Option(OUTPUTS / "default", "--from", help="A build folder (holds applicability.parquet)."),
    task: Optional[list[str]] = typer.Option(None, "--task", help="A task id; repeat for several (all must apply)."),
    any_task: bool = typer.Option(False, "--any", help="With several --task: homes where any of them applies."),
    robot: Optional[str] = typer.Option(None, "--robot", help="A robot body id, e.g. hello_robot_stretch_4."),
    family: Optional[str] = typer.Option(None, "--family", help="hazards, requests, entry, wellbeing or chores."),
    min_applicable: Optional[int] = typer.Option(None, "--min-applicable", min=0, max=20, help="Homes with at least this many core tasks applicable."),
    sql: Optional[str] = typer.Option(None, "--sql", help="DuckDB SQL over the build's tables (plans, audit, features, selection, applicability, applicability_summary; episodes with --runs)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the result to a .csv or .parquet file instead of printing it."),
    limit: int = typer.Option(30, "--limit", min=1, help="Rows to print (the file gets them all)."),
    verified: bool = typer.Option(False, "--verified", help="Count a task only where the scripted reference agent passed it (the verify stage)."),
    runs: Optional[list[Path]] = typer.Option(None, "--runs", help="With --sql: a run folder of `homeloop bench run` whose records form the episodes table (repeatable)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", help="With --sql: seconds the query may run."),
    memory_limit: str = typer.Option(DEFAULT_MEMORY_LIMIT, "--memory-limit", help="With --sql: memory the query may hold, e.g. 512MB or 4GB."),
) -> None:
    """Which homes suit an experiment: filter the build's task applicability, or ask in SQL."""
    from homeloop.pipeline.queries import QUERY_INTERRUPTED, query_applicability, run_sql, verification_line

    if runs and sql is None:
        raise HomeLoopError("--runs adds the episodes table to --sql queries; give --sql too")
    if sql is not None:
        try:
            result = run_sql(from_dir, sql, runs=runs or (), warn=say, timeout_s=timeout, memory_limit=memory_limit)
        except KeyboardInterrupt:
            say(QUERY_INTERRUPTED)
            raise typer.Exit(code=INTERRUPTED_EXIT_CODE) from None
    else:
        result = query_applicability(
            from_dir, tasks=task, robot=robot, family=family, min_applicable=min_applicable, all_tasks=not any_task,
            verified=verified,
        )
    if out is not None:
        write_result(result, out)
        say(f"wrote {len(result):,} rows → {out}")
    else:
        print_frame(result, limit=limit, title=f"{len(result):,} rows")
    if sql is None:
        line = verification_line(from_dir, tasks=task, robot=robot, family=family)
        if line is not None:
            say(line)


def write_result(frame: Any, out: Path) -> None:
    """The table ``frame`` as a .csv or .parquet file, by ``out``'s suffix."""
    from homeloop.core.io import atomic_path

    suffix = out.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise HomeLoopError(f"--out {out}: use a .csv or .parquet file name")
    with atomic_path(out) as tmp:
        if suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)


def print_frame(frame: Any, *, limit: int, title: str) -> None:
    """The first ``limit`` rows of ``frame`` as a table, and how many more there are."""
    table = Table(title=title, header_style="bold")
    for col in frame.columns:  # a query's names and values are printed as they are, never as markup
        table.add_column(Text(str(col)), overflow="fold")
    for row in frame.head(limit).itertuples(index=False):
        table.add_row(*(Text(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)) for v in row))
    console.print(table)
    if len(frame) > limit:
        console.print(f"… {len(frame) - limit:,} more rows (--limit, or --out FILE for all)")
