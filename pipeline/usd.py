"""USD export: catalog assets and homes for Isaac Sim (OpenUSD via usd-core).

Two kinds of files come out of a build::

    outputs/<build>/assets/<catalog id>.usdc     one per catalog furniture / object entry
    outputs/<build>/homes/<home id>/home.usdc    one per home, referencing the assets

**Assets** (:func:`write_catalog_assets`). Each catalog furniture or object
entry becomes one file whose default prim is the item, in the catalog's item
frame (origin at the centre of the footprint on the floor, +x the front, z
up, metres). The geometry is :func:`homeloop.geometry_assets.mesh_for`, the
same the CPU renderer draws: shelving has its shelves, a drum or a drawer is
a cavity, a TV is a panel on feet (docs/catalog.md).

- furniture is **static**: it stands where the home puts it and does not move
  when pushed, so its root carries neither ``PhysicsRigidBodyAPI`` nor
  ``PhysicsMassAPI`` (a mass on a body that cannot move means nothing to a
  simulator; the catalog mass stays readable as ``homeloop:mass``), and its
  body collides as the exact triangle mesh (approximation ``none``, valid for
  static colliders), cavities included. An item without articulated parts is
  one ``Mesh`` prim: the prim carries the mesh, so an importer that turns
  prims into named objects keeps the item's name. An articulated item is an
  ``Xform`` root with its body mesh (named after the catalog entry) and, per
  part (a fridge door, a drawer), a child ``Xform`` at its hinge with a
  ``panel`` mesh, ``PhysicsRigidBodyAPI`` + ``PhysicsMassAPI`` (the moving
  parts are the only furniture bodies with a mass: their share of the catalog
  mass by volume) and a ``PhysicsRevoluteJoint`` (limits in degrees) or
  ``PhysicsPrismaticJoint`` (limits in metres) joining it to the static root
  about the catalog axis. The part's own transform is ``translate`` (the
  hinge) then ``rotateX/Y/Z:joint`` or ``translate:joint``: a home sets the
  joint op to show a part open.
- carryable objects are dynamic: an ``Xform`` root with
  ``PhysicsRigidBodyAPI``, ``PhysicsMassAPI`` (catalog mass) and a ``geom``
  mesh with ``PhysicsCollisionAPI`` (convex hull); grasp points as child
  ``Xform``\\ s.

**Homes** (:func:`export_home`): stage metadata ``metersPerUnit = 1``,
``upAxis = Z``, ``defaultPrim = /Home``, and::

    /Home
      PhysicsScene          gravity -Z, 9.81 m/s² (metres)
      Looks/<name>          one UsdPreviewSurface material per semantic class
      Rooms/<room>          Xform; floor (Mesh), ceiling (Mesh, rooms with a roof)
      Walls/<wall>          Mesh: the wall footprint extruded, cut where openings are
      Openings/<opening>    Xform at the opening; lintel / sill pieces of wall; the floor
                            under it (threshold: the floor runs on through every opening
                            at floor level); a door leaf (rigid body) with a revolute joint
                            at the hinge (0-90 deg), a garage door leaf with a prismatic
                            joint (lifts by its height), a window pane
      Fixtures/<fixture>    Mesh: the plan's built-in fixture (sink, counter, shower ...)
                            extruded from its room's floor to its height, a static collider
      Furniture/<item>      the furniture asset by reference (../../assets/<catalog id>.usdc)
      Objects/<object>      the object asset by reference (a rigid body)
      Devices/<device>      Mesh: the device's body resting on its mount, homeloop:* attributes
                            (a dome camera: an Xform with its <id>_housing mesh)
      Lights/<light>        SphereLight under each ceiling light, on or off as the home says
      Cameras/<camera>      Camera with the home file's FOV and resolution

Furniture, objects and devices stand at their pose: ``translate`` (x, y, z)
then ``rotateZ`` (yaw, degrees).

**Device bodies** (:func:`homeloop.geometry_assets.device_body`, the sizes of
:data:`homeloop.geometry_assets.DEVICE_BODIES`, as the simulator's visibility
and renderer draw them). A device's body rests on its mount and does not cross
it: a ceiling device hangs below the room's ceiling, a floor or furniture
device stands on its surface, a wall device (and one on a door or window
frame) stands out of the wall face it is fixed to. A dome camera's housing
reaches from the ceiling to :data:`CAMERA_LENS_CLEARANCE` above its lens, the
camera prim, so the camera sees out of it. A built-in device (the stove of a
range) is its appliance: it has no body of its own and is an ``Xform``.

**Lights, materials.** Each ceiling light device gets a ``SphereLight``
(:data:`LIGHT_RADIUS`) just under its body, its flux that of the simulator's
ceiling fitting (homeloop.sim.dynamics.light) at the device's brightness when
it is on (its ``on`` field, or a light switch bound to it), intensity 0 when
off. Each thing's top prim binds the ``Looks`` material of its semantic
class (objects with a colour word: of class and colour), coloured as the CPU
renderer colours it (homeloop.sim.render.materials); window glass is
translucent. Meshes carry the same colour as ``primvars:displayColor``.

**Semantic labels** (``UsdSemantics.LabelsAPI``). Every prim the export
authors carries labels. A thing's prim and every prim below it carry its
``class`` (wall, floor, ceiling, door, entrance_door, garage_door, window,
the fixture kind, the catalog class of furniture and objects, the device type, camera) and,
where it lies in rooms, ``room`` (the rooms' Swiss Dwellings subtypes,
lower case) and ``room_id`` (the home file room ids). Articulated parts add
``part`` (the part name). Grouping prims (``/Home``, ``/Home/Walls`` ...),
room prims, the physics scene, materials and lights carry a ``group`` label
only, so a segmentation that merges a prim's labels with its ancestors' sees
no extra classes. A *thing* is the top-most prim of its class:
:func:`semantic_class_counts` counts those (so the wall pieces above a door or
around a window, and the floor through an opening, count as walls and floors
of their own).

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

Files are written atomically (homeloop.io, readable as any output: 0644
under the usual umask) and deterministically: the same home, catalog and
usd-core version give the same bytes, in ``.usdc`` and ``.usda`` alike (no
timestamps or paths are written; references are relative). docs/pipeline.md
("USD homes") says how they load in Isaac Sim and Blender.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import mapbox_earcut
import numpy as np
import shapely
from shapely import affinity
from pxr import Gf, Sdf, Tf, Usd, UsdValidation, Vt
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.catalog import Catalog, FurnitureEntry, ObjectEntry
from homeloop.geometry import opening_axes
from homeloop.geometry_assets import CAMERA_LENS_CLEARANCE, device_body, mesh_for, part_panel_bounds
from homeloop.home import Camera, Device, Home, Opening, Wall, polygon_from_rings
from homeloop.io import atomic_path
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
#: The name ending of a dome camera device's housing mesh (``<id>_housing``).
DOME_HOUSING = "housing"
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

#: Layer metadata written on every file (and nothing else: no doc string, no timestamps).
STAGE_METERS_PER_UNIT = 1.0
STAGE_UP_AXIS = "Z"

RGB = tuple[float, float, float]
#: Colour (and material) of the architecture's classes: the CPU renderer's.
_ARCHITECTURE_LOOK = {"floor": "floor", "ceiling": "ceiling", "wall": "wall", "door": "door",
                      "entrance_door": "door", "garage_door": "garage_door", "window": "glass"}


def look_of(cls: str, kind: str, colour: str | None = None) -> tuple[str, RGB]:
    """The material name and colour of a thing of semantic class ``cls`` and ``kind``
    (architecture, fixture, furniture, object or device), as the CPU renderer colours it."""
    if kind == "architecture":
        return cls, materials.ARCHITECTURE[_ARCHITECTURE_LOOK.get(cls, "wall")]
    if kind == "fixture":
        return cls, materials.fixture_colour(cls)
    if kind == "furniture":
        return cls, materials.furniture_colour(cls)
    if kind == "object":
        word = (colour or "").strip().lower()
        name = f"{cls}_{word}" if word in materials.COLOUR_WORDS else cls
        return name, materials.object_colour(cls, colour)
    return "device", materials.ARCHITECTURE["device"]


class UsdExportError(RuntimeError):
    """A home or asset that cannot be exported (missing catalog entry or asset)."""


# --- small Sdf authoring helpers ----------------------------------------------------------------
# Authoring goes through Sdf (layers and specs), not Usd stages: it is an
# order of magnitude faster and the layer is written exactly as authored.

_TYPES = Sdf.ValueTypeNames


def _valid_name(text: str, prefix: str) -> str:
    """A prim name for an id: ids such as "1" or "bath-2" are not valid USD identifiers."""
    name = Tf.MakeValidIdentifier(str(text))
    return name if name[0].isalpha() else f"{prefix}_{name}".replace("__", "_")


class _Names:
    """Unique, valid child names within one parent."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def __call__(self, text: str, prefix: str) -> str:
        base = _valid_name(text, prefix)
        name, n = base, 1
        while name in self._used:
            n += 1
            name = f"{base}_{n}"
        self._used.add(name)
        return name


