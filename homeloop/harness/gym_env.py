"""One benchmark episode as a Gymnasium environment (``HomeLoop-v0``, docs/agents.md "Gymnasium").

:class:`HomeLoopEnv` plays its episodes through a :class:`~homeloop.harness.session.Session`, so each
is set up, limited, judged and recorded as ``homeloop bench run`` does it; a policy's step is one
request of a model's episode.

- **Observation**: a dict of ``text``, the last result as the JSON text a model reads in bench run,
  ``{"data", "error", "events"}`` (after :meth:`HomeLoopEnv.reset`: the wake event and the rooms,
  ``{"event", "rooms"}``), and ``image``, the first image that result carried as an ``H x W x 3``
  uint8 array at ``image_size`` (other sizes resized; zeros when it carried none). In the text the
  image is a pointer with its sizes (``image_size``: ``original`` and ``observed``). The text is
  ASCII (``\\u`` escapes for the rest, as :func:`json.dumps` writes by default); one longer than
  ``max_text`` characters is cut there, ending in :data:`TRUNCATED`, and is then no longer JSON.
- **Action**: JSON text, ``{"tool": name, "arguments": {...}}`` (no ``arguments``: none), or
  ``{"stop": summary}`` (also ``{"tool": "stop", "arguments": {"summary": ...}}``), which ends the
  episode. Text that is no such object is answered with an error the policy can correct and counts
  as malformed, as do an unknown tool and arguments the skill refuses; it reaches the episode as a
  call of the unknown tool :data:`MALFORMED_TOOL` holding the text, so the record keeps it and the
  session's count of malformed calls in a row is the policy's.
- **Reward** 1.0 on the step that ends a passed episode, else 0.0. ``terminated`` when the episode
  ends (stop, budget, horizon, ``malformed_limit``, ``render_error``); ``truncated`` at the request
  limit: after ``max_requests`` steps the session refuses one more request and ends it
  ``request_limit``. ``info``: the call's ``error``, ``events`` and ``cost`` (units, simulated
  seconds, units spent of the budget), and on the last step ``ended_by``, ``passed`` and ``record``
  (the record's path).

Records go to ``out`` (a bench run folder; each reset plays one episode there, named by home, task,
robot, seed and flags); a folder that already holds the episode's record is refused, as ``homeloop
mcp`` refuses it. Without ``out`` they go to a temporary folder of the environment, removed at
:meth:`HomeLoopEnv.close` (or when the environment is dropped), where playing an episode again
replaces its record. A run folder is held by one episode at a time, so environments that run side
by side (a vector of them) each need their own ``out``. The record names the session's agent
(``gym``) and counts as requests the steps and the request refused at the limit.

``reset(seed=s)`` plays seed ``s``; ``reset()`` plays the seed given to the environment, then the
next one up at each reset. A reset while an episode runs ends that episode as closing an MCP
session does (a stop with no summary); so does :meth:`HomeLoopEnv.close`.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from PIL import Image, UnidentifiedImageError

from homeloop.bench import runner
from homeloop.bench.agents.conversation import DEFAULT_MAX_REQUESTS, MAX_ARGUMENT_CHARS, replace_images
from homeloop.bench.records import record_path
from homeloop.core.catalog import load_catalog
from homeloop.core.errors import HomeLoopError
from homeloop.core.home import Home
from homeloop.core.ids import DEFAULT_ROBOT
from homeloop.harness.session import Answer, Session, SessionAgent, start

#: The characters of an observation's text and an action's: printable ASCII (JSON escapes the rest).
CHARSET = frozenset(chr(c) for c in range(32, 127))

#: Default longest observation text (characters); a longer one is cut and ends in :data:`TRUNCATED`.
MAX_TEXT = 200_000

#: Longest action text the action space describes (a longer one is malformed).
MAX_ACTION = MAX_ARGUMENT_CHARS + 1_000

TRUNCATED = "<truncated>"

#: The tool a malformed action reaches the episode as (no skill has this name).
MALFORMED_TOOL = "<malformed action>"

#: The tool of the request past the limit (never carried out: the session ends the episode first).
LIMIT_TOOL = "<request limit>"

#: Characters of a malformed action the record keeps.
KEPT_ACTION_CHARS = 2_000

STOP = "stop"

Observation = dict[str, Any]


class GymAgent(SessionAgent):
    """The session's agent, named for the records: a policy played through Gymnasium."""

    name = "gym"


