"""What the optional air devices do to the air, as the dynamics read them (docs/dynamics.md): whether a
device runs, a fan's speed, and what an air purifier clears (homeloop/catalog/air_devices.yaml,
``homeloop build --air-devices``). Kept apart so the devices' readings, the humidity and the smoke read
one definition."""

from __future__ import annotations

from typing import Any

#: The speed (%) a fan runs at in each of its modes (Matter Fan Control's FanMode): "on" and "auto"
#: run at the speed asked for (``percent_setting``) where one is, else at these.
FAN_MODE_PERCENT: dict[str, int] = {"off": 0, "low": 33, "medium": 66, "high": 100, "on": 100, "auto": 50}

#: Clean air an air purifier delivers at full speed (m³ an hour of air cleared of smoke particles):
#: a mid-size HEPA unit's smoke rating (AHAM AC-1 CADR, about 200 cfm). At a lower speed, that share.
PURIFIER_CADR_M3_H = 340.0


def running(values: dict[str, Any]) -> bool:
    """Whether a device runs: its ``fan_mode`` is not off, or (a device without one) it is ``on``."""
    mode = values.get("fan_mode")
    return bool(values.get("on", False)) if mode is None else mode != "off"


def fan_speed(values: dict[str, Any]) -> int:
    """The speed (%) a fan or purifier runs at (:data:`FAN_MODE_PERCENT`)."""
    mode, asked = str(values.get("fan_mode", "off")), int(values.get("percent_setting") or 0)
    if mode in ("on", "auto") and asked > 0:
        return asked
    return FAN_MODE_PERCENT.get(mode, 0)


def purifier_rate_per_s(values: dict[str, Any], room_volume_m3: float) -> float:
    """The share of a room's air a purifier clears of smoke a second at its speed now."""
    return PURIFIER_CADR_M3_H / 3600.0 * fan_speed(values) / 100.0 / max(room_volume_m3, 1.0)
