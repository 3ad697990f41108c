"""Goals checked over simulated time, and the rule judge of a report that a request is infeasible
(docs/tasks.md, "Home control").

:class:`GoalWatch` is a dynamics module added last to a control episode's
world: from the moment the request arrives it keeps, for every settable field
of the hub's devices and every field a goal names, each change with its time,
waking only after a call, a firing of the hub's schedules and automations,
or an action of the scenario's timeline. :func:`judge` reads that history after the
horizon: a :class:`~homeloop.bench.control.model.Condition` holds when its
devices' values satisfy it at every moment of its window, from its start up
to its end (the light was on from 600 s to the horizon; one at the horizon
alone reads the final state), ``untouched`` when nothing settable changed. The
reply to a state question is judged by rule: a message to a resident or the
summary the agent stops with names the expected state (or a number within
the tolerance) and does not affirm its opposite (a negated mention, "not
locked", is no affirmation). A report that the request is infeasible
(``messaging_report_infeasible``) passes when its reason is the constraint's
kind and its detail names one of the constraint's words; any report fails a
feasible request.

Each check is a :class:`~homeloop.bench.monitor.CheckResult` whose failure class
is one of :data:`FAILURE_CLASSES`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from homeloop.bench.control.model import Answer, Condition, ControlEpisode
from homeloop.bench.monitor import CheckResult
from homeloop.sim.devices import HUB_CATEGORIES
from homeloop.sim.episode import Episode
from homeloop.sim.world import NOTHING, Rest, World

#: The error taxonomy of control episodes (docs/tasks.md, "Home control"): the end state was wrong; it
#: was right but came too early or too late; something was changed that had to stay; the answer to a
#: question was wrong or missing; a feasible request was reported infeasible; an infeasible one was not
#: reported, or reported for another reason.
FAILURE_CLASSES = ("State", "Timing", "Over", "Answer", "FalseInfeasible", "MissedInfeasible", "WrongReason")

#: The tool that reports a request infeasible, and the check that judges its reports by rule.
REPORT_TOOL = "messaging_report_infeasible"
REPORTED_CHECK = "reported"

#: What wakes the watch besides a call (after which every module steps) and the scenario's timeline (whose
#: actions wake every module): a settable field changes only through those and the hub's schedules and
#: automations.
READS = frozenset({"hub_automation"})


class GoalWatch:
    """Each watched device field's changes with their world times (see the module docstring)."""

    name = "goal_watch"

    def __init__(self, world: World, fields: list[tuple[str, str]]):
        self.fields = list(dict.fromkeys(fields))
        self.history: dict[tuple[str, str], list[tuple[float, Any]]] = {
            (d, f): [(world.time, world.devices[d].values.get(f))] for d, f in self.fields}
        # each field's device values (a device keeps its dict) beside its changes, for the steps
        self._watched = [(world.devices[d].values, f, self.history[(d, f)]) for d, f in self.fields]

    def step(self, world: World, dt: float) -> None:
        for values, name, changes in self._watched:
            value = values.get(name)
            if value != changes[-1][1]:
                changes.append((world.time, value))

    def rest(self, world: World) -> Rest:
        return Rest(NOTHING, math.inf, READS)

    def snapshot(self) -> dict[str, Any]:
        return {"changes": sum(len(c) - 1 for c in self.history.values())}


def watched_fields(episode: Episode, control: ControlEpisode) -> list[tuple[str, str]]:
    """Every settable field of the hub's devices, and the fields the goal names."""
    fields = [(d.id, name) for d in episode.home.devices if d.agent_visible and d.category in HUB_CATEGORIES
              for name, spec in d.fields.items() if spec.settable]
    fields += [(d, c.field) for c in control.goal.conditions for d in c.devices]
    return fields


def _values(watch: GoalWatch, device: str, field: str, start: float, end: float) -> list[Any]:
    """The values a field took from ``start`` up to ``end`` (world time; a change at ``end`` is after it)."""
    changes = watch.history[(device, field)]
    before = [v for t, v in changes if t <= start + 1e-9]
    during = [v for t, v in changes if start + 1e-9 < t < end - 1e-9]
    return ([before[-1]] if before else [changes[0][1]]) + during


def condition_holds(watch: GoalWatch, condition: Condition, wake_time: float, horizon: float) -> bool:
    """Whether ``condition`` held over its window (agent times made world times with ``wake_time``)."""
    start = horizon if condition.start_s is None else wake_time + condition.start_s
    end = horizon if condition.end_s is None else min(wake_time + condition.end_s, horizon)
    held = [all(condition.accepts(v) for v in _values(watch, d, condition.field, start, end))
            for d in condition.devices]
    return any(held) if condition.any else all(held)


