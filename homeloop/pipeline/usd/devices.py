"""Device visuals: a device's look, its type asset's (:mod:`.device_types`) or, where its body is not
that look's, a prototype of the home's own (the package docstring, "Device bodies and visuals")."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np
from pxr import Sdf, Vt

from homeloop.core.catalog import Catalog, MaterialEntry
from homeloop.core.geometry_assets import BodySize, Box
from homeloop.core.home import Device
from homeloop.core.visuals import material_of, variant_of
from homeloop.pipeline.usd.author import (
    GUIDE,
    RENDER,
    TYPES,
    MeshData,
    Names,
    VtMesh,
    attr,
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
from homeloop.pipeline.usd.device_types import (
    DEVICE_BODY,
    body_placement,
    device_asset_key,
    device_parts,
    device_visual_name,
    look_mesh,
    look_prim_name,
    look_roles,
    look_size,
)
from homeloop.pipeline.usd.looks import role_choice

#: The class prim (abstract: not drawn, not traversed) holding a home's device visual prototypes.
DEVICE_VISUALS = "DeviceVisuals"
#: The home's group of catalog materials (those of its own device looks and its fixtures), beside the Looks of classes.
HOME_MATERIALS = "Materials"

__all__ = ["DEVICE_BODY", "DEVICE_VISUALS", "HOME_MATERIALS", "DeviceVisuals", "HomeMaterials", "body_placement",
           "device_visual_name"]


class HomeMaterials:
    """The catalog materials a home binds itself (those of its own device looks and its fixtures),
    under ``/Home/Materials``, each written once (:meth:`write`)."""

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
    """The bodies and visuals of one home's devices. A device whose body is its type asset's
    look (its catalog mount and body size, :mod:`.device_types`) references that look: straight
    where the body stands in the look's frame on the device's pose, else through a prototype that
    moves the look's meshes (their points) to the body's box. Any other look (another mount, a
    dome camera's housing reaching up to its ceiling) is a prototype of the home's own. The
    prototypes are ``Xform``\\ s under the class prim :data:`DEVICE_VISUALS` (abstract: neither
    drawn nor traversed), in the device pose's frame; one of the home's own holds:

    - ``body``: the body's box, guide purpose (what the simulator's visibility and the home check
      hold of the device; no collider, as the device never was one);
    - ``<device type>``: the visual (render purpose), one ``Mesh`` of its parts, the parts of one
      material one after the other and a ``GeomSubset`` of theirs bound to it.

    A device's prim references its look (a prototype by a reference inside the home's file: no
    copy of the meshes) and adds its pose, its attributes, its rooms' labels and its materials'
    variant selections. An importer that merges an ``Xform`` with a single mesh child (Blender,
    which leaves guides out and makes no object of materials) makes one object of the visual,
    so a dome camera's id stays its camera's."""

    def __init__(self, catalog: Catalog, home_id: str, root: Sdf.PrimSpec, looks: HomeMaterials,
                 asset_path: Callable[[str], str]) -> None:
        self.catalog, self.home_id, self.looks, self.asset_path = catalog, home_id, looks, asset_path
        self.group = prim_spec(root, DEVICE_VISUALS, "Scope", Sdf.SpecifierClass)
        label(self.group, {"group": ["device_visuals"]})
        self.names = Names()
        self.references: dict[tuple[Any, ...], Sdf.Reference] = {}

    def reference(self, d: Device, body: Box) -> tuple[Sdf.Reference, dict[str, str]]:
        """The reference to the device's look and the variant selections of its materials (the
        CPU renderer's: each part's by the home's and the device's ids); a prototype is made the
        first time it is met."""
        box = Box(*(round(float(v), 5) + 0.0 for v in body))
        size, origin = body_placement(box)
        variant = variant_of(self.home_id, d.id)
        typed = look_size(self.catalog, d.type)
        if typed is None or typed[0] != d.mount or _rounded(typed[1]) != _rounded(size):
            return self._own(d, box, size, variant), {}
        chosen = {role: role_choice(self.catalog, d.type, role, variant) for role in look_roles(self.catalog, d.type)}
        shift = tuple(round(v, 5) + 0.0 for v in origin)
        key = ("asset", d.type, shift)
        ref = self.references.get(key)
        if ref is None:
            asset = Sdf.Reference(self.asset_path(device_asset_key(d.type)), Sdf.Path(f"/{look_prim_name(d.type)}"))
            ref = self.references[key] = self._moved(d.type, asset, typed, shift) if any(shift) else asset
        return ref, chosen

    def _moved(self, device_type: str, asset: Sdf.Reference, typed: tuple[str, BodySize],
               shift: tuple[float, ...]) -> Sdf.Reference:
        """A prototype of the type's look with its meshes moved by ``shift`` (their points)."""
        mount, size = typed
        proto = prim_spec(self.group, self.names(f"{device_type}_{mount}", "device"))
        proto.referenceList.Prepend(asset)
        body, mesh = _moved_look(device_type, size, mount, shift)
        for name, data in ((DEVICE_BODY, body), (device_visual_name(device_type), mesh)):
            over = prim_spec(proto, name, "", Sdf.SpecifierOver)
            attr(over, "points", TYPES.Point3fArray, data.points)
            attr(over, "extent", TYPES.Float3Array, data.extent)
        return Sdf.Reference(primPath=proto.path)

    def _own(self, d: Device, box: Box, size: BodySize, variant: int) -> Sdf.Reference:
        """A look of the home's own (class docstring), by type, mount, box and materials."""
        chosen = tuple(material_of(self.catalog, d.type, p.role, variant).id
                       for p in device_parts(d.type, size, d.mount))
        key = (d.type, d.mount, box, chosen)
        ref = self.references.get(key)
        if ref is None:
            look = _look_mesh(*key)
            proto = prim_spec(self.group, self.names(f"{d.type}_{d.mount}", "device"))
            body_mesh = mesh_prim(proto, DEVICE_BODY, look.body, colour=None)
            purpose(body_mesh, GUIDE)
            mesh = mesh_prim(proto, device_visual_name(d.type), look.mesh, colour=None)
            purpose(mesh, RENDER)
            material_subsets(mesh, [(valid_name(m, "material"), faces, self.looks.path(self.catalog.materials[m]))
                                    for m, faces in look.subsets])
            ref = self.references[key] = Sdf.Reference(primPath=proto.path)
        return ref