class HomeLoopEnv(gym.Env[Observation, str]):
    """A HomeLoop task in a home as a Gymnasium environment (see the module docstring).

    ``home``: a folder holding ``home.json`` (a build's ``homes/<id>/``) or the file itself.
    ``image_size``: (height, width) of the observed image; default the robot's head camera's."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, home: str | Path, task: str, seed: int = 0, *, robot: str = DEFAULT_ROBOT,
                 out: str | Path | None = None, images: bool = True, withheld: tuple[str, ...] | list[str] = (),
                 show_costs: bool = False, max_requests: int = DEFAULT_MAX_REQUESTS,
                 image_size: tuple[int, int] | None = None, max_text: int = MAX_TEXT):
        self.home_file = _home_file(home)
        home_id = Home.from_json(self.home_file.read_text(encoding="utf-8"), where=str(self.home_file)).home_id
        self.flags = runner.Flags(tuple(sorted(withheld)), show_costs, images)
        runner.plan({home_id: self.home_file}, [task], robot, [int(seed)], self.flags)  # refuses unsafe ids
        if robot not in load_catalog().robots:
            raise HomeLoopError(f"unknown robot {robot!r}; bodies: {', '.join(load_catalog().robots)}")
        if int(max_requests) < 1 or int(max_text) < len(TRUNCATED) + 1:
            raise HomeLoopError(f"max_requests takes at least 1 and max_text at least {len(TRUNCATED) + 1}")
        self.home_id, self.task, self.robot = home_id, task, robot
        self.max_requests, self.max_text = int(max_requests), int(max_text)
        width, height = load_catalog().robots[robot].head_camera.resolution
        self.image_size = (int(image_size[0]), int(image_size[1])) if image_size else (int(height), int(width))
        self._owns_out = out is None
        self.run_dir = Path(tempfile.mkdtemp(prefix="homeloop-gym-")) if out is None else Path(out)
        # an environment dropped without close() still removes its own folder (at the latest at exit)
        self._remove_run_dir = weakref.finalize(self, shutil.rmtree, self.run_dir, True) if out is None else None
        self.observation_space = spaces.Dict({
            "text": spaces.Text(self.max_text, min_length=1, charset=CHARSET),
            "image": spaces.Box(0, 255, (*self.image_size, 3), np.uint8)})
        self.action_space = spaces.Text(MAX_ACTION, min_length=0, charset=CHARSET)
        self._next_seed = int(seed)
        self._session: Session | None = None
        self._requests = 0
        self._ended_by: str | None = None
        self._trace_at = 0

    # --- the episode ------------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation,
                                                                                                dict[str, Any]]:
        """Start the next episode (see the module docstring); the wake event is its first observation."""
        super().reset(seed=seed)
        self._end_session()
        episode_seed = self._next_seed if seed is None else int(seed)
        self._next_seed = episode_seed + 1
        spec = runner.plan({self.home_id: self.home_file}, [self.task], self.robot, [episode_seed], self.flags)[0]
        if self._owns_out:
            _forget(self.run_dir, spec.id)
        session = start(spec, self.run_dir, self.max_requests, agent=f"{__name__}:GymAgent")
        if session.episode is None:
            raise HomeLoopError(session.failure or f"episode {spec.id} was not played")
        self._session, self._requests, self._ended_by = session, 0, None
        episode = session.episode
        text = json.dumps(episode.wake, separators=(",", ":"), default=str)
        info = {"episode_id": spec.id, "seed": episode_seed, "tools": episode.tools(), "record": None}
        return {"text": self._fit(text), "image": self._blank()}, info

    def step(self, action: str) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        """Carry out one action: a skill call, or the stop (see the module docstring)."""
        session = self._session
        if session is None:
            raise HomeLoopError("call reset() before step()")
        if self._ended_by is not None:  # stepped past the end: answered here, as the session would
            late = Answer(error=f"the episode has ended ({self._ended_by})", ended_by=self._ended_by)
            return self._outcome(session, late, self._ended_by, ends_now=False)
        self._requests += 1
        assert session.episode is not None
        self._trace_at = len(session.episode.trace)  # read while the runner waits for this request
        problem, tool, arguments = parse_action(action)
        if problem is not None:
            kept = action[:KEPT_ACTION_CHARS] if isinstance(action, str) else repr(action)[:KEPT_ACTION_CHARS]
            answer = session.call(MALFORMED_TOOL, {"action": kept}).result()
            answer = Answer(None, problem, answer.events, answer.ended_by)
        elif tool == STOP:
            answer = session.finish(str(arguments.get("summary") or "")).result()
        else:
            answer = session.call(str(tool), arguments).result()
        ended_by = answer.ended_by
        if ended_by is None and self._requests >= self.max_requests:
            ended_by = session.call(LIMIT_TOOL, {}).result().ended_by
        self._ended_by = ended_by
        return self._outcome(session, answer, ended_by, ends_now=ended_by is not None)

    def _outcome(self, session: Session, answer: Answer, ended_by: str | None, ends_now: bool) -> tuple[
            Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        """The step's return; ``ends_now``: this step ended the episode (the reward comes once)."""
        if ended_by is not None:
            session.finished.wait()  # the record is written; the episode is read only after that
        text, image = self._observed(answer)
        info: dict[str, Any] = {"error": answer.error, "events": answer.events,
                                "cost": _cost(session, self._trace_at) if ends_now or ended_by is None else None}
        passed = False
        if ended_by is not None:
            passed = bool((session.summary or {}).get("passed"))
            info.update(ended_by=ended_by, passed=passed, failure=session.failure or None,
                        record=str(record_path(self.run_dir, session.episode_id)))
        reward = 1.0 if passed and ends_now else 0.0
        truncated = ended_by == "request_limit"
        return {"text": text, "image": image}, reward, ended_by is not None and not truncated, truncated, info

    def close(self) -> None:
        """End the episode that runs, if one does, and remove the temporary run folder, if there is one."""
        self._end_session()
        if self._remove_run_dir is not None:
            self._remove_run_dir()

    def _end_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close().result()
            session.finished.wait()

    # --- observations -----------------------------------------------------------------------------------

    def _observed(self, answer: Answer) -> tuple[str, np.ndarray[Any, np.dtype[np.uint8]]]:
        """The observation of an answer: its JSON text with the images taken out, and the first image."""
        found: list[str] = []
        data = _take_images(answer.data, found, self.image_size)
        text = json.dumps({"data": data, "error": answer.error, "events": answer.events}, separators=(",", ":"),
                          default=str)
        image = self._blank()
        if found:
            picture = _decode(found[0])
            if picture is not None:
                height, width = self.image_size
                if picture.size != (width, height):
                    picture = picture.resize((width, height), Image.Resampling.BILINEAR)
                image = np.asarray(picture, dtype=np.uint8).copy()
        return self._fit(text), image

    def _fit(self, text: str) -> str:
        if len(text) <= self.max_text:
            return text
        return text[:self.max_text - len(TRUNCATED)] + TRUNCATED

    def _blank(self) -> np.ndarray[Any, np.dtype[np.uint8]]:
        return np.zeros((*self.image_size, 3), np.uint8)


