"""Applicability screening speed: N homes x 24 tasks x 5 bodies, and a filter query.

    .venv/bin/python benchmarks/applicability.py --homes 2100
    .venv/bin/python benchmarks/applicability.py --build outputs/default   # the build's home files

Homes come from a build folder's ``homes/*/home.json`` when given; otherwise
from the furnished, equipped house, copied with variations (door widths,
missing devices and furniture) so the screen meets varied homes.
Prints wall time and rows per second for the screen (2 worker processes by
default, as the target machine has 2 cores), then the time of a filter query
over the written table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from homeloop.sim.task import load_tasks  # noqa: E402
from homeloop.core.catalog import load_catalog  # noqa: E402
from homeloop.core.home import Home  # noqa: E402
from homeloop.pipeline.applicability import screen_homes, write_applicability  # noqa: E402
from homeloop.pipeline.houses import house_home  # noqa: E402
from homeloop.pipeline.queries import query_applicability, run_sql  # noqa: E402


def _base_home() -> Home:
    """The house as the build makes it: furnished, equipped and checked."""
    return house_home(load_catalog())


def varied_homes(n: int) -> list[Home]:
    """``n`` copies of one home, each with a new id and some variation."""
    base = _base_home()
    data = base.model_dump()
    referenced = {r for d in data["devices"] for r in [d["mounted_on"], *d["controls"], *d["monitors"]]}
    cameras = {c["id"] for c in data["cameras"]}
    devices = [d["id"] for d in data["devices"] if d["id"] not in referenced | cameras]
    homes = []
    for i in range(n):
        d = {**data, "home_id": f"{base.home_id}_{i:05d}"}
        if i % 3 == 1 and devices:  # drop one device
            gone = devices[i % len(devices)]
            d["devices"] = [x for x in data["devices"] if x["id"] != gone]
        if i % 5 == 2:  # narrow every interior door
            d["openings"] = [{**o, "width": 0.5} if o["kind"] == "door" else o for o in data["openings"]]
        homes.append(Home.model_validate(d))
    return homes


def read_build_homes(build: Path, limit: int | None) -> list[Home]:
    files = sorted((build / "homes").glob("*/home.json"))[:limit]
    return [Home.read(f) for f in files]


def _screen_chunk(homes: list[Home]) -> pd.DataFrame:
    catalog = load_catalog()
    return screen_homes(homes, load_tasks(), None, catalog)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--homes", type=int, default=2100)
    ap.add_argument("--build", type=Path, default=None)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    t0 = time.perf_counter()
    homes = read_build_homes(args.build, args.homes) if args.build else varied_homes(args.homes)
    print(f"prepared {len(homes):,} homes in {time.perf_counter() - t0:.1f} s")
    tasks, catalog = load_tasks(), load_catalog()

    t0 = time.perf_counter()
    if args.workers > 1:
        size = max(1, -(-len(homes) // (args.workers * 4)))
        chunks = [homes[i:i + size] for i in range(0, len(homes), size)]
        with ProcessPoolExecutor(args.workers) as pool:
            table = pd.concat(list(pool.map(_screen_chunk, chunks)), ignore_index=True)
    else:
        table = screen_homes(homes, tasks, None, catalog)
    wall = time.perf_counter() - t0
    print(f"screened {len(homes):,} homes x {len(tasks)} tasks x {len(catalog.robots)} bodies = {len(table):,} rows "
          f"in {wall:.1f} s ({len(table) / wall:,.0f} rows/s, {args.workers} worker(s))")
    rate = table[table.robot == "unitree_g1_d_ultimate"].applicable.mean()
    print(f"applicable share for the G1-D: {rate:.1%}")

    with tempfile.TemporaryDirectory() as tmp:
        write_applicability(table, tmp)
        t0 = time.perf_counter()
        hits = query_applicability(tmp, tasks=["water_the_plants", "handle_smoke_alarm"],
                                   robot="hello_robot_stretch_4")
        t1 = time.perf_counter()
        sql = run_sql(tmp, "SELECT robot, count(*) AS n FROM applicability WHERE applicable GROUP BY robot")
        t2 = time.perf_counter()
    print(f"filter query: {len(hits):,} homes in {t1 - t0:.3f} s; SQL over the table: {len(sql)} rows in "
          f"{t2 - t1:.3f} s")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
