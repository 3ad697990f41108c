"""``homeloop bench``: run agents on tasks, score the records, view the episodes (docs/scores.md).

The house (``--homes house``) is built by the pipeline; the library does not
import the pipeline, so the top-level command line hands a builder in through
:data:`HOUSE_BUILDER` when it mounts this sub-command, and the way to reach
a Dask cluster through :data:`DASK_CLIENT`. A build folder (``--homes
BUILD_DIR``) gives the pairs its tables name (:mod:`homeloop.bench.pairs`).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path
from typing import Any, Callable, ContextManager, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from homeloop.bench import pairs, runner, scoring
from homeloop.bench.agents.conversation import DEFAULT_PROMPT, PROMPTS
from homeloop.bench.records import UNSCORED_ENDINGS, read_records
from homeloop.bench.tasks import load_tasks
from homeloop.errors import HomeLoopError, user_error
from homeloop.ids import safe_id
from homeloop.progress import console, print_error

bench_app = typer.Typer(add_completion=False, no_args_is_help=True,
                        help="Run agents on the benchmark's tasks, score the records, view episodes.")

#: Writes the house's home file into a folder and returns its path (set by homeloop.cli).
HOUSE_BUILDER: Optional[Callable[[Path], Path]] = None
#: ``DASK_CLIENT(address)``: a context manager yielding a client of the Dask scheduler at that
#: address, or one line saying it does not answer (set by homeloop.cli).
DASK_CLIENT: Optional[Callable[[str], ContextManager[Any]]] = None

HOUSE = scoring.HOUSE


def _fail(message: str) -> None:
    print_error(message)
    raise typer.Exit(code=2)


def parse_tasks(text: str) -> list[str]:
    """``all``, ``core``, ``extension``, a family name, or comma-separated task ids."""
    tasks = load_tasks()
    families = {t.family for t in tasks.values()}
    if text == "all":
        return sorted(tasks)
    if text == "core":
        return sorted(t for t, task in tasks.items() if task.core)
    if text == "extension":
        return sorted(t for t, task in tasks.items() if not task.core)
    if text in families:
        return sorted(t for t, task in tasks.items() if task.family == text)
    chosen = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in chosen if t not in tasks]
    if unknown:
        raise HomeLoopError(f"unknown task(s) {', '.join(unknown)}; use all, core, extension, a family "
                            f"({', '.join(sorted(families))}) or task ids: {', '.join(sorted(tasks))}")
    return chosen


def parse_seeds(text: str, flag: str = "--seeds") -> list[int]:
    try:
        seeds = sorted({int(s) for s in text.split(",") if s.strip()})
    except ValueError:
        raise HomeLoopError(f"{flag} takes whole numbers separated by commas, got {text!r}") from None
    if not seeds:
        raise HomeLoopError(f"{flag} names no seed; give whole numbers separated by commas, e.g. 0,1")
    if seeds[0] < 0:  # a seed seeds numpy's generators, which take none below 0
        raise HomeLoopError(f"{flag} {text}: seeds are whole numbers from 0 up, got {seeds[0]}")
    return seeds


def resolve_homes(spec: str, run_dir: Path) -> dict[str, Path]:
    """``house``: the house's home file, written into the run folder."""
    if spec != HOUSE:
        raise HomeLoopError(f"{spec}: give the house, or a build folder (BUILD_DIR or BUILD_DIR:id,id)")
    if HOUSE_BUILDER is None:
        raise HomeLoopError("the house cannot be built here; pass a build folder with --homes")
    return {HOUSE: HOUSE_BUILDER(run_dir / "homes" / HOUSE)}


