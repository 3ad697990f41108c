"""Agents the home-control tests play against the rules: one that reports the request infeasible."""

from __future__ import annotations

from typing import Any


class Reporter:
    """Reports the request infeasible with a reason and a detail, then stops."""

    model = None
    usage = None

    def __init__(self, reason: str, detail: str, name: str = "reporter"):
        self.reason, self.detail, self.name = reason, detail, name

    def run(self, episode: Any) -> None:
        episode.call("messaging_report_infeasible", reason=self.reason, detail=self.detail)
        episode.stop("I cannot do that.")


def everything_infeasible() -> Reporter:
    """The shortcut policy that reports every request infeasible, for the lack of a device."""
    return Reporter("missing_device", "the home has no such device", name="everything-infeasible")
