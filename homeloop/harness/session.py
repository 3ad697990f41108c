"""One benchmark episode driven call by call from outside: the seam of every harness.

:func:`start` plays an episode with the benchmark's runner (:func:`homeloop.bench.runner.run`)
in a thread of its own, so the episode is set up, monitored, ended and recorded exactly as
``homeloop bench run`` does it. The agent the runner plays is :class:`SessionAgent`: it takes
each call from a :class:`Session` and hands back the episode's result, so a client on any other
thread (an MCP server's handlers) plays the episode with :meth:`Session.call`,
:meth:`Session.finish` and :meth:`Session.close`.

The limits are those of a model's episode (docs/agents.md): at most ``max_requests`` calls,
``finish`` included; :data:`~homeloop.bench.agents.conversation.MALFORMED_LIMIT` malformed calls
in a row (an unknown tool, arguments the skill refuses) end it ``malformed_limit``. The episode
enforces the budget and horizon. Closing the session without ``finish`` stops the episode with
no summary.
"""

from __future__ import annotations

import concurrent.futures as cf
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from homeloop.bench import runner
from homeloop.bench.agents.conversation import DEFAULT_MAX_REQUESTS, MALFORMED_LIMIT
from homeloop.bench.records import UNSCORED_ENDINGS, RecordError, read_record, record_path
from homeloop.core.errors import HomeLoopError
from homeloop.sim.skills import SkillError

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode

#: How the runner finds :class:`SessionAgent` (the plug-in lookup, docs/agents.md).
AGENT = "homeloop.harness.session:SessionAgent"

#: The sessions being played in this process, by episode id (a session is handed to its agent by id,
#: since agent options are recorded as JSON).
_SESSIONS: dict[str, Session] = {}


@dataclass(frozen=True)
class Answer:
    """What a call gets back: the result's data, error and events, and the ending once the
    episode has ended (None while it runs)."""

    data: Any = None
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    ended_by: str | None = None


@dataclass(frozen=True)
class _Request:
    tool: str | None  # None: the client finishes (summary) or closes the session
    arguments: dict[str, Any]
    summary: str | None
    reply: cf.Future[Answer]


class Session:
    """The two sides of one episode: the client's calls in, the episode's answers out."""

    def __init__(self, episode_id: str, max_requests: int = DEFAULT_MAX_REQUESTS):
        if int(max_requests) < 1:
            raise HomeLoopError(f"--max-requests takes a whole number, at least 1; got {max_requests}")
        self.episode_id, self.max_requests = episode_id, int(max_requests)
        self.ready = threading.Event()  # set when the episode is set up, or when it could not be
        self.finished = threading.Event()  # set when the runner is done (the record written)
        self.episode: Episode | None = None
        self.summary: dict[str, Any] | None = None  # the runner's summary of the episode
        self.failure: str = ""
        self._requests: queue.Queue[_Request] = queue.Queue()
        self._lock = threading.Lock()
        self._ended_by: str | None = None

    # --- the client's side (any thread) --------------------------------------------------------

    def call(self, tool: str, arguments: dict[str, Any]) -> cf.Future[Answer]:
        """Ask for one skill call; the future holds its answer."""
        return self._submit(_Request(tool, dict(arguments), None, cf.Future()))

    def finish(self, summary: str) -> cf.Future[Answer]:
        """End the episode with the agent's summary (the ``finish`` tool)."""
        return self._submit(_Request(None, {}, summary, cf.Future()))

    def close(self) -> cf.Future[Answer]:
        """The client went away: the episode stops with no summary, if it still runs."""
        return self._submit(_Request(None, {}, None, cf.Future()))

    def _submit(self, request: _Request) -> cf.Future[Answer]:
        with self._lock:
            if self._ended_by is None:
                self._requests.put(request)
                return request.reply
        request.reply.set_result(Answer(error=f"the episode has ended ({self._ended_by})", ended_by=self._ended_by))
        return request.reply

    # --- the episode's side (the runner's thread) ------------------------------------------------

    def next_request(self) -> _Request:
        return self._requests.get()

    def ended(self, reason: str) -> None:
        """The episode is over: answer whatever is still waiting, and every later request, so."""
        with self._lock:
            self._ended_by = reason
        while True:
            try:
                waiting = self._requests.get_nowait()
            except queue.Empty:
                return
            waiting.reply.set_result(Answer(error=f"the episode has ended ({reason})", ended_by=reason))