def plan_episodes(homes: str, run_dir: Path, tasks: list[str], robot: str, seeds: list[int], flags: runner.Flags,
                  *, verified_only: bool = True, sample: Optional[int] = None, stratify: str = "task",
                  sample_seed: int = 0) -> tuple[list[runner.EpisodeSpec], list[str]]:
    """The episodes of a run, and lines worth saying about how its pairs were chosen.

    ``house``: every task in the house. ``BUILD_DIR`` or ``BUILD_DIR:id,id``: the build's
    verified pairs (or screened ones) of the robot and tasks, in those homes or a sample."""
    if homes == HOUSE:
        if sample is not None:
            raise HomeLoopError("--sample draws homes from a build; pass --homes BUILD_DIR")
        return runner.plan(resolve_homes(homes, run_dir), tasks, robot, seeds, flags), []
    folder, _, ids = homes.partition(":")
    if not (Path(folder) / "homes").is_dir():
        raise HomeLoopError(f"{folder}: no homes/ folder; run `homeloop build --out {folder}` first, or use --homes house")
    wanted = [i.strip() for i in ids.split(",") if i.strip()] or None
    chosen = pairs.select_pairs(folder, robot, tasks, verified_only=verified_only, homes=wanted, sample=sample,
                                stratify=stratify, seed=sample_seed)
    for home in chosen.home_files:  # ids from the build's tables name files of the run folder
        safe_id(home, "home", Path(folder) / pairs.APPLICABILITY_FILE)
    specs = runner.plan_pairs(chosen.pairs, chosen.home_files, robot, seeds, flags)
    homes_run = len(chosen.home_files)
    kind = "verified" if verified_only else "screened"
    return specs, [*chosen.notes, f"{len(chosen.pairs):,} {kind} pairs in {homes_run:,} homes × {len(seeds)} seeds "
                                  f"= {len(specs):,} episodes"]


@bench_app.command("run")
def run_command(
    agent: str = typer.Option(..., "--agent", help="scripted, do-nothing, over-reactor, openai, replay."),
    tasks: str = typer.Option("all", "--tasks", help="all, core, extension, a family, or task ids T1,T2."),
    homes: str = typer.Option(HOUSE, "--homes", help="house, or BUILD_DIR, or BUILD_DIR:id,id."),
    robot: str = typer.Option("unitree_g1_d_ultimate", "--robot", help="Robot body (catalog id)."),
    seeds: str = typer.Option("0,1", "--seeds", help="Seeds, comma-separated."),
    out: Path = typer.Option(..., "--out", help="Run folder: records go to OUT/episodes/; a rerun resumes."),
    workers: int = typer.Option(1, "--workers", min=1, help="Episodes run at once (processes)."),
    withhold: list[str] = typer.Option([], "--withhold", help="Withhold a service (repeatable)."),
    show_costs: bool = typer.Option(False, "--show-costs", help="Skill costs in the tool descriptions."),
    no_images: bool = typer.Option(False, "--no-images", help="Captures return no pixels."),
    model: Optional[str] = typer.Option(None, "--model", help="openai: the model name the endpoint serves "
                                        "(replay: a label for the records)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="openai: an OpenAI-compatible endpoint, e.g. "
                                           "http://127.0.0.1:8000/v1 (vLLM) or :11434/v1 (Ollama); default OpenAI's."),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="openai: the environment variable "
                                              "holding the API key (default OPENAI_API_KEY)."),
    max_requests: Optional[int] = typer.Option(None, "--max-requests", min=1, help="openai, replay: requests "
                                               "to the model per episode before it ends (default 100)."),
    rate_limit: Optional[float] = typer.Option(None, "--rate-limit", min=0.01, help="openai: requests per "
                                               "minute, shared by all workers."),
    temperature: Optional[float] = typer.Option(None, "--temperature", min=0.0, help="openai: sampling "
                                                "temperature (default 0)."),
    images_in: Optional[str] = typer.Option(None, "--images-in", help="openai, replay: put images in the tool "
                                            "messages (tool, the default) or in a user message after them (user)."),
    prompt: Optional[str] = typer.Option(None, "--prompt", help=f"openai: the role prompt, one of "
                                         f"{', '.join(PROMPTS)} (default {DEFAULT_PROMPT}; docs/agents.md)."),
    max_image_side: Optional[int] = typer.Option(None, "--max-image-side", help="openai: send images with their "
                                                 "longer side at most N pixels (aspect kept, never enlarged)."),
    replies: Optional[Path] = typer.Option(None, "--replies", help="replay: a transcript, one assistant reply "
                                           "per line (JSONL), or an episode record."),
    verified_only: bool = typer.Option(True, "--verified-only/--no-verified-only", help="With a build: only the "
                                       "pairs the scripted reference agent passed (or every screened pair)."),
    sample: Optional[int] = typer.Option(None, "--sample", min=1, help="With a build: a fixed sample of this many "
                                         "homes besides the house."),
    stratify: str = typer.Option("task", "--stratify", help="What the sample covers evenly: task or family."),
    sample_seed: int = typer.Option(0, "--seed", "--sample-seed", min=0, help="Seed of the sample of homes."),
    dask_address: Optional[str] = typer.Option(None, "--dask-address", help="Run the episodes on this running Dask "
                                               "scheduler's workers (they need the run folder and the homes at "
                                               "the same paths)."),
) -> None:
    """Run an agent on tasks and keep one record per episode."""
    flags = runner.Flags(tuple(sorted(withhold)), show_costs, not no_images)
    with contextlib.ExitStack() as held:
        try:
            options = agent_options(agent, out, model=model, base_url=base_url, api_key_env=api_key_env,
                                    max_requests=max_requests, rate_limit=rate_limit, temperature=temperature,
                                    image_mode=images_in, replies=replies, prompt=prompt,
                                    max_image_side=max_image_side)
            # Held from before the house's home file is written into the folder to the run's end.
            held.enter_context(runner.run_folder(out, agent, options, flags))
            specs, notes = prepare_run(agent, options, tasks=tasks, homes=homes, robot=robot, seeds=seeds, out=out,
                                       flags=flags, verified_only=verified_only, sample=sample, stratify=stratify,
                                       sample_seed=sample_seed)
        except (HomeLoopError, KeyError, ValueError, OSError) as exc:
            _fail(_before_run_error(exc, out))
        for line in notes:
            console.print(line, highlight=False, soft_wrap=True)
        _run_with_progress(specs, agent, out, workers, options, dask_address)


