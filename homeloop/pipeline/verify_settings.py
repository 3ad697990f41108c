"""What the verify stage plays (docs/pipeline.md), apart from the code that plays it
(:mod:`homeloop.pipeline.verify_pairs`): the build's parameters read these settings, and a
stage's cache key covers the code it reaches (:func:`homeloop.pipeline.cache.stage_code_hash`),
so beside that code they would bring the reference agent and the simulator into every stage's
key, and editing the agent would rebuild every home."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from homeloop.core.catalog import DEFAULT_ROBOT, load_catalog
from homeloop.core.errors import HomeLoopError

#: The agent whose passing makes a pair count (docs/agents.md).
VERIFY_AGENT = "scripted"


@dataclass(frozen=True)
class VerifySettings:
    """What the verify stage plays: bodies, seeds, and how many further homes beside the house
    (None, a build's default: every home; a number: a sample stratified by task)."""

    enabled: bool = True
    robots: tuple[str, ...] = (DEFAULT_ROBOT,)
    seeds: tuple[int, ...] = (0,)
    homes: int | None = None

    def parameters(self) -> dict[str, Any] | None:
        """What decides the stage's outputs (None when it is switched off)."""
        if not self.enabled:
            return None
        return {"robots": list(self.robots), "seeds": list(self.seeds), "homes": self.homes, "agent": VERIFY_AGENT}

    def check(self) -> None:
        """One line for a body the catalog lacks, no seeds, or a sample of no homes."""
        bodies = load_catalog().robots
        unknown = [r for r in self.robots if r not in bodies]
        if unknown:
            raise HomeLoopError(f"--verify-robots: unknown robot body {', '.join(unknown)}; bodies: {', '.join(bodies)}")
        if self.enabled and not self.robots:
            raise HomeLoopError("--verify-robots names no robot body; give one or more, or pass --no-verify")
        if self.enabled and not self.seeds:
            raise HomeLoopError("--verify-seeds names no seed; give one or more (e.g. 0,1), or pass --no-verify")
        if self.homes is not None and self.homes < 1:
            raise HomeLoopError(f"--verify-homes takes a positive number or 'all', got {self.homes}")
