"""HomeLoop: furnished, device-equipped homes from real floor plans, and a
benchmark for home-assistant agents that coordinate a robot with the home's
networked devices."""

__version__ = "0.1.0"
