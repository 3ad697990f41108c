"""Device type assets: what every device of a catalog type shares, written once per build as
``assets/devices/<type>.usdc`` and referenced by each device prim of every home (the package
docstring, "Device bodies and visuals" and "Device and camera attributes").

A type's file holds two root prims:

- ``<type>`` (the default prim): the type's facts (``homeloop:type``, ``category``,
  ``matter_device_type``, ``events``, ``fields``, each field's ``:accepts`` JSON), what most
  devices of the type have as their own (:class:`Defaults`: the catalog's name and mount, no
  ``mounted_on``, agent-visible, nothing controlled or monitored, each field
  ``homeloop:field:<name>`` at its catalog default), the pose ops at rest
  (:func:`~homeloop.pipeline.usd.author.pose_defaults`) and its ``class`` label;
- ``<type>_look``, where the type has a body on its catalog mount: the look in the visual's
  frame (the body's footprint centred on the origin, standing on z = 0): ``body`` (guide),
  the visual (render: one mesh, a ``GeomSubset`` per role), ``Looks`` (the roles' materials)
  and a variant set per role with several materials (:class:`~homeloop.pipeline.usd.looks.AssetLooks`),
  so a home picks a device's materials by variant selection.

A device prim authors its id and room, and of the rest what differs from its type's
(:func:`device_facts`; a null field over a default is a value block). A device whose type
facts differ from its catalog type's references no type asset and authors them all
(:func:`type_facts`). Composed, each device prim reads as its home-file device either way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pxr import Sdf, Vt

from homeloop.core.catalog import Catalog, DeviceEntry
from homeloop.core.geometry_assets import BodySize, Box, device_body_size
from homeloop.core.home import Device, DeviceField, Pose, device_from_catalog
from homeloop.core.visuals import device_visual
from homeloop.pipeline.usd.author import (
    BINDING_API,
    GUIDE,
    RENDER,
    TYPES,
    MeshData,
    Names,
    VtMesh,
    apply_apis,
    attr,
    box_mesh,
    face_ranges,
    label,
    layer_file,
    mesh_prim,
    pose_defaults,
    prim_spec,
    purpose,
    valid_name,
)
from homeloop.pipeline.usd.looks import AssetLooks, PartMesh, part_meshes, role_choice, role_options

#: The folder of the device type assets below a build's assets folder (and their keys' prefix).
DEVICE_ASSETS = "devices"
#: The suffix of a type's look prim beside its facts prim.
LOOK_SUFFIX = "_look"
#: A device's collision box below its prim (guide purpose).
DEVICE_BODY = "body"


def device_asset_key(device_type: str) -> str:
    """The key of a device type's asset among a build's asset paths (:func:`write_device_assets`)."""
    return f"{DEVICE_ASSETS}/{device_type}"


def device_asset_path(assets_dir: Path, device_type: str) -> Path:
    return assets_dir / DEVICE_ASSETS / f"{device_type}.usdc"


def type_prim_name(device_type: str) -> str:
    return valid_name(device_type, "device")


def look_prim_name(device_type: str) -> str:
    return f"{type_prim_name(device_type)}{LOOK_SUFFIX}"


def device_visual_name(device_type: str) -> str:
    """The name of a device's visual mesh below its prim: its type's (never :data:`DEVICE_BODY`)."""
    name = valid_name(device_type, "device")
    return f"{name}_visual" if name == DEVICE_BODY else name


# --- facts ---------------------------------------------------------------------------------------


def _field_type(spec_type: str) -> Sdf.ValueTypeName:
    if spec_type == "bool":
        return TYPES.Bool
    if spec_type == "int":
        return TYPES.Int
    if spec_type in ("float", "timestamp"):
        return TYPES.Double
    return TYPES.String


def _field_value(spec_type: str, value: Any) -> Any:
    if value is None:
        return None
    if spec_type == "bool":
        return bool(value)
    if spec_type == "int":
        return int(value)
    if spec_type in ("float", "timestamp"):
        return float(value)
    return str(value)


#: Field attributes left out of a field's ``accepts`` JSON: its present value and its prose.
_NOT_ACCEPTS = frozenset({"value", "description", "default"})
#: ``accepts`` JSON by field specification (a catalog has a few dozen).
_ACCEPTS: dict[tuple[Any, ...], str] = {}


@lru_cache(maxsize=8)
def _spec_names(cls: type[DeviceField]) -> tuple[str, ...]:
    return tuple(n for n in cls.model_fields if n not in _NOT_ACCEPTS)


def accepts(f: DeviceField) -> str:
    """The JSON of what a device field accepts: its specification less :data:`_NOT_ACCEPTS`,
    nulls dropped (the same for every field of the same specification, so made once)."""
    values = (getattr(f, n) for n in _spec_names(type(f)))
    key = (type(f), *(tuple(v) if isinstance(v, list) else v for v in values))
    found = _ACCEPTS.get(key)
    if found is None:
        spec = f.model_dump(mode="json", exclude=set(_NOT_ACCEPTS))
        found = _ACCEPTS[key] = json.dumps({k: v for k, v in spec.items() if v is not None}, sort_keys=True)
    return found


@dataclass(frozen=True)
class TypeFacts:
    """What a device says of its type: the same for every device of a catalog type as made."""

    type: str
    category: str
    matter_device_type: str
    events: tuple[str, ...]
    fields: tuple[tuple[str, str, str], ...]  # name, spec type, accepts JSON; by name

    @staticmethod
    def of(d: Device) -> "TypeFacts":
        """The facts of ``d``, its fields by name: a home read from its file lists them so, a home
        as built in the catalog's order, and the same device must compose from its type asset either way."""
        return TypeFacts(d.type, d.category, d.matter_device_type or "", tuple(d.events),
                         tuple(sorted((n, f.type, accepts(f)) for n, f in d.fields.items())))


