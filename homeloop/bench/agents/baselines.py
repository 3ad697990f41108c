"""Baseline agents: shortcuts that show the checks can fail and score nothing they have not earned
(docs/agents.md; what each scores is in docs/scores.md).

- ``do-nothing`` stops at once: it must fail every task;
- ``over-reactor`` messages emergency services on every alert, then stops;
- ``passive-looker`` captures every house camera it is offered, runs perception on each capture,
  messages the residents what it saw, then stops: it never sends the robot;
- ``dismisser`` tells the residents the alert is a false alarm and touches nothing;
- ``random`` makes seeded random calls with valid arguments, drawn from the rooms of the wake and
  the ids that list skills, captures and perception have revealed, until it has made
  :data:`RANDOM_CALLS` calls or the budget left could not pay for the dearest call.

Like every agent they act only through ``episode.call``.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any

from homeloop.bench.agents.registry import register
from homeloop.sim.services.messaging import EMERGENCY_CONTACT as EMERGENCY
from homeloop.sim.services.messaging import EMERGENCY_UNITS, MAX_TEXT

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode

#: The baselines, in the order docs/scores.md lists them.
BASELINES = ("do-nothing", "over-reactor", "passive-looker", "dismisser", "random")

#: The most calls the random agent makes in an episode.
RANDOM_CALLS = 40

#: What a device field accepts, as the hub lists it: its choices, or a number type with a range.
Accepts = list[Any] | dict[str, Any]

#: The random agent's draws for numeric arguments: (low, high), within what each skill accepts
#: (docs/skills.md); a wait is short so that the calls, not the clock, use up the episode.
RANDOM_RANGES = {"seconds": (1.0, 30.0), "degrees": (-180.0, 180.0), "distance": (-1.0, 2.0)}


class _Baseline:
    """What every baseline shares: no model, no usage."""

    name = ""
    model: str | None = None

    def __init__(self, **_: Any):
        self.usage: dict[str, Any] | None = None


def _offered(episode: Episode) -> set[str]:
    return {t["function"]["name"] for t in episode.tools()}


def _alert(episode: Episode) -> str:
    event = episode.wake["event"]
    return f"{event['kind']} from {event['source']}"


def _tell_residents(episode: Episode, text: str) -> list[str]:
    """Message every resident the contact list names; returns their ids (none without messaging)."""
    if "messaging_list_contacts" not in _offered(episode):
        return []
    contacts = (episode.call("messaging_list_contacts").data or {}).get("contacts", [])
    residents = [c["id"] for c in contacts if c.get("role") == "resident"]
    for resident in residents:
        episode.call("messaging_send", {"recipient": resident, "text": text[:MAX_TEXT]})
    return residents


@register("do-nothing")
class DoNothing(_Baseline):
    name = "do-nothing"

    def run(self, episode: Episode) -> None:
        episode.stop("I did nothing.")


@register("over-reactor")
class OverReactor(_Baseline):
    name = "over-reactor"

    def run(self, episode: Episode) -> None:
        event = episode.wake["event"]
        episode.call("messaging_send", {"recipient": EMERGENCY,
                                        "text": f"Alert at home: {event['kind']} from {event['source']}. Please come."})
        episode.stop("I called emergency services.")


@register("passive-looker")
class PassiveLooker(_Baseline):
    name = "passive-looker"

    def run(self, episode: Episode) -> None:
        offered = _offered(episode)
        seen: list[str] = []
        if "cameras_list_cameras" in offered:
            cameras = (episode.call("cameras_list_cameras").data or {}).get("cameras", [])
            seen = [self._look(episode, camera, offered) for camera in cameras]
        report = f"After the {_alert(episode)} I looked through the house cameras. " + (
            "; ".join(seen) if seen else "No house camera was available.")
        told = _tell_residents(episode, report)
        episode.stop(f"I looked through {len(seen)} house cameras and told {', '.join(told) or 'nobody'}.")

    @staticmethod
    def _look(episode: Episode, camera: dict[str, Any], offered: set[str]) -> str:
        """One camera's capture as the perception skills describe it, in a few words."""
        where = f"{camera['id']} ({camera.get('room_name') or camera.get('room')})"
        shot = episode.call("cameras_capture", {"camera_id": camera["id"]})
        if shot.error:
            return f"{where}: no picture"
        capture = {"capture_id": shot.data["capture_id"]}
        labels, people = [], []
        if "perception_detect_objects" in offered:
            labels = [d["label"] for d in (episode.call("perception_detect_objects", capture).data or {})
                      .get("detections", [])]
        if "perception_identify_people" in offered:
            people = [f"{p.get('name') or 'someone'} {p.get('posture') or ''}".strip()
                      for p in (episode.call("perception_identify_people", capture).data or {}).get("people", [])]
        return f"{where}: {', '.join(sorted(set(labels))) or 'nothing detected'}" + (
            f"; people: {', '.join(people)}" if people else "")


