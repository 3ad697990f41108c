"""The benchmark's own speed: the scripted agent over every task, and scoring many records (docs/scores.md).

    .venv/bin/python benchmarks/bench.py [--seeds 0,1] [--workers 1,2] [--images-workers 2] [--records 10000]

1. **A run.** The scripted reference agent on every task (24) × seed in the
   house, images off, through ``homeloop.bench.runner.run`` (each episode
   built, run, checked and its record written) with each ``--workers``
   count. Prints the wall time and episodes per second of each (goal: the 48
   episodes of two seeds in 60 s or less), and how many passed. Then the
   same with images on (every capture rendered and saved) on
   ``--images-workers`` workers, with the CPU time its workers spent (goal:
   the 48 episodes in 20 s or less on 2 workers); 0 leaves it out.
2. **Scoring.** ``--records`` synthetic records, copies of the run's real
   records with their seed and agent label varied (so every copy is a new
   episode of some agent), written into a temporary folder; then the time to
   read them (``homeloop.bench.scoring.outcomes_from_run_dirs``) and to score them
   (``all_tables``), as
   ``homeloop bench score`` does (goal: 10,000 records in 10 s or less).

Times are wall-clock on this machine, shared with whatever else runs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from homeloop.bench import runner, scoring
from homeloop.bench.records import read_records, record_path
from homeloop.sim.task import load_tasks
from homeloop.pipeline.houses import HOUSE_ID, write_house_home
from homeloop.sim.episode import DEFAULT_ROBOT

from cpu_time import cpu_seconds  # benchmarks/cpu_time.py, beside this script

#: Agent labels the synthetic records are spread over (as if several models had run).
SYNTHETIC_LABELS = 8


def timed_run(home_file: Path, seeds: list[int], workers: int, out: Path, images: bool = False
              ) -> tuple[float, float, int, int]:
    """Run the scripted agent on every task × seed; (wall seconds, CPU seconds of this process and the
    workers it waited for, episodes, passed)."""
    specs = runner.plan({HOUSE_ID: home_file}, sorted(load_tasks()), DEFAULT_ROBOT, seeds,
                        runner.Flags(images=images))
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    done = runner.run(specs, "scripted", out, workers=workers)
    return time.perf_counter() - t0, cpu_seconds() - cpu0, len(done), sum(bool(d["passed"]) for d in done)


def synthetic_records(real: list[dict[str, Any]], count: int, folder: Path) -> None:
    """Write ``count`` copies of the real records, each with its own seed, agent label and id."""
    (folder / "episodes").mkdir(parents=True, exist_ok=True)
    for i in range(count):
        original = real[i % len(real)]
        label, seed = (i // len(real)) % SYNTHETIC_LABELS, 100 + i // (len(real) * SYNTHETIC_LABELS)
        record = {**original, "world": {**original["world"], "seed": seed},
                  "agent": {**original["agent"], "model": f"synthetic-{label}"},
                  "episode_id": f"{original['episode_id']}__{label}__{seed}"}
        record_path(folder, record["episode_id"]).write_text(json.dumps(record), encoding="utf-8")


def timed_scoring(folder: Path) -> tuple[float, float, int, int]:
    """(seconds to read the records into outcomes, seconds to make the tables, records read, tables made),
    as `homeloop bench score` does it: one record at a time."""
    t0 = time.perf_counter()
    outcomes = scoring.outcomes_from_run_dirs([folder])
    t1 = time.perf_counter()
    tables = scoring.all_tables(outcomes.frame)
    return t1 - t0, time.perf_counter() - t1, len(outcomes.frame), len(tables)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1", help="seeds, comma-separated")
    parser.add_argument("--workers", default="1,2", help="worker counts to time, comma-separated")
    parser.add_argument("--images-workers", type=int, default=2,
                        help="workers for the run with images on (0: no such run)")
    parser.add_argument("--records", type=int, default=10_000, help="synthetic records to score")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory(prefix="homeloop-bench-") as tmp:
        tmp_path = Path(tmp)
        home_file = write_house_home(tmp_path / "house")
        last = None
        for workers in (int(w) for w in args.workers.split(",")):
            last = tmp_path / f"run-w{workers}"
            wall, _, episodes, passed = timed_run(home_file, seeds, workers, last)
            print(f"scripted agent, {episodes} episodes, --workers {workers}: {wall:.1f} s wall, "
                  f"{episodes / wall:.2f} episodes/s, {passed}/{episodes} passed")
        if args.images_workers:
            wall, cpu, episodes, passed = timed_run(home_file, seeds, args.images_workers, tmp_path / "run-images",
                                                    images=True)
            print(f"scripted agent, images on, {episodes} episodes, --workers {args.images_workers}: "
                  f"{wall:.1f} s wall, {cpu:.1f} s CPU, {passed}/{episodes} passed")
        real = read_records([last]).records
        synthetic_records(real, args.records, tmp_path / "synthetic")
        read_s, score_s, count, tables = timed_scoring(tmp_path / "synthetic")
        print(f"scoring {count} records: read {read_s:.1f} s, {tables} tables {score_s:.1f} s, "
              f"total {read_s + score_s:.1f} s")


if __name__ == "__main__":
    main()
