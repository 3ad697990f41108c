"""What the visual-mesh tests ask of every builder's parts (tests/test_visuals_*.py)."""

from __future__ import annotations

import hashlib

import numpy as np

from homeloop.core.visuals import VisualPart


def open_parts(parts: list[VisualPart], wound: bool = False) -> list[str]:
    """The names of the parts that are not closed solids of positive volume (``wound``: nor
    consistently wound)."""
    return [p.name for p in parts if not (p.mesh.is_watertight and p.mesh.volume > 0
                                          and (p.mesh.is_winding_consistent or not wound))]


def digest(parts: list[VisualPart]) -> str:
    """A hash of the parts' names, roles, joints and exact geometry (the same parts, the same hash)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(f"{p.name}|{p.role}|{p.joint}".encode())
        h.update(np.ascontiguousarray(p.mesh.vertices, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(p.mesh.faces, dtype=np.int64).tobytes())
    return h.hexdigest()
