"""Devices of catalog types, made once per type and copied for each device placed."""

from __future__ import annotations

from typing import Any

from homeloop.core.catalog import DeviceEntry, MountKind
from homeloop.core.home import Device, Pose, device_from_catalog
from homeloop.core.kept import Kept

#: Devices made by :func:`device_from_catalog`, by catalog entry (identity), mount and present
#: values: each new device of the kind copies one (:func:`new_device`).
_MADE: Kept[Device] = Kept(2000)


def new_device(entry: DeviceEntry, device_id: str, room: str | None, pose: Pose, *, name: str | None = None,
               mount: MountKind | None = None, mounted_on: str | None = None, controls: list[str] | None = None,
               monitors: list[str] | None = None, agent_visible: bool = True,
               values: dict[str, Any] | None = None) -> Device:
    """A device of ``entry``'s type as :func:`device_from_catalog` makes it, named ``name`` (the
    catalog's name when None). The catalog's part of a type (its fields with their accepted and
    present values, category, Matter type, events, mount) is built and checked once; each
    device copies it with its own id, room, pose, name and links."""
    first = _MADE.get_or_make((mount, tuple(sorted(values.items())) if values else ()),
                              lambda: device_from_catalog(entry, device_id, room, pose, mount=mount, values=values),
                              (entry,))
    fields = {n: f.model_copy(update=None if f.values is None else {"values": list(f.values)})
              for n, f in first.fields.items()}
    return first.model_copy(update={
        "id": device_id, "room": room, "pose": pose, "name": name or first.name, "mounted_on": mounted_on,
        "controls": list(controls or []), "monitors": list(monitors or []), "agent_visible": agent_visible,
        "fields": fields, "events": list(first.events)})
