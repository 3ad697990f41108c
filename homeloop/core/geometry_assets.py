"""Meshes and solids of catalog entries, from their dimensions, surfaces and containers.

Each furniture or object entry becomes a solid in the item frame of
:mod:`homeloop.core.catalog` (origin at the centre of the footprint on the floor,
+x the front, z up): a box of its dimensions, or an upright cylinder where the
entry's ``shape`` says so. A box-shaped piece of furniture is hollowed where
its catalog entry says things go (docs/catalog.md), so what stands on a shelf
or lies in a drum is in free space, visible and graspable:

- **shelves**: above every support surface lower than the item's top, the
  space up to the next surface above (less a board of
  :data:`SHELF_BOARD_THICKNESS`) or to the top board is open to the front; a
  seat (an item one sits or lies on) is open to the top instead, leaving its
  back and arms;
- **containers**: each inner space (a drawer, a drum, a fridge compartment)
  is a cavity, with a mouth through the front face where the part that opens
  it (a door, a drawer front) closes it; a container no part opens (a basket)
  is open to the top;
- **screens** (:data:`SCREEN_STANDS`): a panel on two feet, with a clear
  gap under it, so a remote on the unit below it is not swallowed.

:func:`solid_boxes` gives the solid as axis-aligned boxes (the grid cells the
cavities leave); :func:`mesh_for` its closed surface. The USD export
(homeloop/pipeline/usd/), the CPU renderer (homeloop/sim/render) and the home check
(homeloop/core/check.py: objects clear of furniture) all read them.
:func:`placed_mesh` moves a mesh to a pose in a home.

**Device bodies** (:func:`device_body`, sizes in :data:`DEVICE_BODIES`). A
device's pose is the point where it is fixed; its body is a box that rests on
that mount and does not cross it: a ceiling device hangs below the room's
ceiling, a floor or furniture device stands on its surface, a wall device
(and one on a door or window frame) stands out of the wall face it is fixed
to. A dome camera's housing reaches from the ceiling down to
:data:`CAMERA_LENS_CLEARANCE` above its lens, so the camera sees out of it.
Worn and built-in devices have no body of their own (the wearer, the
appliance). The geometric visibility backend and the renderer
(homeloop/sim), the USD export and the home check (devices clear of objects
and furniture) all read these boxes (docs/catalog.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple

import numpy as np
import shapely
import trimesh

from homeloop.core.catalog import FurnitureEntry, ObjectEntry
from homeloop.core.home import Device, Furniture, Home, HomeObject, Pose, polygon_from_rings

#: Facets around a cylinder: round enough for previews, small for USD files.
CYLINDER_SECTIONS = 32
#: Thickness (m) of the board over the top shelf of shelving and under a shelf above another.
SHELF_BOARD_THICKNESS = 0.02
#: Affordances of seats: the space above their seat or mattress is open to the top.
SEAT_AFFORDANCES = frozenset({"sit", "lie"})
#: Lengths closer than this (m) are the same coordinate.
EPSILON = 1e-6


@dataclass(frozen=True)
class ScreenStand:
    """A flat screen on two feet: its panel (``panel_depth`` thick, centred in the
    item's depth) starts ``clearance`` above the item's base; the feet, ``foot_width``
    wide, stand at its two ends across the whole depth."""

    panel_depth: float
    clearance: float
    foot_width: float


#: Furniture classes drawn as a screen on feet (a 55-inch TV: 6 cm panel, 8 cm under it).
SCREEN_STANDS: dict[str, ScreenStand] = {"television": ScreenStand(panel_depth=0.06, clearance=0.08,
                                                                   foot_width=0.04)}


class Box(NamedTuple):
    """An axis-aligned box (m): its low and high corners."""

    x0: float
    y0: float
    z0: float
    x1: float
    y1: float
    z1: float


# --- cavities ---------------------------------------------------------------------------------------


def _bounds(entry: FurnitureEntry | ObjectEntry) -> Box:
    d = entry.dimensions
    return Box(-d.depth / 2, -d.width / 2, 0.0, d.depth / 2, d.width / 2, d.height)


def _shelf_spaces(entry: FurnitureEntry) -> list[Box]:
    """The open space above each support surface below the item's top."""
    d, out = entry.dimensions, []
    seat = bool(SEAT_AFFORDANCES.intersection(entry.affordances))
    for s in entry.surfaces:
        if s.height >= d.height - EPSILON:
            continue
        y0, y1 = s.offset.y - s.width / 2, s.offset.y + s.width / 2
        above = [t.height for t in entry.surfaces if t.height > s.height + EPSILON
                 and t.offset.y - t.width / 2 < y1 and y0 < t.offset.y + t.width / 2]
        top = d.height if seat and not above else min(above, default=d.height) - SHELF_BOARD_THICKNESS
        out.append(Box(s.offset.x - s.depth / 2, y0, s.height, d.depth / 2, y1, top))
    return out


def _container_spaces(entry: FurnitureEntry) -> list[Box]:
    """Each container's inner space, and its mouth: through the front face as far as the
    part that opens it covers, or up through the top where no part opens it."""
    d, out = entry.dimensions, []
    parts = {p.name: p for p in entry.parts}
    for c in entry.containers:
        o, i = c.offset, c.inner
        inner = Box(o.x - i.depth / 2, o.y - i.width / 2, o.z, o.x + i.depth / 2, o.y + i.width / 2, o.z + i.height)
        out.append(inner)
        part = parts.get(c.opened_by) if c.opened_by else None
        if part is None:
            out.append(inner._replace(z1=d.height))
        elif inner.x1 < d.depth / 2 - EPSILON:
            _, py0, pz0, _, py1, pz1 = part_panel_bounds(entry, part)
            h = part.hinge
            y0, y1 = max(inner.y0, py0 + h.y), min(inner.y1, py1 + h.y)
            z0, z1 = max(inner.z0, pz0 + h.z), min(inner.z1, pz1 + h.z)
            if y1 > y0 + EPSILON and z1 > z0 + EPSILON:
                out.append(Box(inner.x1, y0, z0, d.depth / 2, y1, z1))
    return out


def _screen_spaces(entry: FurnitureEntry) -> list[Box]:
    """Round a screen on feet: under the panel between the feet, in front of and behind it."""
    stand = SCREEN_STANDS.get(entry.semantic_class)
    if stand is None:
        return []
    b, half = _bounds(entry), stand.panel_depth / 2
    return [Box(b.x0, b.y0 + stand.foot_width, 0.0, b.x1, b.y1 - stand.foot_width, stand.clearance),
            Box(half, b.y0, stand.clearance, b.x1, b.y1, b.z1),
            Box(b.x0, b.y0, stand.clearance, -half, b.y1, b.z1)]


def cavities(entry: FurnitureEntry | ObjectEntry) -> list[Box]:
    """The open spaces of a box-shaped piece of furniture, in its item frame (none for objects
    and cylinders)."""
    if not isinstance(entry, FurnitureEntry) or entry.shape != "box":
        return []
    return _shelf_spaces(entry) + _container_spaces(entry) + _screen_spaces(entry)


# --- the solid as grid cells ---------------------------------------------------------------------------


def _cell_grid(bounds: Box, holes: list[Box]) -> tuple[list[np.ndarray], np.ndarray]:
    """The grid the holes' faces cut the bounds into (coordinates per axis) and which cells
    are solid (not inside any hole)."""
    lo, hi = np.array(bounds[:3]), np.array(bounds[3:])
    axes = []
    for a in range(3):
        cuts = [lo[a], hi[a]] + [v for h in holes for v in (h[a], h[a + 3]) if lo[a] < v < hi[a]]
        axes.append(np.unique(np.round(cuts, 6)))
    mids = np.meshgrid(*[(g[:-1] + g[1:]) / 2 for g in axes], indexing="ij")
    solid = np.ones(mids[0].shape, dtype=bool)
    for h in holes:
        inside = np.ones_like(solid)
        for a in range(3):
            inside &= (mids[a] > h[a]) & (mids[a] < h[a + 3])
        solid &= ~inside
    return axes, solid


def solid_boxes(entry: FurnitureEntry | ObjectEntry) -> list[Box]:
    """The entry's solid as boxes in its item frame: the grid cells its cavities leave (one box
    when it has none; a cylinder's bounding box)."""
    holes = cavities(entry)
    if not holes:
        return [_bounds(entry)]
    axes, solid = _cell_grid(_bounds(entry), holes)
    return [Box(axes[0][i], axes[1][j], axes[2][k], axes[0][i + 1], axes[1][j + 1], axes[2][k + 1])
            for i, j, k in np.argwhere(solid)]


def _grid_surface(axes: list[np.ndarray], solid: np.ndarray) -> trimesh.Trimesh:
    """The closed surface between solid and empty cells of a grid, faces outward."""
    shape = np.array(solid.shape) + 1  # lattice points per axis
    padded = np.pad(solid, 1).astype(np.int8)
    quads = []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3
        step = np.diff(padded, axis=a)[tuple(slice(None) if k == a else slice(1, -1) for k in range(3))]
        at = np.argwhere(step != 0)
        outward = step[tuple(at.T)] < 0  # solid below the face, empty above: it faces +a
        corners = []
        for ob, oc in ((0, 0), (1, 0), (1, 1), (0, 1)):
            p = at.copy()
            p[:, b] += ob
            p[:, c] += oc
            corners.append((p[:, 0] * shape[1] + p[:, 1]) * shape[2] + p[:, 2])
        q = np.stack(corners, axis=1)
        q[~outward] = q[~outward][:, ::-1]
        quads.append(q)
    q = np.concatenate(quads)
    faces = np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]])
    vertices = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    mesh.remove_unreferenced_vertices()
    return mesh