def _before_run_error(exc: Exception, out: Path) -> str:
    """The line for an error before any episode runs; a file-system one (a run folder through a
    file, a read-only disk) as every command says it (homeloop.errors)."""
    if isinstance(exc, OSError):
        return str(user_error(exc, out) or exc)
    return str(exc).strip("'\"")


def prepare_run(agent: str, options: dict[str, Any], *, tasks: str, homes: str, robot: str, seeds: str, out: Path,
                flags: runner.Flags = runner.Flags(), verified_only: bool = True, sample: Optional[int] = None,
                stratify: str = "task", sample_seed: int = 0) -> tuple[list[runner.EpisodeSpec], list[str]]:
    """Check a run's arguments and list its episodes (``homeloop bench run`` and the evaluate
    flow): an unknown robot, service, agent or task, or an endpoint that does not answer, is
    one line before any episode runs. Returns the episodes and lines worth saying."""
    from homeloop.bench.agents import make_agent
    from homeloop.catalog import load_catalog
    from homeloop.sim.skills import SERVICES

    if robot not in load_catalog().robots:
        raise HomeLoopError(f"unknown robot {robot!r}; bodies: {', '.join(load_catalog().robots)}")
    bad = [s for s in flags.withheld if s not in SERVICES]
    if bad:
        raise HomeLoopError(f"unknown service(s) {', '.join(bad)}; services: {', '.join(SERVICES)}")
    make_agent(agent, **options)
    task_ids, seed_list = parse_tasks(tasks), parse_seeds(seeds)
    if agent == "openai":  # before any episode: an endpoint that does not answer or refuses the key
        from homeloop.bench.agents.openai_agent import preflight

        preflight(**{k: options[k] for k in ("model", "base_url", "api_key_env") if k in options})
    return plan_episodes(homes, out, task_ids, robot, seed_list, flags, verified_only=verified_only,
                         sample=sample, stratify=stratify, sample_seed=sample_seed)


#: The run options each agent that talks to a model takes (docs/agents.md).
AGENT_FLAGS = {
    "openai": ("model", "base_url", "api_key_env", "max_requests", "rate_limit", "temperature", "image_mode",
               "prompt", "max_image_side"),
    "replay": ("model", "max_requests", "image_mode", "replies"),
}