def _prim(parent: Sdf.PrimSpec | Sdf.Layer, name: str, type_name: str = "Xform",
          specifier: Sdf.Specifier = Sdf.SpecifierDef) -> Sdf.PrimSpec:
    owner = parent.pseudoRoot if isinstance(parent, Sdf.Layer) else parent
    return Sdf.PrimSpec(owner, name, specifier, type_name)


def _attr(prim: Sdf.PrimSpec, name: str, type_name: Sdf.ValueTypeName, value: Any = None, *,
          uniform: bool = False, custom: bool = False) -> Sdf.AttributeSpec:
    spec = Sdf.AttributeSpec(prim, name, type_name,
                             Sdf.VariabilityUniform if uniform else Sdf.VariabilityVarying, custom)
    if value is not None:
        spec.default = value
    return spec


def _rel(prim: Sdf.PrimSpec, name: str, target: Sdf.Path) -> None:
    spec = Sdf.RelationshipSpec(prim, name, False)
    spec.targetPathList.explicitItems = [target]


def _api(prim: Sdf.PrimSpec, *schemas: str) -> None:
    """Apply API schemas (prepended, as Usd's Apply() authors them)."""
    current = prim.GetInfo("apiSchemas") if prim.HasInfo("apiSchemas") else Sdf.TokenListOp()
    items = list(current.prependedItems) + [s for s in schemas if s not in current.prependedItems]
    prim.SetInfo("apiSchemas", Sdf.TokenListOp.Create(prependedItems=items))


def _labels(prim: Sdf.PrimSpec, labels: dict[str, list[str]]) -> None:
    """UsdSemantics LabelsAPI instances, one per taxonomy."""
    taxonomies = [t for t in labels if labels[t]]
    _api(prim, *[f"SemanticsLabelsAPI:{t}" for t in taxonomies])
    for t in taxonomies:
        _attr(prim, f"semantics:labels:{t}", _TYPES.TokenArray, Vt.TokenArray(labels[t]))


def _pose_ops(prim: Sdf.PrimSpec, translate: tuple[float, float, float], yaw_rad: float | None = None) -> None:
    _attr(prim, "xformOp:translate", _TYPES.Double3, tuple(float(v) for v in translate))
    order = ["xformOp:translate"]
    if yaw_rad is not None:
        _attr(prim, "xformOp:rotateZ", _TYPES.Float, _deg(yaw_rad))
        order.append("xformOp:rotateZ")
    _attr(prim, "xformOpOrder", _TYPES.TokenArray, Vt.TokenArray(order), uniform=True)


def _deg(rad: float) -> float:
    return round(math.degrees(rad), 4) + 0.0


@dataclass
class _MeshData:
    """Polygonal mesh data: points (N x 3), face vertex counts, face vertex indices."""

    points: np.ndarray
    counts: np.ndarray
    indices: np.ndarray

    @staticmethod
    def empty() -> "_MeshData":
        return _MeshData(np.zeros((0, 3)), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))

    @staticmethod
    def concat(parts: Iterable["_MeshData"]) -> "_MeshData":
        parts = [p for p in parts if len(p.counts)]
        if not parts:
            return _MeshData.empty()
        offsets = np.cumsum([0] + [len(p.points) for p in parts[:-1]])
        return _MeshData(np.concatenate([p.points for p in parts]),
                         np.concatenate([p.counts for p in parts]),
                         np.concatenate([p.indices + o for p, o in zip(parts, offsets)]))


def _mesh(parent: Sdf.PrimSpec, name: str, data: _MeshData, *, colour: RGB | None,
          double_sided: bool = False) -> Sdf.PrimSpec:
    prim = _prim(parent, name, "Mesh")
    _mesh_data(prim, data, colour)
    if double_sided:
        _attr(prim, "doubleSided", _TYPES.Bool, True, uniform=True)
    return prim


