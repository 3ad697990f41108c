"""A Claude model on Anthropic's Messages API through the ``anthropic`` SDK, with native tool use (docs/agents.md).

The episode runs through the same :class:`ChatAgent` loop and :class:`Conversation`
as the ``openai`` agent (prompt, limits, records, tokens, rate limit); this
module only speaks the Messages API:

- the skills go as ``tools`` (``name``, ``description``, ``input_schema``), a
  reply's ``tool_use`` blocks are its tool calls (only the first runs), and each
  call is answered by a ``tool_result`` block holding the result's JSON text and
  a capture's image as an image block (base64 source), so no image mode is
  needed: the Messages API takes images inside tool results;
- the prompt is cached: the tools and the system prompt carry a
  ``cache_control`` breakpoint, and so does the last block of the conversation,
  so each request reads the one before it from the cache. The usage's
  ``cache_read_input_tokens`` are the record's cached tokens, and the prompt is
  the sum of ``input_tokens`` and the cache reads and writes; cache writes are
  priced at the model's ``cache_write_input`` in ``pricing.yaml``
  (:mod:`homeloop.bench.agents.pricing`);
- a stop reason becomes a chat-completions finish reason, so that a reply cut
  off (``max_tokens``, ``model_context_window_exceeded``) or refused
  (``refusal``) ends the episode ``incomplete_reply``.

``base_url`` (or the ``ANTHROPIC_BASE_URL`` environment variable, as the SDK
reads it) names another server speaking the Messages API, such as a local one.
The API key is read from the environment variable ``api_key_env``
(``ANTHROPIC_API_KEY`` by default) and goes nowhere but the request header: not
into records, logs or error messages, where it is redacted should a server echo
it. A server named by a base URL needs no key; without one the request carries
a placeholder.

Failures end the episode as the ``openai`` agent's do. Transport failures
(connection refused, timeouts, HTTP 408, 409, 429, 5xx, 529 overloaded) are
retried by the SDK itself, ``max_retries`` times with exponential backoff or as
the server's ``retry-after`` says; once they are spent, or when the key or the
model is refused (401, 403, 404), the episode ends ``transport_error``, left out
of the scores and run again by a resume. A request the API refuses (400, 413,
422, e.g. a prompt too long) ends it ``agent_error`` with the status and the
provider's message. An answer that is not a message (an HTML page, malformed
JSON, JSON without a ``content`` list of blocks) ends it ``protocol_error``.
Every such ending is one line.
"""

from __future__ import annotations

import json
import os
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import anthropic

from homeloop.bench.agents.conversation import (DEFAULT_MAX_REQUESTS, DEFAULT_MAX_RETRIES, DEFAULT_PROMPT,
                                                DEFAULT_TIMEOUT_S, ChatAgent, Conversation, EndEpisode,
                                                ProtocolError, Reply, ToolCall, api_key, json_answer, redact,
                                                retried, shape_of, unanswered)
from homeloop.bench.agents.openai_agent import endpoint_name
from homeloop.bench.agents.pricing import Price, price_of
from homeloop.bench.agents.ratelimit import RateLimiter
from homeloop.bench.agents.registry import register
from homeloop.core.errors import HomeLoopError

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode

DEFAULT_API_KEY_ENV = "ANTHROPIC_API_KEY"

#: The environment variable naming another server, as the SDK reads it.
BASE_URL_ENV = "ANTHROPIC_BASE_URL"

DEFAULT_BASE_URL = "https://api.anthropic.com"

#: Output tokens a reply may take (the Messages API requires a limit).
DEFAULT_MAX_TOKENS = 4096




#: The prompt-cache breakpoint (the 5-minute cache).
CACHE_CONTROL = {"type": "ephemeral"}

#: Stop reasons of the Messages API as chat-completions finish reasons (others are kept as they are).
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                  "model_context_window_exceeded": "length", "refusal": "content_filter"}

#: HTTP statuses of a request the API refused as it stands: the episode ends ``agent_error``.
_REFUSED = (400, 413, 422)

_WHY = {401: "the key in {env} was refused", 403: "the key in {env} may not use it",
        404: "no such model or route", 429: "rate limited", 529: "overloaded"}


def base_url_of(base_url: str | None) -> str | None:
    """The server asked: ``base_url``, else ``ANTHROPIC_BASE_URL``; None for Anthropic's own API."""
    return base_url or os.environ.get(BASE_URL_ENV) or None




@lru_cache(maxsize=8)
def _client(base_url: str | None, key: str, max_retries: int, timeout: float) -> anthropic.Anthropic:
    """The process's client for this server and these settings (reused, so its connections stay open)."""
    return anthropic.Anthropic(api_key=key, base_url=base_url or DEFAULT_BASE_URL, max_retries=max_retries,
                               timeout=timeout)


