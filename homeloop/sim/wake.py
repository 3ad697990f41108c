"""Which world events wake the agent for each wake kind a task file names (docs/tasks.md).

The device type that raises each wake kind, and what it must sit on, is
defined once with the tasks (:data:`homeloop.sim.task.WAKE_SOURCES`); this
module adds only the name of the device event (the ``events:`` of the
device's catalog entry) that counts as the wake. ``message`` is a message
from a person.
"""

from __future__ import annotations

from homeloop.core.home import Home
from homeloop.sim.task import WAKE_SOURCES
from homeloop.sim.world import Event

#: wake kind -> the device event (homeloop/catalog/devices.yaml ``events:``) that raises it.
WAKE_EVENT_NAMES: dict[str, str] = {
    "smoke_alarm": "smoke_alarm",
    "leak_alarm": "leak_alarm",
    "doorbell": "doorbell_pressed",
    "front_door_opening": "opened",
    "front_door_closing": "closed",
    "fall_alert": "fall_detected",
    "dryer_finished": "cycle_finished",
}


def waking_devices(home: Home, wake_kind: str) -> frozenset[str]:
    """Ids of the devices whose event raises ``wake_kind`` in ``home`` (empty for messages)."""
    source = WAKE_SOURCES[wake_kind]
    if source is None:
        return frozenset()
    device_type, attached_to = source
    kinds = {o.id: o.kind for o in home.openings}
    found = set()
    for d in home.devices:
        if d.type != device_type:
            continue
        targets = [d.mounted_on, *d.monitors]
        if attached_to is None or any(kinds.get(t) == attached_to for t in targets if t):
            found.add(d.id)
    return frozenset(found)


def wakes(event: Event, wake_kind: str, devices: frozenset[str]) -> bool:
    """Whether ``event`` wakes the agent for ``wake_kind``; ``devices`` from :func:`waking_devices`."""
    if wake_kind == "message":
        return event.kind == "message"
    return event.kind == WAKE_EVENT_NAMES[wake_kind] and event.source in devices
