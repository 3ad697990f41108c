"""Time the features and selection stages (docs/pipeline.md); prints figures.

    .venv/bin/python benchmarks/selection.py [--full] [--seed N]

(a) 2,100 picks from the ~2,800 plans of ~3,400 on ~900 sites that pass the audit:
    features of real plans when the built-in plan generator
    (``homeloop.pipeline.sources.synthetic``) is available, otherwise a synthetic
    feature table with the same shape; with the room–door graph figures: distinct
    3-round WL hashes in the pool, and how many picks have a hash no earlier pick has;
(b) 2,100 picks from ~45,000 plans of ~1,470 sites (the full Swiss Dwellings
    scale): always a synthetic feature table (generating and ingesting 45,000
    plans is the ingest benchmark's business, not this one's);
(c) with ``--full``: the complete ordering of (a)'s and (b)'s pools.

Also times :func:`homeloop.pipeline.features.plan_features` per plan on whatever real
plans are at hand (generated ones, else the hand-made test fixtures).
Wall time is ``time.perf_counter``; peak memory is the tracemalloc peak of the
step (Python and NumPy allocations) and the process's maximum resident size.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


import argparse
import resource
import tempfile
import time
import tracemalloc

from homeloop.pipeline.diversity import diversity_report
from homeloop.pipeline.features import features_table, synthetic_features_table
from homeloop.pipeline.select import select

PICKS = 2_100
SMALL_POOL, SMALL_SITES = 3_400, 900
LARGE_POOL, LARGE_SITES = 45_000, 1_470


def measured(fn, *args, trace: bool = True, **kwargs):
    """(result, seconds, tracemalloc peak MiB) of one call; without ``trace`` the
    peak is not measured (tracemalloc slows allocation-heavy Python code)."""
    if not trace:
        t = time.perf_counter()
        result = fn(*args, **kwargs)
        return result, time.perf_counter() - t, float("nan")
    tracemalloc.start()
    t = time.perf_counter()
    result = fn(*args, **kwargs)
    seconds = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, seconds, peak / 2**20


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def generated_plans(plans: int, sites: int, seed: int):
    """Plans from the built-in generator, or None when it is not available."""
    try:
        from homeloop.pipeline.sources import synthetic
        from homeloop.pipeline.sources.swiss_dwellings import read_plans
    except ImportError:
        print("features  the plan generator (homeloop.pipeline.sources.synthetic) is not available")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "geometries.csv"
        try:
            t = time.perf_counter()
            synthetic.generate(path, plans=plans, sites=sites, seed=seed)
            found, _ = read_plans(path)
        except Exception as exc:  # the generator is optional here: fall back, say why
            print(f"features  the plan generator failed ({type(exc).__name__}: {exc}); using a synthetic table")
            return None
    print(f"generate  {len(found)} plans from the plan generator in {time.perf_counter() - t:.1f} s")
    return found


def fixture_plans():
    """The hand-made fixture plans of the test suite that read cleanly."""
    from homeloop.pipeline.sources.swiss_dwellings import read_plans

    plans = []
    for path in sorted((ROOT / "tests" / "fixtures").glob("*.csv")):
        try:
            found, _ = read_plans(path)
        except Exception:  # a fixture made to fail ingest
            continue
        plans.extend(found)
    return plans


def time_features(plans, label: str) -> None:
    from homeloop.core.plan import Plan

    # Fresh copies, so no cached geometry from an earlier pass is reused.
    fresh = [Plan(p.ids, p.spaces, p.separators, p.openings, p.features, p.elevation, p.height) for p in plans]
    _, seconds, _ = measured(features_table, fresh, trace=False)
    per_plan = 1e3 * seconds / max(len(fresh), 1)
    spaces = sum(len(p.spaces) for p in fresh) / max(len(fresh), 1)
    print(f"features  {label}: {len(fresh)} plans ({spaces:.1f} spaces each) in {seconds:.2f} s, "
          f"{per_plan:.3f} ms/plan, {len(fresh) / max(seconds, 1e-9):,.0f} plans/s (one process)")


def audit_passing(plans):
    """The plans that pass every audit rule, as the build's select stage takes them."""
    from homeloop.pipeline.audit import audit_plans, plan_status

    status = plan_status(audit_plans(plans))
    passing = [p for p in plans if status.get(p.key, False)]
    print(f"audit     {len(passing):,} of {len(plans):,} plans pass")
    return passing


def time_selection(table, label: str, count: int | None, seed: int) -> None:
    order, seconds, peak = measured(select, table, count=count, seed=seed)
    picks = len(order)
    print(f"wl hashes {label}: {table['wl_hash'].nunique():,} distinct among {len(table):,} plans; "
          f"{int(order['new_hash'].sum()):,} of {picks:,} picks ({order['new_hash'].mean():.1%}) "
          f"have a hash no earlier pick has")
    relaxed = int((order["relaxed"] != "").sum())
    decided = ", ".join(f"{k} {v}" for k, v in order["decided_by"].value_counts().sort_index().items())
    print(f"select    {label}: {picks:,} picks from {len(table):,} plans "
          f"({table['site_id'].nunique():,} sites, {table['group'].nunique()} groups) in {seconds:.2f} s, "
          f"peak {peak:.1f} MiB; {order['site_id'].nunique()} sites picked, relaxed steps {relaxed}; "
          f"decided by: {decided}")
    if count is not None:
        report, seconds, _ = measured(diversity_report, table, order, seed=seed)
        sel, ran = report["sets"]["selected"], report["sets"]["random"]
        print(f"diversity {label}: {seconds:.2f} s; distinct hashes {sel['distinct_hash_share']:.3f} vs random "
              f"{ran['distinct_hash_share']:.3f}; median NN L1 {sel['nn_distance']['median']:.3f} vs "
              f"{ran['nn_distance']['median']:.3f}; groups {sel['groups_covered']} vs {ran['groups_covered']}; "
              f"max site share {sel['max_site_share']:.4f} vs {ran['max_site_share']:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also order the whole of each pool")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    plans = generated_plans(SMALL_POOL, SMALL_SITES, args.seed)
    if plans:
        time_features(plans, "generated plans")
        small = features_table(audit_passing(plans))
        small_label = "(a) generated plans passing the audit"
    else:
        fixtures = fixture_plans()
        if fixtures:
            time_features(fixtures * max(1, 500 // len(fixtures)), "test fixture plans, repeated")
        small = synthetic_features_table(SMALL_POOL, SMALL_SITES, seed=args.seed)
        small_label = "(a) synthetic feature table"
    time_selection(small, small_label, PICKS, args.seed)

    large = synthetic_features_table(LARGE_POOL, LARGE_SITES, seed=args.seed)
    time_selection(large, "(b) synthetic feature table", PICKS, args.seed)

    if args.full:
        time_selection(small, small_label + ", whole pool", None, args.seed)
        time_selection(large, "(b) synthetic feature table, whole pool", None, args.seed)
    print(f"max resident size {max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
