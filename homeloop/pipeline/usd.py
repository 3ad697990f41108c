"""USD export: catalog assets and homes for Isaac Sim (OpenUSD via usd-core).

Two kinds of files come out of a build::

    outputs/<build>/assets/<catalog id>.usdc     one per catalog furniture / object entry (written once)
    outputs/<build>/homes/<home id>/home.usdc    one per home, referencing the assets

**Two purposes.** What a renderer draws and what a simulator collides with are
apart: the *visual* (render purpose) is the recognizable shape of
:mod:`homeloop.core.visuals`, the same parts, in the same materials, as the CPU
renderer draws; the *solid* (guide purpose: not rendered, shown by tools on
request) is :func:`homeloop.core.geometry_assets.mesh_for`, the shape the home
check, navigation and the simulator's visibility hold, and carries the
colliders. Isaac Sim's PhysX reads colliders whatever their purpose; Blender
leaves guides out of an import by default.

**Assets** (:func:`write_catalog_assets`). Each catalog furniture or object
entry becomes one file whose default prim is the item, an ``Xform`` in the
catalog's item frame (origin at the centre of the footprint on the floor, +x
the front, z up, metres):

- furniture is **static**: it stands where the home puts it and does not move
  when pushed, so its root carries neither ``PhysicsRigidBodyAPI`` nor
  ``PhysicsMassAPI`` (a mass on a body that cannot move means nothing to a
  simulator; the catalog mass stays readable as ``homeloop:mass``). Its solid,
  a guide ``Mesh`` named after the catalog entry, collides as the exact
  triangle mesh (approximation ``none``, valid for static colliders), cavities
  included: shelving has its shelves, a drum or a drawer is a cavity. Its
  ``visual`` ``Xform`` (render purpose) holds one ``Mesh`` per visual part that
  does not move. Per articulated part (a fridge door, a drawer), a child
  ``Xform`` at its hinge holds a guide ``panel`` mesh (convex collider), its
  own ``visual`` (the visual parts whose ``joint`` is the part, in the part's
  frame; the panel, role ``front``, where the visual draws none of it),
  ``PhysicsRigidBodyAPI`` + ``PhysicsMassAPI`` (the moving parts are the only
  furniture bodies with a mass: their share of the catalog mass by volume)
  and a ``PhysicsRevoluteJoint`` (limits in degrees) or ``PhysicsPrismaticJoint``
  (limits in metres) joining it to the static root about the catalog axis. The
  part's own transform is ``translate`` (the hinge) then ``rotateX/Y/Z:joint``
  or ``translate:joint``: a home sets the joint op to open the part, its
  visual with it.
- carryable objects are dynamic: an ``Xform`` root with
  ``PhysicsRigidBodyAPI`` and ``PhysicsMassAPI`` (catalog mass), its solid as
  the guide ``geom`` mesh with ``PhysicsCollisionAPI`` (convex hull), its
  ``visual``, and its grasp points as child ``Xform``\\ s.
- **materials**: ``<item>/Looks`` holds a ``UsdPreviewSurface`` per catalog
  material (homeloop/catalog/materials.yaml: ``diffuseColor`` its albedo,
  ``roughness``, ``metallic``) a part may be made of, and each visual part is
  bound to its role's material. A role whose palette offers several
  (:func:`role_options`; a ``tinted`` part also every colour word) is a
  *variant set* of the role's name on the root, one variant per material, each
  binding the role's parts; the asset's own selection is the palette's first.

An importer that merges an ``Xform`` with its single mesh child (Blender, which
names the object after the child) keeps the item's name: its drawn children
are ``Xform``\\ s.

**Homes** (:func:`export_home`): stage metadata ``metersPerUnit = 1``,
``upAxis = Z``, ``defaultPrim = /Home``, and::

    /Home
      PhysicsScene          gravity -Z, 9.81 m/s² (metres)
      Looks/<name>          a UsdPreviewSurface material per class of the architecture and fixtures
      Materials/<id>        a UsdPreviewSurface per catalog material the device visuals use
      DeviceVisuals         class (abstract: neither drawn nor traversed): the devices' looks
      Rooms/<room>          Xform; floor (Mesh), ceiling (Mesh, rooms with a roof)
      Walls/<wall>          Mesh: the wall footprint extruded, cut where openings are
      Openings/<opening>    Xform at the opening; lintel / sill pieces of wall; the floor
                            under it (threshold: the floor runs on through every opening
                            at floor level); a door leaf (rigid body) with a revolute joint
                            at the hinge (0-90 deg), a garage door leaf with a prismatic
                            joint (lifts by its height), a window pane
      Fixtures/<fixture>    Mesh: the plan's built-in fixture (sink, counter, shower ...)
                            extruded from its room's floor to its height, a static collider
      Furniture/<item>      the furniture asset by reference (../../assets/<catalog id>.usdc),
                            its materials by variant selection
      Objects/<object>      the object asset by reference (a rigid body), likewise
      Devices/<device>      Xform: homeloop:* attributes; its look by reference: ``body``
                            (guide) and its visual (render), named after its type
      Lights/<light>        SphereLight under each ceiling light, on or off as the home says
      Cameras/<camera>      Camera with the home file's FOV and resolution

Furniture, objects and devices stand at their pose: ``translate`` (x, y, z)
then ``rotateZ`` (yaw, degrees).

**A home's materials.** A home picks each item's material per role as the CPU
renderer does, by the home's and the item's ids
(:func:`homeloop.core.visuals.variant_of`, :func:`homeloop.core.visuals.material_of`;
a ``tinted`` part takes the object's colour word): a variant selection on the
item's reference prim for each role its asset offers a choice of. The meshes
stay in the asset, so a home file holds no copy of them. Variant sets compose
in every USD reader (Isaac Sim, Blender, usdview), unlike material overrides
a reader would have to resolve against the asset's part names.

**Device bodies and visuals** (:func:`homeloop.core.geometry_assets.device_body`, the
sizes of :data:`homeloop.core.geometry_assets.DEVICE_BODIES`, as the simulator's
visibility and renderer draw them). A device's body rests on its mount and does
not cross it: a ceiling device hangs below the room's ceiling, a floor or
furniture device stands on its surface, a wall device (and one on a door or
window frame) stands out of the wall face it is fixed to. A dome camera's
housing reaches from the ceiling to :data:`CAMERA_LENS_CLEARANCE` above its
lens, the camera prim, so the camera sees out of it. Its visual
(:func:`homeloop.core.visuals.device_visual`) is built at the size of the
body's box and fills it (:func:`body_placement`), as the CPU renderer places it.
Each look (type, mount, box, materials) is written once per home as a
prototype under ``DeviceVisuals`` (:class:`_DeviceVisuals`): a device prim
references it, and its visual is one mesh with a ``GeomSubset`` per material,
so the device is one object in Blender and a dome camera's id stays its
camera's. A built-in device (the stove of a range) is its appliance: it has no
body of its own and is an ``Xform`` alone.

**Lights, materials.** Each ceiling light device gets a ``SphereLight``
(:data:`LIGHT_RADIUS`) just under its body, its flux that of the simulator's
ceiling fitting (homeloop.sim.dynamics.light) at the device's brightness when
it is on (its ``on`` field, or a light switch bound to it), intensity 0 when
off. The architecture and the fixtures bind the ``Looks`` material of their
class, coloured as the CPU renderer colours them (homeloop.sim.render.materials;
their meshes carry the colour as ``primvars:displayColor`` too); window glass
is translucent. Every mesh a renderer draws has a material; guides need none.

**Semantic labels** (``UsdSemantics.LabelsAPI``). Every prim the export
authors carries labels. A thing's prim carries its ``class`` (wall, floor,
ceiling, door, entrance_door, garage_door, window, the fixture kind, the
catalog class of furniture and objects, the device type, camera) and, where it
lies in rooms, ``room`` (the rooms' Swiss Dwellings subtypes, lower case) and
``room_id`` (the home file room ids); every prim below it carries its class
(and, in the home's own architecture, its rooms: the prims of assets and
device looks are shared between rooms, so their rooms are their thing's).
Articulated parts add ``part`` (the part name). Grouping prims (``/Home``,
``/Home/Walls`` ...), room prims, the physics scene, materials and lights
carry a ``group`` label only, so a segmentation that merges a prim's labels
with its ancestors' sees no extra classes. A *thing* is the top-most prim of
its class: :func:`semantic_class_counts` counts those (so the wall pieces above
a door or around a window, and the floor through an opening, count as walls
and floors of their own).

**Device and camera attributes.** ``homeloop:id``, ``homeloop:type``,
``homeloop:room`` and the device's other home-file facts; each field as
``homeloop:field:<name>`` holding the present value (bool, int, double or
string; no value where the field is null) and
``homeloop:field:<name>:accepts``, a JSON string of the field specification
(type, enum values, min/max, unit, settable, nullable). Cameras carry
``homeloop:resolution`` (int2), ``homeloop:hfov_deg``,
``homeloop:privacy_mode`` and ``homeloop:agent_visible``.

**Camera optics.** USD cameras look down their local -Z with +Y up. A
camera's transform is ``translate`` then ``rotateXYZ = (90 + pitch, 0,
yaw - 90)`` degrees, which turns -Z to the pose's heading and pitch.
``focalLength = horizontalAperture / (2 tan(hfov / 2))`` and
``verticalAperture = horizontalAperture * height / width``.

Files are written atomically (homeloop.core.io, readable as any output: 0644
under the usual umask) and deterministically: the same home, catalog and
usd-core version give the same bytes, in ``.usdc`` and ``.usda`` alike (no
timestamps or paths are written; references are relative). docs/pipeline.md
("USD homes") says how they load in Isaac Sim and Blender. How the specs,
meshes and their geometry are authored (and kept cheap: benchmarks/usd_export.py)
is homeloop/pipeline/usd_author.py.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import shapely
from pxr import Gf, Sdf, Usd, UsdValidation, Vt
from shapely import Polygon, affinity

from homeloop.core.catalog import Catalog, FurnitureEntry, MaterialEntry, ObjectEntry
from homeloop.core.geometry import rectangle_frames
from homeloop.core.geometry_assets import (CAMERA_LENS_CLEARANCE, BodySize, Box, device_body, mesh_for,
                                           part_panel_bounds, part_transform)
from homeloop.core.home import Camera, Device, DeviceField, Home, Opening, Wall, polygon_from_rings
from homeloop.core.visuals import VisualPart, device_visual, furniture_visual, material_of, object_visual, variant_of
from homeloop.pipeline.usd_author import (
    BINDING_API,
    GUIDE,
    RENDER,
    RGB,
    TYPES,
    MeshData,
    Names,
    VtMesh,
    Triangulation,
    UsdExportError,
    apply_apis,
    attr,
    bind,
    box_mesh,
    collider,
    deg,
    face_ranges,
    from_trimesh,
    joint,
    label,
    layer_file,
    material_subsets,
    mesh_prim,
    polygons,
    pose_ops,
    preview_material,
    prim_spec,
    prism,
    purpose,
    relationship,
    rigid_body,
    valid_name,
    variant_over,
)
from homeloop.sim.dynamics.light import DEFAULT_LUMENS, LUMENS_BY_MOUNT
from homeloop.sim.render import materials

#: The home's root prim (the stage's default prim).
HOME_ROOT = "Home"

#: Leaf thickness (m) of a house door, and the gap (m) left around it in its opening.
DOOR_LEAF_THICKNESS = 0.04
DOOR_LEAF_GAP = 0.005
#: Mass (kg) of a door leaf per m² (a hollow-core interior door is ~10 kg/m²;
#: entrance and garage doors are heavier).
DOOR_LEAF_KG_PER_M2 = {"door": 10.0, "entrance_door": 25.0, "garage_door": 15.0}
#: Window pane thickness (m).
WINDOW_PANE_THICKNESS = 0.02
#: An opening whose sill is this low (m) is at floor level: the floor runs on through it.
FLOOR_LEVEL_SILL = 1e-6
#: Opening angle (deg) of a house door's revolute joint: 0 closed, 90 open.
DOOR_OPEN_DEG = 90.0
#: A carryable object's solid below its asset's root (guide purpose, its convex collider).
OBJECT_GEOMETRY = "geom"
#: Camera clipping range (m): from just outside a dome camera's housing to beyond any room.
CAMERA_CLIPPING = (0.01, 100.0)
#: Horizontal aperture of every exported camera (USD's default, a 35 mm film
#: back's width in tenths of a unit); the focal length follows from the FOV.
CAMERA_HORIZONTAL_APERTURE = 20.955
#: Ceiling light emitters: radius (m), gap (m) under the fitting's body, colour temperature (K).
LIGHT_RADIUS = 0.05
LIGHT_GAP = 0.01
LIGHT_COLOUR_TEMPERATURE = 3000.0
#: Standard gravity (m/s²) of the physics scene, along -Z.
GRAVITY = 9.81
#: Materials: roughness of every surface, opacity of window glass.
MATERIAL_ROUGHNESS = 0.8
GLASS_OPACITY = 0.25

#: Colour (and material) of the architecture's classes: the CPU renderer's.
_ARCHITECTURE_LOOK = {"floor": "floor", "ceiling": "ceiling", "wall": "wall", "door": "door",
                      "entrance_door": "door", "garage_door": "garage_door", "window": "glass"}


@lru_cache(maxsize=1024)
def look_of(cls: str, kind: str) -> tuple[str, RGB]:
    """The material name and colour of a thing of semantic class ``cls`` and ``kind``
    (architecture or fixture), as the CPU renderer colours it. Furniture, objects and devices
    are made of the catalog's materials (:class:`_AssetLooks`, :class:`_HomeMaterials`)."""
    if kind == "architecture":
        return cls, materials.ARCHITECTURE[_ARCHITECTURE_LOOK.get(cls, "wall")]
    return cls, materials.fixture_colour(cls)


