"""The anthropic agent against a server that speaks the Messages API for real.

Every test drives the real ``anthropic`` client over HTTP to :class:`MessagesServer`, a small
handler defined here (127.0.0.1, a free port, stopped in a ``finally`` by its fixture), in the
benchmark house. The server answers scripted messages: ``tool_use`` turns, a final text turn,
HTTP errors, or a body that is not a message.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from homeloop.bench import runner, scoring
from homeloop.bench.agents import make_agent
from homeloop.bench.agents.anthropic_agent import CACHE_CONTROL
from homeloop.bench.agents.conversation import MALFORMED_LIMIT, role_prompt
from homeloop.bench.agents.pricing import Tally, price_of, read_usage
from homeloop.bench.records import read_record, record_path
from homeloop.core.catalog import catalog_dir
from homeloop.core.errors import HomeLoopError
from homeloop.core.ids import DEFAULT_ROBOT
from homeloop.sim.episode import Episode
from openai_server import ScriptedReplies

pytestmark = pytest.mark.slow

TASK = "kitchen_fire_emergency"  # the scripted route: six calls through the hub and messaging, no capture
PRICED = "claude-sonnet-4-5"  # a model the pricing file lists; the server answers under any name
UNPRICED = "local-claude"
KEY_ENV = "HOMELOOP_TEST_ANTHROPIC_KEY"
KEY = "sk-ant-test-Hq7Vw2Lp9Xr4-distinctive"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

#: The usage a scripted message reports unless told otherwise.
USAGE = {"input_tokens": 60, "output_tokens": 40, "cache_read_input_tokens": 1100, "cache_creation_input_tokens": 250}


# --- the server -------------------------------------------------------------------------------------------


def tool_use(name: str, tool_input: Any = None, *, usage: dict[str, Any] | None = USAGE) -> dict[str, Any]:
    """A message calling one tool (``tool_input`` as the model sent it, an object or not)."""
    block = {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": {} if tool_input is None else tool_input}
    return {"content": [{"type": "text", "text": "Let me check."}, block], "stop_reason": "tool_use", "usage": usage}


def text(words: str, *, stop: str = "end_turn", usage: dict[str, Any] | None = USAGE) -> dict[str, Any]:
    """A message without a tool call: the agent's final summary."""
    return {"content": [{"type": "text", "text": words}], "stop_reason": stop, "usage": usage}


def status(code: int, message: str = "scripted failure", **headers: str) -> dict[str, Any]:
    """An HTTP error with the Messages API's error body."""
    return {"status": code, "error": message, "headers": headers}


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, data: bytes, content_type: str = "application/json", **headers: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, code: int, kind: str, message: str, **headers: str) -> None:
        self._send(code, json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode(), **headers)

    def _given_key(self) -> str:
        return self.headers.get("x-api-key") or self.headers.get("Authorization", "").removeprefix("Bearer ")

    def do_GET(self) -> None:  # noqa: N802
        """``GET /v1/models/{id}``: any model is served, as a server answering under any name would."""
        owner = self.server.owner
        owner.model_requests.append(self.path)
        if self._given_key() != owner.key:
            self._error(401, "authentication_error", "invalid x-api-key")
        elif not owner.serve_models or not self.path.startswith("/v1/models/"):
            self._error(404, "not_found_error", f"no route {self.path}")
        else:
            model = self.path.removeprefix("/v1/models/")
            self._send(200, json.dumps({"type": "model", "id": model, "display_name": model,
                                        "created_at": "2025-01-01T00:00:00Z"}).encode())

    def do_POST(self) -> None:  # noqa: N802
        owner = self.server.owner
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        given_key = self._given_key()
        if given_key != owner.key:  # echo the key, as some providers do: the client must never repeat it
            self._error(401, "authentication_error", f"invalid x-api-key: {given_key}")
            return
        if self.path != "/v1/messages" or "anthropic-version" not in self.headers:
            self._error(404, "not_found_error", f"no route {self.path}")
            return
        spec = owner.next_reply(body)
        if "raw" in spec:
            self._send(200, spec["raw"].encode(), "text/html")
        elif "status" in spec:
            self._error(spec["status"], "scripted_error", spec["error"], **spec["headers"])
        else:
            message = {"id": f"msg_{len(owner.requests)}", "type": "message", "role": "assistant",
                       "model": body["model"], "content": spec["content"], "stop_reason": spec["stop_reason"],
                       "stop_sequence": None, **({"usage": spec["usage"]} if spec["usage"] is not None else {})}
            self._send(200, json.dumps(message).encode())


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: MessagesServer


