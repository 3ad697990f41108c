"""House cameras, and the one capture engine every camera uses (docs/skills.md).

The cameras service lists the dome cameras the home shows the agent (those
a scenario withholds, or that are offline, are absent) and captures from
them. A camera's privacy mode masks people or blocks the image; a capture
may override it, at a price (docs/skills.md).

:func:`capture_view` is the capture engine shared by the dome cameras and
the robot's head camera: it registers the capture (``cap_N``) in the
episode's ``captures`` registry with its time, source, viewpoint and what
the frame shows — every entity in view with its pixel box, the share of it
not hidden and whether its room is lit, and the hazards in view (the
record checks read; no label ever names fire, smoke or water). What a frame
shows comes from one :class:`~homeloop.sim.visibility.Visibility` backend,
the geometric one, whether images are on or off, so the images ablation
removes pixels and nothing else (docs/episodes.md). With images on, pixels
come from a renderer set under ``"renderer"`` (a function of the world, the
viewpoint and the record); a capture it cannot draw raises
:class:`RenderError`, which ends the episode ``render_error``: never a capture
without its image. With images off the image is null.
"""

from __future__ import annotations

from typing import Any, Callable

from homeloop.core.home import Camera
from homeloop.core.kept import Kept
from homeloop.sim.context import SkillContext
from homeloop.sim.devices import readings
from homeloop.sim.dynamics.light import Light
from homeloop.sim.skills import SkillError, skill
from homeloop.sim.services.perception import seen_enough
from homeloop.sim.visibility import Frame, GeometricVisibility, Viewpoint, Visibility
from homeloop.sim.world import World


class RenderError(Exception):
    """The pixels of a capture could not be drawn (images on): the episode ends ``render_error``."""


#: Units a capture costs, and the extra for overriding each privacy mode (docs/skills.md).
CAPTURE_UNITS = 1
OVERRIDE_UNITS = {"none": 0, "people_masked": 5, "image_blocked": 10}


# --- the cameras an agent may use ------------------------------------------------------------------


def agent_cameras(ctx: SkillContext) -> list[Camera]:
    """Dome cameras shown to the agent and answering, in home file order."""
    return [c for c in ctx.world.home.cameras if c.agent_visible and _answers(ctx.world, c.id)]


#: The cameras showing a static thing, by the home's static part, the thing and the doors shut.
_STATIC_SHOWN: Kept[list[str]] = Kept(256)


def cameras_showing(world: World, thing_id: str) -> list[str]:
    """The agent's house cameras whose picture perception would report ``thing_id`` in, whatever the
    light and the privacy modes (a light may be switched on, a mode overridden). A person or object
    is judged where it stands now, everything else hiding it as in a frame; a static thing (furniture)
    on the home's static part and the doors shut now alone, as people and objects come and go (kept
    per home). A scenario withholds those cameras where only the robot is to see the thing."""
    visibility = GeometricVisibility(world)
    still = any(e.id == thing_id for e in visibility.static_entities)

    def showing() -> list[str]:
        shown = []
        for camera in world.home.cameras:
            if camera.agent_visible and camera.id in world.devices:  # (only a camera device goes offline)
                seen = visibility.seen(world, Viewpoint.of(camera), thing_id, hide=(camera.id,), still=still)
                if seen is not None and seen_enough(seen.area_px, seen.unoccluded):
                    shown.append(camera.id)
        return shown

    if not still:
        return showing()
    shut = tuple(sorted(oid for oid, state in world.openings.items() if not state.open))
    cameras = tuple((c.id, c.agent_visible, Viewpoint.of(c)) for c in world.home.cameras)  # a camera edited: anew
    return list(_STATIC_SHOWN.get_or_make((thing_id, shut), showing, held=(visibility.static_part,), reads=cameras))


def _answers(world: World, camera_id: str) -> bool:
    device = world.devices.get(camera_id)
    return device is None or bool(readings(device).get("online", True))


def privacy_mode(world: World, camera: Camera) -> str:
    """The camera's privacy mode now (its device's reading, else the home file's)."""
    device = world.devices.get(camera.id)
    return str(readings(device).get("privacy_mode", camera.privacy_mode)) if device else camera.privacy_mode


def _camera(ctx: SkillContext, camera_id: str) -> Camera:
    cameras = agent_cameras(ctx)
    found = next((c for c in cameras if c.id == camera_id), None)
    if found is None:
        names = ", ".join(c.id for c in cameras) or "none"
        raise SkillError(f"no camera {camera_id!r} is available; cameras: {names}")
    return found


def _capture_price(args: dict[str, Any], ctx: SkillContext | None = None) -> int:
    if not args.get("override_privacy") or ctx is None:
        return CAPTURE_UNITS
    camera = next((c for c in agent_cameras(ctx) if c.id == args.get("camera_id")), None)
    return CAPTURE_UNITS + (OVERRIDE_UNITS[privacy_mode(ctx.world, camera)] if camera is not None else 0)


