"""An episode: a home, a scenario, a task, a robot body, services and a seed (docs/episodes.md).

::

    ep = Episode(home, task="handle_smoke_alarm", robot="unitree_g1_d_ultimate", seed=0)
    ep.wake                      # the wake event and the list of rooms: all an agent starts with
    ep.tools()                   # tool schemas of the services not withheld
    r = ep.call("hub_list_devices")
    r.data, r.error, r.events, r.units, r.seconds
    ep.stop("switched the stove off and told Margaret")
    ep.done, ep.ended_by, ep.trace

The scenario runs before the agent is woken (the *pre-roll*) until the task's
wake event happens; agent time 0 is that moment, and every time the episode
reports (``t`` in results, events and the trace) counts from it. The world
advances only inside calls: a skill with a fixed duration advances it after
running, one that depends on the body advances it itself. ``.call`` never
raises for anything the agent sends: an unknown tool, bad arguments or a
failed action come back as a result with ``error`` set.

An episode ends when the agent stops, when a call would spend more than the
budget (that call is not carried out), at the horizon, when a capture cannot
be rendered with images on (``render_error``), or for a reason on the agent's
side (:meth:`Episode.end`). However it ends, a task scored at the horizon
keeps simulating to it (docs/episodes.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Iterable

from homeloop.core.catalog import DEFAULT_ROBOT, Catalog, load_catalog
from homeloop.core.home import Home
from homeloop.core.visuals.library import VisualLibrary
from homeloop.sim.context import Registered
from homeloop.sim.services import available
from homeloop.sim.services.cameras import RenderError
from homeloop.sim.skills import Skill, SkillError
from homeloop.sim.task import Task, load_tasks
from homeloop.sim.wake import wakes, waking_devices
from homeloop.sim.world import STEP_S, Event, World, plain_copy

if TYPE_CHECKING:
    from homeloop.sim.scenario import Scenario

#: How long a scenario may run before its wake event must have happened (s).
MAX_PREROLL_S = 1800.0

ENDINGS = ("stop", "budget", "horizon", "render_error")


class EpisodeError(ValueError):
    """An episode that cannot be set up: an unknown task or body, a scenario role the home lacks."""


@dataclass
class Result:
    """What one call returns to the agent: data, an error, and the events during the action."""

    tool: str
    arguments: dict[str, Any]
    data: Any = None
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    units: int = 0
    seconds: float = 0.0
    t_start: float = 0.0
    t_end: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """As :func:`dataclasses.asdict` gives it (a copy the agent may change), made faster."""
        return {name: plain_copy(getattr(self, name)) for name in _RESULT_FIELDS}


#: The fields of :class:`Result`, in order (:func:`dataclasses.fields` works them out at every call).
_RESULT_FIELDS = tuple(f.name for f in fields(Result))


@dataclass
class SkillContext:
    """What a skill sees of its episode (:class:`homeloop.sim.context.SkillContext`): the world, the
    episode's flags and clock, and its registries of captures and detections."""

    episode: "Episode"

    @property
    def world(self) -> World:
        return self.episode.world

    @property
    def images(self) -> bool:
        return self.episode.images

    @property
    def withheld(self) -> tuple[str, ...]:
        return self.episode.withheld

    @property
    def wake_time(self) -> float:
        return self.episode.wake_time

    @property
    def state(self) -> dict[str, Any]:
        return self.episode.state

    @property
    def captures(self) -> dict[str, Registered]:
        registry: dict[str, Registered] = self.episode.state.setdefault("captures", {})
        return registry

    @property
    def detections(self) -> dict[str, Registered]:
        registry: dict[str, Registered] = self.episode.state.setdefault("detections", {})
        return registry

    def now(self) -> float:
        """Agent time: seconds since the wake event."""
        return self.episode.now()

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass (never past the horizon)."""
        self.episode._advance(seconds)

    def advance_while(self, going: Callable[[], bool]) -> None:
        """Let time pass a step at a time while ``going()`` holds (never past the horizon): as many
        calls of :meth:`advance` for a step, where after the first nothing outside the steps
        changes the world, so sleeping modules sleep on."""
        self.episode.world.advance_while(going, self.episode.horizon_time)

    def event_dict(self, event: Event) -> dict[str, Any]:
        return self.episode.event_dict(event)


class Episode:
    """One run of a task in a home (see the module docstring)."""

    def __init__(self, home: Home, task: str | Task, robot: str = DEFAULT_ROBOT, seed: int = 0, *,
                 catalog: Catalog | None = None, withheld: Iterable[str] = (), show_costs: bool = False,
                 images: bool = True, scenario: Scenario | None = None, visuals: VisualLibrary | None = None,
                 control: bool = False):
        from homeloop.sim import scenario as scenarios, step_order

        self.home = home
        self.catalog = catalog or load_catalog()
        self.task = task if isinstance(task, Task) else _task(task)
        if robot not in self.catalog.robots:
            raise EpisodeError(f"unknown robot body {robot!r}; bodies: {', '.join(self.catalog.robots)}")
        self.robot_id = robot
        self.seed = seed
        self.withheld = tuple(sorted(set(withheld)))
        self.show_costs = show_costs
        self.images = images
        # a home-control episode (docs/tasks.md, "Home control") is also offered the hub's schedules
        self.skills: dict[str, Skill] = {s.tool_name: s for s in available(self.withheld, control=control)}
        self.scenario = scenario or scenarios.load_scenario(self.task.scenario)
        self.world = World(home, self.catalog, seed, clock_start_s=self.scenario.clock_start_s, visuals=visuals)
        step_order.install(self.world)
        self.scenario = self.scenario.apply(self.world, self.task, robot=self.robot_id)
        self.context = SkillContext(self)
        self.units_spent = 0
        self.trace: list[dict[str, Any]] = []
        self.ended_by: str | None = None
        self.summary: str | None = None
        self.wake_time = 0.0
        self.wake_event = self._preroll()
        self._seen_events = len(self.world.events)
        if self.world.robot is not None:  # the route starts where the robot stands at the wake
            r = self.world.robot
            r.route.append((0.0, r.x, r.y, bool(r.holding())))
        self.state: dict[str, Any] = {}  # per-episode registries (captures, detections) kept by services
        if images:  # captures carry rendered pixels; what a frame shows is geometric either way
            from homeloop.sim.render.rendering import attach

            attach(self.state, self.world)
        #: Called after every call, before it is recorded (the benchmark's monitor looks then).
        self.on_call: Callable[[], None] | None = None

    # --- set-up -----------------------------------------------------------------------------------

    def _preroll(self) -> Event:
        """Run the scenario until its wake event: the world stops after each step that brings
        events, where they are looked at."""
        kind = self.task.wake.kind
        devices = waking_devices(self.home, kind)
        start = 0
        events = self.world.events
        while self.world.time < MAX_PREROLL_S:
            for event in events[start:]:
                if wakes(event, kind, devices):
                    self.wake_time = event.time
                    return event
            start = len(events)
            self.world.advance_until(lambda: len(events) > start, round((MAX_PREROLL_S - self.world.time) / STEP_S),
                                     coasting=True)  # modules coasting bring no events
        raise EpisodeError(f"scenario {self.scenario.name!r} in home {self.home.home_id}: the wake event "
                           f"{kind!r} did not happen within {MAX_PREROLL_S:.0f} s")

    @property
    def wake(self) -> dict[str, Any]:
        """All an agent starts with: the wake event and the list of rooms."""
        return {
            "event": self.event_dict(self.wake_event),
            "rooms": [{"id": r.id, "name": r.name, "type": r.type} for r in self.home.rooms],
        }

    def tools(self) -> list[dict[str, Any]]:
        """The tool schemas of the skills this episode offers."""
        return [plain_copy(_tool_schema(s, self.show_costs)) for s in self.skills.values()]

    def tool_names(self) -> list[str]:
        """The names of the tools :meth:`tools` describes, in its order (without copying the schemas)."""
        return list(self.skills)

    # --- time -------------------------------------------------------------------------------------

    def now(self) -> float:
        return round(self.world.time - self.wake_time, 6)

    @property
    def horizon_time(self) -> float:
        return self.wake_time + self.task.horizon_s

    def _advance(self, seconds: float, touched: bool = True) -> None:
        remaining = self.horizon_time - self.world.time
        self.world.advance(min(max(seconds, 0.0), max(remaining, 0.0)), touched=touched)

    # --- calls ------------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.ended_by is not None

    def call(self, tool: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> Result:
        """Run one skill call (see the module docstring); never raises for what the agent sends."""
        # arguments that are not a JSON object reach the skill's validation, which names the problem
        raw = {**arguments, **kwargs} if isinstance(arguments, dict) else arguments if arguments is not None else kwargs
        result = Result(tool=tool, arguments=raw, t_start=self.now())
        if self.done:
            result.error = f"the episode has ended ({self.ended_by})"
            return self._record(result)
        skill = self.skills.get(tool)
        if skill is None:
            result.error = f"unknown tool {tool!r}; tools: {', '.join(self.skills)}"
            return self._record(result)
        try:
            args = skill.validate(raw)
        except SkillError as exc:
            result.units = skill.units
            result.error = str(exc)
            return self._charge_and_record(result)
        result.units = skill.units_for(args, self.context)
        if self.units_spent + result.units > self.task.budget_units:
            result.units = 0
            result.error = (f"{tool} costs {skill.units_for(args, self.context)} units but only "
                            f"{self.task.budget_units - self.units_spent} of {self.task.budget_units} are left")
            self.ended_by = "budget"
            self._record(result)
            self._finish()
            return result
        unrendered = self._run(skill, args, result)
        self._charge_and_record(result)
        if unrendered:
            self.end("render_error", unrendered)
        return result

    def _run(self, skill: Skill, args: dict[str, Any], result: Result) -> str:
        """Run the skill into ``result``; returns why a capture could not be rendered ("" if none was)."""
        before, unrendered = self.world.time, ""
        try:
            result.data = skill.function(self.context, **args)
        except SkillError as exc:
            result.error = str(exc)
        except RenderError as exc:
            unrendered = str(exc)
            result.error = "the camera returned no image; the episode ends here"
        if skill.seconds is not None:
            self._advance(skill.seconds)
        result.seconds = round(self.world.time - before, 6)
        return unrendered

    def _charge_and_record(self, result: Result) -> Result:
        self.units_spent += result.units
        if self.world.time >= self.horizon_time - 1e-9 and not self.done:
            self.ended_by = "horizon"
        return self._record(result)

    def _record(self, result: Result) -> Result:
        if self.on_call is not None:
            self.on_call()
        result.t_end = self.now()
        new = self.world.events[self._seen_events:]
        self._seen_events = len(self.world.events)
        result.events = [self.event_dict(e) for e in new]
        if self.world.robot is not None:
            r = self.world.robot
            r.route.append((result.t_end, r.x, r.y, bool(r.holding())))
        self.trace.append({"kind": "call", **result.to_dict()})
        return result

    def event_dict(self, event: Event) -> dict[str, Any]:
        """An event as the agent and the record see it: its time in agent time (since the wake event)."""
        return {"t": round(event.time - self.wake_time, 6), "kind": event.kind, "source": event.source,
                **({"data": event.data} if event.data else {})}

    # --- ending -----------------------------------------------------------------------------------

    def stop(self, summary: str = "") -> None:
        """The agent stops. A task scored at the horizon keeps simulating to it."""
        if self.done:
            return
        self.summary = summary
        self.ended_by = "stop"
        self.trace.append({"kind": "stop", "t": self.now(), "summary": summary})
        self._finish()

    def end(self, reason: str, detail: str = "") -> None:
        """End the episode for another reason: on the agent's side (a request limit, malformed
        replies, an error), or a capture that could not be rendered. The world is scored as it
        stands, or, for a task scored at the horizon, as it stands at the horizon."""
        if self.done:
            return
        self.ended_by = reason
        self.trace.append({"kind": "end", "t": self.now(), "reason": reason, "detail": detail})
        self._finish()

    def _finish(self) -> None:
        """After any ending: a task scored at the horizon keeps simulating to it (a leak the agent
        left open goes on spilling whether it stopped or ran out of budget)."""
        if self.task.scored_at == "horizon":
            self.run_to_horizon()

    def run_to_horizon(self) -> None:
        """Simulate, with no more calls, up to the horizon (for tasks scored there)."""
        self._advance(self.horizon_time - self.world.time)
        new = self.world.events[self._seen_events:]
        self._seen_events = len(self.world.events)
        for e in new:
            self.trace.append({"kind": "event", **self.event_dict(e)})


#: Each skill's tool schema, with and without costs: worked out once (a skill never changes).
_SCHEMAS: dict[tuple[str, bool], tuple[Skill, dict[str, Any]]] = {}


def _tool_schema(skill: Skill, show_costs: bool) -> dict[str, Any]:
    key = (skill.tool_name, show_costs)
    kept = _SCHEMAS.get(key)
    if kept is None or kept[0] is not skill:
        kept = _SCHEMAS[key] = (skill, skill.tool_schema(show_costs))
    return kept[1]


def _task(task_id: str) -> Task:
    tasks = load_tasks()
    if task_id not in tasks:
        raise EpisodeError(f"unknown task {task_id!r}; tasks: {', '.join(sorted(tasks))}")
    return tasks[task_id]