def agent_options(agent: str, out: Path, **given: object) -> dict[str, object]:
    """The agent's options from the flags given; a flag the agent does not take is an error.

    An agent that takes a role prompt gets the default one unless another is named. The rate limit
    is kept in ``OUT/.rate_limit`` so every worker of the run shares it."""
    given = {k: v for k, v in given.items() if v is not None}
    taken = AGENT_FLAGS.get(agent, ())
    unused = [k for k in given if k not in taken]
    if unused:
        flags = ", ".join("--" + ("images-in" if k == "image_mode" else k.replace("_", "-")) for k in unused)
        users = [a for a, names in AGENT_FLAGS.items() if set(unused) <= set(names)]
        raise HomeLoopError(f"{flags}: not an option of the {agent} agent"
                            + (f" (only of: {', '.join(users)})" if users else ""))
    if "prompt" in taken:  # recorded in run.json even when left at its default
        given.setdefault("prompt", DEFAULT_PROMPT)
    if "replies" in given:
        given["replies"] = str(Path(given["replies"]).resolve())
    if "rate_limit" in given:
        given["rate_limit_file"] = str((out / ".rate_limit").resolve())
    return given


def _run_with_progress(specs: list[runner.EpisodeSpec], agent: str, out: Path, workers: int,
                       options: Optional[dict] = None, dask_address: Optional[str] = None) -> None:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[passed]} passed"))
    with Progress(*columns, console=console) as bar:
        job = bar.add_task(f"{agent}", total=len(specs), passed=0)
        passed = 0

        def tick(summary: dict) -> None:
            nonlocal passed
            passed += bool(summary["passed"])
            bar.update(job, advance=1, passed=passed)

        try:
            done = run_episodes(specs, agent, out, options, workers=workers, dask_address=dask_address, progress=tick)
        except KeyboardInterrupt:
            console.print("interrupted; finished episodes are kept — rerun the same command to resume")
            raise typer.Exit(code=130)
        except HomeLoopError as exc:
            _fail(str(exc))
        bar.update(job, completed=len(specs))
    for summary in done:
        if summary["ended_by"] == runner.NOT_SET_UP:
            console.print(f"[yellow]not run:[/] {summary['id']}: {summary['error']}", highlight=False, soft_wrap=True)
    console.print(run_summary(specs, len(done), read_records([out]).records, out), highlight=False, soft_wrap=True)


def run_summary(specs: list[runner.EpisodeSpec], ran: int, records: list[dict], out: Path) -> str:
    """The line after a run: episodes run and kept, then passes, failures and, apart from both, the
    episodes that ended without a verdict on the agent (by ending: not scored), with how to retry them."""
    ids = {s.id for s in specs}
    mine = [r for r in records if r["episode_id"] in ids]
    unscored = Counter(r["ended_by"] for r in mine if r["ended_by"] in UNSCORED_ENDINGS)
    passed = sum(bool(r["passed"]) for r in mine)
    counts = [f"{passed}/{len(specs)} passed", f"{len(mine) - passed - unscored.total()} failed"]
    counts += [f"{n} {ending}" for ending, n in sorted(unscored.items())]
    if len(mine) < len(specs):
        counts.append(f"{len(specs) - len(mine)} not run")
    retry = " (not scored: rerun the same command to retry them)" if unscored else ""
    return (f"{ran} episodes run, {len(specs) - ran} kept from before; {', '.join(counts)}{retry}. "
            f"Records: {out / 'episodes'}")


def run_episodes(specs: list[runner.EpisodeSpec], agent: str, out: Path, options: Optional[dict] = None, *,
                 workers: int = 1, dask_address: Optional[str] = None,
                 progress: Optional[Callable[[dict], None]] = None) -> list[dict]:
    """:func:`runner.run`, on the Dask scheduler at ``dask_address`` when one is given."""
    if dask_address is None:
        return runner.run(specs, agent, out, agent_options=options, workers=workers, progress=progress)
    if DASK_CLIENT is None:
        raise HomeLoopError("--dask-address: no way to reach Dask here; run through the homeloop command")
    with DASK_CLIENT(dask_address) as client:
        return runner.run(specs, agent, out, agent_options=options, client=client, progress=progress)


