"""USD export benchmark: writes the catalog assets once, then exports N homes
and prints the median and p90 CPU milliseconds (this process's CPU time, so
other work on the machine does not count), the bytes per home and the prims and
properties a home's file authors (their count is what a home's export costs most by), and,
separately, the time the usd-core validators take per home (wall and CPU:
they run in threads), with the catalog assets held open as the usd stage
holds them, and the CPU the validators left out for a home (those of usdz
packages) would add. Homes are exported as a build's USD partition exports them,
with its garbage-collector setting (:func:`homeloop.pipeline.parallel.run_partition`).

    .venv/bin/python benchmarks/usd_export.py [--homes N] [--seed S] [--usda] [--validate K] [--stand-in] [--out DIR]
    .venv/bin/python benchmarks/usd_export.py --workers 2 [--homes N]

With ``--workers N``, the homes are written as home files and exported by a build's USD
partitions (:func:`homeloop.pipeline.homes.export_homes_partition`: reading, export and
validation) on a local cluster of N workers, as the build runs them; it prints each home's
wall milliseconds there and the whole mapping's seconds. Workers that share the machine's
cores slow each other: compare a home's milliseconds with ``--workers 1`` (in this process) and
``--workers 2``, the runs alternated.

Homes come from the project's plans: the house plus generated Swiss
Dwellings plans (:func:`homeloop.pipeline.sources.synthetic.generate`, read by
:func:`homeloop.pipeline.ingest.ingest`), each furnished, equipped and checked as the build
does (:func:`homeloop.pipeline.homes.build_home`: devices and cameras included) and read back from
their home files, as the build's USD stage reads them. A plan that
gives no home (or every plan, with ``--stand-in``) is made by a stand-in that puts each room
rule's first choices on a grid inside the room (overlaps allowed: only the export cost matters
here) and equips it with devices and cameras in the ranges of docs/pipeline.md (52-118 devices,
6-10 agent cameras).
"""

from __future__ import annotations

import sys
from pathlib import Path


import argparse
import math
import random
import statistics
import tempfile
import time

import shapely

from homeloop.core.catalog import Catalog, load_catalog
from homeloop.core.home import (
    OPENING_KIND_OF_SUBTYPE,
    CameraPose,
    Home,
    Opening,
    Pose,
    Room,
    Source,
    Wall,
    camera_from_catalog,
    device_from_catalog,
    furniture_from_catalog,
    object_from_catalog,
    ObjectLocation,
    rings_from_polygon,
)
from homeloop.core.house import load_house
from homeloop.pipeline.parallel import run_partition
from homeloop.core.plan import Plan
from homeloop.pipeline.usd import (assets_held_open, export_home, validate_stage_report, validators, validators_for,
                                   write_catalog_assets)

#: Devices put in every indoor room by the stand-in furnisher.
ROOM_DEVICES = ("light", "light_switch", "thermostat", "plug", "plug", "smoke_sensor")


def _grid_points(poly: shapely.Polygon, n: int, rng: random.Random) -> list[tuple[float, float]]:
    """Up to ``n`` points inside ``poly`` on a jittered grid."""
    minx, miny, maxx, maxy = poly.bounds
    side = max(1, math.ceil(math.sqrt(n)))
    pts = []
    for i in range(side):
        for j in range(side):
            x = minx + (i + 0.5 + rng.uniform(-0.2, 0.2)) * (maxx - minx) / side
            y = miny + (j + 0.5 + rng.uniform(-0.2, 0.2)) * (maxy - miny) / side
            if poly.contains(shapely.Point(x, y)):
                pts.append((round(x, 3), round(y, 3)))
    if not pts:
        p = poly.representative_point()
        pts = [(round(p.x, 3), round(p.y, 3))]
    return pts[:n]


