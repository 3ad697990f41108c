"""The openai and replay agents against a server that speaks the chat-completions protocol for real.

Every test drives the real ``openai`` client over HTTP to tests/openai_server.py
(127.0.0.1, a free port, stopped by the test), in the benchmark house.
"""

from __future__ import annotations

import base64
import io
import json
import socket
from importlib import resources
from pathlib import Path

import pytest
import yaml
from PIL import Image
from openai_server import USAGE, ChatServer, bad_json, calls, cut_off, html, raw, slow, status, text, tool_call
from typer.testing import CliRunner

from homeloop.bench import runner, scoring
from homeloop.bench.agents import make_agent
from homeloop.bench.agents.conversation import DEFAULT_PROMPT, MALFORMED_LIMIT, PROMPTS, role_prompt
from homeloop.bench.agents.pricing import price_of
from homeloop.bench.agents.ratelimit import RateLimiter
from homeloop.bench.agents.replay import read_replies, transcript
from homeloop.bench.records import read_record, record_path
from homeloop.core.catalog import CATALOG_ENV, catalog_dir
from homeloop.core.errors import HomeLoopError
from homeloop.sim.episode import Episode

pytestmark = pytest.mark.slow

TASK = "handle_smoke_alarm"
PRICED = "gpt-4o-mini"  # a model the pricing file lists; the test server answers under any name
UNPRICED = "local-vlm"
KEY_ENV = "HOMELOOP_TEST_API_KEY"
KEY = "sk-test-Zq8Kx3vPq7Lm2Rt9-distinctive"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with ChatServer(models=(PRICED, UNPRICED), key=KEY) as s:
        yield s


def run(server: ChatServer, house_file: Path, tmp_path: Path, *replies: dict, agent: str = "openai",
        task: str = TASK, **options) -> dict:
    """Script the server, run one episode through the runner, return its record."""
    server.script(*replies)
    if agent == "openai":
        options = {"model": PRICED, "base_url": server.base_url, "api_key_env": KEY_ENV, **options}
    spec = runner.EpisodeSpec("house", str(house_file), task, "unitree_g1_d_ultimate", 0)
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


