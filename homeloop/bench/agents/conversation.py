"""The tool-calling loop shared by agents that talk the chat-completions protocol (docs/agents.md).

:class:`ChatAgent` drives an episode from replies in chat-completions form,
wherever they come from (a model endpoint, a recorded transcript): it opens
with the role prompt (one of :data:`PROMPTS`) and a user message holding the
rooms and then the wake event, carries out the first tool call of each
reply, answers every call with a tool message ``{data, error, events}``, and
stops with the reply that calls no tool. Subclasses supply :meth:`ChatAgent.ask`.

Limits (docs/episodes.md): the request limit (``request_limit``); three
malformed replies in a row (``malformed_limit``: arguments that are not a
JSON object, a tool that does not exist, arguments the skill refuses), each
answered with an error the model can correct; a reply the provider cut off
(``incomplete_reply``). The episode itself enforces the budget and horizon.

What a model sends is data: only declared skills run, through
``episode.call``; arguments are parsed as JSON and nothing else.

Images (a capture's ``image`` field, base64 PNG or JPEG) leave the JSON text
and go to the model as image content: inside the tool message (``"tool"``
mode), or, for endpoints that refuse images there, in a user message right
after the tool messages (``"user"`` mode). Each is sent with its longer side at
most ``max_image_side`` pixels (aspect kept, never enlarged), and the result
the model reads states both sizes (``image_size``), as the role prompt says;
detections stay in the original's pixels.

Each request's entry in :attr:`ChatAgent.calls` (a record's ``model_calls``)
holds its wall latency (``latency_s``, where the agent measures one) and the
index in the record's ``calls`` of the call its reply ran (``call_index``).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable

from PIL import Image, UnidentifiedImageError

from homeloop.bench.agents.pricing import Price, Tally
from homeloop.bench.agents.prompts import DEFAULT_PROMPT as DEFAULT_PROMPT
from homeloop.bench.agents.prompts import PROMPTS as PROMPTS
from homeloop.bench.agents.prompts import REQUEST_JOB
from homeloop.bench.control.model import CONTROL_SCENARIO
from homeloop.core.errors import HomeLoopError
from homeloop.sim.skills import SkillError

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode


#: Retries the SDK makes after a transport failure before the episode ends ``transport_error``.
DEFAULT_MAX_RETRIES = 4

#: Seconds a request may take before it counts as a transport failure (then it is retried).
DEFAULT_TIMEOUT_S = 300.0

#: Sent as the key to a server named by a base URL when the key's variable is unset (local servers
#: ignore it).
NO_KEY = "no-key"

#: Malformed replies in a row that end an episode.
MALFORMED_LIMIT = 3

#: Longest tool-call arguments accepted (characters); longer ones are malformed, not parsed.
MAX_ARGUMENT_CHARS = 20_000

#: Finish reasons of a reply the provider did not complete.
INCOMPLETE_REASONS = frozenset({"length", "content_filter"})

#: Default number of requests an episode may make to the model.
DEFAULT_MAX_REQUESTS = 100

IMAGE_MODES = ("tool", "user")

ONE_AT_A_TIME = ("not carried out: send one tool call per reply. Only the first call of your last reply "
                 "ran; send this one again after reading that result.")

_ADDITIONS = "<!-- additions -->\n"

_IMAGE_SECTION = re.compile(r"<!-- images on -->\n(.*?)<!-- images off -->\n(.*?)<!-- end -->\n", re.S)


class EndEpisode(Exception):
    """Raised by :meth:`ChatAgent.ask` when no reply can be had: the episode ends with ``reason``."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the raw JSON text the model sent