def stand_in_home(plan: Plan, catalog: Catalog, seed: int) -> Home:
    """A home for export timing: the plan's rooms, walls and openings, rule
    furniture on a grid, objects on the floor, devices and dome cameras."""
    rng = random.Random(f"usd-bench:{seed}:{plan.key}")
    rooms = [Room(id=s.id, name=s.subtype.lower(), type=s.subtype, polygon=rings_from_polygon(s.polygon))
             for s in plan.spaces if s.polygon.geom_type == "Polygon"]
    room_ids = {r.id for r in rooms}
    walls = [Wall(id=s.id, kind=s.kind if s.kind in ("WALL", "COLUMN", "RAILING") else "WALL",
                  polygon=rings_from_polygon(g), height=1.0 if s.kind == "RAILING" else plan.height)
             for s in plan.separators for g in shapely.get_parts(s.polygon) if g.geom_type == "Polygon"][:400]
    openings = []
    for o in plan.openings:
        kind = OPENING_KIND_OF_SUBTYPE.get(o.kind)
        if kind is None or o.polygon.geom_type != "Polygon":
            continue
        window = kind == "window"
        openings.append(Opening(id=o.id, kind=kind, polygon=rings_from_polygon(o.polygon),
                                connects=[c for c in o.connects if c in room_ids][:2], width=max(o.width, 0.1),
                                sill=0.5 if window else 0.0, height=1.9 if window else 2.0,
                                exterior=len(o.connects) < 2, is_open=rng.random() < 0.3))
    furniture, objects, devices, cameras = [], [], [], []
    indoor = [r for r in rooms if r.indoor]
    for room in rooms:
        poly = shapely.Polygon(room.polygon[0], room.polygon[1:])
        rule = catalog.rule_for(room.type)
        ids = [i.one_of[0] for i in rule.items if i.one_of[0] in catalog.furniture] if rule else []
        spots = _grid_points(poly, len(ids) + 3, rng)
        for k, (cid, (x, y)) in enumerate(zip(ids, spots)):
            f = furniture_from_catalog(catalog.furniture[cid], f"f_{room.id}_{k}", room.id,
                                       Pose(x=x, y=y, yaw=rng.choice((0.0, math.pi / 2, math.pi, -math.pi / 2))))
            if f.parts and rng.random() < 0.3:
                p = f.parts[0]
                p.state = p.range[1]
            furniture.append(f)
        for k, (x, y) in enumerate(spots[len(ids):]):
            oid = rng.choice(sorted(catalog.objects))
            objects.append(object_from_catalog(catalog.objects[oid], f"o_{room.id}_{k}",
                                               ObjectLocation(kind="floor", room=room.id), Pose(x=x, y=y)))
    for room in indoor:
        c = shapely.Polygon(room.polygon[0], room.polygon[1:]).representative_point()
        for k, dtype in enumerate(ROOM_DEVICES):
            devices.append(device_from_catalog(catalog.devices[dtype], f"d_{room.id}_{k}", room.id,
                                               Pose(x=round(c.x, 3), y=round(c.y, 3), z=2.5)))
    for o in openings:
        if o.connects:
            dtype = "roller_blind" if o.kind == "window" else "contact_sensor"
            devices.append(device_from_catalog(catalog.devices[dtype], f"d_{o.id}", o.connects[0],
                                               Pose(x=o.polygon[0][0][0], y=o.polygon[0][0][1], z=1.0),
                                               mounted_on=o.id))
    for k, room in enumerate(indoor[:10]):
        c = shapely.Polygon(room.polygon[0], room.polygon[1:]).representative_point()
        cid = f"cam_{room.id}"
        cameras.append(camera_from_catalog(catalog.devices["dome_camera"], cid, room.id,
                                           CameraPose(x=round(c.x, 3), y=round(c.y, 3), z=2.5,
                                                      yaw=rng.uniform(-3, 3), pitch=-0.5), agent_visible=k < 8))
        devices.append(device_from_catalog(catalog.devices["dome_camera"], cid, room.id,
                                           Pose(x=round(c.x, 3), y=round(c.y, 3), z=2.5)))
    return Home(home_id=plan.key, source=Source(kind="synthetic", plan=plan.key, seed=seed), rooms=rooms,
                walls=walls, openings=openings, furniture=furniture, objects=objects, devices=devices,
                cameras=cameras)