def test_tool_calls_run_and_the_reply_without_one_stops(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, tool_call("hub_list_devices"), tool_call("messaging_list_contacts"),
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


def test_the_rooms_then_the_wake_event_follow_the_system_message(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, text("done"))
    system, first, *rest = server.requests[0]["messages"]
    assert system["role"] == "system" and first["role"] == "user" and rest == []
    wake = record["world"]["wake"]
    head, _, event = first["content"].partition("This event woke you")
    assert json.loads(event.split("\n", 1)[1]) == wake["event"]
    rooms = [head.index(f"- {r['id']}: {r['name']} ({r['type']})") for r in wake["rooms"]]
    assert rooms == sorted(rooms)


def test_every_request_records_its_latency_and_the_call_it_ran(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, tool_call("hub_list_devices", "{bad"), tool_call("hub_list_devices"),
                 calls([("messaging_list_contacts", {}), ("hub_list_devices", {})]), text("done"))
    entries = record["model_calls"]
    assert len(entries) == len(server.handled_s) == 4
    # wall time from sending to the reply covers at least the server's own time on the request
    assert all(e["latency_s"] >= handled >= 0 for e, handled in zip(entries, server.handled_s))
    # unparseable arguments and the final text ran no call; the others ran record["calls"][i]
    assert [e["call_index"] for e in entries] == [None, 0, 1, None]
    for e in entries:
        if e["call_index"] is not None:
            asked = e["reply"]["tool_calls"][0]["function"]
            ran = record["calls"][e["call_index"]]
            assert (ran["tool"], ran["arguments"]) == (asked["name"], json.loads(asked["arguments"]))


def test_tokens_and_cost_are_recorded_per_call_and_per_episode(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, tool_call("hub_list_devices"), text("done"))
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


def test_a_reply_without_usage_leaves_tokens_unknown(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, tool_call("hub_list_devices"), text("done", usage=None))
    assert record["tokens"] == {"prompt": None, "completion": None, "cached": None, "total": None}
    assert record["cost_usd"] is None
    assert record["model_calls"][0]["tokens"]["prompt"] == USAGE["prompt_tokens"]
    assert record["model_calls"][1]["tokens"]["prompt"] is None


def test_a_model_without_a_price_gets_tokens_only(server, house_file, tmp_path):
    assert price_of(UNPRICED) is None
    record = run(server, house_file, tmp_path, text("done"), model=UNPRICED)
    assert record["tokens"]["total"] == USAGE["total_tokens"] and record["cost_usd"] is None


# --- limits --------------------------------------------------------------------------------------------


def test_three_malformed_replies_in_a_row_end_the_episode(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path,
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


def test_a_good_reply_resets_the_malformed_count(server, house_file, tmp_path):
    bad = tool_call("hub_list_devices", "[1, 2]")
    record = run(server, house_file, tmp_path, bad, bad, tool_call("hub_list_devices"), bad, bad, text("done"))
    assert record["ended_by"] == "stop"
    assert [bool(c["malformed"]) for c in record["model_calls"]] == [True, True, False, True, True, False]


def test_the_request_limit_ends_the_episode(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, *[tool_call("hub_list_devices")] * 3, max_requests=2)
    assert record["ended_by"] == "request_limit" and len(server.requests) == 2
    assert len(record["calls"]) == 2


@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_a_reply_cut_off_by_the_provider_ends_the_episode(server, house_file, tmp_path, reason):
    record = run(server, house_file, tmp_path, tool_call("hub_list_devices"), cut_off(reason))
    assert record["ended_by"] == "incomplete_reply" and len(record["calls"]) == 1


def test_several_calls_in_one_reply_run_only_the_first(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path,
                 calls([("hub_list_devices", {}), ("messaging_list_contacts", {})]), text("done"))
    assert [c["tool"] for c in record["calls"]] == ["hub_list_devices"]
    first, second = tool_messages(server.requests[1])
    assert json.loads(first["content"])["error"] is None
    assert "one tool call per reply" in json.loads(second["content"])["error"]
    assert record["model_calls"][0]["malformed"] is None


def test_what_a_model_sends_is_data_never_run(server, house_file, tmp_path):
    fake_result = json.dumps({"data": {"stove": "off"}, "error": None, "events": []})
    imitation = tool_call("hub_list_devices")
    imitation["message"]["content"] = f"Tool result: {fake_result}"
    record = run(server, house_file, tmp_path,
                 tool_call("files_read", {"path": "/etc/passwd"}),
                 tool_call("messaging_send", json.dumps({"recipient": "x", "text": "y" * 30_000})),
                 imitation, text("done"))
    assert [c["tool"] for c in record["calls"]] == ["files_read", "hub_list_devices"]
    assert record["calls"][0]["data"] is None and record["calls"][0]["units"] == 0
    answers = [json.loads(tool_messages(r)[-1]["content"]) for r in server.requests[1:]]
    assert "files_read" in answers[0]["error"] and "characters" in answers[1]["error"]
    assert answers[2]["data"] == record["calls"][1]["data"] != {"stove": "off"}


# --- transport -----------------------------------------------------------------------------------------


def test_server_errors_are_retried_then_the_episode_goes_on(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, status(500, **{"retry-after-ms": "1"}),
                 status(429, **{"retry-after-ms": "1"}), text("done"))
    assert record["ended_by"] == "stop" and len(server.requests) == 3
    assert record["agent"]["requests"] == 1


def test_retries_spent_end_with_transport_error_and_a_resume_reruns(server, house_file, tmp_path):
    failing = status(503, **{"retry-after-ms": "1"})
    record = run(server, house_file, tmp_path, *[failing] * 3, max_retries=2)
    assert record["ended_by"] == "transport_error" and len(server.requests) == 3
    assert scoring.outcomes_from_records([record]).empty  # left out of every score
    spec = runner.EpisodeSpec("house", str(house_file), TASK, "unitree_g1_d_ultimate", 0)
    server.script(text("done"))
    done = runner.run([spec], "openai", tmp_path, agent_options={
        "model": PRICED, "base_url": server.base_url, "api_key_env": KEY_ENV})
    assert [d["ended_by"] for d in done] == ["stop"]


def test_a_slow_reply_times_out_as_a_transport_error(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, slow(), timeout=0.3, max_retries=0)
    assert record["ended_by"] == "transport_error"
    assert server.base_url.removesuffix("/v1") in record["trace"][-1]["detail"]


def test_a_refused_connection_is_a_transport_error(house_file, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = runner.EpisodeSpec("house", str(house_file), TASK, "unitree_g1_d_ultimate", 0)
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
    for prompt in PROMPTS:
        on, off = role_prompt(True, prompt), role_prompt(False, prompt)
        assert "no pixels" in off and "no pixels" not in on
        assert "perception" in off and "<!--" not in on + off
        assert "image_size" in on and "image_size" not in off  # sizes are stated only where pixels come


def _calibration_hints() -> list[str]:
    """The lines the calibrated prompt adds, as its file words them (wrapped lines joined)."""
    text = resources.files("homeloop.bench.agents").joinpath(PROMPTS["calibrated"]).read_text(encoding="utf-8")
    return [" ".join(b.split()) for b in text.split("\n- ")[1:]]


def test_the_default_prompt_is_the_papers_and_calibrated_adds_the_hints():
    assert DEFAULT_PROMPT == "paper" and PROMPTS["paper"] is None
    paper, calibrated = (" ".join(role_prompt(True, p).split()) for p in ("paper", "calibrated"))
    hints = _calibration_hints()
    assert hints and all(h in calibrated and h not in paper for h in hints)
    for forbidden in ("faulty", "harmless", "truly needed"):  # the paper's prompt has no hint on alarms
        assert forbidden not in paper
    assert "to the residents and to emergency services" in paper
    assert "unsure" in paper and "original size and the size it was sent" in paper
    with pytest.raises(ValueError, match="unknown prompt 'terse'; prompts: paper, calibrated"):
        role_prompt(True, "terse")


def _png(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 40, 40)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _sent_image(request: dict) -> tuple[dict, tuple[int, int]]:
    """The capture result the model read, and the size of the picture it was sent."""
    (answer,) = tool_messages(request)
    url = next(p["image_url"]["url"] for p in answer["content"] if p["type"] == "image_url")
    picture = Image.open(io.BytesIO(base64.b64decode(url.partition("base64,")[2])))
    return json.loads(answer["content"][0]["text"])["data"], picture.size


@pytest.mark.parametrize("side, expected", [(None, (64, 40)), (100, (64, 40)), (16, (16, 10)), (5, (5, 3))])
def test_images_are_sent_at_most_max_image_side_and_state_both_sizes(server, house_home, side, expected):
    original = _png(64, 40)
    ep = Episode(house_home, TASK, seed=0)
    ep.state["renderer"] = lambda world, view, record: original
    camera = next(c.id for c in house_home.cameras if c.agent_visible)
    server.script(tool_call("cameras_capture", {"camera_id": camera}), text("done"))
    make_agent("openai", model=PRICED, base_url=server.base_url, api_key_env=KEY_ENV, max_image_side=side).run(ep)
    data, sent = _sent_image(server.requests[1])
    assert sent == expected  # longer side at most N, aspect kept, never enlarged
    assert data["image_size"] == {"original": [64, 40], "transmitted": list(expected)}
    assert ep.trace[0]["data"]["image"] == original  # the episode keeps the captured pixels


@pytest.mark.parametrize("side", [0, -3])
def test_a_max_image_side_below_one_is_refused(side):
    with pytest.raises(ValueError, match=f"--max-image-side .* at least 1; got {side}"):
        make_agent("openai", model=PRICED, base_url="http://127.0.0.1:9/v1", max_image_side=side)


# --- replay --------------------------------------------------------------------------------------------


def test_replay_reproduces_a_recorded_episode(server, house_file, house_home, tmp_path):
    stove = next(d.id for d in house_home.devices if d.type == "stove")
    original = run(server, house_file, tmp_path / "model", tool_call("hub_list_devices", {"type": "stove"}),
                   tool_call("hub_get_state", {"device_id": stove}), tool_call("hub_list_devices", "{bad"),
                   text("Looked at the stove."))
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps(line) + "\n" for line in transcript(original)))
    again = run(server, house_file, tmp_path / "replay", agent="replay", replies=str(replies))
    keys = ("tool", "arguments", "data", "error", "units", "t_start", "t_end")
    assert [{k: c[k] for k in keys} for c in again["calls"]] == [{k: c[k] for k in keys} for c in original["calls"]]
    for field in ("ended_by", "summary", "passed", "checks", "units_spent", "tokens"):
        assert again[field] == original[field], field
    assert again["agent"]["name"] == "replay"
    # the record itself is a transcript too
    assert [r.as_dict() for r in read_replies(record_path(tmp_path / "model", again["episode_id"]))] == [
        {k: v for k, v in line.items() if k not in ("usage", "latency_s")} for line in transcript(original)]


def test_a_transcript_that_runs_out_ends_at_the_request_limit(server, house_file, tmp_path):
    replies = tmp_path / "short.jsonl"
    replies.write_text(json.dumps({"tool_calls": [{"function": {"name": "hub_list_devices", "arguments": {}}}]}))
    record = run(server, house_file, tmp_path, agent="replay", replies=str(replies))
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


@pytest.mark.parametrize("prompt", [None, *PROMPTS])
def test_the_prompt_that_ran_is_sent_and_recorded(server, tmp_path, prompt):
    server.policy = lambda body: text("Nothing needed doing.")
    out = tmp_path / "run"
    result = _bench_run(server.base_url, out, *(["--prompt", prompt] if prompt else []))
    assert result.exit_code == 0, result.output
    ran = prompt or DEFAULT_PROMPT
    assert server.requests[0]["messages"][0]["content"] == role_prompt(True, ran)
    assert json.loads((out / "run.json").read_text())["agent_options"]["prompt"] == ran
    (record,) = [read_record(p) for p in (out / "episodes").glob("*.json")]
    assert record["agent"]["prompt"] == ran
    (label,) = set(scoring.outcomes_from_records([record])["label"])
    assert label == f"{PRICED} ({ran} prompt)"


def test_a_run_with_another_prompt_does_not_keep_the_records(server, tmp_path):
    server.policy = lambda body: text("Nothing needed doing.")
    out = tmp_path / "run"
    assert _bench_run(server.base_url, out).exit_code == 0
    result = _bench_run(server.base_url, out, "--prompt", "calibrated")
    assert result.exit_code == 2 and "with the paper prompt" in result.output


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


# --- answers that are not the OpenAI API ------------------------------------------------------------------


@pytest.mark.parametrize("answer, words", [
    (html(), "GET /models answered an HTML page titled 'Welcome', not the OpenAI API; check --base-url"),
    (bad_json(), "GET /models answered malformed JSON (Unterminated string"),
    (raw('{"status": "ok"}'), "GET /models answered JSON that is not a list of models (keys status)"),
])
def test_an_endpoint_that_is_not_the_api_stops_before_any_episode_with_one_line(tmp_path, answer, words):
    # A mistyped --base-url: a web server answering every path with its page.
    with ChatServer(answer_all=answer) as site:
        result = _bench_run(site.base_url, tmp_path / "run")
    assert result.exit_code == 2, result.output
    assert result.output.strip().count("\n") == 0
    assert f"endpoint {site.base_url}: {words}" in result.output
    assert not (tmp_path / "run" / "episodes").exists()


def test_a_chat_endpoint_answering_a_page_is_refused_at_the_preflight(tmp_path, monkeypatch):
    # The model list is not served; the one-token question gets the page.
    monkeypatch.setenv(KEY_ENV, KEY)
    with ChatServer(models=(PRICED,), key=KEY, serve_models=False) as s:
        s.script(html())
        result = _bench_run(s.base_url, tmp_path / "run")
    assert result.exit_code == 2 and result.output.strip().count("\n") == 0
    assert f"endpoint {s.base_url}: POST /chat/completions answered an HTML page" in result.output


@pytest.mark.parametrize("answer, words", [
    (html(), "answered an HTML page titled 'Welcome'"),
    (bad_json(), "answered malformed JSON"),
    (raw('{"id": "x", "choices": "none"}'), "answered JSON that is not a chat completion (keys id, choices)"),
    (raw('{"choices": [{"message": {"tool_calls": "hub_list_devices"}}]}'), "not a chat completion"),
])
def test_a_reply_that_is_not_a_chat_completion_is_a_protocol_error_rerun_on_resume(server, house_file, tmp_path,
                                                                                    answer, words):
    record = run(server, house_file, tmp_path, tool_call("hub_list_devices"), answer)
    assert record["ended_by"] == "protocol_error" and len(record["calls"]) == 1
    assert words in record["trace"][-1]["detail"] and server.base_url in record["trace"][-1]["detail"]
    assert not record["passed"] and scoring.outcomes_from_records([record]).empty  # left out of every score
    spec = runner.EpisodeSpec("house", str(house_file), TASK, "unitree_g1_d_ultimate", 0)
    server.script(text("done"))
    done = runner.run([spec], "openai", tmp_path, agent_options={
        "model": PRICED, "base_url": server.base_url, "api_key_env": KEY_ENV})
    assert [d["ended_by"] for d in done] == ["stop"]


# --- the line after a run ---------------------------------------------------------------------------------


def _summary(result) -> str:
    return next(line for line in result.output.splitlines() if "episodes run" in line)


@pytest.mark.parametrize("answer, ending", [(status(503, **{"retry-after-ms": "1"}), "transport_error"),
                                            (html(), "protocol_error")])
def test_the_run_summary_counts_unscored_endings_apart_and_says_how_to_retry(server, tmp_path, answer, ending):
    server.policy = lambda body: answer
    out = tmp_path / "run"
    result = _bench_run(server.base_url, out)
    assert result.exit_code == 0, result.output
    line = _summary(result)
    assert f"0/1 passed, 0 failed, 1 {ending} (not scored: rerun the same command to retry them)" in line
    server.policy = lambda body: text("Nothing needed doing.")
    again = _summary(_bench_run(server.base_url, out))
    assert again.startswith("1 episodes run, 0 kept from before;") and ending not in again
    assert "retry" not in again
