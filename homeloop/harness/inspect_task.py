"""HomeLoop's episodes as an Inspect task (``inspect eval homeloop/benchmark``, docs/agents.md "Inspect").

:func:`make_task` turns planned episodes into an Inspect :class:`~inspect_ai.Task`, one sample per
home x task x seed (the top-floor module :mod:`homeloop.inspect` plans them as ``homeloop bench
run`` does and registers the task). Each sample is played through a
:class:`~homeloop.harness.session.Session`, so the episode is set up, limited, judged and recorded
by the benchmark's runner:

- **solver** :func:`play_episode`: opens the conversation with the role prompt and the rooms and
  wake event (bench run's first two messages), offers the episode's skills as tools (their names,
  descriptions and JSON schemas) and ``finish(summary)``, and then asks the model, carries out the
  first tool call of each reply and answers every call, as bench run's chat agents do
  (:mod:`homeloop.bench.agents.conversation`): a result is the text ``{"data", "error", "events"}``,
  a capture's image leaving it to follow as image content; further calls of the same reply are
  answered that they did not run; a reply with no tool call stops the episode with its text as the
  summary. Arguments Inspect could not parse reach the episode as a call of the unknown tool
  :data:`MALFORMED_CALL`, so they, an unknown tool and arguments the skill refuses count as
  malformed, and :data:`~homeloop.bench.agents.conversation.MALFORMED_LIMIT` in a row end the
  episode ``malformed_limit``. The episode ends ``request_limit`` after ``max_requests`` model
  requests (or at one of Inspect's own limits), ``incomplete_reply`` when the provider cut a reply
  off, and ``transport_error`` (not scored) when the model could not be asked or the run was stopped.
- **scorer** :func:`episode_checks`: the runner's checks decide; the score is ``C`` for a passed
  episode, and its metadata holds the whole record under :data:`RECORD_KEY`, so the Inspect log
  carries it (``homeloop bench score`` reads it there: :mod:`homeloop.harness.inspect_logs`).

The record names the agent ``inspect`` and the model as Inspect names it (``openai/gpt-4o``), with
the requests, tokens and cost (from ``catalog/pricing.yaml``, by the name after the provider) and
one ``model_calls`` entry per request, as a chat agent's record has them.

Records go to the run folder ``out`` (epochs after the first to ``out/epoch-N``); a folder that
already holds a sample's complete record refuses that sample, as ``homeloop mcp`` does. Episodes of
one run folder play side by side in this process; the same episode (the same id) plays one at a
time, since a session is found by its episode's id.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (ChatMessageSystem, ChatMessageTool, ChatMessageUser, Content, ContentImage,
                              ContentText, ModelOutput)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolCall, ToolDef, ToolParams
from inspect_ai.util import LimitExceededError, sample_limits

from homeloop.bench import runner
from homeloop.bench.agents.conversation import (DEFAULT_MAX_REQUESTS, DEFAULT_PROMPT, ONE_AT_A_TIME, Reply,
                                                check_prompt, role_prompt, take_images, wake_message)
from homeloop.bench.agents.conversation import ToolCall as ReplyCall
from homeloop.bench.agents.pricing import Tally, price_of
from homeloop.bench.records import read_record, record_path
from homeloop.core.errors import HomeLoopError
from homeloop.harness.mcp_server import FINISH, FINISH_DESCRIPTION, FINISH_SCHEMA
from homeloop.harness.session import Answer, Session, SessionAgent, start
from homeloop.sim.skills import SkillError

#: How the runner finds :class:`InspectAgent` (the plug-in lookup, docs/agents.md).
AGENT = f"{__name__}:InspectAgent"

#: The score metadata key that holds the episode's record.
RECORD_KEY = "homeloop_record"

#: The sample store key that holds the record's path, for the scorer.
RECORD_PATH_KEY = "homeloop_record_path"

#: The tool a call reaches the episode as when Inspect could not parse its arguments (no skill has
#: this name, so it counts as malformed).
MALFORMED_CALL = "<malformed call>"

#: The request the solver ends an episode with (a limit, a reply cut off, a model not reached); the
#: agent carries it out only while the solver has set the ending.
END_REQUEST = "<end episode>"

#: Inspect's stop reasons of a reply the provider did not complete.
INCOMPLETE_STOPS = frozenset({"max_tokens", "model_length", "content_filter"})

#: Words in the names of environment variables whose values never reach a record.
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


# --- what the runner records about the model -----------------------------------------------------------


@dataclass
class _Play:
    """The model's side of one episode, shared by the solver and the agent the runner records."""

    model: str
    prompt: str
    max_image_side: int | None
    tally: Tally
    calls: list[dict[str, Any]] = field(default_factory=list)
    ending: tuple[str, str] | None = None