def _collider(prim: Sdf.PrimSpec, approximation: str) -> None:
    """Collision on a mesh: "none" (the triangle mesh, static geometry only) or "convexHull"."""
    _api(prim, "PhysicsCollisionAPI", "PhysicsMeshCollisionAPI")
    _attr(prim, "physics:approximation", _TYPES.Token, approximation, uniform=True)


def _rigid_body(prim: Sdf.PrimSpec, mass: float) -> None:
    _api(prim, "PhysicsRigidBodyAPI", "PhysicsMassAPI")
    _attr(prim, "physics:mass", _TYPES.Float, round(float(mass), 4))


def _joint(parent: Sdf.PrimSpec, name: str, kind: str, *, body0: Sdf.Path, body1: Sdf.Path, axis: str,
           lower: float, upper: float, local_pos0: tuple[float, float, float],
           labels: dict[str, list[str]]) -> Sdf.PrimSpec:
    """A revolute (limits in degrees) or prismatic (limits in metres) joint.

    Both joint frames are unrotated: frame 0 sits at ``local_pos0`` in
    ``body0``'s frame, frame 1 at the origin of ``body1``, which the caller
    places at the hinge (so the frames meet when the part is closed).
    """
    prim = _prim(parent, name, "PhysicsRevoluteJoint" if kind == "revolute" else "PhysicsPrismaticJoint")
    _rel(prim, "physics:body0", body0)
    _rel(prim, "physics:body1", body1)
    _attr(prim, "physics:axis", _TYPES.Token, axis.upper(), uniform=True)
    _attr(prim, "physics:lowerLimit", _TYPES.Float, round(float(lower), 4) + 0.0)
    _attr(prim, "physics:upperLimit", _TYPES.Float, round(float(upper), 4) + 0.0)
    _attr(prim, "physics:localPos0", _TYPES.Point3f, tuple(float(v) for v in local_pos0))
    _attr(prim, "physics:localRot0", _TYPES.Quatf, Gf.Quatf(1.0))
    _attr(prim, "physics:localPos1", _TYPES.Point3f, (0.0, 0.0, 0.0))
    _attr(prim, "physics:localRot1", _TYPES.Quatf, Gf.Quatf(1.0))
    _labels(prim, labels)
    return prim


def _new_layer(default_prim: str) -> Sdf.Layer:
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.pseudoRoot.SetInfo("metersPerUnit", STAGE_METERS_PER_UNIT)
    layer.pseudoRoot.SetInfo("upAxis", STAGE_UP_AXIS)
    layer.defaultPrim = default_prim
    return layer


def _export_layer(layer: Sdf.Layer, path: Path) -> int:
    """Write ``layer`` to ``path`` atomically (homeloop.io: a temporary file with the same
    extension, as USD picks the format by extension, then a rename; the mode of any output);
    its size."""
    with atomic_path(path, suffix=path.suffix) as tmp:
        if not layer.Export(str(tmp)):
            raise UsdExportError(f"could not write {path}")
    # A layer already open for this path (from an earlier export) must not shadow the new file.
    opened = Sdf.Layer.Find(str(path))
    if opened is not None:
        opened.Reload(force=True)
    return path.stat().st_size


# --- geometry ---------------------------------------------------------------------------------------


def _box(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float) -> _MeshData:
    """An axis-aligned box as six outward-facing quads."""
    p = np.array([[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0],
                  [x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]], dtype=np.float64)
    faces = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]])
    return _MeshData(p, np.full(6, 4, dtype=np.int32), faces.ravel().astype(np.int32))


def _from_trimesh(mesh: Any) -> _MeshData:
    faces = np.asarray(mesh.faces, dtype=np.int32)
    return _MeshData(np.asarray(mesh.vertices, dtype=np.float64), np.full(len(faces), 3, dtype=np.int32),
                     faces.ravel())


def _rings(poly: Polygon) -> list[np.ndarray]:
    """Rings of ``poly`` without closing points: exterior counter-clockwise, holes clockwise."""
    poly = shapely.geometry.polygon.orient(poly, sign=1.0)
    return [np.asarray(r.coords, dtype=np.float64)[:-1, :2] for r in [poly.exterior, *poly.interiors]]


def _cap(rings: list[np.ndarray], z: float, up: bool) -> _MeshData:
    """The polygon's triangulation at height ``z``, facing up (or down)."""
    verts = np.concatenate(rings)
    ends = np.cumsum([len(r) for r in rings]).astype(np.uint32)
    tris = np.asarray(mapbox_earcut.triangulate_float64(verts, ends), dtype=np.int32).reshape(-1, 3)
    if len(tris):
        a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
        signed = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
        flip = (signed < 0) if up else (signed > 0)
        tris[flip] = tris[flip][:, ::-1]
    points = np.column_stack([verts, np.full(len(verts), z)])
    return _MeshData(points, np.full(len(tris), 3, dtype=np.int32), tris.ravel())


def _prism(poly: Polygon, z0: float, z1: float) -> _MeshData:
    """A polygon (holes allowed) extruded from ``z0`` to ``z1``: closed, faces outward."""
    if z1 - z0 <= 1e-6 or poly.is_empty or poly.area <= 1e-8:
        return _MeshData.empty()
    rings = _rings(poly)
    bottom, top = _cap(rings, z0, up=False), _cap(rings, z1, up=True)
    sides = []
    for ring in rings:
        n = len(ring)
        pts = np.concatenate([np.column_stack([ring, np.full(n, z0)]), np.column_stack([ring, np.full(n, z1)])])
        i = np.arange(n, dtype=np.int32)
        j = (i + 1) % n
        quads = np.column_stack([i, j, j + n, i + n])
        sides.append(_MeshData(pts, np.full(n, 4, dtype=np.int32), quads.ravel()))
    return _MeshData.concat([bottom, top, *sides])


def _polygons(geom: BaseGeometry, min_area: float = 1e-6) -> list[Polygon]:
    return [g for g in shapely.get_parts(geom) if g.geom_type == "Polygon" and g.area > min_area]


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


def _opening_frame(poly: Polygon) -> _Frame:
    centre, u, _, width, depth = opening_axes(poly)
    if width <= 0:  # no rectangle to speak of
        c = poly.centroid
        return _Frame((c.x, c.y), (1.0, 0.0), max(poly.length / 2, 0.01), 0.01)
    # A fixed direction for the same rectangle whatever its vertex order: +x, or +y when vertical.
    if u[0] < -1e-9 or (abs(u[0]) <= 1e-9 and u[1] < 0):
        u = -u
    return _Frame((float(centre[0]), float(centre[1])), (float(u[0]), float(u[1])), width, depth)


# --- assets ----------------------------------------------------------------------------------------------


