"""Catalog assets: one file per furniture or object entry, its visual (render purpose), its solid
(guide purpose, the colliders) and its joints (the package docstring, "Assets")."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from pxr import Gf, Sdf, Vt

from homeloop.core.catalog import Catalog, FurnitureEntry, ObjectEntry
from homeloop.core.geometry_assets import mesh_for, part_panel_bounds, part_transform
from homeloop.core.visuals import furniture_visual, object_visual
from homeloop.core.visuals.library import VisualLibrary
from homeloop.pipeline.usd import external
from homeloop.pipeline.usd.device_types import device_asset_key, device_asset_path, write_device_assets
from homeloop.pipeline.usd.author import (
    GUIDE,
    TYPES,
    MeshData,
    Names,
    apply_apis,
    attr,
    box_mesh,
    collider,
    from_trimesh,
    joint,
    label,
    layer_file,
    mesh_prim,
    pose_defaults,
    pose_ops,
    prim_spec,
    purpose,
    rigid_body,
    valid_name,
)
from homeloop.pipeline.usd.looks import (
    ASSET_LOOKS,
    VISUAL,
    AssetLooks,
    PartMesh,
    part_meshes,
    role_choice,
    role_options,
    visual_group,
)


def asset_file_name(catalog_id: str) -> str:
    return f"{catalog_id}.usdc"


#: A carryable object's solid below its asset's root (guide purpose, its convex collider).
OBJECT_GEOMETRY = "geom"
_JOINT_OP = {"x": "xformOp:rotateX:joint", "y": "xformOp:rotateY:joint", "z": "xformOp:rotateZ:joint"}
JOINT_AXIS = {"x": Gf.Vec3d(1.0, 0.0, 0.0), "y": Gf.Vec3d(0.0, 1.0, 0.0), "z": Gf.Vec3d(0.0, 0.0, 1.0)}


def joint_op_name(kind: str, axis: str) -> str:
    """The xform op of an articulated part that a home sets to show it open."""
    return _JOINT_OP[axis] if kind == "revolute" else "xformOp:translate:joint"


def _asset_root(layer: Sdf.Layer, entry: FurnitureEntry | ObjectEntry) -> tuple[Sdf.PrimSpec, dict[str, list[str]]]:
    """The asset's labelled root ``Xform`` (the layer's default prim, :func:`_asset_prim_name`)."""
    root = prim_spec(layer, _asset_prim_name(entry))
    root.kind = "component"
    labels = {"class": [entry.semantic_class]}
    label(root, labels)
    pose_defaults(root)  # a home authors each item's translate, and its turn where it has one
    attr(root, "homeloop:catalog_id", TYPES.String, entry.id, custom=True)
    return root, labels


def _asset_prim_name(entry: FurnitureEntry | ObjectEntry) -> str:
    return valid_name(entry.id, "item")


def asset_names(entry: FurnitureEntry) -> Names:
    """The names below a furniture asset's root, the body's (:func:`furniture_body_name`) first."""
    names = Names()
    names(entry.id, "body")
    names(VISUAL, "part")
    names(ASSET_LOOKS, "part")
    return names


def _furniture_asset(layer: Sdf.Layer, entry: FurnitureEntry, catalog: Catalog,
                     visuals: VisualLibrary | None = None) -> None:
    """A static piece of furniture: its solid (guide purpose, an exact collider), its visual
    (render purpose; the build's own asset where ``visuals`` maps it, :mod:`.external`), and
    per articulated part a hinge ``Xform`` with the part's panel collider and the visual parts
    that move with it."""
    root, labels = _asset_root(layer, entry)
    attr(root, "homeloop:category", TYPES.String, entry.category, custom=True)
    attr(root, "homeloop:mass", TYPES.Float, round(float(entry.mass), 4), custom=True)
    names = asset_names(entry)
    body = mesh_prim(root, furniture_body_name(entry), from_trimesh(mesh_for(entry)), colour=None)
    purpose(body, GUIDE)
    apply_apis(body, *collider(body, "none"))
    looks = AssetLooks(catalog, entry.semantic_class, root)
    parts = _furniture_visuals(entry, visuals)
    jointed = {p.name for p in entry.parts}
    visual_group(root, [p for p in parts if p.joint not in jointed], looks)
    external.reference_source(root, entry, visuals, VISUAL)
    for part in entry.parts:
        xf = _part(root, names(part.name, "part"), entry, part)
        # Drawn closed in the item frame; below the hinge Xform, in the part's frame when closed.
        visual_group(xf, [p for p in parts if p.joint == part.name], looks,
                     np.linalg.inv(part_transform(part, part.range[0])))
    looks.write({role: role_choice(catalog, entry.semantic_class, role, 0) for role in looks.parts})


#: The role of the panel that shows a jointed part whose visual draws none of it (as the CPU renderer).
PANEL_ROLE = "front"


def _furniture_visuals(entry: FurnitureEntry, visuals: VisualLibrary | None = None) -> list[PartMesh]:
    """A furniture entry's visual parts (the build's own where ``visuals`` maps it), and the panel
    of each jointed part they draw none of."""
    own = external.mesh_parts(entry, visuals)
    parts = part_meshes(own if own is not None else furniture_visual(entry))
    drawn = {p.joint for p in parts}
    return parts + [_panel_visual(entry, part) for part in entry.parts if part.name not in drawn]


def _panel_visual(entry: FurnitureEntry, part: Any) -> PartMesh:
    """A jointed part's panel (:func:`part_panel_bounds`), closed, in the item frame, as a visual part."""
    panel = box_mesh(*part_panel_bounds(entry, part))
    at = part_transform(part, part.range[0])
    return PartMesh(part.name, PANEL_ROLE, part.name,
                   MeshData(panel.points @ at[:3, :3].T + at[:3, 3], panel.counts, panel.indices))


