"""Perception: what a capture shows, as labelled boxes (docs/skills.md).

``detect_objects`` returns the objects, furniture, doors, windows and
devices of a capture, ``identify_people`` its people (posture, and a name
when an enrolled person's head is seen). A thing is detected only when the
capture saw enough of it (docs/skills.md): its box covers at least
:data:`MIN_BOX_AREA_PX` pixels, at least :data:`MIN_UNOCCLUDED` of it is not
hidden, and its room was lit (the light module's brightness floor; a person
lying in a dark room is not detected). People a camera's privacy mode
masked are not returned. Labels never name fire, smoke or water: those
show only in the pixels.

Each detection gets an id (``det_N``) kept in the episode's registry;
physical skills name their target by it, and :func:`resolve_detection`
turns it back into the thing, refusing one from a house camera when the
robot's own camera is required, or one gone stale because the thing moved
since the capture.
"""

from __future__ import annotations

import math
from typing import Any

from homeloop.sim.context import SkillContext
from homeloop.sim.skills import SkillError, skill
from homeloop.sim.world import World

#: Smallest detected box (pixels), and smallest share of a thing not hidden (docs/skills.md).
MIN_BOX_AREA_PX = 100
MIN_UNOCCLUDED = 0.30

#: Share of a head that must be seen to name its (enrolled) person.
MIN_HEAD_SEEN = 0.5

#: A detection is stale once its thing has moved farther than this since the capture (m).
STALE_AFTER_M = 0.05

#: Kinds detect_objects returns, in the order it lists them.
OBJECT_KINDS = ("object", "furniture", "opening", "device", "place")


def seen_enough(area_px: float, unoccluded: float) -> bool:
    """Whether a capture saw enough of a thing for perception to report it, were its room lit."""
    return area_px >= MIN_BOX_AREA_PX and unoccluded >= MIN_UNOCCLUDED


def detectable(entity: dict[str, Any]) -> bool:
    """Whether perception reports an entity of a capture (see the module docstring)."""
    return (seen_enough(entity["area_px"], entity["unoccluded"])
            and bool(entity["lit"]) and not entity.get("masked", False))


def capture_record(ctx: SkillContext, capture_id: str) -> dict[str, Any]:
    """A capture of this episode, or a :class:`SkillError` naming the known ones."""
    captures = ctx.captures
    record = captures.get(capture_id)
    if record is None:
        known = ", ".join(list(captures)[-10:]) or "none yet (capture first)"
        raise SkillError(f"unknown capture {capture_id!r}; captures: {known}")
    if record["service"] in ctx.withheld:
        raise SkillError(f"capture {capture_id} came from the {record['service']} service, "
                         "which this episode does not offer")
    return record


def _detections(ctx: SkillContext, record: dict[str, Any], what: str) -> list[dict[str, Any]]:
    """The detections of a capture for ``what`` (objects or people), registered once per capture."""
    registry = ctx.detections
    done = ctx.state.setdefault("detected", {})
    key = f"{record['id']}/{what}"
    if key not in done:
        kinds = OBJECT_KINDS if what == "objects" else ("person",)
        found = [e for k in kinds for e in record["entities"] if e["kind"] == k and detectable(e)]
        ids = []
        for entity in found:
            det_id = f"det_{len(registry) + 1}"
            registry[det_id] = {"id": det_id, "capture": record["id"], "camera": record["camera"],
                                "own": record["own"], "kind": entity["kind"], "entity": entity["id"],
                                "label": entity["label"], "box": entity["box"], "position": entity["position"]}
            ids.append(det_id)
        done[key] = ids
    return [registry[d] for d in done[key]]


@skill("perception", units=1, seconds=0.3)
def detect_objects(ctx: SkillContext, capture_id: str) -> dict[str, Any]:
    """Find the objects, furniture, doors, windows and devices in a capture: label and box
    [x0, y0, x1, y1] in pixels.

    capture_id: a capture id from cameras_capture or robot_capture.
    """
    record = capture_record(ctx, capture_id)
    found = _detections(ctx, record, "objects")
    return {"capture_id": capture_id, "detections": [{"id": d["id"], "label": d["label"], "box": d["box"]}
                                                     for d in found]}


@skill("perception", units=1, seconds=0.4)
def identify_people(ctx: SkillContext, capture_id: str) -> dict[str, Any]:
    """Find the people in a capture: posture, box [x0, y0, x1, y1] in pixels, and their name when
    their face is known and seen.

    capture_id: a capture id from cameras_capture or robot_capture.
    """
    record = capture_record(ctx, capture_id)
    found = _detections(ctx, record, "people")
    people = {e["id"]: e for e in record["entities"] if e["kind"] == "person"}
    out = []
    for d in found:
        person = people[d["entity"]]
        named = person["extra"].get("enrolled") and (person["head_seen"] or 0.0) >= MIN_HEAD_SEEN
        out.append({"id": d["id"], "posture": person["extra"].get("posture"), "box": d["box"],
                    "name": person["extra"].get("name") if named else None})
    return {"capture_id": capture_id, "people": out}


def resolve_detection(ctx: SkillContext, detection_id: str, own_camera: bool = True) -> tuple[str, str]:
    """The (kind, entity id) a detection names: kind is object, furniture, opening, device or person.

    :class:`SkillError` when the id is unknown, when it comes from a house camera and the robot's own
    camera is required, or when the thing has moved more than :data:`STALE_AFTER_M` since the capture.
    """
    registry = ctx.detections
    det = registry.get(detection_id)
    if det is None:
        known = ", ".join(list(registry)[-10:]) or "none yet (capture, then detect_objects)"
        raise SkillError(f"unknown detection {detection_id!r}; recent detections: {known}")
    if own_camera and not det["own"]:
        raise SkillError(f"{detection_id} ({det['label']}) comes from {det['camera']}, not the robot's own camera; "
                         "capture with the robot's camera and detect again")
    if det["kind"] in ("object", "person"):  # furniture, openings and devices stay where they are
        now = _position_now(ctx.world, det["kind"], det["entity"])
        if now is None:
            raise SkillError(f"{detection_id} ({det['label']}) is no longer where it was captured; capture again")
        if math.dist(now, det["position"]) > STALE_AFTER_M:
            raise SkillError(f"{detection_id} ({det['label']}) is stale: it moved since {det['capture']}; "
                             "capture again and use the new detection")
    return det["kind"], det["entity"]


def _position_now(world: World, kind: str, entity_id: str) -> tuple[float, float, float] | None:
    """Where an object or a person is now (None once it is gone)."""
    if kind == "object":
        obj = world.objects.get(entity_id)
        return None if obj is None else (obj.x, obj.y, obj.z)
    person = world.people.get(entity_id)
    return None if person is None or person.room is None else (person.x, person.y, 0.0)
