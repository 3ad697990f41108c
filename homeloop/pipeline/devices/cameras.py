"""House cameras: which rooms get one, which the agent sees, and their poses.

Dome cameras go in ceiling corners, turned to the room's centre and tilted down
(:mod:`homeloop.pipeline.devices.camera_views`):

- the entrance hall (seeing the entrance door), the porch (or a doorbell camera where the
  door opens onto nothing drawn);
- living areas, kitchens, dining rooms, corridors, offices and outdoor spaces for the agent
  (at most :attr:`EquipProfile.agent_camera_cap`, the rest evaluation-only); laundries and
  garages evaluation-only; bedrooms (people masked) and bathrooms (image blocked)
  evaluation-only;
- a second, evaluation-only camera in rooms the first sees poorly.

Homes with fewer than :attr:`EquipProfile.agent_camera_min` agent cameras give the agent
the laundry's and garage's cameras, then second views of the largest common rooms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from homeloop.core.catalog import DeviceEntry
from homeloop.core.check import ENTRANCE_INSIDE_DEPTH, inner_room, opening_face_point
from homeloop.core.home import CameraPose, Opening, Pose, camera_from_catalog
from homeloop.core.plan import BEDROOM_SUBTYPES
from homeloop.pipeline.devices.camera_views import CameraView, best_camera
from homeloop.pipeline.devices.catalog_devices import new_device
from homeloop.pipeline.devices.context import BATHROOM_SUBTYPES, EquipContext
from homeloop.pipeline.devices.mounting import face
from homeloop.pipeline.devices.registry import step

#: Rooms whose camera may be given to the agent (common areas); outdoor spaces too.
AGENT_CAMERA_SUBTYPES = ("LIVING_ROOM", "LIVING_DINING", "KITCHEN", "KITCHEN_DINING", "DINING", "CORRIDOR", "OFFICE")
#: Rooms with an evaluation-only camera.
EVALUATION_CAMERA_SUBTYPES = frozenset(BEDROOM_SUBTYPES | BATHROOM_SUBTYPES | {"WASH_AND_DRY_ROOM", "GARAGE"})
#: Rooms smaller than this (m²) get no camera (closets, tiny halls); the entrance room always does.
MIN_CAMERA_ROOM_AREA = 3.0
#: Doorbell camera: height (m) beside the door and tilt (degrees).
DOORBELL_CAMERA_HEIGHT = 1.4
DOORBELL_CAMERA_PITCH = -10.0
#: Priorities of planned cameras, lower first: the entrance hall's, the porch's (or the doorbell's);
#: the rooms' follow from 2 on (by :data:`AGENT_CAMERA_SUBTYPES`, then outdoor spaces), then the
#: evaluation rooms', the agent's second views and the evaluation-only second cameras.
HALL_PRIORITY = 0
PORCH_PRIORITY = 1
ROOM_PRIORITY = 2
EVALUATION_PRIORITY = 100
AGENT_SECOND_VIEW_PRIORITY = 150
SECOND_CAMERA_PRIORITY = 200


@dataclass
class PlannedCamera:
    """A camera decided on: its room, corner and pose, what it sees, its rank and who sees it."""

    room: str
    corner: tuple[float, float]
    yaw: float
    z: float
    pitch: float
    seen: np.ndarray
    share: float
    priority: int
    agent: bool
    #: The entrance door of a doorbell camera (None: a dome camera).
    doorbell: str | None = None

    @classmethod
    def of(cls, rid: str, view: CameraView, *, priority: int, agent: bool) -> PlannedCamera:
        return cls(rid, view.corner, view.yaw, view.z, view.pitch, view.seen, view.share, priority, agent)


@step("cameras", "Dome cameras in ceiling corners (and a doorbell camera), for the agent or for evaluation.")
def cameras(ctx: EquipContext) -> None:
    entry = ctx.entry("dome_camera")
    assert entry.camera is not None  # a camera device type always has optics (catalog)
    hfov = entry.camera.hfov_deg
    planned = entrance_cameras(ctx, hfov)
    done = {p.room for p in planned if p.doorbell is None}
    planned += room_cameras(ctx, hfov, done)
    below = ctx.profile.second_camera_below
    if below is not None:
        planned += second_cameras(ctx, planned, hfov, below)
    top_up_agent_cameras(ctx, planned, hfov)
    # The agent gets the first cameras by priority, up to the cap; the rest record for evaluation.
    agent_order = sorted((p for p in planned if p.agent), key=lambda p: (p.priority, ctx.room_index(p.room)))
    for k, p in enumerate(agent_order):
        if k >= ctx.profile.agent_camera_cap:
            p.agent = False
            ctx.notes.append(f"camera in room {p.room} is evaluation-only: the agent's "
                             f"{ctx.profile.agent_camera_cap} cameras are taken")
    for p in sorted(planned, key=lambda p: (not p.agent, p.priority, ctx.room_index(p.room))):
        add_camera(ctx, p, entry)


def entrance_cameras(ctx: EquipContext, hfov: float) -> list[PlannedCamera]:
    """The hall's camera seeing the inside of the entrance door; the porch's seeing its
    outside, or a doorbell camera where the door opens onto nothing drawn."""
    home = ctx.home
    entrance = next((o for o in home.openings if o.kind == "entrance_door" and inner_room(home, o)), None)
    if entrance is None:
        return []
    planned: list[PlannedCamera] = []
    hall = inner_room(home, entrance)
    assert hall is not None  # the entrance was chosen for having one
    door_in = opening_face_point(home, entrance, hall, ENTRANCE_INSIDE_DEPTH)
    got = best_camera(ctx, hall, hfov, must_see=door_in)
    if got is not None:
        planned.append(PlannedCamera.of(hall, got, priority=HALL_PRIORITY, agent=True))
        if not got.sees_target:
            ctx.failures.append(f"no corner of room {hall} sees the entrance door {entrance.id}")
    outer = next((r for r in entrance.connects if r != hall and r in ctx.rooms), None)
    if outer is not None and ctx.polys[outer].area >= 1.0:
        door_out = opening_face_point(home, entrance, outer, ENTRANCE_INSIDE_DEPTH)
        got = best_camera(ctx, outer, hfov, must_see=door_out, prefer_walls=ctx.rooms[outer].outdoor)
        if got is not None:
            planned.append(PlannedCamera.of(outer, got, priority=PORCH_PRIORITY, agent=True))
    else:
        planned.append(doorbell_camera(ctx, entrance, hall))
    return planned


def room_cameras(ctx: EquipContext, hfov: float, done: set[str]) -> list[PlannedCamera]:
    """A camera in each other room large enough: common rooms and outdoor spaces for the
    agent (by :data:`AGENT_CAMERA_SUBTYPES` order), private and service rooms for evaluation."""
    planned: list[PlannedCamera] = []
    for r in ctx.home.rooms:
        if r.id in done or ctx.polys[r.id].area < MIN_CAMERA_ROOM_AREA:
            continue
        if r.outdoor:
            priority, agent = ROOM_PRIORITY + len(AGENT_CAMERA_SUBTYPES), True
        elif r.indoor and r.type in AGENT_CAMERA_SUBTYPES:
            priority, agent = ROOM_PRIORITY + AGENT_CAMERA_SUBTYPES.index(r.type), True
        elif r.type in EVALUATION_CAMERA_SUBTYPES:
            priority, agent = EVALUATION_PRIORITY, False
        else:
            continue
        got = best_camera(ctx, r.id, hfov, prefer_walls=r.outdoor)
        if got is None:
            ctx.notes.append(f"room {r.id}: no corner for a camera")
            continue
        planned.append(PlannedCamera.of(r.id, got, priority=priority, agent=agent))
    return planned


def second_cameras(ctx: EquipContext, planned: list[PlannedCamera], hfov: float, below: float
                   ) -> list[PlannedCamera]:
    """Second, evaluation-only cameras where the first sees less than ``below`` of a large room."""
    added: list[PlannedCamera] = []
    for rec in planned:
        rid = rec.room
        if rec.doorbell is not None or rec.share >= below or \
                ctx.polys[rid].area < ctx.profile.second_camera_min_area:
            continue
        got = best_camera(ctx, rid, hfov, exclude=rec.seen, prefer_walls=ctx.rooms[rid].outdoor)
        if got is not None and tuple(got.corner) != tuple(rec.corner):
            added.append(PlannedCamera.of(rid, got, priority=SECOND_CAMERA_PRIORITY, agent=False))
    return added


def top_up_agent_cameras(ctx: EquipContext, planned: list[PlannedCamera], hfov: float) -> None:
    """Give the agent at least ``agent_camera_min`` cameras, more in larger homes
    (``agent_cameras_per_space``), where the home allows."""
    profile = ctx.profile
    by_size = round(profile.agent_cameras_per_space * len(ctx.home.rooms))
    wanted = min(max(profile.agent_camera_min, by_size), profile.agent_camera_cap)

    def short() -> int:
        return wanted - sum(1 for p in planned if p.agent)

    open_rooms = [p for p in planned if not p.agent and ctx.rooms[p.room].type not in
                  BEDROOM_SUBTYPES | BATHROOM_SUBTYPES]
    for p in sorted(open_rooms, key=lambda p: (p.priority, ctx.room_index(p.room))):
        if short() <= 0:
            return
        p.agent = True
        ctx.notes.append(f"camera in room {p.room} given to the agent ({wanted} agent cameras wanted)")
    common = [r for r in ctx.home.rooms if (r.outdoor or r.type in AGENT_CAMERA_SUBTYPES)
              and ctx.polys[r.id].area >= profile.agent_second_view_min_area]
    common.sort(key=lambda r: (-round(ctx.polys[r.id].area, 1), ctx.room_index(r.id)))
    for r in common:
        if short() <= 0:
            return
        if sum(1 for p in planned if p.room == r.id) >= 2:
            continue
        first = next((p for p in planned if p.room == r.id and p.doorbell is None), None)
        got = best_camera(ctx, r.id, hfov, exclude=first.seen if first else None, prefer_walls=r.outdoor)
        if got is None or (first is not None and tuple(got.corner) == tuple(first.corner)):
            continue
        planned.append(PlannedCamera.of(r.id, got, priority=AGENT_SECOND_VIEW_PRIORITY, agent=True))
        ctx.notes.append(f"second camera in room {r.id} given to the agent ({wanted} agent cameras wanted)")


def doorbell_camera(ctx: EquipContext, door: Opening, hall: str) -> PlannedCamera:
    """A camera in the doorbell, outside beside the entrance door, looking out."""
    x, y, yaw = face(ctx, door, hall, depth=0.05, along=door.width / 2 + 0.2, outside=True)
    return PlannedCamera(hall, (x, y), yaw, ctx.floor(hall) + DOORBELL_CAMERA_HEIGHT,
                         math.radians(DOORBELL_CAMERA_PITCH), np.zeros(0, dtype=bool), 1.0,
                         priority=PORCH_PRIORITY, agent=True, doorbell=door.id)


def add_camera(ctx: EquipContext, p: PlannedCamera, entry: DeviceEntry) -> None:
    """The camera, with the privacy its room asks for; a dome camera is a device too."""
    rid = p.room
    rtype = ctx.rooms[rid].type
    privacy = ("image_blocked" if rtype in BATHROOM_SUBTYPES else
               "people_masked" if rtype in BEDROOM_SUBTYPES else "none")
    x, y = p.corner
    pose = CameraPose(x=x, y=y, z=p.z, yaw=p.yaw, pitch=p.pitch)
    if p.doorbell is not None:
        cid = ctx.new_id("doorbell_camera", rid)
        ctx.cameras.append(camera_from_catalog(entry, cid, rid, pose, agent_visible=p.agent, privacy_mode=privacy))
        return
    cid = ctx.new_id("dome_camera", rid)
    ctx.cameras.append(camera_from_catalog(entry, cid, rid, pose, agent_visible=p.agent, privacy_mode=privacy))
    ctx.devices.append(new_device(
        entry, cid, rid, Pose(x=x, y=y, z=p.z, yaw=p.yaw), name=f"{ctx.room_name(rid)} {entry.name}",
        agent_visible=p.agent, values={"privacy_mode": privacy}))
