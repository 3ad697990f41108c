"""Skills of the home-control track (docs/skills.md, "Schedules and automations"; docs/tasks.md, "Home control").

The hub's schedules and automations (:mod:`homeloop.sim.automation` runs them
in simulated time) and the structured report that a request cannot be
carried out. They are offered only in home-control episodes
(:func:`homeloop.sim.services.available`, ``control=True``), so the other
tasks keep their tools. Times the agent sees are agent time (seconds since
the wake event); an absolute time is a wall-clock time of the episode's day.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from homeloop.sim.automation import Action, AutomationError, HubAutomation, Trigger, engine, plain_rule
from homeloop.sim.context import SkillContext
from homeloop.sim.services.hub import hub_device
from homeloop.sim.skills import SkillError, skill

#: Why a request cannot be carried out, as ``messaging_report_infeasible`` names it: the home lacks the
#: device, the value is outside what the device accepts, or the times asked for contradict each other.
INFEASIBLE_REASONS = ("missing_device", "out_of_range", "time_contradiction")
Reason = Literal["missing_device", "out_of_range", "time_contradiction"]

#: Where the episode keeps the agent's reports (:attr:`SkillContext.state`).
REPORTS = "infeasible_reports"

Value = bool | int | float | str


def _clock_seconds(text: str) -> float:
    """Seconds after midnight of ``HH:MM`` or ``HH:MM:SS``, or :class:`SkillError`."""
    parts = text.strip().split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (2, 3) or not (0 <= numbers[0] < 24 and all(0 <= n < 60 for n in numbers[1:])):
        raise SkillError(f"at: {text!r} is no time of day; give HH:MM or HH:MM:SS (24-hour)")
    return numbers[0] * 3600.0 + numbers[1] * 60.0 + (numbers[2] if len(numbers) == 3 else 0)


def _clock_text(ctx: SkillContext, world_time: float) -> str:
    seconds = int(round(ctx.world.clock_start_s + world_time)) % 86400
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _agent_rule(ctx: SkillContext, rule_id: str) -> dict[str, Any]:
    hub = engine(ctx.world)
    out = plain_rule(hub.rules[rule_id], ctx.wake_time)
    if hub.rules[rule_id].at is not None:
        out["clock"] = _clock_text(ctx, hub.rules[rule_id].at or 0.0)
    return out


def _hub(ctx: SkillContext) -> HubAutomation:
    return engine(ctx.world)


@skill("hub", units=2, seconds=0.3)
def schedule(ctx: SkillContext, device_id: str, field: str, value: Value, at: str | None = None,
             in_s: float | None = None) -> dict[str, Any]:
    """Schedule one device setting at a time of day or after a delay; the hub carries it out then.

    device_id: the device, as hub_list_devices names it.
    field: the field to set; hub_list_devices says which fields are settable.
    value: the value to set then: true/false, a number in the field's range, or one of its listed values.
    at: a time of day today, HH:MM or HH:MM:SS (24-hour); give this or in_s.
    in_s: seconds from now; give this or at.
    """
    hub_device(ctx, device_id)
    world = ctx.world
    if (at is None) == (in_s is None):
        raise SkillError("give one of at (a time of day) and in_s (seconds from now)")
    if in_s is not None and not math.isfinite(in_s):
        raise SkillError(f"in_s: {in_s!r} is no number of seconds")
    if in_s is not None:
        when = world.time + in_s
    else:
        when = world.time + _clock_seconds(at or "") - world.clock_of_day()
    try:
        rule = _hub(ctx).schedule(world, Action(device_id, field, value), when)
    except AutomationError as exc:
        raise SkillError(f"{exc} (it is {_clock_text(ctx, world.time)} now)") from None
    return {"schedule": _agent_rule(ctx, rule.id)}


@skill("hub", units=2, seconds=0.3)
def automate(ctx: SkillContext, device_id: str, field: str, value: Value, when_device: str,
             when_event: str | None = None, when_field: str | None = None, above: float | None = None,
             below: float | None = None, equals: Value | None = None, delay_s: float = 0.0) -> dict[str, Any]:
    """Make an automation: whenever a device raises an event, or a reading crosses a threshold, set a device field.

    device_id: the device to set, as hub_list_devices names it.
    field: the field to set; hub_list_devices says which fields are settable.
    value: the value to set: true/false, a number in the field's range, or one of its listed values.
    when_device: the device whose event or reading triggers it.
    when_event: an event of when_device (opened, closed, locked, smoke_alarm ...); give this or when_field.
    when_field: a reading of when_device; with above, below or equals.
    above: trigger when the reading rises above this number.
    below: trigger when the reading falls below this number.
    equals: trigger when the reading starts to equal this value.
    delay_s: seconds to wait after the trigger before setting the field (0: at once).
    """
    hub_device(ctx, device_id)
    hub_device(ctx, when_device)
    trigger = Trigger(when_device, event=when_event, field=when_field, above=above, below=below, equals=equals)
    try:
        rule = _hub(ctx).automate(ctx.world, Action(device_id, field, value), trigger, delay_s)
    except AutomationError as exc:
        raise SkillError(str(exc)) from None
    return {"automation": _agent_rule(ctx, rule.id)}


@skill("hub", units=1, seconds=0.1)
def list_schedules(ctx: SkillContext) -> dict[str, Any]:
    """List the hub's schedules and automations: what each sets, when or on what, and what became of it.

    The hub's clock (the time of day now) comes with the list.
    """
    hub = ctx.world.running(HubAutomation)
    return {"t": ctx.now(), "clock": _clock_text(ctx, ctx.world.time),
            "schedules": [_agent_rule(ctx, r) for r in (hub.rules if hub is not None else {})]}


@skill("hub", units=2, seconds=0.3)
def cancel(ctx: SkillContext, schedule_id: str) -> dict[str, Any]:
    """Cancel a schedule that has not fired yet, or an automation (it fires no more).

    schedule_id: the schedule or automation, as hub_list_schedules names it (sched_1, auto_1 ...).
    """
    try:
        rule = _hub(ctx).cancel(schedule_id)
    except AutomationError as exc:
        raise SkillError(str(exc)) from None
    return {"cancelled": _agent_rule(ctx, rule.id)}


@skill("messaging", units=1, seconds=0.5)
def report_infeasible(ctx: SkillContext, reason: Reason, detail: str) -> dict[str, Any]:
    """Tell the resident their request cannot be carried out, and why; nothing is set.

    reason: missing_device (no such device), out_of_range (a value it does not take) or time_contradiction.
    detail: what makes it impossible, in a sentence: the device, the value and its range, or the times.
    """
    if not detail.strip():
        raise SkillError("detail: say what makes the request impossible")
    reports: list[dict[str, Any]] = ctx.state.setdefault(REPORTS, [])
    reports.append({"t": ctx.now(), "reason": reason, "detail": detail})
    return {"reported": True, "t": ctx.now()}


#: The skills offered only in home-control episodes (:func:`homeloop.sim.services.available`).
CONTROL_SKILLS = (schedule, automate, list_schedules, cancel, report_infeasible)
