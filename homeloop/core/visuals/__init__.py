"""Visual meshes of catalog entries: what a camera and a USD viewer show, made from the entry.

The solids of :mod:`homeloop.core.geometry_assets` stay what the home check, navigation and
collision read; a visual is the recognizable shape drawn inside them (docs/catalog.md): a sofa's
seat, back, arms and cushions, a table's top and legs, a range's burners and knobs. Each entry
becomes a list of :class:`VisualPart`, made procedurally and deterministically from the entry's
dimensions, surfaces, containers and parts, in the item frame of :mod:`homeloop.core.catalog`
(origin at the centre of the footprint on the floor, +x out of the front, +y to the left, z up):

- a part names the *role* it plays (``upholstery``, ``frame``, ``leaf``, ``screen`` ...); the
  catalog's palettes (``homeloop/catalog/materials.yaml``) give each class's roles their
  materials, one of several per home (:func:`material_of`);
- a part that moves with a catalog joint (a door, a drawer front, a drum door) names it in
  ``joint`` and is drawn closed; the renderer and the USD export pose it by the joint's state
  (:func:`homeloop.core.geometry_assets.part_transform`).

Builders are registered by semantic class (furniture, objects) or device type (devices) in
:mod:`.furniture`, :mod:`.objects` and :mod:`.devices`; an entry no builder knows is drawn as its
solid, one part (an object's plays :data:`TINTED`, so its colour word still colours it).

A furniture or object entry's visual is the same for every placed copy: it is made once per
entry and kept (:func:`furniture_visual`, :func:`object_visual`), and a device's once per type,
size and mount (:func:`device_visual`). The parts and meshes handed out are shared: read them, or
copy a mesh before changing it.
"""

from __future__ import annotations

import hashlib
from typing import Callable, TypeVar

from homeloop.core.catalog import Catalog, FurnitureEntry, MaterialEntry, ObjectEntry
from homeloop.core.geometry_assets import BodySize, mesh_for
from homeloop.core.kept import Kept
from homeloop.core.visuals.devices import DEVICE_BUILDERS
from homeloop.core.visuals.furniture import FURNITURE_BUILDERS
from homeloop.core.visuals.objects import OBJECT_BUILDERS
from homeloop.core.visuals.part import VisualPart
from homeloop.core.visuals.shapes import box

__all__ = ["TINTED", "VisualPart", "device_visual", "furniture_visual", "material_of", "object_visual",
           "variant_of"]

#: The role of a part coloured by its thing's own colour word (an object's ``colour``, else its
#: entry's) where it names one, else by its palette.
TINTED = "tinted"

#: The role of a device body no builder knows, drawn as its box (the ``default`` palette's casing).
DEVICE_CASING = "casing"

_Entry = TypeVar("_Entry", FurnitureEntry, ObjectEntry)

#: Visuals already made, by entry (held, so no other entry takes its identity while it is kept).
_VISUALS: Kept[tuple[VisualPart, ...]] = Kept(4096)


def _kept(entry: _Entry, make: Callable[[_Entry], list[VisualPart]]) -> list[VisualPart]:
    """``make(entry)``, made once per entry."""
    return list(_VISUALS.get_or_make((), lambda: tuple(make(entry)), (entry,)))


def _furniture(entry: FurnitureEntry) -> list[VisualPart]:
    build = FURNITURE_BUILDERS.get(entry.semantic_class)
    return build(entry) if build is not None else [VisualPart("body", mesh_for(entry), "body")]


def _object(entry: ObjectEntry) -> list[VisualPart]:
    build = OBJECT_BUILDERS.get(entry.semantic_class)
    return build(entry) if build is not None else [VisualPart("body", mesh_for(entry), TINTED)]


def furniture_visual(entry: FurnitureEntry) -> list[VisualPart]:
    """The visual of a furniture entry (its solid where no builder knows its class), made once."""
    return _kept(entry, _furniture)


def object_visual(entry: ObjectEntry) -> list[VisualPart]:
    """The visual of an object entry (its solid where no builder knows its class), made once."""
    return _kept(entry, _object)


def device_visual(device_type: str, size: BodySize, mount: str) -> list[VisualPart]:
    """The visual of a device body of ``size`` on ``mount``, in the body's frame (centred on its
    footprint, standing on z = 0, +x out of what it is fixed to); its box where no builder knows
    the type. Made once per type, size and mount (a home's switches all share one)."""
    key = (device_type, tuple(round(v, 9) for v in size), mount)
    return list(_DEVICE_VISUALS.get_or_make(key, lambda: tuple(_device(device_type, BodySize(*size), mount))))


#: Device visuals already made, by type, size and mount.
_DEVICE_VISUALS: Kept[tuple[VisualPart, ...]] = Kept(4096)


def _device(device_type: str, size: BodySize, mount: str) -> list[VisualPart]:
    build = DEVICE_BUILDERS.get(device_type)
    if build is not None:
        return build(size, mount)
    return [VisualPart("body", box(-size.depth / 2, -size.width / 2, 0.0, size.depth / 2, size.width / 2,
                                   size.height), DEVICE_CASING)]


def variant_of(*names: str) -> int:
    """A stable choice index from names (a home's id and an item's id): the same on every machine
    and run, unlike Python's ``hash``."""
    digest = hashlib.sha256("/".join(names).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big")


def material_of(catalog: Catalog, semantic_class: str, role: str, variant: int = 0) -> MaterialEntry:
    """The material of a part of ``role`` on an item of ``semantic_class``: the class's palette's
    choices for the role (else the ``default`` palette's), picked by ``variant``."""
    for palette_id in (semantic_class, "default"):
        palette = catalog.palettes.get(palette_id)
        if palette is not None and role in palette.roles:
            choices = palette.roles[role]
            return catalog.materials[choices[variant % len(choices)]]
    return catalog.materials[catalog.palettes["default"].roles["body"][0]]