def asset_file_name(catalog_id: str) -> str:
    return f"{catalog_id}.usdc"


_JOINT_OP = {"x": "xformOp:rotateX:joint", "y": "xformOp:rotateY:joint", "z": "xformOp:rotateZ:joint"}


def joint_op_name(kind: str, axis: str) -> str:
    """The xform op of an articulated part that a home sets to show it open."""
    return _JOINT_OP[axis] if kind == "revolute" else "xformOp:translate:joint"


def _asset_root(entry: FurnitureEntry | ObjectEntry, type_name: str = "Xform"
                ) -> tuple[Sdf.Layer, Sdf.PrimSpec, dict[str, list[str]]]:
    """A new asset layer with its labelled root prim (the layer's default prim)."""
    name = _valid_name(entry.id, "item")
    layer = _new_layer(name)
    root = _prim(layer, name, type_name)
    root.kind = "component"
    labels = {"class": [entry.semantic_class]}
    _labels(root, labels)
    _attr(root, "homeloop:catalog_id", _TYPES.String, entry.id, custom=True)
    return layer, root, labels


def _mesh_data(prim: Sdf.PrimSpec, data: _MeshData, colour: RGB | None) -> None:
    """Mesh attributes on a prim made as a ``Mesh`` (a furniture root that carries its mesh)."""
    pts = np.round(np.asarray(data.points, dtype=np.float64), 5).astype(np.float32)
    _attr(prim, "points", _TYPES.Point3fArray, Vt.Vec3fArray.FromNumpy(pts))
    _attr(prim, "faceVertexCounts", _TYPES.IntArray, Vt.IntArray.FromNumpy(data.counts.astype(np.int32)))
    _attr(prim, "faceVertexIndices", _TYPES.IntArray, Vt.IntArray.FromNumpy(data.indices.astype(np.int32)))
    _attr(prim, "extent", _TYPES.Float3Array, Vt.Vec3fArray.FromNumpy(np.stack([pts.min(axis=0), pts.max(axis=0)])))
    _attr(prim, "subdivisionScheme", _TYPES.Token, "none", uniform=True)
    if colour is not None:
        c = _attr(prim, "primvars:displayColor", _TYPES.Color3fArray, Vt.Vec3fArray([colour]))
        c.SetInfo("interpolation", "constant")


def _furniture_asset(entry: FurnitureEntry) -> Sdf.Layer:
    """A static piece of furniture: one Mesh prim, or an Xform with its body and parts."""
    colour = materials.furniture_colour(entry.semantic_class)
    body_data = _from_trimesh(mesh_for(entry))
    layer, root, labels = _asset_root(entry, "Xform" if entry.parts else "Mesh")
    _attr(root, "homeloop:category", _TYPES.String, entry.category, custom=True)
    _attr(root, "homeloop:mass", _TYPES.Float, round(float(entry.mass), 4), custom=True)
    if not entry.parts:
        _mesh_data(root, body_data, colour)
        _collider(root, "none")
        return layer
    names = _Names()
    body = _mesh(root, names(entry.id, "body"), body_data, colour=colour)
    _collider(body, "none")
    _labels(body, labels)
    for part in entry.parts:
        _part(root, names(part.name, "part"), entry, part)
    return layer


def _part(root: Sdf.PrimSpec, pname: str, entry: FurnitureEntry, part: Any) -> None:
    """An articulated part: a rigid body at its hinge with its panel, jointed to the static root."""
    cls = entry.semantic_class
    xf = _prim(root, pname)
    h = part.hinge
    _attr(xf, "xformOp:translate", _TYPES.Double3, (float(h.x), float(h.y), float(h.z)))
    op = joint_op_name(part.kind, part.axis)
    if part.kind == "revolute":
        _attr(xf, op, _TYPES.Float, 0.0)
    else:
        _attr(xf, op, _TYPES.Double3, (0.0, 0.0, 0.0))
    _attr(xf, "xformOpOrder", _TYPES.TokenArray, Vt.TokenArray(["xformOp:translate", op]), uniform=True)
    panel_data = _box(*part_panel_bounds(entry, part))  # the panel the previews and the renderer draw too
    lo, hi = panel_data.points.min(axis=0), panel_data.points.max(axis=0)
    d = entry.dimensions
    part_labels = {"class": [cls], "part": [part.name]}
    _rigid_body(xf, max(0.1, entry.mass * float(np.prod(hi - lo)) / (d.width * d.depth * d.height)))
    _labels(xf, part_labels)
    _attr(xf, "homeloop:part", _TYPES.String, part.name, custom=True)
    _attr(xf, "homeloop:range", _TYPES.Float2, tuple(float(v) for v in part.range), custom=True)
    if part.opens:
        _attr(xf, "homeloop:opens", _TYPES.String, part.opens, custom=True)
    colour = tuple(0.8 * c for c in materials.furniture_colour(cls))  # as the renderer shades panels
    panel = _mesh(xf, "panel", panel_data, colour=colour)  # type: ignore[arg-type]
    _collider(panel, "convexHull")
    _labels(panel, part_labels)
    lower, upper = sorted(part.range)
    if part.kind == "revolute":
        lower, upper = math.degrees(lower), math.degrees(upper)
    _joint(root, f"{pname}_joint", part.kind, body0=root.path, body1=xf.path, axis=part.axis,
           lower=lower, upper=upper, local_pos0=(h.x, h.y, h.z), labels=part_labels)


def _object_asset(entry: ObjectEntry) -> Sdf.Layer:
    layer, root, labels = _asset_root(entry)
    _attr(root, "homeloop:label", _TYPES.String, entry.label, custom=True)
    _rigid_body(root, entry.mass)
    _, colour = look_of(entry.semantic_class, "object", entry.colour)
    geom = _mesh(root, "geom", _from_trimesh(mesh_for(entry)), colour=colour)
    _collider(geom, "convexHull")
    _labels(geom, labels)
    names = _Names()
    names("geom", "grasp")
    for g in entry.grasp_points:
        gp = _prim(root, names(f"grasp_{g.name}", "grasp"))
        _pose_ops(gp, (g.offset.x, g.offset.y, g.offset.z))
        _attr(gp, "homeloop:approach", _TYPES.Float3, tuple(float(v) for v in g.approach), custom=True)
        _labels(gp, labels)
    return layer


def furniture_body_name(entry: FurnitureEntry) -> str | None:
    """The name of an articulated item's body mesh below its root (its catalog id); None
    where the root prim is the mesh."""
    return _valid_name(entry.id, "body") if entry.parts else None


