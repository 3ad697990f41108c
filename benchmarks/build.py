"""Time whole builds: the default build, an unchanged rerun, and the same build on
a Dask cluster started separately (a scheduler and two worker processes on
loopback).

    python benchmarks/build.py                       # 3,400 plans → 2,100 homes
    python benchmarks/build.py --plans 600 --sites 160 --homes 300   # a quicker look
    python benchmarks/build.py --skip-dask
    python benchmarks/build.py --reference outputs/default   # only the Dask build, compared with an existing one

Prints wall time per stage (from each build's run.json), the unchanged-rerun
time, USD size and export time per home (from usd.parquet), and whether the
Dask build's outputs hash the same as the default one's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run_build(out: Path, args: argparse.Namespace, *extra: str) -> float:
    cmd = [str(BIN / "homeloop"), "build", "--plans", str(args.plans), "--sites", str(args.sites),
           "--homes", str(args.homes), "--seed", str(args.seed), "--out", str(out), *extra]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def stage_times(out: Path) -> dict[str, float]:
    return json.loads((out / "run.json").read_text())["timings_s"]


def outputs(out: Path) -> dict[str, str]:
    return json.loads((out / "manifest.json").read_text())["outputs"]


def start_cluster(workdir: Path) -> tuple[str, list[subprocess.Popen]]:
    scheduler_file = workdir / "scheduler.json"
    common = dict(cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--dashboard-address", ":0", "--scheduler-file", str(scheduler_file)], **common)]
    deadline = time.monotonic() + 60
    while not scheduler_file.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the Dask scheduler did not start")
        time.sleep(0.2)
    address = json.loads(scheduler_file.read_text())["address"]
    procs.append(subprocess.Popen([str(BIN / "dask"), "worker", address, "--nworkers", "2", "--nthreads", "1",
                                   "--host", "127.0.0.1", "--dashboard-address", ":0"], **common))
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        try:
            os.killpg(p.pid, signal.SIGINT)
            p.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(p.pid, signal.SIGKILL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plans", type=int, default=3400)
    parser.add_argument("--sites", type=int, default=900)
    parser.add_argument("--homes", type=int, default=2100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "build")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--reference", type=Path, default=None,
                        help="an existing build with the same parameters: time only the Dask build against it")
    args = parser.parse_args()

    if args.reference is not None:
        default = args.reference
    else:
        default = args.out / "default"
        shutil.rmtree(default, ignore_errors=True)
        first = run_build(default, args)
        print(f"build {args.plans:,} plans → {args.homes:,} homes: {first:.1f} s wall (incl. Prefect start-up)")
    for stage, seconds in stage_times(default).items():
        print(f"  {stage:<14} {seconds:8.1f} s")
    if args.reference is None:
        rerun = run_build(default, args)
        print(f"unchanged rerun: {rerun:.1f} s wall")

    # run.json describes the last run: after an unchanged rerun its stages were reused, not timed.
    work = json.loads((default / "run.json").read_text()).get("work", {})
    usd = pd.read_parquet(default / "usd.parquet")
    homes = pd.read_parquet(default / "homes.parquet")
    kept = homes[homes["kept"]]
    if "usd" in work:
        print(f"USD export per home: median {work['usd']['median_ms']:.0f} ms (p90 {work['usd']['p90_ms']:.0f})")
    if "homes" in work:
        print(f"per plan (furnish + devices + check + home.json + preview): median {work['homes']['median_ms']:.0f} ms "
              f"(p90 {work['homes']['p90_ms']:.0f})")
    print(f"USD size per home: median {usd['bytes'].median() / 1024:.0f} KiB; {int(usd['valid'].sum()):,}/{len(usd):,} valid")
    print(f"devices per home min/median/max {kept['devices'].min()}/{kept['devices'].median():.0f}/{kept['devices'].max()}; "
          f"agent cameras {kept['agent_cameras'].min()}/{kept['agent_cameras'].median():.0f}/{kept['agent_cameras'].max()}")

    if not args.skip_dask:
        with tempfile.TemporaryDirectory() as tmp:
            address, procs = start_cluster(Path(tmp))
            try:
                dask_out = args.out / "dask"
                shutil.rmtree(dask_out, ignore_errors=True)
                seconds = run_build(dask_out, args, "--dask-address", address)
            finally:
                stop(procs)
        same = outputs(dask_out) == outputs(default)
        print(f"same build on a separately started Dask cluster (1 scheduler + 2 workers): {seconds:.1f} s wall; "
              f"outputs identical to the default build: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