@dataclass(frozen=True)
class _Frame:
    """An opening's rectangle: centre, unit direction along the wall, width along it, depth through it."""

    centre: tuple[float, float]
    along: tuple[float, float]
    width: float
    depth: float

    @property
    def yaw(self) -> float:
        return math.atan2(self.along[1], self.along[0])

    def end(self, sign: float = -1.0) -> tuple[float, float]:
        return (self.centre[0] + sign * self.along[0] * self.width / 2,
                self.centre[1] + sign * self.along[1] * self.width / 2)


def _opening_frames(polys: list[Polygon]) -> list[_Frame]:
    """Each opening's frame (:func:`homeloop.core.geometry.rectangle_frames`: all in one call)."""
    centres, alongs, _, widths, depths = rectangle_frames(polys)
    return [_opening_frame(*frame) for frame in zip(polys, centres, alongs, widths.tolist(), depths.tolist())]


def _opening_frame(poly: Polygon, centre: np.ndarray, u: np.ndarray, width: float, depth: float) -> _Frame:
    if width <= 0:  # no rectangle to speak of
        c = poly.centroid
        return _Frame((c.x, c.y), (1.0, 0.0), max(poly.length / 2, 0.01), 0.01)
    # A fixed direction for the same rectangle whatever its vertex order: +x, or +y when vertical.
    if u[0] < -1e-9 or (abs(u[0]) <= 1e-9 and u[1] < 0):
        u = -u
    return _Frame((float(centre[0]), float(centre[1])), (float(u[0]), float(u[1])), width, depth)


# --- visual parts and their materials --------------------------------------------------------------------

#: The group holding a thing's visual meshes (render purpose), and an asset's group of materials.
VISUAL = "visual"
ASSET_LOOKS = "Looks"
#: The role whose parts take an object's own colour word (a red pill box), and the prefix of the
#: variants (and materials) those colours make; their roughness.
TINTED = "tinted"
COLOUR_VARIANT = "colour_"
COLOUR_ROUGHNESS = 0.5


@dataclass(frozen=True)
class MaterialOption:
    """One material a part of a role may be made of: its variant (and material prim) name and
    the surface it gives (linear albedo, roughness, metalness)."""

    name: str
    albedo: RGB
    roughness: float
    metallic: float