def untouched(watch: GoalWatch) -> list[str]:
    """The watched fields that changed, as ``device.field``."""
    return [f"{d}.{f}" for (d, f), changes in watch.history.items() if len(changes) > 1]


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def answered(answer: Answer, texts: list[str]) -> bool:
    """Whether one of ``texts`` says what ``answer`` expects and affirms none of its opposites (see the
    module docstring)."""
    for text in texts:
        low = text.lower()
        if any(_affirms(low, w) for w in answer.wrong):
            continue
        if answer.number is not None:
            if any(abs(float(n) - answer.number) <= answer.tolerance for n in _NUMBER.findall(low)):
                return True
        elif any(_says(low, w) for w in answer.words):
            return True
    return False


def _says(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word.lower())}(?![\w-])", text) is not None


#: A negation within two words before a state word takes it back ("not locked", "isn't switched on").
_NEGATED = r"(?:\bnot|n't|\bnever|\bno longer)\s+(?:\w+\s+){0,2}"


def _affirms(text: str, word: str) -> bool:
    """Whether ``text`` names ``word`` other than negated."""
    plain = len(re.findall(rf"(?<![\w-]){re.escape(word.lower())}(?![\w-])", text))
    negated = len(re.findall(rf"{_NEGATED}{re.escape(word.lower())}(?![\w-])", text))
    return plain > negated


def replies(episode: Episode) -> list[str]:
    """What the agent said to the residents, then the summary it stopped with."""
    residents = {p.id for p in episode.world.residents()}
    said = [m.text for m in episode.world.messages if m.sender == "agent" and m.recipient in residents]
    return said + ([episode.summary] if episode.summary else [])


def reports(episode: Episode) -> list[dict[str, Any]]:
    """The agent's reports that the request is infeasible: reason and detail, each call that succeeded."""
    return [e["arguments"] for e in episode.trace
            if e.get("kind") == "call" and e.get("tool") == REPORT_TOOL and not e.get("error")]


def judge(episode: Episode, control: ControlEpisode, watch: GoalWatch) -> list[CheckResult]:
    """Every check of a control episode, read after its horizon (see the module docstring)."""
    wake, horizon = episode.wake_time, episode.horizon_time
    checks = []
    for k, condition in enumerate(control.goal.conditions, 1):
        ok = condition_holds(watch, condition, wake, horizon)
        checks.append(CheckResult(f"goal_{k}", "timed" if condition.timed else "final", ok,
                                  evidence=condition.model_dump(mode="json"),
                                  failure_class="" if ok else _state_or_timing(watch, condition, wake, horizon)))
    if control.goal.untouched:
        changed = untouched(watch)
        checks.append(CheckResult("untouched", "always", not changed, evidence={"changed": changed},
                                  failure_class="Over" if changed else ""))
    if control.goal.answer is not None:
        ok = answered(control.goal.answer, replies(episode))
        checks.append(CheckResult("answer", "ever", ok, evidence={"expected": control.goal.answer.model_dump()},
                                  failure_class="" if ok else "Answer"))
    checks.append(_report_check(episode, control))
    return checks


def _state_or_timing(watch: GoalWatch, condition: Condition, wake: float, horizon: float) -> str:
    """Why a condition failed: a window that ends before the horizon broke early, and one running to it
    whose devices end as asked came late (Timing); anything else left the wrong state (State)."""
    if not condition.timed:
        return "State"
    if condition.end_s is not None:
        return "Timing"
    final = condition.model_copy(update={"start_s": None})
    return "Timing" if condition_holds(watch, final, wake, horizon) else "State"


def _report_check(episode: Episode, control: ControlEpisode) -> CheckResult:
    made = reports(episode)
    if control.feasible:
        return CheckResult(REPORTED_CHECK, "never", not made, evidence={"reports": made},
                           failure_class="FalseInfeasible" if made else "")
    constraint = control.constraint
    assert constraint is not None
    right = [r for r in made if r.get("reason") == constraint.kind
             and any(_mentions(str(r.get("detail", "")), w) for w in constraint.words)]
    failure = "" if right else ("WrongReason" if made else "MissedInfeasible")
    return CheckResult(REPORTED_CHECK, "ever", bool(right), failure_class=failure,
                       evidence={"reports": made, "expected": constraint.model_dump()})


def _mentions(detail: str, word: str) -> bool:
    return word.lower() in detail.lower()
