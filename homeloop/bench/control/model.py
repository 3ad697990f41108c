"""A home-control episode: one JSON line of an episodes file (docs/tasks.md, "Home control").

::

    {"id": "ctl_house_qt3_f_001", "home": "house", "query_type": "explicit_control", "feasible": true,
     "request": "Please switch on the kitchen light.", "clock_start_s": 77400, "seed": 0, "horizon_s": 120,
     "intent": {"steps": [{"device_type": "light", "room": "3", "devices": ["light_3_1"], "field": "on",
                           "value": true}]},
     "prerequisites": [{"device_id": "light_3_1", "field": "on", "value": false}],
     "goal": {"conditions": [{"devices": ["light_3_1"], "field": "on", "equals": true, "start_s": null}]},
     "constraint": null, "events": []}

``goal`` is a predicate of the state over time, in agent time (seconds after
the request): each :class:`Condition` holds for its devices (every one, or
one of them with ``any``) throughout ``[start_s, end_s]`` (``start_s`` null:
at the end; ``end_s`` null: to the horizon); ``untouched``: no settable
field of any hub device changed; ``answer``: what the reply to a question
must say. ``intent`` is the request in structured form, what the scripted
solver (:mod:`homeloop.bench.control.solver`) reads; ``constraint`` says
what makes an infeasible request impossible and the words a report of it
names. ``events`` are what the scenario does during the episode (the front
door opening), in agent time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from homeloop.core.catalog import FieldValue
from homeloop.core.errors import HomeLoopError
from homeloop.core.io import write_text

#: The six query types, in docs/tasks.md order, and SimuHome's names for them.
QueryType = Literal["state_inquiry", "implicit_intent", "explicit_control", "time_schedule", "event_automation",
                    "coordinated_schedule"]
QUERY_TYPES: tuple[str, ...] = get_args(QueryType)
QUERY_CODES = {"state_inquiry": "QT1", "implicit_intent": "QT2", "explicit_control": "QT3",
               "time_schedule": "QT4-1", "event_automation": "QT4-2", "coordinated_schedule": "QT4-3"}
#: What makes a request infeasible (the reasons of ``messaging_report_infeasible``).
ConstraintKind = Literal["missing_device", "out_of_range", "time_contradiction"]
CONSTRAINT_KINDS: tuple[str, ...] = get_args(ConstraintKind)

#: How long a control episode runs (s of agent time): this long after the last moment its goal or its
#: events name, at least the shortest; and its budget (units).
HORIZON_MARGIN_S = 120
MIN_HORIZON_S = 120
BUDGET_UNITS = 200
#: When the resident's request arrives (s of world time): the wake event.
REQUEST_AT_S = 0.1
#: The scenario every control episode plays (homeloop.bench.control.play): a model agent's role prompt
#: knows a control episode by it.
CONTROL_SCENARIO = "control"
#: How far from the asked time a timed setting may happen and still count (s): the calls that set it
#: up take time.
TIME_TOLERANCE_S = 15.0


class ControlModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Condition(ControlModel):
    """A device field's value over a window of agent time (see the module docstring)."""

    devices: tuple[str, ...] = Field(min_length=1)
    field: str
    equals: FieldValue = None
    at_least: float | None = None
    at_most: float | None = None
    any: bool = False
    start_s: float | None = None
    end_s: float | None = None

    def accepts(self, value: Any) -> bool:
        if self.at_least is not None or self.at_most is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return False
            return (self.at_least is None or value >= self.at_least) and (self.at_most is None or value <= self.at_most)
        return bool(value == self.equals)

    @property
    def timed(self) -> bool:
        """Whether it holds over a window (its failure is one of timing) rather than at the end."""
        return self.start_s is not None


class Answer(ControlModel):
    """What the reply to a state question must say: one of ``words``, or ``number`` within ``tolerance``,
    and none of ``wrong``."""

    words: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()
    number: float | None = None
    tolerance: float = 0.5


