"""``homeloop mcp`` (docs/agents.md, "MCP"): an episode served to an MCP client.

The SDK's own client plays, over stdio to a real ``homeloop mcp`` process, the calls the scripted
agent makes in a task; the record must be the one ``bench run`` writes for the scripted agent, but
for who played it. Over HTTP a second client is refused while the first holds the episode. Every
server is on 127.0.0.1; each test stops the processes it starts (the SDK's stdio client stops its
own, closing stdin and then killing the process tree; the HTTP server is killed by pid).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from homeloop.bench.records import read_records

from conftest import HARNESS_TASK as TASK

pytestmark = pytest.mark.slow


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}


def _command(house_file: Path, out: Path, *extra: str) -> list[str]:
    return ["-m", "homeloop.cli", "mcp", "--home", str(house_file.parent), "--task", TASK, "--seed", "0",
            "--out", str(out), *extra]




async def _play(params: StdioServerParameters, record: dict[str, Any]) -> dict[str, Any]:
    """Play the record's calls through the SDK's client; what the server offered and answered."""
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        prompt = await client.get_prompt("homeloop_episode")
        wake = await client.read_resource("homeloop://episode/wake")
        answers = [await client.call_tool(c["tool"], c["arguments"]) for c in record["calls"]]
        finished = await client.call_tool("finish", {"summary": record["summary"]})
        after = await client.call_tool(record["calls"][0]["tool"], record["calls"][0]["arguments"])
    return {"tools": tools, "prompt": prompt, "wake": wake, "answers": answers, "finished": finished,
            "after": after}


def test_an_mcp_client_plays_the_scripted_route_and_gets_bench_runs_record(
        scripted: tuple[dict[str, Any], Path], house_file: Path, tmp_path: Path) -> None:
    from homeloop.core.home import Home
    from homeloop.sim.episode import Episode

    record, scripted_out = scripted
    out = tmp_path / "mcp"
    params = StdioServerParameters(command=sys.executable, args=_command(house_file, out), env=_env())
    served = asyncio.run(_play(params, record))

    offered = {t["function"]["name"]: t["function"]
               for t in Episode(Home.from_json(house_file.read_text(encoding="utf-8")), TASK).tools()}
    assert set(served["tools"]) == {*offered, "finish"}
    for name, schema in offered.items():  # the skills' own names, schemas and descriptions
        assert (served["tools"][name].input_schema, served["tools"][name].description) == (
            schema["parameters"], schema["description"])
    assert record["world"]["wake"]["event"]["kind"] in served["prompt"].messages[-1].content.text
    assert json.loads(served["wake"].contents[0].text) == record["world"]["wake"]

    for call, answer in zip(record["calls"], served["answers"], strict=True):
        text = json.loads(answer.content[0].text)
        assert (text["error"], text["events"]) == (call["error"], call["events"])
        assert answer.is_error == (call["error"] is not None)
    images = [c for a in served["answers"] for c in a.content if c.type == "image"]
    captured = [c for c in record["calls"] if (c.get("data") or {}).get("image_file")]
    assert len(images) == len(captured) >= 1 and {i.mime_type for i in images} == {"image/png"}
    assert json.loads(served["after"].content[0].text)["error"] == "the episode has ended (stop)"

    (played,) = read_records([out]).records
    assert played["agent"]["name"] == "mcp" and played["agent"]["requests"] == len(record["calls"]) + 1
    assert {k: v for k, v in played.items() if k != "agent"} == {k: v for k, v in record.items() if k != "agent"}
    pictures = {p.name: p.read_bytes() for p in (scripted_out / "episodes").rglob("*.png")}
    assert pictures and {p.name: p.read_bytes() for p in (out / "episodes").rglob("*.png")} == pictures


def _errors(group: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(group, BaseExceptionGroup):
        return [e for inner in group.exceptions for e in _errors(inner)]
    return [group]


async def _hold_and_misbehave(url: str) -> dict[str, Any]:
    """A first client holds the episode while a second tries to join; then it sends unknown tools."""
    async with Client(url) as first:
        listed = (await first.call_tool("cameras_list_cameras", {})).content[0].text
        try:
            async with Client(url) as second:
                await second.list_tools()
            refused: list[BaseException] = []
        except Exception as exc:  # the SDK raises its error inside task groups
            refused = _errors(exc)
        malformed = [await first.call_tool("open_the_pod_bay_doors", {}) for _ in range(3)]
        after = await first.call_tool("cameras_list_cameras", {})
    return {"listed": listed, "refused": refused, "malformed": malformed, "after": after}


def test_http_serves_one_client_and_ends_at_the_malformed_limit(house_file: Path, tmp_path: Path) -> None:
    from mcp import MCPError

    out = tmp_path / "mcp"
    server = subprocess.Popen([sys.executable, *_command(house_file, out, "--http", "0", "--no-images")],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, env=_env())
    try:
        assert server.stderr is not None
        first_line = server.stderr.readline()  # printed once the port listens
        assert first_line.startswith("serving episode ") and "http://127.0.0.1:" in first_line, first_line
        served = asyncio.run(_hold_and_misbehave(first_line.rsplit(" ", 1)[1].strip()))
        assert server.wait(timeout=120) == 0  # the episode ended, so the server stopped
        said = server.stderr.read()
    finally:
        server.kill()
        server.wait()
    assert json.loads(served["listed"])["data"]["cameras"]
    assert any(isinstance(e, MCPError) and "Too many open sessions" in str(e) for e in served["refused"])
    for answer in served["malformed"]:
        assert answer.is_error and "unknown tool 'open_the_pod_bay_doors'" in json.loads(answer.content[0].text)["error"]
    assert json.loads(served["after"].content[0].text)["error"] == "the episode has ended (malformed_limit)"
    (record,) = read_records([out]).records
    assert (record["ended_by"], record["passed"]) == ("malformed_limit", False)
    assert [c["tool"] for c in record["calls"]] == ["cameras_list_cameras", *["open_the_pod_bay_doors"] * 3]
    assert f"{record['episode_id']}: failed (ended by malformed_limit)" in said