@dataclass(frozen=True)
class Defaults:
    """A device's own facts as most devices of a type have them: its type asset holds them, and a
    device authors those it has otherwise (the composed values are the device's either way)."""

    name: str
    mount: str
    values: dict[str, Any]  # each field's catalog default (None: no value)
    mounted_on: str = ""
    agent_visible: bool = True


def _catalog_facts(entry: DeviceEntry) -> tuple[TypeFacts, Defaults]:
    made = device_from_catalog(entry, entry.id, None, Pose(x=0.0, y=0.0))
    values = {n: _field_value(f.type, f.value) for n, f in made.fields.items()}
    return TypeFacts.of(made), Defaults(entry.name, entry.placement.mount, values)


#: Type facts and defaults by catalog (its version hash) and type.
_FACTS: dict[tuple[str, str], tuple[TypeFacts, Defaults] | None] = {}


def _facts_of(catalog: Catalog, device_type: str) -> tuple[TypeFacts, Defaults] | None:
    key = (catalog.version_hash, device_type)
    if key not in _FACTS:
        entry = catalog.devices.get(device_type)
        if len(_FACTS) > 4096:
            _FACTS.clear()
        _FACTS[key] = _catalog_facts(entry) if entry is not None else None
    return _FACTS[key]


def catalog_facts(catalog: Catalog, device_type: str) -> TypeFacts | None:
    """The facts a device of the catalog type has as made (None for a type the catalog lacks)."""
    found = _facts_of(catalog, device_type)
    return found[0] if found is not None else None


def catalog_defaults(catalog: Catalog, device_type: str) -> Defaults:
    """The :class:`Defaults` of a catalog type (its asset's)."""
    found = _facts_of(catalog, device_type)
    if found is None:
        raise KeyError(f"no device type {device_type!r} in the catalog")
    return found[1]


_EMPTY = Vt.StringArray()


