"""The ``homeloop`` command.

The command line sits on top of every package: its commands import the
pipeline lazily, so that ``import homeloop`` stays light and the library never
depends on the pipeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from homeloop.errors import INTERRUPTED, INTERRUPTED_EXIT_CODE, HomeLoopError, user_error
from homeloop.pipeline.queries import DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT_S
from homeloop.pipeline.stages import DEFAULT_VERIFY_HOMES, STAGES
from homeloop.progress import console, print_error, stage_progress

class _Commands(TyperGroup):
    """The command group: refuses an argument holding a NUL character (no file name or id can
    hold one, and Python's file calls fail on it) before any command parses it."""

    def parse_args(self, ctx, args):
        for arg in args:
            if "\x00" in arg:
                raise typer.BadParameter(f"{arg!r} holds a NUL character; no path or id can")
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_Commands,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="HomeLoop: furnished, device-equipped homes from floor plans, and a benchmark that runs agents in them.",
)

# The default build: the paper's pool of ~3,400 plans from ~900 sites, 2,100 homes (docs/pipeline.md).
DEFAULT_PLANS, DEFAULT_SITES, DEFAULT_HOMES = 3400, 900, 2100


def say(line: str) -> None:
    """Print ``line`` as it is: a path, id or value may hold [brackets] or :colons:, never markup."""
    console.print(Text(line), soft_wrap=True)


def file_out(out: Path) -> Path:
    """``--out`` that must name a file: a folder there (``.`` or ``..`` too, which no write can
    replace) is one line before any work."""
    if out.is_dir():
        import errno
        import os

        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(out))
    return out


def fail(message: str) -> None:
    print_error(message)
    raise typer.Exit(code=2)


