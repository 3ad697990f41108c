"""Furnishing speed and success: median / p90 milliseconds per home and the share
of plans that furnish, over generated plans (or a Swiss Dwellings CSV).

    .venv/bin/python benchmarks/furnish.py [--plans 200] [--csv PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from homeloop.catalog import load_catalog  # noqa: E402
from pipeline.furnish import furnish  # noqa: E402


def _plans(csv: Path | None, n: int, seed: int) -> list:
    from tests.conftest import load_fixture_plans
    if csv is None:
        from pipeline.sources.synthetic import generate
        tmp = Path(tempfile.mkdtemp()) / "plans.csv"
        generate(tmp, plans=n, sites=max(1, n // 3), seed=seed, defect_rate=0.0)
        csv = tmp
    try:
        from pipeline.sources.swiss_dwellings import read_plans
        plans, _ = read_plans(csv)
    except Exception:  # noqa: BLE001 - fall back to the simple fixture reader
        plans = load_fixture_plans(csv)
    return plans[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--plans", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--csv", type=Path, default=None)
    args = ap.parse_args()
    catalog = load_catalog()
    plans = _plans(args.csv, args.plans, args.seed)
    furnish(plans[0], catalog, np.random.default_rng(0))  # warm caches and imports
    times, ok, reasons = [], 0, Counter()
    for i, plan in enumerate(plans):
        rng = np.random.default_rng([args.seed, i])
        t = time.perf_counter()
        result = furnish(plan, catalog, rng)
        times.append((time.perf_counter() - t) * 1000)
        ok += result.ok
        for f in result.failures:
            reasons[f"{f.room_type}: {f.item}"] += 1
    t = np.asarray(times)
    rooms = np.mean([len(p.spaces) for p in plans])
    print(f"{len(plans)} plans ({rooms:.1f} spaces on average)")
    print(f"ms per home: median {np.median(t):.1f}, p90 {np.percentile(t, 90):.1f}, max {t.max():.1f}")
    print(f"furnished: {ok}/{len(plans)} ({100 * ok / len(plans):.1f} %)")
    for what, n in reasons.most_common(10):
        print(f"  {n:4d}  {what}")


if __name__ == "__main__":
    main()