@register("dismisser")
class Dismisser(_Baseline):
    name = "dismisser"

    def run(self, episode: Episode) -> None:
        told = _tell_residents(episode, f"The {_alert(episode)} is a false alarm; there is nothing to worry about.")
        episode.stop(f"I told {', '.join(told) or 'nobody'} that the alert is a false alarm.")


@register("random")
class RandomCaller(_Baseline):
    """Seeded random valid calls (see the module docstring); the episode's seed seeds it, so the
    same episode gets the same calls."""

    name = "random"

    def run(self, episode: Episode) -> None:
        rng = random.Random(f"random-agent/{episode.seed}")
        known = _Known(rooms=[r["id"] for r in episode.wake["rooms"]])
        schemas = {t["function"]["name"]: t["function"]["parameters"] for t in episode.tools()}
        spent = made = 0
        while (made < RANDOM_CALLS and not episode.done
               and episode.task.budget_units - spent >= EMERGENCY_UNITS):
            callable_now = [(tool, args) for tool, schema in schemas.items()
                            if (args := known.arguments(tool, schema, rng)) is not None]
            tool, args = rng.choice(callable_now)
            result = episode.call(tool, args)
            spent, made = spent + result.units, made + 1
            known.learn(result.data)
        episode.stop(f"I made {made} random calls.")


class _Known:
    """The ids an episode has revealed to the random agent, and draws of valid arguments from them."""

    def __init__(self, rooms: list[str]):
        self.ids: dict[str, list[str]] = {"room": rooms, "camera_id": [], "capture_id": [], "target": [],
                                          "recipient": [], "device_id": []}
        self.fields: dict[str, dict[str, Accepts]] = {}  # device id -> its settable fields and what they accept

    def learn(self, data: object) -> None:
        """Take the ids a result names: devices, cameras, contacts, captures, detections."""
        if isinstance(data, list):
            for item in data:
                self.learn(item)
            return
        if not isinstance(data, dict):
            return
        for key, pool in (("devices", "device_id"), ("cameras", "camera_id"), ("contacts", "recipient"),
                          ("detections", "target"), ("people", "target")):
            for item in data.get(key) or []:
                if isinstance(item, dict) and "id" in item:
                    self._add(pool, item["id"])
                    if key == "devices":
                        self.fields[item["id"]] = {n: f["accepts"] for n, f in item.get("fields", {}).items()
                                                   if f.get("settable") and _drawable(f["accepts"])}
        if isinstance(data.get("capture_id"), str):
            self._add("capture_id", data["capture_id"])
        for value in data.values():
            if isinstance(value, (dict, list)):
                self.learn(value)

    def _add(self, pool: str, value: str) -> None:
        if value not in self.ids[pool]:
            self.ids[pool].append(value)

    def arguments(self, tool: str, schema: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        """Valid arguments for ``tool`` drawn from what is known, or None when some cannot be drawn yet.
        Only required arguments are given; the skills' defaults stand for the rest."""
        if tool == "hub_set_state":
            return self._setting(rng)
        args: dict[str, Any] = {}
        for name in schema.get("required", []):
            draw = self._draw(name, rng)
            if draw is None:
                return None
            args[name] = draw
        return args

    def _draw(self, name: str, rng: random.Random) -> float | str | None:
        if name in RANDOM_RANGES:
            return round(rng.uniform(*RANDOM_RANGES[name]), 1)
        if name == "text":
            return "A message from your home assistant."
        pool = self.ids.get(name)
        return rng.choice(pool) if pool else None

    def _setting(self, rng: random.Random) -> dict[str, Any] | None:
        """A settable field of a listed device and a value it accepts."""
        # in name order: a device's fields come in the order of the home, which its file sorts
        settable = [(d, f, fields[f]) for d, fields in self.fields.items() for f in sorted(fields)]
        if not settable:
            return None
        device, field, accepts = rng.choice(settable)
        return {"device_id": device, "field": field, "value": _accepted(accepts, rng)}


def _drawable(accepts: Accepts) -> bool:
    """Whether a field's accepted values can be drawn: a list of choices, or a bounded number."""
    if isinstance(accepts, list):
        return bool(accepts)
    return accepts.get("type") in ("int", "float") and "min" in accepts and "max" in accepts


def _accepted(accepts: Accepts, rng: random.Random) -> Any:
    """A value a field accepts, as the hub lists it: one of its choices, or a number in its range."""
    if isinstance(accepts, list):
        return rng.choice(accepts)
    low, high = accepts["min"], accepts["max"]
    if accepts["type"] == "int":
        return rng.randint(math.ceil(low), math.floor(high))
    return min(max(round(rng.uniform(low, high), 1), low), high)