def write_catalog_assets(catalog: Catalog, assets_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write one USD asset per catalog furniture and object entry; their paths by catalog id.

    Write them once per build (``outputs/<build>/assets``); every home of the
    build references them.
    """
    out = Path(assets_dir)
    paths: dict[str, Path] = {}
    for entry in catalog.furniture.values():
        paths[entry.id] = out / asset_file_name(entry.id)
        _export_layer(_furniture_asset(entry), paths[entry.id])
    for obj in catalog.objects.values():
        paths[obj.id] = out / asset_file_name(obj.id)
        _export_layer(_object_asset(obj), paths[obj.id])
    return paths


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


def _door_leaf(prim: Sdf.PrimSpec, o: Opening, w: float, labels: dict[str, list[str]]) -> None:
    """A door's leaf, ``w`` wide, as a rigid body on a joint: hinged at the prim's origin,
    or sliding up for a garage door; open by its ``is_open``."""
    leaf = _prim(prim, "leaf")
    half, gap, head = DOOR_LEAF_THICKNESS / 2, DOOR_LEAF_GAP, o.sill + o.height
    garage = o.kind == "garage_door"
    if garage:
        op, state = "xformOp:translate:joint", (0.0, 0.0, float(o.height) if o.is_open else 0.0)
        _attr(leaf, op, _TYPES.Double3, state)
    else:
        op, state = "xformOp:rotateZ:joint", DOOR_OPEN_DEG if o.is_open else 0.0
        _attr(leaf, op, _TYPES.Float, state)
    _attr(leaf, "xformOpOrder", _TYPES.TokenArray, Vt.TokenArray([op]), uniform=True)
    _rigid_body(leaf, DOOR_LEAF_KG_PER_M2.get(o.kind, 10.0) * w * o.height)
    _labels(leaf, labels)
    _, colour = look_of(o.kind, "architecture")
    panel = _mesh(leaf, "panel", _box(gap, -half, o.sill + gap, w - gap, half, head - gap), colour=colour)
    _collider(panel, "convexHull")
    _labels(panel, labels)
    if garage:
        _joint(prim, "joint", "prismatic", body0=prim.path, body1=leaf.path, axis="z",
               lower=0.0, upper=o.height, local_pos0=(0.0, 0.0, 0.0), labels=labels)
    else:
        _joint(prim, "joint", "revolute", body0=prim.path, body1=leaf.path, axis="z",
               lower=0.0, upper=DOOR_OPEN_DEG, local_pos0=(0.0, 0.0, 0.0), labels=labels)


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

    def __init__(self, home: Home, catalog: Catalog, out_path: Path, assets: dict[str, Path]) -> None:
        self.home, self.catalog, self.out_path, self.assets = home, catalog, out_path, assets
        self.layer = _new_layer(HOME_ROOT)
        self.counts: Counter[str] = Counter()
        self.rooms = {r.id: r for r in home.rooms}
        self.looks: dict[str, RGB] = {}
        self.looks_path = Sdf.Path(f"/{HOME_ROOT}/Looks")

    # -- labels and looks

    def _room_labels(self, room_ids: Iterable[str | None]) -> dict[str, list[str]]:
        rooms = [self.rooms[r] for r in dict.fromkeys(room_ids) if r is not None and r in self.rooms]
        return {"room": list(dict.fromkeys(r.type.lower() for r in rooms)), "room_id": [r.id for r in rooms]}

    def _thing(self, prim: Sdf.PrimSpec, cls: str, room_ids: Iterable[str | None] = (),
               counted: bool = True, look: tuple[str, RGB] | None = None) -> dict[str, list[str]]:
        """Label a thing's top prim; with ``look``, bind it the material of that name and colour."""
        labels = {"class": [cls], **self._room_labels(room_ids)}
        _labels(prim, labels)
        if counted:
            self.counts[cls] += 1
        if look is not None:
            name = _valid_name(look[0], "look")
            self.looks.setdefault(name, look[1])
            _api(prim, "MaterialBindingAPI")
            _rel(prim, "material:binding", self.looks_path.AppendChild(name))
        return labels

    def _group(self, parent: Sdf.PrimSpec | Sdf.Layer, name: str) -> Sdf.PrimSpec:
        prim = _prim(parent, name)
        prim.kind = "group" if not isinstance(parent, Sdf.Layer) else "assembly"
        _labels(prim, {"group": [name.lower()]})
        return prim

    def _floor_z(self, room_ids: Iterable[str]) -> float:
        zs = [self.rooms[r].floor_height for r in room_ids if r in self.rooms]
        return min(zs) if zs else 0.0

    # -- the home

    def write(self) -> Sdf.Layer:
        home = self.home
        with Sdf.ChangeBlock():
            root = self._group(self.layer, HOME_ROOT)
            _attr(root, "homeloop:home_id", _TYPES.String, home.home_id, custom=True)
            _attr(root, "homeloop:schema_version", _TYPES.String, home.schema_version, custom=True)
            _attr(root, "homeloop:source", _TYPES.String,
                  json.dumps(home.source.model_dump(mode="json"), sort_keys=True), custom=True)
            _physics_scene(root)
            looks = self._group(root, "Looks")
            self._rooms(self._group(root, "Rooms"))
            self._walls(self._group(root, "Walls"))
            self._openings(self._group(root, "Openings"))
            self._fixtures(self._group(root, "Fixtures"))
            self._furniture(self._group(root, "Furniture"))
            self._objects(self._group(root, "Objects"))
            self._devices(self._group(root, "Devices"))
            self._lights(self._group(root, "Lights"))
            self._cameras(self._group(root, "Cameras"))
            for name, colour in sorted(self.looks.items()):
                _material(looks, name, colour)
        return self.layer

    def _rooms(self, group: Sdf.PrimSpec) -> None:
        names = _Names()
        for room in self.home.rooms:
            prim = _prim(group, names(f"room_{room.id}", "room"))
            _labels(prim, {"group": ["room"], **self._room_labels([room.id])})
            _attr(prim, "homeloop:id", _TYPES.String, room.id, custom=True)
            _attr(prim, "homeloop:name", _TYPES.String, room.name, custom=True)
            _attr(prim, "homeloop:type", _TYPES.String, room.type, custom=True)
            _attr(prim, "homeloop:space_class", _TYPES.String, room.space_class, custom=True)
            polys = _polygons(polygon_from_rings(room.polygon).buffer(0))
            if not polys:
                continue
            self._surface(prim, "floor", polys, room.floor_height, True, [room.id])
            if room.space_class in ("indoor", "ancillary"):
                self._surface(prim, "ceiling", polys, room.floor_height + room.ceiling_height, False, [room.id])

    def _surface(self, prim: Sdf.PrimSpec, cls: str, polys: list[Polygon], z: float, up: bool,
                 room_ids: list[str]) -> None:
        """A floor (facing up) or ceiling (facing down) at height ``z``: a static triangle collider."""
        look = look_of(cls, "architecture")
        mesh = _mesh(prim, cls, _MeshData.concat(_cap(_rings(p), z, up=up) for p in polys), colour=look[1])
        _collider(mesh, "none")
        self._thing(mesh, cls, room_ids, look=look)

    def _opening_polygons(self) -> list[Polygon]:
        return [polygon_from_rings(o.polygon).buffer(0) for o in self.home.openings]

    def _walls(self, group: Sdf.PrimSpec) -> None:
        openings = self._opening_polygons()
        tree = shapely.STRtree(openings) if openings else None
        names = _Names()
        look = look_of("wall", "architecture")
        for wall in self.home.walls:
            poly = polygon_from_rings(wall.polygon).buffer(0)
            near = [openings[i] for i in tree.query(poly, predicate="intersects")] if tree is not None else []
            solid = shapely.difference(poly, shapely.union_all(near)) if near else poly
            base = self._floor_z(self.rooms)
            data = _MeshData.concat(_prism(p, base, base + wall.height) for p in _polygons(solid))
            if not len(data.counts):
                continue
            prim = _mesh(group, names(wall.id, "wall"), data, colour=look[1])
            _collider(prim, "none")
            self._thing(prim, "wall", look=look)
            _attr(prim, "homeloop:id", _TYPES.String, wall.id, custom=True)
            _attr(prim, "homeloop:kind", _TYPES.String, wall.kind, custom=True)

    def _openings(self, group: Sdf.PrimSpec) -> None:
        walls = [(polygon_from_rings(w.polygon).buffer(0), w) for w in self.home.walls]
        tree = shapely.STRtree([p for p, _ in walls]) if walls else None
        names = _Names()
        for opening, poly in zip(self.home.openings, self._opening_polygons()):
            near = [walls[i][1] for i in tree.query(poly, predicate="intersects")] if tree is not None else []
            self._opening(group, names(opening.id, "opening"), opening, poly, near)

    def _opening(self, group: Sdf.PrimSpec, name: str, o: Opening, poly: Polygon, walls: list[Wall]) -> None:
        """A door or window: its prim at the hinge (doors) or centre (windows), the wall
        around it, the floor through it, and a pane or a hinged (garage doors: sliding) leaf."""
        frame = _opening_frame(poly)
        base = self._floor_z(o.connects)
        cls = "window" if o.kind == "window" else o.kind
        prim = _prim(group, name)
        labels = self._thing(prim, cls, o.connects, look=look_of(cls, "architecture"))
        is_door = o.kind != "window"
        # Doors stand at the hinge (one end of the opening, mid-thickness); windows at the centre.
        origin = frame.end(-1.0) if is_door else frame.centre
        _pose_ops(prim, (origin[0], origin[1], base), frame.yaw)
        for key, value, t in (("id", o.id, _TYPES.String), ("kind", o.kind, _TYPES.String),
                              ("width", o.width, _TYPES.Double), ("sill", o.sill, _TYPES.Double),
                              ("height", o.height, _TYPES.Double), ("lockable", o.lockable, _TYPES.Bool),
                              ("openable", o.openable, _TYPES.Bool), ("exterior", o.exterior, _TYPES.Bool),
                              ("is_open", o.is_open, _TYPES.Bool)):
            _attr(prim, f"homeloop:{key}", t, value, custom=True)
        _attr(prim, "homeloop:connects", _TYPES.StringArray, Vt.StringArray(list(o.connects)), custom=True)
        # The opening's own footprint, in the prim's frame.
        local = affinity.rotate(affinity.translate(poly, -origin[0], -origin[1]),
                                -frame.yaw, origin=(0, 0), use_radians=True)
        self._opening_surround(prim, o, local, walls)
        if o.sill <= FLOOR_LEVEL_SILL and _polygons(local):
            self._threshold(prim, o, local)
        if is_door:
            _door_leaf(prim, o, frame.width, labels)
        else:
            half = WINDOW_PANE_THICKNESS / 2
            w, gap = frame.width, DOOR_LEAF_GAP
            pane = _mesh(prim, "pane", _box(-w / 2 + gap, -half, o.sill, w / 2 - gap, half, o.sill + o.height),
                         colour=look_of("window", "architecture")[1])
            _collider(pane, "convexHull")
            _labels(pane, labels)

    def _threshold(self, prim: Sdf.PrimSpec, o: Opening, local: Polygon) -> None:
        """The floor through an opening at floor level (its footprint at the prim's base, the
        lower room's floor), part of the floor collider: no slot the wall's thickness deep."""
        look = look_of("floor", "architecture")
        mesh = _mesh(prim, "threshold", _MeshData.concat(_cap(_rings(p), 0.0, up=True) for p in _polygons(local)),
                     colour=look[1])
        _collider(mesh, "none")
        self._thing(mesh, "floor", o.connects, look=look)

    def _opening_surround(self, prim: Sdf.PrimSpec, o: Opening, local: Polygon, walls: list[Wall]) -> None:
        """The wall around an opening (footprint ``local``, in its prim's frame): above the head
        up to the walls' top, and below the sill of windows."""
        wall_top = max((w.height for w in walls if w.kind == "WALL"), default=0.0) or max(
            (self.rooms[r].ceiling_height for r in o.connects if r in self.rooms), default=2.6)
        head = o.sill + o.height
        pieces = []
        for p in _polygons(local):
            if head < wall_top - 1e-6:
                pieces.append(_prism(p, head, wall_top))
            if o.sill > 1e-6:
                pieces.append(_prism(p, 0.0, o.sill))
        surround = _MeshData.concat(pieces)
        if len(surround.counts):
            look = look_of("wall", "architecture")
            mesh = _mesh(prim, "wall", surround, colour=look[1])
            _collider(mesh, "none")
            self._thing(mesh, "wall", o.connects, look=look)

    def _fixtures(self, group: Sdf.PrimSpec) -> None:
        names = _Names()
        for x in self.home.fixtures:
            base = self._floor_z([x.room])
            data = _MeshData.concat(_prism(p, base, base + x.height)
                                    for p in _polygons(polygon_from_rings(x.polygon).buffer(0)))
            if not len(data.counts):
                continue
            look = look_of(x.kind, "fixture")
            prim = _mesh(group, names(x.id, "fixture"), data, colour=look[1])
            _collider(prim, "none")
            self._thing(prim, x.kind, [x.room], look=look)
            _attr(prim, "homeloop:id", _TYPES.String, x.id, custom=True)
            _attr(prim, "homeloop:kind", _TYPES.String, x.kind, custom=True)
            _attr(prim, "homeloop:room", _TYPES.String, x.room, custom=True)

    def _reference(self, group: Sdf.PrimSpec, name: str, catalog_id: str) -> Sdf.PrimSpec:
        if catalog_id not in self.assets:
            raise UsdExportError(f"home {self.home.home_id}: no USD asset for catalog id {catalog_id!r}")
        rel = os.path.relpath(self.assets[catalog_id], self.out_path.parent).replace(os.sep, "/")
        prim = _prim(group, name, "")
        prim.referenceList.Prepend(Sdf.Reference(rel if rel.startswith(".") else f"./{rel}"))
        return prim

    def _furniture(self, group: Sdf.PrimSpec) -> None:
        names = _Names()
        for f in self.home.furniture:
            prim = self._reference(group, names(f.id, "item"), f.catalog_id)
            _pose_ops(prim, (f.pose.x, f.pose.y, f.pose.z), f.pose.yaw)
            self._thing(prim, f.semantic_class, [f.room], look=look_of(f.semantic_class, "furniture"))
            _attr(prim, "homeloop:id", _TYPES.String, f.id, custom=True)
            _attr(prim, "homeloop:room", _TYPES.String, f.room, custom=True)
            entry = self.catalog.furniture.get(f.catalog_id)
            if entry is not None:
                self._part_states(prim, entry, f)

    def _part_states(self, prim: Sdf.PrimSpec, entry: FurnitureEntry, f: Any) -> None:
        """Each articulated part's present state, over the asset's part prims (named as there)."""
        part_names = _Names()
        part_names(entry.id, "body")
        for part in f.parts:
            spec = next((p for p in entry.parts if p.name == part.name), None)
            pname = part_names(part.name, "part")
            if spec is None:
                continue
            over = _prim(prim, pname, "", Sdf.SpecifierOver)
            _attr(over, "homeloop:state", _TYPES.Float, float(part.state), custom=True)
            if part.is_open:
                op = joint_op_name(spec.kind, spec.axis)
                if spec.kind == "revolute":
                    _attr(over, op, _TYPES.Float, _deg(part.state))
                else:
                    axis = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}[spec.axis]
                    _attr(over, op, _TYPES.Double3, tuple(a * float(part.state) for a in axis))

    def _objects(self, group: Sdf.PrimSpec) -> None:
        names = _Names()
        for obj in self.home.objects:
            prim = self._reference(group, names(obj.id, "item"), obj.catalog_id)
            _pose_ops(prim, (obj.pose.x, obj.pose.y, obj.pose.z), obj.pose.yaw)
            self._thing(prim, obj.semantic_class, [obj.location.room],
                        look=look_of(obj.semantic_class, "object", obj.colour))
            _attr(prim, "homeloop:id", _TYPES.String, obj.id, custom=True)
            _attr(prim, "homeloop:room", _TYPES.String, obj.location.room, custom=True)
            _attr(prim, "homeloop:location", _TYPES.String,
                  json.dumps(obj.location.model_dump(mode="json"), sort_keys=True), custom=True)

    def _devices(self, group: Sdf.PrimSpec) -> None:
        """Each device as its body (a Mesh prim named after it), or an Xform where it has none.
        A dome camera's id names its camera, so its device is an Xform holding ``<id>_housing``:
        importers that give objects unique names keep the camera's."""
        names = _Names()
        cameras = {c.id for c in self.home.cameras}
        for d in self.home.devices:
            body = device_body(self.home, d)
            look = look_of(d.type, "device")
            name = names(d.id, "device")
            if body is None or d.id in cameras:
                prim = _prim(group, name)
            else:
                prim = _mesh(group, name, _box(*body), colour=look[1])
            _pose_ops(prim, (d.pose.x, d.pose.y, d.pose.z), d.pose.yaw)
            labels = self._thing(prim, d.type, [d.room], look=look if body is not None else None)
            _device_attrs(prim, d)
            if body is not None and d.id in cameras:
                _labels(_mesh(prim, f"{name}_{DOME_HOUSING}", _box(*body), colour=look[1]), labels)

    def _lights(self, group: Sdf.PrimSpec) -> None:
        """A SphereLight just under each ceiling light's body, lit as the home file says."""
        names = _Names()
        for d in self.home.devices:
            if d.type != "light" or d.mount != "ceiling":
                continue
            body = device_body(self.home, d)
            below = (body[2] if body is not None else 0.0) - LIGHT_GAP - LIGHT_RADIUS
            prim = _prim(group, names(d.id, "light"), "SphereLight")
            _pose_ops(prim, (d.pose.x, d.pose.y, d.pose.z + below))
            _labels(prim, {"group": ["light"], **self._room_labels([d.room])})
            lit = light_is_on(self.home, d)
            _attr(prim, "inputs:radius", _TYPES.Float, LIGHT_RADIUS)
            _attr(prim, "inputs:intensity", _TYPES.Float, light_intensity(d, lit))
            _attr(prim, "inputs:enableColorTemperature", _TYPES.Bool, True)
            _attr(prim, "inputs:colorTemperature", _TYPES.Float, LIGHT_COLOUR_TEMPERATURE)
            _attr(prim, "homeloop:device", _TYPES.String, d.id, custom=True)
            _attr(prim, "homeloop:room", _TYPES.String, d.room or "", custom=True)
            _attr(prim, "homeloop:on", _TYPES.Bool, lit, custom=True)

    def _cameras(self, group: Sdf.PrimSpec) -> None:
        names = _Names()
        for cam in self.home.cameras:
            prim = _prim(group, names(cam.id, "camera"), "Camera")
            _camera(prim, cam)
            self._thing(prim, "camera", [cam.room])
            _attr(prim, "homeloop:room", _TYPES.String, cam.room, custom=True)


