"""A small server that speaks the OpenAI chat-completions protocol, for tests and benchmarks.

It listens on 127.0.0.1 (a free port), serves ``GET /v1/models`` and
``POST /v1/chat/completions``, and answers each completion with the next
scripted reply of its queue; when the queue is empty, a *policy* (a function
of the request body) may answer instead, so concurrent conversations each
get the reply that fits their own history. Every request is kept
(``requests``) for assertions, with the seconds the server spent on it before
answering (``handled_s``, in the same order).

Replies are built with :func:`tool_call`, :func:`calls`, :func:`text`,
:func:`cut_off`, :func:`status`, :func:`slow` and, for what is not the protocol,
:func:`raw`, :func:`html` and :func:`bad_json`. A server given ``answer_all`` (one of
the last three) answers every request with it, as a web page at a mistyped URL would.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

#: The usage a scripted reply reports unless told otherwise.
USAGE = {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240,
         "prompt_tokens_details": {"cached_tokens": 800}}


def _completion(message: dict[str, Any], finish: str, usage: dict[str, Any] | None, model: str) -> dict:
    body = {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, *, call_id: str | None = None,
              usage: dict[str, Any] | None = USAGE) -> dict[str, Any]:
    """A reply calling one tool (``arguments`` as an object, or raw text, malformed if you like)."""
    return calls([(name, arguments)], usage=usage, ids=[call_id] if call_id else None)


def calls(items: list[tuple[str, Any]], *, usage: dict[str, Any] | None = USAGE,
          ids: list[str] | None = None) -> dict[str, Any]:
    """A reply calling several tools at once."""
    tool_calls = []
    for i, (name, arguments) in enumerate(items):
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
        tool_calls.append({"id": (ids[i] if ids else None) or f"call_{name}_{i}", "type": "function",
                           "function": {"name": name, "arguments": raw}})
    return {"message": {"content": None, "tool_calls": tool_calls}, "finish": "tool_calls", "usage": usage}


def text(content: str, *, usage: dict[str, Any] | None = USAGE) -> dict[str, Any]:
    """A reply with no tool call: the agent's final summary."""
    return {"message": {"content": content}, "finish": "stop", "usage": usage}


def cut_off(reason: str = "length") -> dict[str, Any]:
    """A reply the provider ended early (``length`` or ``content_filter``)."""
    return {"message": {"content": "I will now call hub_set_st"}, "finish": reason, "usage": USAGE}


def status(code: int, message: str = "scripted failure", **headers: str) -> dict[str, Any]:
    """An HTTP error with an OpenAI-style error body."""
    return {"status": code, "error": message, "headers": headers}


def slow() -> dict[str, Any]:
    """A reply held back until the server stops (the client's timeout fires first)."""
    return {"slow": True}


def raw(body: str, content_type: str = "application/json") -> dict[str, Any]:
    """A 200 reply whose body is ``body`` as given: not necessarily a chat completion."""
    return {"raw": body, "content_type": content_type}


def html() -> dict[str, Any]:
    """A web page, as a server that is not the OpenAI API answers."""
    return raw("<!DOCTYPE html><html><head><title>Welcome</title></head><body>It works!</body></html>",
               "text/html; charset=utf-8")


def bad_json() -> dict[str, Any]:
    """A body labelled JSON that is cut off mid-object."""
    return raw('{"id": "chatcmpl-test", "object": "chat.completion", "choices": [{"index": 0, "mess')


class _Handler(BaseHTTPRequestHandler):
    server: "_HTTPServer"

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, spec: dict[str, Any]) -> None:
        data = spec["raw"].encode()
        self.send_response(200)
        self.send_header("Content-Type", spec["content_type"])
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        owner = self.server.owner
        given = self.headers.get("Authorization", "")
        if owner.key is None or given == f"Bearer {owner.key}":
            return True
        # Like some providers, echo what was sent: the client must never repeat it.
        self._send(401, {"error": {"message": f"Incorrect API key provided: {given.removeprefix('Bearer ')}",
                                   "type": "invalid_request_error", "code": "invalid_api_key"}})
        return False

    def do_GET(self) -> None:  # noqa: N802
        owner = self.server.owner
        if owner.answer_all is not None:
            self._send_raw(owner.answer_all)
            return
        if not self._authorized():
            return
        if self.path.rstrip("/") == "/v1/models" and owner.serve_models:
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                          "owned_by": "test"} for m in owner.models]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        started = time.perf_counter()
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        owner = self.server.owner
        if owner.answer_all is not None:
            owner.next_reply(body)  # kept for assertions
            self._send_raw(owner.answer_all)
            return
        if not self._authorized():
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        if body.get("model") not in owner.models:
            self._send(404, {"error": {"message": f"model {body.get('model')!r} not found", "type": "not_found"}})
            return
        spec = owner.next_reply(body)
        owner.add_handling(time.perf_counter() - started)
        if spec.get("slow"):
            owner.release.wait(timeout=60)
            return
        if "raw" in spec:
            self._send_raw(spec)
            return
        if "status" in spec:
            self._send(spec["status"], {"error": {"message": spec["error"], "type": "scripted"}}, spec["headers"])
            return
        self._send(200, _completion(spec["message"], spec["finish"], spec.get("usage"), body["model"]))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ChatServer"


class ScriptedReplies:
    """A server's scripted replies: each request takes the next one of the queue, then, when the
    queue is empty, what :meth:`unscripted` says; every request body is kept in ``requests``."""

    def __init__(self) -> None:
        self.queue: deque[dict[str, Any]] = deque()
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def script(self, *replies: dict[str, Any]) -> None:
        with self._lock:
            self.queue.extend(replies)

    def next_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            if self.queue:
                return self.queue.popleft()
        return self.unscripted(body)

    def unscripted(self, body: dict[str, Any]) -> dict[str, Any]:
        return status(500, "no scripted reply left")


class ChatServer(ScriptedReplies):
    """The server (see the module docstring); use as a context manager, or start() and stop()."""

    def __init__(self, models: tuple[str, ...] = ("test-model",), *, key: str | None = None,
                 policy: Callable[[dict[str, Any]], dict[str, Any]] | None = None, serve_models: bool = True,
                 answer_all: dict[str, Any] | None = None):
        super().__init__()
        self.models, self.key, self.policy, self.serve_models = models, key, policy, serve_models
        self.answer_all = answer_all
        self.release = threading.Event()
        self.handling_s = 0.0
        self.handled_s: list[float] = []
        self._http: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._http is not None, "the server is not started"
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def unscripted(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.policy(body) if self.policy is not None else super().unscripted(body)

    def add_handling(self, seconds: float) -> None:
        with self._lock:
            self.handling_s += seconds
            self.handled_s.append(seconds)

    def start(self) -> "ChatServer":
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.owner = self
        self._thread = threading.Thread(target=self._http.serve_forever, name="chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
