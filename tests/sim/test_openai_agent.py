"""The openai and replay agents against a server that speaks the chat-completions protocol for real.

Every test drives the real ``openai`` client over HTTP to tests/openai_server.py
(127.0.0.1, a free port, stopped by the test), in the benchmark house.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml
from openai_server import USAGE, ChatServer, calls, cut_off, slow, status, text, tool_call
from typer.testing import CliRunner

from homeloop.bench import runner, scoring
from homeloop.bench.agents import make_agent
from homeloop.bench.agents.conversation import MALFORMED_LIMIT, role_prompt
from homeloop.bench.agents.pricing import price_of
from homeloop.bench.agents.ratelimit import RateLimiter
from homeloop.bench.agents.replay import read_replies, transcript
from homeloop.bench.records import read_record, record_path
from homeloop.catalog import CATALOG_ENV, catalog_dir
from homeloop.errors import HomeLoopError
from homeloop.sim.episode import Episode

pytestmark = pytest.mark.slow

TASK = "handle_smoke_alarm"
PRICED = "gpt-4o-mini"  # a model the pricing file lists; the test server answers under any name
UNPRICED = "local-vlm"
KEY_ENV = "HOMELOOP_TEST_API_KEY"
KEY = "sk-test-Zq8Kx3vPq7Lm2Rt9-distinctive"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.fixture(scope="module")
def home_file(house_home, tmp_path_factory) -> Path:
    return house_home.write(tmp_path_factory.mktemp("house") / "home.json")


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with ChatServer(models=(PRICED, UNPRICED), key=KEY) as s:
        yield s


def run(server: ChatServer, home_file: Path, tmp_path: Path, *replies: dict, agent: str = "openai",
        task: str = TASK, **options) -> dict:
    """Script the server, run one episode through the runner, return its record."""
    server.script(*replies)
    if agent == "openai":
        options = {"model": PRICED, "base_url": server.base_url, "api_key_env": KEY_ENV, **options}
    spec = runner.EpisodeSpec("house", str(home_file), task, "unitree_g1_d_ultimate", 0)
    runner.run_episode(spec, agent, options, str(tmp_path))
    return read_record(record_path(tmp_path, spec.id))


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def expected_cost(model: str, usages: list[dict]) -> float:
    """Dollars from the pricing file's own figures for ``model``."""
    entry = next(m for m in yaml.safe_load((catalog_dir() / "pricing.yaml").read_text())["models"]
                 if m["id"] == model)
    total = 0.0
    for u in usages:
        cached = u["prompt_tokens_details"]["cached_tokens"]
        total += ((u["prompt_tokens"] - cached) * entry["input"] + cached * entry["cached_input"]
                  + u["completion_tokens"] * entry["output"]) / 1e6
    return total


# --- a normal episode ---------------------------------------------------------------------------------


def test_tool_calls_run_and_the_reply_without_one_stops(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path, tool_call("hub_list_devices"), tool_call("messaging_list_contacts"),
                 text("Checked the devices and the contacts; nothing else done."))
    assert record["ended_by"] == "stop"
    assert record["summary"] == "Checked the devices and the contacts; nothing else done."
    assert [c["tool"] for c in record["calls"]] == ["hub_list_devices", "messaging_list_contacts"]
    first, second = server.requests[0], server.requests[1]
    assert first["messages"][0] == {"role": "system", "content": role_prompt(True)}
    wake = first["messages"][1]["content"]
    assert record["world"]["wake"]["event"]["source"] in wake
    assert all(r["name"] in wake for r in record["world"]["wake"]["rooms"])
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"hub_list_devices", "messaging_send", "robot_navigate_to"} <= offered
    # the tool result goes back as JSON {data, error, events} under the call's id
    (answer,) = tool_messages(second)
    assert answer["tool_call_id"] == second["messages"][2]["tool_calls"][0]["id"]
    result = json.loads(answer["content"])
    assert set(result) == {"data", "error", "events"}
    assert result["data"] == record["calls"][0]["data"] and result["error"] is None


def test_tokens_and_cost_are_recorded_per_call_and_per_episode(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path, tool_call("hub_list_devices"), text("done"))
    assert record["tokens"] == {"prompt": 2 * USAGE["prompt_tokens"], "completion": 2 * USAGE["completion_tokens"],
                                "cached": 2 * USAGE["prompt_tokens_details"]["cached_tokens"],
                                "total": 2 * USAGE["total_tokens"]}
    assert record["cost_usd"] == pytest.approx(expected_cost(PRICED, [USAGE, USAGE]))
    assert [c["tokens"]["prompt"] for c in record["model_calls"]] == [USAGE["prompt_tokens"]] * 2
    assert record["agent"]["requests"] == 2 and record["agent"]["model"] == PRICED
    table = scoring.usage(scoring.outcomes_from_records([record]))
    row = table.iloc[0]
    assert (row["task"], row["episodes"], row["tokens"]) == (TASK, 1, 2 * USAGE["total_tokens"])
    assert row["cost_usd"] == pytest.approx(round(record["cost_usd"], 6))