def _physics_scene(root: Sdf.PrimSpec) -> None:
    """The home's physics scene: gravity along -Z at :data:`GRAVITY` (the stage is in metres)."""
    scene = _prim(root, "PhysicsScene", "PhysicsScene")
    _attr(scene, "physics:gravityDirection", _TYPES.Vector3f, (0.0, 0.0, -1.0))
    _attr(scene, "physics:gravityMagnitude", _TYPES.Float, GRAVITY)
    _labels(scene, {"group": ["physics"]})


def _material(looks: Sdf.PrimSpec, name: str, colour: RGB) -> None:
    """A UsdPreviewSurface material of one colour (translucent for glass)."""
    material = _prim(looks, name, "Material")
    shader = _prim(material, "surface", "Shader")
    _attr(shader, "info:id", _TYPES.Token, "UsdPreviewSurface", uniform=True)
    _attr(shader, "inputs:diffuseColor", _TYPES.Color3f, tuple(float(c) for c in colour))
    _attr(shader, "inputs:roughness", _TYPES.Float, MATERIAL_ROUGHNESS)
    if name == "window":
        _attr(shader, "inputs:opacity", _TYPES.Float, GLASS_OPACITY)
    out = _attr(shader, "outputs:surface", _TYPES.Token)
    surface = _attr(material, "outputs:surface", _TYPES.Token)
    surface.connectionPathList.explicitItems = [out.path]
    for prim in (material, shader):
        _labels(prim, {"group": ["material"]})


