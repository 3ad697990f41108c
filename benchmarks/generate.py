"""Time the synthetic Swiss Dwellings generator at full Swiss Dwellings v3 scale.

    python benchmarks/generate.py                      # ~45,000 apartments, 1,470 sites
    python benchmarks/generate.py --plans 3400 --sites 900 --out outputs/bench/default.csv

Prints wall time, rows, rows per second, file size and peak memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path


from homeloop.pipeline.sources.synthetic import DEFAULT_DEFECT_RATE, generate

#: Full Swiss Dwellings v3 scale (docs/data-format.md): ~45,000 apartments on ~1,470 sites.
FULL_PLANS, FULL_SITES = 45_000, 1_470


def peak_memory_mib() -> float:
    """Peak resident memory of this process (MiB); ru_maxrss is KiB on Linux, bytes on macOS."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plans", type=int, default=FULL_PLANS, help="apartments to write (default %(default)s)")
    parser.add_argument("--sites", type=int, default=FULL_SITES, help="sites to spread them over (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--defect-rate", type=float, default=DEFAULT_DEFECT_RATE)
    parser.add_argument("--out", type=Path, default=Path("outputs/bench/full.csv"))
    args = parser.parse_args(argv)

    start = time.perf_counter()
    report = generate(args.out, plans=args.plans, sites=args.sites, seed=args.seed, defect_rate=args.defect_rate)
    wall = time.perf_counter() - start
    size = report.path.stat().st_size
    print(f"file        {report.path}")
    print(f"plans       {report.plans:,} on {report.sites:,} sites")
    print(f"rows        {report.rows:,} ({report.rows / report.plans:.1f} per plan)")
    print(f"wall time   {wall:.2f} s")
    print(f"rows/s      {report.rows / wall:,.0f}")
    print(f"file size   {size / 1e6:,.1f} MB")
    print(f"peak memory {peak_memory_mib():,.0f} MiB")
    print("defects     " + ", ".join(f"{k} {v:,}" for k, v in report.defects.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
