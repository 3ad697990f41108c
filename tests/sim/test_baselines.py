"""The shortcut baselines (docs/agents.md) and what they score (docs/scores.md, "What the baselines score").

Every baseline is played on every task in the house at seeds 0 and 1, in this process, with images off
(they read perception, never pixels): the table in docs/scores.md must be what they score now, and none
may pass a task that needs the robot (one docs/agents.md gives no route for without the robot) without the
robot's own camera.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from homeloop.bench import runner
from homeloop.bench.agents.baselines import BASELINES, RANDOM_CALLS
from homeloop.bench.baseline_scores import (Passes, baselines_table, played_passes, read_baselines_table,
                                            routes_without_robot, with_baselines_table)
from homeloop.sim.task import load_tasks
from homeloop.core.home import Home
from homeloop.sim.episode import DEFAULT_ROBOT
from homeloop.sim.services.messaging import EMERGENCY_CONTACT
from homeloop.sim.services import available

DOCS = Path(__file__).resolve().parents[2] / "docs"
SEEDS = (0, 1)


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def house(house_home) -> Home:
    """The house as a run reads it from its home file (which sorts what the built house keeps in the
    order it was built), so the episodes are those of `homeloop bench run`."""
    return Home.from_json(house_home.to_json())


@pytest.fixture(scope="module")
def passes(house) -> Passes:
    return played_passes(house, SEEDS)


def play(home: Any, task: str, agent: str, seed: int = 0, withheld: tuple[str, ...] = ()) -> runner.Played:
    return runner.play(home, task, DEFAULT_ROBOT, seed, runner.Flags(withheld, images=False), agent, {})


def calls(played: runner.Played) -> list[dict[str, Any]]:
    return [e for e in played.episode.trace if e["kind"] == "call"]


def residents(played: runner.Played) -> set[str]:
    return {p.id for p in played.episode.world.people.values() if p.role == "resident"}


# --- what they score ------------------------------------------------------------------------------------


def test_the_docs_table_is_what_the_baselines_score(passes):
    stated = read_baselines_table(page("scores.md"))
    wrong = {key: (stated.get(key), seeds) for key, seeds in passes.items() if stated.get(key) != seeds}
    assert wrong == {}, "(agent, task): (docs/scores.md, played now); rewrite the table " \
                        "(python -m homeloop.bench.baseline_scores RUN_DIR...)"
    assert set(stated) == set(passes)
    # The route column too: each pass beside the route docs/agents.md gives it, or marked a leak.
    text = page("scores.md")
    assert with_baselines_table(text, baselines_table(passes, routes_without_robot(page("agents.md")))) == text


def test_no_baseline_passes_a_task_that_needs_the_robot_without_using_it(passes, house):
    """The goal: a task that needs the robot is never passed by a shortcut. The random agent may
    stumble on a look-only task's route (drive to the person, capture them, never call for help); such a
    pass is earned as the checks define it only if the robot's own camera saw the thing, so every pass
    of such a task must come from an episode whose robot captured."""
    tasks = load_tasks()
    without_robot = routes_without_robot(page("agents.md"))
    assert without_robot and set(without_robot) <= set(tasks)
    needs_robot = set(tasks) - set(without_robot)
    robot_passes = {key: seeds for key, seeds in passes.items() if seeds and key[1] in needs_robot}
    assert {agent for agent, _ in robot_passes} <= {"random"}, f"shortcuts pass robot tasks: {robot_passes}"
    for (agent, task), seeds in robot_passes.items():
        for seed in seeds:
            looked = [c for c in calls(play(house, task, agent, seed))
                      if c["tool"] in ("robot_capture", "robot_scan") and not c["error"]]
            assert looked, f"{agent} passed {task} at seed {seed} without the robot's camera"


def test_no_shortcut_passes_a_task_that_needs_the_robot_in_generated_homes(generated_homes, catalog):
    """The same goal in homes the pipeline builds, where the furnishing places the task objects and
    cameras look through doors and windows: no shortcut baseline (``random`` aside: see above)
    passes a task that applies there and needs the robot."""
    from homeloop.pipeline.applicability import screen

    tasks = load_tasks()
    needs_robot = set(tasks) - set(routes_without_robot(page("agents.md")))
    played = leaks = 0
    for home in generated_homes:
        body = catalog.robots[DEFAULT_ROBOT]
        applies = [t for t in sorted(needs_robot) if screen(home, tasks[t], body, catalog).applicable]
        for agent in (a for a in BASELINES if a != "random"):
            for task in applies:
                played += 1
                if play(home, task, agent).passed:
                    leaks += 1
                    print(f"{agent} passes {task} in {home.home_id}")
    assert played > 100 and leaks == 0


def test_every_baseline_is_played(passes):
    assert {agent for agent, _ in passes} == set(BASELINES)
    assert {task for _, task in passes} == set(load_tasks())


# --- what each does -------------------------------------------------------------------------------------


def test_passive_looker_captures_every_camera_runs_perception_and_tells_the_residents(house):
    played = play(house, "doorbell_false_alarm", "passive-looker")
    made = calls(played)
    listed = next(c for c in made if c["tool"] == "cameras_list_cameras")["data"]["cameras"]
    captures = [c for c in made if c["tool"] == "cameras_capture"]
    assert listed and [c["arguments"]["camera_id"] for c in captures] == [cam["id"] for cam in listed]
    for skill in ("perception_detect_objects", "perception_identify_people"):
        looked = [c["arguments"]["capture_id"] for c in made if c["tool"] == skill]
        assert looked == [c["data"]["capture_id"] for c in captures], skill
    sent = [c["arguments"]["recipient"] for c in made if c["tool"] == "messaging_send"]
    assert set(sent) == residents(played) and EMERGENCY_CONTACT not in sent
    assert not [c for c in made if c["tool"].split("_")[0] in ("robot", "hub", "clock")]
    assert played.episode.ended_by == "stop"


def test_passive_looker_without_house_cameras_only_tells(house):
    played = play(house, "doorbell_false_alarm", "passive-looker", withheld=("cameras",))
    assert {c["tool"] for c in calls(played)} == {"messaging_list_contacts", "messaging_send"}
    assert not played.passed  # nobody looked at the porch


@pytest.mark.parametrize("task", ["fall_false_alarm", "smoke_sensor_fault"])
def test_dismisser_tells_the_residents_it_is_a_false_alarm_and_touches_nothing(house, task):
    played = play(house, task, "dismisser")
    made = calls(played)
    assert {c["tool"] for c in made} == {"messaging_list_contacts", "messaging_send"}
    sends = [c for c in made if c["tool"] == "messaging_send"]
    assert {c["arguments"]["recipient"] for c in sends} == residents(played)
    assert all("false alarm" in c["arguments"]["text"] and not c["error"] for c in sends)
    assert not played.passed  # dismissing without looking earns nothing


@pytest.mark.parametrize("task", ["water_the_plants", "handle_smoke_alarm", "answer_delivery"])
def test_random_makes_valid_calls_on_what_it_has_seen_within_the_budget(house, task):
    played = play(house, task, "random")
    made, skills = calls(played), {s.tool_name: s for s in available()}
    assert 0 < len(made) <= RANDOM_CALLS and played.episode.ended_by == "stop"
    assert played.episode.units_spent <= played.episode.task.budget_units
    seen = json.dumps(played.episode.wake)
    for call in made:
        skills[call["tool"]].validate(call["arguments"])  # raises on an argument the skill refuses
        for name in ("device_id", "camera_id", "capture_id", "target", "recipient", "room"):
            if name in call["arguments"]:
                assert json.dumps(call["arguments"][name]) in seen, (call, "an id it was never shown")
        seen += json.dumps(call["data"])


def test_the_agents_page_states_the_random_agents_bound():
    assert f"stops after {RANDOM_CALLS} calls" in page("agents.md")


def test_random_is_seeded_by_the_episode(house):
    def sent(seed: int) -> list[tuple[str, Any]]:
        return [(c["tool"], c["arguments"]) for c in calls(play(house, "water_the_plants", "random", seed))]

    assert sent(0) == sent(0)
    assert sent(0) != sent(1)
