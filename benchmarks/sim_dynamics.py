"""Per-step cost of the simulator's dynamics modules in the house (docs/dynamics.md).

    .venv/bin/python benchmarks/sim_dynamics.py [--seconds 600]

Two runs of ``--seconds`` of simulated time each (10 steps a second): the
house idle (nothing heating, no water running), and the house with the pan of
oil heating on its lit burner (it smokes, then ignites) and the burst hose
leaking by the dishwasher. Every module an episode installs runs, in its
order (:func:`homeloop.sim.step_order.install`: no scenario, so no timeline
or people, and no robot). Prints the mean microseconds per step of each
module's ``step``, measured around the call (after the first step, where
each module gathers the home's geometry), over every step of the run, and how
many steps each module ran: a module with nothing evolving sleeps
(:mod:`homeloop.sim.world`; ``--fixed`` steps every module every step); one
process, so per core.
"""

from __future__ import annotations

import argparse
import math
import time

import shapely

from homeloop.core.catalog import load_catalog
from homeloop.pipeline.houses import house_home
from homeloop.sim.step_order import install
from homeloop.sim.world import STEP_S, World


class _Timed:
    """A module whose ``step`` is timed (total nanoseconds and calls)."""

    def __init__(self, module) -> None:
        self.module, self.name, self.ns, self.calls = module, module.name, 0, 0

    def step(self, world, dt):
        start = time.perf_counter_ns()
        self.module.step(world, dt)
        self.ns += time.perf_counter_ns() - start
        self.calls += 1

    def snapshot(self):
        return self.module.snapshot()

    def __getattr__(self, name):  # the module's own API (temperature, sources ...)
        return getattr(self.module, name)


def _world(home, catalog) -> tuple[World, list[_Timed]]:
    world = World(home, catalog, seed=0)
    install(world)
    timed = [_Timed(m) for m in world.modules]
    world.modules[:] = timed
    return world, timed


def _hazards(world: World, timed: list[_Timed]) -> None:
    """The pan of oil on the burner under it, lit; the hose burst by the dishwasher."""
    cooking, water = (next(t.module for t in timed if t.name == n) for n in ("cooking", "water"))
    home = world.home
    pan = world.objects_of_class("pan")[0]
    stove = world.devices_of_type("stove")[0]
    range_ = next(f for f in home.furniture if f.id == pan.placement.furniture)
    burner = min(range_.burners, key=lambda b: math.hypot(b.position[0] - pan.x, b.position[1] - pan.y)).name
    cooking.add_pan(world, pan.id, stove.id, burner, "oil")
    stove.values[burner] = True
    dishwasher = next(f for f in home.furniture if f.semantic_class == "dishwasher")
    at = shapely.centroid(shapely.Polygon(dishwasher.footprint[0]))
    water.add_leak(world, "hose", dishwasher.room, at.x, at.y, world.devices_of_type("water_main")[0].id)


def _run(home, catalog, seconds: float, hazards: bool) -> tuple[World, dict[str, float], float]:
    """One run: per-module µs/step and µs/step in all (the loop included)."""
    world, timed = _world(home, catalog)
    if hazards:
        _hazards(world, timed)
    world.advance(STEP_S)  # set-up happens on the first step: keep it out of the figures
    for t in timed:
        t.ns = t.calls = 0
    start = time.perf_counter()
    world.advance(seconds)
    wall = time.perf_counter() - start
    steps = round(seconds / STEP_S)
    return world, {t.name: (t.ns / 1e3 / steps, t.calls) for t in timed}, wall * 1e6 / steps


def _report(label: str, seconds: float, runs: list[tuple[World, dict[str, tuple[float, int]], float]]) -> None:
    """The best of the runs per module (the machine is shared: the least disturbed run)."""
    print(f"{label}: {round(seconds / STEP_S)} steps, best of {len(runs)} runs; "
          f"{min(r[2] for r in runs):.2f} µs/step in all (incl. the loop and timing)")
    for name in runs[0][1]:
        print(f"  {name:<13} {min(r[1][name][0] for r in runs):7.2f} µs/step, ran {runs[0][1][name][1]:,} steps")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="simulated seconds per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best is shown")
    parser.add_argument("--fixed", action="store_true", help="step every module every step (no sleeping)")
    args = parser.parse_args()
    if args.fixed:
        import homeloop.sim.world

        homeloop.sim.world.SLEEPING = False
    catalog = load_catalog()
    home = house_home(catalog)
    _report("idle house", args.seconds, [_run(home, catalog, args.seconds, False) for _ in range(args.repeat)])
    runs = [_run(home, catalog, args.seconds, True) for _ in range(args.repeat)]
    _report("pan heating and leak running", args.seconds, runs)
    world = runs[0][0]
    pan = world.module("cooking").pans()[0]
    litres = world.module("water").total_litres()
    print(f"after {args.seconds:g} s: pan {pan.temperature:.0f} °C, ignited at {pan.ignited_at} s; "
          f"{litres:.0f} L on the floor")


if __name__ == "__main__":
    main()
