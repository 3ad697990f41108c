"""The services an agent reaches, one module each; importing this package declares every skill
(docs/skills.md)."""

from homeloop.sim.services import cameras, clock, hub, messaging, perception, robot, wearables  # noqa: F401
