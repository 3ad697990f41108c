"""Ablations that change one thing (docs/episodes.md): turning images off removes the pixels and
nothing else; a capture that cannot be drawn ends its episode ``render_error`` (left out of the scores,
run again on resume); and a task scored at the horizon runs on to it however the episode ends.

Episodes run in the house; tasks, cameras and limits are read from the task files and the home.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from homeloop.bench import runner
from homeloop.bench.monitor import Monitor
from homeloop.bench.records import read_record, record_path
from homeloop.bench.scoring import outcomes_from_records
from homeloop.sim.task import load_tasks
from homeloop.sim.episode import DEFAULT_ROBOT, Episode
from homeloop.sim.render import materials, rendering
from homeloop.sim.render.renderer import Renderer
from homeloop.sim.services.cameras import agent_cameras, capture_view
from homeloop.sim.visibility import Viewpoint

#: One core task of each family: the first by id.
FAMILY_TASKS = [min(t.id for t in load_tasks().values() if t.family == family and not t.extension)
                for family in sorted({t.family for t in load_tasks().values()})]

PERCEPTION = ("perception_detect_objects", "perception_identify_people")


# --- the same calls with images on and off -----------------------------------------------------------------


def look_everywhere(ep: Episode) -> list[dict[str, Any]]:
    """Capture with every house camera offered and with the robot's camera, walk the robot to the kitchen
    and capture again, running both perception skills on every capture; every call's result, in order."""
    results = []

    def call(tool: str, **arguments: Any) -> Any:
        results.append(ep.call(tool, **arguments).to_dict())
        return results[-1]["data"]

    def perceive(capture: dict[str, Any] | None) -> None:
        for tool in PERCEPTION:
            if capture is not None and tool in ep.skills:
                call(tool, capture_id=capture["capture_id"])

    if "cameras_list_cameras" in ep.skills:
        for camera in call("cameras_list_cameras")["cameras"]:
            perceive(call("cameras_capture", camera_id=camera["id"]))
    if "robot_capture" in ep.skills:
        perceive(call("robot_capture"))
        kitchen = next(r.id for r in ep.home.rooms if r.type == "KITCHEN")
        call("robot_navigate_to", room=kitchen)
        perceive(call("robot_capture"))
    return results


def without_images(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_images(v) for k, v in value.items() if k != "image"}
    if isinstance(value, list):
        return [without_images(v) for v in value]
    return value


def images_of(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return ([value["image"]] if "capture_id" in value and "image" in value else []) + \
            [i for v in value.values() for i in images_of(v)]
    if isinstance(value, list):
        return [i for v in value for i in images_of(v)]
    return []


@pytest.mark.parametrize("task", FAMILY_TASKS)
def test_the_same_calls_get_the_same_results_with_images_on_and_off(house_home, task):
    played = {images: look_everywhere(Episode(house_home, task, seed=0, images=images)) for images in (True, False)}
    shown = [r for r in played[True] if r["tool"] in PERCEPTION and r["error"] is None]
    assert shown and any(r["data"].get("detections") or r["data"].get("people") for r in shown)
    assert without_images(played[True]) == without_images(played[False])  # perception included, field by field
    pictures = {images: images_of(played[images]) for images in played}
    assert len(pictures[True]) == len(pictures[False]) > 0
    assert all(isinstance(p, str) and p for p in pictures[True]) and set(pictures[False]) == {None}


# --- a capture that cannot be drawn ----------------------------------------------------------------------


def replies_file(folder: Path, *calls: tuple[str, dict[str, Any]], final: str | None = None) -> Path:
    """A replay transcript: one call per reply, then ``final`` as a reply without a call (if given)."""
    lines = [{"content": None, "tool_calls": [{"id": f"c{i}", "type": "function",
                                               "function": {"name": name, "arguments": arguments}}]}
             for i, (name, arguments) in enumerate(calls)]
    lines += [{"content": final}] if final is not None else []
    path = folder / "replies.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_capture_that_cannot_be_rendered_ends_the_episode_unscored_and_resume_runs_it_again(
        house_home, tmp_path, monkeypatch):
    task = "handle_smoke_alarm"
    camera = agent_cameras(Episode(house_home, task, seed=0, images=False).context)[0].id
    replies = replies_file(tmp_path, ("cameras_capture", {"camera_id": camera}), final="I looked.")
    house_home.write(tmp_path / "house" / "home.json")
    specs = runner.plan({house_home.home_id: tmp_path / "house" / "home.json"}, [task], DEFAULT_ROBOT, [0])
    run_dir, options = tmp_path / "run", {"replies": str(replies)}

    def broken(self, world, view, record):
        raise MemoryError("no room for the frame")

    monkeypatch.setattr(Renderer, "__call__", broken)
    runner.run(specs, "replay", run_dir, agent_options=options)
    record = read_record(record_path(run_dir, specs[0].id))
    assert record["ended_by"] == "render_error" and not record["passed"]
    [end] = [e for e in record["trace"] if e["kind"] == "end"]
    assert end["reason"] == "render_error" and "MemoryError: no room for the frame" in end["detail"]
    assert [c["tool"] for c in record["calls"]] == ["cameras_capture"] and record["calls"][0]["error"]
    assert outcomes_from_records([record]).empty  # left out of every score

    monkeypatch.undo()
    rerun = runner.run(specs, "replay", run_dir, agent_options=options)
    assert [s["ended_by"] for s in rerun] == ["stop"]
    record = read_record(record_path(run_dir, specs[0].id))
    assert record["calls"][0]["error"] is None and record["calls"][0]["data"]["image_file"]
    assert len(outcomes_from_records([record])) == 1
    assert runner.run(specs, "replay", run_dir, agent_options=options) == []  # complete now: not run again


