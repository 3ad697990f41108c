"""Simple meshes of catalog entries, from their dimensions.

Each furniture or object entry becomes a box of its dimensions, or an upright
cylinder where the entry's ``shape`` says so, in the item frame of
:mod:`homeloop.catalog` (origin at the centre of the footprint on the floor,
+x the front, z up). :func:`placed_mesh` moves it to a pose in a home. These
stand in for artist meshes in the USD export and the previews.
"""

from __future__ import annotations

import math

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