def _field_value(spec_type: str, value: Any) -> tuple[Sdf.ValueTypeName, Any]:
    if spec_type == "bool":
        return _TYPES.Bool, None if value is None else bool(value)
    if spec_type == "int":
        return _TYPES.Int, None if value is None else int(value)
    if spec_type in ("float", "timestamp"):
        return _TYPES.Double, None if value is None else float(value)
    return _TYPES.String, None if value is None else str(value)


def _device_attrs(prim: Sdf.PrimSpec, d: Device) -> None:
    s = _TYPES.String
    for key, value in (("id", d.id), ("type", d.type), ("category", d.category), ("name", d.name),
                       ("room", d.room or ""), ("mount", d.mount), ("mounted_on", d.mounted_on or ""),
                       ("matter_device_type", d.matter_device_type or "")):
        _attr(prim, f"homeloop:{key}", s, value, custom=True)
    _attr(prim, "homeloop:agent_visible", _TYPES.Bool, d.agent_visible, custom=True)
    for key, values in (("controls", d.controls), ("monitors", d.monitors), ("events", d.events)):
        _attr(prim, f"homeloop:{key}", _TYPES.StringArray, Vt.StringArray(list(values)), custom=True)
    _attr(prim, "homeloop:fields", _TYPES.StringArray, Vt.StringArray(list(d.fields)), custom=True)
    for fname, f in d.fields.items():
        type_name, value = _field_value(f.type, f.value)
        _attr(prim, f"homeloop:field:{fname}", type_name, value, custom=True)
        accepts = {k: v for k, v in f.model_dump(mode="json", exclude={"value", "description", "default"}).items()
                   if v is not None}
        _attr(prim, f"homeloop:field:{fname}:accepts", s, json.dumps(accepts, sort_keys=True), custom=True)


