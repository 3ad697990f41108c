"""The equip stage: run the registered steps over one home and assemble the equipped home."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from homeloop.core.catalog import Catalog
from homeloop.core.home import Device, Home
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.profile import DEFAULT_PROFILE, EquipProfile
from homeloop.pipeline.devices.registry import REGISTRY


@dataclass
class EquipResult:
    """The equipped home, what was decided on the way, and what could not be placed."""

    home: Home
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def equip(home: Home, catalog: Catalog, rng: np.random.Generator,
          profile: EquipProfile = DEFAULT_PROFILE) -> EquipResult:
    """A new home with devices and cameras placed (see :mod:`homeloop.pipeline.devices`).

    ``home`` must not hold devices or cameras of its own already placed by
    this stage; its fixtures (sinks, counters) anchor the water main. ``rng``
    is the only source of randomness.
    """
    ctx = EquipContext(home, catalog, rng, profile)
    REGISTRY.run(ctx)
    return EquipResult(equipped_home(ctx), ctx.notes, ctx.failures)


def equipped_home(ctx: EquipContext) -> Home:
    """The input home with what the steps placed: devices (names made unique), cameras,
    placement exceptions, open doors and the people's wearables."""
    home = ctx.home
    openings = [o.model_copy(update={"is_open": True}) if o.id in ctx.open_doors else o for o in home.openings]
    parts = {name: getattr(home, name) for name in Home.model_fields}
    parts.update({
        "devices": list(home.devices) + unique_names(ctx.devices), "openings": openings,
        "cameras": list(home.cameras) + ctx.cameras, "equip_profile": ctx.profile.name,
        "placement_exceptions": list(home.placement_exceptions) + ctx.exceptions})
    if ctx.people is not None:
        parts["people"] = ctx.people
    # The parts are models built (and so checked and rounded) already: validating the home
    # from them checks what ties them together without building every part again.
    return Home.model_validate(parts)


def unique_names(devices: list[Device]) -> list[Device]:
    """Devices with names made unique by a number (``kitchen plug 2``), in order."""
    seen: dict[str, int] = {}
    totals: dict[str, int] = {}
    for d in devices:
        totals[d.name] = totals.get(d.name, 0) + 1
    out = []
    for d in devices:
        if totals[d.name] == 1:
            out.append(d)
            continue
        seen[d.name] = seen.get(d.name, 0) + 1
        out.append(d.model_copy(update={"name": f"{d.name} {seen[d.name]}"}))
    return out


def device_summary(home: Home) -> dict[str, Any]:
    """Counts the build reports per home: devices the agent can query, cameras by kind."""
    return {
        "devices": len(home.devices),
        "agent_devices": sum(1 for d in home.devices if d.agent_visible),
        "cameras": len(home.cameras),
        "agent_cameras": home.agent_camera_count,
        "evaluation_cameras": home.evaluation_camera_count,
        "by_type": home.device_counts(),
    }