#: The episodes being played in this process, by episode id (the agent finds its play by its session's id).
_PLAYS: dict[str, _Play] = {}

#: Per event loop, one lock per episode id: a session is found by its episode's id, so an episode plays
#: once at a time in a process.
_EPISODE_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary())

#: The records being written, by path: set once the runner has written the record (the scorer waits for it).
_WRITTEN: dict[str, threading.Event] = {}


class InspectAgent(SessionAgent):
    """The session's agent, named for the records: a model played through Inspect."""

    name = "inspect"

    def __init__(self, session: str, max_requests: int = DEFAULT_MAX_REQUESTS, **options: Any):
        super().__init__(session, max_requests, **options)
        if session not in _PLAYS:
            raise HomeLoopError(f"no Inspect sample plays episode {session!r} in this process")
        self.play = _PLAYS[session]
        self.model = self.play.model
        self.calls = self.play.calls

    @property
    def usage(self) -> dict[str, Any]:
        return self.play.tally.summary()

    @property
    def conditions(self) -> dict[str, Any]:
        """What the model was told and shown, for the record's agent section."""
        return {"prompt": self.play.prompt, "max_image_side": self.play.max_image_side}

    def _carry_out(self, episode: Any, request: Any, malformed: int) -> int:
        ending = self.play.ending
        if request.tool == END_REQUEST and ending is not None:
            episode.end(*ending)
            request.reply.set_result(Answer(ended_by=episode.ended_by))
            return malformed
        return super()._carry_out(episode, request, malformed)


# --- the task -------------------------------------------------------------------------------------------


def make_task(specs: list[runner.EpisodeSpec], out: Path, *, prompt: str = DEFAULT_PROMPT,
              max_requests: int = DEFAULT_MAX_REQUESTS, max_image_side: int | None = None) -> Task:
    """The Inspect task of ``specs``: one sample per episode, played into run folder ``out``."""
    check_prompt(prompt)
    if int(max_requests) < 1:
        raise HomeLoopError(f"max_requests takes a whole number, at least 1; got {max_requests}")
    if max_image_side is not None and int(max_image_side) < 1:
        raise HomeLoopError(f"max_image_side takes a whole number of pixels, at least 1; got {max_image_side}")
    samples = [Sample(id=s.id, input=f"{s.task} in home {s.home}, robot {s.robot}, seed {s.seed}",
                      metadata={"episode": _spec_metadata(s)}) for s in specs]
    return Task(dataset=MemoryDataset(samples, name="homeloop"),
                solver=play_episode(str(Path(out).resolve()), prompt, int(max_requests), max_image_side),
                scorer=episode_checks())


def _spec_metadata(spec: runner.EpisodeSpec) -> dict[str, Any]:
    return {**asdict(spec), "flags": asdict(spec.flags)}


def spec_of(metadata: dict[str, Any]) -> runner.EpisodeSpec:
    """The episode a sample's metadata names."""
    given = dict(metadata["episode"])
    flags = runner.Flags.from_recorded(given.pop("flags"))
    return runner.EpisodeSpec(**given, flags=flags)


def run_folder(out: str | Path, epoch: int) -> Path:
    """Where an epoch's records go: ``out``, and ``out/epoch-N`` for the epochs after the first."""
    return Path(out) if epoch <= 1 else Path(out) / f"epoch-{epoch}"


# --- the solver -------------------------------------------------------------------------------------------