@register("anthropic")
class AnthropicAgent(ChatAgent):
    """A Claude model on the Messages API (see the module docstring)."""

    name = "anthropic"

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key_env: str = DEFAULT_API_KEY_ENV, max_requests: int = DEFAULT_MAX_REQUESTS,
                 temperature: float = 0.0, max_tokens: int = DEFAULT_MAX_TOKENS,
                 max_retries: int = DEFAULT_MAX_RETRIES, timeout: float = DEFAULT_TIMEOUT_S,
                 rate_limit: float | None = None, rate_limit_file: str | None = None, prompt: str = DEFAULT_PROMPT,
                 max_image_side: int | None = None):
        if not model:
            raise HomeLoopError("the anthropic agent needs a model: pass --model NAME (e.g. claude-sonnet-4-5)")
        if not 0.0 <= float(temperature) <= 1.0:
            raise ValueError(f"the Messages API takes a temperature from 0 to 1, got {temperature}")
        if int(max_tokens) < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        super().__init__(max_requests=max_requests, image_mode="tool", prompt=prompt, max_image_side=max_image_side)
        server = base_url_of(base_url)
        self.model, self.endpoint = model, endpoint_name(server or DEFAULT_BASE_URL)
        self.api_key_env = api_key_env
        self.temperature, self.max_tokens, self.max_retries = float(temperature), int(max_tokens), int(max_retries)
        self.client = _client(server, api_key(api_key_env, server), self.max_retries, float(timeout))
        self.limiter = RateLimiter(rate_limit, rate_limit_file) if rate_limit else None

    def price(self) -> Price | None:
        return price_of(self.model)

    def preflight(self) -> None:
        """Before a run: the server answers, speaks the Messages API, takes the key and serves the
        model. Asks for the model (``GET /v1/models/{model}``, an alias too); a server that does not
        serve models is asked for one token instead. A failure is one line naming the endpoint."""
        client = self.client.with_options(max_retries=1)
        where = self.endpoint
        try:
            found = json_answer(client.get(f"/v1/models/{self.model}", cast_to=str), API)
            if not isinstance(found, dict) or not isinstance(found.get("id"), str):
                raise ProtocolError(f"answered JSON that is not a model ({shape_of(found)}), not {API}")
            return
        except anthropic.APIStatusError as exc:
            if exc.status_code not in (404, 405, 501):
                raise self._refused(exc) from None
        except anthropic.APIConnectionError:
            raise HomeLoopError(f"endpoint {where}: not reachable") from None
        except ProtocolError as exc:
            raise HomeLoopError(f"endpoint {where}: GET /v1/models {exc}; check --base-url") from None
        try:
            message_of(client.post("/v1/messages", cast_to=str, body={
                "model": self.model, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}))
        except anthropic.APIStatusError as exc:
            if exc.status_code == 404:
                raise HomeLoopError(f"endpoint {where}: HTTP 404 for model {self.model!r}") from None
            if exc.status_code != 400:  # a 400 (e.g. a parameter the model refuses) still means it answered
                raise self._refused(exc) from None
        except anthropic.APIConnectionError:
            raise HomeLoopError(f"endpoint {where}: not reachable") from None
        except ProtocolError as exc:
            raise HomeLoopError(f"endpoint {where}: POST /v1/messages {exc}; check --base-url") from None

    def _refused(self, exc: anthropic.APIStatusError) -> HomeLoopError:
        why = _WHY.get(exc.status_code, "").format(env=self.api_key_env)
        return HomeLoopError(f"endpoint {self.endpoint}: HTTP {exc.status_code}" + (f" ({why})" if why else ""))

    def ask(self, conversation: Conversation, tools: list[dict[str, Any]], episode: Episode) -> Reply:
        if self.limiter is not None:
            self.limiter.acquire()
        system, messages = messages_of(conversation)
        body = {"model": self.model, "max_tokens": self.max_tokens, "temperature": self.temperature,
                "system": system, "messages": messages, "tools": tools_of(tools)}
        sent = time.perf_counter()
        try:
            # The SDK's own POST (its retries, auth, headers and errors); the body comes back as text, so
            # that an answer that is not a message is told apart rather than passed on.
            response = self.client.post("/v1/messages", body=body, cast_to=str)
        except anthropic.AnthropicError as exc:
            raise self._ending(exc) from None
        try:
            reply = reply_of(message_of(response), len(self.calls) + 1)
        except ProtocolError as exc:
            raise EndEpisode("protocol_error", f"{self.endpoint}: {exc}") from None
        return Reply(reply.content, reply.tool_calls, reply.finish_reason, reply.usage,
                     latency_s=round(time.perf_counter() - sent, 6))

    def _ending(self, exc: anthropic.AnthropicError) -> EndEpisode:
        """The one-line ending of a request that failed, the key redacted."""
        if isinstance(exc, anthropic.APIConnectionError):  # a timeout is one too
            return unanswered(self.endpoint, self.max_retries, isinstance(exc, anthropic.APITimeoutError))
        if isinstance(exc, anthropic.APIStatusError):
            code = exc.status_code
            said = self._redact(_provider_message(exc))[:300]
            if code in _REFUSED:
                return EndEpisode("agent_error", f"{self.endpoint}: HTTP {code}: {said}")
            why = _WHY.get(code, "").format(env=self.api_key_env)
            after = f" after {self.max_retries} retries" if retried(code) else ""
            return EndEpisode("transport_error", f"{self.endpoint}: HTTP {code}{after}"
                                                 + (f" ({why})" if why else "") + (f": {said}" if said else ""))
        return EndEpisode("agent_error", f"{self.endpoint}: {type(exc).__name__}: {self._redact(str(exc))[:300]}")

    def _redact(self, text: str) -> str:
        return redact(" ".join(text.split()), self.client.api_key)  # one line


