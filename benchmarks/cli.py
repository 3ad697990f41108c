"""How quickly the command line answers: ``homeloop --help`` and one command's ``--help``.

    .venv/bin/python benchmarks/cli.py [--runs 9]

Each command runs as a new process, as a user types it; runs alternate between the commands.
Prints per command the median and fastest wall time, the median CPU time (user + system, which a
busy machine inflates less than the wall time), and how many modules the process imported
(``python -X importtime``). ``homeloop --help`` lists the commands without importing any command's
module (homeloop/cli/__init__.py); ``homeloop build --help`` loads the build's options.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HOMELOOP = Path(sys.executable).parent / "homeloop"
COMMANDS = {"homeloop --help": ["--help"], "homeloop build --help": ["build", "--help"],
            "homeloop bench run --help": ["bench", "run", "--help"]}


def run_once(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``homeloop args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(HOMELOOP), *args], stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def modules_imported(args: list[str]) -> int:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "homeloop.cli", *args], env=dict(os.environ),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    return sum(1 for line in done.stderr.splitlines() if line.startswith("import time:") and "|" in line) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    for args in COMMANDS.values():  # warm the file cache once
        run_once(args)
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpus: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, args in COMMANDS.items():
            wall, cpu = run_once(args)
            walls[name].append(wall)
            cpus[name].append(cpu)
    print(f"{'command':<28} {'wall median':>12} {'wall min':>9} {'cpu median':>11} {'modules':>8}   ({runs} runs each)")
    for name, args in COMMANDS.items():
        print(f"{name:<28} {statistics.median(walls[name]):>10.3f} s {min(walls[name]):>7.3f} s "
              f"{statistics.median(cpus[name]):>9.3f} s {modules_imported(args):>8}")
    print(f"load average while measuring: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