@solver
def play_episode(out: str, prompt: str = DEFAULT_PROMPT, max_requests: int = DEFAULT_MAX_REQUESTS,
                 max_image_side: int | None = None) -> Solver:
    """Play the sample's episode with the model (see the module docstring)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = spec_of(state.metadata)
        run_dir = run_folder(out, state.epoch)
        locks = _EPISODE_LOCKS.setdefault(asyncio.get_running_loop(), {})
        async with locks.setdefault(spec.id, asyncio.Lock()):
            play = _Play(str(state.model), prompt, max_image_side, Tally(price=price_of(state.model.name)))
            _PLAYS[spec.id] = play
            try:
                # room for the solver's own ending after the last request (the request limit is the solver's)
                session = await asyncio.to_thread(start, spec, run_dir, max_requests + 1, AGENT)
            finally:
                _PLAYS.pop(spec.id, None)  # the agent holds its play from here on
            if session.episode is None:
                raise HomeLoopError(session.failure or f"episode {spec.id} was not played")
            path = str(record_path(run_dir, spec.id))
            state.store.set(RECORD_PATH_KEY, path)
            _WRITTEN[path] = session.finished
            await _play_through(state, generate, session, play, max_requests)
            if session.failure:
                raise HomeLoopError(session.failure)
        return state

    return solve


async def _play_through(state: TaskState, generate: Generate, session: Session, play: _Play,
                        max_requests: int) -> None:
    """The conversation, then the record written; the episode always ends, whatever stops the solver."""
    try:
        await _converse(state, generate, session, play, max_requests)
    except LimitExceededError as exc:  # Inspect scores the sample still
        await _end(session, play, "request_limit", f"Inspect's {exc.type} limit ({exc.limit_str})")
        raise
    except BaseException as exc:  # no await here: a cancelled solver ends the episode all the same
        play.ending = interrupted(exc)
        session.call(END_REQUEST, {})
        raise
    finally:
        session.close()
    await asyncio.to_thread(session.finished.wait)


def interrupted(exc: BaseException) -> tuple[str, str]:
    """How an episode ends when the solver is stopped: ``request_limit`` at Inspect's time or working
    limit (Inspect stops the solver there, and scores the sample), else ``transport_error``, not scored:
    the model could not be asked once Inspect's retries were spent, or the run was stopped."""
    try:
        limits = sample_limits()
    except RuntimeError:  # no sample runs
        limits = None
    for name, limit in ((("time", limits.time), ("working", limits.working)) if limits else ()):
        if limit.limit is not None and limit.usage >= limit.limit:
            return "request_limit", f"Inspect's {name} limit ({limit.limit:g} s)"
    if isinstance(exc, Exception):
        return "transport_error", scrub(f"{type(exc).__name__}: {exc}")
    return "transport_error", f"the run was stopped before the episode ended ({type(exc).__name__})"


async def _converse(state: TaskState, generate: Generate, session: Session, play: _Play, max_requests: int) -> None:
    """Ask, carry out, answer, until the episode ends."""
    episode = session.episode
    assert episode is not None
    state.messages = [ChatMessageSystem(content=role_prompt(episode.images, play.prompt)),
                      ChatMessageUser(content=wake_message(episode.wake))]
    state.tools = tools(session)
    while True:
        if play.tally.requests >= max_requests:
            await _end(session, play, "request_limit", f"{max_requests} requests to the model")
            return
        state = await generate(state, tool_calls="none")
        entry = _log(play, state.output, episode.now())
        if state.output.stop_reason in INCOMPLETE_STOPS:
            await _end(session, play, "incomplete_reply",
                       f"the provider ended the reply early ({state.output.stop_reason})")
            return
        calls = state.output.message.tool_calls or []
        if not calls:
            await asyncio.wrap_future(session.finish(state.output.message.text))
            return
        answer = await _carry_out(state, session, calls, entry, play.max_image_side)
        if answer.ended_by is not None:
            return


async def _end(session: Session, play: _Play, reason: str, detail: str) -> Answer:
    """End the episode on the solver's side (see :class:`InspectAgent`)."""
    play.ending = (reason, detail)
    return await asyncio.wrap_future(session.call(END_REQUEST, {}))


def _log(play: _Play, output: ModelOutput, now: float) -> dict[str, Any]:
    """The request's entry in the record's ``model_calls``, as a chat agent keeps it."""
    message = output.message
    reply = Reply(message.text or None,
                  tuple(ReplyCall(c.id, c.function, json.dumps(c.arguments, ensure_ascii=False))
                        for c in message.tool_calls or []),
                  output.stop_reason, usage=_usage(output), latency_s=output.time)
    entry: dict[str, Any] = {"request": play.tally.requests + 1, "t": now, "reply": reply.as_dict(),
                             **play.tally.add(reply.usage), "latency_s": reply.latency_s, "malformed": None,
                             "call_index": None}
    play.calls.append(entry)
    return entry


def _usage(output: ModelOutput) -> dict[str, Any] | None:
    """Inspect's usage in the Messages API's terms (its input tokens leave the cached ones out, as there)."""
    usage = output.usage
    if usage is None:
        return None
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_read_input_tokens": usage.input_tokens_cache_read,
            "cache_creation_input_tokens": usage.input_tokens_cache_write}