@dataclass(frozen=True)
class Reply:
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: object = None  # the reply's usage (SDK object or dict), None when the endpoint gave none
    latency_s: float | None = None  # wall seconds from sending the request to having this reply

    def as_dict(self) -> dict[str, Any]:
        """The reply in chat-completions form, as a transcript line holds it."""
        out: dict[str, Any] = {"content": self.content, "finish_reason": self.finish_reason}
        if self.tool_calls:
            out["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in self.tool_calls]
        return out


# --- the first two messages ---------------------------------------------------------------------------


def check_prompt(name: str) -> str:
    """``name`` if it names a prompt of :data:`PROMPTS`; else a one-line error listing them."""
    if name not in PROMPTS:
        raise ValueError(f"unknown prompt {name!r}; prompts: {', '.join(PROMPTS)}")
    return name


#: The job section of role_prompt.md: its heading up to the next heading.
_JOB_SECTION = re.compile(r"^## Your job\n.*?(?=^## )", re.S | re.M)


def role_prompt(images: bool, prompt: str = DEFAULT_PROMPT, request: bool = False) -> str:
    """The system message: prompt ``prompt`` of :data:`PROMPTS`, with the paragraph for images on or off;
    ``request``: a home-control episode's, its job section :data:`REQUEST_JOB`'s (a resident's request)."""
    text = _prompt_file("role_prompt.md")
    if request:
        text = _JOB_SECTION.sub(lambda _: _prompt_file(REQUEST_JOB).strip() + "\n\n", text, count=1)
    addition = PROMPTS[check_prompt(prompt)]
    text = text.replace(_ADDITIONS, "\n" + _prompt_file(addition) if addition else "")
    return _IMAGE_SECTION.sub(lambda m: m.group(1) if images else m.group(2), text).strip()


def _prompt_file(name: str) -> str:
    return resources.files("homeloop.bench.agents").joinpath(name).read_text(encoding="utf-8")


def wake_message(wake: dict[str, Any]) -> str:
    """The first user message: the rooms of the home, then the event that woke the agent."""
    rooms = "\n".join(f"- {r['id']}: {r['name']} ({r['type']})" for r in wake["rooms"])
    return (f"The rooms of the home (id: name (type)):\n{rooms}\n\n"
            f"This event woke you (times count in seconds from it):\n{_json(wake['event'])}")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


# --- the messages of an episode ---------------------------------------------------------------------


@dataclass
class _Answer:
    call_id: str
    text: str
    images: list[tuple[str, str]]  # (label, data URL)


@dataclass
class Conversation:
    """The messages so far, renderable with images in tool messages or in user messages."""

    head: list[dict[str, Any]]
    turns: list[tuple[dict[str, Any], list[_Answer]]] = field(default_factory=list)
    max_image_side: int | None = None  # longest side of an image as sent (None: as captured)

    @classmethod
    def start(cls, episode: Episode, prompt: str = DEFAULT_PROMPT, max_image_side: int | None = None) -> Conversation:
        request = episode.scenario.name == CONTROL_SCENARIO
        return cls([{"role": "system", "content": role_prompt(episode.images, prompt, request)},
                    {"role": "user", "content": wake_message(episode.wake)}], max_image_side=max_image_side)

    def add_reply(self, reply: Reply) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.as_dict()["tool_calls"]
        self.turns.append((message, []))

    def answer(self, call_id: str, data: Any = None, error: str | None = None,
               events: list[dict[str, Any]] | None = None) -> None:
        """The tool message for one call of the last reply (images taken out of ``data``)."""
        images: list[tuple[str, str]] = []
        data = take_images(data, images, self.max_image_side)
        self.turns[-1][1].append(_Answer(call_id, _json({"data": data, "error": error, "events": events or []}),
                                         images))

    @property
    def has_images(self) -> bool:
        return any(a.images for _, answers in self.turns for a in answers)

    def messages(self, mode: str) -> list[dict[str, Any]]:
        out = list(self.head)
        for assistant, answers in self.turns:
            out.append(assistant)
            out.extend(_tool_message(a, mode) for a in answers)
            shown = [part for a in answers for part in _image_parts(a)]
            if mode == "user" and shown:
                out.append({"role": "user", "content": [{"type": "text", "text": "Images of the results above."},
                                                        *shown]})
        return out


def _tool_message(answer: _Answer, mode: str) -> dict[str, Any]:
    if mode == "tool" and answer.images:
        return {"role": "tool", "tool_call_id": answer.call_id,
                "content": [{"type": "text", "text": answer.text}, *_image_parts(answer)]}
    return {"role": "tool", "tool_call_id": answer.call_id, "content": answer.text}


def _image_parts(answer: _Answer) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for label, url in answer.images:
        parts += [{"type": "text", "text": f"{label}:"}, {"type": "image_url", "image_url": {"url": url}}]
    return parts


def replace_images(value: Any, swap: Callable[[dict[str, Any], str], dict[str, Any]]) -> Any:
    """``value`` (a tool result's data) with each non-empty ``image`` string of a mapping replaced by
    the keys ``swap(mapping, image)`` gives (a pointer in its place, and its sizes)."""
    if isinstance(value, list):
        return [replace_images(v, swap) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "image" and isinstance(item, str) and item:
            out.update(swap(value, item))
        else:
            out[key] = replace_images(item, swap)
    return out


def take_images(value: Any, found: list[tuple[str, str]], max_side: int | None) -> Any:
    """``value`` with every ``image`` string replaced by a pointer and its sizes (``image_size``); the
    images, fitted to ``max_side``, go to ``found``."""
    def swap(holder: dict[str, Any], image: str) -> dict[str, Any]:
        label = str(holder.get("capture_id") or f"image {len(found) + 1}")
        sent, size = fit_image(image, max_side)
        found.append((label, data_url(sent)))
        pointer = {"image": f"<image of {label}, shown after this result>"}
        return {**pointer, "image_size": size} if size is not None else pointer

    return replace_images(value, swap)


def fit_image(image: str, max_side: int | None) -> tuple[str, dict[str, list[int]] | None]:
    """The image as sent, its longer side at most ``max_side`` pixels (aspect kept, never enlarged), and
    its sizes ``{original: [w, h], transmitted: [w, h]}``. An image given by URL, or bytes that are no
    image, goes as it is, its size unknown (None)."""
    if image.startswith(("http://", "https://")):
        return image, None
    try:
        raw = base64.b64decode(image.partition("base64,")[2] if image.startswith("data:") else image)
        picture = Image.open(io.BytesIO(raw))
    except (binascii.Error, UnidentifiedImageError):
        return image, None
    width, height = picture.size
    if max_side is None or max(width, height) <= max_side:
        return image, {"original": [width, height], "transmitted": [width, height]}
    scale = max_side / max(width, height)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    buffer = io.BytesIO()
    picture.resize(size, Image.Resampling.LANCZOS).save(buffer, format=picture.format or "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii"), {"original": [width, height],
                                                                 "transmitted": list(size)}


_MIME_BY_PREFIX = (("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"),
                   ("UklGR", "image/webp"))


def data_url(image: str) -> str:
    """A data URL for a base64 image (its type read from its first bytes), or the URL given."""
    if image.startswith(("data:", "http://", "https://")):
        return image
    mime = next((m for prefix, m in _MIME_BY_PREFIX if image.startswith(prefix)), "image/png")
    return f"data:{mime};base64,{image}"


# --- the loop -------------------------------------------------------------------------------------------


_SCHEMAS: dict[tuple[tuple[str, ...], bool], list[dict[str, Any]]] = {}


def tool_schemas(episode: Episode) -> list[dict[str, Any]]:
    """``episode.tools()``, kept per set of tools and cost flag: the schemas depend on nothing else, so
    they are built once per set rather than once per episode."""
    key = (tuple(episode.skills), episode.show_costs)
    if key not in _SCHEMAS:
        _SCHEMAS[key] = episode.tools()
    return _SCHEMAS[key]


class ChatAgent:
    """Runs an episode from chat-completions replies (see the module docstring)."""

    name = "chat"
    model: str | None = None

    def __init__(self, max_requests: int = DEFAULT_MAX_REQUESTS, image_mode: str = "tool",
                 prompt: str = DEFAULT_PROMPT, max_image_side: int | None = None):
        if int(max_requests) < 1:
            raise ValueError(f"max_requests must be at least 1, got {max_requests}")
        if image_mode not in IMAGE_MODES:
            raise ValueError(f"image_mode must be one of {', '.join(IMAGE_MODES)}, got {image_mode!r}")
        if max_image_side is not None and int(max_image_side) < 1:
            raise ValueError(f"--max-image-side takes a whole number of pixels, at least 1; got {max_image_side}")
        self.max_requests = int(max_requests)
        self.image_mode = image_mode
        self.prompt = check_prompt(prompt)
        self.max_image_side = None if max_image_side is None else int(max_image_side)
        self.calls: list[dict[str, Any]] = []
        self.tally = Tally(price=None)

    def price(self) -> Price | None:
        """The model's price (None: tokens only)."""
        return None

    def ask(self, conversation: Conversation, tools: list[dict[str, Any]], episode: Episode) -> Reply:
        """The next reply; raise :class:`EndEpisode` when none can be had."""
        raise NotImplementedError

    @property
    def usage(self) -> dict[str, Any]:
        return {**self.tally.summary(), "image_mode": self.image_mode}

    @property
    def conditions(self) -> dict[str, Any]:
        """What the model was told and shown, for the record's agent section."""
        return {"prompt": self.prompt, "max_image_side": self.max_image_side}

    def run(self, episode: Episode) -> None:
        self.calls, self.tally = [], Tally(price=self.price())
        conversation = Conversation.start(episode, self.prompt, self.max_image_side)
        tools, malformed = tool_schemas(episode), 0
        while not episode.done:
            if self.tally.requests >= self.max_requests:
                episode.end("request_limit", f"{self.max_requests} requests to the model")
                break
            try:
                reply = self.ask(conversation, tools, episode)
            except EndEpisode as end:
                episode.end(end.reason, end.detail)
                break
            entry = self._log(reply, episode)
            if reply.finish_reason in INCOMPLETE_REASONS:
                episode.end("incomplete_reply", f"the provider ended the reply early ({reply.finish_reason})")
                break
            conversation.add_reply(reply)
            if not reply.tool_calls:
                episode.stop(reply.content or "")
                break
            ran = _calls_made(episode)
            problem = self._carry_out(reply, conversation, episode)
            entry["malformed"] = problem
            entry["call_index"] = ran if _calls_made(episode) > ran else None
            malformed = malformed + 1 if problem else 0
            if malformed >= MALFORMED_LIMIT:
                episode.end("malformed_limit", f"{MALFORMED_LIMIT} malformed replies in a row; the last: {problem}")

    def _log(self, reply: Reply, episode: Episode) -> dict[str, Any]:
        entry = {"request": self.tally.requests + 1, "t": episode.now(), "reply": reply.as_dict(),
                 **self.tally.add(reply.usage), "latency_s": reply.latency_s, "image_mode": self.image_mode,
                 "malformed": None, "call_index": None}
        self.calls.append(entry)
        return entry

    def _carry_out(self, reply: Reply, conversation: Conversation, episode: Episode) -> str | None:
        """Run the reply's first call; answer every call. Returns why the reply was malformed, if it was."""
        first, *others = reply.tool_calls
        problem, arguments = _parse_arguments(first.arguments)
        if problem is None and first.name not in episode.skills:
            problem = f"unknown tool {first.name!r}"
        elif problem is None and arguments is not None:
            try:
                episode.skills[first.name].validate(arguments)
            except SkillError as exc:
                problem = str(exc)
        if arguments is None:  # not a call the episode can even receive: answer it here
            conversation.answer(first.id, error=f"{problem}; send the arguments as a JSON object")
        else:
            result = episode.call(first.name, arguments)
            conversation.answer(first.id, result.data, result.error, result.events)
        for extra in others:
            conversation.answer(extra.id, error=f"{extra.name}: {ONE_AT_A_TIME}")
        return problem


def _calls_made(episode: Episode) -> int:
    """The episode's calls so far: the index its next call will have in the record's ``calls``."""
    return sum(1 for e in episode.trace if e["kind"] == "call")


def _parse_arguments(raw: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """(problem, arguments): arguments are a JSON object; empty text means no arguments."""
    text = (raw or "").strip()
    if not text:
        return None, {}
    if len(text) > MAX_ARGUMENT_CHARS:
        return f"arguments of {len(text)} characters (at most {MAX_ARGUMENT_CHARS})", None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"arguments are not valid JSON ({exc.msg} at character {exc.pos})", None
    if not isinstance(value, dict):
        return f"arguments must be a JSON object, got {type(value).__name__}", None
    return None, value


def api_key(api_key_env: str, base_url: str | None) -> str:
    """The API key a model client sends: the variable's value; :data:`NO_KEY` for a server named by
    a base URL when it is unset; a provider's own API without one is one line."""
    key = os.environ.get(api_key_env, "")
    if key:
        return key
    if base_url is None:
        raise HomeLoopError(f"the environment variable {api_key_env} holds no API key; set it, or pass "
                            "--base-url for a local server")
    return NO_KEY


def redact(text: str, key: str | None) -> str:
    """``text`` with the API key replaced by ``[key]`` (a provider's error may echo it)."""
    return text.replace(key, "[key]") if key and key != NO_KEY else text


#: HTTP statuses the providers' SDKs retry (a timeout, a conflict, a rate limit); every 5xx is retried too.
RETRIED_STATUSES = frozenset({408, 409, 429})


def retried(status: int) -> bool:
    """Whether a request that got ``status`` was retried by the SDK before it failed."""
    return status in RETRIED_STATUSES or status >= 500


def unanswered(endpoint: str, retries: int, timed_out: bool) -> EndEpisode:
    """The ending of a request that got no answer once the SDK's retries were spent."""
    what = "no answer in time" if timed_out else "not reachable"
    return EndEpisode("transport_error", f"{endpoint}: {what} after {retries} retries")


class ProtocolError(ValueError):
    """An answer that is not what the model's API sends; the message says what came back instead."""


def json_answer(text: str, api: str) -> Any:
    """A response body's JSON; where it is none, a :class:`ProtocolError` saying what came back (an
    HTML page by its title, malformed JSON, an empty body) and that it is not ``api``."""
    try:
        return json.loads(text)
    except ValueError as exc:
        if text.lstrip()[:1] == "<":
            title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
            what = "an HTML page" + (f" titled {title.group(1).strip()[:60]!r}" if title else "")
        else:
            what = f"malformed JSON ({exc})" if text.strip() else "an empty body"
        raise ProtocolError(f"answered {what}, not {api}") from None


def shape_of(data: Any) -> str:
    """What a JSON answer holds, for a message: an object's first keys, else its type."""
    return f"keys {', '.join(map(str, list(data)[:6]))}" if isinstance(data, dict) else type(data).__name__
