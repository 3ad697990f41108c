"""``inspect eval homeloop/benchmark``: HomeLoop's benchmark as an Inspect task (docs/agents.md, "Inspect").

::

    inspect eval homeloop/benchmark --model openai/gpt-4o -T tasks=core -T seeds=0,1

Inspect finds the task through the package's entry point (``[project.entry-points.inspect_ai]`` in
``pyproject.toml``), from any folder. :func:`benchmark` plans the episodes as ``homeloop bench
run`` plans them (:mod:`homeloop.bench.run_plan`: the same task sets, seeds, homes, robot and
flags) and hands them to :func:`homeloop.harness.inspect_task.make_task`, which plays each sample
through the benchmark's runner. This module stands on the top floor, beside the command line,
since the house is built by the pipeline.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from inspect_ai import Task, task

from homeloop.bench import run_plan, runner
from homeloop.bench.agents.conversation import DEFAULT_MAX_REQUESTS, DEFAULT_PROMPT
from homeloop.core.catalog import load_catalog
from homeloop.core.errors import HomeLoopError
from homeloop.core.ids import DEFAULT_ROBOT, DEFAULT_SEEDS, DEFAULT_TASKS, HOUSE_ID
from homeloop.harness.inspect_task import make_task

#: Where records go without ``-T out``: a run folder per model in this one, ``inspect-<model>``.
RUNS = Path("outputs/runs")


@task
def benchmark(tasks: Any = DEFAULT_TASKS, seeds: Any = DEFAULT_SEEDS, homes: str = HOUSE_ID, robot: str = DEFAULT_ROBOT,
              images: bool = True, withhold: Any = "", show_costs: bool = False,
              max_requests: int = DEFAULT_MAX_REQUESTS, prompt: str = DEFAULT_PROMPT,
              max_image_side: int | None = None, out: str | None = None, verified_only: bool = True,
              sample: int | None = None, stratify: str = "task", sample_seed: int = 0) -> Task:
    """One sample per home x task x seed, each an episode the model plays with the skills as tools.

    ``tasks``: all, core, extension, a family, or task ids T1,T2. ``seeds``: comma-separated.
    ``homes``: house, BUILD_DIR or BUILD_DIR:id,id. ``withhold``: services, comma-separated.
    ``out``: the run folder records go to (default ``outputs/runs/inspect-<model>``). The rest are
    ``homeloop bench run``'s options of the same names (docs/benchmark.md)."""
    from homeloop.pipeline.houses import write_house_home
    from homeloop.sim.skills import SERVICES

    for name, value in (("images", images), ("show_costs", show_costs), ("verified_only", verified_only)):
        if not isinstance(value, bool):
            raise HomeLoopError(f"-T {name} takes true or false, got {value!r}")
    if robot not in load_catalog().robots:
        raise HomeLoopError(f"unknown robot {robot!r}; bodies: {', '.join(load_catalog().robots)}")
    withheld = tuple(sorted(s for s in _text(withhold).split(",") if s.strip()))
    bad = [s for s in withheld if s not in SERVICES]
    if bad:
        raise HomeLoopError(f"unknown service(s) {', '.join(bad)}; services: {', '.join(SERVICES)}")
    run_dir = Path(out) if out else default_out()
    specs, _ = run_plan.plan_episodes(
        homes, run_dir, run_plan.parse_tasks(_text(tasks)), robot, run_plan.parse_seeds(_text(seeds), "-T seeds"),
        runner.Flags(withheld, show_costs, images), verified_only=verified_only, sample=sample, stratify=stratify,
        sample_seed=sample_seed, write_house=write_house_home)
    return make_task(specs, run_dir, prompt=prompt, max_requests=max_requests, max_image_side=max_image_side)


def default_out() -> Path:
    """``outputs/runs/inspect-<model>``, the model Inspect evaluates named as a folder (beside ``bench
    run``'s, so ``homeloop bench score outputs/runs/*`` finds it)."""
    from inspect_ai.model import get_model

    return RUNS / ("inspect-" + re.sub(r"[^A-Za-z0-9._-]+", "_", str(get_model())))


def _text(value: Any) -> str:
    """An option as ``bench run`` reads it: Inspect's ``-T`` gives numbers and lists for some values."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)
