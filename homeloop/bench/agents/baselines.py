"""Baseline agents that show the checks can fail and what the failure taxonomy looks like.

- ``do-nothing`` stops at once: it must fail every task;
- ``over-reactor`` messages emergency services on every alert, then stops.
"""

from __future__ import annotations

from typing import Any

from homeloop.bench.agents import register
from homeloop.sim.services.messaging import EMERGENCY_CONTACT as EMERGENCY



@register("do-nothing")
class DoNothing:
    name = "do-nothing"
    model = None

    def __init__(self, **_: Any):
        self.usage = None

    def run(self, episode: Any) -> None:
        episode.stop("I did nothing.")


@register("over-reactor")
class OverReactor:
    name = "over-reactor"
    model = None

    def __init__(self, **_: Any):
        self.usage = None

    def run(self, episode: Any) -> None:
        event = episode.wake["event"]
        episode.call("messaging_send", {"recipient": EMERGENCY,
                                        "text": f"Alert at home: {event['kind']} from {event['source']}. Please come."})
        episode.stop("I called emergency services.")