def _provider_message(exc: anthropic.APIStatusError) -> str:
    """The message of an error body ``{"type": "error", "error": {"type", "message"}}``; empty without one."""
    body = exc.body
    inner = body.get("error", body) if isinstance(body, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else inner
    return message if isinstance(message, str) else ""


# --- the request ----------------------------------------------------------------------------------------


def tools_of(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The episode's tool schemas (chat-completions form) as Messages API tools, the last one carrying the
    cache breakpoint that caches them all."""
    out = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
            "input_schema": t["function"].get("parameters") or {"type": "object", "properties": {}}} for t in tools]
    if out:
        out[-1] = {**out[-1], "cache_control": CACHE_CONTROL}
    return out


def messages_of(conversation: Conversation) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The system blocks and the messages of a conversation: the role prompt as a cached system block,
    each reply as an assistant message of text and ``tool_use`` blocks, its answers as one user message of
    ``tool_result`` blocks, and a cache breakpoint on the last block."""
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for message in conversation.head:
        if message["role"] == "system":
            system.append({"type": "text", "text": message["content"], "cache_control": CACHE_CONTROL})
        else:
            messages.append({"role": "user", "content": [{"type": "text", "text": message["content"]}]})
    for assistant, answers in conversation.turns:
        said = assistant["content"] or ""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": said}] if said.strip() else []  # no blank blocks
        blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                    "input": _input(c["function"]["arguments"])} for c in assistant.get("tool_calls", [])]
        messages.append({"role": "assistant", "content": blocks})
        if answers:
            messages.append({"role": "user", "content": [_tool_result(a.call_id, a.text, a.images) for a in answers]})
    if messages:
        last = messages[-1]["content"]
        last[-1] = {**last[-1], "cache_control": CACHE_CONTROL}
    return system, messages


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object its ``tool_use`` block holds; arguments that were no object (the
    model was told so in the result) go back as an empty one, the only input the API takes."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _tool_result(call_id: str, text: str, images: list[tuple[str, str]]) -> dict[str, Any]:
    """One answer: its JSON text, then each image (labelled), marked as an error where it holds one."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for label, url in images:
        content += [{"type": "text", "text": f"{label}:"}, {"type": "image", "source": image_source(url)}]
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if json.loads(text).get("error") is not None:
        block["is_error"] = True
    return block


_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.S)


def image_source(url: str) -> dict[str, str]:
    """An image block's source: base64 data (from a data URL) or a URL."""
    found = _DATA_URL.fullmatch(url)
    if found is None:
        return {"type": "url", "url": url}
    return {"type": "base64", "media_type": found.group(1), "data": found.group(2)}


# --- the answer ---------------------------------------------------------------------------------------


#: The protocol an answer must be in, for the messages of :class:`ProtocolError`.
API = "the Messages API"


def message_of(response: str) -> dict[str, Any]:
    """A response body as a message: a JSON object whose ``content`` is a list of blocks, each an object
    with a ``type``. Anything else raises :class:`ProtocolError` saying what came back."""
    data = json_answer(response, API)
    if isinstance(data, dict) and _blocks(data.get("content")):
        return data
    raise ProtocolError(f"answered JSON that is not a message ({shape_of(data)}), not {API}")


def _blocks(content: Any) -> bool:
    """Whether ``content`` is a message's content: a list of objects, each with a ``type``."""
    return isinstance(content, list) and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content)


def reply_of(message: dict[str, Any], request: int) -> Reply:
    """A message as a :class:`Reply`: its text blocks joined, its ``tool_use`` blocks as tool calls (their
    input as JSON text, so an input that is no object is malformed as any other), its stop reason as a
    finish reason, and its usage as the API gave it."""
    texts = [b["text"] for b in message["content"] if b["type"] == "text" and isinstance(b.get("text"), str)]
    uses = [b for b in message["content"] if b["type"] == "tool_use"]
    calls = tuple(ToolCall(str(b.get("id") or f"toolu_{request}_{i}"), str(b.get("name") or ""),
                           "" if b.get("input") is None else json.dumps(b["input"], ensure_ascii=False))
                  for i, b in enumerate(uses))
    stop = message.get("stop_reason")
    finish = FINISH_REASONS.get(stop, stop) if isinstance(stop, str) else None
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else None
    return Reply("\n\n".join(texts) or None, calls, finish, usage)