def _guard(fn):
    """Turn known input errors into one clear line and exit code 2: a HomeLoopError,
    or a file-system error the user can fix (a full disk, a folder given for a file,
    a path through a file, no permission; see homeloop.errors). Ctrl-C prints one
    line and exits with 130."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (HomeLoopError, OSError) as exc:
            out = kwargs.get("out")
            error = user_error(exc, out if isinstance(out, Path) else None)
            if error is None:
                raise
            fail(str(error))
        except KeyboardInterrupt:
            console.print(INTERRUPTED, highlight=False, soft_wrap=True)
            raise typer.Exit(code=INTERRUPTED_EXIT_CODE) from None

    return wrapper


@app.command()
@_guard
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


@app.command()
@_guard
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


def print_ingest_summary(summary) -> None:
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


@app.command()
@_guard
def show(
    plan: str = typer.Argument(..., help="Plan id (site-floor-apartment), as in plans.parquet."),
    from_dir: Path = typer.Option(..., "--from", help="An ingest or build folder holding elements.parquet."),
    out: Path = typer.Option(..., "--out", help="PNG file to write."),
) -> None:
    """Draw one plan as a top-down PNG."""
    from homeloop.pipeline import stages

    path = stages.show_plan(plan, from_dir, file_out(out))
    say(f"wrote {path}")


@app.command()
@_guard
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


def print_audit_table(per_rule) -> None:
    table = Table(title="audit by rule", header_style="bold")
    for col, justify in (("rule", "left"), ("checked", "right"), ("passed", "right"), ("failed", "right"), ("example", "left")):
        table.add_column(col, justify=justify, overflow="fold")
    for r in per_rule.itertuples(index=False):
        table.add_row(r.rule, f"{r.checked:,}", f"{r.passed:,}", f"{r.failed:,}", Text(r.example or ""))
    console.print(table)


@app.command()
@_guard
def build(
    source: Optional[Path] = typer.Option(None, "--source", help="A Swiss Dwellings geometries.csv; default: generate plans."),
    plans: int = typer.Option(DEFAULT_PLANS, "--plans", min=1, help="Plans to generate (without --source)."),
    sites: int = typer.Option(DEFAULT_SITES, "--sites", min=1, help="Sites to spread generated plans over."),
    homes: int = typer.Option(DEFAULT_HOMES, "--homes", min=1, help="Homes to keep, in selection order."),
    seed: int = typer.Option(0, "--seed", min=0, help="Build seed; same inputs and seed give the same bytes."),
    out: Optional[Path] = typer.Option(None, "--out", help="Build folder (default outputs/<build name>)."),
    dask_address: Optional[str] = typer.Option(
        None, "--dask-address", help="Address of a running Dask scheduler (default: a local cluster)."
    ),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Local Dask workers (default: one per core; 1 = no cluster)."),
    usda: bool = typer.Option(False, "--usda", help="Write homes as text .usda (for reading) instead of .usdc."),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="Play the screened pairs with the scripted "
                                "reference agent (the verify stage)."),
    verify_robots: Optional[str] = typer.Option(None, "--verify-robots", help="Robot bodies to verify, "
                                                "comma-separated (default: unitree_g1_d_ultimate)."),
    verify_seeds: Optional[str] = typer.Option(None, "--verify-seeds", help="Seeds to verify at, comma-separated "
                                               "(default: 0); a pair is verified when it passes at each."),
    verify_homes: str = typer.Option(str(DEFAULT_VERIFY_HOMES), "--verify-homes", help="Further homes to verify "
                                     "besides the house (a sample stratified by task), or 'all'."),
) -> None:
    """Build the home set: source → ingest → audit → features → selection → homes → USD → applicability → verify → report."""
    from homeloop.pipeline.sources.synthetic import check_counts

    if source is None:  # generated plans: counts no generator can meet stop before Prefect loads
        check_counts(plans, sites)
    from homeloop.bench.commands import parse_seeds
    from homeloop.flows.command import build_command

    manifest = build_command(
        source=source, plans=plans, sites=sites, homes=homes, seed=seed, out=out,
        dask_address=dask_address, workers=workers, usda=usda, verify=verify,
        verify_robots=[r.strip() for r in verify_robots.split(",") if r.strip()] if verify_robots else None,
        verify_seeds=parse_seeds(verify_seeds, "--verify-seeds") if verify_seeds else None,
        verify_homes=parse_verify_homes(verify_homes),
        say=say,
    )
    counts = manifest["counts"]
    table = Table(title=f"build {manifest['build']}", header_style="bold")
    for col in ("stage", "in", "kept", "rejected"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    order = ["rows", "plans", *STAGES]  # a manifest read back from disk has its keys sorted
    for stage, c in sorted(counts.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)):
        table.add_row(stage, f"{c['in']:,}", f"{c['kept']:,}", f"{c['rejected']:,}")
    console.print(table)
    say(f"outputs in {manifest['out']}")
    for line in manifest.get("warnings", []):  # said during the build too; here they are not missed
        say(line)


def parse_verify_homes(text: str) -> Optional[int]:
    """``--verify-homes``: a positive number of further homes, or ``all`` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise HomeLoopError(f"--verify-homes takes a positive number of homes or 'all', got {text!r}")
    return value


@app.command()
@_guard
def applicability(
    from_dir: Path = typer.Option(Path("outputs/default"), "--from", help="A build folder (holds applicability.parquet)."),
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
    from homeloop.pipeline.queries import QUERY_INTERRUPTED, query_applicability, run_sql

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
        return
    print_frame(result, limit=limit, title=f"{len(result):,} rows")


def write_result(frame, out: Path) -> None:
    from homeloop.io import atomic_path

    suffix = out.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise HomeLoopError(f"--out {out}: use a .csv or .parquet file name")
    with atomic_path(out) as tmp:
        if suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)


def print_frame(frame, *, limit: int, title: str) -> None:
    table = Table(title=title, header_style="bold")
    for col in frame.columns:  # a query's names and values are printed as they are, never as markup
        table.add_column(Text(str(col)), overflow="fold")
    for row in frame.head(limit).itertuples(index=False):
        table.add_row(*(Text(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)) for v in row))
    console.print(table)
    if len(frame) > limit:
        console.print(f"… {len(frame) - limit:,} more rows (--limit, or --out FILE for all)")