def mesh_for(entry: FurnitureEntry | ObjectEntry) -> trimesh.Trimesh:
    """The entry's mesh in its own frame, standing on z = 0: its solid's closed surface."""
    d = entry.dimensions
    holes = cavities(entry)
    if entry.shape == "cylinder":
        mesh = trimesh.creation.cylinder(radius=min(d.width, d.depth) / 2, height=d.height,
                                         sections=CYLINDER_SECTIONS)
        mesh.apply_translation((0.0, 0.0, d.height / 2))
    elif holes:
        mesh = _grid_surface(*_cell_grid(_bounds(entry), holes))
    else:
        mesh = trimesh.creation.box(extents=(d.depth, d.width, d.height))
        mesh.apply_translation((0.0, 0.0, d.height / 2))
    mesh.metadata["catalog_id"] = entry.id
    return mesh


def pose_matrix(pose: Pose) -> np.ndarray:
    """The 4x4 transform from a thing's frame to home coordinates."""
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    return np.array([[c, -s, 0.0, pose.x], [s, c, 0.0, pose.y], [0.0, 0.0, 1.0, pose.z], [0.0, 0.0, 0.0, 1.0]])


def placed_mesh(entry: FurnitureEntry | ObjectEntry, pose: Pose) -> trimesh.Trimesh:
    """The entry's mesh moved to ``pose`` in home coordinates."""
    mesh = mesh_for(entry)
    mesh.apply_transform(pose_matrix(pose))
    return mesh


