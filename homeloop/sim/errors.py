"""The error a skill call ends with, at the bottom of the simulator so that the world's
own modules (people walking, the robot's routes and reach) can raise it without importing
the skill registry (homeloop.sim.skills, which re-exports it)."""

from __future__ import annotations


class SkillError(Exception):
    """A skill call that failed; its message goes back to the model as the result's error."""