class Goal(ControlModel):
    conditions: tuple[Condition, ...] = ()
    untouched: bool = False
    answer: Answer | None = None


class Prerequisite(ControlModel):
    """A device field's value when the request arrives (set up before the agent is woken)."""

    device_id: str
    field: str
    value: FieldValue


class Step(ControlModel):
    """One device setting the request asks for: the devices of a type in a room (``devices``: those the
    home has there, none for a device it lacks), and when: now, ``in_s`` from the request, at a clock
    time ``at``, or ``after_s`` after step ``after``."""

    device_type: str
    room: str | None = None
    devices: tuple[str, ...] = ()
    field: str
    value: FieldValue
    any: bool = False
    in_s: float | None = None
    at: str | None = None
    after: int | None = None
    after_s: float | None = None


class TriggerIntent(ControlModel):
    """What an automation waits for: an event of a device (``devices``: none for one the home lacks)."""

    device_type: str
    room: str | None = None
    devices: tuple[str, ...] = ()
    event: str
    delay_s: float = 0.0


class Inquiry(ControlModel):
    """A reading asked about."""

    device_type: str
    room: str | None = None
    devices: tuple[str, ...] = ()
    field: str


class Intent(ControlModel):
    steps: tuple[Step, ...] = ()
    trigger: TriggerIntent | None = None
    inquiry: Inquiry | None = None


class Constraint(ControlModel):
    """What makes a request impossible; a report of it names ``kind`` and one of ``words`` in its detail."""

    kind: ConstraintKind
    words: tuple[str, ...] = Field(min_length=1)


class TimedEvent(ControlModel):
    """Something the scenario does during the episode: an opening opens or closes (agent time)."""

    at_s: float
    action: Literal["open", "close"]
    opening: str


class ControlEpisode(ControlModel):
    """One control episode (see the module docstring)."""

    id: str
    home: str
    query_type: QueryType
    feasible: bool
    request: str
    template: str
    clock_start_s: float = Field(ge=0, lt=86400)
    seed: int = Field(0, ge=0)
    horizon_s: int = Field(MIN_HORIZON_S, ge=MIN_HORIZON_S)
    intent: Intent
    prerequisites: tuple[Prerequisite, ...] = ()
    goal: Goal
    constraint: Constraint | None = None
    events: tuple[TimedEvent, ...] = ()

    @property
    def category(self) -> str:
        """The score table's category: the query type and whether it is feasible."""
        return f"{self.query_type}/{'feasible' if self.feasible else 'infeasible'}"

    def line(self) -> str:
        """The episode as one JSON line (keys sorted, so the same episode is the same bytes)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def horizon_for(goal: Goal, events: Iterable[TimedEvent]) -> int:
    """A control episode's horizon: :data:`HORIZON_MARGIN_S` after the last moment its goal or events name."""
    moments = [t for c in goal.conditions for t in (c.start_s, c.end_s) if t is not None]
    moments += [e.at_s for e in events]
    return max(MIN_HORIZON_S, int(math.ceil(max(moments, default=0.0))) + HORIZON_MARGIN_S)


class EpisodesFileError(HomeLoopError):
    """An episodes file that cannot be read; the line names the file, the line number and the field."""


def read_episodes(path: str | Path) -> list[ControlEpisode]:
    """Every episode of a JSONL file, or :class:`EpisodesFileError` naming the file, line and field."""
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EpisodesFileError(f"{file}: cannot be read ({exc})") from None
    episodes, seen = [], set()
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            episode = ControlEpisode.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            raise EpisodesFileError(f"{file}:{number}: field {where}: {first['msg']}") from None
        if episode.id in seen:
            raise EpisodesFileError(f"{file}:{number}: field id: {episode.id!r} appears twice")
        seen.add(episode.id)
        episodes.append(episode)
    return episodes


def write_episodes(path: str | Path, episodes: Iterable[ControlEpisode]) -> Path:
    """Write the episodes as JSON lines (a temporary name, then renamed)."""
    text = "".join(e.line() + "\n" for e in episodes)
    return write_text(Path(path), text)