#: Panel thickness (m) of articulated furniture parts (doors, flaps, drawer fronts).
PART_PANEL_THICKNESS = 0.025


def part_panel_bounds(entry: FurnitureEntry, part: Any) -> tuple[float, float, float, float, float, float]:
    """The moving panel of an articulated part as a box (x0, y0, z0, x1, y1, z1) in the part's
    frame (origin at the hinge, axes of the item frame).

    The catalog gives the hinge and axis only, so the panel is derived from the item's box: a
    slab on the front face. Revolute parts about z (side-hinged doors) span from the hinge to the
    mirror of the hinge across the item's middle (or to the middle where a door on the other side
    shares the front); those hinged at mid-height (a washer's porthole) are square about the hinge
    height. Revolute parts about y or x (oven doors, flaps) span the width from the hinge up to
    near the top. Prismatic parts (drawers) cover the front of the container they open. The USD
    export draws the same panel (homeloop/pipeline/usd/).
    """
    d = entry.dimensions
    h, t = part.hinge, PART_PANEL_THICKNESS
    x0 = d.depth / 2 - h.x  # panel's inner face, from the hinge
    if part.kind == "prismatic":
        box = next((c for c in entry.containers if c.name == part.opens), None)
        if box is not None:
            z0, z1 = box.offset.z, box.offset.z + box.inner.height
            y0, y1 = box.offset.y - box.inner.width / 2 - 0.01, box.offset.y + box.inner.width / 2 + 0.01
        else:
            z0, z1 = d.height * 0.6, d.height * 0.95
            y0, y1 = -d.width / 2, d.width / 2
        y0, y1 = max(y0, -d.width / 2), min(y1, d.width / 2)
        return (x0, y0 - h.y, z0 - h.z, x0 + t, y1 - h.y, z1 - h.z)
    if part.axis == "z":
        shared = any(p is not part and p.kind == "revolute" and p.axis == "z" and p.hinge.y * h.y < 0
                     for p in entry.parts)
        far = 0.0 if shared else -h.y
        if abs(far - h.y) < 0.05:
            far = -d.width / 2 if h.y >= 0 else d.width / 2
        y0, y1 = sorted((h.y, far))
        span = y1 - y0
        if h.z <= 1e-6:
            z0, z1 = 0.02, d.height - 0.02
        else:
            z0, z1 = max(h.z - span / 2, 0.0), min(h.z + span / 2, d.height)
        return (x0, y0 - h.y, z0 - h.z, x0 + t, y1 - h.y, z1 - h.z)
    top = d.height - 0.05 if d.height - 0.05 > h.z + 0.05 else d.height
    return (x0, -d.width / 2 + 0.01 - h.y, 0.0, x0 + t, d.width / 2 - 0.01 - h.y, top - h.z)


