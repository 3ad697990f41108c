"""Commands on floor plans: generate them, ingest a source, draw one, audit a source."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from homeloop.cli.common import file_out, guard, say
from homeloop.core.progress import console, stage_progress
from homeloop.pipeline.config import DEFAULT_PLANS, DEFAULT_SITES


@guard
def generate(
    out: Path = typer.Option(..., "--out", help="CSV file to write (Swiss Dwellings v3 geometries.csv format)."),
    plans: int = typer.Option(DEFAULT_PLANS, "--plans", min=1, help="Number of apartments (plans)."),
    sites: int = typer.Option(DEFAULT_SITES, "--sites", min=1, help="Number of sites they spread over."),
    seed: int = typer.Option(0, "--seed", min=0, help="Random seed; the same seed writes the same bytes."),
    defect_rate: Optional[float] = typer.Option(
        None, "--defect-rate", min=0.0, max=1.0, help="Share of plans with one injected defect (default ≈ 600/3400)."
    ),
) -> None:
    """Generate plans in the Swiss Dwellings v3 format."""
    from homeloop.pipeline.sources import synthetic

    kwargs = {} if defect_rate is None else {"defect_rate": defect_rate}
    synthetic.check_counts(plans, sites, **kwargs)  # before the progress bar shows
    file_out(out)
    with stage_progress("generate", plans) as advance:
        report = synthetic.generate(out, plans=plans, sites=sites, seed=seed, progress=advance, **kwargs)
    say(f"wrote {report.rows:,} rows: {report.plans:,} plans on {report.sites:,} sites → {report.path}"
        f" (defects: {', '.join(f'{k} {v}' for k, v in sorted(report.defects.items())) or 'none'})")


@guard
def ingest(
    source: Path = typer.Argument(..., help="A Swiss Dwellings geometries.csv (v3, or the older 9-column layout)."),
    out: Path = typer.Option(..., "--out", help="Folder for plans.parquet, elements.parquet, rejected.parquet."),
    all_usages: bool = typer.Option(False, "--all-usages", help="Keep commercial, public ... units too, not only residential."),
    keep_all_floors: bool = typer.Option(
        False, "--keep-all-floors", help="Keep every floor of a repeated layout (default: the lowest one)."
    ),
) -> None:
    """Read a Swiss Dwellings CSV into plan tables, recording every row not taken."""
    from homeloop.pipeline import stages

    summary = stages.run_ingest(source, out, all_usages=all_usages, keep_all_floors=keep_all_floors)
    print_ingest_summary(summary)


def print_ingest_summary(summary: Any) -> None:
    """The ingest's counts (rows in = used + rejected), and the rejected rows by reason."""
    table = Table(title="ingest", show_header=True, header_style="bold")
    table.add_column("rows in", justify="right")
    table.add_column("used", justify="right")
    table.add_column("rejected", justify="right")
    table.add_column("plans", justify="right")
    table.add_column("plans rejected", justify="right")
    table.add_row(
        f"{summary.rows_in:,}",
        f"{summary.rows_used:,}",
        f"{summary.rows_rejected:,}",
        f"{summary.plans:,}",
        f"{summary.plans_rejected:,}",
    )
    console.print(table)
    if summary.rejected_by_reason:
        reasons = Table(title="rejected rows by reason", header_style="bold")
        reasons.add_column("reason")
        reasons.add_column("rows", justify="right")
        for reason, n in sorted(summary.rejected_by_reason.items(), key=lambda kv: (-kv[1], kv[0])):
            reasons.add_row(Text(str(reason)), f"{n:,}")
        console.print(reasons)
    verdict = "[green]reconciled[/]" if summary.reconciles else "[red]NOT reconciled[/]"
    console.print(f"rows in = used + rejected: {summary.rows_in:,} = {summary.rows_used:,} + {summary.rows_rejected:,} → {verdict}")


@guard
def show(
    plan: str = typer.Argument(..., help="Plan id (site-floor-apartment), as in plans.parquet."),
    from_dir: Path = typer.Option(..., "--from", help="An ingest or build folder holding elements.parquet."),
    out: Path = typer.Option(..., "--out", help="PNG file to write."),
) -> None:
    """Draw one plan as a top-down PNG."""
    from homeloop.pipeline import stages

    path = stages.show_plan(plan, from_dir, file_out(out))
    say(f"wrote {path}")


@guard
def audit(
    source: Path = typer.Argument(..., help="A Swiss Dwellings geometries.csv to audit."),
    out: Path = typer.Option(..., "--out", help="Folder for audit.parquet, audit.html and pictures."),
    all_usages: bool = typer.Option(False, "--all-usages", help="Audit non-residential units too."),
) -> None:
    """Audit a floor-plan source: ingest it, run every rule, report per rule."""
    from homeloop.pipeline import stages

    result = stages.run_audit_source(source, out, all_usages=all_usages)
    print_audit_table(result.per_rule)
    say(f"plans: {result.plans_checked:,} checked, {result.plans_passed:,} passed → {result.html}")


def print_audit_table(per_rule: Any) -> None:
    """Per rule: plans checked, passed and failed, and an example of a failure."""
    table = Table(title="audit by rule", header_style="bold")
    for col, right in (("rule", False), ("checked", True), ("passed", True), ("failed", True), ("example", False)):
        table.add_column(col, justify="right" if right else "left", overflow="fold")
    for r in per_rule.itertuples(index=False):
        table.add_row(r.rule, f"{r.checked:,}", f"{r.passed:,}", f"{r.failed:,}", Text(r.example or ""))
    console.print(table)