def _part(root: Sdf.PrimSpec, pname: str, entry: FurnitureEntry, part: Any) -> Sdf.PrimSpec:
    """An articulated part: a rigid body at its hinge with its panel (guide purpose, a convex
    collider), jointed to the static root."""
    cls = entry.semantic_class
    xf = prim_spec(root, pname)
    h = part.hinge
    attr(xf, "xformOp:translate", TYPES.Double3, Gf.Vec3d(h.x, h.y, h.z))
    op = joint_op_name(part.kind, part.axis)
    if part.kind == "revolute":
        attr(xf, op, TYPES.Float, 0.0)
    else:
        attr(xf, op, TYPES.Double3, Gf.Vec3d(0.0, 0.0, 0.0))
    attr(xf, "xformOpOrder", TYPES.TokenArray, Vt.TokenArray(["xformOp:translate", op]), uniform=True)
    panel_data = box_mesh(*part_panel_bounds(entry, part))  # the panel the home check's solids hold too
    lo, hi = panel_data.points.min(axis=0), panel_data.points.max(axis=0)
    d = entry.dimensions
    part_labels = {"class": [cls], "part": [part.name]}
    label(xf, part_labels,
          before=rigid_body(xf, max(0.1, entry.mass * float(np.prod(hi - lo)) / (d.width * d.depth * d.height))))
    attr(xf, "homeloop:part", TYPES.String, part.name, custom=True)
    attr(xf, "homeloop:range", TYPES.Float2, Gf.Vec2f(*part.range), custom=True)
    if part.opens:
        attr(xf, "homeloop:opens", TYPES.String, part.opens, custom=True)
    panel = mesh_prim(xf, "panel", panel_data, colour=None)
    purpose(panel, GUIDE)
    apply_apis(panel, *collider(panel, "convexHull"))
    lower, upper = sorted(part.range)
    if part.kind == "revolute":
        lower, upper = math.degrees(lower), math.degrees(upper)
    joint(root, f"{pname}_joint", part.kind, body0=root.path, body1=xf.path, axis=part.axis,
          lower=lower, upper=upper, local_pos0=(h.x, h.y, h.z))
    return xf


