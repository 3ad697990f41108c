"""What the openai agent and the harnesses themselves cost (docs/agents.md).

    .venv/bin/python benchmarks/agent.py [--episodes 6] [--workers 8] [--seeds 0,1]
        [--sections overhead,parallel,harnesses] [--harness-tasks doorbell_false_alarm,handle_smoke_alarm]

1. **Overhead per call.** Episodes in the house run in this process, the agent
   talking over HTTP to tests/openai_server.py, whose policy answers each
   conversation by its position: list devices, read one, list cameras,
   capture (a 1920 × 1080 JPEG from a stand-in renderer, so the image rides
   in every later request), detect, list contacts, wait, robot status, read a
   device again, capture and detect again, then a summary. The agent's
   overhead is the wall time of the episode and of writing its record, less
   the simulator's time inside calls and the server's time answering: what is
   left is building the messages and tool schemas, taking images out of the
   results, the SDK's request encoding and reply parsing, HTTP on the
   loopback, and the record. Printed per model request (goal: at most 20 ms).
2. **A parallel run.** Every task × seed (24 × 2 = 48 episodes) through
   ``homeloop.bench.runner.run`` with ``--workers`` processes against the
   same server (no images there), then the same episodes with the do-nothing
   agent, whose run is the simulator's and the runner's share. Prints the
   wall time and episodes per second of each.
3. **The harnesses' overhead per call.** The calls the scripted agent makes
   in ``--harness-tasks`` (in the house, seed 0, images on) are played again
   through each way in: the session every harness shares
   (:mod:`homeloop.harness.session`), Gymnasium's ``step``, Inspect
   (``mockllm/model`` replying with those calls, in this process) and MCP
   (the SDK's client over stdio to ``homeloop mcp``). A call's time is what
   its client waits for it: ``Session.call``, ``env.step``, Inspect's turn
   from one reply to the next request, ``call_tool``; its overhead is that
   less the simulator's time inside the call (measured in this process; for
   MCP, whose simulator runs in the server, the same call's time in the
   scripted agent's run). Prints the median of each per path, in ms, beside
   the in-process path (the scripted agent calling ``episode.call``).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from openai_server import ChatServer, text, tool_call  # noqa: E402

from homeloop.bench import runner  # noqa: E402
from homeloop.bench.agents import make_agent  # noqa: E402
from homeloop.bench.records import write_record  # noqa: E402
from homeloop.core.ids import DEFAULT_ROBOT  # noqa: E402
from homeloop.sim.task import load_tasks  # noqa: E402
from homeloop.pipeline.houses import house_home  # noqa: E402
from homeloop.sim.episode import Episode  # noqa: E402

MODEL = "gpt-4o-mini"  # priced, so the cost path runs too


def _last_data(body: dict) -> dict:
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    if not tools:
        return {}
    content = tools[-1]["content"]
    text_part = content if isinstance(content, str) else content[0]["text"]
    return json.loads(text_part).get("data") or {}


def policy(body: dict) -> dict:
    """The next reply from the conversation's own history (safe for concurrent episodes)."""
    step = sum(1 for m in body["messages"] if m["role"] == "assistant")
    last = _last_data(body)
    if step in (0, 8):
        return tool_call("hub_list_devices")
    if step in (1, 9):
        devices = last.get("devices") or [{"id": "none"}]
        return tool_call("hub_get_state", {"device_id": devices[0]["id"]})
    if step == 2:
        return tool_call("cameras_list_cameras")
    if step in (3, 10):
        return tool_call("robot_capture") if step == 10 else tool_call(
            "cameras_capture", {"camera_id": (last.get("cameras") or [{"id": "none"}])[0]["id"]})
    if step in (4, 11):
        return tool_call("perception_detect_objects", {"capture_id": last.get("capture_id", "none")})
    if step == 5:
        return tool_call("messaging_list_contacts")
    if step == 6:
        return tool_call("clock_wait", {"seconds": 5})
    if step == 7:
        return tool_call("robot_status")
    return text("Looked around the home; nothing needed doing.")