class SessionAgent:
    """The agent the runner plays for a session (see the module docstring)."""

    name = "mcp"
    model: str | None = None

    def __init__(self, session: str, max_requests: int = DEFAULT_MAX_REQUESTS, **_: Any):
        if session not in _SESSIONS:
            raise HomeLoopError(f"no session {session!r} in this process; harness agents are started by "
                                "homeloop mcp, not by bench run")
        self.session = _SESSIONS[session]
        self.requests = 0

    @property
    def usage(self) -> dict[str, Any]:
        return {"requests": self.requests}

    def run(self, episode: Episode) -> None:
        session = self.session
        session.episode = episode
        session.ready.set()
        malformed = 0
        try:
            while not episode.done:
                request = session.next_request()
                self.requests += 1
                if self.requests > session.max_requests:
                    episode.end("request_limit", f"{session.max_requests} requests from the client")
                    request.reply.set_result(Answer(error=f"the episode has ended ({episode.ended_by})",
                                                    ended_by=episode.ended_by))
                    break
                if request.tool is None:
                    episode.stop(request.summary or "")
                    request.reply.set_result(Answer(data={"ended_by": episode.ended_by}, ended_by=episode.ended_by))
                    break
                malformed = self._carry_out(episode, request, malformed)
        finally:
            session.ended(episode.ended_by or "agent_error")

    def _carry_out(self, episode: Episode, request: _Request, malformed: int) -> int:
        """Run one call as a model's would run (the same problems count as malformed); returns the
        malformed calls in a row."""
        tool = request.tool or ""
        problem: str | None = None
        if tool not in episode.skills:
            problem = f"unknown tool {tool!r}"
        else:
            try:
                episode.skills[tool].validate(request.arguments)
            except SkillError as exc:
                problem = str(exc)
        result = episode.call(tool, request.arguments)
        malformed = malformed + 1 if problem else 0
        if malformed >= MALFORMED_LIMIT:
            episode.end("malformed_limit", f"{MALFORMED_LIMIT} malformed calls in a row; the last: {problem}")
        request.reply.set_result(Answer(result.data, result.error, list(result.events), episode.ended_by))
        return malformed


def start(spec: runner.EpisodeSpec, run_dir: Path, max_requests: int = DEFAULT_MAX_REQUESTS,
          agent: str = AGENT) -> Session:
    """Start playing ``spec`` into ``run_dir`` in a thread; returns once the episode is set up (its
    ``episode`` set) or could not be (``failure`` says why, in one line). A run folder that already
    holds the episode's complete record is refused. ``agent``: the :class:`SessionAgent` (or a
    subclass naming the harness in the records) as ``module.path:Name``."""
    path = record_path(Path(run_dir), spec.id)
    try:
        if path.exists() and read_record(path)["ended_by"] not in UNSCORED_ENDINGS:
            raise HomeLoopError(f"{run_dir} already holds the record of episode {spec.id}; give another --out")
    except RecordError:
        pass  # an unreadable record is played again, as bench run does
    session = Session(spec.id, max_requests)
    _SESSIONS[spec.id] = session

    def play() -> None:
        try:
            done = runner.run([spec], agent, Path(run_dir), agent_options={"session": spec.id,
                                                                            "max_requests": max_requests})
            session.summary = done[0] if done else None
            if session.summary and session.summary["ended_by"] == runner.NOT_SET_UP:
                session.failure = f"episode {spec.id} cannot be set up: {session.summary['error']}"
        except Exception as exc:  # said as one line by the command
            session.failure = str(exc) if isinstance(exc, HomeLoopError) else f"{type(exc).__name__}: {exc}"
        finally:
            _SESSIONS.pop(spec.id, None)
            session.ended(session.episode.ended_by if session.episode and session.episode.ended_by else "not_run")
            session.ready.set()
            session.finished.set()

    threading.Thread(target=play, name=f"episode {spec.id}", daemon=True).start()
    session.ready.wait()
    return session
