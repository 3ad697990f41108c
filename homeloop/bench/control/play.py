"""One control episode, set up in its home and played by an agent (docs/tasks.md, "Home control").

The episode's task and scenario are made from the control episode itself: the
resident, out, sends the request by message at
:data:`~homeloop.bench.control.model.REQUEST_AT_S`, which wakes the agent; the
robot stands in the living room (else the first of bedroom, kitchen or hall
the home has); the scenario opens and closes the front door when the episode
says so. Every control episode is scored at its horizon
(:func:`~homeloop.bench.control.model.horizon_for`), so what a schedule does
after the agent stops counts. Before the agent is woken the prerequisites
are set through the hub (as a resident would have left the devices); the
hub's automation engine and the goal watch
(:class:`~homeloop.bench.control.goals.GoalWatch`) join the world's modules.

The scripted agent of a control run is the control solver
(:class:`~homeloop.bench.control.solver.ControlSolver`); any other agent is
made by its name, as in every run. Where the run asks for the model judge
(:mod:`homeloop.bench.control.judge`, its settings under
:data:`~homeloop.bench.control.judge.JUDGE_OPTION` of the run's options), the
reports of an infeasible episode go to it after the horizon, and the record
keeps its verdict (``judge``) beside the rule's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from homeloop.bench.control.goals import REPORTED_CHECK, GoalWatch, judge, reports, watched_fields
from homeloop.bench.control.judge import JUDGE_OPTION, JudgeSettings, judge_reports
from homeloop.bench.control.model import BUDGET_UNITS, CONTROL_SCENARIO, REQUEST_AT_S, ControlEpisode
from homeloop.bench.control.solver import ControlSolver
from homeloop.bench.monitor import CheckResult
from homeloop.core.catalog import DEFAULT_ROBOT
from homeloop.core.home import Home
from homeloop.sim import automation, devices
from homeloop.sim.episode import Episode, EpisodeError
from homeloop.sim.roles import Roles, ScenarioError
from homeloop.sim.scenario import Scenario
from homeloop.sim.task import Task

if TYPE_CHECKING:
    from homeloop.bench.agents.protocol import Agent
    from homeloop.core.visuals.library import VisualLibrary

#: Where the robot is when the request comes: the first of these room roles the home has.
START_ROLES = ("living", "bedroom", "kitchen", "hall")
#: The resident who asks.
RESIDENT = "resident_margaret"


@dataclass
class ControlPlay:
    """A control episode played: the episode, the agent, the checks, the agent's error, and what the
    record adds (``query_type``, ``feasible``, the control episode)."""

    episode: Episode
    agent: Agent
    checks: list[CheckResult]
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks) and self.episode.ended_by != "agent_error"


def control_task(control: ControlEpisode) -> Task:
    """The task a control episode plays (scored at its horizon; no check of the task files)."""
    return Task.model_validate({
        "id": control.id, "family": "requests", "extension": True, "description": control.request,
        "wake": {"kind": "message", "note": "the resident's request"}, "horizon_s": control.horizon_s,
        "budget_units": BUDGET_UNITS, "scored_at": "horizon", "alert_group": None,
        "checks": [{"id": "control_goal", "kind": "final"}], "requires": {}})


#: The robot's start role per home (by ``id``, the home kept beside it so that its id is not reused), for
#: the episodes played in one home one after another; at most :data:`STARTS_KEPT` homes.
_STARTS: dict[int, tuple[Home, str | None]] = {}
STARTS_KEPT = 64


def start_role(home: Home) -> str | None:
    """The first of :data:`START_ROLES` the home has (None: none)."""
    kept = _STARTS.get(id(home))
    if kept is None or kept[0] is not home:
        if len(_STARTS) >= STARTS_KEPT:
            _STARTS.clear()
        roles = Roles(home, CONTROL_SCENARIO, ["resident_1"])
        kept = _STARTS[id(home)] = (home, next((r for r in START_ROLES if _has(roles, r)), None))
    return kept[1]


def control_scenario(control: ControlEpisode, home: Home) -> Scenario:
    """The scenario of a control episode in ``home`` (see the module docstring)."""
    start = start_role(home)
    if start is None:
        raise EpisodeError(f"home {home.home_id} has none of the rooms {', '.join(START_ROLES)} for a control episode")
    timeline = [{"at_s": REQUEST_AT_S, "action": "message", "person": "resident_1", "text": control.request}]
    timeline += [{"at_s": REQUEST_AT_S + e.at_s, "action": e.action, "opening": e.opening} for e in control.events]
    return Scenario.model_validate({
        "name": CONTROL_SCENARIO, "description": "A resident asks the home assistant to do something with the home's "
                                          "devices, now or later.",
        "clock_start_s": control.clock_start_s, "robot_start": start,
        "people": [{"id": "resident_1", "catalog_id": RESIDENT, "at": None}],
        "timeline": timeline})


def _has(roles: Roles, role: str) -> bool:
    try:
        roles.room(role)
    except ScenarioError:  # a role the home lacks
        return False
    return True


def set_up(home: Home, control: ControlEpisode, *, robot: str = DEFAULT_ROBOT, withheld: tuple[str, ...] = (),
           show_costs: bool = False, images: bool = False, visuals: VisualLibrary | None = None) -> tuple[Episode,
                                                                                                         GoalWatch]:
    """The episode woken by the request, its prerequisites set, and its goal watch."""
    episode = Episode(home, control_task(control), robot, control.seed, withheld=withheld, show_costs=show_costs,
                      images=images, scenario=control_scenario(control, home), visuals=visuals, control=True)
    world = episode.world
    for p in control.prerequisites:
        try:
            devices.set_state(world, p.device_id, p.field, p.value)
        except devices.DeviceError as exc:
            raise EpisodeError(f"control episode {control.id}: prerequisite {p.device_id}.{p.field}: {exc}") from None
    automation.engine(world)
    watch = GoalWatch(world, watched_fields(episode, control))
    world.add_module(watch)
    return episode, watch


def play_control(home: Home, control: ControlEpisode | str, agent: Agent | str = "scripted",
                 agent_options: dict[str, Any] | None = None, **setup: Any) -> ControlPlay:
    """Play a control episode (or its JSON line) with an agent (or an agent's name), and judge it (by rule,
    and by the model judge where ``agent_options`` names one under :data:`JUDGE_OPTION`)."""
    from homeloop.bench.agents import make_agent
    from homeloop.bench.agents.protocol import play as play_agent

    if isinstance(control, str):
        control = ControlEpisode.model_validate_json(control)
    options = dict(agent_options or {})
    judge_settings = JudgeSettings.from_option(options.pop(JUDGE_OPTION, None))
    episode, watch = set_up(home, control, **setup)
    if isinstance(agent, str):
        agent = ControlSolver(control) if agent == "scripted" else make_agent(agent, **options)
    error = play_agent(agent, episode)
    episode.run_to_horizon()
    checks = judge(episode, control, watch)
    extra = {"query_type": control.query_type, "feasible": control.feasible, "control": control.model_dump(mode="json")}
    made = reports(episode)
    if judge_settings is not None and not control.feasible and made:
        rule = next(c.passed for c in checks if c.id == REPORTED_CHECK)
        extra["judge"] = judge_reports(judge_settings, control, made, rule)
    return ControlPlay(episode, agent, checks, error, extra)
