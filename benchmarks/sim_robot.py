"""Path planning and driving of the robot body, in the house and in a generated home (docs/skills.md).

    .venv/bin/python benchmarks/sim_robot.py [--rounds 3] [--body unitree_g1_d_ultimate] [--seed 1] [--exact 0]

In each home the body drives from room to room (every room, ``--rounds``
times over, doors closed at the start and opened on the way) with the
``robot_navigate_to`` skill on a world that runs only the robot's motion.
Prints the time to build the navigation mesh (once per home, body width and
door state), and the median and 90th percentile milliseconds of

- ``plan_path``: one path query on a built mesh;
- ``navigate_to``: the whole skill: choosing the spot in the room, planning
  around people and objects, and stepping the motion (10 steps a second of
  simulated time) to the end.

With ``--exact N`` it also draws N random pairs of points on the house's free
floor (every door open) and compares each planned path with the exact
shortest path: Dijkstra over the visibility graph of every corner of the
free floor (slow to build, which is why the simulator does not use it).

The generated home is the first of the generator's plans that furnishes and
equips. Times are the process's CPU time (other work on the machine does not
count); one process, so the figures are per core.
"""

from __future__ import annotations

import argparse
import itertools
import math
import tempfile
import time
from typing import Callable
from pathlib import Path

import networkx as nx
import numpy as np
import shapely
from shapely import LineString, Point

from homeloop.core.catalog import Catalog, load_catalog
from homeloop.core.home import Home
from homeloop.core.navigation import free_floor_of
from homeloop.pipeline.devices import equip
from homeloop.pipeline.furnish import furnish
from homeloop.pipeline.homes import stage_rng
from homeloop.pipeline.houses import house_home
from homeloop.pipeline.sources.swiss_dwellings import read_plans
from homeloop.pipeline.sources.synthetic import generate
from homeloop.sim import robot as rb
from homeloop.sim.dynamics.robot_motion import RobotMotion
from homeloop.sim.episode import DEFAULT_ROBOT
from homeloop.sim.services import robot_skills as skills
from homeloop.sim.skills import SkillError
from homeloop.sim.world import World


#: CPU time of this process (s).
_clock = time.process_time


#: Simulated time (s) a drive may take at most: far more than any drive across a home.
DRIVE_LIMIT_S = 3600.0


class _Ctx:
    """What the robot's skills need of an episode: the world and a way to let time pass."""

    def __init__(self, world: World) -> None:
        self.world = world

    def advance(self, seconds: float) -> None:
        self.world.advance(seconds)

    def advance_while(self, going: Callable[[], bool]) -> None:
        self.world.advance_while(going, self.world.time + DRIVE_LIMIT_S)


