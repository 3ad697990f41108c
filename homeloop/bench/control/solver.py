"""The scripted control solver: the reference agent of the home-control track (docs/tasks.md, "Home control").

It reads the request in its structured form (the episode's ``intent``), and
acts only through calls, as any agent must. It lists the hub's devices of
each type the request names and reads the hub's clock, then applies its
rules for what makes a request impossible, in this order:

- **missing device**: a device type the request names has no device the hub
  lists in the room named (anywhere, where no room is named);
- **out of range**: a value outside the range the hub lists for the field;
- **time contradiction**: a time of day already past, acting before the event
  it waits for (a negative delay), or steps that each wait for the other.

Finding one, it reports it with ``messaging_report_infeasible`` and stops;
otherwise it answers a question from the devices' readings, makes the
automation, schedules each timed step (a step after another at that one's
time plus the gap) or sets each device now, and stops. The generator keeps
an episode only when this solver passes it, and an infeasible one only when
these rules find its constraint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from homeloop.bench.control.model import ControlEpisode, Intent, Step

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode

#: A device as ``hub_list_devices`` lists it.
Listed = dict[str, Any]


def _clock_s(text: str) -> float:
    parts = [int(p) for p in text.split(":")]
    return parts[0] * 3600.0 + parts[1] * 60.0 + (parts[2] if len(parts) > 2 else 0)


def _noun(kind: str) -> str:
    return kind.replace("_", " ")


def matching(devices: list[Listed], kind: str, room: str | None) -> list[Listed]:
    """The listed devices of a type (in a room, where one is named)."""
    return [d for d in devices if d["type"] == kind and (room is None or d["room"] == room)]


def _cycle(steps: tuple[Step, ...]) -> bool:
    """Whether following each step's ``after`` ever comes back to where it started."""
    for start in range(len(steps)):
        seen, k = {start}, steps[start].after
        while k is not None and 0 <= k < len(steps):
            if k in seen:
                return True
            seen.add(k)
            k = steps[k].after
    return False


def find_problem(intent: Intent, devices: list[Listed], clock_now: str) -> tuple[str, str] | None:
    """The reason and detail that make the request impossible, by the rules of the module docstring."""
    targets: list[Any] = [*intent.steps, *(t for t in (intent.trigger, intent.inquiry) if t is not None)]
    for t in targets:
        if not matching(devices, t.device_type, t.room):
            where = " in that room" if t.room is not None else ""
            return "missing_device", f"the home has no {_noun(t.device_type)}{where} that the hub reaches"
    for step in intent.steps:
        found = matching(devices, step.device_type, step.room)[0]
        accepts = found["fields"].get(step.field, {}).get("accepts", {})
        value = step.value
        if isinstance(accepts, dict) and isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = accepts.get("min"), accepts.get("max")
            if (low is not None and value < low) or (high is not None and value > high):
                return "out_of_range", (f"{value:g} is outside what the {_noun(step.device_type)} takes "
                                        f"({low:g} to {high:g})")
    now = _clock_s(clock_now)
    for step in intent.steps:
        if step.at is not None and _clock_s(step.at) <= now:
            return "time_contradiction", f"{step.at} is already past today (it is {clock_now[:5]} now)"
    if intent.trigger is not None and intent.trigger.delay_s < 0:
        return "time_contradiction", "it would have to act before the event it waits for has happened"
    if _cycle(intent.steps):
        return "time_contradiction", "each step waits for the other: the order is circular, a contradiction"
    return None


class ControlSolver:
    """Solves one control episode by the rules of the module docstring."""

    name = "scripted"
    model: str | None = None

    def __init__(self, control: ControlEpisode):
        self.control = control
        self.usage: dict[str, Any] | None = None

    def run(self, episode: Episode) -> None:
        devices: list[Listed] = []
        for kind in self._types():  # the hub's list of each type the request names (none: an error)
            listed = episode.call("hub_list_devices", type=kind)
            devices += [] if listed.error else listed.data["devices"]
        clock = episode.call("hub_list_schedules").data["clock"]
        intent = self.control.intent
        problem = find_problem(intent, devices, clock)
        if problem is not None:
            reason, detail = problem
            episode.call("messaging_report_infeasible", reason=reason, detail=detail)
            episode.stop(f"I cannot do that: {detail}.")
        elif intent.inquiry is not None:
            episode.stop(self._answer(episode, devices))
        elif intent.trigger is not None:
            self._automate(episode, devices)
            episode.stop("The automation is set up.")
        else:
            self._set_and_schedule(episode, devices)
            episode.stop("Done.")

    def _types(self) -> list[str]:
        intent = self.control.intent
        named = [*intent.steps, *(t for t in (intent.trigger, intent.inquiry) if t is not None)]
        return list(dict.fromkeys(t.device_type for t in named))

    def _answer(self, episode: Episode, devices: list[Listed]) -> str:
        inquiry = self.control.intent.inquiry
        assert inquiry is not None
        found = matching(devices, inquiry.device_type, inquiry.room)[0]
        value = episode.call("hub_get_state", device_id=found["id"]).data["readings"][inquiry.field]
        if isinstance(value, bool):
            return f"It is {'on' if value else 'off'}."
        if inquiry.field == "position":
            return f"They are {'closed' if value >= 50 else 'open'}."
        if isinstance(value, (int, float)):
            return f"It reads {value:g} there."
        return f"It is {value}."

    def _automate(self, episode: Episode, devices: list[Listed]) -> None:
        trigger = self.control.intent.trigger
        assert trigger is not None
        sensor = matching(devices, trigger.device_type, trigger.room)
        when = next((d["id"] for d in sensor if d["id"] in trigger.devices), sensor[0]["id"])
        for step in self.control.intent.steps:
            for device in self._devices(step, devices):
                episode.call("hub_automate", device_id=device, field=step.field, value=step.value, when_device=when,
                             when_event=trigger.event, delay_s=trigger.delay_s)

    def _set_and_schedule(self, episode: Episode, devices: list[Listed]) -> None:
        steps = self.control.intent.steps
        due: dict[int, float | None] = {}  # each step's time after the request (s); None: now
        for k, step in enumerate(steps):
            due[k] = self._due(step, due, episode)
            for device in self._devices(step, devices):
                if due[k] is None:
                    episode.call("hub_set_state", device_id=device, field=step.field, value=step.value)
                elif step.at is not None:
                    episode.call("hub_schedule", device_id=device, field=step.field, value=step.value, at=step.at)
                else:
                    episode.call("hub_schedule", device_id=device, field=step.field, value=step.value,
                                 in_s=round((due[k] or 0.0) - episode.now(), 3))

    @staticmethod
    def _due(step: Step, due: dict[int, float | None], episode: Episode) -> float | None:
        if step.in_s is not None:
            return step.in_s
        if step.at is not None:
            return 0.0  # the hub keeps the time of day itself
        if step.after is not None:
            return (due.get(step.after) or 0.0) + (step.after_s or 0.0)
        return None

    @staticmethod
    def _devices(step: Step, devices: list[Listed]) -> list[str]:
        found = [d["id"] for d in matching(devices, step.device_type, step.room)]
        chosen = [d for d in step.devices if d in found] or found
        return chosen[:1] if step.any else chosen