def _object_asset(layer: Sdf.Layer, entry: ObjectEntry, catalog: Catalog, visuals: VisualLibrary | None = None) -> None:
    """A carryable object: a rigid body with its solid (guide purpose, a convex hull collider,
    ``geom``), its visual (render purpose; the build's own asset where ``visuals`` maps it) and
    its grasp points."""
    root, labels = _asset_root(layer, entry)
    attr(root, "homeloop:label", TYPES.String, entry.label, custom=True)
    apply_apis(root, *rigid_body(root, entry.mass))
    geom = mesh_prim(root, OBJECT_GEOMETRY, from_trimesh(mesh_for(entry)), colour=None)
    purpose(geom, GUIDE)
    apply_apis(geom, *collider(geom, "convexHull"))
    looks = AssetLooks(catalog, entry.semantic_class, root)
    own = external.mesh_parts(entry, visuals)
    visual_group(root, part_meshes(own if own is not None else object_visual(entry)), looks)
    external.reference_source(root, entry, visuals, VISUAL)
    names = Names()
    for reserved in (OBJECT_GEOMETRY, VISUAL, ASSET_LOOKS):
        names(reserved, "grasp")
    for g in entry.grasp_points:
        gp = prim_spec(root, names(f"grasp_{g.name}", "grasp"))
        pose_ops(gp, (g.offset.x, g.offset.y, g.offset.z))
        attr(gp, "homeloop:approach", TYPES.Float3, Gf.Vec3f(*g.approach), custom=True)
    looks.write({role: role_choice(catalog, entry.semantic_class, role, 0, entry.colour) for role in looks.parts})


def furniture_body_name(entry: FurnitureEntry) -> str:
    """The name of a furniture asset's solid below its root (its catalog id): the static
    collider, guide purpose."""
    return valid_name(entry.id, "body")


def catalog_asset_paths(catalog: Catalog, assets_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """The paths :func:`write_catalog_assets` writes the catalog's assets to, by the same keys."""
    out = Path(assets_dir)
    paths = {cid: out / asset_file_name(cid) for cid in (*catalog.furniture, *catalog.objects)}
    return paths | {device_asset_key(t): device_asset_path(out, t) for t in catalog.devices}


def write_catalog_assets(catalog: Catalog, assets_dir: str | os.PathLike[str],
                         visuals: VisualLibrary | None = None) -> dict[str, Path]:
    """Write one USD asset per catalog furniture and object entry (their paths by catalog id) and
    one per device type (by :func:`~homeloop.pipeline.usd.device_types.device_asset_key`, in
    ``devices/``, :mod:`.device_types`).

    Write them once per build (``outputs/<build>/assets``); every home of the
    build references them. ``visuals``: the build's own assets (:mod:`.external`), written
    before (``assets/external``).
    """
    out = Path(assets_dir)
    paths: dict[str, Path] = {}
    for entry in catalog.furniture.values():
        paths[entry.id] = out / asset_file_name(entry.id)
        with layer_file(paths[entry.id], _asset_prim_name(entry)) as layer:
            _furniture_asset(layer, entry, catalog, visuals)
    for obj in catalog.objects.values():
        paths[obj.id] = out / asset_file_name(obj.id)
        with layer_file(paths[obj.id], _asset_prim_name(obj)) as layer:
            _object_asset(layer, obj, catalog, visuals)
    return paths | write_device_assets(catalog, out)


def variant_roles(catalog: Catalog, entry: FurnitureEntry | ObjectEntry) -> tuple[str, ...]:
    """The roles of an entry's asset that are variant sets (a home selects each): those of its
    visual parts with several options (:func:`role_options`); kept per catalog and entry."""
    key = (catalog.version_hash, type(entry).__name__, entry.id)
    found = _VARIANT_ROLES.get(key)
    if found is None:
        parts = _furniture_visuals(entry) if isinstance(entry, FurnitureEntry) else part_meshes(object_visual(entry))
        roles = {p.role for p in parts}
        found = tuple(sorted(r for r in roles if len(role_options(catalog, entry.semantic_class, r)) > 1))
        if len(_VARIANT_ROLES) > 4096:
            _VARIANT_ROLES.clear()
        _VARIANT_ROLES[key] = found
    return found


_VARIANT_ROLES: dict[tuple[str, str, str], tuple[str, ...]] = {}
