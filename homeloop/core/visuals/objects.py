"""Visual meshes of carryable objects, by semantic class (see :mod:`homeloop.core.visuals`).

Each builder draws one class of :file:`homeloop/catalog/objects.yaml` in the object frame (origin
at the centre of the base, +x the front, +y the left, z up), sized from the entry's dimensions
and inside them: x within ±depth/2, y within ±width/2, z within [0, height], and for a
``cylinder`` entry within its circle. Where a catalog grasp point lies on a handle, a rim or a
spine, the builder puts that handle, rim or spine there; a grasp point the catalog sets outside
the entry's own bounds (a mug's handle, a bag's handles) gets the handle as near as the bounds
allow.

Roles name the materials of the class's palette (``homeloop/catalog/materials.yaml``); a pill
box's body plays ``tinted``, which the renderer colours from the object's colour word so the
red, blue and white boxes stay told apart.

The few shapes :mod:`.shapes` lacks and these visuals share with the device visuals (a lathed
profile, a tube along a path, a rounded slab, a dome, a leaf) are here.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import shapely
import trimesh

from homeloop.core.catalog import ObjectEntry
from homeloop.core.visuals.part import VisualPart
from homeloop.core.visuals.shapes import ROUND_SECTIONS, box, cylinder, disc, ellipsoid, rod, rotated_z

Point3 = tuple[float, float, float]

# --- shapes these visuals share ---------------------------------------------------------------------


def lathe(profile: Sequence[tuple[float, float]], x: float = 0.0, y: float = 0.0,
          sections: int = ROUND_SECTIONS) -> trimesh.Trimesh:
    """A closed solid of revolution about the vertical through (x, y): ``profile`` is (radius, z)
    points, either running from the axis back to the axis (a cup, a puck) or a closed loop off it
    (a ring, a lampshade's wall)."""
    mesh: trimesh.Trimesh = trimesh.creation.revolve(np.asarray(profile, dtype=float), sections=sections)
    if mesh.volume < 0:
        mesh.invert()
    mesh.apply_translation((x, y, 0.0))
    return mesh


def tube(points: Sequence[Point3], radius: float, closed: bool = False) -> trimesh.Trimesh:
    """A round bar along a path (a handle, a spectacle frame, a key ring): a rod per leg and a
    ball at each bend so the bends stay round and closed."""
    path = [*points, points[0]] if closed else list(points)
    legs = [rod(a, b, radius) for a, b in zip(path[:-1], path[1:])]
    bends = path[:-1] if closed else path[1:-1]
    balls = [ellipsoid(*p, radius, radius, radius, subdivisions=0) for p in bends]
    return merged([*legs, *balls])


def slab(x0: float, y0: float, x1: float, y1: float, z0: float, z1: float, corner: float) -> trimesh.Trimesh:
    """A box between two corners whose vertical edges are rounded by ``corner`` (m): a remote's
    body, a switch plate, a pill box."""
    outline = shapely.box(x0, y0, x1, y1)
    corner = min(corner, 0.49 * abs(x1 - x0), 0.49 * abs(y1 - y0))
    if corner > 0:
        outline = outline.buffer(-corner).buffer(corner, quad_segs=3)
    mesh: trimesh.Trimesh = trimesh.creation.extrude_polygon(outline, z1 - z0)
    mesh.apply_translation((0.0, 0.0, z0))
    return mesh


def dome(x: float, y: float, z: float, radius: float, height: float, steps: int = 5) -> trimesh.Trimesh:
    """Half an ellipsoid with its flat face on ``z``, rising ``height`` above it (hanging below it
    where ``height`` is negative): a camera's dome, a diffuser."""
    angles = np.linspace(0.0, math.pi / 2, steps + 1)
    arc = [(radius * math.cos(a), z + height * math.sin(a)) for a in angles[:-1]]
    return lathe([(0.0, z), *arc, (0.0, z + height)], x, y)


def leaf(centre: Point3, heading: float, rise: float, length: float, width: float,
         thickness: float) -> trimesh.Trimesh:
    """A flat ellipsoid of ``length`` along a direction ``heading`` (rad about z) and ``rise``
    (rad above the horizontal), ``width`` across it, centred on ``centre``."""
    mesh = ellipsoid(0.0, 0.0, 0.0, length / 2, width / 2, thickness / 2, subdivisions=1)
    turn = trimesh.transformations.rotation_matrix(heading, (0.0, 0.0, 1.0))  # type: ignore[no-untyped-call]
    tilt = trimesh.transformations.rotation_matrix(-rise, (0.0, 1.0, 0.0))  # type: ignore[no-untyped-call]
    mesh.apply_transform(turn @ tilt)
    mesh.apply_translation(centre)
    return mesh


def merged(meshes: Sequence[trimesh.Trimesh]) -> trimesh.Trimesh:
    """Closed meshes drawn as one part (each stays closed, so the whole is watertight)."""
    out: trimesh.Trimesh = trimesh.util.concatenate(list(meshes))  # type: ignore[assignment]
    return out


def _size(entry: ObjectEntry) -> tuple[float, float, float]:
    """(depth along x, width along y, height)."""
    d = entry.dimensions
    return d.depth, d.width, d.height


# --- tableware and small things --------------------------------------------------------------------


def _mug(entry: ObjectEntry) -> list[VisualPart]:
    """A glazed mug with coffee in it and a D handle on its -y side, where the catalog's handle
    grasp is (the handle reaches the edge of the entry's circle)."""
    depth, width, height = _size(entry)
    bound = min(depth, width) / 2
    grip = 0.1 * bound  # the handle bar's radius
    radius = 0.7 * bound
    wall, floor = 0.1 * radius, 0.08 * height
    body = lathe([(0.0, 0.0), (0.9 * radius, 0.0), (radius, 0.05 * height), (radius, height),
                  (radius - wall, height), (radius - wall, floor), (0.0, floor)])
    coffee = cylinder(0.0, 0.0, floor, 0.82 * height, radius - wall)
    reach = -(bound - grip)  # the handle's outer line, on the circle
    inner = -radius + 0.5 * wall
    path = [(0.0, inner, 0.8 * height), (0.0, 0.4 * inner + 0.6 * reach, 0.82 * height),
            (0.0, reach, 0.7 * height), (0.0, reach, 0.34 * height), (0.0, 0.4 * inner + 0.6 * reach, 0.2 * height),
            (0.0, inner, 0.18 * height)]
    return [VisualPart("body", body, "ceramic"), VisualPart("coffee", coffee, "drink"),
            VisualPart("handle", tube(path, grip), "ceramic")]


def _glasses(entry: ObjectEntry) -> list[VisualPart]:
    """Reading glasses folded on a table: two lenses in rims facing +x, a bridge between them
    (where the catalog's bridge grasp is) and the two temples folded behind."""
    depth, width, height = _size(entry)
    bar = 0.06 * height  # the frame's bar radius
    front = depth / 2 - bar
    centre_z = height / 2
    lens_z = min(0.4 * height, height / 2 - 1.6 * bar)
    gap = 0.07 * width
    lens_y = (width / 2 - gap - 3 * bar) / 2  # each lens's half-width
    parts: list[VisualPart] = []
    frame = []
    for side in (1.0, -1.0):
        cy = side * (gap + bar + lens_y)
        lens = disc(front, 0.0, 0.0, 1.0, 0.3 * bar, axis="x")
        lens.apply_scale((1.0, lens_y, lens_z))  # type: ignore[no-untyped-call]
        lens.apply_translation((0.0, cy, centre_z))
        parts.append(VisualPart(f"lens_{'left' if side > 0 else 'right'}", lens, "lens"))
        rim = [(front, cy + lens_y * math.cos(a), centre_z + lens_z * math.sin(a))
               for a in np.linspace(0.0, 2 * math.pi, 14, endpoint=False)]
        frame.append(tube(rim, bar, closed=True))
        end = side * (width / 2 - bar)  # where the temple's hinge is
        frame.append(rod((front, side * (gap + bar + 2 * lens_y), centre_z + 0.3 * lens_z),
                         (front, end, centre_z + 0.3 * lens_z), bar))
    bridge_z = centre_z + 0.5 * lens_z
    frame.append(tube([(front, gap + bar, centre_z + 0.2 * lens_z), (front, 0.4 * gap, bridge_z),
                       (front, -0.4 * gap, bridge_z), (front, -gap - bar, centre_z + 0.2 * lens_z)], bar))
    parts.append(VisualPart("frame", merged(frame), "frame"))
    temples = []
    for side, back, z in ((1.0, 0.45, 0.3), (-1.0, 0.85, -0.1)):
        x = front - back * (depth - 2 * bar)
        hinge = (front, side * (width / 2 - bar), centre_z + z * lens_z)
        temples.append(tube([hinge, (x, side * (width / 2 - bar), hinge[2]),
                             (x, -side * 0.55 * width / 2, hinge[2]),
                             (x, -side * 0.75 * width / 2, hinge[2] - 0.5 * lens_z)], bar))
    parts.append(VisualPart("temples", merged(temples), "frame"))
    return parts


def _pill_box(entry: ObjectEntry) -> list[VisualPart]:
    """A pill box of its own colour (role ``tinted``): the box, a darker line where the lid
    closes, the lid, and a paper label on top."""
    depth, width, height = _size(entry)
    corner = 0.12 * min(depth, width)
    x, y = depth / 2, width / 2
    inset = 0.03 * min(depth, width)
    seam0, seam1 = 0.66 * height, 0.72 * height
    label = slab(-0.6 * x, -0.7 * y, 0.6 * x, 0.7 * y, 0.96 * height, height, 0.3 * corner)
    return [VisualPart("box", slab(-x, -y, x, y, 0.0, seam0, corner), "tinted"),
            VisualPart("lid_line", slab(-x + inset, -y + inset, x - inset, y - inset, seam0 - 0.01 * height,
                                        seam1 + 0.01 * height, corner), "seam"),
            VisualPart("lid", slab(-x, -y, x, y, seam1, 0.97 * height, corner), "tinted"),
            VisualPart("label", label, "label")]


def _book(entry: ObjectEntry) -> list[VisualPart]:
    """A closed hardback lying flat: covers and spine (the spine at -x, where the catalog's
    spine grasp is) round a block of pages."""
    depth, width, height = _size(entry)
    x, y = depth / 2, width / 2
    board = 0.1 * height
    lip = min(0.02 * depth, 0.15 * width)  # the covers overhang the pages
    covers = merged([box(-x, -y, 0.0, x, y, board), box(-x, -y, height - board, x, y, height),
                     box(-x, -y, 0.0, -x + board, y, height)])
    pages = box(-x + board, -y + lip, board, x - lip, y - lip, height - board)
    return [VisualPart("covers", covers, "cover"), VisualPart("pages", pages, "pages")]


def _remote_control(entry: ObjectEntry) -> list[VisualPart]:
    """A TV remote: a rounded body, a red power button at the front (+x), a ring of arrow keys
    and rows of number keys."""
    depth, width, height = _size(entry)
    x, y = depth / 2, width / 2
    top = 0.78 * height
    key = 0.12 * width  # a number key's radius
    body = slab(-x, -y, x, y, 0.0, top, 0.35 * width)
    power = cylinder(0.78 * x, 0.0, top, height, 1.1 * key)
    ring_x = 0.38 * x
    arrows = lathe([(0.55 * width / 2, top), (0.8 * width / 2, top), (0.8 * width / 2, height),
                    (0.55 * width / 2, height), (0.55 * width / 2, top)], ring_x, 0.0)
    keys = [cylinder(ring_x, 0.0, top, height, 0.8 * key)]
    for row in range(4):
        for col in (-1, 0, 1):
            keys.append(cylinder(-0.1 * x - row * 0.19 * x, col * 0.32 * width, top, 0.9 * height + 0.1 * top, key))
    window = box(x - 0.02 * depth, -0.4 * y, 0.2 * height, x, 0.4 * y, 0.65 * height)
    return [VisualPart("body", body, "body"), VisualPart("power", power, "power"),
            VisualPart("keys", merged([arrows, *keys]), "keys"), VisualPart("window", window, "window")]


def _keys(entry: ObjectEntry) -> list[VisualPart]:
    """House keys: a flat ring at the back (-x, the catalog's ring grasp) with two keys fanned
    out toward +x and a leather tag."""
    depth, width, height = _size(entry)
    wire = 0.07 * height
    ring_r = min(0.17 * depth, 0.25 * width)
    ring_x = -depth / 2 + ring_r + wire
    ring = tube([(ring_x + ring_r * math.cos(a), ring_r * math.sin(a), 0.25 * height)
                 for a in np.linspace(0.0, 2 * math.pi, 12, endpoint=False)], wire, closed=True)
    keys, reach = [], depth / 2 - (ring_x + ring_r)
    for n, turn in enumerate((0.18, -0.28)):
        z0 = (0.1 + 0.3 * n) * height
        head = 0.2 * reach
        start = ring_x + ring_r
        shape = [cylinder(start + head, 0.0, z0, z0 + 0.2 * height, head),
                 box(start + 1.8 * head, -0.06 * width, z0, start + reach * 0.92, 0.06 * width, z0 + 0.15 * height)]
        shape += [box(start + reach * (0.45 + 0.12 * k), -0.12 * width, z0, start + reach * (0.5 + 0.12 * k),
                      0.0, z0 + 0.15 * height) for k in range(3)]
        keys.append(rotated_z(merged(shape), turn, (ring_x, 0.0)))
    tag = slab(ring_x - 0.2 * ring_r, 0.25 * width, ring_x + 0.9 * ring_r, 0.48 * width, 0.0, 0.25 * height,
               0.3 * ring_r)
    return [VisualPart("ring", ring, "ring"), VisualPart("keys", _within_width(merged(keys), width), "key"),
            VisualPart("tag", tag, "tag")]


def _within_width(mesh: trimesh.Trimesh, width: float) -> trimesh.Trimesh:
    """``mesh`` narrowed toward y = 0 where it reaches past half of ``width`` (keys fanned out on a
    narrow entry), else as it is."""
    reach = float(np.abs(mesh.vertices[:, 1]).max())
    if reach <= width / 2:
        return mesh
    narrowed = np.asarray(mesh.vertices, dtype=float).copy()
    narrowed[:, 1] *= (width / 2) / reach
    return trimesh.Trimesh(narrowed, mesh.faces, process=False)


# --- things with handles and rims ------------------------------------------------------------------


def _watering_can(entry: ObjectEntry) -> list[VisualPart]:
    """A watering can: a round body at the back, a long spout rising to a rose at the front (+x),
    and one handle from the body's back over its top, through the catalog's rear and top grasps."""
    depth, width, height = _size(entry)
    radius = min(0.45 * width, 0.18 * depth)
    cx = -0.15 * depth
    body = merged([lathe([(0.0, 0.0), (radius, 0.0), (radius, 0.58 * height), (0.8 * radius, 0.66 * height),
                          (0.35 * radius, 0.7 * height), (0.0, 0.7 * height)], cx),
                   cylinder(cx + 0.45 * radius, 0.0, 0.6 * height, 0.74 * height, 0.28 * radius)])
    rose_r, spout_r = 0.13 * width, 0.05 * width
    base = np.array([cx + 0.6 * radius, 0.0, 0.2 * height])
    tip = np.array([depth / 2 - rose_r, 0.0, 0.8 * height])
    axis = (tip - base) / np.linalg.norm(tip - base)
    tip[0] = depth / 2 - rose_r * axis[2] - 0.01 * depth  # the rose's rim stays inside the front
    axis = (tip - base) / np.linalg.norm(tip - base)
    neck = tip - axis * 0.09 * depth
    spout = merged([rod(tuple(base), tuple(base + axis * 0.3 * np.linalg.norm(neck - base)), 1.5 * spout_r),
                    rod(tuple(base), tuple(neck), spout_r)])
    rose = merged([rod(tuple(neck - axis * 0.02 * depth), tuple(tip - axis * 0.02 * depth), 0.6 * rose_r),
                   rod(tuple(tip - axis * 0.025 * depth), tuple(tip), rose_r, sections=16)])
    grip = 0.045 * width
    top = height - grip - 0.004 * height
    handle = tube([(cx - 0.9 * radius, 0.0, 0.3 * height), (-0.43 * depth, 0.0, 0.42 * height),
                   (-0.42 * depth, 0.0, 0.75 * height), (-0.3 * depth, 0.0, top), (0.0, 0.0, top),
                   (cx + 0.5 * radius, 0.0, 0.66 * height)], grip)
    return [VisualPart("body", body, "can"), VisualPart("spout", spout, "can"),
            VisualPart("rose", rose, "rose"), VisualPart("handle", handle, "can")]


def _pan(entry: ObjectEntry) -> list[VisualPart]:
    """A frying pan centred on the object's origin (the burner the flames rise from), oil in it,
    its rim at the top of the entry, and its handle along -x through the catalog's handle grasp."""
    depth, width, height = _size(entry)
    radius = min(width / 2, 0.29 * depth)
    wall, floor = 0.035 * radius, 0.12 * height
    body = lathe([(0.0, 0.0), (0.8 * radius, 0.0), (0.93 * radius, 0.55 * height), (radius, height),
                  (radius - wall, height), (0.93 * radius - wall, 0.55 * height), (0.8 * radius - wall, floor),
                  (0.0, floor)], sections=28)
    oil = cylinder(0.0, 0.0, floor, 0.3 * height, 0.8 * radius - wall, sections=28)
    reach = depth / 2 - radius  # from the rim to the end of the entry
    bar = 0.11 * height
    shank = rod((-0.95 * radius, 0.0, 0.8 * height), (-radius - 0.3 * reach, 0.0, 0.8 * height), bar)
    grip_len = 0.66 * reach
    grip = ellipsoid(-depth / 2 + grip_len / 2 + 0.005 * depth, 0.0, 0.8 * height, grip_len / 2, 0.06 * width,
                     0.18 * height)
    return [VisualPart("pan", body, "pan"), VisualPart("oil", oil, "oil"),
            VisualPart("shank", shank, "pan"), VisualPart("grip", grip, "grip")]


def _potted_plant(entry: ObjectEntry) -> list[VisualPart]:
    """A plant in a pot: a terracotta-like pot with a rim at the catalog's rim grasp, soil, and
    a rosette of leaves on stems, kept within the entry's circle and height."""
    depth, width, height = _size(entry)
    radius = min(depth, width) / 2
    pot_h = 0.38 * height
    pot = lathe([(0.0, 0.0), (0.72 * radius, 0.0), (0.93 * radius, 0.86 * pot_h), (radius, 0.86 * pot_h),
                 (radius, pot_h), (0.9 * radius, pot_h), (0.84 * radius, 0.15 * pot_h), (0.0, 0.15 * pot_h)])
    soil_top = 0.88 * pot_h
    soil = cylinder(0.0, 0.0, 0.15 * pot_h, soil_top, 0.84 * radius)
    stems, leaves = _foliage(radius, soil_top, height)
    return [VisualPart("pot", pot, "pot"), VisualPart("soil", soil, "soil"),
            VisualPart("stems", stems, "stem"), VisualPart("leaves", leaves, "leaf")]


def _foliage(radius: float, soil: float, height: float) -> tuple[trimesh.Trimesh, trimesh.Trimesh]:
    """Stems and leaves rising from the soil at the golden angle, low ones spreading and high
    ones upright, then squeezed toward the stem axis to stay within ``radius`` and ``height``."""
    rise = height - soil
    stems, leaves = [], []
    count = 11
    for k in range(count):
        share = k / (count - 1)
        heading = k * 2.399963
        tilt = math.radians(25 + 50 * share)  # the leaf's rise above the horizontal
        reach = (0.55 - 0.25 * share) * radius
        foot = (0.12 * radius * math.cos(heading), 0.12 * radius * math.sin(heading), soil)
        joint = (reach * math.cos(heading), reach * math.sin(heading), soil + (0.25 + 0.35 * share) * rise)
        stems.append(rod(foot, joint, 0.03 * radius, sections=6))
        length = (0.55 - 0.1 * share) * rise
        centre = (joint[0] + length / 2 * math.cos(tilt) * math.cos(heading),
                  joint[1] + length / 2 * math.cos(tilt) * math.sin(heading),
                  joint[2] + length / 2 * math.sin(tilt))
        leaves.append(leaf(centre, heading, tilt, length, 0.45 * length, 0.04 * length))
    stem, foliage = merged(stems), merged(leaves)
    both = np.vstack([stem.vertices, foliage.vertices])
    spread = float(np.hypot(both[:, 0], both[:, 1]).max())
    top = float(both[:, 2].max())
    squeeze = np.diag([min(1.0, 0.98 * radius / spread), min(1.0, 0.98 * radius / spread),
                       min(1.0, (height - soil) / (top - soil)), 1.0])
    lift = np.eye(4)
    lift[2, 3] = soil
    fit = lift @ squeeze @ np.linalg.inv(lift)
    stem.apply_transform(fit)
    foliage.apply_transform(fit)
    return stem, foliage


# --- parcels, bags and cloth -------------------------------------------------------------------------


def _parcel(entry: ObjectEntry) -> list[VisualPart]:
    """A cardboard parcel with brown tape along its flaps' seam, over the top and down the front
    and back, and an address label on the top."""
    depth, width, height = _size(entry)
    x, y = depth / 2, width / 2
    skin = 0.008 * min(depth, width, height)  # the tape's and the label's thickness
    tape = 0.0625 * width
    carton = box(-x + skin, -y + skin, 0.0, x - skin, y - skin, height - skin)
    strips = merged([box(-x + skin / 2, -tape, height - 2 * skin, x - skin / 2, tape, height),
                     box(x - 2 * skin, -tape, 0.55 * height, x, tape, height - skin / 2),
                     box(-x, -tape, 0.55 * height, -x + 2 * skin, tape, height - skin / 2)])
    label = box(-0.6 * x, 0.2 * width, height - 2 * skin, 0.1 * x, 0.42 * width, height - 0.4 * skin)
    return [VisualPart("carton", carton, "cardboard"), VisualPart("tape", strips, "tape"),
            VisualPart("label", label, "label")]


def _grocery_bag(entry: ObjectEntry) -> list[VisualPart]:
    """A paper shopping bag, open at the top, with two rope handles leaning together up to the
    entry's height (the catalog's handle grasp is above it) and groceries showing over its rim: a
    baguette, leafy greens, apples and a milk carton."""
    depth, width, height = _size(entry)
    x, y = depth / 2, width / 2
    rim = 0.72 * height
    wall = 0.02 * depth
    bag = merged([box(-x, -y, 0.0, x, y, wall), box(-x, -y, 0.0, -x + wall, y, rim), box(x - wall, -y, 0.0, x, y, rim),
                  box(-x, -y, 0.0, x, -y + wall, rim), box(-x, y - wall, 0.0, x, y, rim)])
    cord = 0.02 * depth
    handles = []
    for side in (1.0, -1.0):  # each handle stands on its wall and leans in toward the other
        hx = side * (x - cord - 0.005 * depth)
        handles.append(tube([(hx, -0.22 * width, rim - 0.06 * height), (0.8 * hx, -0.16 * width, 0.92 * height),
                             (0.45 * hx, -0.05 * width, height - cord), (0.45 * hx, 0.05 * width, height - cord),
                             (0.8 * hx, 0.16 * width, 0.92 * height), (hx, 0.22 * width, rim - 0.06 * height)], cord))
    bread = leaf((-0.15 * depth, -0.28 * width, rim - 0.04 * height), -math.pi / 2, math.radians(68), 0.5 * height,
                 0.3 * depth, 0.26 * depth)
    greens = merged([leaf((0.05 * depth, (0.02 + 0.05 * k) * width, rim), math.pi / 2 * (k - 1) / 3,
                          math.radians(78 - 6 * k), 0.3 * height, 0.12 * depth, 0.04 * depth) for k in range(3)])
    apples = merged([ellipsoid(0.12 * depth * s, (0.22 + 0.08 * s) * width, rim - 0.05 * height, 0.16 * depth,
                               0.16 * depth, 0.16 * depth) for s in (1.0, -1.0)])
    carton = box(-0.35 * depth, -0.1 * width, wall, 0.05 * depth, 0.0, rim + 0.1 * height)
    return [VisualPart("bag", bag, "bag"), VisualPart("handles", merged(handles), "handle"),
            VisualPart("bread", bread, "bread"), VisualPart("greens", greens, "greens"),
            VisualPart("apples", apples, "apple"), VisualPart("carton", carton, "carton")]


def _garment(entry: ObjectEntry) -> list[VisualPart]:
    """A folded towel where the entry says so (its id or name), else a folded shirt."""
    return _towel(entry) if "towel" in f"{entry.id} {entry.name}".lower() else _shirt(entry)


def _shirt(entry: ObjectEntry) -> list[VisualPart]:
    """A shirt folded as a shop folds it: the folded body, the front panel over it, a collar
    band toward the front (+x) open where its two points meet over the placket, and the button
    placket running back from there."""
    depth, width, height = _size(entry)
    x, y = depth / 2, width / 2
    fold = 0.7 * height
    body = slab(-x, -y, x, y, 0.0, fold, 0.06 * min(depth, width))
    panel = slab(-x + 0.04 * depth, -y + 0.12 * width, x - 0.02 * depth, y - 0.12 * width, fold, 0.85 * height,
                 0.04 * min(depth, width))
    collar_r = min(0.16 * width, 0.2 * depth)
    cx = x - collar_r - 0.02 * depth
    band = min(0.12 * collar_r, 0.08 * height)  # the collar band's half-thickness
    ring = [(cx + (collar_r - band) * math.cos(t), (collar_r - band) * math.sin(t), height - band)
            for t in np.linspace(math.radians(200), math.radians(520), 12)]
    collar = tube(ring, band)
    neck = cylinder(cx, 0.0, fold, 0.87 * height, collar_r - band)  # the inside of the back, in the collar
    points = merged([_wedge([(cx - collar_r * 0.95, 0.0), (cx - collar_r * 0.2, s * 0.75 * collar_r),
                             (cx - collar_r * 0.55, s * 0.05 * collar_r)], 0.85 * height, 0.95 * height)
                     for s in (1.0, -1.0)])
    placket_x0 = -x + 0.08 * depth
    placket_x1 = cx - collar_r
    placket = box(placket_x0, -0.03 * width, 0.8 * height, placket_x1, 0.03 * width, 0.9 * height)
    buttons = merged([cylinder(placket_x0 + (placket_x1 - placket_x0) * (k + 0.5) / 4, 0.0, 0.85 * height,
                               0.95 * height, 0.018 * width, sections=10) for k in range(4)])
    return [VisualPart("body", body, "shirt"), VisualPart("front", panel, "shirt"),
            VisualPart("collar", merged([collar, points]), "shirt"), VisualPart("neck", neck, "lining"),
            VisualPart("placket", placket, "shirt"), VisualPart("buttons", buttons, "buttons")]


def _wedge(corners: Sequence[tuple[float, float]], z0: float, z1: float) -> trimesh.Trimesh:
    """A flat prism over a polygon of (x, y) corners, from ``z0`` to ``z1`` (a collar point)."""
    mesh: trimesh.Trimesh = trimesh.creation.extrude_polygon(shapely.Polygon(corners), z1 - z0)
    mesh.apply_translation((0.0, 0.0, z0))
    return mesh


def _towel(entry: ObjectEntry) -> list[VisualPart]:
    """A towel folded in three: three layers with their rounded folds at the front (+x), and a
    woven band across them near one end."""
    depth, width, height = _size(entry)
    x, y = depth / 2, width / 2
    layer = height / 3
    r = layer / 2
    band0, band1 = y - 0.22 * width, y - 0.14 * width
    layers, band = [], []
    for k in range(3):
        z0, z1 = k * layer, min((k + 1) * layer, 0.97 * height)
        layers += [box(-x, -y, z0, x - r, y, z1), disc(x - r, 0.0, z0 + r, 0.96 * r, 2 * y, axis="y")]
        band.append(disc(x - r, (band0 + band1) / 2, z0 + r, r, band1 - band0, axis="y"))
    band.append(box(-x, band0, 0.97 * height, x - r, band1, height))
    return [VisualPart("towel", merged(layers), "towel"), VisualPart("band", merged(band), "band")]


#: The builder of each object class's visual.
OBJECT_BUILDERS: dict[str, Callable[[ObjectEntry], list[VisualPart]]] = {
    "mug": _mug, "glasses": _glasses, "pill_box": _pill_box, "watering_can": _watering_can,
    "potted_plant": _potted_plant, "parcel": _parcel, "grocery_bag": _grocery_bag, "pan": _pan,
    "garment": _garment, "book": _book, "remote_control": _remote_control, "keys": _keys,
}