@app.command()
@_guard
def verify(
    build_dir: Path = typer.Argument(..., help="A build folder (the --out of `homeloop build`)."),
) -> None:
    """Check a build folder against its manifest: file hashes, counts, every home's files, applicability,
    and no file that no stage of the build wrote. Exit code 0 when all is well, 1 when something is
    missing, changed or not the build's, 2 for a folder that is no build."""
    from homeloop.pipeline.verify import verify_build

    result = verify_build(build_dir)
    for line in result.problems:
        say(line)
    verdict = "all as in manifest.json" if result.ok else f"{len(result.problems):,} problems"
    say(f"{build_dir}: {result.files_checked:,} files checked, {verdict}")
    if not result.ok:
        raise typer.Exit(code=1)


def read_home(path: Path):
    """The home file at ``path``, whose id must be a safe id (homeloop/ids.py): builds and runs name
    files by it, so one that could not be built or run is refused here too."""
    from homeloop.home import Home
    from homeloop.ids import safe_id

    home = Home.read(path)
    safe_id(home.home_id, "home", path)
    return home


@app.command()
@_guard
def sim(
    home_dir: Path = typer.Argument(..., help="A folder holding home.json, e.g. outputs/default/homes/house."),
    task: str = typer.Option(..., "--task", help="A task id (homeloop/bench/tasks/), e.g. handle_smoke_alarm."),
    robot: Optional[str] = typer.Option(None, "--robot", help="A robot body id (default: the experiments' body)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Episode seed; the same seed gives the same timeline."),
    seconds: Optional[float] = typer.Option(None, "--seconds",
                                            help="Simulated seconds after the wake event (default: the horizon)."),
) -> None:
    """Run an episode in which the agent only waits, and print its timeline: the events an agent is
    told of and the ground truth's milestones, in seconds from the wake event."""
    from homeloop.sim.episode import DEFAULT_ROBOT, Episode, EpisodeError

    check_within_horizon(task, seconds, "--seconds", above_zero=True)
    path = home_dir / "home.json"
    if not path.is_file():
        fail(f"{path}: no home file; give a folder holding home.json, e.g. outputs/default/homes/house")
    try:
        episode = Episode(read_home(path), task, robot or DEFAULT_ROBOT, seed, images=False)
    except EpisodeError as exc:
        fail(str(exc))
    episode.call("clock_wait", {"seconds": seconds if seconds is not None else episode.task.horizon_s})
    print_sim_timeline(episode)


def print_sim_timeline(episode) -> None:
    """The events (told to the agent) and milestones (ground truth) of an episode, then its final state."""
    world, wake = episode.world, episode.wake_time
    rows = sorted([(e.time, "event", e) for e in world.events] + [(e.time, "ground truth", e) for e in world.milestones],
                  key=lambda r: r[0])
    table = Table(title=f"{episode.task.id} in {episode.home.home_id}, seed {episode.seed}", header_style="bold")
    for col, justify in (("t (s)", "right"), ("seen as", "left"), ("what", "left"), ("source", "left"),
                         ("details", "left")):
        table.add_column(col, justify=justify, overflow="fold")
    for time, seen_as, e in rows:
        details = ", ".join(f"{k}={v}" for k, v in e.data.items())
        table.add_row(f"{time - wake:+.1f}", seen_as, Text(e.kind), Text(e.source), Text(details))
    console.print(table)
    say(f"final state at {episode.now():+.1f} s: {final_state(world)}")