async def _carry_out(state: TaskState, session: Session, calls: list[ToolCall], entry: dict[str, Any],
                     max_image_side: int | None) -> Answer:
    """Run the reply's first call, answer every call; the entry learns what the call was."""
    first, *others = calls
    episode = session.episode
    assert episode is not None
    unparsed = first.parse_error or (None if isinstance(first.arguments, dict) else
                                     f"arguments must be a JSON object, got {type(first.arguments).__name__}")
    if first.function == FINISH and unparsed is None:
        answer = await asyncio.wrap_future(session.finish(str(first.arguments.get("summary") or "")))
        error = answer.error
    else:
        entry["call_index"] = sum(1 for e in episode.trace if e["kind"] == "call")  # read while the episode waits
        if unparsed is not None:
            entry["malformed"] = unparsed
            future = session.call(MALFORMED_CALL, {"tool": first.function, "problem": unparsed})
        else:
            entry["malformed"] = _refusal(episode, first.function, first.arguments)
            future = session.call(first.function, first.arguments)
        answer = await asyncio.wrap_future(future)
        error = f"{unparsed}; send the arguments as a JSON object" if unparsed else answer.error
    state.messages.append(tool_message(first, Answer(answer.data, error, answer.events), max_image_side))
    for extra in others:
        state.messages.append(tool_message(extra, Answer(error=f"{extra.function}: {ONE_AT_A_TIME}"), None))
    return answer


def _refusal(episode: Any, tool: str, arguments: dict[str, Any]) -> str | None:
    """Why the episode counts the call as malformed, if it does (the session's own judgement)."""
    if tool not in episode.skills:
        return f"unknown tool {tool!r}"
    try:
        episode.skills[tool].validate(arguments)
    except SkillError as exc:
        return str(exc)
    return None


def tool_message(call: ToolCall, answer: Answer, max_image_side: int | None) -> ChatMessageTool:
    """An answer as the model reads it: the text ``{"data", "error", "events"}``, then each image."""
    found: list[tuple[str, str]] = []
    data = take_images(answer.data, found, max_image_side)
    text = json.dumps({"data": data, "error": answer.error, "events": answer.events}, ensure_ascii=False,
                      separators=(",", ":"), default=str)
    content: list[Content] = [ContentText(text=text)]
    for label, url in found:
        content += [ContentText(text=f"{label}:"), ContentImage(image=url)]
    return ChatMessageTool(content=content, tool_call_id=call.id, function=call.function)


def tools(session: Session) -> list[Tool]:
    """The episode's skills as Inspect tools (their names, descriptions and schemas), then ``finish``.
    The solver carries the calls out itself; the tools' own functions are not called."""
    assert session.episode is not None
    listed = [(t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
              for t in session.episode.tools()]
    return [ToolDef(_carried_out_by_the_solver(), name=name, description=description,
                    parameters=ToolParams.model_validate(schema)).as_tool()
            for name, description, schema in [*listed, (FINISH, FINISH_DESCRIPTION, FINISH_SCHEMA)]]


def _carried_out_by_the_solver() -> Callable[..., Awaitable[str]]:
    """A tool's function, one per tool (Inspect names a tool by marking its function)."""
    async def refuse(**arguments: Any) -> str:
        raise HomeLoopError("HomeLoop's tools are carried out by its solver (homeloop.harness.inspect_task)")

    return refuse


def scrub(text: str) -> str:
    """``text`` with the value of every secret-looking environment variable replaced by ``[secret]``."""
    for name, value in os.environ.items():
        if len(value) >= 8 and any(word in name.upper() for word in SECRET_WORDS):
            text = text.replace(value, "[secret]")
    return text


# --- the scorer -------------------------------------------------------------------------------------------


@scorer(metrics=[accuracy(), stderr()])
def episode_checks() -> Scorer:
    """The runner's checks decide: ``C`` when the episode passed; the record in the score's metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        path = state.store.get(RECORD_PATH_KEY)
        if not path:
            raise HomeLoopError(f"sample {state.sample_id}: no episode was played, so there is nothing to score")
        written = _WRITTEN.pop(path, None)
        if written is not None:  # a solver stopped by a limit leaves the runner writing the record
            await asyncio.to_thread(written.wait)
        record = await asyncio.to_thread(read_record, path)
        failed = [c["id"] for c in record["checks"] if not c["passed"]]
        said = "passed" if record["passed"] else "failed" + (f" ({', '.join(failed)})" if failed else "")
        return Score(value=CORRECT if record["passed"] else INCORRECT, answer=record["ended_by"],
                     explanation=f"{said}; ended by {record['ended_by']}; record {path}",
                     metadata={RECORD_KEY: record})

    return score
