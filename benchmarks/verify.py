"""Time the verify stage (docs/pipeline.md): episodes of the scripted reference agent per pair,
and the whole stage on a local Dask cluster.

    .venv/bin/python benchmarks/verify.py                        # outputs/default
    .venv/bin/python benchmarks/verify.py --build outputs/small --pairs 500 --stage-homes 40

1. **Per episode, one core.** Homes of the build in a seeded order, until ``--pairs``
   pairs screened applicable for the body: each home read once, then its pairs
   played one after another in this process, as a partition of the stage plays
   them (:func:`homeloop.pipeline.verify_pairs.verify_pair`, images off, no
   record, the garbage collector set as :func:`homeloop.pipeline.parallel.run_partition`
   sets it). Prints the median and 90th percentile of wall and CPU time per
   episode, the share that passed, and the stage's time for every screened pair
   of the build extrapolated from the mean (one core, and ``--workers`` cores as if
   they did not slow each other: ``--scaling`` measures how far they do). With ``--by-task``,
   a table follows: each task's episodes, CPU median, p90 and mean, its share of all
   the episodes' CPU and its share passed, costliest first (the tasks that set the p90).
   With ``--by-skill``, where the episodes' CPU went: setting each one up (the world, the
   scenario and the run up to the wake event), each skill the agent called, the run on to
   the horizon after it stopped, and the rest (the agent's own choices, the checks);
   each with its CPU per episode, its calls per episode, its CPU per call and its share.
2. **The whole stage.** ``--stage-homes`` homes (their every pair) through the
   stage's own partitions on a local Dask cluster of ``--workers`` processes,
   into a scratch folder (the build is not written to). Prints the wall time,
   pairs per second, and that rate extrapolated to 40,000 pairs and to the
   build's own count. With ``--scaling`` the same homes go through the same
   partitions in this process first, and the line after says how many times
   that one-core rate the workers reach. (Part 1's rate is no yardstick for
   part 2: its homes are others, and a home's pairs cost from a few to a
   hundred milliseconds.)

Times are wall-clock on this machine, shared with whatever else runs; CPU time
is what the episodes themselves cost. ``--fixed`` turns the simulator's shortcuts
off (every dynamics module and the monitor stepped every step, every camera frame
worked out in full, every way and spot planned anew: :data:`homeloop.sim.world.SLEEPING`,
:data:`homeloop.bench.monitor.WAKE_ON_READS`, :data:`homeloop.sim.static_visibility.CACHED`,
:data:`homeloop.sim.robot.floor.KEPT`), to compare with them on; the episodes' outcomes are the same either way.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from homeloop.bench.pairs import HOUSE, home_order
from homeloop.core.home import Home
from homeloop.pipeline.stages import SCREENING_FILE
from homeloop.pipeline.verify_pairs import verify_pair
from homeloop.pipeline.verify_settings import VerifySettings
from homeloop.sim.episode import DEFAULT_ROBOT, Episode

#: The pair count the stage's goal is stated for: about the default build's, for one body at one seed.
GOAL_PAIRS = 40_000


def screened_pairs(build: Path, robot: str) -> pd.DataFrame:
    """The build's screened-applicable pairs for the body (from the screening, or the table)."""
    source = build / SCREENING_FILE
    table = pd.read_parquet(source if source.is_file() else build / "applicability.parquet")
    return table[table["applicable"] & (table["robot"] == robot) & (table["home"] != HOUSE)]


def time_episodes(build: Path, pairs: pd.DataFrame, wanted: int, seed: int) -> pd.DataFrame:
    """Play the pairs of homes in seeded order until ``wanted``; wall and CPU seconds per episode
    (with the collector set as a partition of the stage sets it)."""
    from homeloop.pipeline.parallel import partition_collector

    with partition_collector():
        return _time_episodes(build, pairs, wanted, seed)


