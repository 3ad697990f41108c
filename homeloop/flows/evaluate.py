"""The ``evaluate`` flow: an agent over a build's verified home–task pairs (docs/scores.md).

``make serve`` serves it as the deployment ``evaluate/default``::

    prefect deployment run 'evaluate/default' --param agent=scripted --param sample=5

It runs what ``homeloop bench run --homes BUILD_DIR`` runs
(:func:`homeloop.bench.run_plan.prepare_run`, then
:func:`homeloop.flows.episodes.run_episodes`): the pairs of the build's
tables that the scripted reference agent passed (``verified_only``), in
every home or in a fixed sample of ``sample`` homes besides the house,
stratified by ``stratify`` and drawn with ``sample_seed``. Episodes run in
``workers`` processes, or on the Dask cluster at ``dask_address``. Records
go to ``out`` (default ``outputs/runs/<build>-<agent or model>``); a rerun
resumes. The flow logs how many episodes of each task passed and returns
those counts; ``homeloop bench score OUT`` makes the score tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homeloop.bench import runner
from homeloop.bench.records import RecordError, read_record, record_path
from homeloop.bench.run_plan import agent_options, prepare_run
from homeloop.core.errors import HomeLoopError
from homeloop.flows.episodes import run_episodes
from homeloop.flows.runtime import homeloop_flow, interrupted, run_stage, stopped
from homeloop.pipeline.config import OUTPUTS
from homeloop.pipeline.houses import write_house_home
from homeloop.sim.episode import DEFAULT_ROBOT
from prefect import get_run_logger

#: The build ``evaluate`` reads by default: the one ``make run`` writes.
DEFAULT_BUILD = OUTPUTS / "default"


def default_run_dir(homes: str, agent: str, model: str | None) -> Path:
    """``outputs/runs/<build folder name>-<model or agent>``: the same parameters, the same
    folder, so a rerun resumes."""
    build = Path(homes.partition(":")[0]).name or "house"
    label = (model or agent).replace("/", "_").replace(":", "_")
    return OUTPUTS / "runs" / f"{build}-{label}"


def pass_counts(run_dir: Path, specs: list[runner.EpisodeSpec]) -> dict[str, dict[str, int]]:
    """Per task (in the order of the episodes): episodes, passed, and how many have a record."""
    counts: dict[str, dict[str, int]] = {}
    for spec in specs:
        c = counts.setdefault(spec.task, {"episodes": 0, "passed": 0, "recorded": 0})
        c["episodes"] += 1
        try:
            record = read_record(record_path(run_dir, spec.id))
        except RecordError:
            continue
        c["recorded"] += 1
        c["passed"] += bool(record["passed"])
    return counts


@homeloop_flow(name="evaluate", description="Run an agent on a build's verified home-task pairs and count passes.")
def evaluate(
    agent: str = "scripted",
    model: str | None = None,
    base_url: str | None = None,
    homes: str = str(DEFAULT_BUILD),
    tasks: str | list[str] = "all",
    robot: str = DEFAULT_ROBOT,
    seeds: int | list[int] = 0,
    sample: int | None = None,
    dask_address: str | None = None,
    out: str | None = None,
    stratify: str = "task",
    sample_seed: int = 0,
    verified_only: bool = True,
    images: bool = True,
    workers: int = 1,
) -> dict[str, Any]:
    """agent: scripted, do-nothing, over-reactor or openai (with model and base_url); homes: a
    build folder (or BUILD_DIR:id,id, or house); tasks: all, core, a family or task ids;
    seeds: a seed or a list; sample: that many homes besides the house; dask_address: a
    running Dask scheduler; out: the run folder."""
    logger = get_run_logger()
    run_dir = Path(out) if out else default_run_dir(homes, agent, model)
    task_text = tasks if isinstance(tasks, str) else ",".join(tasks)
    seed_text = ",".join(str(s) for s in (seeds if isinstance(seeds, list) else [seeds]))
    try:
        options = agent_options(agent, run_dir, model=model, base_url=base_url)
        specs, notes = prepare_run(agent, options, tasks=task_text, homes=homes, robot=robot, seeds=seed_text,
                                   out=run_dir, flags=runner.Flags(images=images), verified_only=verified_only,
                                   sample=sample, stratify=stratify, sample_seed=sample_seed,
                                   write_house=write_house_home)
    except (HomeLoopError, KeyError, ValueError) as exc:
        return stopped(HomeLoopError(str(exc).strip("'\"")))
    for line in notes:
        logger.info(line)
    try:
        done = run_stage("episodes", lambda: run_episodes(specs, agent, run_dir, options, workers=workers,
                                                          dask_address=dask_address))
    except HomeLoopError as exc:
        return stopped(exc)
    except KeyboardInterrupt:
        return interrupted()
    for summary in done:
        if summary["ended_by"] == runner.NOT_SET_UP:
            logger.warning("not run: %s: %s", summary["id"], summary["error"])
    counts = pass_counts(run_dir, specs)
    for task, c in counts.items():
        logger.info("%s: %d/%d passed", task, c["passed"], c["episodes"])
    passed = sum(c["passed"] for c in counts.values())
    logger.info("%d of %d episodes passed (%d run now, %d kept from before); records in %s",
                passed, len(specs), len(done), len(specs) - len(done), run_dir / "episodes")
    return {"out": str(run_dir), "episodes": len(specs), "run": len(done), "passed": passed, "tasks": counts}