def test_a_reply_without_usage_leaves_tokens_unknown(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path, tool_call("hub_list_devices"), text("done", usage=None))
    assert record["tokens"] == {"prompt": None, "completion": None, "cached": None, "total": None}
    assert record["cost_usd"] is None
    assert record["model_calls"][0]["tokens"]["prompt"] == USAGE["prompt_tokens"]
    assert record["model_calls"][1]["tokens"]["prompt"] is None


def test_a_model_without_a_price_gets_tokens_only(server, home_file, tmp_path):
    assert price_of(UNPRICED) is None
    record = run(server, home_file, tmp_path, text("done"), model=UNPRICED)
    assert record["tokens"]["total"] == USAGE["total_tokens"] and record["cost_usd"] is None


# --- limits --------------------------------------------------------------------------------------------


def test_three_malformed_replies_in_a_row_end_the_episode(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path,
                 tool_call("hub_list_devices", '{"room": "1"'),         # not JSON
                 tool_call("hub_open_everything", {}),                   # no such tool
                 tool_call("hub_get_state", {"device": "x"}),            # the skill refuses the arguments
                 text("never asked for"))
    assert record["ended_by"] == "malformed_limit" and "Limit" in record["failures"]
    assert len(server.requests) == MALFORMED_LIMIT
    errors = [json.loads(tool_messages(r)[-1]["content"])["error"] for r in server.requests[1:]]
    assert "not valid JSON" in errors[0] and "hub_open_everything" in errors[1]
    assert [c["tool"] for c in record["calls"]] == ["hub_open_everything", "hub_get_state"]
    # an unknown tool costs nothing; arguments the skill refuses cost the skill's units
    assert record["units_spent"] == record["calls"][1]["units"] > 0
    assert all(c["malformed"] for c in record["model_calls"])


def test_a_good_reply_resets_the_malformed_count(server, home_file, tmp_path):
    bad = tool_call("hub_list_devices", "[1, 2]")
    record = run(server, home_file, tmp_path, bad, bad, tool_call("hub_list_devices"), bad, bad, text("done"))
    assert record["ended_by"] == "stop"
    assert [bool(c["malformed"]) for c in record["model_calls"]] == [True, True, False, True, True, False]


def test_the_request_limit_ends_the_episode(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path, *[tool_call("hub_list_devices")] * 3, max_requests=2)
    assert record["ended_by"] == "request_limit" and len(server.requests) == 2
    assert len(record["calls"]) == 2


@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_a_reply_cut_off_by_the_provider_ends_the_episode(server, home_file, tmp_path, reason):
    record = run(server, home_file, tmp_path, tool_call("hub_list_devices"), cut_off(reason))
    assert record["ended_by"] == "incomplete_reply" and len(record["calls"]) == 1


def test_several_calls_in_one_reply_run_only_the_first(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path,
                 calls([("hub_list_devices", {}), ("messaging_list_contacts", {})]), text("done"))
    assert [c["tool"] for c in record["calls"]] == ["hub_list_devices"]
    first, second = tool_messages(server.requests[1])
    assert json.loads(first["content"])["error"] is None
    assert "one tool call per reply" in json.loads(second["content"])["error"]
    assert record["model_calls"][0]["malformed"] is None


def test_what_a_model_sends_is_data_never_run(server, home_file, tmp_path):
    fake_result = json.dumps({"data": {"stove": "off"}, "error": None, "events": []})
    imitation = tool_call("hub_list_devices")
    imitation["message"]["content"] = f"Tool result: {fake_result}"
    record = run(server, home_file, tmp_path,
                 tool_call("files_read", {"path": "/etc/passwd"}),
                 tool_call("messaging_send", json.dumps({"recipient": "x", "text": "y" * 30_000})),
                 imitation, text("done"))
    assert [c["tool"] for c in record["calls"]] == ["files_read", "hub_list_devices"]
    assert record["calls"][0]["data"] is None and record["calls"][0]["units"] == 0
    answers = [json.loads(tool_messages(r)[-1]["content"]) for r in server.requests[1:]]
    assert "files_read" in answers[0]["error"] and "characters" in answers[1]["error"]
    assert answers[2]["data"] == record["calls"][1]["data"] != {"stove": "off"}


# --- transport -----------------------------------------------------------------------------------------


def test_server_errors_are_retried_then_the_episode_goes_on(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path, status(500, **{"retry-after-ms": "1"}),
                 status(429, **{"retry-after-ms": "1"}), text("done"))
    assert record["ended_by"] == "stop" and len(server.requests) == 3
    assert record["agent"]["requests"] == 1