def _rounded(size: BodySize) -> tuple[float, ...]:
    return tuple(round(float(v), 5) for v in size)


@lru_cache(maxsize=1024)
def _moved_look(device_type: str, size: BodySize, mount: str, shift: tuple[float, ...]) -> tuple[VtMesh, VtMesh]:
    """A type's look's body and visual moved by ``shift``: the same in every home that has it, so made once."""
    look = look_mesh(device_type, size, mount)
    at = np.asarray(shift, dtype=np.float64)
    return (VtMesh.of(MeshData(look.body.points + at, look.body.counts, look.body.indices)),
            VtMesh.of(MeshData(look.mesh.points + at, look.mesh.counts, look.mesh.indices)))


@dataclass(frozen=True)
class _LookMesh:
    """A device look's meshes as Sdf values: its body box, its visual, and per material (by id)
    the faces of the visual made of it (the parts of one material lie one after the other)."""

    body: VtMesh
    mesh: VtMesh
    subsets: tuple[tuple[str, Vt.IntArray], ...]


@lru_cache(maxsize=1024)
def _look_mesh(device_type: str, mount: str, box: Box, chosen: tuple[str, ...]) -> _LookMesh:
    """The meshes of a device look of a home's own (type, mount, body box in the pose's frame,
    each visual part's material id): the same in every home that has it, so made once."""
    size, origin = body_placement(box)
    shift = np.asarray(origin, dtype=np.float64)
    by_material: dict[str, list[MeshData]] = {}
    for p, m in zip(device_parts(device_type, size, mount), chosen):
        by_material.setdefault(m, []).append(MeshData(p.data.points + shift, p.data.counts, p.data.indices))
    pieces = {m: MeshData.concat(data) for m, data in by_material.items()}
    faces = face_ranges([len(data.counts) for data in pieces.values()])
    return _LookMesh(VtMesh.of(box_mesh(*box)), VtMesh.of(MeshData.concat(pieces.values())),
                     tuple(zip(pieces, faces)))