def generated_home(catalog: Catalog, seed: int, tries: int = 30) -> Home:
    """The first generated plan that furnishes and equips."""
    csv = Path(tempfile.mkdtemp()) / "plans.csv"
    generate(csv, plans=tries, sites=max(1, tries // 3), seed=seed, defect_rate=0.0)
    plans, _ = read_plans(csv)
    for plan in plans:
        furnished = furnish(plan, catalog, stage_rng(seed, plan.key, "furnish"))
        if not furnished.ok:
            continue
        equipped = equip(furnished.home, catalog, stage_rng(seed, plan.key, "devices"))
        if equipped.ok:
            return equipped.home
    raise SystemExit(f"none of {tries} generated plans furnished and equipped; try another --seed")


def _ms(values: list[float]) -> str:
    arr = np.asarray(values) * 1000
    return f"median {np.median(arr):7.2f} ms   p90 {np.percentile(arr, 90):7.2f} ms   (n={arr.size})"


def bench(name: str, home: Home, catalog: Catalog, body: str, rounds: int) -> None:
    world = World(home, catalog, seed=0)
    world.add_module(RobotMotion())
    start = next((r.id for r in home.rooms if r.indoor), home.rooms[0].id)
    rb.place_robot(world, body, start)
    width = world.robot.body.clearance_width
    t0 = _clock()
    rb.navmesh(home, width, rb.closed_off(world))
    mesh_s = _clock() - t0

    plans, drives, refused, driven, simulated = [], [], 0, 0.0, 0.0
    ctx = _Ctx(world)
    for _ in range(rounds):
        for room in home.rooms:
            robot = world.robot
            try:
                goal = rb.room_spot(world, room.id, width, near=(robot.x, robot.y))
                t0 = _clock()
                rb.plan_path(world, (robot.x, robot.y), goal, width)
                plans.append(_clock() - t0)
            except SkillError:
                pass
            before = world.time
            t0 = _clock()
            try:
                data = skills.navigate_to(ctx, room.id)
                driven += data["driven_m"]
            except SkillError:
                refused += 1
            drives.append(_clock() - t0)
            simulated += world.time - before
    print(f"{name}: {len(home.rooms)} rooms, {len(home.furniture)} pieces of furniture; body {body} "
          f"({width:.2f} m wide)")
    print(f"  navigation mesh   {mesh_s * 1000:7.1f} ms once ({len(rb.navmesh(home, width, rb.closed_off(world)).triangles)}"
          f" triangles)")
    print(f"  plan_path         {_ms(plans)}")
    print(f"  navigate_to       {_ms(drives)}   {driven:.0f} m driven in {simulated:.0f} s simulated; "
          f"{refused} refused (no way for this body)")


def exact_comparison(home: Home, catalog: Catalog, body: str, pairs: int, seed: int) -> None:
    """Planned path lengths against the exact shortest paths (see the module docstring)."""
    world = World(home, catalog, seed=0)
    for door in world.openings.values():
        door.open = True
    width = catalog.robots[body].clearance_width
    floor = free_floor_of(home, width).geometry
    inside = floor.buffer(1e-7)
    shapely.prepare(inside)
    corners = list(dict.fromkeys(c for poly in shapely.get_parts(floor)
                                 for ring in (poly.exterior, *poly.interiors) for c in ring.coords[:-1]))
    t0 = _clock()
    graph = nx.Graph()
    pairs_ij = list(itertools.combinations(range(len(corners)), 2))
    seen = shapely.covers(inside, np.array([LineString([corners[i], corners[j]]) for i, j in pairs_ij], dtype=object))
    graph.add_weighted_edges_from((i, j, math.dist(corners[i], corners[j])) for (i, j), s in zip(pairs_ij, seen) if s)
    build_s = _clock() - t0

    def shortest(a, b) -> float:
        if shapely.covers(inside, LineString([a, b])):
            return math.dist(a, b)
        g = graph.copy()
        for name, p in (("a", a), ("b", b)):
            lines = np.array([LineString([p, c]) for c in corners], dtype=object)
            g.add_weighted_edges_from((name, i, math.dist(p, corners[i])) for i in np.flatnonzero(shapely.covers(inside, lines)))
        return nx.shortest_path_length(g, "a", "b", weight="weight")

    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = floor.bounds
    ratios = []
    while len(ratios) < pairs:
        a, b = (tuple(rng.uniform((x0, y0), (x1, y1))) for _ in range(2))
        if not (floor.covers(Point(a)) and floor.covers(Point(b))):
            continue
        try:
            planned = rb.plan_path(world, a, b, width)
        except SkillError:
            continue
        ratios.append(planned.length / shortest(a, b))
    r = np.asarray(ratios)
    print(f"  exact comparison  {len(corners)} corners, visibility graph built in {build_s:.1f} s; planned / shortest "
          f"over {r.size} pairs: median {np.median(r):.4f}, mean {r.mean():.4f}, max {r.max():.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--body", default=DEFAULT_ROBOT)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--exact", type=int, default=0, help="pairs to compare with exact shortest paths")
    args = parser.parse_args()
    catalog = load_catalog()
    house = house_home(catalog)
    bench("house", house, catalog, args.body, args.rounds)
    if args.exact:
        exact_comparison(house, catalog, args.body, args.exact, args.seed)
    bench("generated home", generated_home(catalog, args.seed), catalog, args.body, args.rounds)


if __name__ == "__main__":
    main()
