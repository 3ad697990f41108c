"""``homeloop bench``: run agents on tasks, score the records, view the episodes (docs/scores.md).

A run's plan (agent options, episodes) is :mod:`homeloop.bench.run_plan`'s; the command hands it
the pipeline's house writer for ``--homes house`` and runs the episodes through
:func:`homeloop.flows.episodes.run_episodes` (here, or on a Dask cluster).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from homeloop.bench.agents.prompts import DEFAULT_PROMPT, PROMPTS
from homeloop.cli.common import fail
from homeloop.core.errors import INTERRUPTED_EXIT_CODE, HomeLoopError, user_error
from homeloop.core.ids import DEFAULT_ROBOT, DEFAULT_SEEDS, DEFAULT_TASKS, HOUSE_ID
from homeloop.core.progress import console

bench_app = typer.Typer(add_completion=False, no_args_is_help=True,
                        help="Run agents on the benchmark's tasks, score the records, view episodes.")


@bench_app.command("run")
def run_command(
    agent: str = typer.Option(..., "--agent", help="scripted, do-nothing, over-reactor, openai, anthropic, replay, "
                              "an entry point of homeloop.agents, or a plug-in as module.path:Name (docs/agents.md)."),
    tasks: str = typer.Option(DEFAULT_TASKS, "--tasks", help="all, core, extension, a family, or task ids "
                              "T1,T2; control plays the home-control episodes of --episodes."),
    homes: str = typer.Option(HOUSE_ID, "--homes", help="house, or BUILD_DIR, or BUILD_DIR:id,id."),
    robot: str = typer.Option(DEFAULT_ROBOT, "--robot", help="Robot body (catalog id)."),
    seeds: Optional[str] = typer.Option(None, "--seeds", help=f"Seeds, comma-separated (default {DEFAULT_SEEDS})."),
    out: Path = typer.Option(..., "--out", help="Run folder: records go to OUT/episodes/; a rerun resumes."),
    workers: int = typer.Option(1, "--workers", min=1, help="Episodes run at once (processes)."),
    withhold: list[str] = typer.Option([], "--withhold", help="Withhold a service (repeatable)."),
    show_costs: bool = typer.Option(False, "--show-costs", help="Skill costs in the tool descriptions."),
    no_images: bool = typer.Option(False, "--no-images", help="Captures return no pixels."),
    model: Optional[str] = typer.Option(None, "--model", help="openai, anthropic: the model name the endpoint serves "
                                        "(replay: a label for the records)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="openai: an OpenAI-compatible endpoint, e.g. "
                                           "http://127.0.0.1:8000/v1 (vLLM) or :11434/v1 (Ollama); default OpenAI's. "
                                           "anthropic: a Messages API endpoint; default Anthropic's."),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="openai, anthropic: the environment variable "
                                              "holding the API key (default OPENAI_API_KEY, ANTHROPIC_API_KEY)."),
    max_requests: Optional[int] = typer.Option(None, "--max-requests", min=1, help="openai, anthropic, replay: "
                                               "requests to the model per episode before it ends (default 100)."),
    rate_limit: Optional[float] = typer.Option(None, "--rate-limit", min=0.01, help="openai, anthropic: requests per "
                                               "minute, shared by all workers."),
    temperature: Optional[float] = typer.Option(None, "--temperature", min=0.0, help="openai, anthropic: sampling "
                                                "temperature (default 0)."),
    images_in: Optional[str] = typer.Option(None, "--images-in", help="openai, replay: put images in the tool "
                                            "messages (tool, the default) or in a user message after them (user)."),
    prompt: Optional[str] = typer.Option(None, "--prompt", help=f"openai, anthropic: the role prompt, one of "
                                         f"{', '.join(PROMPTS)} (default {DEFAULT_PROMPT}; docs/agents.md)."),
    max_image_side: Optional[int] = typer.Option(None, "--max-image-side", help="openai, anthropic: send images "
                                                 "with their longer side at most N pixels (aspect kept, never "
                                                 "enlarged)."),
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
    episodes: Optional[Path] = typer.Option(None, "--episodes", help="With --tasks control: the control episodes "
                                            "file (JSONL) written by generate-control."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="With --tasks control: a model that also "
                                              "judges each infeasible report (off by default; docs/scores.md)."),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url", help="The judge's endpoint."),
    judge_api_key_env: Optional[str] = typer.Option(None, "--judge-api-key-env", help="The judge's key variable."),
) -> None:
    """Run an agent on tasks and keep one record per episode."""
    given = {"model": model, "base_url": base_url, "api_key_env": api_key_env, "max_requests": max_requests,
             "rate_limit": rate_limit, "temperature": temperature, "image_mode": images_in, "replies": replies,
             "prompt": prompt, "max_image_side": max_image_side}
    chosen = {"tasks": tasks, "homes": homes, "robot": robot, "seeds": seeds, "verified_only": verified_only,
              "sample": sample, "stratify": stratify, "sample_seed": sample_seed, "episodes": episodes,
              "judge": (judge_model, judge_base_url, judge_api_key_env)}
    _plan_and_run(agent, out, workers, dask_address, _flags(withhold, show_costs, no_images), given, chosen)


def _flags(withhold: list[str], show_costs: bool, no_images: bool) -> Any:
    from homeloop.bench.runner import Flags

    return Flags(tuple(sorted(withhold)), show_costs, not no_images)


def _plan_and_run(agent: str, out: Path, workers: int, dask_address: Optional[str], flags: Any, given: dict[str, Any],
                  chosen: dict[str, Any]) -> None:
    """Plan the run, its run folder held from before anything is written into it to the run's end; run it."""
    with contextlib.ExitStack() as held:
        options, specs = _plan_run(held, agent, out, flags, given, chosen)
        _run_with_progress(specs, agent, out, workers, options, dask_address)


