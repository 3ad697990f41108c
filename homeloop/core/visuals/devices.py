"""Visual meshes of device bodies, by device type (see :mod:`homeloop.core.visuals`).

A builder takes the body's size (:class:`~homeloop.core.geometry_assets.BodySize`) and its mount,
and returns parts in the **body frame**: centred on the body's footprint (x within ±depth/2, y
within ±width/2) and standing on z = 0 (z within [0, height]), so the parts fill the body's box
and nothing else. What the body is fixed to is one face of that box:

- ``ceiling``: the top face (z = height) is on the ceiling; the device faces down, its front
  (a camera's lens) toward +x. The pose frame's box is ``z`` from ``top - height`` to ``top``
  (:func:`~homeloop.core.geometry_assets.device_body`): the scene lifts the parts by
  ``top - height``. A dome camera's box runs from :data:`CAMERA_LENS_CLEARANCE` to the ceiling,
  so its ``size.height`` should be that box's height, not the mount's.
- wall mounts (``wall``, ``at_door``, ``on_window``, ``on_opening``): the back face
  (x = -depth/2) is on the wall and the device faces +x; up the wall is +z. The pose frame's box
  is ``x`` from ``-gap`` and ``z`` from ``-height/2``: the scene shifts the parts by
  ``(depth/2 - gap, 0, -height/2)``.
- the rest (``floor``, ``on_furniture``, ``in_plant_pot``): the bottom face stands on its surface
  and the device faces up; the pose frame's box is the body frame's (``in_plant_pot``: shifted
  down by ``height/2``).

Each device is drawn once in a **plate frame** — ``a`` along its mounting face (up a wall,
forward on a ceiling or a floor), ``b`` across it and ``n`` out of it, with the face at n = 0 —
and turned into the body frame by :func:`_plate_to_body`; a type mounted where the catalog does
not expect it still fills its box the right way round. Roles name the materials of the device
type's palette in ``homeloop/catalog/materials.yaml``.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from homeloop.core.geometry_assets import STANDING_MOUNTS, WALL_MOUNTS, BodySize
from homeloop.core.visuals.objects import dome, lathe, merged, slab
from homeloop.core.visuals.part import VisualPart
from homeloop.core.visuals.shapes import box, cylinder, disc, ellipsoid, rod, rotated_z

__all__ = ["DEVICE_BUILDERS", "Plate"]


class Plate(NamedTuple):
    """A body's extents in its plate frame (m): ``along`` its mounting face, ``across`` it, and
    ``out`` of it. Parts lie in a within ±along/2, b within ±across/2, n within [0, out]."""

    along: float
    across: float
    out: float


def _plate(size: BodySize, mount: str) -> Plate:
    if mount in WALL_MOUNTS:
        return Plate(size.height, size.width, size.depth)
    return Plate(size.depth, size.width, size.height)


def _plate_to_body(size: BodySize, mount: str) -> np.ndarray:
    """The rigid motion from the plate frame to the body frame (module docstring); each is a
    rotation, so the parts stay closed and outward-facing."""
    out = np.eye(4)
    if mount in WALL_MOUNTS:  # a up the wall, n out of it (+x), b to the right
        out[:3, :3] = ((0.0, 0.0, 1.0), (0.0, -1.0, 0.0), (1.0, 0.0, 0.0))
        out[:3, 3] = (-size.depth / 2, 0.0, size.height / 2)
    elif mount == "ceiling":  # a forward, n down from the ceiling
        out[:3, :3] = ((1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0))
        out[2, 3] = size.height
    return out


def _oriented(build: Callable[[Plate], list[VisualPart]]) -> Callable[[BodySize, str], list[VisualPart]]:
    """A builder in the plate frame as one in the body frame (:data:`DEVICE_BUILDERS`'s form)."""
    def in_body(size: BodySize, mount: str) -> list[VisualPart]:
        return _placed(build(_plate(size, mount)), size, mount)
    in_body.__doc__ = build.__doc__
    return in_body


def _placed(parts: list[VisualPart], size: BodySize, mount: str) -> list[VisualPart]:
    motion = _plate_to_body(size, mount)
    for part in parts:
        part.mesh.apply_transform(motion)
    return parts


# --- sensors and alarms ----------------------------------------------------------------------------------


def _smoke_alarm(p: Plate) -> list[VisualPart]:
    """A round smoke alarm: its white mounting body, a ring of dark vent slots, a domed cover
    with a test button, and a red LED."""
    r, n = min(p.along, p.across) / 2, p.out
    body = lathe([(0.0, 0.0), (r, 0.0), (r, 0.3 * n), (0.9 * r, 0.42 * n), (0.0, 0.42 * n)])
    slots = merged([rotated_z(box(0.6 * r, -0.035 * r, 0.38 * n, 0.86 * r, 0.035 * r, 0.62 * n), k * math.pi / 9)
                    for k in range(18)])
    cover = lathe([(0.0, 0.38 * n), (0.6 * r, 0.38 * n), (0.6 * r, 0.72 * n), (0.5 * r, 0.85 * n), (0.0, 0.85 * n)])
    button = cylinder(0.0, 0.0, 0.8 * n, 0.93 * n, 0.26 * r)
    led = cylinder(0.38 * r, 0.0, 0.7 * n, 0.9 * n, 0.06 * r, sections=10)
    return [VisualPart("body", body, "housing"), VisualPart("vents", slots, "vents"),
            VisualPart("cover", cover, "housing"), VisualPart("button", button, "button"),
            VisualPart("led", led, "led")]


def _contact_sensor(p: Plate) -> list[VisualPart]:
    """A door or window contact: the sensor on the frame and its magnet on the leaf, side by side,
    and the sensor's LED."""
    a, w, n = p.along / 2, p.across, p.out
    sensor = slab(-0.96 * a, -w / 2, 0.96 * a, 0.12 * w, 0.0, 0.85 * n, 0.2 * w)
    magnet = slab(-0.6 * a, 0.25 * w, 0.6 * a, w / 2, 0.0, 0.6 * n, 0.1 * w)
    led = cylinder(0.7 * a, -0.2 * w, 0.8 * n, 0.92 * n, 0.08 * min(w, a), sections=10)
    return [VisualPart("sensor", sensor, "sensor"), VisualPart("magnet", magnet, "magnet"),
            VisualPart("led", led, "led")]


def _leak_sensor(p: Plate) -> list[VisualPart]:
    """A water leak puck: a rounded body, a cap with a status ring, and metal contacts at its foot."""
    r, n = min(p.along, p.across) / 2, p.out
    puck = lathe([(0.0, 0.0), (0.9 * r, 0.0), (r, 0.12 * n), (r, 0.5 * n), (0.86 * r, 0.78 * n), (0.0, 0.82 * n)])
    cap = cylinder(0.0, 0.0, 0.7 * n, 0.9 * n, 0.45 * r)
    ring = lathe([(0.55 * r, 0.72 * n), (0.64 * r, 0.72 * n), (0.64 * r, 0.84 * n), (0.55 * r, 0.84 * n),
                  (0.55 * r, 0.72 * n)])
    contacts = merged([cylinder(0.92 * r * math.cos(t), 0.92 * r * math.sin(t), 0.0, 0.3 * n, 0.06 * r, sections=8)
                       for t in (0.0, 2 * math.pi / 3, 4 * math.pi / 3)])
    return [VisualPart("puck", puck, "puck"), VisualPart("cap", cap, "cap"), VisualPart("ring", ring, "ring"),
            VisualPart("contacts", contacts, "contacts")]


def _soil_probe(p: Plate) -> list[VisualPart]:
    """A soil moisture probe: a head with a small solar panel on its front (+a) and an LED on top,
    over two prongs that go into the soil."""
    a, b, n = p.along / 2, p.across / 2, p.out
    head = slab(-0.9 * a, -0.9 * b, 0.9 * a, 0.9 * b, 0.55 * n, 0.97 * n, 0.5 * min(a, b))
    panel = box(0.84 * a, -0.6 * b, 0.65 * n, a, 0.6 * b, 0.9 * n)
    prongs = merged([box(-0.25 * a, s * 0.2 * b, 0.0, 0.25 * a, s * 0.6 * b, 0.56 * n) for s in (1.0, -1.0)])
    led = cylinder(0.0, 0.0, 0.95 * n, n, 0.16 * min(a, b), sections=10)
    return [VisualPart("head", head, "head"), VisualPart("panel", panel, "panel"),
            VisualPart("prongs", prongs, "probe"), VisualPart("led", led, "led")]


def _dome_camera(p: Plate) -> list[VisualPart]:
    """A ceiling dome camera: a white base disc, a neck where the housing is deep, a dark
    hemispherical dome, and the lens in it looking forward and down (+a, pitched 35 degrees)."""
    r, n = min(p.along, p.across) / 2, p.out
    base_t = min(0.25 * n, 0.25 * r)
    rd = min(0.78 * r, n - base_t)
    parts = [VisualPart("base", cylinder(0.0, 0.0, 0.0, base_t, r), "base")]
    if n - base_t - rd > 1e-6:
        parts.append(VisualPart("neck", cylinder(0.0, 0.0, base_t * 0.5, n - rd, 0.85 * rd), "base"))
    centre = n - rd
    parts.append(VisualPart("dome", dome(0.0, 0.0, centre, rd, rd), "dome"))
    look = np.array([math.cos(math.radians(35)), 0.0, math.sin(math.radians(35))])
    for name, reach, radius in (("lens_ring", 0.78, 0.3), ("lens", 0.95, 0.17)):
        x, _, z = look * reach * rd + (0.0, 0.0, centre)
        parts.append(VisualPart(name, ellipsoid(float(x), 0.0, float(z), radius * rd, radius * rd, radius * rd), name))
    return parts


# --- on the wall ------------------------------------------------------------------------------------------


def _light_switch(p: Plate) -> list[VisualPart]:
    """A wall switch: a square plate and a rocker, tipped on, with a locator LED."""
    s, n = 0.96 * min(p.along, p.across), p.out
    plate = slab(-s / 2, -s / 2, s / 2, s / 2, 0.0, 0.25 * n, 0.08 * s)
    rocker = slab(-0.3 * s, -0.22 * s, 0.3 * s, 0.22 * s, 0.2 * n, 0.45 * n, 0.03 * s)
    tip = np.eye(4)
    tip[:3, :3] = _turn_about_b(math.radians(4))
    rocker.apply_transform(_about(tip, (0.0, 0.0, 0.25 * n)))
    led = cylinder(-0.18 * s, 0.0, 0.3 * n, 0.5 * n, 0.025 * s, sections=10)
    return [VisualPart("plate", plate, "plate"), VisualPart("rocker", rocker, "rocker"),
            VisualPart("led", led, "led")]


def _plug(p: Plate) -> list[VisualPart]:
    """A switched wall socket: a square plate, the round socket face with two pin holes and
    earth clips, and the LED that shows it is on."""
    s, n = 0.96 * min(p.along, p.across), p.out
    plate = slab(-s / 2, -s / 2, s / 2, s / 2, 0.0, 0.25 * n, 0.08 * s)
    socket = cylinder(0.0, 0.0, 0.2 * n, 0.35 * n, 0.34 * s)
    holes = merged([cylinder(0.0, side * 0.11 * s, 0.3 * n, 0.37 * n, 0.045 * s, sections=10) for side in (1, -1)])
    clips = merged([box(side * 0.25 * s, -0.06 * s, 0.3 * n, side * 0.32 * s, 0.06 * s, 0.38 * n) for side in (1, -1)])
    led = cylinder(0.4 * s, 0.38 * s, 0.2 * n, 0.3 * n, 0.03 * s, sections=10)
    return [VisualPart("plate", plate, "plate"), VisualPart("socket", socket, "socket"),
            VisualPart("holes", holes, "holes"), VisualPart("clips", clips, "clips"), VisualPart("led", led, "led")]


def _thermostat(p: Plate) -> list[VisualPart]:
    """A round wall thermostat: a back plate, the round body, a metal dial ring round a dark
    display, and the lit set-point on it."""
    a, b, n = p.along / 2, p.across / 2, p.out
    m = min(p.along, p.across)
    back = slab(-0.96 * a, -0.96 * b, 0.96 * a, 0.96 * b, 0.0, 0.12 * n, 0.1 * m)
    body = cylinder(0.0, 0.0, 0.1 * n, 0.6 * n, 0.42 * m)
    dial = lathe([(0.33 * m, 0.58 * n), (0.42 * m, 0.58 * n), (0.42 * m, 0.74 * n), (0.33 * m, 0.74 * n),
                  (0.33 * m, 0.58 * n)])
    screen = cylinder(0.0, 0.0, 0.58 * n, 0.68 * n, 0.335 * m)
    readout = box(-0.08 * m, -0.13 * m, 0.66 * n, 0.08 * m, 0.13 * m, 0.7 * n)
    return [VisualPart("back", back, "body"), VisualPart("body", body, "body"), VisualPart("dial", dial, "dial"),
            VisualPart("screen", screen, "screen"), VisualPart("readout", readout, "readout")]


def _water_valve(p: Plate) -> list[VisualPart]:
    """A motorised shut-off valve on the supply pipe: the pipe up the wall with its clips, the
    brass valve, the actuator box on it, and the red lever."""
    a, b, n = p.along / 2, p.across / 2, p.out
    pipe_r = min(0.25 * n, 0.2 * b)
    axis = pipe_r + 0.05 * n
    pipe = rod((-a, 0.0, axis), (a, 0.0, axis), pipe_r, sections=12)
    clips = merged([box(s * 0.86 * a - 0.06 * a, -1.3 * pipe_r, 0.0, s * 0.86 * a + 0.06 * a, 1.3 * pipe_r,
                        axis + 0.6 * pipe_r) for s in (1.0, -1.0)])
    valve = ellipsoid(-0.1 * a, 0.0, axis, 0.4 * a, 0.7 * b, 0.98 * axis)
    actuator = slab(-0.05 * a, -0.76 * b, 0.8 * a, 0.76 * b, 0.25 * n, n, 0.15 * b)
    lever = merged([rod((-0.45 * a, 0.0, axis), (-0.45 * a, 0.0, 0.78 * n), 0.12 * pipe_r + 0.02 * b),
                    box(-0.58 * a, -0.8 * b, 0.7 * n, -0.32 * a, 0.8 * b, 0.86 * n)])
    return [VisualPart("pipe", pipe, "pipe"), VisualPart("clips", clips, "pipe"), VisualPart("valve", valve, "valve"),
            VisualPart("actuator", actuator, "actuator"), VisualPart("lever", lever, "lever")]


# --- at the door ------------------------------------------------------------------------------------------


def _lock(p: Plate) -> list[VisualPart]:
    """A smart door lock from inside: a tall escutcheon, the round motor housing, the thumb turn
    on it, and the key cylinder below."""
    a, b, n = p.along / 2, p.across / 2, p.out
    plate = slab(-0.96 * a, -0.9 * b, 0.96 * a, 0.9 * b, 0.0, 0.1 * n, 0.8 * b)
    m = min(a, b)
    housing_r = min(0.84 * b, 0.6 * a)
    housing = cylinder(0.0, 0.0, 0.08 * n, 0.55 * n, housing_r)
    turn = merged([cylinder(0.0, 0.0, 0.5 * n, 0.7 * n, 0.3 * m),
                   slab(-0.6 * m, -0.14 * m, 0.6 * m, 0.14 * m, 0.6 * n, 0.98 * n, 0.1 * m)])
    cylinder_x = -0.55 * a - 0.25 * housing_r
    key = cylinder(cylinder_x, 0.0, 0.08 * n, 0.2 * n, min(0.28 * b, 0.25 * a))
    slot = box(cylinder_x - 0.18 * m, -0.04 * m, 0.15 * n, cylinder_x + 0.18 * m, 0.04 * m, 0.22 * n)
    return [VisualPart("escutcheon", plate, "escutcheon"), VisualPart("housing", housing, "housing"),
            VisualPart("thumb_turn", turn, "thumb_turn"), VisualPart("key_cylinder", key, "escutcheon"),
            VisualPart("keyway", slot, "keyway")]


def _doorbell(p: Plate) -> list[VisualPart]:
    """A doorbell by the entrance: a slim body, a round button in a lit ring, and a camera lens."""
    a, b, n = p.along / 2, p.across / 2, p.out
    body = slab(-0.88 * a, -0.72 * b, 0.88 * a, 0.72 * b, 0.0, 0.4 * n, 0.6 * b)
    ring_r = min(0.62 * b, 0.5 * a)
    ring = lathe([(0.78 * ring_r, 0.3 * n), (ring_r, 0.3 * n), (ring_r, 0.5 * n), (0.78 * ring_r, 0.5 * n),
                  (0.78 * ring_r, 0.3 * n)], -0.4 * a)
    button = cylinder(-0.4 * a, 0.0, 0.3 * n, 0.55 * n, 0.74 * ring_r)
    lens = cylinder(0.5 * a, 0.0, 0.3 * n, 0.48 * n, 0.22 * min(b, a))
    return [VisualPart("body", body, "body"), VisualPart("ring", ring, "ring"),
            VisualPart("button", button, "button"), VisualPart("lens", lens, "lens")]


def _garage_button(p: Plate) -> list[VisualPart]:
    """The garage door opener's wall console: a plate, one large lit push button, a small lock button."""
    a, b, n = p.along / 2, p.across / 2, p.out
    plate = slab(-0.7 * a, -0.84 * b, 0.7 * a, 0.84 * b, 0.0, 0.3 * n, 0.3 * b)
    big = cylinder(0.15 * a, 0.0, 0.25 * n, 0.55 * n, min(0.6 * b, 0.5 * a))
    small = cylinder(-0.45 * a, 0.0, 0.25 * n, 0.4 * n, min(0.2 * b, 0.2 * a))
    return [VisualPart("plate", plate, "plate"), VisualPart("button", big, "button"),
            VisualPart("lock_button", small, "small_button")]


# --- at the window ----------------------------------------------------------------------------------------


def _roller_blind(p: Plate) -> list[VisualPart]:
    """A roller blind's head: the cassette with its round front along the window, its end caps
    (the motor at one), and the top of the fabric with its bottom bar hanging out under it."""
    a, b, n = p.along / 2, p.across / 2, p.out
    rc = min(0.8 * a, 0.45 * n)
    cassette = merged([disc(a - rc, 0.0, n - rc, rc, 1.88 * b, axis="y"),
                       box(a - 2 * rc, -0.94 * b, 0.0, a, 0.94 * b, n - rc)])
    caps = merged([disc(a - rc, s * 0.97 * b, n - rc, rc, 0.06 * b, axis="y") for s in (1.0, -1.0)]
                  + [box(a - 2 * rc, s * 0.94 * b, 0.0, a, s * b, n - rc) for s in (1.0, -1.0)])
    fabric = box(-a, -0.88 * b, 0.44 * n, a - rc, 0.88 * b, 0.5 * n)
    bar_r = min(0.1 * a, 0.1 * n)
    bar = rod((-a + bar_r, -0.9 * b, 0.47 * n), (-a + bar_r, 0.9 * b, 0.47 * n), bar_r)
    return [VisualPart("cassette", cassette, "cassette"), VisualPart("caps", caps, "caps"),
            VisualPart("fabric", fabric, "fabric"), VisualPart("bar", bar, "caps")]


def _curtain(p: Plate) -> list[VisualPart]:
    """A motorised curtain track: the rail on its wall brackets, the motor hanging at one end,
    and the pleated heading of the curtain under the rail."""
    a, b, n = p.along / 2, p.across / 2, p.out
    rail = box(0.5 * a, -0.98 * b, 0.35 * n, 0.9 * a, 0.98 * b, 0.75 * n)
    brackets = merged([box(0.6 * a, s * 0.8 * b - 0.05 * b, 0.0, 0.9 * a, s * 0.8 * b + 0.05 * b, 0.4 * n)
                       for s in (1.0, -1.0)])
    motor_r = min(0.2 * n, 0.08 * b)
    motor = rod((-a + motor_r, 0.84 * b, 0.55 * n), (0.6 * a, 0.84 * b, 0.55 * n), motor_r, sections=12)
    folds = np.linspace(-0.85 * b, 0.6 * b, 15)
    pleat_r = min(0.65 * float(folds[1] - folds[0]), 0.2 * n)
    pleats = merged([rod((-a + pleat_r, y, (0.45 + 0.15 * (k % 2)) * n), (0.5 * a, y, (0.45 + 0.15 * (k % 2)) * n),
                         pleat_r, sections=10) for k, y in enumerate(folds)])
    return [VisualPart("rail", rail, "track"), VisualPart("brackets", brackets, "track"),
            VisualPart("motor", motor, "motor"), VisualPart("heading", pleats, "fabric")]


# --- lights -----------------------------------------------------------------------------------------------


def _fitting(p: Plate) -> list[VisualPart]:
    """A ceiling or wall fitting: a round (or, on a wall, oval) base and an opal diffuser dome."""
    a, b, n = p.along / 2, p.across / 2, p.out
    base = slab(-a, -b, a, b, 0.0, 0.15 * n, 0.49 * min(p.along, p.across))
    diffuser = dome(0.0, 0.0, 0.12 * n, 1.0, 0.88 * n)
    diffuser.apply_scale((0.9 * a, 0.9 * b, 1.0))  # type: ignore[no-untyped-call]
    return [VisualPart("base", base, "base"), VisualPart("diffuser", diffuser, "diffuser")]


class LampShape(NamedTuple):
    """A standing lamp's proportions, as shares of its body's height: the base's height, the
    shade's foot and the bulb's height; the base's and the shade's radii as shares of the body's
    half-width."""

    base_top: float
    shade_foot: float
    bulb: float
    base_r: float
    shade_foot_r: float
    shade_top_r: float


#: A table lamp (on furniture) and a standard lamp (on the floor).
TABLE_LAMP = LampShape(0.5, 0.5, 0.62, 0.9, 0.98, 0.62)
FLOOR_LAMP = LampShape(0.016, 0.74, 0.8, 0.85, 0.98, 0.68)


def _lamp(p: Plate, shape: LampShape) -> list[VisualPart]:
    """A standing lamp: a turned base (a table lamp's is a jar up to half its height, so the lamp
    hides what stands right behind it as its solid does in the geometric backend), a stem, a hollow
    shade open at both ends and the bulb in it."""
    m, n = min(p.along, p.across) / 2, p.out
    foot, r = shape.base_top * n, shape.base_r * m
    base = lathe([(0.0, 0.0), (0.75 * r, 0.0), (r, 0.45 * foot), (0.8 * r, 0.85 * foot),
                  (0.3 * m, foot), (0.0, foot)], sections=24)
    stem = cylinder(0.0, 0.0, 0.5 * foot, shape.bulb * n, min(0.08 * m, 0.012), sections=10)
    wall = 0.03 * m
    r0, r1, z0 = shape.shade_foot_r * m, shape.shade_top_r * m, shape.shade_foot * n
    shade = lathe([(r0 - wall, z0), (r0, z0), (r1, n), (r1 - wall, n), (r0 - wall, z0)], sections=24)
    bulb = ellipsoid(0.0, 0.0, shape.bulb * n + 0.1 * m, 0.2 * m, 0.2 * m, 0.26 * m)
    return [VisualPart("base", base, "base"), VisualPart("stem", stem, "stem"),
            VisualPart("shade", shade, "shade"), VisualPart("bulb", bulb, "bulb")]


def _light(size: BodySize, mount: str) -> list[VisualPart]:
    """A light by its mount: a table lamp on furniture, a standard lamp on the floor, a fitting
    with a diffuser on a ceiling or a wall."""
    p = _plate(size, mount)
    if mount in STANDING_MOUNTS:
        parts = _lamp(p, FLOOR_LAMP if mount == "floor" else TABLE_LAMP)
    else:
        parts = _fitting(p)
    return _placed(parts, size, mount)


# --- helpers --------------------------------------------------------------------------------------------


def _turn_about_b(angle: float) -> np.ndarray:
    """The rotation by ``angle`` about the plate frame's b axis (tips +a out of the face)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array(((c, 0.0, -s), (0.0, 1.0, 0.0), (s, 0.0, c)))


def _about(motion: np.ndarray, point: tuple[float, float, float]) -> np.ndarray:
    """``motion`` applied about ``point`` instead of the origin."""
    shift = np.eye(4)
    shift[:3, 3] = point
    out: np.ndarray = shift @ motion @ np.linalg.inv(shift)
    return out


def _humidifier(p: Plate) -> list[VisualPart]:
    """A room humidifier: a rounded base with its controls, a clear water tank on it, and the mist
    nozzle on top."""
    a, b, n = p.along / 2, p.across / 2, p.out
    base = slab(-a, -b, a, b, 0.0, 0.3 * n, 0.4 * min(a, b))
    tank = slab(-0.92 * a, -0.92 * b, 0.92 * a, 0.92 * b, 0.3 * n, 0.88 * n, 0.4 * min(a, b))
    nozzle = cylinder(0.0, 0.0, 0.88 * n, n, 0.3 * min(a, b))
    led = box(0.96 * a, -0.15 * b, 0.12 * n, a, 0.15 * b, 0.18 * n)
    return [VisualPart("base", base, "body"), VisualPart("tank", tank, "tank"),
            VisualPart("nozzle", nozzle, "nozzle"), VisualPart("led", led, "led")]


def _cabinet(p: Plate, grille_top: bool) -> list[VisualPart]:
    """An upright appliance cabinet (a dehumidifier, an air purifier): a rounded case, an air grille
    on its front (+a) or on its top, and a control panel with a status light on its front."""
    a, b, n = p.along / 2, p.across / 2, p.out
    case = slab(-a, -b, 0.96 * a, b, 0.0, 0.95 * n, 0.25 * min(a, b))
    if grille_top:
        grille = slab(-0.85 * a, -0.85 * b, 0.8 * a, 0.85 * b, 0.95 * n, n, 0.2 * min(a, b))
    else:
        grille = box(0.96 * a, -0.75 * b, 0.15 * n, a, 0.75 * b, 0.7 * n)
    panel = box(0.96 * a, -0.5 * b, 0.78 * n, a, 0.5 * b, 0.9 * n)
    led = box(0.96 * a, 0.6 * b, 0.84 * n, a, 0.75 * b, 0.87 * n)
    return [VisualPart("case", case, "body"), VisualPart("grille", grille, "grille"),
            VisualPart("panel", panel, "panel"), VisualPart("led", led, "led")]


def _tower_fan(p: Plate) -> list[VisualPart]:
    """A tower fan: a round foot, a slim column with a tall air grille on its front (+a), and the
    controls on its top."""
    a, b, n = p.along / 2, p.across / 2, p.out
    r = min(a, b)
    foot = cylinder(0.0, 0.0, 0.0, 0.04 * n, r)
    column = slab(-0.55 * r, -0.55 * r, 0.5 * r, 0.55 * r, 0.04 * n, 0.97 * n, 0.45 * r)
    grille = box(0.5 * r, -0.35 * r, 0.12 * n, 0.6 * r, 0.35 * r, 0.9 * n)
    top = cylinder(0.0, 0.0, 0.97 * n, n, 0.4 * r)
    return [VisualPart("foot", foot, "body"), VisualPart("column", column, "body"),
            VisualPart("grille", grille, "grille"), VisualPart("top", top, "panel")]


#: The builder of each device type's visual: from the body's size and its mount.
DEVICE_BUILDERS: dict[str, Callable[[BodySize, str], list[VisualPart]]] = {
    "smoke_sensor": _oriented(_smoke_alarm), "contact_sensor": _oriented(_contact_sensor),
    "leak_sensor": _oriented(_leak_sensor), "soil_moisture_sensor": _oriented(_soil_probe),
    "dome_camera": _oriented(_dome_camera), "light_switch": _oriented(_light_switch), "plug": _oriented(_plug),
    "thermostat": _oriented(_thermostat), "water_main": _oriented(_water_valve), "lock": _oriented(_lock),
    "doorbell": _oriented(_doorbell), "garage_door": _oriented(_garage_button),
    "roller_blind": _oriented(_roller_blind), "curtain": _oriented(_curtain), "light": _light,
    # the optional air devices (homeloop/catalog/air_devices.yaml)
    "humidifier": _oriented(_humidifier), "dehumidifier": _oriented(lambda p: _cabinet(p, grille_top=False)),
    "fan": _oriented(_tower_fan), "air_purifier": _oriented(lambda p: _cabinet(p, grille_top=True)),
}
