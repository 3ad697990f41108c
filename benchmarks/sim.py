"""The simulator's speed: a 600 s handle_smoke_alarm episode in the house, driven by a scripted
sequence of calls (list devices, read the alarm, capture the kitchen, detect, wait, switch the
stove off, tell the resident, wait to the horizon), without rendering.

    .venv/bin/python benchmarks/sim.py [--repeat 5] [--plans 40]

Prints: the episode's wall time and its ratio to simulated time (the goal is 600x or more: a
600 s episode in a second on one core); the time to build a world (and an episode, with its
scenario and pre-roll) in the house and in a generated home; the step cost of each dynamics
module over the episode (µs per step, from a second, instrumented run, and how many steps
each ran: a module with nothing evolving sleeps); and the cost of a capture. ``--fixed`` turns
the simulator's shortcuts off (every module stepped every step, every frame worked out in full).
One process, so the figures are per core.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from homeloop.core.catalog import Catalog, load_catalog
from homeloop.core.home import Home
from homeloop.sim import step_order
from homeloop.sim.episode import Episode
from homeloop.sim.world import STEP_S, World

TASK = "handle_smoke_alarm"


def scripted_episode(home: Home, catalog: Catalog, seed: int = 0) -> tuple[Episode, float, int]:
    """Run the scripted calls; returns the episode, the wall time of the calls (s) and the call count."""
    ep = Episode(home, TASK, seed=seed, catalog=catalog, images=False)
    t0 = time.perf_counter()
    devices = ep.call("hub_list_devices").data["devices"]
    alarm = ep.wake["event"]["source"]
    ep.call("hub_get_state", device_id=alarm)
    room = next(d["room"] for d in devices if d["id"] == alarm)
    cameras = ep.call("cameras_list_cameras").data["cameras"]
    camera = next((c["id"] for c in cameras if c["room"] == room), cameras[0]["id"])
    shot = ep.call("cameras_capture", camera_id=camera).data
    ep.call("perception_detect_objects", capture_id=shot["capture_id"])
    for _ in range(3):
        ep.call("clock_wait", seconds=20)
    for stove in (d for d in devices if d["type"] == "stove"):
        lit = [k for k, v in ep.call("hub_get_state", device_id=stove["id"]).data["readings"].items() if v is True]
        for burner in lit:
            ep.call("hub_set_state", device_id=stove["id"], field=burner, value=False)
    contacts = ep.call("messaging_list_contacts").data["contacts"]
    resident = next(c["id"] for c in contacts if c["role"] == "resident")
    ep.call("messaging_send", recipient=resident, text="The kitchen smoke alarm went off: a pan was heating. "
                                                       "I switched the stove off.")
    ep.stop("stove off, resident told")  # scored at the horizon: the world runs on to it
    return ep, time.perf_counter() - t0, len(ep.trace)


def timed_modules(ep_factory: Callable[[], Any]) -> tuple[dict[str, float], dict[str, int]]:
    """Seconds spent in each module's step over one scripted episode (steps wrapped with a timer),
    and the steps each ran."""
    spent: dict[str, float] = {}
    ran: dict[str, int] = {}
    original_install = step_order.install

    def install(world: World) -> None:
        original_install(world)
        for module in world.modules:
            spent[module.name], ran[module.name] = 0.0, 0
            module.step = _timer(module.step, module.name, spent, ran)

    step_order.install = install
    try:
        ep_factory()
    finally:
        step_order.install = original_install
    return spent, ran


def _timer(step: Callable[[World, float], None], name: str, spent: dict[str, float],
           ran: dict[str, int]) -> Callable[[World, float], None]:
    clock = time.perf_counter

    def timed(world: World, dt: float) -> None:
        t = clock()
        step(world, dt)
        spent[name] += clock() - t
        ran[name] += 1

    return timed


def build_times(home: Home, catalog: Catalog, repeat: int) -> dict[str, float]:
    """Median seconds to build a world with its dynamics ready to step (the modules set up on the first
    step), and an episode of TASK with its scenario and pre-roll (if the home has the task's roles)."""
    def world() -> None:
        built = World(home, catalog, seed=0)
        step_order.install(built)
        built.advance(STEP_S)

    out = {"world": _median(world, repeat)}
    try:
        out["episode"] = _median(lambda: Episode(home, TASK, seed=0, catalog=catalog, images=False), repeat)
    except Exception as exc:  # a generated home may lack the task's roles; say so and go on
        out["episode_error"] = str(exc).splitlines()[0]
    return out


def _median(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def generated_home(catalog: Catalog, plans: int, seed: int) -> Home | None:
    """The first generated plan that furnishes, equips and passes the home check."""
    from homeloop.core.check import check_home
    from homeloop.pipeline.devices import equip
    from homeloop.pipeline.furnish import furnish
    from homeloop.pipeline.homes import stage_rng
    from homeloop.pipeline.sources.swiss_dwellings import read_plans
    from homeloop.pipeline.sources.synthetic import generate

    csv = Path(tempfile.mkdtemp()) / "plans.csv"
    generate(csv, plans=plans, sites=max(1, plans // 3), seed=seed, defect_rate=0.0)
    for plan in read_plans(csv)[0]:
        result = furnish(plan, catalog, stage_rng(seed, plan.key, "furnish"))
        if not result.ok:
            continue
        equipped = equip(result.home, catalog, stage_rng(seed, plan.key, "devices"))
        if equipped.ok and not check_home(equipped.home, catalog):
            return equipped.home
    return None


def capture_cost(home: Home, catalog: Catalog, repeat: int) -> float:
    """Median seconds of one house-camera capture (the geometric visibility of a full frame)."""
    from homeloop.sim.services.cameras import capture_view
    from homeloop.sim.visibility import Viewpoint

    ep = Episode(home, TASK, seed=0, catalog=catalog, images=False)
    camera = next(c for c in home.cameras if c.agent_visible)
    capture_view(ep.context, Viewpoint.of(camera), camera.id)  # prepares the static geometry once
    return _median(lambda: capture_view(ep.context, Viewpoint.of(camera), camera.id), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (the median is printed)")
    parser.add_argument("--plans", type=int, default=40, help="generated plans to find one home in")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fixed", action="store_true", help="without the simulator's shortcuts (see above)")
    args = parser.parse_args()
    if args.fixed:
        from homeloop.sim import static_visibility, world

        world.SLEEPING = static_visibility.CACHED = False

    from homeloop.pipeline.houses import house_home

    catalog = load_catalog()
    house = house_home(catalog)
    runs = [scripted_episode(house, catalog) for _ in range(args.repeat)]
    ep, _, calls = runs[0]
    wall = statistics.median(r[1] for r in runs)
    simulated = ep.now()
    steps = round(ep.world.time / STEP_S)
    print(f"{TASK} in the house, {calls} scripted calls, {simulated:.0f} s simulated after the wake, no rendering:")
    print(f"  wall {wall * 1000:.0f} ms (median of {args.repeat}), {simulated / wall:,.0f}x simulated time "
          f"(goal >= 600x)")

    spent, ran = timed_modules(lambda: scripted_episode(house, catalog))
    print(f"step cost per dynamics module over the episode ({steps:,} steps with the pre-roll; "
          "timer overhead included):")
    for name, seconds in spent.items():
        print(f"  {name:<13} {seconds / steps * 1e6:8.2f} µs/step   {seconds * 1000:8.1f} ms   ran {ran[name]:,} steps")
    print(f"  {'all':<13} {sum(spent.values()) / steps * 1e6:8.2f} µs/step")

    print(f"one house-camera capture: {capture_cost(house, catalog, args.repeat) * 1000:.1f} ms")

    print("building a world (World, dynamics, first step) and an episode (+ scenario and pre-roll):")
    homes = {"house": house, "generated home": generated_home(catalog, args.plans, args.seed)}
    for name, home in homes.items():
        if home is None:
            print(f"  {name}: none of {args.plans} generated plans passed; raise --plans")
            continue
        times = build_times(home, catalog, args.repeat)
        size = f"{len(home.rooms)} rooms, {len(home.devices)} devices"
        episode = (f"episode {times['episode'] * 1000:.0f} ms" if "episode" in times
                   else f"episode n/a ({times['episode_error']})")
        print(f"  {name:<15} ({size}): world {times['world'] * 1000:.1f} ms, {episode}")


if __name__ == "__main__":
    main()