# --- placed solids as oriented boxes ---------------------------------------------------------------------


@dataclass(frozen=True)
class OrientedBoxes:
    """Boxes in home coordinates: centres (n x 3), unit axes (n x 3 x 3, one per row) and half
    extents along them (n x 3)."""

    centres: np.ndarray
    axes: np.ndarray
    halves: np.ndarray

    def __len__(self) -> int:
        return len(self.centres)

    @staticmethod
    def of(boxes: Iterable[Box], transform: np.ndarray) -> "OrientedBoxes":
        """Item-frame boxes moved by a 4x4 transform (a rotation and a translation)."""
        b = (boxes if isinstance(boxes, np.ndarray) else np.asarray(list(boxes), dtype=float)).reshape(-1, 6)
        rot, shift = transform[:3, :3], transform[:3, 3]
        centres = (b[:, :3] + b[:, 3:]) / 2 @ rot.T + shift
        axes = np.repeat(rot.T[None], len(b), axis=0)
        return OrientedBoxes(centres, axes, (b[:, 3:] - b[:, :3]) / 2)

    @staticmethod
    def of_each(boxes: np.ndarray, transforms: np.ndarray) -> "OrientedBoxes":
        """One item-frame box (n x 6) moved by each of n 4x4 transforms: :meth:`of` for every
        pair at once, the same numbers (each centre turned as a one-row product)."""
        b = np.asarray(boxes, dtype=float).reshape(-1, 6)
        rot_t = np.asarray(transforms, dtype=float).reshape(-1, 4, 4)[:, :3, :3].transpose(0, 2, 1)
        centres = np.matmul(((b[:, :3] + b[:, 3:]) / 2)[:, None, :], rot_t)[:, 0] + transforms[:, :3, 3]
        return OrientedBoxes(centres, np.ascontiguousarray(rot_t), (b[:, 3:] - b[:, :3]) / 2)

    @staticmethod
    def concat(parts: Iterable["OrientedBoxes"]) -> "OrientedBoxes":
        parts = list(parts)
        if not parts:
            return OrientedBoxes(np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)))
        return OrientedBoxes(*(np.concatenate([getattr(p, k) for p in parts])
                               for k in ("centres", "axes", "halves")))