def _option(material: MaterialEntry) -> MaterialOption:
    r, g, b = (float(c) for c in material.albedo)
    return MaterialOption(valid_name(material.id, "material"), (r, g, b), float(material.roughness),
                          float(material.metallic))


def role_options(catalog: Catalog, semantic_class: str, role: str) -> list[MaterialOption]:
    """The materials a part of ``role`` on a thing of ``semantic_class`` may take: the palette's
    choices :func:`homeloop.core.visuals.material_of` picks from (the class's palette, else the
    ``default`` one, else its ``body``), and for :data:`TINTED` parts every colour word too."""
    choices: list[str] | None = None
    for palette_id in (semantic_class, "default"):
        palette = catalog.palettes.get(palette_id)
        if palette is not None and role in palette.roles:
            choices = list(dict.fromkeys(palette.roles[role]))
            break
    options = [_option(catalog.materials[m]) for m in choices or catalog.palettes["default"].roles["body"][:1]]
    if role == TINTED:
        options += [MaterialOption(f"{COLOUR_VARIANT}{valid_name(word, 'colour')}", colour, COLOUR_ROUGHNESS, 0.0)
                    for word, colour in sorted(materials.COLOUR_WORDS.items())]
    return options


def role_choice(catalog: Catalog, semantic_class: str, role: str, variant: int, colour: str | None = None) -> str:
    """The name of the option (:func:`role_options`) a thing takes for a role: its colour word's for
    a :data:`TINTED` part of a thing with one, else the palette's pick by ``variant``
    (:func:`homeloop.core.visuals.material_of`, as the CPU renderer picks)."""
    word = (colour or "").strip().lower()
    if role == TINTED and word in materials.COLOUR_WORDS:
        return f"{COLOUR_VARIANT}{valid_name(word, 'colour')}"
    return valid_name(material_of(catalog, semantic_class, role, variant).id, "material")


@dataclass(frozen=True)
class _Visual:
    """A visual part ready to author: its name, role, catalog joint and mesh (in the item frame)."""

    name: str
    role: str
    joint: str | None
    data: MeshData


def _visuals(parts: Iterable[VisualPart]) -> list[_Visual]:
    return [_Visual(p.name, p.role, p.joint, from_trimesh(p.mesh)) for p in parts]


class _AssetLooks:
    """The materials of one asset (under ``<item>/Looks``) and their bindings: a part of a role with
    one option is bound to it; each role with several is a variant set of the role's name on the
    asset's root, whose variants (one per option) bind the role's parts to the option's material
    and hold that material, so that a home picks the item's materials by variant selection
    without a copy of its meshes, and its stage composes the chosen materials only."""

    def __init__(self, catalog: Catalog, semantic_class: str, root: Sdf.PrimSpec) -> None:
        self.catalog, self.cls, self.root = catalog, semantic_class, root
        self.options: dict[str, list[MaterialOption]] = {}
        self.parts: dict[str, list[Sdf.PrimSpec]] = {}

    def path(self, option: MaterialOption) -> Sdf.Path:
        return self.root.path.AppendChild(ASSET_LOOKS).AppendChild(option.name)

    def bind(self, part: Sdf.PrimSpec, role: str) -> None:
        """Bind a visual part (labelled with :data:`BINDING_API` after its labels) to its role's material."""
        options = self.options.setdefault(role, role_options(self.catalog, self.cls, role))
        if len(options) == 1:
            bind(part, self.path(options[0]))
        else:
            self.parts.setdefault(role, []).append(part)

    def write(self, defaults: dict[str, str]) -> None:
        """The materials of the roles of one option, the variant sets with theirs, and the
        default selections (``defaults``: role -> option name)."""
        looks = prim_spec(self.root, ASSET_LOOKS, "Scope")
        label(looks, {"group": ["looks"]})
        single = {o[0].name: o[0] for role, o in self.options.items() if role not in self.parts}
        for name in sorted(single):
            _option_material(looks, single[name])
        for role in sorted(self.parts):
            for option in self.options[role]:
                _option_material(variant_over(self.root, role, option.name, [ASSET_LOOKS]), option)
                for part in self.parts[role]:
                    where = part.path.MakeRelativePath(self.root.path).pathString.split("/")
                    bind(variant_over(self.root, role, option.name, where), self.path(option))
            self.root.variantSelections[role] = defaults.get(role, self.options[role][0].name)
        self.root.variantSetNameList.prependedItems = sorted(self.parts)


def _option_material(parent: Sdf.PrimSpec, option: MaterialOption) -> None:
    """A material option's ``UsdPreviewSurface`` (its albedo, roughness and metalness)."""
    preview_material(parent, option.name, option.albedo, option.roughness, metallic=option.metallic)


def _visual_group(parent: Sdf.PrimSpec, parts: list[_Visual], labels: dict[str, list[str]], looks: _AssetLooks,
                  to_parent: np.ndarray | None = None) -> None:
    """The ``visual`` group (render purpose) of ``parts``, one mesh each, moved by ``to_parent``
    (4 x 4, from the item frame to the frame of ``parent``), each bound to its role's material."""
    if not parts:
        return
    group = prim_spec(parent, VISUAL)
    purpose(group, RENDER)
    label(group, labels)
    names = Names()
    for p in parts:
        data = p.data
        if to_parent is not None:
            data = MeshData(data.points @ to_parent[:3, :3].T + to_parent[:3, 3], data.counts, data.indices)
        mesh = mesh_prim(group, names(p.name, "part"), data, colour=None)
        label(mesh, labels, after=(BINDING_API,))
        looks.bind(mesh, p.role)


# --- assets ----------------------------------------------------------------------------------------------


def asset_file_name(catalog_id: str) -> str:
    return f"{catalog_id}.usdc"


_JOINT_OP = {"x": "xformOp:rotateX:joint", "y": "xformOp:rotateY:joint", "z": "xformOp:rotateZ:joint"}
_AXIS = {"x": Gf.Vec3d(1.0, 0.0, 0.0), "y": Gf.Vec3d(0.0, 1.0, 0.0), "z": Gf.Vec3d(0.0, 0.0, 1.0)}


def joint_op_name(kind: str, axis: str) -> str:
    """The xform op of an articulated part that a home sets to show it open."""
    return _JOINT_OP[axis] if kind == "revolute" else "xformOp:translate:joint"


def _asset_root(layer: Sdf.Layer, entry: FurnitureEntry | ObjectEntry) -> tuple[Sdf.PrimSpec, dict[str, list[str]]]:
    """The asset's labelled root ``Xform`` (the layer's default prim, :func:`_asset_prim_name`)."""
    root = prim_spec(layer, _asset_prim_name(entry))
    root.kind = "component"
    labels = {"class": [entry.semantic_class]}
    label(root, labels)
    attr(root, "homeloop:catalog_id", TYPES.String, entry.id, custom=True)
    return root, labels


def _asset_prim_name(entry: FurnitureEntry | ObjectEntry) -> str:
    return valid_name(entry.id, "item")


def _asset_names(entry: FurnitureEntry) -> Names:
    """The names below a furniture asset's root, the body's (:func:`furniture_body_name`) first."""
    names = Names()
    names(entry.id, "body")
    names(VISUAL, "part")
    names(ASSET_LOOKS, "part")
    return names


def _furniture_asset(layer: Sdf.Layer, entry: FurnitureEntry, catalog: Catalog) -> None:
    """A static piece of furniture: its solid (guide purpose, an exact collider), its visual
    (render purpose), and per articulated part a hinge ``Xform`` with the part's panel collider
    and the visual parts that move with it."""
    root, labels = _asset_root(layer, entry)
    attr(root, "homeloop:category", TYPES.String, entry.category, custom=True)
    attr(root, "homeloop:mass", TYPES.Float, round(float(entry.mass), 4), custom=True)
    names = _asset_names(entry)
    body = mesh_prim(root, furniture_body_name(entry), from_trimesh(mesh_for(entry)), colour=None)
    purpose(body, GUIDE)
    label(body, labels, before=collider(body, "none"))
    looks = _AssetLooks(catalog, entry.semantic_class, root)
    parts = _furniture_visuals(entry)
    jointed = {p.name for p in entry.parts}
    _visual_group(root, [p for p in parts if p.joint not in jointed], labels, looks)
    for part in entry.parts:
        xf = _part(root, names(part.name, "part"), entry, part)
        # Drawn closed in the item frame; below the hinge Xform, in the part's frame when closed.
        _visual_group(xf, [p for p in parts if p.joint == part.name], {"class": [entry.semantic_class],
                      "part": [part.name]}, looks, np.linalg.inv(part_transform(part, part.range[0])))
    looks.write({role: role_choice(catalog, entry.semantic_class, role, 0) for role in looks.parts})


