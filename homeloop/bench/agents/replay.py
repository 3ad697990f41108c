"""Replay a transcript: recorded assistant replies fed in order instead of a model (docs/agents.md).

``--replies FILE.jsonl`` holds one assistant reply per line in
chat-completions form::

    {"content": null, "tool_calls": [{"id": "c1", "type": "function",
      "function": {"name": "hub_list_devices", "arguments": "{}"}}]}
    {"content": "The stove is off and Margaret knows."}

(``arguments`` may also be a JSON object; ``finish_reason`` and ``usage``
are optional and replayed as given.) An episode record (``.json``) is read
too: its ``model_calls`` are the replies a model gave, so a published
episode can be re-run. The same limits as for a model apply; when the
transcript runs out before a reply without a tool call, the episode ends
``request_limit``.

With ``latency`` on, each reply's recorded wall latency (``latency_s``) passes
as simulated time before the reply is carried out, through ``clock_wait`` (the
world runs while a real model thinks); :func:`homeloop.bench.replay_latency.replay_with_latency`
does this for every episode of a run folder (``homeloop bench replay-latency``, docs/scores.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from homeloop.bench.agents.conversation import (DEFAULT_MAX_REQUESTS, DEFAULT_PROMPT, ChatAgent, Conversation,
                                                EndEpisode, Reply, ToolCall)
from homeloop.bench.agents.registry import register
from homeloop.core.errors import HomeLoopError

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode


class _Function(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    arguments: str | dict[str, Any] = ""


class _Call(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = None
    type: str = "function"
    function: _Function


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str | None = None
    tool_calls: list[_Call] | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    latency_s: float | None = None

    def reply(self, number: int) -> Reply:
        calls = tuple(ToolCall(c.id or f"call_{number}_{i}", c.function.name,
                               c.function.arguments if isinstance(c.function.arguments, str)
                               else json.dumps(c.function.arguments))
                      for i, c in enumerate(self.tool_calls or []))
        finish = self.finish_reason or ("tool_calls" if calls else "stop")
        return Reply(self.content, calls, finish, self.usage, latency_s=self.latency_s)


def transcript(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The replies of a recorded episode, as lines of a replies file."""
    lines = []
    for call in record.get("model_calls") or []:
        line = dict(call["reply"])
        tokens = call.get("tokens") or {}
        if tokens.get("prompt") is not None:
            line["usage"] = {"prompt_tokens": tokens["prompt"], "completion_tokens": tokens["completion"],
                             "total_tokens": tokens["total"],
                             **({"prompt_tokens_details": {"cached_tokens": tokens["cached"]}}
                                if tokens.get("cached") is not None else {})}
        if call.get("latency_s") is not None:
            line["latency_s"] = call["latency_s"]
        lines.append(line)
    return lines


def read_replies(path: str | Path) -> list[Reply]:
    """Every reply of a replies file (JSON lines) or an episode record; one line naming a bad one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HomeLoopError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if path.suffix == ".json":
        try:
            lines = [(i, line) for i, line in enumerate(transcript(json.loads(text)), start=1)]
        except (json.JSONDecodeError, AttributeError, KeyError, TypeError):
            raise HomeLoopError(f"{path}: not an episode record with model_calls") from None
        where = "reply"
    else:
        lines, where = [], "line"
        for i, raw in enumerate(text.splitlines(), start=1):
            if raw.strip():
                try:
                    lines.append((i, json.loads(raw)))
                except json.JSONDecodeError as exc:
                    raise HomeLoopError(f"{path}: line {i}: not JSON ({exc.msg})") from None
    replies = []
    for n, (i, value) in enumerate(lines, start=1):
        try:
            replies.append(_Line.model_validate(value).reply(n))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "reply"
            raise HomeLoopError(f"{path}: {where} {i}: {field}: {first['msg']}") from None
    if not replies:
        raise HomeLoopError(f"{path}: holds no replies")
    return replies


@register("replay")
class ReplayAgent(ChatAgent):
    """Feeds the replies of a transcript in order (see the module docstring)."""

    name = "replay"

    def __init__(self, replies: str | None = None, max_requests: int = DEFAULT_MAX_REQUESTS,
                 image_mode: str = "tool", model: str | None = None, latency: bool = False,
                 prompt: str = DEFAULT_PROMPT, max_image_side: int | None = None):
        if not replies:
            raise HomeLoopError("the replay agent needs a transcript: pass --replies FILE.jsonl")
        super().__init__(max_requests=max_requests, image_mode=image_mode, prompt=prompt,
                         max_image_side=max_image_side)
        self.replies = read_replies(replies)
        self.model = model
        self.latency = latency

    def ask(self, conversation: Conversation, tools: list[dict[str, Any]], episode: Episode) -> Reply:
        n = len(self.calls)
        if n >= len(self.replies):
            raise EndEpisode("request_limit", f"the transcript holds only {len(self.replies)} replies")
        reply = self.replies[n]
        if self.latency and reply.latency_s:
            think(episode, reply.latency_s)
        return reply


def think(episode: Episode, seconds: float) -> None:
    """Let ``seconds`` of simulated time pass as a model's latency: a ``clock_wait`` call (or, with the
    clock withheld, the same time without a call); an episode that reaches its horizon ends there."""
    if "clock_wait" in episode.skills:
        episode.call("clock_wait", {"seconds": seconds})
    else:
        episode.context.advance(seconds)
        if episode.world.time >= episode.horizon_time - 1e-9:
            episode.end("horizon", "the model's recorded latency ran to the horizon")
    if episode.ended_by is not None:
        raise EndEpisode(episode.ended_by, "the model's recorded latency ran to the horizon")