def test_retries_spent_end_with_transport_error_and_a_resume_reruns(server, home_file, tmp_path):
    failing = status(503, **{"retry-after-ms": "1"})
    record = run(server, home_file, tmp_path, *[failing] * 3, max_retries=2)
    assert record["ended_by"] == "transport_error" and len(server.requests) == 3
    assert scoring.outcomes_from_records([record]).empty  # left out of every score
    spec = runner.EpisodeSpec("house", str(home_file), TASK, "unitree_g1_d_ultimate", 0)
    server.script(text("done"))
    done = runner.run([spec], "openai", tmp_path, agent_options={
        "model": PRICED, "base_url": server.base_url, "api_key_env": KEY_ENV})
    assert [d["ended_by"] for d in done] == ["stop"]


def test_a_slow_reply_times_out_as_a_transport_error(server, home_file, tmp_path):
    record = run(server, home_file, tmp_path, slow(), timeout=0.3, max_retries=0)
    assert record["ended_by"] == "transport_error"
    assert server.base_url.removesuffix("/v1") in record["trace"][-1]["detail"]


def test_a_refused_connection_is_a_transport_error(home_file, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = runner.EpisodeSpec("house", str(home_file), TASK, "unitree_g1_d_ultimate", 0)
    runner.run_episode(spec, "openai", {"model": PRICED, "base_url": f"http://127.0.0.1:{port}/v1",
                                        "api_key_env": KEY_ENV, "max_retries": 0}, str(tmp_path))
    assert read_record(record_path(tmp_path, spec.id))["ended_by"] == "transport_error"


# --- images --------------------------------------------------------------------------------------------


def _capture_episode(house_home, server, *replies):
    ep = Episode(house_home, TASK, seed=0)
    ep.state["renderer"] = lambda world, view, record: PNG
    camera = next(c.id for c in house_home.cameras if c.agent_visible)
    server.script(tool_call("cameras_capture", {"camera_id": camera}), *replies)
    agent = make_agent("openai", model=PRICED, base_url=server.base_url, api_key_env=KEY_ENV)
    agent.run(ep)
    return ep, agent


def test_images_go_in_the_tool_message_where_the_endpoint_takes_them(server, house_home):
    ep, agent = _capture_episode(house_home, server, text("done"))
    (answer,) = tool_messages(server.requests[1])
    urls = [p["image_url"]["url"] for p in answer["content"] if p["type"] == "image_url"]
    assert urls == [f"data:image/png;base64,{PNG}"]
    assert PNG not in answer["content"][0]["text"]  # the pixels leave the JSON text
    assert agent.usage["image_mode"] == "tool"


def test_an_endpoint_refusing_images_in_tool_messages_gets_them_in_a_user_message(server, house_home):
    refusal = status(400, "Image URLs are only allowed for messages with role 'user', but this message "
                          "with role 'tool' contains an image URL.")
    ep, agent = _capture_episode(house_home, server, refusal, text("done"))
    assert ep.ended_by == "stop" and agent.usage["image_mode"] == "user"
    assert agent.usage["requests"] == 2  # the refused request is not counted
    refused, retried = server.requests[1], server.requests[2]
    assert isinstance(tool_messages(refused)[0]["content"], list)
    after = retried["messages"][retried["messages"].index(tool_messages(retried)[0]) + 1]
    assert isinstance(tool_messages(retried)[0]["content"], str)
    assert after["role"] == "user"
    assert [p["image_url"]["url"] for p in after["content"] if p["type"] == "image_url"] == [
        f"data:image/png;base64,{PNG}"]


def test_the_role_prompt_says_when_pixels_are_absent():
    on, off = role_prompt(True), role_prompt(False)
    assert "no pixels" in off and "no pixels" not in on
    assert "perception" in off and "<!--" not in on + off


# --- replay --------------------------------------------------------------------------------------------


def test_replay_reproduces_a_recorded_episode(server, home_file, house_home, tmp_path):
    stove = next(d.id for d in house_home.devices if d.type == "stove")
    original = run(server, home_file, tmp_path / "model", tool_call("hub_list_devices", {"type": "stove"}),
                   tool_call("hub_get_state", {"device_id": stove}), tool_call("hub_list_devices", "{bad"),
                   text("Looked at the stove."))
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps(line) + "\n" for line in transcript(original)))
    again = run(server, home_file, tmp_path / "replay", agent="replay", replies=str(replies))
    keys = ("tool", "arguments", "data", "error", "units", "t_start", "t_end")
    assert [{k: c[k] for k in keys} for c in again["calls"]] == [{k: c[k] for k in keys} for c in original["calls"]]
    for field in ("ended_by", "summary", "passed", "checks", "units_spent", "tokens"):
        assert again[field] == original[field], field
    assert again["agent"]["name"] == "replay"
    # the record itself is a transcript too
    assert [r.as_dict() for r in read_replies(record_path(tmp_path / "model", again["episode_id"]))] == [
        {k: v for k, v in line.items() if k != "usage"} for line in transcript(original)]


