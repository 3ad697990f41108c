"""One piece of a visual mesh (see :mod:`homeloop.core.visuals`)."""

from __future__ import annotations

from dataclasses import dataclass

import trimesh


@dataclass(frozen=True)
class VisualPart:
    """One piece of a visual: its closed mesh in the item frame, the role that picks its material,
    and the catalog joint it moves with (None: it stays with the body)."""

    name: str
    mesh: trimesh.Trimesh
    role: str
    joint: str | None = None