def bench_plans(n: int, seed: int, work: Path) -> list[Plan]:
    """The house and ``n - 1`` generated plans."""
    plans = [load_house()]
    if n > 1:
        from homeloop.pipeline.ingest import ingest, load_plans
        from homeloop.pipeline.sources.synthetic import generate

        csv = work / "plans.csv"
        generate(csv, plans=max(n - 1, 1), sites=max(1, (n - 1) // 4), seed=seed, defect_rate=0.0)
        ingest(csv, work / "ingest")
        plans += load_plans(work / "ingest")[: n - 1]
    return plans


def make_homes(plans: list[Plan], catalog: Catalog, seed: int, stand_in: bool = False) -> tuple[list[Home], int]:
    """Homes for ``plans`` as the build makes them (furnished, equipped and checked by
    :func:`homeloop.pipeline.homes.build_home`), and how many it made; the stand-in fills in
    for a plan that gives no home (or for all, with ``stand_in``)."""
    from homeloop.pipeline.homes import build_home

    homes, built = [], 0
    for plan in plans:
        home = None if stand_in else build_home(plan, catalog, seed)[0]
        built += home is not None
        homes.append(home if home is not None else stand_in_home(plan, catalog, seed))
    return homes, built


def as_read(home: Home, work: Path) -> Home:
    """``home`` as the build's USD stage has it: read back from its home file."""
    return Home.read(home.write(work / "read" / home.home_id / "home.json"))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _export_each(homes: list[Home], catalog: Catalog, out: Path, assets: dict[str, Path],
                 usda: bool) -> tuple[list, list[float]]:
    """Export each home (not validated); the results and each export's CPU milliseconds."""
    results, ms = [], []
    for h in homes:
        cpu = time.process_time()  # CPU time of this process: other work shares the machine
        results.append(export_home(h, catalog, out / "homes" / h.home_id / "home.usdc", assets=assets,
                                   usda=usda, validate=False))
        ms.append((time.process_time() - cpu) * 1000)
    return results, ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--homes", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--usda", action="store_true", help="write .usda instead of .usdc")
    ap.add_argument("--validate", type=int, default=10, help="validate this many homes (timed separately)")
    ap.add_argument("--stand-in", action="store_true", help="furnish every home with the stand-in")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: a temporary one)")
    ap.add_argument("--workers", type=int, default=0,
                    help="export as the build's USD stage does, on a local cluster of this many workers")
    args = ap.parse_args(argv)
    catalog = load_catalog()
    with tempfile.TemporaryDirectory(prefix="homeloop-usd-") as tmp:
        out = args.out or Path(tmp)
        plans = bench_plans(args.homes, args.seed, Path(tmp))
        homes, furnished = make_homes(plans, catalog, args.seed, args.stand_in)
        if args.workers:  # the partitions read the home files themselves
            return _on_workers(args, catalog, homes, furnished, out)
        homes = [as_read(h, Path(tmp)) for h in homes]
        t0 = time.perf_counter()
        assets = write_catalog_assets(catalog, out / "assets")
        asset_s = time.perf_counter() - t0
        # As a build's USD partition runs them, with its garbage-collector setting: the figures are the stage's.
        results, ms = run_partition(_export_each, homes, catalog, out, assets, args.usda)
        sizes = [r.bytes for r in results]
        things = [sum(r.prim_counts.values()) for r in results]
        print(f"homes: {len(homes)} ({'usda' if args.usda else 'usdc'}; {furnished} built as the build does, "
              f"{len(homes) - furnished} by the stand-in); "
              f"things per home: median {statistics.median(things):.0f}, "
              f"devices per home: median {statistics.median(len(h.devices) for h in homes):.0f}")
        print(f"assets: {len(assets)} files, {sum(p.stat().st_size for p in assets.values())} bytes, "
              f"{asset_s * 1000:.1f} ms")
        print(f"export CPU ms/home: median {statistics.median(ms):.1f}, p90 {_pct(ms, 0.9):.1f}, max {max(ms):.1f}")
        print(f"bytes/home: median {statistics.median(sizes):.0f}, p90 {_pct(sizes, 0.9):.0f}")
        specs = [_authored(r.path) for r in results]
        print(f"authored per home: median {statistics.median(p for p, _ in specs):.0f} prims, "
              f"{statistics.median(a for _, a in specs):.0f} properties (what a home's export costs most by)")
        if args.validate > 0:
            vms, vcpu, errors, warnings = [], [], 0, 0
            with assets_held_open(assets.values()):  # as the usd stage validates its batches
                for r in results[: args.validate]:
                    t, cpu = time.perf_counter(), time.process_time()
                    report = validate_stage_report(r.path)
                    vms.append((time.perf_counter() - t) * 1000)
                    vcpu.append((time.process_time() - cpu) * 1000)
                    errors += len(report.errors)
                    warnings += len(report.warnings)
                    for e in report.errors[:3]:
                        print(f"  error in {r.path.parent.name}: {e}")
            print(f"validation ms/home ({len(vms)} homes, assets held open): median {statistics.median(vms):.1f} "
                  f"wall, {statistics.median(vcpu):.1f} CPU (usd-core validates in threads); "
                  f"p90 {_pct(vms, 0.9):.1f} wall; errors {errors}, warnings {warnings}")
            skipped = _skipped_validation_cpu_ms([r.path for r in results[: args.validate]], assets)
            print(f"validators left out for homes (usdz packages): median {statistics.median(skipped):.1f} ms CPU a home")
    return 0


