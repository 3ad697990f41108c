"""The plan of a benchmark run, checked before any episode runs: the agent's options and the
episodes (which homes, tasks, robot and seeds), for ``homeloop bench run`` and the ``evaluate``
flow alike (docs/scores.md).

``--homes house`` plays every task in the house. The benchmark does not import the pipeline that
builds the house, so whoever plans such a run hands in the function that writes its home file
(:func:`homeloop.pipeline.houses.write_house_home`). A build folder (``BUILD_DIR`` or
``BUILD_DIR:id,id``) gives the pairs its tables name (:mod:`homeloop.bench.pairs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from homeloop.bench import pairs, runner
from homeloop.bench.agents.conversation import DEFAULT_PROMPT
from homeloop.core.errors import HomeLoopError
from homeloop.core.ids import safe_id
from homeloop.sim.task import load_tasks

#: How ``--homes`` names the house.
HOUSE = pairs.HOUSE
#: Writes the house's home file into a folder and returns the file's path.
HouseWriter = Callable[[Path], Path]


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
    """Comma-separated seeds, sorted and each once; ``flag`` names the option in the error lines."""
    try:
        seeds = sorted({int(s) for s in text.split(",") if s.strip()})
    except ValueError:
        raise HomeLoopError(f"{flag} takes whole numbers separated by commas, got {text!r}") from None
    if not seeds:
        raise HomeLoopError(f"{flag} names no seed; give whole numbers separated by commas, e.g. 0,1")
    if seeds[0] < 0:  # a seed seeds numpy's generators, which take none below 0
        raise HomeLoopError(f"{flag} {text}: seeds are whole numbers from 0 up, got {seeds[0]}")
    return seeds


def resolve_homes(spec: str, run_dir: Path, write_house: HouseWriter | None) -> dict[str, Path]:
    """``house``: the house's home file, written into the run folder by ``write_house``."""
    if spec != HOUSE:
        raise HomeLoopError(f"{spec}: give the house, or a build folder (BUILD_DIR or BUILD_DIR:id,id)")
    if write_house is None:
        raise HomeLoopError("the house cannot be built here; pass a build folder with --homes")
    return {HOUSE: write_house(run_dir / "homes" / HOUSE)}


def plan_episodes(homes: str, run_dir: Path, tasks: list[str], robot: str, seeds: list[int], flags: runner.Flags,
                  *, verified_only: bool = True, sample: int | None = None, stratify: str = "task",
                  sample_seed: int = 0,
                  write_house: HouseWriter | None = None) -> tuple[list[runner.EpisodeSpec], list[str]]:
    """The episodes of a run, and lines worth saying about how its pairs were chosen.

    ``house``: every task in the house. ``BUILD_DIR`` or ``BUILD_DIR:id,id``: the build's
    verified pairs (or screened ones) of the robot and tasks, in those homes or a sample."""
    if homes == HOUSE:
        if sample is not None:
            raise HomeLoopError("--sample draws homes from a build; pass --homes BUILD_DIR")
        return runner.plan(resolve_homes(homes, run_dir, write_house), tasks, robot, seeds, flags), []
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


def prepare_run(agent: str, options: dict[str, Any], *, tasks: str, homes: str, robot: str, seeds: str, out: Path,
                flags: runner.Flags = runner.Flags(), verified_only: bool = True, sample: int | None = None,
                stratify: str = "task", sample_seed: int = 0,
                write_house: HouseWriter | None = None) -> tuple[list[runner.EpisodeSpec], list[str]]:
    """Check a run's arguments and list its episodes: an unknown robot, service, agent or task, or
    an endpoint that does not answer, is one line before any episode runs. Returns the episodes
    and lines worth saying."""
    task_ids, seed_list = parse_tasks(tasks), parse_seeds(seeds)
    check_run(agent, options, robot, flags)
    return plan_episodes(homes, out, task_ids, robot, seed_list, flags, verified_only=verified_only,
                         sample=sample, stratify=stratify, sample_seed=sample_seed, write_house=write_house)


def check_run(agent: str, options: dict[str, Any], robot: str, flags: runner.Flags) -> None:
    """One line before any episode runs: an unknown robot, service or agent, or an endpoint that does
    not answer or refuses the key (the agent's ``preflight()``, where it has one)."""
    from homeloop.bench.agents import make_agent
    from homeloop.core.catalog import load_catalog
    from homeloop.sim.skills import SERVICES

    if robot not in load_catalog().robots:
        raise HomeLoopError(f"unknown robot {robot!r}; bodies: {', '.join(load_catalog().robots)}")
    bad = [s for s in flags.withheld if s not in SERVICES]
    if bad:
        raise HomeLoopError(f"unknown service(s) {', '.join(bad)}; services: {', '.join(SERVICES)}")
    made = make_agent(agent, **options)
    check = getattr(made, "preflight", None)
    if callable(check):
        check()


#: The run options each agent that talks to a model takes (docs/agents.md).
AGENT_FLAGS = {
    "openai": ("model", "base_url", "api_key_env", "max_requests", "rate_limit", "temperature", "image_mode",
               "prompt", "max_image_side"),
    "anthropic": ("model", "base_url", "api_key_env", "max_requests", "rate_limit", "temperature", "prompt",
                  "max_image_side"),
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
        given["replies"] = str(Path(str(given["replies"])).resolve())
    if "rate_limit" in given:
        given["rate_limit_file"] = str((out / ".rate_limit").resolve())
    return given