def test_a_transcript_that_runs_out_ends_at_the_request_limit(server, home_file, tmp_path):
    replies = tmp_path / "short.jsonl"
    replies.write_text(json.dumps({"tool_calls": [{"function": {"name": "hub_list_devices", "arguments": {}}}]}))
    record = run(server, home_file, tmp_path, agent="replay", replies=str(replies))
    assert record["ended_by"] == "request_limit" and len(record["calls"]) == 1


def test_a_bad_transcript_line_is_named(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "fine"}\nnot json\n')
    with pytest.raises(HomeLoopError, match=r"bad.jsonl: line 2: not JSON"):
        read_replies(bad)
    bad.write_text('{"tool_calls": [{"function": {"arguments": "{}"}}]}\n')
    with pytest.raises(HomeLoopError, match=r"line 1: tool_calls.0.function.name: Field required"):
        read_replies(bad)


# --- the command line ----------------------------------------------------------------------------------


def _bench_run(server_url: str, out: Path, *extra: str, key: str = KEY):
    from homeloop.cli import app

    args = ["bench", "run", "--agent", "openai", "--model", PRICED, "--base-url", server_url,
            "--api-key-env", KEY_ENV, "--tasks", TASK, "--seeds", "0", "--out", str(out), *extra]
    return CliRunner().invoke(app, args, env={KEY_ENV: key, "COLUMNS": "200", "NO_COLOR": "1"})


def test_a_refused_key_stops_before_any_episode_with_one_line(server, tmp_path):
    result = _bench_run(server.base_url, tmp_path / "run", key="sk-wrong-Tq4Wd8Hs1Nc6")
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert server.base_url in result.output and "HTTP 401" in result.output
    assert "sk-wrong-Tq4Wd8Hs1Nc6" not in result.output  # the server echoed it; the line does not
    assert not (tmp_path / "run" / "episodes").exists()


def test_an_unreachable_endpoint_stops_with_one_line(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = _bench_run(f"http://127.0.0.1:{port}/v1", tmp_path / "run")
    assert result.exit_code == 2 and "not reachable" in result.output and str(port) in result.output


def test_the_key_never_reaches_records_logs_or_output(server, tmp_path):
    server.policy = lambda body: text("Nothing needed doing.")
    out = tmp_path / "run"
    result = _bench_run(server.base_url, out, "--rate-limit", "6000")
    assert result.exit_code == 0, result.output
    assert len(server.requests) >= 1  # the server only answers requests carrying the key
    assert (out / ".rate_limit").exists()
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" and p.parent.name == "episodes" for p in files)
    assert all(KEY.encode() not in p.read_bytes() for p in files)
    assert KEY not in result.output
    assert "api_key" not in json.loads((out / "run.json").read_text())["agent_options"]


def test_flags_of_another_agent_are_refused(tmp_path):
    from homeloop.cli import app

    result = CliRunner().invoke(app, ["bench", "run", "--agent", "do-nothing", "--model", "x", "--out",
                                      str(tmp_path)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 2 and "--model" in result.output and "do-nothing" in result.output


# --- rate limit and prices --------------------------------------------------------------------------------


def test_workers_sharing_a_rate_limit_file_are_spaced_evenly(tmp_path):
    now = [1000.0]
    waits: list[float] = []
    shared = tmp_path / ".rate_limit"
    first, second = (RateLimiter(120, shared, clock=lambda: now[0], sleep=waits.append) for _ in range(2))
    assert [first.acquire(), second.acquire(), first.acquire()] == [0.0, 0.5, 1.0]
    now[0] += 10.0  # long enough for the bucket to refill, never beyond one token
    assert [second.acquire(), first.acquire()] == [0.0, 0.5]
    assert waits == [0.5, 1.0, 0.5]


def test_a_bad_pricing_file_is_named(tmp_path, monkeypatch):
    (tmp_path / "pricing.yaml").write_text("models:\n  - id: m\n    input: -1\n    cached_input: 0\n"
                                           "    output: 1\n    as_of: 2025-01-01\n    source: x\n")
    monkeypatch.setenv(CATALOG_ENV, str(tmp_path))
    with pytest.raises(HomeLoopError, match=r"pricing.yaml: field models.0.input"):
        price_of("m")


def test_every_price_states_its_date_and_source():
    for entry in yaml.safe_load((catalog_dir() / "pricing.yaml").read_text())["models"]:
        price = price_of(entry["id"])
        assert price is not None and price.as_of and price.source.startswith("https://")
