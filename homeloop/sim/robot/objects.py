"""Objects as the robot body handles them: size, name, heading, grasp points and mass.

Each fact comes from the catalog's entry for the object where it has one, else
from the home file's object (what an episode adds has no home-file entry).
"""

from __future__ import annotations

import math

from homeloop.core.home import HomeObject
from homeloop.sim.world import ObjectState, World

#: Mass of a litre of what a container holds (kg/l), for the weight of a can as it empties.
DENSITY_KG_PER_L = {"water": 1.0, "oil": 0.92}


def home_object(world: World, object_id: str) -> HomeObject | None:
    """The home file's object ``object_id``, or None for one an episode added."""
    return next((o for o in world.home.objects if o.id == object_id), None)


def object_size(world: World, obj: ObjectState) -> tuple[float, float, float]:
    """Width, depth and height of the object (m)."""
    entry = world.catalog.objects.get(obj.catalog_id)
    if entry is not None:
        d = entry.dimensions
        return d.width, d.depth, d.height
    home = home_object(world, obj.id)
    return home.size if home is not None else (0.2, 0.2, 0.2)


def object_label(world: World, obj: ObjectState) -> str:
    """'watering can': the object as messages name it."""
    entry = world.catalog.objects.get(obj.catalog_id)
    return entry.label if entry is not None else obj.semantic_class.replace("_", " ")


def object_yaw(world: World, obj: ObjectState) -> float:
    """The object's heading: where it was last put down (``props['yaw']``), else the home file's."""
    if "yaw" in obj.props:
        return float(obj.props["yaw"])
    home = home_object(world, obj.id)
    return home.pose.yaw if home is not None else 0.0


def grasp_points(world: World, obj: ObjectState) -> list[tuple[str, tuple[float, float, float]]]:
    """(name, position) of each grasp point of the object where it is now."""
    entry = world.catalog.objects.get(obj.catalog_id)
    home = home_object(world, obj.id)
    points = ([(g.name, (g.offset.x, g.offset.y, g.offset.z)) for g in entry.grasp_points] if entry is not None
              else [(g.name, tuple(g.offset)) for g in home.grasp_points] if home is not None else [("body", (0, 0, 0))])
    c, s = math.cos(object_yaw(world, obj)), math.sin(object_yaw(world, obj))
    return [(n, (obj.x + c * dx - s * dy, obj.y + s * dx + c * dy, obj.z + dz)) for n, (dx, dy, dz) in points]


def object_mass(world: World, obj: ObjectState) -> float:
    """The object's mass now (kg): as placed, less what was poured out of it."""
    home = home_object(world, obj.id)
    entry = world.catalog.objects.get(obj.catalog_id)
    mass = home.mass if home is not None else entry.mass if entry is not None else 0.0
    initial = home.contents if home is not None else entry.contents if entry is not None else None
    now = obj.props.get("contents")
    if initial is not None and isinstance(now, dict) and initial.unit == "l":
        mass += (float(now.get("amount", 0.0)) - initial.amount) * DENSITY_KG_PER_L.get(initial.substance, 1.0)
    return round(mass, 3)
