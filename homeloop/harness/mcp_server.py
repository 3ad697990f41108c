"""One episode served to an MCP client (``homeloop mcp``, docs/agents.md "MCP").

The server is the official ``mcp`` SDK's low-level :class:`~mcp.server.lowlevel.Server` over a
:class:`~homeloop.harness.session.Session`, so the episode is played, limited and recorded as
``homeloop bench run`` plays one:

- **tools**: the episode's skills, with the same names, JSON schemas and descriptions (costs
  among them with ``--show-costs``), and ``finish(summary)``, which ends the episode. A result is
  the text ``{"data", "error", "events"}`` a model reads in bench run; a capture's image leaves
  that text and comes as image content after it, its sizes stated (``image_size``). A result
  with an error is marked ``isError``; an unknown tool or arguments the skill refuses count as
  malformed, as a model's replies do.
- **prompts**: ``homeloop_episode``, the role prompt and then the rooms and the wake event (the
  two messages bench run opens a model's conversation with).
- **resources**: ``homeloop://episode/role-prompt`` (Markdown) and ``homeloop://episode/wake``
  (JSON: the wake event and the rooms).

Over stdio the episode ends at ``finish`` or when the client closes the session. Over streamable
HTTP (127.0.0.1 only) the server takes one session, the one of the first client: the SDK's
session limit refuses any other while it is open, and requests of the session-less protocol era
are refused so that every client opens a session. It ends at ``finish`` or when the server is
stopped (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, Awaitable, Callable

import mcp.types as types
from mcp.server import Server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from homeloop.bench.agents.conversation import DEFAULT_PROMPT, role_prompt, take_images, wake_message
from homeloop.harness.session import Answer, Session

#: The tool that ends the episode with the agent's summary.
FINISH = "finish"

FINISH_DESCRIPTION = ("End the episode: a text summary of what was done, what was found and what remains, "
                      "saying what you are unsure of and why. No call can be made after it.")
FINISH_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["summary"],
    "properties": {"summary": {"type": "string", "description": "what was done, found and left"}}}

PROMPT = "homeloop_episode"
ROLE_URI = "homeloop://episode/role-prompt"
WAKE_URI = "homeloop://episode/wake"

ASGIApp = Callable[[dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def tools(session: Session) -> list[types.Tool]:
    """The episode's skills as MCP tools, then ``finish``."""
    assert session.episode is not None
    listed = [types.Tool(name=t["function"]["name"], description=t["function"]["description"],
                         input_schema=t["function"]["parameters"]) for t in session.episode.tools()]
    return [*listed, types.Tool(name=FINISH, description=FINISH_DESCRIPTION, input_schema=FINISH_SCHEMA)]


def result_content(answer: Answer, max_image_side: int | None = None) -> types.CallToolResult:
    """A call's answer as an MCP result: its JSON text, then each image it carried (as the chat
    agents send them: :func:`homeloop.bench.agents.conversation.take_images`)."""
    found: list[tuple[str, str]] = []
    data = take_images(answer.data, found, max_image_side)
    text = json.dumps({"data": data, "error": answer.error, "events": answer.events}, ensure_ascii=False,
                      separators=(",", ":"), default=str)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    for _, url in found:
        mime, _, payload = url.removeprefix("data:").partition(";base64,")
        content.append(types.ImageContent(type="image", data=payload, mime_type=mime))
    return types.CallToolResult(content=content, is_error=answer.error is not None)


def build_server(session: Session, prompt: str = DEFAULT_PROMPT, max_image_side: int | None = None) -> Server[Any]:
    """The MCP server of one session's episode (see the module docstring)."""
    episode = session.episode
    assert episode is not None
    role = role_prompt(episode.images, prompt)
    wake_text = json.dumps(episode.wake, ensure_ascii=False, indent=2)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools(session))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name == FINISH:
            future = session.finish(str(arguments.get("summary") or ""))
        else:
            future = session.call(params.name, arguments)
        return result_content(await asyncio.wrap_future(future), max_image_side)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=PROMPT, description="The role prompt, then the rooms of the home and the event that woke you.")])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT:
            raise ValueError(f"unknown prompt {params.name!r}; prompts: {PROMPT}")
        messages = [types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
                    for text in (role, wake_message(episode.wake))]
        return types.GetPromptResult(description="The start of a HomeLoop episode.", messages=messages)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(name="role-prompt", uri=ROLE_URI, mime_type="text/markdown",
                           description="Who you are and the rules of the episode."),
            types.Resource(name="wake", uri=WAKE_URI, mime_type="application/json",
                           description="The event that woke you and the rooms of the home.")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        texts = {ROLE_URI: ("text/markdown", role), WAKE_URI: ("application/json", wake_text)}
        if str(params.uri) not in texts:
            raise ValueError(f"unknown resource {params.uri}; resources: {', '.join(texts)}")
        mime, text = texts[str(params.uri)]
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), mime_type=mime,
                                                                             text=text)])

    return Server("homeloop", instructions=role, on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_prompts=list_prompts, on_get_prompt=get_prompt, on_list_resources=list_resources,
                  on_read_resource=read_resource)


async def serve_stdio(server: Server[Any], session: Session) -> None:
    """Serve over stdin and stdout until the client closes the session; then the episode ends."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
    await asyncio.wrap_future(session.close())


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` (0: a free port), so clients can connect from now on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(16)
    return sock


async def serve_http(server: Server[Any], session: Session, sock: socket.socket) -> None:
    """Serve streamable HTTP on ``sock`` (at ``/mcp``) to one session, until the episode has ended or
    the server is stopped; then the episode ends."""
    import uvicorn

    app = server.streamable_http_app(max_sessions=1, session_idle_timeout=None, host="127.0.0.1")
    config = uvicorn.Config(_sessions_only(app), log_level="warning", lifespan="on")
    web = uvicorn.Server(config)

    async def stop_when_ended() -> None:
        await asyncio.to_thread(session.finished.wait)
        web.should_exit = True

    watcher = asyncio.create_task(stop_when_ended())
    try:
        await web.serve(sockets=[sock])
    finally:
        await asyncio.wrap_future(session.close())
        watcher.cancel()


def _sessions_only(app: ASGIApp) -> ASGIApp:
    """``app`` refusing the session-less protocol era (HTTP 400, a JSON-RPC error): a client then
    opens a session with the initialize handshake, and the session limit holds."""
    modern = {v.encode() for v in MODERN_PROTOCOL_VERSIONS}

    async def guarded(scope: dict[str, Any], receive: Callable[[], Awaitable[Any]],
                      send: Callable[[Any], Awaitable[None]]) -> None:
        version = dict(scope.get("headers") or []).get(b"mcp-protocol-version") if scope["type"] == "http" else None
        if version in modern:
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "this server plays one episode with one session: open one with the "
                                           "initialize handshake"}}).encode()
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return guarded
