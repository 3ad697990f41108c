"""Device visuals: one shared prototype per device type, size and material choice, referenced by
every device of the home (the package docstring, "Device bodies and visuals")."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from pxr import Sdf, Vt

from homeloop.core.catalog import Catalog, MaterialEntry
from homeloop.core.geometry_assets import BodySize, Box
from homeloop.core.home import Device
from homeloop.core.visuals import device_visual, material_of, variant_of
from homeloop.pipeline.usd.author import (
    GUIDE,
    RENDER,
    MeshData,
    Names,
    VtMesh,
    box_mesh,
    face_ranges,
    label,
    material_subsets,
    mesh_prim,
    preview_material,
    prim_spec,
    purpose,
    valid_name,
)
from homeloop.pipeline.usd.looks import PartMesh, part_meshes


#: The class prim (abstract: not drawn, not traversed) holding a home's device visual prototypes.
DEVICE_VISUALS = "DeviceVisuals"
#: The home's group of catalog materials (those of the device visuals), beside the Looks of classes.
HOME_MATERIALS = "Materials"
#: A device's collision box below its prim (guide purpose).
DEVICE_BODY = "body"


def body_placement(body: Box) -> tuple[BodySize, tuple[float, float, float]]:
    """A device body's box (in the device pose's frame) as the size its visual is built at
    (:func:`homeloop.core.visuals.device_visual`) and the point of the pose's frame where the
    visual's frame lies (centred on its footprint, standing on z = 0): the visual fills the box."""
    x0, y0, z0, x1, y1, z1 = body
    return BodySize(width=y1 - y0, depth=x1 - x0, height=z1 - z0), ((x0 + x1) / 2, (y0 + y1) / 2, z0)


@lru_cache(maxsize=256)
def _device_parts(device_type: str, size: BodySize, mount: str) -> tuple[PartMesh, ...]:
    """The visual parts (with faces) of a device body, in the body's frame (its box where none has)."""
    parts = tuple(p for p in part_meshes(device_visual(device_type, size, mount)) if len(p.data.counts))
    box = box_mesh(-size.depth / 2, -size.width / 2, 0.0, size.depth / 2, size.width / 2, size.height)
    return parts or (PartMesh("body", "body", None, box),)


class HomeMaterials:
    """The catalog materials a home binds itself (those of its device visuals), under
    ``/Home/Materials``, each written once (:meth:`write`)."""

    def __init__(self, root: Sdf.Path) -> None:
        self.root = root.AppendChild(HOME_MATERIALS)
        self.used: dict[str, MaterialEntry] = {}

    def path(self, material: MaterialEntry) -> Sdf.Path:
        name = valid_name(material.id, "material")
        self.used.setdefault(name, material)
        return self.root.AppendChild(name)

    def write(self, group: Sdf.PrimSpec) -> None:
        for name, m in sorted(self.used.items()):
            preview_material(group, name, m.albedo, m.roughness, metallic=m.metallic)


class DeviceVisuals:
    """The bodies and visuals of one home's devices. Each look (device type, mount, body box and
    materials) is one prototype ``Xform`` under the class prim :data:`DEVICE_VISUALS` (abstract:
    neither drawn nor traversed), in the device pose's frame, holding:

    - ``body``: the body's box, guide purpose (what the simulator's visibility and the home check
      hold of the device; no collider, as the device never was one);
    - ``<device type>``: the visual (render purpose), one ``Mesh`` of its parts, the parts of one
      material one after the other and a ``GeomSubset`` of theirs bound to it.

    A device's prim references its prototype (a reference inside the home's file: no copy of the
    meshes) and adds its pose, its attributes and its rooms' labels. An importer that merges an
    ``Xform`` with a single mesh child (Blender, which leaves guides out) makes one object of the
    visual, so a dome camera's id stays its camera's."""

    def __init__(self, catalog: Catalog, home_id: str, root: Sdf.PrimSpec, looks: HomeMaterials) -> None:
        self.catalog, self.home_id, self.looks = catalog, home_id, looks
        self.group = prim_spec(root, DEVICE_VISUALS, "Scope", Sdf.SpecifierClass)
        label(self.group, {"group": ["device_visuals"]})
        self.names = Names()
        self.references: dict[tuple[Any, ...], Sdf.Reference] = {}

    def reference(self, d: Device, body: Box) -> Sdf.Reference:
        """The reference to the prototype of the device's look, made the first time it is met (the
        CPU renderer's materials: each part's by the home's and the device's ids)."""
        box = Box(*(round(float(v), 5) + 0.0 for v in body))
        size, _ = body_placement(box)
        variant = variant_of(self.home_id, d.id)
        chosen = tuple(material_of(self.catalog, d.type, p.role, variant).id
                       for p in _device_parts(d.type, size, d.mount))
        key = (d.type, d.mount, box, chosen)
        ref = self.references.get(key)
        if ref is None:
            look = _look_mesh(*key)
            proto = prim_spec(self.group, self.names(f"{d.type}_{d.mount}", "device"))
            labels = {"class": [d.type]}
            label(proto, labels)
            body_mesh = mesh_prim(proto, DEVICE_BODY, look.body, colour=None)
            purpose(body_mesh, GUIDE)
            label(body_mesh, labels)
            mesh = mesh_prim(proto, device_visual_name(d.type), look.mesh, colour=None)
            purpose(mesh, RENDER)
            label(mesh, labels)
            material_subsets(mesh, [(valid_name(m, "material"), faces, self.looks.path(self.catalog.materials[m]))
                                    for m, faces in look.subsets], labels)
            ref = self.references[key] = Sdf.Reference(primPath=proto.path)
        return ref


@dataclass(frozen=True)
class _LookMesh:
    """A device look's meshes as Sdf values: its body box, its visual, and per material (by id)
    the faces of the visual made of it (the parts of one material lie one after the other)."""

    body: VtMesh
    mesh: VtMesh
    subsets: tuple[tuple[str, Vt.IntArray], ...]


@lru_cache(maxsize=1024)
def _look_mesh(device_type: str, mount: str, box: Box, chosen: tuple[str, ...]) -> _LookMesh:
    """The meshes of a device look (type, mount, body box in the pose's frame, each visual part's
    material id): the same in every home that has it, so made once."""
    size, origin = body_placement(box)
    shift = np.asarray(origin, dtype=np.float64)
    by_material: dict[str, list[MeshData]] = {}
    for p, m in zip(_device_parts(device_type, size, mount), chosen):
        by_material.setdefault(m, []).append(MeshData(p.data.points + shift, p.data.counts, p.data.indices))
    pieces = {m: MeshData.concat(data) for m, data in by_material.items()}
    faces = face_ranges([len(data.counts) for data in pieces.values()])
    return _LookMesh(VtMesh.of(box_mesh(*box)), VtMesh.of(MeshData.concat(pieces.values())),
                     tuple(zip(pieces, faces)))


def device_visual_name(device_type: str) -> str:
    """The name of a device's visual mesh below its prim: its type's (never :data:`DEVICE_BODY`)."""
    name = valid_name(device_type, "device")
    return f"{name}_visual" if name == DEVICE_BODY else name