def test_images_on_without_the_ray_tracer_end_at_the_first_capture(house_home, monkeypatch):
    monkeypatch.setattr(rendering, "available", lambda: False)
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=True)
    assert ep.call("hub_list_devices").error is None and not ep.done  # no capture, nothing to draw
    result = ep.call("cameras_capture", camera_id=agent_cameras(ep.context)[0].id)
    assert result.error and result.data is None and ep.ended_by == "render_error"
    assert "embreex" in ep.trace[-1]["detail"]


def test_a_blocked_frame_with_images_on_carries_its_one_colour_image(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=True)
    camera = ep.home.cameras[0]
    shot = capture_view(ep.context, Viewpoint.of(camera), camera.id, privacy="image_blocked")
    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(shot["image"]))).convert("RGB"))
    assert image.shape == (camera.resolution[1], camera.resolution[0], 3)
    assert (image == materials.BLOCKED_RGB8).all()


# --- horizon-scored tasks run on to the horizon ---------------------------------------------------------


LEAK = "water_leak_response"


def spill_limit() -> float:
    task = load_tasks()[LEAK]
    assert task.scored_at == "horizon"
    return float(next(c.params["max_litres"] for c in task.checks if c.id == "spill_contained"))


def test_a_leak_left_open_when_the_budget_runs_out_spills_on_to_the_horizon(house_home):
    ep = Episode(house_home, LEAK, seed=0, images=False)
    monitor = Monitor(ep)
    ep.world.add_module(monitor)
    spilt: list[float] = []

    def after_call() -> None:
        monitor.observe()
        spilt.append(ep.world.module("water").total_litres())

    ep.on_call = after_call
    while not ep.done:  # the cheapest status call, over and over, the water main left open
        ep.call("robot_status")
    assert ep.ended_by == "budget" and ep.units_spent <= ep.task.budget_units
    assert spilt[-1] <= spill_limit()  # within the limit when the budget ran out
    assert ep.now() == pytest.approx(ep.task.horizon_s)
    contained = next(c for c in monitor.results() if c.id == "spill_contained")
    assert not contained.passed and contained.at == pytest.approx(ep.task.horizon_s)
    assert ep.world.module("water").total_litres() > spill_limit()


def test_a_leak_left_open_when_the_requests_run_out_spills_on_to_the_horizon(house_home, tmp_path):
    replies = replies_file(tmp_path, ("hub_list_devices", {}))  # one reply, then the transcript runs out
    played = runner.play(house_home, LEAK, DEFAULT_ROBOT, 0, runner.Flags(images=False), "replay",
                         {"replies": str(replies)})
    ep = played.episode
    assert ep.ended_by == "request_limit"
    assert ep.now() == pytest.approx(ep.task.horizon_s)
    contained = next(c for c in played.checks if c.id == "spill_contained")
    assert not contained.passed and ep.world.module("water").total_litres() > spill_limit()


def test_a_task_scored_when_it_stops_ends_where_the_limit_ends_it(house_home):
    task = next(t for t in FAMILY_TASKS if load_tasks()[t].scored_at == "stop")
    ep = Episode(house_home, task, seed=0, images=False)
    ep.call("hub_list_devices")
    at = ep.now()
    ep.end("request_limit", "the agent's limit")
    assert ep.now() == at < ep.task.horizon_s
