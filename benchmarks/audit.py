"""Time the audit and the feature vectors over the default plan set.

    python benchmarks/audit.py                 # 3,400 generated plans on 900 sites
    python benchmarks/audit.py --plans 1000 --sites 300

Prints plans per second for the audit (every rule), for the features (vector,
group key, WL hash) and for both together, in one process; and first the time
to load the plans from the plan table: all of them, and 25 at a time spread
over the table, as the homes stage loads a partition of plans in rank order
(CPU time: the table is decoded in threads).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from homeloop.pipeline.audit import audit_plans
from homeloop.pipeline.features import features_table
from homeloop.pipeline.ingest import ingest, load_plans
from homeloop.pipeline.sources.synthetic import generate

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plans", type=int, default=3400)
    parser.add_argument("--sites", type=int, default=900)
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "audit")
    args = parser.parse_args()

    source = args.out / "geometries.csv"
    generate(source, plans=args.plans, sites=args.sites, seed=0)
    ingest(source, args.out)
    t = time.process_time()
    plans = load_plans(args.out)
    load_s = time.process_time() - t
    keys = [p.key for p in plans]
    spread = [keys[i::len(keys) // 25][:25] for i in range(20)]  # 20 partitions of 25, each over the table
    t = time.process_time()
    for part in spread:
        load_plans(args.out, keys=part, hold=True)
    part_ms = (time.process_time() - t) * 1000 / len(spread)
    print(f"load:     {load_s:6.2f} s CPU for all plans; {part_ms:.0f} ms CPU for 25 plans spread over the table")

    t = time.perf_counter()
    table = audit_plans(plans)
    audit_s = time.perf_counter() - t
    t = time.perf_counter()
    features_table(plans)
    features_s = time.perf_counter() - t
    n = len(plans)
    print(f"{n:,} plans ({table['plan'].nunique():,} audited, {len(table):,} audit rows)")
    print(f"audit:    {audit_s:6.2f} s  {n / audit_s:7.0f} plans/s")
    print(f"features: {features_s:6.2f} s  {n / features_s:7.0f} plans/s")
    print(f"both:     {audit_s + features_s:6.2f} s  {n / (audit_s + features_s):7.0f} plans/s (one process)")
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
