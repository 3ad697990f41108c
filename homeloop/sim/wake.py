"""Which world events wake the agent for each wake kind a task file names (docs/tasks.md).

Device events carry the event names of the catalog's device entries
(``events:`` in catalog/devices.yaml); a wake kind is one of those from a
device of a given type, or a message from a person.
"""

from __future__ import annotations

from homeloop.sim.world import Event

#: wake kind -> (device type, device event); ``message`` is a message from a person.
WAKE_EVENTS: dict[str, tuple[str, str]] = {
    "smoke_alarm": ("smoke_sensor", "smoke_alarm"),
    "leak_alarm": ("leak_sensor", "leak_alarm"),
    "doorbell": ("doorbell", "doorbell_pressed"),
    "front_door_opening": ("lock", "door_opened"),
    "front_door_closing": ("lock", "door_closed"),
    "fall_alert": ("fall_watch", "fall_detected"),
    "dryer_finished": ("dryer", "cycle_finished"),
}


def wakes(event: Event, wake_kind: str, device_types: dict[str, str]) -> bool:
    """Whether ``event`` is a ``wake_kind`` wake event; ``device_types`` maps device id -> type."""
    if wake_kind == "message":
        return event.kind == "message"
    device_type, device_event = WAKE_EVENTS[wake_kind]
    return event.kind == device_event and device_types.get(event.source) == device_type
