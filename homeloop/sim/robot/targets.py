"""Targets: what each kind of thing the robot acts on (an object, a piece of furniture, an
opening, a device, a person) offers a hand, and the heights of pouring.
"""

from __future__ import annotations

from shapely import Point

from homeloop.core.catalog import Catalog
from homeloop.core.home import ContainerSpace, Furniture, polygon_from_rings
from homeloop.core.navigation import PASSABLE_KINDS
from homeloop.sim.dynamics.people import PERSON_REACH_M
from homeloop.sim.robot.floor import room_of
from homeloop.sim.robot.objects import grasp_points, object_label
from homeloop.sim.robot.obstacles import door_words
from homeloop.sim.robot.reach import Handle, Target
from homeloop.sim.errors import SkillError
from homeloop.sim.world import World

#: Height of a door handle above the floor (m); lever handles sit at 0.85–1.1 m.
DOOR_HANDLE_HEIGHT = 1.0

#: Height of a person's hand taking something from the robot, by posture (m).
HAND_HEIGHT_BY_POSTURE = {"standing": 1.0, "sitting": 0.7, "lying": 0.3}

#: While pouring, the can's base clears the rim of what it pours into by this much (m); the rim is
#: where a pot is held (its highest grasp point).
POUR_CLEARANCE = 0.05


def pour_hand_height(rim_z: float, grasp_z: float) -> float:
    """Height (m) of the hand that pours over a rim at ``rim_z``, holding the can by a grasp
    ``grasp_z`` above its base: the one rule of the ``pour`` skill and of task screening."""
    return rim_z + POUR_CLEARANCE + grasp_z


def pour_hand_heights(catalog: Catalog, into: str, container: str, base_z: float) -> list[float]:
    """The hand heights of pouring from ``container`` (a catalog object id), held by each of its
    grasps, into ``into`` (one) standing at ``base_z``: its rim is its highest grasp point."""
    rim = base_z + max(g.offset.z for g in catalog.objects[into].grasp_points)
    return [pour_hand_height(rim, g.offset.z) for g in catalog.objects[container].grasp_points]


def container_height(container: ContainerSpace) -> float:
    """Where a hand puts something into a container: at the rim of an open-topped one, halfway up
    one closed by a door (a drum, a cupboard)."""
    return container.bottom + (container.height if container.opened_by is None else container.height / 2)


def object_target(world: World, object_id: str) -> Target:
    """The object's grasp points where it is now; the room it lies in."""
    obj = world.objects[object_id]
    label = object_label(world, obj)
    handles = tuple(Handle(f"the {label}'s {name.replace('_', ' ')}", Point(p[0], p[1]), p[2], name)
                    for name, p in grasp_points(world, obj))
    room = obj.placement.room if obj.placement.kind != "held" else None
    return Target("object", object_id, f"the {label} ({object_id})", room or room_of(world.home, obj.x, obj.y),
                  handles, exclude=(object_id,))


def furniture_target(world: World, furniture_id: str) -> Target:
    """A piece of furniture's surfaces, containers and hinged parts (or its footprint)."""
    f: Furniture = world.home.furniture_item(furniture_id)
    name = f.semantic_class.replace("_", " ")
    handles = [Handle(f"the {name}'s {s.name.replace('_', ' ')}", polygon_from_rings(s.polygon), s.height, s.name)
               for s in f.surfaces]
    handles += [Handle(f"the {name}'s {c.name.replace('_', ' ')}", polygon_from_rings(c.polygon),
                       container_height(c), c.name) for c in f.containers]
    handles += [Handle(f"the {name}'s {p.name.replace('_', ' ')}", Point(p.hinge[0], p.hinge[1]), p.hinge[2], p.name)
                for p in f.parts if p.hinge is not None]
    if not handles:
        handles = [Handle(f"the {name}", polygon_from_rings(f.footprint), f.height)]
    return Target("furniture", f.id, f"the {name} ({f.id})", f.room, tuple(handles))


def part_target(furniture: Target, part: str) -> Target | None:
    """One hinged part of a piece of furniture (its :func:`furniture_target`) as a target of its own,
    the handle a hand works it by alone; None where the part has no hinge point to work it by."""
    handle = next((h for h in furniture.handles if h.key == part), None)
    if handle is None:
        return None
    return Target(furniture.kind, furniture.id, handle.what, furniture.room, (handle,))


def opening_target(world: World, opening_id: str, near: tuple[float, float] | None = None) -> Target:
    """A door's handle or a window's, worked from the room ``near`` lies in (else an indoor room)."""
    o = world.home.opening(opening_id)
    poly = polygon_from_rings(o.polygon)
    z = DOOR_HANDLE_HEIGHT if o.kind in PASSABLE_KINDS else o.sill + o.height / 2
    rooms = [r for r in o.connects if world.home.room(r).indoor] or list(o.connects)
    if near is not None and len(o.connects) > 1:
        here = room_of(world.home, *near)
        rooms = [here] if here in o.connects else rooms
    what = "handle" if o.kind in PASSABLE_KINDS else "window handle"
    words = door_words(world, opening_id)
    return Target("opening", o.id, words, rooms[0] if rooms else None,
                  (Handle(f"{words.split(' (')[0]}'s {what}", poly.centroid, z),))


def device_target(world: World, device_id: str) -> Target:
    """A device where it is mounted; a worn one is reached on its wearer."""
    d = world.home.device(device_id)
    name = d.name or d.type.replace("_", " ")
    if d.room is None:  # worn: on its wearer
        wearer = next((p for p in world.people.values() if device_id in p.wears), None)
        if wearer is not None:
            return person_target(world, wearer.id)
    return Target("device", d.id, f"the {name} ({d.id})", d.room,
                  (Handle(f"the {name}", Point(d.pose.x, d.pose.y), d.pose.z),))


def person_target(world: World, person_id: str) -> Target:
    """A person's hand, at the height their posture holds it."""
    p = world.people[person_id]
    z = HAND_HEIGHT_BY_POSTURE.get(p.posture, 1.0)
    reach = Point(p.x, p.y).buffer(PERSON_REACH_M, quad_segs=8)
    return Target("person", p.id, f"{p.name} ({p.id})", p.room,
                  (Handle(f"{p.name}'s hand", reach, z),), exclude=(p.id,))


TARGETS = {"object": object_target, "furniture": furniture_target, "opening": opening_target,
           "device": device_target, "person": person_target}


def target_of(world: World, kind: str, entity_id: str) -> Target:
    """The :class:`Target` of an entity (kind: object, furniture, opening, device, person)."""
    if kind not in TARGETS:
        raise SkillError(f"cannot act on a {kind}; the robot acts on: {', '.join(TARGETS)}")
    return TARGETS[kind](world, entity_id)
