"""A model behind any OpenAI-compatible chat-completions endpoint, with native tool calling (docs/agents.md).

Hosted (api.openai.com and compatible providers) or local (vLLM, Ollama,
llama.cpp server, LM Studio): ``base_url`` picks the endpoint, ``model`` the
model. The API key is read from the environment variable ``api_key_env``
and goes nowhere but the request header: not into records, logs or error
messages. A local server needs no key; without one the request carries a
placeholder.

Transport failures — connection refused, timeouts, HTTP 408, 409, 429 and
5xx — are retried by the ``openai`` SDK itself, ``max_retries`` times
(default :data:`~homeloop.bench.agents.conversation.DEFAULT_MAX_RETRIES`), with exponential backoff: 0.5 s
doubling to at most 8 s, less up to 25 % jitter, or the server's
``Retry-After`` when it gives one (up to 2 minutes). When the retries are
spent the episode ends ``transport_error``: it is left out of the scores and
a resume runs it again. A refused key or an unknown model (401, 403, 404)
ends it the same way; any other refusal (a 400 such as a context overflow)
ends it ``agent_error`` with the status and the provider's message.

A reply that is not a chat completion (an HTML page, malformed JSON, JSON
without ``choices`` of messages) ends the episode ``protocol_error``: like
``transport_error``, it says nothing of the model, is left out of the scores
and is run again by a resume. :func:`preflight` refuses such an endpoint in
one line before any episode (docs/agents.md).

An endpoint that refuses images inside tool messages (HTTP 400 naming
images) is asked again with the images in a user message after the tool
results; that mode is kept for the rest of the process and recorded
(``usage["image_mode"]``).

Each reply carries its wall latency: seconds on a monotonic clock from
sending the request that got it (after the rate limiter's wait) to having it
parsed, the SDK's retries of that request included.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import openai
from openai.types.chat import ChatCompletion

from homeloop.bench.agents.conversation import (DEFAULT_MAX_REQUESTS, DEFAULT_MAX_RETRIES, DEFAULT_PROMPT,
                                                DEFAULT_TIMEOUT_S, ChatAgent, Conversation, EndEpisode,
                                                ProtocolError, Reply, ToolCall, api_key, json_answer, redact,
                                                retried, shape_of, unanswered)
from homeloop.bench.agents.pricing import Price, price_of
from homeloop.bench.agents.ratelimit import RateLimiter
from homeloop.bench.agents.registry import register
from homeloop.core.errors import HomeLoopError

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"




#: Endpoint and model pairs known to refuse images in tool messages (filled as they refuse).
_USER_IMAGES: set[tuple[str, str]] = set()


def endpoint_name(base_url: str | None) -> str:
    """The endpoint as messages name it: the base URL without user, password, query or fragment."""
    parts = urlsplit(base_url or "https://api.openai.com/v1")
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")




def make_client(base_url: str | None, api_key_env: str, *, max_retries: int, timeout: float) -> openai.OpenAI:
    """The process's client for this endpoint and these settings (one per process: building one
    costs time, and reusing it keeps its connections open between episodes)."""
    return _client(base_url, api_key(api_key_env, base_url), int(max_retries), float(timeout))


@lru_cache(maxsize=8)
def _client(base_url: str | None, key: str, max_retries: int, timeout: float) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)


@register("openai")
class OpenAIAgent(ChatAgent):
    """A model on an OpenAI-compatible endpoint (see the module docstring)."""

    name = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key_env: str = DEFAULT_API_KEY_ENV, max_requests: int = DEFAULT_MAX_REQUESTS,
                 temperature: float = 0.0, seed: int | None = None, max_retries: int = DEFAULT_MAX_RETRIES,
                 timeout: float = DEFAULT_TIMEOUT_S, rate_limit: float | None = None,
                 rate_limit_file: str | None = None, image_mode: str = "tool", prompt: str = DEFAULT_PROMPT,
                 max_image_side: int | None = None):
        if not model:
            raise HomeLoopError("the openai agent needs a model: pass --model NAME")
        super().__init__(max_requests=max_requests, image_mode=image_mode, prompt=prompt,
                         max_image_side=max_image_side)
        self.model, self.base_url, self.endpoint = model, base_url, endpoint_name(base_url)
        self.api_key_env = api_key_env
        self.temperature, self.seed = float(temperature), seed
        self.max_retries = int(max_retries)
        self.client = make_client(base_url, api_key_env, max_retries=self.max_retries, timeout=timeout)
        self.limiter = RateLimiter(rate_limit, rate_limit_file) if rate_limit else None
        self._endpoint_model = (self.endpoint, model)
        if self._endpoint_model in _USER_IMAGES:
            self.image_mode = "user"

    def price(self) -> Price | None:
        return price_of(self.model)

    def preflight(self) -> None:
        """Before a run: the endpoint answers, speaks the API and takes the key (:func:`preflight`)."""
        assert self.model is not None  # the constructor refuses an agent without one
        preflight(self.model, self.base_url, self.api_key_env)

    def ask(self, conversation: Conversation, tools: list[dict[str, Any]], episode: Episode) -> Reply:
        seed = self.seed if self.seed is not None else episode.seed
        while True:
            if self.limiter is not None:
                self.limiter.acquire()
            body = {"model": self.model, "messages": conversation.messages(self.image_mode), "tools": tools,
                    "temperature": self.temperature, "seed": seed}
            sent = time.perf_counter()
            try:
                # The SDK's own POST (its retries, auth and errors) without the typed create(), which
                # walks every message and tool schema through its TypedDict transform on each request,
                # images included; these messages are plain JSON already.
                # The body comes back as text: the SDK would hand a web page or a list on as they are.
                response = self.client.post("/chat/completions", body=body, cast_to=str)
            except openai.BadRequestError as exc:
                if self.image_mode == "tool" and conversation.has_images and "image" in _message(exc).lower():
                    self.image_mode = "user"
                    _USER_IMAGES.add(self._endpoint_model)
                    continue
                raise EndEpisode("agent_error", self._refusal(exc)) from None
            except openai.OpenAIError as exc:
                raise self._ending(exc) from None
            try:
                completion = chat_completion(response)
            except ProtocolError as exc:
                raise EndEpisode("protocol_error", f"{self.endpoint}: {exc}") from None
            reply = _reply(completion, len(self.calls) + 1)
            return replace(reply, latency_s=round(time.perf_counter() - sent, 6))

    def _ending(self, exc: openai.OpenAIError) -> EndEpisode:
        if isinstance(exc, openai.APIConnectionError):  # a timeout is one too
            return unanswered(self.endpoint, self.max_retries, isinstance(exc, openai.APITimeoutError))
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in (400, 422):
                return EndEpisode("agent_error", self._refusal(exc))
            return EndEpisode("transport_error", f"{self.endpoint}: HTTP {exc.status_code}"
                              + (f" after {self.max_retries} retries" if retried(exc.status_code) else ""))
        return EndEpisode("agent_error", f"{self.endpoint}: {type(exc).__name__}: {_redact(str(exc), self.client)}")

    def _refusal(self, exc: openai.APIStatusError) -> str:
        return f"{self.endpoint}: HTTP {exc.status_code}: {_redact(_message(exc), self.client)[:500]}"


def _message(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str):
            return message
        if isinstance(inner, str):
            return inner
    return exc.message or ""


def _redact(text: str, client: openai.OpenAI) -> str:
    return redact(text, client.api_key)


# --- what came back: the protocol or not --------------------------------------------------------------


#: The protocol an answer must be in, for the messages of :class:`ProtocolError`.
API = "the OpenAI API"


def _json_answer(text: str) -> Any:
    return json_answer(text, API)


def _raise(what: str) -> NoReturn:
    raise ProtocolError(f"answered {what}, not {API}")


def chat_completion(response: str) -> ChatCompletion:
    """A response body as a chat completion: a JSON object with a list of ``choices``, each holding a
    ``message`` object. Anything else raises :class:`ProtocolError` saying what came back."""
    data = _json_answer(response)
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not all(map(_is_choice, choices)):
        _raise(f"JSON that is not a chat completion ({shape_of(data)})")
    # Built leniently, as the SDK builds its own results: providers add fields and values of their own.
    return ChatCompletion.model_construct(**data)


def _is_choice(choice: Any) -> bool:
    message = choice.get("message") if isinstance(choice, dict) else None
    return isinstance(message, dict) and isinstance(message.get("tool_calls") or [], list)


def _reply(completion: ChatCompletion, request: int) -> Reply:
    """The first choice of a completion as a :class:`Reply` (tool calls without an id get one)."""
    if not completion.choices:
        raise EndEpisode("agent_error", "the endpoint answered with no choices")
    choice = completion.choices[0]
    message = choice.message
    calls: list[ToolCall] = []
    for i, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None) or getattr(call, "name", None) or ""
        arguments = getattr(function, "arguments", None) if function is not None else getattr(call, "input", "")
        calls.append(ToolCall(call.id or f"call_{request}_{i}", name, arguments or ""))
    return Reply(message.content, tuple(calls), choice.finish_reason, completion.usage)


# --- the check before a run ---------------------------------------------------------------------------


def preflight(model: str, base_url: str | None = None, api_key_env: str = DEFAULT_API_KEY_ENV,
              timeout: float = 30.0) -> str:
    """Check the endpoint answers, speaks the OpenAI API and accepts the key before any episode; a
    failure is one line.

    Lists the models (GET /models); where the list is not served or lacks ``model``, asks for one
    token. Returns the endpoint's name; raises :class:`HomeLoopError` naming it and the HTTP status,
    or what came back where the answer is not the API's (a web page at a mistyped ``--base-url``).
    """
    where = endpoint_name(base_url)
    client = make_client(base_url, api_key_env, max_retries=1, timeout=timeout)
    served = _served_models(client, where, api_key_env)
    if model in served:
        return where
    try:
        chat_completion(client.post("/chat/completions", cast_to=str, body={
            "model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}))
    except openai.APIStatusError as exc:
        if exc.status_code == 404:
            listed = f"; it serves {', '.join(served[:12])}" if served else ""
            raise HomeLoopError(f"endpoint {where}: HTTP 404 for model {model!r}{listed}") from None
        if exc.status_code != 400:  # a 400 (e.g. a parameter the model refuses) still means it answered
            raise _refused(where, exc, api_key_env) from None
    except openai.APIConnectionError as exc:
        raise HomeLoopError(f"endpoint {where}: not reachable ({_connection_reason(exc)})") from None
    except ProtocolError as exc:
        raise HomeLoopError(f"endpoint {where}: POST /chat/completions {exc}; check --base-url") from None
    return where


def _served_models(client: openai.OpenAI, where: str, api_key_env: str) -> list[str]:
    """The model ids GET /models lists; none where the endpoint does not serve the list."""
    try:
        data = _json_answer(client.get("/models", cast_to=str))
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            _raise(f"JSON that is not a list of models ({shape_of(data)})")
    except openai.APIStatusError as exc:
        if exc.status_code not in (404, 405, 501):
            raise _refused(where, exc, api_key_env) from None
        return []
    except openai.APIConnectionError as exc:
        raise HomeLoopError(f"endpoint {where}: not reachable ({_connection_reason(exc)})") from None
    except ProtocolError as exc:
        raise HomeLoopError(f"endpoint {where}: GET /models {exc}; check --base-url") from None
    return [m["id"] for m in data["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _refused(where: str, exc: openai.APIStatusError, api_key_env: str) -> HomeLoopError:
    why = {401: f"the key in {api_key_env} was refused", 403: f"the key in {api_key_env} may not use it"}
    return HomeLoopError(f"endpoint {where}: HTTP {exc.status_code}"
                         + (f" ({why[exc.status_code]})" if exc.status_code in why else ""))


def _connection_reason(exc: openai.APIConnectionError) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    cause = exc.__cause__
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    text = str(cause or exc).strip()
    return "connection refused" if "refused" in text.lower() else (text.splitlines()[0][:120] if text else "no answer")