# --- helpers ----------------------------------------------------------------------------------------


def parse_action(action: object) -> tuple[str | None, str | None, dict[str, Any]]:
    """(problem, tool, arguments) of an action's text; ``problem`` says why it is malformed, if it is.
    The stop is the tool :data:`STOP` with the ``summary`` argument."""
    if not isinstance(action, str):
        return f"an action is JSON text, got {type(action).__name__}", None, {}
    if len(action) > MAX_ACTION:
        return f"an action of {len(action)} characters (at most {MAX_ACTION})", None, {}
    try:
        value = json.loads(action)
    except json.JSONDecodeError as exc:
        return f"the action is not valid JSON ({exc.msg} at character {exc.pos}); {_SHAPE}", None, {}
    if not isinstance(value, dict):
        return f"the action must be a JSON object, got {type(value).__name__}; {_SHAPE}", None, {}
    if set(value) == {STOP}:
        summary = value[STOP]
        if summary is not None and not isinstance(summary, str):
            return f"the stop's summary must be text, got {type(summary).__name__}", None, {}
        return None, STOP, {"summary": summary or ""}
    extra = sorted(set(value) - {"tool", "arguments"})
    tool, arguments = value.get("tool"), value.get("arguments", {})
    if extra or not isinstance(tool, str) or not tool:
        said = f"unknown keys {', '.join(map(repr, extra))}" if extra else "no tool named"
        return f"{said}; {_SHAPE}", None, {}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return f"arguments must be a JSON object, got {type(arguments).__name__}", None, {}
    return None, tool, arguments