def type_facts(owner: Sdf.PrimSpec, facts: TypeFacts, defaults: Defaults | None = None) -> None:
    """A device type's facts on ``owner``; with ``defaults`` (a type asset), each field declared
    with its type (no value) and the devices' :class:`Defaults`."""
    for key, value in (("type", facts.type), ("category", facts.category),
                       ("matter_device_type", facts.matter_device_type)):
        attr(owner, f"homeloop:{key}", TYPES.String, value, custom=True)
    attr(owner, "homeloop:events", TYPES.StringArray, Vt.StringArray(list(facts.events)), custom=True)
    attr(owner, "homeloop:fields", TYPES.StringArray, Vt.StringArray([n for n, _, _ in facts.fields]), custom=True)
    for name, spec_type, accepted in facts.fields:
        if defaults is not None:
            attr(owner, f"homeloop:field:{name}", _field_type(spec_type), defaults.values.get(name), custom=True)
        attr(owner, f"homeloop:field:{name}:accepts", TYPES.String, accepted, custom=True)
    if defaults is not None:
        _own_facts(owner, defaults.name, defaults.mount, defaults.mounted_on, defaults.agent_visible, _EMPTY, _EMPTY)
        pose_defaults(owner)


def _own_facts(owner: Sdf.PrimSpec, name: str | None, mount: str | None, mounted_on: str | None,
               agent_visible: bool | None, controls: Vt.StringArray | None, monitors: Vt.StringArray | None) -> None:
    """The facts a device may hold otherwise than its type asset (None: not authored)."""
    s = TYPES.String
    for key, value in (("name", name), ("mount", mount), ("mounted_on", mounted_on)):
        if value is not None:
            attr(owner, f"homeloop:{key}", s, value, custom=True)
    if agent_visible is not None:
        attr(owner, "homeloop:agent_visible", TYPES.Bool, agent_visible, custom=True)
    for key, values in (("controls", controls), ("monitors", monitors)):
        if values is not None:
            attr(owner, f"homeloop:{key}", TYPES.StringArray, values, custom=True)


def device_facts(owner: Sdf.PrimSpec, d: Device, defaults: Defaults | None) -> None:
    """A device's own facts: those that differ from its type asset's ``defaults`` (all where
    there are none: its type facts then come from :func:`type_facts`, its null fields declared here)."""
    s = TYPES.String
    attr(owner, "homeloop:id", s, d.id, custom=True)
    attr(owner, "homeloop:room", s, d.room or "", custom=True)
    if defaults is None:
        _own_facts(owner, d.name, d.mount, d.mounted_on or "", d.agent_visible, Vt.StringArray(list(d.controls)),
                   Vt.StringArray(list(d.monitors)))
    else:
        _own_facts(owner, d.name if d.name != defaults.name else None, d.mount if d.mount != defaults.mount else None,
                   d.mounted_on if (d.mounted_on or "") != defaults.mounted_on else None,
                   d.agent_visible if d.agent_visible != defaults.agent_visible else None,
                   Vt.StringArray(list(d.controls)) if d.controls else None,
                   Vt.StringArray(list(d.monitors)) if d.monitors else None)
    for fname, f in sorted(d.fields.items()):  # by name, as a home read from its file has them
        value = _field_value(f.type, f.value)
        if defaults is None:
            attr(owner, f"homeloop:field:{fname}", _field_type(f.type), value, custom=True)
        elif value != defaults.values.get(fname) or type(value) is not type(defaults.values.get(fname)):
            # A null field over a default blocks it: the attribute holds no value, as the device's field.
            attr(owner, f"homeloop:field:{fname}", _field_type(f.type), Sdf.ValueBlock() if value is None else value,
                 custom=True)


# --- looks ---------------------------------------------------------------------------------------


def look_size(catalog: Catalog, device_type: str) -> tuple[str, BodySize] | None:
    """The mount and body size of a type's look in its asset (its catalog mount's); None where
    the type has no body there."""
    entry = catalog.devices.get(device_type)
    if entry is None:
        return None
    size = device_body_size(device_type, entry.placement.mount)
    return (entry.placement.mount, size) if size is not None else None


@dataclass(frozen=True)
class LookMesh:
    """A type's look in the visual's frame: its body box, its visual, and per role the faces of
    the visual made of it (the parts of one role one after the other)."""

    body: MeshData
    mesh: MeshData
    roles: tuple[tuple[str, Vt.IntArray], ...]


