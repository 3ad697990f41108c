"""Messaging: the residents, others the scenario brings, and emergency services (docs/skills.md).

A sent message is recorded in :attr:`World.messages` (what the checks read:
the resident told, emergency services called). Messaging emergency services
costs far more than messaging a person (docs/skills.md): a false alarm has
a price.
"""

from __future__ import annotations

from typing import Any

from homeloop.sim.context import SkillContext
from homeloop.sim.skills import SkillError, skill
from homeloop.sim.world import Message

#: The contact id that reaches emergency services.
EMERGENCY_CONTACT = "emergency_services"

#: Units of a message to emergency services, and to anyone else (docs/skills.md).
EMERGENCY_UNITS = 42
MESSAGE_UNITS = 2

#: Roles of the people in a scenario the agent can message (not a courier or an intruder).
CONTACT_ROLES = ("resident", "visitor", "caregiver")

#: The longest message accepted (characters).
MAX_TEXT = 2000


def contacts(ctx: SkillContext) -> list[dict[str, Any]]:
    """The people the agent can message, then emergency services."""
    people = [{"id": p.id, "name": p.name, "role": p.role} for p in ctx.world.people.values()
              if p.role in CONTACT_ROLES]
    return people + [{"id": EMERGENCY_CONTACT, "name": "emergency services", "role": "emergency"}]


def _normal(recipient: str) -> str:
    return recipient.strip().lower().replace(" ", "_")


def is_emergency(recipient: str) -> bool:
    return _normal(recipient) == EMERGENCY_CONTACT


def _price(args: dict[str, Any]) -> int:
    return EMERGENCY_UNITS if is_emergency(str(args.get("recipient", ""))) else MESSAGE_UNITS


@skill("messaging", units=1, seconds=0.1)
def list_contacts(ctx: SkillContext) -> dict[str, Any]:
    """List who can be messaged: the residents by name, others in the home's circle, emergency services."""
    return {"contacts": contacts(ctx)}


@skill("messaging", units=MESSAGE_UNITS, seconds=0.5, price=_price,
       cost_note=f"{EMERGENCY_UNITS} to emergency services")
def send(ctx: SkillContext, recipient: str, text: str) -> dict[str, Any]:
    """Send a text message to a contact.

    recipient: a contact id (or name) from messaging_list_contacts, e.g. a resident or emergency_services.
    text: the message, in plain words.
    """
    known = contacts(ctx)
    wanted = _normal(recipient)
    match = next((c for c in known if _normal(c["id"]) == wanted or _normal(c["name"]) == wanted), None)
    if match is None:
        raise SkillError(f"unknown recipient {recipient!r}; contacts: "
                         + ", ".join(f"{c['id']} ({c['name']})" for c in known))
    if not text.strip():
        raise SkillError("text is empty; write the message to send")
    if len(text) > MAX_TEXT:
        raise SkillError(f"text has {len(text)} characters; at most {MAX_TEXT} are sent")
    ctx.world.messages.append(Message(ctx.world.time, "agent", match["id"], text))
    return {"sent_to": match["id"], "name": match["name"], "t": ctx.now()}