def _check_control_options(chosen: dict[str, Any]) -> None:
    """One line (exit code 2) for an option that does not go with the tasks: ``--seeds`` with control
    (each control episode carries its seed), the judge without it; else the default seeds."""
    tasks, seeds, (judge_model, judge_base_url, judge_key_env) = chosen["tasks"], chosen["seeds"], chosen["judge"]
    if tasks == "control" and seeds is not None:
        fail(f"--seeds {seeds}: not with --tasks control; each control episode carries its own seed "
             "(its seed field; choose them with generate-control --seed)")
    if tasks != "control" and (judge_model or judge_base_url or judge_key_env):
        fail("--judge-model, --judge-base-url and --judge-api-key-env go with --tasks control")
    if (judge_base_url or judge_key_env) and not judge_model:
        fail("--judge-base-url, --judge-api-key-env: name the judge with --judge-model NAME")
    chosen["seeds"] = seeds or DEFAULT_SEEDS


def _plan_run(held: contextlib.ExitStack, agent: str, out: Path, flags: Any, given: dict[str, Any],
              chosen: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """The agent's options and the run's episodes, the run folder held (in ``held``) from before the
    house's home file is written into it to the run's end; an error before any episode is one line."""
    from homeloop.bench import runner
    from homeloop.bench.run_plan import agent_options

    _check_control_options(chosen)
    try:
        options = agent_options(agent, out, **given)
        held.enter_context(runner.run_folder(out, agent, options, flags))
        specs, notes = _plan_episodes(agent, options, out, flags, chosen)
    except (HomeLoopError, KeyError, ValueError, OSError) as exc:
        fail(_before_run_error(exc, out))
    for line in notes:
        console.print(line, highlight=False, soft_wrap=True)
    return options, specs


def _plan_episodes(agent: str, options: dict[str, Any], out: Path, flags: Any,
                   chosen: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """The run's episodes: the home-control episodes of ``--episodes`` with ``--tasks control``, else the
    tasks' (homeloop.bench.run_plan)."""
    from homeloop.bench.run_plan import check_run, prepare_run
    from homeloop.pipeline.houses import write_house_home

    episodes, (judge_model, judge_base_url, judge_key_env) = chosen.pop("episodes"), chosen.pop("judge")
    if chosen["tasks"] != "control":
        if episodes is not None:
            raise HomeLoopError("--episodes goes with --tasks control")
        return prepare_run(agent, options, out=out, flags=flags, write_house=write_house_home, **chosen)
    from homeloop.bench.control.plan import plan_control

    if episodes is None:
        raise HomeLoopError("--tasks control plays the episodes of --episodes FILE.jsonl "
                            "(written by `homeloop bench generate-control`)")
    check_run(agent, options, chosen["robot"], flags)
    planned = plan_control(episodes, chosen["homes"], out, chosen["robot"], flags, write_house_home)
    if judge_model:
        from homeloop.bench.agents.openai_agent import DEFAULT_API_KEY_ENV, preflight
        from homeloop.bench.control.judge import JUDGE_OPTION, JudgeSettings

        settings = JudgeSettings(judge_model, judge_base_url, judge_key_env or DEFAULT_API_KEY_ENV)
        where = preflight(settings.model, settings.base_url, settings.api_key_env or DEFAULT_API_KEY_ENV)
        options[JUDGE_OPTION] = settings.as_option()
        planned[1].append(f"the reports of infeasible requests are also judged by {judge_model} at {where}")
    return planned


def _before_run_error(exc: Exception, out: Path) -> str:
    """The line for an error before any episode runs; a file-system one (a run folder through a
    file, a read-only disk) as every command says it (homeloop.core.errors)."""
    if isinstance(exc, OSError):
        return str(user_error(exc, out) or exc)
    return str(exc).strip("'\"")


def _run_with_progress(specs: list[Any], agent: str, out: Path, workers: int,
                       options: Optional[dict[str, Any]] = None, dask_address: Optional[str] = None) -> None:
    """Run the episodes under a progress bar counting passes, then say what the run did."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from homeloop.bench import runner
    from homeloop.bench.records import read_records
    from homeloop.flows.episodes import run_episodes

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[passed]} passed"))
    with Progress(*columns, console=console) as bar:
        job = bar.add_task(f"{agent}", total=len(specs), passed=0)
        passed = 0

        def tick(summary: dict[str, Any]) -> None:
            nonlocal passed
            passed += bool(summary["passed"])
            bar.update(job, advance=1, passed=passed)

        try:
            done = run_episodes(specs, agent, out, options, workers=workers, dask_address=dask_address, progress=tick)
        except KeyboardInterrupt:
            console.print("interrupted; finished episodes are kept — rerun the same command to resume")
            raise typer.Exit(code=INTERRUPTED_EXIT_CODE) from None
        except HomeLoopError as exc:
            fail(str(exc))
        bar.update(job, completed=len(specs))
    for summary in done:
        if summary["ended_by"] == runner.NOT_SET_UP:
            console.print(f"[yellow]not run:[/] {summary['id']}: {summary['error']}", highlight=False, soft_wrap=True)
    console.print(run_summary(specs, len(done), read_records([out]).records, out), highlight=False, soft_wrap=True)


def run_summary(specs: list[Any], ran: int, records: list[dict[str, Any]], out: Path) -> str:
    """The line after a run: episodes run and kept, then passes, failures and, apart from both, the
    episodes that ended without a verdict on the agent (by ending: not scored), with how to retry them."""
    from homeloop.bench.records import UNSCORED_ENDINGS

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


@bench_app.command("generate-control")
def generate_control_command(
    homes: Path = typer.Option(..., "--homes", help="A build folder (BUILD_DIR, with homes/<home>/home.json)."),
    per_home: int = typer.Option(10, "--per-home", min=1, help="Episodes per home."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed: the same build and seed give the same file."),
    out: Path = typer.Option(..., "--out", help="The episodes file to write (JSONL)."),
    workers: int = typer.Option(1, "--workers", min=1, help="Homes generated at once (processes)."),
) -> None:
    """Generate home-control episodes per home of a build, keeping those the scripted solver passes."""
    from homeloop.bench.control.generate import generate_file

    try:
        report = generate_file(homes, per_home, seed, out, workers)
    except (HomeLoopError, OSError) as exc:
        fail(_before_run_error(exc, out))
    for line in report.lines():
        console.print(line, highlight=False, soft_wrap=True)
    console.print(f"episodes written to {out}", highlight=False, soft_wrap=True)


@bench_app.command("score")
def score_command(
    run_dirs: list[Path] = typer.Argument(None, help="Run folders (each with episodes/*.json), or Inspect logs "
                                          "(.eval or .json files, or folders of them)."),
    outcomes: Optional[Path] = typer.Option(None, "--outcomes", help="Score a CSV of outcomes instead."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for the CSV tables."),
) -> None:
    """Recompute every score table from records (or an outcomes CSV) and print the main ones."""
    from homeloop.bench import scoring

    if outcomes is not None:
        try:
            result = scoring.read_outcomes_csv(outcomes)
        except scoring.OutcomesError as exc:
            fail(str(exc))
    else:
        if not run_dirs:
            fail("give one or more run folders or Inspect logs, or --outcomes FILE.csv")
        result = _outcomes_from(run_dirs)
    frame, rejected = result.frame, result.rejected
    for line in rejected:
        console.print(f"[yellow]skipped:[/] {line}", highlight=False, soft_wrap=True)
    if frame.empty:
        fail("nothing to score: no readable records or outcome rows")
    show_tables(frame, out)


def _outcomes_from(paths: list[Path]) -> Any:
    """The outcomes of the records in run folders and in Inspect logs, read by one path."""
    from itertools import chain

    from homeloop.bench import scoring
    from homeloop.bench.records import iter_records
    from homeloop.harness import inspect_logs

    logs = [p for p in paths if inspect_logs.is_log(p)]
    missing = [p for p in paths if p not in logs and not p.is_dir()]
    if missing:
        fail(f"{missing[0]}: no such run folder or Inspect log")
    folders = [p for p in paths if p not in logs]
    return scoring.outcomes_from_read(chain(iter_records(folders), inspect_logs.iter_log_records(logs)))


#: Tables written but not printed (one row per check of every task: read it as CSV).
UNPRINTED = ("checks",)


def show_tables(frame: Any, out: Optional[Path]) -> None:
    """Print every non-empty table but :data:`UNPRINTED`, titled with the episodes it covers, and write
    every one as CSV into ``out`` when given."""
    from homeloop.bench import scoring
    from homeloop.bench.control import scores as control_scores
    from homeloop.core.io import write_text

    tables = {**scoring.all_tables(frame), **control_scores.tables(frame)}
    titles = {**scoring.TABLES, **control_scores.TABLES}
    for name, table in tables.items():
        if name not in UNPRINTED and not table.empty:
            console.print(_rich_table(f"{name} — {titles[name].title}", table))
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
    from homeloop.bench import scoring
    from homeloop.bench.replay_latency import replay_with_latency

    if Path(out).resolve() == Path(run_dir).resolve():
        fail(f"--out {out}: give another folder than the run folder it replays")
    try:
        done = replay_with_latency(run_dir, out)
    except HomeLoopError as exc:
        fail(str(exc))
    for line in done.unreadable:
        console.print(f"[yellow]skipped:[/] {line}", highlight=False, soft_wrap=True)
    for ids, what in ((done.skipped, "skipped, no model replies to replay"),
                      (done.without_latency, "replayed without added time, a request's latency is unknown")):
        if ids:
            console.print(f"[yellow]{len(ids)} episode(s) {what}:[/] {', '.join(ids)}", highlight=False, soft_wrap=True)
    if not done.replayed and not done.without_latency:
        fail(f"{run_dir}: no episode a model played; nothing to replay")
    console.print(f"{len(done.replayed)} episodes replayed with their latency into {out}", highlight=False)
    show_tables(scoring.outcomes_from_run_dirs([out]).frame, None)


def _rich_table(title: str, frame: Any) -> Table:
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
        fail(f"{run_dir}: not a run folder (no episodes/); run `homeloop bench run --out {run_dir}` first")
    console.print(f"wrote {write_viewer(run_dir)}")
