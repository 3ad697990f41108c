"""What furnishing returns: the home, or the failures that kept a plan from becoming one."""

from __future__ import annotations

from dataclasses import dataclass, field

from homeloop.core.home import Home


@dataclass(frozen=True)
class FurnishFailure:
    """A required item that could not be placed (or a plan that cannot become a home)."""

    room: str
    room_type: str
    item: str
    reason: str

    def __str__(self) -> str:
        return f"{self.room_type} {self.room}: {self.item}: {self.reason}"


@dataclass
class FurnishResult:
    """The furnished home (None when a required item failed) and the failures.

    ``partial`` holds the home as far as it got, for inspection, even on failure.
    """

    home: Home | None
    failures: list[FurnishFailure] = field(default_factory=list)
    partial: Home | None = None

    @property
    def ok(self) -> bool:
        return self.home is not None and not self.failures