def _time_episodes(build: Path, pairs: pd.DataFrame, wanted: int, seed: int) -> pd.DataFrame:
    rows = []
    by_home = {h: list(g["task"]) for h, g in pairs.groupby("home")}
    for home_id in home_order(by_home, seed):
        if len(rows) >= wanted:
            break
        home = Home.read(build / "homes" / home_id / "home.json")
        for task in by_home[home_id]:
            wall, cpu = time.perf_counter(), time.process_time()
            result = verify_pair(home, task, pairs["robot"].iloc[0], 0)
            rows.append({"home": home_id, "task": task, "passed": result["passed"],
                         "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu})
    return pd.DataFrame(rows)


class Sections:
    """CPU seconds spent in parts of the episodes, each part without the parts timed inside it."""

    def __init__(self) -> None:
        self.cpu: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self._open: list[list[float]] = []  # per part entered: its start, and the CPU of the parts inside it

    def timed(self, label: Callable[..., str], method: Callable[..., Any]) -> Callable[..., Any]:
        """``method`` timed as the part ``label(*args)`` names."""

        @functools.wraps(method)
        def run(*args: Any, **kwargs: Any) -> Any:
            self._open.append([time.process_time(), 0.0])
            try:
                return method(*args, **kwargs)
            finally:
                start, inside = self._open.pop()
                spent = time.process_time() - start
                name = label(*args)
                self.cpu[name] += spent - inside
                self.calls[name] += 1
                if self._open:
                    self._open[-1][1] += spent
        return run


@contextlib.contextmanager
def timing_sections() -> Iterator[Sections]:
    """While inside, every episode's set-up, skill calls and run to the horizon are timed."""
    sections = Sections()
    parts: dict[str, Callable[..., str]] = {
        "__init__": lambda *a: "set-up (world, scenario, run to the wake event)",
        "call": lambda ep, tool, *a: f"skill {tool}",
        "run_to_horizon": lambda *a: "run to the horizon after the stop",
    }
    originals = {name: getattr(Episode, name) for name in parts}
    try:
        for name, label in parts.items():
            setattr(Episode, name, sections.timed(label, originals[name]))
        yield sections
    finally:
        for name, method in originals.items():
            setattr(Episode, name, method)


def report_sections(sections: Sections, timed: pd.DataFrame) -> None:
    """Print where the episodes' CPU went (``--by-skill``), costliest first."""
    episodes, total = len(timed), timed["cpu_s"].sum()
    rest = total - sum(sections.cpu.values())
    rows = [*sections.cpu.items(), ("the rest (the agent's choices, the checks)", rest)]
    calls = {name: sections.calls[name] or np.nan for name, _ in rows}  # the rest: no calls of its own
    table = pd.DataFrame([{"part": name, "ms_per_episode": cpu / episodes * 1000,
                           "calls_per_episode": calls[name] / episodes, "ms_per_call": cpu / calls[name] * 1000,
                           "share": cpu / total} for name, cpu in rows]).set_index("part")
    table = table.sort_values("share", ascending=False)
    print(table.to_string(na_rep="", formatters={"ms_per_episode": "{:,.2f}".format,
                                                 "calls_per_episode": "{:,.2f}".format,
                                                 "ms_per_call": "{:,.2f}".format, "share": "{:.1%}".format}))


def time_stage(build: Path, pairs: pd.DataFrame, homes: int, workers: int, seed: int) -> tuple[float, int]:
    """The stage's partitions over ``homes`` homes on a local cluster of ``workers`` processes (one:
    in this process), each process warmed up first (:func:`warm_up`); (wall seconds, pairs)."""
    from homeloop.pipeline.parallel import dask_client, map_partitions
    from homeloop.pipeline.verify_pairs import HOMES_PER_PARTITION, home_keys, verify_homes_partition, verify_plan

    chosen = set(home_order(set(pairs["home"]), seed + 1)[:homes])
    screened = pairs[pairs["home"].isin(chosen)]
    settings = VerifySettings(robots=(screened["robot"].iloc[0],), homes=None)
    work = verify_plan(screened, settings, seed)
    with tempfile.TemporaryDirectory() as scratch, dask_client(workers=workers) as client:
        (Path(scratch) / "homes").symlink_to((build / "homes").resolve())
        keys = home_keys(scratch, work, settings.seeds)
        first = screened.iloc[0]
        warm = functools.partial(warm_up, build / "homes" / first["home"] / "home.json", first["task"], first["robot"])
        if client is None:
            warm()
        else:
            client.run(warm)
        t = time.perf_counter()
        rows = map_partitions(verify_homes_partition, list(work), scratch, work, [0], keys, client=client,
                              partition_size=HOMES_PER_PARTITION)
        return time.perf_counter() - t, len(rows)


def warm_up(home_file: Path, task: str, robot: str) -> None:
    """Play one pair, untimed: a fresh worker first imports the simulator and loads the catalog and the
    scenarios, seconds that a short timed stage would otherwise count and a build's long one does not."""
    verify_pair(Home.read(home_file), task, robot, 0)


def report_episodes(timed: pd.DataFrame, total: int, workers: int) -> None:
    """Print part 1's figures: per episode, and the build's pairs extrapolated from the mean."""
    print(f"per episode, one core, {len(timed):,} episodes in {timed['home'].nunique()} homes: "
          f"wall median {ms(timed['wall_s'], 50)}, p90 {ms(timed['wall_s'], 90)}; "
          f"CPU median {ms(timed['cpu_s'], 50)}, p90 {ms(timed['cpu_s'], 90)}; passed {timed['passed'].mean():.0%}")
    for label, column in (("wall", "wall_s"), ("CPU", "cpu_s")):
        core_s = timed[column].mean() * total
        print(f"  all {total:,} pairs from the mean {label} time: {core_s / 60:,.1f} min on one core, "
              f"{core_s / 60 / workers:,.1f} min on {workers}")


def report_tasks(timed: pd.DataFrame) -> None:
    """Print part 1's figures by task, costliest in all first."""
    by_task = timed.groupby("task")
    table = pd.DataFrame({
        "episodes": by_task.size(),
        "cpu_median_ms": by_task["cpu_s"].median() * 1000,
        "cpu_p90_ms": by_task["cpu_s"].quantile(0.9) * 1000,
        "cpu_mean_ms": by_task["cpu_s"].mean() * 1000,
        "cpu_share": by_task["cpu_s"].sum() / timed["cpu_s"].sum(),
        "passed": by_task["passed"].mean(),
    }).sort_values("cpu_share", ascending=False)
    print(table.to_string(formatters={"cpu_median_ms": "{:,.1f}".format, "cpu_p90_ms": "{:,.1f}".format,
                                      "cpu_mean_ms": "{:,.1f}".format, "cpu_share": "{:.1%}".format,
                                      "passed": "{:.0%}".format}))


def ms(values: pd.Series, q: float) -> str:
    return f"{np.percentile(values, q) * 1000:,.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=Path("outputs/default"))
    parser.add_argument("--robot", default=DEFAULT_ROBOT)
    parser.add_argument("--pairs", type=int, default=1000, help="pairs timed one by one (whole homes; 0: skip)")
    parser.add_argument("--by-task", action="store_true", help="part 1's figures by task too (see above)")
    parser.add_argument("--by-skill", action="store_true",
                        help="where part 1's CPU went: set-up, each skill, the horizon (see above)")
    parser.add_argument("--stage-homes", type=int, default=100, help="homes the whole stage is timed over (0: skip)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scaling", action="store_true",
                        help="also time the stage's homes in this process, and compare (see above)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fixed", action="store_true", help="without the simulator's shortcuts (see above)")
    args = parser.parse_args()
    if args.fixed:
        from homeloop.bench import monitor
        from homeloop.sim import static_visibility, world
        from homeloop.sim.robot import floor

        world.SLEEPING = static_visibility.CACHED = monitor.WAKE_ON_READS = floor.KEPT = False
    if not (args.build / "applicability.parquet").is_file():
        print(f"{args.build}: no build there; make one first (`make run`, or `homeloop build --out {args.build}`)")
        return 2

    pairs = screened_pairs(args.build, args.robot)
    total = len(pairs)
    print(f"{args.build}: {total:,} screened pairs for {args.robot} in {pairs['home'].nunique():,} homes")
    if args.pairs > 0:
        with timing_sections() if args.by_skill else contextlib.nullcontext() as sections:
            timed = time_episodes(args.build, pairs, args.pairs, args.seed)
        report_episodes(timed, total, args.workers)
        if args.by_task:
            report_tasks(timed)
        if sections is not None:
            report_sections(sections, timed)
    if args.stage_homes:
        alone = time_stage(args.build, pairs, args.stage_homes, 1, args.seed) if args.scaling else None
        wall, played = time_stage(args.build, pairs, args.stage_homes, args.workers, args.seed)
        rate = played / wall
        print(f"whole stage, {played:,} pairs in {args.stage_homes} homes on {args.workers} workers: {wall:,.1f} s, "
              f"{rate:,.1f} pairs/s → {GOAL_PAIRS:,} pairs in {GOAL_PAIRS / rate / 60:,.1f} min, "
              f"this build's {total:,} in {total / rate / 60:,.1f} min")
        if alone is not None:
            one_core = alone[1] / alone[0]
            print(f"  the same partitions in one process: {alone[0]:,.1f} s, {one_core:,.1f} pairs/s; "
                  f"{args.workers} workers played {rate / one_core:,.2f}× that")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