class MessagesServer(ScriptedReplies):
    """Answers ``POST /v1/messages`` with its queue of scripted replies, then with ``policy`` if set;
    every request body is kept in ``requests``."""

    def __init__(self, key: str):
        super().__init__()
        self.key = key
        self.policy: dict[str, Any] | None = None
        self.serve_models = True
        self.model_requests: list[str] = []
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.owner = self
        self._thread = threading.Thread(target=self._http.serve_forever, name="messages-server", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def unscripted(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.policy or status(500, "no scripted reply left", **{"x-should-retry": "false"})

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=10)


@pytest.fixture
def server(monkeypatch) -> Iterator[MessagesServer]:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    s = MessagesServer(KEY)
    s.start()
    try:
        yield s
    finally:
        s.stop()


def run(server: MessagesServer, house_file: Path, tmp_path: Path, *replies: dict[str, Any], **options: Any) -> dict:
    """Script the server, run one episode of TASK through the runner, return its record."""
    server.script(*replies)
    options = {"model": PRICED, "base_url": server.base_url, "api_key_env": KEY_ENV, **options}
    spec = runner.EpisodeSpec("house", str(house_file), TASK, DEFAULT_ROBOT, 0)
    runner.run_episode(spec, "anthropic", options, str(tmp_path))
    return read_record(record_path(tmp_path, spec.id))


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a request's last message."""
    return [b for b in request["messages"][-1]["content"] if b["type"] == "tool_result"]


def result_of(block: dict[str, Any]) -> dict[str, Any]:
    """The ``{data, error, events}`` a tool result's text holds."""
    return json.loads(block["content"][0]["text"])


@pytest.fixture(scope="module")
def scripted_route(house_home) -> list[tuple[str, dict[str, Any]]]:
    """The scripted agent's calls of TASK, which pass it."""
    ep = Episode(house_home, TASK, seed=0)
    make_agent("scripted").run(ep)
    return [(e["tool"], e["arguments"]) for e in ep.trace if e["kind"] == "call"]


# --- a passing episode, and what its requests carry ---------------------------------------------------------


def test_the_scripted_route_as_tool_uses_passes(server, house_file, tmp_path, scripted_route):
    record = run(server, house_file, tmp_path, *[tool_use(t, a) for t, a in scripted_route], text("All handled."))
    assert record["passed"] and record["ended_by"] == "stop" and record["summary"] == "All handled."
    assert [(c["tool"], c["arguments"]) for c in record["calls"]] == scripted_route
    assert record["agent"]["name"] == "anthropic" and record["agent"]["model"] == PRICED
    assert len(server.requests) == record["agent"]["requests"] == len(scripted_route) + 1
    for i, entry in enumerate(record["model_calls"][:-1]):
        asked = entry["reply"]["tool_calls"][0]["function"]
        assert entry["call_index"] == i and json.loads(asked["arguments"]) == scripted_route[i][1]


def test_requests_carry_the_tools_the_cached_system_prompt_and_the_tool_results(server, house_file, tmp_path,
                                                                              scripted_route):
    (tool, arguments), *_ = scripted_route
    record = run(server, house_file, tmp_path, tool_use(tool, arguments), text("done"))
    first, second = server.requests
    assert first["model"] == PRICED and first["max_tokens"] >= 1
    offered = [t["name"] for t in first["tools"]]
    assert {tool, "messaging_send", "robot_navigate_to"} <= set(offered)
    assert all(set(t) >= {"name", "description", "input_schema"} for t in first["tools"])
    # one breakpoint after the tools, one on the system prompt, one on the conversation's last block
    assert [t.get("cache_control") for t in first["tools"]] == [None] * (len(offered) - 1) + [CACHE_CONTROL]
    assert first["system"] == [{"type": "text", "text": role_prompt(True), "cache_control": CACHE_CONTROL}]
    (wake,) = first["messages"]
    assert wake["role"] == "user" and record["world"]["wake"]["event"]["source"] in wake["content"][0]["text"]
    assert wake["content"][-1]["cache_control"] == CACHE_CONTROL
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    use = second["messages"][1]["content"][-1]
    assert use == {"type": "tool_use", "id": f"toolu_{tool}", "name": tool, "input": arguments}
    (answer,) = tool_results(second)
    assert answer["tool_use_id"] == use["id"] and answer["cache_control"] == CACHE_CONTROL
    assert "cache_control" not in second["messages"][0]["content"][-1]  # the breakpoint moved on
    assert result_of(answer) == {"data": record["calls"][0]["data"], "error": None,
                                 "events": result_of(answer)["events"]}


def test_a_capture_goes_back_as_an_image_block_inside_the_tool_result(server, house_home):
    ep = Episode(house_home, TASK, seed=0)
    ep.state["renderer"] = lambda world, view, record: PNG
    camera = next(c.id for c in house_home.cameras if c.agent_visible)
    server.script(tool_use("cameras_capture", {"camera_id": camera}), text("done"))
    agent = make_agent("anthropic", model=PRICED, base_url=server.base_url, api_key_env=KEY_ENV)
    agent.run(ep)
    assert ep.ended_by == "stop"
    (answer,) = tool_results(server.requests[1])
    images = [b for b in answer["content"] if b["type"] == "image"]
    assert images == [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]
    result = result_of(answer)
    assert PNG not in answer["content"][0]["text"] and result["data"]["image_size"]["original"] == [1, 1]


# --- tokens and cost ----------------------------------------------------------------------------------------


def expected_cost(model: str, usages: list[dict[str, int]]) -> float:
    """Dollars from the pricing file's own figures for ``model``: fresh input, cache reads, cache writes and
    output, each at its price."""
    entry = next(m for m in yaml.safe_load((catalog_dir() / "pricing.yaml").read_text())["models"] if m["id"] == model)
    return sum((u["input_tokens"] * entry["input"] + u["cache_read_input_tokens"] * entry["cached_input"]
                + u["cache_creation_input_tokens"] * entry["cache_write_input"] + u["output_tokens"] * entry["output"])
               / 1e6 for u in usages)


def test_cache_reads_are_the_cached_tokens_and_the_cost_follows_the_pricing_file(server, house_file, tmp_path):
    other = {**USAGE, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 1350}
    record = run(server, house_file, tmp_path, tool_use("hub_list_devices", usage=other), text("done"))
    prompts = [u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
               for u in (other, USAGE)]
    assert record["tokens"] == {"prompt": sum(prompts), "completion": 2 * USAGE["output_tokens"],
                                "cached": USAGE["cache_read_input_tokens"],
                                "total": sum(prompts) + 2 * USAGE["output_tokens"]}
    assert [c["tokens"]["cached"] for c in record["model_calls"]] == [0, USAGE["cache_read_input_tokens"]]
    assert record["cost_usd"] == pytest.approx(expected_cost(PRICED, [other, USAGE]))
    row = scoring.usage(scoring.outcomes_from_records([record])).iloc[0]
    assert row["tokens"] == record["tokens"]["total"] and row["cost_usd"] == pytest.approx(round(record["cost_usd"], 6))


def test_a_model_without_a_price_gets_tokens_only_and_no_usage_leaves_them_unknown(server, house_file, tmp_path):
    assert price_of(UNPRICED) is None
    record = run(server, house_file, tmp_path, tool_use("hub_list_devices"), text("done", usage=None), model=UNPRICED)
    assert record["cost_usd"] is None and record["tokens"]["prompt"] is None
    assert record["model_calls"][0]["tokens"]["cached"] == USAGE["cache_read_input_tokens"]


@given(fresh=st.integers(0, 10**6), read=st.integers(0, 10**6), written=st.integers(0, 10**6),
       out=st.integers(0, 10**5))
def test_a_messages_usage_is_priced_by_its_parts(fresh, read, written, out):
    price = price_of(PRICED)
    assert price is not None and price.cache_write_input is not None
    usage = {"input_tokens": fresh, "output_tokens": out, "cache_read_input_tokens": read,
             "cache_creation_input_tokens": written}
    tokens = read_usage(usage)
    assert tokens == {"prompt": fresh + read + written, "completion": out, "cached": read,
                      "total": fresh + read + written + out}
    entry = Tally(price).add(usage)
    assert entry["cost_usd"] == pytest.approx((fresh * price.input + read * price.cached_input
                                               + written * price.cache_write_input + out * price.output) / 1e6,
                                              abs=1e-8)


# --- the model's mistakes and the provider's ------------------------------------------------------------------


def test_three_malformed_tool_uses_in_a_row_end_the_episode(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path,
                 tool_use("hub_open_everything"),             # no such tool
                 tool_use("hub_list_devices", [1, 2]),         # input that is not an object
                 tool_use("hub_get_state", "stove"),           # nor is this
                 text("never asked for"))
    assert record["ended_by"] == "malformed_limit" and len(server.requests) == MALFORMED_LIMIT
    answers = [tool_results(r)[0] for r in server.requests[1:]]
    assert all(a["is_error"] for a in answers)
    assert "hub_open_everything" in result_of(answers[0])["error"]
    assert "JSON object, got list" in result_of(answers[1])["error"]
    # the input that was no object goes back as an empty one, the only input the API takes
    assert server.requests[2]["messages"][-2]["content"][-1]["input"] == {}
    assert [c["tool"] for c in record["calls"]] == ["hub_open_everything"]
    assert all(c["malformed"] for c in record["model_calls"])


@pytest.mark.parametrize("stop", ["max_tokens", "refusal"])
def test_a_reply_cut_off_or_refused_ends_the_episode(server, house_file, tmp_path, stop):
    record = run(server, house_file, tmp_path, tool_use("hub_list_devices"), text("I will now", stop=stop))
    assert record["ended_by"] == "incomplete_reply" and len(record["calls"]) == 1


def test_an_overloaded_server_is_retried_then_the_episode_goes_on(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, status(529, "Overloaded", **{"retry-after-ms": "1"}),
                 status(429, "rate limited", **{"retry-after-ms": "1"}), text("done"))
    assert record["ended_by"] == "stop" and len(server.requests) == 3 and record["agent"]["requests"] == 1


def test_retries_spent_end_with_a_transport_error(server, house_file, tmp_path):
    record = run(server, house_file, tmp_path, *[status(529, "Overloaded", **{"retry-after-ms": "1"})] * 2,
                 max_retries=1)
    assert record["ended_by"] == "transport_error" and len(server.requests) == 2
    assert "HTTP 529 after 1 retries (overloaded)" in record["trace"][-1]["detail"]
    assert scoring.outcomes_from_records([record]).empty  # left out of every score


def test_a_refused_key_ends_the_episode_with_one_line_and_no_key(server, house_file, tmp_path, monkeypatch):
    wrong = "sk-ant-wrong-Tq4Wd8Hs1Nc6"
    monkeypatch.setenv(KEY_ENV, wrong)
    record = run(server, house_file, tmp_path)
    detail = record["trace"][-1]["detail"]
    assert record["ended_by"] == "transport_error" and "\n" not in detail
    assert detail.startswith(f"{server.base_url}: HTTP 401 (the key in {KEY_ENV} was refused)")
    assert wrong not in json.dumps(record) and "[key]" in detail  # the server echoed it; the record does not


def test_an_answer_that_is_not_a_message_is_a_protocol_error(server, house_file, tmp_path):
    page = {"raw": "<!DOCTYPE html><html><head><title>Welcome</title></head><body>It works</body></html>"}
    record = run(server, house_file, tmp_path, tool_use("hub_list_devices"), page)
    assert record["ended_by"] == "protocol_error" and len(record["calls"]) == 1
    assert "answered an HTML page titled 'Welcome', not the Messages API" in record["trace"][-1]["detail"]


# --- the command line ---------------------------------------------------------------------------------------


def test_bench_run_takes_the_agent_and_the_key_never_reaches_the_run_files(server, tmp_path):
    from homeloop.cli import app

    server.policy = text("Nothing needed doing.")
    out = tmp_path / "run"
    args = ["bench", "run", "--agent", "anthropic", "--model", PRICED, "--base-url", server.base_url,
            "--api-key-env", KEY_ENV, "--tasks", TASK, "--seeds", "0", "--out", str(out), "--rate-limit", "6000"]
    result = CliRunner().invoke(app, args, env={KEY_ENV: KEY, "COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 1  # the server answers only requests carrying the key
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.parent.name == "episodes" and p.suffix == ".json" for p in files)
    assert all(KEY.encode() not in p.read_bytes() for p in files) and KEY not in result.output
    recorded = json.loads((out / "run.json").read_text())["agent_options"]
    assert recorded["model"] == PRICED and not any("key" in name for name in recorded)
    flags = CliRunner().invoke(app, [*args[:4], "--images-in", "user", "--out", str(tmp_path / "other")],
                               env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert flags.exit_code == 2 and "--images-in: not an option of the anthropic agent" in flags.output


# --- the check before a run ---------------------------------------------------------------------------------


def _agent(server: MessagesServer, model: str = PRICED, **options: Any):
    return make_agent("anthropic", model=model, base_url=server.base_url, api_key_env=KEY_ENV, **options)


def test_the_preflight_asks_for_the_model_and_spends_no_message(server):
    _agent(server).preflight()
    assert server.model_requests == [f"/v1/models/{PRICED}"] and server.requests == []


def test_the_preflight_refuses_a_wrong_key_in_one_line_without_the_key(server, monkeypatch):
    wrong = "sk-ant-wrong-Tq4Wd8Hs1Nc6"
    monkeypatch.setenv(KEY_ENV, wrong)
    with pytest.raises(HomeLoopError) as caught:
        _agent(server).preflight()
    said = str(caught.value)
    assert said == f"endpoint {server.base_url}: HTTP 401 (the key in {KEY_ENV} was refused)"
    assert wrong not in said and server.requests == []


def test_a_server_without_models_is_asked_for_one_token_and_an_unknown_model_is_named(server):
    server.serve_models = False
    server.script(text("p", stop="max_tokens"))
    _agent(server).preflight()
    assert [r["max_tokens"] for r in server.requests] == [1]
    server.script(status(404, f"model: {UNPRICED}"))
    with pytest.raises(HomeLoopError, match=f"HTTP 404 for model '{UNPRICED}'"):
        _agent(server, model=UNPRICED).preflight()


def test_an_endpoint_that_is_not_the_api_or_not_there_is_one_line(server):
    server.serve_models = False
    server.script({"raw": "<html><head><title>Router login</title></head></html>"})
    with pytest.raises(HomeLoopError, match="POST /v1/messages answered an HTML page titled 'Router login'"):
        _agent(server).preflight()
    port = server._http.server_address[1]
    server.stop()
    gone = make_agent("anthropic", model=PRICED, base_url=f"http://127.0.0.1:{port}", api_key_env=KEY_ENV)
    with pytest.raises(HomeLoopError, match="not reachable"):
        gone.preflight()


def test_bench_run_stops_at_the_preflight_before_any_episode(server, tmp_path):
    from homeloop.cli import app

    out = tmp_path / "run"
    args = ["bench", "run", "--agent", "anthropic", "--model", PRICED, "--base-url", server.base_url,
            "--api-key-env", KEY_ENV, "--tasks", TASK, "--seeds", "0", "--out", str(out)]
    result = CliRunner().invoke(app, args, env={KEY_ENV: "sk-ant-wrong", "COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 2 and "HTTP 401" in result.output
    assert server.requests == [] and not list(out.glob("episodes/*.json"))