@bench_app.command("score")
def score_command(
    run_dirs: list[Path] = typer.Argument(None, help="Run folders (each with episodes/*.json)."),
    outcomes: Optional[Path] = typer.Option(None, "--outcomes", help="Score a CSV of outcomes instead."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for the CSV tables."),
) -> None:
    """Recompute every score table from records (or an outcomes CSV) and print the main ones."""
    if outcomes is not None:
        try:
            result = scoring.read_outcomes_csv(outcomes)
        except scoring.OutcomesError as exc:
            _fail(str(exc))
        frame, rejected = result.frame, result.rejected
    else:
        if not run_dirs:
            _fail("give one or more run folders, or --outcomes FILE.csv")
        missing = [d for d in run_dirs if not d.is_dir()]
        if missing:
            _fail(f"{missing[0]}: no such run folder")
        result = scoring.outcomes_from_run_dirs(run_dirs)
        frame, rejected = result.frame, result.rejected
    for line in rejected:
        console.print(f"[yellow]skipped:[/] {line}", highlight=False, soft_wrap=True)
    if frame.empty:
        _fail("nothing to score: no readable records or outcome rows")
    show_tables(frame, out)


#: Tables written but not printed (one row per check of every task: read it as CSV).
UNPRINTED = ("checks",)


def show_tables(frame, out: Optional[Path]) -> None:
    """Print every non-empty table but :data:`UNPRINTED`, titled with the episodes it covers, and write
    every one as CSV into ``out`` when given."""
    from homeloop.io import write_text

    tables = scoring.all_tables(frame)
    for name, table in tables.items():
        if name not in UNPRINTED and not table.empty:
            console.print(_rich_table(f"{name} — {scoring.TABLES[name].title}", table))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            write_text(out / f"{name}.csv", table.to_csv(index=False))
        console.print(f"tables written to {out}/ ({', '.join(f'{n}.csv' for n in tables)})")


@bench_app.command("replay-latency")
def replay_latency_command(
    run_dir: Path = typer.Argument(..., help="A run folder written by `homeloop bench run` with a model."),
    out: Path = typer.Option(..., "--out", help="Run folder for the replayed episodes; a rerun resumes."),
) -> None:
    """Replay a run's model replies with each request's recorded latency added as simulated time, and
    score the replay (docs/scores.md)."""
    from homeloop.bench.agents.replay import replay_with_latency

    if Path(out).resolve() == Path(run_dir).resolve():
        _fail(f"--out {out}: give another folder than the run folder it replays")
    try:
        done = replay_with_latency(run_dir, out)
    except HomeLoopError as exc:
        _fail(str(exc))
    for line in done.unreadable:
        console.print(f"[yellow]skipped:[/] {line}", highlight=False, soft_wrap=True)
    for ids, what in ((done.skipped, "skipped, no model replies to replay"),
                      (done.without_latency, "replayed without added time, a request's latency is unknown")):
        if ids:
            console.print(f"[yellow]{len(ids)} episode(s) {what}:[/] {', '.join(ids)}", highlight=False, soft_wrap=True)
    if not done.replayed and not done.without_latency:
        _fail(f"{run_dir}: no episode a model played; nothing to replay")
    console.print(f"{len(done.replayed)} episodes replayed with their latency into {out}", highlight=False)
    show_tables(scoring.outcomes_from_run_dirs([out]).frame, None)


def _rich_table(title: str, frame) -> Table:
    table = Table(title=title)
    for col in frame.columns:
        table.add_column(str(col))
    for row in frame.itertuples(index=False):
        table.add_row(*["" if v is None or v != v else str(v) for v in row])
    return table


@bench_app.command("view")
def view_command(run_dir: Path = typer.Argument(..., help="A run folder written by `homeloop bench run`.")) -> None:
    """Write RUN_DIR/index.html: every episode's checks, timeline and route over the home."""
    from homeloop.bench.viewer import write_viewer

    if not (run_dir / "episodes").is_dir():
        _fail(f"{run_dir}: not a run folder (no episodes/); run `homeloop bench run --out {run_dir}` first")
    console.print(f"wrote {write_viewer(run_dir)}")
