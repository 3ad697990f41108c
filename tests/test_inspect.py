"""HomeLoop as an Inspect task (docs/agents.md, "Inspect"): ``inspect eval homeloop/benchmark``.

Inspect's own ``mockllm/model``, its replies scripted, plays the calls the scripted agent makes in a
task, in this process; the record must be the one ``bench run`` writes for the scripted agent, but
for who played it and what the requests cost, and ``homeloop bench score`` must give the same tables
from the Inspect log as from the run folder. Malformed calls, the request limit, a reply cut off and
a model that cannot be reached end the episode as in bench run. Through the ``inspect`` command, from
another folder, Inspect finds the task by its entry point and plays it with its OpenAI provider against
the local chat-completions server (tests/openai_server.py, on 127.0.0.1), and no API key reaches the
log or the records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Callable

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessage, ChatMessageTool, ContentImage, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams
from typer.testing import CliRunner

from homeloop.bench import runner
from homeloop.bench.agents.conversation import MALFORMED_LIMIT, ONE_AT_A_TIME, role_prompt, wake_message
from homeloop.bench.records import UNSCORED_ENDINGS, read_records
from homeloop.core.ids import DEFAULT_ROBOT, HOUSE_ID
from homeloop.harness.inspect_task import MALFORMED_CALL, RECORD_KEY, make_task

from conftest import HARNESS_TASK as TASK
from openai_server import ChatServer, text

pytestmark = pytest.mark.slow

MODEL = "mockllm/model"
USAGE = ModelUsage(input_tokens=300, output_tokens=20, total_tokens=1020, input_tokens_cache_read=700)
#: What the model's requests cost, not what the episode did: the fields in which a model's record differs.
MODEL_FIELDS = ("agent", "tokens", "cost_usd", "model_calls")


class Policy:
    """mockllm's replies, in turn; keeps what each request sent (the messages and the tools)."""

    def __init__(self, replies: list[ModelOutput] | Callable[[list[ChatMessage]], ModelOutput]):
        self.replies = replies
        self.seen: list[tuple[list[ChatMessage], list[ToolInfo]]] = []

    def __call__(self, messages: list[ChatMessage], tools: list[ToolInfo], *_: Any) -> ModelOutput:
        self.seen.append((list(messages), list(tools)))
        reply = self.replies(messages) if callable(self.replies) else self.replies[len(self.seen) - 1]
        reply.usage = USAGE  # mockllm would count tokens with a tokenizer it downloads
        return reply


def reply(tool: str, arguments: dict[str, Any] | None = None, **fields: Any) -> ModelOutput:
    return ModelOutput.for_tool_call(MODEL, tool, arguments or {}, **fields)


def scripted_replies(record: dict[str, Any]) -> list[ModelOutput]:
    """The record's calls as a model's replies, then ``finish`` with its summary."""
    return [*(reply(c["tool"], c["arguments"]) for c in record["calls"]),
            reply("finish", {"summary": record["summary"]})]


def play(task: Task, policy: Policy, log_dir: Path, **options: Any) -> EvalLog:
    """Evaluate ``task`` with mockllm answering by ``policy``, in this process; the log, read back whole."""
    (log,) = inspect_eval(task, model=get_model(MODEL, custom_outputs=policy, memoize=False),
                          log_dir=str(log_dir), display="none", **options)
    assert log.location is not None
    return read_eval_log(log.location)


def house_task(house_file: Path, out: Path, **options: Any) -> Task:
    flags = runner.Flags(images=options.pop("images", True))
    return make_task(runner.plan({HOUSE_ID: house_file}, [TASK], DEFAULT_ROBOT, [0], flags), out, **options)