def camera_rotate_xyz(yaw: float, pitch: float) -> tuple[float, float, float]:
    """``xformOp:rotateXYZ`` (degrees) that points a USD camera (looking down -Z,
    +Y up) along heading ``yaw`` and tilt ``pitch`` (radians, negative looks down)."""
    return (_deg(math.pi / 2 + pitch), 0.0, _deg(yaw - math.pi / 2))


def focal_length_for(hfov_deg: float, horizontal_aperture: float = CAMERA_HORIZONTAL_APERTURE) -> float:
    """The focal length giving ``hfov_deg`` across ``horizontal_aperture``."""
    return horizontal_aperture / (2.0 * math.tan(math.radians(hfov_deg) / 2.0))


def _camera(prim: Sdf.PrimSpec, cam: Camera) -> None:
    p = cam.pose
    _attr(prim, "xformOp:translate", _TYPES.Double3, (p.x, p.y, p.z))
    _attr(prim, "xformOp:rotateXYZ", _TYPES.Float3, camera_rotate_xyz(p.yaw, p.pitch))
    _attr(prim, "xformOpOrder", _TYPES.TokenArray, Vt.TokenArray(["xformOp:translate", "xformOp:rotateXYZ"]),
          uniform=True)
    width, height = cam.resolution
    _attr(prim, "projection", _TYPES.Token, "perspective")
    _attr(prim, "horizontalAperture", _TYPES.Float, CAMERA_HORIZONTAL_APERTURE)
    _attr(prim, "verticalAperture", _TYPES.Float, round(CAMERA_HORIZONTAL_APERTURE * height / width, 5))
    _attr(prim, "focalLength", _TYPES.Float, round(focal_length_for(cam.hfov_deg), 5))
    _attr(prim, "clippingRange", _TYPES.Float2, CAMERA_CLIPPING)
    _attr(prim, "homeloop:id", _TYPES.String, cam.id, custom=True)
    _attr(prim, "homeloop:resolution", _TYPES.Int2, Gf.Vec2i(int(width), int(height)), custom=True)
    _attr(prim, "homeloop:hfov_deg", _TYPES.Double, float(cam.hfov_deg), custom=True)
    _attr(prim, "homeloop:privacy_mode", _TYPES.String, cam.privacy_mode, custom=True)
    _attr(prim, "homeloop:agent_visible", _TYPES.Bool, cam.agent_visible, custom=True)


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
    writer = _HomeWriter(home, catalog, path, {k: Path(v) for k, v in assets.items()})
    layer = writer.write()
    size = _export_layer(layer, path)
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


def validators() -> list[Any]:
    """Every validator the usd-core plugins register (loaded once)."""
    global _VALIDATORS
    if _VALIDATORS is None:
        registry = UsdValidation.ValidationRegistry()
        _VALIDATORS = [v for v in registry.GetOrLoadAllValidators() if not v.GetMetadata().isSuite]
    return _VALIDATORS


def _message(error: Any) -> str:
    validator = error.GetValidator()
    name = validator.GetMetadata().name if validator else error.GetName()
    sites = []
    for site in error.GetSites():
        if site.IsPrim() or site.IsProperty():
            sites.append(str(site.GetPrim().GetPath() if site.IsPrim() else site.GetProperty().GetPath()))
    where = f" (at {', '.join(sites)})" if sites and any(sites) else ""
    return f"[{name}] {error.GetMessage()}{where}"


def validate_stage_report(path: str | os.PathLike[str] | Usd.Stage) -> ValidationReport:
    """Run every registered usd-core validator on the stage at ``path`` (or an open stage)."""
    stage = path if isinstance(path, Usd.Stage) else Usd.Stage.Open(str(path))
    if stage is None:
        return ValidationReport(errors=[f"cannot open {path}"])
    context = UsdValidation.ValidationContext(validators())
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
