"""The home-control track's speed: generating episodes for the homes of a build, and playing one control
episode with the scripted solver.

    .venv/bin/python benchmarks/control.py --homes BUILD_DIR [--per-home 10] [--workers 2] [--play 200]

Prints: the wall time of ``generate-control`` over the build's homes (each kept episode is played once by
the solver, so this includes verifying it) and that time scaled to 2,100 homes, and to 2 cores dividing the
work evenly (the goal: 10 episodes × 2,100 homes in 2 minutes or less on 2 cores), and the same from the CPU
time this process and its workers spent (on a machine others share, the wall time counts their work too).
With more than one worker, the workers' start-up (a process each, importing HomeLoop and loading the
catalog) is timed apart and counted once, not scaled with the homes. Then the CPU time of one control
episode played by the scripted solver (set-up, calls and the run to the horizon; the goal: 10 ms or less),
over every episode of a sample of homes, a home's episodes one after another as a run plays them, as a
median and a mean, and per query type; and the first episode in each home apart (its set-up). The homes loaded for
that timing are frozen out of the garbage collector's passes, as generate-control freezes what it holds at
its start, so that a pass over the benchmark's own heap is not charged to the episode it falls in.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from homeloop.bench.control.generate import generate_file, home_files
from homeloop.bench.control.model import QUERY_CODES, ControlEpisode, read_episodes
from homeloop.bench.control.play import play_control
from homeloop.core.home import Home

from cpu_time import cpu_seconds  # benchmarks/cpu_time.py, beside this script

#: The home set the goals speak of.
HOMES_GOAL, SECONDS_GOAL, EPISODE_MS_GOAL = 2100, 120.0, 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--homes", type=Path, default=Path("outputs/default"),
                        help="a build folder (homeloop build --out ...); the default build's by default")
    parser.add_argument("--per-home", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--play", type=int, default=200, help="episodes to time with the scripted solver")
    args = parser.parse_args()

    homes = home_files(args.homes)
    start_wall, start_cpu = _pool_start(args.workers) if args.workers > 1 else (0.0, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "episodes.jsonl"
        started, cpu_started = time.perf_counter(), cpu_seconds()
        report = generate_file(args.homes, args.per_home, 0, out, args.workers)
        wall, cpu_spent = time.perf_counter() - started, cpu_seconds() - cpu_started
        episodes = read_episodes(out)
    for line in report.lines():
        print(line)
    if start_wall:
        print(f"the {args.workers} workers' start-up: {start_wall:.1f} s, CPU {start_cpu:.1f} s (counted once)")
    wall, cpu_spent = wall - start_wall, cpu_spent - start_cpu
    scaled = wall * HOMES_GOAL / len(homes) + start_wall
    besides = " besides the start-up" if start_wall else ""
    print(f"generate: {len(homes)} homes × {args.per_home} on {args.workers} worker(s) in {wall:.1f} s{besides} "
          f"({1000 * wall / max(len(episodes), 1):.1f} ms an episode kept); scaled to {HOMES_GOAL:,} homes: "
          f"{scaled:.0f} s on {args.workers} worker(s), {scaled * args.workers / 2:.0f} s on 2 cores if they "
          f"divide it evenly (goal ≤ {SECONDS_GOAL:.0f} s on 2 cores)")
    scaled_cpu = cpu_spent * HOMES_GOAL / len(homes) + start_cpu
    print(f"generate, CPU: {cpu_spent:.1f} s{besides} ({1000 * cpu_spent / len(homes):.0f} ms a home); scaled to "
          f"{HOMES_GOAL:,} homes: {scaled_cpu:.0f} s, {scaled_cpu / 2:.0f} s on 2 cores if they divide it evenly")

    loaded = {h: Home.from_json(p.read_text(encoding="utf-8"), where=str(p)) for h, p in homes.items()}
    sample = _home_sample(episodes, args.play)
    for e in episodes[-3:]:  # warm each code path once, in homes outside the sample
        play_control(loaded[e.home], e)
    gc.collect()
    gc.freeze()
    cpu: list[float] = []
    first: list[float] = []
    by_type: dict[str, list[float]] = defaultdict(list)
    for i, e in enumerate(sample):
        t0 = time.process_time()
        played = play_control(loaded[e.home], e)
        spent = (time.process_time() - t0) * 1000.0
        assert played.passed, e.id
        cpu.append(spent)
        by_type[e.query_type].append(spent)
        if i == 0 or sample[i - 1].home != e.home:
            first.append(spent)
    print(f"one control episode with the scripted solver, a home's episodes one after another as a run plays "
          f"them: median {statistics.median(cpu):.1f} ms, mean {statistics.mean(cpu):.1f} ms CPU over {len(cpu)} "
          f"episodes in {len(first)} homes (goal ≤ {EPISODE_MS_GOAL:.0f} ms); the first in each home (its set-up: "
          f"free floor, navigation): median {statistics.median(first):.1f} ms")
    for query_type, spent in by_type.items():
        print(f"  {QUERY_CODES[query_type]:6s} {query_type:22s} median {statistics.median(spent):6.1f} ms, "
              f"max {max(spent):6.1f} ms ({len(spent)} episodes)")


def _home_sample(episodes: list[ControlEpisode], count: int) -> list[ControlEpisode]:
    """About ``count`` episodes: every episode of homes drawn evenly through the file, in file order."""
    homes = list(dict.fromkeys(e.home for e in episodes))
    per_home = max(1, len(episodes) // max(len(homes), 1))
    chosen = set(homes[:: max(1, len(homes) * per_home // max(count, 1))])
    return [e for e in episodes if e.home in chosen][:count]


def _pool_start(workers: int) -> tuple[float, float]:
    """Wall and CPU seconds to start ``workers`` worker processes as generate-control starts them."""
    import concurrent.futures as cf
    import multiprocessing

    from homeloop.bench.control.generate import start_worker

    started, cpu_started = time.perf_counter(), cpu_seconds()
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                initializer=start_worker) as pool:
        list(pool.map(abs, range(workers * 4)))
    return time.perf_counter() - started, cpu_seconds() - cpu_started


if __name__ == "__main__":
    main()