def _on_workers(args: argparse.Namespace, catalog: Catalog, homes: list[Home], furnished: int, out: Path) -> int:
    """Export the homes as the build's USD stage does, on ``args.workers`` local workers
    (one: in this process, as a build with ``--workers 1`` runs)."""
    from homeloop.pipeline.homes import export_homes_partition
    from homeloop.pipeline.parallel import dask_client, map_partitions

    for h in homes:
        h.write(out / "homes" / h.home_id / "home.json")
    write_catalog_assets(catalog, out / "assets")
    ids = [h.home_id for h in homes]
    with dask_client(workers=args.workers) as client:
        # One small mapping first: each worker imports usd-core and reads the catalog once.
        map_partitions(export_homes_partition, ids[: 2 * args.workers], str(out), args.usda, client=client,
                       partition_size=1)
        start = time.perf_counter()
        records = map_partitions(export_homes_partition, ids, str(out), args.usda, client=client,
                                 partition_size=50)
        wall = time.perf_counter() - start
    ms = [r["seconds"] * 1000 for r in records]
    invalid = sum(not r["valid"] for r in records)
    print(f"homes: {len(homes)} ({furnished} built as the build does) on {args.workers} workers; "
          f"{invalid} fail validation")
    print(f"read + export + validate, wall ms/home on a worker: median {statistics.median(ms):.1f}, "
          f"p90 {_pct(ms, 0.9):.1f}, mean {statistics.mean(ms):.1f}; the mapping {wall:.1f} s")
    return 0


def _authored(path: Path) -> tuple[int, int]:
    """The prims and the properties a home's file authors (its own layer, not its assets')."""
    from pxr import Sdf

    layer = Sdf.Layer.OpenAsAnonymous(str(path))
    counts = [0, 0]

    def visit(spec_path: "Sdf.Path") -> None:
        counts[0] += spec_path.IsPrimPath()
        counts[1] += spec_path.IsPropertyPath()

    layer.Traverse(layer.pseudoRoot.path, visit)
    return counts[0], counts[1]


def _skipped_validation_cpu_ms(paths: list[Path], assets: dict[str, Path]) -> list[float]:
    """CPU ms per home that the validators :func:`validators_for` leaves out of a home would take."""
    from pxr import Usd, UsdValidation

    cpu = []
    with assets_held_open(assets.values()):
        for path in paths:
            stage = Usd.Stage.Open(str(path))
            kept = {v.GetMetadata().name for v in validators_for(stage)}
            left_out = [v for v in validators() if v.GetMetadata().name not in kept]
            t = time.process_time()
            list(UsdValidation.ValidationContext(left_out).Validate(stage))
            cpu.append((time.process_time() - t) * 1000)
    return cpu


if __name__ == "__main__":
    raise SystemExit(main())
