"""The home-control track's speed: generating episodes for the homes of a build, and playing one control
episode with the scripted solver.

    .venv/bin/python benchmarks/control.py --homes BUILD_DIR [--per-home 10] [--workers 2] [--play 200]

Prints: the wall time of ``generate-control`` over the build's homes (each kept episode is played once by
the solver, so this includes verifying it; with more than one worker, their start-up too) and that time
scaled to 2,100 homes, and to 2 cores dividing the work evenly (the goal: 10 episodes × 2,100 homes in
2 minutes or less on 2 cores); then the CPU time of one control episode played by the
scripted solver (set-up, calls and the run to the horizon; the goal: 10 ms or less), over a sample of the
generated episodes, as a median and a mean, and per query type.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from homeloop.bench.control.generate import generate_file, home_files
from homeloop.bench.control.model import QUERY_CODES, read_episodes
from homeloop.bench.control.play import play_control
from homeloop.core.home import Home

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
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "episodes.jsonl"
        started = time.perf_counter()
        report = generate_file(args.homes, args.per_home, 0, out, args.workers)
        wall = time.perf_counter() - started
        episodes = read_episodes(out)
    for line in report.lines():
        print(line)
    scaled = wall * HOMES_GOAL / len(homes)
    print(f"generate: {len(homes)} homes × {args.per_home} on {args.workers} worker(s) in {wall:.1f} s "
          f"({1000 * wall / max(len(episodes), 1):.1f} ms an episode kept); scaled to {HOMES_GOAL:,} homes: "
          f"{scaled:.0f} s on {args.workers} worker(s), {scaled * args.workers / 2:.0f} s on 2 cores if they "
          f"divide it evenly (goal ≤ {SECONDS_GOAL:.0f} s on 2 cores)")

    loaded = {h: Home.from_json(p.read_text(encoding="utf-8"), where=str(p)) for h, p in homes.items()}
    sample = episodes[:: max(1, len(episodes) // args.play)][: args.play]
    for e in sample[:3]:  # warm each code path once
        play_control(loaded[e.home], e)
    cpu: list[float] = []
    by_type: dict[str, list[float]] = defaultdict(list)
    for e in sample:
        t0 = time.process_time()
        played = play_control(loaded[e.home], e)
        spent = (time.process_time() - t0) * 1000.0
        assert played.passed, e.id
        cpu.append(spent)
        by_type[e.query_type].append(spent)
    print(f"one control episode with the scripted solver: median {statistics.median(cpu):.1f} ms, mean "
          f"{statistics.mean(cpu):.1f} ms CPU over {len(cpu)} episodes (goal ≤ {EPISODE_MS_GOAL:.0f} ms)")
    for query_type, spent in by_type.items():
        print(f"  {QUERY_CODES[query_type]:6s} {query_type:22s} median {statistics.median(spent):6.1f} ms, "
              f"max {max(spent):6.1f} ms ({len(spent)} episodes)")


if __name__ == "__main__":
    main()
