"""The predicates task checks name, declared once each (docs/tasks.md, docs/scores.md).

A predicate is a small function of the running episode and the check's
``params`` that says whether something holds *now*; it returns evidence (a
truthy value: a dict naming what made it hold) or a falsy value. The task
file gives each check its kind (final, ever, always, never) and
:mod:`homeloop.bench.monitor` applies it; for ``never`` checks the predicate
names the forbidden thing (``no_false_alarm``: "emergency services were
messaged").

Each predicate also declares the failure class a failed check counts as
(docs/scores.md): Over (a forbidden intervention), Under (a missed required
intervention), Evidence (a missing required capture), Physical (a wrong
object or house state), Report (a missing required message); and when it
can change: ``on="call"`` for what only a call changes (messages, captures),
``on="step"`` for what the world's dynamics change too.

Predicates read the world's ground truth and the episode's registries; they
find things by role (the stove, the residents, the front door), never by id.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

#: Failure classes, in the order tables list them.
FAILURE_CLASSES = ("Over", "Under", "Evidence", "Physical", "Report", "Limit")

#: The messaging contact that reaches emergency services.
EMERGENCY = "emergency_services"

#: How far (m) from a person an object counts as within their reach.
PERSON_REACH_M = 0.8


@dataclass(frozen=True)
class Predicate:
    id: str
    function: Callable[[Any, dict[str, Any]], Any]
    failure_class: str
    on: str
    doc: str


#: Every predicate, by the check id task files use.
PREDICATES: dict[str, Predicate] = {}


def check(check_id: str, *, failure: str, on: str = "step") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the predicate of check ``check_id`` (see the module docstring)."""
    if failure not in FAILURE_CLASSES:
        raise ValueError(f"check {check_id}: unknown failure class {failure!r}")
    if on not in ("step", "call"):
        raise ValueError(f"check {check_id}: on must be 'step' or 'call'")

    def add(function: Callable[..., Any]) -> Callable[..., Any]:
        if check_id in PREDICATES:
            raise ValueError(f"check {check_id} is declared twice")
        PREDICATES[check_id] = Predicate(check_id, function, failure, on, inspect.getdoc(function) or "")
        return function

    return add


# --- shared readings ------------------------------------------------------------------------------


def _world(ep: Any) -> Any:
    return ep.world


def messages_to(ep: Any, recipients: Iterable[str]) -> list[Any]:
    """The agent's messages to any of ``recipients`` (person ids or contact ids)."""
    wanted = set(recipients)
    return [m for m in ep.world.messages if m.sender == "agent" and m.recipient in wanted]


def resident_ids(ep: Any) -> list[str]:
    return [p.id for p in ep.world.residents()]


def device_values(ep: Any, device_type: str) -> list[tuple[str, dict[str, Any]]]:
    return [(d.id, d.values) for d in ep.world.devices_of_type(device_type)]


def _held_by(obj: Any, holder: str) -> bool:
    return obj.placement.kind == "held" and obj.placement.holder == holder


def within_reach_of(ep: Any, obj: Any, person: Any) -> bool:
    """The object is held by the person, or lies within their reach where they are."""
    if _held_by(obj, person.id) or obj.id in person.holding:
        return True
    if person.room is None or obj.placement.kind == "held":
        return False
    return math.hypot(obj.x - person.x, obj.y - person.y) <= PERSON_REACH_M


def objects(ep: Any, *classes_or_catalog_ids: str) -> list[Any]:
    wanted = set(classes_or_catalog_ids)
    return [o for o in ep.world.objects.values() if o.semantic_class in wanted or o.catalog_id in wanted]


def first(items: list[Any]) -> Any:
    return items[0] if items else None
