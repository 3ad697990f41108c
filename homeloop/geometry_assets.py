"""Simple meshes of catalog entries, from their dimensions.

Each furniture or object entry becomes a box of its dimensions, or an upright
cylinder where the entry's ``shape`` says so, in the item frame of
:mod:`homeloop.catalog` (origin at the centre of the footprint on the floor,
+x the front, z up). :func:`placed_mesh` moves it to a pose in a home. These
stand in for artist meshes in the USD export and the previews.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import trimesh

from homeloop.catalog import FurnitureEntry, ObjectEntry
from homeloop.home import Pose

#: Facets around a cylinder: round enough for previews, small for USD files.
CYLINDER_SECTIONS = 32


def mesh_for(entry: FurnitureEntry | ObjectEntry) -> trimesh.Trimesh:
    """The entry's mesh in its own frame, standing on z = 0."""
    d = entry.dimensions
    if entry.shape == "cylinder":
        mesh = trimesh.creation.cylinder(radius=min(d.width, d.depth) / 2, height=d.height,
                                         sections=CYLINDER_SECTIONS)
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
    export draws the same panel (pipeline/usd.py).
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
