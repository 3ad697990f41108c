"""``HomeLoop-v0`` (docs/agents.md, "Gymnasium"): an episode as a Gymnasium environment.

Gymnasium's own checker passes; the scripted agent's calls, replayed as actions, pass the task with
reward 1 once and leave the record ``bench run`` writes for the scripted agent, but for who played
it; bad actions are answered with errors and end the episode at the malformed limit; the request
limit truncates; the same seed gives the same observations; the page's example loop runs.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import homeloop.gym  # noqa: F401  (registers HomeLoop-v0)
from homeloop.bench.agents.conversation import MALFORMED_LIMIT
from homeloop.bench.records import read_records
from homeloop.harness.gym_env import MALFORMED_TOOL, HomeLoopEnv, parse_action

from conftest import HARNESS_TASK as TASK
ROOT = Path(__file__).resolve().parent.parent




def _act(tool: str, **arguments: Any) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def test_gymnasiums_checker_passes(house_file: Path) -> None:
    env = gymnasium.make("HomeLoop-v0", home=str(house_file.parent), task=TASK, seed=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    env.close()
    assert not [str(w.message) for w in caught if "gymnasium" in w.filename]


def test_the_scripted_calls_as_actions_pass_once_and_leave_bench_runs_record(
        scripted: tuple[dict[str, Any], Path], house_file: Path, tmp_path: Path) -> None:
    record, scripted_out = scripted
    out = tmp_path / "gym"
    env = gymnasium.make("HomeLoop-v0", home=str(house_file.parent), task=TASK, seed=0, out=str(out))
    obs, info = env.reset()
    assert json.loads(obs["text"]) == record["world"]["wake"] and not obs["image"].any()
    assert info["episode_id"] == record["episode_id"]
    steps = [env.step(json.dumps({"tool": c["tool"], "arguments": c["arguments"]})) for c in record["calls"]]
    steps.append(env.step(json.dumps({"stop": record["summary"]})))
    after = env.step(_act(record["calls"][0]["tool"], **record["calls"][0]["arguments"]))
    env.close()

    for call, (obs, reward, terminated, truncated, info) in zip(record["calls"], steps, strict=False):
        text = json.loads(obs["text"])
        assert (text["error"], text["events"], info["error"]) == (call["error"], call["events"], call["error"])
        assert info["cost"]["units"] == call["units"] and (reward, terminated, truncated) == (0.0, False, False)
        assert obs["image"].any() == bool((call.get("data") or {}).get("image_file"))
    assert [s[1] for s in steps] == [0.0] * len(record["calls"]) + [1.0]
    last = steps[-1][4]
    assert steps[-1][2] and (last["ended_by"], last["passed"]) == ("stop", True)
    assert (after[1], after[2], after[4]["error"]) == (0.0, True, "the episode has ended (stop)")
    assert sum(s[1] for s in steps) + after[1] == 1.0

    (played,) = read_records([out]).records
    assert Path(last["record"]) == out.resolve() / "episodes" / f"{record['episode_id']}.json"
    assert played["agent"]["name"] == "gym"
    assert {k: v for k, v in played.items() if k != "agent"} == {k: v for k, v in record.items() if k != "agent"}
    pictures = {p.name: p.read_bytes() for p in (scripted_out / "episodes").rglob("*.png")}
    assert pictures and {p.name: p.read_bytes() for p in (out / "episodes").rglob("*.png")} == pictures


def test_bad_actions_are_answered_and_the_malformed_limit_ends_the_episode(house_file: Path, tmp_path: Path) -> None:
    env = HomeLoopEnv(house_file.parent, TASK, 0, out=tmp_path / "run", images=False)
    env.reset()
    actions = ["not json", "[1, 2]", _act("cameras_list_cameras"), _act("open_the_pod_bay_doors"),
               _act("cameras_capture", camera_id=7), json.dumps({"tool": "cameras_capture", "arguments": [1]})]
    steps = [env.step(a) for a in actions]
    late = env.step(_act("cameras_list_cameras"))
    env.close()
    errors = [json.loads(s[0]["text"])["error"] for s in steps]
    assert "not valid JSON" in errors[0] and "must be a JSON object" in errors[1] and errors[2] is None
    assert "unknown tool 'open_the_pod_bay_doors'" in errors[3] and errors[4] and "arguments" in errors[5]
    assert [s[2] for s in steps] == [False] * 5 + [True]  # the valid call started the count again
    assert [s[4]["error"] for s in steps] == errors and all(s[0] in env.observation_space for s in steps)
    assert (steps[-1][1], steps[-1][4]["ended_by"], steps[-1][4]["passed"]) == (0.0, "malformed_limit", False)
    assert late[2] and late[4]["error"] == "the episode has ended (malformed_limit)"
    (record,) = read_records([tmp_path / "run"]).records
    assert record["ended_by"] == "malformed_limit"
    assert [c["tool"] for c in record["calls"]] == [MALFORMED_TOOL, MALFORMED_TOOL, "cameras_list_cameras",
                                                    "open_the_pod_bay_doors", "cameras_capture", MALFORMED_TOOL]
    assert [c["arguments"] for c in record["calls"] if c["tool"] == MALFORMED_TOOL][0] == {"action": "not json"}


def test_the_request_limit_truncates(house_file: Path, tmp_path: Path) -> None:
    env = HomeLoopEnv(house_file.parent, TASK, 0, out=tmp_path / "run", images=False, max_requests=2)
    env.reset()
    first, second = env.step(_act("cameras_list_cameras")), env.step(_act("cameras_list_cameras"))
    env.close()
    assert first[2:4] == (False, False) and second[2:4] == (False, True)
    assert (second[4]["ended_by"], second[1]) == ("request_limit", 0.0)
    (record,) = read_records([tmp_path / "run"]).records
    assert record["ended_by"] == "request_limit" and len(record["calls"]) == 2


def test_the_same_seed_gives_the_same_observations(house_file: Path) -> None:
    def play(seed: int | None) -> tuple[list[dict[str, Any]], int]:
        env = HomeLoopEnv(house_file.parent, TASK, 5)
        seen = [env.reset(seed=seed)]
        listed = env.step(_act("cameras_list_cameras"))
        seen.append(listed)
        porch = next(c["id"] for c in json.loads(listed[0]["text"])["data"]["cameras"] if c["room_name"] == "porch")
        seen.append(env.step(_act("cameras_capture", camera_id=porch)))
        played_seed = seen[0][1]["seed"]
        assert env.reset()[1]["seed"] == played_seed + 1  # reset() plays the next seed up
        env.close()
        return [s[0] for s in seen], played_seed

    first, second, unseeded = play(1), play(1), play(None)
    assert first[1] == 1 and unseeded[1] == 5
    for a, b in zip(first[0], second[0], strict=True):
        assert a["text"] == b["text"] and np.array_equal(a["image"], b["image"])
    assert first[0][-1]["image"].any() and first[0][-1]["image"].shape == (720, 1280, 3)


@pytest.fixture(scope="module")
def quiet_env(house_file: Path) -> Any:
    env = HomeLoopEnv(house_file.parent, TASK, 0, images=False, image_size=(24, 32), max_text=400)
    yield env
    env.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(st.text(max_size=60) | st.builds(json.dumps, st.dictionaries(st.text(max_size=8),
                                                                                    st.integers())),
                        min_size=1, max_size=MALFORMED_LIMIT + 1))
def test_any_text_is_answered_within_the_spaces(quiet_env: HomeLoopEnv, actions: list[str]) -> None:
    obs, _ = quiet_env.reset(seed=0)
    assert obs in quiet_env.observation_space
    for index, action in enumerate(actions):
        obs, reward, terminated, truncated, info = quiet_env.step(action)
        assert obs in quiet_env.observation_space and reward == 0.0 and not truncated
        assert isinstance(info["error"], str) and terminated == (index + 1 >= MALFORMED_LIMIT)
        assert len(obs["text"]) <= 400 and obs["image"].shape == (24, 32, 3)


def test_actions_are_read_in_their_documented_shapes() -> None:
    assert parse_action('{"tool": "hub_list_devices"}') == (None, "hub_list_devices", {})
    assert parse_action('{"tool": "t", "arguments": {"a": 1}}') == (None, "t", {"a": 1})
    assert parse_action('{"stop": "all done"}') == (None, "stop", {"summary": "all done"})
    assert parse_action('{"tool": "stop", "arguments": {"summary": "x"}}') == (None, "stop", {"summary": "x"})
    for bad, said in [('{"tool": "t", "args": {}}', "unknown keys 'args'"), ('{"arguments": {}}', "no tool"),
                      ('{"stop": 3}', "summary must be text"), ('"t"', "must be a JSON object"), (None, "JSON text")]:
        problem, tool, _ = parse_action(bad)
        assert problem is not None and said in problem and tool is None


def test_the_pages_example_loop_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"<!-- example: gym-loop -->\n```python\n(.*?)```", text, flags=re.S)
    assert len([line for line in example.splitlines() if line.strip()]) <= 12
    exec(compile(example, "docs/agents.md (gym-loop)", "exec"), {"__name__": "gym_loop"})
    printed = capsys.readouterr().out.split()
    assert printed[-4:-1] == ["stop", "True", "1.0"]