def body_placement(body: Box) -> tuple[BodySize, tuple[float, float, float]]:
    """A device body's box (in the device pose's frame) as the size its visual is built at
    (:func:`homeloop.core.visuals.device_visual`) and the point of the pose's frame where the
    visual's frame lies (centred on its footprint, standing on z = 0): the visual fills the box."""
    x0, y0, z0, x1, y1, z1 = body
    return BodySize(width=y1 - y0, depth=x1 - x0, height=z1 - z0), ((x0 + x1) / 2, (y0 + y1) / 2, z0)


@lru_cache(maxsize=256)
def device_parts(device_type: str, size: BodySize, mount: str) -> tuple[PartMesh, ...]:
    """The visual parts (with faces) of a device body, in the visual's frame (its box where none has)."""
    parts = tuple(p for p in part_meshes(device_visual(device_type, size, mount)) if len(p.data.counts))
    box = box_mesh(-size.depth / 2, -size.width / 2, 0.0, size.depth / 2, size.width / 2, size.height)
    return parts or (PartMesh("body", "body", None, box),)


@lru_cache(maxsize=256)
def look_mesh(device_type: str, size: BodySize, mount: str) -> LookMesh:
    """A type's look (:class:`LookMesh`) at a body size on a mount: the same in every home, so made once."""
    by_role: dict[str, list[MeshData]] = {}
    for p in device_parts(device_type, size, mount):
        by_role.setdefault(p.role, []).append(p.data)
    pieces = {role: MeshData.concat(data) for role, data in by_role.items()}
    faces = face_ranges([len(data.counts) for data in pieces.values()])
    body = box_mesh(-size.depth / 2, -size.width / 2, 0.0, size.depth / 2, size.width / 2, size.height)
    return LookMesh(body, MeshData.concat(pieces.values()), tuple(zip(pieces, faces)))


def _look(layer: Sdf.Layer, catalog: Catalog, device_type: str, mount: str, size: BodySize) -> None:
    """A type's look (module docstring) as the root prim :func:`look_prim_name`."""
    root = prim_spec(layer, look_prim_name(device_type))
    label(root, {"class": [device_type]})
    look = look_mesh(device_type, size, mount)
    body = mesh_prim(root, DEVICE_BODY, VtMesh.of(look.body), colour=None)
    purpose(body, GUIDE)
    mesh = mesh_prim(root, device_visual_name(device_type), VtMesh.of(look.mesh), colour=None)
    purpose(mesh, RENDER)
    attr(mesh, "subsetFamily:materialBind:familyType", TYPES.Token, "partition", uniform=True)
    looks = AssetLooks(catalog, device_type, root)
    names = Names()
    for role, faces in look.roles:
        subset = prim_spec(mesh, names(role, "role"), "GeomSubset")
        attr(subset, "elementType", TYPES.Token, "face", uniform=True)
        attr(subset, "familyName", TYPES.Token, "materialBind", uniform=True)
        attr(subset, "indices", TYPES.IntArray, faces)
        apply_apis(subset, BINDING_API)
        looks.bind(subset, role)
    looks.write({role: role_choice(catalog, device_type, role, 0) for role in looks.parts})


def look_roles(catalog: Catalog, device_type: str) -> tuple[str, ...]:
    """The roles of a type's look that are variant sets (a home selects each)."""
    found = look_size(catalog, device_type)
    if found is None:
        return ()
    roles = [role for role, _ in look_mesh(device_type, found[1], found[0]).roles]
    return tuple(sorted(r for r in roles if len(role_options(catalog, device_type, r)) > 1))


def write_device_assets(catalog: Catalog, assets_dir: Path) -> dict[str, Path]:
    """One asset per catalog device type (module docstring); their paths by :func:`device_asset_key`."""
    paths: dict[str, Path] = {}
    for device_type, entry in catalog.devices.items():
        path = paths[device_asset_key(device_type)] = device_asset_path(assets_dir, device_type)
        with layer_file(path, type_prim_name(device_type)) as layer:
            root = prim_spec(layer, type_prim_name(device_type))
            label(root, {"class": [device_type]})
            type_facts(root, *_catalog_facts(entry))
            found = look_size(catalog, device_type)
            if found is not None:
                _look(layer, catalog, device_type, *found)
    return paths