def _jpeg_base64(width: int = 1920, height: int = 1080) -> str:
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    pixels = np.stack([x * 255 // width, y * 255 // height, (x + y) % 256], axis=-1).astype(np.int16)
    pixels += rng.integers(-12, 12, pixels.shape, dtype=np.int16)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buffer, format="JPEG", quality=85)
    return base64.b64encode(buffer.getvalue()).decode()


class _Stopwatch:
    """Seconds spent inside a wrapped callable."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return timed


def _episode(server: ChatServer, home, task: str, image: str, out: Path, sim: _Stopwatch, ask: _Stopwatch,
             record: _Stopwatch) -> int:
    """One episode in this process; returns its model requests."""
    ep = sim.wrap(Episode)(home, task, seed=0)  # set-up and pre-roll count as the simulator's
    ep.state["renderer"] = lambda world, view, rec: image
    ep.call = sim.wrap(ep.call)
    agent = make_agent("openai", model=MODEL, base_url=server.base_url, api_key_env="HOMELOOP_BENCH_KEY")
    agent.ask = ask.wrap(agent.ask)
    agent.run(ep)
    spec = runner.EpisodeSpec("house", "", task, ep.robot_id, 0)
    record.wrap(write_record)(out, runner._record(spec, runner.Played(ep, agent, []), ""))
    return agent.usage["requests"]


def overhead(server: ChatServer, home, tasks: list[str], out: Path) -> None:
    image = _jpeg_base64()
    _episode(server, home, tasks[0], image, out, _Stopwatch(), _Stopwatch(), _Stopwatch())  # warm up
    sim, ask, record = _Stopwatch(), _Stopwatch(), _Stopwatch()
    server.handling_s = 0.0
    start = time.perf_counter()
    requests = sum(_episode(server, home, t, image, out, sim, ask, record) for t in tasks)
    wall = time.perf_counter() - start
    own = wall - sim.seconds - server.handling_s
    per = 1000 / requests
    print(f"overhead: {len(tasks)} episodes, {requests} model requests, a {len(image) / 1e6:.2f} MB image "
          f"per capture")
    print(f"  wall {wall:.3f} s = simulator {sim.seconds:.3f} s + server {server.handling_s:.3f} s "
          f"+ agent {own:.3f} s")
    print(f"  agent overhead per request: {own * per:.1f} ms (goal <= 20 ms): request encoding, HTTP and reply "
          f"parsing {(ask.seconds - server.handling_s) * per:.1f} ms, record writing {record.seconds * per:.1f} ms, "
          f"messages, schemas and images {(own - ask.seconds + server.handling_s - record.seconds) * per:.1f} ms")


def parallel(server: ChatServer, home, seeds: list[int], workers: int, out: Path) -> None:
    """Every task x seed with ``workers`` processes: the openai agent, then do-nothing on the same episodes
    (the simulator's and the runner's share, which the agent's adds to)."""
    home_file = home.write(out / "house.json")
    tasks = sorted(load_tasks())
    specs = runner.plan({"house": home_file}, tasks, "unitree_g1_d_ultimate", seeds)
    options = {"model": MODEL, "base_url": server.base_url, "api_key_env": "HOMELOOP_BENCH_KEY"}
    for agent, agent_options in (("openai", options), ("do-nothing", {})):
        before = len(server.requests)
        start = time.perf_counter()
        done = runner.run(specs, agent, out / agent, workers=workers, agent_options=agent_options)
        wall = time.perf_counter() - start
        endings: dict[str, int] = {}
        for d in done:
            endings[d["ended_by"]] = endings.get(d["ended_by"], 0) + 1
        print(f"parallel, {agent}: {len(done)} episodes ({len(tasks)} tasks x {len(seeds)} seeds), {workers} workers, "
              f"{len(server.requests) - before} model requests; wall {wall:.1f} s, "
              f"{len(done) / wall:.2f} episodes/s; endings {endings}")


# --- the harnesses' overhead per call ------------------------------------------------------------------


class _SimClock:
    """The seconds each ``Episode.call`` takes inside the simulator, in call order, wherever it runs."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self._call = Episode.call

    def __enter__(self) -> "_SimClock":
        original, calls = self._call, self.calls

        def timed(episode, *args, **kwargs):
            start = time.perf_counter()
            try:
                return original(episode, *args, **kwargs)
            finally:
                calls.append(time.perf_counter() - start)

        Episode.call = timed
        return self

    def __exit__(self, *exc) -> None:
        Episode.call = self._call

    def take(self) -> list[float]:
        taken, self.calls[:] = list(self.calls), []
        return taken


def _routes(house_file: Path, tasks: list[str], out: Path, clock: _SimClock) -> dict[str, dict]:
    """Each task's scripted record, its calls timed inside the simulator (the in-process path)."""
    from homeloop.bench.records import read_record, record_path

    routes = {}
    for task in tasks:
        spec = runner.plan({"house": house_file}, [task], DEFAULT_ROBOT, [0])[0]
        clock.take()
        runner.run([spec], "scripted", out / task)
        record = read_record(record_path(out / task, spec.id))
        routes[task] = {"spec": spec, "record": record, "sim": clock.take()}
    return routes


def _session_times(route: dict, out: Path) -> list[float]:
    from homeloop.harness.session import start

    session = start(route["spec"], out)
    times = []
    for call in route["record"]["calls"]:
        began = time.perf_counter()
        session.call(call["tool"], call["arguments"]).result()
        times.append(time.perf_counter() - began)
    session.finish(route["record"]["summary"]).result()
    session.finished.wait()
    return times


def _gym_times(route: dict, house_file: Path, out: Path) -> list[float]:
    from homeloop.harness.gym_env import HomeLoopEnv

    env = HomeLoopEnv(house_file.parent, route["spec"].task, 0, out=out)
    env.reset()
    times = []
    for call in route["record"]["calls"]:
        began = time.perf_counter()
        env.step(json.dumps({"tool": call["tool"], "arguments": call["arguments"]}))
        times.append(time.perf_counter() - began)
    env.step(json.dumps({"stop": route["record"]["summary"]}))
    env.close()
    return times


def _inspect_times(route: dict, out: Path) -> list[float]:
    """Inspect's turn per call: from mockllm handing over a reply to the next request reaching it."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from homeloop.harness.inspect_task import make_task

    model = "mockllm/model"
    calls = route["record"]["calls"]
    replies = [*(ModelOutput.for_tool_call(model, c["tool"], c["arguments"]) for c in calls),
               ModelOutput.for_tool_call(model, "finish", {"summary": route["record"]["summary"]})]
    asked, answered = [], []

    def reply(messages, tools, *_):
        asked.append(time.perf_counter())
        output = replies[len(asked) - 1]
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        answered.append(time.perf_counter())
        return output

    inspect_eval(make_task([route["spec"]], out / "run"), model=get_model(model, custom_outputs=reply, memoize=False),
                 log_dir=str(out / "logs"), display="none")
    return [asked[k + 1] - answered[k] for k in range(len(calls))]


def _mcp_times(route: dict, house_file: Path, out: Path) -> list[float]:
    import asyncio
    import os

    from mcp import Client, StdioServerParameters

    spec = route["spec"]
    params = StdioServerParameters(command=sys.executable, env={**os.environ, "NO_COLOR": "1"}, args=[
        "-m", "homeloop.cli", "mcp", "--home", str(house_file.parent), "--task", spec.task, "--seed", "0",
        "--out", str(out)])

    async def play() -> list[float]:
        async with Client(params) as client:
            times = []
            for call in route["record"]["calls"]:
                began = time.perf_counter()
                await client.call_tool(call["tool"], call["arguments"])
                times.append(time.perf_counter() - began)
            await client.call_tool("finish", {"summary": route["record"]["summary"]})
        return times

    return asyncio.run(play())  # the SDK's client starts the server process and stops it


def harnesses(home, tasks: list[str], out: Path) -> None:
    """Median ms per tool call through each harness, and its overhead over the simulator's time."""
    house_file = home.write(out / "house" / "home.json")
    with _SimClock() as clock:
        routes = _routes(house_file, tasks, out / "scripted", clock)
        measured: dict[str, tuple[list[float], list[float]]] = {"in-process (bench run)": ([], [])}
        for task, route in routes.items():
            measured["in-process (bench run)"][0].extend(route["sim"])
            measured["in-process (bench run)"][1].extend(route["sim"])
            for name, times in (("session", lambda: _session_times(route, out / "session")),
                                ("gymnasium", lambda: _gym_times(route, house_file, out / "gym")),
                                ("inspect", lambda: _inspect_times(route, out / "inspect" / task)),
                                ("mcp (stdio)", lambda: _mcp_times(route, house_file, out / "mcp"))):
                clock.take()
                client = times()
                sim = clock.take() if name != "mcp (stdio)" else route["sim"]
                assert len(sim) == len(client) == len(route["sim"]), (name, task, len(sim), len(client))
                got = measured.setdefault(name, ([], []))
                got[0].extend(client)
                got[1].extend(sim)
    calls = sum(len(r["sim"]) for r in routes.values())
    print(f"harnesses: the scripted calls of {', '.join(tasks)} ({calls} calls per path; the house, seed 0, "
          f"images on)")
    for name, (client, sim) in measured.items():
        over = [c - s for c, s in zip(client, sim)]
        print(f"  {name:24s} median call {np.median(client) * 1000:8.2f} ms, overhead over the simulator "
              f"{np.median(over) * 1000:7.2f} ms (mean {np.mean(over) * 1000:7.2f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=6, help="episodes for the per-call overhead")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--sections", default="overhead,parallel,harnesses")
    parser.add_argument("--harness-tasks", default="doorbell_false_alarm,handle_smoke_alarm,find_my_glasses")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    home = house_home()
    tasks = sorted(load_tasks())[: args.episodes]
    with ChatServer(models=(MODEL,), policy=policy) as server, tempfile.TemporaryDirectory() as tmp:
        if "overhead" in sections:
            overhead(server, home, tasks, Path(tmp) / "overhead")
        if "parallel" in sections:
            parallel(server, home, [int(s) for s in args.seeds.split(",")], args.workers, Path(tmp))
        if "harnesses" in sections:
            harnesses(home, args.harness_tasks.split(","), Path(tmp) / "harnesses")


if __name__ == "__main__":
    main()