_SHAPE = 'send {"tool": name, "arguments": {...}} or {"stop": summary}'


def _home_file(home: str | Path) -> Path:
    path = Path(home)
    path = path / "home.json" if path.is_dir() else path
    if not path.is_file():
        raise HomeLoopError(f"{home}: no home.json there; give a home folder (a build's homes/<id>/) or its file")
    return path.resolve()


def _forget(run_dir: Path, episode_id: str) -> None:
    """Remove an episode's record and its images from the environment's own run folder."""
    path = record_path(run_dir, episode_id)
    path.unlink(missing_ok=True)
    shutil.rmtree(path.parent / episode_id, ignore_errors=True)


def _take_images(value: Any, found: list[str], observed: tuple[int, int]) -> Any:
    """``value`` with every ``image`` string replaced by a pointer and its sizes; the images go to ``found``."""
    def swap(holder: dict[str, Any], image: str) -> dict[str, Any]:
        label = str(holder.get("capture_id") or f"image {len(found) + 1}")
        where = "the observation's image" if not found else "not observed: only the first image is"
        found.append(image)
        picture = _decode(image)
        sizes = {"original": list(picture.size), "observed": [observed[1], observed[0]]} if picture is not None else None
        return {"image": f"<image of {label}: {where}>", **({"image_size": sizes} if sizes is not None else {})}

    return replace_images(value, swap)


def _decode(image: str) -> Image.Image | None:
    """A base64 image (or data URL) as RGB; None for what is no image."""
    try:
        raw = base64.b64decode(image.partition("base64,")[2] if image.startswith("data:") else image)
        return Image.open(io.BytesIO(raw)).convert("RGB")
    except (binascii.Error, UnidentifiedImageError, OSError, ValueError):
        return None


def _cost(session: Session, trace_at: int) -> dict[str, Any]:
    """What the step's call cost (the trace's calls from ``trace_at``: units and simulated seconds), and
    the units spent of the budget. Read while the runner waits for the next request, or after it has
    written the record."""
    episode = session.episode
    assert episode is not None
    calls = [e for e in episode.trace[trace_at:] if e["kind"] == "call"]
    seconds = sum((float(e["seconds"]) for e in calls), 0.0)
    return {"units": sum(int(e["units"]) for e in calls), "seconds": round(seconds, 6),
            "units_spent": episode.units_spent, "budget": episode.task.budget_units}
