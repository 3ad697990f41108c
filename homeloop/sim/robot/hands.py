"""What the robot carries: which hands take an object, holding and releasing it, and where held
objects are as the body moves. A body carries at most ``payload.kg`` a hand, one object a hand.
"""

from __future__ import annotations

from typing import Sequence

from homeloop.sim.robot.body import carry_point
from homeloop.sim.robot.objects import object_label, object_mass
from homeloop.sim.robot.reach import ReachError
from homeloop.sim.world import ObjectState, Placement, RobotState, World


def carried_mass(world: World, robot: RobotState) -> float:
    """What the robot carries now, all hands together (kg)."""
    return sum(object_mass(world, world.objects[o]) for o in set(robot.holding()))


def hands_for(world: World, robot: RobotState, obj: ObjectState) -> list[str]:
    """The hands that will take ``obj``: one free hand, or every hand when it weighs more than one
    hand carries (the catalog's payload is per hand; docs/catalog.md). :class:`ReachError` names
    the masses when no hand is free or it is too heavy; nothing changes then."""
    body = robot.body
    label = object_label(world, obj)
    free = [h for h, o in robot.held.items() if o is None]
    if not free:
        held = ", ".join(f"{h}: {o}" for h, o in robot.held.items())
        raise ReachError(f"no free hand to take the {label}; the {body.name}'s hands hold {held}: place one first")
    mass, per_hand, n = object_mass(world, obj), body.payload.kg, len(robot.held)
    if mass <= per_hand + 1e-9:
        return free[:1]
    full = _fullness(world, obj)
    if mass > per_hand * n + 1e-9:
        both = f" a hand, {per_hand * n:.2f} kg with all {n} hands" if n > 1 else ""
        raise ReachError(f"the {full}{label} weighs {mass:.2f} kg; the {body.name} carries {per_hand:.2f} kg{both}")
    if len(free) < n:
        raise ReachError(f"the {full}{label} weighs {mass:.2f} kg, more than one hand carries ({per_hand:.2f} kg): "
                         f"all {n} hands must be free; place what the robot holds first")
    return free


def _fullness(world: World, obj: ObjectState) -> str:
    contents, cap = obj.props.get("contents"), obj.props.get("capacity_l")
    if isinstance(contents, dict) and cap and contents.get("unit") == "l" and contents.get("amount", 0) > 0:
        return "full " if contents["amount"] >= 0.75 * cap else ""
    return ""


def hold(world: World, robot: RobotState, obj: ObjectState, hands: Sequence[str], grasp: str | None = None) -> None:
    """Put ``obj`` in ``hands``: it moves with the robot from now on."""
    for hand in hands:
        robot.held[hand] = obj.id
    obj.placement = Placement(kind="held", room=robot.room, holder="robot")
    if grasp is not None:
        obj.props["grasp"] = grasp
    obj.x, obj.y, obj.z = held_point(robot, hands)


def release(robot: RobotState, obj: ObjectState) -> list[str]:
    """Take ``obj`` out of the robot's hands; returns the hands that held it."""
    hands = [h for h, o in robot.held.items() if o == obj.id]
    for hand in hands:
        robot.held[hand] = None
    obj.props.pop("grasp", None)
    return hands


def held_point(robot: RobotState, hands: Sequence[str]) -> tuple[float, float, float]:
    """Where an object held in ``hands`` is (between them when several hold it)."""
    pts = [carry_point(robot, h) for h in hands]
    return tuple(sum(p[i] for p in pts) / len(pts) for i in range(3))  # type: ignore[return-value]


def move_held(robot: RobotState, objects: dict[str, ObjectState]) -> None:
    """Held objects follow the robot's hands."""
    for oid in set(robot.holding()):
        if oid in objects:
            o = objects[oid]
            o.x, o.y, o.z = held_point(robot, [h for h, held in robot.held.items() if held == oid])
            o.placement.room = robot.room
