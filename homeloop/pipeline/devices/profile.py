"""Equip profiles: the knobs of one equipping policy (the default, and the house's)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EquipProfile:
    """Knobs of one equipping policy."""

    name: str = "default"
    #: Cameras given to the agent at most (docs/pipeline.md: 6-10 per further home).
    agent_camera_cap: int = 10
    #: Cameras given to the agent at least, where the home has the common rooms for them:
    #: evaluation cameras of rooms without privacy are given first, then second views of
    #: the largest common rooms.
    agent_camera_min: int = 6
    #: ... and more in larger homes: this many per space, rounded, up to the cap
    #: (the further homes of docs/pipeline.md give the agent 6-10 cameras for 8-15 rooms).
    agent_cameras_per_space: float = 0.7
    #: Rooms need at least this area (m²) for a second view given to the agent.
    agent_second_view_min_area: float = 8.0
    #: Add a second, evaluation-only camera where the first sees less than this share of the room.
    second_camera_below: float | None = 0.6
    #: Rooms need at least this area (m²) for a second camera.
    second_camera_min_area: float = 12.0


DEFAULT_PROFILE = EquipProfile()
#: The house (docs/pipeline.md): one camera per space, 8 for the agent and 6 evaluation-only.
HOUSE_PROFILE = EquipProfile(name="house", agent_camera_cap=8, second_camera_below=None)