@skill("cameras", units=1, seconds=0.1)
def list_cameras(ctx: SkillContext) -> dict[str, Any]:
    """List the house cameras: id, room and privacy mode (none, people_masked or image_blocked)."""
    rooms = {r.id: r.name for r in ctx.world.home.rooms}
    return {"cameras": [{"id": c.id, "room": c.room, "room_name": rooms.get(c.room),
                         "privacy_mode": privacy_mode(ctx.world, c)} for c in agent_cameras(ctx)]}


@skill("cameras", units=CAPTURE_UNITS, seconds=0.5, price=_capture_price,
       cost_note=f"+{OVERRIDE_UNITS['people_masked']} to override people_masked, "
                 f"+{OVERRIDE_UNITS['image_blocked']} to override image_blocked")
def capture(ctx: SkillContext, camera_id: str, override_privacy: bool = False) -> dict[str, Any]:
    """Take a picture with a house camera; returns a capture id for perception (and the image, if images are on).

    camera_id: the camera, as cameras_list_cameras names it.
    override_privacy: show what the privacy mode hides (masked people, a blocked image), at an extra cost.
    """
    camera = _camera(ctx, camera_id)
    mode = privacy_mode(ctx.world, camera)
    return capture_view(ctx, Viewpoint.of(camera), camera.id, privacy=mode, override=override_privacy)


# --- the capture engine -------------------------------------------------------------------------------


def visibility_backend(ctx: SkillContext) -> Visibility:
    """The episode's visibility backend: the geometric one (prepared on first use) with images on or
    off; a test may set another under ``"visibility"``."""
    state = ctx.state
    if "visibility" not in state:
        state["visibility"] = GeometricVisibility(ctx.world)
    backend: Visibility = state["visibility"]
    return backend


def capture_view(ctx: SkillContext, viewpoint: Any, source: str, *, privacy: str = "none",
                 override: bool = False) -> dict[str, Any]:
    """Capture what ``viewpoint`` shows from camera ``source`` (a dome camera's id, or the robot's
    camera); registers the capture and returns {capture_id, camera, t, width, height, image}.

    ``viewpoint``: a :class:`Viewpoint`, or a mapping with x, y, z, yaw, pitch, hfov and resolution.
    """
    world, view = ctx.world, Viewpoint.of(viewpoint)
    captures = ctx.captures
    capture_id = f"cap_{len(captures) + 1}"
    dome = source in {c.id for c in world.home.cameras}
    blocked = privacy == "image_blocked" and not override
    masked = privacy == "people_masked" and not override
    frame = Frame([], []) if blocked else visibility_backend(ctx).frame(world, view, hide=(source,))
    lit = _lighting(world)
    entities = []
    for seen in frame.entities:
        entry = seen.to_dict()
        entry["lit"] = any(lit(r) for r in seen.rooms) if seen.rooms else lit(None)
        if masked and seen.kind == "person":
            entry["masked"] = True
        entities.append(entry)
    record = {"id": capture_id, "t": ctx.now(), "world_time": world.time, "camera": source, "own": not dome,
              "service": "cameras" if dome else "robot", "viewpoint": view.to_dict(), "privacy": privacy,
              "override": override, "blocked": blocked, "entities": entities,
              "hazards": [{**h, "lit": any(lit(r) for r in h["rooms"])} for h in frame.hazards]}
    captures[capture_id] = record
    image = _image(ctx, view, record) if ctx.images else None
    out = {"capture_id": capture_id, "camera": source, "t": record["t"], "width": view.width,
           "height": view.height, "image": image}
    if dome:
        out["privacy"] = "overridden" if override and privacy != "none" else privacy
    return out


def _image(ctx: SkillContext, view: Viewpoint, record: dict[str, Any]) -> Any:
    """The capture's pixels, drawn by the episode's renderer (a blocked frame in one colour), or
    :class:`RenderError` naming why they cannot be."""
    renderer = ctx.state.get("renderer")
    if renderer is None:
        raise RenderError("images are on but the episode has no renderer")
    try:
        return renderer(ctx.world, view, record)
    except Exception as exc:
        raise RenderError(f"capture {record['id']} could not be rendered: {type(exc).__name__}: {exc}") from exc


def _lighting(world: World) -> Callable[[str | None], bool]:
    """``room -> lit?`` from the light module, ``None`` standing for the open air beyond the plan
    (everything counts as lit in a world without a light module). For one capture: each room's
    answer is kept, since the world stands still while a frame is read."""
    light = world.running(Light)
    if light is None:
        return lambda room: True
    answers: dict[str | None, bool] = {}

    def lit(room: str | None) -> bool:
        answer = answers.get(room)
        if answer is None:
            answer = answers[room] = light.lit(room) if room is not None else light.lit_outside()
        return answer

    return lit
