"""Ingest benchmark: a full-size Swiss Dwellings file (docs/data-format.md: ~3.26 M rows,
~45,000 apartments, ~1,470 sites) read into plan tables; prints rows, plans,
wall time, CPU time, rows/s and peak memory (RSS). The ingest runs its stages
in threads (docs/pipeline.md), so CPU time above wall time means more than one
core was busy; the load average says how much other work shared the machine.

    .venv/bin/python benchmarks/ingest.py [--source CSV] [--plans N] [--sites N] [--out DIR]

The source is generated once (by :func:`homeloop.pipeline.sources.synthetic.generate`)
when it does not exist yet.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

from homeloop.pipeline.ingest import ingest
from homeloop.pipeline.sources.swiss_dwellings import scan_source

from cpu_time import cpu_seconds  # benchmarks/cpu_time.py, beside this script


def _peak_rss_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ensure_source(path: Path, plans: int, sites: int, seed: int = 0) -> str:
    """Generate the source file unless it exists; say where it came from."""
    if path.exists():
        return "existing"
    from homeloop.pipeline.sources import synthetic

    synthetic.generate(path, plans=plans, sites=sites, seed=seed)
    return "generated"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=Path("outputs/bench/full.csv"))
    parser.add_argument("--plans", type=int, default=45_000)
    parser.add_argument("--sites", type=int, default=1_470)
    parser.add_argument("--out", type=Path, default=Path("outputs/bench/ingest"))
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    origin = ensure_source(args.source, args.plans, args.sites)
    generated = time.perf_counter() - t0
    size_mib = args.source.stat().st_size / 2**20
    print(f"source     {args.source} ({size_mib:,.0f} MiB, {origin}, {generated:.1f} s)")

    load_before = os.getloadavg()[0]
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    index = scan_source(args.source)
    scanned = time.perf_counter() - t0
    t1 = time.perf_counter()
    summary = ingest(args.source, args.out, index=index)
    wall = time.perf_counter() - t1
    total = scanned + wall
    cpu = cpu_seconds() - cpu0
    print(f"rows       {summary.rows_in:,} in = {summary.rows_used:,} used + {summary.rows_rejected:,} rejected"
          f" ({'reconciled' if summary.reconciles else 'NOT reconciled'})")
    print(f"plans      {summary.plans:,} ({summary.plans_rejected:,} rejected)")
    for reason, n in sorted(summary.rejected_by_reason.items(), key=lambda kv: -kv[1]):
        print(f"  {reason:<28} {n:,}")
    print(f"wall time  {total:.1f} s (line scan and index pass {scanned:.1f} s, main pass {wall:.1f} s)")
    print(f"cpu time   {cpu:.1f} s ({cpu / total:.2f} cores busy on average)")
    print(f"load avg   {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (1 min; {os.cpu_count()} cores)")
    print(f"rows/s     {summary.rows_in / total:,.0f}")
    print(f"peak RSS   {_peak_rss_mib():,.0f} MiB")
    return 0 if summary.reconciles else 1


if __name__ == "__main__":
    raise SystemExit(main())
