"""Per-home work, step by step: furnish, devices and cameras, the home check, and
the preview — median / p90 milliseconds per plan and the share that pass.

    .venv/bin/python benchmarks/furnish.py [--plans 200] [--csv PATH]

Plans come from the generator (defect-free) or a Swiss Dwellings CSV, read by
the real reader; one process, timed in its own CPU time (``time.process_time``),
so the figures are per core and other work on the machine does not count, with
the garbage collector set as a build's partition sets it
(:func:`homeloop.pipeline.parallel.run_partition`).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from homeloop.core.catalog import Catalog, load_catalog
from homeloop.core.check import check_home
from homeloop.pipeline.devices import equip
from homeloop.pipeline.furnish import furnish
from homeloop.pipeline.homes import PREVIEW_DPI, PREVIEW_WIDTH_IN, stage_rng
from homeloop.pipeline.parallel import run_partition
from homeloop.pipeline.previews.home import render_home
from homeloop.pipeline.sources.swiss_dwellings import read_plans


def _plans(csv: Path | None, n: int, seed: int) -> list:
    if csv is None:
        from homeloop.pipeline.sources.synthetic import generate

        csv = Path(tempfile.mkdtemp()) / "plans.csv"
        generate(csv, plans=n, sites=max(1, n // 3), seed=seed, defect_rate=0.0)
    plans, _ = read_plans(csv)
    return plans[:n]


def _line(name: str, ms: list[float]) -> str:
    arr = np.asarray(ms)
    return f"  {name:<22} median {np.median(arr):6.1f} ms   p90 {np.percentile(arr, 90):6.1f} ms   (n={arr.size})"


def _time_plans(plans: list, catalog: Catalog, seed: int) -> tuple[dict[str, list[float]], Counter[str], int]:
    """Each step's CPU milliseconds per plan, the failures by rule or item, and the homes kept."""
    times: dict[str, list[float]] = {"furnish": [], "devices + cameras": [], "check_home": [], "preview": [],
                                     "furnish+devices+check": []}
    failures: Counter[str] = Counter()
    kept = 0
    out = Path(tempfile.mkdtemp()) / "preview.png"
    for plan in plans:
        t0 = time.process_time()
        result = furnish(plan, catalog, stage_rng(seed, plan.key, "furnish"))
        t1 = time.process_time()
        times["furnish"].append((t1 - t0) * 1000)
        if not result.ok:
            failures.update(f"{f.room_type}: {f.item}" for f in result.failures)
            continue
        equipped = equip(result.home, catalog, stage_rng(seed, plan.key, "devices"))
        t2 = time.process_time()
        problems = check_home(equipped.home, catalog)
        t3 = time.process_time()
        times["devices + cameras"].append((t2 - t1) * 1000)
        times["check_home"].append((t3 - t2) * 1000)
        times["furnish+devices+check"].append((t3 - t0) * 1000)
        if problems or not equipped.ok:
            failures.update(p.rule for p in problems)
            continue
        kept += 1
        render_home(equipped.home, out, dpi=PREVIEW_DPI, width_in=PREVIEW_WIDTH_IN)
        times["preview"].append((time.process_time() - t3) * 1000)
    return times, failures, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plans", type=int, default=200)
    parser.add_argument("--csv", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    catalog = load_catalog()
    plans = _plans(args.csv, args.plans, args.seed)
    # As a build's partition runs them, with its garbage-collector setting: the figures are the stage's.
    times, failures, kept = run_partition(_time_plans, plans, catalog, args.seed)

    rooms = np.mean([len(p.spaces) for p in plans])
    print(f"{len(plans)} plans ({rooms:.1f} spaces on average); one process")
    for name, ms in times.items():
        if ms:
            print(_line(name, ms))
    print(f"kept (furnished, equipped, checked): {kept}/{len(plans)} ({100 * kept / len(plans):.1f} %)")
    for what, n in failures.most_common(5):
        print(f"  {n:4d}  {what}")


if __name__ == "__main__":
    main()
