"""The home hub: list, read and set the home's networked devices (docs/skills.md).

The hub reaches the sensors, actuators and appliances the home shows the
agent (``agent_visible`` in the home file); cameras and worn devices have
services of their own. Readings are what the devices report, faults
included; timestamps are agent time (seconds since the wake event).
"""

from __future__ import annotations

from typing import Any

from homeloop.core.home import Device, DeviceField
from homeloop.sim import devices
from homeloop.sim.context import SkillContext
from homeloop.sim.skills import SkillError, skill


def hub_devices(ctx: SkillContext) -> list[Device]:
    """The devices the hub shows, in home file order."""
    return [d for d in ctx.world.home.devices if d.agent_visible and d.category in devices.HUB_CATEGORIES]


def hub_device(ctx: SkillContext, device_id: str) -> Device:
    """A device the hub reaches, or a :class:`SkillError` naming similar ids."""
    entry = next((d for d in hub_devices(ctx) if d.id == device_id), None)
    if entry is None:
        shown = [d for d in ctx.world.home.devices if d.agent_visible]
        other = next((d for d in shown if d.id == device_id), None)
        if other is not None:
            service = "wearables" if other.category == "wearable" else "cameras"
            raise SkillError(f"{device_id} is a {other.type}; the {service} service reaches it, not the hub")
        raise SkillError(f"unknown device {device_id!r}; "
                         f"{devices.suggest_devices(ctx.world, device_id, devices.HUB_CATEGORIES)}")
    return entry


def agent_readings(ctx: SkillContext, entry: Device) -> dict[str, Any]:
    """The device's readings with timestamps in agent time."""
    out = devices.readings(ctx.world.devices[entry.id])
    for name, spec in entry.fields.items():
        if spec.type == "timestamp" and out.get(name) is not None:
            out[name] = round(out[name] - ctx.wake_time, 3)
    return out


def _field_info(spec: DeviceField) -> dict[str, Any]:
    return {"settable": spec.settable, "accepts": devices.accepted_values(spec), "means": spec.description}


@skill("hub", units=1, seconds=0.1)
def list_devices(ctx: SkillContext, room: str | None = None, type: str | None = None) -> dict[str, Any]:
    """List the home's devices: id, type, name, room and fields (which are settable, what they accept).

    room: only devices in this room (a room id from the list of rooms); omit for every room.
    type: only devices of this type (smoke_sensor, stove, lock, light, water_main ...); omit for all.
    """
    shown = hub_devices(ctx)
    if room is not None and room not in {r.id for r in ctx.world.home.rooms}:
        rooms = ", ".join(f"{r.id} ({r.name})" for r in ctx.world.home.rooms)
        raise SkillError(f"unknown room {room!r}; rooms: {rooms}")
    if type is not None and type not in {d.type for d in shown}:
        raise SkillError(f"no device of type {type!r}; types: {', '.join(sorted({d.type for d in shown}))}")
    listed = [d for d in shown if (room is None or d.room == room) and (type is None or d.type == type)]
    return {"devices": [{"id": d.id, "type": d.type, "name": d.name, "room": d.room,
                         "fields": {n: _field_info(f) for n, f in d.fields.items()}} for d in listed]}


@skill("hub", units=1, seconds=0.1)
def get_state(ctx: SkillContext, device_id: str) -> dict[str, Any]:
    """Read a device's present readings.

    device_id: the device, as hub_list_devices names it.
    """
    entry = hub_device(ctx, device_id)
    if not ctx.world.devices[device_id].online:
        raise SkillError(f"{device_id} does not answer (offline)")
    return {"id": device_id, "type": entry.type, "room": entry.room, "t": ctx.now(),
            "readings": agent_readings(ctx, entry)}


@skill("hub", units=2, seconds=0.3)
def set_state(ctx: SkillContext, device_id: str, field: str, value: bool | int | float | str) -> dict[str, Any]:
    """Set a settable field of a device (switch a burner off, close the water main, unlock a door ...).

    device_id: the device, as hub_list_devices names it.
    field: the field to set; hub_list_devices says which fields are settable.
    value: the new value: true/false, a number in the field's range, or one of its listed values.
    """
    entry = hub_device(ctx, device_id)
    try:
        devices.set_state(ctx.world, device_id, field, value)
    except devices.DeviceError as exc:
        raise SkillError(str(exc)) from None
    return {"id": device_id, "readings": agent_readings(ctx, entry)}