def final_state(world) -> str:
    """One line on the hazards' state: pan temperatures, burners lit, water spilled, the densest smoke."""
    parts = []
    snapshots = {m.name: m.snapshot() for m in world.modules}
    for pan, state in snapshots.get("cooking", {}).get("pans", {}).items():
        parts.append(f"{pan} {state['temperature_c']:.0f} °C" + (", burning" if state["burning"] else ""))
    lit = [f"{d.id}.{k}" for d in world.devices_of_type("stove") for k, v in d.values.items() if v is True]
    parts.append("burners lit: " + (", ".join(lit) or "none"))
    water = snapshots.get("water", {})
    if water.get("sources"):
        parts.append(f"water spilled {water['total_litres']:.1f} L")
    rooms = snapshots.get("smoke", {}).get("rooms", {})
    if rooms:
        room, density = max(rooms.items(), key=lambda kv: kv[1])
        parts.append(f"densest smoke {density:.2f} in {world.home.room(room).name}")
    return "; ".join(parts)


@app.command()
@_guard
def render(
    home_dir: Path = typer.Argument(..., help="A folder holding home.json, e.g. outputs/default/homes/house."),
    camera: str = typer.Option(..., "--camera", help="A camera id of the home file, or 'robot' (with --task)."),
    out: Path = typer.Option(..., "--out", help="The PNG file to write."),
    task: Optional[str] = typer.Option(None, "--task", help="Render the task's scenario (default: the home as built)."),
    at: Optional[float] = typer.Option(None, "--at", help="With --task: simulated seconds after the task's wake "
                                       "event (default 0)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Episode seed (with --task)."),
    no_privacy: bool = typer.Option(False, "--no-privacy", help="Ignore the camera's privacy mode."),
) -> None:
    """Render one camera of a built home to a PNG: a dome camera, or the robot's head camera in a
    task's scenario, optionally some simulated seconds after the wake event."""
    import base64

    from homeloop.io import write_bytes
    from homeloop.sim.render.still import render_still

    if at is not None and task is None:
        fail(f"--at {at:g}: the seconds after a task's wake event; give --task too")
    check_within_horizon(task, at, "--at")
    file_out(out)
    path = home_dir / "home.json"
    if not path.is_file():
        fail(f"{path}: no home file; give a folder holding home.json, e.g. outputs/default/homes/house")
    still = render_still(read_home(path), camera, task=task, at=at or 0.0, seed=seed, privacy=not no_privacy)
    write_bytes(out, base64.b64decode(still.png))
    height, width = still.image.shape[:2]
    hazards = ", ".join(sorted({h["kind"] for h in still.frame.hazards})) or "none"
    say(f"{out}: {camera}, {width}x{height}, t = {still.t:+.1f} s; hazards in view: {hazards}")


def check_within_horizon(task: Optional[str], seconds: Optional[float], flag: str, *, above_zero: bool = False) -> None:
    """One line for simulated seconds outside a task's episode: from its wake event (0, or just after
    with ``above_zero``) to its horizon. An unknown task is left to the episode to name."""
    from homeloop.bench.tasks import load_tasks

    known = load_tasks().get(task) if task is not None else None
    if seconds is None or known is None:
        return
    horizon = known.horizon_s
    inside = 0 < seconds <= horizon if above_zero else 0 <= seconds <= horizon  # False for nan
    if not inside:
        fail(f"{flag} {seconds:g}: outside the episode of {task}; give {'more than ' if above_zero else ''}0 "
             f"to {horizon:g} seconds after its wake event ({horizon:g} s is its horizon)")


def build_house_home(folder: Path) -> Path:
    """The house's home file in ``folder`` (built by the pipeline once, then reused)."""
    from homeloop.pipeline.houses import write_house_home

    return write_house_home(folder)


def dask_cluster_client(address: str):
    """A client of the Dask scheduler at ``address`` (one line when it does not answer)."""
    from homeloop.pipeline.parallel import dask_client

    return dask_client(address)


def _mount_bench() -> None:
    from homeloop.bench import commands

    commands.HOUSE_BUILDER = build_house_home
    commands.DASK_CLIENT = dask_cluster_client
    app.add_typer(commands.bench_app, name="bench")


_mount_bench()


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