#: The role of the panel that shows a jointed part whose visual draws none of it (as the CPU renderer).
PANEL_ROLE = "front"


def _furniture_visuals(entry: FurnitureEntry) -> list[_Visual]:
    """A furniture entry's visual parts, and the panel of each jointed part they draw none of."""
    parts = _visuals(furniture_visual(entry))
    drawn = {p.joint for p in parts}
    return parts + [_panel_visual(entry, part) for part in entry.parts if part.name not in drawn]


def _panel_visual(entry: FurnitureEntry, part: Any) -> _Visual:
    """A jointed part's panel (:func:`part_panel_bounds`), closed, in the item frame, as a visual part."""
    panel = box_mesh(*part_panel_bounds(entry, part))
    at = part_transform(part, part.range[0])
    return _Visual(part.name, PANEL_ROLE, part.name,
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
    label(panel, part_labels, before=collider(panel, "convexHull"))
    lower, upper = sorted(part.range)
    if part.kind == "revolute":
        lower, upper = math.degrees(lower), math.degrees(upper)
    joint(root, f"{pname}_joint", part.kind, body0=root.path, body1=xf.path, axis=part.axis,
          lower=lower, upper=upper, local_pos0=(h.x, h.y, h.z), values=part_labels)
    return xf


def _object_asset(layer: Sdf.Layer, entry: ObjectEntry, catalog: Catalog) -> None:
    """A carryable object: a rigid body with its solid (guide purpose, a convex hull collider,
    ``geom``), its visual (render purpose) and its grasp points."""
    root, labels = _asset_root(layer, entry)
    attr(root, "homeloop:label", TYPES.String, entry.label, custom=True)
    apply_apis(root, *rigid_body(root, entry.mass))
    geom = mesh_prim(root, OBJECT_GEOMETRY, from_trimesh(mesh_for(entry)), colour=None)
    purpose(geom, GUIDE)
    label(geom, labels, before=collider(geom, "convexHull"))
    looks = _AssetLooks(catalog, entry.semantic_class, root)
    _visual_group(root, _visuals(object_visual(entry)), labels, looks)
    names = Names()
    for reserved in (OBJECT_GEOMETRY, VISUAL, ASSET_LOOKS):
        names(reserved, "grasp")
    for g in entry.grasp_points:
        gp = prim_spec(root, names(f"grasp_{g.name}", "grasp"))
        pose_ops(gp, (g.offset.x, g.offset.y, g.offset.z))
        attr(gp, "homeloop:approach", TYPES.Float3, Gf.Vec3f(*g.approach), custom=True)
        label(gp, labels)
    looks.write({role: role_choice(catalog, entry.semantic_class, role, 0, entry.colour) for role in looks.parts})


def furniture_body_name(entry: FurnitureEntry) -> str:
    """The name of a furniture asset's solid below its root (its catalog id): the static
    collider, guide purpose."""
    return valid_name(entry.id, "body")


def write_catalog_assets(catalog: Catalog, assets_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write one USD asset per catalog furniture and object entry; their paths by catalog id.

    Write them once per build (``outputs/<build>/assets``); every home of the
    build references them.
    """
    out = Path(assets_dir)
    paths: dict[str, Path] = {}
    for entry in catalog.furniture.values():
        paths[entry.id] = out / asset_file_name(entry.id)
        with layer_file(paths[entry.id], _asset_prim_name(entry)) as layer:
            _furniture_asset(layer, entry, catalog)
    for obj in catalog.objects.values():
        paths[obj.id] = out / asset_file_name(obj.id)
        with layer_file(paths[obj.id], _asset_prim_name(obj)) as layer:
            _object_asset(layer, obj, catalog)
    return paths


def variant_roles(catalog: Catalog, entry: FurnitureEntry | ObjectEntry) -> tuple[str, ...]:
    """The roles of an entry's asset that are variant sets (a home selects each): those of its
    visual parts with several options (:func:`role_options`); kept per catalog and entry."""
    key = (catalog.version_hash, type(entry).__name__, entry.id)
    found = _VARIANT_ROLES.get(key)
    if found is None:
        parts = _furniture_visuals(entry) if isinstance(entry, FurnitureEntry) else _visuals(object_visual(entry))
        roles = {p.role for p in parts}
        found = tuple(sorted(r for r in roles if len(role_options(catalog, entry.semantic_class, r)) > 1))
        if len(_VARIANT_ROLES) > 4096:
            _VARIANT_ROLES.clear()
        _VARIANT_ROLES[key] = found
    return found


_VARIANT_ROLES: dict[tuple[str, str, str], tuple[str, ...]] = {}


# --- device visuals --------------------------------------------------------------------------------------

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
def _device_parts(device_type: str, size: BodySize, mount: str) -> tuple[_Visual, ...]:
    """The visual parts (with faces) of a device body, in the body's frame (its box where none has)."""
    parts = tuple(p for p in _visuals(device_visual(device_type, size, mount)) if len(p.data.counts))
    box = box_mesh(-size.depth / 2, -size.width / 2, 0.0, size.depth / 2, size.width / 2, size.height)
    return parts or (_Visual("body", "body", None, box),)


class _HomeMaterials:
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


class _DeviceVisuals:
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

    def __init__(self, catalog: Catalog, home_id: str, root: Sdf.PrimSpec, looks: _HomeMaterials) -> None:
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


# --- homes -----------------------------------------------------------------------------------------------


@dataclass
class ExportResult:
    """What :func:`export_home` wrote.

    ``prim_counts``: things by semantic class (the top-most prim of each
    class, see :func:`semantic_class_counts`). ``errors`` / ``warnings``:
    validation messages (:func:`validate_stage_report`), ``None`` when the
    export was not validated. ``seconds``: time to build and write the file;
    ``validation_seconds``: time to validate it.
    """

    path: Path
    bytes: int
    prim_counts: dict[str, int]
    errors: list[str] | None
    warnings: list[str] | None
    seconds: float
    validation_seconds: float = 0.0

    @property
    def valid(self) -> bool:
        return self.errors is not None and not self.errors


_GARAGE_LEAF_ORDER = Vt.TokenArray(["xformOp:translate:joint"])
_DOOR_LEAF_ORDER = Vt.TokenArray(["xformOp:rotateZ:joint"])


def _door_leaf(parent: Sdf.PrimSpec, o: Opening, w: float, labels: dict[str, list[str]]) -> None:
    """A door's leaf, ``w`` wide, as a rigid body on a joint: hinged at the prim's origin,
    or sliding up for a garage door; open by its ``is_open``."""
    leaf = prim_spec(parent, "leaf")
    half, gap, head = DOOR_LEAF_THICKNESS / 2, DOOR_LEAF_GAP, o.sill + o.height
    garage = o.kind == "garage_door"
    if garage:
        attr(leaf, "xformOp:translate:joint", TYPES.Double3,
             Gf.Vec3d(0.0, 0.0, float(o.height) if o.is_open else 0.0))
        attr(leaf, "xformOpOrder", TYPES.TokenArray, _GARAGE_LEAF_ORDER, uniform=True)
    else:
        attr(leaf, "xformOp:rotateZ:joint", TYPES.Float, DOOR_OPEN_DEG if o.is_open else 0.0)
        attr(leaf, "xformOpOrder", TYPES.TokenArray, _DOOR_LEAF_ORDER, uniform=True)
    label(leaf, labels, before=rigid_body(leaf, DOOR_LEAF_KG_PER_M2.get(o.kind, 10.0) * w * o.height))
    _, colour = look_of(o.kind, "architecture")
    panel = mesh_prim(leaf, "panel", box_mesh(gap, -half, o.sill + gap, w - gap, half, head - gap), colour=colour)
    label(panel, labels, before=collider(panel, "convexHull"))
    if garage:
        joint(parent, "joint", "prismatic", body0=parent.path, body1=leaf.path, axis="z",
              lower=0.0, upper=o.height, local_pos0=(0.0, 0.0, 0.0), values=labels)
    else:
        joint(parent, "joint", "revolute", body0=parent.path, body1=leaf.path, axis="z",
              lower=0.0, upper=DOOR_OPEN_DEG, local_pos0=(0.0, 0.0, 0.0), values=labels)


def light_is_on(home: Home, d: Device) -> bool:
    """Whether a light is lit in the home file: its ``on`` field, or a light switch bound to it
    that is on (as the simulator's light model reads them, homeloop.sim.dynamics.light)."""
    if d.fields.get("on") is not None and d.value("on"):
        return True
    return any(s.type == "light_switch" and d.id in s.controls and "on" in s.fields and s.value("on")
               for s in home.devices)


def light_intensity(d: Device, lit: bool) -> float:
    """The SphereLight intensity (nits) of a light device's emitter: its fitting's flux at the
    device's brightness spread over a sphere of :data:`LIGHT_RADIUS` (Lambertian: L = Φ / (4π² r²))."""
    if not lit:
        return 0.0
    brightness = float(d.value("brightness")) / 100.0 if "brightness" in d.fields else 1.0
    flux = LUMENS_BY_MOUNT.get(d.mount, DEFAULT_LUMENS) * brightness
    return round(flux / (4.0 * math.pi ** 2 * LIGHT_RADIUS ** 2), 1)


class _HomeWriter:
    """Authors one home into an Sdf layer."""

    def __init__(self, home: Home, catalog: Catalog, out_path: Path, assets: dict[str, Path],
                 layer: Sdf.Layer) -> None:
        self.home, self.catalog, self.out_path, self.assets, self.layer = home, catalog, out_path, assets, layer
        self.counts: Counter[str] = Counter()
        self.rooms = {r.id: r for r in home.rooms}
        self.looks: dict[str, RGB] = {}
        self.look_paths: dict[str, Sdf.Path] = {}
        self.wall_polys = _footprints(home.walls)
        self.opening_polys = _footprints(home.openings)
        self.bodies = [device_body(home, d) for d in home.devices]
        self._room_labels_of: dict[tuple[str | None, ...], dict[str, list[str]]] = {}
        self._references: dict[str, Sdf.Reference] = {}
        self._folders: dict[Path, str] = {}
        self.materials = _HomeMaterials(Sdf.Path(f"/{HOME_ROOT}"))

    # -- labels and looks

    def _room_labels(self, room_ids: Iterable[str | None]) -> dict[str, list[str]]:
        key = tuple(room_ids)
        found = self._room_labels_of.get(key)
        if found is None:
            rooms = [self.rooms[r] for r in dict.fromkeys(key) if r is not None and r in self.rooms]
            found = {"room": list(dict.fromkeys(r.type.lower() for r in rooms)), "room_id": [r.id for r in rooms]}
            self._room_labels_of[key] = found
        return found

    def _thing(self, owner: Sdf.PrimSpec, cls: str, room_ids: Iterable[str | None] = (), counted: bool = True,
               look: tuple[str, RGB] | None = None, apis: tuple[str, ...] = ()) -> dict[str, list[str]]:
        """Label a thing's top prim (applying ``apis`` first); with ``look``, bind it the
        material of that name and colour."""
        labels = {"class": [cls], **self._room_labels(room_ids)}
        if counted:
            self.counts[cls] += 1
        if look is None:
            label(owner, labels, before=apis)
            return labels
        label(owner, labels, before=apis, after=("MaterialBindingAPI",))
        relationship(owner, "material:binding", self._look_path(*look))
        return labels

    def _look_path(self, name: str, colour: RGB) -> Sdf.Path:
        """The path of the ``Looks`` material of this name (made once per home, :meth:`write`)."""
        path = self.look_paths.get(name)
        if path is None:
            prim_name = valid_name(name, "look")
            self.looks.setdefault(prim_name, colour)
            path = self.look_paths[name] = Sdf.Path(f"/{HOME_ROOT}/Looks/{prim_name}")
        return path

    def _group(self, parent: Sdf.PrimSpec | Sdf.Layer, name: str) -> Sdf.PrimSpec:
        group = prim_spec(parent, name)
        group.kind = "group" if not isinstance(parent, Sdf.Layer) else "assembly"
        label(group, {"group": [name.lower()]})
        return group

    def _floor_z(self, room_ids: Iterable[str]) -> float:
        zs = [self.rooms[r].floor_height for r in room_ids if r in self.rooms]
        return min(zs) if zs else 0.0

    # -- the home

    def write(self) -> None:
        home = self.home
        with Sdf.ChangeBlock():
            root = self._group(self.layer, HOME_ROOT)
            attr(root, "homeloop:home_id", TYPES.String, home.home_id, custom=True)
            attr(root, "homeloop:schema_version", TYPES.String, home.schema_version, custom=True)
            attr(root, "homeloop:source", TYPES.String,
                 json.dumps(home.source.model_dump(mode="json"), sort_keys=True), custom=True)
            _physics_scene(root)
            looks = self._group(root, "Looks")
            catalog_materials = self._group(root, HOME_MATERIALS)
            device_visuals = _DeviceVisuals(self.catalog, home.home_id, root, self.materials)
            self._rooms(self._group(root, "Rooms"))
            self._walls(self._group(root, "Walls"))
            self._openings(self._group(root, "Openings"))
            self._fixtures(self._group(root, "Fixtures"))
            self._furniture(self._group(root, "Furniture"))
            self._objects(self._group(root, "Objects"))
            self._devices(self._group(root, "Devices"), device_visuals)
            self._lights(self._group(root, "Lights"))
            self._cameras(self._group(root, "Cameras"))
            for name, colour in sorted(self.looks.items()):
                _material(looks, name, colour)
            self.materials.write(catalog_materials)

    def _rooms(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for room, footprint in zip(self.home.rooms, _footprints(self.home.rooms)):
            owner = prim_spec(group, names(f"room_{room.id}", "room"))
            label(owner, {"group": ["room"], **self._room_labels([room.id])})
            attr(owner, "homeloop:id", TYPES.String, room.id, custom=True)
            attr(owner, "homeloop:name", TYPES.String, room.name, custom=True)
            attr(owner, "homeloop:type", TYPES.String, room.type, custom=True)
            attr(owner, "homeloop:space_class", TYPES.String, room.space_class, custom=True)
            polys = polygons(footprint)
            if not polys:
                continue
            tris = [Triangulation.of(p) for p in polys]  # one triangulation for the floor and the ceiling
            self._surface(owner, "floor", tris, room.floor_height, True, [room.id])
            if room.space_class in ("indoor", "ancillary"):
                self._surface(owner, "ceiling", tris, room.floor_height + room.ceiling_height, False, [room.id])

    def _surface(self, parent: Sdf.PrimSpec, cls: str, tris: list[Triangulation], z: float, up: bool,
                 room_ids: list[str]) -> None:
        """A floor (facing up) or ceiling (facing down) at height ``z``: a static triangle collider."""
        look = look_of(cls, "architecture")
        surface = mesh_prim(parent, cls, MeshData.concat(t.cap(z, up) for t in tris), colour=look[1])
        self._thing(surface, cls, room_ids, look=look, apis=collider(surface, "none"))

    def _wall_solids(self) -> list[Any]:
        """Each wall's footprint less the openings through it."""
        solids = list(self.wall_polys)
        cuts = _intersecting(self.wall_polys, self.opening_polys)
        for i, near in cuts.items():
            solids[i] = shapely.difference(solids[i], shapely.union_all([self.opening_polys[j] for j in near]))
        return solids

    def _walls(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        look = look_of("wall", "architecture")
        base = self._floor_z(self.rooms)
        for wall, solid in zip(self.home.walls, self._wall_solids()):
            data = MeshData.concat(prism(p, base, base + wall.height) for p in polygons(solid))
            if not len(data.counts):
                continue
            owner = mesh_prim(group, names(wall.id, "wall"), data, colour=look[1])
            self._thing(owner, "wall", look=look, apis=collider(owner, "none"))
            attr(owner, "homeloop:id", TYPES.String, wall.id, custom=True)
            attr(owner, "homeloop:kind", TYPES.String, wall.kind, custom=True)

    def _openings(self, group: Sdf.PrimSpec) -> None:
        walls = self.home.walls
        near = _intersecting(self.opening_polys, self.wall_polys)
        frames = _opening_frames(self.opening_polys)
        names = Names()
        for i, (opening, poly) in enumerate(zip(self.home.openings, self.opening_polys)):
            self._opening(group, names(opening.id, "opening"), opening, poly, frames[i],
                          [walls[j] for j in near.get(i, ())])

    def _opening(self, group: Sdf.PrimSpec, name: str, o: Opening, poly: Polygon, frame: _Frame,
                 walls: list[Wall]) -> None:
        """A door or window: its prim at the hinge (doors) or centre (windows), the wall
        around it, the floor through it, and a pane or a hinged (garage doors: sliding) leaf."""
        cls = "window" if o.kind == "window" else o.kind
        owner = prim_spec(group, name)
        labels = self._thing(owner, cls, o.connects, look=look_of(cls, "architecture"))
        is_door = o.kind != "window"
        # Doors stand at the hinge (one end of the opening, mid-thickness); windows at the centre.
        origin = frame.end(-1.0) if is_door else frame.centre
        pose_ops(owner, (origin[0], origin[1], self._floor_z(o.connects)), frame.yaw)
        _opening_attrs(owner, o)
        # The opening's own footprint, in the prim's frame.
        local = polygons(affinity.rotate(affinity.translate(poly, -origin[0], -origin[1]),
                                         -frame.yaw, origin=(0, 0), use_radians=True))
        self._opening_surround(owner, o, local, walls)
        if o.sill <= FLOOR_LEVEL_SILL and local:
            self._threshold(owner, o, local)
        if is_door:
            _door_leaf(owner, o, frame.width, labels)
            return
        half, w, gap = WINDOW_PANE_THICKNESS / 2, frame.width, DOOR_LEAF_GAP
        pane = mesh_prim(owner, "pane", box_mesh(-w / 2 + gap, -half, o.sill, w / 2 - gap, half, o.sill + o.height),
                         colour=look_of("window", "architecture")[1])
        label(pane, labels, before=collider(pane, "convexHull"))

    def _threshold(self, parent: Sdf.PrimSpec, o: Opening, local: list[Polygon]) -> None:
        """The floor through an opening at floor level (its footprint at the prim's base, the
        lower room's floor), part of the floor collider: no slot the wall's thickness deep."""
        look = look_of("floor", "architecture")
        floor = mesh_prim(parent, "threshold", MeshData.concat(Triangulation.of(p).cap(0.0, up=True) for p in local),
                          colour=look[1])
        self._thing(floor, "floor", o.connects, look=look, apis=collider(floor, "none"))

    def _opening_surround(self, parent: Sdf.PrimSpec, o: Opening, local: list[Polygon], walls: list[Wall]) -> None:
        """The wall around an opening (footprint ``local``, in its prim's frame): above the head
        up to the walls' top, and below the sill of windows."""
        wall_top = max((w.height for w in walls if w.kind == "WALL"), default=0.0) or max(
            (self.rooms[r].ceiling_height for r in o.connects if r in self.rooms), default=2.6)
        head = o.sill + o.height
        pieces = []
        for p in local:
            if head < wall_top - 1e-6:
                pieces.append(prism(p, head, wall_top))
            if o.sill > 1e-6:
                pieces.append(prism(p, 0.0, o.sill))
        surround = MeshData.concat(pieces)
        if len(surround.counts):
            look = look_of("wall", "architecture")
            wall = mesh_prim(parent, "wall", surround, colour=look[1])
            self._thing(wall, "wall", o.connects, look=look, apis=collider(wall, "none"))

    def _fixtures(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for x, footprint in zip(self.home.fixtures, _footprints(self.home.fixtures)):
            base = self._floor_z([x.room])
            data = MeshData.concat(prism(p, base, base + x.height) for p in polygons(footprint))
            if not len(data.counts):
                continue
            look = look_of(x.kind, "fixture")
            owner = mesh_prim(group, names(x.id, "fixture"), data, colour=look[1])
            self._thing(owner, x.kind, [x.room], look=look, apis=collider(owner, "none"))
            attr(owner, "homeloop:id", TYPES.String, x.id, custom=True)
            attr(owner, "homeloop:kind", TYPES.String, x.kind, custom=True)
            attr(owner, "homeloop:room", TYPES.String, x.room, custom=True)

    def _reference(self, group: Sdf.PrimSpec, name: str, catalog_id: str) -> Sdf.PrimSpec:
        """A prim referencing the catalog asset (by a path relative to the home's file)."""
        ref = self._references.get(catalog_id)
        if ref is None:
            if catalog_id not in self.assets:
                raise UsdExportError(f"home {self.home.home_id}: no USD asset for catalog id {catalog_id!r}")
            asset = self.assets[catalog_id]
            folder = self._folders.get(asset.parent)
            if folder is None:  # the assets share a folder or a few: one relative path each
                folder = self._folders[asset.parent] = os.path.relpath(asset.parent, self.out_path.parent)
            rel = os.path.join(folder, asset.name).replace(os.sep, "/")
            ref = self._references[catalog_id] = Sdf.Reference(rel if rel.startswith(".") else f"./{rel}")
        owner = prim_spec(group, name, "")
        owner.referenceList.Prepend(ref)
        return owner

    def _furniture(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for f in self.home.furniture:
            owner = self._reference(group, names(f.id, "item"), f.catalog_id)
            pose_ops(owner, (f.pose.x, f.pose.y, f.pose.z), f.pose.yaw)
            self._thing(owner, f.semantic_class, [f.room])
            attr(owner, "homeloop:id", TYPES.String, f.id, custom=True)
            attr(owner, "homeloop:room", TYPES.String, f.room, custom=True)
            entry = self.catalog.furniture.get(f.catalog_id)
            if entry is not None:
                _choose_materials(owner, self.catalog, self.home.home_id, entry, f.id)
                _part_states(owner, entry, f)

    def _objects(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for obj in self.home.objects:
            owner = self._reference(group, names(obj.id, "item"), obj.catalog_id)
            pose_ops(owner, (obj.pose.x, obj.pose.y, obj.pose.z), obj.pose.yaw)
            self._thing(owner, obj.semantic_class, [obj.location.room])
            entry = self.catalog.objects.get(obj.catalog_id)
            if entry is not None:
                _choose_materials(owner, self.catalog, self.home.home_id, entry, obj.id, obj.colour or entry.colour)
            attr(owner, "homeloop:id", TYPES.String, obj.id, custom=True)
            attr(owner, "homeloop:room", TYPES.String, obj.location.room, custom=True)
            attr(owner, "homeloop:location", TYPES.String,
                 json.dumps(obj.location.model_dump(mode="json"), sort_keys=True), custom=True)

    def _devices(self, group: Sdf.PrimSpec, visuals: _DeviceVisuals) -> None:
        """Each device as an ``Xform`` named after it at its pose, referencing its body box and
        its visual (:class:`_DeviceVisuals`); an ``Xform`` alone where it has no body (a built-in
        or worn device)."""
        names = Names()
        for d, body in zip(self.home.devices, self.bodies):
            name = names(d.id, "device")
            owner = prim_spec(group, name)
            pose_ops(owner, (d.pose.x, d.pose.y, d.pose.z), d.pose.yaw)
            if body is not None:
                owner.referenceList.Prepend(visuals.reference(d, body))
            self._thing(owner, d.type, [d.room])
            _device_attrs(owner, d)

    def _lights(self, group: Sdf.PrimSpec) -> None:
        """A SphereLight just under each ceiling light's body, lit as the home file says."""
        names = Names()
        for d, body in zip(self.home.devices, self.bodies):
            if d.type != "light" or d.mount != "ceiling":
                continue
            _light(prim_spec(group, names(d.id, "light"), "SphereLight"), d, body,
                   self._room_labels([d.room]), light_is_on(self.home, d))

    def _cameras(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for cam in self.home.cameras:
            owner = prim_spec(group, names(cam.id, "camera"), "Camera")
            _camera(owner, cam)
            self._thing(owner, "camera", [cam.room])
            attr(owner, "homeloop:room", TYPES.String, cam.room, custom=True)


def _choose_materials(owner: Sdf.PrimSpec, catalog: Catalog, home_id: str, entry: FurnitureEntry | ObjectEntry,
                      item_id: str, colour: str | None = None) -> None:
    """An item's material of each role its asset offers a choice of: a variant selection, the
    palette's pick by the home's and the item's ids (:func:`role_choice`, as the CPU renderer)."""
    roles = variant_roles(catalog, entry)
    if roles:
        variant = variant_of(home_id, item_id)
        for role in roles:
            owner.variantSelections[role] = role_choice(catalog, entry.semantic_class, role, variant, colour)


def _part_states(owner: Sdf.PrimSpec, entry: FurnitureEntry, f: Any) -> None:
    """Each articulated part's present state, over the asset's part prims (named as there)."""
    part_names = _asset_names(entry)
    for part in f.parts:
        spec = next((p for p in entry.parts if p.name == part.name), None)
        pname = part_names(part.name, "part")
        if spec is None:
            continue
        over = prim_spec(owner, pname, "", Sdf.SpecifierOver)
        attr(over, "homeloop:state", TYPES.Float, float(part.state), custom=True)
        if part.is_open:
            op = joint_op_name(spec.kind, spec.axis)
            if spec.kind == "revolute":
                attr(over, op, TYPES.Float, deg(part.state))
            else:
                attr(over, op, TYPES.Double3, _AXIS[spec.axis] * float(part.state))


def _footprints(items: Sequence[Any]) -> list[Any]:
    """The items' home-file polygons made valid (``buffer(0)``), in one vectorised call."""
    polys = np.array([polygon_from_rings(x.polygon) for x in items], dtype=object)
    return shapely.buffer(polys, 0).tolist() if len(polys) else []


def _intersecting(geoms: list[Any], others: list[Any]) -> dict[int, list[int]]:
    """For each of ``geoms`` that meets some of ``others``: their indices, in query order."""
    found: dict[int, list[int]] = {}
    if geoms and others:
        for i, j in shapely.STRtree(others).query(geoms, predicate="intersects").T.tolist():
            found.setdefault(i, []).append(j)
    return found


def _opening_attrs(owner: Sdf.PrimSpec, o: Opening) -> None:
    for key, value, t in (("id", o.id, TYPES.String), ("kind", o.kind, TYPES.String),
                          ("width", o.width, TYPES.Double), ("sill", o.sill, TYPES.Double),
                          ("height", o.height, TYPES.Double), ("lockable", o.lockable, TYPES.Bool),
                          ("openable", o.openable, TYPES.Bool), ("exterior", o.exterior, TYPES.Bool),
                          ("is_open", o.is_open, TYPES.Bool)):
        attr(owner, f"homeloop:{key}", t, value, custom=True)
    attr(owner, "homeloop:connects", TYPES.StringArray, Vt.StringArray(list(o.connects)), custom=True)


def _light(owner: Sdf.PrimSpec, d: Device, body: Box | None, room_labels: dict[str, list[str]], lit: bool) -> None:
    """A ceiling light's emitter just under its body (``body``, in the device's frame)."""
    below = (body[2] if body is not None else 0.0) - LIGHT_GAP - LIGHT_RADIUS
    pose_ops(owner, (d.pose.x, d.pose.y, d.pose.z + below))
    label(owner, {"group": ["light"], **room_labels})
    attr(owner, "inputs:radius", TYPES.Float, LIGHT_RADIUS)
    attr(owner, "inputs:intensity", TYPES.Float, light_intensity(d, lit))
    attr(owner, "inputs:enableColorTemperature", TYPES.Bool, True)
    attr(owner, "inputs:colorTemperature", TYPES.Float, LIGHT_COLOUR_TEMPERATURE)
    attr(owner, "homeloop:device", TYPES.String, d.id, custom=True)
    attr(owner, "homeloop:room", TYPES.String, d.room or "", custom=True)
    attr(owner, "homeloop:on", TYPES.Bool, lit, custom=True)


def _physics_scene(root: Sdf.PrimSpec) -> None:
    """The home's physics scene: gravity along -Z at :data:`GRAVITY` (the stage is in metres)."""
    scene = prim_spec(root, "PhysicsScene", "PhysicsScene")
    attr(scene, "physics:gravityDirection", TYPES.Vector3f, Gf.Vec3f(0.0, 0.0, -1.0))
    attr(scene, "physics:gravityMagnitude", TYPES.Float, GRAVITY)
    label(scene, {"group": ["physics"]})


def _material(looks: Sdf.PrimSpec, name: str, colour: RGB) -> None:
    """A class's UsdPreviewSurface material of one colour (translucent for glass), authored
    afresh in every home (:func:`homeloop.pipeline.usd_author.preview_material`)."""
    preview_material(looks, name, colour, MATERIAL_ROUGHNESS, opacity=GLASS_OPACITY if name == "window" else None)


def _field_value(spec_type: str, value: Any) -> tuple[Sdf.ValueTypeName, Any]:
    if spec_type == "bool":
        return TYPES.Bool, None if value is None else bool(value)
    if spec_type == "int":
        return TYPES.Int, None if value is None else int(value)
    if spec_type in ("float", "timestamp"):
        return TYPES.Double, None if value is None else float(value)
    return TYPES.String, None if value is None else str(value)


def _device_attrs(owner: Sdf.PrimSpec, d: Device) -> None:
    s = TYPES.String
    for key, value in (("id", d.id), ("type", d.type), ("category", d.category), ("name", d.name),
                       ("room", d.room or ""), ("mount", d.mount), ("mounted_on", d.mounted_on or ""),
                       ("matter_device_type", d.matter_device_type or "")):
        attr(owner, f"homeloop:{key}", s, value, custom=True)
    attr(owner, "homeloop:agent_visible", TYPES.Bool, d.agent_visible, custom=True)
    for key, values in (("controls", d.controls), ("monitors", d.monitors), ("events", d.events)):
        attr(owner, f"homeloop:{key}", TYPES.StringArray, Vt.StringArray(list(values)), custom=True)
    attr(owner, "homeloop:fields", TYPES.StringArray, Vt.StringArray(list(d.fields)), custom=True)
    for fname, f in d.fields.items():
        type_name, value = _field_value(f.type, f.value)
        attr(owner, f"homeloop:field:{fname}", type_name, value, custom=True)
        attr(owner, f"homeloop:field:{fname}:accepts", s, _accepts(f), custom=True)


#: Field attributes left out of a field's ``accepts`` JSON: its present value and its prose.
_NOT_ACCEPTS = frozenset({"value", "description", "default"})
#: ``accepts`` JSON by field specification (a catalog has a few dozen).
_ACCEPTS: dict[tuple[Any, ...], str] = {}


@lru_cache(maxsize=8)
def _spec_names(cls: type[DeviceField]) -> tuple[str, ...]:
    return tuple(n for n in cls.model_fields if n not in _NOT_ACCEPTS)


def _accepts(f: DeviceField) -> str:
    """The JSON of what a device field accepts: its specification less :data:`_NOT_ACCEPTS`,
    nulls dropped (the same for every field of the same specification, so made once)."""
    values = (getattr(f, n) for n in _spec_names(type(f)))
    key = (type(f), *(tuple(v) if isinstance(v, list) else v for v in values))
    found = _ACCEPTS.get(key)
    if found is None:
        spec = f.model_dump(mode="json", exclude=set(_NOT_ACCEPTS))
        found = _ACCEPTS[key] = json.dumps({k: v for k, v in spec.items() if v is not None}, sort_keys=True)
    return found


def camera_rotate_xyz(yaw: float, pitch: float) -> tuple[float, float, float]:
    """``xformOp:rotateXYZ`` (degrees) that points a USD camera (looking down -Z,
    +Y up) along heading ``yaw`` and tilt ``pitch`` (radians, negative looks down)."""
    return (deg(math.pi / 2 + pitch), 0.0, deg(yaw - math.pi / 2))


def focal_length_for(hfov_deg: float, horizontal_aperture: float = CAMERA_HORIZONTAL_APERTURE) -> float:
    """The focal length giving ``hfov_deg`` across ``horizontal_aperture``."""
    return horizontal_aperture / (2.0 * math.tan(math.radians(hfov_deg) / 2.0))


_CAMERA_OP_ORDER = Vt.TokenArray(["xformOp:translate", "xformOp:rotateXYZ"])


def _camera(owner: Sdf.PrimSpec, cam: Camera) -> None:
    p = cam.pose
    attr(owner, "xformOp:translate", TYPES.Double3, Gf.Vec3d(p.x, p.y, p.z))
    attr(owner, "xformOp:rotateXYZ", TYPES.Float3, Gf.Vec3f(*camera_rotate_xyz(p.yaw, p.pitch)))
    attr(owner, "xformOpOrder", TYPES.TokenArray, _CAMERA_OP_ORDER, uniform=True)
    width, height = cam.resolution
    attr(owner, "projection", TYPES.Token, "perspective")
    attr(owner, "horizontalAperture", TYPES.Float, CAMERA_HORIZONTAL_APERTURE)
    attr(owner, "verticalAperture", TYPES.Float, round(CAMERA_HORIZONTAL_APERTURE * height / width, 5))
    attr(owner, "focalLength", TYPES.Float, round(focal_length_for(cam.hfov_deg), 5))
    attr(owner, "clippingRange", TYPES.Float2, Gf.Vec2f(*CAMERA_CLIPPING))
    attr(owner, "homeloop:id", TYPES.String, cam.id, custom=True)
    attr(owner, "homeloop:resolution", TYPES.Int2, Gf.Vec2i(int(width), int(height)), custom=True)
    attr(owner, "homeloop:hfov_deg", TYPES.Double, float(cam.hfov_deg), custom=True)
    attr(owner, "homeloop:privacy_mode", TYPES.String, cam.privacy_mode, custom=True)
    attr(owner, "homeloop:agent_visible", TYPES.Bool, cam.agent_visible, custom=True)



def home_usd_path(homes_dir: str | os.PathLike[str], home_id: str, usda: bool = False) -> Path:
    """``<homes_dir>/<home_id>/home.usdc`` (or ``.usda``)."""
    return Path(homes_dir) / home_id / ("home.usda" if usda else "home.usdc")


def export_home(home: Home, catalog: Catalog, out_path: str | os.PathLike[str], *, assets: dict[str, Path],
                usda: bool = False, validate: bool = True) -> ExportResult:
    """Write ``home`` as a USD stage at ``out_path`` referencing ``assets``
    (from :func:`write_catalog_assets`, written beforehand).

    ``out_path`` gets the extension ``.usdc`` (or ``.usda`` with ``usda``).
    With ``validate``, the written file is checked by :func:`validate_stage_report`
    and the result carries its errors and warnings.
    """
    start = time.perf_counter()
    path = Path(out_path).with_suffix(".usda" if usda else ".usdc")
    with layer_file(path, HOME_ROOT) as layer:
        writer = _HomeWriter(home, catalog, path, {k: Path(v) for k, v in assets.items()}, layer)
        writer.write()
    size = path.stat().st_size
    seconds = time.perf_counter() - start
    result = ExportResult(path=path, bytes=size, prim_counts=dict(sorted(writer.counts.items())),
                          errors=None, warnings=None, seconds=seconds)
    if validate:
        t0 = time.perf_counter()
        report = validate_stage_report(path)
        result.errors, result.warnings = report.errors, report.warnings
        result.validation_seconds = time.perf_counter() - t0
    return result


# --- reading back --------------------------------------------------------------------------------------


def labels_of(prim: Usd.Prim, taxonomy: str = "class") -> list[str]:
    """A prim's semantic labels of ``taxonomy`` (empty when it has none)."""
    attr = prim.GetAttribute(f"semantics:labels:{taxonomy}")
    value = attr.Get() if attr else None
    return [str(v) for v in value] if value else []


def semantic_class_counts(stage: Usd.Stage) -> dict[str, int]:
    """Things in ``stage`` by semantic class: prims with a class label whose
    parent does not carry the same class (a fridge's door and body are the fridge)."""
    counts: Counter[str] = Counter()
    for prim in stage.Traverse():
        own = labels_of(prim)
        if not own:
            continue
        parent = set(labels_of(prim.GetParent()))
        for cls in own:
            if cls not in parent:
                counts[cls] += 1
    return dict(sorted(counts.items()))


# --- validation --------------------------------------------------------------------------------------------


@dataclass
class ValidationReport:
    """Messages of the usd-core validators: errors and warnings, each "[validator] message (at prims)"."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


_VALIDATORS: list[Any] | None = None
#: The keyword of the validators that look inside usdz packages. They run only on a stage
#: with a package among its layers: on others they find nothing, and the costliest of them
#: (UsdzPackageValidator) gathers every dependency of the stage to learn that.
PACKAGE_VALIDATORS = "UsdzValidators"


def validators(packages: bool = True) -> list[Any]:
    """Every validator the usd-core plugins register (loaded once); with ``packages=False``,
    those of usdz packages left out."""
    global _VALIDATORS
    if _VALIDATORS is None:
        registry = UsdValidation.ValidationRegistry()
        _VALIDATORS = [v for v in registry.GetOrLoadAllValidators() if not v.GetMetadata().isSuite]
    if packages:
        return _VALIDATORS
    return [v for v in _VALIDATORS if PACKAGE_VALIDATORS not in v.GetMetadata().GetKeywords()]


def validators_for(stage: Usd.Stage) -> list[Any]:
    """The validators that apply to a stage: all of them if a usdz package is among its layers."""
    has_package = any(layer.GetFileFormat().IsPackage() for layer in stage.GetUsedLayers())
    return validators(packages=has_package)


def _message(error: Any) -> str:
    validator = error.GetValidator()
    name = validator.GetMetadata().name if validator else error.GetName()
    sites = []
    for site in error.GetSites():
        if site.IsPrim() or site.IsProperty():
            sites.append(str(site.GetPrim().GetPath() if site.IsPrim() else site.GetProperty().GetPath()))
    where = f" (at {', '.join(sites)})" if sites and any(sites) else ""
    return f"[{name}] {error.GetMessage()}{where}"


@contextlib.contextmanager
def assets_held_open(paths: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Keep the catalog asset layers open while homes that reference them are validated:
    each home's stage would otherwise read them from disk again. Held
    for one batch of homes only, so a long-lived worker never sees assets older than the
    files; a missing asset stays missing for the validators to report."""
    layers = [Sdf.Layer.FindOrOpen(str(p)) for p in paths if Path(p).is_file()]
    try:
        yield
    finally:
        del layers


def validate_stage_report(path: str | os.PathLike[str] | Usd.Stage) -> ValidationReport:
    """Run the registered usd-core validators on the stage at ``path`` (or an open stage): every
    one, those of usdz packages only where the stage has one (:func:`validators_for`)."""
    stage = path if isinstance(path, Usd.Stage) else Usd.Stage.Open(str(path))
    if stage is None:
        return ValidationReport(errors=[f"cannot open {path}"])
    context = UsdValidation.ValidationContext(validators_for(stage))
    report = ValidationReport()
    for error in context.Validate(stage):
        kind = error.GetType()
        if kind == UsdValidation.ValidationErrorType.Error:
            report.errors.append(_message(error))
        elif kind == UsdValidation.ValidationErrorType.Warn:
            report.warnings.append(_message(error))
    report.errors.sort()
    report.warnings.sort()
    return report


def validate_stage(path: str | os.PathLike[str] | Usd.Stage) -> list[str]:
    """The errors (not warnings) the usd-core validators find in the stage at ``path``."""
    return validate_stage_report(path).errors