@pytest.fixture(scope="module")
def played(scripted: tuple[dict[str, Any], Path], house_file: Path,
           tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The scripted calls played through Inspect: the policy, the log, the run folder and the log folder."""
    record, _ = scripted
    folder = tmp_path_factory.mktemp("inspect")
    policy = Policy(scripted_replies(record))
    log = play(house_task(house_file, folder / "run"), policy, folder / "logs")
    return {"policy": policy, "log": log, "out": folder / "run", "logs": folder / "logs"}


def test_a_scripted_model_plays_the_route_and_gets_bench_runs_record(
        scripted: tuple[dict[str, Any], Path], played: dict[str, Any], house_file: Path) -> None:
    record, scripted_out = scripted
    log, policy = played["log"], played["policy"]
    assert log.status == "success" and log.samples is not None
    (sample,) = log.samples
    (played_record,) = read_records([played["out"]]).records

    # the record: bench run's, but for who played and what the requests cost
    assert {k: v for k, v in played_record.items() if k not in MODEL_FIELDS} == {
        k: v for k, v in record.items() if k not in MODEL_FIELDS}
    requests = len(record["calls"]) + 1
    assert played_record["agent"] == {"name": "inspect", "model": MODEL, "requests": requests, "prompt": "paper",
                                      "max_image_side": None}
    assert played_record["tokens"] == {"prompt": 1000 * requests, "completion": 20 * requests,
                                       "cached": 700 * requests, "total": 1020 * requests}
    calls = played_record["model_calls"]
    assert [c["call_index"] for c in calls] == [*range(len(record["calls"])), None]
    assert [c["reply"]["tool_calls"][0]["function"]["name"] for c in calls] == [
        *(c["tool"] for c in record["calls"]), "finish"]
    assert not any(c["malformed"] for c in calls)
    pictures = {p.name: p.read_bytes() for p in (scripted_out / "episodes").rglob("*.png")}
    assert pictures and {p.name: p.read_bytes() for p in (played["out"] / "episodes").rglob("*.png")} == pictures

    # the score: the runner's checks, with the whole record in the log
    (score,) = sample.scores.values()  # type: ignore[union-attr]
    assert (score.value, score.answer) == ("C", "stop") and score.metadata[RECORD_KEY] == played_record

    # what the model was sent: bench run's first two messages, the skills as tools, results and images
    first_messages, offered = policy.seen[0]
    episode = _episode(house_file)
    assert [m.role for m in first_messages] == ["system", "user"]
    assert [m.text for m in first_messages] == [role_prompt(episode.images), wake_message(episode.wake)]
    _assert_the_skills_are_the_tools(episode, offered)
    answers = [m for m in policy.seen[-1][0] if m.role == "tool"]  # all the model read, images included
    for call, answer in zip(record["calls"], answers, strict=False):
        said = json.loads(answer.content[0].text)  # type: ignore[union-attr,index]
        assert (said["error"], said["events"]) == (call["error"], call["events"])
    # Inspect hands a tool result's images to providers that take none there in a user message after it
    shown = [part for m in policy.seen[-1][0] if isinstance(m.content, list) for part in m.content
             if isinstance(part, ContentImage)]
    captured = [c for c in record["calls"] if (c.get("data") or {}).get("image_file")]
    assert len(shown) == len(captured) >= 1 and all(p.image.startswith("data:image/png;base64,") for p in shown)


def _episode(house_file: Path) -> Any:
    """The task's episode in the house at seed 0, as the harnesses play it."""
    from homeloop.core.home import Home
    from homeloop.sim.episode import Episode

    return Episode(Home.from_json(house_file.read_text(encoding="utf-8")), TASK, seed=0)


def _assert_the_skills_are_the_tools(episode: Any, offered: list[ToolInfo]) -> None:
    """The tools are the skills with their own names, descriptions and schemas (Inspect leaves out the
    keywords whose value is null, such as ``"default": null``), then ``finish``."""
    skills = {t["function"]["name"]: t["function"] for t in episode.tools()}
    assert [t.name for t in offered] == [*skills, "finish"]
    for tool in offered[:-1]:
        schema = skills[tool.name]["parameters"]
        assert tool.description == skills[tool.name]["description"]
        assert tool.parameters.model_dump(exclude_none=True) == ToolParams.model_validate(schema).model_dump(
            exclude_none=True)
        assert set(tool.parameters.properties) == set(schema["properties"])


def test_bench_score_reads_the_inspect_log_with_the_run_folders_tables(played: dict[str, Any],
                                                                       tmp_path: Path) -> None:
    from homeloop.cli import app

    (log_file,) = played["logs"].glob("*.eval")
    json_logs = tmp_path / "json-logs"  # the same log in Inspect's other format, named as Inspect names it
    write_eval_log(read_eval_log(log_file), json_logs / log_file.with_suffix(".json").name, format="json")
    tables = {}
    for name, source in (("folder", played["out"]), ("log", log_file), ("logs", played["logs"]),
                         ("json", json_logs)):
        result = CliRunner().invoke(app, ["bench", "score", str(source), "--out", str(tmp_path / name)],
                                    env={"COLUMNS": "200", "NO_COLOR": "1"})
        assert result.exit_code == 0 and "skipped" not in result.output, result.output
        tables[name] = {p.name: p.read_text() for p in (tmp_path / name).glob("*.csv")}
    assert tables["log"] == tables["folder"] == tables["logs"] == tables["json"]
    assert "mockllm/model (paper prompt)" in tables["log"]["main.csv"]


def test_malformed_calls_end_the_episode_after_three_in_a_row(house_file: Path, tmp_path: Path) -> None:
    unparsed = ModelOutput.for_tool_call(MODEL, "cameras_capture", {})
    unparsed.message.tool_calls = [ToolCall(id="bad", function="cameras_capture", arguments={},
                                            parse_error="the arguments are not JSON")]
    two = reply("cameras_list_cameras")
    two.message.tool_calls = [*(two.message.tool_calls or []), ToolCall(id="extra", function="robot_status",
                                                                         arguments={})]
    replies = [two, unparsed, reply("open_the_pod_bay_doors"), reply("cameras_capture", {"camera_id": 7}),
               reply("cameras_list_cameras")]
    policy = Policy(replies)
    log = play(house_task(house_file, tmp_path / "run", images=False), policy, tmp_path / "logs")
    (record,) = read_records([tmp_path / "run"]).records

    assert (record["ended_by"], record["passed"]) == ("malformed_limit", False)
    assert len(policy.seen) == 1 + MALFORMED_LIMIT  # the last reply was never asked for
    assert [c["tool"] for c in record["calls"]] == ["cameras_list_cameras", MALFORMED_CALL, "open_the_pod_bay_doors",
                                                    "cameras_capture"]
    assert record["calls"][1]["arguments"] == {"tool": "cameras_capture", "problem": "the arguments are not JSON"}
    assert [bool(c["malformed"]) for c in record["model_calls"]] == [False, True, True, True]
    messages = log.samples[0].messages  # type: ignore[index]
    answers = [(m.tool_call_id, json.loads(m.text)["error"]) for m in messages if isinstance(m, ChatMessageTool)]
    assert answers[1] == ("extra", f"robot_status: {ONE_AT_A_TIME}")
    assert answers[2] == ("bad", "the arguments are not JSON; send the arguments as a JSON object")
    assert [error for _, error in answers[3:]] == [c["error"] for c in record["calls"][2:]]
    assert "unknown tool 'open_the_pod_bay_doors'" in answers[3][1] and answers[4][1]
    assert log.samples[0].scores["episode_checks"].value == "I"  # type: ignore[index]


@pytest.mark.parametrize(("outputs", "options", "ending", "requests"), [
    (lambda: [reply("cameras_list_cameras")] * 3, {"max_requests": 2}, ("request_limit", "2 requests to the model"),
     2),
    (lambda: [reply("cameras_list_cameras")] * 5, {"message_limit": 6},
     ("request_limit", "Inspect's message limit (6)"), 2),
    (lambda: [ModelOutput.from_content(MODEL, "I will now call hub_set_st", stop_reason="max_tokens")], {},
     ("incomplete_reply", "the provider ended the reply early (max_tokens)"), 1),
])
def test_limits_and_cut_off_replies_end_as_in_bench_run(house_file: Path, tmp_path: Path,
                                                        outputs: Callable[[], list[ModelOutput]],
                                                        options: dict[str, Any], ending: tuple[str, str],
                                                        requests: int) -> None:
    """HomeLoop's request limit and Inspect's own limits (here its message limit) end the episode
    ``request_limit``; Inspect still scores the sample."""
    task_options = {k: v for k, v in options.items() if k == "max_requests"}
    eval_options = {k: v for k, v in options.items() if k != "max_requests"}
    log = play(house_task(house_file, tmp_path / "run", images=False, **task_options), Policy(outputs()),
               tmp_path / "logs", **eval_options)
    (record,) = read_records([tmp_path / "run"]).records
    assert record["ended_by"] == ending[0] and not record["passed"]
    assert {"kind": "end", "reason": ending[0], "detail": ending[1]}.items() <= record["trace"][-1].items()
    assert record["agent"]["requests"] == len(record["model_calls"]) == requests
    assert log.samples[0].scores["episode_checks"].metadata[RECORD_KEY] == record  # type: ignore[index]


def test_a_model_that_cannot_be_reached_ends_transport_error_unscored(house_file: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from homeloop.cli import app

    secret = "sk-never-in-a-record-0123456789"
    monkeypatch.setenv("HOMELOOP_TEST_API_KEY", secret)

    def lost(messages: list[ChatMessage]) -> ModelOutput:
        raise ConnectionError(f"the endpoint went away (key {secret})")

    log = play(house_task(house_file, tmp_path / "run", images=False), Policy(lost), tmp_path / "logs")
    (record,) = read_records([tmp_path / "run"]).records
    assert record["ended_by"] == "transport_error" and record["ended_by"] in UNSCORED_ENDINGS
    assert record["trace"][-1]["detail"] == "ConnectionError: the endpoint went away (key [secret])"
    assert secret not in (tmp_path / "run" / "episodes" / f"{record['episode_id']}.json").read_text()
    assert log.status == "error"
    result = CliRunner().invoke(app, ["bench", "score", str(tmp_path / "logs")],
                                env={"COLUMNS": "300", "NO_COLOR": "1"})
    assert result.exit_code == 2 and "no episode record (it ended in an error: " in result.output, result.output


def test_inspect_eval_finds_the_task_from_any_folder_and_keeps_no_key(tmp_path: Path) -> None:
    """``inspect eval homeloop/benchmark`` with -T options as the command line gives them, two samples
    side by side in the default run folder, Inspect's OpenAI provider against the local server."""
    key = "sk-homeloop-test-key-0123456789"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "OPENAI_API_KEY": key, "NO_COLOR": "1"}
    with ChatServer(models=("gpt-4o-mini",), key=key, policy=lambda body: text("Nobody is at the door.")) as server:
        done = subprocess.run(
            [sys.executable, "-m", "inspect_ai", "eval", "homeloop/benchmark", "--model", "openai/gpt-4o-mini",
             "--model-base-url", server.base_url, "-T", f"tasks={TASK}", "-T", "seeds=0,1", "-T", "images=false",
             "--log-dir", str(tmp_path / "logs"), "--display", "none"],
            cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = elsewhere / "outputs" / "runs" / "inspect-openai_gpt-4o-mini"  # the default run folder, by model
    records = read_records([run]).records
    assert sorted(r["world"]["seed"] for r in records) == [0, 1]
    for record in records:
        assert (record["ended_by"], record["summary"]) == ("stop", "Nobody is at the door.")
        assert record["agent"]["model"] == "openai/gpt-4o-mini" and record["world"]["flags"]["images"] is False
        assert record["tokens"] == {"prompt": 1200, "completion": 40, "cached": 800, "total": 1240}
        assert record["cost_usd"] is not None and record["cost_usd"] > 0  # priced by the name after the provider
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    with zipfile.ZipFile(log_file) as log:
        assert not [name for name in log.namelist() if key.encode() in log.read(name)]
    assert not [p for p in run.rglob("*") if p.is_file() and key.encode() in p.read_bytes()]
    assert [p.name for p in elsewhere.iterdir()] == ["outputs"]
