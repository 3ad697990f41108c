"""One piece of a visual mesh (see :mod:`homeloop.core.visuals`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, TypeVar

import trimesh

from homeloop.core.visuals.shapes import merged


@dataclass(frozen=True)
class VisualPart:
    """One piece of a visual: its closed mesh in the item frame, the role that picks its material,
    and the catalog joint it moves with (None: it stays with the body)."""

    name: str
    mesh: trimesh.Trimesh
    role: str
    joint: str | None = None


class Parts:
    """A builder's parts, in the order they are added."""

    def __init__(self) -> None:
        self.parts: list[VisualPart] = []

    def add(self, name: str, role: str, meshes: trimesh.Trimesh | list[trimesh.Trimesh],
            joint: str | None = None) -> None:
        mesh = merged(meshes) if isinstance(meshes, list) else meshes
        self.parts.append(VisualPart(name, mesh, role, joint))


Builder = TypeVar("Builder", bound=Callable[..., list[VisualPart]])


def registrar(table: dict[str, Builder]) -> Callable[..., Callable[[Builder], Builder]]:
    """A decorator factory filing builders in ``table``: ``@builds("a", "b")`` registers one
    builder for the names it lists (a family of builders' one table, as FURNITURE_BUILDERS)."""
    def builds(*names: str) -> Callable[[Builder], Builder]:
        def register(build: Builder) -> Builder:
            for name in names:
                table[name] = build
            return build
        return register
    return builds