def _axis_rotation(axis: str, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m = np.eye(4)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def part_transform(part: Any, state: float) -> np.ndarray:
    """A catalog part's frame in its item's frame at ``state`` (rad or m): at the hinge,
    turned about or slid along its axis."""
    at = np.eye(4)
    at[:3, 3] = (part.hinge.x, part.hinge.y, part.hinge.z)
    if part.kind == "revolute":
        return at @ _axis_rotation(part.axis, state)
    slide = np.eye(4)
    slide["xyz".index(part.axis), 3] = state
    return at @ slide


#: Item-frame solids already cut, by catalog entry (each kept with its entry, so no other
#: entry takes its identity while it is kept); emptied when it grows past this size.
_ENTRY_SOLIDS: dict[int, tuple[FurnitureEntry, np.ndarray, tuple[np.ndarray, ...]]] = {}
_ENTRY_SOLIDS_SIZE = 4096


def _entry_solid(entry: FurnitureEntry) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The entry's body boxes (n x 6, :func:`solid_boxes`) and each part's panel (1 x 6,
    :func:`part_panel_bounds`), in the item frame: the same for every placed copy, so cut once."""
    hit = _ENTRY_SOLIDS.get(id(entry))
    if hit is None:
        if len(_ENTRY_SOLIDS) >= _ENTRY_SOLIDS_SIZE:
            _ENTRY_SOLIDS.clear()
        body = np.asarray(solid_boxes(entry), dtype=float).reshape(-1, 6)
        panels = tuple(np.asarray([part_panel_bounds(entry, p)], dtype=float) for p in entry.parts)
        hit = _ENTRY_SOLIDS[id(entry)] = (entry, body, panels)
    return hit[1], hit[2]


def _panel_transforms(entry: FurnitureEntry, item: Furniture, place: np.ndarray) -> list[np.ndarray]:
    """Where each articulated part's panel is, at the part's present state (its range's start
    when the item does not give one)."""
    states = {p.name: p.state for p in item.parts}
    return [place @ part_transform(p, states.get(p.name, p.range[0])) for p in entry.parts]


def furniture_solids(entry: FurnitureEntry, item: Furniture) -> OrientedBoxes:
    """A placed piece of furniture's solid in home coordinates: its body's boxes and each
    articulated part's panel at the part's present state."""
    return placed_solids([entry], [item])[0]


def placed_solids(entries: list[FurnitureEntry], items: list[Furniture]) -> tuple[OrientedBoxes, np.ndarray]:
    """The solids of many placed pieces of furniture (``items[k]`` of catalog entry ``entries[k]``)
    as one set of boxes, and the index of the item each box belongs to: every item's body boxes
    first, then every panel."""
    bodies, owners, panels, at, panel_owners = [], [], [], [], []
    for k, (entry, item) in enumerate(zip(entries, items)):
        place = pose_matrix(item.pose)
        body, panel_boxes = _entry_solid(entry)
        bodies.append(OrientedBoxes.of(body, place))
        owners.append(np.full(len(body), k))
        panels += panel_boxes
        at += _panel_transforms(entry, item, place)
        panel_owners += [k] * len(panel_boxes)
    if panels:
        bodies.append(OrientedBoxes.of_each(np.concatenate(panels), np.stack(at)))
    owner = np.concatenate([*owners, np.asarray(panel_owners, dtype=int)]).astype(np.intp)
    return OrientedBoxes.concat(bodies), owner


def object_box(obj: HomeObject) -> OrientedBoxes:
    """A placed object's box (its catalog size, base centre at its pose) in home coordinates."""
    return box_at(*obj.size, obj.pose)


def box_at(width: float, depth: float, height: float, pose: Pose) -> OrientedBoxes:
    """The box of an object of this size (depth along its x) with its base centre at ``pose``."""
    return OrientedBoxes.of([Box(-depth / 2, -width / 2, 0.0, depth / 2, width / 2, height)], pose_matrix(pose))


def _world_extents(boxes: OrientedBoxes) -> np.ndarray:
    """Half extents (n x 3) of each box's axis-aligned bounding box."""
    return np.einsum("njk,nj->nk", np.abs(boxes.axes), boxes.halves)


def _projected_radii(unit: np.ndarray, axes: np.ndarray, halves: np.ndarray) -> np.ndarray:
    """Half lengths (p x 15) of boxes (p x 3 x 3 axes, p x 3 halves) projected on unit axes (p x 15 x 3)."""
    return np.sum(np.abs(np.einsum("pak,pjk->paj", unit, axes)) * halves[:, None], axis=2)


def _bounds_overlapping(boxes: OrientedBoxes, others: OrientedBoxes, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j), in row order, whose axis-aligned bounding boxes overlap by more than
    ``tolerance`` along every world axis: all pairs tested along x, the pairs left along y, then z."""
    ext_a, ext_b = _world_extents(boxes), _world_extents(others)
    ca, cb = boxes.centres, others.centres
    i, j = np.nonzero(np.abs(ca[:, None, 0] - cb[None, :, 0]) < (ext_a[:, None, 0] + ext_b[None, :, 0]) - tolerance)
    for axis in (1, 2):
        near = np.abs(ca[i, axis] - cb[j, axis]) < (ext_a[i, axis] + ext_b[j, axis]) - tolerance
        i, j = i[near], j[near]
    return i, j


def overlapping_pairs(boxes: OrientedBoxes, others: OrientedBoxes,
                      tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j) where ``boxes[i]`` overlaps ``others[j]`` by more than ``tolerance`` (m)
    along every separating axis of the two (the 15 axes of the separating axis theorem): boxes
    that only touch, such as a book lying on a shelf, do not.

    Pairs whose bounding boxes overlap by no more than ``tolerance`` are dropped first: two
    convex solids overlap least, over all directions, along one of those 15 axes, so no world
    axis overlaps less than the test's least and the filter changes no answer."""
    if not len(boxes) or not len(others):
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    i, j = _bounds_overlapping(boxes, others, tolerance)
    a, b = boxes.axes[i], others.axes[j]
    axes = np.concatenate([a, b, np.cross(a[:, :, None], b[:, None, :]).reshape(-1, 9, 3)], axis=1)
    length = np.linalg.norm(axes, axis=2)
    usable = length > 1e-9
    unit = axes / np.where(usable, length, 1.0)[..., None]
    reach = _projected_radii(unit, a, boxes.halves[i]) + _projected_radii(unit, b, others.halves[j])
    apart = usable & (np.abs(np.einsum("pak,pk->pa", unit, others.centres[j] - boxes.centres[i]))
                      >= reach - tolerance)
    keep = ~apart.any(axis=1)
    return i[keep], j[keep]


def overlapping(box: OrientedBoxes, others: OrientedBoxes, tolerance: float) -> np.ndarray:
    """Which of ``others`` the one ``box`` overlaps by more than ``tolerance`` (m)
    (:func:`overlapping_pairs`)."""
    hit = np.zeros(len(others), dtype=bool)
    hit[overlapping_pairs(box, others, tolerance)[1]] = True
    return hit


# --- device bodies ---------------------------------------------------------------------------------------


class BodySize(NamedTuple):
    """A device body's size (m): ``width`` across its heading, ``depth`` along it (out of the wall
    for a wall mount) and ``height``."""

    width: float
    depth: float
    height: float


#: Device bodies by mount (docs/catalog.md); worn and built-in devices have none.
DEVICE_BODIES: dict[str, BodySize] = {
    "ceiling": BodySize(0.14, 0.14, 0.06),  # a smoke sensor, a flush fitting, a camera's dome
    "wall": BodySize(0.09, 0.03, 0.12),  # a switch, a plug, a thermostat, a valve
    "floor": BodySize(0.08, 0.08, 0.03),  # a leak sensor
    "on_furniture": BodySize(0.10, 0.10, 0.10),  # a small device standing on a top
    "at_door": BodySize(0.07, 0.05, 0.16),  # a lock, a doorbell
    "on_window": BodySize(0.30, 0.08, 0.10),  # a blind's or a curtain's motor
    "on_opening": BodySize(0.03, 0.02, 0.08),  # a contact sensor
    "in_plant_pot": BodySize(0.03, 0.03, 0.12),  # a soil probe
}
#: Device types whose body on a mount is not its mount's: a lamp on a nightstand or a side table
#: is a small table lamp, one on the floor a standard lamp; the air devices are room units on the floor.
DEVICE_BODIES_BY_TYPE: dict[tuple[str, str], BodySize] = {
    ("light", "on_furniture"): BodySize(0.12, 0.12, 0.40),
    ("light", "floor"): BodySize(0.30, 0.30, 1.60),
    # The optional air devices (homeloop/catalog/air_devices.yaml), at the size of common room units.
    ("humidifier", "floor"): BodySize(0.24, 0.20, 0.34),
    ("dehumidifier", "floor"): BodySize(0.36, 0.26, 0.55),
    ("fan", "floor"): BodySize(0.30, 0.30, 1.05),
    ("air_purifier", "floor"): BodySize(0.36, 0.24, 0.55),
}
#: A device this close (m) to its room's boundary is fixed to that wall (devices sit 1-10 cm
#: off the wall face, homeloop/pipeline/devices/walls.py); one farther out stands free, centred on its pose.
DEVICE_WALL_REACH = 0.15
#: Mounts whose device is fixed to a wall or an opening's frame, and those that stand on a surface.
WALL_MOUNTS = frozenset({"wall", "at_door", "on_window", "on_opening"})
STANDING_MOUNTS = frozenset({"floor", "on_furniture"})
#: Gap (m) between a dome camera's lens (its pose) and the bottom of its housing.
CAMERA_LENS_CLEARANCE = 0.02


def device_body_size(device_type: str, mount: str) -> BodySize | None:
    """The body of a device of this type on this mount; None for a worn or built-in device."""
    return DEVICE_BODIES_BY_TYPE.get((device_type, mount), DEVICE_BODIES.get(mount))


class _Mounts:
    """What device bodies of one home rest on: its rooms, its cameras' ids, and each room's
    outline (measured once for all the devices on its walls)."""

    def __init__(self, home: Home) -> None:
        self.rooms: dict[str, Any] = {}
        for r in home.rooms:  # the first room of an id, as Home.room finds it
            self.rooms.setdefault(r.id, r)
        self.cameras = {c.id for c in home.cameras}
        self._outlines: dict[str, Any] = {}

    def outline(self, room_id: str) -> Any:
        if room_id not in self._outlines:
            self._outlines[room_id] = polygon_from_rings(self.rooms[room_id].polygon).exterior
        return self._outlines[room_id]


def device_body(home: Home, d: Device) -> Box | None:
    """A device's body as a box in its pose's frame, resting on its mount (module docstring,
    "Device bodies"); None where it has none."""
    return _device_body(_Mounts(home), d)


def _device_body(mounts: _Mounts, d: Device) -> Box | None:
    size = device_body_size(d.type, d.mount)
    if size is None:
        return None
    w, depth, h = size.width / 2, size.depth / 2, size.height
    if d.room is not None and d.room not in mounts.rooms:
        raise KeyError(f"no room {d.room!r}")
    room = mounts.rooms[d.room] if d.room is not None else None
    if d.mount == "ceiling" and room is not None:
        top = room.floor_height + room.ceiling_height - d.pose.z
        if d.id in mounts.cameras:  # the housing stays clear of the lens
            return Box(-depth, -w, CAMERA_LENS_CLEARANCE, depth, w, max(top, 2 * CAMERA_LENS_CLEARANCE))
        return Box(-depth, -w, top - h, depth, w, top)
    if d.mount in STANDING_MOUNTS:
        return Box(-depth, -w, 0.0, depth, w, h)
    if d.mount in WALL_MOUNTS and room is not None:
        gap = mounts.outline(room.id).distance(shapely.Point(d.pose.x, d.pose.y))
        gap = gap if gap <= DEVICE_WALL_REACH else 0.0
        return Box(-gap, -w, -h / 2, size.depth - gap, w, h / 2)
    return Box(-depth, -w, -h / 2, depth, w, h / 2)


def device_solid(home: Home, d: Device) -> OrientedBoxes | None:
    """A device's body in home coordinates; None where it has none."""
    placed, solids = _device_solids(_Mounts(home), [d])
    return solids if placed else None


def device_solids(home: Home) -> tuple[list[Device], OrientedBoxes]:
    """The devices of the home that have a body, and their bodies in home coordinates, one box
    each in the same order (the rooms' outlines measured once for all of them)."""
    return _device_solids(_Mounts(home), home.devices)


def _device_solids(mounts: _Mounts, devices: Iterable[Device]) -> tuple[list[Device], OrientedBoxes]:
    placed = [(d, body) for d in devices if (body := _device_body(mounts, d)) is not None]
    if not placed:
        return [], OrientedBoxes.concat([])
    solids = OrientedBoxes.of_each(np.asarray([b for _, b in placed], dtype=float),
                                   np.stack([pose_matrix(d.pose) for d, _ in placed]))
    return [d for d, _ in placed], solids
